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
import functools
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
    squares the relative error, so four reach float64's precision. Where |y| > 1/2, erf is
    flat, so the steps solve log erfc(|z|) = log(1 - |y|) instead (1 - |y| is exact there, and
    erfc(z) = erfcx(z) exp(-z**2) keeps its digits far into the tail)."""
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
        tail = (np.abs(y) > 0.5) & (np.abs(y) < 1)
        if bool(np.any(tail)):
            zt = np.abs(np.where(tail, z, 1.0))
            log_q = np.log(np.where(tail, 1.0 - np.abs(y), 0.5))
            for _ in range(4):
                scaled = _erfcx64(zt)
                # d/dz log erfc(z) = -2 / (sqrt(pi) erfcx(z))
                zt = zt + (np.log(scaled) - zt * zt - log_q) * scaled * (math.sqrt(math.pi) / 2)
            z = np.where(tail, np.copysign(zt, y), z)
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


def _lgamma_near_one(z):
    """log Gamma(1 + z) for |z| <= 1/2, from its Taylor series about 1 written with
    zeta(k) - 1 (which falls like 2**-k): -log1p(z) + (1 - gamma) z + sum_k (-1)**k
    (zeta(k) - 1) z**k / k. Relative to the result it is exact to float64 near z = 0, where
    Lanczos's sum keeps only an absolute error of about 1e-15 and lgamma(1) is 0."""
    zeta_minus_one = _zeta_minus_one()
    total = np.zeros_like(z)
    for k in range(len(zeta_minus_one) + 1, 1, -1):  # Horner's rule from the last term
        total = (total + (-1) ** k * zeta_minus_one[k - 2] / k) * z
    return -np.log1p(z) + z * ((1.0 - _EULER_GAMMA) + total)


def lgamma(x):
    """log |Gamma(x)|, elementwise: inf at 0 and the negative integers. Below 1/2 from the
    reflection Gamma(x) Gamma(1 - x) = pi / sin(pi x); within 1/2 of its zeros 1 and 2 from
    the series about 1 (lgamma(2 + z) = log1p(z) + lgamma(1 + z)), exact there to the last
    digits, and exactly 0 at 1 and 2."""
    x64 = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        right = _lgamma_right(np.maximum(x64, 0.5))
        left = np.log(math.pi / _sin_pi(x64)) - _lgamma_right(np.maximum(1.0 - x64, 0.5))
        out = np.where(x64 >= 0.5, right, left)
        near_one = np.abs(x64 - 1.0) <= 0.5
        near_two = (np.abs(x64 - 2.0) <= 0.5) & ~near_one
        if bool(np.any(near_one | near_two)):
            z = np.where(near_one, x64 - 1.0, np.where(near_two, x64 - 2.0, 0.0))
            series = _lgamma_near_one(z)
            out = np.where(near_one, series, np.where(near_two, np.log1p(z) + series, out))
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
    """psi(x) = d/dx log Gamma(x), elementwise: -inf at 0 and inf at -0, nan at the negative
    integers (as PyTorch's). Below 1/2 from the reflection psi(1 - x) - psi(x) = pi / tan(pi x)."""
    x64 = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.maximum(x64, 0.5)
        far, near = _shifted(a, _asymptotic_digamma, lambda v: 1.0 / v)
        right = far - near
        b = np.maximum(1.0 - x64, 0.5)
        far, near = _shifted(b, _asymptotic_digamma, lambda v: 1.0 / v)
        left = far - near - math.pi / np.tan(math.pi * (x64 - np.round(x64)))
        out = np.where(x64 >= 0.5, right, left)
        zero = np.where(np.signbit(x64), np.inf, -np.inf)  # the limit from zero's side
        out = np.where(x64 == 0, zero, np.where((x64 < 0) & (x64 == np.round(x64)), np.nan, out))
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


