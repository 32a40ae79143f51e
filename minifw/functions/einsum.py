"""Einstein summation (torch.einsum): the equation parsed into one letter per dim, the
forward one NumPy/CuPy einsum, and each operand's gradient another einsum of the output's
gradient with the other operands, its subscripts moved to the output side."""
import string

import numpy as np

from .. import devices
from ..autograd import Function, storage
from .elementwise import unbroadcast
from .shape import IndexScatter

LETTERS = string.ascii_uppercase + string.ascii_lowercase  # PyTorch's [a-zA-Z], in ASCII order


def parse_equation(fn, equation, shapes):
    """(inputs, output, sizes) of `equation` for operands of `shapes`: one subscript string
    per operand and the output's, '...' replaced by letters the equation does not use
    (right-aligned, so operands with fewer dims broadcast as PyTorch's), and the size of
    every letter (a size-1 dim broadcasts against a larger one, as in PyTorch)."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) < len(shapes):
        raise ValueError(f"{fn}: more operands were provided ({len(shapes)}) than specified in the "
                         f"equation {equation!r} ({len(terms)})")
    if len(terms) > len(shapes):
        raise ValueError(f"{fn}: fewer operands were provided ({len(shapes)}) than specified in the "
                         f"equation {equation!r} ({len(terms)})")
    for term in terms + ([rhs] if arrow else []):
        for c in term.replace("...", ""):
            if c == ".":
                raise ValueError(f"{fn}: found '.' in the equation {equation!r} that is not part "
                                 f"of an ellipsis '...'")
            if c not in LETTERS:
                raise ValueError(f"{fn}: invalid subscript {c!r} in the equation {equation!r}; "
                                 f"subscripts must be in [a-zA-Z]")
        if term.count("...") > 1:
            raise ValueError(f"{fn}: an operand (or the output) of the equation {equation!r} has "
                             f"more than one ellipsis '...'")
    used = set(equation) & set(LETTERS)
    free = [c for c in LETTERS if c not in used]
    ellipsis_dims = 0
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        named = len(term.replace("...", ""))
        if "..." in term:
            if named > len(shape):
                raise ValueError(f"{fn}: operand {i} has {len(shape)} dims (shape {tuple(shape)}), "
                                 f"fewer than the {named} subscripts of {term!r}")
            ellipsis_dims = max(ellipsis_dims, len(shape) - named)
        elif named != len(shape):
            raise ValueError(f"{fn}: the number of subscripts in {term!r} ({named}) does not match "
                             f"the number of dims ({len(shape)}) of operand {i} of shape "
                             f"{tuple(shape)}, and no ellipsis was given")
    if ellipsis_dims > len(free):
        raise ValueError(f"{fn}: the equation {equation!r} leaves too few unused letters for the "
                         f"{ellipsis_dims} dims its ellipsis stands for")
    ellipsis = "".join(free[:ellipsis_dims])

    inputs = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            n = len(shape) - len(term.replace("...", ""))
            term = term.replace("...", ellipsis[ellipsis_dims - n:])
        inputs.append(term)
    if arrow:
        output = rhs.replace("...", ellipsis)
        for c in output:
            if output.count(c) > 1:
                raise ValueError(f"{fn}: output subscript {c!r} appears more than once in "
                                 f"{rhs!r}")
            if not any(c in term for term in inputs):
                raise ValueError(f"{fn}: output subscript {c!r} does not appear in the equation "
                                 f"for any operand")
    else:  # implicit: the ellipsis' dims, then the letters seen once, in alphabetical order
        counts = "".join(inputs)
        output = ellipsis + "".join(sorted(c for c in set(counts)
                                           if counts.count(c) == 1 and c not in ellipsis))

    sizes = {}
    for i, (term, shape) in enumerate(zip(inputs, shapes)):
        own = {}
        for c, n in zip(term, shape):
            if own.setdefault(c, n) != n:
                raise ValueError(f"{fn}: subscript {c!r} is repeated for operand {i} but the "
                                 f"sizes don't match, {own[c]} != {n}")
            seen = sizes.get(c, 1)
            if n != seen and 1 not in (n, seen):
                raise ValueError(f"{fn}: subscript {c!r} has size {n} for operand {i}, which "
                                 f"does not broadcast with the size {seen} seen before")
            sizes[c] = max(n, seen) if n and seen else 0
    return inputs, output, sizes


def _einsum(inputs, output, arrays):
    spec = ",".join(inputs) + "->" + output
    # optimize: contractions of two or more operands go through tensordot (a BLAS GEMM)
    return np.einsum(spec, *arrays, optimize=len(arrays) > 1)


def _diagonal_index(term, dev):
    """The advanced index that writes an array over the unique letters of `term` (in order of
    first appearance) onto the diagonal(s) its repeated letters name."""
    unique = "".join(dict.fromkeys(term))
    return unique, lambda sizes: tuple(
        devices.to_device(np.arange(sizes[c]).reshape(
            [sizes[c] if u == c else 1 for u in unique]), dev) for c in term)


class Einsum(Function):
    """The sum of the products of the operands' elements over the letters that the output
    lacks (torch.einsum), on the subscripts parse_equation made."""

    @staticmethod
    def forward(ctx, *arrays, inputs, output, sizes):
        out = _einsum(inputs, output, [_expanded(a, term, sizes) for a, term in zip(arrays, inputs)])
        if out.base is not None and any(storage(out) is storage(a) for a in arrays):
            out = out.copy()  # NumPy answers 'ij->ji' with a view of the operand
        # the operands as they came (expanded again by backward): their own arrays, so that
        # create_graph=True finds them in the graph
        ctx.save_for_backward(*(a if any(ctx.needs_input_grad[:i] + ctx.needs_input_grad[i + 1:])
                                else None for i, a in enumerate(arrays)))
        ctx.args = inputs, output, sizes, [a.shape for a in arrays]
        return out

    @staticmethod
    def backward(ctx, g):
        inputs, output, sizes, shapes = ctx.args
        saved = [None if a is None else _expanded(a, term, sizes)
                 for a, term in zip(ctx.saved_tensors, inputs)]
        grads = []
        for i, (term, shape) in enumerate(zip(inputs, shapes)):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            unique, diagonal = _diagonal_index(term, devices.of(g))
            others = [t for j, t in enumerate(inputs) if j != i]
            reachable = set(output).union(*others)
            present = "".join(c for c in unique if c in reachable)
            grad = _einsum([output] + others, present,
                           [g] + [a for j, a in enumerate(saved) if j != i])
            if present != unique:  # letters only this operand has: summed, so the gradient spreads
                grad = devices.broadcast_to(grad.reshape([sizes[c] if c in present else 1 for c in unique]),
                                            tuple(sizes[c] for c in unique)).copy()
            if unique != term:  # a repeated letter: the gradient lies on the diagonal
                full = devices.zeros(tuple(sizes[c] for c in term), g.dtype, devices.of(g))
                full[diagonal(sizes)] = grad
                grad = full
            grads.append(unbroadcast(grad, shape))
        return tuple(grads)

    @staticmethod
    def backward_graph(ctx, g):
        saved = ctx.saved_tensors
        inputs, output, sizes, shapes = ctx.args
        grads = []
        for i, (term, shape) in enumerate(zip(inputs, shapes)):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            unique, diagonal = _diagonal_index(term, devices.of(g._data))
            others = [t for j, t in enumerate(inputs) if j != i]
            reachable = set(output).union(*others)
            present = "".join(c for c in unique if c in reachable)
            grad = Einsum.apply(g, *[a for j, a in enumerate(saved) if j != i],
                                inputs=[output] + others, output=present, sizes=sizes)
            if present != unique:
                grad = grad.reshape([sizes[c] if c in present else 1 for c in unique]).expand(
                    *(sizes[c] for c in unique))
            if unique != term:
                grad = IndexScatter.apply(grad, shape=tuple(sizes[c] for c in term),
                                          index=diagonal(sizes))
            grads.append(unbroadcast(grad, shape))
        return tuple(grads)


def _expanded(a, term, sizes):
    """An operand broadcast to the sizes of its letters (a view)."""
    shape = tuple(sizes[c] for c in term)
    return a if a.shape == shape else devices.broadcast_to(a, shape)
