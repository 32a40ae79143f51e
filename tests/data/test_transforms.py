"""minifw.data.transforms against values worked out by hand (and, for resizing, against Pillow's
own resampling): each transform on PIL images, on Tensors and on arrays, shapes, dtypes, value
ranges, the draws of the random ones, reprs as torchvision's, and the argument checks."""
import numpy as np
import pytest

import minifw
from minifw.data import transforms as T
from minifw.data.transforms import InterpolationMode

Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed")

# an image whose every pixel differs: channel c, row y, column x holds 100 c + 10 y + x
CHW = (np.arange(3)[:, None, None] * 100 + np.arange(4)[None, :, None] * 10
       + np.arange(5)[None, None, :]).astype(np.float32)


def rgb(array_hwc):
    return Image.fromarray(np.asarray(array_hwc, dtype=np.uint8), mode="RGB")


def as_tensor(array):
    return minifw.tensor(np.asarray(array))


def seeded(seed=0):
    return minifw.Generator().manual_seed(seed)


# ---- ToTensor ---------------------------------------------------------------------------------
def test_to_tensor_of_an_rgb_image():
    hwc = np.array([[[0, 51, 255], [102, 153, 204]]], dtype=np.uint8)  # 1 x 2, 3 channels
    out = T.ToTensor()(rgb(hwc))
    assert isinstance(out, minifw.Tensor) and out.shape == (3, 1, 2) and out.dtype == minifw.float32
    np.testing.assert_array_equal(out.numpy(), hwc.transpose(2, 0, 1) / np.float32(255))
    assert out.numpy()[2, 0, 0] == 1.0 and out.numpy()[0, 0, 0] == 0.0


@pytest.mark.parametrize("mode, pixels, expected_dtype, expected", [
    pytest.param("L", np.array([[0, 255], [51, 102]], np.uint8), minifw.float32,
                 np.array([[[0, 1], [0.2, 0.4]]], np.float32), id="L-scaled"),
    pytest.param("1", np.array([[0, 1], [1, 0]], bool), minifw.float32,
                 np.array([[[0, 1], [1, 0]]], np.float32), id="1-bits"),
    pytest.param("F", np.array([[-1.5, 300.0], [0.25, 2.0]], np.float32), minifw.float32,
                 np.array([[[-1.5, 300.0], [0.25, 2.0]]], np.float32), id="F-unscaled"),
    pytest.param("I", np.array([[-7, 70000], [0, 3]], np.int32), minifw.tensor(np.int32(0)).dtype,
                 np.array([[[-7, 70000], [0, 3]]]), id="I-unscaled"),  # the dtype minifw keeps int32s in
])
def test_to_tensor_of_single_band_images(mode, pixels, expected_dtype, expected):
    image = Image.fromarray(pixels) if mode == "1" else Image.frombytes(
        mode, pixels.shape[::-1], pixels.tobytes())
    assert image.mode == mode
    out = T.ToTensor()(image)
    assert out.shape == (1, 2, 2) and out.dtype == expected_dtype
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-7)


@pytest.mark.parametrize("array, shape, dtype, scale", [
    pytest.param(np.arange(24, dtype=np.uint8).reshape(2, 3, 4), (4, 2, 3), minifw.float32, 255,
                 id="HWC-uint8"),
    pytest.param(np.arange(6, dtype=np.uint8).reshape(2, 3), (1, 2, 3), minifw.float32, 255, id="HW"),
    pytest.param(np.linspace(-2, 9, 24).reshape(2, 3, 4), (4, 2, 3), minifw.float64, 1,
                 id="float64-unscaled"),
    pytest.param(np.arange(24, dtype=np.int16).reshape(2, 3, 4), (4, 2, 3), minifw.int64, 1,
                 id="int16-unscaled"),
])
def test_to_tensor_of_arrays(array, shape, dtype, scale):
    out = T.ToTensor()(array)
    assert out.shape == shape and out.dtype == dtype
    hwc = array if array.ndim == 3 else array[:, :, None]
    np.testing.assert_allclose(out.numpy(), hwc.transpose(2, 0, 1) / scale, rtol=1e-7)
    assert out.numpy().flags.c_contiguous


