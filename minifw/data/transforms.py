"""Image transforms, as torchvision.transforms: give one (or a Compose of several) to a
dataset's `transform=`.

Each takes what torchvision's takes and gives back the same kind:
- a PIL image (Pillow does the work: crops, flips, padding, resizing with its filters);
- a minifw Tensor, or an array (NumPy, or CuPy on "cuda"), holding an image (..., H, W) as
  torchvision's tensors do (channels first, any number of leading dims); the result stays on
  the input's device;
- ToTensor takes a PIL image or an H x W x C (or H x W) NumPy array and makes the (C, H, W)
  Tensor; Normalize takes float tensors and arrays only;
- PILToTensor keeps a PIL image's values and dtype, (C, H, W): uint8 data, which minifw's
  Tensors cannot hold, as a uint8 NumPy array (taken everywhere here as torchvision takes a
  uint8 tensor); ConvertImageDtype / convert_image_dtype rescale between dtypes' ranges
  (uint8's [0, 255], floats' [0, 1]);
- ToPILImage / to_pil_image go the other way: a (C, H, W) Tensor or an H x W x C NumPy array
  to a PIL image (needs Pillow).

torchvision.transforms.v2's names are in minifw.data.transforms.v2 (the module
transforms_v2), for plain images; torchvision.transforms.functional's in
minifw.data.transforms.functional (the module transforms_functional: the operations below as
functions, which the transforms here apply with the parameters they draw), and v2's in
minifw.data.transforms.v2.functional (transforms_v2_functional).

The augmentations (RandomResizedCrop, ColorJitter, Grayscale, RandomGrayscale, RandomRotation,
RandomAffine, RandomPerspective, ElasticTransform, GaussianBlur, RandomErasing, RandomApply,
RandomChoice, RandomOrder, RandomInvert, RandomPosterize, RandomSolarize, RandomAdjustSharpness,
RandomAutocontrast, RandomEqualize, and the automatic ones: AutoAugment, RandAugment,
TrivialAugmentWide, AugMix), the test-time crops FiveCrop and TenCrop, and LinearTransformation
compute on the host with NumPy and hand a Tensor or array back on its device; on PIL images Pillow does
the work where torchvision's does (colour, rotation, affine, perspective, grayscale) and
GaussianBlur and ElasticTransform work on the image's array. Rotation, affine, perspective and
elastic transforms sample as torch's grid_sample (nearest or bilinear, pixel centres at k + 0.5)
and fill what came from outside the image.

Where torchvision raises and minifw does not: ToTensor returns a copy of a Tensor it is given
(minifw's MNIST hands its transform a float32 (1, 28, 28) tensor, where torchvision's hands a
PIL image), arrays are accepted wherever tensors are, Pad and RandomCrop take a per-channel
fill for tensors. Random transforms draw from their own `generator` (a minifw.Generator,
minifw's addition), else from the generator of the DataLoader thread that fetches, else from
minifw's global generator (minifw.data.worker), so minifw.manual_seed makes them repeatable.
"""
import enum
import math
import numbers
import sys

import numpy as np

from .. import devices
from .. import random as _random
from ..tensor import Tensor, tensor
from .worker import random_source


class InterpolationMode(enum.Enum):
    """Resampling filters, as torchvision.transforms.InterpolationMode. PIL images take all of
    them; tensors and arrays NEAREST, NEAREST_EXACT, BILINEAR and BICUBIC, as torchvision's."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


# Pillow's filter constants (PIL.Image.Resampling), which torchvision also accepts for a mode
_PIL_FILTERS = {InterpolationMode.NEAREST: 0, InterpolationMode.NEAREST_EXACT: 0,
                InterpolationMode.LANCZOS: 1, InterpolationMode.BILINEAR: 2,
                InterpolationMode.BICUBIC: 3, InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5}
_FROM_PIL_FILTER = {0: InterpolationMode.NEAREST, 1: InterpolationMode.LANCZOS,
                    2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
                    4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING}
_PADDING_MODES = ("constant", "edge", "reflect", "symmetric")


# ---- what an image is ------------------------------------------------------------------------
def _is_pil(img):
    # Only an image made by an imported Pillow can be one: no import of Pillow for tensors.
    image_module = sys.modules.get("PIL.Image")
    return image_module is not None and isinstance(img, image_module.Image)


def _array_of(img, fn):
    """The array of a Tensor or array image, checked to be (..., H, W)."""
    if isinstance(img, Tensor):
        array = img._data
    elif devices.is_array(img):
        array = img
    else:
        raise TypeError(f"{fn}: img should be a PIL Image, a Tensor or an array, got "
                        f"{type(img).__name__}")
    if array.ndim < 2:
        raise ValueError(f"{fn}: a tensor image has shape (..., H, W), got shape "
                         f"{tuple(array.shape)}")
    return array


def _like(img, array):
    """`array` as the kind of image `img` is (Tensor or array), on img's device."""
    original = img._data if isinstance(img, Tensor) else img
    array = devices.to_device(array, devices.of(original))
    return Tensor._make(array) if isinstance(img, Tensor) else array


def _size(img, fn):
    """(height, width) of an image."""
    if _is_pil(img):
        return img.height, img.width
    return tuple(_array_of(img, fn).shape[-2:])


def _setup_size(size, fn):
    """(h, w) from an int or a sequence of 1 or 2 ints, all positive."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        size = (size, size)
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if (not isinstance(size, (tuple, list)) or len(size) != 2
            or any(isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1 for s in size)):
        raise ValueError(f"{fn}: size must be a positive int or a sequence (h, w) of them, got "
                         f"{size!r}")
    return int(size[0]), int(size[1])


def _parse_padding(padding, fn, negative=False):
    """(left, top, right, bottom) from an int or a sequence of 1, 2 (left/right, top/bottom)
    or 4 (left, top, right, bottom) ints >= 0 (any ints with negative=True: the functional pad
    crops a side padded by a negative number)."""
    values = [padding] if isinstance(padding, numbers.Number) else padding
    if (not isinstance(values, (tuple, list)) or len(values) not in (1, 2, 4)
            or any(isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 0 and not negative
                   for p in values)):
        ints = "an int or a sequence of 1, 2 or 4 ints" if negative else (
            "an int >= 0 or a sequence of 1, 2 or 4 of them")
        raise ValueError(f"{fn}: padding must be {ints}, got {padding!r}")
    values = [int(p) for p in values]
    if len(values) == 1:
        return values * 4
    if len(values) == 2:
        return values * 2
    return values


def _check_fill(fill, padding_mode, fn):
    if not (isinstance(fill, numbers.Number) or isinstance(fill, (tuple, list)) and fill
            and all(isinstance(f, numbers.Number) for f in fill)):
        raise TypeError(f"{fn}: fill must be a number or a sequence of numbers (one per channel), "
                        f"got {fill!r}")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"{fn}: padding_mode must be one of {', '.join(_PADDING_MODES)}; got "
                         f"{padding_mode!r}")


# ---- the operations, on each kind of image ---------------------------------------------------------
def _crop(img, top, left, height, width):
    """The window of img with its top-left corner at (top, left); where the window reaches
    outside the image it reads zeros, as Pillow's crop and torchvision's do."""
    if _is_pil(img):
        return img.crop((left, top, left + width, top + height))
    array = _array_of(img, "crop")
    image_height, image_width = array.shape[-2:]
    bottom, right = top + height, left + width
    if top < 0 or left < 0 or bottom > image_height or right > image_width:
        inside = _like(img, array[..., max(top, 0):max(bottom, 0), max(left, 0):max(right, 0)])
        outside = (min(max(-left, 0), width), min(max(-top, 0), height),
                   min(max(right - max(image_width, left), 0), width),
                   min(max(bottom - max(image_height, top), 0), height))
        return _pad(inside, outside, 0, "constant")
    return _like(img, array[..., top:bottom, left:right])


def _pil_fill(img, fill, fn="pad"):
    """A fill colour as Pillow takes it for img's mode: one number per band (ints unless the
    image holds floats), as torchvision's PIL padding converts it."""
    bands = len(img.getbands())
    if isinstance(fill, numbers.Number):
        fill = (fill,) * bands
    elif len(fill) == 1:
        fill = tuple(fill) * bands
    elif len(fill) != bands:
        raise ValueError(f"{fn}: fill has {len(fill)} values for an image of {bands} channels")
    fill = tuple(fill) if img.mode == "F" else tuple(int(f) for f in fill)
    return fill[0] if bands == 1 else fill


def _pil_from_array(array, like):
    """A PIL image of like's mode (and palette) holding `array` (what np.asarray gave, resized)."""
    from PIL import Image

    if like.mode == "1":
        out = Image.fromarray(np.ascontiguousarray(array, dtype=bool))
    else:
        out = Image.frombytes(like.mode, (array.shape[1], array.shape[0]),
                              np.ascontiguousarray(array).tobytes())
    if like.mode in ("P", "PA"):
        out.putpalette(like.getpalette())
    return out


def _pad(img, ltrb, fill, padding_mode):
    left, top, right, bottom = ltrb
    if _is_pil(img):
        from PIL import Image

        size = (img.width + left + right, img.height + top + bottom)
        if padding_mode == "constant":
            out = Image.new(img.mode, size, _pil_fill(img, fill))
            if img.mode in ("P", "PA"):
                out.putpalette(img.getpalette())
            out.paste(img, (left, top))
            return out
        array = np.asarray(img)
        widths = ((top, bottom), (left, right)) + ((0, 0),) * (array.ndim - 2)
        return _pil_from_array(np.pad(array, widths, mode=padding_mode), img)
    array = _array_of(img, "pad")
    dev = devices.of(array)
    height, width = array.shape[-2:]
    if padding_mode == "constant":
        out = devices.empty(array.shape[:-2] + (height + top + bottom, width + left + right),
                            array.dtype, dev)
        if isinstance(fill, numbers.Number):
            out[...] = fill
        else:
            channels = array.shape[-3] if array.ndim >= 3 else 1
            if len(fill) not in (1, channels):
                raise ValueError(f"pad: fill has {len(fill)} values for an image of {channels} "
                                 f"channels")
            out[...] = devices.asarray(np.asarray(fill, dtype=array.dtype).reshape(-1, 1, 1),
                                       dev=dev)
        out[..., top:top + height, left:left + width] = array
    else:
        widths = ((0, 0),) * (array.ndim - 2) + ((top, bottom), (left, right))
        out = np.pad(array, widths, mode=padding_mode)
    return _like(img, out)


def _flip(img, axis):
    if _is_pil(img):
        from PIL import Image

        return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT if axis == -1
                             else Image.Transpose.FLIP_TOP_BOTTOM)
    array = _array_of(img, "flip")
    xp = devices.array_module(devices.of(array))
    flipped = array[..., ::-1] if axis == -1 else array[..., ::-1, :]
    return _like(img, xp.ascontiguousarray(flipped))  # a copy, as torch.flip makes


def _nearest_indices(n_in, n_out, exact):
    """Source index of each output pixel: torch's "nearest" takes floor(i * n_in / n_out),
    "nearest-exact" (and Pillow's NEAREST) the pixel under the output pixel's centre."""
    i = np.arange(n_out)
    src = (i * n_in) // n_out if not exact else ((2 * i + 1) * n_in) // (2 * n_out)
    return np.minimum(src, n_in - 1)


def _triangle(d):
    return np.maximum(0.0, 1.0 - np.abs(d))


def _cubic(a):
    """Keys' cubic convolution kernel with parameter a (Pillow: -0.5, torch: -0.75)."""
    def kernel(d):
        d = np.abs(d)
        near = ((a + 2) * d - (a + 3)) * d * d + 1
        far = ((d - 5) * d + 8) * d * a - 4 * a
        return np.where(d <= 1, near, np.where(d < 2, far, 0.0))
    return kernel


def _interpolation_weights(n_in, n_out, mode, antialias):
    """(n_out, n_in) float64 matrix W with output = W @ input along one axis.

    Output pixel i's centre sits at (i + 0.5) * n_in / n_out in input pixels (half-pixel
    centres, torch's align_corners=False). Without antialiasing the kernel reads the 2
    (bilinear) or 4 (bicubic, a = -0.75) nearest pixels, clamped at the border, as
    torch.nn.functional.interpolate does. With it, when shrinking, the kernel is stretched by
    the scale so that every input pixel contributes, taps outside the image are dropped and
    the rest renormalized: Pillow's resampling (bicubic with a = -0.5), which torch's
    antialias=True reproduces."""
    scale = n_in / n_out
    centres = (np.arange(n_out) + 0.5) * scale
    radius = 1 if mode is InterpolationMode.BILINEAR else 2
    if antialias:
        kernel = _triangle if radius == 1 else _cubic(-0.5)
        stretch = max(scale, 1.0)
        weights = kernel((np.arange(n_in)[None, :] + 0.5 - centres[:, None]) / stretch)
        return weights / weights.sum(axis=1, keepdims=True)
    kernel = _triangle if radius == 1 else _cubic(-0.75)
    src = centres - 0.5
    taps = np.floor(src).astype(np.int64)[:, None] + np.arange(1 - radius, radius + 1)[None, :]
    weights = np.zeros((n_out, n_in))
    rows = np.broadcast_to(np.arange(n_out)[:, None], taps.shape)
    np.add.at(weights, (rows, np.clip(taps, 0, n_in - 1)), kernel(src[:, None] - taps))
    return weights


def _resize_array(array, size, mode, antialias):
    dev = devices.of(array)
    xp = devices.array_module(dev)
    (h_in, w_in), (h_out, w_out) = array.shape[-2:], size
    if mode in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT):
        exact = mode is InterpolationMode.NEAREST_EXACT
        rows = devices.asarray(_nearest_indices(h_in, h_out, exact), dev=dev)
        cols = devices.asarray(_nearest_indices(w_in, w_out, exact), dev=dev)
        return xp.take(xp.take(array, rows, axis=-2), cols, axis=-1)
    if mode not in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
        raise ValueError(f"Resize: a tensor or array image can be resized with nearest, "
                         f"nearest-exact, bilinear or bicubic interpolation (as torchvision's), "
                         f"got {mode.value}; resize a PIL image for the others")
    if array.dtype.kind not in "fiu":
        raise TypeError(f"Resize: {mode.value} interpolation needs numbers, got dtype {array.dtype}")
    dtype = np.float64 if array.dtype == np.float64 else np.float32
    rows = devices.asarray(_interpolation_weights(h_in, h_out, mode, antialias).astype(dtype), dev=dev)
    cols = devices.asarray(_interpolation_weights(w_in, w_out, mode, antialias).T.astype(dtype), dev=dev)
    out = xp.matmul(xp.matmul(rows, array.astype(dtype, copy=False)), cols)
    if array.dtype.kind in "iu":  # as torchvision: round back to the integer dtype
        out = out.round()
        if array.dtype == np.uint8:
            out = out.clip(0, 255)
        out = out.astype(array.dtype)
    return out


