"""minifw.data.transforms.v2 (torchvision.transforms.v2 for plain images) and v1's ToPILImage /
to_pil_image: the classic v2 pipeline on a PIL image and on a uint8 array, ToImage's dtypes,
ToDtype's scaling value for value, ToPILImage's modes and round trips, samples of several
leaves, the places where v2 differs from v1, the argument checks, and, when torchvision is
installed, torchvision itself on the deterministic transforms."""
import collections
import sys

import numpy as np
import pytest

import minifw
from minifw.data import transforms as T
from minifw.vision.transforms import v2

Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed")

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
HWC = np.random.default_rng(0).integers(0, 256, (12, 10, 3)).astype(np.uint8)  # H 12, W 10, RGB
FLOATS = np.random.default_rng(1).random((3, 5, 4)).astype(np.float32)  # C, H, W in [0, 1)


def rgb(hwc=HWC):
    return Image.fromarray(hwc)


def seeded(seed=0):
    return minifw.Generator().manual_seed(seed)


# ---- the module and its names ---------------------------------------------------------------------
def test_v2_imports_as_torchvisions_does():
    import minifw.data.transforms_v2
    import minifw.vision.transforms.v2 as imported
    from minifw.data.transforms import v2 as from_data

    assert v2 is imported is from_data is minifw.data.transforms_v2 is T.v2
    assert v2.InterpolationMode is T.InterpolationMode and v2.AutoAugmentPolicy is T.AutoAugmentPolicy


SHARED = ["Compose", "Normalize", "Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop",
          "RandomHorizontalFlip", "RandomVerticalFlip", "Pad", "ColorJitter", "Grayscale",
          "RandomGrayscale", "RandomRotation", "RandomAffine", "Lambda", "RandomApply", "RandomChoice",
          "RandomOrder", "GaussianBlur", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix",
          "RandomErasing", "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
          "RandomAutocontrast", "RandomEqualize", "ToTensor", "PILToTensor", "ToPILImage"]


@pytest.mark.parametrize("name", SHARED)
def test_every_v1_class_torchvisions_v2_shares_is_there(name):
    assert issubclass(getattr(v2, name), getattr(T, name)) and getattr(v2, name) is not getattr(T, name)
    assert name in v2.__all__


def test_v2s_own_conversions_are_there():
    assert all(name in v2.__all__ and callable(getattr(v2, name))
               for name in ("ToImage", "ToDtype", "ToPureTensor", "ConvertImageDtype"))


# ---- the classic v2 pipeline -----------------------------------------------------------------------
def classic(generator=None, **crop):
    return v2.Compose([v2.ToImage(), v2.ToDtype(minifw.float32, scale=True),
                       v2.RandomResizedCrop(8, antialias=True, generator=generator, **crop),
                       v2.RandomHorizontalFlip(generator=generator), v2.Normalize(MEAN, STD)])


@pytest.mark.parametrize("image", [pytest.param(rgb, id="PIL"), pytest.param(lambda: HWC, id="uint8-array")])
def test_the_classic_pipeline_gives_a_float32_chw_tensor(image):
    out = classic()(image())
    assert isinstance(out, minifw.Tensor) and out.dtype == minifw.float32 and out.shape == (3, 8, 8)
    assert np.isfinite(out.numpy()).all()


def test_the_classic_pipeline_by_hand_and_alike_on_both_kinds_of_image():
    # the whole 10 x 10 square (scale and ratio 1), resized to 8 x 8, flipped or not, normalized
    square = HWC[:10]
    pipeline = classic(seeded(3), scale=(1.0, 1.0), ratio=(1.0, 1.0))
    from_image = pipeline(rgb(square)).numpy()
    pipeline = classic(seeded(3), scale=(1.0, 1.0), ratio=(1.0, 1.0))
    from_array = pipeline(square).numpy()
    np.testing.assert_array_equal(from_image, from_array)
    floats = square.transpose(2, 0, 1).astype(np.float32) * np.float32(1 / 255)
    resized = T.Resize((8, 8))(minifw.tensor(floats)).numpy()
    mean, std = (np.array(v, np.float32)[:, None, None] for v in (MEAN, STD))
    candidates = [(resized - mean) / std, (resized[..., ::-1] - mean) / std]
    assert any(np.allclose(from_array, c, rtol=1e-6, atol=1e-6) for c in candidates)


