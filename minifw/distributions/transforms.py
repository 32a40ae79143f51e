"""Invertible maps between constrained sets (torch.distributions.transforms): each Transform
maps x to y = t(x), gives x back with t.inv(y) and the log |dy/dx| that turns one density into
the other. TransformedDistribution and biject_to/transform_to are built on them.

    t = ComposeTransform([AffineTransform(0.0, 2.0), ExpTransform()])   # y = exp(2 x)
    y = t(x); x_again = t.inv(y); t.log_abs_det_jacobian(x, y)          # log 2 + 2 x
"""
import math
import numbers

import numpy as np

from ..functions.activation import SmoothRectifier
from ..tensor import Tensor, cat, ones
from . import constraints

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "CumulativeDistributionTransform",
           "ExpTransform", "IndependentTransform", "LowerCholeskyTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform"]


def _softplus(x):
    return SmoothRectifier.apply(x, beta=1.0, threshold=20.0)


def _same_values(a, b):
    """Whether two parameters (numbers or Tensors) hold the same values everywhere: a Tensor
    equals a number, or a Tensor of another shape, that all its elements equal once
    broadcast. Two transforms with equal parameters are equal, as PyTorch's, so that
    TransformedDistributions built from separate but equal tensors share their transforms."""
    if a is b:
        return True
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        try:
            return bool((a == b).all())
        except (ValueError, RuntimeError):  # shapes that do not broadcast
            return False
    return a == b


def _sum_rightmost(value, dims):
    for _ in range(dims):
        value = value.sum(-1)
    return value


class Transform:
    """A map y = t(x) with its inverse t.inv and log |det dy/dx| (log_abs_det_jacobian(x, y),
    summed over nothing: one value per element for an elementwise map, one per event of
    domain.event_dim dims otherwise). cache_size 1 remembers the last (x, y) pair, so t.inv(t(x))
    gives x back exactly (and keeps the graph to x); 0 computes every inverse."""

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError(f"{type(self).__name__}: cache_size must be 0 or 1, got {cache_size!r}")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def cache_size(self):
        return self._cache_size

    def with_cache(self, cache_size=1):
        """The same transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    @property
    def event_dim(self):
        if self.domain.event_dim != self.codomain.event_dim:
            raise ValueError(f"{type(self).__name__}: event_dim is ambiguous (domain event_dim "
                             f"{self.domain.event_dim}, codomain {self.codomain.event_dim})")
        return self.domain.event_dim

    @property
    def inv(self):
        """The inverse transform (y -> x), sharing this one's cache."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        """+1 or -1: whether this (monotone, elementwise) map increases or decreases."""
        raise NotImplementedError(f"{type(self).__name__}.sign is not defined")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"{type(self).__name__}: x must be a Tensor, got {type(x).__name__}")
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__} has no forward map")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__} has no inverse")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__}.log_abs_det_jacobian is not defined")

    def forward_shape(self, shape):
        """The shape of t(x) for x of this shape."""
        return tuple(shape)

    def inverse_shape(self, shape):
        """The shape of t.inv(y) for y of this shape."""
        return tuple(shape)

    def __repr__(self):
        return f"{type(self).__name__}()"


class _InverseTransform(Transform):
    """t.inv: the inverse of another transform, sharing its cache."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self._inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"{self!r}: y must be a Tensor, got {type(x).__name__}")
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self):
        return f"{self._inv!r}.inv"


class ComposeTransform(Transform):
    """parts applied left to right: ComposeTransform([f, g])(x) = g(f(x))."""

    def __init__(self, parts, cache_size=0):
        parts = list(parts)
        for part in parts:
            if not isinstance(part, Transform):
                raise TypeError(f"ComposeTransform: parts must be Transforms, got {type(part).__name__}")
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # a later part acting on more dims widens the event the first one sees
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(part.bijective for part in self.parts)

    @property
    def sign(self):
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    def _call(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y):
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x.new_zeros(x.shape)
        terms, event_dim = [], self.domain.event_dim
        for i, part in enumerate(self.parts):
            y_part = y if i == len(self.parts) - 1 else part(x)
            # each part's log-det summed over the dims of the whole map's event it does not cover
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(x, y_part),
                                        event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
            x = y_part
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def __repr__(self):
        return "ComposeTransform(" + ", ".join(map(repr, self.parts)) + ")"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """base_transform with its reinterpreted_batch_ndims right-most dims made part of the event
    (its log-det summed over them)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        if not isinstance(base_transform, Transform):
            raise TypeError(f"IndependentTransform: base_transform must be a Transform, got "
                            f"{type(base_transform).__name__}")
        if isinstance(reinterpreted_batch_ndims, bool) or not isinstance(reinterpreted_batch_ndims, int) \
                or reinterpreted_batch_ndims < 0:
            raise ValueError(f"IndependentTransform: reinterpreted_batch_ndims must be a non-negative "
                             f"int, got {reinterpreted_batch_ndims!r}")
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