def _interpolation_mode(interpolation, fn):
    """An InterpolationMode from one, its name or a PIL.Image filter constant."""
    if isinstance(interpolation, numbers.Integral) and interpolation in _FROM_PIL_FILTER:
        return _FROM_PIL_FILTER[interpolation]
    if isinstance(interpolation, str):
        try:
            return InterpolationMode(interpolation)
        except ValueError:
            pass
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError(f"{fn}: interpolation must be an InterpolationMode (or its name, or "
                        f"a PIL.Image filter), got {interpolation!r}")
    return interpolation


def _resized_size(height, width, size, max_size):
    """torchvision's output size: (h, w) as given, or the smaller edge made `size` with the
    aspect ratio kept (the longer edge truncated), capped by max_size; size None (v2's Resize)
    makes the longer edge max_size."""
    if size is not None and len(size) == 2:
        return tuple(size)
    short, long = (width, height) if width <= height else (height, width)
    if size is None:
        new_short, new_long = int(max_size * short / long), max_size
    else:
        new_short, new_long = size[0], int(size[0] * long / short)
    if max_size is not None and new_long > max_size:
        new_short, new_long = int(max_size * new_short / new_long), max_size
    return (new_long, new_short) if width <= height else (new_short, new_long)


# ---- the transforms ----------------------------------------------------------------------------
class Compose:
    """Apply `transforms` one after the other."""

    def __init__(self, transforms):
        self.transforms = list(transforms)
        for i, t in enumerate(self.transforms):
            if not callable(t):
                raise TypeError(f"Compose: transform {i} is a {type(t).__name__}, not callable")

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return "Compose(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class ToTensor:
    """A PIL image or an H x W x C (or H x W) NumPy array as a (C, H, W) Tensor. uint8 data
    (and PIL images of 8-bit modes: L, LA, P, RGB, RGBA, CMYK, YCbCr, and 1) become float32 in
    [0, 1] (divided by 255); other dtypes keep their values, as minifw's dtype of that kind
    (float32/float64, int64, bool). A Tensor comes back as a copy, taken to be (C, H, W)."""

    def __call__(self, pic):
        return _to_tensor(pic, "ToTensor")

    def __repr__(self):
        return "ToTensor()"


def _to_tensor(pic, fn):
    if isinstance(pic, Tensor):
        return Tensor._make(pic._data.copy())
    if _is_pil(pic):
        array = np.asarray(pic)
    elif isinstance(pic, np.ndarray):
        array = pic
    else:
        raise TypeError(f"{fn}: pic should be a PIL Image or a NumPy array (H x W x C), "
                        f"got {type(pic).__name__}")
    if array.ndim not in (2, 3):
        raise ValueError(f"{fn}: pic should be 2- or 3-dimensional (H x W or H x W x C), "
                         f"got shape {array.shape}")
    if array.ndim == 2:
        array = array[:, :, None]
    array = np.ascontiguousarray(array.transpose(2, 0, 1))
    if array.dtype == np.uint8:
        return Tensor._make(array.astype(np.float32) / np.float32(255))
    if array.dtype == np.bool_ and _is_pil(pic):  # mode "1": 0 or 255 in torchvision, so 0 or 1
        return Tensor._make(array.astype(np.float32))
    return tensor(array)


class PILToTensor:
    """A PIL image as its (C, H, W) values, unscaled and in the image's own dtype, as
    torchvision's PILToTensor: 8-bit modes (L, P, RGB, RGBA, CMYK, YCbCr, LA...) give uint8,
    "I;16" uint16, "I" int32, "F" float32 and "1" bool. minifw's Tensors hold no uint8 (nor
    uint16), so those come back as a uint8 (uint16) NumPy array, which every transform here,
    ConvertImageDtype included, takes as torchvision takes a uint8 tensor (and a DataLoader
    batches into a Tensor); the other dtypes come back as a Tensor."""

    def __call__(self, pic):
        return _pil_to_tensor(pic, "PILToTensor")

    def __repr__(self):
        return "PILToTensor()"


def _pil_to_tensor(pic, fn):
    if not _is_pil(pic):
        raise TypeError(f"{fn}: pic should be a PIL Image, got {type(pic).__name__}")
    array = np.array(pic, copy=True)
    array = np.ascontiguousarray(array.reshape(pic.height, pic.width, -1).transpose(2, 0, 1))
    if array.dtype in _TENSOR_DTYPES:
        return Tensor._make(array)
    return array


_TENSOR_DTYPES = frozenset(np.dtype(d) for d in ("float32", "float64", "int64", "int32", "bool"))
_IMAGE_DTYPE_KINDS = "biuf"
_UNSAFE_CASTS = frozenset((np.dtype(a), np.dtype(b)) for a, b in (
    ("float32", "int32"), ("float32", "int64"), ("float64", "int64")))


def _image_dtype(dtype, fn):
    """dtype as a NumPy dtype an image may have: one of minifw's dtypes (NumPy dtypes), or a
    NumPy dtype or scalar type of bools, integers or floats (np.uint8 for torch.uint8)."""
    if isinstance(dtype, type) and issubclass(dtype, np.generic):
        dtype = np.dtype(dtype)
    if not isinstance(dtype, np.dtype) or dtype.kind not in _IMAGE_DTYPE_KINDS:
        raise TypeError(f"{fn}: dtype must be a dtype of bools, integers or floats (e.g. "
                        f"minifw.float32, or numpy.uint8 for 8-bit images), got {dtype!r}")
    return dtype


def _full_intensity(dtype):
    """The value of full intensity in an image of `dtype`, as torchvision counts it: 1 for
    floats and bools, the largest value for integers (255 for uint8)."""
    return int(np.iinfo(dtype).max) if dtype.kind in "iu" else 1


