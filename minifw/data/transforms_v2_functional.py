"""torchvision.transforms.v2.functional for plain images, importable as
minifw.data.transforms.v2.functional and minifw.vision.transforms.v2.functional (`from
minifw.vision.transforms.v2 import functional as F`).

The functions take what v1's (minifw.data.transforms.functional) take: PIL images, and Tensors
or arrays (..., C, H, W) as v2 takes plain tensors, uint8 images as uint8 NumPy arrays. Where
v2's function is v1's on images, it is the same function here; where v2 differs, these follow
v2: horizontal_flip / vertical_flip (hflip / vflip too); resize takes size=None with max_size;
pad's fill defaults to None (zeros); rotate turns a tensor by a multiple of 90 degrees about its
centre without resampling (np.rot90, where v1 resamples and, with expand=True, sizes the output
as Pillow does); perspective takes the 8 coefficients instead of the points; erase takes PIL
images; adjust_gamma and convert_image_dtype (to_dtype with scale=True) scale integers to floats
by 1 / max and adjust_gamma clamps only when gain != 1; to_tensor and get_image_size warn that
they are deprecated. v2's own: to_image, to_dtype, get_size, get_num_channels, grayscale_to_rgb,
permute_channels, gaussian_noise (drawing from the DataLoader thread's or minifw's global
generator), elastic (elastic_transform's new name), is_pure_tensor, and each function's
`<name>_image` kernel name (the same function).

Missing: the kernels of tv_tensors other than images (`*_bounding_boxes`, `*_keypoints`,
`*_mask`, `*_video`, clamp_bounding_boxes, clamp_keypoints, convert_bounding_box_format,
sanitize_bounding_boxes, sanitize_keypoints, get_num_frames, uniform_temporal_subsample),
jpeg, register_kernel, and lanczos resizing of tensors.
"""
import numbers
import warnings

import numpy as np

from .. import devices
from ..tensor import Tensor
from . import transforms as _t
from . import transforms_functional as _f1
from . import transforms_v2 as _v2
from .transforms import InterpolationMode
from .transforms_functional import (adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation,
                                    adjust_sharpness, affine, autocontrast, center_crop, crop,
                                    elastic_transform, equalize, five_crop, gaussian_blur, get_dimensions,
                                    invert, normalize, pil_to_tensor, posterize, resized_crop,
                                    rgb_to_grayscale, solarize, ten_crop, to_pil_image)
from .worker import random_source

to_grayscale = rgb_to_grayscale  # v2's alias: to_grayscale takes what rgb_to_grayscale takes
elastic = elastic_transform


# ---- sizes -------------------------------------------------------------------------------------
def get_size(inpt):
    """[height, width] of an image."""
    _, height, width = get_dimensions(inpt)
    return [height, width]


def get_num_channels(inpt):
    """The number of channels of an image (see get_dimensions)."""
    return get_dimensions(inpt)[0]


get_image_num_channels = get_num_channels


def get_image_size(inpt):
    """[width, height] of an image; deprecated in v2 (as torchvision's) for get_size."""
    warnings.warn("The function get_image_size(...) is deprecated (as in torchvision): use get_size(...), "
                  "which returns [h, w] instead of [w, h]", UserWarning, stacklevel=2)
    return _f1.get_image_size(inpt)


def is_pure_tensor(inpt):
    """Whether inpt is a Tensor: minifw has no tv_tensors, so every Tensor is a plain one."""
    return isinstance(inpt, Tensor)


# ---- conversions -------------------------------------------------------------------------------
def to_image(inpt):
    """An image of inpt's own values and dtype, (C, H, W), as v2.ToImage: a PIL image as
    pil_to_tensor gives it, a NumPy array (H, W, C) or (H, W) transposed (a Tensor where minifw's
    Tensors hold its dtype, else an array), a Tensor as it is."""
    fn = "to_image"
    if not (_t._is_pil(inpt) or isinstance(inpt, Tensor) or devices.is_array(inpt)):
        raise TypeError(f"{fn}: inpt should be a PIL Image, a Tensor or an array, got {type(inpt).__name__}")
    return _v2._to_image(inpt, fn)


def to_dtype(inpt, dtype=np.dtype("float32"), scale=False):
    """A Tensor or array image in dtype, as v2.ToDtype(dtype, scale): scale=True rescales the
    values between the dtypes' ranges of intensities (integers to floats by 1 / max)."""
    fn = "to_dtype"
    if _t._is_pil(inpt):
        raise TypeError(f"{fn}: inpt should be a Tensor or an array image, got a PIL Image; make it one "
                        f"with to_image() first")
    return _v2._image_to_dtype(inpt, _t._image_dtype(dtype, fn), bool(scale), fn)


def convert_image_dtype(image, dtype=np.dtype("float32")):
    """to_dtype(image, dtype, scale=True), as v2's (which deprecates it for to_dtype)."""
    fn = "convert_image_dtype"
    if _t._is_pil(image):
        raise TypeError(f"{fn}: image should be a Tensor or an array image, got a PIL Image")
    return _v2._image_to_dtype(image, _t._image_dtype(dtype, fn), True, fn)


def to_tensor(inpt):
    """v1's to_tensor, deprecated in v2 (as torchvision's): to_image then to_dtype(float32,
    scale=True) instead."""
    warnings.warn("The function to_tensor(...) is deprecated (as in torchvision): use to_image(...) followed "
                  "by to_dtype(..., dtype=minifw.float32, scale=True)", UserWarning, stacklevel=2)
    return _t._to_tensor(inpt, "to_tensor")


# ---- geometry ----------------------------------------------------------------------------------
def horizontal_flip(inpt):
    """inpt mirrored left to right."""
    _t._size(inpt, "horizontal_flip")
    return _t._flip(inpt, -1)


def vertical_flip(inpt):
    """inpt mirrored top to bottom."""
    _t._size(inpt, "vertical_flip")
    return _t._flip(inpt, -2)


hflip, vflip = horizontal_flip, vertical_flip


