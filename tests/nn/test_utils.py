"""minifw.nn.utils: gradient clipping against hand-computed norms (and PyTorch when it
is installed); packing and padding of variable-length sequences: PyTorch's layouts,
round trips, gradients by finite differences, and its errors."""
import numpy as np
import pytest

import minifw
from minifw.nn.utils import clip_grad_norm_, clip_grad_value_
from minifw.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence,
                                 pad_packed_sequence, pad_sequence, unpack_sequence, unpad_sequence)
from gradcheck import gradcheck


def with_grads(*grads, dtype=minifw.float64):
    params = []
    for g in grads:
        p = minifw.zeros(len(g), dtype=dtype, requires_grad=True)
        p.grad = minifw.tensor(g, dtype=dtype)
        params.append(p)
    return params


# ---- clip_grad_norm_ / clip_grad_value_ -------------------------------------------------

@pytest.mark.parametrize("norm_type, expected", [
    (2.0, 13.0),                        # sqrt(9 + 16 + 144)
    (1.0, 19.0),
    (float("inf"), 12.0),
    ("inf", 12.0),
    (3.0, (27 + 64 + 1728) ** (1 / 3)),
], ids=["l2", "l1", "inf", "inf-str", "l3"])
def test_clip_grad_norm_total_norm_and_scaling(norm_type, expected):
    params = with_grads([3.0, -4.0], [12.0])
    total = clip_grad_norm_(params, max_norm=1.0, norm_type=norm_type)
    assert isinstance(total, minifw.Tensor) and total.ndim == 0
    assert total.item() == pytest.approx(expected, rel=1e-12)
    coef = 1.0 / (expected + 1e-6)
    np.testing.assert_allclose(params[0].grad.numpy(), [3.0 * coef, -4.0 * coef], rtol=1e-12)
    np.testing.assert_allclose(params[1].grad.numpy(), [12.0 * coef], rtol=1e-12)


def test_clip_grad_norm_leaves_small_gradients_alone_and_skips_missing_grads():
    p, = with_grads([0.3, 0.4])
    no_grad = minifw.zeros(3, requires_grad=True)
    total = clip_grad_norm_(iter([p, no_grad]), max_norm=1.0)
    assert total.item() == pytest.approx(0.5)
    np.testing.assert_array_equal(p.grad.numpy(), [0.3, 0.4])
    assert no_grad.grad is None


def test_clip_grad_norm_accepts_one_tensor_and_no_gradients():
    p, = with_grads([6.0, 8.0], dtype=minifw.float32)
    total = clip_grad_norm_(p, 5.0)
    assert total.dtype == minifw.float32 and total.item() == pytest.approx(10.0)
    np.testing.assert_allclose(p.grad.numpy(), [3.0, 4.0], rtol=1e-6)
    assert p.grad.dtype == minifw.float32
    assert clip_grad_norm_([], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite():
    p, = with_grads([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="total norm of order 2.0 .* is non-finite"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(p.grad.numpy(), [np.nan, 1.0])  # untouched by the failed call
    assert np.isnan(clip_grad_norm_(p, 1.0).item())


@pytest.mark.parametrize("kwargs, exc, pattern", [
    (dict(max_norm="1"), TypeError, "max_norm must be a real number"),
    (dict(max_norm=1.0, norm_type="two"), ValueError, "norm_type must be a number or 'inf'"),
    (dict(max_norm=1.0, error_if_nonfinite=1), TypeError, "error_if_nonfinite must be a bool"),
], ids=["max_norm", "norm_type", "error_if_nonfinite"])
def test_clip_grad_norm_bad_arguments(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        clip_grad_norm_(with_grads([1.0]), **kwargs)


def test_clip_grad_norm_rejects_non_tensors():
    with pytest.raises(TypeError, match="element 1 is a list"):
        clip_grad_norm_([minifw.zeros(1), [1.0]], 1.0)


def test_clip_grad_value():
    a, b = with_grads([-3.0, 0.5, 2.0], [7.0])
    clip_grad_value_([a, b], 1.0)
    np.testing.assert_array_equal(a.grad.numpy(), [-1.0, 0.5, 1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0])
    with pytest.raises(TypeError, match="clip_value must be a real number"):
        clip_grad_value_(a, "1")


def test_clip_grad_norm_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s) for s in [(3, 4), (5,), (2, 2, 2)]]
    for norm_type in (2.0, 1.0, 0.5, float("inf")):
        ours = with_grads(*[g.reshape(-1) for g in grads])
        theirs = [torch.zeros(g.size, dtype=torch.float64, requires_grad=True) for g in grads]
        for t, g in zip(theirs, grads):
            t.grad = torch.tensor(g.reshape(-1))
        total = clip_grad_norm_(ours, 0.7, norm_type)
        expected = torch.nn.utils.clip_grad_norm_(theirs, 0.7, norm_type)
        assert total.item() == pytest.approx(expected.item(), rel=1e-12)
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-12)


# ---- packing and padding -------------------------------------------------------------------

def padded_batch(steps=4, batch=3, features=2, seed=0):
    return minifw.tensor(np.random.default_rng(seed).standard_normal((steps, batch, features)),
                         dtype=minifw.float64, requires_grad=True)


def test_pack_padded_sequence_is_time_major():
    x = minifw.arange(12.0).reshape(4, 3)  # (T=4, B=3)
    packed = pack_padded_sequence(x, [4, 2, 1])
    assert isinstance(packed, PackedSequence) and isinstance(packed, tuple)
    assert packed._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert packed.data.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0]
    assert packed.batch_sizes.tolist() == [3, 2, 1, 1] and packed.batch_sizes.dtype == minifw.int64
    assert packed.sorted_indices is None and packed.unsorted_indices is None


