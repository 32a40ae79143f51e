"""torch.special for minifw: special functions of every element, differentiable where
PyTorch's are (zeta in its second argument only, as PyTorch's; the Bessel functions of the
first kind and the orthogonal polynomials without gradients, as PyTorch's).

Each computes in float64 inside and returns the input's float dtype (integer inputs give the
default float dtype). Accuracy in float64, against high-precision values: erfcx, ndtr,
log_ndtr within 2e-13 relative over their whole range; ndtri's result reproduces p to 2e-13
relative down to 1e-300; i0e, i1e within 1e-15; bessel_j0/j1 within 5e-13 absolute.
"""
import numbers

import numpy as np

from . import devices
from .functions import elementwise as _elementwise
from .functions import special as _special
from .tensor import Tensor, get_default_dtype, tensor

__all__ = ["bessel_j0", "bessel_j1", "digamma", "entr", "erf", "erfc", "erfcx",
           "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i0e",
           "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln",
           "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax",
           "spherical_bessel_j0", "modified_bessel_i0", "modified_bessel_i1", "xlog1py", "xlogy", "zeta", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
           "legendre_polynomial_p"]


def _input(fn, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"special.{fn}: input must be a Tensor, got {type(input).__name__}")
    return input


def _method(name, doc):
    def function(input, *args, **kwargs):
        return getattr(_input(name, input), name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


def _renamed(name, method, doc):
    def function(input):
        return getattr(_input(name, input), method)()
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


erf = _method("erf", "The error function.")
erfc = _method("erfc", "The complementary error function 1 - erf(x).")
erfinv = _method("erfinv", "The inverse of erf on (-1, 1).")
digamma = _method("digamma", "The derivative of lgamma.")
psi = _renamed("psi", "digamma", "digamma, under its other name.")
gammaln = _renamed("gammaln", "lgamma", "log |Gamma(x)|.")
expit = _renamed("expit", "sigmoid", "The logistic sigmoid 1 / (1 + exp(-x)).")
exp2 = _method("exp2", "2 ** x.")
expm1 = _method("expm1", "exp(x) - 1, accurate near 0.")
log1p = _method("log1p", "log(1 + x), accurate near 0.")
sinc = _method("sinc", "sin(pi x) / (pi x), 1 at 0.")
i0 = _method("i0", "The modified Bessel function of the first kind of order 0.")


def logit(input, eps=None):
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] first when eps is given."""
    return _input("logit", input).logit(eps)


def round(input, *, decimals=0):
    return _input("round", input).round(decimals=decimals)


def polygamma(n, input):
    """The n-th derivative of digamma (n >= 0; n first, as torch.special.polygamma)."""
    return _input("polygamma", input).polygamma(n)


def multigammaln(input, p):
    """The multivariate log-gamma function of dimension p."""
    return _input("multigammaln", input).mvlgamma(p)


def softmax(input, dim, *, dtype=None):
    return _input("softmax", input).softmax(dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _input("log_softmax", input).log_softmax(dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False):
    return _input("logsumexp", input).logsumexp(dim, keepdim)


def _pointwise(name, doc):
    def function(input):
        x = _input(name, input)
        return _elementwise.Pointwise.apply(x._float_input(name), name=name)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


erfcx = _pointwise("erfcx", "The scaled complementary error function exp(x**2) erfc(x).")
ndtr = _pointwise("ndtr", "The standard normal CDF.")
ndtri = _pointwise("ndtri", "The standard normal quantile (the inverse of ndtr).")
log_ndtr = _pointwise("log_ndtr", "log of the standard normal CDF, finite far into its tail.")
i1 = _pointwise("i1", "The modified Bessel function of the first kind of order 1.")
i0e = _pointwise("i0e", "e**-|x| I0(x).")
i1e = _pointwise("i1e", "e**-|x| I1(x).")
entr = _pointwise("entr", "-x log x (0 at 0, -inf below).")


def _pair(fn, input, other):
    """(tensor, other) for a binary function where either may be a number."""
    if isinstance(input, Tensor):
        return input, other
    if isinstance(other, Tensor):
        if isinstance(input, (bool, np.bool_)) or not isinstance(input, numbers.Real):
            raise TypeError(f"special.{fn}: input must be a Tensor or a real number, got "
                            f"{type(input).__name__}")
        return tensor(input, dtype=other.dtype if other.dtype.kind == "f" else None,
                      device=other.device), other
    raise TypeError(f"special.{fn}: input or other must be a Tensor, got "
                    f"{type(input).__name__} and {type(other).__name__}")


def xlogy(input, other):
    """input * log(other), 0 where input is 0."""
    from . import xlogy as _xlogy
    return _xlogy(input, other)


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (unless other is NaN)."""
    a, b = _pair("xlog1py", input, other)
    return a._float_binary(b, "xlog1py")