def _convert_array(array, dtype, fn="convert_image_dtype"):
    """The values of `array` rescaled from its dtype's range of intensities to dtype's."""
    source = array.dtype
    if source.kind == "f":
        if dtype.kind == "f":
            return array.astype(dtype)
        if (source, dtype) in _UNSAFE_CASTS:
            # the float's mantissa cannot tell every integer of the target's range apart, so
            # the scaled values would be wrong
            raise RuntimeError(f"{fn}: converting a {source} image to {dtype} "
                               f"is refused: {source} cannot represent {dtype}'s range of "
                               f"intensities exactly")
        top = _full_intensity(dtype)
        # [0, 1] onto [0, top]: scaled by just under top + 1 and truncated, so that every
        # integer value gets an equal share of [0, 1] and 1.0 maps to top; values outside
        # [0, 1] are clamped to the target's range
        scaled = array * source.type(top + 1.0 - 1e-3)
        return np.clip(scaled, 0, top).astype(dtype)
    top_in = _full_intensity(source)
    if dtype.kind == "f":
        return array.astype(dtype) / dtype.type(top_in)
    top_out = _full_intensity(dtype)
    if top_in > top_out:  # to fewer levels: each output level covers an equal run of inputs
        return (array // ((top_in + 1) // (top_out + 1))).astype(dtype)
    return array.astype(dtype) * dtype.type((top_out + 1) // (top_in + 1))


def convert_image_dtype(image, dtype=np.dtype("float32")):
    """`image` (a Tensor or array (..., H, W)) in `dtype`, its values rescaled between the two
    dtypes' ranges of intensities as torchvision's convert_image_dtype: floats span [0, 1],
    integers [0, their largest value] (uint8: 255). Integer to float divides by the input's
    largest value; float to integer multiplies by (largest + 1 - 0.001) and truncates (so
    1.0 becomes the largest value), refusing float32 -> int32/int64 and float64 -> int64
    (RuntimeError); integer to integer shifts by the ratio of the two ranges. The same dtype
    returns the image itself. A Tensor comes back as a Tensor when dtype is one of minifw's
    Tensor dtypes, else (uint8, int16, float16...) as an array on its device, as an array
    image always does."""
    fn = "convert_image_dtype"
    dtype = _image_dtype(dtype, fn)
    if isinstance(image, Tensor):
        array = image._data
    elif devices.is_array(image):
        array = image
    else:
        raise TypeError(f"{fn}: image should be a Tensor or an array, got {type(image).__name__}")
    if array.dtype.kind not in _IMAGE_DTYPE_KINDS:
        raise TypeError(f"{fn}: image must hold bools, integers or floats, got dtype {array.dtype}")
    if array.dtype == dtype:
        return image
    host = devices.to_device(array, devices.CPU)
    out = devices.to_device(np.ascontiguousarray(_convert_array(host, dtype)), devices.of(array))
    if isinstance(image, Tensor) and dtype in _TENSOR_DTYPES:
        return Tensor._make(out)
    return out


class ConvertImageDtype:
    """An image (a Tensor or array) in `dtype`, its values rescaled between the two dtypes'
    ranges of intensities, as torchvision's ConvertImageDtype (see convert_image_dtype):
    ConvertImageDtype(minifw.float32) after PILToTensor gives values in [0, 1]."""

    def __init__(self, dtype):
        self.dtype = _image_dtype(dtype, "ConvertImageDtype")

    def __call__(self, image):
        return convert_image_dtype(image, self.dtype)

    def __repr__(self):
        return "ConvertImageDtype()"  # as torchvision's (a Module without extra_repr)


def _require_pillow(fn):
    """PIL.Image, or an ImportError that says how to install Pillow."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(f"{fn}: making a PIL image needs Pillow, and it is not installed: "
                          f"pip install pillow (or pip install \"minifw[vision]\")") from None
    return Image


# PIL modes by number of channels (the first one is the default for uint8 data), and the
# 1-channel modes by dtype, as torchvision's to_pil_image (plus uint16, what PILToTensor
# makes of "I;16" images)
_PIL_MODES = {2: ("LA",), 3: ("RGB", "YCbCr", "HSV"), 4: ("RGBA", "CMYK", "RGBX")}
_PIL_SINGLE_BAND_MODES = {np.dtype(np.uint8): "L", np.dtype(np.int32): "I", np.dtype(np.float32): "F",
                          np.dtype(np.int16): "I;16" if sys.byteorder == "little" else "I;16B",
                          np.dtype(np.uint16): "I;16" if sys.byteorder == "little" else "I;16B"}


def to_pil_image(pic, mode=None):
    """A PIL image of `pic`, as torchvision.transforms.functional.to_pil_image: a Tensor is
    (C, H, W) or (H, W), a NumPy array (H, W, C) or (H, W), with 1 to 4 channels. Floats
    become uint8 as pic * 255 truncated (values outside [0, 1] clamped first, where
    torchvision's cast wraps), unless mode is "F"; uint8 data with no mode gives L, LA, RGB or
    RGBA by the number of channels; one channel of int16/uint16, int32 or float32 gives
    "I;16", "I" or "F". `mode` may name another mode for that number of channels (YCbCr, HSV,
    CMYK, RGBX): the bytes are read as that mode, not converted, as torchvision's are.
    A (C, H, W) uint8 array, as PILToTensor and v2.ToImage give, is not told apart from an
    (H, W, C) one: transpose it (.transpose(1, 2, 0)) first, or make it a float Tensor."""
    fn = "to_pil_image"
    if isinstance(pic, Tensor):
        array = devices.to_device(pic._data, devices.CPU)
        if array.ndim == 3:
            array = array.transpose(1, 2, 0)
        layout = "a Tensor (C, H, W) or (H, W)"
    elif isinstance(pic, np.ndarray):
        array, layout = pic, "a NumPy array (H, W, C) or (H, W)"
    else:
        raise TypeError(f"{fn}: pic should be a Tensor (C, H, W) or a NumPy array (H, W, C), got "
                        f"{type(pic).__name__}")
    if mode is not None and not isinstance(mode, str):
        raise TypeError(f"{fn}: mode must be a PIL mode name (a str) or None, got {mode!r}")
    if array.ndim not in (2, 3):
        raise ValueError(f"{fn}: pic should be 2- or 3-dimensional, {layout}, got shape "
                         f"{tuple(pic.shape)}")
    if array.ndim == 2:
        array = array[:, :, None]
    channels = array.shape[2]
    if channels > 4:
        hint = (" (a (C, H, W) array, as PILToTensor and v2.ToImage give, needs .transpose(1, 2, 0))"
                if isinstance(pic, np.ndarray) else "")
        raise ValueError(f"{fn}: pic should have 1 to 4 channels, {layout}, got shape "
                         f"{tuple(pic.shape)}{hint}")
    if array.dtype.kind == "f" and mode != "F":
        array = np.clip(array * 255, 0, 255).astype(np.uint8)  # truncated, as torchvision's
    if channels == 1:
        array = array[:, :, 0]
        expected = _PIL_SINGLE_BAND_MODES.get(array.dtype)
        if mode is not None and mode != expected:
            fits = f"takes mode {expected!r}" if expected else "has no PIL mode"
            raise ValueError(f"{fn}: mode {mode!r} does not fit a 1-channel image of dtype "
                             f"{array.dtype}, which {fits}")
        mode = expected
    else:
        permitted = _PIL_MODES[channels]
        if mode is not None and mode not in permitted:
            raise ValueError(f"{fn}: a {channels}-channel image takes mode {' or '.join(permitted)}, "
                             f"got mode {mode!r}")
        if array.dtype != np.uint8:
            mode = None
        elif mode is None:
            mode = permitted[0]
    if mode is None:
        takes = "uint8, int16, uint16, int32 or float32" if channels == 1 else "uint8"
        raise TypeError(f"{fn}: a {channels}-channel image of dtype {array.dtype} has no PIL mode; "
                        f"pic should hold floats in [0, 1] or {takes} values")
    image_module = _require_pillow(fn)
    return image_module.frombytes(mode, (array.shape[1], array.shape[0]),
                                  np.ascontiguousarray(array).tobytes())


class ToPILImage:
    """A (C, H, W) Tensor or an H x W x C NumPy array as a PIL image (see to_pil_image): float
    values in [0, 1] become uint8 (x 255, truncated); 1, 2, 3, 4 channels of uint8 give L, LA,
    RGB, RGBA unless `mode` says otherwise. Needs Pillow."""

    def __init__(self, mode=None):
        if mode is not None and not isinstance(mode, str):
            raise TypeError(f"ToPILImage: mode must be a PIL mode name (a str) or None, got {mode!r}")
        self.mode = mode

    def __call__(self, pic):
        return to_pil_image(pic, self.mode)

    def __repr__(self):
        return "ToPILImage()" if self.mode is None else f"ToPILImage(mode={self.mode})"


class Normalize:
    """(image - mean) / std per channel, on a float Tensor or array (..., C, H, W); mean and std
    are sequences of one value per channel (or one for all). inplace=True overwrites the input.
    On a Tensor that requires grad the operations are recorded (differentiable)."""

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, bool(inplace)
        _check_mean_std(mean, std, "Normalize")

    def __call__(self, img):
        return _normalize(img, self.mean, self.std, self.inplace, "Normalize")

    def __repr__(self):
        return f"Normalize(mean={self.mean}, std={self.std})"


def _check_mean_std(mean, std, fn):
    for name, value in (("mean", mean), ("std", std)):
        values = np.asarray(value.tolist() if isinstance(value, Tensor) else value)
        if values.dtype.kind not in "fiu" or values.ndim > 1 or values.size == 0:
            raise TypeError(f"{fn}: {name} must be a number or a sequence of numbers, one "
                            f"per channel, got {value!r}")


def _normalize(img, mean, std, inplace, fn):
    if not isinstance(img, Tensor) and not devices.is_array(img):
        raise TypeError(f"{fn}: img should be a Tensor (or array) image, got "
                        f"{type(img).__name__}; convert it with ToTensor() first")
    array = _array_of(img, fn)
    if array.dtype.kind != "f":
        raise TypeError(f"{fn}: the image must hold floats, got dtype {array.dtype}")
    if array.ndim < 3:
        raise ValueError(f"{fn}: expected an image of shape (..., C, H, W), got shape "
                         f"{tuple(array.shape)}")
    channels = array.shape[-3]
    dev = devices.of(array)
    mean, std = (np.asarray(v.tolist() if isinstance(v, Tensor) else v, dtype=array.dtype)
                 .reshape(-1) for v in (mean, std))
    for name, values in (("mean", mean), ("std", std)):
        if values.size not in (1, channels):
            raise ValueError(f"{fn}: {name} has {values.size} values for an image of "
                             f"{channels} channels (shape {tuple(array.shape)})")
    if (std == 0).any():
        raise ValueError(f"{fn}: std evaluated to zero after conversion to {array.dtype}, "
                         f"leading to division by zero")
    mean, std = (devices.asarray(v.reshape(-1, 1, 1), dev=dev) for v in (mean, std))
    if isinstance(img, Tensor) and img.requires_grad:
        # recorded, as torchvision's: the gradient reaches the image
        mean, std = Tensor._make(mean), Tensor._make(std)
        return img.sub_(mean).div_(std) if inplace else (img - mean) / std
    if inplace:
        array -= mean
        array /= std
        return img
    return _like(img, (array - mean) / std)


class LinearTransformation:
    """Each image's C * H * W values, flattened, minus mean_vector, times transformation_matrix
    (D x D with D = C * H * W), shaped back: ZCA whitening, for one. The matrix and the vector are
    Tensors or arrays; the product is computed in the image's dtype (floats), on its device, and
    recorded for a Tensor that requires grad."""

    def __init__(self, transformation_matrix, mean_vector):
        fn = "LinearTransformation"
        matrix, mean = (devices.to_device(v._data if isinstance(v, Tensor) else np.asarray(v), devices.CPU)
                        for v in (transformation_matrix, mean_vector))
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"{fn}: transformation_matrix should be square (D, D), got shape "
                             f"{tuple(matrix.shape)}")
        if mean.shape != (matrix.shape[0],):
            raise ValueError(f"{fn}: mean_vector should have shape ({matrix.shape[0]},), one value per "
                             f"row of transformation_matrix, got shape {tuple(mean.shape)}")
        if matrix.dtype != mean.dtype:
            raise ValueError(f"{fn}: transformation_matrix and mean_vector should have the same dtype, "
                             f"got {matrix.dtype} and {mean.dtype}")
        self.transformation_matrix, self.mean_vector = transformation_matrix, mean_vector
        self._matrix, self._mean = matrix, mean

    def __call__(self, tensor):
        fn = "LinearTransformation"
        if _is_pil(tensor):
            raise TypeError(f"{fn}: tensor should be a Tensor (or array) image, got a PIL Image; "
                            f"convert it with ToTensor() first")
        array = _array_of(tensor, fn)
        if array.dtype.kind != "f":
            raise TypeError(f"{fn}: the image must hold floats, got dtype {array.dtype}")
        _channels(array, fn, allowed=None)
        shape = tuple(array.shape)
        n = shape[-3] * shape[-2] * shape[-1]
        if n != self._matrix.shape[0]:
            raise ValueError(f"{fn}: an image of shape (..., {shape[-3]}, {shape[-2]}, {shape[-1]}) has "
                             f"{n} values, the transformation matrix is {self._matrix.shape[0]} x "
                             f"{self._matrix.shape[0]}")
        dev = devices.of(array)
        matrix, mean = (devices.asarray(v.astype(array.dtype), dev=dev) for v in (self._matrix, self._mean))
        if isinstance(tensor, Tensor):
            flat = tensor.reshape(-1, n) - Tensor._make(mean)
            return (flat @ Tensor._make(matrix)).reshape(shape)
        xp = devices.array_module(dev)
        return xp.matmul(array.reshape(-1, n) - mean, matrix).reshape(shape)

    def __repr__(self):
        return (f"LinearTransformation(transformation_matrix={self._matrix.tolist()}, "
                f"mean_vector={self._mean.tolist()})")


class Resize:
    """Resize to `size`: (h, w), or an int (or [int]) that the smaller edge becomes, the
    aspect ratio kept (and the longer edge at most max_size). PIL images are resized by
    Pillow's filters (always antialiased); tensors and arrays by NEAREST, NEAREST_EXACT,
    BILINEAR or BICUBIC computed here, as torchvision's tensors are: antialias=True (the
    default) filters like Pillow when shrinking. Integer arrays are rounded back (uint8 clamped
    to 0-255), which can differ by 1 from torchvision's fixed-point uint8 path."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
        requested = _resize_request(size, max_size, "Resize")
        interpolation = _interpolation_mode(interpolation, "Resize")
        # antialias=None is torchvision's legacy value: False for tensors (Pillow always filters)
        self.size, self.max_size, self.interpolation = size, max_size, interpolation
        self.antialias = antialias
        self._requested = requested

    def __call__(self, img):
        return _resize(img, self._requested, self.max_size, self.interpolation, self.antialias, "Resize")

    def __repr__(self):
        return (f"Resize(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


def _resize_request(size, max_size, fn):
    """size as a list: [h, w], or [s] for the smaller edge (checked against max_size)."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        requested = [int(size)]
    elif isinstance(size, (tuple, list)) and len(size) in (1, 2):
        requested = list(size)
    else:
        raise ValueError(f"{fn}: size must be an int or a sequence of 1 or 2 ints, got {size!r}")
    if any(isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1 for s in requested):
        raise ValueError(f"{fn}: size must hold positive ints, got {size!r}")
    if max_size is not None:
        if len(requested) != 1:
            raise ValueError(f"{fn}: max_size applies when size is the smaller edge's length "
                             f"(an int), got size={size!r}")
        if isinstance(max_size, bool) or not isinstance(max_size, numbers.Integral) \
                or max_size <= requested[0]:
            raise ValueError(f"{fn}: max_size must be an int greater than size "
                             f"({requested[0]}), got {max_size!r}")
    return [int(s) for s in requested]


def _resize(img, requested, max_size, interpolation, antialias, fn):
    """img resized to _resized_size's output (the image itself when that is its size)."""
    height, width = _size(img, fn)
    out = _resized_size(height, width, requested, max_size)
    if out == (height, width):
        return img
    if _is_pil(img):
        return img.resize((out[1], out[0]), _PIL_FILTERS[interpolation])
    array = _array_of(img, fn)
    return _like(img, _resize_array(array, out, interpolation, bool(antialias)))


class CenterCrop:
    """The central size x size (or (h, w)) window; an image smaller than that is first padded
    with zeros on all sides, as torchvision's."""

    def __init__(self, size):
        self.size = _setup_size(size, "CenterCrop")

    def __call__(self, img):
        return _center_crop(img, self.size, "CenterCrop")

    def __repr__(self):
        return f"CenterCrop(size={self.size})"


def _center_crop(img, size, fn):
    height, width = _size(img, fn)
    crop_h, crop_w = size
    if crop_h > height or crop_w > width:
        extra_w, extra_h = max(crop_w - width, 0), max(crop_h - height, 0)
        img = _pad(img, (extra_w // 2, extra_h // 2, (extra_w + 1) // 2, (extra_h + 1) // 2),
                   0, "constant")
        height, width = _size(img, fn)
    # Python's round (half to even), as torchvision's
    top, left = int(round((height - crop_h) / 2.0)), int(round((width - crop_w) / 2.0))
    return _crop(img, top, left, crop_h, crop_w)


def _five_crop(img, size, fn):
    """The four corner crops of size (h, w) and the central one: (top-left, top-right,
    bottom-left, bottom-right, centre)."""
    height, width = _size(img, fn)
    crop_h, crop_w = size
    if crop_h > height or crop_w > width:
        raise ValueError(f"{fn}: size {(crop_h, crop_w)} is larger than the image's (height, width) "
                         f"{(height, width)}")
    bottom, right = height - crop_h, width - crop_w
    return (_crop(img, 0, 0, crop_h, crop_w), _crop(img, 0, right, crop_h, crop_w),
            _crop(img, bottom, 0, crop_h, crop_w), _crop(img, bottom, right, crop_h, crop_w),
            _center_crop(img, size, fn))


def _ten_crop(img, size, vertical_flip, fn):
    """_five_crop's five crops, then the same five of the image flipped (left to right, or top
    to bottom with vertical_flip=True)."""
    first = _five_crop(img, size, fn)
    return first + _five_crop(_flip(img, -2 if vertical_flip else -1), size, fn)


class FiveCrop:
    """The four corners and the centre of the image, each size x size (or (h, w)), as a tuple
    (top-left, top-right, bottom-left, bottom-right, centre): a test-time augmentation, whose
    crops one stacks, e.g. Lambda(lambda crops: minifw.stack([ToTensor()(c) for c in crops]))."""

    def __init__(self, size):
        self.size = _setup_size(size, "FiveCrop")

    def __call__(self, img):
        return _five_crop(img, self.size, "FiveCrop")

    def __repr__(self):
        return f"FiveCrop(size={self.size})"


class TenCrop:
    """FiveCrop's five crops of the image, then the five of its mirror image (flipped left to
    right, or top to bottom with vertical_flip=True): a tuple of ten."""

    def __init__(self, size, vertical_flip=False):
        self.size = _setup_size(size, "TenCrop")
        self.vertical_flip = bool(vertical_flip)

    def __call__(self, img):
        return _ten_crop(img, self.size, self.vertical_flip, "TenCrop")

    def __repr__(self):
        return f"TenCrop(size={self.size}, vertical_flip={self.vertical_flip})"


class Pad:
    """Pad each side: padding is an int (all sides), (left/right, top/bottom) or (left, top,
    right, bottom). padding_mode: "constant" (with fill, a number or one per channel), "edge",
    "reflect" (mirror without the edge pixel) or "symmetric" (mirror with it)."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        self._ltrb = _parse_padding(padding, "Pad")
        _check_fill(fill, padding_mode, "Pad")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def __call__(self, img):
        _size(img, "Pad")
        return _pad(img, self._ltrb, self.fill, self.padding_mode)

    def __repr__(self):
        return f"Pad(padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode})"


class RandomCrop:
    """A size x size (or (h, w)) window at a random place, after padding the image by `padding`
    (as Pad) and, with pad_if_needed=True, padding a side shorter than the crop by the
    difference on both ends, as torchvision's.

    With size equal to the padded image's, the crop shifts the image by up to `padding` pixels
    each way, the distortion LeCun et al. (1998) trained LeNet-5 with. The offsets (top, then
    left) come from `generator` (a minifw.Generator), or, without one, from the DataLoader
    thread's generator or minifw's global one (see the module's docstring); a crop that fits
    exactly draws nothing."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant",
                 *, generator=None):
        self.size = _setup_size(size, "RandomCrop")
        self._ltrb = None if padding is None else _parse_padding(padding, "RandomCrop")
        _check_fill(fill, padding_mode, "RandomCrop")
        if generator is not None:
            _random._numpy_rng(generator)  # a TypeError now rather than at the first sample
        self.padding, self.pad_if_needed, self.fill = padding, bool(pad_if_needed), fill
        self.padding_mode, self.generator = padding_mode, generator

    @staticmethod
    def get_params(img, output_size, generator=None):
        """(top, left, height, width) of a random crop of output_size (h, w) from img."""
        height, width = _size(img, "RandomCrop")
        crop_h, crop_w = output_size
        if crop_h > height or crop_w > width:
            raise ValueError(f"RandomCrop: required crop size {(crop_h, crop_w)} is larger than the "
                             f"input image size {(height, width)} (after padding); pass "
                             f"pad_if_needed=True to pad it")
        if (crop_h, crop_w) == (height, width):
            return 0, 0, height, width
        rng = random_source(generator)
        top = int(rng.integers(0, height - crop_h + 1))
        left = int(rng.integers(0, width - crop_w + 1))
        return top, left, crop_h, crop_w

    def __call__(self, img):
        if self._ltrb is not None and any(self._ltrb):
            img = _pad(img, self._ltrb, self.fill, self.padding_mode)
        height, width = _size(img, "RandomCrop")
        crop_h, crop_w = self.size
        if self.pad_if_needed and width < crop_w:
            img = _pad(img, (crop_w - width, 0, crop_w - width, 0), self.fill, self.padding_mode)
        if self.pad_if_needed and height < crop_h:
            img = _pad(img, (0, crop_h - height, 0, crop_h - height), self.fill, self.padding_mode)
        return _crop(img, *self.get_params(img, self.size, self.generator))

    def __repr__(self):
        return f"RandomCrop(size={self.size}, padding={self.padding})"


class _RandomFlip:
    _axis = -1

    def __init__(self, p=0.5, *, generator=None):
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
            raise ValueError(f"{type(self).__name__}: p must be a probability in [0, 1], got {p!r}")
        if generator is not None:
            _random._numpy_rng(generator)
        self.p, self.generator = p, generator

    def __call__(self, img):
        _size(img, type(self).__name__)
        if random_source(self.generator).random() < self.p:  # one draw per image, as torchvision
            return _flip(img, self._axis)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class RandomHorizontalFlip(_RandomFlip):
    """Mirror the image left to right with probability p (from `generator`, as RandomCrop)."""
    _axis = -1


class RandomVerticalFlip(_RandomFlip):
    """Mirror the image top to bottom with probability p (from `generator`, as RandomCrop)."""
    _axis = -2


class Lambda:
    """Apply lambd(img)."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Lambda: lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return "Lambda()"


# ---- helpers of the augmentation transforms ------------------------------------------------------
def _check_probability(p, fn):
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
        raise ValueError(f"{fn}: p must be a probability in [0, 1], got {p!r}")
    return p


def _check_generator(generator):
    if generator is not None:
        _random._numpy_rng(generator)  # a TypeError now rather than at the first sample
    return generator


def _check_range(value, fn, name, low=None, positive=False):
    """A (min, max) pair of numbers with min <= max, within the stated bounds."""
    if (not isinstance(value, (tuple, list)) or len(value) != 2
            or any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in value)):
        raise TypeError(f"{fn}: {name} must be a sequence (min, max) of two numbers, got {value!r}")
    if value[0] > value[1]:
        raise ValueError(f"{fn}: {name} must be (min, max) with min <= max, got {tuple(value)}")
    if positive and value[0] <= 0:
        raise ValueError(f"{fn}: {name} must hold numbers > 0, got {tuple(value)}")
    if low is not None and value[0] < low:
        raise ValueError(f"{fn}: {name} must hold numbers >= {low}, got {tuple(value)}")
    return value


def _max_value(dtype, fn):
    """The value of full intensity: 1 for floats, the largest value for integers."""
    if dtype.kind == "f":
        return 1.0
    if dtype.kind in "iu":
        return float(np.iinfo(dtype).max)
    raise TypeError(f"{fn}: the image must hold numbers, got dtype {dtype}")


def _host_op(img, fn, op):
    """op(array) for a Tensor or array image, computed on the host (NumPy) and returned as the
    kind of image img is, on img's device."""
    array = devices.to_device(_array_of(img, fn), devices.CPU)
    return _like(img, op(array))


def _channels(array, fn, allowed=(1, 3)):
    """The number of channels of a (..., C, H, W) image, checked to be one of `allowed` (None:
    any)."""
    if array.ndim < 3:
        raise ValueError(f"{fn}: expected an image of shape (..., C, H, W), got shape "
                         f"{tuple(array.shape)}")
    if allowed is not None and array.shape[-3] not in allowed:
        raise ValueError(f"{fn}: expected an image of shape (..., C, H, W) with C in "
                         f"{' or '.join(map(str, allowed))}, got shape {tuple(array.shape)}")
    return array.shape[-3]


def _to_dtype(values, dtype):
    """Float results back to the image's dtype: integers are truncated, as torchvision's
    colour adjustments do (after clamping to the dtype's range)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = np.clip(values, info.min, info.max)
    return values.astype(dtype, copy=False)


def _blend(image, other, ratio, fn):
    """ratio * image + (1 - ratio) * other, clamped to [0, full intensity]."""
    bound = _max_value(image.dtype, fn)
    work = image.astype(np.float64 if image.dtype == np.float64 else np.float32, copy=False)
    return _to_dtype(np.clip(ratio * work + (1.0 - ratio) * other, 0, bound), image.dtype)


def _grayscale(array, fn):
    """ITU-R 601-2 luma of (..., 3, H, W) as (..., 1, H, W), in array's dtype (integers
    truncated); a 1-channel image is copied."""
    if _channels(array, fn) == 1:
        return array.copy()
    work = array.astype(np.float64 if array.dtype == np.float64 else np.float32, copy=False)
    luma = 0.2989 * work[..., 0:1, :, :] + 0.587 * work[..., 1:2, :, :] + 0.114 * work[..., 2:3, :, :]
    return _to_dtype(luma, array.dtype)


def _to_grayscale(img, channels, fn):
    """The luma of img as 1 channel, or repeated in 3 (an L or RGB PIL image)."""
    if _is_pil(img):
        from PIL import Image

        gray = img.convert("L")
        return gray if channels == 1 else Image.merge("RGB", (gray, gray, gray))

    def op(array):
        gray = _grayscale(array, fn)
        return np.repeat(gray, channels, axis=-3) if channels > 1 else gray
    return _host_op(img, fn, op)


def _float_work(array):
    return array.astype(np.float64 if array.dtype == np.float64 else np.float32, copy=False)


def _rgb_to_hsv(rgb):
    """(hue in [0, 1), saturation, value) of (..., 3, H, W) floats in [0, 1]."""
    r, g, b = rgb[..., 0, :, :], rgb[..., 1, :, :], rgb[..., 2, :, :]
    value, low = rgb.max(axis=-3), rgb.min(axis=-3)
    spread = value - low
    grey = spread == 0  # includes black; hue and saturation are then 0
    saturation = spread / np.where(grey, 1, value)
    divisor = np.where(grey, 1, spread)
    # the largest channel picks the sixth of the colour wheel, the other two the place in it
    sixths = np.where(value == r, (g - b) / divisor,
                      np.where(value == g, 2 + (b - r) / divisor, 4 + (r - g) / divisor))
    hue = np.where(grey, 0, (sixths / 6) % 1.0)
    return hue.astype(rgb.dtype), saturation, value


def _hsv_to_rgb(hue, saturation, value):
    sector = np.floor(hue * 6)
    frac = hue * 6 - sector
    sector = sector.astype(np.int64) % 6
    p = np.clip(value * (1 - saturation), 0, 1)
    q = np.clip(value * (1 - saturation * frac), 0, 1)
    t = np.clip(value * (1 - saturation * (1 - frac)), 0, 1)
    per_sector = [(value, t, p), (q, value, p), (p, value, t), (p, q, value), (t, p, value),
                  (value, p, q)]
    conditions = [sector == k for k in range(6)]
    channels = [np.select(conditions, [rgb[c] for rgb in per_sector]) for c in range(3)]
    return np.stack(channels, axis=-3).astype(value.dtype)


def _adjust_brightness(array, factor):
    return _blend(array, 0.0, factor, "adjust_brightness")


def _adjust_contrast(array, factor):
    gray = _grayscale(array, "adjust_contrast")
    mean = _float_work(gray).mean(axis=(-3, -2, -1), keepdims=True)
    return _blend(array, mean, factor, "adjust_contrast")


def _adjust_saturation(array, factor):
    if _channels(array, "adjust_saturation") == 1:
        return array
    return _blend(array, _float_work(_grayscale(array, "adjust_saturation")), factor,
                  "adjust_saturation")


def _adjust_hue(array, shift):
    if _channels(array, "adjust_hue") == 1:
        return array
    bound = _max_value(array.dtype, "adjust_hue")
    hue, saturation, value = _rgb_to_hsv(_float_work(array) / bound)
    rgb = _hsv_to_rgb((hue + shift) % 1.0, saturation, value)
    return _to_dtype(rgb * bound, array.dtype)


def _pil_adjust(img, kind, factor):
    """The colour adjustments on PIL images, done by Pillow as torchvision's are."""
    from PIL import Image, ImageEnhance

    if kind == "hue":
        if img.mode in ("L", "1", "I", "F"):
            return img
        h, s, v = img.convert("HSV").split()
        shifted = (np.asarray(h).astype(np.int64) + int(factor * 255)) % 256  # hue wraps around
        h = Image.fromarray(shifted.astype(np.uint8))
        return Image.merge("HSV", (h, s, v)).convert(img.mode)
    enhancer = {"brightness": ImageEnhance.Brightness, "contrast": ImageEnhance.Contrast,
                "saturation": ImageEnhance.Color}[kind]
    return enhancer(img).enhance(factor)


_ARRAY_ADJUST = {"brightness": _adjust_brightness, "contrast": _adjust_contrast,
                 "saturation": _adjust_saturation, "hue": _adjust_hue}


def _adjust(img, kind, factor):
    if _is_pil(img):
        return _pil_adjust(img, kind, factor)
    return _host_op(img, f"adjust_{kind}", lambda array: _ARRAY_ADJUST[kind](array, factor))


def _affine_inverse(center, angle, translate, scale, shear):
    """The 2 x 3 matrix taking an output point to the input point it samples.

    The forward map turns by `angle` degrees (clockwise on screen: y points down), shears by
    shear = (x, y) degrees and scales about `center`, then shifts by `translate`:
    p' = A (p - c) + c + t with A = scale * R(angle) @ Shear_y @ Shear_x; its inverse is
    p = A^-1 (p' - c - t) + c."""
    a, sx, sy = np.radians(angle), np.radians(shear[0]), np.radians(shear[1])
    rotation = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    shear_y = np.array([[1.0, 0.0], [-np.tan(sy), 1.0]])
    shear_x = np.array([[1.0, -np.tan(sx)], [0.0, 1.0]])
    inverse = np.linalg.inv(scale * rotation @ shear_y @ shear_x)
    center = np.asarray(center, dtype=np.float64)
    shift = center - inverse @ (center + np.asarray(translate, dtype=np.float64))
    return np.hstack([inverse, shift[:, None]])


def _fill_array(fill, array, fn):
    """fill as an array that broadcasts against array (..., C, H, W)."""
    values = np.asarray([fill] if isinstance(fill, numbers.Number) else list(fill), np.float64)
    if values.size == 1:
        return values.reshape(())
    channels = array.shape[-3] if array.ndim >= 3 else 1
    if values.size != channels:
        raise ValueError(f"{fn}: fill has {values.size} values for an image of {channels} "
                         f"channels (shape {tuple(array.shape)})")
    return values.reshape(-1, 1, 1)


def _warp(array, inverse, mode, fill, fn, out_size=None):
    """Resample array (..., H, W) through `inverse` (from _affine_inverse, in pixel offsets
    from the image's centre), as torch's grid_sample with align_corners=False: pixel k's centre
    is at k + 0.5. Nearest rounds to the closest pixel (half to even); bilinear mixes the 4
    around, reading zeros outside. With a fill, the fraction of each output pixel that came
    from outside the image is filled with it (nearest: the pixel is the fill), as
    torchvision's tensor transforms do. out_size (h, w), when given, is the output's size; its
    centre maps to the input's, as in torchvision's expanded rotations."""
    height, width = array.shape[-2:]
    out_height, out_width = (height, width) if out_size is None else out_size
    rows, cols = np.meshgrid(np.arange(out_height) + 0.5 - out_height / 2,
                             np.arange(out_width) + 0.5 - out_width / 2, indexing="ij")
    src_x = inverse[0, 0] * cols + inverse[0, 1] * rows + inverse[0, 2] + width / 2 - 0.5
    src_y = inverse[1, 0] * cols + inverse[1, 1] * rows + inverse[1, 2] + height / 2 - 0.5
    return _sample(array, src_x, src_y, mode, fill, fn)


def _sample(array, src_x, src_y, mode, fill, fn):
    """array (..., H, W) read at the points (src_x, src_y), two arrays of the output's shape
    (h, w) in input pixel indices (pixel k's centre at k), as _warp describes."""
    if mode not in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
        raise ValueError(f"{fn}: a tensor or array image can be transformed with nearest or "
                         f"bilinear interpolation, got {mode.value}")
    height, width = array.shape[-2:]
    out_height, out_width = src_x.shape
    work = _float_work(array)
    if mode is InterpolationMode.NEAREST:
        x, y = np.rint(src_x).astype(np.int64), np.rint(src_y).astype(np.int64)
        taps = [(y, x, np.ones_like(src_x))]
    else:
        x0, y0 = np.floor(src_x).astype(np.int64), np.floor(src_y).astype(np.int64)
        fx, fy = src_x - x0, src_y - y0
        taps = [(y0, x0, (1 - fx) * (1 - fy)), (y0, x0 + 1, fx * (1 - fy)),
                (y0 + 1, x0, (1 - fx) * fy), (y0 + 1, x0 + 1, fx * fy)]
    out = np.zeros(work.shape[:-2] + (out_height, out_width), work.dtype)
    coverage = np.zeros((out_height, out_width))
    for y, x, weight in taps:
        inside = (y >= 0) & (y < height) & (x >= 0) & (x < width)
        weight = np.where(inside, weight, 0.0)
        out += work[..., np.clip(y, 0, height - 1), np.clip(x, 0, width - 1)] * weight.astype(work.dtype)
        coverage += weight
    if fill is not None:
        fill_values = _fill_array(fill, array, fn).astype(work.dtype)
        if mode is InterpolationMode.NEAREST:
            out = np.where(coverage < 0.5, fill_values, out)
        else:
            coverage = coverage.astype(work.dtype)
            out = out * coverage + (1 - coverage) * fill_values
    if array.dtype.kind in "iu":  # as torchvision: round back to the integer dtype
        out = out.round()
    return _to_dtype(out, array.dtype) if array.dtype.kind in "iu" else out.astype(array.dtype)


def _pil_fill_for_warp(img, fill, fn):
    if fill is None:
        return None
    return _pil_fill(img, fill, fn)


def _check_warp_interpolation(interpolation, fn):
    mode = _interpolation_mode(interpolation, fn)
    if mode not in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
        raise ValueError(f"{fn}: interpolation must be nearest or bilinear (bicubic for PIL images "
                         f"only), got {mode.value}")
    return mode


def _check_warp_fill(fill, fn):
    if fill is None:
        return
    if not (isinstance(fill, numbers.Number) and not isinstance(fill, bool)
            or isinstance(fill, (tuple, list)) and fill
            and all(isinstance(f, numbers.Number) for f in fill)):
        raise TypeError(f"{fn}: fill must be a number or a sequence of numbers (one per channel), "
                        f"got {fill!r}")


def _affine(img, angle, translate, scale, shear, interpolation, fill, center, fn):
    """The affine transform of _affine_inverse applied to an image; `center` is a point (x, y)
    in pixels, None for the image's centre."""
    height, width = _size(img, fn)
    if _is_pil(img):
        pivot = (width * 0.5, height * 0.5) if center is None else center
        inverse = _affine_inverse(pivot, angle, translate, scale, shear)
        from PIL import Image

        return img.transform((width, height), Image.Transform.AFFINE,
                             tuple(inverse.reshape(-1)), _PIL_FILTERS[interpolation],
                             fillcolor=_pil_fill_for_warp(img, fill, fn))
    offset = (0.0, 0.0) if center is None else (center[0] - width * 0.5, center[1] - height * 0.5)
    inverse = _affine_inverse(offset, angle, translate, scale, shear)
    if interpolation is InterpolationMode.BICUBIC:
        raise ValueError(f"{fn}: a tensor or array image can be transformed with nearest or "
                         f"bilinear interpolation, got bicubic")
    return _host_op(img, fn, lambda array: _warp(array, inverse, interpolation, fill, fn))


def _setup_degrees(degrees, fn, name="degrees"):
    """[-d, d] from a number d >= 0, or [min, max] from a pair, as floats."""
    if isinstance(degrees, numbers.Real) and not isinstance(degrees, bool):
        if degrees < 0:
            raise ValueError(f"{fn}: {name} as a single number must be >= 0, got {degrees!r}")
        return [float(-degrees), float(degrees)]
    _check_range(degrees, fn, name)
    return [float(d) for d in degrees]


def _expanded_size(inverse, height, width):
    """(h, w) of a rotation's output with expand=True, as torchvision computes it: the input's
    corners, taken as offsets from its centre, through the inverse matrix in float32, shifted
    by half the input's size (Pillow's convention, which gives a 6 x 7 image turned by 90
    degrees a 7 x 8 output), then the ceiling of the largest minus the floor of the smallest,
    after truncating to 1e-4 so that a rounding error of 1e-15 does not add a pixel."""
    half = np.array([0.5 * width, 0.5 * height], np.float32)
    corners = np.array([[-half[0], -half[1], 1.0], [-half[0], half[1], 1.0],
                        [half[0], half[1], 1.0], [half[0], -half[1], 1.0]], np.float32)
    points = corners @ inverse.astype(np.float32).T
    tol = np.float32(1e-4)
    high = np.ceil(np.trunc((points.max(axis=0) + half) / tol) * tol)
    low = np.floor(np.trunc((points.min(axis=0) + half) / tol) * tol)
    width_out, height_out = (high - low).astype(np.int64)
    return int(height_out), int(width_out)


def _rotate(img, angle, interpolation, expand, center, fill, fn):
    """Turn img counter-clockwise by `angle` degrees about `center` (x, y) in pixels (None: the
    image's centre), as torchvision's F.rotate."""
    if _is_pil(img):
        return img.rotate(angle, _PIL_FILTERS[interpolation], expand, center,
                          fillcolor=_pil_fill_for_warp(img, fill, fn))
    if not expand:
        return _affine(img, -angle, (0.0, 0.0), 1.0, (0.0, 0.0), interpolation, fill, center, fn)
    height, width = _size(img, fn)
    offset = (0.0, 0.0) if center is None else (center[0] - width * 0.5, center[1] - height * 0.5)
    inverse = _affine_inverse(offset, -angle, (0.0, 0.0), 1.0, (0.0, 0.0))
    if interpolation is InterpolationMode.BICUBIC:
        raise ValueError(f"{fn}: a tensor or array image can be transformed with nearest or "
                         f"bilinear interpolation, got bicubic")
    out_size = _expanded_size(inverse, height, width)
    return _host_op(img, fn, lambda array: _warp(array, inverse, interpolation, fill, fn, out_size))


def _perspective_coefficients(startpoints, endpoints, fn):
    """The 8 coefficients (a, b, c, d, e, f, g, h) of the projective map taking each end point
    (x, y) to its start point: x_start = (a x + b y + c) / (g x + h y + 1), y_start = (d x + e y
    + f) / (g x + h y + 1), the 8 linear equations of the 4 pairs solved in float64 by least
    squares and rounded to float32, as torchvision's (and as Pillow's PERSPECTIVE takes them)."""
    try:
        start, end = (np.asarray(points, dtype=np.float64) for points in (startpoints, endpoints))
    except (TypeError, ValueError):
        start = end = None
    if start is None or start.shape != (4, 2) or end.shape != (4, 2):
        raise ValueError(f"{fn}: startpoints and endpoints must be four corners [x, y] each, got "
                         f"{startpoints!r} and {endpoints!r}")
    ones, zeros = np.ones(4), np.zeros(4)
    x, y = end[:, 0], end[:, 1]
    rows_x = np.stack([x, y, ones, zeros, zeros, zeros, -start[:, 0] * x, -start[:, 0] * y], axis=1)
    rows_y = np.stack([zeros, zeros, zeros, x, y, ones, -start[:, 1] * x, -start[:, 1] * y], axis=1)
    system = np.stack([rows_x, rows_y], axis=1).reshape(8, 8)  # equations in the order x0, y0, x1...
    solution = np.linalg.lstsq(system, start.reshape(8), rcond=None)[0]
    return [float(c) for c in solution.astype(np.float32)]


def _perspective(img, coefficients, interpolation, fill, fn):
    """img through the projective map of _perspective_coefficients, which takes each output
    pixel's centre (x + 0.5, y + 0.5) to the point of the input it samples (Pillow's PERSPECTIVE
    transform on PIL images)."""
    if _is_pil(img):
        from PIL import Image

        return img.transform(img.size, Image.Transform.PERSPECTIVE, tuple(coefficients),
                             _PIL_FILTERS[interpolation], fillcolor=_pil_fill_for_warp(img, fill, fn))
    a, b, c, d, e, f, g, h = coefficients

    def op(array):
        height, width = array.shape[-2:]
        y, x = np.meshgrid(np.arange(height) + 0.5, np.arange(width) + 0.5, indexing="ij")
        denominator = g * x + h * y + 1
        src_x = (a * x + b * y + c) / denominator - 0.5
        src_y = (d * x + e * y + f) / denominator - 0.5
        return _sample(array, src_x, src_y, interpolation, fill, fn)
    return _host_op(img, fn, op)


def _elastic(img, displacement, interpolation, fill, fn):
    """img resampled at each pixel moved by `displacement` (1, H, W, 2), (dx, dy) in grid_sample's
    units (2 / W and 2 / H per pixel), as torchvision's elastic_transform; PIL images go through
    their arrays."""
    height, width = _size(img, fn)
    moves = devices.to_device(displacement._data if isinstance(displacement, Tensor) else displacement,
                              devices.CPU)
    if tuple(moves.shape) != (1, height, width, 2):
        raise ValueError(f"{fn}: displacement should have shape (1, H, W, 2) = {(1, height, width, 2)} "
                         f"for an image of (height, width) {(height, width)}, got shape {tuple(moves.shape)}")
    rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    src_x = cols + moves[0, :, :, 0].astype(np.float64) * (width / 2)
    src_y = rows + moves[0, :, :, 1].astype(np.float64) * (height / 2)

    def op(array):
        return _sample(array, src_x, src_y, interpolation, fill, fn)
    if _is_pil(img):
        return _on_pil_array(img, op)
    return _host_op(img, fn, op)


# ---- the operations of the automatic augmentations (torchvision.transforms.functional's) -------
# On tensors and arrays they act on (..., C, H, W) images of 1 or 3 channels, float in [0, 1] or
# integers up to their dtype's largest value. posterize and equalize are defined on 8-bit values:
# torchvision takes uint8 tensors only; minifw's Tensors hold no uint8, so minifw takes uint8
# arrays as torchvision takes uint8 tensors, and float images as torchvision.transforms.v2 does
# (posterize: floor(x * 2**bits) / 2**bits; equalize: through uint8 and back). PIL images go to
# Pillow's ImageOps and ImageEnhance, as torchvision's do.
def _check_uint8_or_float(array, fn):
    if array.dtype != np.uint8 and array.dtype.kind != "f":
        raise TypeError(f"{fn}: the image must hold uint8 or floating-point values, got dtype "
                        f"{array.dtype}")


def _sharpness_array(array, factor):
    """Blend with the image smoothed by PIL's SMOOTH filter (3 x 3, centre 5, the rest 1, over
    13), which leaves the border pixels alone; images under 3 x 3 are returned as they are."""
    _channels(array, "adjust_sharpness")
    if array.shape[-1] <= 2 or array.shape[-2] <= 2:
        return array
    work = _float_work(array) if array.dtype.kind == "f" else array.astype(np.float32)
    height, width = array.shape[-2:]
    window = sum(work[..., dy:dy + height - 2, dx:dx + width - 2]
                 for dy in range(3) for dx in range(3))
    smooth = (window + 4 * work[..., 1:-1, 1:-1]) / 13
    if array.dtype.kind in "iu":  # as torchvision: the smoothed image is rounded to the dtype
        smooth = smooth.round()
    degenerate = work.copy()
    degenerate[..., 1:-1, 1:-1] = smooth
    return _blend(array, degenerate, factor, "adjust_sharpness")


def _posterize_array(array, bits):
    _channels(array, "posterize")
    _check_uint8_or_float(array, "posterize")
    if array.dtype == np.uint8:
        return array & np.uint8((0xFF << (8 - bits)) & 0xFF)  # keep the top `bits` bits
    levels = 1 << bits
    return (np.clip(np.floor(array * levels), 0, levels - 1) / levels).astype(array.dtype)


def _invert_array(array):
    _channels(array, "invert")
    bound = _max_value(array.dtype, "invert")
    return (array.dtype.type(bound) - array).astype(array.dtype)


def _solarize_array(array, threshold):
    _channels(array, "solarize")
    bound = _max_value(array.dtype, "solarize")
    if threshold > bound:
        raise ValueError(f"solarize: threshold must be at most {bound:g}, the largest value of an "
                         f"image of dtype {array.dtype}, got {threshold!r}")
    return np.where(array >= threshold, _invert_array(array), array)


def _autocontrast_array(array):
    """Stretch each channel linearly so that its darkest pixel becomes 0 and its brightest full
    intensity; a channel of one value is left alone."""
    _channels(array, "autocontrast")
    bound = _max_value(array.dtype, "autocontrast")
    work = _float_work(array) if array.dtype.kind == "f" else array.astype(np.float32)
    low = work.min(axis=(-2, -1), keepdims=True)
    span = work.max(axis=(-2, -1), keepdims=True) - low
    flat = span == 0
    scale = np.where(flat, 1, bound / np.where(flat, 1, span))
    out = np.clip((work - np.where(flat, 0, low)) * scale, 0, bound)
    return _to_dtype(out, array.dtype)


def _equalize_channel(channel):
    """torchvision's equalize of one uint8 channel: the cumulative histogram as a lookup table,
    in steps of (pixels not of the last value present) // 255, shifted by one entry."""
    histogram = np.bincount(channel.reshape(-1), minlength=256)
    present = histogram[histogram != 0]
    step = int(present[:-1].sum()) // 255
    if step == 0:
        return channel
    lut = (np.cumsum(histogram) + step // 2) // step
    lut = np.clip(np.concatenate([[0], lut[:-1]]), 0, 255)
    return lut[channel].astype(np.uint8)


def _equalize_array(array):
    _channels(array, "equalize")
    _check_uint8_or_float(array, "equalize")
    if array.dtype != np.uint8:  # as torchvision.transforms.v2: to uint8 (truncating) and back
        as_uint8 = np.clip(array * (255 + 1.0 - 1e-3), 0, 255).astype(np.uint8)
        return (_equalize_array(as_uint8) / np.float32(255)).astype(array.dtype)
    channels = array.reshape((-1,) + array.shape[-2:])
    return np.stack([_equalize_channel(c) for c in channels]).reshape(array.shape)


def _pil_op(img, op, *args):
    from PIL import ImageEnhance, ImageOps

    if op == "sharpness":
        return ImageEnhance.Sharpness(img).enhance(*args)
    return getattr(ImageOps, op)(img, *args)


_ARRAY_OPS = {"sharpness": _sharpness_array, "posterize": _posterize_array,
              "solarize": _solarize_array, "autocontrast": _autocontrast_array,
              "equalize": _equalize_array, "invert": _invert_array}


def _image_op(img, op, *args):
    """One of _ARRAY_OPS applied to any kind of image."""
    if _is_pil(img):
        return _pil_op(img, op, *args)
    fn = "adjust_sharpness" if op == "sharpness" else op
    return _host_op(img, fn, lambda array: _ARRAY_OPS[op](array, *args))


# ---- the augmentation transforms -----------------------------------------------------------------
class RandomResizedCrop:
    """A crop of random area (a fraction `scale` of the image's) and aspect ratio (width /
    height, drawn log-uniformly from `ratio`), resized to `size` as Resize does (antialiased
    by default, as torchvision's tensors). Ten draws look for a crop that fits; after that the
    largest central crop with its aspect ratio within `ratio` is taken."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True, *, generator=None):
        self.size = _setup_size(size, "RandomResizedCrop")
        self.scale = tuple(_check_range(scale, "RandomResizedCrop", "scale", positive=True))
        self.ratio = tuple(_check_range(ratio, "RandomResizedCrop", "ratio", positive=True))
        self.interpolation = _interpolation_mode(interpolation, "RandomResizedCrop")
        self.antialias, self.generator = antialias, _check_generator(generator)

    @staticmethod
    def get_params(img, scale, ratio, generator=None):
        """(top, left, height, width) of a random crop of img."""
        height, width = _size(img, "RandomResizedCrop")
        area = height * width
        rng = random_source(generator)
        log_low, log_high = np.log(ratio[0]), np.log(ratio[1])
        for _ in range(10):
            target_area = area * rng.uniform(scale[0], scale[1])
            aspect = np.exp(rng.uniform(log_low, log_high))
            w = int(round(np.sqrt(target_area * aspect)))
            h = int(round(np.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                top = int(rng.integers(0, height - h + 1))
                left = int(rng.integers(0, width - w + 1))
                return top, left, h, w
        aspect = width / height
        if aspect < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif aspect > max(ratio):
            w, h = int(round(height * max(ratio))), height
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def __call__(self, img):
        top, left, h, w = self.get_params(img, self.scale, self.ratio, self.generator)
        img = _crop(img, top, left, h, w)
        if _is_pil(img):
            return img.resize((self.size[1], self.size[0]), _PIL_FILTERS[self.interpolation])
        array = _array_of(img, "RandomResizedCrop")
        return _like(img, _resize_array(array, self.size, self.interpolation, bool(self.antialias)))

    def __repr__(self):
        return (f"RandomResizedCrop(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, "
                f"interpolation={self.interpolation.value}, antialias={self.antialias})")


class ColorJitter:
    """Change brightness, contrast, saturation and hue by random factors, in a random order.

    brightness, contrast, saturation: a number b >= 0 draws the factor from [max(0, 1 - b),
    1 + b], a pair (min, max) from that range (factor 1 keeps the image). hue: h in [0, 0.5]
    draws a shift of the hue from [-h, h], a pair from that range (within [-0.5, 0.5]); 0 keeps
    it. Tensors and arrays are floats in [0, 1] or integers up to their dtype's maximum
    (uint8: 255), channels first with 1 or 3 channels; PIL images are adjusted by Pillow."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0, *, generator=None):
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_at_zero=False)
        self.generator = _check_generator(generator)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_at_zero=True):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            if value < 0:
                raise ValueError(f"ColorJitter: {name} as a single number must be >= 0, got {value!r}")
            value = [center - float(value), center + float(value)]
            if clip_at_zero:
                value[0] = max(value[0], 0.0)
        else:
            value = [float(v) for v in _check_range(value, "ColorJitter", name)]
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"ColorJitter: {name} must lie within [{bound[0]}, {bound[1]}], got "
                             f"{tuple(value)}")
        return None if value[0] == value[1] == center else tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue, generator=None):
        """(order of the four adjustments, brightness, contrast, saturation and hue factors,
        each None where it is not applied)."""
        rng = random_source(generator)
        order = [int(i) for i in rng.permutation(4)]
        factors = [None if r is None else float(rng.uniform(r[0], r[1]))
                   for r in (brightness, contrast, saturation, hue)]
        return (order, *factors)

    def __call__(self, img):
        order, *factors = self.get_params(self.brightness, self.contrast, self.saturation,
                                          self.hue, self.generator)
        kinds = ("brightness", "contrast", "saturation", "hue")
        for index in order:
            if factors[index] is not None:
                img = _adjust(img, kinds[index], factors[index])
        return img

    def __repr__(self):
        return (f"ColorJitter(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


class Grayscale:
    """The image's luma (0.2989 R + 0.587 G + 0.114 B), as 1 channel or repeated in 3.
    Tensors and arrays (..., 1 or 3, H, W) keep their dtype (integers truncated); PIL images
    are converted by Pillow (mode L, or RGB for 3 channels)."""

    def __init__(self, num_output_channels=1):
        if num_output_channels not in (1, 3) or isinstance(num_output_channels, bool):
            raise ValueError(f"Grayscale: num_output_channels must be 1 or 3, got "
                             f"{num_output_channels!r}")
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        return _to_grayscale(img, self.num_output_channels, "Grayscale")

    def __repr__(self):
        return f"Grayscale(num_output_channels={self.num_output_channels})"


class RandomGrayscale:
    """Grayscale with probability p, keeping the number of channels."""

    def __init__(self, p=0.1, *, generator=None):
        self.p = _check_probability(p, "RandomGrayscale")
        self.generator = _check_generator(generator)

    def __call__(self, img):
        if _is_pil(img):
            channels = 1 if img.mode == "L" else 3
        else:
            channels = _channels(_array_of(img, "RandomGrayscale"), "RandomGrayscale")
        if random_source(self.generator).random() < self.p:
            return _to_grayscale(img, channels, "RandomGrayscale")
        return img

    def __repr__(self):
        return f"RandomGrayscale(p={self.p})"


class RandomRotation:
    """Turn the image counter-clockwise by an angle drawn uniformly from `degrees` (d: [-d, d],
    or a pair (min, max)) about `center` (x, y) in pixels (the image's centre by default).
    The output keeps the input's size (expand=False) or grows to hold the whole turned image
    (expand=True, sized as torchvision's: see _expanded_size); pixels from outside the input get
    `fill` (a number, or one per channel). Tensors and arrays: nearest or bilinear; PIL images
    are rotated by Pillow (also bicubic)."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
                 fill=0, *, generator=None):
        self.degrees = _setup_degrees(degrees, "RandomRotation")
        self.interpolation = _check_warp_interpolation(interpolation, "RandomRotation")
        if center is not None and (not isinstance(center, (tuple, list)) or len(center) != 2
                                   or not all(isinstance(c, numbers.Real) for c in center)):
            raise ValueError(f"RandomRotation: center must be a point (x, y), got {center!r}")
        _check_warp_fill(fill, "RandomRotation")
        self.expand, self.center, self.fill = bool(expand), center, fill
        self.generator = _check_generator(generator)

    @staticmethod
    def get_params(degrees, generator=None):
        """The angle, drawn uniformly from degrees (min, max)."""
        return float(random_source(generator).uniform(degrees[0], degrees[1]))

    def __call__(self, img):
        _size(img, "RandomRotation")
        angle = self.get_params(self.degrees, self.generator)
        return _rotate(img, angle, self.interpolation, self.expand, self.center, self.fill,
                       "RandomRotation")

    def __repr__(self):
        text = (f"RandomRotation(degrees={self.degrees}, interpolation={self.interpolation.value}, "
                f"expand={self.expand}")
        if self.center is not None:
            text += f", center={self.center}"
        if self.fill is not None:
            text += f", fill={self.fill}"
        return text + ")"


class RandomAffine:
    """A random affine transform about the image's centre (or `center`): a turn by an angle
    from `degrees` (clockwise for positive angles), a shift by up to translate = (a, b) times
    the width and height (rounded to whole pixels), a scale from scale = (min, max), and a
    shear: s draws an x-shear angle from [-s, s], (min, max) from that range, (xmin, xmax,
    ymin, ymax) both. Pixels from outside get `fill`. Tensors and arrays: nearest or bilinear;
    PIL images are transformed by Pillow."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None, *, generator=None):
        fn = "RandomAffine"
        self.degrees = _setup_degrees(degrees, fn)
        if translate is not None:
            if (not isinstance(translate, (tuple, list)) or len(translate) != 2
                    or not all(isinstance(t, numbers.Real) and 0 <= t <= 1 for t in translate)):
                raise ValueError(f"{fn}: translate must be a pair (a, b) of fractions in [0, 1], "
                                 f"got {translate!r}")
        if scale is not None:
            _check_range(scale, fn, "scale", positive=True)
        if shear is not None:
            if isinstance(shear, numbers.Real) and not isinstance(shear, bool):
                shear = _setup_degrees(shear, fn, "shear")
            elif isinstance(shear, (tuple, list)) and len(shear) == 4:
                shear = _setup_degrees(shear[:2], fn, "shear") + _setup_degrees(shear[2:], fn, "shear")
            else:
                shear = _setup_degrees(shear, fn, "shear")
        self.interpolation = _check_warp_interpolation(interpolation, fn)
        _check_warp_fill(fill, fn)
        if center is not None and (not isinstance(center, (tuple, list)) or len(center) != 2):
            raise ValueError(f"{fn}: center must be a point (x, y), got {center!r}")
        self.translate, self.scale, self.shear = translate, scale, shear
        self.fill, self.center = fill, center
        self.generator = _check_generator(generator)

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size, generator=None):
        """(angle, (tx, ty) in whole pixels, scale, (shear x, shear y)); img_size is (width,
        height)."""
        rng = random_source(generator)
        angle = float(rng.uniform(degrees[0], degrees[1]))
        if translate is not None:
            max_dx, max_dy = translate[0] * img_size[0], translate[1] * img_size[1]
            shift = (int(round(rng.uniform(-max_dx, max_dx))), int(round(rng.uniform(-max_dy, max_dy))))
        else:
            shift = (0, 0)
        scale = 1.0 if scale_ranges is None else float(rng.uniform(scale_ranges[0], scale_ranges[1]))
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = float(rng.uniform(shears[0], shears[1]))
            if len(shears) == 4:
                shear_y = float(rng.uniform(shears[2], shears[3]))
        return angle, shift, scale, (shear_x, shear_y)

    def __call__(self, img):
        height, width = _size(img, "RandomAffine")
        angle, shift, scale, shear = self.get_params(self.degrees, self.translate, self.scale,
                                                     self.shear, (width, height), self.generator)
        return _affine(img, angle, shift, scale, shear, self.interpolation, self.fill,
                       self.center, "RandomAffine")

    def __repr__(self):
        text = f"RandomAffine(degrees={self.degrees}"
        for name in ("translate", "scale", "shear"):
            if getattr(self, name) is not None:
                text += f", {name}={getattr(self, name)}"
        if self.interpolation is not InterpolationMode.NEAREST:
            text += f", interpolation={self.interpolation.value}"
        if self.fill != 0:
            text += f", fill={self.fill}"
        if self.center is not None:
            text += f", center={self.center}"
        return text + ")"


