"""torchvision.transforms.functional: the operations behind the transforms, as functions of an
image and explicit parameters, importable as minifw.data.transforms.functional and
minifw.vision.transforms.functional (`import minifw.vision.transforms.functional as TF`).

Every function here is deterministic: the random transforms draw their parameters and call the
same operations (TF.rotate(img, a) is RandomRotation((a, a))(img), TF.resize(img, s) is
Resize(s)(img)). Images are what the transforms take (see minifw.data.transforms): PIL images,
which Pillow transforms as torchvision's do, and Tensors or arrays (..., C, H, W), computed with
NumPy on the host and handed back as the same kind, on the input's device; uint8 images are
uint8 NumPy arrays, as PILToTensor gives them.

Where minifw takes more than torchvision: to_tensor copies a Tensor; to_grayscale takes
tensors and arrays as rgb_to_grayscale does; posterize and equalize take float images, as
torchvision.transforms.v2 does; pad takes a fill per channel for tensors; gaussian_blur takes a
kernel_size sequence of one value; erase takes a number or an array for v. Where it refuses what
torchvision takes: interpolation on tensors and arrays is nearest or bilinear for rotate,
affine, perspective and elastic_transform (bicubic on PIL images), as torchvision's; resize of a
tensor takes nearest, nearest-exact, bilinear or bicubic; crop and erase refuse negative sizes
and erase negative corners (torchvision's slicing would count them from the end).
"""
import numbers

import numpy as np

from .. import devices
from ..tensor import Tensor
from . import transforms as _t
from .transforms import InterpolationMode, convert_image_dtype, to_pil_image


# ---- argument checks -----------------------------------------------------------------------------
def _check_real(value, fn, name, low=None, high=None):
    """A number (not a bool), within [low, high] where those are given, as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{fn}: {name} must be a number, got {value!r}")
    if low is not None and value < low or high is not None and value > high:
        bounds = (f"in [{low}, {high}]" if low is not None and high is not None
                  else f">= {low}" if low is not None else f"<= {high}")
        raise ValueError(f"{fn}: {name} must be a number {bounds}, got {value!r}")
    return float(value)


def _check_point(point, fn, name):
    """None, or a point (x, y) of two numbers."""
    if point is not None and (not isinstance(point, (tuple, list)) or len(point) != 2 or any(
            isinstance(c, bool) or not isinstance(c, numbers.Real) for c in point)):
        raise TypeError(f"{fn}: {name} must be a point (x, y) of two numbers or None, got {point!r}")
    return point


def _check_colour_image(img, fn):
    """A PIL image, or a Tensor or array (..., 1 or 3, H, W), as torchvision's colour operations
    take them."""
    if not _t._is_pil(img):
        _t._channels(_t._array_of(img, fn), fn)


def _check_factor(img, factor, fn, name):
    factor = _check_real(factor, fn, name, low=0)
    _check_colour_image(img, fn)
    return factor


def _check_num_output_channels(num_output_channels, fn):
    if isinstance(num_output_channels, bool) or num_output_channels not in (1, 3):
        raise ValueError(f"{fn}: num_output_channels must be 1 or 3, got {num_output_channels!r}")
    return int(num_output_channels)


def _kernel_and_sigma(kernel_size, sigma, fn):
    """((kx, ky), (sigma_x, sigma_y)) from gaussian_blur's arguments."""
    if isinstance(kernel_size, numbers.Integral) and not isinstance(kernel_size, bool):
        kernel_size = [kernel_size]
    if (not isinstance(kernel_size, (tuple, list)) or len(kernel_size) not in (1, 2) or any(
            isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1 or k % 2 == 0
            for k in kernel_size)):
        raise ValueError(f"{fn}: kernel_size must be an odd positive int or a sequence (x, y) of them, "
                         f"got {kernel_size!r}")
    taps = (int(kernel_size[0]), int(kernel_size[-1]))
    if sigma is None:  # OpenCV's rule for a kernel of k taps
        return taps, tuple(k * 0.15 + 0.35 for k in taps)
    values = [sigma] if isinstance(sigma, numbers.Real) and not isinstance(sigma, bool) else sigma
    if (not isinstance(values, (tuple, list)) or len(values) not in (1, 2)
            or any(isinstance(s, bool) or not isinstance(s, numbers.Real) for s in values)):
        raise TypeError(f"{fn}: sigma must be a number, a sequence (x, y) of numbers or None, got {sigma!r}")
    if min(values) <= 0:
        raise ValueError(f"{fn}: sigma must hold numbers > 0, got {sigma!r}")
    return taps, (float(values[0]), float(values[-1]))


