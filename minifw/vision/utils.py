"""Pictures of image batches, as torchvision.utils: make_grid lays a batch out in one image,
save_image writes it as a PNG (with minifw's own small PNG writer: no Pillow needed)."""
import math
import numbers
import os
import struct
import zlib

import numpy as np

from .. import devices
from ..tensor import Tensor


def _host_array(tensor, fn):
    if isinstance(tensor, Tensor):
        return devices.to_device(tensor._data, devices.CPU)
    if devices.is_array(tensor):
        return devices.to_device(tensor, devices.CPU)
    raise TypeError(f"{fn}: tensor should be a Tensor, an array or a list of them, got "
                    f"{type(tensor).__name__}")


def _batch(tensor, fn):
    """(B, C, H, W) float array from a (B, C, H, W), (C, H, W) or (H, W) tensor, or a list of
    equally shaped (C, H, W) tensors; one channel becomes three (gray as RGB)."""
    if isinstance(tensor, (list, tuple)):
        if not tensor:
            raise ValueError(f"{fn}: got an empty list of images")
        images = [_host_array(t, fn) for t in tensor]
        shapes = {a.shape for a in images}
        if len(shapes) > 1:
            raise ValueError(f"{fn}: the images in the list must have one shape, got "
                             f"{sorted(shapes)}")
        array = np.stack(images)
    else:
        array = _host_array(tensor, fn)
    if array.ndim == 2:
        array = array[None]
    if array.ndim == 3:
        array = array[None]
    if array.ndim != 4:
        raise ValueError(f"{fn}: expected images of shape (B, C, H, W), (C, H, W) or (H, W), got "
                         f"shape {tuple(array.shape)}")
    if array.shape[1] == 1:
        array = np.repeat(array, 3, axis=1)
    return array.astype(np.float64 if array.dtype == np.float64 else np.float32)


def _rescale(array, value_range):
    low, high = (float(array.min()), float(array.max())) if value_range is None else value_range
    array = np.clip(array, low, high)
    return (array - low) / max(high - low, 1e-5)


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    """One (C, H', W') Tensor showing the images of a batch in rows of `nrow`, `padding` pixels
    of pad_value between them and around. normalize=True maps value_range (min, max), by default
    the batch's (with scale_each=True each image's own), to [0, 1], clamping what lies outside.
    One-channel images come out as three equal channels; a batch of one image is returned as
    that image (after normalizing), without padding."""
    fn = "make_grid"
    if isinstance(nrow, bool) or not isinstance(nrow, numbers.Integral) or nrow < 1:
        raise ValueError(f"{fn}: nrow must be an int >= 1, got {nrow!r}")
    if isinstance(padding, bool) or not isinstance(padding, numbers.Integral) or padding < 0:
        raise ValueError(f"{fn}: padding must be an int >= 0, got {padding!r}")
    if value_range is not None and (not isinstance(value_range, (tuple, list))
                                    or len(value_range) != 2):
        raise ValueError(f"{fn}: value_range must be a pair (min, max), got {value_range!r}")
    array = _batch(tensor, fn)
    if normalize:
        if scale_each:
            array = np.stack([_rescale(image, value_range) for image in array])
        else:
            array = _rescale(array, value_range)
    if array.shape[0] == 1:
        return Tensor._make(np.ascontiguousarray(array[0]))
    count, channels, height, width = array.shape
    columns = min(nrow, count)
    rows = math.ceil(count / columns)
    cell_h, cell_w = height + padding, width + padding
    grid = np.full((channels, rows * cell_h + padding, columns * cell_w + padding), pad_value,
                   dtype=array.dtype)
    for k, image in enumerate(array):
        top, left = (k // columns) * cell_h + padding, (k % columns) * cell_w + padding
        grid[:, top:top + height, left:left + width] = image
    return Tensor._make(grid)


def _png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode_png(pixels):
    """PNG bytes of a uint8 array (H, W) (gray), (H, W, 3) (RGB) or (H, W, 4) (RGBA): no
    filtering, one zlib stream (PNG specification, ISO/IEC 15948)."""
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8:
        raise TypeError(f"encode_png: pixels must be uint8, got {pixels.dtype}")
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    color_types = {1: 0, 3: 2, 4: 6}  # gray, RGB, RGBA
    if pixels.ndim != 3 or pixels.shape[2] not in color_types or 0 in pixels.shape[:2]:
        raise ValueError(f"encode_png: pixels must have shape (H, W), (H, W, 3) or (H, W, 4) with "
                         f"H, W >= 1, got {pixels.shape}")
    height, width, channels = pixels.shape
    header = struct.pack(">IIBBBBB", width, height, 8, color_types[channels], 0, 0, 0)
    rows = np.concatenate([np.zeros((height, 1), np.uint8),  # filter type 0 before every row
                           pixels.reshape(height, width * channels)], axis=1)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _png_chunk(b"IEND", b""))


def save_image(tensor, fp, format=None, **kwargs):
    """Save a tensor (or a batch, or a list of them, laid out by make_grid with **kwargs) of
    values in [0, 1] as a PNG: each value becomes round(255 x value) clamped to 0-255. fp is a
    path or a binary file; format, when given, must be "png" (minifw writes PNG only)."""
    if format is not None and str(format).lower() != "png":
        raise ValueError(f"save_image: minifw writes PNG files only, got format={format!r}")
    if format is None and not hasattr(fp, "write"):
        extension = os.path.splitext(os.fspath(fp))[1].lower()
        if extension != ".png":
            raise ValueError(f"save_image: minifw writes PNG files only; the file name should end "
                             f"in .png, got {os.fspath(fp)!r}")
    grid = make_grid(tensor, **kwargs).numpy()
    pixels = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    if pixels.shape[2] == 2:
        raise ValueError(f"save_image: an image of 2 channels has no PNG colour type, got shape "
                         f"{grid.shape}")
    data = encode_png(pixels)
    if hasattr(fp, "write"):
        fp.write(data)
    else:
        with open(fp, "wb") as f:
            f.write(data)