class RandomPerspective:
    """With probability p, a perspective distortion: the image's corners move inwards by up to
    distortion_scale (in [0, 1]) times half the width and height, each corner's shift drawn
    uniformly in whole pixels, and the image is warped so that its corners land there (see
    perspective). Pixels from outside get `fill`. Tensors and arrays: nearest or bilinear;
    PIL images are transformed by Pillow (also bicubic)."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR, fill=0, *,
                 generator=None):
        fn = "RandomPerspective"
        if (isinstance(distortion_scale, bool) or not isinstance(distortion_scale, numbers.Real)
                or not 0 <= distortion_scale <= 1):
            raise ValueError(f"{fn}: distortion_scale must be a number in [0, 1], got {distortion_scale!r}")
        self.distortion_scale, self.p = distortion_scale, _check_probability(p, fn)
        self.interpolation = _check_warp_interpolation(interpolation, fn)
        _check_warp_fill(fill, fn)
        self.fill = 0 if fill is None else fill
        self.generator = _check_generator(generator)

    @staticmethod
    def get_params(width, height, distortion_scale, generator=None):
        """(startpoints, endpoints): the image's corners (top-left, top-right, bottom-right,
        bottom-left) as [x, y], and where they go, each moved inwards by a whole number of pixels
        up to distortion_scale times half the width (x) and half the height (y)."""
        rng = random_source(generator)
        dx, dy = int(distortion_scale * (width // 2)), int(distortion_scale * (height // 2))

        def near(low_end, size, reach):
            # from the low end [0, reach] or from the high end [size - reach - 1, size - 1]
            low = 0 if low_end else size - reach - 1
            return int(rng.integers(low, low + reach + 1))
        top_left = [near(True, width, dx), near(True, height, dy)]
        top_right = [near(False, width, dx), near(True, height, dy)]
        bottom_right = [near(False, width, dx), near(False, height, dy)]
        bottom_left = [near(True, width, dx), near(False, height, dy)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [top_left, top_right, bottom_right, bottom_left]

    def __call__(self, img):
        fn = "RandomPerspective"
        height, width = _size(img, fn)
        if random_source(self.generator).random() >= self.p:
            return img
        startpoints, endpoints = self.get_params(width, height, self.distortion_scale, self.generator)
        coefficients = _perspective_coefficients(startpoints, endpoints, fn)
        return _perspective(img, coefficients, self.interpolation, self.fill, fn)

    def __repr__(self):
        return f"RandomPerspective(p={self.p})"


class ElasticTransform:
    """Elastic distortion (Simard et al., 2003): every pixel moves by a random displacement,
    uniform noise in [-1, 1] smoothed by a Gaussian of standard deviation sigma (a number, or
    (x, y)) and scaled by alpha (a number, or (x, y)) relative to the image's size, and the image is
    resampled there (see elastic_transform). Tensors and arrays: nearest or bilinear; PIL images
    through their arrays. `fill` fills what comes from outside the image."""

    def __init__(self, alpha=50.0, sigma=5.0, interpolation=InterpolationMode.BILINEAR, fill=0, *,
                 generator=None):
        fn = "ElasticTransform"
        self.alpha = self._pair(alpha, fn, "alpha", low=None)
        self.sigma = self._pair(sigma, fn, "sigma", low=0)
        self.interpolation = _check_warp_interpolation(interpolation, fn)
        _check_warp_fill(fill, fn)
        if fill is None:
            raise TypeError(f"{fn}: fill must be a number or a sequence of numbers (one per channel), "
                            f"got None")
        # a list, as torchvision keeps it: what came from outside is blended with it
        self.fill = [float(fill)] if isinstance(fill, numbers.Number) else [float(f) for f in fill]
        self.generator = _check_generator(generator)

    @staticmethod
    def _pair(value, fn, name, low):
        """[x, y] from a number or a sequence of 1 or 2 numbers, each >= low (None: any)."""
        values = [value] if isinstance(value, numbers.Real) and not isinstance(value, bool) else value
        if (not isinstance(values, (tuple, list)) or len(values) not in (1, 2)
                or any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in values)):
            raise TypeError(f"{fn}: {name} must be a number or a sequence of 1 or 2 numbers, got {value!r}")
        if low is not None and min(values) < low:
            raise ValueError(f"{fn}: {name} must hold numbers >= {low}, got {value!r}")
        return [float(values[0]), float(values[-1])]

    @staticmethod
    def get_params(alpha, sigma, size, generator=None):
        """The displacement, a float32 Tensor (1, H, W, 2) for size (H, W): for each of x and y,
        uniform noise in [-1, 1], blurred by a Gaussian of int(8 sigma + 1) (made odd) taps and
        standard deviations sigma (x, y) unless that axis's sigma is 0, times alpha over the width
        (x) or the height (y)."""
        rng = random_source(generator)
        height, width = size
        fields = []
        for axis, extent in ((0, width), (1, height)):
            field = rng.random((1, 1, height, width), dtype=np.float32) * 2 - 1
            if sigma[axis] > 0:
                taps = int(8 * sigma[axis] + 1)
                taps += 1 - taps % 2
                field = _blur_array(field, (taps, taps), tuple(sigma))
            fields.append(field[0, 0] * np.float32(alpha[axis]) / np.float32(extent))
        return Tensor._make(np.ascontiguousarray(np.stack(fields, axis=-1)[None]))

    def __call__(self, img):
        fn = "ElasticTransform"
        height, width = _size(img, fn)
        displacement = self.get_params(self.alpha, self.sigma, (height, width), self.generator)
        return _elastic(img, displacement, self.interpolation, self.fill, fn)

    def __repr__(self):
        return (f"ElasticTransform(alpha={self.alpha}, sigma={self.sigma}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class GaussianBlur:
    """Blur with a Gaussian of standard deviation drawn uniformly from sigma = (min, max) (a
    number: that one), kernel_size (x, y) odd taps, reflecting the image at its borders.
    PIL images are blurred as arrays and converted back."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0), *, generator=None):
        size = _setup_size(kernel_size, "GaussianBlur")
        if any(k % 2 == 0 for k in size):
            raise ValueError(f"GaussianBlur: kernel_size must hold odd positive ints, got "
                             f"{kernel_size!r}")
        self.kernel_size = size
        if isinstance(sigma, numbers.Real) and not isinstance(sigma, bool):
            if sigma <= 0:
                raise ValueError(f"GaussianBlur: sigma as a single number must be > 0, got {sigma!r}")
            sigma = (float(sigma), float(sigma))
        else:
            _check_range(sigma, "GaussianBlur", "sigma", positive=True)
        self.sigma, self.generator = sigma, _check_generator(generator)

    @staticmethod
    def get_params(sigma_min, sigma_max, generator=None):
        return float(random_source(generator).uniform(sigma_min, sigma_max))

    def __call__(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1], self.generator)
        return _gaussian_blur(img, self.kernel_size, (sigma, sigma), "GaussianBlur")

    def __repr__(self):
        return f"GaussianBlur(kernel_size={self.kernel_size}, sigma={self.sigma})"