def test_a_sample_of_image_and_label_keeps_the_label():
    image, label = classic()(rgb(), 7)
    assert image.shape == (3, 8, 8) and label == 7
    sample = classic()({"image": HWC, "label": minifw.tensor(3), "name": "x"})
    assert sample["image"].shape == (3, 8, 8) and sample["label"].item() == 3 and sample["name"] == "x"


# ---- ToImage -------------------------------------------------------------------------------------------
def test_to_image_of_a_uint8_image_is_a_uint8_chw_array():
    for image in (rgb(), HWC):
        out = v2.ToImage()(image)
        assert isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.shape == (3, 12, 10)
        np.testing.assert_array_equal(out, HWC.transpose(2, 0, 1))
        assert out.flags.c_contiguous
    gray = v2.ToImage()(HWC[..., 0])
    assert gray.shape == (1, 12, 10) and gray.dtype == np.uint8


@pytest.mark.parametrize("image, dtype, expected", [
    pytest.param(Image.frombytes("F", (2, 1), np.array([-1.5, 300.0], np.float32).tobytes()), minifw.float32,
                 [[[-1.5, 300.0]]], id="PIL-F"),
    pytest.param(Image.frombytes("I", (2, 1), np.array([-7, 70000], np.int32).tobytes()), minifw.int32,
                 [[[-7, 70000]]], id="PIL-I"),
    pytest.param(np.array([[[0.25], [2.0]]]), minifw.float64, [[[0.25, 2.0]]], id="float64-array"),
    pytest.param(np.array([[[5, 6]]], np.int64), minifw.int64, [[[5]], [[6]]], id="int64-array"),
])
def test_to_image_keeps_other_dtypes_as_tensors(image, dtype, expected):
    out = v2.ToImage()(image)
    assert isinstance(out, minifw.Tensor) and out.dtype == dtype
    assert out.tolist() == expected


def test_to_image_passes_a_tensor_through():
    t = minifw.tensor(FLOATS)
    assert v2.ToImage()(t) is t


@pytest.mark.parametrize("image, error, message", [
    pytest.param(np.zeros(4, np.uint8), ValueError, r"\(H, W, C\) or \(H, W\), got shape \(4,\)", id="1-D"),
    pytest.param(np.zeros((1, 2, 2, 3), np.uint8), ValueError, "got shape", id="4-D"),
    pytest.param([[1, 2]], TypeError, "ToImage: the sample holds no image", id="list-of-ints"),
])
def test_to_image_errors(image, error, message):
    with pytest.raises(error, match=message):
        v2.ToImage()(image)


# ---- ToDtype --------------------------------------------------------------------------------------------
def test_to_dtype_scale_uint8_to_float32_multiplies_by_one_over_255():
    values = np.arange(256, dtype=np.uint8).reshape(1, 16, 16)
    out = v2.ToDtype(minifw.float32, scale=True)(values)
    assert isinstance(out, minifw.Tensor) and out.dtype == minifw.float32
    np.testing.assert_array_equal(out.numpy(), values.astype(np.float32) * np.float32(1 / 255))
    flat = out.numpy().reshape(-1)
    assert flat[0] == 0 and flat[255] == 1.0
    assert flat[51] == np.nextafter(np.float32(0.2), np.float32(1))  # v1's division gives 0.2 itself
    assert T.convert_image_dtype(values, minifw.float32).reshape(-1)[51] == np.float32(0.2)
    np.testing.assert_array_max_ulp(flat, np.arange(256, dtype=np.float32) / np.float32(255), maxulp=1)


