"""Probability distributions, as torch.distributions: the ones small RL and VAE scripts reach
for (Categorical, Normal, Bernoulli), the common continuous families (Uniform, Exponential,
Laplace, Gamma, Beta, Dirichlet, LogNormal, MultivariateNormal, LowRankMultivariateNormal,
StudentT, Cauchy, HalfNormal, HalfCauchy, Gumbel, Weibull, Pareto, Chi2, InverseGamma,
FisherSnedecor,
VonMises, Kumaraswamy, ContinuousBernoulli, LogisticNormal), counts (Poisson, Binomial,
Geometric, NegativeBinomial, Multinomial), OneHotCategorical (and its straight-through
form), the relaxed (Gumbel-softmax) Bernoulli and
one-hot categorical, Independent, MixtureSameFamily, TransformedDistribution with the
transforms of .transforms, biject_to/transform_to, and kl_divergence.

    dist = Categorical(logits=policy(state))
    action = dist.sample()
    loss = -(dist.log_prob(action) * advantage).mean() - 0.01 * dist.entropy().mean()

Samples come from minifw's global generator (minifw.manual_seed makes them reproducible;
the values are not PyTorch's streams). log_prob, entropy, kl_divergence and rsample are built
from Tensor ops, so gradients flow to the parameters; Gamma (and so Beta, Dirichlet, Chi2,
StudentT, FisherSnedecor) samples are differentiated in the concentration by implicit
reparameterization (gamma_grad). Parameters (and, in log_prob, values) are checked against
their constraints unless validate_args=False, as PyTorch's default does.
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfCauchy, HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial, OneHotCategoricalStraightThrough
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, CumulativeDistributionTransform,
                         ExpTransform, IndependentTransform, LowerCholeskyTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform, SoftmaxTransform, SoftplusTransform,
                         StickBreakingTransform, TanhTransform, Transform)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy",
           "Chi2", "ComposeTransform", "ContinuousBernoulli", "CumulativeDistributionTransform",
           "Dirichlet", "Distribution", "ExpTransform", "Exponential",
           "FisherSnedecor", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
           "IndependentTransform", "InverseGamma", "Kumaraswamy", "Laplace", "LogNormal", "LogisticNormal",
           "LowRankMultivariateNormal", "LowerCholeskyTransform",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "Pareto", "Poisson", "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StickBreakingTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution",
           "Uniform", "VonMises", "Weibull", "biject_to", "constraints", "kl_divergence", "register_kl",
           "transform_to", "transforms"]
