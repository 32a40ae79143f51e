"""KL(p || q) between two distributions, looked up by their types as
torch.distributions.kl_divergence does; register_kl adds a pair."""
import math

from .. import linalg
from ..functions.activation import SmoothRectifier
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .geometric import Geometric
from .gumbel import EULER_GAMMA, Gumbel
from .half_normal import HalfNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .pareto import Pareto
from .transformed_distribution import TransformedDistribution
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import sum_rightmost
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal, _mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

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


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    # p reaching outside q's interval makes the divergence infinite
    return result.masked_fill((q.low > p.low).logical_or(q.high < p.high), math.inf)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - rate_ratio.log() - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    # the same invertible map of both Normals leaves the divergence unchanged
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    t5 = (sum_q - sum_p) * sum_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p, sum_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(f"kl_divergence: MultivariateNormals of different event shapes "
                         f"{p.event_shape} and {q.event_shape}")
    n = p.event_shape[0]
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    # trace(Sq^-1 Sp) = |Lq^-1 Lp|_F^2
    term2 = linalg.solve_triangular(Lq, Lp, upper=False).pow(2).sum((-2, -1))
    term3 = _mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(f"kl_divergence: Independent distributions with different "
                                  f"reinterpreted_batch_ndims ({p.reinterpreted_batch_ndims} and "
                                  f"{q.reinterpreted_batch_ndims})")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("kl_divergence: Binomials where p has fewer trials than q "
                                  "(total_count) are not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    # p reaching counts q cannot produce makes the divergence infinite
    return kl.masked_fill((p.total_count > q.total_count).expand(*kl.shape), math.inf)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # closed form of Chyzak and Nielsen (2019)
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._log_normalizer() + (-p.probs).log1p()
    t3 = -q._log_normalizer() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ratio = p.scale / q.scale
    q_loc, p_loc = q.loc / q.scale, p.loc / q.scale
    t1 = -ratio.log() - q_loc + p_loc
    t3 = (q_loc + (1 + ratio).lgamma() - p_loc).exp()
    return t1 + ratio * EULER_GAMMA + t3 - (1 + EULER_GAMMA)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio, alpha_ratio = p.scale / q.scale, q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    # p putting mass below q's lower bound makes the divergence infinite
    return result.masked_fill((p.scale < q.scale).expand(*result.shape), math.inf)


def _dense(d):
    """A (Low-rank) multivariate normal as a MultivariateNormal of the same covariance."""
    if isinstance(d, LowRankMultivariateNormal):
        return MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix, validate_args=False)
    return d


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    return _kl_multivariatenormal_multivariatenormal(_dense(p), _dense(q))


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    # the same invertible map applied to both leaves the divergence unchanged
    if p.transforms != q.transforms:
        raise NotImplementedError("kl_divergence: TransformedDistributions with different transforms")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("kl_divergence: TransformedDistributions with different event shapes")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                         len(p.event_shape) - len(p.base_dist.event_shape))