def test_to_tensor_copies_a_tensor():
    t = minifw.ones(1, 2, 2)
    out = T.ToTensor()(t)
    out.mul_(3)
    assert t.numpy().max() == 1 and out.numpy().max() == 3


@pytest.mark.parametrize("pic, error, message", [
    pytest.param([[1, 2]], TypeError, "PIL Image or a NumPy array", id="list"),
    pytest.param(np.zeros((1, 2, 3, 4), np.uint8), ValueError, "2- or 3-dimensional", id="4-D"),
])
def test_to_tensor_errors(pic, error, message):
    with pytest.raises(error, match=message):
        T.ToTensor()(pic)


# ---- Normalize --------------------------------------------------------------------------------
def test_normalize_per_channel():
    image = as_tensor(CHW)
    out = T.Normalize(mean=(0.0, 100.0, 200.0), std=(1.0, 2.0, 4.0))(image)
    expected = (CHW - np.array([0, 100, 200], np.float32)[:, None, None]) / np.array(
        [1, 2, 4], np.float32)[:, None, None]
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out.dtype == minifw.float32 and out is not image
    np.testing.assert_array_equal(image.numpy(), CHW)  # out of place by default


def test_normalize_broadcasts_one_value_and_leading_dims():
    batch = as_tensor(np.stack([CHW, CHW + 1]))  # (2, 3, 4, 5)
    out = T.Normalize([10.0], [5.0])(batch)
    np.testing.assert_allclose(out.numpy(), (np.stack([CHW, CHW + 1]) - 10) / 5)


def test_normalize_in_place_overwrites_the_input():
    image = as_tensor(CHW)
    out = T.Normalize((1.0, 1.0, 1.0), (2.0, 2.0, 2.0), inplace=True)(image)
    assert out is image
    np.testing.assert_array_equal(image.numpy(), (CHW - 1) / 2)


def test_normalize_an_array_gives_an_array_of_its_dtype():
    out = T.Normalize((0.5,), (0.25,))(np.full((1, 2, 2), 1.0))
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    np.testing.assert_array_equal(out, np.full((1, 2, 2), 2.0))


@pytest.mark.parametrize("make, image, error, message", [
    pytest.param(lambda: T.Normalize((0.5,), (0.0,)), as_tensor(CHW), ValueError, "std evaluated to zero",
                 id="zero-std"),
    pytest.param(lambda: T.Normalize((0.5, 0.5), (1, 1)), as_tensor(CHW), ValueError,
                 "mean has 2 values for an image of 3 channels", id="channels"),
    pytest.param(lambda: T.Normalize((0.5,), (1,)), minifw.arange(8).reshape(2, 2, 2), TypeError,
                 "must hold floats, got dtype int64", id="int-tensor"),
    pytest.param(lambda: T.Normalize((0.5,), (1,)), minifw.ones(4, 4), ValueError, r"\(\.\.\., C, H, W\)",
                 id="2-D"),
    pytest.param(lambda: T.Normalize((0.5,), (1,)), rgb(np.zeros((2, 2, 3))), TypeError,
                 r"convert it with ToTensor\(\) first", id="PIL"),
    pytest.param(lambda: T.Normalize("a", (1,)), None, TypeError, "mean must be a number or a sequence",
                 id="mean-str"),
])
def test_normalize_errors(make, image, error, message):
    with pytest.raises(error, match=message):
        make()(image)


