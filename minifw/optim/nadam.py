"""NAdam: Adam with Nesterov momentum (Dozat, 2016), as in PyTorch."""
import math
import numbers

import numpy as np

from .. import devices
from ..autograd import no_grad
from ..tensor import Tensor
from .adam import decay_and_moments
from .optimizer import Optimizer, _check_betas, _check_hyper


class NAdam(Optimizer):
    """PyTorch's NAdam. At step t, for each parameter p with gradient g:

        g = g + weight_decay * p                    (decoupled_weight_decay: p decays instead)
        mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))   (and mu_{t+1} alike)
        prod = prod * mu_t                          (state "mu_product": mu_1 * ... * mu_t)
        m = m + (1 - beta1) * (g - m)
        v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2^t)) + eps
        p = p - lr * (1 - mu_t) / (1 - prod) * g / denom
        p = p - lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / denom
    """

    _HYPERS = (("lr", 0.0, None, False), ("eps", 0.0, None, False), ("betas", 0.0, 1.0, True),
               ("weight_decay", 0.0, None, False), ("momentum_decay", 0.0, None, False))

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        cls = "NAdam"
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "eps", eps)
        betas = _check_betas(cls, betas)
        _check_hyper(cls, "weight_decay", weight_decay)
        _check_hyper(cls, "momentum_decay", momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def load_state_dict(self, state_dict):
        super().load_state_dict(_scalars_as_floats(state_dict, ("mu_product",)))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], float(group["eps"])
            weight_decay, momentum_decay = float(group["weight_decay"]), float(group["momentum_decay"])
            for p, g, state in self._with_grads(group, lambda p: {
                    "mu_product": 1.0,
                    "exp_avg": np.zeros_like(p._data),
                    "exp_avg_sq": np.zeros_like(p._data),
            }):
                t = state["step"]
                g, m, v = decay_and_moments(p, g, state, group["decoupled_weight_decay"], lr,
                                            weight_decay, beta1, beta2)
                # the momentum schedule of Dozat's paper: mu_t rises towards beta1 as t grows
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * momentum_decay))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
                state["mu_product"] *= mu
                mu_product = state["mu_product"]
                denom = np.sqrt(v / (1 - beta2 ** t))
                denom += eps
                # the gradient's share and the momentum's share, as two separate updates
                p._data += (-lr * (1.0 - mu) / (1.0 - mu_product)) * (g / denom)
                p._data += (-lr * mu_next / (1.0 - mu_product * mu_next)) * (m / denom)
        return loss


def _scalars_as_floats(state_dict, names):
    """state_dict with each per-parameter entry named in `names` as a Python float: PyTorch
    saves such running scalars (NAdam's mu_product, ASGD's eta and mu) as 0-d tensors, minifw
    keeps them as floats."""
    if not isinstance(state_dict, dict) or not isinstance(state_dict.get("state"), dict):
        return state_dict  # Optimizer.load_state_dict says what is wrong with it
    state = {}
    for index, entry in state_dict["state"].items():
        if isinstance(entry, dict):
            entry = dict(entry)
            for name in names:
                value = entry.get(name)
                if isinstance(value, Tensor) or devices.is_array(value):
                    size = value.numel() if isinstance(value, Tensor) else value.size
                    if size != 1:
                        raise ValueError(f"loaded state {name!r} of parameter {index} must be a "
                                         f"single number, got {size} values")
                    value = float(value.item())
                if isinstance(value, numbers.Real) and not math.isfinite(value):
                    raise ValueError(f"loaded state {name!r} of parameter {index} must be a "
                                     f"finite number, got {value}")
                if value is not None:
                    entry[name] = float(value)
        state[index] = entry
    return {**state_dict, "state": state}
