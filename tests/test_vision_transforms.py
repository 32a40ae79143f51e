"""The augmentation transforms of minifw.vision.transforms: fixed parameters against NumPy
references written here (loops over pixels, colorsys, np.rot90), seeded draws, reprs as
torchvision's, argument checks, and, when torchvision is installed, torchvision itself on
tensors."""
import colorsys
import math

import numpy as np
import pytest

import minifw
from minifw.vision import transforms as T

RNG = np.random.default_rng(0)
IMAGE = RNG.random((3, 6, 7)).astype(np.float32)  # C, H, W in [0, 1]
IMAGE_U8 = RNG.integers(0, 256, (3, 6, 7), dtype=np.uint8)
TOL = dict(rtol=1e-5, atol=1e-6)  # float32 arithmetic in a different order than the reference


def seeded(seed=0):
    return minifw.Generator().manual_seed(seed)


def gray(chw):
    return 0.2989 * chw[0] + 0.587 * chw[1] + 0.114 * chw[2]


# ---- colour ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, factor, reference", [
    pytest.param("brightness", 1.3, lambda x, f: np.clip(x * f, 0, 1), id="brightness"),
    pytest.param("contrast", 0.6, lambda x, f: np.clip(f * x + (1 - f) * gray(x).mean(), 0, 1),
                 id="contrast"),
    pytest.param("saturation", 1.7, lambda x, f: np.clip(f * x + (1 - f) * gray(x), 0, 1),
                 id="saturation"),
])
def test_color_jitter_with_a_fixed_factor(kind, factor, reference):
    out = T.ColorJitter(**{kind: (factor, factor)})(minifw.tensor(IMAGE))
    assert isinstance(out, minifw.Tensor) and out.dtype == minifw.float32
    np.testing.assert_allclose(out.numpy(), reference(IMAGE.astype(np.float64), factor), **TOL)


def test_color_jitter_hue_against_colorsys():
    shift = 0.23
    out = T.ColorJitter(hue=(shift, shift))(IMAGE)
    expected = np.empty_like(IMAGE)
    for y in range(IMAGE.shape[1]):
        for x in range(IMAGE.shape[2]):
            h, s, v = colorsys.rgb_to_hsv(*IMAGE[:, y, x])
            expected[:, y, x] = colorsys.hsv_to_rgb((h + shift) % 1.0, s, v)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_color_jitter_on_uint8_arrays_truncates_as_torchvision():
    out = T.ColorJitter(brightness=(1.5, 1.5))(IMAGE_U8)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, np.clip(IMAGE_U8 * np.float32(1.5), 0, 255).astype(np.uint8))


def test_color_jitter_draws_order_and_factors_from_the_generator():
    jitter = T.ColorJitter(0.4, 0.4, 0.4, 0.1, generator=seeded(3))
    params = T.ColorJitter.get_params(jitter.brightness, jitter.contrast, jitter.saturation,
                                      jitter.hue, seeded(3))
    assert sorted(params[0]) == [0, 1, 2, 3] and 0.6 <= params[1] <= 1.4 and -0.1 <= params[4] <= 0.1
    assert params == T.ColorJitter.get_params(jitter.brightness, jitter.contrast, jitter.saturation,
                                              jitter.hue, seeded(3))
    minifw.manual_seed(5)
    first = T.ColorJitter(0.4, 0.4, 0.4, 0.1)(minifw.tensor(IMAGE)).numpy()
    minifw.manual_seed(5)
    np.testing.assert_array_equal(T.ColorJitter(0.4, 0.4, 0.4, 0.1)(minifw.tensor(IMAGE)).numpy(), first)
    assert not np.allclose(first, IMAGE)


def test_grayscale_and_random_grayscale():
    out = T.Grayscale()(minifw.tensor(IMAGE))
    assert out.shape == (1, 6, 7)
    np.testing.assert_allclose(out.numpy()[0], gray(IMAGE.astype(np.float64)), **TOL)
    three = T.Grayscale(num_output_channels=3)(IMAGE)
    assert three.shape == (3, 6, 7) and (three[0] == three[2]).all()
    assert T.RandomGrayscale(p=1.0)(IMAGE).shape == (3, 6, 7)
    assert T.RandomGrayscale(p=0.0)(IMAGE) is IMAGE