# ---- Resize -----------------------------------------------------------------------------------
@pytest.mark.parametrize("size, image_hw, expected_hw", [
    pytest.param(4, (8, 12), (4, 6), id="int-smaller-edge-height"),
    pytest.param(4, (12, 8), (6, 4), id="int-smaller-edge-width"),
    pytest.param([3], (7, 10), (3, 4), id="one-element-list-truncates"),
    pytest.param((5, 2), (8, 12), (5, 2), id="h-w"),
])
def test_resize_output_sizes(size, image_hw, expected_hw):
    h, w = image_hw
    assert T.Resize(size)(minifw.zeros(2, h, w)).shape == (2,) + expected_hw
    assert T.Resize(size)(Image.new("RGB", (w, h))).size == expected_hw[::-1]
    assert T.Resize(size)(np.zeros((h, w), np.float32)).shape == expected_hw


def test_resize_max_size_caps_the_longer_edge():
    assert T.Resize(4, max_size=5)(minifw.zeros(1, 8, 16)).shape == (1, 2, 5)  # 4x8 capped to 2x5


def test_resize_to_the_same_size_returns_the_input():
    image = minifw.zeros(1, 4, 6)
    assert T.Resize(4)(image) is image


def test_bilinear_without_antialias_by_hand():
    row = as_tensor(np.array([[[0.0, 10.0]]], np.float32))
    # output centres at input 0.25, 0.75, 1.25, 1.75 pixels: -0.25 clamps to pixel 0's value
    out = T.Resize((1, 4), antialias=False)(row)
    np.testing.assert_allclose(out.numpy()[0, 0], [0.0, 2.5, 7.5, 10.0])
    shrink = T.Resize((1, 2), antialias=False)(as_tensor(np.array([[[0.0, 10.0, 20.0, 30.0]]], np.float32)))
    np.testing.assert_allclose(shrink.numpy()[0, 0], [5.0, 25.0])


def test_bilinear_antialias_when_shrinking_by_hand():
    # shrinking 4 -> 2 stretches the triangle to radius 2: pixels 0, 1, 2 weigh 0.75, 0.75, 0.25
    out = T.Resize((1, 2))(as_tensor(np.array([[[0.0, 10.0, 20.0, 30.0]]], np.float32)))
    np.testing.assert_allclose(out.numpy()[0, 0], [12.5 / 1.75, 30 - 12.5 / 1.75], rtol=1e-6)


def test_bicubic_without_antialias_by_hand():
    # Keys' kernel with a = -0.75 (torch): taps at distances 1.25, 0.25, 0.75, 1.75 weigh
    # -0.10546875, 0.87890625, 0.26171875, -0.03515625
    out = T.Resize((1, 4), InterpolationMode.BICUBIC, antialias=False)(
        as_tensor(np.array([[[0.0, 10.0]]], np.float32)))
    np.testing.assert_allclose(out.numpy()[0, 0], [-1.0546875, 2.265625, 7.734375, 11.0546875],
                               rtol=1e-6)


@pytest.mark.parametrize("mode, expected", [
    pytest.param(InterpolationMode.NEAREST, [0, 0, 0, 1, 1], id="nearest-floor"),
    pytest.param(InterpolationMode.NEAREST_EXACT, [0, 0, 1, 1, 1], id="nearest-exact-centres"),
])
def test_nearest_modes(mode, expected):
    out = T.Resize((1, 5), mode)(minifw.tensor([[[7, 9]]]))
    assert out.dtype == minifw.int64 and out.tolist() == [[[[7, 9][i] for i in expected]]]


@pytest.mark.parametrize("out_hw", [(5, 7), (20, 30), (6, 40), (3, 3)])
@pytest.mark.parametrize("mode, pil_filter", [(InterpolationMode.BILINEAR, 2),
                                              (InterpolationMode.BICUBIC, 3),
                                              (InterpolationMode.NEAREST_EXACT, 0)])
