"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

import numpy as np

from .. import devices, engines
from ..autograd import no_grad
from ..checks import FLOAT_DTYPES
from .optimizer import Optimizer, _check_hyper, _lr_value


def _fused_step_applies(p, g, buf):
    """Whether ops.sgd_step can update p (and buf) in place: C-contiguous arrays of one
    device, float dtype and shape, p and buf writable, g sharing no memory with them. Anything
    else (a strided view, a grad of another dtype or device) takes the array-code path."""
    arrays = (p, g) if buf is None else (p, g, buf)
    dev = devices.of(p)
    if not all(devices.of(a) == dev for a in arrays[1:]):
        return False
    return (p.dtype in FLOAT_DTYPES and devices.is_writeable(p) and (buf is None or devices.is_writeable(buf))
            and all(a.dtype == p.dtype and a.shape == p.shape and a.flags.c_contiguous for a in arrays)
            and not any(np.may_share_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:]))


class SGD(Optimizer):
    """PyTorch's SGD. For each parameter p with gradient g:

        g = g + weight_decay * p
        buf = g                                    (first step)
        buf = momentum * buf + (1 - dampening) * g (later steps)
        g = g + momentum * buf  if nesterov else  buf
        p = p - lr * g

    (g is negated first with maximize=True.) Each parameter is updated by the current
    engine's sgd_step where its arrays allow (the primitives: one native pass,
    ops.sgd_step; the caffe engine: a NumPy pass per operation, as Caffe's SGDSolver),
    else by NumPy operations here; all agree to rounding. The buffer is
    state[p]["momentum_buffer"], as in PyTorch.
    """

    _HYPERS = (("lr", 0.0, None, False), ("momentum", 0.0, None, False), ("dampening", 0.0, None, False),
               ("weight_decay", 0.0, None, False))

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        cls = "SGD"
        _check_hyper(cls, "lr", lr)
        _check_hyper(cls, "momentum", momentum)
        _check_hyper(cls, "weight_decay", weight_decay)
        _check_hyper(cls, "dampening", dampening)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(f"{cls}: Nesterov momentum requires momentum > 0 and dampening = 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))
        self._scratch_buffers = {}  # (dtype, device) -> the NumPy step's reused intermediate

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
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr = _lr_value(group["lr"])
            for p in group["params"]:
                if p.grad is None:
                    continue
                buf = None
                if group["momentum"] != 0:
                    state = self.state.setdefault(p, {})
                    buf = state.get("momentum_buffer")
                if _fused_step_applies(p._data, p.grad._data, buf):
                    first_step = group["momentum"] != 0 and buf is None
                    if first_step:
                        buf = state["momentum_buffer"] = devices.empty(p.shape, p.dtype, p.device)
                    engines.current_engine().sgd_step(
                        p._data, p.grad._data, buf, lr=lr, momentum=group["momentum"],
                        dampening=group["dampening"], weight_decay=group["weight_decay"],
                        nesterov=group["nesterov"], maximize=group["maximize"], first_step=first_step)
                else:
                    self._numpy_step(p, group, lr)
        return loss

    def _numpy_step(self, p, group, lr):
        """The step in NumPy operations, a pass over the parameter's size per operation."""
        momentum, dampening = group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
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
