"""minifw.vision.transforms.functional and v2.functional against torchvision's own, where torchvision
is installed (each test skips without it): every function on float32 Tensors, uint8 arrays (what
torchvision holds as uint8 tensors) and PIL images (RGB and L) of two odd sizes, with several sets
of arguments each.

Tolerances, per kind of image:
- float32: 1e-5. minifw resamples (resize, rotate, affine, perspective, elastic) and blurs with
  weights in float64 and torch in float32, and the colour operations sum in another order: the
  results agree to a few float32 ulps of values in [0, 1].
- uint8: 1 level where the operation rounds a float result back to uint8 (resampling, blurring,
  colour blends and their truncation: a float32 intermediate one ulp apart can land on the other
  side of a rounding boundary; torchvision's v2 resizes uint8 in fixed point), 0 for the
  operations that move or compare values without arithmetic (crops, flips, pads, posterize,
  solarize, equalize, erase).
- PIL: 0 where both libraries call Pillow (crop, pad, resize, rotate, affine, perspective, the
  colour adjustments, ImageOps), 1 level where both go through the image's array (gaussian_blur,
  elastic_transform).
Nearest-neighbour resampling picks the pixel whose centre is closest: where a point falls exactly
halfway, float32 and float64 coordinates can pick different neighbours, so the nearest cases here
use angles and points that fall on no such tie.
"""
import types
import warnings

import numpy as np
import pytest

import minifw
import minifw.vision.transforms.functional as TF
import minifw.vision.transforms.v2.functional as F
from minifw.vision.transforms import InterpolationMode as Mode

RNG = np.random.default_rng(7)
SIZES = {"3x17x23": (3, 17, 23), "1x9x12": (1, 9, 12)}
FLOATS = {name: RNG.random(shape).astype(np.float32) for name, shape in SIZES.items()}
UINT8S = {name: RNG.integers(0, 256, shape, dtype=np.uint8) for name, shape in SIZES.items()}
EXACT, ONE_LEVEL, FLOAT_TOL = 0, 1, 1e-5


@pytest.fixture(scope="module")
def tv():
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchvision")
    from torchvision.transforms import functional as v1
    from torchvision.transforms.v2 import functional as v2

    return types.SimpleNamespace(torch=torch, v1=v1, v2=v2)


class Case:
    """One call: `name` of the function (the same in both libraries), `make(info)` giving its
    (args, kwargs) for an image (info.c, info.h, info.w, info.kind), the kinds of image it takes,
    and the largest difference allowed per kind."""

    def __init__(self, label, name, make, kinds=("float", "uint8", "pil"), tol=None, sizes=tuple(SIZES), v2=False):
        self.label, self.name, self.make, self.kinds, self.sizes, self.v2 = label, name, make, kinds, sizes, v2
        self.tol = {"float": FLOAT_TOL, "uint8": EXACT, "pil": EXACT, **(tol or {})}

    def __repr__(self):
        return f"{'v2' if self.v2 else 'v1'}.{self.name}-{self.label}"


def args(*a, **k):
    return lambda info: (a, k)


def fill_for(info, value_float, value_uint8):
    return value_float if info.kind == "float" else value_uint8


def corners(info):
    return [[0, 0], [info.w - 1, 0], [info.w - 1, info.h - 1], [0, info.h - 1]]


def moved_corners(info):  # fractional targets: no output pixel centre maps onto a half-pixel tie
    return [[1.3, 0.7], [info.w - 2.6, 1.9], [info.w - 0.4, info.h - 2.2], [0.8, info.h - 1.35]]


def displacement(info):
    field = np.random.default_rng(info.h).random((1, info.h, info.w, 2)).astype(np.float32)
    return (field - 0.5) * np.float32(0.4)


BLEND = {"uint8": ONE_LEVEL}  # a float result truncated or rounded back to uint8
ARRAY_PATH = {"uint8": ONE_LEVEL, "pil": ONE_LEVEL}

