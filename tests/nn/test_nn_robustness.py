"""minifw.nn against bad or unusual input: in-place activations always write their input
(values, gradients and version counters as PyTorch's), hand-built PackedSequences are
validated, circular padding with a negative pad crops before it wraps, softmax's dtype=
is checked, layers check their arguments when built, nn.init refuses what PyTorch refuses,
and recurrent layers too large to allocate say which size is at fault.

Expectations are hand-computed; where PyTorch is installed it is compared too (the tests
that need it skip without it)."""
import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from minifw.nn import init
from minifw.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pad_packed_sequence)


def _torch():
    return pytest.importorskip("torch")


# ---- inplace=True writes the input ---------------------------------------------------

A = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], dtype=np.float32)

IN_PLACE = {
    "relu": (lambda t: F.relu(t, inplace=True), lambda a: np.maximum(a, 0)),
    "leaky_relu": (lambda t: F.leaky_relu(t, 0.5, inplace=True),
                   lambda a: np.where(a > 0, a, 0.5 * a)),
    "elu": (lambda t: F.elu(t, 1.0, inplace=True),
            lambda a: np.where(a > 0, a, np.expm1(np.minimum(a, 0)))),
    "hardtanh": (lambda t: F.hardtanh(t, -2.0, 2.0, inplace=True), lambda a: np.clip(a, -2, 2)),
    "silu": (lambda t: F.silu(t, inplace=True), lambda a: a / (1 + np.exp(-a))),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
@pytest.mark.parametrize("view", ["column", "transpose", "whole"])
def test_inplace_activation_writes_a_strided_view_into_its_base(name, view):
    apply, expected = IN_PLACE[name]
    t = minifw.tensor(A)
    v = {"column": lambda: t[:, 1], "transpose": lambda: t.t(), "whole": lambda: t}[view]()
    before = t._version
    out = apply(v)
    assert out is v
    want = A.copy()
    if view == "column":
        want[:, 1] = expected(A[:, 1])
    else:
        want = expected(A)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)
    assert t._version == before + 1  # the version counter stepped, as PyTorch's


def test_inplace_relu_of_a_column_hand_computed():
    t = minifw.tensor(A)
    F.relu(t[:, 1], inplace=True)
    assert t.tolist() == [[1.0, 0.0, 3.0], [-4.0, 5.0, -6.0]]
    t = minifw.tensor(A)
    nn.ReLU(inplace=True)(t.t())
    assert t.tolist() == [[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]]


def test_inplace_relu_in_a_graph_hand_computed():
    x = minifw.tensor([[1.0, -2.0], [3.0, -4.0]], requires_grad=True)
    h = x * 1
    out = F.relu(h, inplace=True)
    assert out is h and h.tolist() == [[1.0, 0.0], [3.0, 0.0]]
    assert h.sum().item() == 4.0
    assert h._version == 1 and h.grad_fn is not None
    h.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [1.0, 0.0]]


TORCH_IN_PLACE = {
    "relu": (lambda F_, t: F_.relu(t, inplace=True)),
    "leaky_relu": (lambda F_, t: F_.leaky_relu(t, 0.2, inplace=True)),
    "elu": (lambda F_, t: F_.elu(t, 0.7, inplace=True)),
    "hardtanh": (lambda F_, t: F_.hardtanh(t, -0.5, 0.5, inplace=True)),
    "relu6": (lambda F_, t: F_.relu6(t, inplace=True)),
    "silu": (lambda F_, t: F_.silu(t, inplace=True)),
}


@pytest.mark.parametrize("name", sorted(TORCH_IN_PLACE))
@pytest.mark.parametrize("view", ["whole", "column", "transpose"])
def test_inplace_activation_values_and_gradients_match_pytorch(name, view):
    torch = _torch()
    a = np.random.RandomState(0).randn(4, 5) * 3
    weights = np.random.RandomState(1).randn(4, 5)
    results = []
    for lib, F_, make in ((minifw, F, lambda v, g: minifw.tensor(v, requires_grad=g)),
                          (torch, torch.nn.functional, lambda v, g: torch.tensor(v, requires_grad=g))):
        x = make(a, True)
        h = x * 1
        v = {"whole": lambda: h, "column": lambda: h[:, 1], "transpose": lambda: h.t()}[view]()
        out = TORCH_IN_PLACE[name](F_, v)
        assert out is v
        # the loss reads the tensor written (minifw does not replay a view's in-place history
        # onto its base, so reading h after writing its view v is refused with an error)
        w = make(weights, False)
        w = {"whole": lambda: w, "column": lambda: w[:, 1], "transpose": lambda: w.t()}[view]()
        (v * w).sum().backward()
        results.append((h.detach().numpy(), x.grad.numpy()))
    (h1, g1), (h2, g2) = results
    np.testing.assert_allclose(h1, h2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)


