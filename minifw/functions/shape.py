"""Shape changes and indexing: reshape, permute, expand, index, flip, roll, diag, cat, stack,
split, repeat, pad, and diagonals along any two dims (taken out or embedded)."""
import itertools

import numpy as np

from .. import devices
from ..autograd import Function
from .elementwise import unbroadcast


class Reshape(Function):
    @staticmethod
    def forward(ctx, a, *, shape):
        ctx.shape = a.shape
        return a.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape)

    backward_graph = backward


class Permute(Function):
    @staticmethod
    def forward(ctx, a, *, dims):
        ctx.dims = dims
        return np.transpose(a, dims)

    @staticmethod
    def backward(ctx, g):
        return np.transpose(g, tuple(int(d) for d in np.argsort(ctx.dims)))

    @staticmethod
    def backward_graph(ctx, g):
        return g.permute(*(int(d) for d in np.argsort(ctx.dims)))


class Expand(Function):
    @staticmethod
    def forward(ctx, a, *, shape):
        ctx.shape = a.shape
        return devices.broadcast_to(a, shape)  # a view, on a's device

    @staticmethod
    def backward(ctx, g):
        return unbroadcast(g, ctx.shape)

    backward_graph = backward


def _is_basic_index(index):
    """True when `index` only slices (ints, slices, None, Ellipsis): every element
    is picked at most once, so the backward can assign instead of scatter-add."""
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice)) for i in items)


