"""torch.func: function transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,
vmap) and functional_call, with PyTorch's signatures and results.

minifw has one autograd engine and no transform levels, so the transforms are compositions
of it. grad, vjp and jacrev run the function on the argument's tensors made into fresh leaves
(or, where a tensor already has a history, on views that keep it) and walk back with
minifw.autograd.grad. A walk records a graph (create_graph=True) only where the result can
still be differentiated by someone outside: grad is enabled and the function's output
reaches a tensor that requires grad other than the fresh leaves (an outer transform's input,
a captured parameter). That is how grad(grad(f)) and vmap(grad(f)) nest, and why results
keep a history exactly where PyTorch's do. jvp and jacfwd use the double-backward trick
(forward-mode products from two reverse walks), so they need second derivatives of the
function's operations (docs/autograd.md). vmap has no batching rules: it runs the function
once per batch entry and stacks the results (docs/pytorch.md)."""
import functools
import numbers

from .. import random as _random
from ..autograd import enable_grad, grad as _autograd_grad, is_grad_enabled
from ..tensor import Tensor, eye, stack, zeros, zeros_like
from ..nn.utils.stateless import _call as _functional_call
from . import _pytree

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "vmap"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with the tensors of `parameter_and_buffer_dicts` (a dict, or a
    tuple of dicts, from dotted names such as "0.weight" to Tensors) standing for the module's
    parameters and buffers during the call; the module is unchanged afterwards. With
    tie_weights=True a tensor given for one name of a parameter shared under several names
    stands for all of them; strict=True makes missing or unexpected names an error. args
    that is not a tuple is the single positional argument."""
    return _functional_call("functional_call", module, parameter_and_buffer_dicts, args, kwargs,
                            tie_weights, strict)


# ---- the differentiable inputs --------------------------------------------------------------
def _argnums(argnums, count):
    """argnums as a tuple of non-negative positions (and whether it was one int)."""
    def position(a):
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -count <= a < count:
            raise RuntimeError(f"Got argnum={a}, but only {count} positional inputs")
        return int(a) % count

    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        positions = tuple(position(a) for a in argnums)
        if len(set(positions)) != len(positions):
            raise RuntimeError(f"argnums must be unique, got {argnums}")
        return positions, False
    if isinstance(argnums, numbers.Integral) and not isinstance(argnums, bool):
        return (position(argnums),), True
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


class _Inputs:
    """The tensors a transform differentiates with respect to: the leaves of the chosen
    arguments made into fresh leaves that require grad, or views of them that keep their
    history where they already have one."""

    def __init__(self, fn, args, argnums):
        self.positions, self.single = _argnums(argnums, len(args))
        self.args = list(args)
        self.specs, self.tensors, self.own = [], [], set()
        for p in self.positions:
            leaves, spec = _pytree.flatten(args[p])
            prepared = []
            for leaf in leaves:
                if not isinstance(leaf, Tensor):
                    raise RuntimeError(f"{fn}: expected the argument at position {p} to be a "
                                       f"Tensor or a tuple/list/dict of Tensors; got "
                                       f"{type(leaf).__name__} inside it")
                if leaf.dtype.kind != "f":
                    raise RuntimeError("only Tensors of floating point dtype can require "
                                       "gradients")
                if leaf.requires_grad:
                    t = leaf.view_as(leaf)
                else:
                    t = leaf.detach().requires_grad_(True)
                    self.own.add(id(t))
                prepared.append(t)
            self.specs.append(spec)
            self.tensors.extend(prepared)
            self.args[p] = _pytree.unflatten(prepared, spec)

    def shaped(self, flat):
        """Per-tensor results put back into the arguments' structure (one tree, or a tuple
        of trees for a tuple argnums)."""
        flat, trees = iter(flat), []
        for spec in self.specs:
            trees.append(_pytree.unflatten([next(flat) for _ in range(spec.num_leaves)], spec))
        return trees[0] if self.single else tuple(trees)


def _reaches_outside(tensors, own):
    """Whether the history of any of `tensors` reaches a tensor that requires grad other than
    the leaves in `own` (ids): then results must keep their graph for whoever differentiates
    them from outside."""
    stack_, seen = [], set()
    for t in tensors:
        if not isinstance(t, Tensor):
            continue
        if t.grad_fn is not None:
            stack_.append(t.grad_fn)
        elif t.requires_grad and id(t) not in own:
            return True
    while stack_:
        node = stack_.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for edge in getattr(node, "edges", ()):
            if isinstance(edge, tuple):
                stack_.append(edge[0])
            elif isinstance(edge, Tensor):
                if id(edge) not in own:
                    return True
            elif edge is not None:
                stack_.append(edge)
    return False


def _released(tree, keep):
    """The tensors of `tree` detached from the graph unless `keep`."""
    if keep:
        return tree
    leaves, spec = _pytree.flatten(tree)
    return _pytree.unflatten([v.detach() if isinstance(v, Tensor) else v for v in leaves], spec)


def _gradients(outputs, inputs, cotangents, create_graph, retain_graph=None, batched=False):
    """Gradients of sum <outputs, cotangents> for every input: zeros where none reaches."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if pairs:
        grads = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                               retain_graph=create_graph if retain_graph is None else retain_graph,
                               create_graph=create_graph, allow_unused=True,
                               is_grads_batched=batched)
    else:
        grads = [None] * len(inputs)
    lead = (cotangents[0].shape[0],) if batched else ()
    return [zeros(lead + x.shape, dtype=x.dtype, device=x.device) if g is None else g
            for g, x in zip(grads, inputs)]