# Bernoulli numbers B_2k, k = 1..7, for the Euler-Maclaurin tail of the Hurwitz zeta function
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _hurwitz_zeta(s, x):
    """zeta(s, x) = sum_j (x + j)**-s for an integer s >= 2, elementwise (x float64, not a
    nonpositive integer): the first terms summed until x + j reaches 15 + 2s, the rest from
    the Euler-Maclaurin formula there (its terms shrink like ((s + 2k) / (x + j))**2k)."""
    start = 15.0 + 2 * s
    shifts = np.where(np.isfinite(x), np.maximum(0.0, np.ceil(start - x)), 0.0)
    total = np.zeros_like(x)
    for j in range(int(shifts.max()) if shifts.size else 0):
        total = total + np.where(j < shifts, (x + j) ** -s, 0.0)
    y = x + shifts
    tail = y ** (1 - s) / (s - 1) + 0.5 * y ** -s
    rising, factorial = float(s), 2.0  # s (s+1) ... (s + 2k - 2) and (2k)!
    for k, b in enumerate(_BERNOULLI, start=1):
        tail = tail + b / factorial * rising * y ** (-s - 2 * k + 1)
        rising *= (s + 2 * k - 1) * (s + 2 * k)
        factorial *= (2 * k + 1) * (2 * k + 2)
    return total + tail


_EULER_GAMMA = 0.57721566490153286061


@functools.lru_cache(maxsize=None)
def _zeta_minus_one():
    """zeta(k) - 1 = zeta(k, 2) for k = 2..40, for lgamma's series about 1 (|z| <= 1/2: the
    40th term is below 1e-25); made on first use, not at import."""
    return tuple(float(_hurwitz_zeta(k, np.array([2.0]))[0]) for k in range(2, 41))


def polygamma(n, x):
    """psi^(n)(x), the n-th derivative of digamma, elementwise: digamma for n = 0, else
    (-1)**(n+1) n! zeta(n + 1, x); at 0 and the negative integers inf for odd n and
    -inf for even n (as PyTorch)."""
    if n == 0:
        return digamma(x)
    x64 = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        poles = (x64 <= 0) & (x64 == np.round(x64))
        out = (-1.0) ** (n + 1) * math.factorial(n) * _hurwitz_zeta(n + 1, np.where(poles, 0.5, x64))
        out = np.where(poles, np.inf if n % 2 else -np.inf, out)
        out = np.where(x64 == np.inf, 0.0, np.where(x64 == -np.inf, np.nan, out))
    return out.astype(x.dtype, copy=False)


def gammainc(a, x, upper=False):
    """The regularized lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a)
    (with upper=True the upper one, Q = 1 - P), elementwise (a, x broadcast): P's power
    series where x < a + 1, Q's continued fraction (modified Lentz) elsewhere, each run until
    every term is below the float64 epsilon, and the other one as 1 minus it only where that
    loses nothing (the complement is then at least about 1/2 ... 1 - P(a, a+1)). NaN where
    a < 0 or x < 0, as torch.igamma; P(0, x > 0) = 1; P(inf, x) = 0 for finite x."""
    a64, x64 = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.full(a64.shape, np.nan)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        ok = (a64 > 0) & (x64 > 0) & np.isfinite(a64)
        aa, xx = np.where(ok, a64, 1.0), np.where(ok, x64, 1.0)
        log_front = aa * np.log(xx) - xx - lgamma(aa)
        series = (xx < aa + 1.0) & ok
        # power series: sum_k x^k / ((a+1)...(a+k)), times x^a e^-x / Gamma(a + 1)
        term = np.ones_like(aa) / aa
        total = term.copy()
        for k in range(1, 10000):
            term = term * xx / (aa + k)
            total = total + np.where(series, term, 0.0)
            if not np.any(series & (np.abs(term) > np.abs(total) * 1e-17)):
                break
        p_series = np.exp(log_front) * total
        # continued fraction for Q(a, x)
        tiny = 1e-300
        b = xx + 1.0 - aa
        c = np.full_like(aa, 1.0 / tiny)
        d = 1.0 / np.where(np.abs(b) < tiny, tiny, b)
        h = d.copy()
        for i in range(1, 10000):
            an = -i * (i - aa)
            b = b + 2.0
            d = an * d + b
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            step = d * c
            h = h * np.where(series, 1.0, step)
            if not np.any(~series & ok & (np.abs(step - 1.0) > 1e-16)):
                break
        q_fraction = np.exp(log_front) * h
        lower = np.where(series, p_series, 1.0 - q_fraction)
        complement = np.where(series, 1.0 - p_series, q_fraction)
        out = np.where(ok, complement if upper else lower, out)
        zero, one = (1.0, 0.0) if upper else (0.0, 1.0)  # the values of P (or Q) at the ends
        out = np.where((x64 == 0) & (a64 > 0), zero, out)
        out = np.where((a64 == 0) & (x64 > 0), one, out)
        out = np.where((x64 == np.inf) & (a64 >= 0) & np.isfinite(a64), one, out)
        out = np.where((a64 == np.inf) & np.isfinite(x64) & (x64 >= 0), zero, out)
    return out


