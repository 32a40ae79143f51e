"""The sets a parameter or a value must lie in (torch.distributions.constraints): each a small
value object whose check(value) gives a bool tensor, True where value is inside."""
import numpy as np


class Constraint:
    event_dim = 0  # how many right-most dims one check covers (1 for a probability vector)

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__[1:]}()"


class _Real(Constraint):
    """Any number but NaN (infinities included, as PyTorch's)."""

    def check(self, value):
        return value == value


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return value >= self.lower_bound

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _HalfOpenInterval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value >= self.lower_bound).logical_and(value < self.upper_bound)

    def __repr__(self):
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _IntegerGreaterThan(_GreaterThan):
    def check(self, value):
        return (value % 1 == 0).logical_and(value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value >= self.lower_bound).logical_and(value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    def check(self, value):
        return (value % 1 == 0).logical_and(super().check(value))

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Boolean(Constraint):
    def check(self, value):
        return (value == 0).logical_or(value == 1)


class _Simplex(Constraint):
    """Non-negative vectors (the last dim) summing to 1 within 1e-6."""
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1).logical_and((value.sum(-1) - 1).abs() < 1e-6)


class _IndependentReal(_Real):
    """Real vectors: every element of the last dim real."""
    event_dim = 1

    def check(self, value):
        return super().check(value).all(-1)

    def __repr__(self):
        return "IndependentConstraint(Real(), 1)"


class _IndependentConstraint(Constraint):
    """base's check, all-reduced over n more right-most dims (a vector of positive numbers is
    independent(positive, 1))."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value):
        ok = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            ok = ok.all(-1)
        return ok

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _LowerTriangular(Constraint):
    """Lower triangular matrices."""
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).all(-1).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: positive diagonal, rows of unit norm."""
    event_dim = 2

    def check(self, value):
        unit_rows = ((value.pow(2).sum(-1) - 1).abs() <= 1e-4 * value.shape[-1]).all(-1)
        return _LowerCholesky().check(value).logical_and(unit_rows)


class _OneHot(Constraint):
    """Vectors of zeros with a single one."""
    event_dim = 1

    def check(self, value):
        return ((value == 0).logical_or(value == 1)).all(-1).logical_and(value.sum(-1) == 1)


class _Multinomial(Constraint):
    """Vectors of non-negative counts summing to at most upper_bound."""
    event_dim = 1
    is_discrete = True

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1).logical_and(value.sum(-1) <= self.upper_bound)


class _LowerCholesky(Constraint):
    """Lower triangular matrices with a positive diagonal (a Cholesky factor)."""
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).all(-1).all(-1)
        return lower.logical_and((value.diagonal(dim1=-2, dim2=-1) > 0).all(-1))


class _PositiveDefinite(Constraint):
    """Symmetric (within 1e-6, as PyTorch's) matrices with positive eigenvalues. Checked on the
    host with NumPy: a check, not a differentiable op."""
    event_dim = 2

    def check(self, value):
        from ..tensor import tensor as _as_tensor
        a = value.detach().cpu().numpy()
        symmetric = np.isclose(a, np.swapaxes(a, -1, -2), rtol=1e-5, atol=1e-6).all((-2, -1))
        with np.errstate(invalid="ignore"):
            positive = np.linalg.eigvalsh(np.where(np.isfinite(a), a, 0.0)).min(-1) > 0 \
                if a.shape[-1] else np.ones(a.shape[:-2], dtype=bool)
        ok = symmetric & positive & np.isfinite(a).all((-2, -1))
        return _as_tensor(ok, device=value.device)


real = _Real()
real_vector = _IndependentReal()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
one_hot = _OneHot()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
unit_interval = _Interval(0.0, 1.0)
boolean = _Boolean()
simplex = _Simplex()


def multinomial(upper_bound):
    return _Multinomial(upper_bound)


def integer_interval(lower_bound, upper_bound):
    return _IntegerInterval(lower_bound, upper_bound)


def interval(lower_bound, upper_bound):
    return _Interval(lower_bound, upper_bound)


def greater_than(lower_bound):
    return _GreaterThan(lower_bound)


def greater_than_eq(lower_bound):
    return _GreaterThanEq(lower_bound)


def half_open_interval(lower_bound, upper_bound):
    return _HalfOpenInterval(lower_bound, upper_bound)


def less_than(upper_bound):
    return _LessThan(upper_bound)


def independent(base_constraint, reinterpreted_batch_ndims):
    return _IndependentConstraint(base_constraint, reinterpreted_batch_ndims)