def _is_int(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_bool_scalar(i):
    """A Python or NumPy bool, or a 0-d bool array: for PyTorch an index array over a new dim
    of size 1, holding [0] when True and nothing when False."""
    return isinstance(i, (bool, np.bool_)) or (devices.is_array(i) and i.ndim == 0
                                                and i.dtype == np.bool_)


def torch_order(index, shape):
    """`index` (NumPy's items: ints, slices, None, Ellipsis, arrays, bools) for an array of
    `shape`, as an index that puts the result's dims where PyTorch puts them. PyTorch applies
    an int as a select before the advanced indexing, so ints do not separate index arrays:
    x[0, :, [1, 2]] is (x[0])[:, [1, 2]], of shape (x.shape[1], 2), where NumPy, taking
    the int as advanced too, puts the indexed dim first; nor does an Ellipsis that stands
    for no dims (NumPy's arrays then go first). A bool mask stands for the int arrays of its
    True elements' positions, and a bool scalar (True, False, a 0-d bool array) for an index
    array over a new dim of size 1, so both are advanced for PyTorch as for NumPy. Where the
    two placements differ, every item becomes an index array, shaped so that their broadcast
    is PyTorch's result; elsewhere `index` is returned as it is."""
    if not isinstance(index, tuple):
        return index
    arrays, ints, flags = [], [], []
    for k, i in enumerate(index):  # one pass: most indices are slices and ints alone
        kind = type(i)
        if kind is slice or i is None or i is Ellipsis:
            continue
        if kind is int:
            ints.append(k)
        elif isinstance(i, list):  # as the arrays NumPy makes of them
            listed = tuple(np.asarray(i, dtype=np.int64 if len(i) == 0 else None)
                           if isinstance(i, list) else i for i in index)
            converted = torch_order(listed, shape)
            return index if converted is listed else converted
        elif _is_bool_scalar(i):
            flags.append(k)
        elif devices.is_array(i):
            (arrays if i.ndim else ints).append(k)
        elif _is_int(i):
            ints.append(k)
    advanced = sorted(arrays + flags)  # PyTorch's advanced items
    if not advanced:
        return index
    numpys = sorted(advanced + ints)  # NumPy's: ints too
    if numpys[-1] - numpys[0] == len(numpys) - 1:
        return index  # adjacent for NumPy too: the same placement
    consumed = sum(0 if k in flags else i.ndim if devices.is_array(i) and i.dtype == np.bool_
                   else 1 for k, i in enumerate(index) if i is not None and i is not Ellipsis)
    # for PyTorch, neither an int nor an Ellipsis that stands for no dims separates arrays
    between = [k for k in range(advanced[0], advanced[-1]) if k not in advanced and k not in ints
               and not (index[k] is Ellipsis and consumed == len(shape))]
    if between:
        return index  # a slice or None between the arrays: their dims go first for both
    if all(i is Ellipsis and consumed == len(shape) or k in ints
           for k, i in enumerate(index[:advanced[0]])):
        return index  # no dims before PyTorch's arrays: their dims go first for both
    dev = devices.of(next((i for i in index if devices.is_array(i)), np.empty(0)))
    items, scalars = [], []
    for k, i in enumerate(index):  # a bool array as the int arrays of its True elements' positions
        if k in flags:
            scalars.append(np.zeros(int(bool(i)), dtype=np.int64))  # over no dim of `shape`
            items.append(scalars[-1])
        elif devices.is_array(i) and i.dtype == np.bool_:
            items.append((i.shape, tuple(devices.to_device(i, devices.CPU).nonzero())))
        elif devices.is_array(i) and i.ndim == 0:
            items.append(int(i))
        elif devices.is_array(i):
            items.append(devices.to_device(i, devices.CPU))
        else:
            items.append(i)
    if any(i is Ellipsis for i in items):
        e = next(k for k, i in enumerate(items) if i is Ellipsis)
        items[e:e + 1] = [slice(None)] * (len(shape) - consumed)
    picks = [a for i in items for a in (i[1] if isinstance(i, tuple) else (i,))
             if isinstance(a, np.ndarray)]
    block = np.broadcast_shapes(*(a.shape for a in picks))
    # the result's dims in PyTorch's order: one for each slice and None, and the arrays'
    # broadcast block where the first array stands
    rank, at, block_at = 0, [], None
    for i in items:
        if block_at is None and isinstance(i, (np.ndarray, tuple)):
            block_at, rank = rank, rank + len(block)
        at.append(rank)
        if isinstance(i, slice) or i is None:
            rank += 1
    out, dim = [], 0
    for i, r in zip(items, at):
        if i is None or any(i is a for a in scalars):  # neither picks along a dim of `shape`
            continue
        if isinstance(i, tuple):
            mask, i = i
            if mask != tuple(shape[dim:dim + len(mask)]):
                raise IndexError(f"the shape of the mask {list(mask)} does not match the shape "
                                 f"{list(shape[dim:dim + len(mask)])} of the indexed dims, "
                                 f"starting at dim {dim}")
        for a in (i if isinstance(i, tuple) else (i,)):
            if isinstance(a, slice):
                s = np.arange(*a.indices(shape[dim]))
                out.append(s.reshape((1,) * r + s.shape + (1,) * (rank - r - 1)))
            elif isinstance(a, np.ndarray):
                lead = (1,) * (block_at + len(block) - a.ndim)
                out.append(a.reshape(lead + a.shape + (1,) * (rank - len(lead) - a.ndim)))
            else:
                out.append(int(a))
            dim += 1
    # a None's dim is 1 in every array, but a bool scalar's size (1 or 0) and the block's are
    # in no array when no other array is broadcast with them: one array, broadcast to the
    # result's shape (a view), or an int as such an array, holds them
    target = np.broadcast_shapes((1,) * block_at + block + (1,) * (rank - block_at - len(block)),
                                 *(a.shape for a in out if isinstance(a, np.ndarray)))
    held = [k for k, a in enumerate(out) if isinstance(a, np.ndarray)] or \
        [k for k, a in enumerate(out)]
    if held and (not isinstance(out[held[0]], np.ndarray) or
                 np.broadcast_shapes(*(a.shape for a in out if isinstance(a, np.ndarray))) != target):
        out[held[0]] = np.broadcast_to(np.asarray(out[held[0]], dtype=np.int64), target)
    # (with neither, the tensor is 0-d and every item None, an Ellipsis or a bool scalar: NumPy's
    # index, which puts the bool scalars' dims first, is the nearest there is)
    return tuple(devices.to_device(a, dev) if isinstance(a, np.ndarray) else a for a in out) \
        if held else index


def basic_view(a, index):
    """a[index] for a basic index, always a view: a trailing Ellipsis changes nothing but makes
    NumPy return a 0-d view rather than a scalar copy when every dim gets an int."""
    items = index if isinstance(index, tuple) else (index,)
    return a[items if any(i is Ellipsis for i in items) else items + (Ellipsis,)]


def _gather(a, index):
    return basic_view(a, index) if _is_basic_index(index) else a[index]  # x[0] views x


def _scatter(g, shape, index):
    """Zeros of `shape` with g put at `index`: the adjoint of a[index]."""
    dx = devices.zeros(shape, g.dtype, devices.of(g))
    if _is_basic_index(index):
        dx[index] = g
    else:
        # an element may be picked several times
        devices.ufunc_at(np.add, dx, devices.index_on(index, devices.of(g)), g)
    return dx


class Index(Function):
    @staticmethod
    def forward(ctx, a, *, index):
        ctx.args = a.shape, index
        return _gather(a, index)

    @staticmethod
    def backward(ctx, g):
        return _scatter(g, *ctx.args)

    @staticmethod
    def backward_graph(ctx, g):
        shape, index = ctx.args
        return IndexScatter.apply(g, shape=shape, index=index)


class IndexScatter(Function):
    """Index's gradient as a Function of its own, for second derivatives: zeros of `shape`
    with g put at `index` (added where an advanced index picks an element more than once).
    Its gradient is indexing again: the two are each other's adjoints."""

    @staticmethod
    def forward(ctx, g, *, shape, index):
        ctx.index = index
        return _scatter(g, shape, index)

    @staticmethod
    def backward(ctx, dx):
        return _gather(dx, ctx.index)

    @staticmethod
    def backward_graph(ctx, dx):
        return Index.apply(dx, index=ctx.index)


class Unfold(Function):
    """Every window of `size` elements along `dim`, `step` apart, as a new last dim: a view
    of a's memory (torch.Tensor.unfold), windows overlapping where step < size."""

    @staticmethod
    def forward(ctx, a, *, dim, size, step):
        ctx.args = a.shape, dim, size, step
        windows = (a.shape[dim] - size) // step + 1
        shape = a.shape[:dim] + (windows,) + a.shape[dim + 1:] + (size,)
        strides = a.strides[:dim] + (a.strides[dim] * step,) + a.strides[dim + 1:] + (a.strides[dim],)
        if type(a) is np.ndarray or devices.of(a).type != "cuda":  # host memory; "cudasim" keeps its type
            return np.lib.stride_tricks.as_strided(a, shape, strides, subok=True)
        return devices.array_module(devices.of(a)).lib.stride_tricks.as_strided(a, shape, strides)

    @staticmethod
    def backward(ctx, g):
        shape, dim, size, step = ctx.args
        dx = devices.zeros(shape, g.dtype, devices.of(g))
        windows = g.shape[dim]
        for k in range(size):  # the k-th element of every window, added where it came from
            at = (slice(None),) * dim + (slice(k, k + step * (windows - 1) + 1, step),)
            dx[at] += g[..., k]
        return dx


class Flip(Function):
    """The order of the elements reversed along `dims` (a copy, as torch.flip)."""

    @staticmethod
    def forward(ctx, a, *, dims):
        ctx.dims = dims
        return np.flip(a, dims).copy()

    @staticmethod
    def backward(ctx, g):
        return np.flip(g, ctx.dims).copy()

    @staticmethod
    def backward_graph(ctx, g):
        return g.flip(ctx.dims)


class Roll(Function):
    """The elements shifted cyclically by `shifts` along `axes` (torch.roll; axes None: the
    flattened array)."""

    @staticmethod
    def forward(ctx, a, *, shifts, axes):
        ctx.args = shifts, axes
        return np.roll(a, shifts, axes)

    @staticmethod
    def backward(ctx, g):
        shifts, axes = ctx.args
        back = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
        return np.roll(g, back, axes)

    @staticmethod
    def backward_graph(ctx, g):
        shifts, axes = ctx.args
        back = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
        return Roll.apply(g, shifts=back, axes=axes)


class Diagonal(Function):
    """A matrix's `offset` diagonal as a vector, or a vector as the `offset` diagonal of a
    square matrix (torch.diag)."""

    @staticmethod
    def forward(ctx, a, *, offset):
        ctx.shape, ctx.offset = a.shape, offset
        return np.diag(a, offset).copy()

    @staticmethod
    def backward(ctx, g):
        if len(ctx.shape) == 1:  # the vector became a diagonal: read it back
            return np.diag(g, ctx.offset).copy()
        dx = devices.zeros(ctx.shape, g.dtype, devices.of(g))
        rows = np.arange(g.shape[0]) + max(-ctx.offset, 0)
        devices.assign(dx, devices.index_on((rows, rows + ctx.offset), devices.of(g)), g)
        return dx

    @staticmethod
    def backward_graph(ctx, g):
        if len(ctx.shape) == 1:
            return Diagonal.apply(g, offset=ctx.offset)
        rows = np.arange(g.shape[0]) + max(-ctx.offset, 0)
        return IndexScatter.apply(g, shape=ctx.shape,
                                  index=devices.index_on((rows, rows + ctx.offset), devices.of(g._data)))


class Cat(Function):
    @staticmethod
    def forward(ctx, *arrays, dim=0):
        ctx.dim = dim
        # Python ints: every array library (CuPy too) splits by them
        ctx.splits = [int(v) for v in np.cumsum([a.shape[dim] for a in arrays])[:-1]]
        return np.concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return tuple(np.split(g, ctx.splits, axis=ctx.dim))

    @staticmethod
    def backward_graph(ctx, g):
        ends = ctx.splits + [g.shape[ctx.dim]]
        return Split.apply(g, sizes=[end - start for start, end in zip([0] + ctx.splits, ends)],
                           dim=ctx.dim)


class Stack(Function):
    @staticmethod
    def forward(ctx, *arrays, dim=0):
        ctx.dim = dim
        return np.stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return tuple(np.moveaxis(g, ctx.dim, 0))

    @staticmethod
    def backward_graph(ctx, g):
        return tuple(g.unbind(ctx.dim))


class Split(Function):
    """Views of consecutive pieces of `sizes` elements along `dim` (split, chunk, unbind): one
    node for all of them, whose gradient joins the pieces' gradients."""

    @staticmethod
    def forward(ctx, a, *, sizes, dim):
        ctx.dim = dim
        ends = list(itertools.accumulate(sizes))
        return tuple(a[(slice(None),) * dim + (slice(end - n, end),)] for n, end in zip(sizes, ends))

    @staticmethod
    def backward(ctx, *grads):
        return np.concatenate(grads, axis=ctx.dim)

    @staticmethod
    def backward_graph(ctx, *grads):
        return Cat.apply(*grads, dim=ctx.dim)


class Repeat(Function):
    """a tiled reps[i] times along dim i (a first gets leading dims of size 1 up to
    len(reps)), as torch.Tensor.repeat and np.tile."""

    @staticmethod
    def forward(ctx, a, *, reps):
        ctx.args = a.shape, reps
        return np.tile(a, reps)

    @staticmethod
    def backward(ctx, g):
        shape, reps = ctx.args
        padded = (1,) * (len(reps) - len(shape)) + tuple(shape)
        # (r0 * n0, r1 * n1, ...) -> (r0, n0, r1, n1, ...): each copy gets its own axis to sum
        split = tuple(x for r, n in zip(reps, padded) for x in (r, n))
        return g.reshape(split).sum(axis=tuple(range(0, 2 * len(reps), 2))).reshape(shape)

    @staticmethod
    def backward_graph(ctx, g):
        shape, reps = ctx.args
        padded = (1,) * (len(reps) - len(shape)) + tuple(shape)
        split = tuple(x for r, n in zip(reps, padded) for x in (r, n))
        return g.reshape(split).sum(tuple(range(0, 2 * len(reps), 2))).reshape(shape)


class Padding(Function):
    """Pad (or crop, with negative amounts) trailing dims. Each padded axis is a gather
    from the input axis: `sources[i]` is the input index feeding output i (-1: the fill value)."""

    @staticmethod
    def forward(ctx, x, *, sources, value=0.0):
        out = x
        sources = [(axis, devices.to_device(src, devices.of(x))) for axis, src in sources]
        for axis, src in sources:
            if out.shape[axis]:
                out = np.take(out, np.maximum(src, 0), axis=axis)
            else:  # an empty axis padded with the fill value: nothing to gather
                out = devices.zeros(out.shape[:axis] + (len(src),) + out.shape[axis + 1:], out.dtype,
                                    devices.of(out))
            if (src < 0).any():
                where = [slice(None)] * out.ndim
                where[axis] = src < 0
                out[tuple(where)] = value
        ctx.args = x.shape, sources
        return out

    @staticmethod
    def steps_back(shape, sources):
        """(axis, source indices, shape before that gather) of each gather, last first."""
        sizes = list(shape)
        intermediate = []  # the shape before each gather
        for axis, src in sources:
            intermediate.append(tuple(sizes))
            sizes[axis] = len(src)
        return [(axis, src, before) for (axis, src), before in reversed(list(zip(sources, intermediate)))]

    @staticmethod
    def backward_graph(ctx, g):
        for axis, src, before in Padding.steps_back(*ctx.args):
            keep = src >= 0
            lead = (slice(None),) * axis
            g = IndexScatter.apply(Index.apply(g, index=lead + (np.flatnonzero(keep),)),
                                   shape=before, index=lead + (src[keep],))
        return g

    @staticmethod
    def backward(ctx, g):
        for axis, src, before in Padding.steps_back(*ctx.args):
            keep = src >= 0
            dx = devices.zeros(before, g.dtype, devices.of(g))
            # (an input may feed several outputs: reflect, replicate, circular padding)
            devices.ufunc_at(np.add, dx, (slice(None),) * axis + (src[keep],), np.compress(keep, g, axis=axis))
            g = dx
        return g


def _diagonal_places(n_rows, n_cols, offset, dev):
    """(rows, cols) of the `offset` diagonal of an n_rows x n_cols matrix, on `dev`."""
    start_row, start_col = max(-offset, 0), max(offset, 0)
    length = max(min(n_rows - start_row, n_cols - start_col), 0)
    rows = np.arange(start_row, start_row + length)
    return devices.to_device(rows, dev), devices.to_device(rows + (start_col - start_row), dev)


class DiagonalAlong(Function):
    """The `offset` diagonal of the matrices spanned by dims dim1 and dim2, as a last dim (a
    copy, as torch.diagonal's values)."""

    @staticmethod
    def forward(ctx, a, *, offset, dim1, dim2):
        ctx.args = a.shape, offset, dim1, dim2
        return np.diagonal(a, offset, dim1, dim2).copy()

    @staticmethod
    def backward(ctx, g):
        shape, offset, dim1, dim2 = ctx.args
        dx = devices.zeros(shape, g.dtype, devices.of(g))
        rows, cols = _diagonal_places(shape[dim1], shape[dim2], offset, devices.of(g))
        np.moveaxis(dx, (dim1, dim2), (-2, -1))[..., rows, cols] = g  # a view of dx
        return dx

    @staticmethod
    def backward_graph(ctx, g):
        shape, offset, dim1, dim2 = ctx.args
        rows, cols = _diagonal_places(shape[dim1], shape[dim2], offset, devices.of(g._data))
        moved = [n for d, n in enumerate(shape) if d not in (dim1 % len(shape), dim2 % len(shape))]
        moved += [shape[dim1], shape[dim2]]
        dx = IndexScatter.apply(g, shape=tuple(moved), index=(Ellipsis, rows, cols))
        return dx.movedim((-2, -1), (dim1, dim2))


class DiagonalEmbed(Function):
    """The last dim of `a` written on the `offset` diagonal of new matrices spanned by dims
    dim1 and dim2 of the result, zeros elsewhere (torch.diag_embed)."""

    @staticmethod
    def forward(ctx, a, *, offset, dim1, dim2):
        n = a.shape[-1] + abs(offset)
        out = devices.zeros(a.shape[:-1] + (n, n), a.dtype, devices.of(a))
        rows, cols = _diagonal_places(n, n, offset, devices.of(a))
        out[..., rows, cols] = a
        ctx.args = offset, dim1, dim2, n
        return np.moveaxis(out, (-2, -1), (dim1, dim2)).copy()

    @staticmethod
    def backward(ctx, g):
        offset, dim1, dim2, n = ctx.args
        rows, cols = _diagonal_places(n, n, offset, devices.of(g))
        return np.moveaxis(g, (dim1, dim2), (-2, -1))[..., rows, cols]

    @staticmethod
    def backward_graph(ctx, g):
        offset, dim1, dim2, n = ctx.args
        rows, cols = _diagonal_places(n, n, offset, devices.of(g._data))
        return Index.apply(g.movedim((dim1, dim2), (-2, -1)), index=(Ellipsis, rows, cols))

