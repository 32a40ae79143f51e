"""Datasets of files in one folder per class (as torchvision.datasets.DatasetFolder and
ImageFolder):

    root/dog/xxx.png
    root/dog/nested/xxy.jpeg
    root/cat/123.png

Classes are the folder names, sorted; a sample is (loader(path), class index). ImageFolder
reads images with Pillow, an optional dependency (pip install pillow, or minifw[vision])."""
import os

from .dataset import Dataset

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def require_pillow(what):
    """PIL.Image, or an ImportError that says how to install it."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(f"{what} needs Pillow to read images, and it is not installed: "
                          f"pip install pillow (or pip install \"minifw[vision]\")") from None
    return Image


def pil_loader(path):
    """The image at `path` converted to RGB (as torchvision's default loader)."""
    image_module = require_pillow("pil_loader")
    with open(path, "rb") as f:
        image = image_module.open(f)
        return image.convert("RGB")  # convert() reads the file before it closes


def default_loader(path):
    return pil_loader(path)


def has_file_allowed_extension(filename, extensions):
    """Whether `filename` ends in one of `extensions` (a string or a sequence), ignoring case."""
    return filename.lower().endswith(extensions if isinstance(extensions, str) else tuple(extensions))


def find_classes(directory):
    """(classes, class_to_idx): the sub-folders of `directory`, sorted, and their indices."""
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"image folder: root {directory!r} is not a directory")
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"image folder: found no class folder in {directory!r}; the "
                                f"layout is root/<class>/<file>")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
    """[(path, class index)] for the files under each class folder (sub-folders included,
    links followed), sorted by class, then by path; a file counts when is_valid_file(path)
    says so, or, without that function, when its extension is one of `extensions`."""
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("image folder: give either extensions or is_valid_file, not both and "
                         "not neither")
    if extensions is not None:
        def is_valid_file(path):
            return has_file_allowed_extension(path, extensions)
    samples, found = [], set()
    for name in sorted(class_to_idx):
        folder = os.path.join(directory, name)
        if not os.path.isdir(folder):
            continue
        for path_root, _, filenames in sorted(os.walk(folder, followlinks=True)):
            for filename in sorted(filenames):
                path = os.path.join(path_root, filename)
                if is_valid_file(path):
                    samples.append((path, class_to_idx[name]))
                    found.add(name)
    empty = sorted(set(class_to_idx) - found)
    if empty and not allow_empty:
        if extensions is not None:
            names = [extensions] if isinstance(extensions, str) else list(extensions)
            what = f"with the extensions {', '.join(names)}"
        else:
            what = "that is_valid_file accepts"
        raise FileNotFoundError(f"image folder: found no file {what} for the classes "
                                f"{', '.join(empty)} in {directory!r} (allow_empty=True accepts "
                                f"empty classes)")
    return samples


class DatasetFolder(Dataset):
    """Files in root/<class>/..., read by loader(path). classes, class_to_idx, samples
    [(path, class index)] and targets [class index] as torchvision's."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                 is_valid_file=None, allow_empty=False):
        self.root = os.path.expanduser(os.fspath(root))
        self.classes, self.class_to_idx = find_classes(self.root)
        self.samples = make_dataset(self.root, self.class_to_idx, extensions, is_valid_file,
                                    allow_empty)
        self.loader, self.extensions = loader, extensions
        self.transform, self.target_transform = transform, target_transform
        self.targets = [target for _, target in self.samples]

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self):
        return len(self.samples)

    def __repr__(self):
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}",
                 f"    Root location: {self.root}"]
        for name in ("transform", "target_transform"):
            if getattr(self, name) is not None:
                text = repr(getattr(self, name)).replace("\n", "\n    ")
                lines.append(f"    {name.replace('_', ' ').capitalize()}: {text}")
        return "\n".join(lines)


class ImageFolder(DatasetFolder):
    """Images in root/<class>/... (the IMG_EXTENSIONS, unless is_valid_file decides), read as
    RGB PIL images by default: give a transform that makes Tensors of them (ToTensor). `imgs`
    is `samples`, as in torchvision."""

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader,
                 is_valid_file=None, allow_empty=False):
        if loader is default_loader:
            require_pillow("ImageFolder")  # now, rather than in a DataLoader thread
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None,
                         transform=transform, target_transform=target_transform,
                         is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples
