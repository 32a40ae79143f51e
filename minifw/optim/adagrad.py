"""Adagrad (Duchi, Hazan & Singer, 2011), as in PyTorch."""
import numpy as np

from ..autograd import no_grad
from .optimizer import Optimizer, _check_hyper


class Adagrad(Optimizer):
    """PyTorch's Adagrad. At step t, for each parameter p with gradient g:

        g = g + weight_decay * p                    (g is negated first with maximize)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                               (state "sum", from initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    As in PyTorch, every parameter's state exists from the start (step 0, sum filled with
    initial_accumulator_value), also for a group added later with add_param_group.
    """

    _HYPERS = (("lr", 0.0, None, False), ("lr_decay", 0.0, None, False), ("weight_decay", 0.0, None, False),
               ("initial_accumulator_value", 0.0, None, False), ("eps", 0.0, None, False))

    def __init__(self, params, lr=0.01, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        cls = "Adagrad"
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "lr_decay", lr_decay)
        _check_hyper(cls, "weight_decay", weight_decay)
        _check_hyper(cls, "initial_accumulator_value", initial_accumulator_value)
        _check_hyper(cls, "eps", eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))

    def add_param_group(self, group):
        super().add_param_group(group)
        group = self.param_groups[-1]
        for p in group["params"]:
            self._init_state(p, group)

    def _init_state(self, p, group):
        accumulator = np.zeros_like(p._data)
        accumulator += float(group["initial_accumulator_value"])
        self.state[p] = {"step": 0, "sum": accumulator}

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = float(group["lr"]), float(group["lr_decay"]), float(group["eps"])
            weight_decay = float(group["weight_decay"])
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not self.state.get(p):  # a state dict loaded without this parameter's entry
                    self._init_state(p, group)
                state = self.state[p]
                state["step"] += 1
                g = -p.grad._data if group["maximize"] else p.grad._data
                if weight_decay != 0:
                    g = g + weight_decay * p._data
                clr = lr / (1 + (state["step"] - 1) * lr_decay)
                state["sum"] += g * g
                std = np.sqrt(state["sum"])
                std += eps
                p._data -= clr * (g / std)
        return loss
