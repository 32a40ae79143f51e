"""RAdam: Adam with its adaptive learning rate's variance rectified (Liu et al., 2020), as in
PyTorch."""
import math

import numpy as np

from ..autograd import no_grad
from .adam import decay_and_moments
from .optimizer import Optimizer, _check_betas, _check_hyper


class RAdam(Optimizer):
    """PyTorch's RAdam. At step t, for each parameter p with gradient g:

        g = g + weight_decay * p                    (decoupled_weight_decay: p decays instead)
        m = m + (1 - beta1) * (g - m)
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1^t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2^t / (1 - beta2^t)
        rho_t > 5:  r = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
                    p = p - m_hat * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
        else:       p = p - m_hat * lr          (too few steps for a trustworthy v: SGD with momentum)
    """

    _HYPERS = (("lr", 0.0, None, False), ("eps", 0.0, None, False), ("betas", 0.0, 1.0, True),
               ("weight_decay", 0.0, None, False))

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        cls = "RAdam"
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "eps", eps)
        betas = _check_betas(cls, betas)
        _check_hyper(cls, "weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], float(group["eps"])
            weight_decay = float(group["weight_decay"])
            for p, g, state in self._with_grads(group, lambda p: {
                    "exp_avg": np.zeros_like(p._data),
                    "exp_avg_sq": np.zeros_like(p._data),
            }):
                t = state["step"]
                _, m, v = decay_and_moments(p, g, state, group["decoupled_weight_decay"], lr,
                                            weight_decay, beta1, beta2)
                bias_correction1 = 1 - beta1 ** t
                bias_correction2 = 1 - beta2 ** t
                m_hat = m / bias_correction1
                # rho: the length of the simple moving average that v approximates
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * t * beta2 ** t / bias_correction2
                if rho_t > 5.0:
                    rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                     / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                    root = np.sqrt(v)
                    root += eps
                    adaptive_lr = math.sqrt(bias_correction2) / root
                    p._data -= m_hat * lr * adaptive_lr * rect
                else:
                    p._data -= m_hat * lr
        return loss
