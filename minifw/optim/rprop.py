"""Rprop: resilient backpropagation (Riedmiller & Braun, 1993), as in PyTorch."""
import math
import numbers

import numpy as np

from ..autograd import no_grad
from .optimizer import Optimizer, _check_hyper, _show


class Rprop(Optimizer):
    """PyTorch's Rprop: each element keeps its own step size and moves by it against the sign
    of its gradient. At each step, for each parameter p with gradient g (negated with maximize):

        s = sign(g * g_prev)
        step_size = clip(step_size * (etaplus if s > 0, etaminus if s < 0, 1 if s == 0),
                         step_sizes[0], step_sizes[1])
        g = 0 where s < 0                           (a sign change: no move, forget g)
        p = p - sign(g) * step_size
        g_prev = g                                  (state "prev")

    step_size starts at lr for every element on a parameter's first step; a later change of lr
    (a scheduler's) does not reach it, as in PyTorch.
    """

    _HYPERS = (("lr", 0.0, None, False),)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        cls = "Rprop"
        _check_hyper(cls, "lr", lr)
        etas = _check_etas(cls, etas)
        step_sizes = _check_step_sizes(cls, step_sizes)
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _check_hypers(self, values, where=""):
        super()._check_hypers(values, where)
        cls = type(self).__name__ + where
        if "etas" in values:
            values["etas"] = _check_etas(cls, values["etas"])
        if "step_sizes" in values:
            values["step_sizes"] = _check_step_sizes(cls, values["step_sizes"])

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p, g, state in self._with_grads(group, lambda p: {
                    "prev": np.zeros_like(p._data),
                    "step_size": np.zeros_like(p._data) + float(group["lr"]),
            }):
                sign = np.sign(g * state["prev"])
                factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0))
                step_size = state["step_size"]
                step_size *= factor.astype(step_size.dtype, copy=False)
                np.clip(step_size, step_size_min, step_size_max, out=step_size)
                g = np.where(sign < 0, 0, g).astype(p.dtype, copy=False)
                p._data -= np.sign(g) * step_size
                state["prev"][...] = g
        return loss


def _pair(cls, name, value, what):
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValueError(f"{cls}: {name} must be a pair {what}, got {_show(value)}")
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{cls}: {name}[{i}] must be a real number, got {type(v).__name__} {v!r}")
    return tuple(value)


def _check_etas(cls, etas):
    """etas as a tuple (etaminus, etaplus) with 0 < etaminus < 1 < etaplus < inf."""
    etaminus, etaplus = _pair(cls, "etas", etas, "(etaminus, etaplus)")
    if not (0.0 < etaminus < 1.0 < etaplus and math.isfinite(etaplus)):
        raise ValueError(f"{cls}: etas must be (etaminus, etaplus) with 0 < etaminus < 1 < etaplus, "
                         f"got {tuple(etas)!r} (Invalid eta values: {etaminus}, {etaplus})")
    return etaminus, etaplus


def _check_step_sizes(cls, step_sizes):
    """step_sizes as a tuple (min, max) with 0 <= min <= max (max may be infinite)."""
    low, high = _pair(cls, "step_sizes", step_sizes, "(min, max)")
    if not (math.isfinite(low) and 0.0 <= low <= high):
        raise ValueError(f"{cls}: step_sizes must be (min, max) with 0 <= min <= max, got "
                         f"{tuple(step_sizes)!r}")
    return low, high