def _gaussian_kernel(size, sigma):
    offsets = np.arange(size) - (size - 1) / 2
    weights = np.exp(-0.5 * (offsets / sigma) ** 2)
    return weights / weights.sum()


def _blur_array(array, kernel_size, sigma):
    """array (..., H, W) convolved with a Gaussian of kernel_size (x, y) taps and standard
    deviations sigma (x, y), the image reflected at its borders; integers are rounded back."""
    (kx, ky), (sigma_x, sigma_y) = kernel_size, sigma
    work = _float_work(array)
    widths = ((0, 0),) * (array.ndim - 2) + ((ky // 2, ky // 2), (kx // 2, kx // 2))
    padded = np.pad(work, widths, mode="reflect")
    height, width = array.shape[-2:]
    rows = sum(w * padded[..., i:i + height, :] for i, w in enumerate(_gaussian_kernel(ky, sigma_y)))
    out = sum(w * rows[..., :, i:i + width] for i, w in enumerate(_gaussian_kernel(kx, sigma_x)))
    if array.dtype.kind in "iu":
        return _to_dtype(out.round(), array.dtype)
    return out.astype(array.dtype)


def _on_pil_array(img, op):
    """op applied to a PIL image's values as a (C, H, W) array, made back into an image of its
    mode, as torchvision does through pil_to_tensor and to_pil_image."""
    array = np.asarray(img)
    chw = array[None] if array.ndim == 2 else array.transpose(2, 0, 1)
    out = op(chw)
    return _pil_from_array(out[0] if array.ndim == 2 else out.transpose(1, 2, 0), img)


def _gaussian_blur(img, kernel_size, sigma, fn):
    if _is_pil(img):
        return _on_pil_array(img, lambda chw: _blur_array(chw, kernel_size, sigma))
    return _host_op(img, fn, lambda array: _blur_array(array, kernel_size, sigma))


class RandomErasing:
    """With probability p, overwrite a random rectangle of a tensor or array image (..., C, H, W)
    (after ToTensor: PIL images are refused) whose area is a fraction `scale` of the image's and
    aspect ratio (height / width) drawn log-uniformly from `ratio`. value: a number, one per
    channel, or "random" (standard normal noise). Ten draws look for a rectangle that fits;
    if none does the image is left as it is. inplace=True writes into the input."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False, *,
                 generator=None):
        self.p = _check_probability(p, "RandomErasing")
        _check_range(scale, "RandomErasing", "scale", low=0)
        if scale[1] > 1:
            raise ValueError(f"RandomErasing: scale must lie within [0, 1], got {tuple(scale)}")
        _check_range(ratio, "RandomErasing", "ratio", positive=True)
        if isinstance(value, str):
            if value != "random":
                raise ValueError(f"RandomErasing: value as a string must be 'random', got {value!r}")
        elif not (isinstance(value, numbers.Real) and not isinstance(value, bool)
                  or isinstance(value, (tuple, list)) and value
                  and all(isinstance(v, numbers.Real) for v in value)):
            raise TypeError(f"RandomErasing: value must be a number, a sequence of numbers (one per "
                            f"channel) or 'random', got {value!r}")
        self.scale, self.ratio, self.value, self.inplace = scale, ratio, value, bool(inplace)
        self.generator = _check_generator(generator)

    @staticmethod
    def get_params(img, scale, ratio, value=None, generator=None):
        """(top, left, height, width, values): the rectangle and what goes in it (an array of
        shape (C, h, w), or of one value per channel (C, 1, 1)); value None draws noise. The
        whole image and the image itself when no rectangle fits."""
        array = _array_of(img, "RandomErasing")
        channels = _channels(array, "RandomErasing", allowed=None)
        height, width = array.shape[-2:]
        rng = random_source(generator)
        log_low, log_high = np.log(ratio[0]), np.log(ratio[1])
        for _ in range(10):
            area = height * width * rng.uniform(scale[0], scale[1])
            aspect = np.exp(rng.uniform(log_low, log_high))
            h, w = int(round(np.sqrt(area * aspect))), int(round(np.sqrt(area / aspect)))
            if not (h < height and w < width):
                continue
            if value is None:
                values = rng.standard_normal((channels, h, w)).astype(np.float32)
            else:
                values = np.broadcast_to(np.asarray(value, np.float64).reshape(-1, 1, 1),
                                         (channels, 1, 1))
            top, left = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
            return top, left, h, w, values
        return 0, 0, height, width, img

    def __call__(self, img):
        if _is_pil(img):
            raise TypeError("RandomErasing: img should be a Tensor (or array) image, got a PIL "
                            "Image; put RandomErasing after ToTensor()")
        array = _array_of(img, "RandomErasing")
        channels = _channels(array, "RandomErasing", allowed=None)
        value = self.value
        if isinstance(value, (tuple, list)) and len(value) not in (1, channels):
            raise ValueError(f"RandomErasing: value has {len(value)} values for an image of "
                             f"{channels} channels (shape {tuple(array.shape)})")
        if random_source(self.generator).random() >= self.p:
            return img
        top, left, h, w, values = self.get_params(img, self.scale, self.ratio,
                                                  None if value == "random" else value,
                                                  self.generator)
        if values is img:
            return img
        return _erase(img, top, left, h, w, values, self.inplace, "RandomErasing")

    def __repr__(self):
        return (f"RandomErasing(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
                f"value={self.value}, inplace={self.inplace})")


def _erase(img, top, left, height, width, values, inplace, fn):
    """img with its rectangle (top, left, height, width) overwritten by `values` (anything that
    broadcasts to (..., C, height, width)), in place or in a copy."""
    target = img if inplace else _like(img, _array_of(img, fn).copy())
    out = _array_of(target, fn)
    out[..., top:top + height, left:left + width] = devices.asarray(
        np.asarray(values, dtype=out.dtype), dev=devices.of(out))
    return target


class _RandomTransforms:
    def __init__(self, transforms):
        if not isinstance(transforms, (tuple, list)):
            raise TypeError(f"{type(self).__name__}: transforms must be a list or tuple of "
                            f"transforms, got {type(transforms).__name__}")
        for i, t in enumerate(transforms):
            if not callable(t):
                raise TypeError(f"{type(self).__name__}: transform {i} is a {type(t).__name__}, "
                                f"not callable")
        self.transforms = transforms

    def __repr__(self):
        return f"{type(self).__name__}(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class RandomApply(_RandomTransforms):
    """Apply all of `transforms`, in order, with probability p (one draw per image)."""

    def __init__(self, transforms, p=0.5, *, generator=None):
        super().__init__(transforms)
        self.p, self.generator = _check_probability(p, "RandomApply"), _check_generator(generator)

    def __call__(self, img):
        if random_source(self.generator).random() > self.p:
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return (f"RandomApply(\n    p={self.p}" + "".join(f"\n    {t}" for t in self.transforms)
                + "\n)")


class RandomChoice(_RandomTransforms):
    """Apply one of `transforms`, picked with the weights p (equal weights by default)."""

    def __init__(self, transforms, p=None, *, generator=None):
        super().__init__(transforms)
        if p is not None:
            if (not isinstance(p, (tuple, list)) or len(p) != len(transforms)
                    or not all(isinstance(w, numbers.Real) and w >= 0 for w in p) or sum(p) <= 0):
                raise ValueError(f"RandomChoice: p must be a sequence of {len(transforms)} weights "
                                 f">= 0 (one per transform, not all zero), got {p!r}")
        self.p, self.generator = p, _check_generator(generator)

    def __call__(self, img):
        weights = np.ones(len(self.transforms)) if self.p is None else np.asarray(self.p, np.float64)
        index = int(random_source(self.generator).choice(len(self.transforms), p=weights / weights.sum()))
        return self.transforms[index](img)

    def __repr__(self):
        return f"{super().__repr__()}(p={self.p})"


class RandomOrder(_RandomTransforms):
    """Apply all of `transforms`, in a random order."""

    def __init__(self, transforms, *, generator=None):
        super().__init__(transforms)
        self.generator = _check_generator(generator)

    def __call__(self, img):
        for index in random_source(self.generator).permutation(len(self.transforms)):
            img = self.transforms[int(index)](img)
        return img


# ---- the automatic augmentations -------------------------------------------------------------------
class AutoAugmentPolicy(enum.Enum):
    """The AutoAugment policies learned on ImageNet, CIFAR-10 and SVHN, as torchvision's."""
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# (op, probability, magnitude bin of 10 or None), two per sub-policy: Cubuk et al., "AutoAugment:
# Learning Augmentation Strategies from Data" (2019), appendix, as torchvision lists them.
_AUTOAUGMENT_POLICIES = {
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
        (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)),
        (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)),
        (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)),
        (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)),
        (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)),
        (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)),
        (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)),
        (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)),
        (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)),
        (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)),
        (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)),
        (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)),
        (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)),
        (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)),
        (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)),
        (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)),
        (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)),
        (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)),
        (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)),
        (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)),
        (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)),
        (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)),
        (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)),
        (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)),
        (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ],
}