def _split_aux(fn, out, has_aux):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{fn}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return out


# ---- grad, grad_and_value, vjp -------------------------------------------------------------
def _grad_and_value(func, argnums, has_aux, args, kwargs):
    fn = "grad_and_value(f)(*args)"
    grad_outside = is_grad_enabled()
    with enable_grad():
        inputs = _Inputs(fn, args, argnums)
        output, aux = _split_aux(fn, func(*inputs.args, **kwargs), has_aux)
        if not isinstance(output, Tensor):
            raise RuntimeError(f"{fn}: Expected f(*args) to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError(f"{fn}: Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {output.dim()} dims. Maybe you wanted to use the vjp or "
                               f"jacrev APIs instead?")
        keep = grad_outside and _reaches_outside([output], inputs.own)
        grads = _gradients([output], inputs.tensors, [output.new_ones(())], create_graph=keep)
    value = _released(output, keep)
    if has_aux:
        aux_leaves = _pytree.flatten(aux)[0]
        aux = _released(aux, keep and _reaches_outside(aux_leaves, inputs.own))
        return inputs.shaped(grads), (value, aux)
    return inputs.shaped(grads), value


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient, value) of `func` (which must return a 0-d Tensor) with
    respect to its argument(s) at `argnums` (an int, or a tuple of ints for a tuple of
    gradients); an argument may be a Tensor or a tuple/list/dict of them, and its gradient has
    the same structure. With has_aux=True func returns (value, aux) and the result is
    (gradient, (value, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of `func` (which must return a 0-d Tensor) with
    respect to its argument(s) at `argnums`; with has_aux=True, (gradient, aux). See
    grad_and_value."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def _float_outputs(fn, output):
    leaves, spec = _pytree.flatten(output)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{fn}: Expected f to be a function that has only Tensor "
                               f"outputs; got {type(leaf).__name__}")
    return leaves, spec


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn), or with has_aux=True (output, vjp_fn, aux): vjp_fn(cotangents)
    (cotangents shaped as the output) returns the vector-Jacobian products, a tuple with one
    entry per primal, each shaped as that primal. vjp_fn may be called many times."""
    fn = "vjp(f, *primals)"
    grad_outside = is_grad_enabled()
    with enable_grad():
        inputs = _Inputs(fn, primals, tuple(range(len(primals))))
        output, aux = _split_aux(fn, func(*inputs.args), has_aux)
        out_leaves, out_spec = _float_outputs(fn, output)
    outside = grad_outside and _reaches_outside(out_leaves, inputs.own)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        leaves, spec = _pytree.flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree "
                               f"structure of outputs to the function; cotangents: {spec!r}, "
                               f"primal output: {out_spec!r}")
        for k, (c, o) in enumerate(zip(leaves, out_leaves)):
            if not isinstance(c, Tensor) or c.shape != o.shape:
                got = tuple(c.shape) if isinstance(c, Tensor) else type(c).__name__
                raise RuntimeError(f"vjp_fn: Mismatch in shape: cotangent {k} has a shape of "
                                   f"{got} and output {k} has a shape of {tuple(o.shape)}")
        keep = is_grad_enabled() and (outside or any(c.requires_grad for c in leaves))
        if create_graph is not None:
            keep = bool(create_graph)
        with enable_grad():
            grads = _gradients(out_leaves, inputs.tensors, leaves, create_graph=keep,
                               retain_graph=True if retain_graph is None else retain_graph)
        return inputs.shaped(grads)

    result = (_released(output, outside), vjp_fn)
    if has_aux:
        aux_leaves = _pytree.flatten(aux)[0]
        return result + (_released(aux, outside and _reaches_outside(aux_leaves, inputs.own)),)
    return result


# ---- jvp -----------------------------------------------------------------------------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents): the Jacobian-vector product, with tangents shaped as
    primals (both tuples); with has_aux=True (output, jvp_out, aux). Computed by the
    double-backward trick: J v is the gradient of u -> <J^T u, v> with respect to u."""
    fn = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{fn}: Expected primals to be a tuple. E.g. it should be valid to "
                           f"call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{fn}: Expected tangents to be a tuple. E.g. it should be valid to "
                           f"call f(*tangents).")
    if strict:
        raise RuntimeError(f"{fn}: strict=True is not implemented (as in PyTorch)")
    p_leaves, p_spec = _pytree.flatten(primals)
    t_leaves, t_spec = _pytree.flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{fn}: Expected primals and tangents to have the same python "
                           f"structure; primals: {p_spec!r}, tangents: {t_spec!r}")
    for k, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        if not isinstance(t, Tensor) or not isinstance(p, Tensor) or t.shape != p.shape:
            got = tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__
            want = tuple(p.shape) if isinstance(p, Tensor) else type(p).__name__
            raise RuntimeError(f"{fn}: tangent {k} must be a Tensor of the primal's size "
                               f"{want}; got {got}")
    grad_outside = is_grad_enabled()
    with enable_grad():
        inputs = _Inputs(fn, primals, tuple(range(len(primals))))
        output, aux = _split_aux(fn, func(*inputs.args), has_aux)
        out_leaves, out_spec = _float_outputs(fn, output)
        outside = grad_outside and (_reaches_outside(out_leaves, inputs.own)
                                    or any(t.requires_grad for t in t_leaves))
        us = [zeros_like(o).requires_grad_(True) for o in out_leaves]
        back = _gradients(out_leaves, inputs.tensors, us, create_graph=True)
        pairs = [(b, t) for b, t in zip(back, t_leaves) if b.requires_grad]
        if pairs:
            forward = _autograd_grad([b for b, _ in pairs], us, [t for _, t in pairs],
                                     create_graph=outside, retain_graph=outside, allow_unused=True)
        else:
            forward = [None] * len(us)
        forward = [zeros_like(o) if f is None else f for f, o in zip(forward, out_leaves)]
    result = (_released(output, outside), _released(_pytree.unflatten(forward, out_spec), outside))
    if has_aux:
        aux_leaves = _pytree.flatten(aux)[0]
        return result + (_released(aux, outside and _reaches_outside(aux_leaves, inputs.own)),)
    return result


