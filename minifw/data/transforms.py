"""Image transforms, as torchvision.transforms: give one (or a Compose of several) to a
dataset's `transform=`.

Each takes what torchvision's takes and gives back the same kind:
- a PIL image (Pillow does the work: crops, flips, padding, resizing with its filters);
- a minifw Tensor, or an array (NumPy, or CuPy on "cuda"), holding an image (..., H, W) as
  torchvision's tensors do (channels first, any number of leading dims); the result stays on
  the input's device;
- ToTensor takes a PIL image or an H x W x C (or H x W) NumPy array and makes the (C, H, W)
  Tensor; Normalize takes float tensors and arrays only.

Where torchvision raises and minifw does not: ToTensor returns a copy of a Tensor it is given
(minifw's MNIST hands its transform a float32 (1, 28, 28) tensor, where torchvision's hands a
PIL image), arrays are accepted wherever tensors are, Pad and RandomCrop take a per-channel
fill for tensors. Random transforms draw from their own `generator` (a minifw.Generator,
minifw's addition), else from the generator of the DataLoader thread that fetches, else from
minifw's global generator (minifw.data.worker), so minifw.manual_seed makes them repeatable.
"""
import enum
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


def _parse_padding(padding, fn):
    """(left, top, right, bottom) from an int or a sequence of 1, 2 (left/right, top/bottom)
    or 4 (left, top, right, bottom) ints >= 0."""
    values = [padding] if isinstance(padding, numbers.Number) else padding
    if (not isinstance(values, (tuple, list)) or len(values) not in (1, 2, 4)
            or any(isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 0 for p in values)):
        raise ValueError(f"{fn}: padding must be an int >= 0 or a sequence of 1, 2 or 4 of them, "
                         f"got {padding!r}")
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
    if _is_pil(img):
        return img.crop((left, top, left + width, top + height))
    array = _array_of(img, "crop")
    return _like(img, array[..., top:top + height, left:left + width])


def _pil_fill(img, fill):
    """A fill colour as Pillow takes it for img's mode: one number per band (ints unless the
    image holds floats), as torchvision's PIL padding converts it."""
    bands = len(img.getbands())
    if isinstance(fill, numbers.Number):
        fill = (fill,) * bands
    elif len(fill) == 1:
        fill = tuple(fill) * bands
    elif len(fill) != bands:
        raise ValueError(f"pad: fill has {len(fill)} values for an image of {bands} channels")
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


def _resized_size(height, width, size, max_size):
    """torchvision's output size: (h, w) as given, or the smaller edge made `size` with the
    aspect ratio kept (the longer edge truncated), capped by max_size."""
    if len(size) == 2:
        return tuple(size)
    short, long = (width, height) if width <= height else (height, width)
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
        if isinstance(pic, Tensor):
            return Tensor._make(pic._data.copy())
        if _is_pil(pic):
            array = np.asarray(pic)
        elif isinstance(pic, np.ndarray):
            array = pic
        else:
            raise TypeError(f"ToTensor: pic should be a PIL Image or a NumPy array (H x W x C), "
                            f"got {type(pic).__name__}")
        if array.ndim not in (2, 3):
            raise ValueError(f"ToTensor: pic should be 2- or 3-dimensional (H x W or H x W x C), "
                             f"got shape {array.shape}")
        if array.ndim == 2:
            array = array[:, :, None]
        array = np.ascontiguousarray(array.transpose(2, 0, 1))
        if array.dtype == np.uint8:
            return Tensor._make(array.astype(np.float32) / np.float32(255))
        if array.dtype == np.bool_ and _is_pil(pic):  # mode "1": 0 or 255 in torchvision, so 0 or 1
            return Tensor._make(array.astype(np.float32))
        return tensor(array)

    def __repr__(self):
        return "ToTensor()"


