"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky, 1992; the step-size schedule
of Bottou, 2012), as in PyTorch."""
import numpy as np

from ..autograd import no_grad
from .nadam import _scalars_as_floats
from .optimizer import Optimizer, _check_hyper


class ASGD(Optimizer):
    """PyTorch's ASGD. At step t, for each parameter p with gradient g (state "eta" starts at
    lr, "mu" at 1):

        g = g + weight_decay * p                    (g is negated first with maximize)
        p = p * (1 - lambd * eta) - eta * g
        ax = p                  if mu == 1          (state "ax", the running average of p)
        ax = ax + mu * (p - ax) otherwise
        eta = lr / (1 + lambd * lr * t)^alpha
        mu = 1 / max(1, t - t0)                     (averaging starts after step t0)
    """

    _HYPERS = (("lr", 0.0, None, False), ("lambd", 0.0, None, False), ("alpha", 0.0, None, False),
               ("t0", 0.0, None, False), ("weight_decay", 0.0, None, False))

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        cls = "ASGD"
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "lambd", lambd)
        _check_hyper(cls, "alpha", alpha)
        _check_hyper(cls, "t0", t0)
        _check_hyper(cls, "weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def load_state_dict(self, state_dict):
        super().load_state_dict(_scalars_as_floats(state_dict, ("eta", "mu")))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, lambd, alpha = float(group["lr"]), float(group["lambd"]), float(group["alpha"])
            t0, weight_decay = float(group["t0"]), float(group["weight_decay"])
            for p, g, state in self._with_grads(group, lambda p: {
                    "eta": lr,
                    "mu": 1.0,
                    "ax": np.zeros_like(p._data),
            }):
                t = state["step"]
                if weight_decay != 0:
                    g = g + weight_decay * p._data
                eta = state["eta"]
                p._data *= 1 - lambd * eta
                p._data -= eta * g
                if state["mu"] != 1:
                    ax = state["ax"]
                    ax += (p._data - ax) * state["mu"]
                else:
                    state["ax"][...] = p._data
                state["eta"] = lr / ((1 + lambd * lr * t) ** alpha)
                state["mu"] = 1 / max(1, t - t0)
        return loss
