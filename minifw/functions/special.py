"""The error function, its complement and inverse, and the gamma family (lgamma, digamma,
trigamma) on arrays of any device (NumPy has no erf or gamma ufuncs, and a device's array
library may lack them), for GELU, the truncated-normal initializer and Tensor's functions.

erf is evaluated as a Chebyshev series (Clenshaw's recurrence: only multiply-adds and one
exp, which every array library has). The coefficients are computed once, here, from the
standard library's math.erf / math.erfc at Chebyshev points (interpolation at the n points
of the first kind, whose coefficients are a discrete cosine transform of the samples), on
two intervals:

    |x| < 2:       erf(x)  = x * P(x**2), P the series of erf(sqrt(u)) / sqrt(u) on u in [0, 4]
                   (even in x, entire: its coefficients fall below 1e-16 after 17 terms);
    2 <= |x| < 6:  erfc(x) = exp(-x**2) * Q(x), Q the series of erfc(x) * exp(x**2), which
                   varies slowly (about 1 / (x sqrt(pi))) and needs 23 terms;
    |x| >= 6:      erf(x) = sign(x) (erfc(6) = 2e-17 is below half an ulp of 1).

Each series is cut where its coefficients fall below the dtype's machine epsilon, so
float32 evaluates shorter series in float32. In float64 the result is within 2e-15 of the
exact erf (a few ulp; tests/nn/test_pytorch_modules.py checks it against math.erf), smooth
enough for finite-difference gradient checks, which an approximation such as Abramowitz and
Stegun's 7.1.26 (error 1.5e-7) is not.
"""
import math

import numpy as np

_SAMPLES = 48  # Chebyshev points per interval: more than the float64 series need


def _chebyshev_coefficients(f, lo, hi, n=_SAMPLES):
    """c_0..c_{n-1} of the degree n - 1 interpolant of f on [lo, hi] at the points of the first
    kind. cos(pi * k * (2j + 1) / (2n)) is evaluated with its argument reduced exactly (an
    integer modulo 4n), since cos of an unreduced argument near 100 loses 1e-14."""
    j = np.arange(n)
    points = lo + (hi - lo) * (np.cos(np.pi * (j + 0.5) / n) + 1) / 2
    values = np.array([f(float(x)) for x in points])
    c = np.array([2.0 / n * math.fsum(values * np.cos(np.pi * ((k * (2 * j + 1)) % (4 * n)) / (2 * n)))
                  for k in range(n)])
    c[0] /= 2
    return c


def _erf_over_root(u):
    return math.erf(math.sqrt(u)) / math.sqrt(u) if u > 0 else 2 / math.sqrt(math.pi)


_SERIES = {  # name: (coefficients, interval)
    "small": (_chebyshev_coefficients(_erf_over_root, 0.0, 4.0), (0.0, 4.0)),
    "large": (_chebyshev_coefficients(lambda x: math.erfc(x) * math.exp(x * x), 2.0, 6.0),
              (2.0, 6.0)),
}
_CUT = {}  # (name, dtype) -> the coefficients that matter in that dtype, as its scalars


def _coefficients(name, dtype):
    key = name, dtype
    if key not in _CUT:
        c = _SERIES[name][0]
        # the true coefficients fall geometrically: cut at the first one below the dtype's
        # epsilon, before the rounding noise of the samples (about 1e-16) takes over
        keep = int(np.argmax(np.abs(c) < np.finfo(dtype).eps))
        _CUT[key] = [dtype.type(v) for v in c[:keep]]  # scalars of the dtype keep it (NEP 50)
    return _CUT[key]


def _clenshaw(name, x):
    """The series `name` at x (an array inside its interval), in x's dtype."""
    c = _coefficients(name, x.dtype)
    lo, hi = _SERIES[name][1]
    t = (x - (lo + hi) / 2) * (2 / (hi - lo))  # the interval onto [-1, 1]
    t2 = t + t
    b1 = b2 = 0
    for ck in c[:0:-1]:
        b1, b2 = t2 * b1 - b2 + ck, b1
    return t * b1 - b2 + c[0]


def erf(x):
    """The error function of a floating point array, elementwise, on x's device."""
    if x.dtype.kind != "f":
        raise TypeError(f"erf: expected a floating point array, got dtype {x.dtype}")
    a = np.abs(x)
    out = x * _clenshaw("small", np.minimum(x * x, 4.0))
    large = a >= 2.0
    if bool(large.any()):
        al = np.minimum(a[large], 6.0)  # beyond 6 the series gives 1 - exp(-36) * Q(6) == 1
        out[large] = np.copysign(1.0 - np.exp(-al * al) * _clenshaw("large", al), x[large])
    return out