def test_antialiased_tensor_resize_equals_pillows(mode, pil_filter, out_hw):
    # Pillow resamples "F" images in floating point: the reference for antialias=True
    pixels = np.random.default_rng(0).uniform(0, 1, (13, 17)).astype(np.float32)
    reference = np.asarray(Image.frombytes("F", (17, 13), pixels.tobytes()).resize(out_hw[::-1], pil_filter))
    out = T.Resize(out_hw, mode)(as_tensor(pixels[None]))
    np.testing.assert_allclose(out.numpy()[0], reference, atol=1e-6)


def test_resize_uint8_arrays_round_and_clamp():
    image = np.array([[[0, 255, 0, 255]]], np.uint8)
    out = T.Resize((1, 8), InterpolationMode.BICUBIC, antialias=False)(image)
    assert out.dtype == np.uint8 and out.min() == 0 and out.max() == 255  # overshoot clamped
    exact = T.Resize((1, 8), InterpolationMode.BICUBIC, antialias=False)(image.astype(np.float32))
    np.testing.assert_array_equal(out, np.clip(np.round(exact), 0, 255))


def test_resize_pil_image_uses_pillow():
    image = rgb(np.random.default_rng(1).integers(0, 256, (9, 11, 3)))
    out = T.Resize((4, 5), InterpolationMode.LANCZOS)(image)
    assert out.mode == "RGB" and out.size == (5, 4)
    expected = image.resize((5, 4), Image.Resampling.LANCZOS)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: T.Resize(0), ValueError, "positive ints", id="size-0"),
    pytest.param(lambda: T.Resize((1, 2, 3)), ValueError, "1 or 2 ints", id="size-3"),
    pytest.param(lambda: T.Resize((4, 4), max_size=9), ValueError, "max_size applies when", id="max_size-pair"),
    pytest.param(lambda: T.Resize(4, max_size=4), ValueError, "greater than size", id="max_size-small"),
    pytest.param(lambda: T.Resize(4, interpolation="cubic"), TypeError, "InterpolationMode", id="mode-name"),
    pytest.param(lambda: T.Resize(2, InterpolationMode.LANCZOS)(minifw.zeros(1, 4, 4)), ValueError,
                 "got lanczos; resize a PIL image", id="lanczos-tensor"),
])
def test_resize_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_resize_takes_pillow_constants_and_names():
    assert T.Resize(4, Image.Resampling.BICUBIC).interpolation is InterpolationMode.BICUBIC
    assert T.Resize(4, "nearest-exact").interpolation is InterpolationMode.NEAREST_EXACT


# ---- CenterCrop, Pad ----------------------------------------------------------------------------
def test_center_crop_of_a_tensor_and_an_image():
    out = T.CenterCrop((2, 3))(as_tensor(CHW))  # 4x5: top = round(1.0) = 1, left = round(1.0) = 1
    np.testing.assert_array_equal(out.numpy(), CHW[:, 1:3, 1:4])
    odd = T.CenterCrop(2)(as_tensor(CHW))  # left = round(1.5) = 2 (half to even)
    np.testing.assert_array_equal(odd.numpy(), CHW[:, 1:3, 2:4])
    hwc = CHW.transpose(1, 2, 0).astype(np.uint8)
    assert np.array_equal(np.asarray(T.CenterCrop((2, 3))(rgb(hwc))), hwc[1:3, 1:4])


def test_center_crop_larger_than_the_image_pads_with_zeros():
    out = T.CenterCrop((6, 8))(minifw.ones(1, 4, 5))
    expected = np.zeros((1, 6, 8), np.float32)
    expected[:, 1:5, 1:6] = 1  # 3 columns to add: 1 left, 2 right; 2 rows: 1 above, 1 below
    np.testing.assert_array_equal(out.numpy(), expected)
    image = T.CenterCrop((6, 8))(rgb(np.full((4, 5, 3), 9)))
    np.testing.assert_array_equal(np.asarray(image)[..., 0], expected[0] * 9)


