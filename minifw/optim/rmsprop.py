"""RMSprop (Hinton's lecture 6e; centered as in Graves, 2013), as in PyTorch."""
import numpy as np

from ..autograd import no_grad
from .optimizer import Optimizer, _check_hyper


class RMSprop(Optimizer):
    """PyTorch's RMSprop. At each step, for each parameter p with gradient g:

        g = g + weight_decay * p                    (g is negated first with maximize)
        v = alpha * v + (1 - alpha) * g * g         (state "square_avg")
        centered:  a = a + (1 - alpha) * (g - a)    (state "grad_avg", the mean gradient)
                   avg = sqrt(v - a * a) + eps
        else:      avg = sqrt(v) + eps
        momentum > 0:  b = momentum * b + g / avg   (state "momentum_buffer")
                       p = p - lr * b
        else:          p = p - lr * g / avg

    Every buffer starts at zero (unlike SGD's momentum buffer, which starts at g).
    """

    _HYPERS = (("lr", 0.0, None, False), ("alpha", 0.0, None, False), ("eps", 0.0, None, False),
               ("weight_decay", 0.0, None, False), ("momentum", 0.0, None, False))

    def __init__(self, params, lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        cls = "RMSprop"
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "alpha", alpha)
        _check_hyper(cls, "eps", eps)
        _check_hyper(cls, "weight_decay", weight_decay)
        _check_hyper(cls, "momentum", momentum)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, alpha, eps = float(group["lr"]), float(group["alpha"]), float(group["eps"])
            weight_decay, momentum = float(group["weight_decay"]), float(group["momentum"])
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = -p.grad._data if group["maximize"] else p.grad._data
                state = self.state.setdefault(p, {})
                if not state:
                    state["step"] = 0
                    state["square_avg"] = np.zeros_like(p._data)
                # momentum and centered may be switched on after the first step (OneCycleLR
                # cycles momentum, a loaded state dict may lack a buffer): their buffers start
                # at zero whenever they are first needed
                if momentum > 0 and "momentum_buffer" not in state:
                    state["momentum_buffer"] = np.zeros_like(p._data)
                if group["centered"] and "grad_avg" not in state:
                    state["grad_avg"] = np.zeros_like(p._data)
                state["step"] += 1
                if weight_decay != 0:
                    g = g + weight_decay * p._data
                square_avg = state["square_avg"]
                square_avg *= alpha
                square_avg += (1 - alpha) * (g * g)
                if group["centered"]:
                    grad_avg = state["grad_avg"]
                    grad_avg += (1 - alpha) * (g - grad_avg)  # PyTorch's lerp_(g, 1 - alpha)
                    avg = np.sqrt(square_avg - grad_avg * grad_avg)
                else:
                    avg = np.sqrt(square_avg)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf *= momentum
                    buf += g / avg
                    p._data -= lr * buf
                else:
                    p._data -= lr * (g / avg)
        return loss
