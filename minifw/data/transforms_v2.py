"""torchvision.transforms.v2 for plain images, importable as minifw.data.transforms.v2 and
minifw.vision.transforms.v2 (`from minifw.vision.transforms import v2`).

The transforms are those of minifw.data.transforms (v1) under the same names, with v2's way
of being called, plus v2's own ToImage, ToDtype and ToPureTensor:

- a transform takes one image, or a sample: several arguments, or nested tuples, lists and
  dicts, `transform(img, label)` giving back `(img', label)`. Its images are its PIL images;
  without one, its first Tensor or array, as v2 takes the first plain tensor (minifw has no
  tv_tensors.Image to mark one, so put the image before other tensors). Everything else passes
  through unchanged. Several PIL images in a sample are transformed with the same random
  draws (v2 gives them one set of parameters), so images of one size get the same crop, flip
  or angle. A sample with no image at all is refused (TypeError), where v2 passes it through.
- ToImage keeps an image's values and dtype: a uint8 image (8-bit PIL modes, uint8 arrays)
  becomes a uint8 NumPy array (C, H, W), as v1's PILToTensor gives, since minifw's Tensors hold
  no uint8; every transform takes it as torchvision takes a uint8 tensor, and
  ToDtype(minifw.float32, scale=True) makes the float32 Tensor in [0, 1] of it.
- Where v2 differs from v1 on plain images, these follow v2: ToDtype's and ConvertImageDtype's
  integer-to-float scaling multiplies by 1 / max (v1 divides by max: 1 ulp apart for some
  values); ToTensor warns that it is deprecated and passes Tensors through; PILToTensor,
  ToDtype and ToPILImage pass through what they do not convert; Resize takes size=None with
  max_size; ColorJitter's factors default to None; RandomErasing also erases PIL images;
  Lambda takes the types it applies to; RandomApply applies when its draw is under p; the
  containers refuse an empty list of transforms.

v2.functional is minifw.data.transforms_v2_functional (the functions on plain images).

Missing: tv_tensors (bounding boxes, masks, key points, videos) and the transforms that exist
for them, v2.Transform as a base for user transforms, and the v2-only image transforms
(RandomZoomOut, ScaleJitter, RandomShortestSize, RandomResize, RandomIoUCrop,
RandomPhotometricDistort, RandomChannelPermutation, RGB, JPEG, GaussianNoise, CutMix, MixUp,
Identity). The transforms are plain callables, not nn.Modules, as v1's.
"""
import copy
import numbers
import warnings

import numpy as np

from .. import devices
from ..tensor import Tensor
from . import transforms as _v1
from .transforms import AutoAugmentPolicy, InterpolationMode
from .worker import random_source


# ---- samples: the images in nested tuples, lists and dicts ------------------------------------------
def _leaves(sample):
    """The leaves of a sample (nested tuples, lists, dicts), depth first, as torch's pytree."""
    if isinstance(sample, (tuple, list)):
        return [leaf for item in sample for leaf in _leaves(item)]
    if isinstance(sample, dict):
        return [leaf for item in sample.values() for leaf in _leaves(item)]
    return [sample]


def _rebuild(sample, leaves):
    """`sample` with its leaves taken in order from the iterator `leaves`."""
    if isinstance(sample, tuple):
        items = [_rebuild(item, leaves) for item in sample]
        return type(sample)(*items) if hasattr(sample, "_fields") else type(sample)(items)
    if isinstance(sample, list):
        return type(sample)(_rebuild(item, leaves) for item in sample)
    if isinstance(sample, dict):
        out = copy.copy(sample)  # keeps an OrderedDict or defaultdict what it is
        for key, value in sample.items():
            out[key] = _rebuild(value, leaves)
        return out
    return next(leaves)


def _is_tensor_like(leaf):
    return isinstance(leaf, Tensor) or devices.is_array(leaf)


def _image_indices(leaves):
    """Which leaves are the sample's images: its PIL images, else its first Tensor or array."""
    pil = [i for i, leaf in enumerate(leaves) if _v1._is_pil(leaf)]
    if pil:
        return pil
    return next(([i] for i, leaf in enumerate(leaves) if _is_tensor_like(leaf)), [])


def _sample_of(inputs, fn):
    if not inputs:
        raise TypeError(f"{fn}: expected an image, or a sample holding one, got no argument")
    return inputs[0] if len(inputs) == 1 else inputs