@pytest.mark.parametrize("values, dtype, scale, expected", [
    pytest.param(np.array([[[0.0, 0.5, 0.999, 1.0, 1.2, -0.1]]], np.float32), np.uint8, True,
                 [[[0, 127, 255, 255, 255, 0]]], id="float32-to-uint8-truncated-and-clamped"),
    pytest.param(np.array([[[0, 1, 255]]], np.uint8), np.int16, True, [[[0, 128, 32640]]], id="uint8-to-int16"),
    pytest.param(np.array([[[0, 127, 128, 32767]]], np.int16), np.uint8, True, [[[0, 0, 1, 255]]],
                 id="int16-to-uint8"),
    pytest.param(np.array([[[0, 255]]], np.uint8), np.float64, True, [[[0.0, 1.0]]], id="uint8-to-float64"),
    pytest.param(np.array([[[0.25, 3.0]]], np.float64), np.float32, True, [[[0.25, 3.0]]], id="float-to-float"),
    pytest.param(np.array([[[0, 200]]], np.uint8), np.float32, False, [[[0.0, 200.0]]], id="no-scale-cast"),
    pytest.param(np.array([[[1.9, -1.9]]], np.float32), np.int64, False, [[[1, -1]]], id="no-scale-truncates"),
])
def test_to_dtype_values_by_hand(values, dtype, scale, expected):
    out = v2.ToDtype(dtype, scale=scale)(values)
    array = out.numpy() if isinstance(out, minifw.Tensor) else out
    assert array.dtype == np.dtype(dtype) and array.tolist() == expected
    assert isinstance(out, minifw.Tensor) == (np.dtype(dtype) in (np.float32, np.float64, np.int64))


def test_to_dtype_keeps_an_image_of_its_dtype_and_passes_pil_through():
    t = minifw.tensor(FLOATS)
    assert v2.ToDtype(minifw.float32, scale=True)(t) is t
    image = rgb()
    assert v2.ToDtype(minifw.float32, scale=True)(image) is image


def test_to_dtype_takes_a_dict_of_dtypes():
    values = np.array([[[0, 255]]], np.uint8)
    assert v2.ToDtype({minifw.Tensor: minifw.float32}, scale=True)(values).tolist() == [[[0.0, 1.0]]]
    assert v2.ToDtype({"others": minifw.float64})(values).dtype == minifw.float64
    with pytest.warns(UserWarning, match="no scaling is done"):
        assert v2.ToDtype({minifw.Tensor: None, "others": minifw.float32}, scale=True)(values) is values


def test_to_dtype_keeps_a_tensor_on_its_device():
    image = minifw.tensor(np.array([[[0.5, 1.0]]]), device="cudasim")
    out = v2.ToDtype(minifw.float32)(image)
    assert out.device == image.device and out.dtype == minifw.float32 and out.tolist() == [[[0.5, 1.0]]]
    as_uint8 = v2.ToDtype(np.uint8, scale=True)(image)
    assert as_uint8.dtype == np.uint8 and np.asarray(as_uint8).tolist() == [[[127, 255]]]


@pytest.mark.parametrize("make, image, error, message", [
    pytest.param(lambda: v2.ToDtype("float"), None, TypeError, "ToDtype: dtype must be a dtype", id="str"),
    pytest.param(lambda: v2.ToDtype({int: minifw.float32}), None, TypeError, "keys minifw.Tensor and 'others'",
                 id="dict-key"),
    pytest.param(lambda: v2.ToDtype({}), None, ValueError, "names no dtype for images", id="empty-dict"),
    pytest.param(lambda: v2.ToDtype(minifw.int32, scale=True), FLOATS, RuntimeError,
                 "ToDtype: converting a float32 image to int32 is refused", id="float32-to-int32"),
    pytest.param(lambda: v2.ToDtype(np.uint8, scale=True), np.ones((1, 2, 2), bool), TypeError,
                 "scale=True from bool to uint8 is not defined", id="bool-to-uint8"),
    pytest.param(lambda: v2.ConvertImageDtype({minifw.Tensor: minifw.float32}), None, TypeError,
                 "ConvertImageDtype: dtype must be", id="convert-dict"),
])
def test_to_dtype_errors(make, image, error, message):
    with pytest.raises(error, match=message):
        make()(image)


# ---- ToPILImage / to_pil_image -----------------------------------------------------------------------
def test_to_pil_image_of_a_float_tensor_truncates_x_255():
    image = T.ToPILImage()(minifw.tensor(FLOATS))
    assert image.mode == "RGB" and image.size == (4, 5)
    expected = (FLOATS * 255).astype(np.uint8).transpose(1, 2, 0)  # 0.999 * 255 = 254.7 -> 254
    np.testing.assert_array_equal(np.asarray(image), expected)
    assert np.asarray(T.to_pil_image(minifw.tensor([[[0.0, 0.5, 0.999, 1.0, 1.5, -0.5]]]))).tolist() == [
        [0, 127, 254, 255, 255, 0]]