# ---- geometry --------------------------------------------------------------------------------
def sample_reference(image, source_of, fill):
    """Bilinear sampling by loops: output pixel (i, j) reads the input at source_of(x, y), x and
    y the output pixel centre's offsets from the image centre; outside pixels read 0, and the
    fraction from outside gets fill."""
    c, h, w = image.shape
    out = np.zeros(image.shape)
    for i in range(h):
        for j in range(w):
            sx, sy = source_of(j + 0.5 - w / 2, i + 0.5 - h / 2)
            sx, sy = sx + w / 2 - 0.5, sy + h / 2 - 0.5  # to pixel indices
            x0, y0 = math.floor(sx), math.floor(sy)
            value, coverage = np.zeros(c), 0.0
            for yy, xx in ((y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)):
                weight = (1 - abs(sx - xx)) * (1 - abs(sy - yy))
                if 0 <= yy < h and 0 <= xx < w:
                    value += weight * image[:, yy, xx]
                    coverage += weight
            out[:, i, j] = value * coverage + (1 - coverage) * fill
    return out


def test_rotation_by_90_degrees_is_rot90():
    square = RNG.random((2, 5, 5)).astype(np.float32)
    for interpolation in ("nearest", "bilinear"):
        out = T.RandomRotation((90, 90), interpolation=interpolation)(minifw.tensor(square))
        np.testing.assert_allclose(out.numpy(), np.rot90(square, 1, axes=(1, 2)), atol=1e-6)


@pytest.mark.parametrize("angle, fill", [(30.0, 0.0), (-115.0, 0.7)])
def test_bilinear_rotation_against_the_loop_reference(angle, fill):
    a = math.radians(angle)  # counter-clockwise on screen, y pointing down
    out = T.RandomRotation((angle, angle), interpolation=T.InterpolationMode.BILINEAR, fill=fill)(IMAGE)
    expected = sample_reference(IMAGE.astype(np.float64), lambda x, y: (
        x * math.cos(a) - y * math.sin(a), x * math.sin(a) + y * math.cos(a)), fill)
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_affine_translation_shifts_and_fills():
    translate = T.RandomAffine(0, translate=(0.5, 0.5), fill=9.0, generator=seeded(1))
    angle, (tx, ty), scale, shear = T.RandomAffine.get_params(
        translate.degrees, translate.translate, None, None, (7, 6), seeded(1))
    assert angle == 0 and scale == 1 and shear == (0, 0) and abs(tx) <= 4 and abs(ty) <= 3
    out = translate(IMAGE_U8)
    expected = np.full_like(IMAGE_U8, 9)
    h, w = IMAGE_U8.shape[1:]
    expected[:, max(ty, 0):h + min(ty, 0), max(tx, 0):w + min(tx, 0)] = \
        IMAGE_U8[:, max(-ty, 0):h - max(ty, 0), max(-tx, 0):w - max(tx, 0)]
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, expected)


def test_affine_rotation_scale_and_shear_against_the_loop_reference():
    angle, scale, sx, sy = 20.0, 1.3, 10.0, -5.0
    affine = T.RandomAffine((angle, angle), scale=(scale, scale), shear=(sx, sx, sy, sy),
                            interpolation="bilinear", fill=0.25)
    a, tx_, ty_ = math.radians(angle), math.tan(math.radians(sx)), math.tan(math.radians(sy))
    # forward: scale * rotation (clockwise on screen) @ y-shear @ x-shear; sample its inverse
    forward = scale * np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) \
        @ np.array([[1, 0], [-ty_, 1]]) @ np.array([[1, -tx_], [0, 1]])
    inverse = np.linalg.inv(forward)
    expected = sample_reference(IMAGE.astype(np.float64), lambda x, y: tuple(inverse @ [x, y]), 0.25)
    np.testing.assert_allclose(affine(minifw.tensor(IMAGE)).numpy(), expected, atol=1e-5)