class _Transform:
    """What every v2 transform here shares: called with an image or a sample, it applies
    `_apply` to the sample's images of the kinds it takes and passes the rest through. Mixed
    into a v1 transform (before it), `_apply` is the v1 transform's __call__."""
    _takes_pil = True
    _takes_tensors = True  # Tensors and arrays

    def _takes(self, image):
        return self._takes_pil if _v1._is_pil(image) else self._takes_tensors

    def _apply(self, image):
        return super().__call__(image)

    def __call__(self, *inputs):
        fn = type(self).__name__
        sample = _sample_of(inputs, fn)
        leaves = _leaves(sample)
        images = _image_indices(leaves)
        if not images:
            raise TypeError(f"{fn}: the sample holds no image (a PIL Image, a Tensor or an array), "
                            f"got {type(sample).__name__}")
        targets = [i for i in images if self._takes(leaves[i])]
        if len(targets) > 1:
            rng = random_source(getattr(self, "generator", None))
            state = rng.bit_generator.state
        outputs = list(leaves)
        for i in targets:
            if len(targets) > 1:  # each image the same draws: v2 gives them one set of parameters
                rng.bit_generator.state = state
            outputs[i] = self._apply(leaves[i])
        return _rebuild(sample, iter(outputs))


# ---- conversions ---------------------------------------------------------------------------------
class ToImage(_Transform):
    """An image as a (C, H, W) image of its own values and dtype, as v2's ToImage: a PIL image
    as v1's PILToTensor makes it (uint8 modes as a uint8 NumPy array, "I" as an int32 Tensor,
    "F" float32, "1" bool, "I;16" a uint16 array); a NumPy array (H, W, C) or (H, W) transposed
    to (C, H, W), a Tensor when minifw's Tensors hold its dtype, else (uint8...) an array; a
    Tensor (or a CuPy array) is taken to be (C, H, W) already and comes back as it is."""

    def _apply(self, image):
        return _to_image(image, "ToImage")

    def __repr__(self):
        return "ToImage()"


def _to_image(image, fn):
    if _v1._is_pil(image):
        return _v1._pil_to_tensor(image, fn)
    if not isinstance(image, np.ndarray):
        return image
    if image.ndim not in (2, 3):
        raise ValueError(f"{fn}: an array image should be (H, W, C) or (H, W), got shape "
                         f"{image.shape}")
    chw = np.ascontiguousarray(np.atleast_3d(image).transpose(2, 0, 1))
    return Tensor._make(chw) if chw.dtype in _v1._TENSOR_DTYPES else chw


def _to_dtype(array, dtype, scale, fn):
    """array in dtype as v2's to_dtype: without scale a cast; with it, values rescaled between
    the dtypes' ranges of intensities (floats [0, 1], integers [0, their largest value])."""
    source = array.dtype
    if not scale:
        return array.astype(dtype)
    if source.kind == "f":  # to floats a cast; to integers scaled and truncated, as v1
        return _v1._convert_array(array, dtype, fn)
    if dtype.kind == "f":
        # times 1 / max, as v2's to_dtype (v1 divides by max: some values 1 ulp apart)
        return array.astype(dtype) * dtype.type(1.0 / _v1._full_intensity(source))
    if "b" in (source.kind, dtype.kind):
        raise TypeError(f"{fn}: scale=True from {source} to {dtype} is not defined (as in "
                        f"torchvision): bools have no bits of value to shift")
    return _v1._convert_array(array, dtype, fn)  # integers: a shift by the difference in bits


def _image_to_dtype(image, dtype, scale, fn):
    """A Tensor or array image in dtype (see ToDtype): a Tensor when minifw's Tensors hold
    dtype, else an array, on the image's device; the image itself when it has dtype already."""
    array = _v1._array_of(image, fn)
    if array.dtype == dtype:
        return image
    if array.dtype.kind not in _v1._IMAGE_DTYPE_KINDS:
        raise TypeError(f"{fn}: the image must hold bools, integers or floats, got dtype "
                        f"{array.dtype}")
    host = devices.to_device(array, devices.CPU)
    out = np.ascontiguousarray(_to_dtype(host, dtype, scale, fn))
    out = devices.to_device(out, devices.of(array))
    return Tensor._make(out) if dtype in _v1._TENSOR_DTYPES else out


class ToDtype(_Transform):
    """A Tensor or array image in `dtype` (a minifw dtype, or a NumPy one such as numpy.uint8),
    as v2's ToDtype. scale=False casts; scale=True also rescales the values between the dtypes'
    ranges: integers to floats by 1 / the integer dtype's largest value (uint8: 1 / 255), floats
    to integers by (largest + 1 - 0.001), truncated, as v1's convert_image_dtype (clamped to the
    range; float32 to int32/int64 and float64 to int64 refused), integers to integers by a shift
    of the difference in bits, floats to floats a cast. dtype may also be a dict, as v2 takes it:
    {minifw.Tensor: dtype} (minifw's one kind of image) and/or {"others": dtype}, a value of None
    leaving the image as it is. The result is a Tensor when minifw's Tensors hold dtype, else an
    array, on the image's device; an image already of dtype comes back as it is. PIL images pass
    through (put ToImage first)."""
    _takes_pil = False

    def __init__(self, dtype, scale=False):
        if isinstance(dtype, dict):
            for key in dtype:
                if key is not Tensor and key != "others":
                    raise TypeError(f"ToDtype: dtype as a dict takes the keys minifw.Tensor and "
                                    f"'others' (minifw has no tv_tensors), got key {key!r}")
            if not dtype:
                raise ValueError("ToDtype: dtype as a dict names no dtype for images: give "
                                 "minifw.Tensor a dtype (or None), or 'others' as a catch-all")
            dtype = {key: None if value is None else _v1._image_dtype(value, "ToDtype")
                     for key, value in dtype.items()}
        else:
            dtype = _v1._image_dtype(dtype, "ToDtype")
        self.dtype, self.scale = dtype, bool(scale)

    def _apply(self, image):
        fn = type(self).__name__
        dtype = self.dtype.get(Tensor, self.dtype.get("others")) if isinstance(self.dtype, dict) else self.dtype
        if dtype is None:
            if self.scale:
                warnings.warn(f"{fn}: scale=True but dtype gives images no dtype: no scaling is done",
                              UserWarning, stacklevel=3)
            return image
        return _image_to_dtype(image, dtype, self.scale, fn)

    def __repr__(self):
        return f"ToDtype(dtype={self.dtype}, scale={self.scale})"


class ConvertImageDtype(ToDtype):
    """ToDtype(dtype, scale=True), as v2's (deprecated there in favour of ToDtype)."""

    def __init__(self, dtype=np.dtype("float32")):
        super().__init__(_v1._image_dtype(dtype, "ConvertImageDtype"), scale=True)

    def __repr__(self):
        return "ConvertImageDtype()"


class ToPureTensor:
    """The sample as it is: v2's ToPureTensor strips tv_tensors' metadata, which minifw's
    Tensors and arrays do not have."""

    def __call__(self, *inputs):
        return _sample_of(inputs, "ToPureTensor")

    def __repr__(self):
        return "ToPureTensor()"


class ToTensor(_Transform, _v1.ToTensor):
    """v1's ToTensor (a PIL image or an H x W x C NumPy array to a float32 (C, H, W) Tensor in
    [0, 1]), deprecated in v2 as in torchvision: making one warns. Tensors pass through."""

    def __init__(self):
        warnings.warn("The transform ToTensor() is deprecated in v2 (as torchvision's): use "
                      "v2.Compose([v2.ToImage(), v2.ToDtype(minifw.float32, scale=True)]) instead; "
                      "the output is equivalent up to float precision", UserWarning, stacklevel=2)

    def _takes(self, image):
        return _v1._is_pil(image) or isinstance(image, np.ndarray)


class PILToTensor(_Transform, _v1.PILToTensor):
    """v1's PILToTensor on the sample's PIL images; Tensors and arrays pass through."""
    _takes_tensors = False


class ToPILImage(_Transform, _v1.ToPILImage):
    """v1's ToPILImage (a (C, H, W) Tensor or an H x W x C NumPy array to a PIL image) on the
    sample's image; PIL images pass through."""
    _takes_pil = False


# ---- the transforms shared with v1 ----------------------------------------------------------------
class Normalize(_Transform, _v1.Normalize):
    __doc__ = _v1.Normalize.__doc__


