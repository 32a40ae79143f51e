"""minifw.vision.transforms.functional and transforms.v2.functional without torchvision: each
function against values worked out by hand on tiny images, each function against the transform
class that applies it with fixed parameters, v2's functions against v1's where torchvision says
they coincide (and where they differ, the difference), the kind of image that comes back, the
new classes (FiveCrop, TenCrop, RandomPerspective, LinearTransformation, ElasticTransform) and
the argument checks."""
import colorsys
import warnings

import numpy as np
import pytest

import minifw
import minifw.vision.transforms.functional as TF
import minifw.vision.transforms.v2.functional as F
from minifw.data.worker import random_source
from minifw.vision import transforms as T
from minifw.vision.transforms import InterpolationMode

RNG = np.random.default_rng(0)
IMAGE = RNG.random((3, 9, 12)).astype(np.float32)  # C, H, W in [0, 1]
IMAGE_U8 = RNG.integers(0, 256, (3, 9, 12), dtype=np.uint8)
# channel c, row y, column x holds 100 c + 10 y + x: every pixel tells where it came from
CHW = (np.arange(3)[:, None, None] * 100 + np.arange(4)[None, :, None] * 10
       + np.arange(5)[None, None, :]).astype(np.float32)
TOL = dict(rtol=1e-5, atol=1e-6)  # float32 arithmetic in another order than the reference's


def seeded(seed=0):
    return minifw.Generator().manual_seed(seed)


def values(img):
    """The pixels of any kind of image as a NumPy array (PIL images (H, W[, C]) as they are)."""
    if isinstance(img, minifw.Tensor):
        return img.numpy()
    return np.asarray(img)


def gray(chw):
    return 0.2989 * chw[0] + 0.587 * chw[1] + 0.114 * chw[2]


# ---- the modules: torchvision's import lines with only the package renamed ---------------------------
def test_functional_modules_import_as_torchvisions_do():
    import minifw.data.transforms.functional as data_tf
    import minifw.vision.transforms.v2.functional as v2_f
    from minifw.vision.transforms import functional as from_tf
    from minifw.vision.transforms.v2 import functional as from_v2

    assert TF is from_tf is data_tf is T.functional is minifw.data.transforms_functional
    assert F is from_v2 is v2_f is T.v2.functional is minifw.data.transforms_v2_functional
    for module in (TF, F):
        assert all(callable(getattr(module, name)) for name in module.__all__), module.__name__


# torchvision 0.28's names of transforms.functional that minifw has (all of them)
V1_NAMES = ["adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue", "adjust_saturation",
            "adjust_sharpness", "affine", "autocontrast", "center_crop", "convert_image_dtype", "crop",
            "elastic_transform", "equalize", "erase", "five_crop", "gaussian_blur", "get_dimensions",
            "get_image_num_channels", "get_image_size", "hflip", "invert", "normalize", "pad", "perspective",
            "pil_to_tensor", "posterize", "resize", "resized_crop", "rgb_to_grayscale", "rotate", "solarize",
            "ten_crop", "to_grayscale", "to_pil_image", "to_tensor", "vflip", "InterpolationMode"]


@pytest.mark.parametrize("name", V1_NAMES)
def test_every_v1_name_is_there_and_v2_has_it_too(name):
    assert hasattr(TF, name)
    assert hasattr(F, name)


def test_v2_shares_v1s_functions_where_they_coincide():
    for name in ("adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation", "adjust_sharpness",
                 "affine", "autocontrast", "center_crop", "crop", "elastic_transform", "equalize", "five_crop",
                 "gaussian_blur", "get_dimensions", "invert", "normalize", "pil_to_tensor", "posterize",
                 "resized_crop", "rgb_to_grayscale", "solarize", "ten_crop", "to_pil_image"):
        assert getattr(F, name) is getattr(TF, name), name
    assert F.hflip is F.horizontal_flip and F.vflip is F.vertical_flip and F.elastic is F.elastic_transform
    assert F.to_grayscale is F.rgb_to_grayscale and F.resize_image is F.resize and F.to_dtype_image is F.to_dtype


# ---- hand-computed values on tiny images ---------------------------------------------------------------
def test_flips_of_a_two_by_three_image():
    image = np.array([[[1, 2, 3], [4, 5, 6]]], np.float32)
    np.testing.assert_array_equal(TF.hflip(image), [[[3, 2, 1], [6, 5, 4]]])
    np.testing.assert_array_equal(TF.vflip(minifw.tensor(image)).numpy(), [[[4, 5, 6], [1, 2, 3]]])
    flipped = TF.hflip(image)
    flipped[0, 0, 0] = 99
    assert image[0, 0, 2] == 3  # a copy, as torch.flip makes
    np.testing.assert_array_equal(F.horizontal_flip(image), TF.hflip(image))
    np.testing.assert_array_equal(F.vertical_flip(image), TF.vflip(image))


def test_crop_reads_its_window_and_zeros_outside_the_image():
    np.testing.assert_array_equal(TF.crop(minifw.tensor(CHW), 1, 2, 2, 3).numpy(), CHW[:, 1:3, 2:5])
    out = TF.crop(np.ones((1, 2, 2), np.float32), -1, -1, 3, 4)  # one row above, one column left
    np.testing.assert_array_equal(out[0], [[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0]])
    assert TF.crop(CHW, 10, 10, 2, 2).shape == (3, 2, 2) and not TF.crop(CHW, 10, 10, 2, 2).any()


def test_center_crop_rounds_half_to_even():
    np.testing.assert_array_equal(TF.center_crop(CHW, [2, 3]), CHW[:, 1:3, 1:4])
    np.testing.assert_array_equal(TF.center_crop(CHW, 2), CHW[:, 1:3, 2:4])  # left = round(1.5) = 2


def test_normalize_formula():
    mean, std = [0.0, 100.0, 200.0], [1.0, 2.0, 4.0]
    out = TF.normalize(minifw.tensor(CHW), mean, std)
    expected = (CHW - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None, None]
    np.testing.assert_array_equal(out.numpy(), expected)
    image = CHW.copy()
    assert TF.normalize(image, mean, std, inplace=True) is image
    np.testing.assert_array_equal(image, expected)


# the 1 x 2 x 2 image [[1, 2], [3, 4]] padded by one pixel on each side, in each mode
PADDED = {
    "constant": [[9, 9, 9, 9], [9, 1, 2, 9], [9, 3, 4, 9], [9, 9, 9, 9]],
    "edge": [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]],
    "reflect": [[4, 3, 4, 3], [2, 1, 2, 1], [4, 3, 4, 3], [2, 1, 2, 1]],
    "symmetric": [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]],
}


