"""Adafactor (Shazeer & Stern, 2018), in PyTorch 2.5+'s form (torch.optim.Adafactor)."""
import math

import numpy as np

from ..autograd import no_grad
from .optimizer import Optimizer, _check_hyper, _lr_value


def _check_eps(cls, eps):
    """eps as a tuple (eps1 or None, eps2), each a finite number >= 0."""
    if isinstance(eps, (str, bytes)) or not isinstance(eps, (tuple, list)):
        raise TypeError(f"{cls}: eps must be a tuple (eps1, eps2) with eps1 a number or None, got "
                        f"{type(eps).__name__} {eps!r}")
    if len(eps) != 2:
        raise ValueError(f"{cls}: eps must be a tuple of two values (eps1, eps2), got {len(eps)} "
                         f"values: {tuple(eps)!r}")
    if eps[0] is not None:
        _check_hyper(cls, "eps[0]", eps[0])
    _check_hyper(cls, "eps[1]", eps[1])
    return tuple(eps)


class Adafactor(Optimizer):
    """PyTorch's Adafactor. At step t, for each parameter p with gradient g (negated with
    maximize), with eps1 defaulting to the machine epsilon of p's dtype:

        beta2_hat = t ** beta2_decay                          (1 at t = 1, then decaying)
        rho = min(lr, 1 / sqrt(t))
        alpha = max(eps2, rms(p)) * rho                       (relative step size; before decay)
        p = p * (1 - lr * weight_decay)
        p with 2 or more dims: factored second moments over the last two dims (rows, columns)
            R = R + beta2_hat * (mean(g^2, last dim) - R)
            C = C + beta2_hat * (mean(g^2, second-to-last dim) - C)
            V = (R @ C) / max(mean(R over rows), eps1)
        else: V = V + beta2_hat * (g^2 - V)
        u = g / sqrt(max(V, eps1^2))
        p = p - alpha / max(1, rms(u) / d) * u

    There is no first moment (no momentum), as in PyTorch's version of the algorithm; the
    state of a matrix is its row and column factors, one number per row and per column."""

    _HYPERS = (("lr", 0.0, None, False), ("beta2_decay", -math.inf, 0.0, False),
               ("d", 1.0, None, False), ("weight_decay", 0.0, None, False))

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        cls = type(self).__name__
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "beta2_decay", beta2_decay, -math.inf, 0.0)
        eps = _check_eps(cls, eps)
        _check_hyper(cls, "d", d, 1.0)
        _check_hyper(cls, "weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def _check_hypers(self, values, where=""):
        super()._check_hypers(values, where)
        if "eps" in values:
            values["eps"] = _check_eps(type(self).__name__ + where, values["eps"])

    def _state_shape(self, name, p):
        if name == "row_var":
            return tuple(p.shape[:-1]) + (1,)
        if name == "col_var":
            return tuple(p.shape[:-2]) + (1, p.shape[-1])
        return super()._state_shape(name, p)

    @staticmethod
    def _new_state(p):
        if p.ndim > 1:
            return {"row_var": np.zeros(tuple(p.shape[:-1]) + (1,), p._data.dtype),
                    "col_var": np.zeros(tuple(p.shape[:-2]) + (1, p.shape[-1]), p._data.dtype)}
        return {"variance": np.zeros_like(p._data)}

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, beta2_decay, (eps1, eps2) = _lr_value(group["lr"]), group["beta2_decay"], group["eps"]
            d, weight_decay = group["d"], group["weight_decay"]
            for p, g, state in self._with_grads(group, self._new_state):
                x = p._data
                if p.ndim > 1 and "row_var" not in state or p.ndim <= 1 and "variance" not in state:
                    raise ValueError(f"Adafactor: the state of a parameter of shape {tuple(p.shape)} "
                                     f"lacks its second moments (loaded from another optimizer?)")
                tiny = np.finfo(x.dtype).eps if eps1 is None else eps1
                t = state["step"]
                beta2_hat = float(t) ** beta2_decay
                rho = min(lr, 1 / math.sqrt(t))
                alpha = max(eps2, float(np.linalg.norm(x.reshape(-1))) / math.sqrt(x.size)) * rho
                if weight_decay != 0:
                    x *= 1 - lr * weight_decay
                if p.ndim > 1:
                    row, col = state["row_var"], state["col_var"]
                    row += beta2_hat * (np.square(np.linalg.norm(g, axis=-1, keepdims=True))
                                        / g.shape[-1] - row)
                    col += beta2_hat * (np.square(np.linalg.norm(g, axis=-2, keepdims=True))
                                        / g.shape[-2] - col)
                    v = (row @ col) / np.maximum(row.mean(axis=-2, keepdims=True), tiny)
                else:
                    variance = state["variance"]
                    variance += beta2_hat * (g * g - variance)
                    v = variance
                update = g / np.sqrt(np.maximum(v, tiny * tiny))
                rms = float(np.linalg.norm(update.reshape(-1))) / (math.sqrt(update.size) * d)
                x -= (alpha / max(1.0, rms)) * update
        return loss
