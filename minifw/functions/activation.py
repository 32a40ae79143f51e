"""Pointwise activations: relu, leaky_relu, elu, sigmoid, tanh over the activation
primitive; gelu, silu, hardtanh (relu6), softplus, hardswish, hardsigmoid, mish, logsigmoid,
selu and celu, hardshrink and softshrink, and threshold, which have no primitive, as array code."""
import math

import numpy as np

from ..autograd import Function
from ..engines import current_engine
from .elementwise import Where, masked
from .special import erf


def needs_input(mode, negative_slope=0.01, alpha=1.0):
    """Whether the activation's backward needs x besides y: only a negative slope or alpha,
    where y alone does not tell the branch. Without it, x may be overwritten by y."""
    return (mode == "leaky_relu" and negative_slope < 0) or (mode == "elu" and alpha < 0)


class Activation(Function):
    """y = f(x); with inplace=True (x C-contiguous, writable, and not needed by backward) y is
    written over x's array, which is what it returns and saves (Tensor._apply_inplace then
    has nothing to copy)."""

    @staticmethod
    def forward(ctx, x, *, mode, negative_slope=0.01, alpha=1.0, inplace=False):
        engine = ctx.engine = current_engine()
        needs_x = needs_input(mode, negative_slope, alpha)
        y = engine.activation_forward(x, mode, negative_slope=negative_slope, alpha=alpha,
                                      inplace=inplace and not needs_x)
        ctx.save_for_backward(y, x if needs_x else None)
        ctx.args = mode, negative_slope, alpha
        return y

    @staticmethod
    def backward(ctx, dy):
        y, x = ctx.saved_tensors
        mode, negative_slope, alpha = ctx.args
        return ctx.engine.activation_backward(dy, y, mode, x=x, negative_slope=negative_slope,
                                              alpha=alpha)

    @staticmethod
    def backward_graph(ctx, dy):
        # y is this node's output in the graph, so sigmoid's y (1 - y), tanh's 1 - y^2 and
        # elu's y + alpha are differentiated again through it; the branch masks are constants
        y, x = ctx.saved_tensors
        mode, negative_slope, alpha = ctx.args
        if mode == "sigmoid":
            return dy * y * (1.0 - y)
        if mode == "tanh":
            return dy * (1.0 - y * y)
        if mode == "relu6":  # the gradient passes strictly between the bounds, as hardtanh's
            return masked((y._data > 0) & (y._data < 6), dy)
        positive = (y if x is None else x)._data > 0
        if mode == "relu":
            return masked(positive, dy)
        if mode == "leaky_relu":
            return Where.apply(dy, dy * negative_slope, condition=positive)
        # elu: alpha exp(x) = y + alpha; y is masked first, so that an infinite y of the
        # positive branch never meets a zero gradient (inf * 0)
        return Where.apply(dy, dy * (masked(~positive, y) + alpha), condition=positive)


# ---- activations with no primitive: array code ----------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_CUBIC = 0.044715  # Hendrycks & Gimpel (2016), the tanh approximation of GELU


def _sigmoid(x):
    """1 / (1 + exp(-x)) without overflow: exp of -|x| only."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


class GaussianErrorLinearUnit(Function):
    """GELU: x * Phi(x), Phi the standard normal CDF = (1 + erf(x / sqrt 2)) / 2, or with
    approximate='tanh' x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    @staticmethod
    def forward(ctx, x, *, approximate):
        ctx.approximate = approximate
        if approximate == "tanh":
            th = np.tanh(_SQRT_2_OVER_PI * (x + _TANH_CUBIC * x * x * x))
            ctx.save_for_backward(x, th)
            return 0.5 * x * (1.0 + th)
        cdf = 0.5 * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))
        ctx.save_for_backward(x, cdf)
        return x * cdf

    @staticmethod
    def backward(ctx, dy):
        x, saved = ctx.saved_tensors
        if ctx.approximate == "tanh":
            th = saved  # d/dx: (1 + th)/2 + x/2 (1 - th^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
            inner = _SQRT_2_OVER_PI * (1.0 + 3.0 * _TANH_CUBIC * x * x)
            return dy * (0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * inner)
        cdf = saved  # d/dx x Phi(x) = Phi(x) + x phi(x)
        return dy * (cdf + x * (_INV_SQRT_2PI * np.exp(-0.5 * x * x)))

    @staticmethod
    def backward_graph(ctx, dy):
        x, _ = ctx.saved_tensors  # th and cdf are constants in the graph: recomputed from x
        if ctx.approximate == "tanh":
            th = (_SQRT_2_OVER_PI * (x + _TANH_CUBIC * x * x * x)).tanh()
            inner = _SQRT_2_OVER_PI * (1.0 + 3.0 * _TANH_CUBIC * x * x)
            return dy * (0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * inner)
        cdf = 0.5 * (1.0 + (x * (1.0 / math.sqrt(2.0))).erf())
        return dy * (cdf + x * (_INV_SQRT_2PI * (-0.5 * x * x).exp()))