def test_pack_padded_sequence_unsorted_batch_first():
    # the layout PyTorch 2 gives for these inputs (ties keep their order)
    x = minifw.arange(12.0).reshape(4, 3)  # (B=4, T=3)
    packed = pack_padded_sequence(x, minifw.tensor([1, 3, 3, 2]), batch_first=True, enforce_sorted=False)
    assert packed.data.tolist() == [3.0, 6.0, 9.0, 0.0, 4.0, 7.0, 10.0, 5.0, 8.0]
    assert packed.batch_sizes.tolist() == [4, 3, 2]
    assert packed.sorted_indices.tolist() == [1, 2, 3, 0]
    assert packed.unsorted_indices.tolist() == [3, 0, 1, 2]
    padded, lengths = pad_packed_sequence(packed, batch_first=True, total_length=4, padding_value=9)
    assert padded.tolist() == [[0, 9, 9, 9], [3, 4, 5, 9], [6, 7, 8, 9], [9, 10, 9, 9]]
    assert lengths.tolist() == [1, 3, 3, 2] and lengths.dtype == minifw.int64


@pytest.mark.parametrize("batch_first", [False, True], ids=["time-major", "batch-first"])
@pytest.mark.parametrize("lengths", [[4, 3, 1], [2, 4, 4], [3, 3, 3]], ids=["sorted", "unsorted", "equal"])
def test_pack_then_pad_round_trip(lengths, batch_first):
    x = padded_batch()
    if batch_first:
        x = x.transpose(0, 1)
    enforce = lengths == sorted(lengths, reverse=True)
    padded, out_lengths = pad_packed_sequence(
        pack_padded_sequence(x, lengths, batch_first, enforce_sorted=enforce), batch_first)
    assert out_lengths.tolist() == lengths
    expected = x.detach().numpy().copy()
    for b, n in enumerate(lengths):
        if batch_first:
            expected[b, n:] = 0.0
        else:
            expected[n:, b] = 0.0
    np.testing.assert_array_equal(padded.detach().numpy(), expected[:, :max(lengths)] if batch_first
                                  else expected[:max(lengths)])


def test_pad_sequence_layouts():
    a, b = minifw.tensor([1.0, 2.0, 3.0]), minifw.tensor([4.0])
    assert pad_sequence([a, b]).tolist() == [[1, 4], [2, 0], [3, 0]]
    assert pad_sequence([a, b], batch_first=True, padding_value=-1).tolist() == [[1, 2, 3], [4, -1, -1]]
    assert pad_sequence([a, b], batch_first=True, padding_side="left").tolist() == [[1, 2, 3], [0, 0, 4]]
    assert pad_sequence([a, minifw.zeros(0)], batch_first=True).tolist() == [[1, 2, 3], [0, 0, 0]]
    ids = pad_sequence([minifw.tensor([5, 6]), minifw.tensor([7])])
    assert ids.dtype == minifw.int64 and ids.tolist() == [[5, 7], [6, 0]]


