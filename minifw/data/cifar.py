"""CIFAR-10 and CIFAR-100: 32 x 32 colour photographs, read from the files the datasets'
"python version" unpacks to (root/cifar-10-batches-py, root/cifar-100-python, as torchvision
keeps them), or, for CIFAR-10, from its binary version (root/cifar-10-batches-bin).

The python version's files are pickles. Unpickling can run any code a file names, so they are
read by RestrictedUnpickler, which builds dicts, lists, strings and NumPy arrays and refuses
every other global with an UnpicklingError, before anything runs.

A sample is (image, label): the image is a float32 Tensor (3, 32, 32) of pixels / 255 -- what
torchvision's ToTensor makes of the PIL image torchvision's CIFAR hands its transform, so
ToTensor passes it through and Normalize sees the same numbers; transforms before ToTensor
(RandomCrop with padding, RandomHorizontalFlip, ColorJitter) work on it as on a tensor.
`data` holds the uint8 images (N, 32, 32, 3) and `targets` the labels (a list of ints), as
torchvision's."""
import io
import os
import pickle

import numpy as np

from ..tensor import Tensor
from .dataset import Dataset

IMAGE_BYTES = 3 * 32 * 32  # a row of `data`: 1024 red, then 1024 green, then 1024 blue bytes

# The only globals the CIFAR pickles need: NumPy's array reconstruction (numpy.core before
# NumPy 2, numpy._core after; _frombuffer for protocol 5), and the codec Python 3 uses for
# bytes in protocol-2 pickles. None of them runs code named by the file.
SAFE_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode"),
}


class RestrictedUnpickler(pickle.Unpickler):
    """An Unpickler that admits only SAFE_GLOBALS: a pickle naming any other class or function
    (os.system, builtins.eval, ...) raises pickle.UnpicklingError without calling it."""

    def find_class(self, module, name):
        if (module, name) in SAFE_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"CIFAR: refusing to load {module}.{name} from a pickle: a CIFAR file holds only "
            f"dicts, lists, strings and NumPy arrays, and loading any other object could run code "
            f"from the file (allowed: {', '.join(sorted(m + '.' + n for m, n in SAFE_GLOBALS))})")