def test_to_pil_image_round_trips():
    # float Tensor -> image -> ToTensor: the values to 1/255 below, exactly the truncated ones
    back = T.ToTensor()(T.ToPILImage()(minifw.tensor(FLOATS))).numpy()
    np.testing.assert_array_equal(back, np.floor(FLOATS * 255) / np.float32(255))
    # uint8 H x W x C array -> image as it is -> array
    for hwc, mode in ((HWC, "RGB"), (HWC[..., :1], "L"), (HWC[..., 0], "L"), (HWC[..., :2], "LA")):
        image = T.ToPILImage()(hwc)
        assert image.mode == mode
        np.testing.assert_array_equal(np.asarray(image), hwc.reshape(12, 10) if mode == "L" else hwc)
    rgba = np.concatenate([HWC, HWC[..., :1]], axis=2)
    assert T.ToPILImage()(rgba).mode == "RGBA" and np.array_equal(np.asarray(T.ToPILImage()(rgba)), rgba)
    # PIL image -> v2.ToImage -> v2.ToDtype -> ToPILImage: the same pixels
    chw = v2.ToDtype(minifw.float32, scale=True)(v2.ToImage()(rgb()))
    np.testing.assert_array_equal(np.asarray(v2.ToPILImage()(chw)), HWC)


@pytest.mark.parametrize("pic, mode, expected_mode, expected", [
    pytest.param(minifw.tensor([[[-1.5, 300.0]]]), "F", "F", [[-1.5, 300.0]], id="float32-F"),
    pytest.param(minifw.tensor(np.array([[[-7, 70000]]], np.int32)), None, "I", [[-7, 70000]], id="int32-I"),
    pytest.param(np.array([[1, 65535]], np.uint16), None, "I;16", [[1, 65535]], id="uint16-I;16"),
    pytest.param(minifw.tensor([[0.0, 1.0]]), None, "L", [[0, 255]], id="2-D-tensor"),
    pytest.param(np.full((1, 1, 3), 7, np.uint8), "YCbCr", "YCbCr", [[[7, 7, 7]]], id="bytes-read-as-YCbCr"),
])
def test_to_pil_image_modes(pic, mode, expected_mode, expected):
    image = T.to_pil_image(pic, mode)
    assert image.mode == expected_mode and np.asarray(image).tolist() == expected


@pytest.mark.parametrize("pic, mode, error, message", [
    pytest.param([[1.0]], None, TypeError, r"pic should be a Tensor \(C, H, W\) or a NumPy array", id="list"),
    pytest.param(rgb(), None, TypeError, "got Image", id="PIL"),
    pytest.param(minifw.zeros(1, 1, 2, 2), None, ValueError, r"2- or 3-dimensional.*got shape \(1, 1, 2, 2\)",
                 id="4-D"),
    pytest.param(minifw.zeros(5, 2, 2), None, ValueError, r"1 to 4 channels.*\(5, 2, 2\)$", id="5-channels"),
    pytest.param(np.zeros((3, 32, 32), np.uint8), None, ValueError, r"needs \.transpose\(1, 2, 0\)",
                 id="chw-array"),
    pytest.param(np.zeros((2, 2), np.uint8), "F", ValueError,
                 "mode 'F' does not fit a 1-channel image of dtype uint8, which takes mode 'L'", id="mode-1-channel"),
    pytest.param(np.zeros((2, 2, 3), np.uint8), "LA", ValueError, "3-channel image takes mode RGB or YCbCr or HSV",
                 id="mode-3-channels"),
    pytest.param(np.zeros((2, 2, 2), np.int32), None, TypeError,
                 "a 2-channel image of dtype int32 has no PIL mode", id="2-channels-int32"),
    pytest.param(minifw.zeros(1, 2, 2, dtype=minifw.int64), None, TypeError,
                 "1-channel image of dtype int64 has no PIL mode", id="int64"),
    pytest.param(minifw.zeros(3, 2, 2, dtype=minifw.int32), "RGB", TypeError,
                 "3-channel image of dtype int32 has no PIL mode", id="rgb-of-int32"),
    pytest.param(np.zeros((2, 2), np.uint8), 3, TypeError, "mode must be a PIL mode name", id="mode-int"),
])
def test_to_pil_image_errors(pic, mode, error, message):
    with pytest.raises(error, match=message):
        T.to_pil_image(pic, mode)


def test_to_pil_image_without_pillow_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"to_pil_image: making a PIL image needs Pillow.*pip install pillow"):
        T.ToPILImage()(minifw.tensor(FLOATS))