def test_inplace_relu_of_a_graph_tensor_matches_pytorch():
    """h = x * 1; relu(h, inplace=True); h.sum(): h itself is rectified (it used to stay
    negative, with another loss than PyTorch's)."""
    torch = _torch()
    a = np.random.RandomState(0).randn(4, 5).astype(np.float32)
    x1, x2 = minifw.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    h1, h2 = x1 * 1, x2 * 1
    nn.ReLU(inplace=True)(h1)
    torch.nn.ReLU(inplace=True)(h2)
    assert h1.sum().item() == pytest.approx(h2.sum().item(), rel=1e-6)
    assert h1.sum().item() == pytest.approx(float(np.maximum(a, 0).sum()), rel=1e-6)
    h1.sum().backward()
    h2.sum().backward()
    np.testing.assert_array_equal(x1.grad.numpy(), x2.grad.numpy())
    np.testing.assert_array_equal(x1.grad.numpy(), (a > 0).astype(np.float32))


def test_inplace_dropout_in_a_graph_writes_its_input():
    minifw.manual_seed(0)
    x = minifw.ones(50, requires_grad=True)
    h = x * 1
    out = F.dropout(h, 0.5, training=True, inplace=True)
    assert out is h and h._version == 1
    values = h.detach().numpy()
    assert set(np.unique(values)) == {0.0, 2.0}
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), values)  # d(2 * mask * x)/dx = 2 * mask