def resize(inpt, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """v1's resize; size=None makes the longer edge max_size, the aspect ratio kept."""
    fn = "resize"
    if size is not None:
        return _f1.resize(inpt, size, interpolation, max_size, antialias)
    if isinstance(max_size, bool) or not isinstance(max_size, numbers.Integral) or max_size < 1:
        raise ValueError(f"{fn}: max_size must be a positive int when size is None, got {max_size!r}")
    interpolation = _t._interpolation_mode(interpolation, fn)
    return _t._resize(inpt, None, int(max_size), interpolation, antialias, fn)


def pad(inpt, padding, fill=None, padding_mode="constant"):
    """v1's pad, with fill None (zeros) by default."""
    return _f1.pad(inpt, padding, 0 if fill is None else fill, padding_mode)


def rotate(inpt, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    """v1's rotate, except that a Tensor or array turned about its centre by a multiple of 90
    degrees is moved by np.rot90 (a copy at 0 degrees), as v2's: 180 degrees always, 90 and 270
    with expand=True (the output H and W swapped) or a square image."""
    fn = "rotate"
    interpolation = _t._check_warp_interpolation(interpolation, fn)
    angle = _f1._check_real(angle, fn, "angle")
    _f1._check_point(center, fn, "center")
    _t._check_warp_fill(fill, fn)
    height, width = _t._size(inpt, fn)
    turn = angle % 360
    if not _t._is_pil(inpt) and center is None and (
            turn in (0, 180) or turn in (90, 270) and (expand or height == width)):
        array = _t._array_of(inpt, fn)
        xp = devices.array_module(devices.of(array))
        return _t._like(inpt, xp.ascontiguousarray(xp.rot90(array, int(turn // 90), axes=(-2, -1))))
    return _t._rotate(inpt, angle, interpolation, bool(expand), center, fill, fn)


def perspective(inpt, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR, fill=None,
                coefficients=None):
    """v1's perspective, or, with startpoints and endpoints None, the projective map of the 8
    coefficients (a, b, c, d, e, f, g, h): the output pixel centred at (x, y) reads the input at
    ((a x + b y + c) / (g x + h y + 1), (d x + e y + f) / (g x + h y + 1))."""
    fn = "perspective"
    if coefficients is not None:
        if startpoints is not None and endpoints is not None:
            raise ValueError(f"{fn}: give either startpoints and endpoints or coefficients, not both")
        if (not isinstance(coefficients, (tuple, list)) or len(coefficients) != 8
                or any(isinstance(c, bool) or not isinstance(c, numbers.Real) for c in coefficients)):
            raise ValueError(f"{fn}: coefficients must be a sequence of 8 numbers, got {coefficients!r}")
        coefficients = [float(c) for c in coefficients]
    elif startpoints is not None and endpoints is not None:
        coefficients = _t._perspective_coefficients(startpoints, endpoints, fn)
    else:
        raise ValueError(f"{fn}: give startpoints and endpoints, or coefficients; got startpoints="
                         f"{startpoints!r}, endpoints={endpoints!r}")
    return _f1._perspective_checked(inpt, coefficients, interpolation, fill, fn)


# ---- colour ------------------------------------------------------------------------------------
def adjust_gamma(inpt, gamma, gain=1):
    """gain * inpt ** gamma on intensities in [0, 1], as v2's: integers scaled to floats by
    1 / max and back, the result clamped to [0, 1] when gain != 1; PIL images as v1's."""
    fn = "adjust_gamma"
    return _f1._adjust_gamma(inpt, gamma, gain, fn,
                             lambda array: _v2._to_dtype(array, np.dtype(np.float32), True, fn),
                             clamp_always=False)


def grayscale_to_rgb(inpt):
    """A 1-channel image as 3 equal channels (an RGB PIL image); an image of 3 or more channels
    comes back as it is."""
    fn = "grayscale_to_rgb"
    if _t._is_pil(inpt):
        return inpt.convert("RGB")
    channels = _t._channels(_t._array_of(inpt, fn), fn, allowed=None)
    if channels >= 3:
        return inpt
    if channels != 1:
        raise ValueError(f"{fn}: expected an image of 1 channel (or 3 or more, returned as they are), "
                         f"got {channels} channels")
    return _t._host_op(inpt, fn, lambda array: np.repeat(array, 3, axis=-3))


def permute_channels(inpt, permutation):
    """The image's channels in the order permutation gives (channel k of the output is channel
    permutation[k] of the input); PIL images through their arrays, made an image of the mode
    their new number of channels gets."""
    fn = "permute_channels"
    channels = get_num_channels(inpt)
    if (not isinstance(permutation, (tuple, list)) or len(permutation) != channels or any(
            isinstance(p, bool) or not isinstance(p, numbers.Integral) or not 0 <= p < channels
            for p in permutation)):
        raise ValueError(f"{fn}: permutation must be a sequence of {channels} channel indices in "
                         f"[0, {channels - 1}], one per channel of the image, got {permutation!r}")
    order = [int(p) for p in permutation]
    if _t._is_pil(inpt):
        array = np.asarray(inpt).reshape(inpt.height, inpt.width, -1)
        return to_pil_image(np.ascontiguousarray(array[:, :, order]))
    _t._channels(_t._array_of(inpt, fn), fn, allowed=None)
    return _t._host_op(inpt, fn, lambda array: np.ascontiguousarray(array[..., order, :, :]))


def gaussian_noise(inpt, mean=0.0, sigma=0.1, clip=True):
    """inpt plus Gaussian noise of the given mean and standard deviation sigma, clamped to
    [0, 1] with clip=True, as v2's: float images; uint8 ones get the noise times 255, truncated to
    integers, and clamping to [0, 255]. The noise comes from the DataLoader thread's generator or
    minifw's global one (minifw.manual_seed). On a Tensor that requires grad the sum is recorded."""
    fn = "gaussian_noise"
    if _t._is_pil(inpt):
        raise TypeError(f"{fn}: inpt should be a Tensor or an array image, got a PIL Image (v2 has no "
                        f"Gaussian noise for PIL images either)")
    mean = _f1._check_real(mean, fn, "mean")
    sigma = _f1._check_real(sigma, fn, "sigma", low=0)
    array = _t._array_of(inpt, fn)
    rng = random_source(None)
    if array.dtype.kind == "f":
        noise = (mean + rng.standard_normal(array.shape, dtype=np.float32).astype(array.dtype) * sigma
                 ).astype(array.dtype)
        noise = devices.asarray(noise, dev=devices.of(array))
        if isinstance(inpt, Tensor):
            out = inpt + Tensor._make(noise)
            return out.clamp(0, 1) if clip else out
        out = array + noise
        return devices.array_module(devices.of(array)).clip(out, 0, 1) if clip else out
    if array.dtype != np.uint8:
        raise TypeError(f"{fn}: the image must hold floats or uint8 values, got dtype {array.dtype}")
    noise = (mean * 255 + rng.standard_normal(array.shape, dtype=np.float32) * np.float32(sigma * 255))

    def op(host):
        out = host.astype(np.int16) + noise.astype(np.int16)
        return (np.clip(out, 0, 255) if clip else out).astype(np.uint8)
    return _t._host_op(inpt, fn, op)


# ---- misc --------------------------------------------------------------------------------------
def erase(inpt, i, j, h, w, v, inplace=False):
    """v1's erase, on PIL images too, as v2's: the image's array is erased and made back into
    an image of its mode."""
    fn = "erase"
    if _t._is_pil(inpt):
        return _t._on_pil_array(inpt, lambda chw: _f1._erase_checked(chw, i, j, h, w, v, False, fn))
    return _f1._erase_checked(inpt, i, j, h, w, v, inplace, fn)


# The kernels' names: on plain images, v2's kernel for images is the function itself.
adjust_brightness_image = adjust_brightness
adjust_contrast_image = adjust_contrast
adjust_gamma_image = adjust_gamma
adjust_hue_image = adjust_hue
adjust_saturation_image = adjust_saturation
adjust_sharpness_image = adjust_sharpness
affine_image = affine
autocontrast_image = autocontrast
center_crop_image = center_crop
crop_image = crop
elastic_image = elastic
equalize_image = equalize
erase_image = erase
five_crop_image = five_crop
gaussian_blur_image = gaussian_blur
gaussian_noise_image = gaussian_noise
get_dimensions_image = get_dimensions
get_num_channels_image = get_num_channels
get_size_image = get_size
grayscale_to_rgb_image = grayscale_to_rgb
horizontal_flip_image = horizontal_flip
invert_image = invert
normalize_image = normalize
pad_image = pad
permute_channels_image = permute_channels
perspective_image = perspective
posterize_image = posterize
resize_image = resize
resized_crop_image = resized_crop
rgb_to_grayscale_image = rgb_to_grayscale
rotate_image = rotate
solarize_image = solarize
ten_crop_image = ten_crop
to_dtype_image = to_dtype
vertical_flip_image = vertical_flip

__all__ = ["InterpolationMode", "adjust_brightness", "adjust_brightness_image", "adjust_contrast",
           "adjust_contrast_image", "adjust_gamma", "adjust_gamma_image", "adjust_hue", "adjust_hue_image",
           "adjust_saturation", "adjust_saturation_image", "adjust_sharpness", "adjust_sharpness_image",
           "affine", "affine_image", "autocontrast", "autocontrast_image", "center_crop", "center_crop_image",
           "convert_image_dtype", "crop", "crop_image", "elastic", "elastic_image", "elastic_transform",
           "equalize", "equalize_image", "erase", "erase_image", "five_crop", "five_crop_image",
           "gaussian_blur", "gaussian_blur_image", "gaussian_noise", "gaussian_noise_image",
           "get_dimensions", "get_dimensions_image", "get_image_num_channels", "get_image_size",
           "get_num_channels", "get_num_channels_image", "get_size", "get_size_image", "grayscale_to_rgb",
           "grayscale_to_rgb_image", "hflip", "horizontal_flip", "horizontal_flip_image", "invert",
           "invert_image", "is_pure_tensor", "normalize", "normalize_image", "pad", "pad_image",
           "permute_channels", "permute_channels_image", "perspective", "perspective_image",
           "pil_to_tensor", "posterize", "posterize_image", "resize", "resize_image", "resized_crop",
           "resized_crop_image", "rgb_to_grayscale", "rgb_to_grayscale_image", "rotate", "rotate_image",
           "solarize", "solarize_image", "ten_crop", "ten_crop_image", "to_dtype", "to_dtype_image",
           "to_grayscale", "to_image", "to_pil_image", "to_tensor", "vertical_flip", "vertical_flip_image",
           "vflip"]
