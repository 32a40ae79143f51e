"""Datasets, the DataLoader and image transforms (as torch.utils.data), MNIST, and
text for language models (Shakespeare, vocabularies, batching)."""
from .dataloader import DataLoader, default_collate
from .dataset import Dataset, Subset, TensorDataset
from .mnist import MNIST, read_idx, write_idx
from .text import (CharVocab, WordTokenizer, WordVocab, batchify, bptt_batches, shakespeare,
                   shakespeare_plays)
from .transforms import RandomCrop