def test_pack_sequence_and_unpack_sequence():
    seqs = [minifw.tensor([[1.0], [2.0]]), minifw.tensor([[3.0], [4.0], [5.0]])]
    packed = pack_sequence(seqs, enforce_sorted=False)
    assert packed.data.reshape(-1).tolist() == [3.0, 1.0, 4.0, 2.0, 5.0]
    assert packed.batch_sizes.tolist() == [2, 2, 1]
    assert [s.tolist() for s in unpack_sequence(packed)] == [s.tolist() for s in seqs]
    padded = pad_sequence(seqs, batch_first=True)
    assert [s.tolist() for s in unpad_sequence(padded, [2, 3], batch_first=True)] == [s.tolist() for s in seqs]


@pytest.mark.parametrize("batch_first", [False, True], ids=["time-major", "batch-first"])
def test_gradients_flow_through_pack_and_pad(batch_first):
    x = padded_batch(steps=3, batch=3, features=2)
    if batch_first:
        x = x.detach().transpose(0, 1).contiguous().requires_grad_()

    def fn(x):
        packed = pack_padded_sequence(x, [1, 3, 2], batch_first, enforce_sorted=False)
        padded, _ = pad_packed_sequence(PackedSequence(packed.data * packed.data, *packed[1:]),
                                        batch_first, padding_value=0.5)
        return padded

    gradcheck(fn, [x])
    x.grad = None
    fn(x).sum().backward()  # steps past a sequence's end get no gradient
    g = x.grad.numpy() if batch_first else x.grad.numpy().transpose(1, 0, 2)
    assert np.all(g[0, 1:] == 0) and np.all(g[2, 2:] == 0) and np.all(g[1] != 0)


def test_gradients_flow_through_pad_sequence():
    a = minifw.tensor(np.arange(6.0).reshape(3, 2), dtype=minifw.float64, requires_grad=True)
    b = minifw.tensor([[1.0, -1.0]], dtype=minifw.float64, requires_grad=True)
    gradcheck(lambda a, b: pad_sequence([a, b], padding_side="left", padding_value=2.0), [a, b])


@pytest.mark.parametrize("call, exc, pattern", [
    (lambda x: pack_padded_sequence(x, [2, 3, 1]), RuntimeError,
     "with enforce_sorted=True the lengths must not increase"),
    (lambda x: pack_padded_sequence(x, [3, 2, 0]), RuntimeError, "every length must be >= 1"),
    (lambda x: pack_padded_sequence(x, [5, 2, 1]), ValueError, "exceeds the 4 time steps"),
    (lambda x: pack_padded_sequence(x, [3, 2]), RuntimeError, "one length per sequence, batch_size=3; got 2"),
    (lambda x: pack_padded_sequence(x, [[3, 2, 1]]), ValueError, "lengths must be 1-D"),
    (lambda x: pack_padded_sequence(x, ["3", "2", "1"]), TypeError, "lengths must be a list of numbers"),
    (lambda x: pack_padded_sequence(x, [3.0, float("nan"), 1.0]), ValueError,
     r"lengths must be finite numbers .*got \[3.0, nan, 1.0\]"),
    (lambda x: pack_padded_sequence(x, minifw.tensor([float("inf"), 2.0, 1.0])), ValueError,
     "lengths must be finite numbers"),
    (lambda x: pack_padded_sequence(x, [3.0, 2.0, 0.9]), RuntimeError, "every length must be >= 1"),
    (lambda x: pack_padded_sequence(x[0, 0], [1]), ValueError, "at least 2-D"),
    (lambda x: pad_packed_sequence(pack_padded_sequence(x, [3, 2, 1]), total_length=2), ValueError,
     "total_length must be at least the longest sequence's length 3, got 2"),
    (lambda x: pad_packed_sequence(x), TypeError, "must be a PackedSequence"),
    (lambda x: pad_sequence([]), RuntimeError, "sequences is empty"),
    (lambda x: pad_sequence([x[0], x[0, 0]]), ValueError, "same trailing dims"),
    (lambda x: pad_sequence([x[0]], padding_side="middle"), ValueError, "one of left or right"),
], ids=["unsorted", "zero-length", "too-long", "batch-mismatch", "2-D-lengths", "string-lengths",
        "nan-length", "inf-length", "float-truncated-to-zero",
        "1-D-input", "total-length", "not-packed", "empty", "trailing-dims", "padding-side"])
def test_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call(padded_batch())