def i0(x):
    """The modified Bessel function of the first kind of order 0 (numpy.i0), of x's dtype."""
    return np.i0(x).astype(x.dtype, copy=False)


def i1(x):
    """The modified Bessel function of the first kind of order 1, i0's derivative: its power
    series sum_k (x/2)**(2k+1) / (k! (k+1)!) where |x| <= 20, else the asymptotic expansion
    e**|x| / sqrt(2 pi |x|) (1 - 3/(8|x|) - 15/(128 x**2) - ...) with x's sign."""
    x64 = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        half = np.where(np.abs(x64) <= 20, x64, 0.0) / 2
        term = half.copy()
        total = term.copy()
        for k in range(1, 60):
            term = term * half * half / (k * (k + 1))
            total = total + term
        big = np.abs(np.where(np.abs(x64) > 20, x64, 21.0))
        far = np.sign(x64) * np.exp(big) / np.sqrt(2 * math.pi * big) * \
            _asymptotic_bessel_i(4.0, big)
        out = np.where(np.abs(x64) <= 20, total, far)
    return out.astype(np.asarray(x).dtype, copy=False)


# ---- torch.special's further functions (float64 inside, the input's dtype out) -------------

def _asymptotic_bessel_i(mu, z, terms=30):
    """sqrt(2 pi z) e**-z I_nu(z) for large z > 0 (mu = 4 nu**2): the asymptotic series
    1 - (mu - 1)/(8z) + (mu - 1)(mu - 9)/(2! (8z)**2) - ..., whose terms shrink until k ~ 2z;
    30 terms leave a relative error below 1e-16 from z = 20."""
    series, coefficient = np.ones_like(z), 1.0
    for k in range(1, terms):
        coefficient *= -(mu - (2 * k - 1) ** 2) / (k * 8.0)
        series = series + coefficient / z ** k
    return series


def _scaled_bessel_i(order, x):
    """e**-|x| I_order(x) (order 0 or 1), elementwise in float64."""
    x64 = np.asarray(x, dtype=np.float64)
    ax = np.abs(x64)
    near = ax <= 20
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        small = np.where(near, x64, 0.0)
        value = (np.i0(small) if order == 0 else i1(small)) * np.exp(-np.abs(small))
        big = np.where(near, 21.0, ax)
        far = _asymptotic_bessel_i(4.0 * order * order, big) / np.sqrt(2 * math.pi * big)
        if order == 1:
            far = np.sign(x64) * far
        out = np.where(near, value, np.where(np.isinf(x64), 0.0, far))
    return np.where(np.isnan(x64), np.nan, out)


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, e**-|x| I0(x)."""
    return _scaled_bessel_i(0, x).astype(np.asarray(x).dtype, copy=False)


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, e**-|x| I1(x)."""
    return _scaled_bessel_i(1, x).astype(np.asarray(x).dtype, copy=False)