def _shear_pair(shear, fn):
    """(x, y) shear angles: a number s is (s, 0), a sequence of one (s, s)."""
    if isinstance(shear, numbers.Real) and not isinstance(shear, bool):
        return float(shear), 0.0
    if (not isinstance(shear, (tuple, list)) or len(shear) not in (1, 2)
            or any(isinstance(s, bool) or not isinstance(s, numbers.Real) for s in shear)):
        raise TypeError(f"{fn}: shear must be a number or a sequence of 1 or 2 numbers (x, y), got {shear!r}")
    return float(shear[0]), float(shear[-1])


# ---- sizes -------------------------------------------------------------------------------------
def get_dimensions(img):
    """[channels, height, width] of an image: a PIL image's bands, a Tensor's or array's
    (..., C, H, W) dimensions, 1 channel for one of shape (H, W)."""
    if _t._is_pil(img):
        return [len(img.getbands()), img.height, img.width]
    array = _t._array_of(img, "get_dimensions")
    return [1 if array.ndim == 2 else int(array.shape[-3])] + [int(n) for n in array.shape[-2:]]


def get_image_size(img):
    """[width, height] of an image (in that order, as torchvision's)."""
    _, height, width = get_dimensions(img)
    return [width, height]


def get_image_num_channels(img):
    """The number of channels of an image (see get_dimensions)."""
    return get_dimensions(img)[0]


# ---- conversions -------------------------------------------------------------------------------
def to_tensor(pic):
    """ToTensor()(pic): a PIL image or an H x W x C NumPy array as a (C, H, W) Tensor, uint8
    values divided by 255; a Tensor comes back as a copy."""
    return _t._to_tensor(pic, "to_tensor")


def pil_to_tensor(pic):
    """PILToTensor()(pic): a PIL image's values, unscaled, (C, H, W); uint8 (and uint16) data
    as a NumPy array, which minifw's Tensors cannot hold, the other dtypes as a Tensor."""
    return _t._pil_to_tensor(pic, "pil_to_tensor")


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel of a float Tensor or array (..., C, H, W), as
    Normalize(mean, std, inplace); recorded for a Tensor that requires grad."""
    _t._check_mean_std(mean, std, "normalize")
    return _t._normalize(tensor, mean, std, bool(inplace), "normalize")


# ---- geometry ----------------------------------------------------------------------------------
def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """img resized to size (h, w), or with its smaller edge made size (an int or [int]) and the
    aspect ratio kept, the longer edge at most max_size; as Resize (the image itself when it
    has that size already)."""
    fn = "resize"
    interpolation = _t._interpolation_mode(interpolation, fn)
    requested = _t._resize_request(size, max_size, fn)
    return _t._resize(img, requested, max_size, interpolation, antialias, fn)


def crop(img, top, left, height, width):
    """The height x width window of img whose top-left corner is pixel (top, left); the parts
    of the window outside the image are zeros."""
    fn = "crop"
    top, left = _t._check_int(top, fn, "top"), _t._check_int(left, fn, "left")
    height, width = _t._check_int(height, fn, "height", low=0), _t._check_int(width, fn, "width", low=0)
    _t._size(img, fn)
    return _t._crop(img, top, left, height, width)


def center_crop(img, output_size):
    """The central window of output_size (h, w), or an int for a square; an image smaller than
    that is padded with zeros first, as CenterCrop."""
    return _t._center_crop(img, _t._setup_size(output_size, "center_crop"), "center_crop")


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
    """crop(img, top, left, height, width) resized as resize(..., size, interpolation,
    antialias=antialias): what RandomResizedCrop does with the window it draws."""
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def pad(img, padding, fill=0, padding_mode="constant"):
    """img padded on each side: padding is an int (all sides), (left/right, top/bottom) or (left,
    top, right, bottom); a negative value crops that side instead. padding_mode "constant" (with
    fill: a number, or one per channel), "edge", "reflect" or "symmetric", as Pad."""
    fn = "pad"
    _t._check_fill(fill, padding_mode, fn)
    sides = _t._parse_padding(padding, fn, negative=True)
    height, width = _t._size(img, fn)
    left, top, right, bottom = (max(-p, 0) for p in sides)
    if left or top or right or bottom:
        if left + right > width or top + bottom > height:
            raise ValueError(f"{fn}: negative padding {padding!r} crops more than the image's (height, "
                             f"width) {(height, width)}")
        img = _t._crop(img, top, left, height - top - bottom, width - left - right)
    return _t._pad(img, [max(p, 0) for p in sides], fill, padding_mode)


def hflip(img):
    """img mirrored left to right."""
    _t._size(img, "hflip")
    return _t._flip(img, -1)


def vflip(img):
    """img mirrored top to bottom."""
    _t._size(img, "vflip")
    return _t._flip(img, -2)


def five_crop(img, size):
    """(top-left, top-right, bottom-left, bottom-right, centre) crops of size (h, w), or an int
    for squares, as FiveCrop."""
    return _t._five_crop(img, _t._setup_size(size, "five_crop"), "five_crop")


def ten_crop(img, size, vertical_flip=False):
    """five_crop(img, size) followed by the five crops of img flipped left to right (top to
    bottom with vertical_flip=True), as TenCrop."""
    return _t._ten_crop(img, _t._setup_size(size, "ten_crop"), bool(vertical_flip), "ten_crop")


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    """img turned counter-clockwise by angle degrees about center (x, y) in pixels (None: the
    image's centre), as RandomRotation((angle, angle)); expand=True grows the output to hold the
    whole turned image. Pixels from outside the input are fill (a number or one per channel),
    zeros for None."""
    fn = "rotate"
    interpolation = _t._check_warp_interpolation(interpolation, fn)
    angle = _check_real(angle, fn, "angle")
    _check_point(center, fn, "center")
    _t._check_warp_fill(fill, fn)
    _t._size(img, fn)
    return _t._rotate(img, angle, interpolation, bool(expand), center, fill, fn)


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST, fill=None,
           center=None):
    """img through an affine map about center (x, y) (None: the image's centre): a turn by angle
    degrees (clockwise), shears by shear = (x, y) degrees (a number: x only), a scale, then a
    shift by translate = (tx, ty) pixels; what RandomAffine applies with the values it draws.
    Pixels from outside are fill (a number or one per channel), zeros for None."""
    fn = "affine"
    interpolation = _t._check_warp_interpolation(interpolation, fn)
    angle = _check_real(angle, fn, "angle")
    if (not isinstance(translate, (tuple, list)) or len(translate) != 2
            or any(isinstance(t, bool) or not isinstance(t, numbers.Real) for t in translate)):
        raise TypeError(f"{fn}: translate must be a sequence (tx, ty) of two numbers, got {translate!r}")
    scale = _check_real(scale, fn, "scale")
    if scale <= 0:
        raise ValueError(f"{fn}: scale must be a number > 0, got {scale!r}")
    shear = _shear_pair(shear, fn)
    _check_point(center, fn, "center")
    _t._check_warp_fill(fill, fn)
    _t._size(img, fn)
    return _t._affine(img, angle, list(translate), scale, shear, interpolation, fill, center, fn)


def _perspective_checked(img, coefficients, interpolation, fill, fn):
    interpolation = _t._check_warp_interpolation(interpolation, fn)
    _t._check_warp_fill(fill, fn)
    _t._size(img, fn)
    return _t._perspective(img, coefficients, interpolation, fill, fn)


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR, fill=None):
    """img warped so that the four points startpoints ([x, y] each: top-left, top-right,
    bottom-right, bottom-left) land on endpoints, by the projective map through them, as
    RandomPerspective applies it. Pixels from outside are fill, zeros for None."""
    coefficients = _t._perspective_coefficients(startpoints, endpoints, "perspective")
    return _perspective_checked(img, coefficients, interpolation, fill, "perspective")


def elastic_transform(img, displacement, interpolation=InterpolationMode.BILINEAR, fill=None):
    """img resampled with each output pixel (x, y) reading the input at (x + dx W / 2, y + dy H / 2),
    (dx, dy) = displacement[0, y, x] (a Tensor or array (1, H, W, 2) in grid_sample's normalized
    units), as ElasticTransform applies the displacement it draws. Pixels from outside are fill,
    zeros for None."""
    fn = "elastic_transform"
    if not isinstance(displacement, Tensor) and not devices.is_array(displacement):
        raise TypeError(f"{fn}: displacement must be a Tensor or an array (1, H, W, 2), got "
                        f"{type(displacement).__name__}")
    interpolation = _t._check_warp_interpolation(interpolation, fn)
    _t._check_warp_fill(fill, fn)
    return _t._elastic(img, displacement, interpolation, fill, fn)


# ---- colour ------------------------------------------------------------------------------------
def adjust_brightness(img, brightness_factor):
    """img times brightness_factor (>= 0), clamped to the dtype's range: 0 gives black, 1 the
    image; Pillow's ImageEnhance.Brightness on PIL images."""
    factor = _check_factor(img, brightness_factor, "adjust_brightness", "brightness_factor")
    return _t._adjust(img, "brightness", factor)


def adjust_contrast(img, contrast_factor):
    """img blended with the mean of its grayscale: contrast_factor (>= 0) 0 gives that grey, 1
    the image, 2 twice the contrast."""
    factor = _check_factor(img, contrast_factor, "adjust_contrast", "contrast_factor")
    return _t._adjust(img, "contrast", factor)


def adjust_saturation(img, saturation_factor):
    """img blended with its grayscale: saturation_factor (>= 0) 0 gives the grayscale, 1 the
    image, 2 twice the saturation; a 1-channel image comes back as it is."""
    factor = _check_factor(img, saturation_factor, "adjust_saturation", "saturation_factor")
    return _t._adjust(img, "saturation", factor)


def adjust_hue(img, hue_factor):
    """img with hue_factor (in [-0.5, 0.5], a fraction of the colour wheel) added to the hue of
    every pixel in HSV; 1-channel (and L, 1, I, F PIL) images come back as they are."""
    fn = "adjust_hue"
    factor = _check_real(hue_factor, fn, "hue_factor", low=-0.5, high=0.5)
    _check_colour_image(img, fn)
    return _t._adjust(img, "hue", factor)


def _gamma_array(array, gamma, gain, to_float, clamp_always):
    """gain * x ** gamma of an image's intensities in [0, 1]: floats as they are, integers
    through to_float (scaled to [0, 1]) and back (scaled and truncated, as convert_image_dtype)."""
    work = array if array.dtype.kind == "f" else to_float(array)
    out = work ** work.dtype.type(gamma)
    if clamp_always or gain != 1:
        out = np.clip(out * work.dtype.type(gain), 0, 1)
    return out.astype(array.dtype) if array.dtype.kind == "f" else _t._convert_array(out, array.dtype)


def _adjust_gamma(img, gamma, gain, fn, to_float, clamp_always):
    gamma = _check_real(gamma, fn, "gamma", low=0)
    gain = _check_real(gain, fn, "gain")
    if _t._is_pil(img):
        # Pillow's point() with one 256-entry table per RGB band, as torchvision's
        table = [int((255 + 1 - 1e-3) * gain * pow(value / 255.0, gamma)) for value in range(256)]
        mode = img.mode
        return img.convert("RGB").point(table * 3).convert(mode)
    _check_colour_image(img, fn)
    return _t._host_op(img, fn, lambda array: _gamma_array(array, gamma, gain, to_float, clamp_always))


def adjust_gamma(img, gamma, gain=1):
    """gain * img ** gamma on intensities in [0, 1] (gamma >= 0; > 1 darkens, < 1 lightens),
    clamped to [0, 1]: integers are scaled to [0, 1] and back as convert_image_dtype does; PIL
    images through a lookup table, as torchvision's."""
    return _adjust_gamma(img, gamma, gain, "adjust_gamma",
                         lambda array: _t._convert_array(array, np.dtype(np.float32)), clamp_always=True)


def adjust_sharpness(img, sharpness_factor):
    """img blended with its smoothed self (PIL's SMOOTH filter, borders kept): sharpness_factor
    (>= 0) 0 gives the smoothed image, 1 the image, 2 twice as sharp."""
    factor = _check_factor(img, sharpness_factor, "adjust_sharpness", "sharpness_factor")
    return _t._image_op(img, "sharpness", factor)


def rgb_to_grayscale(img, num_output_channels=1):
    """The luma 0.2989 R + 0.587 G + 0.114 B of img, as 1 channel or repeated in 3 (the dtype
    kept, integers truncated); Pillow's convert("L") on PIL images; as Grayscale."""
    fn = "rgb_to_grayscale"
    return _t._to_grayscale(img, _check_num_output_channels(num_output_channels, fn), fn)


def to_grayscale(img, num_output_channels=1):
    """rgb_to_grayscale under its older name (torchvision's v1 to_grayscale takes PIL images
    only; this one takes every image rgb_to_grayscale takes)."""
    fn = "to_grayscale"
    return _t._to_grayscale(img, _check_num_output_channels(num_output_channels, fn), fn)


def gaussian_blur(img, kernel_size, sigma=None):
    """img convolved with a Gaussian of kernel_size (x, y) odd taps (an int for both) and
    standard deviations sigma (x, y) (a number for both; None: 0.15 k + 0.35 for k taps), the
    image reflected at its borders; integer images are rounded back; PIL images are blurred as
    their arrays."""
    fn = "gaussian_blur"
    taps, sigmas = _kernel_and_sigma(kernel_size, sigma, fn)
    return _t._gaussian_blur(img, taps, sigmas, fn)


def invert(img):
    """Full intensity minus img: 1 - x for floats, 255 - x for uint8."""
    return _t._image_op(img, "invert")


def posterize(img, bits):
    """The top `bits` (0 to 8) bits of every 8-bit value (uint8 arrays and PIL images); floats x
    as floor(x * 2**bits) / 2**bits, as torchvision.transforms.v2."""
    return _t._image_op(img, "posterize", _t._check_int(bits, "posterize", "bits", 0, 8))


def solarize(img, threshold):
    """Every value >= threshold inverted (in the image's scale: up to 1 for floats, 255 for
    uint8)."""
    return _t._image_op(img, "solarize", _check_real(threshold, "solarize", "threshold"))


def autocontrast(img):
    """Each channel stretched linearly so that its darkest value becomes 0 and its brightest
    full intensity; a channel of one value is left alone."""
    return _t._image_op(img, "autocontrast")


def equalize(img):
    """Each channel's histogram equalized as Pillow's ImageOps.equalize does, on 8-bit values
    (floats through uint8 and back, as torchvision.transforms.v2)."""
    return _t._image_op(img, "equalize")


def _erase_checked(img, i, j, h, w, v, inplace, fn):
    i, j = _t._check_int(i, fn, "i", low=0), _t._check_int(j, fn, "j", low=0)
    h, w = _t._check_int(h, fn, "h", low=0), _t._check_int(w, fn, "w", low=0)
    if isinstance(v, Tensor):
        v = v._data
    if devices.is_array(v):
        v = devices.to_device(v, devices.CPU)
    elif not (isinstance(v, numbers.Number) and not isinstance(v, bool)):
        raise TypeError(f"{fn}: v must be a Tensor, an array or a number, got {type(v).__name__}")
    array = _t._array_of(img, fn)
    region = array[..., i:i + h, j:j + w].shape
    try:
        np.broadcast_shapes(np.shape(v), region)
    except ValueError:
        raise ValueError(f"{fn}: v of shape {tuple(np.shape(v))} does not broadcast to the erased region "
                         f"of shape {tuple(region)}") from None
    return _t._erase(img, i, j, h, w, v, bool(inplace), fn)


def erase(img, i, j, h, w, v, inplace=False):
    """img with the rectangle of h rows and w columns whose top-left pixel is (i, j) overwritten
    by v (a Tensor or array that broadcasts to it, or a number), in a copy unless inplace=True:
    what RandomErasing does with the rectangle it draws. Tensors and arrays only (PIL images: see
    minifw.vision.transforms.v2.functional.erase)."""
    if _t._is_pil(img):
        raise TypeError("erase: img should be a Tensor (or array) image, got a PIL Image; convert it with "
                        "to_tensor() or pil_to_tensor() first")
    return _erase_checked(img, i, j, h, w, v, inplace, "erase")


__all__ = ["InterpolationMode", "adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue",
           "adjust_saturation", "adjust_sharpness", "affine", "autocontrast", "center_crop",
           "convert_image_dtype", "crop", "elastic_transform", "equalize", "erase", "five_crop",
           "gaussian_blur", "get_dimensions", "get_image_num_channels", "get_image_size", "hflip",
           "invert", "normalize", "pad", "perspective", "pil_to_tensor", "posterize", "resize",
           "resized_crop", "rgb_to_grayscale", "rotate", "solarize", "ten_crop", "to_grayscale",
           "to_pil_image", "to_tensor", "vflip"]
