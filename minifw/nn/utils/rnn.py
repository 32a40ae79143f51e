"""Variable-length sequences for recurrent layers, as torch.nn.utils.rnn.

A PackedSequence holds a batch of sequences of different lengths without padding,
time-major: `data` is every sequence's step 0 (longest sequence first), then every
step 1 of the sequences that are that long, and so on; `batch_sizes[t]` is how many
sequences have a step t. Every function here is built from differentiable Tensor
indexing and joining, so gradients flow through packing and padding.
"""
import collections
import numbers

import numpy as np

from ...tensor import Tensor, cat, full, tensor


def _as_lengths(fn, lengths, truncate=False):
    """lengths (a list or an int64 Tensor) -> a 1-D int64 array. With truncate (what
    pack_padded_sequence does, as PyTorch converts its lengths to int64), bool and float
    lengths are taken too, floats truncated toward zero (2.7 -> 2); a NaN or infinite length,
    or one beyond int64, is refused."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.kind not in ("iubf" if truncate else "iu"):
            raise TypeError(f"{fn}: lengths must hold integers, got a {lengths.dtype} tensor")
        if lengths.device != "cpu":  # as PyTorch: lengths are read on the host
            raise RuntimeError(f"{fn}: 'lengths' must be a list or a 1-D CPU int64 tensor, got a "
                               f"tensor on {lengths.device}; pass lengths.cpu()")
        a = lengths.numpy()
    else:
        a = np.asarray(lengths)
        if a.size and not (np.issubdtype(a.dtype, np.integer)
                           or truncate and a.dtype.kind in "bf"):
            wanted = "numbers (ints, or floats, which are truncated)" if truncate else "ints"
            raise TypeError(f"{fn}: lengths must be a list of {wanted} or an int64 tensor, got "
                            f"{lengths!r}")
    if a.ndim != 1:
        raise ValueError(f"{fn}: lengths must be 1-D (one length per sequence); got {a.ndim}-D "
                         f"lengths of shape {a.shape}")
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or np.any(np.abs(a) >= 2.0 ** 63):
            raise ValueError(f"{fn}: lengths must be finite numbers within int64's range (floats "
                             f"are truncated to int64), got {a.tolist()}")
        a = np.trunc(a)
    return a.astype(np.int64)


def _check_indices(fn, name, indices, batch):
    """sorted_indices / unsorted_indices: None, or a 1-D int64 tensor holding a permutation of
    range(batch) (batch None: of range(its length)); returns it as a host array (or None)."""
    if indices is None:
        return None
    if not isinstance(indices, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor or None, got {type(indices).__name__}")
    if indices.dtype != np.int64 or indices.ndim != 1:
        raise TypeError(f"{fn}: {name} must be a 1-D int64 tensor, got a {indices.ndim}-D "
                        f"{indices.dtype} tensor")
    p = indices.cpu().numpy()
    if batch is not None and p.size != batch:
        raise ValueError(f"{fn}: {name} must have one entry per sequence, batch_sizes[0] = {batch}; "
                         f"got {p.size} entries")
    if p.size and not np.array_equal(np.sort(p), np.arange(p.size)):
        raise ValueError(f"{fn}: {name} must be a permutation of range({p.size}) (each sequence's "
                         f"index exactly once); got {p.tolist()}")
    return p


def _check_packed(fn, data, batch_sizes, sorted_indices, unsorted_indices):
    """A PackedSequence's fields must describe a packed batch: batch_sizes a non-empty 1-D
    int64 CPU tensor of counts >= 1 that never increase (longest sequence first) and add up
    to data's rows; the index tensors permutations of range(batch_sizes[0]), inverse of each
    other. (Refused here rather than read wrong: pad_packed_sequence would invent padding
    rows or drop data, and the recurrent layers run on them.)"""
    if not isinstance(data, Tensor):
        raise TypeError(f"{fn}: data must be a Tensor, got {type(data).__name__}")
    if not isinstance(batch_sizes, Tensor):
        raise TypeError(f"{fn}: batch_sizes must be a Tensor, got {type(batch_sizes).__name__}")
    if batch_sizes.dtype != np.int64 or batch_sizes.ndim != 1:
        raise TypeError(f"{fn}: batch_sizes must be a 1-D int64 tensor, got a "
                        f"{batch_sizes.ndim}-D {batch_sizes.dtype} tensor")
    if batch_sizes.device != "cpu":
        raise ValueError(f"{fn}: batch_sizes must be on the CPU, got a tensor on "
                         f"{batch_sizes.device}")
    if data.ndim < 1:
        raise ValueError(f"{fn}: data must have at least 1 dim (one row per packed step of a "
                         f"sequence), got a 0-d tensor")
    sizes = batch_sizes.numpy()
    if sizes.size == 0:
        raise ValueError(f"{fn}: batch_sizes must not be empty (a packed batch has at least one "
                         f"step)")
    if sizes.min() < 1:
        raise ValueError(f"{fn}: batch_sizes must all be >= 1 (the number of sequences at each "
                         f"step), got {sizes.tolist()}")
    if np.any(sizes[1:] > sizes[:-1]):
        raise ValueError(f"{fn}: batch_sizes must be non-increasing (sequences sorted longest "
                         f"first), got {sizes.tolist()}")
    total = int(sizes.sum())
    if total != data.shape[0]:
        raise ValueError(f"{fn}: batch_sizes must add up to data's rows: sum({sizes.tolist()}) = "
                         f"{total}, but data has shape {tuple(data.shape)}")
    batch = int(sizes[0])
    order = _check_indices(fn, "sorted_indices", sorted_indices, batch)
    inverse = _check_indices(fn, "unsorted_indices", unsorted_indices, batch)
    if inverse is not None:
        expected = np.arange(batch) if order is None else order
        if not np.array_equal(expected[inverse], np.arange(batch)):
            raise ValueError(f"{fn}: unsorted_indices must be the inverse permutation of "
                             f"sorted_indices ({'None: the identity' if order is None else order.tolist()}"
                             f"), got {inverse.tolist()}")


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (an int64 Tensor), or None for None."""
    if permutation is None:
        return None
    p = permutation.cpu().numpy()
    inverse = np.empty_like(p)
    inverse[p] = np.arange(p.size, dtype=p.dtype)
    return tensor(inverse, device=permutation.device)