_ROOT_PI = math.sqrt(math.pi)


def _erfcx64(x):
    """exp(x**2) erfc(x) in float64: the product where x < 8 (erfc(8) ~ 1e-29 is still
    accurate), beyond it the asymptotic series 1/(x sqrt(pi)) sum_k (-1)**k (2k-1)!! / (2x**2)**k,
    whose 20 terms leave an error below 1e-18 there."""
    x64 = np.asarray(x, dtype=np.float64)
    near = x64 < 8
    with np.errstate(over="ignore", invalid="ignore"):
        xs = np.where(near, x64, 0.0)
        product = np.exp(xs * xs) * erfc(xs)
        big = np.where(near, 8.0, x64)
        term, total = np.ones_like(big), np.ones_like(big)
        inverse = 1.0 / (2 * big * big)
        for k in range(1, 20):
            term = term * -(2 * k - 1) * inverse
            total = total + term
        far = total / (big * _ROOT_PI)
        out = np.where(near, product, far)
    return np.where(np.isnan(x64), np.nan, out)


def erfcx(x):
    """The scaled complementary error function exp(x**2) erfc(x), without overflow for
    large x (it falls like 1 / (x sqrt(pi)))."""
    return _erfcx64(x).astype(np.asarray(x).dtype, copy=False)


_LOG_HALF = math.log(0.5)


def _log_ndtr64(x):
    """log Phi(x), Phi the standard normal CDF: log1p(-erfc(x/sqrt2)/2) from x = -1 up, and
    log(erfcx(-x/sqrt2) / 2) - x**2/2 below, which stays finite where Phi underflows."""
    x64 = np.asarray(x, dtype=np.float64)
    upper = x64 >= -1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        xu = np.where(upper, x64, 0.0)
        xl = np.where(upper, -2.0, x64)
        out = np.where(upper, np.log1p(-0.5 * erfc(xu / math.sqrt(2))),
                       _LOG_HALF + np.log(_erfcx64(-xl / math.sqrt(2))) - 0.5 * xl * xl)
    return np.where(np.isnan(x64), np.nan, out)


def log_ndtr(x):
    return _log_ndtr64(x).astype(np.asarray(x).dtype, copy=False)


def ndtr(x):
    """The standard normal CDF: 0.5 erfc(-x / sqrt(2)) from x = -1 up, below it
    0.5 erfcx(-x / sqrt(2)) e**(-x**2 / 2), accurate down to the smallest values."""
    x64 = np.asarray(x, dtype=np.float64)
    lower = x64 < -1
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        xl = np.where(lower, x64, -2.0)
        out = np.where(lower, 0.5 * _erfcx64(-xl / math.sqrt(2)) * np.exp(-0.5 * xl * xl),
                       0.5 * erfc(-np.where(lower, 0.0, x64) / math.sqrt(2)))
    return np.where(np.isnan(x64), np.nan, out).astype(np.asarray(x).dtype, copy=False)


def ndtri(p):
    """The standard normal quantile: x with Phi(x) = p. The lower tail (p <= 1/2) is solved
    from a rational first guess (Abramowitz and Stegun 26.2.23, error < 5e-4) by Newton steps
    on log Phi(x) = log p, accurate for the smallest p; p > 1/2 is -ndtri(1 - p), 1 - p being
    exact there. -inf at 0, inf at 1, NaN outside [0, 1]."""
    p64 = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        upper = p64 > 0.5
        q = np.where(upper, 1.0 - p64, p64)
        inside = (q > 0) & (q <= 0.5)
        qq = np.where(inside, q, 0.25)
        t = np.sqrt(-2.0 * np.log(qq))
        x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
              (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t ** 3))
        log_q = np.log(qq)
        for _ in range(6):
            log_phi = _log_ndtr64(x)
            # Newton on log Phi(x) - log q: its derivative is phi(x) / Phi(x)
            x = x - (log_phi - log_q) * math.sqrt(2 * math.pi) * np.exp(log_phi + 0.5 * x * x)
        x = np.where(qq == 0.5, 0.0, x)
        out = np.where(inside, x, np.where(q == 0, -np.inf, np.nan))
        out = np.where(upper, -out, out)
    return out.astype(np.asarray(p).dtype, copy=False)


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below (NaN stays NaN), as torch.special.entr."""
    a = np.asarray(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(a > 0, -a * np.log(np.where(a > 0, a, 1)), np.where(a == 0, 0.0, -np.inf))
    return np.where(np.isnan(a), np.nan, out).astype(a.dtype, copy=False)


def hurwitz_zeta(s, q):
    """zeta(s, q) = sum_j (q + j)**-s, elementwise (s, q broadcast, float64): terms summed until
    q + j reaches 15 + 2s (at most 10**4 of them), the rest from the Euler-Maclaurin formula
    there. inf at s = 1 and at q a non-positive integer (also for a NaN s), NaN for s < 1 (as
    torch.special.zeta); a negative q with a non-integer s gives NaN (a negative base's
    fractional power); at s = inf, 1 for q = 1 and inf for q < 1 (the limits), NaN for q > 1
    (as PyTorch's); at q = inf, 0 for s > 1 (the limit, where PyTorch's gives NaN)."""
    s64, q64 = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(q, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ok = (s64 > 1) & np.isfinite(s64) & np.isfinite(q64) & ~((q64 <= 0) & (q64 == np.floor(q64)))
        ss, qq = np.where(ok, s64, 2.0), np.where(ok, q64, 1.0)
        shifts = np.clip(np.ceil(15.0 + 2 * ss - qq), 0, 10000)
        total = np.zeros_like(qq)
        for j in range(int(shifts.max()) if shifts.size else 0):
            total = total + np.where(j < shifts, (qq + j) ** -ss, 0.0)
        y = qq + shifts
        tail = y ** (1 - ss) / (ss - 1) + 0.5 * y ** -ss
        rising, factorial = ss.copy(), 2.0
        for k, b in enumerate(_BERNOULLI, start=1):
            tail = tail + b / factorial * rising * y ** (-ss - 2 * k + 1)
            rising = rising * (ss + 2 * k - 1) * (ss + 2 * k)
            factorial *= (2 * k + 1) * (2 * k + 2)
        out = np.where(ok, total + tail, np.nan)
        # s = inf: the term of the smallest |q + j| decides: 1 for q = 1, inf for q < 1 (some
        # |q + j| < 1); for q > 1 NaN stays, as torch.special.zeta gives (the limit is 0)
        out = np.where((s64 == np.inf) & (q64 <= 1), np.where(q64 == 1, 1.0, np.inf), out)
        out = np.where(np.isnan(q64), np.nan, out)
        # as torch.special.zeta, in its order: s = 1 gives inf, then s < 1 NaN, then a
        # non-positive integer q inf (a NaN s included)
        out = np.where((s64 == 1) | (~(s64 < 1) & (q64 <= 0) & (q64 == np.floor(q64))), np.inf, out)
        out = np.where((q64 == np.inf) & (s64 > 1), 0.0, out)
    return out


# Bessel functions of the first kind: the power series where |x| <= 12 (its largest term,
# about e**|x| / (2 pi |x|), costs at most 1e-12 of cancellation there), Hankel's asymptotic
# expansion beyond (its error, ~ e**-2|x| times a factorial ratio, is below 1e-12 from 12).
def _bessel_j(order, x):
    x64 = np.asarray(x, dtype=np.float64)
    ax = np.abs(x64)
    near = ax <= 12
    with np.errstate(over="ignore", invalid="ignore"):
        xs = np.where(near, x64, 0.0)
        half = xs / 2
        term = np.ones_like(xs) if order == 0 else half.copy()
        total = term.copy()
        for k in range(1, 60):
            term = term * -(half * half) / (k * (k + order))
            total = total + term
        z = np.where(near, 13.0, ax)
        mu = 4.0 * order * order
        p, q = np.ones_like(z), (mu - 1) / (8 * z)
        coefficient_p, coefficient_q = 1.0, (mu - 1) / 8.0
        for k in range(1, 14):
            coefficient_p = -coefficient_p * (mu - (4 * k - 3) ** 2) * (mu - (4 * k - 1) ** 2) / \
                ((2 * k - 1) * (2 * k) * 64.0)
            coefficient_q = -coefficient_q * (mu - (4 * k - 1) ** 2) * (mu - (4 * k + 1) ** 2) / \
                ((2 * k) * (2 * k + 1) * 64.0)
            p = p + coefficient_p / z ** (2 * k)
            q = q + coefficient_q / z ** (2 * k + 1)
        phase = z - (0.5 * order + 0.25) * math.pi
        far = np.sqrt(2 / (math.pi * z)) * (p * np.cos(phase) - q * np.sin(phase))
        if order == 1:
            far = np.sign(x64) * far
        out = np.where(near, total, np.where(np.isinf(x64), 0.0, far))
    return np.where(np.isnan(x64), np.nan, out)


def bessel_j0(x):
    return _bessel_j(0, x).astype(np.asarray(x).dtype, copy=False)


def bessel_j1(x):
    return _bessel_j(1, x).astype(np.asarray(x).dtype, copy=False)


def spherical_bessel_j0(x):
    """sin(x) / x, 1 at 0, 0 at +-inf."""
    a = np.asarray(x)
    a64 = a.astype(np.float64)
    out = np.where(np.isinf(a64), 0.0, np.sinc(np.where(np.isinf(a64), 0.0, a64) / math.pi))
    return out.astype(a.dtype, copy=False)


# Orthogonal polynomials of degree n (an integer array broadcast with x): their three-term
# recurrences run to the largest degree, each element keeping its own degree's value;
# a negative degree gives 0, as PyTorch's. name -> (P_0, P_1, step(k, x, P_k, P_k-1) = P_k+1)
POLYNOMIALS = {
    "chebyshev_polynomial_t": (lambda x: 1.0, lambda x: x, lambda k, x, p, q: 2 * x * p - q),
    "chebyshev_polynomial_u": (lambda x: 1.0, lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - q),
    "chebyshev_polynomial_v": (lambda x: 1.0, lambda x: 2 * x - 1, lambda k, x, p, q: 2 * x * p - q),
    "chebyshev_polynomial_w": (lambda x: 1.0, lambda x: 2 * x + 1, lambda k, x, p, q: 2 * x * p - q),
    "hermite_polynomial_h": (lambda x: 1.0, lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - 2 * k * q),
    "hermite_polynomial_he": (lambda x: 1.0, lambda x: x, lambda k, x, p, q: x * p - k * q),
    "laguerre_polynomial_l": (lambda x: 1.0, lambda x: 1 - x,
                              lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1)),
    "legendre_polynomial_p": (lambda x: 1.0, lambda x: x,
                              lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1)),
}


def polynomial(name, x, n):
    """POLYNOMIALS[name] of degree n at x, elementwise (float64); the shifted Chebyshev ones
    (name 'shifted_...') are the plain ones at 2x - 1."""
    x64, n64 = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(n))
    if name.startswith("shifted_"):
        name, x64 = name[len("shifted_"):], 2 * x64 - 1
    first, second, step = POLYNOMIALS[name]
    degree = np.where(np.isfinite(n64), n64, -1).astype(np.int64)
    out = np.where(degree == 0, 1.0, 0.0) * np.ones_like(x64)
    top = int(degree.max()) if degree.size else -1
    if top >= 1:
        previous, current = np.ones_like(x64) * first(x64), second(x64) * np.ones_like(x64)
        out = np.where(degree == 1, current, out)
        with np.errstate(over="ignore", invalid="ignore"):
            for k in range(1, top):
                previous, current = current, step(k, x64, current, previous)
                out = np.where(degree == k + 1, current, out)
    return out
