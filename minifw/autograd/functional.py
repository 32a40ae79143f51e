"""torch.autograd.functional: derivatives of a whole function of Tensors, from reverse-mode
walks: vjp, jvp, jacobian, hessian, vhp and hvp, with PyTorch's signatures and results.

Each takes `func` and `inputs` (a Tensor or a tuple of them), runs func on copies of the inputs
cut from their history (or, with create_graph=True, on views that keep it), and returns
results shaped as PyTorch's: a Tensor where inputs (outputs) were one Tensor, a tuple where
they were a tuple. jvp and hvp use the double-backward trick (the gradient of a vector-Jacobian
product with respect to the vector), so they need second derivatives of func's operations
(docs/autograd.md); jacobian computes one row per output element, batched through
grad(is_grads_batched=True). Results are detached unless create_graph=True. An input an
output does not depend on gets zeros, or with strict=True an error, as in PyTorch."""
from ..tensor import Tensor, eye, ones_like, zeros, zeros_like
from . import enable_grad, grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(fn, name, value):
    """(tuple of Tensors, whether value was a tuple)."""
    if isinstance(value, Tensor):
        return (value,), False
    if isinstance(value, (tuple, list)) and all(isinstance(v, Tensor) for v in value):
        return tuple(value), True
    raise TypeError(f"{fn}: {name} must be a Tensor or a tuple of Tensors; got "
                    f"{type(value).__name__}")


def _like(values, was_tuple):
    return tuple(values) if was_tuple else values[0]


def _prepare(inputs, create_graph):
    """The inputs func runs on: views that keep their history (create_graph, where they
    require grad), else detached copies' views that require grad."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else
                 t.detach().requires_grad_(True) for t in inputs)


def _outputs(fn, out):
    outputs, was_tuple = _as_tuple(fn, "the value returned by func", out)
    for k, o in enumerate(outputs):
        if o.dtype.kind != "f":
            raise RuntimeError(f"{fn}: output {k} of the function is of dtype {o.dtype}; only "
                               f"floating point outputs can be differentiated")
    return outputs, was_tuple


def _vectors(fn, name, v, like):
    """v checked against `like` (the tensors it pairs with), as a tuple."""
    vs, _ = _as_tuple(fn, name, v)
    if len(vs) != len(like):
        raise RuntimeError(f"{fn}: {name} has {len(vs)} tensors, but {len(like)} were expected")
    for k, (a, b) in enumerate(zip(vs, like)):
        if a.shape != b.shape:
            raise RuntimeError(f"{fn}: entry {k} of {name} has shape {a.shape}, but the matching "
                               f"tensor has shape {b.shape}")
    return vs


def _fill(fn, grads, like, strict, what):
    """Gradients with zeros where none came, or strict=True's error."""
    results = []
    for k, (g, t) in enumerate(zip(grads, like)):
        if g is None:
            if strict:
                raise RuntimeError(f"{fn}: the output of the function is independent of input {k}, "
                                   f"which is not allowed in strict mode ({what})")
            g = zeros_like(t)
        results.append(g)
    return results


def _check_strict(fn, outputs, strict):
    if strict:
        for k, o in enumerate(outputs):
            if not o.requires_grad:
                raise RuntimeError(f"{fn}: output {k} of the function does not require gradients; "
                                   f"in strict mode the outputs must be computed in a "
                                   f"differentiable manner from the inputs")


def _detached(values, create_graph):
    return [v if create_graph else v.detach() for v in values]


