"""The sets a parameter or a value must lie in (torch.distributions.constraints): each a small
value object whose check(value) gives a bool tensor, True where value is inside."""


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


real = _Real()
real_vector = _IndependentReal()
positive = _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
boolean = _Boolean()
simplex = _Simplex()


def integer_interval(lower_bound, upper_bound):
    return _IntegerInterval(lower_bound, upper_bound)
