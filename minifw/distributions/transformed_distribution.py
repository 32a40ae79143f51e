"""TransformedDistribution: a base distribution pushed through a chain of Transforms; its
log_prob is the base's at the preimage minus the transforms' log-dets (change of variables)."""
from ..autograd import no_grad
from . import constraints
from .distribution import Distribution, sum_rightmost
from .independent import Independent
from .transforms import ComposeTransform, Transform


class TransformedDistribution(Distribution):
    """Y = t_n(... t_1(X)), X ~ base_distribution. Transforms acting on more dims than the
    base's event (a StickBreakingTransform on a Normal) make those batch dims part of the event."""

    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif isinstance(transforms, (list, tuple)):
            transforms = list(transforms)
            for t in transforms:
                if not isinstance(t, Transform):
                    raise TypeError(f"TransformedDistribution: transforms must be Transforms, got "
                                    f"{type(t).__name__} in the list")
        else:
            raise TypeError(f"TransformedDistribution: transforms must be a Transform or a list of "
                            f"them, got {type(transforms).__name__}")
        if not isinstance(base_distribution, Distribution):
            raise TypeError(f"TransformedDistribution: base_distribution must be a Distribution, got "
                            f"{type(base_distribution).__name__}")
        self.transforms = transforms
        chain = ComposeTransform(transforms)
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        domain_event_dim = chain.domain.event_dim
        if len(base_shape) < domain_event_dim:
            raise ValueError(f"TransformedDistribution: the transforms act on {domain_event_dim} "
                             f"dims, but the base distribution's shape is {base_shape}")
        shape = chain.forward_shape(base_shape)
        expanded_base_shape = chain.inverse_shape(shape)
        if expanded_base_shape != base_shape:
            # parameters of the transforms broadcast the base's batch
            base_batch = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch)
        if domain_event_dim > base_event_dim:
            base_distribution = Independent(base_distribution, domain_event_dim - base_event_dim)
        self.base_dist = base_distribution
        event_dim = chain.codomain.event_dim + max(base_event_dim - domain_event_dim, 0)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def _given_parameters(self):
        # a family built on this class (HalfNormal) reads its parameters from base_dist
        return {name: getattr(self, name) for name in self.arg_constraints}

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        base_shape = tuple(batch_shape) + self._event_shape
        base_shape = ComposeTransform(self.transforms).inverse_shape(base_shape)
        base_batch = base_shape[:len(base_shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        return new

    @property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self._event_shape) > support.event_dim:
            support = constraints.independent(support, len(self._event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
        return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self._event_shape)
        log_prob, y = 0.0, value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(t.log_abs_det_jacobian(x, y),
                                                event_dim - t.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y),
                                        event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """cdf values turned round (1 - F) when the chain of transforms decreases."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        """The base's cdf at the preimage (monotone transforms only)."""
        if self._validate_args:
            self._validate_sample(value, "cdf")
        for t in reversed(self.transforms):
            value = t.inv(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value

    def __repr__(self):
        if self.arg_constraints:  # a named family: its own parameters
            return super().__repr__()
        return f"{type(self).__name__}({self.base_dist!r}, {self.transforms!r})"