def test_to_pil_image_reprs():
    assert repr(T.ToPILImage()) == "ToPILImage()" and repr(T.ToPILImage("RGB")) == "ToPILImage(mode=RGB)"
    with pytest.raises(TypeError, match="ToPILImage: mode must be"):
        T.ToPILImage(1)


def test_v2_to_pil_image_passes_a_pil_image_through():
    image = rgb()
    assert v2.ToPILImage()(image) is image


# ---- samples --------------------------------------------------------------------------------------------
def test_samples_keep_their_structure():
    Pair = collections.namedtuple("Pair", "image label")
    flip = v2.RandomHorizontalFlip(p=1.0)
    out = flip(Pair(HWC.transpose(2, 0, 1).copy(), 3))
    assert isinstance(out, Pair) and out.label == 3 and np.array_equal(out.image, HWC.transpose(2, 0, 1)[..., ::-1])
    nested = flip([rgb(), {"label": 3, "extra": (1, "a")}])
    assert isinstance(nested, list) and nested[1] == {"label": 3, "extra": (1, "a")}
    np.testing.assert_array_equal(np.asarray(nested[0]), HWC[:, ::-1])


def test_tensors_after_the_image_pass_through():
    image, mask = minifw.tensor(FLOATS), minifw.tensor(FLOATS)
    out, same = v2.RandomVerticalFlip(p=1.0)(image, mask)
    assert same is mask and np.array_equal(out.numpy(), FLOATS[:, ::-1])
    label = minifw.tensor([1.0, 2.0])
    image_out, label_out = v2.Resize(4)(rgb(), label)
    assert label_out is label and image_out.size == (4, 4)  # with a PIL image there, tensors are not images


def test_several_pil_images_get_the_same_draws():
    first, second = rgb(), rgb(HWC[::-1].copy())
    a, b = v2.RandomResizedCrop(5, scale=(0.2, 0.5), generator=seeded(1))(first, second)
    for image, out in ((first, a), (second, b)):  # each as it would be alone, from the same seed
        alone = v2.RandomResizedCrop(5, scale=(0.2, 0.5), generator=seeded(1))(image)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(alone))
    assert not np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("call, message", [
    pytest.param(lambda: v2.Resize(4)(3), "Resize: the sample holds no image", id="int"),
    pytest.param(lambda: v2.RandomHorizontalFlip()((1, "a")), "RandomHorizontalFlip: the sample holds no image",
                 id="tuple"),
    pytest.param(lambda: v2.CenterCrop(2)(), "CenterCrop: expected an image, or a sample", id="nothing"),
    pytest.param(lambda: v2.Compose([v2.CenterCrop(2)])(), "Compose: expected an image", id="compose-nothing"),
])
def test_a_sample_without_an_image_is_refused(call, message):
    with pytest.raises(TypeError, match=message):
        call()


# ---- where v2 differs from v1 ------------------------------------------------------------------------------
def test_to_tensor_is_deprecated_and_passes_tensors_through():
    with pytest.warns(UserWarning, match=r"ToTensor\(\) is deprecated.*v2.ToImage\(\), v2.ToDtype"):
        to_tensor = v2.ToTensor()
    out = to_tensor(rgb())
    np.testing.assert_array_equal(out.numpy(), T.ToTensor()(rgb()).numpy())
    t = minifw.tensor(FLOATS)
    assert to_tensor(t) is t


def test_pil_to_tensor_passes_tensors_through():
    t = minifw.tensor(FLOATS)
    assert v2.PILToTensor()(t) is t
    np.testing.assert_array_equal(v2.PILToTensor()(rgb()), HWC.transpose(2, 0, 1))


def test_convert_image_dtype_defaults_to_float32_and_scales_as_to_dtype():
    values = np.array([[[51, 255]]], np.uint8)
    out = v2.ConvertImageDtype()(values)
    assert out.dtype == minifw.float32 and out.numpy()[0, 0, 0] == np.nextafter(np.float32(0.2), np.float32(1))


def test_resize_size_none_makes_the_longer_edge_max_size():
    assert v2.Resize(None, max_size=10)(minifw.zeros(3, 20, 30)).shape == (3, 6, 10)
    assert v2.Resize(None, max_size=15)(rgb()).size == (12, 15)  # 12 x 10 (h x w): w = int(15 * 10 / 12)
    assert v2.Resize(4)(minifw.zeros(1, 8, 12)).shape == (1, 4, 6)
    with pytest.raises(ValueError, match="max_size must be a positive int when size is None"):
        v2.Resize(None)


