"""Activation checkpointing, as torch.utils.checkpoint: run a piece of a model without keeping
its intermediate activations, and run it again during the backward pass to get them, trading
compute for memory.

    y = checkpoint(block, x, use_reentrant=False)
    y = checkpoint_sequential(model, segments=2, input=x, use_reentrant=False)

The recomputation sees the same random numbers as the first run (dropout masks) when
preserve_rng_state is True: minifw's generator state is saved before the forward and
restored around the recomputation. One implementation serves both use_reentrant values;
they differ as in PyTorch in one respect: with use_reentrant=True and no input that
requires grad, nothing inside receives a gradient (with a warning)."""
import warnings

from .. import random as _random
from ..autograd import Function, backward, enable_grad, no_grad
from ..tensor import Tensor, empty


class _Recompute(Function):
    _on_arrays = False  # Tensors in and out, as a user's Function

    @staticmethod
    def forward(ctx, run, preserve_rng_state, kwargs, anchor, *args):
        ctx.run, ctx.kwargs = run, kwargs
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
        ctx.inputs = args
        with no_grad():
            out = run(*args, **kwargs)
        ctx.is_tuple = isinstance(out, tuple)
        outs = out if ctx.is_tuple else (out,)
        for o in outs:
            if not isinstance(o, Tensor):
                raise TypeError(f"checkpoint: the function must return a Tensor or a tuple of Tensors, "
                                f"got a {type(o).__name__}")
        return tuple(o.detach() for o in outs) if ctx.is_tuple else outs[0].detach()

    @staticmethod
    def backward(ctx, *grads):
        needs = ctx.needs_input_grad[4:]
        inputs = [a.detach().requires_grad_(need) if isinstance(a, Tensor) else a
                  for a, need in zip(ctx.inputs, needs)]
        saved = None
        if ctx.rng_state is not None:
            saved = _random.get_rng_state()
            _random.set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                out = ctx.run(*inputs, **ctx.kwargs)
        finally:
            if saved is not None:
                _random.set_rng_state(saved)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads) if o.requires_grad and g is not None]
        if pairs:
            backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None, None) + tuple(
            a.grad if isinstance(a, Tensor) and a.requires_grad else None for a in inputs)


def _use_reentrant(fn, use_reentrant):
    if use_reentrant is None:
        warnings.warn(f"{fn}: pass use_reentrant explicitly (True or False), as PyTorch asks; "
                      f"taking True", UserWarning, stacklevel=3)
        return True
    if not isinstance(use_reentrant, bool):
        raise TypeError(f"{fn}: use_reentrant must be a bool or None, got {type(use_reentrant).__name__}")
    return use_reentrant


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), with its activations recomputed in the backward pass
    instead of kept. Its result must be a Tensor or a tuple of Tensors."""
    fn = "checkpoint"
    use_reentrant = _use_reentrant(fn, use_reentrant)
    if not callable(function):
        raise TypeError(f"{fn}: function must be callable, got {type(function).__name__}")
    if context_fn is not None:
        raise ValueError(f"{fn}: context_fn is not supported; it must be None")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"{fn}: determinism_check must be 'default' or 'none', got {determinism_check!r}")
    if use_reentrant and kwargs:
        raise ValueError(f"{fn}: keyword arguments to the function need use_reentrant=False, got "
                         f"{sorted(kwargs)}")
    anchor = None
    if not use_reentrant:
        # an input that requires grad, so the recomputation (and the gradients of the
        # parameters inside) happens whatever the other inputs are
        anchor = empty(0, requires_grad=True)
    elif not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn(f"{fn}: none of the inputs requires grad; with use_reentrant=True nothing "
                      f"inside the function will receive a gradient", UserWarning, stacklevel=2)
    return _Recompute.apply(function, bool(preserve_rng_state), kwargs, anchor, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """A Sequential (or list of modules) run in `segments` pieces, every piece but the last
    checkpointed."""
    fn = "checkpoint_sequential"
    use_reentrant = _use_reentrant(fn, use_reentrant)
    modules = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if not isinstance(segments, int) or isinstance(segments, bool) or not 1 <= segments <= max(len(modules), 1):
        raise ValueError(f"{fn}: segments must be an int in [1, {len(modules)}], got {segments!r}")
    size = len(modules) // segments

    def run(start, end):
        def forward(x):
            for m in modules[start:end]:
                x = m(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end + 1), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(modules))(input)