@pytest.mark.parametrize("mode", list(PADDED))
def test_pad_modes_on_a_two_by_two_image(mode):
    image = np.array([[[1, 2], [3, 4]]], np.float32)
    np.testing.assert_array_equal(TF.pad(image, 1, fill=9, padding_mode=mode)[0], PADDED[mode])
    np.testing.assert_array_equal(TF.pad(minifw.tensor(image), [1], 9, mode).numpy()[0], PADDED[mode])


def test_pad_sides_and_negative_padding_crops():
    image = np.array([[[1, 2, 3], [4, 5, 6]]], np.float32)
    assert TF.pad(image, [1, 2]).shape == (1, 2 + 4, 3 + 2)  # left/right 1, top/bottom 2
    assert TF.pad(image, [1, 0, 2, 3]).shape == (1, 2 + 3, 3 + 3)  # left, top, right, bottom
    np.testing.assert_array_equal(TF.pad(image, [-1, 0, 1, 0])[0], [[2, 3, 0], [5, 6, 0]])
    np.testing.assert_array_equal(TF.pad(image, [0, -1, 0, 0], padding_mode="edge")[0], [[4, 5, 6]])
    np.testing.assert_array_equal(F.pad(image, 1), TF.pad(image, 1, fill=0))  # v2's fill None is zeros


def test_adjust_gamma_formula_and_v2s_difference():
    x = np.array([[[0.0, 0.25, 0.5, 1.0]]], np.float32)
    np.testing.assert_allclose(TF.adjust_gamma(x, 2.0), x ** 2, **TOL)
    np.testing.assert_allclose(TF.adjust_gamma(x, 0.5, gain=1.5), np.clip(1.5 * np.sqrt(x), 0, 1), **TOL)
    u8 = np.array([[[0, 64, 128, 255]]], np.uint8)
    expected = (np.clip((u8 / np.float32(255)) ** 2, 0, 1) * np.float32(255.999)).astype(np.uint8)
    np.testing.assert_array_equal(TF.adjust_gamma(u8, 2.0), expected)  # [0, 16, 64, 255]
    assert TF.adjust_gamma(u8, 2.0).tolist() == [[[0, 16, 64, 255]]]
    over = np.array([[[2.0]]], np.float32)  # v1 clamps always, v2 only when gain != 1
    assert TF.adjust_gamma(over, 1.0).item() == 1.0 and F.adjust_gamma(over, 1.0).item() == 2.0


def test_colour_adjustments_formulas():
    x = IMAGE.astype(np.float64)
    np.testing.assert_allclose(TF.adjust_brightness(IMAGE, 1.3), np.clip(1.3 * x, 0, 1), **TOL)
    np.testing.assert_allclose(TF.adjust_contrast(IMAGE, 0.6), np.clip(0.6 * x + 0.4 * gray(x).mean(), 0, 1),
                               **TOL)
    np.testing.assert_allclose(TF.adjust_saturation(IMAGE, 1.7), np.clip(1.7 * x - 0.7 * gray(x), 0, 1), **TOL)
    np.testing.assert_allclose(TF.rgb_to_grayscale(minifw.tensor(IMAGE)).numpy()[0], gray(x), **TOL)
    np.testing.assert_array_equal(TF.rgb_to_grayscale(IMAGE, 3)[2], TF.rgb_to_grayscale(IMAGE)[0])
    np.testing.assert_array_equal(TF.to_grayscale(IMAGE), TF.rgb_to_grayscale(IMAGE))


def test_adjust_hue_against_colorsys():
    shift = -0.3
    out = TF.adjust_hue(IMAGE[:, :2, :3], shift)
    for y in range(2):
        for x in range(3):
            h, s, v = colorsys.rgb_to_hsv(*IMAGE[:, y, x])
            np.testing.assert_allclose(out[:, y, x], colorsys.hsv_to_rgb((h + shift) % 1.0, s, v), atol=1e-5)


def test_point_operations():
    np.testing.assert_allclose(TF.invert(IMAGE), 1 - IMAGE, **TOL)
    np.testing.assert_array_equal(TF.invert(IMAGE_U8), 255 - IMAGE_U8)
    np.testing.assert_array_equal(TF.posterize(IMAGE_U8, 3), IMAGE_U8 & 0b11100000)
    np.testing.assert_array_equal(TF.posterize(IMAGE, 2), np.floor(IMAGE * 4) / 4)
    np.testing.assert_array_equal(TF.solarize(IMAGE, 0.4), np.where(IMAGE >= 0.4, 1 - IMAGE, IMAGE))
    channel = np.array([[[2, 4], [6, 10]]], np.uint8)  # stretched from [2, 10] to [0, 255]
    np.testing.assert_array_equal(TF.autocontrast(channel), [[[0, 63, 127, 255][:2], [127, 255]]])


def test_equalize_by_hand():
    # 300 pixels of 0, 300 of 100, 10 of 200: step = (610 - 10) // 255 = 2, and value v maps to
    # (count of pixels below v + 1) // 2: 0 -> 0, 100 -> 301 // 2 = 150, 200 -> 601 // 2 -> 255
    image = np.array([0] * 300 + [100] * 300 + [200] * 10, np.uint8).reshape(1, 1, -1)
    out = TF.equalize(image)
    assert out.dtype == np.uint8 and sorted(set(out.ravel().tolist())) == [0, 150, 255]
    np.testing.assert_array_equal(out[0, 0, [0, 300, 600]], [0, 150, 255])


def test_adjust_sharpness_changes_the_inner_pixels_only():
    image = np.arange(9, dtype=np.float32).reshape(1, 3, 3) / 10
    smooth = (image.sum() + 4 * image[0, 1, 1]) / 13  # PIL's SMOOTH filter: centre 5, the rest 1
    out = TF.adjust_sharpness(image, 0.0)
    expected = image.copy()
    expected[0, 1, 1] = smooth
    np.testing.assert_allclose(out, expected, **TOL)
    np.testing.assert_allclose(TF.adjust_sharpness(image, 2.0)[0, 1, 1], 2 * image[0, 1, 1] - smooth, **TOL)


def test_gaussian_blur_of_a_delta():
    delta = np.zeros((1, 5, 5), np.float32)
    delta[0, 2, 2] = 1
    out = TF.gaussian_blur(delta, [3, 5], [1.0, 2.0])  # 3 taps across (sigma 1), 5 down (sigma 2)
    kx, ky = np.exp(-0.5 * np.arange(-1, 2) ** 2), np.exp(-0.5 * (np.arange(-2, 3) / 2.0) ** 2)
    kx, ky = kx / kx.sum(), ky / ky.sum()
    expected = np.zeros((5, 5))
    expected[:, 1:4] = np.outer(ky, kx)
    # rows 0 and 4 also see the delta reflected about the border (row -2 is row 2)
    expected[[0, 4], 1:4] += ky[0] * kx
    np.testing.assert_allclose(out[0], expected, **TOL)
    k = 3  # sigma None: 0.15 k + 0.35
    np.testing.assert_allclose(TF.gaussian_blur(delta, k), TF.gaussian_blur(delta, k, 0.15 * k + 0.35), **TOL)


def test_five_and_ten_crop_corners():
    tl, tr, bl, br, centre = TF.five_crop(CHW, 2)
    for crop, expected in ((tl, CHW[:, 0:2, 0:2]), (tr, CHW[:, 0:2, 3:5]), (bl, CHW[:, 2:4, 0:2]),
                           (br, CHW[:, 2:4, 3:5]), (centre, CHW[:, 1:3, 2:4])):
        np.testing.assert_array_equal(crop, expected)
    ten = TF.ten_crop(CHW, [2, 3])
    assert len(ten) == 10
    mirrored = TF.five_crop(CHW[:, :, ::-1], [2, 3])
    for crop, expected in zip(ten[5:], mirrored):
        np.testing.assert_array_equal(crop, expected)
    upside_down = TF.ten_crop(CHW, [2, 3], vertical_flip=True)[5:]
    np.testing.assert_array_equal(upside_down[0], CHW[:, 3:1:-1, 0:3])


def test_rotate_by_quarter_turns():
    square = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
    np.testing.assert_array_equal(TF.rotate(square, 90.0), np.rot90(square, 1, axes=(-2, -1)))
    wide = CHW[:1]
    np.testing.assert_array_equal(TF.rotate(wide, 180.0), wide[:, ::-1, ::-1])
    # v2 turns by np.rot90 when it can; v1 resamples and sizes an expanded output as Pillow does
    np.testing.assert_array_equal(F.rotate(wide, 90.0, expand=True), np.rot90(wide, 1, axes=(-2, -1)))
    assert TF.rotate(np.zeros((1, 6, 7), np.float32), 90.0, expand=True).shape == (1, 8, 7)
    np.testing.assert_array_equal(F.rotate(wide, 33.0, "bilinear"), TF.rotate(wide, 33.0, "bilinear"))
    assert F.rotate(wide, 0.0) is not wide and np.array_equal(F.rotate(wide, 360.0), wide)


def test_affine_translation_and_identity():
    out = TF.affine(CHW, angle=0.0, translate=[1, 0], scale=1.0, shear=0.0)
    np.testing.assert_array_equal(out[:, :, 1:], CHW[:, :, :-1])
    assert not out[:, :, 0].any()
    np.testing.assert_array_equal(TF.affine(CHW, 0.0, [0, 0], 1.0, [0.0, 0.0], fill=5.0), CHW)


def test_perspective_identity_and_shift():
    corners = [[0, 0], [4, 0], [4, 3], [0, 3]]
    np.testing.assert_allclose(TF.perspective(CHW, corners, corners), CHW, **TOL)
    shifted = [[x + 1, y] for x, y in corners]  # the corners move one pixel right: so does the image
    out = TF.perspective(CHW, corners, shifted)
    np.testing.assert_allclose(out[:, :, 1:], CHW[:, :, :-1], atol=1e-4)
    assert np.abs(out[:, :, 0]).max() < 1e-4
    identity = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    np.testing.assert_array_equal(F.perspective(CHW, None, None, coefficients=identity), CHW)
    np.testing.assert_array_equal(F.perspective(CHW, corners, shifted), out)


def test_elastic_transform_moves_by_the_displacement():
    height, width = CHW.shape[-2:]
    still = np.zeros((1, height, width, 2), np.float32)
    np.testing.assert_array_equal(TF.elastic_transform(CHW, still), CHW)
    one_pixel = still.copy()
    one_pixel[..., 0] = 2 / width  # each pixel reads the one to its right
    out = TF.elastic_transform(minifw.tensor(CHW), minifw.tensor(one_pixel)).numpy()
    np.testing.assert_allclose(out[:, :, :-1], CHW[:, :, 1:], atol=1e-4)
    assert np.abs(out[:, :, -1]).max() < 1e-4


def test_erase_writes_a_copy_unless_in_place():
    image = CHW.copy()
    out = TF.erase(image, 1, 2, 2, 3, np.zeros((3, 1, 1), np.float32))
    expected = CHW.copy()
    expected[:, 1:3, 2:5] = 0
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(image, CHW)
    tensor = minifw.tensor(CHW)
    assert TF.erase(tensor, 1, 2, 2, 3, minifw.tensor(-1.0), inplace=True) is tensor
    assert (tensor.numpy()[:, 1:3, 2:5] == -1).all() and tensor.numpy()[0, 0, 0] == 0


def test_sizes():
    assert TF.get_dimensions(CHW) == [3, 4, 5] and TF.get_dimensions(minifw.zeros(2, 4, 5)) == [2, 4, 5]
    assert TF.get_dimensions(CHW[0]) == [1, 4, 5] and TF.get_image_num_channels(CHW) == 3
    assert TF.get_image_size(CHW) == [5, 4] and F.get_size(CHW) == [4, 5] and F.get_num_channels(CHW) == 3
    with pytest.warns(UserWarning, match="get_image_size.*deprecated"):
        assert F.get_image_size(CHW) == [5, 4]


# ---- each function is its transform with fixed parameters -------------------------------------------
def _erasing_pair(image):
    generator = seeded(4)
    random_source(generator).random()  # RandomErasing's draw against p
    top, left, h, w, v = T.RandomErasing.get_params(image, (0.1, 0.3), (0.5, 2.0), [0.5], generator)
    return (TF.erase(image, top, left, h, w, v),
            T.RandomErasing(p=1.0, scale=(0.1, 0.3), ratio=(0.5, 2.0), value=[0.5], generator=seeded(4))(image))


def _perspective_pair(image):
    height, width = TF.get_dimensions(image)[1:]
    generator = seeded(5)
    random_source(generator).random()  # RandomPerspective's draw against p
    start, end = T.RandomPerspective.get_params(width, height, 0.6, generator)
    return (TF.perspective(image, start, end, fill=0),
            T.RandomPerspective(0.6, p=1.0, generator=seeded(5))(image))