def test_color_jitter_factors_default_to_none():
    jitter = v2.ColorJitter(brightness=None, hue=0.1)
    assert jitter.brightness is None and jitter.hue == (-0.1, 0.1)
    t = minifw.tensor(FLOATS)
    np.testing.assert_array_equal(v2.ColorJitter()(t).numpy(), FLOATS)


def test_random_erasing_erases_pil_images():
    erase = v2.RandomErasing(p=1.0, scale=(0.2, 0.2), ratio=(1.0, 1.0), value=(1, 2, 3), generator=seeded(0))
    out = np.asarray(erase(rgb()))
    changed = (out != HWC).any(axis=2)
    assert changed.sum() > 0 and (out[changed] == [1, 2, 3]).all()
    image = rgb()
    assert v2.RandomErasing(p=0.0)(image) is image


def test_lambda_applies_to_every_leaf_of_its_types():
    double = v2.Lambda(lambda x: x * 2)
    image, label, other = double(minifw.ones(1), 3, minifw.ones(1))
    assert image.tolist() == [2.0] and label == 6 and other.tolist() == [1.0]  # v2's rule for plain tensors
    only_ints = v2.Lambda(lambda x: x + 1, int)
    out, label = only_ints(minifw.ones(1), 3)
    assert out.tolist() == [1.0] and label == 4
    with pytest.raises(TypeError, match="Lambda: types must be classes"):
        v2.Lambda(abs, "int")


def test_containers_hand_the_whole_sample_on():
    add = v2.Lambda(lambda x: x + 1, int)
    assert v2.Compose([add, add])(rgb(), 1)[1] == 3
    assert v2.RandomApply([add], p=1.0)(rgb(), 1)[1] == 2 and v2.RandomApply([add], p=0.0)(rgb(), 1)[1] == 1
    assert v2.RandomChoice([add, add])(rgb(), 1)[1] == 2
    assert v2.RandomOrder([add, add, add])(rgb(), 1)[1] == 4
    assert v2.Compose([add])(5) == 6  # one argument: no unpacking


