"""Probability distributions, as torch.distributions: the ones small RL and VAE scripts reach
for (Categorical, Normal, Bernoulli) and kl_divergence between two of a kind.

    dist = Categorical(logits=policy(state))
    action = dist.sample()
    loss = -(dist.log_prob(action) * advantage).mean() - 0.01 * dist.entropy().mean()

Samples come from minifw's global generator (minifw.manual_seed makes them reproducible;
the values are not PyTorch's streams). log_prob, entropy, kl_divergence and Normal.rsample
are built from Tensor ops, so gradients flow to the parameters. Parameters (and, in
log_prob, values) are checked against their constraints unless validate_args=False, as
PyTorch's default does.
"""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "constraints", "kl_divergence",
           "register_kl"]