def _elastic_pair(image):
    height, width = TF.get_dimensions(image)[1:]
    displacement = T.ElasticTransform.get_params([20.0, 30.0], [2.0, 3.0], [height, width], seeded(6))
    return (TF.elastic_transform(image, displacement, fill=[0.0]),
            T.ElasticTransform((20.0, 30.0), (2.0, 3.0), generator=seeded(6))(image))


PAIRS = [  # (function applied with fixed parameters, the transform that applies it)
    ("resize", lambda im: TF.resize(im, 5), T.Resize(5)),
    ("resize-nearest", lambda im: TF.resize(im, [4, 7], InterpolationMode.NEAREST),
     T.Resize([4, 7], InterpolationMode.NEAREST)),
    ("center_crop", lambda im: TF.center_crop(im, [5, 6]), T.CenterCrop([5, 6])),
    ("pad", lambda im: TF.pad(im, [1, 2, 3, 4], 3, "edge"), T.Pad([1, 2, 3, 4], 3, "edge")),
    ("hflip", TF.hflip, T.RandomHorizontalFlip(p=1.0)),
    ("vflip", TF.vflip, T.RandomVerticalFlip(p=1.0)),
    ("resized_crop", lambda im: TF.resized_crop(im, 0, 0, 9, 12, [5, 6]),
     T.RandomResizedCrop([5, 6], scale=(1.0, 1.0), ratio=(12 / 9, 12 / 9))),
    ("rotate", lambda im: TF.rotate(im, 33.0, InterpolationMode.BILINEAR, expand=True, fill=0),
     T.RandomRotation((33, 33), InterpolationMode.BILINEAR, expand=True)),
    ("affine", lambda im: TF.affine(im, 10.0, [0, 0], 1.2, [5.0, 3.0], fill=0),
     T.RandomAffine((10, 10), translate=(0, 0), scale=(1.2, 1.2), shear=(5, 5, 3, 3))),
    ("brightness", lambda im: TF.adjust_brightness(im, 1.3), T.ColorJitter(brightness=(1.3, 1.3))),
    ("contrast", lambda im: TF.adjust_contrast(im, 0.6), T.ColorJitter(contrast=(0.6, 0.6))),
    ("saturation", lambda im: TF.adjust_saturation(im, 1.7), T.ColorJitter(saturation=(1.7, 1.7))),
    ("hue", lambda im: TF.adjust_hue(im, 0.2), T.ColorJitter(hue=(0.2, 0.2))),
    ("grayscale", lambda im: TF.rgb_to_grayscale(im, 3), T.Grayscale(3)),
    ("gaussian_blur", lambda im: TF.gaussian_blur(im, 5, 0.9), T.GaussianBlur(5, (0.9, 0.9))),
    ("invert", TF.invert, T.RandomInvert(p=1.0)),
    ("posterize", lambda im: TF.posterize(im, 3), T.RandomPosterize(3, p=1.0)),
    ("solarize", lambda im: TF.solarize(im, 0.5), T.RandomSolarize(0.5, p=1.0)),
    ("sharpness", lambda im: TF.adjust_sharpness(im, 1.8), T.RandomAdjustSharpness(1.8, p=1.0)),
    ("autocontrast", TF.autocontrast, T.RandomAutocontrast(p=1.0)),
    ("equalize", TF.equalize, T.RandomEqualize(p=1.0)),
    ("normalize", lambda im: TF.normalize(im, [0.5, 0.4, 0.3], [0.2, 0.3, 0.4]),
     T.Normalize([0.5, 0.4, 0.3], [0.2, 0.3, 0.4])),
    ("five_crop", lambda im: TF.five_crop(im, 4), T.FiveCrop(4)),
    ("ten_crop", lambda im: TF.ten_crop(im, [4, 5], True), T.TenCrop([4, 5], vertical_flip=True)),
]


@pytest.mark.parametrize("image", [pytest.param(IMAGE, id="float-array"), pytest.param(IMAGE_U8, id="uint8")])
@pytest.mark.parametrize("name, function, transform", PAIRS, ids=[p[0] for p in PAIRS])
def test_function_is_its_transform_with_fixed_parameters(name, function, transform, image):
    if name in ("normalize", "solarize") and image.dtype == np.uint8:
        image = IMAGE  # floats only (solarize's threshold is in the float scale)
    for img in (image, minifw.tensor(image) if image.dtype != np.uint8 else image.copy()):
        ours, theirs = function(img), transform(img)
        for a, b in zip(ours if isinstance(ours, tuple) else [ours], theirs if isinstance(theirs, tuple) else [theirs]):
            assert type(a) is type(b) is type(img)
            np.testing.assert_array_equal(values(a), values(b))


@pytest.mark.parametrize("pair", [_erasing_pair, _perspective_pair, _elastic_pair])
def test_function_is_its_random_transform_with_the_same_draws(pair):
    for image in (IMAGE, minifw.tensor(IMAGE)):
        ours, theirs = pair(image)
        assert type(ours) is type(theirs) is type(image)
        np.testing.assert_array_equal(values(ours), values(theirs))
        assert not np.array_equal(values(ours), values(image))


def test_conversions_are_their_transforms():
    hwc = RNG.integers(0, 256, (4, 5, 3), dtype=np.uint8)
    np.testing.assert_array_equal(TF.to_tensor(hwc).numpy(), T.ToTensor()(hwc).numpy())
    assert TF.convert_image_dtype is T.convert_image_dtype and TF.to_pil_image is T.to_pil_image
    np.testing.assert_array_equal(F.to_image(hwc), hwc.transpose(2, 0, 1))
    assert F.to_image(minifw.tensor(IMAGE)).shape == IMAGE.shape
    scaled = F.to_dtype(IMAGE_U8, minifw.float32, scale=True)  # v2: times 1 / 255
    np.testing.assert_array_equal(scaled.numpy(), IMAGE_U8.astype(np.float32) * np.float32(1 / 255))
    np.testing.assert_array_equal(F.convert_image_dtype(IMAGE_U8).numpy(), scaled.numpy())
    # v1 divides by 255 and keeps an array an array; v2's to_dtype makes a Tensor of a dtype Tensors hold
    np.testing.assert_array_equal(TF.convert_image_dtype(IMAGE_U8), IMAGE_U8 / np.float32(255))
    assert F.to_dtype(IMAGE_U8, np.int64).numpy().tolist() == IMAGE_U8.tolist()  # a cast without scale
    with pytest.warns(UserWarning, match="to_tensor.*deprecated"):
        np.testing.assert_array_equal(F.to_tensor(hwc).numpy(), TF.to_tensor(hwc).numpy())


