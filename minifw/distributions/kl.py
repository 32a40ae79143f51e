"""KL(p || q) between two distributions, looked up by their types as
torch.distributions.kl_divergence does; register_kl adds a pair."""
import math

from ..functions.activation import SmoothRectifier
from .bernoulli import Bernoulli
from .categorical import Categorical
from .normal import Normal

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """Decorator: fn(p, q) computes KL(p || q) for p of type_p and q of type_q (or subclasses;
    the most specific registered pair wins)."""
    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def kl_divergence(p, q):
    """KL(p || q), one value per distribution of the (broadcast) batch."""
    matches = [(type_p, type_q) for type_p, type_q in _KL_REGISTRY
               if isinstance(p, type_p) and isinstance(q, type_q)]
    if not matches:
        raise NotImplementedError(f"kl_divergence: no KL(p || q) is implemented for p of type "
                                  f"{type(p).__name__} and q of type {type(q).__name__}")
    # the pair closest to the actual types in their method resolution orders
    best = min(matches, key=lambda pair: (type(p).__mro__.index(pair[0]),
                                          type(q).__mro__.index(pair[1])))
    return _KL_REGISTRY[best](p, q)


def _softplus(x):
    return SmoothRectifier.apply(x, beta=1.0, threshold=20.0)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    # a category q cannot produce makes the divergence infinite; one p never produces adds 0
    t = t.masked_fill((q.probs == 0).expand(*t.shape), math.inf)
    t = t.masked_fill((p.probs == 0).expand(*t.shape), 0.0)
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = t1.masked_fill((q.probs == 0).expand(*t1.shape), math.inf)
    t1 = t1.masked_fill((p.probs == 0).expand(*t1.shape), 0.0)
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = t2.masked_fill((q.probs == 1).expand(*t2.shape), math.inf)
    t2 = t2.masked_fill((p.probs == 1).expand(*t2.shape), 0.0)
    return t1 + t2
