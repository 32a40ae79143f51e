"""Adadelta (Zeiler, 2012), as in PyTorch."""
import numpy as np

from ..autograd import no_grad
from .optimizer import Optimizer, _check_hyper


class Adadelta(Optimizer):
    """PyTorch's Adadelta. At each step, for each parameter p with gradient g:

        g = g + weight_decay * p                              (g is negated first with maximize)
        v = rho * v + (1 - rho) * g * g                       (state "square_avg")
        delta = sqrt(u + eps) / sqrt(v + eps) * g             (u: state "acc_delta", before update)
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    lr scales delta; Zeiler's method is lr = 1, PyTorch's default. v and u start at zero.
    """

    _HYPERS = (("lr", 0.0, None, False), ("rho", 0.0, 1.0, False), ("eps", 0.0, None, False),
               ("weight_decay", 0.0, None, False))

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        cls = "Adadelta"
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "rho", rho, 0.0, 1.0)
        _check_hyper(cls, "eps", eps)
        _check_hyper(cls, "weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, rho, eps = float(group["lr"]), float(group["rho"]), float(group["eps"])
            weight_decay = float(group["weight_decay"])
            for p, g, state in self._with_grads(group, lambda p: {
                    "square_avg": np.zeros_like(p._data),
                    "acc_delta": np.zeros_like(p._data),
            }):
                if weight_decay != 0:
                    g = g + weight_decay * p._data
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg *= rho
                square_avg += (1 - rho) * (g * g)
                # PyTorch's order: delta = sqrt(u + eps), then / sqrt(v + eps), then * g
                delta = np.sqrt(acc_delta + eps)
                delta /= np.sqrt(square_avg + eps)
                delta *= g
                acc_delta *= rho
                acc_delta += (1 - rho) * (delta * delta)
                p._data -= lr * delta
        return loss