def load_pickle(path):
    """The object in the pickle at `path`, read with RestrictedUnpickler; byte strings that
    Python 2 wrote (the original CIFAR files) come back as str, read as Latin-1."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        obj = RestrictedUnpickler(io.BytesIO(raw), encoding="latin1").load()
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(f"{path}: {e}") from None
    except (EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError) as e:
        raise ValueError(f"{path}: not a readable CIFAR pickle ({type(e).__name__}: {e})") from None
    if isinstance(obj, dict):  # files pickled by Python 3 with bytes keys: b"data" -> "data"
        obj = {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in obj.items()}
    return obj


def _field(entry, key, path):
    if not isinstance(entry, dict) or key not in entry:
        keys = sorted(map(str, entry)) if isinstance(entry, dict) else type(entry).__name__
        raise ValueError(f"{path}: a CIFAR file should be a dict with the key {key!r}, got {keys}")
    return entry[key]


def _images_from_rows(rows, path):
    """(N, 32, 32, 3) uint8 from rows of 3072 bytes (channel planes, each row-major)."""
    rows = np.asarray(rows)
    if rows.dtype != np.uint8 or rows.ndim != 2 or rows.shape[1] != IMAGE_BYTES:
        raise ValueError(f"{path}: 'data' should be a uint8 array of shape (N, {IMAGE_BYTES}), "
                         f"got {rows.dtype} of shape {rows.shape}")
    return rows.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)


def _labels(values, count, classes, path):
    labels = [int(v) for v in values]
    if len(labels) != count:
        raise ValueError(f"{path}: holds {count} images but {len(labels)} labels")
    if labels and not 0 <= min(labels) <= max(labels) < classes:
        raise ValueError(f"{path}: labels must lie in 0-{classes - 1}, got {min(labels)}-{max(labels)}")
    return labels


def read_cifar10_binary(path):
    """(images (N, 32, 32, 3) uint8, labels) from a CIFAR-10 binary file: records of one
    label byte and 3072 pixel bytes."""
    with open(path, "rb") as f:
        raw = np.frombuffer(f.read(), dtype=np.uint8)
    record = 1 + IMAGE_BYTES
    if raw.size % record:
        raise ValueError(f"{path}: a CIFAR-10 binary file holds records of {record} bytes (a label "
                         f"and 3072 pixels); its {raw.size} bytes are not a whole number of them")
    records = raw.reshape(-1, record)
    images = _images_from_rows(records[:, 1:], path)
    return images, _labels(records[:, 0], len(images), 10, path)


class CIFAR10(Dataset):
    """CIFAR-10: 50,000 training and 10,000 test images (32 x 32 RGB) of 10 classes.

    root holds cifar-10-batches-py (data_batch_1 .. data_batch_5, test_batch, batches.meta:
    the python version, unpacked) or cifar-10-batches-bin (data_batch_1.bin .. 5, test_batch.bin,
    batches.meta.txt). Samples are (float32 Tensor (3, 32, 32) = pixels / 255, label int);
    see the module's docstring. minifw never downloads: download=True only checks that the
    files are there and says where to put them when they are not."""

    base_folder = "cifar-10-batches-py"
    binary_folder = "cifar-10-batches-bin"
    archive = "cifar-10-python.tar.gz"
    train_list = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"]
    test_list = ["test_batch"]
    meta = {"filename": "batches.meta", "key": "label_names"}
    label_key = "labels"
    num_classes = 10

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root, self.train = os.path.expanduser(os.fspath(root)), bool(train)
        self.transform, self.target_transform = transform, target_transform
        name = type(self).__name__
        folder = self._folder()
        if folder is None:
            if download:
                raise FileNotFoundError(
                    f"{name}: download=True, but minifw does not download datasets, and "
                    f"{self.root!r} has no complete {self.base_folder} folder ({self._missing()} "
                    f"missing). Unpack {self.archive} (the python version) into {self.root!r}, so "
                    f"that {os.path.join(self.root, self.base_folder)!r} holds "
                    f"{', '.join(self._files())}.")
            raise FileNotFoundError(
                f"{name}: {self.root!r} has no complete {self.base_folder} folder "
                f"({self._missing()} missing): unpack {self.archive} (the python version) into it"
                + (f", or the binary version into {self.binary_folder}" if self.binary_folder else "")
                + ".")
        if folder == self.binary_folder:
            images, labels, self.classes = self._load_binary()
        else:
            images, labels, self.classes = self._load_pickles()
        self.data, self.targets = images, labels
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def _files(self):
        return (self.train_list if self.train else self.test_list) + [self.meta["filename"]]

    def _binary_files(self):
        return [f + ".bin" for f in (self.train_list if self.train else self.test_list)] + [
            "batches.meta.txt"]

    def _missing(self):
        folder = os.path.join(self.root, self.base_folder)
        return ", ".join(f for f in self._files() if not os.path.isfile(os.path.join(folder, f)))

    def _folder(self):
        """The folder under root that has the split's files: the python version first."""
        for folder, files in ((self.base_folder, self._files()),
                              (self.binary_folder, self._binary_files() if self.binary_folder else None)):
            if files and all(os.path.isfile(os.path.join(self.root, folder, f)) for f in files):
                return folder
        return None

    def _load_pickles(self):
        folder = os.path.join(self.root, self.base_folder)
        images, labels = [], []
        for filename in self.train_list if self.train else self.test_list:
            path = os.path.join(folder, filename)
            entry = load_pickle(path)
            batch = _images_from_rows(_field(entry, "data", path), path)
            labels += _labels(_field(entry, self.label_key, path), len(batch), self.num_classes, path)
            images.append(batch)
        meta_path = os.path.join(folder, self.meta["filename"])
        classes = [str(c) for c in _field(load_pickle(meta_path), self.meta["key"], meta_path)]
        if len(classes) != self.num_classes:
            raise ValueError(f"{meta_path}: {self.meta['key']!r} should name {self.num_classes} "
                             f"classes, got {len(classes)}")
        return np.ascontiguousarray(np.concatenate(images)), labels, classes

    def _load_binary(self):
        folder = os.path.join(self.root, self.binary_folder)
        images, labels = [], []
        for filename in self._binary_files()[:-1]:
            batch, batch_labels = read_cifar10_binary(os.path.join(folder, filename))
            images.append(batch)
            labels += batch_labels
        meta_path = os.path.join(folder, "batches.meta.txt")
        with open(meta_path, encoding="latin1") as f:
            classes = [line.strip() for line in f if line.strip()]
        if len(classes) != self.num_classes:
            raise ValueError(f"{meta_path}: should name {self.num_classes} classes, one a line, "
                             f"got {len(classes)}")
        return np.ascontiguousarray(np.concatenate(images)), labels, classes

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        pixels, target = self.data[index], self.targets[index]
        image = Tensor._make(pixels.transpose(2, 0, 1).astype(np.float32) / np.float32(255))
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"

    def __repr__(self):
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}",
                 f"    Root location: {self.root}", f"    {self.extra_repr()}"]
        for name in ("transform", "target_transform"):
            if getattr(self, name) is not None:
                text = repr(getattr(self, name)).replace("\n", "\n    ")
                lines.append(f"    {name.replace('_', ' ').capitalize()}: {text}")
        return "\n".join(lines)


class CIFAR100(CIFAR10):
    """CIFAR-100: as CIFAR10, with 100 classes (the fine labels), from root/cifar-100-python
    (train, test, meta: the python version, unpacked)."""

    base_folder = "cifar-100-python"
    binary_folder = None
    archive = "cifar-100-python.tar.gz"
    train_list = ["train"]
    test_list = ["test"]
    meta = {"filename": "meta", "key": "fine_label_names"}
    label_key = "fine_labels"
    num_classes = 100