class SigmoidLinearUnit(Function):
    """SiLU (swish): x * sigmoid(x); d/dx = s (1 + x (1 - s)). The sigmoid is the engine's
    activation (the primitives: one vectorized pass; the array code's took eight, and SiLU of
    16 x 144 x 56 x 56 took 65 ms forward against PyTorch's 2)."""

    @staticmethod
    def forward(ctx, x):
        s = current_engine().activation_forward(x, "sigmoid")
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensors
        g = 1.0 - s  # s (1 + x (1 - s)) dy, in one array
        g *= x
        g += 1.0
        g *= s
        g *= dy
        return g

    @staticmethod
    def backward_graph(ctx, dy):
        x, _ = ctx.saved_tensors
        s = x.sigmoid()
        return dy * (s * (1.0 + x * (1.0 - s)))


class HardTanh(Function):
    """x clipped to [min_val, max_val]. As PyTorch's hardtanh_backward, the gradient passes
    strictly inside (min_val, max_val) only: zero at the bounds themselves (clamp's passes)."""

    @staticmethod
    def forward(ctx, x, *, min_val, max_val):
        ctx.save_for_backward(x)
        ctx.bounds = min_val, max_val
        return np.clip(x, min_val, max_val)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        lo, hi = ctx.bounds
        return np.where((x > lo) & (x < hi), dy, dy.dtype.type(0))  # no float64 temporary

    @staticmethod
    def backward_graph(ctx, dy):
        x, = (t._data for t in ctx.saved_tensors)
        lo, hi = ctx.bounds
        return masked((x > lo) & (x < hi), dy)


class SmoothRectifier(Function):
    """softplus: log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (where the
    two agree to within float rounding), computed as PyTorch's kernel computes it; the
    gradient is exp(beta x) / (exp(beta x) + 1) below the threshold, 1 above."""

    @staticmethod
    def forward(ctx, x, *, beta, threshold):
        z = x * beta
        linear = z > threshold
        with np.errstate(over="ignore"):  # exp(beta x) of a large x below a large threshold: inf
            e = np.exp(np.minimum(z, threshold))
            y = np.where(linear, x, np.log1p(e) / beta).astype(x.dtype, copy=False)
        ctx.save_for_backward(linear, e, x)  # x: for second derivatives only
        ctx.beta = beta
        return y

    @staticmethod
    def backward(ctx, g):
        linear, e, _ = ctx.saved_tensors
        with np.errstate(invalid="ignore"):
            return np.where(linear, g, g * e / (e + 1.0)).astype(g.dtype, copy=False)

    @staticmethod
    def backward_graph(ctx, g):
        # e / (e + 1) = sigmoid(beta x) below the threshold (x masked there, as exp's
        # argument was clipped), 1 above
        linear, _, x = ctx.saved_tensors
        linear = linear._data
        return Where.apply(g, g * (masked(~linear, x) * ctx.beta).sigmoid(), condition=linear)


class HardSwish(Function):
    """x * relu6(x + 3) / 6 (Howard et al., 2019, MobileNetV3). The gradient is the middle
    piece's x/3 + 1/2 strictly between -3 and 3 only: 0 at -3 and 1 at 3, as PyTorch's."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = x + 3.0  # the same operations as x * clip(x + 3, 0, 6) * (1/6), in one array
        np.clip(y, 0.0, 6.0, out=y)
        y *= x
        y *= 1.0 / 6.0
        return y

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        slope = x * (1.0 / 3.0)
        slope += 0.5
        np.copyto(slope, 0.0, where=x <= -3.0)
        np.copyto(slope, 1.0, where=~(x < 3.0))  # a NaN's gradient passes, as PyTorch's
        slope *= dy
        return slope

    @staticmethod
    def backward_graph(ctx, dy):
        x, = ctx.saved_tensors
        middle = (x._data > -3.0) & (x._data < 3.0)
        return Where.apply(dy * (x * (1.0 / 3.0) + 0.5), masked(x._data >= 3.0, dy), condition=middle)


class HardSigmoid(Function):
    """relu6(x + 3) / 6; the gradient 1/6 strictly inside (-3, 3), zero at -3 and 3 themselves."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = x + 3.0
        np.clip(y, 0.0, 6.0, out=y)
        y *= 1.0 / 6.0
        return y

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        g = dy * (1.0 / 6.0)
        np.copyto(g, 0.0, where=~((x > -3.0) & (x < 3.0)))
        return g

    @staticmethod
    def backward_graph(ctx, dy):
        x, = (t._data for t in ctx.saved_tensors)
        return masked((x > -3.0) & (x < 3.0), dy * (1.0 / 6.0))


