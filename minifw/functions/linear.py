"""Matrix products: matmul (NumPy semantics) and the inner-product layer (Caffe's name for
linear): y = x @ W^T + b as GEMMs of the current engine."""
import numpy as np

from .. import devices
from ..autograd import Function
from ..engines import current_engine
from .convolution import engine_of
from .elementwise import unbroadcast


class MatMul(Function):
    """NumPy matmul semantics: 1-D operands are promoted and the added axis removed,
    leading (batch) axes broadcast."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        if a.ndim == 1 and b.ndim == 1:
            return g * b, g * a
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        if a.ndim == 1:
            g = np.expand_dims(g, -2)
        if b.ndim == 1:
            g = np.expand_dims(g, -1)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = unbroadcast(np.matmul(g, np.swapaxes(b2, -1, -2)), a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            gb = unbroadcast(np.matmul(np.swapaxes(a2, -1, -2), g), b2.shape).reshape(b.shape)
        return ga, gb

    @staticmethod
    def backward_graph(ctx, g):
        a, b = ctx.saved_tensors
        if a.ndim == 1 and b.ndim == 1:
            return g * b, g * a
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(1) if b.ndim == 1 else b
        if a.ndim == 1:
            g = g.unsqueeze(-2)
        if b.ndim == 1:
            g = g.unsqueeze(-1)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = unbroadcast(g @ b2.transpose(-1, -2), a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            gb = unbroadcast(a2.transpose(-1, -2) @ g, b2.shape).reshape(b.shape)
        return ga, gb


class InnerProduct(Function):
    """y = x @ W^T + b as GEMMs. The bias goes in as GEMM's C operand (beta = 1), so the
    output is written once; its gradient is the bias primitive's sum of dy over the batch."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        engine = ctx.engine = current_engine()
        ctx.node_name = "MmBackward0" if bias is None else "AddmmBackward0"  # as PyTorch's linear
        ctx.save_for_backward(x, weight)
        if bias is None:
            return engine.gemm(x, weight, trans_b=True)
        y = devices.empty((x.shape[0], weight.shape[0]), x.dtype, devices.of(x))
        y[...] = bias
        return engine.gemm(x, weight, y, trans_b=True, beta=1.0)

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        dx = ctx.engine.gemm(dy, weight) if need_x else None
        dw = ctx.engine.gemm(dy, x, trans_a=True) if need_w else None
        db = ctx.engine.bias_backward(dy) if need_b else None
        return dx, dw, db

    @staticmethod
    def backward_graph(ctx, dy):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        with engine_of(ctx):  # the forward's GEMMs (NumPy's and minifw's threads do not mix)
            return (MatrixProduct.apply(dy, weight) if need_x else None,
                    MatrixProduct.apply(dy, x, trans_a=True) if need_w else None,
                    dy.sum(0) if need_b else None)


def _product_gradients(product, a, b, g, trans_a, trans_b, needs):
    """The gradients of C = op(a) @ op(b) (op: the transpose where trans_*) given g = dC, as
    products product(x, y, trans_x, trans_y) of the same arrays, transposes read in place."""
    ga = gb = None
    if needs[0]:  # d op(a) = g op(b)^T
        ga = product(b, g, trans_b, True) if trans_a else product(g, b, False, not trans_b)
    if needs[1]:  # d op(b) = op(a)^T g
        gb = product(g, a, True, trans_a) if trans_b else product(a, g, not trans_a, False)
    return ga, gb


class MatrixProduct(Function):
    """op(a) @ op(b) of 2-D arrays by the current engine's GEMM, op the transpose where
    trans_a / trans_b: the inner product's gradients as a Function of their own, for second
    derivatives. Its gradients are such products again."""

    @staticmethod
    def forward(ctx, a, b, *, trans_a=False, trans_b=False):
        engine = ctx.engine = current_engine()
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        ctx.trans = trans_a, trans_b
        return engine.gemm(a, b, trans_a=trans_a, trans_b=trans_b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        gemm = ctx.engine.gemm
        return _product_gradients(lambda x, y, tx, ty: gemm(x, y, trans_a=tx, trans_b=ty), a, b, g,
                                  *ctx.trans, ctx.needs_input_grad)

    @staticmethod
    def backward_graph(ctx, g):
        a, b = ctx.saved_tensors
        with engine_of(ctx):
            return _product_gradients(lambda x, y, tx, ty: MatrixProduct.apply(x, y, trans_a=tx, trans_b=ty),
                                      a, b, g, *ctx.trans, ctx.needs_input_grad)