@pytest.mark.parametrize("mode, expected", [
    pytest.param("constant", [7, 7, 1, 2, 3, 7], id="constant"),
    pytest.param("edge", [1, 1, 1, 2, 3, 3], id="edge"),
    pytest.param("reflect", [3, 2, 1, 2, 3, 2], id="reflect"),
    pytest.param("symmetric", [2, 1, 1, 2, 3, 3], id="symmetric"),
])
def test_pad_modes(mode, expected):
    row = np.array([[1, 2, 3]], np.float32)
    pad = T.Pad((2, 0, 1, 0), fill=7, padding_mode=mode)  # left 2, right 1
    assert as_tensor(row[None]).shape == (1, 1, 3)
    assert pad(as_tensor(row[None])).numpy()[0, 0].tolist() == expected
    assert pad(row).tolist() == [expected]
    image = Image.frombytes("L", (3, 1), row.astype(np.uint8).tobytes())
    assert np.asarray(pad(image))[0].tolist() == expected


def test_pad_sides_and_per_channel_fill():
    out = T.Pad((1, 2), fill=(5, 6, 7))(minifw.zeros(3, 1, 1))  # left/right 1, top/bottom 2
    assert out.shape == (3, 5, 3)
    assert [out.numpy()[c, 0, 0] for c in range(3)] == [5, 6, 7] and out.numpy()[:, 2, 1].tolist() == [0] * 3
    image = T.Pad((1, 2, 3, 4), fill=(5, 6, 7))(rgb(np.zeros((1, 1, 3))))
    assert image.size == (1 + 1 + 3, 1 + 2 + 4) and image.getpixel((0, 0)) == (5, 6, 7)
    assert image.getpixel((1, 2)) == (0, 0, 0)


def test_pad_keeps_a_palette_image_a_palette_image():
    image = Image.new("P", (2, 2), 1)
    image.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)
    out = T.Pad(1, padding_mode="edge")(image)
    assert out.mode == "P" and out.size == (4, 4) and out.convert("RGB").getpixel((0, 0)) == (255, 0, 0)


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: T.Pad(-1), ValueError, "padding must be an int >= 0", id="negative"),
    pytest.param(lambda: T.Pad((1, 2, 3)), ValueError, "sequence of 1, 2 or 4", id="three"),
    pytest.param(lambda: T.Pad(1, padding_mode="wrap"), ValueError, "constant, edge, reflect, symmetric",
                 id="mode"),
    pytest.param(lambda: T.Pad(1, fill="red"), TypeError, "fill must be a number", id="fill"),
    pytest.param(lambda: T.Pad(1, fill=(1, 2))(minifw.zeros(3, 2, 2)), ValueError,
                 "fill has 2 values for an image of 3 channels", id="fill-channels"),
])
def test_pad_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


# ---- RandomCrop, RandomHorizontalFlip, RandomVerticalFlip -----------------------------------------
def offsets_of(crop, padded):
    """(top, left) of every place in `padded` (C, H, W) that the crop equals."""
    h, w = crop.shape[-2:]
    return [(t, l) for t in range(padded.shape[-2] - h + 1) for l in range(padded.shape[-1] - w + 1)
            if np.array_equal(padded[..., t:t + h, l:l + w], crop)]


def test_random_crop_draws_top_then_left_from_the_generator():
    crop = T.RandomCrop((2, 3), generator=seeded(5))
    rng = seeded(5).numpy
    for _ in range(10):
        top, left = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        np.testing.assert_array_equal(crop(as_tensor(CHW)).numpy(), CHW[:, top:top + 2, left:left + 3])


def test_random_crop_of_pil_and_arrays_matches_the_tensor_crop():
    hwc = CHW.transpose(1, 2, 0).astype(np.uint8)
    for seed in range(5):
        tensor_crop = T.RandomCrop(3, padding=1, generator=seeded(seed))(as_tensor(CHW)).numpy()
        image_crop = np.asarray(T.RandomCrop(3, padding=1, generator=seeded(seed))(rgb(hwc)))
        array_crop = T.RandomCrop(3, padding=1, generator=seeded(seed))(CHW)
        np.testing.assert_array_equal(image_crop.transpose(2, 0, 1), tensor_crop)
        assert isinstance(array_crop, np.ndarray)
        np.testing.assert_array_equal(array_crop, tensor_crop)


