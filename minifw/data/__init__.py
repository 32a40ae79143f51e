"""Datasets, the DataLoader and image transforms (as torch.utils.data), and MNIST."""
from .dataloader import DataLoader, default_collate
from .dataset import Dataset, Subset, TensorDataset
from .mnist import MNIST, read_idx, write_idx
from .transforms import RandomCrop