def _softplus(x):
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))."""
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


class Mish(Function):
    """x * tanh(softplus(x)) (Misra, 2019); d/dx = t + x s (1 - t^2), t = tanh(softplus(x)),
    s = sigmoid(x). softplus is taken in its stable form, so a large |x| neither overflows
    nor loses the tail."""

    @staticmethod
    def forward(ctx, x):
        t = np.tanh(_softplus(x))
        ctx.save_for_backward(x, t)
        return x * t

    @staticmethod
    def backward(ctx, dy):
        x, t = ctx.saved_tensors
        return dy * (t + x * _sigmoid(x) * (1.0 - t * t))

    @staticmethod
    def backward_graph(ctx, dy):
        x, _ = ctx.saved_tensors
        # softplus with PyTorch's threshold 20, past which tanh(softplus(x)) is 1 in float64
        t = SmoothRectifier.apply(x, beta=1.0, threshold=20.0).tanh()
        return dy * (t + x * x.sigmoid() * (1.0 - t * t))


class LogSigmoid(Function):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), finite for every x; the gradient is
    sigmoid(-x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.minimum(x, 0.0) - np.log1p(np.exp(-np.abs(x)))

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        return dy * _sigmoid(-x)

    @staticmethod
    def backward_graph(ctx, dy):
        x, = ctx.saved_tensors
        return dy * (-x).sigmoid()


class ScaledExponentialLinear(Function):
    """scale * (x where x > 0, else alpha (exp(x * input_scale) - 1)): selu (Klambauer et al.,
    2017) and celu (Barron, 2017, input_scale = 1/alpha). At x = 0 the gradient is the
    exponential piece's, scale * alpha * input_scale, as PyTorch's."""

    @staticmethod
    def forward(ctx, x, *, alpha, scale, input_scale):
        ctx.save_for_backward(x)
        ctx.params = alpha, scale, input_scale
        with np.errstate(over="ignore"):  # exp of a large positive x, not the branch taken
            negative = alpha * np.expm1(x * input_scale)
        return (scale * np.where(x > 0, x, negative)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        alpha, scale, input_scale = ctx.params
        with np.errstate(over="ignore"):
            slope = np.where(x > 0, scale, scale * alpha * input_scale * np.exp(x * input_scale))
        return (dy * slope).astype(dy.dtype, copy=False)

    @staticmethod
    def backward_graph(ctx, dy):
        x, = ctx.saved_tensors
        alpha, scale, input_scale = ctx.params
        positive = x._data > 0  # x masked in the exponential: no overflow on the other branch
        negative = dy * (scale * alpha * input_scale) * (masked(~positive, x) * input_scale).exp()
        return Where.apply(dy * scale, negative, condition=positive)


class Shrink(Function):
    """hardshrink (x where |x| > lambd, else 0) and softshrink (x moved lambd towards 0 where
    |x| > lambd, else 0); the gradient passes where |x| > lambd only, and NaN stays NaN."""

    @staticmethod
    def forward(ctx, x, *, lambd, soft):
        ctx.save_for_backward(x)
        ctx.lambd, ctx.soft = lambd, soft
        inside = (x >= -lambd) & (x <= lambd)
        moved = x - np.sign(x) * lambd if soft else x
        return np.where(inside, 0.0, moved).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        inside = (x >= -ctx.lambd) & (x <= ctx.lambd)
        return np.where(inside, 0.0, dy).astype(dy.dtype, copy=False)

    @staticmethod
    def backward_graph(ctx, dy):
        x, = (t._data for t in ctx.saved_tensors)
        return masked(~((x >= -ctx.lambd) & (x <= ctx.lambd)), dy)


class Threshold(Function):
    """value where x <= threshold, else x (so NaN stays NaN); the gradient is zero where
    x <= threshold."""

    @staticmethod
    def forward(ctx, x, *, threshold, value):
        ctx.save_for_backward(x)
        ctx.threshold = threshold
        return np.where(x <= threshold, value, x).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        return np.where(x <= ctx.threshold, 0.0, dy).astype(dy.dtype, copy=False)

    @staticmethod
    def backward_graph(ctx, dy):
        x, = (t._data for t in ctx.saved_tensors)
        return masked(~(x <= ctx.threshold), dy)