def _linspace(start, end, steps):
    """torch.linspace in float32, value for value: the step computed in float32, the first half
    counted from start and the second from end, each product added without rounding it first
    (as a fused multiply-add). Translations truncate magnitudes to whole pixels, so 32 * 15 / 30
    must come out as torch's 15.999999, not 16."""
    start32, end32 = np.float32(start), np.float32(end)
    step = np.float64((end32 - start32) / np.float32(max(steps - 1, 1)))
    i = np.arange(steps, dtype=np.float64)
    values = np.where(i < steps // 2, np.float64(start32) + step * i,
                      np.float64(end32) - step * (steps - 1 - i))
    return values.astype(np.float32)


def _posterize_bits(num_bins, lowest):
    """8 bits down to `lowest` over num_bins bins, rounded half to even as torch.round."""
    return (8 - np.round(np.arange(num_bins, dtype=np.float32)
                         / np.float32((num_bins - 1) / (8 - lowest)))).astype(np.int64)


def _augmentation_space(num_bins, height, width, wide=False, identity=True, invert=False):
    """{op: (magnitudes, signed)} as torchvision's AutoAugment/RandAugment space, or (wide=True)
    TrivialAugmentWide's wider ranges; an op without magnitude has None."""
    top = 0.99 if wide else 0.9
    space = {"Identity": (None, False)} if identity else {}
    space.update({
        "ShearX": (_linspace(0.0, 0.99 if wide else 0.3, num_bins), True),
        "ShearY": (_linspace(0.0, 0.99 if wide else 0.3, num_bins), True),
        "TranslateX": (_linspace(0.0, 32.0 if wide else 150.0 / 331.0 * width, num_bins), True),
        "TranslateY": (_linspace(0.0, 32.0 if wide else 150.0 / 331.0 * height, num_bins), True),
        "Rotate": (_linspace(0.0, 135.0 if wide else 30.0, num_bins), True),
        "Brightness": (_linspace(0.0, top, num_bins), True),
        "Color": (_linspace(0.0, top, num_bins), True),
        "Contrast": (_linspace(0.0, top, num_bins), True),
        "Sharpness": (_linspace(0.0, top, num_bins), True),
        "Posterize": (_posterize_bits(num_bins, 2 if wide else 4), False),
        "Solarize": (_linspace(255.0, 0.0, num_bins), False),
        "AutoContrast": (None, False),
        "Equalize": (None, False),
    })
    if invert:
        space["Invert"] = (None, False)
    return space


def _check_policy_image(img, fn):
    """A PIL image of mode L or RGB, or a (..., 1 or 3, H, W) image of uint8 or floats."""
    if _is_pil(img):
        if img.mode not in ("L", "RGB"):
            raise ValueError(f"{fn}: a PIL image must have mode L or RGB, got mode {img.mode}")
        return
    array = _array_of(img, fn)
    _channels(array, fn)
    if array.dtype != np.uint8 and array.dtype.kind != "f":
        raise TypeError(f"{fn}: the image must hold uint8 or floating-point values, got dtype "
                        f"{array.dtype}")


def _policy_fill(img, fill):
    """A number as one value per channel for tensors and arrays, as torchvision's policies."""
    if fill is None or _is_pil(img):
        return fill
    if isinstance(fill, numbers.Number):
        return [float(fill)] * _channels(_array_of(img, "fill"), "fill")
    return [float(f) for f in fill]


def _apply_op(img, op_name, magnitude, interpolation, fill):
    """One op of the automatic augmentations with its magnitude, as torchvision's _apply_op.
    Shears are tan(angle) = magnitude about the top-left corner (AutoAugment's (1, level, 0,
    0, 1, 0) matrix), translations whole pixels truncated towards zero, the colour ops factors
    1 + magnitude. Solarize's threshold counts in 8-bit levels: a float image's is scaled to
    [0, 1], as torchvision.transforms.v2 does (torchvision's v1 refuses thresholds over 1)."""
    fn = op_name
    if op_name == "Identity":
        return img
    if op_name in ("ShearX", "ShearY"):
        angle = math.degrees(math.atan(magnitude))
        shear = (angle, 0.0) if op_name == "ShearX" else (0.0, angle)
        return _affine(img, 0.0, (0.0, 0.0), 1.0, shear, interpolation, fill, (0, 0), fn)
    if op_name in ("TranslateX", "TranslateY"):
        shift = (int(magnitude), 0) if op_name == "TranslateX" else (0, int(magnitude))
        return _affine(img, 0.0, shift, 1.0, (0.0, 0.0), interpolation, fill, None, fn)
    if op_name == "Rotate":
        return _rotate(img, magnitude, interpolation, False, None, fill, fn)
    if op_name in ("Brightness", "Color", "Contrast"):
        kind = {"Brightness": "brightness", "Color": "saturation", "Contrast": "contrast"}[op_name]
        return _adjust(img, kind, 1.0 + magnitude)
    if op_name == "Sharpness":
        return _image_op(img, "sharpness", 1.0 + magnitude)
    if op_name == "Posterize":
        return _image_op(img, "posterize", int(magnitude))
    if op_name == "Solarize":
        if not _is_pil(img):
            magnitude = magnitude * _max_value(_array_of(img, fn).dtype, fn) / 255.0
        return _image_op(img, "solarize", magnitude)
    if op_name in ("AutoContrast", "Equalize", "Invert"):
        return _image_op(img, op_name.lower())
    raise ValueError(f"the automatic augmentations have no op {op_name!r}")


