"""minifw.vision.datasets (FashionMNIST, KMNIST, CIFAR10, CIFAR100) on small files written here
in the datasets' own formats (IDX, pickles, CIFAR-10's binary records), and minifw.vision.utils
(make_grid, save_image) against NumPy references. The real datasets are never needed."""
import io
import os
import pickle
import struct
import zlib

import numpy as np
import pytest

import minifw
from minifw.data import write_idx
from minifw.vision import datasets, transforms, utils

RNG = np.random.default_rng(0)


# ---- FashionMNIST and KMNIST ------------------------------------------------------------------
def write_idx_split(folder, train, count=5):
    os.makedirs(folder, exist_ok=True)
    images = RNG.integers(0, 256, (count, 28, 28), dtype=np.uint8)
    labels = (np.arange(count) % 10).astype(np.uint8)
    prefix = "train" if train else "t10k"
    write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz"), images)
    write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"), labels)
    return images, labels


@pytest.mark.parametrize("cls, first_class, last_class", [
    pytest.param(datasets.FashionMNIST, "T-shirt/top", "Ankle boot", id="FashionMNIST"),
    pytest.param(datasets.KMNIST, "o", "wo", id="KMNIST"),
])
@pytest.mark.parametrize("layout", ["torchvision", "flat"])
def test_idx_datasets_read_their_layouts(cls, first_class, last_class, layout, tmp_path):
    folder = tmp_path / cls.__name__ / "raw" if layout == "torchvision" else tmp_path
    images, labels = write_idx_split(folder, train=False)
    ds = cls(tmp_path, train=False, download=True)  # the files are there: download checks only
    assert len(ds) == 5 and ds.classes[0] == first_class and ds.classes[9] == last_class
    assert ds.class_to_idx[last_class] == 9 and len(ds.classes) == 10
    np.testing.assert_array_equal(ds.data, images)
    image, label = ds[3]
    assert image.shape == (1, 28, 28) and image.dtype == minifw.float32 and label == labels[3]
    # pixels / 255: the values torchvision's ToTensor makes of these images
    np.testing.assert_allclose(image.numpy()[0], images[3] / np.float32(255), rtol=1e-6)
    assert cls.__name__ in repr(ds)


def test_fashion_mnist_needs_a_root():
    with pytest.raises(TypeError, match="FashionMNIST: root is required"):
        datasets.FashionMNIST()


def test_kmnist_download_says_where_to_put_the_files(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"KMNIST: download=True, but minifw does not "
                       r"download datasets.*train-images-idx3-ubyte.*Put the four KMNIST IDX") as info:
        datasets.KMNIST(tmp_path, download=True)
    assert os.path.join(str(tmp_path), "KMNIST", "raw") in str(info.value)
    with pytest.raises(FileNotFoundError, match="KMNIST: .* has no train-images-idx3-ubyte"):
        datasets.KMNIST(tmp_path)
    assert not os.listdir(tmp_path)


def test_mnist_keeps_its_own_folder_and_scale(tmp_path):
    images, _ = write_idx_split(tmp_path / "MNIST" / "raw", train=True)
    ds = datasets.MNIST(tmp_path)
    np.testing.assert_allclose(ds[0][0].numpy()[0], images[0] / np.float32(256), rtol=1e-6)
    with pytest.raises(FileNotFoundError, match="FashionMNIST: .* has no"):
        datasets.FashionMNIST(tmp_path)  # MNIST's folder is not Fashion-MNIST's


# ---- CIFAR ------------------------------------------------------------------------------------
def cifar_rows(count):
    return RNG.integers(0, 256, (count, 3072), dtype=np.uint8)


def dump(path, obj, protocol=2):
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


CIFAR10_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
                 "truck"]


def write_cifar10(root, per_batch=3, bytes_keys=False, protocol=2):
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    key = (lambda k: k.encode()) if bytes_keys else (lambda k: k)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        rows, labels = cifar_rows(per_batch), [int(v) for v in RNG.integers(0, 10, per_batch)]
        dump(folder / name, {key("batch_label"): "batch", key("labels"): labels, key("data"): rows,
                             key("filenames"): [f"{i}.png" for i in range(per_batch)]}, protocol)
        batches[name] = rows, labels
    dump(folder / "batches.meta", {key("label_names"): CIFAR10_NAMES, key("num_cases_per_batch"): 3},
         protocol)
    return batches


