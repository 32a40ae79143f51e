"""The multivariate normal distribution, parameterized by a covariance matrix, a precision
matrix or the covariance's Cholesky factor scale_tril; everything is computed through that
factor L (covariance = L L^T)."""
import functools
import math

import numpy as np

from .. import linalg
from ..tensor import Tensor, eye, get_default_dtype, randn
from ..tensor import tensor as _as_tensor
from . import constraints
from .distribution import Distribution


def _mahalanobis(L, x):
    """x^T (L L^T)^-1 x = |L^-1 x|^2 for vectors x (..., n), batch dims broadcast."""
    return linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    # PyTorch's route: with J the flip of both axes, chol(J P J) = J U J for P^-1's Cholesky
    # factor's inverse transpose; one triangular solve then gives L without forming P^-1
    Lf = linalg.cholesky(P.flip(-2, -1))
    L_inv = Lf.flip(-2, -1).mT
    n = P.shape[-1]
    return linalg.solve_triangular(L_inv, eye(n, dtype=P.dtype, device=P.device), upper=False)


def _as_float(name, value):
    if not isinstance(value, Tensor):
        value = _as_tensor(value)
    if value.dtype.kind != "f":
        value = value.to(get_default_dtype())
    return value


class MultivariateNormal(Distribution):
    """N(loc, covariance) for vectors of loc's last dim n; give exactly one of
    covariance_matrix, precision_matrix (its inverse) and scale_tril (lower triangular with a
    positive diagonal, covariance = scale_tril scale_tril^T), each (..., n, n); batch dims of
    loc and the matrix broadcast."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _batch_attributes = ("loc", "covariance_matrix", "precision_matrix", "scale_tril")

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        loc = _as_float("loc", loc)
        if loc.ndim < 1:
            raise ValueError("MultivariateNormal: loc must have at least one dim (the event), got a "
                             "0-d tensor")
        given = {name: m for name, m in (("covariance_matrix", covariance_matrix),
                                         ("precision_matrix", precision_matrix),
                                         ("scale_tril", scale_tril)) if m is not None}
        if len(given) != 1:
            raise ValueError(f"MultivariateNormal: give exactly one of covariance_matrix, "
                             f"precision_matrix and scale_tril, got "
                             f"{', '.join(given) if given else 'none'}")
        (name, matrix), = given.items()
        matrix = _as_float(name, matrix)
        n = loc.shape[-1]
        if matrix.ndim < 2 or tuple(matrix.shape[-2:]) != (n, n):
            raise ValueError(f"MultivariateNormal: {name} must be (..., n, n) with n = {n} (loc's last "
                             f"dim), got a tensor of shape {tuple(matrix.shape)}")
        try:
            batch_shape = tuple(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        except ValueError:
            raise ValueError(f"MultivariateNormal: the batch dims of loc {tuple(loc.shape[:-1])} and "
                             f"of {name} {tuple(matrix.shape[:-2])} do not broadcast") from None
        self.__dict__[name] = matrix.expand(*batch_shape, n, n)
        self.loc = loc.expand(*batch_shape, n)
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def _expanded(self, matrix):
        return matrix.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @functools.cached_property
    def scale_tril(self):
        return self._expanded(self._unbroadcasted_scale_tril)

    @functools.cached_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._expanded(L @ L.mT)

    @functools.cached_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        L_inv = linalg.solve_triangular(L, eye(L.shape[-1], dtype=L.dtype, device=L.device), upper=False)
        return self._expanded(L_inv.mT @ L_inv)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape=()):
        """loc + L eps, eps ~ N(0, I): differentiable in loc and the matrix given."""
        shape = self._extended_shape(sample_shape)
        eps = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def _half_log_det(self):
        # log sqrt(det covariance) = sum log diag(L)
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        value = self._value(value)
        n = self._event_shape[0]
        m = _mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if tuple(h.shape) == self._batch_shape else h.expand(*self._batch_shape)