class Normalize:
    """(image - mean) / std per channel, on a float Tensor or array (..., C, H, W); mean and std
    are sequences of one value per channel (or one for all). inplace=True overwrites the input."""

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, bool(inplace)
        for name, value in (("mean", mean), ("std", std)):
            values = np.asarray(value.tolist() if isinstance(value, Tensor) else value)
            if values.dtype.kind not in "fiu" or values.ndim > 1 or values.size == 0:
                raise TypeError(f"Normalize: {name} must be a number or a sequence of numbers, one "
                                f"per channel, got {value!r}")

    def __call__(self, img):
        if not isinstance(img, Tensor) and not devices.is_array(img):
            raise TypeError(f"Normalize: img should be a Tensor (or array) image, got "
                            f"{type(img).__name__}; convert it with ToTensor() first")
        array = _array_of(img, "Normalize")
        if array.dtype.kind != "f":
            raise TypeError(f"Normalize: the image must hold floats, got dtype {array.dtype}")
        if array.ndim < 3:
            raise ValueError(f"Normalize: expected an image of shape (..., C, H, W), got shape "
                             f"{tuple(array.shape)}")
        channels = array.shape[-3]
        dev = devices.of(array)
        mean, std = (np.asarray(v.tolist() if isinstance(v, Tensor) else v, dtype=array.dtype)
                     .reshape(-1) for v in (self.mean, self.std))
        for name, values in (("mean", mean), ("std", std)):
            if values.size not in (1, channels):
                raise ValueError(f"Normalize: {name} has {values.size} values for an image of "
                                 f"{channels} channels (shape {tuple(array.shape)})")
        if (std == 0).any():
            raise ValueError(f"Normalize: std evaluated to zero after conversion to {array.dtype}, "
                             f"leading to division by zero")
        mean, std = (devices.asarray(v.reshape(-1, 1, 1), dev=dev) for v in (mean, std))
        if self.inplace:
            array -= mean
            array /= std
            return img
        return _like(img, (array - mean) / std)

    def __repr__(self):
        return f"Normalize(mean={self.mean}, std={self.std})"


class Resize:
    """Resize to `size`: (h, w), or an int (or [int]) that the smaller edge becomes, the
    aspect ratio kept (and the longer edge at most max_size). PIL images are resized by
    Pillow's filters (always antialiased); tensors and arrays by NEAREST, NEAREST_EXACT,
    BILINEAR or BICUBIC computed here, as torchvision's tensors are: antialias=True (the
    default) filters like Pillow when shrinking. Integer arrays are rounded back (uint8 clamped
    to 0-255), which can differ by 1 from torchvision's fixed-point uint8 path."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
        if isinstance(size, numbers.Integral) and not isinstance(size, bool):
            requested = [int(size)]
        elif isinstance(size, (tuple, list)) and len(size) in (1, 2):
            requested = list(size)
        else:
            raise ValueError(f"Resize: size must be an int or a sequence of 1 or 2 ints, got {size!r}")
        if any(isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1 for s in requested):
            raise ValueError(f"Resize: size must hold positive ints, got {size!r}")
        if max_size is not None:
            if len(requested) != 1:
                raise ValueError(f"Resize: max_size applies when size is the smaller edge's length "
                                 f"(an int), got size={size!r}")
            if isinstance(max_size, bool) or not isinstance(max_size, numbers.Integral) \
                    or max_size <= requested[0]:
                raise ValueError(f"Resize: max_size must be an int greater than size "
                                 f"({requested[0]}), got {max_size!r}")
        if isinstance(interpolation, numbers.Integral) and interpolation in _FROM_PIL_FILTER:
            interpolation = _FROM_PIL_FILTER[interpolation]
        elif isinstance(interpolation, str):
            try:
                interpolation = InterpolationMode(interpolation)
            except ValueError:
                pass
        if not isinstance(interpolation, InterpolationMode):
            raise TypeError(f"Resize: interpolation must be an InterpolationMode (or its name, or "
                            f"a PIL.Image filter), got {interpolation!r}")
        # antialias=None is torchvision's legacy value: False for tensors (Pillow always filters)
        self.size, self.max_size, self.interpolation = size, max_size, interpolation
        self.antialias = antialias
        self._requested = [int(s) for s in requested]

    def __call__(self, img):
        height, width = _size(img, "Resize")
        out = _resized_size(height, width, self._requested, self.max_size)
        if out == (height, width):
            return img
        if _is_pil(img):
            return img.resize((out[1], out[0]), _PIL_FILTERS[self.interpolation])
        array = _array_of(img, "Resize")
        return _like(img, _resize_array(array, out, self.interpolation, bool(self.antialias)))

    def __repr__(self):
        return (f"Resize(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


class CenterCrop:
    """The central size x size (or (h, w)) window; an image smaller than that is first padded
    with zeros on all sides, as torchvision's."""

    def __init__(self, size):
        self.size = _setup_size(size, "CenterCrop")

    def __call__(self, img):
        height, width = _size(img, "CenterCrop")
        crop_h, crop_w = self.size
        if crop_h > height or crop_w > width:
            extra_w, extra_h = max(crop_w - width, 0), max(crop_h - height, 0)
            img = _pad(img, (extra_w // 2, extra_h // 2, (extra_w + 1) // 2, (extra_h + 1) // 2),
                       0, "constant")
            height, width = _size(img, "CenterCrop")
        # Python's round (half to even), as torchvision's
        top, left = int(round((height - crop_h) / 2.0)), int(round((width - crop_w) / 2.0))
        return _crop(img, top, left, crop_h, crop_w)

    def __repr__(self):
        return f"CenterCrop(size={self.size})"


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