def test_random_apply_applies_when_the_draw_is_under_p():
    draws = seeded(4).numpy.random(40)
    apply = v2.RandomApply([v2.Lambda(lambda x: -x)], p=0.5, generator=seeded(4))
    assert [apply(1.0) for _ in range(40)] == [-1.0 if u < 0.5 else 1.0 for u in draws]


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: v2.Compose([]), ValueError, "Compose: transforms is empty", id="compose"),
    pytest.param(lambda: v2.RandomApply([]), ValueError, "RandomApply: transforms is empty", id="apply"),
    pytest.param(lambda: v2.RandomChoice([]), ValueError, "RandomChoice: transforms is empty", id="choice"),
    pytest.param(lambda: v2.RandomOrder(v2.ToImage()), TypeError, "RandomOrder: transforms must be a list",
                 id="order"),
])
def test_containers_refuse_empty_lists(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_the_random_transforms_follow_manual_seed():
    pipeline = v2.Compose([v2.ToImage(), v2.RandomResizedCrop(6), v2.RandomHorizontalFlip(),
                           v2.ColorJitter(0.4, 0.4, 0.4, 0.1), v2.ToDtype(minifw.float32, scale=True),
                           v2.RandomErasing()])

    def run():
        minifw.manual_seed(5)
        return np.stack([pipeline(rgb()).numpy() for _ in range(6)])

    np.testing.assert_array_equal(run(), run())


# ---- torchvision itself, where installed -------------------------------------------------------------------
@pytest.fixture
def tv():
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchvision")
    from torchvision.transforms import v2 as tv_v2
    from torchvision.transforms import functional as tv_f
    return torch, tv_v2, tv_f


def test_conversions_against_torchvision(tv):
    torch, tv_v2, tv_f = tv
    for image in (rgb(), HWC, HWC[..., 0]):
        theirs = tv_v2.ToImage()(image).numpy()
        ours = v2.ToImage()(image)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)
    values = np.random.default_rng(2).integers(0, 256, (3, 7, 9)).astype(np.uint8)
    for dtype, theirs_dtype in ((minifw.float32, torch.float32), (minifw.float64, torch.float64)):
        theirs = tv_v2.ToDtype(theirs_dtype, scale=True)(torch.from_numpy(values)).numpy()
        np.testing.assert_array_equal(v2.ToDtype(dtype, scale=True)(values).numpy(), theirs)
        theirs = tv_v2.ConvertImageDtype(theirs_dtype)(torch.from_numpy(values)).numpy()
        np.testing.assert_array_equal(v2.ConvertImageDtype(dtype)(values).numpy(), theirs)
    floats = np.random.default_rng(3).random((3, 7, 9)).astype(np.float32)
    np.testing.assert_array_equal(v2.ToDtype(np.uint8, scale=True)(floats),
                                  tv_v2.ToDtype(torch.uint8, scale=True)(torch.from_numpy(floats)).numpy())
    np.testing.assert_array_equal(v2.ToDtype(np.int16, scale=True)(values),
                                  tv_v2.ToDtype(torch.int16, scale=True)(torch.from_numpy(values)).numpy())
    for pic, theirs_pic, mode in ((minifw.tensor(floats), torch.from_numpy(floats), None), (HWC, HWC, None),
                                  (minifw.tensor(floats[:1]), torch.from_numpy(floats[:1]), "F"),
                                  (HWC[..., :2], HWC[..., :2], None), (HWC, HWC, "HSV")):
        ours, theirs = T.ToPILImage(mode)(pic), tv_f.to_pil_image(theirs_pic, mode)
        assert ours.mode == theirs.mode and ours.size == theirs.size
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_deterministic_transforms_against_torchvision(tv):
    torch, tv_v2, _ = tv
    floats = np.random.default_rng(4).random((3, 13, 17)).astype(np.float32)
    t, theirs_t = minifw.tensor(floats), torch.from_numpy(floats)
    np.testing.assert_allclose(v2.Normalize(MEAN, STD)(t).numpy(), tv_v2.Normalize(MEAN, STD)(theirs_t).numpy(),
                               rtol=1e-6, atol=1e-6)
    for size in ((6, 8), 5, (20, 9)):
        np.testing.assert_array_equal(v2.CenterCrop(size)(t).numpy(), tv_v2.CenterCrop(size)(theirs_t).numpy())
        np.testing.assert_array_equal(np.asarray(v2.CenterCrop(size)(rgb())),
                                      np.asarray(tv_v2.CenterCrop(size)(rgb())))
        # bilinear with antialias (torch's separable filter) in float32: a few ulp apart
        np.testing.assert_allclose(v2.Resize(size)(t).numpy(), tv_v2.Resize(size)(theirs_t).numpy(), atol=2e-6)
        np.testing.assert_array_equal(np.asarray(v2.Resize(size)(rgb())), np.asarray(tv_v2.Resize(size)(rgb())))
    np.testing.assert_allclose(v2.Resize(None, max_size=11)(t).numpy(),
                               tv_v2.Resize(None, max_size=11)(theirs_t).numpy(), atol=2e-6)


def test_an_image_folder_script_with_its_imports_renamed(tmp_path):
    # torchvision's v2 classification recipe: `import torch` and `torchvision` renamed, nothing else
    import minifw as torch
    from minifw.utils.data import DataLoader
    from minifw.vision import datasets
    from minifw.vision.transforms import v2 as transforms

    for label, name in enumerate(("cat", "dog")):
        (tmp_path / name).mkdir()
        for i in range(3):
            rgb(np.roll(HWC, 40 * (3 * label + i))).save(tmp_path / name / f"{i}.png")
    train_transform = transforms.Compose([
        transforms.ToImage(),
        transforms.RandomResizedCrop(8, antialias=True),
        transforms.RandomHorizontalFlip(),
        transforms.ToDtype(torch.float32, scale=True),
        transforms.Normalize(mean=MEAN, std=STD),
    ])
    dataset = datasets.ImageFolder(str(tmp_path), transform=train_transform)
    images, labels = next(iter(DataLoader(dataset, batch_size=6, shuffle=True)))
    assert tuple(images.shape) == (6, 3, 8, 8) and images.dtype == torch.float32
    assert sorted(labels.tolist()) == [0, 0, 0, 1, 1, 1]
    low, high = (0 - max(MEAN)) / min(STD), (1 - min(MEAN)) / min(STD)
    assert low <= images.numpy().min() and images.numpy().max() <= high
