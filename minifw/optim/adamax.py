"""Adamax: Adam with the infinity norm in place of the second moment (Kingma & Ba, 2015,
section 7.1), as in PyTorch."""
import numpy as np

from ..autograd import no_grad
from .optimizer import Optimizer, _check_betas, _check_hyper


class Adamax(Optimizer):
    """PyTorch's Adamax. At step t, for each parameter p with gradient g:

        g = g + weight_decay * p                    (g is negated first with maximize)
        m = m + (1 - beta1) * (g - m)
        u = max(beta2 * u, |g| + eps)               (state "exp_inf")
        p = p - lr / (1 - beta1^t) * m / u
    """

    _HYPERS = (("lr", 0.0, None, False), ("eps", 0.0, None, False), ("betas", 0.0, 1.0, True),
               ("weight_decay", 0.0, None, False))

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        cls = "Adamax"
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "eps", eps)
        betas = _check_betas(cls, betas)
        _check_hyper(cls, "weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], float(group["eps"])
            weight_decay = float(group["weight_decay"])
            for p, g, state in self._with_grads(group, lambda p: {
                    "exp_avg": np.zeros_like(p._data),
                    "exp_inf": np.zeros_like(p._data),
            }):
                if weight_decay != 0:
                    g = g + weight_decay * p._data
                m, u = state["exp_avg"], state["exp_inf"]
                m += (1 - beta1) * (g - m)
                u *= beta2
                floor = np.abs(g)
                floor += eps
                np.maximum(u, floor, out=u)
                p._data -= lr / (1 - beta1 ** state["step"]) * (m / u)
        return loss
