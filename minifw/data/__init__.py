"""Datasets, samplers and the DataLoader (as torch.utils.data, also importable as
minifw.utils.data), image transforms (as torchvision.transforms, also minifw.vision.transforms),
MNIST, FashionMNIST, KMNIST, CIFAR10, CIFAR100 and image folders (as torchvision.datasets),
and text for language models (Shakespeare, vocabularies, batching)."""
import sys

from . import _utils, transforms, transforms_functional, transforms_v2, transforms_v2_functional
from .cifar import CIFAR10, CIFAR100
from .dataloader import DataLoader, default_collate, default_convert
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,
                      TensorDataset, random_split)
from .distributed import DistributedSampler
from .image_folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder, default_loader, pil_loader
from .mnist import KMNIST, MNIST, FashionMNIST, read_idx, write_idx
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from .text import (CharVocab, WordTokenizer, WordVocab, batchify, bptt_batches, shakespeare,
                   shakespeare_plays)
from .transforms import RandomCrop
from .worker import WorkerInfo, get_worker_info

# torchvision's transforms.v2 and the two functional modules: `from minifw.data.transforms import v2`,
# `import minifw.data.transforms.v2` and `import minifw.data.transforms.functional` (v2's too) find the
# modules transforms_v2, transforms_functional and transforms_v2_functional
transforms.v2 = transforms_v2
transforms.functional = transforms_functional
transforms_v2.functional = transforms_v2_functional
sys.modules[transforms.__name__ + ".v2"] = transforms_v2
sys.modules[transforms.__name__ + ".functional"] = transforms_functional
sys.modules[transforms.__name__ + ".v2.functional"] = transforms_v2_functional

__all__ = ["BatchSampler", "CIFAR10", "CIFAR100", "ChainDataset", "CharVocab", "ConcatDataset", "DataLoader",
           "Dataset", "DatasetFolder", "DistributedSampler", "FashionMNIST", "IMG_EXTENSIONS",
           "ImageFolder", "IterableDataset", "KMNIST", "MNIST", "RandomCrop", "RandomSampler",
           "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "WordTokenizer", "WordVocab", "WorkerInfo", "batchify",
           "bptt_batches", "default_collate", "default_convert", "default_loader",
           "get_worker_info", "pil_loader", "random_split", "read_idx", "shakespeare",
           "shakespeare_plays", "transforms", "write_idx"]