# ---- jacobians -----------------------------------------------------------------------------
def _jacobian(fn, func, argnums, has_aux, args, kwargs):
    grad_outside = is_grad_enabled()
    with enable_grad():
        inputs = _Inputs(fn, args, argnums)
        output, aux = _split_aux(fn, func(*inputs.args, **kwargs), has_aux)
        out_leaves, out_spec = _float_outputs(fn, output)
        keep = grad_outside and _reaches_outside(out_leaves, inputs.own)
        per_output = []
        for o in out_leaves:
            n = o.numel()
            if n:
                basis = eye(n, dtype=o.dtype, device=o.device).reshape((n,) + o.shape)
                rows = _gradients([o], inputs.tensors, [basis], create_graph=keep,
                                  retain_graph=True, batched=True)
            else:
                rows = [zeros((0,) + x.shape, dtype=x.dtype, device=x.device)
                        for x in inputs.tensors]
            per_output.append(inputs.shaped([r.reshape(o.shape + x.shape)
                                             for r, x in zip(rows, inputs.tensors)]))
    jac = _pytree.unflatten(per_output, out_spec)
    if has_aux:
        aux_leaves = _pytree.flatten(aux)[0]
        return jac, _released(aux, keep and _reaches_outside(aux_leaves, inputs.own))
    return jac


def _check_chunk_size(fn, chunk_size):
    if chunk_size is not None and (not isinstance(chunk_size, numbers.Integral)
                                   or isinstance(chunk_size, bool) or chunk_size <= 0):
        raise ValueError(f"{fn}: chunk_size should be None or greater than 0. (got {chunk_size})")


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of `func` with respect to its argument(s) at
    `argnums`, computed by reverse-mode walks (one batched walk per output): for an output
    leaf of shape S and an input leaf of shape T an entry of shape S + T, nested as the
    output, then as argnums (a tuple for a tuple argnums). With has_aux=True, (jacobian,
    aux). chunk_size is accepted and checked; every row is computed either way."""
    _check_chunk_size("jacrev", chunk_size)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _jacobian("jacrev(func, ...)(*args)", func, argnums, has_aux, args, kwargs)
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """As jacrev, with jacfwd's signature: the same Jacobian, nested the same way. minifw has
    no forward mode, so it is computed by the same reverse-mode walks. randomness ('error',
    'different', 'same') is checked; func runs once, so every choice gives one sample."""
    _check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _jacobian("jacfwd(func, ...)(*args)", func, argnums, has_aux, args, kwargs)
    return wrapper


def hessian(func, argnums=0):
    """A function returning the Hessian of `func` (a 0-d output) with respect to its
    argument(s) at `argnums`: jacfwd(jacrev(func, argnums), argnums)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- vmap ----------------------------------------------------------------------------------
def _check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def _name(func):
    return getattr(func, "__name__", repr(func))


