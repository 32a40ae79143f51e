"""Normalization: local response normalization (AlexNet), batch normalization, layer
normalization (also group normalization's core), vector norms, L_p normalization of vectors
and the cosine of the angle between vectors.

The last three are array code (no primitive): forward and backward written with NumPy
functions, which CuPy's arrays and the emulator's CudaSimArray receive as well."""
import numpy as np

from .. import devices
from ..autograd import Function, recomputed_gradients
from ..engines import current_engine
from .elementwise import Where, constant, masked, unbroadcast
from .shape import Cat, Index


class LocalResponseNormalization(Function):
    @staticmethod
    def forward(ctx, x, **args):
        engine = ctx.engine = current_engine()
        y, scale = engine.lrn_forward(x, **args)
        ctx.save_for_backward(x, y, scale)
        ctx.args = args
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y, scale = ctx.saved_tensors
        return ctx.engine.lrn_backward(dy, x, y, scale, **ctx.args)

    @staticmethod
    def backward_graph(ctx, dy):
        # the forward again in recorded operations, differentiated with create_graph=True
        x = ctx.saved_tensors[0]
        return recomputed_gradients(lambda x: lrn_in_operations(x, **ctx.args), (x,), (dy,))[0]


def lrn_in_operations(x, *, size, alpha, beta, k):
    """Local response normalization across channels as Tensor operations: each channel's sum
    of squares over the window c - size//2 .. c + (size-1)//2 (clipped to the channels that
    exist) is a difference of running sums."""
    channels = x.shape[1]
    squares = (x * x).cumsum(1)
    running = Cat.apply(constant(devices.zeros(x.shape[:1] + (1,) + x.shape[2:], x.dtype,
                                               devices.of(x._data))), squares, dim=1)
    c = np.arange(channels)
    last = np.minimum(c + (size - 1) // 2, channels - 1) + 1
    first = np.maximum(c - size // 2, 0)
    dev = devices.of(x._data)
    window = (Index.apply(running, index=(slice(None), devices.to_device(last, dev)))
              - Index.apply(running, index=(slice(None), devices.to_device(first, dev))))
    return x * (k + (alpha / size) * window) ** (-beta)


class BatchNormalization(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean=None, running_var=None, training=True,
                momentum=0.1, eps=1e-5):
        engine = ctx.engine = current_engine()
        if training:
            y, save_mean, save_invstd = engine.batch_norm_forward_training(
                x, weight, bias, running_mean, running_var, momentum=momentum, eps=eps)
        else:
            y = engine.batch_norm_forward_inference(x, weight, bias, running_mean, running_var,
                                                    eps=eps)
            # in evaluation the statistics are constants: x -> (x - mean) * invstd is affine
            save_mean = running_mean.astype(x.dtype, copy=True)
            save_invstd = (1.0 / np.sqrt(running_var.astype(x.dtype) + eps)).astype(x.dtype)
        ctx.save_for_backward(x, weight, save_mean, save_invstd)
        ctx.training, ctx.eps = training, eps
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, invstd = ctx.saved_tensors
        if ctx.training:
            dx, dweight, dbias = ctx.engine.batch_norm_backward(dy, x, weight, mean, invstd)
        else:
            # no primitive for the affine evaluation-mode gradient: it is three NumPy lines
            axes = (0, 2, 3)
            per_channel = (slice(None), None, None)
            xhat = (x - mean[per_channel]) * invstd[per_channel]
            scale = invstd if weight is None else invstd * weight
            dx = dy * scale[per_channel]
            dweight, dbias = (dy * xhat).sum(axes), dy.sum(axes)
        need_x, need_w, need_b = ctx.needs_input_grad
        return dx if need_x else None, dweight if need_w else None, dbias if need_b else None

    @staticmethod
    def backward_graph(ctx, dy):
        # in training the statistics are functions of x, recomputed from it in the graph
        # (the saved ones are constants there); in evaluation they are the constants they are
        x, weight, mean, invstd = ctx.saved_tensors
        axes, per_channel = (0, 2, 3), (1, -1, 1, 1)
        if ctx.training:
            mean = x.mean(axes, keepdim=True)
            centred = x - mean
            invstd = ((centred * centred).mean(axes, keepdim=True) + ctx.eps).rsqrt()
            xhat = centred * invstd
        else:
            mean, invstd = mean.reshape(per_channel), invstd.reshape(per_channel)
            xhat = (x - mean) * invstd
        scale = invstd if weight is None else invstd * weight.reshape(per_channel)
        need_x, need_w, need_b = ctx.needs_input_grad
        dx = dweight = dbias = None
        if need_x:
            if ctx.training:  # dy's projection off the mean and off xhat, as in backward
                dx = scale * (dy - dy.mean(axes, keepdim=True)
                              - xhat * (dy * xhat).mean(axes, keepdim=True))
            else:
                dx = dy * scale
        if need_w:
            dweight = (dy * xhat).sum(axes)
        if need_b:
            dbias = dy.sum(axes)
        return dx, dweight, dbias


class LayerNormalization(Function):
    """(x - mean) / sqrt(var + eps) over the last `dims` dims of x (var biased, as PyTorch's),
    times weight plus bias (both of those dims' shape, or None) (Ba et al., 2016).

    Each of the M rows of D = prod(those dims) values is normalized on its own: with
    xhat = (x - mean) * rstd and dxhat = dy * weight, the input gradient is
    rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), means over the row."""

    @staticmethod
    def forward(ctx, x, weight, bias, *, dims, eps):
        lead, normalized = x.shape[:x.ndim - dims], x.shape[x.ndim - dims:]
        rows = x.reshape((int(np.prod(lead, dtype=np.int64)),
                          int(np.prod(normalized, dtype=np.int64))))
        if rows.size == 0:  # no rows (or empty ones): nothing to normalize, no mean to warn about
            xhat = rows.copy()
            rstd = rows[:, :1].copy()
        else:
            mean = rows.mean(axis=1, keepdims=True)
            centred = rows - mean
            var = (centred * centred).mean(axis=1, keepdims=True)
            rstd = 1.0 / np.sqrt(var + eps)
            xhat = centred * rstd
        y = xhat
        if weight is not None:
            y = y * weight.reshape(-1)
        if bias is not None:
            y = y + bias.reshape(-1)
        ctx.save_for_backward(xhat, rstd, weight, x)  # x: for second derivatives only
        ctx.shapes = x.shape, None if weight is None else weight.shape
        ctx.eps = eps
        return (y if y is not xhat else xhat.copy()).reshape(x.shape)

    @staticmethod
    def backward(ctx, dy):
        xhat, rstd, weight, _ = ctx.saved_tensors
        x_shape, w_shape = ctx.shapes
        need_x, need_w, need_b = ctx.needs_input_grad
        dy = dy.reshape(xhat.shape)
        dx = dweight = dbias = None
        if need_x:
            dxhat = dy if weight is None else dy * weight.reshape(-1)
            if xhat.shape[1]:
                dx = rstd * (dxhat - dxhat.mean(axis=1, keepdims=True)
                             - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))
            else:
                dx = dxhat.copy()
            dx = dx.reshape(x_shape)
        if need_w:
            dweight = (dy * xhat).sum(axis=0).reshape(w_shape)
        if need_b:
            dbias = dy.sum(axis=0).reshape(w_shape)
        return dx, dweight, dbias

    @staticmethod
    def backward_graph(ctx, dy):
        # backward's formula, with xhat and rstd recomputed from x in the graph
        xhat, _, weight, x = ctx.saved_tensors
        x_shape, w_shape = ctx.shapes
        need_x, need_w, need_b = ctx.needs_input_grad
        dy = dy.reshape(xhat.shape)
        if xhat.shape[1] and xhat.shape[0]:
            rows = x.reshape(xhat.shape)
            centred = rows - rows.mean(1, keepdim=True)
            rstd = ((centred * centred).mean(1, keepdim=True) + ctx.eps).rsqrt()
            xhat = centred * rstd
        dx = dweight = dbias = None
        if need_x:
            dxhat = dy if weight is None else dy * weight.reshape(-1)
            if xhat.shape[1] and xhat.shape[0]:
                dx = rstd * (dxhat - dxhat.mean(1, keepdim=True)
                             - xhat * (dxhat * xhat).mean(1, keepdim=True))
            else:
                dx = dxhat
            dx = dx.reshape(x_shape)
        if need_w:
            dweight = (dy * xhat).sum(0).reshape(w_shape)
        if need_b:
            dbias = dy.sum(0).reshape(w_shape)
        return dx, dweight, dbias


def _vector_norm(x, p, axis):
    """||x||_p along `axis` (kept), as torch.linalg.vector_norm: p = inf is max |x|, -inf min |x|,
    0 the number of non-zero elements, any other p (sum |x|^p)^(1/p)."""
    if p == 2.0:
        return np.sqrt((x * x).sum(axis=axis, keepdims=True))
    a = np.abs(x)
    if p == 1.0:
        return a.sum(axis=axis, keepdims=True)
    if p == np.inf:
        return a.max(axis=axis, keepdims=True)
    if p == -np.inf:
        return a.min(axis=axis, keepdims=True)
    if p == 0.0:
        return (a != 0).sum(axis=axis, keepdims=True).astype(x.dtype)
    with np.errstate(divide="ignore"):  # 0 ** -1 is inf, whose reciprocal sum gives 0
        return np.power(np.power(a, p).sum(axis=axis, keepdims=True), 1.0 / p)


def _vector_norm_backward(g, x, norm, p, axis):
    """d||x||_p/dx times g (g and norm with `axis` kept), PyTorch's norm_backward: zero where
    the norm is zero (p >= 1), an even share among the extreme elements for p = +-inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0.0:
            return np.zeros_like(x)
        if p == 1.0:
            return np.sign(x) * g
        if p == 2.0:
            return g * np.where(norm == 0, 0.0, x / norm).astype(x.dtype, copy=False)
        if np.isinf(p):
            a = np.abs(x)
            extreme = (a == norm) | np.isnan(a)
            return np.sign(x) * (g / extreme.sum(axis=axis, keepdims=True) * extreme)
        if p < 1.0:
            scaled = np.sign(x) * np.where(x == 0, 0.0, np.power(np.abs(x), p - 1.0))
            return (scaled * g * np.power(norm, 1.0 - p)).astype(x.dtype, copy=False)
        scaled = np.sign(x) * np.power(np.abs(x), p - 1.0) if p < 2.0 else \
            x * np.power(np.abs(x), p - 2.0)
        scale = np.where(norm == 0, 0.0, g / np.power(norm, p - 1.0))
        return (scaled * scale).astype(x.dtype, copy=False)


def _norm_graph_supported(p):
    """The p whose norm gradient has a recorded form (_vector_norm_backward_graph): not
    0 < p < 1, whose gradient is infinite at every zero element."""
    return p == 0.0 or p >= 1.0 or p == -np.inf


def _vector_norm_graph(x, norm, p, axis):
    """||x||_p (axis kept) of the Tensor x, recorded, where the norm (the array `norm`) is
    not zero, and 1 where it is: a root's derivative there is infinite, and the gradient
    it serves is masked to zero there anyway."""
    nonzero = norm != 0
    if p == 2.0:
        return Where.apply((x * x).sum(axis, keepdim=True), 1.0, condition=nonzero).sqrt()
    return Where.apply((x.abs() ** p).sum(axis, keepdim=True), 1.0, condition=nonzero) ** (1.0 / p)


def _vector_norm_backward_graph(g, x, norm, p, axis):
    """_vector_norm_backward of the Tensors g and x (norm: the forward's array), recorded:
    the same zeros where the norm is zero, the same constant shares for p = +-inf."""
    xv = x._data
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0.0:
            return g * constant(np.zeros_like(xv))
        if p == 1.0:
            return g * constant(np.sign(xv))
        if np.isinf(p):
            a = np.abs(xv)
            extreme = (a == norm) | np.isnan(a)
            share = np.sign(xv) * extreme / extreme.sum(axis=axis, keepdims=True)
            return g * constant(share.astype(xv.dtype, copy=False))
        nonzero = norm != 0
        n = _vector_norm_graph(x, norm, p, axis)
        if p == 2.0:
            return masked(nonzero, g * x / n)
        scaled = x * x.abs() ** (p - 2.0) if p >= 2.0 else x.sign() * x.abs() ** (p - 1.0)
        return masked(nonzero, scaled * (g / n ** (p - 1.0)))


class VectorNorm(Function):
    """||x||_p over `axes` (None: all), as torch.norm / linalg.vector_norm, with PyTorch's
    gradient (zero where the norm is zero)."""

    @staticmethod
    def forward(ctx, x, *, p, axes, keepdim):
        norm = _vector_norm(x, p, axes)
        ctx.save_for_backward(x, norm)
        ctx.p, ctx.axes = p, axes
        if keepdim:
            return norm
        kept = () if axes is None else tuple(n for i, n in enumerate(norm.shape) if i not in axes)
        return norm.reshape(kept)

    @staticmethod
    def backward(ctx, g):
        x, norm = ctx.saved_tensors
        return _vector_norm_backward(g.reshape(norm.shape), x, norm, ctx.p, ctx.axes)

    @staticmethod
    def graph_supports(ctx):
        return _norm_graph_supported(ctx.p)

    @staticmethod
    def backward_graph(ctx, g):
        x, norm = ctx.saved_tensors
        return _vector_norm_backward_graph(g.reshape(norm.shape), x, norm._data, ctx.p, ctx.axes)


class LpNormalization(Function):
    """x / max(||x||_p, eps) along `dim` (nn.functional.normalize). As PyTorch's composition
    norm -> clamp_min -> divide, the norm's gradient is zero where it was clamped."""

    @staticmethod
    def forward(ctx, x, *, p, dim, eps):
        norm = _vector_norm(x, p, dim)
        clamped = np.maximum(norm, eps).astype(x.dtype, copy=False)
        ctx.save_for_backward(x, norm, clamped)
        ctx.args = p, dim, eps
        return x / clamped

    @staticmethod
    def backward(ctx, g):
        x, norm, clamped = ctx.saved_tensors
        p, dim, eps = ctx.args
        dx = g / clamped
        dclamped = -(g * x).sum(axis=dim, keepdims=True) / (clamped * clamped)
        dnorm = np.where(norm > eps, dclamped, 0.0).astype(x.dtype, copy=False)
        return dx + _vector_norm_backward(dnorm, x, norm, p, dim)

    @staticmethod
    def graph_supports(ctx):
        return _norm_graph_supported(ctx.args[0])

    @staticmethod
    def backward_graph(ctx, g):
        # the clamped norm recomputed from x: the norm where it is above eps, eps (a
        # constant) where it was clamped
        x, norm, _ = ctx.saved_tensors
        p, dim, eps = ctx.args
        norm = norm._data
        above = norm > eps
        clamped = Where.apply(_vector_norm_graph(x, norm, p, dim), eps, condition=above)
        dnorm = masked(above, -(g * x).sum(dim, keepdim=True) / (clamped * clamped))
        return g / clamped + _vector_norm_backward_graph(dnorm, x, norm, p, dim)


class VectorCosine(Function):
    """sum(a / max(||a||, eps) * b / max(||b||, eps)) along `dim` of a and b broadcast together
    (nn.functional.cosine_similarity), PyTorch's formula: each vector is normalized first,
    which keeps the result in [-1, 1]. As PyTorch's, the norms are clamped outside autograd,
    so the gradient reaches a through both a / c_a and c_a's unclamped norm n_a:
    da = g (b / (c_b c_a) - s a / (c_a n_a)), the second term zero where n_a = 0."""

    @staticmethod
    def forward(ctx, a, b, *, dim, eps):
        a_full, b_full = np.broadcast_arrays(a, b)
        norms = [np.sqrt((v * v).sum(axis=dim, keepdims=True)) for v in (a_full, b_full)]
        clamped = [np.maximum(n, eps).astype(n.dtype, copy=False) for n in norms]
        s = ((a_full / clamped[0]) * (b_full / clamped[1])).sum(axis=dim, keepdims=True)
        ctx.save_for_backward(a, b, *norms, *clamped, s)
        ctx.dim, ctx.eps = dim, eps
        return s.squeeze(dim)

    @staticmethod
    def backward(ctx, g):
        a, b, norm_a, norm_b, c_a, c_b, s = ctx.saved_tensors
        g = np.expand_dims(g, ctx.dim)
        grads = []
        with np.errstate(divide="ignore", invalid="ignore"):
            for need, x, other, n, c, c_other in ((ctx.needs_input_grad[0], a, b, norm_a, c_a, c_b),
                                                  (ctx.needs_input_grad[1], b, a, norm_b, c_b, c_a)):
                if not need:
                    grads.append(None)
                    continue
                through_norm = np.where(n == 0, 0.0, s / (c * n)).astype(x.dtype, copy=False)
                grad = g * (other / (c_other * c) - through_norm * x)
                grads.append(unbroadcast(grad, x.shape))
        return tuple(grads)

    @staticmethod
    def backward_graph(ctx, g):
        # backward's formula with the norms, their clamps and s recomputed from a and b
        a, b, norm_a, norm_b, _, _, _ = ctx.saved_tensors
        dim, eps = ctx.dim, ctx.eps
        full = np.broadcast_shapes(a.shape, b.shape)
        a_full, b_full = a.expand(*full), b.expand(*full)
        norms = [_vector_norm_graph(v, n._data, 2.0, dim) for v, n in ((a_full, norm_a), (b_full, norm_b))]
        clamped = [Where.apply(n, eps, condition=m._data > eps) for n, m in zip(norms, (norm_a, norm_b))]
        s = ((a_full / clamped[0]) * (b_full / clamped[1])).sum(dim, keepdim=True)
        g = g.unsqueeze(dim)
        grads = []
        for need, x, other, n, m, c, c_other in (
                (ctx.needs_input_grad[0], a_full, b_full, norms[0], norm_a, clamped[0], clamped[1]),
                (ctx.needs_input_grad[1], b_full, a_full, norms[1], norm_b, clamped[1], clamped[0])):
            if not need:
                grads.append(None)
                continue
            through_norm = masked(m._data != 0, s / (c * n))
            grad = g * (other / (c_other * c) - through_norm * x)
            grads.append(unbroadcast(grad, (a if x is a_full else b).shape))
        return tuple(grads)