class Resize(_Transform, _v1.Resize):
    """v1's Resize; size=None (v2's) makes the longer edge max_size, the aspect ratio kept."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        if size is not None:
            super().__init__(size, interpolation, max_size, antialias)
            return
        if isinstance(max_size, bool) or not isinstance(max_size, numbers.Integral) or max_size < 1:
            raise ValueError(f"Resize: max_size must be a positive int when size is None, got "
                             f"{max_size!r}")
        super().__init__(max_size, interpolation, None, antialias)  # checks the other arguments
        self.size, self.max_size, self._requested = None, int(max_size), None


class CenterCrop(_Transform, _v1.CenterCrop):
    __doc__ = _v1.CenterCrop.__doc__


class Pad(_Transform, _v1.Pad):
    __doc__ = _v1.Pad.__doc__


class RandomCrop(_Transform, _v1.RandomCrop):
    __doc__ = _v1.RandomCrop.__doc__


class RandomResizedCrop(_Transform, _v1.RandomResizedCrop):
    __doc__ = _v1.RandomResizedCrop.__doc__


class RandomHorizontalFlip(_Transform, _v1.RandomHorizontalFlip):
    __doc__ = _v1.RandomHorizontalFlip.__doc__


class RandomVerticalFlip(_Transform, _v1.RandomVerticalFlip):
    __doc__ = _v1.RandomVerticalFlip.__doc__


class ColorJitter(_Transform, _v1.ColorJitter):
    """v1's ColorJitter, its factors None (no change) by default as v2's."""

    def __init__(self, brightness=None, contrast=None, saturation=None, hue=None, *, generator=None):
        super().__init__(*(0 if v is None else v for v in (brightness, contrast, saturation, hue)),
                         generator=generator)


class Grayscale(_Transform, _v1.Grayscale):
    __doc__ = _v1.Grayscale.__doc__


class RandomGrayscale(_Transform, _v1.RandomGrayscale):
    __doc__ = _v1.RandomGrayscale.__doc__


class RandomRotation(_Transform, _v1.RandomRotation):
    __doc__ = _v1.RandomRotation.__doc__


class RandomAffine(_Transform, _v1.RandomAffine):
    __doc__ = _v1.RandomAffine.__doc__


class GaussianBlur(_Transform, _v1.GaussianBlur):
    __doc__ = _v1.GaussianBlur.__doc__


class RandomErasing(_Transform, _v1.RandomErasing):
    """v1's RandomErasing, on PIL images too, as v2's: the image is erased as its array and
    made back into an image of its mode."""

    def _apply(self, image):
        if not _v1._is_pil(image):
            return super()._apply(image)
        array = np.array(image)  # a writable copy
        chw = array[None] if array.ndim == 2 else array.transpose(2, 0, 1)
        out = super()._apply(chw)
        if out is chw and not self.inplace:  # nothing erased
            return image
        return _v1._pil_from_array(out[0] if array.ndim == 2 else out.transpose(1, 2, 0), image)


class FiveCrop(_Transform, _v1.FiveCrop):
    """v1's FiveCrop: the sample's image becomes the tuple of its five crops."""


class TenCrop(_Transform, _v1.TenCrop):
    """v1's TenCrop: the sample's image becomes the tuple of its ten crops."""


class RandomPerspective(_Transform, _v1.RandomPerspective):
    __doc__ = _v1.RandomPerspective.__doc__


class ElasticTransform(_Transform, _v1.ElasticTransform):
    __doc__ = _v1.ElasticTransform.__doc__


class LinearTransformation(_Transform, _v1.LinearTransformation):
    __doc__ = _v1.LinearTransformation.__doc__


class AutoAugment(_Transform, _v1.AutoAugment):
    __doc__ = _v1.AutoAugment.__doc__


class RandAugment(_Transform, _v1.RandAugment):
    __doc__ = _v1.RandAugment.__doc__


class TrivialAugmentWide(_Transform, _v1.TrivialAugmentWide):
    __doc__ = _v1.TrivialAugmentWide.__doc__


class AugMix(_Transform, _v1.AugMix):
    __doc__ = _v1.AugMix.__doc__


class RandomInvert(_Transform, _v1.RandomInvert):
    __doc__ = _v1.RandomInvert.__doc__


class RandomPosterize(_Transform, _v1.RandomPosterize):
    __doc__ = _v1.RandomPosterize.__doc__


class RandomSolarize(_Transform, _v1.RandomSolarize):
    __doc__ = _v1.RandomSolarize.__doc__


class RandomAdjustSharpness(_Transform, _v1.RandomAdjustSharpness):
    __doc__ = _v1.RandomAdjustSharpness.__doc__


class RandomAutocontrast(_Transform, _v1.RandomAutocontrast):
    __doc__ = _v1.RandomAutocontrast.__doc__


class RandomEqualize(_Transform, _v1.RandomEqualize):
    __doc__ = _v1.RandomEqualize.__doc__


class Lambda(_v1.Lambda):
    """lambd applied to every leaf of the sample that is an instance of `types` (any, by
    default), as v2's Lambda: Tensors and arrays other than the sample's image pass through.
    Lambda(f)(img) is f(img); Lambda(f)(img, 3) is (f(img), f(3))."""

    def __init__(self, lambd, *types):
        super().__init__(lambd)
        for t in types:
            if not isinstance(t, type):
                raise TypeError(f"Lambda: types must be classes, got {t!r}")
        self.types = types or (object,)

    def __call__(self, *inputs):
        sample = _sample_of(inputs, "Lambda")
        leaves = _leaves(sample)
        images = set(_image_indices(leaves))
        outputs = [self.lambd(leaf) if isinstance(leaf, self.types)
                   and (i in images or not _is_tensor_like(leaf)) else leaf
                   for i, leaf in enumerate(leaves)]
        return _rebuild(sample, iter(outputs))


# ---- containers: they hand the whole sample to each transform ---------------------------------------
def _check_transforms(transforms, fn):
    if not isinstance(transforms, (tuple, list)):
        raise TypeError(f"{fn}: transforms must be a list or tuple of transforms, got "
                        f"{type(transforms).__name__}")
    if not transforms:
        raise ValueError(f"{fn}: transforms is empty; pass at least one transform")


def _chain(transforms, inputs):
    """The transforms one after the other, each given the sample (unpacked when the call had
    several arguments, as v2's containers do)."""
    needs_unpacking = len(inputs) > 1
    for t in transforms:
        outputs = t(*inputs)
        inputs = outputs if needs_unpacking else (outputs,)
    return outputs


class Compose(_v1.Compose):
    """Apply `transforms` one after the other to the image, or to the sample: Compose(ts)(img,
    label) calls each transform with (img, label) and gives back what the last returns."""

    def __init__(self, transforms):
        _check_transforms(transforms, "Compose")
        super().__init__(transforms)

    def __call__(self, *inputs):
        _sample_of(inputs, "Compose")
        return _chain(self.transforms, inputs)


class RandomApply(_v1.RandomApply):
    """Apply all of `transforms`, in order, with probability p: when one draw from [0, 1) is
    under p, as v2's."""

    def __init__(self, transforms, p=0.5, *, generator=None):
        _check_transforms(transforms, "RandomApply")
        super().__init__(transforms, p, generator=generator)

    def __call__(self, *inputs):
        sample = _sample_of(inputs, "RandomApply")
        if random_source(self.generator).random() >= self.p:
            return sample
        return _chain(self.transforms, inputs)


class RandomChoice(_v1.RandomChoice):
    """Apply one of `transforms`, picked with the weights p (equal weights by default)."""

    def __init__(self, transforms, p=None, *, generator=None):
        _check_transforms(transforms, "RandomChoice")
        super().__init__(transforms, p, generator=generator)

    def __call__(self, *inputs):
        _sample_of(inputs, "RandomChoice")
        weights = np.ones(len(self.transforms)) if self.p is None else np.asarray(self.p, np.float64)
        index = int(random_source(self.generator).choice(len(self.transforms), p=weights / weights.sum()))
        return self.transforms[index](*inputs)


class RandomOrder(_v1.RandomOrder):
    """Apply all of `transforms`, in a random order."""

    def __init__(self, transforms, *, generator=None):
        _check_transforms(transforms, "RandomOrder")
        super().__init__(transforms, generator=generator)

    def __call__(self, *inputs):
        _sample_of(inputs, "RandomOrder")
        order = random_source(self.generator).permutation(len(self.transforms))
        return _chain([self.transforms[int(i)] for i in order], inputs)


__all__ = ["AugMix", "AutoAugment", "AutoAugmentPolicy", "CenterCrop", "ColorJitter", "Compose",
           "ConvertImageDtype", "ElasticTransform", "FiveCrop", "GaussianBlur", "Grayscale", "InterpolationMode",
           "Lambda", "LinearTransformation", "Normalize", "PILToTensor", "Pad", "RandAugment",
           "RandomAdjustSharpness", "RandomAffine", "RandomApply", "RandomAutocontrast", "RandomChoice",
           "RandomCrop", "RandomEqualize", "RandomErasing", "RandomGrayscale", "RandomHorizontalFlip",
           "RandomInvert", "RandomOrder", "RandomPerspective", "RandomPosterize", "RandomResizedCrop",
           "RandomRotation", "RandomSolarize", "RandomVerticalFlip", "Resize", "TenCrop", "ToDtype", "ToImage",
           "ToPILImage", "ToPureTensor", "ToTensor", "TrivialAugmentWide"]