V1_CASES = [
    Case("size", "get_dimensions", args()), Case("size", "get_image_size", args()),
    Case("size", "get_image_num_channels", args()),
    Case("pair", "resize", args([7, 9]), tol=BLEND), Case("edge", "resize", args(5), tol=BLEND),
    Case("up", "resize", args([20, 30], Mode.BICUBIC), tol=BLEND),
    Case("no-aa", "resize", args([6, 5], Mode.BILINEAR, antialias=False), tol=BLEND),
    Case("bicubic-no-aa", "resize", args([6, 8], Mode.BICUBIC, antialias=False), tol=BLEND),
    Case("nearest", "resize", args([7, 5], Mode.NEAREST)),
    Case("nearest-exact", "resize", args([13, 30], Mode.NEAREST_EXACT)),
    Case("max-size", "resize", args(8, max_size=9), tol=BLEND),
    Case("lanczos", "resize", args([7, 9], Mode.LANCZOS), kinds=("pil",)),
    Case("box", "resize", args([5, 6], Mode.BOX), kinds=("pil",)),
    Case("inside", "crop", args(2, 3, 5, 6)), Case("outside", "crop", args(-2, 8, 5, 6)),
    Case("beyond", "crop", args(4, -3, 10, 4)),
    Case("int", "center_crop", args(5)), Case("pair", "center_crop", args([6, 4])),
    Case("larger", "center_crop", args([20, 25])),
    Case("pair", "resized_crop", args(1, 2, 6, 8, [5, 7]), tol=BLEND),
    Case("nearest", "resized_crop", args(0, 0, 9, 12, 4, Mode.NEAREST)),
    Case("constant", "pad", lambda info: (([1, 2, 3, 4],), {"fill": fill_for(info, 0.5, 3)})),
    Case("edge", "pad", args([2, 1], padding_mode="edge")),
    Case("reflect", "pad", args(3, padding_mode="reflect")),
    Case("symmetric", "pad", args([1, 2, 0, 3], padding_mode="symmetric")),
    Case("negative", "pad", args([-1, 2, 0, -2], padding_mode="reflect")),
    Case("negative-constant", "pad", args([-2, 1, 1, -1])),
    Case("", "hflip", args()), Case("", "vflip", args()),
    Case("bilinear", "rotate", args(33.0, Mode.BILINEAR), tol=BLEND),
    Case("nearest", "rotate", args(-47.3, Mode.NEAREST)),
    Case("expand", "rotate", args(121.0, Mode.BILINEAR, expand=True), tol=BLEND),
    Case("quarter", "rotate", args(90.0, Mode.BILINEAR, expand=True), tol=BLEND),
    Case("fill-center", "rotate", lambda info: ((-20.0, Mode.BILINEAR),
                                                {"center": [3, 4], "fill": fill_for(info, 0.5, 128)}), tol=BLEND),
    Case("bicubic", "rotate", args(17.0, Mode.BICUBIC, expand=True), kinds=("pil",)),
    Case("bilinear", "affine", lambda info: ((23.0, [2, -3], 1.1, [5.0, -7.0], Mode.BILINEAR),
                                             {"fill": fill_for(info, 0.25, 64), "center": [4, 5]}), tol=BLEND),
    Case("nearest", "affine", args(-15.3, [1, 1], 0.8, 10.0)),
    Case("shift", "affine", args(0.0, [3, -2], 1.0, 0.0)),
    Case("bilinear", "perspective", lambda info: ((corners(info), moved_corners(info)), {}), tol=BLEND),
    Case("nearest-fill", "perspective", lambda info: ((corners(info), moved_corners(info), Mode.NEAREST),
                                                      {"fill": fill_for(info, 0.75, 200)})),
    Case("bilinear", "elastic_transform", lambda info: ((displacement(info),), {}), tol=ARRAY_PATH),
    Case("fill", "elastic_transform", lambda info: ((displacement(info), Mode.BILINEAR),
                                                    {"fill": fill_for(info, 0.5, 100)}), tol=ARRAY_PATH),
    Case("dark", "adjust_brightness", args(0.7), tol=BLEND), Case("bright", "adjust_brightness", args(1.6), tol=BLEND),
    Case("zero", "adjust_brightness", args(0.0)),
    Case("flat", "adjust_contrast", args(0.0), tol=BLEND), Case("low", "adjust_contrast", args(0.5), tol=BLEND),
    Case("high", "adjust_contrast", args(1.8), tol=BLEND),
    Case("low", "adjust_saturation", args(0.3), tol=BLEND), Case("high", "adjust_saturation", args(1.5), tol=BLEND),
    Case("negative", "adjust_hue", args(-0.4), tol=BLEND), Case("positive", "adjust_hue", args(0.25), tol=BLEND),
    Case("sqrt", "adjust_gamma", args(0.5), tol=BLEND), Case("gain", "adjust_gamma", args(2.2, 1.3), tol=BLEND),
    Case("blur", "adjust_sharpness", args(0.0), tol=BLEND), Case("sharp", "adjust_sharpness", args(2.0), tol=BLEND),
    Case("half", "adjust_sharpness", args(0.5), tol=BLEND),
    Case("one", "rgb_to_grayscale", args(), tol=BLEND),
    # a 1-channel tensor with num_output_channels=3 stays 1 channel in v1 (v2 repeats it): 3 channels here
    Case("three", "rgb_to_grayscale", args(3), tol=BLEND, sizes=("3x17x23",)),
    Case("three-pil", "rgb_to_grayscale", args(3), kinds=("pil",)),
    Case("pil", "to_grayscale", args(3), kinds=("pil",)),
    Case("default-sigma", "gaussian_blur", args(5), tol=ARRAY_PATH),
    Case("pair", "gaussian_blur", args([3, 7], [0.8, 1.7]), tol=ARRAY_PATH),
    Case("number", "gaussian_blur", args(3, 0.5), tol=ARRAY_PATH),
    Case("", "invert", args()),
    Case("3", "posterize", args(3), kinds=("uint8", "pil")),
    Case("0", "posterize", args(0), kinds=("uint8",)),  # Pillow's ImageOps.posterize refuses 0 bits
    Case("8", "posterize", args(8), kinds=("uint8", "pil")),
    Case("", "solarize", lambda info: ((fill_for(info, 0.4, 100),), {})),
    Case("", "autocontrast", args(), tol=BLEND),
    Case("", "equalize", args(), kinds=("uint8", "pil")),
    Case("int", "five_crop", args(5)), Case("pair", "five_crop", args([4, 6])),
    Case("horizontal", "ten_crop", args(5)), Case("vertical", "ten_crop", args([6, 4], True)),
    Case("zeros", "erase", lambda info: ((2, 3, 4, 5, np.zeros((info.c, 1, 1), FLOATS_OR_UINT8[info.kind])), {}),
         kinds=("float", "uint8")),
    Case("patch", "erase", lambda info: ((1, 2, 4, 5, np.full((info.c, 4, 5), 0.5 if info.kind == "float" else 7,
                                                             FLOATS_OR_UINT8[info.kind])), {}),
         kinds=("float", "uint8")),
    Case("per-channel", "normalize", lambda info: (([0.5] * info.c, [0.25 + 0.1 * c for c in range(info.c)]), {}),
         kinds=("float",)),
    Case("", "to_tensor", args(), kinds=("pil",)), Case("", "pil_to_tensor", args(), kinds=("pil",)),
    Case("to-float", "convert_image_dtype", args(np.dtype(np.float32)), kinds=("uint8",)),
    Case("to-uint8", "convert_image_dtype", args(np.dtype(np.uint8)), kinds=("float",)),
    Case("", "to_pil_image", args(), kinds=("float",)),
]
FLOATS_OR_UINT8 = {"float": np.float32, "uint8": np.uint8}

