"""Muon (Jordan et al., 2024): momentum whose 2-D update is orthogonalized by a Newton-Schulz
iteration, as torch.optim.Muon."""
import math
import numbers

import numpy as np

from ..autograd import no_grad
from .optimizer import Optimizer, _check_hyper, _lr_value

# the quintic iteration's coefficients from Keller Jordan's post, as PyTorch's defaults
DEFAULT_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
DEFAULT_NS_STEPS = 5
EPS = 1e-7


def zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps):
    """An approximately orthogonal matrix with update's singular vectors: `ns_steps` steps
    of X <- a X + (b A + c A^2) X, A = X X^T, from X = update / max(||update||_F, eps), on the
    wide orientation (X^T for a tall matrix) so that A is the smaller Gram matrix. The
    coefficients push every singular value into roughly [0.7, 1.2] rather than exactly 1."""
    a, b, c = ns_coefficients
    tall = update.shape[0] > update.shape[1]
    x = update.T if tall else update
    x = x / max(float(np.linalg.norm(x)), eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.T if tall else x


def _adjusted_lr(lr, adjust_lr_fn, shape):
    """lr scaled for the update's shape (A, B): "original" (None) sqrt(max(1, A / B)) (Keller
    Jordan's), "match_rms_adamw" 0.2 sqrt(max(A, B)) (Moonshot's, to reuse AdamW's lr)."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1.0, rows / cols))
    return lr * 0.2 * math.sqrt(max(rows, cols))


class Muon(Optimizer):
    """PyTorch's Muon, for 2-D parameters (hidden layers' weights; optimize biases and
    embeddings with AdamW, say). For each parameter p with gradient g:

        B = B + (1 - momentum) * (g - B)                 (momentum buffer, as lerp)
        U = g + momentum * (B - g)   if nesterov,  else B
        O = NewtonSchulz(U)                             (ns_steps steps, ns_coefficients, eps)
        p = p * (1 - lr * weight_decay)
        p = p - adjusted_lr * O                          (adjust_lr_fn, see _adjusted_lr)

    PyTorch runs the Newton-Schulz iteration in bfloat16; minifw, which has no bfloat16,
    runs it in the parameter's dtype (docs/pytorch.md)."""

    _HYPERS = (("lr", 0.0, None, False), ("weight_decay", 0.0, None, False),
               ("momentum", 0.0, None, False), ("eps", 0.0, None, False))

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=DEFAULT_NS_COEFFICIENTS, eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        cls = type(self).__name__
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "momentum", momentum)
        _check_hyper(cls, "weight_decay", weight_decay)
        _check_hyper(cls, "eps", eps)
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=ns_coefficients, eps=eps,
                                      ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {tuple(p.shape)}")

    def _check_hypers(self, values, where=""):
        super()._check_hypers(values, where)
        cls = type(self).__name__ + where
        if "adjust_lr_fn" in values and values["adjust_lr_fn"] not in (None, "original",
                                                                         "match_rms_adamw"):
            raise ValueError(f"{cls}: Adjust learning rate function {values['adjust_lr_fn']!r} "
                             f"is not supported (adjust_lr_fn must be None, 'original' or "
                             f"'match_rms_adamw')")
        if "ns_steps" in values:
            steps = values["ns_steps"]
            if not isinstance(steps, numbers.Integral) or isinstance(steps, bool) or steps < 0:
                raise ValueError(f"{cls}: ns_steps must be a whole number >= 0, got {steps!r}")
            if steps >= 100:
                raise ValueError(f"{cls}: Number of steps must be less than 100 for "
                                 f"computational efficiency; got ns_steps={steps}")
        if "ns_coefficients" in values:
            coefficients = values["ns_coefficients"]
            if (not isinstance(coefficients, (tuple, list)) or len(coefficients) != 3
                    or not all(isinstance(c, numbers.Real) and not isinstance(c, bool)
                               and math.isfinite(c) for c in coefficients)):
                raise ValueError(f"{cls}: ns_coefficients must be a tuple of exactly 3 finite "
                                 f"numbers (a, b, c), got {coefficients!r}")
            values["ns_coefficients"] = tuple(coefficients)

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, weight_decay, momentum = _lr_value(group["lr"]), group["weight_decay"], group["momentum"]
            for p, g, state in self._with_grads(group, lambda p: {
                    "momentum_buffer": np.zeros_like(p._data)}):
                if g.ndim != 2:
                    raise ValueError(f"Muon: the gradient must be a 2D matrix, got shape "
                                     f"{tuple(g.shape)}")
                buf = state["momentum_buffer"]
                buf += (1 - momentum) * (g - buf)
                update = g + momentum * (buf - g) if group["nesterov"] else buf
                ortho = zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                   group["ns_steps"], group["eps"])
                p._data *= 1 - lr * weight_decay
                p._data -= (_adjusted_lr(lr, group["adjust_lr_fn"], p.shape)
                            * ortho).astype(p._data.dtype, copy=False)
        return loss