def reference_images(rows):
    """rows of 1024 red, 1024 green, 1024 blue bytes (each plane row-major) as (N, 32, 32, 3)."""
    out = np.empty((len(rows), 32, 32, 3), np.uint8)
    for n, row in enumerate(rows):
        for c in range(3):
            out[n, :, :, c] = row[c * 1024:(c + 1) * 1024].reshape(32, 32)
    return out


@pytest.mark.parametrize("bytes_keys, protocol", [
    pytest.param(False, 2, id="python2-style"),
    pytest.param(True, pickle.HIGHEST_PROTOCOL, id="python3-bytes-keys"),
])
def test_cifar10_reads_the_python_version(bytes_keys, protocol, tmp_path):
    batches = write_cifar10(tmp_path, bytes_keys=bytes_keys, protocol=protocol)
    train = datasets.CIFAR10(tmp_path, train=True)
    rows = np.concatenate([batches[f"data_batch_{i}"][0] for i in range(1, 6)])
    assert len(train) == 15 and train.data.shape == (15, 32, 32, 3) and train.data.dtype == np.uint8
    np.testing.assert_array_equal(train.data, reference_images(rows))
    assert train.targets == sum((batches[f"data_batch_{i}"][1] for i in range(1, 6)), [])
    assert isinstance(train.targets, list) and all(type(t) is int for t in train.targets)
    assert train.classes == CIFAR10_NAMES and train.class_to_idx["truck"] == 9
    test = datasets.CIFAR10(tmp_path, train=False, download=True)
    assert len(test) == 3 and test.targets == batches["test_batch"][1]