def test_random_crop_that_fits_exactly_draws_nothing():
    g = seeded(0)
    state = g.get_state()
    T.RandomCrop((4, 5), generator=g)(as_tensor(CHW))
    assert g.get_state() == state


def test_random_crop_pad_if_needed_pads_both_ends_by_the_difference():
    crop = T.RandomCrop((2, 7), pad_if_needed=True, fill=-1, generator=seeded(0))
    seen = set()
    for _ in range(40):
        out = crop(minifw.ones(1, 2, 5)).numpy()
        assert out.shape == (1, 2, 7)
        padded = np.pad(np.ones((1, 2, 5)), ((0, 0), (0, 0), (2, 2)), constant_values=-1)
        seen.update(offsets_of(out, padded))
    assert seen == {(0, 0), (0, 1), (0, 2)}  # 2 + 5 + 2 columns: 3 places for 7 of them


def test_random_crop_padding_modes_and_sides():
    crop = T.RandomCrop((4, 5), padding=(0, 0, 0, 0), padding_mode="reflect", generator=seeded(0))
    out = crop(as_tensor(CHW))
    np.testing.assert_array_equal(out.numpy(), CHW)
    crop = T.RandomCrop((4, 6), padding=(1, 0), padding_mode="edge", generator=seeded(1))  # left/right 1
    padded = np.pad(CHW, ((0, 0), (0, 0), (1, 1)), mode="edge")
    seen = {o for _ in range(30) for o in offsets_of(crop(as_tensor(CHW)).numpy(), padded)}
    assert seen == {(0, 0), (0, 1)}


def test_random_crop_repr_and_existing_keyword_use():
    assert repr(T.RandomCrop(28, padding=2)) == "RandomCrop(size=(28, 28), padding=2)"
    assert repr(T.RandomCrop((3, 4))) == "RandomCrop(size=(3, 4), padding=None)"
    with pytest.raises(TypeError):
        T.RandomCrop(4, 0, False, 0, "constant", seeded())  # generator is keyword-only


@pytest.mark.parametrize("flip, axis", [(T.RandomHorizontalFlip, -1), (T.RandomVerticalFlip, -2)])
def test_random_flips_follow_one_uniform_draw_each(flip, axis):
    transform = flip(p=0.3, generator=seeded(2))
    draws = seeded(2).numpy.random(50)
    hwc = CHW.transpose(1, 2, 0).astype(np.uint8)
    image_flip = flip(p=0.3, generator=seeded(2))
    for u in draws:
        out = transform(as_tensor(CHW)).numpy()
        expected = np.flip(CHW, axis) if u < 0.3 else CHW
        np.testing.assert_array_equal(out, expected)
        assert out.flags.c_contiguous
        np.testing.assert_array_equal(np.asarray(image_flip(rgb(hwc))).transpose(2, 0, 1), expected)


def test_flip_probabilities_zero_and_one():
    image = as_tensor(CHW)
    assert T.RandomHorizontalFlip(p=0.0)(image) is image
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=1.0)(image).numpy(), CHW[..., ::-1])
    with pytest.raises(ValueError, match=r"p must be a probability in \[0, 1\], got 1.5"):
        T.RandomHorizontalFlip(1.5)


def test_random_transforms_without_a_generator_follow_manual_seed():
    pipeline = T.Compose([T.RandomCrop(3, padding=2), T.RandomHorizontalFlip()])

    def run():
        minifw.manual_seed(123)
        return np.stack([pipeline(as_tensor(CHW)).numpy() for _ in range(20)])

    first = run()
    np.testing.assert_array_equal(first, run())
    minifw.manual_seed(124)
    assert not np.array_equal(first, np.stack([pipeline(as_tensor(CHW)).numpy() for _ in range(20)]))


# ---- Compose, Lambda, the whole MNIST-style pipeline ---------------------------------------------
def test_compose_and_lambda():
    pipeline = T.Compose([T.ToTensor(), T.Lambda(lambda t: t * 2), T.Normalize((1.0,), (0.5,))])
    out = pipeline(np.array([[0, 255]], np.uint8))
    np.testing.assert_allclose(out.numpy(), [[[-2.0, 2.0]]])
    with pytest.raises(TypeError, match="lambd should be callable, got 'int'"):
        T.Lambda(3)
    with pytest.raises(TypeError, match="transform 1 is a str"):
        T.Compose([T.ToTensor(), "flip"])


def test_reprs_as_torchvisions():
    pipeline = T.Compose([T.Resize(32), T.CenterCrop(28), T.RandomHorizontalFlip(), T.Pad(2),
                          T.ToTensor(), T.Normalize((0.1307,), (0.3081,)), T.Lambda(abs)])
    assert repr(pipeline) == (
        "Compose(\n"
        "    Resize(size=32, interpolation=bilinear, max_size=None, antialias=True)\n"
        "    CenterCrop(size=(28, 28))\n"
        "    RandomHorizontalFlip(p=0.5)\n"
        "    Pad(padding=2, fill=0, padding_mode=constant)\n"
        "    ToTensor()\n"
        "    Normalize(mean=(0.1307,), std=(0.3081,))\n"
        "    Lambda()\n"
        ")")


def test_mnist_style_pipeline_on_a_grayscale_image_and_on_minifws_mnist_tensor():
    pipeline = T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))])
    pixels = np.random.default_rng(0).integers(0, 256, (28, 28)).astype(np.uint8)
    from_image = pipeline(Image.fromarray(pixels, mode="L"))
    assert from_image.shape == (1, 28, 28) and from_image.dtype == minifw.float32
    np.testing.assert_allclose(from_image.numpy()[0], (pixels / np.float32(255) - 0.1307) / 0.3081, rtol=1e-5)
    from_tensor = pipeline(minifw.tensor(pixels[None] / np.float32(256)))  # what minifw's MNIST hands over
    np.testing.assert_allclose(from_tensor.numpy()[0], (pixels / np.float32(256) - 0.1307) / 0.3081,
                               rtol=1e-5)


# ---- tensors on the GPU devices stay there ----------------------------------------------------------
@pytest.fixture(params=["cudasim", "cuda"])
def gpu_device(request):
    if request.param == "cuda":
        return request.getfixturevalue("emulated_cuda")
    return minifw.device("cudasim")


def test_transforms_keep_a_tensor_on_its_device(gpu_device):
    image = minifw.tensor(CHW, device=gpu_device)
    pipeline = T.Compose([T.Pad(1, fill=(1, 2, 3)), T.RandomCrop(4, generator=seeded()),
                          T.RandomHorizontalFlip(1.0), T.Resize((3, 3)), T.CenterCrop(2),
                          T.Normalize((1.0, 2.0, 3.0), (2.0, 2.0, 2.0))])
    out = pipeline(image)
    pipeline.transforms[1].generator.manual_seed(0)  # the same crop again, on the CPU
    expected = pipeline(as_tensor(CHW))
    assert out.device == image.device and out.shape == (3, 2, 2)
    np.testing.assert_allclose(out.cpu().numpy(), expected.numpy(), rtol=1e-6)
    nearest = T.Resize((2, 7), InterpolationMode.NEAREST)(image)
    assert nearest.device == image.device
    np.testing.assert_array_equal(nearest.cpu().numpy(), T.Resize((2, 7), InterpolationMode.NEAREST)(
        as_tensor(CHW)).numpy())
