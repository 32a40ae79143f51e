"""Probability distributions, as torch.distributions: the ones small RL and VAE scripts reach
for (Categorical, Normal, Bernoulli), the common continuous families (Uniform, Exponential,
Laplace, Gamma, Beta, Dirichlet, LogNormal, MultivariateNormal), counts (Poisson, Binomial),
OneHotCategorical, Independent, and kl_divergence between two of a kind.

    dist = Categorical(logits=policy(state))
    action = dist.sample()
    loss = -(dist.log_prob(action) * advantage).mean() - 0.01 * dist.entropy().mean()

Samples come from minifw's global generator (minifw.manual_seed makes them reproducible;
the values are not PyTorch's streams). log_prob, entropy, kl_divergence and rsample (Normal, LogNormal,
MultivariateNormal, Uniform, Exponential, Laplace) are built from Tensor ops, so gradients flow
to the parameters. Gamma, Beta and Dirichlet sample with NumPy's exact samplers and have no
rsample (PyTorch's uses implicit reparameterization). Parameters (and, in
log_prob, values) are checked against their constraints unless validate_args=False, as
PyTorch's default does.
"""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "Exponential",
           "Gamma", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal",
           "OneHotCategorical", "Poisson", "Uniform", "constraints", "kl_divergence", "register_kl"]
