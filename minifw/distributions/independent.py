"""Independent: some of a distribution's batch dims reinterpreted as event dims, so log_prob
sums over them (a diagonal Gaussian as one distribution over vectors)."""
from . import constraints
from .distribution import Distribution, sum_rightmost


class Independent(Distribution):
    """base_distribution with its reinterpreted_batch_ndims right-most batch dims moved into
    the event: Independent(Normal(loc, scale), 1) for loc (B, n) has batch_shape (B,), event_shape
    (n,) and log_prob summed over n."""

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if not isinstance(base_distribution, Distribution):
            raise TypeError(f"Independent: base_distribution must be a Distribution, got "
                            f"{type(base_distribution).__name__}")
        n, batch = reinterpreted_batch_ndims, base_distribution.batch_shape
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= len(batch):
            raise ValueError(f"Independent: reinterpreted_batch_ndims must be an int in [0, "
                             f"{len(batch)}] (the base distribution's batch dims {batch}), got {n!r}")
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, n
        shape = batch + base_distribution.event_shape
        event_dim = n + len(base_distribution.event_shape)
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        moved = self.base_dist.batch_shape[len(self.base_dist.batch_shape) - self.reinterpreted_batch_ndims:]
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + moved)
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @property
    def support(self):
        if self.reinterpreted_batch_ndims == 0:
            return self.base_dist.support
        return constraints.independent(self.base_dist.support, self.reinterpreted_batch_ndims)

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Independent.enumerate_support: enumerating a cartesian product "
                                      "of supports is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