V2_CASES = [
    Case("", "horizontal_flip", args(), v2=True), Case("", "vertical_flip", args(), v2=True),
    Case("size-none", "resize", args(None, max_size=10), tol=BLEND, v2=True),
    Case("pair", "resize", args([7, 9]), tol=BLEND, v2=True),
    Case("180", "rotate", args(180.0), v2=True), Case("90-expand", "rotate", args(90.0, expand=True), v2=True),
    Case("minus-90-expand", "rotate", args(-90.0, expand=True), v2=True),
    Case("bilinear", "rotate", args(33.0, Mode.BILINEAR), tol=BLEND, v2=True),
    Case("default-fill", "pad", args([1, 2, 3, 4]), v2=True),
    Case("per-channel-fill", "pad", lambda info: (([2, 1],), {"fill": [fill_for(info, 0.1, 9) * (c + 1)
                                                                      for c in range(info.c)]}),
         kinds=("float", "uint8"), v2=True),
    Case("points", "perspective", lambda info: ((corners(info), moved_corners(info)), {}), tol=BLEND, v2=True),
    Case("coefficients", "perspective", args(None, None, coefficients=[1.02, 0.05, -0.8, -0.03, 0.97, 0.6, 0.002,
                                                                      -0.001]), tol=BLEND, v2=True),
    Case("pil", "erase", lambda info: ((1, 2, 3, 4, np.array([9, 8, 7][:info.c], np.uint8).reshape(-1, 1, 1)), {}),
         kinds=("pil",), v2=True),
    Case("sqrt", "adjust_gamma", args(0.5), tol=BLEND, v2=True),
    Case("gain", "adjust_gamma", args(1.7, 1.2), tol=BLEND, v2=True),
    Case("float", "posterize", args(3), kinds=("float",), v2=True),
    Case("float", "equalize", args(), kinds=("float",), v2=True),
    Case("float", "solarize", args(0.6), kinds=("float",), v2=True),
    Case("scale-to-float", "to_dtype", args(np.dtype(np.float32), scale=True), kinds=("uint8",), v2=True),
    Case("scale-to-uint8", "to_dtype", args(np.dtype(np.uint8), scale=True), kinds=("float",), v2=True),
    Case("cast", "to_dtype", args(np.dtype(np.float64)), kinds=("float", "uint8"), v2=True),
    Case("to-float", "convert_image_dtype", args(), kinds=("uint8",), v2=True),
    Case("pil", "to_image", args(), kinds=("pil",), v2=True),
    Case("", "grayscale_to_rgb", args(), v2=True),
    Case("three", "rgb_to_grayscale", args(3), tol=BLEND, v2=True),
    Case("reverse", "permute_channels", lambda info: ((list(range(info.c))[::-1],), {}), v2=True),
    Case("", "get_size", args(), v2=True), Case("", "get_num_channels", args(), v2=True),
    Case("", "elastic", lambda info: ((displacement(info),), {}), tol=ARRAY_PATH, v2=True),
    Case("pair", "gaussian_blur", args([5, 3], [1.1, 0.6]), tol=ARRAY_PATH, v2=True),
    Case("float-translate", "affine", args(12.0, [1.5, -2.25], 0.9, [3.0, 4.0], Mode.BILINEAR), tol=BLEND,
         v2=True),
    Case("", "ten_crop", args(5), v2=True), Case("", "resized_crop", args(1, 2, 6, 8, 5), tol=BLEND, v2=True),
    Case("", "adjust_hue", args(0.3), tol=BLEND, v2=True),
    Case("", "adjust_sharpness", args(1.7), tol=BLEND, v2=True),
    Case("", "autocontrast", args(), tol=BLEND, v2=True),
]


def _params():
    for case in V1_CASES + V2_CASES:
        for kind in case.kinds:
            for size in case.sizes:
                yield pytest.param(case, kind, size, id=f"{case}-{kind}-{size}")


def _images(kind, size):
    """(ours, theirs-maker): the image minifw gets, and a function making torchvision's from torch."""
    if kind == "float":
        return minifw.tensor(FLOATS[size]), lambda torch: torch.from_numpy(FLOATS[size].copy())
    if kind == "uint8":
        return UINT8S[size].copy(), lambda torch: torch.from_numpy(UINT8S[size].copy())
    from PIL import Image

    hwc = UINT8S[size].transpose(1, 2, 0)
    image = Image.fromarray(hwc[:, :, 0], mode="L") if hwc.shape[2] == 1 else Image.fromarray(hwc, mode="RGB")
    return image.copy(), lambda torch: image.copy()


def _theirs(value, tv):
    """An argument as torchvision takes it: arrays as tensors, minifw's modes and dtypes as torch's."""
    if isinstance(value, Mode):
        return tv.v1.InterpolationMode(value.value)
    if isinstance(value, np.dtype):
        return getattr(tv.torch, value.name)
    if isinstance(value, np.ndarray):
        return tv.torch.from_numpy(value.copy())
    return value


def _pixels(image, tv):
    """Any library's image as a float64 NumPy array (PIL images with their mode's bands last)."""
    if isinstance(image, minifw.Tensor):
        return image.numpy().astype(np.float64)
    if isinstance(image, tv.torch.Tensor):
        return image.detach().cpu().numpy().astype(np.float64)
    return np.asarray(image).astype(np.float64)


def max_difference(case, kind, size, tv):
    """The largest difference between minifw's and torchvision's results for one case, after
    checking that both give the same kind of result of the same shape (and PIL mode)."""
    ours_image, make_theirs = _images(kind, size)
    c, h, w = SIZES[size]
    make_args, make_kwargs = case.make(types.SimpleNamespace(c=c, h=h, w=w, kind=kind))
    theirs_args = [_theirs(a, tv) for a in make_args]
    theirs_kwargs = {k: _theirs(v, tv) for k, v in make_kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecations, in both libraries
        ours = getattr(F if case.v2 else TF, case.name)(ours_image, *make_args, **make_kwargs)
        theirs = getattr(tv.v2 if case.v2 else tv.v1, case.name)(make_theirs(tv.torch), *theirs_args,
                                                                 **theirs_kwargs)
    if isinstance(theirs, (list, int)):  # sizes
        assert ours == theirs
        return 0.0
    pairs = list(zip(ours, theirs)) if isinstance(theirs, tuple) else [(ours, theirs)]
    assert len(pairs) == (len(theirs) if isinstance(theirs, tuple) else 1)
    worst = 0.0
    for a, b in pairs:
        if isinstance(b, tv.torch.Tensor):  # a Tensor or an array of the same dtype
            assert isinstance(a, (minifw.Tensor, np.ndarray)) and np.dtype(a.dtype).name == str(b.dtype)[6:]
        else:  # a PIL image of the same mode
            assert a.mode == b.mode and a.size == b.size
        pa, pb = _pixels(a, tv), _pixels(b, tv)
        assert pa.shape == pb.shape, (pa.shape, pb.shape)
        if pa.size:
            worst = max(worst, float(np.abs(pa - pb).max()))
    return worst


@pytest.mark.parametrize("case, kind, size", list(_params()))
def test_against_torchvision(case, kind, size, tv):
    assert max_difference(case, kind, size, tv) <= case.tol[kind]


def test_the_new_transforms_against_torchvisions_with_the_same_parameters(tv):
    torch, v1 = tv.torch, tv.v1
    from minifw.vision import transforms as T
    from torchvision import transforms as tvT

    image = FLOATS["3x17x23"]
    for ours, theirs in zip(T.FiveCrop(6)(minifw.tensor(image)), tvT.FiveCrop(6)(torch.from_numpy(image))):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for ours, theirs in zip(T.TenCrop((5, 7), True)(image), tvT.TenCrop((5, 7), True)(torch.from_numpy(image))):
        np.testing.assert_array_equal(ours, theirs.numpy())
    assert repr(T.FiveCrop(6)) == repr(tvT.FiveCrop(6)) and repr(T.TenCrop(6)) == repr(tvT.TenCrop(6))
    assert repr(T.RandomPerspective(0.3, 0.4)) == repr(tvT.RandomPerspective(0.3, 0.4))
    assert repr(T.ElasticTransform(20.0, 3.0)) == repr(tvT.ElasticTransform(20.0, 3.0))
    matrix, mean = RNG.standard_normal((48, 48)).astype(np.float32), RNG.standard_normal(48).astype(np.float32)
    batch = RNG.random((2, 3, 4, 4)).astype(np.float32)
    ours = T.LinearTransformation(minifw.tensor(matrix), minifw.tensor(mean))(minifw.tensor(batch))
    theirs = tvT.LinearTransformation(torch.from_numpy(matrix), torch.from_numpy(mean))(torch.from_numpy(batch))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)  # sums of 48 float32 products
    # the random transforms with torchvision's draws: its parameters, applied by minifw's functions
    start, end = tvT.RandomPerspective.get_params(23, 17, 0.5)
    np.testing.assert_allclose(TF.perspective(minifw.tensor(image), start, end, fill=[0.0] * 3).numpy(),
                               v1.perspective(torch.from_numpy(image), start, end, fill=[0.0] * 3).numpy(),
                               atol=FLOAT_TOL)
    field = tvT.ElasticTransform.get_params([30.0, 30.0], [4.0, 4.0], [17, 23])
    np.testing.assert_allclose(TF.elastic_transform(minifw.tensor(image), field.numpy(), fill=[0.0]).numpy(),
                               v1.elastic_transform(torch.from_numpy(image), field, fill=[0.0]).numpy(),
                               atol=FLOAT_TOL)