@pytest.mark.parametrize("call", [
    lambda t: F.relu(t, inplace=True),
    lambda t: F.elu(t, inplace=True),
    lambda t: F.hardtanh(t, inplace=True),
    lambda t: F.silu(t, inplace=True),
    lambda t: F.dropout(t, 0.5, True, inplace=True),
], ids=["relu", "elu", "hardtanh", "silu", "dropout"])
def test_inplace_on_a_leaf_that_requires_grad_is_refused_as_pytorch(call):
    x = minifw.tensor([[-1.0, 2.0]], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        call(x)
    assert x.tolist() == [[-1.0, 2.0]]
    with minifw.no_grad():  # allowed outside grad mode, as in PyTorch
        call(x)


def test_inplace_relu_steps_the_version_seen_by_a_saved_tensor():
    """relu_ on a tensor an earlier Function saved: backward refuses, as PyTorch's."""
    w = minifw.tensor([1.0, 2.0], requires_grad=True)
    h = minifw.tensor([-1.0, 3.0])
    y = w * h  # saves h for w's gradient
    F.relu(h, inplace=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_activation_of_an_expanded_tensor_is_refused():
    t = minifw.zeros(3).expand(2, 3)
    with pytest.raises(RuntimeError, match="relu: inplace=True writes into input, but input is "
                                           "read-only"):
        F.relu(t, inplace=True)


# ---- PackedSequence ------------------------------------------------------------

def _i64(values):
    return minifw.tensor(values, dtype=minifw.int64)


@pytest.mark.parametrize("make, error, message", [
    pytest.param(lambda: PackedSequence(minifw.randn(3, 2), _i64([2, 2])), ValueError,
                 r"batch_sizes must add up to data's rows: sum\(\[2, 2\]\) = 4, but data has "
                 r"shape \(3, 2\)", id="sum_mismatch"),
    pytest.param(lambda: PackedSequence(minifw.randn(2, 2), _i64([2, 0])), ValueError,
                 r"batch_sizes must all be >= 1.*got \[2, 0\]", id="zero_batch_size"),
    pytest.param(lambda: PackedSequence(minifw.randn(3, 2), _i64([1, 2])), ValueError,
                 r"batch_sizes must be non-increasing.*got \[1, 2\]", id="increasing"),
    pytest.param(lambda: PackedSequence(minifw.randn(4, 2), _i64([2, 2]), _i64([0, 0])), ValueError,
                 r"sorted_indices must be a permutation of range\(2\).*got \[0, 0\]", id="duplicates"),
    pytest.param(lambda: PackedSequence(minifw.randn(4, 2), _i64([2, 2]), _i64([0, 2])), ValueError,
                 r"sorted_indices must be a permutation of range\(2\)", id="out_of_range"),
    pytest.param(lambda: PackedSequence(minifw.randn(4, 2), _i64([2, 2]), _i64([1, 0]),
                                        _i64([0, 1])), ValueError,
                 r"unsorted_indices must be the inverse permutation of sorted_indices", id="not_inverse"),
    pytest.param(lambda: PackedSequence(minifw.randn(4, 2), _i64([2, 2]), None, _i64([1, 0])),
                 ValueError, r"unsorted_indices must be the inverse permutation", id="unsorted_alone"),
    pytest.param(lambda: PackedSequence(minifw.randn(3, 2), _i64([2, 1]), _i64([0, 1, 2])),
                 ValueError, r"sorted_indices must have one entry per sequence, batch_sizes\[0\] = 2",
                 id="indices_length"),
    pytest.param(lambda: PackedSequence(minifw.randn(0, 2), _i64([])), ValueError,
                 "batch_sizes must not be empty", id="empty"),
    pytest.param(lambda: PackedSequence(minifw.randn(3, 2), minifw.tensor([2.0, 1.0])), TypeError,
                 "batch_sizes must be a 1-D int64 tensor", id="float_batch_sizes"),
    pytest.param(lambda: PackedSequence(minifw.randn(3, 2), _i64([2, 1]), minifw.tensor([1.0, 0.0])),
                 TypeError, "sorted_indices must be a 1-D int64 tensor", id="float_indices"),
])
def test_hand_built_packed_sequence_is_validated(make, error, message):
    with pytest.raises(error, match="PackedSequence: " + message):
        make()


def test_packed_sequence_changed_in_place_is_refused_where_it_is_read():
    p = PackedSequence(minifw.randn(3, 2), _i64([2, 1]), _i64([1, 0]))
    p.batch_sizes[1] = 2
    with pytest.raises(ValueError, match=r"pad_packed_sequence: batch_sizes must add up"):
        pad_packed_sequence(p)
    with pytest.raises(ValueError, match=r"LSTM: batch_sizes must add up"):
        nn.LSTM(2, 3)(p)


def test_valid_hand_built_packed_sequence_pads_as_pytorch():
    data = np.arange(10, dtype=np.float32).reshape(5, 2)
    p = PackedSequence(minifw.tensor(data), _i64([3, 2]), _i64([2, 0, 1]))
    assert p.unsorted_indices.tolist() == [1, 2, 0]
    padded, lengths = pad_packed_sequence(p, batch_first=True)
    # sorted order: sequence 2 (rows 0, 3), sequence 0 (rows 1, 4), sequence 1 (row 2)
    want = np.zeros((3, 2, 2), np.float32)
    want[2] = data[[0, 3]]
    want[0] = data[[1, 4]]
    want[1, 0] = data[2]
    np.testing.assert_array_equal(padded.numpy(), want)
    assert lengths.tolist() == [2, 1, 2]
    torch = _torch()
    from torch.nn.utils.rnn import PackedSequence as TP, pad_packed_sequence as tpad
    tp = TP(torch.tensor(data), torch.tensor([3, 2]), torch.tensor([2, 0, 1]))
    t_padded, t_lengths = tpad(tp, batch_first=True)
    np.testing.assert_array_equal(padded.numpy(), t_padded.numpy())
    assert lengths.tolist() == t_lengths.tolist()


@pytest.mark.parametrize("shape, lengths", [((3, 0, 2), []), ((0, 2, 2), [1, 1]), ((3, 2, 0), [3, 3])])
def test_pack_padded_sequence_of_an_empty_tensor(shape, lengths):
    with pytest.raises(RuntimeError, match="pack_padded_sequence: input of shape .* is empty; there is "
                                           "nothing to pack"):
        pack_padded_sequence(minifw.zeros(*shape), lengths)


def test_pack_padded_sequence_of_an_empty_tensor_as_pytorch():
    torch = _torch()
    from torch.nn.utils.rnn import pack_padded_sequence as tpack
    with pytest.raises(RuntimeError, match="Cannot pack empty tensors"):
        tpack(torch.zeros(3, 0, 2), [])


# ---- circular padding crops, then wraps -----------------------------------------------

CIRCULAR = [  # pad of arange(4), and the result worked out by hand
    ((-1, 2), [1, 2, 3, 1, 2]),
    ((2, -1), [1, 2, 0, 1, 2]),
    ((-2, 2), [2, 3, 2, 3]),
    ((2, -2), [0, 1, 0, 1]),
    ((-1, -1), [1, 2]),
    ((1, 2), [3, 0, 1, 2, 3, 0, 1]),
    ((4, 0), [0, 1, 2, 3, 0, 1, 2, 3]),
    ((-3, 1), [3, 3]),
]


@pytest.mark.parametrize("pad, expected", CIRCULAR)
def test_circular_pad_with_a_negative_side(pad, expected):
    x = minifw.arange(4.0, dtype=minifw.float64).reshape(1, 1, 4)
    assert F.pad(x, pad, mode="circular").reshape(-1).tolist() == expected


def test_circular_pad_gradient_hand_computed():
    x = minifw.arange(4.0, dtype=minifw.float64, requires_grad=True)
    y = F.pad(x.reshape(1, 1, 4), (-1, 2), mode="circular")  # x[1], x[2], x[3], x[1], x[2]
    (y.reshape(-1) * minifw.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=minifw.float64)).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0 + 4.0, 2.0 + 5.0, 3.0]


