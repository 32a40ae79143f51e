"""Optimizers and learning-rate schedules (as torch.optim)."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD
