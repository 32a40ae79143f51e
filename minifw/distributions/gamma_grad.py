"""dz/dalpha for z ~ Gamma(alpha, 1): the derivative of a gamma sample in its shape, by implicit
reparameterization (Figurnov et al., 2018): z = F^-1(u; alpha) with u fixed gives
dz/dalpha = -(dF/dalpha)(z; alpha) / f(z; alpha), F the regularized lower incomplete gamma
function and f the density. Computed on the host in float64 with two expansions, each used where
it has no cancellation to speak of:

- z <= alpha + sqrt(alpha) (or z <= 1): the series P(alpha, z) = e^-z z^alpha sum_n z^n /
  Gamma(alpha + n + 1), all of whose terms are positive; differentiated term by term it gives
  dz/dalpha = -(z / alpha) sum_n t_n (log z - psi(alpha + n + 1)), t_n = z^n / ((alpha+1)...(alpha+n)).
- above: the upper tail Q = 1 - P as an integral, dF/dalpha / f = -int_z^inf (log t - psi(alpha))
  (t / z)^(alpha - 1) e^-(t - z) dt, whose integrand is positive there; substituting
  t = z + s z / (z - alpha + 1) makes e^-s the leading factor, and Gauss-Laguerre quadrature
  integrates the smooth rest.
"""
import functools

import numpy as np

_LAGUERRE_NODES = 96


@functools.lru_cache(maxsize=1)
def _laguerre():
    return np.polynomial.laguerre.laggauss(_LAGUERRE_NODES)


def _digamma(x):
    """psi(x) for x > 0 in float64: the recurrence up to x >= 10, then the asymptotic series."""
    x = np.array(x, dtype=np.float64, copy=True)
    result = np.zeros_like(x)
    small = x < 10
    while small.any():
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 10
    inv2 = 1.0 / (x * x)
    # psi(x) ~ log x - 1/(2x) - sum B_2k / (2k x^2k)
    tail = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132
                   - inv2 * (691 / 32760 - inv2 / 12))))))
    return result + np.log(x) - 0.5 / x - tail


def _lower_series(alpha, z):
    """-(z / alpha) sum_n t_n (log z - psi(alpha + n + 1)): dz/dalpha where the series converges
    without cancellation (z not far above alpha)."""
    log_z = np.log(z)
    psi = _digamma(alpha + 1)
    term = np.ones_like(z)
    total = log_z - psi
    scale = np.abs(total) + 1.0  # the sum's magnitude, for the stopping rule
    active = np.arange(z.size)
    a, zz, lz, t, p, tot, sc = alpha.copy(), z.copy(), log_z, term, psi, total, scale
    out = np.empty_like(z)
    n = 0
    while active.size:
        n += 1
        p = p + 1.0 / (a + n)           # psi(alpha + n + 1) by the recurrence
        t = t * zz / (a + n)
        contribution = t * (lz - p)
        tot = tot + contribution
        sc = sc + t * np.abs(lz - p)
        done = (t * (np.abs(lz - p) + 1.0) < 1e-17 * sc) & (a + n > zz)
        if done.any() or n > 100000:
            finished = done if n <= 100000 else np.ones_like(done)
            out[active[finished]] = tot[finished]
            keep = ~finished
            active, a, zz, lz, t, p, tot, sc = (v[keep] for v in (active, a, zz, lz, t, p, tot, sc))
    return -(z / alpha) * out


def _upper_quadrature(alpha, z):
    """dz/dalpha = int_z^inf (log t - psi(alpha)) (t / z)^(alpha - 1) e^-(t - z) dt, by
    Gauss-Laguerre after t = z + s / c, c = (z - alpha + 1) / z."""
    nodes, weights = _laguerre()
    c = (z - alpha + 1) / z
    u = nodes[None, :] / (c * z)[:, None]             # (t - z) / z
    am1 = (alpha - 1)[:, None]
    # (1 + u)^(alpha - 1) e^-(s / c) e^s = exp((alpha - 1) (log1p(u) - u))
    smooth = np.exp(am1 * (np.log1p(u) - u))
    log_t = np.log(z)[:, None] + np.log1p(u)
    integrand = (log_t - _digamma(alpha)[:, None]) * smooth
    return (integrand * weights[None, :]).sum(-1) / c


def standard_gamma_grad(alpha, z):
    """dz/dalpha for samples z of Gamma(alpha, 1) (arrays of one shape), in float64."""
    alpha = np.asarray(alpha, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    alpha, z = np.broadcast_arrays(alpha, z)
    shape = z.shape
    alpha, z = alpha.reshape(-1).copy(), z.reshape(-1).copy()
    z = np.maximum(z, np.finfo(np.float64).tiny)
    out = np.empty_like(z)
    lower = (z <= alpha + np.sqrt(alpha)) | (z <= 1.0)
    if lower.any():
        out[lower] = _lower_series(alpha[lower], z[lower])
    if (~lower).any():
        out[~lower] = _upper_quadrature(alpha[~lower], z[~lower])
    return out.reshape(shape)
