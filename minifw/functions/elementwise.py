"""Elementwise arithmetic and functions (NumPy broadcasting), casts and copies (to another
device too), where, overwriting (fill_, copy_), tril/triu."""
import math

import numpy as np

from .. import autograd, devices
from ..autograd import Function
from . import special
from ..autograd import sum_to as unbroadcast  # the adjoint of NumPy broadcasting


# Second derivatives (create_graph=True). A Function's backward_graph computes its
# gradients with recorded Tensor operations (see autograd._graph_backward); one whose
# backward uses only what arrays and Tensors share (operators, unbroadcast) reuses it.
def constant(array):
    """An array (a mask, a piecewise-constant factor) as a Tensor outside the graph."""
    return autograd.Tensor._make(array)


def _array(t):
    """A saved Tensor's array (a number saved beside them stays a number)."""
    return t._data if isinstance(t, autograd.Tensor) else t


def masked(condition, g):
    """The Tensor g where the bool array `condition` holds, 0 elsewhere, recorded."""
    return Where.apply(g, g.dtype.type(0), condition=condition)


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = np.shape(a), np.shape(b)
        return np.add(a, b)

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return unbroadcast(g, sa), unbroadcast(g, sb)

    backward_graph = backward


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = np.shape(a), np.shape(b)
        return np.subtract(a, b)

    @staticmethod
    def backward(ctx, g):
        sa, sb = ctx.shapes
        return unbroadcast(g, sa), unbroadcast(-g, sb)

    backward_graph = backward


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        # each operand is saved only for the other's gradient, as PyTorch saves them: an
        # in-place change of x after y = x * 2 must not invalidate the graph
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        ctx.shapes = np.shape(a), np.shape(b)
        return np.multiply(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        ga = unbroadcast(g * b, sa) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(g * a, sb) if ctx.needs_input_grad[1] else None
        return ga, gb

    backward_graph = backward


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)
        ctx.shapes = np.shape(a), np.shape(b)
        return np.true_divide(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        ga = unbroadcast(g / b, sa) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(-g * a / (b * b), sb) if ctx.needs_input_grad[1] else None
        return ga, gb

    backward_graph = backward


class Remainder(Function):
    """a mod b with the sign of b (Python's %, torch.remainder) of float operands; the
    gradient is 1 for a and -floor(a / b) for b, as PyTorch's."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if ctx.needs_input_grad[1] else None)
        ctx.shapes = np.shape(a), np.shape(b)
        with np.errstate(invalid="ignore"):  # x % 0 is nan, as in PyTorch
            return np.remainder(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        ga = unbroadcast(g, sa) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(-g * np.floor_divide(a, b), sb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def backward_graph(ctx, g):
        a, b = ctx.saved_tensors  # floor(a / b) is piecewise constant: a constant factor
        sa, sb = ctx.shapes
        ga = unbroadcast(g, sa) if ctx.needs_input_grad[0] else None
        gb = (unbroadcast(-g * constant(np.floor_divide(_array(a), _array(b))), sb)
              if ctx.needs_input_grad[1] else None)
        return ga, gb


class Maximum(Function):
    """The larger of a and b elementwise (the smaller with smallest=True), broadcast. Where
    they are equal each gets half the gradient, as in PyTorch."""

    @staticmethod
    def forward(ctx, a, b, *, smallest=False):
        ctx.save_for_backward(a, b)
        ctx.smallest = smallest
        return np.minimum(a, b) if smallest else np.maximum(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        a_wins = (a < b) if ctx.smallest else (a > b)
        b_wins = (b < a) if ctx.smallest else (b > a)
        half = (a == b) * g.dtype.type(0.5)
        ga = unbroadcast(g * (a_wins + half), np.shape(a)) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(g * (b_wins + half), np.shape(b)) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def backward_graph(ctx, g):
        a, b = (_array(t) for t in ctx.saved_tensors)  # which one wins: piecewise constant
        a_wins = (a < b) if ctx.smallest else (a > b)
        b_wins = (b < a) if ctx.smallest else (b > a)
        half = (a == b) * g.dtype.type(0.5)
        ga = (unbroadcast(g * constant((a_wins + half).astype(g.dtype)), np.shape(a))
              if ctx.needs_input_grad[0] else None)
        gb = (unbroadcast(g * constant((b_wins + half).astype(g.dtype)), np.shape(b))
              if ctx.needs_input_grad[1] else None)
        return ga, gb


class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return np.negative(a)

    @staticmethod
    def backward(ctx, g):
        return -g

    backward_graph = backward


class Pow(Function):
    """a ** b, either operand a tensor (the other may be a number)."""

    @staticmethod
    def forward(ctx, a, b):
        out = np.power(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        ga = gb = None
        with np.errstate(divide="ignore", invalid="ignore"):
            # as PyTorch: d(a**0)/da = 0 even at a = 0, and d(0**b)/db = 0 for b >= 0
            if ctx.needs_input_grad[0]:
                ga = unbroadcast(np.where(b == 0, 0.0, g * b * np.power(a, b - 1)), np.shape(a))
            if ctx.needs_input_grad[1]:
                gb = unbroadcast(np.where((a == 0) & (b >= 0), 0.0, g * out * np.log(a)), np.shape(b))
        return ga, gb

    @staticmethod
    def backward_graph(ctx, g):
        a, b, out = ctx.saved_tensors
        av, bv = _array(a), _array(b)
        ga = gb = None
        with np.errstate(divide="ignore", invalid="ignore"):  # the same zeros as backward's
            if ctx.needs_input_grad[0]:
                ga = unbroadcast(masked(bv != 0, g * b * a ** (b - 1)), np.shape(av))
            if ctx.needs_input_grad[1]:
                log_a = a.log() if isinstance(a, autograd.Tensor) else np.log(a)
                gb = unbroadcast(masked(~((av == 0) & (bv >= 0)), g * out * log_a), np.shape(bv))
        return ga, gb


class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * out

    backward_graph = backward


class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g / a

    backward_graph = backward


class Sqrt(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g / (2 * out)

    backward_graph = backward


class Abs(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.abs(a)

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * np.sign(a)

    @staticmethod
    def backward_graph(ctx, g):
        a, = ctx.saved_tensors
        return g * constant(np.sign(a._data))


# Pointwise functions: name -> (forward, derivative, what the derivative reads: "a" the
# input, "out" the result, None nothing). Constants are Python floats, which keep a float32
# array float32 (a NumPy float64 scalar would promote it).
_LOG2 = math.log(2.0)
_LOG10 = math.log(10.0)
_TWO_OVER_ROOT_PI = 2.0 / math.sqrt(math.pi)
_ROOT_TWO_PI = math.sqrt(2.0 * math.pi)
_ONE_OVER_ROOT_TWO_PI = 1.0 / _ROOT_TWO_PI


def _clamp_eps(a, eps):
    return a if eps is None else np.clip(a, eps, 1.0 - eps)


def _inside_eps(a, eps):
    return 1.0 if eps is None else ((a >= eps) & (a <= 1.0 - eps))


def _logit_derivative(a, eps):
    """1 / (x (1 - x)); with eps, 0 where the clamp to [eps, 1 - eps] held x (0 and 1
    included, where the quotient alone would give 0 / 0); without, NaN outside [0, 1], where
    logit itself is NaN."""
    d = 1.0 / (a * (1.0 - a))
    if eps is None:
        return np.where((a < 0) | (a > 1), a.dtype.type(np.nan), d)
    return np.where(_inside_eps(a, eps), d, a.dtype.type(0))


def _logit_graph_derivative(a, eps):
    """_logit_derivative recorded: differentiable inside the range, constant outside."""
    d = 1.0 / (a * (1.0 - a))
    if eps is not None:
        return masked(np.asarray(_inside_eps(a._data, eps), dtype=bool), d)
    outside = (a._data < 0) | (a._data > 1)
    return Where.apply(d, a.dtype.type(np.nan), condition=~outside)
POINTWISE = {
    "sin": (np.sin, lambda a, out: np.cos(a), "a"),
    "cos": (np.cos, lambda a, out: -np.sin(a), "a"),
    "tan": (np.tan, lambda a, out: 1.0 + out * out, "out"),
    "atan": (np.arctan, lambda a, out: 1.0 / (1.0 + a * a), "a"),
    "exp2": (np.exp2, lambda a, out: out * _LOG2, "out"),
    "log1p": (np.log1p, lambda a, out: 1.0 / (1.0 + a), "a"),
    "expm1": (np.expm1, lambda a, out: out + 1.0, "out"),
    "rsqrt": (lambda a: 1.0 / np.sqrt(a), lambda a, out: -0.5 * out * out * out, "out"),
    # the square root of a sum of squares (std, norm): zero gradient where it is zero, as
    # PyTorch's std and norm, where sqrt's own derivative there would be inf (then 0 * inf)
    "sqrt_of_squares": (np.sqrt, lambda a, out: np.where(out > 0, 0.5 / np.where(out > 0, out, 1),
                                                         0).astype(out.dtype, copy=False), "out"),
    # piecewise constant: zero gradient almost everywhere, as PyTorch defines it
    "sign": (np.sign, None, None),
    "floor": (np.floor, None, None),
    "ceil": (np.ceil, None, None),
    "trunc": (np.trunc, None, None),
    "round": (np.round, None, None),
    "log2": (np.log2, lambda a, out: 1.0 / (a * _LOG2), "a"),
    "log10": (np.log10, lambda a, out: 1.0 / (a * _LOG10), "a"),
    "reciprocal": (lambda a: 1.0 / a, lambda a, out: -out * out, "out"),
    "sinh": (np.sinh, lambda a, out: np.cosh(a), "a"),
    "cosh": (np.cosh, lambda a, out: np.sinh(a), "a"),
    "asin": (np.arcsin, lambda a, out: 1.0 / np.sqrt(1.0 - a * a), "a"),
    "acos": (np.arccos, lambda a, out: -1.0 / np.sqrt(1.0 - a * a), "a"),
    "asinh": (np.arcsinh, lambda a, out: 1.0 / np.sqrt(a * a + 1.0), "a"),
    "acosh": (np.arccosh, lambda a, out: 1.0 / np.sqrt(a * a - 1.0), "a"),
    "atanh": (np.arctanh, lambda a, out: 1.0 / (1.0 - a * a), "a"),
    "erf": (special.erf, lambda a, out: _TWO_OVER_ROOT_PI * np.exp(-a * a), "a"),
    "erfc": (special.erfc, lambda a, out: -_TWO_OVER_ROOT_PI * np.exp(-a * a), "a"),
    # erfinv in float64 whatever the dtype: its Newton steps need the precision
    "erfinv": (lambda a: special.erfinv(a.astype(np.float64)).astype(a.dtype, copy=False),
               lambda a, out: (0.5 * math.sqrt(math.pi)) * np.exp(out * out), "out"),
    "lgamma": (special.lgamma, lambda a, out: special.digamma(a), "a"),
    "digamma": (special.digamma, lambda a, out: special.trigamma(a), "a"),
    "polygamma": (lambda a, n: special.polygamma(n, a), lambda a, out, n: special.polygamma(n + 1, a),
                  "a"),
    "i0": (lambda a: _on_host(special.i0, a), lambda a, out: _on_host(special.i1, a), "a"),
    "frac": (lambda a: a - np.trunc(a), lambda a, out: 1.0, None),
    "deg2rad": (lambda a: a * (math.pi / 180), lambda a, out: math.pi / 180, None),
    "rad2deg": (lambda a: a * (180 / math.pi), lambda a, out: 180 / math.pi, None),
    # d/dx sin(pi x) / (pi x) = (cos(pi x) - sinc(x)) / x, 0 at x = 0
    "sinc": (np.sinc, lambda a, out: np.where(a == 0, 0.0, (np.cos(math.pi * a) - np.sinc(a)) /
                                              np.where(a == 0, 1.0, a)).astype(a.dtype, copy=False),
             "a"),
    # logit's eps clamps the input to [eps, 1 - eps] first: no gradient outside it
    "logit": (lambda a, eps: np.log(_clamp_eps(a, eps) / (1.0 - _clamp_eps(a, eps))),
              lambda a, out, eps: _logit_derivative(a, eps), "a"),
    # nan_to_num: replaced elements get no gradient, the finite ones all of it
    "nan_to_num": (lambda a, nan, posinf, neginf: np.where(np.isnan(a), nan, np.where(
        a == np.inf, posinf, np.where(a == -np.inf, neginf, a))).astype(a.dtype, copy=False),
                   lambda a, out, *_: np.isfinite(a), "a"),
    # torch.special's further functions (computed on the host, in float64 inside)
    "erfcx": (lambda a: _on_host(special.erfcx, a),
              lambda a, out: 2.0 * a * _on_host(special.erfcx, a) - _TWO_OVER_ROOT_PI, "a"),
    "ndtr": (lambda a: _on_host(special.ndtr, a),
             lambda a, out: np.exp(-0.5 * a * a) * _ONE_OVER_ROOT_TWO_PI, "a"),
    "ndtri": (lambda a: _on_host(special.ndtri, a),
              lambda a, out: np.exp(0.5 * out * out) * _ROOT_TWO_PI, "out"),
    # phi(x) / Phi(x), as exp(-x**2/2 - log Phi(x)): finite where Phi underflows
    "log_ndtr": (lambda a: _on_host(special.log_ndtr, a),
                 lambda a, out: np.exp(-0.5 * a * a - _on_host(special.log_ndtr, a))
                 * _ONE_OVER_ROOT_TWO_PI, "a"),
    "i1": (lambda a: _on_host(special.i1, a),
           lambda a, out: _on_host(special.i0, a) - _over(_on_host(special.i1, a), a, 0.5), "a"),
    "i0e": (lambda a: _on_host(special.i0e, a),
            lambda a, out: _on_host(special.i1e, a) - np.sign(a) * _on_host(special.i0e, a), "a"),
    "i1e": (lambda a: _on_host(special.i1e, a),
            lambda a, out: _on_host(special.i0e, a) - np.sign(a) * _on_host(special.i1e, a)
            - _over(_on_host(special.i1e, a), a, 0.5), "a"),
    # -x log x; its derivative -(1 + log x) is inf at 0 and NaN below, as PyTorch's
    "entr": (lambda a: _on_host(special.entr, a), lambda a, out: -(1.0 + np.log(a)), "a"),
}


def _over(f, a, limit):
    """f / a, `limit` where a is 0 (f(0) = 0, so the quotient's limit there)."""
    return np.where(a == 0, limit, f / np.where(a == 0, 1, a)).astype(a.dtype, copy=False)


def _nonzero_denominator(t):
    """t with its zeros replaced by ones (a constant shift), for a quotient masked there."""
    return t + constant((t._data == 0).astype(t.dtype))


# The derivatives of POINTWISE's functions as recorded Tensor operations, for second
# derivatives: name -> f(a, out) (`a` or `out` is the Tensor the forward saved, the other
# None), or 0 for a piecewise constant function. digamma's (trigamma) has none.
GRAPH_DERIVATIVES = {
    "sin": lambda a, out: a.cos(),
    "cos": lambda a, out: -a.sin(),
    "tan": lambda a, out: 1.0 + out * out,
    "atan": lambda a, out: 1.0 / (1.0 + a * a),
    "exp2": lambda a, out: out * _LOG2,
    "log1p": lambda a, out: 1.0 / (1.0 + a),
    "expm1": lambda a, out: out + 1.0,
    "rsqrt": lambda a, out: -0.5 * out * out * out,
    "sqrt_of_squares": lambda a, out: masked(out._data > 0, 0.5 / _nonzero_denominator(out)),
    "sign": 0, "floor": 0, "ceil": 0, "trunc": 0, "round": 0,
    "log2": lambda a, out: 1.0 / (a * _LOG2),
    "log10": lambda a, out: 1.0 / (a * _LOG10),
    "reciprocal": lambda a, out: -out * out,
    "sinh": lambda a, out: a.cosh(),
    "cosh": lambda a, out: a.sinh(),
    "asin": lambda a, out: 1.0 / (1.0 - a * a).sqrt(),
    "acos": lambda a, out: -1.0 / (1.0 - a * a).sqrt(),
    "asinh": lambda a, out: 1.0 / (a * a + 1.0).sqrt(),
    "acosh": lambda a, out: 1.0 / (a * a - 1.0).sqrt(),
    "atanh": lambda a, out: 1.0 / (1.0 - a * a),
    "erf": lambda a, out: _TWO_OVER_ROOT_PI * (-a * a).exp(),
    "erfc": lambda a, out: -_TWO_OVER_ROOT_PI * (-a * a).exp(),
    "erfinv": lambda a, out: (0.5 * math.sqrt(math.pi)) * (out * out).exp(),
    "lgamma": lambda a, out: a.digamma(),
    "polygamma": lambda a, out, n: a.polygamma(n + 1),
    "frac": lambda a, out: 1.0,
    "deg2rad": lambda a, out: math.pi / 180,
    "rad2deg": lambda a, out: 180 / math.pi,
    "sinc": lambda a, out: masked(a._data != 0, ((math.pi * a).cos() - a.sinc()) / _nonzero_denominator(a)),
    "logit": lambda a, out, eps: _logit_graph_derivative(a, eps),
    "nan_to_num": lambda a, out, *_: constant(np.isfinite(a._data).astype(a.dtype)),
    "erfcx": lambda a, out: 2.0 * a * _special(a, "erfcx") - _TWO_OVER_ROOT_PI,
    "ndtr": lambda a, out: (-0.5 * a * a).exp() * _ONE_OVER_ROOT_TWO_PI,
    "ndtri": lambda a, out: (0.5 * out * out).exp() * _ROOT_TWO_PI,
    "log_ndtr": lambda a, out: (-0.5 * a * a - _special(a, "log_ndtr")).exp() * _ONE_OVER_ROOT_TWO_PI,
    "i0e": lambda a, out: _special(a, "i1e") - constant(np.sign(a._data)) * _special(a, "i0e"),
    "i0": lambda a, out: _special(a, "i1"),
    "i1": lambda a, out: _special(a, "i0") - _over_graph(_special(a, "i1"), a, 0.5),
    "i1e": lambda a, out: _special(a, "i0e") - constant(np.sign(a._data)) * _special(a, "i1e")
    - _over_graph(_special(a, "i1e"), a, 0.5),
    "entr": lambda a, out: -(1.0 + a.log()),
}


def _special(a, name):
    """POINTWISE[name] of the Tensor a, recorded."""
    return Pointwise.apply(a, name=name)


def _over_graph(f, a, limit):
    """f / a recorded, `limit` (a constant) where a is 0 (f(0) = 0: the quotient's limit)."""
    zero = a._data == 0
    return masked(~zero, f / _nonzero_denominator(a)) + constant((zero * limit).astype(a.dtype))


class Pointwise(Function):
    """One of POINTWISE on every element (`args`: extra arguments of the forward, e.g.
    round's decimals)."""

    @staticmethod
    def forward(ctx, a, *, name, args=()):
        forward, derivative, reads = POINTWISE[name]
        with np.errstate(divide="ignore", invalid="ignore"):  # inf and nan, as PyTorch's
            out = forward(a, *args)
        ctx.name, ctx.args = name, args
        ctx.save_for_backward(a if reads == "a" else out if reads == "out" else None)
        return out

    @staticmethod
    def backward(ctx, g):
        saved, = ctx.saved_tensors
        _, derivative, reads = POINTWISE[ctx.name]
        if derivative is None:
            return devices.zeros(g.shape, g.dtype, devices.of(g))
        with np.errstate(divide="ignore", invalid="ignore"):
            return g * (derivative(saved, None, *ctx.args) if reads == "a" else
                        derivative(None, saved, *ctx.args))

    @staticmethod
    def graph_supports(ctx):
        return ctx.name in GRAPH_DERIVATIVES

    @staticmethod
    def backward_graph(ctx, g):
        saved, = ctx.saved_tensors
        derivative = GRAPH_DERIVATIVES[ctx.name]
        if derivative == 0:
            return constant(devices.zeros(g.shape, g.dtype, devices.of(g._data)))
        reads = POINTWISE[ctx.name][2]
        with np.errstate(divide="ignore", invalid="ignore"):
            return g * (derivative(saved, None, *ctx.args) if reads == "a" else
                        derivative(None, saved, *ctx.args))


def _on_host(f, *arrays):
    """f of the arrays computed on the host (NumPy's i0, the incomplete gamma function's
    iterations), its result moved back to the first array's device, of that dtype."""
    dev = devices.of(arrays[0])
    out = f(*(devices.to_device(a, devices.CPU) if devices.is_array(a) else a for a in arrays))
    return devices.to_device(np.asarray(out).astype(arrays[0].dtype, copy=False), dev)


def _on_host_pair(f, a, b):
    """f(a, b) (either may be a number) computed on the host, on the device and in the dtype
    of the array among them."""
    array = a if devices.is_array(a) else b
    host = (devices.to_device(v, devices.CPU) if devices.is_array(v) else v for v in (a, b))
    return devices.to_device(np.asarray(f(*host)).astype(array.dtype, copy=False),
                             devices.of(array))


def _igamma(a, b, upper=False):
    array = a if devices.is_array(a) else b
    host = (devices.to_device(v, devices.CPU) if devices.is_array(v) else v for v in (a, b))
    return devices.to_device(special.gammainc(*host, upper=upper).astype(array.dtype, copy=False),
                             devices.of(array))


def _gamma_density(a, b):
    """d/dx P(a, x) = x**(a-1) e**-x / Gamma(a), the incomplete gamma functions' gradient in x."""
    av = devices.to_device(a, devices.CPU) if devices.is_array(a) else np.asarray(a)
    lg = devices.to_device(np.asarray(special.lgamma(np.asarray(av, dtype=np.float64))), devices.of(b))
    return np.exp(-b + (a - 1.0) * np.log(b) - lg).astype(b.dtype, copy=False)


def _no_gradient_in_input(name):
    def derivative(*_):
        raise RuntimeError(f"{name}: the derivative for 'input' (the first argument) is not "
                           f"implemented, as in PyTorch; only 'other' is differentiable")
    return derivative


def _fmax_mask(a, b, smallest):
    """Where fmax/fmin takes a: a at least (at most) b, or b NaN (PyTorch's rule)."""
    return ((a <= b) if smallest else (a >= b)) | np.isnan(b)


def _atan2_scale(a, b):
    """1 / (a^2 + b^2), 0 where that is 0: atan2's gradient at the origin is 0, as PyTorch's."""
    r2 = a * a + b * b
    return np.where(r2 == 0, 0.0, 1.0 / np.where(r2 == 0, 1.0, r2)).astype(np.result_type(a, b),
                                                                          copy=False)


def _atan2_scale_graph(a, b, av, bv):
    """_atan2_scale as a recorded Tensor operation of the Tensors (or numbers) a and b."""
    zero = np.asarray(av * av + bv * bv == 0)
    r2 = a * a + b * b + constant(zero.astype(np.result_type(av, bv)))
    return masked(~zero, 1.0 / r2) if zero.any() else 1.0 / r2


def _xlogy(a, b):
    """a * log(b), 0 where a is 0 (unless b is nan), as torch.xlogy."""
    return np.where((a == 0) & ~np.isnan(b), 0.0, a * np.log(b)).astype(np.result_type(a, b),
                                                                         copy=False)


# Binary pointwise functions of two float operands (broadcast): name -> (forward, derivative
# in a, derivative in b), the derivatives of (a, b, out); None: no gradient (zero).
BINARY = {
    # 0 at a = b = 0, as PyTorch's
    "atan2": (np.arctan2, lambda a, b, out: b * _atan2_scale(a, b), lambda a, b, out: -a * _atan2_scale(a, b)),
    "hypot": (np.hypot, lambda a, b, out: a / out, lambda a, b, out: b / out),
    "fmod": (np.fmod, lambda a, b, out: 1.0, lambda a, b, out: -np.trunc(a / b)),
    # in a, as PyTorch 2.13: log(b), except 0 where a is 0 and b <= 0 (not -inf or nan)
    "xlogy": (_xlogy, lambda a, b, out: np.where((a == 0) & (b <= 0), 0.0, np.log(b)),
              lambda a, b, out: a / b),
    "logaddexp": (np.logaddexp, lambda a, b, out: np.exp(a - out), lambda a, b, out: np.exp(b - out)),
    "logaddexp2": (np.logaddexp2, lambda a, b, out: np.exp2(a - out), lambda a, b, out: np.exp2(b - out)),
    # the larger (smaller) ignoring NaN; ties and a NaN b give a the gradient, as PyTorch's
    "fmax": (np.fmax, lambda a, b, out: _fmax_mask(a, b, False), lambda a, b, out: ~_fmax_mask(a, b, False)),
    "fmin": (np.fmin, lambda a, b, out: _fmax_mask(a, b, True), lambda a, b, out: ~_fmax_mask(a, b, True)),
    # a log1p(b), 0 where a is 0 (unless b is nan); in a, log1p(b) except 0 where a is 0 and
    # b <= -1, as PyTorch's
    "xlog1py": (lambda a, b: np.where((a == 0) & ~np.isnan(b), 0.0, a * np.log1p(b)).astype(
        np.result_type(a, b), copy=False),
                lambda a, b, out: np.where((a == 0) & (b <= -1), 0.0, np.log1p(b)),
                lambda a, b, out: a / (1.0 + b)),
    # the Hurwitz zeta function zeta(a, b); differentiable in b only, as PyTorch's
    "zeta": (lambda a, b: _on_host_pair(special.hurwitz_zeta, a, b), _no_gradient_in_input("zeta"),
             lambda a, b, out: -a * _on_host_pair(special.hurwitz_zeta, a + 1.0, b)),
    # the regularized incomplete gamma functions P(a, x) and Q = 1 - P: differentiable in x only
    "igamma": (_igamma, _no_gradient_in_input("igamma"), lambda a, b, out: _gamma_density(a, b)),
    "igammac": (lambda a, b: _igamma(a, b, upper=True), _no_gradient_in_input("igammac"),
                lambda a, b, out: -_gamma_density(a, b)),
    # as PyTorch's: out / a (the sign both carry), 0 where a is 0; b's sign is piecewise constant
    "copysign": (np.copysign, lambda a, b, out: np.where(a == 0, 0.0, out / np.where(a == 0, 1.0, a)),
                 None),
}


# BINARY's derivatives as recorded Tensor operations, for second derivatives: name ->
# (derivative in a, in b) of Tensors (a, b, out), a number standing for a constant factor;
# av and bv are the arrays, for piecewise-constant factors and masks.
GRAPH_BINARY = {
    "atan2": (lambda a, b, out, av, bv: _atan2_scale_graph(a, b, av, bv) * b,
              lambda a, b, out, av, bv: -_atan2_scale_graph(a, b, av, bv) * a),
    "hypot": (lambda a, b, out, av, bv: a / out, lambda a, b, out, av, bv: b / out),
    "fmod": (lambda a, b, out, av, bv: 1.0,
             lambda a, b, out, av, bv: constant(-np.trunc(av / bv))),
    "xlogy": (lambda a, b, out, av, bv: masked(~((av == 0) & (bv <= 0)),
                                               b.log() if isinstance(b, autograd.Tensor)
                                               else constant(np.log(bv))),
              lambda a, b, out, av, bv: a / b),
    "logaddexp": (lambda a, b, out, av, bv: (a - out).exp(), lambda a, b, out, av, bv: (b - out).exp()),
    "logaddexp2": (lambda a, b, out, av, bv: (a - out).exp2(), lambda a, b, out, av, bv: (b - out).exp2()),
    "fmax": (lambda a, b, out, av, bv: constant(_fmax_mask(av, bv, False).astype(out.dtype)),
             lambda a, b, out, av, bv: constant((~_fmax_mask(av, bv, False)).astype(out.dtype))),
    "fmin": (lambda a, b, out, av, bv: constant(_fmax_mask(av, bv, True).astype(out.dtype)),
             lambda a, b, out, av, bv: constant((~_fmax_mask(av, bv, True)).astype(out.dtype))),
    "igamma": (_no_gradient_in_input("igamma"), lambda a, b, out, av, bv: _gamma_density_graph(a, b, av)),
    "igammac": (_no_gradient_in_input("igammac"),
                lambda a, b, out, av, bv: -_gamma_density_graph(a, b, av)),
    "copysign": (lambda a, b, out, av, bv: constant(np.where(av == 0, 0.0, np.sign(av) * np.sign(_array(out)))
                                                    .astype(out.dtype)), None),
    "xlog1py": (lambda a, b, out, av, bv: masked(~((av == 0) & (bv <= -1)),
                                                 b.log1p() if isinstance(b, autograd.Tensor)
                                                 else constant(np.log1p(bv))),
                lambda a, b, out, av, bv: a / (1.0 + b)),
    "zeta": (_no_gradient_in_input("zeta"),
             lambda a, b, out, av, bv: -a * BinaryPointwise.apply(a + 1.0, b, name="zeta")),
}


def _gamma_density_graph(a, b, av):
    lg = a.lgamma() if isinstance(a, autograd.Tensor) else \
        float(special.lgamma(np.asarray(av, dtype=np.float64)))
    return (-b + (a - 1.0) * b.log() - lg).exp()


class BinaryPointwise(Function):
    """One of BINARY on every pair of elements of a and b (arrays of one float dtype, or one
    of them a scalar of it), broadcast."""

    @staticmethod
    def forward(ctx, a, b, *, name):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = BINARY[name][0](a, b)
        ctx.name = name
        ctx.save_for_backward(a, b, out)
        ctx.shapes = np.shape(a), np.shape(b)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        grads = []
        for derivative, shape, needed in zip(BINARY[ctx.name][1:], ctx.shapes, ctx.needs_input_grad):
            if not needed:
                grads.append(None)
            elif derivative is None:
                grads.append(devices.zeros(shape, g.dtype, devices.of(g)))
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    grads.append(unbroadcast((g * derivative(a, b, out)).astype(g.dtype, copy=False),
                                             shape))
        return tuple(grads)

    @staticmethod
    def graph_supports(ctx):
        return ctx.name in GRAPH_BINARY

    @staticmethod
    def backward_graph(ctx, g):
        a, b, out = ctx.saved_tensors
        av, bv = _array(a), _array(b)
        grads = []
        for derivative, shape, needed in zip(GRAPH_BINARY[ctx.name], ctx.shapes, ctx.needs_input_grad):
            if not needed:
                grads.append(None)
            elif derivative is None:
                grads.append(constant(devices.zeros(shape, g.dtype, devices.of(g._data))))
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    grads.append(unbroadcast(g * derivative(a, b, out, av, bv), shape))
        return tuple(grads)


class Clamp(Function):
    @staticmethod
    def forward(ctx, a, *, min=None, max=None):
        ctx.save_for_backward(a)
        ctx.bounds = min, max
        return np.clip(a, min, max)

    @staticmethod
    def inside(a, bounds):
        """Where the gradient passes: as in PyTorch 2.14, not at the bounds themselves."""
        lo, hi = bounds
        inside = np.ones_like(a, dtype=bool)
        if lo is not None:
            inside &= a > lo
        if hi is not None:
            inside &= a < hi
        return inside

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * Clamp.inside(a, ctx.bounds)

    @staticmethod
    def backward_graph(ctx, g):
        a, = ctx.saved_tensors
        return masked(Clamp.inside(a._data, ctx.bounds), g)


class Overwrite(Function):
    """a's values replaced by b (broadcast), written into a's own array: fill_, zero_ and
    copy_ when autograd records them. a's history gets a zero gradient (as PyTorch's)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.shape_b = np.shape(b)
        devices.assign(a, Ellipsis, b)
        return a

    @staticmethod
    def backward(ctx, g):
        ga = devices.zeros(g.shape, g.dtype, devices.of(g)) if ctx.needs_input_grad[0] else None
        return ga, unbroadcast(g, ctx.shape_b) if ctx.needs_input_grad[1] else None

    @staticmethod
    def backward_graph(ctx, g):
        ga = constant(devices.zeros(g.shape, g.dtype, devices.of(g._data))) \
            if ctx.needs_input_grad[0] else None
        return ga, unbroadcast(g, ctx.shape_b) if ctx.needs_input_grad[1] else None


class Triangle(Function):
    """The lower (tril) or upper (triu) triangle of the last two dims, from `diagonal` on;
    the rest zero."""

    @staticmethod
    def forward(ctx, a, *, diagonal=0, upper=False):
        ctx.upper = upper  # names the node (triu or tril)
        rows, cols = a.shape[-2:]
        keep = np.tri(rows, cols, diagonal - 1 if upper else diagonal, dtype=bool)  # on the host
        keep = devices.to_device(~keep if upper else keep, devices.of(a))
        ctx.save_for_backward(keep)
        return np.where(keep, a, a.dtype.type(0))

    @staticmethod
    def backward(ctx, g):
        keep, = ctx.saved_tensors
        return np.where(keep, g, g.dtype.type(0))

    @staticmethod
    def backward_graph(ctx, g):
        keep, = ctx.saved_tensors
        return masked(keep._data, g)


class Cast(Function):
    @staticmethod
    def forward(ctx, a, *, dtype):
        ctx.dtype = a.dtype
        return a.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return g.astype(ctx.dtype)

    @staticmethod
    def backward_graph(ctx, g):
        return g.to(ctx.dtype)


class Clone(Function):
    @staticmethod
    def forward(ctx, a):
        return a.copy(order="C")

    @staticmethod
    def backward(ctx, g):
        return g

    backward_graph = backward


class ToDevice(Function):
    """A copy on another device (Tensor.to(device)); the gradient goes back the same way."""

    @staticmethod
    def forward(ctx, a, *, device):
        ctx.source = devices.of(a)
        ctx.output_device = device  # the one Function whose result leaves its input's device
        return devices.to_device(a, device)

    @staticmethod
    def backward(ctx, g):
        return devices.to_device(g, ctx.source)

    @staticmethod
    def backward_graph(ctx, g):
        return g.to(ctx.source)


class Where(Function):
    @staticmethod
    def forward(ctx, a, b, *, condition):
        ctx.save_for_backward(condition)
        ctx.shapes = np.shape(a), np.shape(b)
        return np.where(condition, a, b)

    @staticmethod
    def backward(ctx, g):
        condition, = ctx.saved_tensors
        sa, sb = ctx.shapes
        return unbroadcast(np.where(condition, g, 0), sa), unbroadcast(np.where(condition, 0, g), sb)

    @staticmethod
    def backward_graph(ctx, g):
        condition = _array(ctx.saved_tensors[0])
        sa, sb = ctx.shapes
        return (unbroadcast(masked(condition, g), sa) if ctx.needs_input_grad[0] else None,
                unbroadcast(masked(~condition, g), sb) if ctx.needs_input_grad[1] else None)