def _in_dims(fn, in_dims, args):
    if isinstance(in_dims, numbers.Integral) and not isinstance(in_dims, bool):
        dims = [int(in_dims)] * len(_pytree.flatten(args)[0])
    elif isinstance(in_dims, tuple):
        dims = _pytree.broadcast_prefix(in_dims, args, fn, "in_dims")
    else:
        raise ValueError(f"{fn}: expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    leaves = _pytree.flatten(args)[0]
    sizes = []
    for leaf, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, numbers.Integral) or isinstance(d, bool):
            raise ValueError(f"{fn}: in_dims must be a (nested) tuple of ints or None; got "
                             f"in_dim={d!r} ({type(d).__name__}) for an input")
        if not isinstance(leaf, Tensor):
            raise ValueError(f"{fn}: Got in_dim={d} for an input but the input is of type "
                             f"{type(leaf)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        if not -leaf.dim() <= d < leaf.dim():
            raise ValueError(f"{fn}: Got in_dim={d} for some input, but that input is a Tensor "
                             f"of dimensionality {leaf.dim()} so expected in_dim to satisfy "
                             f"{-leaf.dim()} <= in_dim < {leaf.dim()}.")
        sizes.append(leaf.shape[d])
    if not sizes:
        raise ValueError(f"{fn}: at least one input must be batched (an in_dim that is not None "
                         f"for a Tensor); got in_dims={in_dims!r}")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return leaves, dims, sizes[0]


def _same_values(values):
    first = values[0]
    for v in values[1:]:
        if isinstance(first, Tensor):
            if not (isinstance(v, Tensor) and v.shape == first.shape
                    and bool((v.detach() == first.detach()).all())):
                return False
        elif v != first:
            return False
    return True


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """A function that maps `func` over a dimension of its inputs: in_dims says which
    dimension of each positional argument is the batch (an int for all, or a tuple matching
    the arguments' structure; None for an argument that is not batched; keyword arguments are
    never batched), out_dims where the batch dimension goes in each output (None for an output
    that does not depend on the batch). minifw has no batching rules: func runs once per batch
    entry on that entry's slices and the results are stacked, which gives PyTorch's values and
    gradients for functions built of per-example operations. randomness: 'error' (a draw from
    the default generator inside func is an error), 'different' (each entry draws its own),
    'same' (each entry sees the same random state). chunk_size is accepted and checked."""
    _check_randomness(randomness)
    _check_chunk_size("vmap", chunk_size)
    if not callable(func):
        raise RuntimeError(f"vmap: Expected `func` to be a callable; got {type(func).__name__}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        fn = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
        leaves, dims, size = _in_dims(fn, in_dims, args)
        spec = _pytree.flatten(args)[1]
        generator = _random.default_generator
        start = generator.get_state()
        if size == 0:
            return _vmap_empty(func, leaves, dims, spec, kwargs, out_dims, randomness)
        results = []
        for i in range(size):
            if randomness == "same":
                generator.set_state(start)
            before = generator.get_state() if randomness == "error" else None
            entry = [leaf if d is None else leaf.select(d, i) for leaf, d in zip(leaves, dims)]
            results.append(func(*_pytree.unflatten(entry, spec), **kwargs))
            if randomness == "error" and generator.get_state() != before:
                generator.set_state(before)
                raise RuntimeError("vmap: called random operation while in randomness error "
                                   "mode. Please either use the 'same' or 'different' "
                                   "randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return _stacked(func, results, out_dims)
    return wrapper


def _vmap_empty(func, leaves, dims, spec, kwargs, out_dims, randomness):
    """vmap over a mapped size of 0, as PyTorch's (which runs func once on batches of no
    entries): func runs once on stand-in entries (zeros of an entry's shape and dtype, still
    connected to the inputs) to learn its outputs' structure and shapes, and every mapped output
    is an empty stack of that shape. A random draw is refused in 'error' mode and otherwise
    leaves the generator as it was (no entry drew anything)."""
    generator = _random.default_generator
    before = generator.get_state()
    entry = []
    for leaf, d in zip(leaves, dims):
        if d is not None:  # the sum over an empty dim: zeros of an entry's shape
            stand_in = leaf.sum(d)
            leaf = stand_in if stand_in.dtype == leaf.dtype else stand_in.to(leaf.dtype)
        entry.append(leaf)
    result = func(*_pytree.unflatten(entry, spec), **kwargs)
    drew = generator.get_state() != before
    generator.set_state(before)
    if drew and randomness == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please "
                           "either use the 'same' or 'different' randomness flags on vmap or "
                           "perform the randomness operation out of vmap")
    return _stacked(func, [result], out_dims, empty=True)


def _stacked(func, results, out_dims, empty=False):
    fn = f"vmap({_name(func)}, ...)"
    flats = [_pytree.flatten(r) for r in results]
    out_spec = flats[0][1]
    if any(s != out_spec for _, s in flats):
        raise ValueError(f"{fn}: `{_name(func)}` returned outputs of different structures for "
                         f"different batch entries")
    if isinstance(out_dims, numbers.Integral) and not isinstance(out_dims, bool):
        dims = [int(out_dims)] * out_spec.num_leaves
    elif out_dims is None:
        dims = [None] * out_spec.num_leaves
    elif isinstance(out_dims, (tuple, list, dict)):
        dims = _pytree.broadcast_prefix(out_dims, results[0], fn, "out_dims")
    else:
        raise ValueError(f"{fn}: out_dims must be an int, None or a tuple (or dict) matching the "
                         f"structure of the outputs; got {type(out_dims)}")
    stacked = []
    for j, d in enumerate(dims):
        values = [leaves[j] for leaves, _ in flats]
        if d is None:
            if not _same_values(values):
                raise ValueError(f"{fn}: `{_name(func)}` can not return a BatchedTensor when "
                                 f"out_dim is None (output {j} differs between batch entries)")
            stacked.append(values[0])
            continue
        if not isinstance(values[0], Tensor):
            raise ValueError(f"{fn}: `{_name(func)}` must only return Tensors, got type "
                             f"{type(values[0])}. Did you mean to set out_dims= to None for "
                             f"output?")
        rank = values[0].dim() + 1
        if not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-rank}, {rank - 1}], but got {d})")
        out = stack(values, dim=d)
        stacked.append(out.narrow(d, 0, 0) if empty else out)  # (no batch entries)
    return _pytree.unflatten(stacked, out_spec)
