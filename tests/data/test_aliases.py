"""PyTorch's and torchvision's module names for minifw.data: minifw.utils.data (torch.utils.data),
minifw.vision.transforms and minifw.vision.datasets (torchvision's); the lines of an everyday
MNIST script with only its imports renamed; Pillow stays optional and unimported until needed."""
import os
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import minifw
import minifw.data
import minifw.data.transforms
import minifw.utils.data
import minifw.vision
from minifw.data import write_idx


def test_utils_data_is_minifw_data_under_torchs_name():
    from minifw.utils.data import DataLoader, Dataset, TensorDataset
    import minifw.utils.data as data

    assert (DataLoader, Dataset, TensorDataset) == (minifw.data.DataLoader, minifw.data.Dataset,
                                                     minifw.data.TensorDataset)
    for name in ("Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
                 "WeightedRandomSampler", "BatchSampler", "IterableDataset", "ConcatDataset", "Subset",
                 "random_split", "default_collate", "default_convert", "get_worker_info"):
        assert getattr(data, name) is getattr(minifw.data, name), name
    assert set(data.__all__) == set(minifw.data.__all__)
    assert all(hasattr(minifw.data, name) for name in minifw.data.__all__)


def test_vision_transforms_is_the_same_module():
    import minifw.vision.transforms as T
    from minifw.vision import datasets, transforms
    from minifw.vision.transforms import Compose, ToTensor

    assert T is transforms is minifw.data.transforms
    assert (Compose, ToTensor) == (minifw.data.transforms.Compose, minifw.data.transforms.ToTensor)
    assert datasets.MNIST is minifw.data.MNIST and datasets.ImageFolder is minifw.data.ImageFolder


def write_mnist(folder, n=10):
    rng = np.random.default_rng(0)
    for prefix in ("train", "t10k"):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", images)
        write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", rng.integers(0, 10, n, dtype=np.uint8))


def test_an_everyday_mnist_script_with_its_imports_renamed(tmp_path):
    (tmp_path / "MNIST" / "raw").mkdir(parents=True)
    write_mnist(tmp_path / "MNIST" / "raw")
    # torchvision's examples/mnist, from here on, with torch -> minifw, torchvision -> minifw.vision
    from minifw.vision import datasets, transforms

    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    dataset1 = datasets.MNIST(str(tmp_path), train=True, download=True, transform=transform)
    dataset2 = datasets.MNIST(str(tmp_path), train=False, transform=transform)
    train_kwargs = {"batch_size": 4, "num_workers": 1, "pin_memory": True, "shuffle": True}
    train_loader = minifw.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = minifw.utils.data.DataLoader(dataset2, batch_size=8)
    shapes = [(tuple(data.shape), tuple(target.shape)) for data, target in train_loader]
    assert shapes == [((4, 1, 28, 28), (4,))] * 2 + [((2, 1, 28, 28), (2,))]
    data, target = next(iter(test_loader))
    assert data.dtype == minifw.float32 and target.dtype == minifw.int64
    np.testing.assert_allclose(data.numpy(), (dataset2.data[:8, None] / np.float32(256) - 0.1307) / 0.3081,
                               rtol=1e-5)
    assert data.to("cpu").shape == (8, 1, 28, 28)


def test_pillow_is_in_the_extras():
    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    path = os.path.join(root, "pyproject.toml")
    if not os.path.exists(path):
        pytest.skip("not a source tree")
    with open(path, "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert all(any(r.lower().startswith("pillow") for r in extras[name])
               for name in ("test", "examples", "vision"))


def test_importing_the_data_layers_does_not_import_pillow_or_nn(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    code = ("import sys, minifw.utils.data, minifw.vision.transforms, minifw.data\n"
            "print(sorted(m for m in sys.modules\n"
            "             if m == 'PIL' or m.startswith(('minifw.nn', 'minifw.optim'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=root)).stdout
    assert out.strip() == "[]"
