"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

import numpy as np

from .. import devices
from ..autograd import no_grad
from .optimizer import Optimizer, _check_hyper


class SGD(Optimizer):
    """PyTorch's SGD. For each parameter p with gradient g:

        g = g + weight_decay * p
        buf = g                                    (first step)
        buf = momentum * buf + (1 - dampening) * g (later steps)
        g = g + momentum * buf  if nesterov else  buf
        p = p - lr * g
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False):
        cls = "SGD"
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "momentum", momentum)
        _check_hyper(cls, "weight_decay", weight_decay)
        _check_hyper(cls, "dampening", dampening)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(f"{cls}: Nesterov momentum requires momentum > 0 and dampening = 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))
        self._scratch_buffers = {}  # (dtype, device) -> the step's reused intermediate

    def _scratch(self, like):
        """An array of like's shape and dtype for the step's intermediates, reused across
        parameters and steps: a new temporary of a large layer's size each step would cost
        more in fresh pages than the arithmetic (AlexNet's fc6 holds 151 MB)."""
        buffers = self._scratch_buffers
        key = (like.dtype, devices.of(like))
        buf = buffers.get(key)
        if buf is None or buf.size < like.size:
            buffers[key] = buf = None  # release the smaller one first
            buf = buffers[key] = devices.empty(like.size, like.dtype, key[1])
        return buf[:like.size].reshape(like.shape)

    @no_grad()
    def step(self):
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov = group["weight_decay"], group["nesterov"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = -p.grad._data if group["maximize"] else p.grad._data
                scratch = self._scratch(p._data)
                if weight_decay != 0:
                    decayed = np.multiply(p._data, weight_decay, out=scratch)  # p.grad stays as is
                    decayed += g
                    g = decayed
                if momentum != 0:
                    state = self.state.setdefault(p, {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = g.astype(p.dtype, copy=True)
                    else:
                        buf *= momentum
                        buf += g if dampening == 0 else (1 - dampening) * g
                    g = g + momentum * buf if nesterov else buf
                p._data -= np.multiply(g, lr, out=scratch)
