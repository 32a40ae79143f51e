"""The error function and its inverse on arrays of any device (NumPy has no erf ufunc, and
a device's array library may lack one), for GELU and the truncated-normal initializer.

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
