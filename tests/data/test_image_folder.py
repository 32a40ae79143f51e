"""ImageFolder and DatasetFolder on a small tree of images written here with Pillow: classes,
class_to_idx, samples, targets, the RGB loader, transforms, is_valid_file, the errors for a bad
tree, Pillow missing, and the whole thing through a DataLoader with worker threads."""
import pathlib
import sys

import numpy as np
import pytest

import minifw
from minifw.data import DataLoader, DatasetFolder, ImageFolder
from minifw.data import transforms as T

Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed")


@pytest.fixture
def tree(tmp_path):
    """root/cat/{b.png, a.jpg (grey), nested/c.png}, root/dog/d.bmp, root/ant/e.png, and files
    that are not images. Pixel values encode the file: red = its number, green = 7."""
    layout = {"cat/b.png": (1, "RGB"), "cat/a.JPG": (2, "L"), "cat/nested/c.png": (3, "RGBA"),
              "dog/d.bmp": (4, "RGB"), "ant/e.png": (5, "P")}
    for name, (number, mode) in layout.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        image = Image.new("RGB", (4, 3), (10 * number, 7, 0))
        if mode == "L":
            image = Image.new("L", (4, 3), 10 * number)
        elif mode == "RGBA":
            image = image.convert("RGBA")
        elif mode == "P":
            image = image.convert("P", palette=Image.Palette.ADAPTIVE)  # exact colours
        image.save(path, format="JPEG" if name.endswith(".JPG") else None, quality=100)
    (tmp_path / "cat" / "notes.txt").write_text("not an image")
    (tmp_path / "README").write_text("a file at the root is no class")
    return tmp_path


def test_classes_samples_and_targets(tree):
    ds = ImageFolder(tree)
    assert ds.classes == ["ant", "cat", "dog"]
    assert ds.class_to_idx == {"ant": 0, "cat": 1, "dog": 2}
    assert [pathlib.Path(p).relative_to(tree).as_posix() for p, _ in ds.samples] == [
        "ant/e.png", "cat/a.JPG", "cat/b.png", "cat/nested/c.png", "dog/d.bmp"]
    assert [t for _, t in ds.samples] == ds.targets == [0, 1, 1, 1, 2]
    assert ds.imgs is ds.samples and len(ds) == 5


def test_images_load_as_rgb_pil_images(tree):
    ds = ImageFolder(tree)
    for i, red in enumerate([50, 20, 10, 30, 40]):
        image, target = ds[i]
        assert image.mode == "RGB" and image.size == (4, 3) and target == ds.targets[i]
        pixel = image.getpixel((0, 0))
        if i == 1:  # the grey JPEG: every channel the grey value
            assert all(abs(c - 20) <= 2 for c in pixel)
        else:
            assert pixel == (red, 7, 0)


def test_transforms_make_tensors(tree):
    ds = ImageFolder(tree, transform=T.Compose([T.Resize((2, 2)), T.ToTensor()]),
                     target_transform=lambda t: t * 10)
    image, target = ds[4]
    assert isinstance(image, minifw.Tensor) and image.shape == (3, 2, 2) and target == 20
    np.testing.assert_allclose(image.numpy()[:, 0, 0], [40 / 255, 7 / 255, 0], atol=1e-6)


def test_through_a_dataloader_with_worker_threads(tree):
    ds = ImageFolder(tree, transform=T.ToTensor())
    loader = DataLoader(ds, batch_size=2, num_workers=2)
    batches = list(loader)
    assert [tuple(images.shape) for images, _ in batches] == [(2, 3, 3, 4), (2, 3, 3, 4), (1, 3, 3, 4)]
    assert sum((labels.tolist() for _, labels in batches), []) == [0, 1, 1, 1, 2]


def test_is_valid_file_decides_instead_of_the_extensions(tree):
    ds = ImageFolder(tree, is_valid_file=lambda path: path.endswith(".png"), allow_empty=True)
    assert [t for _, t in ds.samples] == [0, 1, 1] and ds.classes == ["ant", "cat", "dog"]


def test_dataset_folder_with_its_own_loader(tree):
    ds = DatasetFolder(tree, loader=lambda path: pathlib.Path(path).name, extensions=".txt",
                       allow_empty=True)
    assert [ds[i] for i in range(len(ds))] == [("notes.txt", 1)]
    assert repr(ds).splitlines()[:3] == ["Dataset DatasetFolder", "    Number of datapoints: 1",
                                         f"    Root location: {tree}"]


def test_repr_lists_the_transform(tree):
    text = repr(ImageFolder(tree, transform=T.Compose([T.ToTensor()])))
    assert text.startswith("Dataset ImageFolder\n    Number of datapoints: 5\n")
    assert "    Transform: Compose(\n        ToTensor()\n    )" in text


@pytest.mark.parametrize("setup, kwargs, error, message", [
    pytest.param(lambda root: root / "nowhere", {}, FileNotFoundError, "is not a directory", id="no-root"),
    pytest.param(lambda root: (root / "empty").mkdir() or root / "empty", {}, FileNotFoundError,
                 "found no class folder", id="no-classes"),
    pytest.param(lambda root: (root / "bird").mkdir() or root, {}, FileNotFoundError,
                 r"found no file with the extensions .jpg, .*for the classes bird.*allow_empty=True",
                 id="empty-class"),
])
def test_bad_trees(tree, setup, kwargs, error, message):
    with pytest.raises(error, match=message):
        ImageFolder(setup(tree), **kwargs)


def test_extensions_and_is_valid_file_exclude_each_other(tree):
    with pytest.raises(ValueError, match="either extensions or is_valid_file"):
        DatasetFolder(tree, loader=str, extensions=".png", is_valid_file=bool)


def test_without_pillow_the_error_says_how_to_install_it(tree, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # `from PIL import Image` now fails
    with pytest.raises(ImportError, match=r'ImageFolder needs Pillow.*pip install pillow \(or pip install '
                                          r'"minifw\[vision\]"\)'):
        ImageFolder(tree)
    ds = ImageFolder(tree, loader=lambda path: path)  # a loader of one's own needs no Pillow
    assert ds[0][0].endswith("e.png")