def _check_shape(name, shape):
    if isinstance(shape, Tensor) or not isinstance(shape, (tuple, list)) or \
            not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise TypeError(f"ReshapeTransform: {name} must be a tuple of non-negative ints, got {shape!r}")
    return tuple(int(s) for s in shape)


class ReshapeTransform(Transform):
    """Reshapes the right-most dims of in_shape into out_shape (the same number of elements);
    its log-det is 0."""

    bijective = True
    sign = 1

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = _check_shape("in_shape", in_shape), _check_shape("out_shape", out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError(f"ReshapeTransform: in_shape {self.in_shape} and out_shape {self.out_shape} "
                             f"have different numbers of elements")
        super().__init__(cache_size=cache_size)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            ReshapeTransform(self.in_shape, self.out_shape, cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x):
        batch = tuple(x.shape[:x.ndim - len(self.in_shape)])
        return x.reshape(batch + self.out_shape)

    def _inverse(self, y):
        batch = tuple(y.shape[:y.ndim - len(self.out_shape)])
        return y.reshape(batch + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape[:x.ndim - len(self.in_shape)])
        return x.new_zeros(batch)

    def _rebatch(self, shape, own, other):
        shape = tuple(shape)
        if len(shape) < len(own) or shape[len(shape) - len(own):] != own:
            raise ValueError(f"ReshapeTransform: a shape ending in {own} was expected, got {shape}")
        return shape[:len(shape) - len(own)] + other

    def forward_shape(self, shape):
        return self._rebatch(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._rebatch(shape, self.out_shape, self.in_shape)

    def __repr__(self):
        return f"ReshapeTransform(in_shape={self.in_shape}, out_shape={self.out_shape})"


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on positive numbers."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        if not isinstance(exponent, (Tensor, numbers.Real)) or isinstance(exponent, bool):
            raise TypeError(f"PowerTransform: exponent must be a number or a Tensor, got "
                            f"{type(exponent).__name__}")
        self.exponent = exponent

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size)

    @property
    def sign(self):
        if isinstance(self.exponent, Tensor):
            return self.exponent.sign()
        return 1 if self.exponent > 0 else -1 if self.exponent < 0 else 0

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return _same_values(self.exponent, other.exponent)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return _broadcast_with(shape, self.exponent)

    inverse_shape = forward_shape

    def __repr__(self):
        return f"PowerTransform(exponent={self.exponent})"


def _broadcast_with(shape, *parameters):
    return tuple(np.broadcast_shapes(tuple(shape), *[tuple(p.shape) for p in parameters
                                                     if isinstance(p, Tensor)]))


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x)), onto the unit interval."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        finfo = np.finfo(np.dtype(x.dtype))
        return x.sigmoid().clamp(min=float(finfo.tiny), max=1 - float(finfo.eps))

    def _inverse(self, y):
        finfo = np.finfo(np.dtype(y.dtype))
        y = y.clamp(min=float(finfo.tiny), max=1 - float(finfo.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x) - _softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)), onto the positive numbers."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y  # log(exp(y) - 1) without overflow

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x), onto (-1, 1)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        # atanh; at |y| = 1 it is infinite, so a cached forward value is the way to get x back
        return 0.5 * ((1 + y).log() - (1 - y).log())

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2 x)), stable for large |x|
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x|: not injective; inv gives the non-negative preimage."""

    domain = constraints.real
    codomain = constraints.nonnegative

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, elementwise over event_dim right-most dims (whose log-dets sum)."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        for name, value in (("loc", loc), ("scale", scale)):
            if not isinstance(value, (Tensor, numbers.Real)) or isinstance(value, bool):
                raise TypeError(f"AffineTransform: {name} must be a number or a Tensor, got "
                                f"{type(value).__name__}")
        if isinstance(event_dim, bool) or not isinstance(event_dim, int) or event_dim < 0:
            raise ValueError(f"AffineTransform: event_dim must be a non-negative int, got {event_dim!r}")
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            AffineTransform(self.loc, self.scale, self._event_dim, cache_size)

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else \
            constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    @property
    def sign(self):
        if isinstance(self.scale, Tensor):
            return self.scale.sign()
        return 1 if self.scale > 0 else -1 if self.scale < 0 else 0

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        return (_same_values(self.loc, other.loc) and _same_values(self.scale, other.scale)
                and self._event_dim == other._event_dim)

    __hash__ = object.__hash__

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        scale = self.scale
        if isinstance(scale, Tensor):
            result = scale.abs().log()
        else:
            with np.errstate(divide="ignore"):
                result = x.new_full(x.shape, math.log(abs(scale)) if scale else -math.inf)
        shape = tuple(x.shape)
        if self._event_dim:
            # one value per event: log|scale| summed over the event's elements
            full = result.expand(*np.broadcast_shapes(tuple(result.shape), shape)) \
                if tuple(result.shape) != shape else result
            return _sum_rightmost(full, self._event_dim)
        return result if tuple(result.shape) == shape else \
            result.expand(*np.broadcast_shapes(tuple(result.shape), shape))

    def forward_shape(self, shape):
        return _broadcast_with(shape, self.loc, self.scale)

    inverse_shape = forward_shape

    def __repr__(self):
        return f"AffineTransform(loc={self.loc}, scale={self.scale}, event_dim={self._event_dim})"


class SoftmaxTransform(Transform):
    """Real vectors to the simplex by exp and normalizing (not injective: inv is a log, up to
    a constant)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.softmax(-1)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
    """Real vectors of K - 1 elements to the K-simplex, one sigmoid stick fraction per element
    (shifted so that x = 0 maps to the uniform vector); bijective, unlike SoftmaxTransform."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _log_offset(k, like):
        # log(K - 1 - i) for element i of K - 1: the shift that makes x = 0 uniform
        return ones(k, dtype=like.dtype, device=like.device).cumsum(-1).neg().add(k + 1).log()

    def _call(self, x):
        k = x.shape[-1]
        z = (x - self._log_offset(k, x)).sigmoid()
        remaining = (1 - z).cumprod(-1)  # what is left of the stick after each break
        one = x.new_ones(tuple(x.shape[:-1]) + (1,))
        return cat([z, one], -1) * cat([one, remaining], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        k = y_crop.shape[-1]
        tiny = float(np.finfo(np.dtype(y.dtype)).tiny)
        remaining = (1 - y_crop.cumsum(-1)).clamp(min=tiny)
        return y_crop.log() - remaining.log() + self._log_offset(k, y)

    def log_abs_det_jacobian(self, x, y):
        # triangular Jacobian: prod over i of z_i (1 - z_i) * (stick left before break i)
        shifted = x - self._log_offset(x.shape[-1], x)
        log_sigmoid = -_softplus(-shifted)
        return (-shifted + log_sigmoid + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"StickBreakingTransform: x must have at least one dim, got shape {tuple(shape)}")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"StickBreakingTransform: y must have at least one dim, got shape {tuple(shape)}")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower triangular ones with a positive diagonal: the strictly lower
    part kept, the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x), onto the unit interval; inv is the distribution's icdf and the
    log-det its log_prob."""

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            CumulativeDistributionTransform(self.distribution, cache_size)

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