@pytest.mark.parametrize("pad", [p for p, _ in CIRCULAR] + [(-1, 2, 1, -1), (2, -1, -1, 1),
                                                            (0, 0, -1, 2)])
def test_circular_pad_matches_pytorch(pad):
    torch = _torch()
    a = np.random.RandomState(0).randn(*((1, 2, 3, 4) if len(pad) == 4 else (2, 4)))
    g = None
    outs = []
    for lib, F_ in ((minifw, F), (torch, torch.nn.functional)):
        x = lib.tensor(a, requires_grad=True)
        y = F_.pad(x, pad, mode="circular")
        if g is None:
            g = np.random.RandomState(1).randn(*tuple(y.shape))
        (y * lib.tensor(g)).sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("pad, message", [
    ((-3, 2), r"negative pad crops it to 1 elements, and the positive pad must be <= that"),
    ((3, -2), r"negative pad crops it to 2 elements"),
    ((5, 0), r"needs pad <= its size 4, got \(5, 0\): a pad may wrap around the dim at most once"),
])
def test_circular_pad_wrapping_more_than_once_is_refused(pad, message):
    # (PyTorch refuses these too: "Padding value causes wrapping around more than once", or
    # an overlapping-memory error for the cropped cases)
    with pytest.raises(ValueError, match="pad: circular padding of dim 2.*" + message):
        F.pad(minifw.arange(4.0).reshape(1, 1, 4), pad, mode="circular")


