"""Transforms of image samples (as torchvision.transforms), for a dataset's `transform=`."""
import numbers

import numpy as np

from .. import devices
from ..random import _numpy_rng
from ..tensor import Tensor


class RandomCrop:
    """A random size x size window of a (C, H, W) image Tensor, after padding each side with
    `padding` zeros (torchvision's RandomCrop(size, padding)).

    With size equal to the image size this shifts the image by up to `padding` pixels each
    way, the kind of distortion LeCun et al. (1998) trained LeNet-5 on. The offsets come from
    `generator` (a minifw.Generator), or from minifw's global generator when None; give a
    generator of its own to a dataset that a prefetching DataLoader reads, so the draws do
    not interleave with the main thread's."""

    def __init__(self, size, padding=0, generator=None):
        size = (size, size) if isinstance(size, numbers.Integral) else tuple(size)
        if len(size) != 2 or any(isinstance(s, bool) or not isinstance(s, numbers.Integral)
                                 or s < 1 for s in size):
            raise ValueError(f"RandomCrop: size must be a positive int or a pair of them, got {size!r}")
        if isinstance(padding, bool) or not isinstance(padding, numbers.Integral) or padding < 0:
            raise ValueError(f"RandomCrop: padding must be an int >= 0, got {padding!r}")
        _numpy_rng(generator)  # a TypeError now rather than at the first sample
        self.size, self.padding, self.generator = (int(size[0]), int(size[1])), int(padding), generator

    def __call__(self, image):
        array = image._data if isinstance(image, Tensor) else np.asanyarray(image)
        dev = devices.of(array)
        if array.ndim != 3:
            raise ValueError(f"RandomCrop: image must be 3-D (C, H, W), got shape {array.shape}")
        p = self.padding
        if p:
            array = np.pad(array, ((0, 0), (p, p), (p, p)))
        (height, width), (h, w) = array.shape[1:], self.size
        if h > height or w > width:
            raise ValueError(f"RandomCrop: a {h}x{w} crop does not fit a {height}x{width} image "
                             f"(padding included)")
        rng = _numpy_rng(self.generator)
        top, left = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
        # np.pad returns a CPU array: the crop goes back to the image's device
        return Tensor._make(devices.to_device(array[:, top:top + h, left:left + w], dev))

    def __repr__(self):
        return f"RandomCrop(size={self.size}, padding={self.padding})"
