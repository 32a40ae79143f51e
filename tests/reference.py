"""Naive float64 references, written to be obviously right rather than fast.

Every primitive in minifw.ops is tested against a function here.
"""
import numpy as np


# ==== GEMM and convolution =============================================


# ==== pooling, activations, softmax, LRN, batch norm, dropout, bias =====


# ==== end ===============================================================