def test_rotation_of_pil_images_is_pillows():
    Image = pytest.importorskip("PIL.Image")
    hwc = np.moveaxis(IMAGE_U8, 0, -1)
    out = T.RandomRotation((90, 90))(Image.fromarray(hwc))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(Image.fromarray(hwc).rotate(90)))
    assert out.size == (7, 6)


def test_random_resized_crop():
    whole = T.RandomResizedCrop((3, 4), scale=(1.0, 1.0), ratio=(7 / 6, 7 / 6))
    np.testing.assert_allclose(whole(minifw.tensor(IMAGE)).numpy(),
                               T.Resize((3, 4))(minifw.tensor(IMAGE)).numpy(), **TOL)
    params = T.RandomResizedCrop.get_params(IMAGE, (0.08, 1.0), (3 / 4, 4 / 3), seeded(2))
    assert params == T.RandomResizedCrop.get_params(IMAGE, (0.08, 1.0), (3 / 4, 4 / 3), seeded(2))
    top, left, h, w = params
    assert 0 <= top <= 6 - h and 0 <= left <= 7 - w and h >= 1 and w >= 1
    crop = T.RandomResizedCrop(5, generator=seeded(2))
    out = crop(minifw.tensor(IMAGE))
    np.testing.assert_allclose(out.numpy(), T.Resize((5, 5))(
        minifw.tensor(IMAGE[:, top:top + h, left:left + w])).numpy(), **TOL)
    # a ratio no crop can meet: the central crop with the ratio clamped into range
    assert T.RandomResizedCrop.get_params(np.zeros((10, 2)), (0.9, 1.0), (0.5, 0.8), seeded(0)) \
        == (3, 0, 4, 2)


def test_gaussian_blur_against_a_direct_convolution():
    sigma, (kx, ky) = 0.8, (5, 3)
    out = T.GaussianBlur((kx, ky), sigma=sigma)(minifw.tensor(IMAGE)).numpy()
    padded = np.pad(IMAGE.astype(np.float64), ((0, 0), (ky // 2, ky // 2), (kx // 2, kx // 2)),
                    mode="reflect")
    expected = np.zeros(IMAGE.shape)
    for dy in range(ky):
        for dx in range(kx):
            weight = math.exp(-((dx - kx // 2) ** 2 + (dy - ky // 2) ** 2) / (2 * sigma ** 2))
            expected += weight * padded[:, dy:dy + 6, dx:dx + 7]
    total = sum(math.exp(-((dx - kx // 2) ** 2 + (dy - ky // 2) ** 2) / (2 * sigma ** 2))
                for dy in range(ky) for dx in range(kx))
    np.testing.assert_allclose(out, expected / total, **TOL)
    blurred_u8 = T.GaussianBlur(3, sigma=1.0)(IMAGE_U8)
    assert blurred_u8.dtype == np.uint8


def test_random_erasing():
    source = minifw.tensor(IMAGE)
    out = T.RandomErasing(p=1.0, value=(7, 8, 9), generator=seeded(4))(source).numpy()
    np.testing.assert_array_equal(
        out, T.RandomErasing(p=1.0, value=(7, 8, 9), generator=seeded(4))(source).numpy())
    rows, cols = np.nonzero((out != IMAGE).any(axis=0))
    top, left, h, w = rows.min(), cols.min(), rows.max() + 1 - rows.min(), cols.max() + 1 - cols.min()
    expected = IMAGE.copy()
    expected[:, top:top + h, left:left + w] = np.array([7, 8, 9]).reshape(3, 1, 1)
    np.testing.assert_array_equal(out, expected)  # one rectangle of the values, the rest kept
    assert 0.02 * 42 - 6 <= h * w <= 0.33 * 42 + 6  # the area's fraction, up to rounding of h, w
    np.testing.assert_array_equal(source.numpy(), IMAGE)  # not in place
    params = T.RandomErasing.get_params(IMAGE, (0.02, 0.33), (0.3, 3.3), (7, 8, 9), seeded(1))
    assert params[:4] == T.RandomErasing.get_params(IMAGE, (0.02, 0.33), (0.3, 3.3), 0, seeded(1))[:4]
    noisy = T.RandomErasing(p=1.0, value="random", inplace=True, generator=seeded(4))
    array = IMAGE.copy()
    assert noisy(array) is array and not np.array_equal(array, IMAGE)
    assert T.RandomErasing(p=0.0)(IMAGE) is IMAGE
    # no rectangle fits in 10 draws: the image comes back
    assert T.RandomErasing(p=1.0, scale=(0.99, 1.0), ratio=(1, 1))(IMAGE) is IMAGE


def test_random_apply_choice_and_order():
    plus, times = T.Lambda(lambda x: x + 1), T.Lambda(lambda x: x * 10)
    assert T.RandomApply([plus, times], p=1.0)(1) == 20 and T.RandomApply([plus], p=0.0)(1) == 1
    assert T.RandomChoice([plus, times], p=[0, 1])(1) == 10
    outcomes = {T.RandomOrder([plus, times], generator=seeded(s))(1) for s in range(20)}
    assert outcomes == {11, 20}
    choice = [T.RandomChoice([plus, times], generator=seeded(s))(1) for s in range(20)]
    assert set(choice) == {2, 10} and choice == [
        T.RandomChoice([plus, times], generator=seeded(s))(1) for s in range(20)]


# ---- reprs and argument checks --------------------------------------------------------------
@pytest.mark.parametrize("transform, text", [
    (T.RandomResizedCrop(224), "RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), "
     "ratio=(0.75, 1.3333), interpolation=bilinear, antialias=True)"),
    (T.ColorJitter(brightness=0.2, hue=0.1), "ColorJitter(brightness=(0.8, 1.2), contrast=None, "
     "saturation=None, hue=(-0.1, 0.1))"),
    (T.RandomRotation(15), "RandomRotation(degrees=[-15.0, 15.0], interpolation=nearest, "
     "expand=False, fill=0)"),
    (T.RandomAffine(0, translate=(0.1, 0.1)), "RandomAffine(degrees=[0.0, 0.0], translate=(0.1, 0.1))"),
    (T.RandomErasing(), "RandomErasing(p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, "
     "inplace=False)"),
    (T.GaussianBlur(5, sigma=1.5), "GaussianBlur(kernel_size=(5, 5), sigma=(1.5, 1.5))"),
    (T.RandomGrayscale(), "RandomGrayscale(p=0.1)"),
    (T.RandomApply([T.Grayscale()], p=0.3), "RandomApply(\n    p=0.3\n    Grayscale(num_output_channels=1)\n)"),
    (T.RandomChoice([T.Grayscale()]), "RandomChoice(\n    Grayscale(num_output_channels=1)\n)(p=None)"),
    (T.RandomOrder([T.Grayscale()]), "RandomOrder(\n    Grayscale(num_output_channels=1)\n)"),
], ids=lambda v: type(v).__name__ if not isinstance(v, str) else "")
def test_reprs(transform, text):
    assert repr(transform) == text


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: T.RandomResizedCrop(8, scale=(1.0, 0.5)), ValueError,
                 r"RandomResizedCrop: scale must be \(min, max\) with min <= max, got \(1.0, 0.5\)",
                 id="scale-order"),
    pytest.param(lambda: T.RandomResizedCrop(0), ValueError, "RandomResizedCrop: size must be a "
                 "positive int", id="size"),
    pytest.param(lambda: T.RandomResizedCrop(8, ratio=(0, 1)), ValueError,
                 r"ratio must hold numbers > 0, got \(0, 1\)", id="ratio"),
    pytest.param(lambda: T.ColorJitter(brightness=-0.1), ValueError,
                 "ColorJitter: brightness as a single number must be >= 0, got -0.1", id="brightness"),
    pytest.param(lambda: T.ColorJitter(hue=0.7), ValueError,
                 r"ColorJitter: hue must lie within \[-0.5, 0.5\], got \(-0.7, 0.7\)", id="hue"),
    pytest.param(lambda: T.RandomRotation(-5), ValueError,
                 "RandomRotation: degrees as a single number must be >= 0, got -5", id="degrees"),
    pytest.param(lambda: T.RandomAffine(0, translate=(2, 0)), ValueError,
                 r"RandomAffine: translate must be a pair \(a, b\) of fractions in \[0, 1\], got \(2, 0\)",
                 id="translate"),
    pytest.param(lambda: T.GaussianBlur(4), ValueError,
                 "GaussianBlur: kernel_size must hold odd positive ints, got 4", id="even-kernel"),
    pytest.param(lambda: T.GaussianBlur(3, sigma=0), ValueError,
                 "GaussianBlur: sigma as a single number must be > 0, got 0", id="sigma"),
    pytest.param(lambda: T.RandomErasing(value="noise"), ValueError,
                 "RandomErasing: value as a string must be 'random', got 'noise'", id="erase-value"),
    pytest.param(lambda: T.RandomErasing(scale=(0.1, 1.5)), ValueError,
                 r"RandomErasing: scale must lie within \[0, 1\], got \(0.1, 1.5\)", id="erase-scale"),
    pytest.param(lambda: T.RandomApply([T.Grayscale()], p=2), ValueError,
                 "RandomApply: p must be a probability in \\[0, 1\\], got 2", id="apply-p"),
    pytest.param(lambda: T.RandomChoice([T.Grayscale()], p=[1, 2]), ValueError,
                 "RandomChoice: p must be a sequence of 1 weights", id="choice-p"),
    pytest.param(lambda: T.Grayscale(2), ValueError,
                 "Grayscale: num_output_channels must be 1 or 3, got 2", id="gray-channels"),
    pytest.param(lambda: T.ColorJitter(saturation=0.5)(np.zeros((2, 4, 4), np.float32)), ValueError,
                 r"adjust_saturation: expected an image of shape \(..., C, H, W\) with C in 1 or 3, "
                 r"got shape \(2, 4, 4\)", id="channels"),
    pytest.param(lambda: T.RandomRotation(10, fill=(1, 2))(IMAGE), ValueError,
                 r"RandomRotation: fill has 2 values for an image of 3 channels", id="fill"),
    pytest.param(lambda: T.RandomRotation(10, interpolation="bicubic")(IMAGE), ValueError,
                 "RandomRotation: a tensor or array image can be transformed with nearest or "
                 "bilinear interpolation, got bicubic", id="bicubic-tensor"),
])
def test_argument_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_random_erasing_refuses_pil_images():
    Image = pytest.importorskip("PIL.Image")
    with pytest.raises(TypeError, match=r"RandomErasing: .*PIL Image; put RandomErasing after ToTensor"):
        T.RandomErasing(p=1.0)(Image.new("RGB", (4, 4)))


# ---- torchvision itself, where installed -------------------------------------------------------
def test_against_torchvision_on_tensors():
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torchvision.transforms.functional")
    x = torch.from_numpy(IMAGE)
    checks = [
        (T.ColorJitter(brightness=(1.3, 1.3)), F.adjust_brightness(x, 1.3)),
        (T.ColorJitter(contrast=(0.6, 0.6)), F.adjust_contrast(x, 0.6)),
        (T.ColorJitter(saturation=(1.7, 1.7)), F.adjust_saturation(x, 1.7)),
        (T.ColorJitter(hue=(0.2, 0.2)), F.adjust_hue(x, 0.2)),
        (T.Grayscale(), F.rgb_to_grayscale(x)),
        (T.RandomRotation((33, 33), interpolation="bilinear"),
         F.rotate(x, 33.0, interpolation=F.InterpolationMode.BILINEAR, fill=[0.0] * 3)),
        (T.GaussianBlur(5, sigma=(0.9, 0.9)), F.gaussian_blur(x, [5, 5], [0.9, 0.9])),
    ]
    for ours, theirs in checks:
        np.testing.assert_allclose(ours(minifw.tensor(IMAGE)).numpy(), theirs.numpy(), atol=1e-5,
                                   err_msg=repr(ours))
    # a quarter turn with nearest: on a square image every sampling point is a pixel's centre
    # (on the 6 x 7 one, a point halfway between two pixels goes to the neighbour that float64
    # rounding picks here and float32 rounding in torchvision: docs/pytorch.md)
    square = IMAGE[:, :6, :6].copy()
    np.testing.assert_allclose(T.RandomRotation((90, 90))(minifw.tensor(square)).numpy(),
                               F.rotate(torch.from_numpy(square), 90.0, fill=[0.0] * 3).numpy(), atol=1e-6)


# ---- PILToTensor and ConvertImageDtype ---------------------------------------------------------
# torchvision's documented rules: PILToTensor keeps the image's values and dtype, channels first;
# convert_image_dtype maps the full intensity of one dtype onto the other's (floats: 1.0,
# integers: their largest value), truncating on the way from floats to integers.
@pytest.mark.parametrize("mode, channels", [("RGB", 3), ("L", 1), ("RGBA", 4), ("LA", 2), ("P", 1)])
def test_pil_to_tensor_keeps_uint8_values_channels_first(mode, channels):
    Image = pytest.importorskip("PIL.Image")
    pic = Image.fromarray(IMAGE_U8.transpose(1, 2, 0)).convert(mode)
    out = T.PILToTensor()(pic)
    hwc = np.asarray(pic).reshape(pic.height, pic.width, -1)
    assert isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.shape == (channels, 6, 7)
    np.testing.assert_array_equal(out, hwc.transpose(2, 0, 1))
    assert out.flags.c_contiguous and not np.shares_memory(out, hwc)


@pytest.mark.parametrize("mode, dtype", [("F", minifw.float32), ("I", minifw.int32), ("1", minifw.bool)])
def test_pil_to_tensor_of_modes_minifw_tensors_hold(mode, dtype):
    Image = pytest.importorskip("PIL.Image")
    pic = Image.fromarray(IMAGE_U8[0]).convert(mode)
    out = T.PILToTensor()(pic)
    assert isinstance(out, minifw.Tensor) and out.dtype == dtype and out.shape == (1, 6, 7)
    np.testing.assert_array_equal(out.numpy()[0], np.asarray(pic))


def test_pil_to_tensor_refuses_what_is_not_a_pil_image():
    with pytest.raises(TypeError, match="PILToTensor: pic should be a PIL Image, got ndarray"):
        T.PILToTensor()(IMAGE_U8)
    assert repr(T.PILToTensor()) == "PILToTensor()"


def test_pil_to_tensor_then_convert_image_dtype_is_to_tensor():
    Image = pytest.importorskip("PIL.Image")
    pic = Image.fromarray(IMAGE_U8.transpose(1, 2, 0))
    out = T.Compose([T.PILToTensor(), T.ConvertImageDtype(minifw.float32)])(pic)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, T.ToTensor()(pic).numpy())
    augmented = T.RandAugment(generator=seeded())(T.PILToTensor()(pic))  # a uint8 image, as torchvision's
    assert augmented.dtype == np.uint8 and augmented.shape == (3, 6, 7)


def test_uint8_to_float_divides_by_255_and_back_is_exact():
    levels = np.arange(256, dtype=np.uint8).reshape(1, 16, 16)
    as_float = T.convert_image_dtype(levels, minifw.float32)
    assert as_float.dtype == np.float32
    np.testing.assert_array_equal(as_float, levels.astype(np.float32) / np.float32(255))
    np.testing.assert_array_equal(T.convert_image_dtype(as_float, np.uint8), levels)
    as_double = T.ConvertImageDtype(minifw.float64)(levels)
    np.testing.assert_array_equal(as_double, levels / 255.0)


def test_float_to_integer_scales_by_just_under_the_levels_and_truncates():
    x = np.array([0.0, 0.25, 0.5, 0.996, 0.999, 1.0], np.float32)
    # x * (255 + 1 - 0.001), truncated: 1.0 reaches 255, and 0.999 too; 0.996 stays below
    assert T.convert_image_dtype(x, np.uint8).tolist() == [0, 63, 127, 254, 255, 255]
    assert T.convert_image_dtype(x, np.int16).tolist() == [0, 8191, 16383, 32636, 32735, 32767]
    assert T.convert_image_dtype(x.astype(np.float64), minifw.int32).tolist()[-1] == 2 ** 31 - 1
    # values outside [0, 1] are clamped to the target's range
    assert T.convert_image_dtype(np.array([-0.5, 1.5], np.float32), np.uint8).tolist() == [0, 255]


@pytest.mark.parametrize("source, target", [(np.float32, minifw.int32), (np.float32, minifw.int64),
                                            (np.float64, minifw.int64)])
def test_float_to_integers_it_cannot_represent_is_refused(source, target):
    with pytest.raises(RuntimeError, match=f"converting a {np.dtype(source)} image to {target} is refused"):
        T.convert_image_dtype(np.zeros((1, 2, 2), source), target)


def test_integer_to_integer_scales_by_the_ratio_of_the_ranges():
    u8 = np.array([0, 1, 127, 128, 255], np.uint8)
    wide = T.convert_image_dtype(u8, np.int16)
    assert wide.dtype == np.int16 and wide.tolist() == [0, 128, 16256, 16384, 32640]
    assert T.convert_image_dtype(wide, np.uint8).tolist() == u8.tolist()
    assert T.convert_image_dtype(np.array([0, 2 ** 23 - 1, 2 ** 23, 2 ** 31 - 1], np.int32),
                                 np.uint8).tolist() == [0, 0, 1, 255]
    assert T.convert_image_dtype(u8, minifw.int64).tolist()[-1] == 255 * 2 ** 55


def test_tensor_images_and_the_same_dtype():
    t = minifw.tensor(IMAGE)
    assert T.ConvertImageDtype(minifw.float32)(t) is t
    double = T.ConvertImageDtype(minifw.float64)(t)
    assert isinstance(double, minifw.Tensor) and double.dtype == minifw.float64
    np.testing.assert_array_equal(double.numpy(), IMAGE.astype(np.float64))
    as_u8 = T.ConvertImageDtype(np.uint8)(t)  # no uint8 Tensors: a uint8 array
    assert isinstance(as_u8, np.ndarray) and as_u8.dtype == np.uint8
    np.testing.assert_array_equal(as_u8, (IMAGE * np.float32(255.999)).astype(np.uint8))
    ints = T.convert_image_dtype(minifw.tensor([[0, 2 ** 31 - 1]], dtype=minifw.int32))  # float32
    assert isinstance(ints, minifw.Tensor) and ints.tolist() == [[0.0, 1.0]]


@pytest.mark.parametrize("dtype", ["float32", float, None, minifw.bfloat16, np.complex64])
def test_convert_image_dtype_refuses_what_is_not_an_image_dtype(dtype):
    with pytest.raises(TypeError, match=r"ConvertImageDtype: dtype must be a dtype of bools, integers or floats"):
        T.ConvertImageDtype(dtype)


def test_convert_image_dtype_refuses_what_is_not_an_image():
    with pytest.raises(TypeError, match="convert_image_dtype: image should be a Tensor or an array, got list"):
        T.ConvertImageDtype(minifw.float32)([[1, 2]])
    assert repr(T.ConvertImageDtype(minifw.float32)) == "ConvertImageDtype()"


def test_convert_image_dtype_against_torch_arithmetic():
    torch = pytest.importorskip("torch")  # torchvision's rule in torch's own arithmetic
    x = np.random.default_rng(1).random((3, 40, 40)).astype(np.float32)
    want = torch.from_numpy(x).mul(255 + 1.0 - 1e-3).to(torch.uint8).numpy()
    np.testing.assert_array_equal(T.convert_image_dtype(x, np.uint8), want)
    want = (torch.from_numpy(IMAGE_U8).to(torch.float32) / 255.0).numpy()
    np.testing.assert_array_equal(T.convert_image_dtype(IMAGE_U8, minifw.float32), want)