@pytest.mark.parametrize("mode", ["constant", "circular"])
@pytest.mark.parametrize("pad", [(-2, -2), (0, -4), (-4, 0), (1, 0, -2, 0), (-1, 1, -2, 0, 0, -3)])
def test_pad_may_crop_a_dim_to_nothing_in_constant_and_circular_modes(mode, pad):
    # as PyTorch: a dim cropped to exactly 0 elements is an empty result, not an error
    x = minifw.arange(48.0, dtype=minifw.float64).reshape(2, 3, 2, 4).requires_grad_()
    y = F.pad(x, pad, mode=mode)
    expected = list(x.shape)
    for i in range(len(pad) // 2):
        expected[-1 - i] += pad[2 * i] + pad[2 * i + 1]
    assert y.shape == tuple(expected) and y.numel() == 0
    y.sum().backward()
    assert x.grad.shape == x.shape and not x.grad.numpy().any()


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_to_nothing_is_refused_in_reflect_and_replicate_modes(mode):
    with pytest.raises(ValueError, match=rf"pad: mode='{mode}' with pad \(-2, -2\) leaves dim 2 "
                                         r"\(size 4\) empty"):
        F.pad(minifw.ones(1, 2, 4), (-2, -2), mode=mode)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_cropping_more_than_the_size_is_refused(mode):
    with pytest.raises(ValueError, match=r"pad: pad \(-3, -2\) crops dim 2 \(size 4\) by more "
                                         r"than its size: 4 -3 -2 = -1 elements"):
        F.pad(minifw.ones(1, 2, 4), (-3, -2), mode=mode)


@pytest.mark.parametrize("pad", [(-2, -2), (0, -4), (1, 3), (1, 0, -2, 0), (2, -1, 1, -1),
                                 (2, -1, 0, -2, 1, 1), (-1, 3, 1, -1, -1, 0), (4, 4, 2, 2, 3, 3),
                                 (-1, 1, -2, 0, 0, -3)])
def test_circular_and_empty_pads_match_pytorch(pad):
    # 1d, 2d and 3d circular padding (PyTorch's takes a 3-D, 4-D, 5-D input for them)
    torch = _torch()
    shape = {1: (2, 3, 4), 2: (2, 3, 2, 4), 3: (1, 2, 3, 2, 4)}[len(pad) // 2]
    a = np.arange(float(np.prod(shape))).reshape(shape)
    for mode in ("constant", "circular"):
        ours = F.pad(minifw.tensor(a), pad, mode=mode)
        theirs = torch.nn.functional.pad(torch.tensor(a), pad, mode=mode)
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---- softmax's dtype= ---------------------------------------------------------------

@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax, F.softmin],
                         ids=["softmax", "log_softmax", "softmin"])
def test_softmax_dtype_must_be_floating(fn):
    x = minifw.randn(2, 3)
    with pytest.raises(TypeError, match=rf"^{fn.__name__}: dtype must be a floating point dtype "
                                        rf"\(float32 or float64\).*got int64$"):
        fn(x, 1, dtype=np.int64)
    with pytest.raises(TypeError, match=rf"^{fn.__name__}: dtype must be one of"):
        fn(x, 1, dtype="complex128")


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_dtype_casts_an_integer_input_as_pytorch(name):
    torch = _torch()
    a = np.array([[1, 2, 3], [0, 0, 4]])
    ours = getattr(F, name)(minifw.tensor(a), 1, dtype=minifw.float64)
    theirs = getattr(torch.nn.functional, name)(torch.tensor(a), 1, dtype=torch.float64)
    assert ours.dtype == minifw.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    e = np.exp(a[0] - 3.0)  # hand-computed first row of softmax
    if name == "softmax":
        np.testing.assert_allclose(ours.numpy()[0], e / e.sum(), rtol=1e-12)


# ---- layers check their arguments when built ---------------------------------------