_PackedSequenceFields = collections.namedtuple(
    "PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceFields):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as torch's PackedSequence.

    Make one with pack_padded_sequence or pack_sequence. sorted_indices[i] is the batch
    entry that went to position i when the sequences were sorted by length (None: they
    were given sorted); unsorted_indices is its inverse. As in PyTorch, batch_sizes is
    always on the CPU and the index tensors on data's device."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None and isinstance(data, (tuple, list)) and len(data) == 2:
            data, batch_sizes = data  # the older form: PackedSequence((data, batch_sizes))
        if unsorted_indices is None:
            _check_indices("PackedSequence", "sorted_indices", sorted_indices, None)
            unsorted_indices = invert_permutation(sorted_indices)
        _check_packed("PackedSequence", data, batch_sizes, sorted_indices, unsorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """data moved or cast as Tensor.to; the index tensors follow data's device."""
        return self._with_data(self.data.to(*args, **kwargs))

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        """data (and the index tensors) on "cuda", as Tensor.cuda."""
        return self._with_data(self.data.cuda(device))

    def pin_memory(self):
        """This PackedSequence itself: pinning has no effect in minifw."""
        return self

    def double(self):
        return self.to(dtype=np.float64)

    def float(self):
        return self.to(dtype=np.float32)

    def long(self):
        return self.to(dtype=np.int64)

    def int(self):
        return self.to(dtype=np.int32)

    # dtypes minifw does not have: Tensor's methods say so
    def half(self):
        return self._with_data(self.data.half())

    def short(self):
        return self._with_data(self.data.short())

    def char(self):
        return self._with_data(self.data.char())

    def byte(self):
        return self._with_data(self.data.byte())

    def _with_data(self, data):
        if data is self.data:
            return self
        indices = [None if i is None else i.to(data.device)
                   for i in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *indices)

    @property
    def is_cuda(self):
        return self.data.device.type == "cuda"

    def is_pinned(self):
        return False


def packed_positions(batch_sizes, order):
    """(step, batch entry) of each row of packed data, time-major: step t of the first
    batch_sizes[t] sequences in sorted order; order[i] is the batch entry sorted i-th."""
    t_index = np.repeat(np.arange(batch_sizes.size), batch_sizes)
    b_index = order[np.concatenate([np.arange(n) for n in batch_sizes])]
    return t_index, b_index


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences whose
    lengths are `lengths` (ints; bools and floats are converted to int64 as PyTorch converts
    them, floats truncated toward zero). With enforce_sorted=True the lengths must be in
    decreasing order; otherwise the batch is sorted here and the order is remembered."""
    fn = "pack_padded_sequence"
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim < 2:
        raise ValueError(f"{fn}: input must be at least 2-D ({'(B, T, *)' if batch_first else '(T, B, *)'});"
                         f" got a {input.ndim}-D tensor of shape {tuple(input.shape)}")
    if input.numel() == 0:
        raise RuntimeError(f"{fn}: input of shape {tuple(input.shape)} is empty; there is "
                           f"nothing to pack")
    lengths = _as_lengths(fn, lengths, truncate=True)  # floats truncated, as PyTorch's int64 cast
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if lengths.size != batch:
        raise RuntimeError(f"{fn}: lengths must hold one length per sequence, batch_size={batch}; "
                           f"got {lengths.size}")
    if enforce_sorted:
        if np.any(lengths[1:] > lengths[:-1]):
            raise RuntimeError(f"{fn}: with enforce_sorted=True the lengths must not increase "
                               f"(longest sequence first), got {lengths.tolist()}; pass "
                               f"enforce_sorted=False to have them sorted here")
        order = np.arange(batch, dtype=np.int64)
        sorted_indices = None
    else:
        order = np.argsort(-lengths, kind="stable")  # ties keep their order, as PyTorch's CPU sort
        sorted_indices = tensor(order, device=input.device)
    if np.any(lengths <= 0):
        raise RuntimeError(f"{fn}: every length must be >= 1 (an empty sequence cannot be "
                           f"packed), got {lengths.tolist()}")
    if lengths.max() > steps:
        raise ValueError(f"{fn}: a length exceeds the {steps} time steps of input (shape "
                         f"{tuple(input.shape)}, batch_first={batch_first}); got lengths {lengths.tolist()}")
    sorted_lengths = lengths[order]
    batch_sizes = (sorted_lengths[None, :] > np.arange(sorted_lengths[0])[:, None]).sum(1)
    t_index, b_index = packed_positions(batch_sizes, order)
    data = input[b_index, t_index] if batch_first else input[t_index, b_index]
    return PackedSequence(data, tensor(batch_sizes.astype(np.int64)), sorted_indices)


def _padded_positions(batch_sizes):
    """For a packed layout: offsets[t] is where step t starts in data."""
    return np.concatenate([[0], np.cumsum(batch_sizes)[:-1]]).astype(np.int64)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded, lengths), padded of shape
    (T, B, *) (or (B, T, *) with batch_first) in the original batch order, with T the
    longest length (or total_length), and lengths an int64 tensor."""
    fn = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{fn}: sequence must be a PackedSequence, got {type(sequence).__name__}")
    # again here: its tensors may have been changed in place since it was made
    _check_packed(fn, *sequence)
    batch_sizes = sequence.batch_sizes.numpy()
    steps = batch_sizes.size
    if total_length is not None:
        if isinstance(total_length, bool) or not isinstance(total_length, numbers.Integral):
            raise TypeError(f"{fn}: total_length must be an int or None, got {total_length!r}")
        if total_length < steps:
            raise ValueError(f"{fn}: total_length must be at least the longest sequence's length "
                             f"{steps}, got {total_length}")
        steps = int(total_length)
    batch = int(batch_sizes[0])
    sorted_lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1)
    offsets = _padded_positions(batch_sizes)
    # source[t, i]: the row of data holding step t of the i-th sequence in sorted order;
    # positions past a sequence's end read one extra row filled with padding_value
    data = sequence.data
    pad_row = data.shape[0]
    source = np.full((steps, batch), pad_row, dtype=np.int64)
    for t in range(batch_sizes.size):
        source[t, :batch_sizes[t]] = offsets[t] + np.arange(batch_sizes[t])
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices.cpu().numpy()
        source, sorted_lengths = source[:, unsorted], sorted_lengths[unsorted]
    if batch_first:
        source = source.T
    filler = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = cat([data, filler])[source]
    return padded, tensor(sorted_lengths.astype(np.int64))


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes (L_i, *) into one (T, B, *) (or (B, T, *) with batch_first)
    tensor, T = max L_i, filling with padding_value after each sequence (padding_side
    "right") or before it ("left")."""
    fn = "pad_sequence"
    if isinstance(sequences, Tensor):
        sequences = list(sequences)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError(f"{fn}: sequences is empty; give at least one tensor")
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise TypeError(f"{fn}: sequences must be Tensors; element {i} is a {type(s).__name__}")
        if s.ndim < 1 or s.shape[1:] != sequences[0].shape[1:]:
            raise ValueError(f"{fn}: every sequence must have shape (L, *) with the same trailing "
                             f"dims; sequence 0 has shape {tuple(sequences[0].shape)}, sequence {i} "
                             f"has shape {tuple(s.shape)}")
    if padding_side not in ("left", "right"):
        raise ValueError(f"{fn}: expected padding_side to be one of left or right, but got "
                         f"{padding_side!r}")
    lengths = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    steps, batch = int(lengths.max()), len(sequences)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    dtype = sequences[0].dtype  # as PyTorch: the first sequence's dtype, the others cast to it
    joined = cat([s if s.dtype == dtype else s.to(dtype) for s in sequences]
                 + [full((1,) + tuple(sequences[0].shape[1:]), padding_value, dtype=dtype,
                         device=sequences[0].device)])
    pad_row = int(lengths.sum())
    source = np.full((batch, steps), pad_row, dtype=np.int64)
    for b in range(batch):
        first = 0 if padding_side == "right" else steps - lengths[b]
        source[b, first:first + lengths[b]] = starts[b] + np.arange(lengths[b])
    return joined[source if batch_first else source.T]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors of shapes (L_i, *): pack_padded_sequence(pad_sequence(...))."""
    lengths = [s.shape[0] if isinstance(s, Tensor) else None for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences, each cut to its length, of a padded batch."""
    lengths = _as_lengths("unpad_sequence", lengths)
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :int(n)] for b, n in enumerate(lengths)]


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
