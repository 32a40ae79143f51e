"""Bias add and bias gradient, and cuDNN's tensor arithmetic (cudnnAddTensor,
cudnnScaleTensor).

    y = bias_add(x, bias)                  # x (N, C) or (N, C, H, W), bias (C,)
    db = bias_backward(dy)                 # sum of dy over every axis but 1
    out = add_tensor(a, c, alpha=1.0, beta=1.0)   # alpha * a + beta * c
    y = scale_tensor(x, 0.5)               # 0.5 * x
    dw = embedding_backward(indices, g, V) # dw[indices[p]] += g[p] into zeros (V, E); host only

In add_tensor, a has c's rank and may be broadcast along any axis where its
size is 1, e.g. a (1, C, 1, 1) bias onto an (N, C, H, W) tensor. With beta == 0
c is not read at all, as in BLAS and cuDNN, so NaN or inf in it do not reach
the result. The bias gradient is accumulated in double.
"""
import numpy as np

from .. import _native, devices
from ..checks import (MAX_SIZE, check_channel_vector, check_float_array, check_int, check_real,
                      check_same_device)

_NDIM_DESC = "2-D (N, C) or 4-D (N, C, H, W)"
_MAX_NDIM = 8  # as cuDNN's tensor descriptors



def _layout(fn, name, a):
    """(outer, C, inner) of a 2-D or 4-D array with at least one channel."""
    if a.shape[1] < 1:
        raise ValueError(f"{fn}: {name} must have at least one channel along axis 1, got shape "
                         f"{tuple(a.shape)}")
    return a.shape[0], a.shape[1], (a.shape[2] * a.shape[3] if a.ndim == 4 else 1)


def bias_add(x, bias):
    """x + bias, with bias (C,) broadcast along axis 1 of x."""
    fn = "bias_add"
    x = check_float_array(fn, "x", x, ndim=(2, 4), ndim_desc=_NDIM_DESC)
    layout = _layout(fn, "x", x)
    bias = check_channel_vector(fn, "bias", bias, x.shape[1], x.dtype)
    check_same_device(fn, x=x, bias=bias)
    y = np.empty_like(x)
    devices.kernel_for("bias", "add", x)(*layout, x, bias, y)
    return y


def bias_backward(dy, *, _fn="bias_backward"):
    """The gradient of bias_add's bias: dy summed over every axis but 1, shape (C,)."""
    fn = _fn
    dy = check_float_array(fn, "dy", dy, ndim=(2, 4), ndim_desc=_NDIM_DESC)
    layout = _layout(fn, "dy", dy)
    db = devices.empty(dy.shape[1], dy.dtype, devices.of(dy))
    devices.kernel_for("bias", "backward", dy)(*layout, dy, db)
    return db


def add_tensor(a, c, *, alpha=1.0, beta=0.0):
    """alpha * a + beta * c as a new array of c's shape (a may broadcast along
    axes where its size is 1; c is not read when beta == 0)."""
    fn = "add_tensor"
    c = check_float_array(fn, "c", c)
    a = check_float_array(fn, "a", a, dtype=c.dtype)
    check_same_device(fn, a=a, c=c)
    if c.ndim > _MAX_NDIM:
        raise ValueError(f"{fn}: c must have at most {_MAX_NDIM} dimensions, got a {c.ndim}-D array of "
                         f"shape {tuple(c.shape)}")
    if a.ndim != c.ndim or any(sa not in (1, sc) for sa, sc in zip(a.shape, c.shape)):
        raise ValueError(f"{fn}: a must have c's rank and, along each axis, c's size or 1 (to broadcast); "
                         f"got a of shape {tuple(a.shape)} for c of shape {tuple(c.shape)}")
    alpha = check_real(fn, "alpha", alpha, dtype=c.dtype)
    beta = check_real(fn, "beta", beta, dtype=c.dtype)
    out = np.empty_like(c)
    devices.kernel_for("tensor", "add", c)(a, c, out, alpha, beta)
    return out


def scale_tensor(x, alpha):
    """alpha * x as a new array."""
    fn = "scale_tensor"
    x = check_float_array(fn, "x", x)
    alpha = check_real(fn, "alpha", alpha, dtype=x.dtype)
    y = np.empty_like(x)
    devices.kernel_for("tensor", "scale", x)(x, y, alpha)
    return y


def embedding_backward(indices, g, num_embeddings):
    """An embedding's weight gradient: dw of shape (num_embeddings, E), zero but for
    dw[indices[p]] += g[p], the rows of g (P, E) added in the order of p, as numpy.add.at
    adds them (a row picked k times gets k rows of g, summed in that order, whatever the
    thread count). indices: int64 (P,) in [0, num_embeddings). On the host only."""
    fn = "embedding_backward"
    num_embeddings = check_int(fn, "num_embeddings", num_embeddings, minimum=0, maximum=MAX_SIZE)
    g = check_float_array(fn, "g", g, ndim=2, ndim_desc="2-D (P, E)")
    if type(g) is not np.ndarray:
        raise TypeError(f"{fn}: g must be a numpy.ndarray (the kernel runs on the host), got "
                        f"{type(g).__name__}")
    if type(indices) is not np.ndarray or indices.dtype != np.int64 or indices.ndim != 1:
        raise TypeError(f"{fn}: indices must be a 1-D int64 numpy.ndarray, got "
                        f"{getattr(indices, 'dtype', type(indices).__name__)} of "
                        f"{getattr(indices, 'ndim', 0)} dimensions")
    if indices.shape[0] != g.shape[0]:
        raise ValueError(f"{fn}: g must have one row per index: {indices.shape[0]} indices, g of shape "
                         f"{tuple(g.shape)}")
    if indices.size and (indices.min() < 0 or indices.max() >= num_embeddings):
        bad = indices[(indices < 0) | (indices >= num_embeddings)][0]
        raise ValueError(f"{fn}: indices must lie in [0, num_embeddings) = [0, {num_embeddings}), "
                         f"got {bad}")
    if g.shape[1] and num_embeddings * g.shape[1] > MAX_SIZE:
        raise ValueError(f"{fn}: dw would have num_embeddings x E = {num_embeddings} x {g.shape[1]} "
                         f"elements, more than {MAX_SIZE}")
    try:
        dw = np.empty((num_embeddings, g.shape[1]), g.dtype)
    except MemoryError:
        raise MemoryError(f"{fn}: dw of num_embeddings x E = {num_embeddings} x {g.shape[1]} "
                          f"{g.dtype} values could not be allocated") from None
    native = _native.embedding_backward_f32 if g.dtype == np.float32 else _native.embedding_backward_f64
    native(np.ascontiguousarray(indices), g, dw)
    return dw