def _check_int(value, fn, name, low=None, high=None):
    """An int in [low, high] (None: no bound on that side)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or (
            low is not None and value < low) or (high is not None and value > high):
        expected = ("an int" if low is None else f"an int >= {low}" if high is None
                    else f"an int in [{low}, {high}]")
        raise ValueError(f"{fn}: {name} must be {expected}, got {value!r}")
    return int(value)


def _check_policy_args(self, interpolation, fill, fn):
    self.interpolation = _check_warp_interpolation(interpolation, fn)
    _check_warp_fill(fill, fn)
    self.fill = fill


def _draw_magnitude(rng, magnitudes, signed, index=None):
    """A magnitude from the table (bin `index`, else a random bin), negated on a coin toss when
    the op is signed; ops without magnitude get 0."""
    if magnitudes is None:
        magnitude = 0.0
    else:
        if index is None:
            index = int(rng.integers(len(magnitudes)))
        magnitude = float(magnitudes[index])
    if signed and int(rng.integers(2)):
        magnitude = -magnitude
    return magnitude


class AutoAugment:
    """AutoAugment (Cubuk et al., 2019): one of the policy's 25 sub-policies, picked at random;
    each of its two ops applies with its probability, at its magnitude (of 10 bins), negated
    on a coin toss for signed ops. Images: PIL (L or RGB), or (..., 1 or 3, H, W) uint8 arrays
    as torchvision's uint8 tensors, or floats in [0, 1] (minifw's Tensors) as
    torchvision.transforms.v2 takes them. Geometric ops: nearest or bilinear on tensors and
    arrays; fill None leaves zeros outside."""

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST,
                 fill=None, *, generator=None):
        if not isinstance(policy, AutoAugmentPolicy):
            try:
                policy = AutoAugmentPolicy(policy)
            except ValueError:
                raise ValueError(f"AutoAugment: policy must be an AutoAugmentPolicy (IMAGENET, "
                                 f"CIFAR10 or SVHN), got {policy!r}") from None
        self.policy = policy
        self.policies = _AUTOAUGMENT_POLICIES[policy]
        _check_policy_args(self, interpolation, fill, "AutoAugment")
        self.generator = _check_generator(generator)

    @staticmethod
    def get_params(transform_num, generator=None):
        """(sub-policy index, two probabilities, two signs), as torchvision's get_params."""
        rng = random_source(generator)
        policy_id = int(rng.integers(transform_num))
        probs = rng.random(2)
        signs = rng.integers(2, size=2)
        return policy_id, probs, signs

    def __call__(self, img):
        _check_policy_image(img, "AutoAugment")
        fill = _policy_fill(img, self.fill)
        height, width = _size(img, "AutoAugment")
        transform_id, probs, signs = self.get_params(len(self.policies), self.generator)
        space = _augmentation_space(10, height, width, identity=False, invert=True)
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = space[op_name]
                magnitude = float(magnitudes[magnitude_id]) if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude = -magnitude
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return f"AutoAugment(policy={self.policy}, fill={self.fill})"


class RandAugment:
    """RandAugment (Cubuk et al., 2020): num_ops ops, each drawn uniformly from the 14 of
    torchvision's space (Identity ... Equalize), all at bin `magnitude` of num_magnitude_bins,
    signed ops negated on a coin toss. Images and fill as AutoAugment's."""

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31,
                 interpolation=InterpolationMode.NEAREST, fill=None, *, generator=None):
        fn = "RandAugment"
        self.num_ops = _check_int(num_ops, fn, "num_ops", 0)
        self.num_magnitude_bins = _check_int(num_magnitude_bins, fn, "num_magnitude_bins", 2)
        self.magnitude = _check_int(magnitude, fn, "magnitude", 0, self.num_magnitude_bins - 1)
        _check_policy_args(self, interpolation, fill, fn)
        self.generator = _check_generator(generator)

    def __call__(self, img):
        _check_policy_image(img, "RandAugment")
        fill = _policy_fill(img, self.fill)
        rng = random_source(self.generator)
        for _ in range(self.num_ops):
            height, width = _size(img, "RandAugment")
            space = _augmentation_space(self.num_magnitude_bins, height, width)
            op_name = list(space)[int(rng.integers(len(space)))]
            magnitude = _draw_magnitude(rng, *space[op_name], index=self.magnitude)
            img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return (f"RandAugment(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class TrivialAugmentWide:
    """TrivialAugment Wide (Müller and Hutter, 2021): one op drawn uniformly from the 14 of its
    wide space, at a magnitude drawn uniformly from its num_magnitude_bins bins (shears up to
    0.99, translations up to 32 pixels, rotations up to 135 degrees, colour factors 1 +/- 0.99,
    posterize down to 2 bits), signed ops negated on a coin toss. Images and fill as
    AutoAugment's."""

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST, fill=None,
                 *, generator=None):
        fn = "TrivialAugmentWide"
        self.num_magnitude_bins = _check_int(num_magnitude_bins, fn, "num_magnitude_bins", 2)
        _check_policy_args(self, interpolation, fill, fn)
        self.generator = _check_generator(generator)

    def _augmentation_space(self, num_bins):
        return _augmentation_space(num_bins, None, None, wide=True)

    def __call__(self, img):
        _check_policy_image(img, "TrivialAugmentWide")
        fill = _policy_fill(img, self.fill)
        rng = random_source(self.generator)
        space = self._augmentation_space(self.num_magnitude_bins)
        op_name = list(space)[int(rng.integers(len(space)))]
        magnitude = _draw_magnitude(rng, *space[op_name])
        return _apply_op(img, op_name, magnitude, self.interpolation, fill)

    def __repr__(self):
        return (f"TrivialAugmentWide(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class _RandomImageOp:
    """With probability p, one of the automatic augmentations' ops with a fixed argument."""
    _op = None
    _arg_name = None

    def __init__(self, arg=None, p=0.5, *, generator=None):
        self.p, self.generator = _check_probability(p, type(self).__name__), _check_generator(generator)
        self.arg = arg

    def __call__(self, img):
        if random_source(self.generator).random() < self.p:
            return _image_op(img, self._op, *(() if self._arg_name is None else (self.arg,)))
        return img

    def __repr__(self):
        arg = "" if self._arg_name is None else f"{self._arg_name}={self.arg}, "
        return f"{type(self).__name__}({arg}p={self.p})"


class RandomInvert(_RandomImageOp):
    """With probability p, every value v becomes full intensity - v."""
    _op = "invert"

    def __init__(self, p=0.5, *, generator=None):
        super().__init__(None, p, generator=generator)


class RandomPosterize(_RandomImageOp):
    """With probability p, keep the top `bits` bits of each 8-bit value (uint8 arrays and PIL
    images as torchvision's; floats x as floor(x * 2**bits) / 2**bits, as its v2)."""
    _op, _arg_name = "posterize", "bits"

    def __init__(self, bits, p=0.5, *, generator=None):
        super().__init__(_check_int(bits, "RandomPosterize", "bits", 0, 8), p, generator=generator)


class RandomSolarize(_RandomImageOp):
    """With probability p, invert the values >= threshold (in the image's own scale: up to 1
    for floats, 255 for uint8)."""
    _op, _arg_name = "solarize", "threshold"

    def __init__(self, threshold, p=0.5, *, generator=None):
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise TypeError(f"RandomSolarize: threshold must be a number, got {threshold!r}")
        super().__init__(threshold, p, generator=generator)


class RandomAdjustSharpness(_RandomImageOp):
    """With probability p, blend the image with its smoothed self: factor 0 gives the smoothed
    image, 1 the image, 2 twice as sharp."""
    _op, _arg_name = "sharpness", "sharpness_factor"

    def __init__(self, sharpness_factor, p=0.5, *, generator=None):
        if (isinstance(sharpness_factor, bool) or not isinstance(sharpness_factor, numbers.Real)
                or sharpness_factor < 0):
            raise ValueError(f"RandomAdjustSharpness: sharpness_factor must be a number >= 0, got "
                             f"{sharpness_factor!r}")
        super().__init__(float(sharpness_factor), p, generator=generator)


class RandomAutocontrast(_RandomImageOp):
    """With probability p, stretch each channel to span 0 to full intensity."""
    _op = "autocontrast"

    def __init__(self, p=0.5, *, generator=None):
        super().__init__(None, p, generator=generator)


class RandomEqualize(_RandomImageOp):
    """With probability p, equalize each channel's histogram (8-bit values; floats through
    uint8, as torchvision.transforms.v2)."""
    _op = "equalize"

    def __init__(self, p=0.5, *, generator=None):
        super().__init__(None, p, generator=generator)


class AugMix:
    """AugMix (Hendrycks et al., 2020): mixture_width chains of chain_depth ops (-1: 1 to 3,
    drawn per chain) from a space of 9 ops (13 with all_ops: the colour ops too) at magnitudes
    from the first `severity` of 10 bins, mixed with Dirichlet(alpha) weights, then mixed with
    the image by Beta(alpha, alpha) (drawn as a 2-way Dirichlet); the mix is cast back to the
    image's dtype (uint8 truncated). Weights are drawn per image of a batch (..., C, H, W) along
    its first dimension, the ops once for all. Images and fill as AutoAugment's; PIL images are
    mixed as uint8 arrays."""

    _PARAMETER_MAX = 10

    def __init__(self, severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True,
                 interpolation=InterpolationMode.BILINEAR, fill=None, *, generator=None):
        fn = "AugMix"
        self.severity = _check_int(severity, fn, "severity", 1, self._PARAMETER_MAX)
        self.mixture_width = _check_int(mixture_width, fn, "mixture_width", 1)
        if isinstance(chain_depth, bool) or not isinstance(chain_depth, numbers.Integral) or not (
                chain_depth == -1 or chain_depth >= 1):
            raise ValueError(f"AugMix: chain_depth must be -1 (1 to 3 ops, drawn) or an int >= 1, "
                             f"got {chain_depth!r}")
        self.chain_depth = int(chain_depth)
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or alpha <= 0:
            raise ValueError(f"AugMix: alpha must be a number > 0, got {alpha!r}")
        self.alpha, self.all_ops = float(alpha), bool(all_ops)
        _check_policy_args(self, interpolation, fill, fn)
        self.generator = _check_generator(generator)

    def _augmentation_space(self, num_bins, height, width):
        space = {
            "ShearX": (_linspace(0.0, 0.3, num_bins), True),
            "ShearY": (_linspace(0.0, 0.3, num_bins), True),
            "TranslateX": (_linspace(0.0, width / 3.0, num_bins), True),
            "TranslateY": (_linspace(0.0, height / 3.0, num_bins), True),
            "Rotate": (_linspace(0.0, 30.0, num_bins), True),
            # 4 bits down to 0, where the other policies go from 8
            "Posterize": (_posterize_bits(num_bins, 4) - 4, False),
            "Solarize": (_linspace(255.0, 0.0, num_bins), False),
            "AutoContrast": (None, False),
            "Equalize": (None, False),
        }
        if self.all_ops:
            space.update({name: (_linspace(0.0, 0.9, num_bins), True)
                          for name in ("Brightness", "Color", "Contrast", "Sharpness")})
        return space

    def __call__(self, img):
        _check_policy_image(img, "AugMix")
        fill = _policy_fill(img, self.fill)
        if _is_pil(img):
            return _on_pil_array(img, lambda chw: self._mix(np.ascontiguousarray(chw), fill))
        return _host_op(img, "AugMix", lambda array: self._mix(array, fill))

    def _mix(self, array, fill):
        rng = random_source(self.generator)
        height, width = array.shape[-2:]
        space = self._augmentation_space(self._PARAMETER_MAX, height, width)
        images = array.shape[0] if array.ndim >= 4 else 1
        weights_shape = (images,) + (1,) * (array.ndim - 1) if array.ndim >= 4 else ()
        m = rng.dirichlet([self.alpha, self.alpha], size=images)
        combined = rng.dirichlet([self.alpha] * self.mixture_width, size=images) * m[:, 1:2]
        mix = m[:, 0].reshape(weights_shape) * _float_work(array)
        for i in range(self.mixture_width):
            aug = array
            depth = self.chain_depth if self.chain_depth > 0 else int(rng.integers(1, 4))
            for _ in range(depth):
                op_name = list(space)[int(rng.integers(len(space)))]
                magnitudes, signed = space[op_name]
                index = int(rng.integers(self.severity)) if magnitudes is not None else None
                magnitude = _draw_magnitude(rng, magnitudes, signed, index=index)
                aug = _apply_op(aug, op_name, magnitude, self.interpolation, fill)
            mix = mix + combined[:, i].reshape(weights_shape) * aug
        return _to_dtype(mix, array.dtype) if array.dtype.kind in "iu" else mix.astype(array.dtype)

    def __repr__(self):
        return (f"AugMix(severity={self.severity}, mixture_width={self.mixture_width}, "
                f"chain_depth={self.chain_depth}, alpha={self.alpha}, all_ops={self.all_ops}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