@pytest.mark.parametrize("lengths", [
    [3.0, 2.7, 1.2], [3.9, 2.0, 1.99], minifw.tensor([3.5, 2.5, 1.5]),
    minifw.tensor([3.0, 2.9, 1.0], dtype=minifw.float64), np.array([3.2, 2.2, 1.2], np.float32)])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_float_lengths_are_truncated_to_int64_as_pytorch_converts_them(lengths, enforce_sorted):
    x = padded_batch()
    got = pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    want = pack_padded_sequence(x, [3, 2, 1], enforce_sorted=enforce_sorted)
    assert got.batch_sizes.tolist() == want.batch_sizes.tolist() == [3, 2, 1]
    np.testing.assert_array_equal(got.data.detach().numpy(), want.data.detach().numpy())
    padded, out_lengths = pad_packed_sequence(got)
    assert out_lengths.tolist() == [3, 2, 1] and out_lengths.dtype == minifw.int64


def test_bool_lengths_count_as_one():
    x = padded_batch()[:, :2]
    assert pack_padded_sequence(x, [True, True]).batch_sizes.tolist() == [2]
    assert pack_padded_sequence(x, minifw.tensor([True, True])).batch_sizes.tolist() == [2]


def test_float_lengths_against_torch():
    torch = pytest.importorskip("torch")
    x = padded_batch()
    for lengths in ([3.0, 2.7, 1.2], [3.9, 1.5, 1.0]):
        theirs = torch.nn.utils.rnn.pack_padded_sequence(torch.from_numpy(x.detach().numpy()), lengths)
        ours = pack_padded_sequence(x, lengths)
        assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
        np.testing.assert_array_equal(ours.data.detach().numpy(), theirs.data.numpy())


def test_reachable_as_in_torch():
    import minifw.nn as nn
    assert nn.utils.clip_grad_norm_ is clip_grad_norm_
    assert nn.utils.rnn.pack_padded_sequence is pack_padded_sequence


# ---- nn.modules.utils: a DataParallel checkpoint into the bare model ----------------------

def test_consume_prefix_loads_a_data_parallel_checkpoint_into_the_bare_model():
    from minifw.nn.modules.utils import consume_prefix_in_state_dict_if_present
    minifw.manual_seed(0)
    wrapped = minifw.nn.DataParallel(minifw.nn.Sequential(minifw.nn.Linear(2, 3),
                                                          minifw.nn.BatchNorm1d(3)))
    state = wrapped.state_dict()
    state["extra"] = minifw.ones(1)
    assert list(state)[0] == "module.0.weight"
    consume_prefix_in_state_dict_if_present(state, "module.")
    # the renamed keys move behind the untouched one, in their order
    assert list(state) == ["extra", "0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                           "1.running_var", "1.num_batches_tracked"]
    # the wrapper's own metadata entry ("module") becomes the root's
    assert list(state._metadata) == ["", "0", "1"] and state._metadata["1"] == {"version": 2}
    del state["extra"]
    bare = minifw.nn.Sequential(minifw.nn.Linear(2, 3), minifw.nn.BatchNorm1d(3))
    bare.load_state_dict(state)
    np.testing.assert_array_equal(bare[0].weight.detach().numpy(),
                                  wrapped.module[0].weight.detach().numpy())
    # nothing to strip: nothing changes; a plain dict has no metadata
    plain = {"a.b": 1, "c": 2}
    consume_prefix_in_state_dict_if_present(plain, "module.")
    assert plain == {"a.b": 1, "c": 2}
    consume_prefix_in_state_dict_if_present(plain, "a.")
    assert list(plain) == ["c", "b"]
    with pytest.raises(TypeError, match=r"prefix must be a str, got int 3"):
        consume_prefix_in_state_dict_if_present(plain, 3)
    with pytest.raises(TypeError, match=r"state_dict must be a dict, got list"):
        consume_prefix_in_state_dict_if_present([], "module.")


def test_the_ntuple_helpers_of_custom_layers():
    from minifw.nn.modules.utils import _ntuple, _pair, _quadruple, _single, _triple
    assert _single(3) == (3,) and _triple(2) == (2, 2, 2) and _quadruple(0) == (0, 0, 0, 0)
    assert _triple([1, 2, 3]) == (1, 2, 3) and _single((5,)) == (5,)
    assert _ntuple(2)(iter([4, 5])) == (4, 5) and _pair(7) == (7, 7)
