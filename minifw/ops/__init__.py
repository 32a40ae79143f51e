"""The primitives API: problem descriptors, algorithms, workspace queries and
forward/backward entry points of every primitive family, shaped like cuDNN.

NumPy arrays in, NumPy arrays out. Inputs that are not C-contiguous are copied
to a contiguous array first (outputs are always new contiguous arrays).
"""
from .gemm import gemm