# ---- v2's own functions ----------------------------------------------------------------------------
def test_v2_resize_with_size_none_makes_the_longer_edge_max_size():
    assert F.resize(IMAGE, None, max_size=8).shape == (3, 6, 8)
    np.testing.assert_array_equal(F.resize(IMAGE, None, max_size=8), TF.resize(IMAGE, [6, 8]))
    np.testing.assert_array_equal(F.resize(IMAGE, 5), TF.resize(IMAGE, 5))


def test_grayscale_to_rgb_and_permute_channels():
    one = IMAGE[:1]
    np.testing.assert_array_equal(F.grayscale_to_rgb(one), np.repeat(one, 3, axis=0))
    assert F.grayscale_to_rgb(IMAGE) is IMAGE
    np.testing.assert_array_equal(F.permute_channels(IMAGE, [2, 0, 1]), IMAGE[[2, 0, 1]])
    tensor = F.permute_channels(minifw.tensor(np.stack([IMAGE, IMAGE])), [1, 1, 0])
    np.testing.assert_array_equal(tensor.numpy()[1], IMAGE[[1, 1, 0]])


def test_gaussian_noise():
    np.testing.assert_allclose(F.gaussian_noise(IMAGE, mean=0.25, sigma=0.0), np.clip(IMAGE + 0.25, 0, 1), **TOL)
    np.testing.assert_array_equal(F.gaussian_noise(IMAGE_U8, mean=0.5, sigma=0.0),
                                  np.clip(IMAGE_U8.astype(np.int64) + 127, 0, 255))  # 127.5 truncated
    flat = np.full((1, 64, 64), 0.5, np.float32)
    minifw.manual_seed(3)
    noisy = F.gaussian_noise(minifw.tensor(flat), sigma=0.1, clip=False).numpy()
    minifw.manual_seed(3)
    np.testing.assert_array_equal(F.gaussian_noise(minifw.tensor(flat), sigma=0.1, clip=False).numpy(), noisy)
    assert abs((noisy - flat).std() - 0.1) < 0.01 and abs((noisy - flat).mean()) < 0.01  # 4096 draws
    assert F.gaussian_noise(flat, sigma=2.0).min() == 0.0 and F.gaussian_noise(flat, sigma=2.0).max() == 1.0


def test_gaussian_noise_records_the_sum_for_a_tensor_that_requires_grad():
    image = minifw.tensor(IMAGE, requires_grad=True)
    F.gaussian_noise(image, sigma=0.01, clip=False).sum().backward()
    np.testing.assert_array_equal(image.grad.numpy(), np.ones_like(IMAGE))


# ---- the kind of image that comes back ------------------------------------------------------------------
KINDS = [  # functions that give back one image of the kind they are given
    ("resize", lambda im: TF.resize(im, [5, 6])), ("crop", lambda im: TF.crop(im, 1, 1, 3, 3)),
    ("center_crop", lambda im: TF.center_crop(im, 3)), ("pad", lambda im: TF.pad(im, 1)),
    ("hflip", TF.hflip), ("vflip", TF.vflip), ("rotate", lambda im: TF.rotate(im, 20.0)),
    ("affine", lambda im: TF.affine(im, 10.0, [1, 1], 0.9, 4.0)),
    ("perspective", lambda im: TF.perspective(im, [[0, 0], [11, 0], [11, 8], [0, 8]],
                                              [[1, 1], [10, 0], [11, 7], [0, 8]])),
    ("elastic", lambda im: TF.elastic_transform(im, np.full((1, 9, 12, 2), 0.05, np.float32))),
    ("brightness", lambda im: TF.adjust_brightness(im, 0.7)), ("gamma", lambda im: TF.adjust_gamma(im, 1.5)),
    ("hue", lambda im: TF.adjust_hue(im, 0.1)), ("sharpness", lambda im: TF.adjust_sharpness(im, 0.5)),
    ("grayscale", TF.rgb_to_grayscale), ("blur", lambda im: TF.gaussian_blur(im, 3)),
    ("invert", TF.invert), ("autocontrast", TF.autocontrast), ("equalize", TF.equalize),
    ("v2-rotate", lambda im: F.rotate(im, 90.0, expand=True)), ("v2-gamma", lambda im: F.adjust_gamma(im, 2.0)),
    ("v2-erase", lambda im: F.erase(im, 1, 1, 2, 2, 0)), ("v2-permute", lambda im: F.permute_channels(im, [1, 0, 2])),
]


@pytest.mark.parametrize("name, function", KINDS, ids=[k[0] for k in KINDS])
def test_tensors_give_tensors_and_arrays_arrays(name, function):
    out = function(minifw.tensor(IMAGE))
    assert isinstance(out, minifw.Tensor) and out.dtype == minifw.float32, name
    out = function(IMAGE_U8)
    assert isinstance(out, np.ndarray) and out.dtype == np.uint8, name


@pytest.mark.parametrize("name, function", KINDS, ids=[k[0] for k in KINDS])
def test_pil_images_give_pil_images_of_their_mode(name, function):
    Image = pytest.importorskip("PIL.Image")
    image = Image.fromarray(IMAGE_U8.transpose(1, 2, 0), mode="RGB")
    out = function(image)
    assert isinstance(out, Image.Image) and out.mode in ("RGB", "L"), name


def test_pil_operations_use_pillow_as_torchvisions_do():
    Image = pytest.importorskip("PIL.Image")
    image = Image.fromarray(IMAGE_U8.transpose(1, 2, 0), mode="RGB")
    assert np.array_equal(np.asarray(TF.crop(image, -1, 2, 4, 5)), np.asarray(image.crop((2, -1, 7, 3))))
    gamma = [int(255.999 * 1.2 * (v / 255.0) ** 0.8) for v in range(256)]  # the lookup table, clipped
    expected = np.minimum(np.asarray(gamma), 255)[np.asarray(image)]
    np.testing.assert_array_equal(np.asarray(TF.adjust_gamma(image, 0.8, 1.2)), expected)
    # blur and elastic work on the image's array, as torchvision's go through pil_to_tensor
    np.testing.assert_array_equal(np.asarray(TF.gaussian_blur(image, 3, 0.8)).transpose(2, 0, 1),
                                  TF.gaussian_blur(IMAGE_U8, 3, 0.8))
    erased = F.erase(image, 1, 2, 3, 4, np.array([9, 8, 7]).reshape(3, 1, 1))
    assert erased.mode == "RGB" and erased.getpixel((2, 1)) == (9, 8, 7)
    assert erased.getpixel((0, 0)) == image.getpixel((0, 0))
    assert F.grayscale_to_rgb(image.convert("L")).mode == "RGB"
    swapped = F.permute_channels(image, [2, 1, 0])
    assert swapped.getpixel((3, 4)) == image.getpixel((3, 4))[::-1]
    assert TF.get_dimensions(image) == [3, 9, 12] and TF.get_dimensions(image.convert("L")) == [1, 9, 12]
    assert TF.pil_to_tensor(image).tolist() == T.PILToTensor()(image).tolist()


# ---- tensors on the GPU devices stay there ----------------------------------------------------------
@pytest.fixture(params=["cudasim", "cuda"])
def gpu_device(request):
    if request.param == "cuda":
        return request.getfixturevalue("emulated_cuda")
    return minifw.device("cudasim")


ON_DEVICE = [
    lambda im: TF.crop(im, -1, 3, 5, 11), lambda im: TF.pad(im, [-1, 2, 1, 0], padding_mode="reflect"),
    lambda im: TF.perspective(im, [[0, 0], [11, 0], [11, 8], [0, 8]], [[1, 1], [10, 0], [11, 7], [0, 8]]),
    lambda im: TF.elastic_transform(im, np.full((1, 9, 12, 2), 0.05, np.float32)),
    lambda im: TF.erase(im, 1, 2, 3, 4, minifw.zeros(3, 1, 1)), lambda im: TF.five_crop(im, 4)[1],
    lambda im: TF.adjust_gamma(im, 0.6), lambda im: F.rotate(im, 270.0, expand=True),
    lambda im: F.permute_channels(im, [1, 2, 0]), lambda im: TF.gaussian_blur(im, 3),
    lambda im: T.LinearTransformation(np.eye(27, dtype=np.float32), np.zeros(27, np.float32))(im[:, :3, :3]),
]


def test_functions_keep_a_tensor_on_its_device(gpu_device):
    image = minifw.tensor(IMAGE, device=gpu_device)
    for function in ON_DEVICE:
        out = function(image)
        assert out.device == image.device
        np.testing.assert_allclose(out.cpu().numpy(), function(minifw.tensor(IMAGE)).numpy(), rtol=1e-6, atol=1e-7)
    minifw.manual_seed(1)
    noisy = F.gaussian_noise(image)
    minifw.manual_seed(1)
    assert noisy.device == image.device
    np.testing.assert_array_equal(noisy.cpu().numpy(), F.gaussian_noise(minifw.tensor(IMAGE)).numpy())


# ---- the new transforms ------------------------------------------------------------------------------
def test_five_and_ten_crop_reprs_as_torchvisions():
    assert repr(T.FiveCrop(4)) == "FiveCrop(size=(4, 4))"
    assert repr(T.TenCrop((3, 4))) == "TenCrop(size=(3, 4), vertical_flip=False)"
    assert repr(T.RandomPerspective()) == "RandomPerspective(p=0.5)"
    assert repr(T.ElasticTransform()) == ("ElasticTransform(alpha=[50.0, 50.0], sigma=[5.0, 5.0], "
                                          "interpolation=InterpolationMode.BILINEAR, fill=[0.0])")


def test_random_perspective_draws_corners_within_reach():
    width, height = 12, 9
    for seed in range(20):
        start, end = T.RandomPerspective.get_params(width, height, 0.5, seeded(seed))
        assert start == [[0, 0], [11, 0], [11, 8], [0, 8]]
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = end
        # half the width is 6, so corners move up to int(0.5 * 6) = 3 pixels in x, int(0.5 * 4) = 2 in y
        assert 0 <= x0 <= 3 and 8 <= x1 <= 11 and 8 <= x2 <= 11 and 0 <= x3 <= 3
        assert 0 <= y0 <= 2 and 0 <= y1 <= 2 and 6 <= y2 <= 8 and 6 <= y3 <= 8
    assert T.RandomPerspective(p=0.0)(IMAGE) is IMAGE
    np.testing.assert_allclose(T.RandomPerspective(0.0, p=1.0)(IMAGE), IMAGE, **TOL)  # corners stay put


def test_linear_transformation():
    flat = IMAGE[:, :2, :2].reshape(-1)  # 12 values
    matrix = RNG.standard_normal((12, 12)).astype(np.float32)
    mean = RNG.standard_normal(12).astype(np.float32)
    transform = T.LinearTransformation(minifw.tensor(matrix), minifw.tensor(mean))
    image = minifw.tensor(IMAGE[:, :2, :2], requires_grad=True)
    out = transform(image)
    assert isinstance(out, minifw.Tensor) and out.shape == (3, 2, 2)
    np.testing.assert_allclose(out.detach().numpy().reshape(-1), (flat - mean) @ matrix, rtol=1e-5, atol=1e-5)
    out.sum().backward()  # d(sum of (x - m) M) / dx_i = sum_j M_ij
    np.testing.assert_allclose(image.grad.numpy().reshape(-1), matrix.sum(axis=1), rtol=1e-5, atol=1e-5)
    batch = np.stack([IMAGE[:, :2, :2], IMAGE[:, 2:4, :2]])
    arrays = T.LinearTransformation(matrix, mean)(batch)
    assert isinstance(arrays, np.ndarray) and arrays.shape == (2, 3, 2, 2)
    np.testing.assert_allclose(arrays[1].reshape(-1), (batch[1].reshape(-1) - mean) @ matrix, rtol=1e-5, atol=1e-5)
    assert repr(T.LinearTransformation(np.eye(2), np.zeros(2))) == (
        "LinearTransformation(transformation_matrix=[[1.0, 0.0], [0.0, 1.0]], mean_vector=[0.0, 0.0])")


def test_elastic_transform_draws_a_smooth_bounded_displacement():
    displacement = T.ElasticTransform.get_params([6.0, 9.0], [0.0, 0.0], [9, 12], seeded(1))
    assert isinstance(displacement, minifw.Tensor) and displacement.shape == (1, 9, 12, 2)
    moves = displacement.numpy()
    assert np.abs(moves[..., 0]).max() <= 6.0 / 12 and np.abs(moves[..., 1]).max() <= 9.0 / 9
    smooth = T.ElasticTransform.get_params([6.0, 9.0], [2.0, 2.0], [9, 12], seeded(1)).numpy()
    assert np.abs(np.diff(smooth[0, :, :, 0], axis=1)).mean() < np.abs(np.diff(moves[0, :, :, 0], axis=1)).mean()
    np.testing.assert_array_equal(T.ElasticTransform(0.0)(IMAGE), IMAGE)  # alpha 0: nothing moves
    first = T.ElasticTransform(generator=seeded(2))(minifw.tensor(IMAGE)).numpy()
    np.testing.assert_array_equal(T.ElasticTransform(generator=seeded(2))(minifw.tensor(IMAGE)).numpy(), first)