@pytest.mark.parametrize("build, error, message", [
    pytest.param(lambda: nn.MaxPool2d(0), ValueError, "MaxPool2d: kernel_size must be >= 1, got 0",
                 id="MaxPool2d_kernel"),
    pytest.param(lambda: nn.MaxPool2d(2, stride=0), ValueError, "MaxPool2d: stride must be >= 1",
                 id="MaxPool2d_stride"),
    pytest.param(lambda: nn.MaxPool2d(2, padding=2), ValueError,
                 "MaxPool2d: padding must be at most half the kernel size", id="MaxPool2d_padding"),
    pytest.param(lambda: nn.MaxPool2d(2, ceil_mode=1), TypeError, "MaxPool2d: ceil_mode must be",
                 id="MaxPool2d_ceil_mode"),
    pytest.param(lambda: nn.AvgPool2d((2, 0)), ValueError, "AvgPool2d: kernel_size must be >= 1",
                 id="AvgPool2d_kernel"),
    pytest.param(lambda: nn.LocalResponseNorm(0), ValueError,
                 "LocalResponseNorm: size must be >= 1, got 0", id="LRN_size"),
    pytest.param(lambda: nn.LocalResponseNorm(2, alpha=float("nan")), ValueError,
                 "LocalResponseNorm: alpha must be finite", id="LRN_alpha"),
    pytest.param(lambda: nn.AdaptiveAvgPool2d(-1), ValueError,
                 "AdaptiveAvgPool2d: output_size entries must be positive", id="AdaptiveAvgPool2d"),
    pytest.param(lambda: nn.AdaptiveMaxPool2d((3, 1.5)), TypeError,
                 "AdaptiveMaxPool2d: output_size entries must be ints or None", id="AdaptiveMaxPool2d"),
    pytest.param(lambda: nn.CrossEntropyLoss(label_smoothing=2), ValueError,
                 r"CrossEntropyLoss: label_smoothing must be in \[0, 1\], got 2", id="CE_smoothing"),
    pytest.param(lambda: nn.CrossEntropyLoss(ignore_index=1.5), TypeError,
                 "CrossEntropyLoss: ignore_index must be an int", id="CE_ignore_index"),
    pytest.param(lambda: nn.NLLLoss(ignore_index=None), TypeError,
                 "NLLLoss: ignore_index must be an int", id="NLL_ignore_index"),
    pytest.param(lambda: nn.Embedding(5, 3, max_norm=-1), ValueError,
                 "Embedding: max_norm must be >= 0.0, got -1.0", id="Embedding_max_norm"),
    pytest.param(lambda: nn.Conv2d(3, 4, 3, padding="same", stride=2), ValueError,
                 "Conv2d: padding='same' is not supported for strided convolutions", id="Conv2d_same"),
    pytest.param(lambda: nn.Conv2d(3, 4, 3, padding="full"), ValueError,
                 "Conv2d: invalid padding string 'full'", id="Conv2d_padding_string"),
    pytest.param(lambda: nn.Conv2d(3, 4, 3, stride=0), ValueError, "Conv2d: stride must be >= 1",
                 id="Conv2d_stride"),
    pytest.param(lambda: nn.ConvTranspose2d(3, 4, 3, padding=-1), ValueError,
                 "ConvTranspose2d: padding must be >= 0", id="ConvTranspose2d_padding"),
])
def test_layer_arguments_are_checked_when_built(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_conv2d_same_with_stride_is_refused_when_built_as_pytorch():
    torch = _torch()
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        torch.nn.Conv2d(3, 4, 3, padding="same", stride=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv2d(3, 4, 3, padding="same", stride=2)


def test_valid_layer_arguments_still_build_and_run():
    x = minifw.randn(1, 4, 6, 6)
    assert nn.MaxPool2d(3, stride=2, padding=1)(x).shape == (1, 4, 3, 3)
    assert nn.AvgPool2d([2, 2], padding=(1, 0))(x).shape == (1, 4, 4, 3)
    assert nn.AdaptiveAvgPool2d((None, 2))(x).shape == (1, 4, 6, 2)
    assert nn.AdaptiveMaxPool2d(1)(x).shape == (1, 4, 1, 1)
    assert nn.LocalResponseNorm(2)(x).shape == (1, 4, 6, 6)
    assert nn.Conv2d(4, 2, 3, padding="same")(x).shape == (1, 2, 6, 6)
    assert nn.Conv2d(4, 2, [3, 3], stride=[2, 1], padding=[1, 0]).stride == (2, 1)
    assert nn.Embedding(5, 3, max_norm=1.0)(minifw.tensor([0, 4])).shape == (2, 3)
    assert nn.CrossEntropyLoss(label_smoothing=1.0).label_smoothing == 1.0


# ---- nn.init ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, message", [
    (lambda t: init.uniform_(t, 2, 1), r"uniform_: expects a <= b .*found a=2.0 > b=1.0"),
    (lambda t: init.normal_(t, 0, -1), r"normal_: expects std >= 0.0 .*found std=-1.0"),
    (lambda t: init.normal_(t, float("nan")), r"normal_: mean must be finite"),
    (lambda t: init.trunc_normal_(t, 0, 0), r"trunc_normal_: expects std > 0.0"),
    (lambda t: init.trunc_normal_(t, 0, 1, 2, 1), r"trunc_normal_: expects a <= b"),
])
def test_init_arguments_are_checked(call, message):
    t = minifw.zeros(3, 4)
    with pytest.raises(ValueError, match=message):
        call(t)
    assert t.tolist() == [[0.0] * 4] * 3