def zeta(input, other):
    """The Hurwitz zeta function sum_k (other + k) ** -input; its gradient is defined in
    `other` only, as PyTorch's."""
    a, b = _pair("zeta", input, other)
    return a._float_binary(b, "zeta")


def gammainc(input, other):
    """The regularized lower incomplete gamma function P(input, other)."""
    a, b = _pair("gammainc", input, other)
    return a.igamma(b)


def gammaincc(input, other):
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P."""
    a, b = _pair("gammaincc", input, other)
    return a.igammac(b)


def _not_differentiable(name, compute, doc):
    """A function PyTorch gives no gradient: its result is a new tensor outside the graph."""
    def function(input):
        x = _input(name, input)
        dtype = x.dtype if x.dtype.kind == "f" else get_default_dtype()
        host = devices.to_device(x.detach()._data, devices.CPU)
        out = np.asarray(compute(host.astype(np.float64)), dtype=np.float64).astype(dtype)
        return Tensor._make(devices.to_device(out, x.device))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


bessel_j0 = _not_differentiable("bessel_j0", _special.bessel_j0,
                                "The Bessel function of the first kind of order 0.")
bessel_j1 = _not_differentiable("bessel_j1", _special.bessel_j1,
                                "The Bessel function of the first kind of order 1.")
spherical_bessel_j0 = _not_differentiable("spherical_bessel_j0", _special.spherical_bessel_j0,
                                          "The spherical Bessel function j0(x) = sin(x) / x.")
modified_bessel_i0 = _not_differentiable("modified_bessel_i0", _special.i0,
                                         "I0(x), as i0 but without a gradient (as PyTorch's).")
modified_bessel_i1 = _not_differentiable("modified_bessel_i1", _special.i1,
                                         "I1(x), as i1 but without a gradient (as PyTorch's).")


def _polynomial(name):
    def function(input, n):
        if isinstance(input, Tensor):
            x, dev = input, input.device
        elif isinstance(n, Tensor):
            x, dev = tensor(input, dtype=n.dtype if n.dtype.kind == "f" else None), n.device
        else:
            raise TypeError(f"special.{name}: input or n must be a Tensor")
        degree = n.detach()._data if isinstance(n, Tensor) else np.asarray(n)
        degree = devices.to_device(degree, devices.CPU)
        if degree.dtype.kind == "f" and not np.all(np.isnan(degree) | (degree == np.floor(degree))):
            raise ValueError(f"special.{name}: n must hold whole numbers")
        dtype = x.dtype if x.dtype.kind == "f" else get_default_dtype()
        host = devices.to_device(x.detach()._data, devices.CPU)
        out = _special.polynomial(name, host.astype(np.float64), degree).astype(dtype)
        return Tensor._make(devices.to_device(out, dev))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"The {name.replace('_', ' ')} of degree n (a whole number or tensor of "
                        f"them, broadcast with input) at input; 0 for a negative degree. No "
                        f"gradient, as PyTorch's.")
    return function


for _name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
              "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
              "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
              "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
              "laguerre_polynomial_l", "legendre_polynomial_p"):
    globals()[_name] = _polynomial(_name)
del _name