def erfinv(y):
    """The inverse of erf for a float64 array: +-inf at +-1, nan outside [-1, 1]. Winitzki's
    closed-form estimate (relative error below 2e-3), then Newton steps on erf, each of which
    squares the relative error, so four reach float64's precision. Beyond |erfinv| = 5 (|y| >
    1 - 1.5e-12) the estimate stays: erf is too flat there for a step to be trusted."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a = 0.147  # Winitzki (2008): erfinv(y) ~ sign(y) sqrt(sqrt(b^2 - l / a) - b)
        log = np.log((1.0 - y) * (1.0 + y))
        b = 2.0 / (np.pi * a) + log / 2
        z = np.copysign(np.sqrt(np.sqrt(b * b - log / a) - b), y)
        z = np.where(np.abs(y) == 1, np.copysign(np.inf, y), z)
        z = np.where(np.abs(y) > 1, np.nan, z)
        refine = np.abs(z) < 5.0
        for _ in range(4):
            zs = np.where(refine, z, 0.0)
            slope = (2.0 / math.sqrt(math.pi)) * np.exp(-zs * zs)
            z = np.where(refine, zs - (erf(zs) - y) / slope, z)
    return z


def erfc(x):
    """1 - erf(x) without the cancellation of that difference for large x: below 2 (where
    erfc >= 0.0047 keeps 14 of 1 - erf's digits) the difference; on [2, 6) erf's own series
    of erfc(x) exp(x**2); from 6 on the continued fraction erfc(x) = exp(-x**2) / sqrt(pi) /
    (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))), whose 40 levels there are exact to
    float64 (it converges faster the larger x)."""
    if x.dtype.kind != "f":
        raise TypeError(f"erfc: expected a floating point array, got dtype {x.dtype}")
    out = 1.0 - erf(x)
    mid = (x >= 2.0) & (x < 6.0)
    if bool(mid.any()):
        xm = x[mid]
        out[mid] = np.exp(-xm * xm) * _clenshaw("large", xm)
    tail = x >= 6.0
    if bool(tail.any()):
        xt = x[tail]
        fraction = xt
        for k in range(40, 0, -1):
            fraction = xt + (k / 2) / fraction
        out[tail] = np.exp(-xt * xt) / (math.sqrt(math.pi) * fraction)
    return out


# The gamma family: computed in float64 (then cast back) from arithmetic, log, sin and tan
# only, so that any device's array library evaluates them.
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)  # g = 7, n = 9 (relative error 1e-15)
_SHIFT = 10  # digamma and trigamma recur up to x + 10, where their asymptotic series are exact


def _sin_pi(x):
    """|sin(pi x)|, the argument reduced to [-1/2, 1/2] first (exactly: x - round(x))."""
    return np.abs(np.sin(math.pi * (x - np.round(x))))


def _lgamma_right(x):
    """log Gamma(x) for x >= 1/2, Lanczos's approximation."""
    z = x - 1.0
    series = _LANCZOS[0]
    for i, p in enumerate(_LANCZOS[1:], start=1):
        series = series + p / (z + i)
    t = z + 7.5
    return 0.5 * math.log(2 * math.pi) + (z + 0.5) * np.log(t) - t + np.log(series)


def lgamma(x):
    """log |Gamma(x)|, elementwise: inf at 0 and the negative integers. Below 1/2 from the
    reflection Gamma(x) Gamma(1 - x) = pi / sin(pi x)."""
    x64 = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        right = _lgamma_right(np.maximum(x64, 0.5))
        left = np.log(math.pi / _sin_pi(x64)) - _lgamma_right(np.maximum(1.0 - x64, 0.5))
        out = np.where(x64 >= 0.5, right, left)
        out = np.where(np.isinf(x64), np.inf, out)
    return out.astype(x.dtype, copy=False)


def _asymptotic_digamma(y):
    """psi(y) for y >= 10.5: log y - 1/(2y) - sum B_2k / (2k y**2k), to k = 7."""
    r = 1.0 / (y * y)
    tail = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132 - r * (
        691 / 32760 - r / 12))))))
    return np.log(y) - 0.5 / y - tail


def _asymptotic_trigamma(y):
    """psi'(y) for y >= 10.5: 1/y + 1/(2y**2) + sum B_2k / y**(2k+1), to k = 7."""
    r = 1.0 / (y * y)
    tail = r * (1 / 6 - r * (1 / 30 - r * (1 / 42 - r * (1 / 30 - r * (5 / 66 - r * (
        691 / 2730 - r * 7 / 6))))))
    return 1.0 / y + 0.5 * r + tail / y


def _shifted(x, asymptotic, term):
    """f(x) for x >= 1/2 from f(x) = f(x + n) -+ sum_k term(x + k), n = _SHIFT."""
    total = term(x)
    for k in range(1, _SHIFT):
        total = total + term(x + k)
    return asymptotic(x + _SHIFT), total


def digamma(x):
    """psi(x) = d/dx log Gamma(x), elementwise: -inf at 0, nan at the negative integers (as
    PyTorch's). Below 1/2 from the reflection psi(1 - x) - psi(x) = pi / tan(pi x)."""
    x64 = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.maximum(x64, 0.5)
        far, near = _shifted(a, _asymptotic_digamma, lambda v: 1.0 / v)
        right = far - near
        b = np.maximum(1.0 - x64, 0.5)
        far, near = _shifted(b, _asymptotic_digamma, lambda v: 1.0 / v)
        left = far - near - math.pi / np.tan(math.pi * (x64 - np.round(x64)))
        out = np.where(x64 >= 0.5, right, left)
        out = np.where(x64 == 0, -np.inf, np.where((x64 < 0) & (x64 == np.round(x64)), np.nan, out))
        out = np.where(x64 == np.inf, np.inf, np.where(x64 == -np.inf, np.nan, out))
    return out.astype(x.dtype, copy=False)


def trigamma(x):
    """psi'(x), elementwise (digamma's derivative). Below 1/2 from the reflection psi'(1 - x)
    + psi'(x) = pi**2 / sin(pi x)**2."""
    x64 = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        far, near = _shifted(np.maximum(x64, 0.5), _asymptotic_trigamma, lambda v: 1.0 / (v * v))
        right = far + near
        far, near = _shifted(np.maximum(1.0 - x64, 0.5), _asymptotic_trigamma,
                             lambda v: 1.0 / (v * v))
        left = (math.pi / _sin_pi(x64)) ** 2 - (far + near)
        out = np.where(x64 >= 0.5, right, left)
        out = np.where((x64 <= 0) & (x64 == np.round(x64)), np.inf, out)
    return out.astype(x.dtype, copy=False)