@pytest.mark.parametrize("name", ["FiveCrop", "TenCrop", "RandomPerspective", "ElasticTransform",
                                  "LinearTransformation"])
def test_the_new_transforms_are_in_v2_too(name):
    assert issubclass(getattr(T.v2, name), getattr(T, name)) and name in T.v2.__all__


def test_v2s_new_transforms_take_samples():
    crops, label = T.v2.FiveCrop(4)(IMAGE, 7)
    assert label == 7 and len(crops) == 5
    np.testing.assert_array_equal(crops[4], TF.center_crop(IMAGE, 4))
    warped, label = T.v2.RandomPerspective(p=1.0, generator=seeded(3))(minifw.tensor(IMAGE), 7)
    np.testing.assert_array_equal(warped.numpy(), T.RandomPerspective(p=1.0, generator=seeded(3))(IMAGE))
    assert label == 7


# ---- argument checks ----------------------------------------------------------------------------------
ERRORS = [  # (id, call, error, message)
    ("crop-height", lambda: TF.crop(CHW, 0, 0, -1, 2), ValueError, "crop: height must be an int >= 0, got -1"),
    ("crop-top", lambda: TF.crop(CHW, 0.5, 0, 1, 2), ValueError, "crop: top must be an int, got 0.5"),
    ("normalize-std", lambda: TF.normalize(CHW, [0.5], [0.0]), ValueError, "normalize: std evaluated to zero"),
    ("normalize-uint8", lambda: TF.normalize(IMAGE_U8, [0.5], [1.0]), TypeError,
     "normalize: the image must hold floats, got dtype uint8"),
    ("normalize-mean", lambda: TF.normalize(CHW, [0.1, 0.2], [1.0]), ValueError,
     "normalize: mean has 2 values for an image of 3 channels"),
    ("pad-mode", lambda: TF.pad(CHW, 1, padding_mode="wrap"), ValueError,
     "pad: padding_mode must be one of constant, edge, reflect, symmetric; got 'wrap'"),
    ("pad-three", lambda: TF.pad(CHW, (1, 2, 3)), ValueError,
     r"pad: padding must be an int or a sequence of 1, 2 or 4 ints, got \(1, 2, 3\)"),
    ("pad-negative", lambda: TF.pad(CHW, -3), ValueError, "pad: negative padding -3 crops more than the image's"),
    ("pad-fill", lambda: TF.pad(CHW, 1, fill=(1, 2)), ValueError, "pad: fill has 2 values for an image of 3 channels"),
    ("hue", lambda: TF.adjust_hue(IMAGE, 0.7), ValueError,
     r"adjust_hue: hue_factor must be a number in \[-0.5, 0.5\], got 0.7"),
    ("brightness", lambda: TF.adjust_brightness(IMAGE, -1), ValueError,
     "adjust_brightness: brightness_factor must be a number >= 0, got -1"),
    ("contrast-channels", lambda: TF.adjust_contrast(IMAGE[:2], 0.5), ValueError,
     r"adjust_contrast: expected an image of shape \(..., C, H, W\) with C in 1 or 3, got shape \(2, 9, 12\)"),
    ("gamma", lambda: TF.adjust_gamma(IMAGE, -0.5), ValueError, "adjust_gamma: gamma must be a number >= 0, got -0.5"),
    ("sharpness-str", lambda: TF.adjust_sharpness(IMAGE, "2"), TypeError,
     "adjust_sharpness: sharpness_factor must be a number, got '2'"),
    ("resize-size", lambda: TF.resize(IMAGE, 0), ValueError, "resize: size must hold positive ints, got 0"),
    ("resize-max-size", lambda: TF.resize(IMAGE, [4, 4], max_size=9), ValueError, "resize: max_size applies when size"),
    ("resize-lanczos", lambda: TF.resize(IMAGE, 4, InterpolationMode.LANCZOS), ValueError,
     "resize a PIL image for the others"),
    ("rotate-bicubic", lambda: TF.rotate(IMAGE, 10.0, "bicubic"), ValueError,
     "rotate: a tensor or array image can be transformed with nearest or bilinear interpolation, got bicubic"),
    ("rotate-angle", lambda: TF.rotate(IMAGE, "90"), TypeError, "rotate: angle must be a number, got '90'"),
    ("rotate-center", lambda: TF.rotate(IMAGE, 9.0, center=3), TypeError, r"rotate: center must be a point \(x, y\)"),
    ("rotate-fill", lambda: TF.rotate(IMAGE, 9.0, fill=(1, 2)), ValueError,
     "rotate: fill has 2 values for an image of 3 channels"),
    ("affine-scale", lambda: TF.affine(IMAGE, 0.0, [1, 2], 0.0, 0.0), ValueError,
     "affine: scale must be a number > 0, got 0.0"),
    ("affine-translate", lambda: TF.affine(IMAGE, 0.0, [1], 1.0, 0.0), TypeError,
     r"affine: translate must be a sequence \(tx, ty\)"),
    ("affine-shear", lambda: TF.affine(IMAGE, 0.0, [1, 2], 1.0, [1, 2, 3]), TypeError,
     "affine: shear must be a number or a sequence"),
    ("blur-kernel", lambda: TF.gaussian_blur(IMAGE, 4), ValueError,
     "gaussian_blur: kernel_size must be an odd positive int"),
    ("blur-sigma", lambda: TF.gaussian_blur(IMAGE, 3, 0.0), ValueError,
     "gaussian_blur: sigma must hold numbers > 0, got 0.0"),
    ("five-crop-size", lambda: TF.five_crop(CHW, [5, 6]), ValueError,
     r"five_crop: size \(5, 6\) is larger than the image's \(height, width\) \(4, 5\)"),
    ("ten-crop-size", lambda: TF.ten_crop(CHW, 0), ValueError, "ten_crop: size must be a positive int"),
    ("perspective-points", lambda: TF.perspective(CHW, [[0, 0]] * 3, [[0, 0]] * 3), ValueError,
     r"perspective: startpoints and endpoints must be four corners \[x, y\] each"),
    ("elastic-shape", lambda: TF.elastic_transform(CHW, np.zeros((1, 5, 4, 2))), ValueError,
     r"elastic_transform: displacement should have shape \(1, H, W, 2\) = \(1, 4, 5, 2\)"),
    ("elastic-list", lambda: TF.elastic_transform(CHW, [[0.0]]), TypeError,
     "elastic_transform: displacement must be a Tensor or an array"),
    ("erase-h", lambda: TF.erase(CHW, 0, 0, -2, 2, 0.0), ValueError, "erase: h must be an int >= 0, got -2"),
    ("erase-v-shape", lambda: TF.erase(CHW, 0, 0, 2, 2, np.zeros((2, 1, 1))), ValueError,
     r"erase: v of shape \(2, 1, 1\) does not broadcast to the erased region of shape \(3, 2, 2\)"),
    ("erase-v-str", lambda: TF.erase(CHW, 0, 0, 2, 2, "black"), TypeError,
     "erase: v must be a Tensor, an array or a number, got str"),
    ("posterize-bits", lambda: TF.posterize(IMAGE_U8, 9), ValueError,
     r"posterize: bits must be an int in \[0, 8\], got 9"),
    ("solarize-threshold", lambda: TF.solarize(IMAGE, 2), ValueError, "solarize: threshold must be at most 1"),
    ("grayscale-channels", lambda: TF.rgb_to_grayscale(IMAGE, 2), ValueError,
     "rgb_to_grayscale: num_output_channels must be 1 or 3, got 2"),
    ("hflip-list", lambda: TF.hflip([[1, 2]]), TypeError,
     "hflip: img should be a PIL Image, a Tensor or an array, got list"),
    ("to-tensor-list", lambda: TF.to_tensor([1]), TypeError, "to_tensor: pic should be a PIL Image or a NumPy array"),
    ("pil-to-tensor-array", lambda: TF.pil_to_tensor(IMAGE), TypeError,
     "pil_to_tensor: pic should be a PIL Image, got ndarray"),
    ("v2-resize-none", lambda: F.resize(IMAGE, None), ValueError,
     "resize: max_size must be a positive int when size is None, got None"),
    ("v2-perspective-both", lambda: F.perspective(CHW, [[0, 0]] * 4, [[0, 0]] * 4, coefficients=[0.0] * 8), ValueError,
     "perspective: give either startpoints and endpoints or coefficients, not both"),
    ("v2-perspective-neither", lambda: F.perspective(CHW, None, None), ValueError,
     "perspective: give startpoints and endpoints, or coefficients"),
    ("v2-perspective-7", lambda: F.perspective(CHW, None, None, coefficients=[1.0] * 7), ValueError,
     "perspective: coefficients must be a sequence of 8 numbers"),
    ("v2-permute", lambda: F.permute_channels(CHW, [0, 1]), ValueError,
     r"permute_channels: permutation must be a sequence of 3 channel indices in \[0, 2\]"),
    ("v2-noise-sigma", lambda: F.gaussian_noise(IMAGE, sigma=-1), ValueError,
     "gaussian_noise: sigma must be a number >= 0, got -1"),
    ("v2-noise-int64", lambda: F.gaussian_noise(minifw.zeros(1, 2, 2, dtype=minifw.int64)), TypeError,
     "gaussian_noise: the image must hold floats or uint8 values, got dtype int64"),
    ("v2-to-image-list", lambda: F.to_image([1, 2]), TypeError,
     "to_image: inpt should be a PIL Image, a Tensor or an array, got list"),
    ("v2-to-dtype-str", lambda: F.to_dtype(IMAGE, "float"), TypeError,
     "to_dtype: dtype must be a dtype of bools, integers or floats"),
    ("v2-grayscale-to-rgb", lambda: F.grayscale_to_rgb(IMAGE[:2]), ValueError,
     "grayscale_to_rgb: expected an image of 1 channel"),
    ("FiveCrop", lambda: T.FiveCrop(0), ValueError, "FiveCrop: size must be a positive int"),
    ("RandomPerspective-scale", lambda: T.RandomPerspective(1.5), ValueError,
     r"RandomPerspective: distortion_scale must be a number in \[0, 1\], got 1.5"),
    ("RandomPerspective-p", lambda: T.RandomPerspective(p=2), ValueError,
     r"RandomPerspective: p must be a probability in \[0, 1\], got 2"),
    ("LinearTransformation-square", lambda: T.LinearTransformation(np.zeros((2, 3)), np.zeros(2)), ValueError,
     r"LinearTransformation: transformation_matrix should be square \(D, D\), got shape \(2, 3\)"),
    ("LinearTransformation-mean", lambda: T.LinearTransformation(np.eye(2), np.zeros(3)), ValueError,
     r"LinearTransformation: mean_vector should have shape \(2,\), one value per row"),
    ("LinearTransformation-dtype", lambda: T.LinearTransformation(np.eye(2), np.zeros(2, np.float32)), ValueError,
     "LinearTransformation: transformation_matrix and mean_vector should have the same dtype"),
    ("LinearTransformation-size", lambda: T.LinearTransformation(np.eye(4), np.zeros(4))(IMAGE), ValueError,
     r"LinearTransformation: an image of shape \(..., 3, 9, 12\) has 324 values, the transformation matrix is 4 x 4"),
    ("ElasticTransform-alpha", lambda: T.ElasticTransform(alpha="a"), TypeError,
     "ElasticTransform: alpha must be a number or a sequence"),
    ("ElasticTransform-sigma", lambda: T.ElasticTransform(sigma=(-1.0, 2.0)), ValueError,
     "ElasticTransform: sigma must hold numbers >= 0"),
    ("ElasticTransform-fill", lambda: T.ElasticTransform(fill=None), TypeError,
     "ElasticTransform: fill must be a number or a sequence"),
]


@pytest.mark.parametrize("call, error, message", [pytest.param(*e[1:], id=e[0]) for e in ERRORS])
def test_argument_errors_name_the_function_and_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_pil_only_refusals():
    Image = pytest.importorskip("PIL.Image")
    image = Image.new("RGB", (4, 4))
    with pytest.raises(TypeError, match=r"erase: img should be a Tensor \(or array\) image, got a PIL Image"):
        TF.erase(image, 0, 0, 1, 1, 0)
    with pytest.raises(TypeError, match="to_dtype: inpt should be a Tensor or an array image, got a PIL Image"):
        F.to_dtype(image)
    with pytest.raises(TypeError, match="normalize: img should be a Tensor"):
        TF.normalize(image, [0.5], [0.5])
    with pytest.raises(TypeError, match="LinearTransformation: tensor should be a Tensor"):
        T.LinearTransformation(np.eye(48), np.zeros(48))(image)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for the operations PIL images take
        TF.rotate(image, 10.0, InterpolationMode.BICUBIC, fill=(1, 2, 3))