def test_init_argument_errors_as_pytorch():
    torch = _torch()
    t = torch.zeros(3, 4)
    with pytest.raises(RuntimeError, match="from=2 > to=1"):
        torch.nn.init.uniform_(t, 2, 1)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        torch.nn.init.normal_(t, 0, -1)


RANDOM_INITS = {
    "uniform_": lambda t: init.uniform_(t),
    "normal_": lambda t: init.normal_(t),
    "trunc_normal_": lambda t: init.trunc_normal_(t),
    "xavier_uniform_": lambda t: init.xavier_uniform_(t),
    "xavier_normal_": lambda t: init.xavier_normal_(t),
    "kaiming_uniform_": lambda t: init.kaiming_uniform_(t),
    "kaiming_normal_": lambda t: init.kaiming_normal_(t),
    "orthogonal_": lambda t: init.orthogonal_(t),
}


@pytest.mark.parametrize("name", sorted(RANDOM_INITS))
def test_random_inits_refuse_an_integer_tensor(name):
    t = minifw.zeros(3, 4, dtype=minifw.int64)
    with pytest.raises(TypeError, match=rf"{name}: tensor must be floating point .*got dtype int64"):
        RANDOM_INITS[name](t)
    assert t.tolist() == [[0] * 4] * 3  # not silently rounded


@pytest.mark.parametrize("name", sorted(RANDOM_INITS))
def test_random_inits_refuse_an_integer_tensor_as_pytorch(name):
    torch = _torch()
    with pytest.raises(NotImplementedError):
        getattr(torch.nn.init, name)(torch.zeros(3, 4, dtype=torch.int64))


def test_deterministic_inits_still_fill_an_integer_tensor_as_pytorch():
    t = minifw.zeros(2, 3, dtype=minifw.int64)
    assert init.constant_(t, 7).tolist() == [[7] * 3] * 2
    assert init.ones_(t).tolist() == [[1] * 3] * 2
    assert init.zeros_(t).tolist() == [[0] * 3] * 2
    assert init.eye_(t).tolist() == [[1, 0, 0], [0, 1, 0]]
    with pytest.raises(TypeError, match="zeros_: tensor must be a minifw.Tensor, got ndarray"):
        init.zeros_(np.zeros(3))


# ---- sizes too large for the recurrent layers -------------------------------------------

@pytest.mark.parametrize("build", [
    lambda: nn.LSTM(3, 2 ** 40), lambda: nn.GRU(3, 2 ** 30, num_layers=2),
    lambda: nn.LSTMCell(3, 2 ** 40), lambda: nn.RNNCell(2 ** 57, 2),
], ids=["LSTM", "GRU", "LSTMCell", "RNNCell"])
def test_recurrent_layer_with_too_many_weights_names_hidden_size(build):
    with pytest.raises(ValueError, match=r"hidden_size=\d+ is too large: input_size=\d+, "
                                         r"hidden_size=\d+.* need \d+ weights, more than 2\*\*58"):
        build()


def test_recurrent_layer_size_beyond_the_native_range():
    with pytest.raises(ValueError, match=r"LSTM: hidden_size must be at most 2\*\*58"):
        nn.LSTM(3, 2 ** 60)
    with pytest.raises(ValueError, match=r"Linear: in_features must be at most 2\*\*58"):
        nn.Linear(2 ** 59, 1)


def test_recurrent_layer_that_cannot_be_allocated_names_hidden_size(monkeypatch):
    from minifw.nn.modules import rnn as rnn_module

    def fail(*args, **kwargs):
        raise MemoryError("Unable to allocate")
    monkeypatch.setattr(rnn_module._FlatWeights, "_allocate_flat_parameters", fail)
    with pytest.raises(MemoryError, match=r"LSTM: hidden_size=20 is too large: input_size=3, "
                                          r"hidden_size=20, num_layers=1 need 2000 weights"):
        nn.LSTM(3, 20)


def test_recurrent_weight_count_is_unchanged_for_ordinary_sizes():
    for layer, count in ((nn.LSTM(3, 5, num_layers=2, bidirectional=True),
                          2 * (4 * 5 * (3 + 5 + 2)) + 2 * (4 * 5 * (10 + 5 + 2))),
                         (nn.GRUCell(4, 2, bias=False), 3 * 2 * (4 + 2))):
        assert sum(p.numel() for p in layer.parameters()) == count
