"""The multivariate normal with a low-rank-plus-diagonal covariance W W^T + D: log_prob,
entropy and samples cost O(n r^2) instead of O(n^3), through the r x r capacitance matrix
C = I + W^T D^-1 W (Woodbury identity and matrix determinant lemma)."""
import functools
import math

import numpy as np

from .. import linalg
from ..tensor import eye, randn
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _as_float


class LowRankMultivariateNormal(Distribution):
    """N(loc, cov_factor cov_factor^T + diag(cov_diag)): loc (..., n), cov_factor (..., n, r),
    cov_diag (..., n) positive; batch dims broadcast."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _batch_attributes = ("loc", "cov_factor", "cov_diag")

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        loc, cov_factor, cov_diag = (_as_float(n, v) for n, v in
                                     (("loc", loc), ("cov_factor", cov_factor), ("cov_diag", cov_diag)))
        if loc.ndim < 1:
            raise ValueError("LowRankMultivariateNormal: loc must have at least one dim (the event), "
                             "got a 0-d tensor")
        n = loc.shape[-1]
        if cov_factor.ndim < 2 or cov_factor.shape[-2] != n:
            raise ValueError(f"LowRankMultivariateNormal: cov_factor must be (..., n, rank) with n = {n} "
                             f"(loc's last dim), got a tensor of shape {tuple(cov_factor.shape)}")
        if cov_diag.ndim < 1 or cov_diag.shape[-1] != n:
            raise ValueError(f"LowRankMultivariateNormal: cov_diag must be (..., n) with n = {n}, got a "
                             f"tensor of shape {tuple(cov_diag.shape)}")
        try:
            batch = tuple(np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                              tuple(cov_diag.shape[:-1])))
        except ValueError:
            raise ValueError(f"LowRankMultivariateNormal: the batch dims of loc {tuple(loc.shape[:-1])}, "
                             f"cov_factor {tuple(cov_factor.shape[:-2])} and cov_diag "
                             f"{tuple(cov_diag.shape[:-1])} do not broadcast") from None
        rank = cov_factor.shape[-1]
        self.loc = loc.expand(*batch, n)
        self.cov_factor = cov_factor.expand(*batch, n, rank)
        self.cov_diag = cov_diag.expand(*batch, n)
        super().__init__(batch, (n,), validate_args=validate_args)
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = self._capacitance(cov_factor, cov_diag)

    @staticmethod
    def _capacitance(W, D):
        """The Cholesky factor of I + W^T D^-1 W."""
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        K = Wt_Dinv @ W
        return linalg.cholesky(K + eye(W.shape[-1], dtype=W.dtype, device=W.device))

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.__dict__.pop("covariance_matrix", None)
        new.__dict__.pop("precision_matrix", None)
        new.__dict__.pop("scale_tril", None)
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(*self._batch_shape, *self._event_shape)

    @functools.cached_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        n = self._event_shape[0]
        return (W @ W.mT + D.diag_embed()).expand(*self._batch_shape, n, n)

    @functools.cached_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        A = linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        n = self._event_shape[0]
        return ((1 / D).diag_embed() - A.mT @ A).expand(*self._batch_shape, n, n)

    @functools.cached_property
    def scale_tril(self):
        return linalg.cholesky(self.covariance_matrix)

    def rsample(self, sample_shape=()):
        """loc + W eps_r + sqrt(D) eps_n: differentiable in every parameter."""
        shape = self._extended_shape(sample_shape)
        W = self._unbroadcasted_cov_factor
        eps_w = randn(*shape[:-1], W.shape[-1], dtype=self.loc.dtype, device=self.loc.device)
        eps_d = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (W @ eps_w.unsqueeze(-1)).squeeze(-1) + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def _log_det(self):
        # matrix determinant lemma: det(W W^T + D) = det(C) det(D)
        return 2 * self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) \
            + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value):
        value = self._value(value)
        diff = value - self.loc
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        # Woodbury: x^T Sigma^-1 x = x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2
        Wt_Dinv_x = (W.mT @ (diff / D).unsqueeze(-1))
        shape = np.broadcast_shapes(tuple(Wt_Dinv_x.shape[:-2]), tuple(self._capacitance_tril.shape[:-2]))
        L = self._capacitance_tril
        L = L if tuple(L.shape[:-2]) == shape else L.expand(*shape, *L.shape[-2:])
        Wt_Dinv_x = Wt_Dinv_x if tuple(Wt_Dinv_x.shape[:-2]) == shape else \
            Wt_Dinv_x.expand(*shape, *Wt_Dinv_x.shape[-2:])
        correction = linalg.solve_triangular(L, Wt_Dinv_x, upper=False).squeeze(-1).pow(2).sum(-1)
        mahalanobis = (diff.pow(2) / D).sum(-1) - correction
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + self._log_det() + mahalanobis)

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h if tuple(h.shape) == self._batch_shape else h.expand(*self._batch_shape)