def test_cifar10_samples_are_what_to_tensor_makes(tmp_path):
    write_cifar10(tmp_path)
    ds = datasets.CIFAR10(tmp_path, transform=transforms.Compose([
        transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))]),
        target_transform=lambda y: y + 100)
    image, target = ds[4]
    expected = (ds.data[4].transpose(2, 0, 1) / np.float32(255) - 0.5) / 0.25
    assert image.shape == (3, 32, 32) and image.dtype == minifw.float32
    np.testing.assert_allclose(image.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert target == ds.targets[4] + 100
    # the usual CIFAR augmentation runs on the sample, before ToTensor, as on a PIL image
    augment = transforms.Compose([transforms.RandomCrop(32, padding=4),
                                  transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    assert augment(datasets.CIFAR10(tmp_path)[0][0]).shape == (3, 32, 32)
    assert "Number of datapoints: 15" in repr(ds) and "Split: Train" in repr(ds)


def test_cifar100_reads_fine_labels(tmp_path):
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    rows = cifar_rows(4)
    fine, coarse = [0, 99, 42, 7], [0, 19, 3, 1]
    dump(folder / "test", {"data": rows, "fine_labels": fine, "coarse_labels": coarse,
                           "filenames": ["a"] * 4, "batch_label": "testing batch 1 of 1"})
    dump(folder / "meta", {"fine_label_names": [f"fine{i}" for i in range(100)],
                           "coarse_label_names": [f"coarse{i}" for i in range(20)]})
    ds = datasets.CIFAR100(tmp_path, train=False)
    assert ds.targets == fine and len(ds.classes) == 100 and ds.class_to_idx["fine99"] == 99
    np.testing.assert_array_equal(ds.data, reference_images(rows))
    with pytest.raises(FileNotFoundError, match=r"CIFAR100: .*cifar-100-python folder \(train "
                       r"missing\).*cifar-100-python.tar.gz"):
        datasets.CIFAR100(tmp_path, train=True)


def test_cifar10_reads_the_binary_version(tmp_path):
    folder = tmp_path / "cifar-10-batches-bin"
    folder.mkdir()
    expected = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        rows, labels = cifar_rows(2), RNG.integers(0, 10, 2).astype(np.uint8)
        (folder / f"{name}.bin").write_bytes(b"".join(bytes([l]) + r.tobytes()
                                                      for l, r in zip(labels, rows)))
        expected[name] = rows, labels
    (folder / "batches.meta.txt").write_text("\n".join(CIFAR10_NAMES) + "\n\n")
    ds = datasets.CIFAR10(tmp_path, train=False)
    np.testing.assert_array_equal(ds.data, reference_images(expected["test_batch"][0]))
    assert ds.targets == expected["test_batch"][1].tolist() and ds.classes == CIFAR10_NAMES
    (folder / "test_batch.bin").write_bytes(b"\0" * 3074)
    with pytest.raises(ValueError, match="records of 3073 bytes.*3074 bytes"):
        datasets.CIFAR10(tmp_path, train=False)


class RunsCode:
    """What an attacker's pickle holds: unpickling it calls os.system."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def test_a_pickle_naming_another_global_is_refused_without_running(tmp_path):
    write_cifar10(tmp_path)
    marker = tmp_path / "ran"
    dump(tmp_path / "cifar-10-batches-py" / "test_batch",
         {"data": cifar_rows(1), "labels": [RunsCode(f"touch {marker}")]})
    with pytest.raises(pickle.UnpicklingError, match=r"test_batch: CIFAR: refusing to load "
                       r"(posix|os|nt)\.system from a pickle"):
        datasets.CIFAR10(tmp_path, train=False)
    assert not marker.exists()
    dump(tmp_path / "cifar-10-batches-py" / "batches.meta", {"label_names": [io.BytesIO()]})
    with pytest.raises(pickle.UnpicklingError, match=r"refusing to load _io\.BytesIO"):
        datasets.CIFAR10(tmp_path, train=True)


@pytest.mark.parametrize("entry, message", [
    pytest.param({"labels": [0]}, r"a dict with the key 'data', got \['labels'\]", id="no-data"),
    pytest.param({"data": np.zeros((1, 3071), np.uint8), "labels": [0]},
                 r"'data' should be a uint8 array of shape \(N, 3072\), got uint8 of shape \(1, 3071\)",
                 id="short-rows"),
    pytest.param({"data": np.zeros((2, 3072), np.uint8), "labels": [0]}, "holds 2 images but 1 labels",
                 id="label-count"),
    pytest.param({"data": np.zeros((1, 3072), np.uint8), "labels": [10]}, "labels must lie in 0-9",
                 id="label-range"),
])
def test_cifar_file_errors(entry, message, tmp_path):
    write_cifar10(tmp_path)
    dump(tmp_path / "cifar-10-batches-py" / "test_batch", entry)
    with pytest.raises(ValueError, match=message):
        datasets.CIFAR10(tmp_path, train=False)


def test_cifar10_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"CIFAR10: download=True, but minifw does not "
                       r"download datasets.*data_batch_1.*missing\).*Unpack cifar-10-python.tar.gz"):
        datasets.CIFAR10(tmp_path, download=True)
    write_cifar10(tmp_path)
    (tmp_path / "cifar-10-batches-py" / "data_batch_3").unlink()
    with pytest.raises(FileNotFoundError, match=r"\(data_batch_3 missing\)"):
        datasets.CIFAR10(tmp_path)
    assert len(datasets.CIFAR10(tmp_path, train=False)) == 3  # the test split is complete


# ---- make_grid and save_image -----------------------------------------------------------------
def reference_grid(batch, nrow, padding, pad_value):
    n, c, h, w = batch.shape
    cols, rows = min(nrow, n), -(-n // min(nrow, n))
    grid = np.full((c, rows * (h + padding) + padding, cols * (w + padding) + padding), pad_value,
                   np.float32)
    for k in range(n):
        y, x = padding + (k // cols) * (h + padding), padding + (k % cols) * (w + padding)
        grid[:, y:y + h, x:x + w] = batch[k]
    return grid


@pytest.mark.parametrize("n, nrow, padding", [(5, 2, 2), (3, 8, 0), (4, 4, 1)])
def test_make_grid_lays_images_out(n, nrow, padding):
    batch = RNG.random((n, 3, 4, 5)).astype(np.float32)
    out = utils.make_grid(minifw.tensor(batch), nrow=nrow, padding=padding, pad_value=0.5)
    assert isinstance(out, minifw.Tensor)
    np.testing.assert_array_equal(out.numpy(), reference_grid(batch, nrow, padding, 0.5))


def test_make_grid_normalizes_and_repeats_one_channel():
    batch = np.stack([np.full((1, 2, 2), 2.0), np.full((1, 2, 2), 6.0)]).astype(np.float32)
    batch[0, 0, 0, 0] = 0.0
    out = utils.make_grid(minifw.tensor(batch), normalize=True, padding=0).numpy()
    assert out.shape == (3, 2, 4) and (out[0] == out[2]).all()
    np.testing.assert_allclose(out[0], [[0, 1 / 3, 1, 1], [1 / 3, 1 / 3, 1, 1]], rtol=1e-6)
    each = utils.make_grid(minifw.tensor(batch), normalize=True, scale_each=True, padding=0).numpy()
    np.testing.assert_allclose(each[0], [[0, 1, 0, 0], [1, 1, 0, 0]], atol=1e-6)  # flat image: 0
    clipped = utils.make_grid([minifw.tensor(b) for b in batch], normalize=True, value_range=(1, 3),
                              padding=0).numpy()
    np.testing.assert_allclose(clipped[1], [[0, 0.5, 1, 1], [0.5, 0.5, 1, 1]], rtol=1e-6)
    single = utils.make_grid(minifw.tensor(batch[:1]), padding=5)
    assert single.shape == (3, 2, 2)  # one image: itself, unpadded


@pytest.mark.parametrize("kwargs, error, message", [
    pytest.param({"nrow": 0}, ValueError, "make_grid: nrow must be an int >= 1, got 0", id="nrow"),
    pytest.param({"padding": -1}, ValueError, "padding must be an int >= 0, got -1", id="padding"),
    pytest.param({"value_range": (0,)}, ValueError, r"value_range must be a pair", id="range"),
])
def test_make_grid_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        utils.make_grid(minifw.zeros(2, 3, 4, 4), **kwargs)
    with pytest.raises(ValueError, match=r"\(B, C, H, W\), \(C, H, W\) or \(H, W\), got shape \(2,\)"):
        utils.make_grid(minifw.zeros(2))


def read_png(data):
    """(H, W, C) uint8 from a PNG whose rows use filter 0, as minifw writes them."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(kind + body)
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    channels = {0: 1, 2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, -1)
    assert depth == 8 and (rows[:, 0] == 0).all() and b"IEND" in chunks
    return rows[:, 1:].reshape(height, width, channels)


def test_save_image_writes_a_png(tmp_path):
    batch = RNG.random((3, 3, 4, 5)).astype(np.float32) * 1.2 - 0.1  # some values outside [0, 1]
    path = tmp_path / "grid.png"
    utils.save_image(minifw.tensor(batch), path, nrow=2, padding=1)
    pixels = read_png(path.read_bytes())
    grid = reference_grid(batch, 2, 1, 0.0)
    expected = np.clip(np.floor(grid * 255 + 0.5), 0, 255).astype(np.uint8).transpose(1, 2, 0)
    np.testing.assert_array_equal(pixels, expected)
    buffer = io.BytesIO()
    utils.save_image(minifw.tensor(batch), buffer, format="png", nrow=2, padding=1)
    assert buffer.getvalue() == path.read_bytes()
    Image = pytest.importorskip("PIL.Image")
    np.testing.assert_array_equal(np.asarray(Image.open(path)), expected)


def test_save_image_refuses_other_formats(tmp_path):
    with pytest.raises(ValueError, match=r"save_image: minifw writes PNG files only.*'x.jpg'"):
        utils.save_image(minifw.zeros(3, 2, 2), str(tmp_path / "x.jpg").replace(str(tmp_path) + os.sep, ""))
    with pytest.raises(ValueError, match="format='jpeg'"):
        utils.save_image(minifw.zeros(3, 2, 2), io.BytesIO(), format="jpeg")
