"""The base class: shapes, argument validation and sample_shape handling shared by every
distribution (torch.distributions.Distribution)."""
import numbers

import numpy as np

from ..tensor import Tensor, get_default_dtype, tensor as _as_tensor


class Distribution:
    """A batch of distributions of one family. batch_shape indexes the independent
    distributions, event_shape is the shape of one draw (() for a scalar); sample(sample_shape)
    returns sample_shape + batch_shape + event_shape."""

    has_rsample = False
    has_enumerate_support = False
    arg_constraints = {}
    support = None
    _validate_args = True  # PyTorch's default (with Python's __debug__)
    # attributes whose leading dims are batch_shape: expand() broadcasts these and shares the rest
    _batch_attributes = ()

    @staticmethod
    def set_default_validate_args(value):
        """Whether distributions made from now on check their arguments (True by default)."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: value must be True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = tuple(batch_shape), tuple(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for name, value in self._given_parameters().items():
                constraint = self.arg_constraints[name]
                if not bool(constraint.check(value).all()):
                    raise ValueError(f"{type(self).__name__}: {name} must satisfy {constraint!r}, got "
                                     f"invalid values in a tensor of shape {tuple(value.shape)}: "
                                     f"{_invalid(value, constraint)}")

    def _given_parameters(self):
        """The parameters the caller gave, by name; the ones derived from them (logits from
        probs) are neither checked nor shown."""
        return {name: self.__dict__[name] for name in self.arg_constraints if name in self.__dict__}

    def expand(self, batch_shape, _instance=None):
        """The same distribution broadcast to a larger batch_shape (views: no copy, gradients
        reach the original parameters); arguments are not checked again."""
        name = type(self).__name__
        if isinstance(batch_shape, Tensor) or not isinstance(batch_shape, (tuple, list)) or \
                not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0
                        for s in batch_shape):
            raise TypeError(f"{name}.expand: batch_shape must be a tuple of non-negative ints, "
                            f"got {batch_shape!r}")
        batch_shape = tuple(int(s) for s in batch_shape)
        try:
            fits = np.broadcast_shapes(self._batch_shape, batch_shape) == batch_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"{name}.expand: batch_shape {self._batch_shape} cannot be broadcast "
                             f"to {batch_shape}")
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        for attribute in self._batch_attributes:
            if attribute in self.__dict__:
                t = self.__dict__[attribute]
                new.__dict__[attribute] = t.expand(*batch_shape, *t.shape[len(self._batch_shape):])
        new._batch_shape = batch_shape
        return new

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} has no mean")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} has no variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__} has no mode")

    def sample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no sample")

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no rsample (no reparameterized "
                                  f"sample, so no gradient through samples): use sample() with "
                                  f"log_prob (score function)")

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__} has no log_prob")

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} has no cdf")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} has no icdf")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__} has no entropy")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__} has no enumerate_support (its support "
                                  f"is not finite)")

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()):
        if isinstance(sample_shape, Tensor) or not isinstance(sample_shape, (tuple, list)) or \
                not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0
                        for s in sample_shape):
            raise TypeError(f"{type(self).__name__}: sample_shape must be a tuple of non-negative "
                            f"ints (e.g. (5,)), got {sample_shape!r}")
        return tuple(int(s) for s in sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value, method="log_prob"):
        """PyTorch's checks of a log_prob (or cdf) argument: a tensor, broadcastable with
        batch_shape + event_shape, inside the support."""
        name = f"{type(self).__name__}.{method}"
        if not isinstance(value, Tensor):
            raise ValueError(f"{name}: value must be a Tensor, got {type(value).__name__}")
        shape, expected = tuple(value.shape), self._batch_shape + self._event_shape
        if self._event_shape and shape[len(shape) - len(self._event_shape):] != self._event_shape:
            raise ValueError(f"{name}: the right-most dims of value must be the event shape "
                             f"{self._event_shape}, got a value of shape {shape}")
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"{name}: value of shape {shape} does not broadcast with "
                                 f"batch_shape + event_shape {expected}")
        if not bool(self.support.check(value).all()):
            raise ValueError(f"{name}: value must be in the support {self.support!r}, got "
                             f"invalid values in a tensor of shape {shape}: "
                             f"{_invalid(value, self.support)}")

    def _value(self, value, method="log_prob"):
        """log_prob's (or cdf's) argument, checked if validating; a number becomes a tensor
        otherwise."""
        if self._validate_args:
            self._validate_sample(value, method)
        elif not isinstance(value, Tensor):
            value = _as_tensor(value)
        return value

    def __repr__(self):
        params = ", ".join(f"{name}: {_describe(value)}"
                           for name, value in self._given_parameters().items())
        return f"{type(self).__name__}({params})"


def _describe(t):
    return t.item() if t.numel() == 1 else tuple(t.shape)


def _invalid(value, constraint):
    """A few of the values that break the constraint, for the error message."""
    ok = constraint.check(value).numpy()
    values = value.detach().numpy()
    if constraint.event_dim:
        event = values.shape[max(values.ndim - constraint.event_dim, 0):]
        values = values.reshape((-1,) + event) if values.ndim else values
        bad = values[~ok.reshape(-1)] if values.ndim else values
    else:
        bad = values[~np.broadcast_to(ok, values.shape)]
    return np.array2string(np.asarray(bad)[:3], precision=4, threshold=3)


def broadcast_all(owner, **named):
    """The named parameters as tensors of one broadcast shape (expanded views, so gradients
    reach the originals): numbers take the floating dtype of the tensors given (the default
    dtype if none), integer tensors the default float dtype."""
    values = list(named.values())
    dtype = next((v.dtype for v in values if isinstance(v, Tensor) and v.dtype.kind == "f"),
                 get_default_dtype())
    device = next((v.device for v in values if isinstance(v, Tensor)), None)
    tensors = []
    for name, v in named.items():
        if isinstance(v, Tensor):
            tensors.append(v if v.dtype.kind == "f" else v.to(dtype))
        elif isinstance(v, numbers.Real) and not isinstance(v, bool):
            tensors.append(_as_tensor(float(v), dtype=dtype, device=device))
        else:
            raise TypeError(f"{owner}: {name} must be a number or a Tensor, got {type(v).__name__}")
    shapes = [tuple(t.shape) for t in tensors]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{owner}: the shapes of {', '.join(named)} do not broadcast together: "
                         f"{', '.join(map(str, shapes))}") from None
    return [t if tuple(t.shape) == shape else t.expand(*shape) for t in tensors]


def host(t):
    """t's values as a NumPy array on the host (for draws NumPy's generator makes)."""
    return t.detach().cpu().numpy()


def draw_on_host(draw, like):
    """draw(rng), made on the host from minifw's global generator (so manual_seed reproduces
    it), as a tensor of like's dtype on like's device: the families without a transform of
    uniform or normal noise (gamma, Poisson, binomial counts) use NumPy's exact samplers."""
    from ..random import _numpy_rng
    values = np.asarray(draw(_numpy_rng()))
    return _as_tensor(values.astype(np.dtype(like.dtype)), device=like.device)


def sum_rightmost(value, dims):
    """value summed over its dims right-most dims (an event's log-density from its parts)."""
    for _ in range(dims):
        value = value.sum(-1)
    return value


def clamp_probs(probs):
    """probs limited to [eps, 1 - eps] (eps of their dtype), so their logs stay finite."""
    eps = float(np.finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)