def _vjp_of(outputs, inputs, vs, create_graph, retain_graph=None):
    """Vector-Jacobian products: grad of sum_i <vs_i, outputs_i> for each input (None where
    none), with only the outputs that require grad."""
    pairs = [(o, v) for o, v in zip(outputs, vs) if o.requires_grad]
    if not pairs:
        return [None] * len(inputs)
    return list(_grad([o for o, _ in pairs], inputs, [v for _, v in pairs], create_graph=create_graph,
                      retain_graph=create_graph if retain_graph is None else retain_graph,
                      allow_unused=True))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs. v may be left out when
    func returns one single-element Tensor."""
    inputs, inputs_tuple = _as_tuple("vjp", "inputs", inputs)
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        outputs, outputs_tuple = _outputs("vjp", func(*xs))
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("vjp: the vector v can only be None if the function returns a "
                                   "single Tensor with a single element")
            vs = (ones_like(outputs[0]),)
        else:
            vs = _vectors("vjp", "v", v, outputs)
        _check_strict("vjp", outputs, strict)
        grads = _fill("vjp", _vjp_of(outputs, xs, vs, create_graph), xs, strict, "vjp")
    return (_like(_detached(outputs, create_graph), outputs_tuple),
            _like(_detached(grads, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product at inputs, by the double-backward
    trick: J v is the gradient of u -> <J^T u, v> with respect to u. v may be left out when
    the inputs are one single-element Tensor."""
    inputs, inputs_tuple = _as_tuple("jvp", "inputs", inputs)
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("jvp: the vector v can only be None if the input to the function "
                               "is a single Tensor with a single element")
        vs = (ones_like(inputs[0]),)
    else:
        vs = _vectors("jvp", "v", v, inputs)
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        outputs, outputs_tuple = _outputs("jvp", func(*xs))
        _check_strict("jvp", outputs, strict)
        us = [zeros_like(o).requires_grad_(True) for o in outputs]
        grads = _vjp_of(outputs, xs, us, create_graph=True)
        used = [(g, v) for g, v in zip(grads, vs) if g is not None and g.requires_grad]
        if used:
            jv = _grad([g for g, _ in used], us, [v for _, v in used], create_graph=create_graph,
                       retain_graph=create_graph, allow_unused=True)
        else:
            jv = [None] * len(us)
        jv = _fill("jvp", jv, outputs, strict, "jvp")
    return (_like(_detached(outputs, create_graph), outputs_tuple),
            _like(_detached(jv, create_graph), outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j a Tensor of shape
    outputs[i].shape + inputs[j].shape, nested as PyTorch nests them (a Tensor for one input
    and one output; a tuple over inputs, or over outputs, or over outputs of tuples over
    inputs). Rows come one per output element, from batched reverse-mode walks; vectorize
    is accepted and changes nothing; strategy must be "reverse-mode"."""
    if strategy != "reverse-mode":
        raise NotImplementedError(f"jacobian: strategy={strategy!r} (forward-mode AD) is not "
                                  f"supported; use strategy='reverse-mode'")
    inputs, inputs_tuple = _as_tuple("jacobian", "inputs", inputs)
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        outputs, outputs_tuple = _outputs("jacobian", func(*xs))
        _check_strict("jacobian", outputs, strict)
        table = []
        for i, o in enumerate(outputs):
            n = o.numel()
            if o.requires_grad and n:
                basis = eye(n, dtype=o.dtype, device=o.device).reshape((n,) + o.shape)
                rows = _grad([o], xs, [basis], retain_graph=True, create_graph=create_graph,
                             allow_unused=True, is_grads_batched=True)
            else:
                rows = [None] * len(xs)
            per_input = []
            for k, (r, x) in enumerate(zip(rows, xs)):
                if r is None:
                    if strict and n:
                        raise RuntimeError(f"jacobian: output {i} of the function is independent "
                                           f"of input {k}, which is not allowed in strict mode")
                    r = zeros((n,) + x.shape, dtype=x.dtype, device=x.device)
                r = r.reshape(o.shape + x.shape)
                per_input.append(r if create_graph else r.detach())
            table.append(_like(per_input, inputs_tuple))
    return _like(table, outputs_tuple)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function with one single-element output: the Jacobian of its
    gradient; for input i and j a Tensor of shape inputs[i].shape + inputs[j].shape (nested
    in tuples where inputs is a tuple)."""
    inputs, inputs_tuple = _as_tuple("hessian", "inputs", inputs)

    def gradient(*xs):
        outputs, _ = _outputs("hessian", func(*xs))
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("hessian: the function must return one Tensor with a single "
                               "element")
        _check_strict("hessian", outputs, strict)
        grads = _vjp_of(outputs, xs, (ones_like(outputs[0]),), create_graph=True)
        return tuple(_fill("hessian", grads, xs, strict, "hessian"))

    result = jacobian(gradient, _like(inputs, inputs_tuple), create_graph=create_graph,
                      strict=strict, strategy=outer_jacobian_strategy)
    return result if inputs_tuple else result[0]


def _scalar_and_gradient(fn, func, xs, strict):
    outputs, _ = _outputs(fn, func(*xs))
    if len(outputs) != 1 or outputs[0].numel() != 1:
        raise RuntimeError(f"{fn}: the function must return one Tensor with a single element")
    _check_strict(fn, outputs, strict)
    return outputs[0], _vjp_of(outputs, xs, (ones_like(outputs[0]),), create_graph=True)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): the vector-Hessian product of a single-element function."""
    inputs, inputs_tuple = _as_tuple("vhp", "inputs", inputs)
    vs = _default_v("vhp", v, inputs)
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        out, grads = _scalar_and_gradient("vhp", func, xs, strict)
        used = [(g, v) for g, v in zip(grads, vs) if g is not None and g.requires_grad]
        result = (_grad([g for g, _ in used], xs, [v for _, v in used], create_graph=create_graph,
                        retain_graph=create_graph, allow_unused=True) if used else [None] * len(xs))
        result = _fill("vhp", result, xs, strict, "vhp")
    return (out if create_graph else out.detach(), _like(_detached(result, create_graph), inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian-vector product of a single-element function, by the
    double-backward trick (for a function twice differentiable, H is symmetric and H v equals
    v^T H, as PyTorch notes)."""
    inputs, inputs_tuple = _as_tuple("hvp", "inputs", inputs)
    vs = _default_v("hvp", v, inputs)
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        out, grads = _scalar_and_gradient("hvp", func, xs, strict)
        us = [zeros_like(x).requires_grad_(True) for x in xs]
        used = [(g, u) for g, u in zip(grads, us) if g is not None and g.requires_grad]
        if used:
            back = _grad([g for g, _ in used], xs, [u for _, u in used], create_graph=True,
                         retain_graph=True, allow_unused=True)
            pairs = [(b, v) for b, v in zip(back, vs) if b is not None and b.requires_grad]
            result = (_grad([b for b, _ in pairs], us, [v for _, v in pairs],
                            create_graph=create_graph, retain_graph=create_graph, allow_unused=True)
                      if pairs else [None] * len(us))
        else:
            result = [None] * len(us)
        result = _fill("hvp", result, xs, strict, "hvp")
    return (out if create_graph else out.detach(), _like(_detached(result, create_graph), inputs_tuple))


def _default_v(fn, v, inputs):
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError(f"{fn}: the vector v can only be None if the input to the function "
                               f"is a single Tensor with a single element")
        return (ones_like(inputs[0]),)
    return _vectors(fn, "v", v, inputs)
