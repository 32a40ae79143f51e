"""Adam and AdamW (Kingma & Ba, 2015; Loshchilov & Hutter, 2019), as in PyTorch."""
import math

import numpy as np

from ..autograd import no_grad
from .optimizer import Optimizer, _check_betas, _check_hyper, _lr_value


def decay_and_moments(p, g, state, decoupled, lr, weight_decay, beta1, beta2):
    """The step Adam and its variants share: weight decay (decoupled, as AdamW: p shrinks by
    lr * weight_decay; else L2, added into g), then the moments in PyTorch's operations and
    order (m.lerp_(g, 1 - beta1); v = beta2 v + (1 - beta2) g^2), so float32 results stay
    close to its. Returns the decayed gradient, m and v (state's, updated in place)."""
    if weight_decay != 0:
        if decoupled:
            p._data *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * p._data
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m += (1 - beta1) * (g - m)
    v *= beta2
    v += (1 - beta2) * (g * g)
    return g, m, v


class Adam(Optimizer):
    """PyTorch's Adam. At step t, for each parameter p with gradient g:

        g = g + weight_decay * p                    (decoupled_weight_decay / AdamW: p decays instead)
        m = m + (1 - beta1) * (g - m)               (= beta1 * m + (1 - beta1) * g)
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                        (amsgrad; v_max replaces v below)
        denom = sqrt(v) / sqrt(1 - beta2^t) + eps    (eps outside the square root)
        p = p - lr / (1 - beta1^t) * (m / denom)
    """

    _HYPERS = (("lr", 0.0, None, False), ("eps", 0.0, None, False), ("betas", 0.0, 1.0, True),
               ("weight_decay", 0.0, None, False))

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        cls = type(self).__name__
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "eps", eps)
        betas = _check_betas(cls, betas)
        _check_hyper(cls, "weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused, decoupled_weight_decay=decoupled_weight_decay))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = _lr_value(group["lr"]), group["betas"], group["eps"]
            weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
            for p, g, state in self._with_grads(group, lambda p: {
                    "exp_avg": np.zeros_like(p._data),
                    "exp_avg_sq": np.zeros_like(p._data),
            }):
                if amsgrad and "max_exp_avg_sq" not in state:  # also after loading non-amsgrad state
                    state["max_exp_avg_sq"] = np.zeros_like(p._data)
                t = state["step"]
                _, m, v = decay_and_moments(p, g, state, group["decoupled_weight_decay"], lr,
                                            weight_decay, beta1, beta2)
                if amsgrad:
                    np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
                    v = state["max_exp_avg_sq"]
                step_size = lr / (1 - beta1 ** t)
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** t)
                denom = np.sqrt(v) / bias_correction2_sqrt + eps
                p._data -= step_size * (m / denom)  # p.addcdiv_(m, denom, value=-step_size)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay: p = p * (1 - lr * weight_decay) before the Adam step,
    instead of adding weight_decay * p to the gradient (Adam(decoupled_weight_decay=True)).
    Default weight_decay 1e-2."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
