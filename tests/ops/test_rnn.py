"""Recurrent layers (LSTM, GRU, RNN tanh/relu) fused over the sequence: the
forward against the float64 per-step reference on PyTorch's flat weight layout
(every mode, 1 and 2 layers, uni- and bidirectional, with and without bias,
float32 and float64, on every target: the CPU under every ISA and the CUDA
kernels on the emulator); dx, dh0, dc0 and the weight gradients against finite
differences on the CPU, and the CUDA kernels' against the CPU's (with lengths,
and inference); PyTorch's names and shapes; torch.nn itself when installed; bad
input."""

import tracemalloc

import numpy as np
import pytest

import minifw
from minifw import ops
from reference import bad_call_test, binding_tests, numerical_grad, rnn_cell_ref, rnn_forward_ref
from targets import assert_on, host, kernel_devices, place

MODES = ("lstm", "gru", "rnn_tanh", "rnn_relu")
DTYPES = (np.float32, np.float64)
# Gate values and states are O(1) (the relu RNN's stay small with weights in
# [-0.5, 0.5]); float32 rounding of each GEMM and activation compounds over 5
# steps and 2 layers to a few hundred ulp at most.
TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}
LAYOUTS = {
    "1layer": (1, False),
    "1layer_bidir": (1, True),
    "2layers": (2, False),
    "2layers_bidir": (2, True),
}
INPUT, HIDDEN = 3, 4


def _problem(rng, mode, layers, bidirectional, bias, dtype, T, N):
    desc = ops.RNNDescriptor(mode, INPUT, HIDDEN, layers, bidirectional, bias, dtype)
    states = (layers * desc.num_directions, N, HIDDEN)
    x = rng.standard_normal((T, N, INPUT)).astype(dtype)
    h0 = rng.standard_normal(states).astype(dtype)
    c0 = rng.standard_normal(states).astype(dtype) if mode == "lstm" else None
    w = rng.uniform(-0.5, 0.5, desc.weight_count()).astype(dtype)
    return desc, x, h0, c0, w


@pytest.mark.parametrize("TN", [(1, 1), (5, 3)], ids=["T1_N1", "T5_N3"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_forward_matches_reference(target, rng, dtype, mode, layout, bias, TN):
    desc, x, h0, c0, w = _problem(rng, mode, *layout, bias, dtype, *TN)
    y, h_n, c_n, reserve = ops.rnn_forward(desc, *place(target, x, h0, c0, w))
    y_ref, h_ref, c_ref = rnn_forward_ref(desc, x, h0, c0, w)
    assert y.dtype == h_n.dtype == dtype and reserve.size == desc.reserve_size(*TN)
    assert_on(target, y, h_n, reserve, *([c_n] if mode == "lstm" else []))
    np.testing.assert_allclose(y, y_ref, **TOL[dtype])
    np.testing.assert_allclose(h_n, h_ref, **TOL[dtype])
    if mode == "lstm":
        np.testing.assert_allclose(c_n, c_ref, **TOL[dtype])
    else:
        assert c_n is None


def _loss_and_grads(desc, x, h0, c0, w, rng):
    """sum(y * dy) + sum(h_n * dh_n) (+ sum(c_n * dc_n)), its gradients from the
    primitives and the loss as a function of each input."""
    lstm = desc.mode == "lstm"
    T, N, _ = x.shape
    dy = rng.standard_normal((T, N, desc.num_directions * HIDDEN)).astype(x.dtype)
    dh_n = rng.standard_normal(h0.shape).astype(x.dtype)
    dc_n = rng.standard_normal(h0.shape).astype(x.dtype) if lstm else None

    def loss(x=x, h0=h0, c0=c0, w=w):
        y, h_n, c_n, _ = ops.rnn_forward(desc, x, h0, c0, w, training=False)
        return np.sum(y * dy) + np.sum(h_n * dh_n) + (np.sum(c_n * dc_n) if lstm else 0.0)

    _, _, _, reserve = ops.rnn_forward(desc, x, h0, c0, w)
    dx, dh0, dc0 = ops.rnn_backward_data(desc, x, w, reserve, h0, c0, dy, dh_n, dc_n)
    dw = np.zeros_like(w)
    ops.rnn_backward_weights(desc, x, reserve, h0, dw)
    return loss, dx, dh0, dc0, dw, reserve


# Central differences (eps 1e-6) of an O(10) loss are good to ~1e-9.
GRAD_TOL = dict(rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("T", [1, 4])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODES)
def test_gradients_match_finite_differences(rng, mode, layout, bias, T):
    desc, x, h0, c0, w = _problem(rng, mode, *layout, bias, np.float64, T, 2)
    loss, dx, dh0, dc0, dw, _ = _loss_and_grads(desc, x, h0, c0, w, rng)
    np.testing.assert_allclose(dx, numerical_grad(lambda v: loss(x=v), x), **GRAD_TOL)
    np.testing.assert_allclose(dh0, numerical_grad(lambda v: loss(h0=v), h0), **GRAD_TOL)
    np.testing.assert_allclose(dw, numerical_grad(lambda v: loss(w=v), w), **GRAD_TOL)
    if mode == "lstm":
        np.testing.assert_allclose(dc0, numerical_grad(lambda v: loss(c0=v), c0), **GRAD_TOL)
    else:
        assert dc0 is None


@pytest.mark.parametrize("mode", MODES)
def test_float32_gradients_match_float64(isa, rng, mode):
    desc, x, h0, c0, w = _problem(rng, mode, 2, True, True, np.float64, 5, 3)
    _, dx, dh0, dc0, dw, _ = _loss_and_grads(desc, x, h0, c0, w, np.random.default_rng(1))
    d32 = ops.RNNDescriptor(mode, INPUT, HIDDEN, 2, True, True, np.float32)
    f32 = [None if a is None else a.astype(np.float32) for a in (x, h0, c0, w)]
    _, dx32, dh032, dc032, dw32, _ = _loss_and_grads(d32, *f32, np.random.default_rng(1))
    for a, b in ((dx32, dx), (dh032, dh0), (dc032, dc0), (dw32, dw)):
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_results_do_not_depend_on_thread_count(rng, mode):
    # Wide enough (N * G * H) for the gate passes and the GEMMs to be split over threads.
    desc = ops.RNNDescriptor(mode, 24, 64, 2, True, True, np.float32)
    x = rng.standard_normal((6, 64, 24)).astype(np.float32)
    w = rng.uniform(-0.2, 0.2, desc.weight_count()).astype(np.float32)
    dy = rng.standard_normal((6, 64, 128)).astype(np.float32)
    before = minifw.get_num_threads()
    out = []
    try:
        for n in (1, 2):
            minifw.set_num_threads(n)
            y, h_n, c_n, reserve = ops.rnn_forward(desc, x, None, None, w)
            dx, dh0, _ = ops.rnn_backward_data(desc, x, w, reserve, None, None, dy, None, None)
            dw = ops.rnn_backward_weights(desc, x, reserve, None, np.zeros_like(w))
            out.append((y, h_n, dx, dh0, dw))
    finally:
        minifw.set_num_threads(before)
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_weight_gradients_accumulate(rng):
    desc, x, h0, c0, w = _problem(rng, "gru", 2, True, True, np.float64, 3, 2)
    _, _, _, _, dw, reserve = _loss_and_grads(desc, x, h0, c0, w, rng)
    acc = np.ones_like(w)
    assert ops.rnn_backward_weights(desc, x, reserve, h0, acc) is acc
    np.testing.assert_allclose(acc, 1 + dw, rtol=1e-14, atol=1e-14)


def test_zero_initial_states_and_gradients_default_to_zeros(rng):
    desc, x, h0, c0, w = _problem(rng, "lstm", 2, True, True, np.float64, 3, 2)
    zeros = np.zeros_like(h0)
    y, h_n, c_n, reserve = ops.rnn_forward(desc, x, None, None, w)
    y0, h_n0, c_n0, reserve0 = ops.rnn_forward(desc, x, zeros, zeros, w)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(c_n, c_n0)
    dy = rng.standard_normal(y.shape)
    got = ops.rnn_backward_data(desc, x, w, reserve, None, None, dy, None, None)
    want = ops.rnn_backward_data(desc, x, w, reserve0, zeros, zeros, dy, zeros, zeros)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


# ---- inference: no reserve, the same results --------------------------------------
# N 40 splits T 30 into three blocks of input projections (13, 13, 4 steps), so
# every layer and direction crosses block boundaries in both step orders.
INFER_T, INFER_N = 30, 40
INFER_LAYOUTS = {**LAYOUTS, "3layers": (3, False), "3layers_bidir": (3, True)}


@pytest.mark.parametrize("lengths", [False, True], ids=["full", "lengths"])
@pytest.mark.parametrize("layout", INFER_LAYOUTS.values(), ids=INFER_LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODES)
def test_inference_gives_trainings_results_to_the_bit(isa, rng, mode, layout, lengths):
    desc, x, h0, c0, w = _problem(rng, mode, *layout, True, np.float32, INFER_T, INFER_N)
    lengths = rng.integers(1, INFER_T + 1, INFER_N) if lengths else None
    y, h_n, c_n, reserve = ops.rnn_forward(desc, x, h0, c0, w, lengths=lengths)
    y_i, h_i, c_i, no_reserve = ops.rnn_forward(desc, x, h0, c0, w, training=False, lengths=lengths)
    assert reserve.size == desc.reserve_size(INFER_T, INFER_N) and no_reserve is None
    np.testing.assert_array_equal(y_i, y)
    np.testing.assert_array_equal(h_i, h_n)
    if mode == "lstm":
        np.testing.assert_array_equal(c_i, c_n)
    else:
        assert c_i is None
    y_ref, h_ref, c_ref = rnn_forward_ref(desc, x, h0, c0, w, lengths=lengths)
    np.testing.assert_allclose(y_i, y_ref, **TOL[np.float32])
    np.testing.assert_allclose(h_i, h_ref, **TOL[np.float32])
    if mode == "lstm":
        np.testing.assert_allclose(c_i, c_ref, **TOL[np.float32])


@pytest.mark.parametrize("mode", MODES)
def test_inference_does_not_touch_the_inputs(rng, mode):
    # LSTM's cell state is updated in place in c_n, never in c0.
    desc, x, h0, c0, w = _problem(rng, mode, 2, True, True, np.float64, 4, 3)
    before = [None if a is None else a.copy() for a in (x, h0, c0, w)]
    ops.rnn_forward(desc, x, h0, c0, w, training=False)
    for a, b in zip((x, h0, c0, w), before):
        if a is not None:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", MODES)
def test_workspace_is_per_step_for_training_and_a_fraction_of_the_reserve_for_inference(mode):
    T, N = 64, 32
    one_layer = ops.RNNDescriptor(mode, 128, 512)
    two_layers = ops.RNNDescriptor(mode, 128, 512, 2, bidirectional=True)
    for desc in (one_layer, two_layers):
        train, infer = desc.workspace_size(T, N), desc.workspace_size(T, N, training=False)
        assert train == desc.workspace_size(1, N)  # one step's recurrent product, whatever T
        assert train < infer < desc.reserve_size(T, N) / 4
    # One layer keeps no layer output: a longer sequence needs no more scratch.
    assert one_layer.workspace_size(10 * T, N, training=False) == one_layer.workspace_size(T, N, training=False)
    # More layers add the one output that feeds the next layer: (T, N, D*H).
    three = ops.RNNDescriptor(mode, 128, 512, 3, bidirectional=True)
    assert three.workspace_size(T, N, training=False) == two_layers.workspace_size(T, N, training=False)
    assert (two_layers.workspace_size(T, N, training=False)
            - ops.RNNDescriptor(mode, 128, 512, 1, bidirectional=True).workspace_size(T, N, training=False)
            == T * N * 2 * 512)
    for training in (True, False):
        assert one_layer.workspace_size(0, N, training) == one_layer.workspace_size(T, 0, training) == 0


def _traced_peak(run):
    """The most bytes NumPy held at once (tracemalloc) while run() ran, beyond what it held before;
    the workspace allocator starts empty, so what the primitive takes from it is counted."""
    minifw.devices.workspace().clear()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
        minifw.devices.workspace().clear()


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODES)
def test_inference_allocates_its_outputs_and_workspace_only(rng, mode, layout):
    T, N = 64, 32
    desc, x, h0, c0, w = _problem(rng, mode, *layout, True, np.float32, T, N)
    item = np.dtype(np.float32).itemsize
    outputs = item * (T * N * desc.num_directions * HIDDEN + (2 if mode == "lstm" else 1) * h0.size)
    reserve = item * desc.reserve_size(T, N)
    workspace = item * desc.workspace_size(T, N, training=False)
    slack = 4096  # the NumPy scalars and small arrays the argument checks make
    infer = _traced_peak(lambda: ops.rnn_forward(desc, x, h0, c0, w, training=False))
    assert infer <= outputs + workspace + slack < reserve
    # the same measure sees the reserve when training
    assert _traced_peak(lambda: ops.rnn_forward(desc, x, h0, c0, w)) >= outputs + reserve


def test_forward_takes_its_workspace_from_the_device_allocator(rng):
    desc, x, h0, c0, w = _problem(rng, "lstm", 2, False, True, np.float32, 64, 32)
    needed = 4 * desc.workspace_size(64, 32, training=False)
    allocator = minifw.devices.workspace()
    allocator.clear()
    try:
        ops.rnn_forward(desc, x, h0, c0, w, training=False)
        assert allocator.peak_bytes == needed
        allocator.clear()
        allocator.limit = needed - 1
        with pytest.raises(MemoryError, match=f"workspace: {needed:,} bytes requested on cpu, over the limit"):
            ops.rnn_forward(desc, x, h0, c0, w, training=False)
    finally:
        allocator.limit = None
        allocator.clear()


@pytest.mark.parametrize("TN", [(0, 2), (3, 0)], ids=["no_steps", "no_sequences"])
def test_empty_batches(target, rng, TN):
    desc, _, h0, c0, w = _problem(rng, "lstm", 2, True, True, np.float64, 1, TN[1])
    dh_n = rng.standard_normal(h0.shape)
    x, h0, c0, w, dh_n = place(target, np.zeros((*TN, INPUT)), h0, c0, w, dh_n)
    y, h_n, c_n, reserve = ops.rnn_forward(desc, x, h0, c0, w)
    assert y.shape == (*TN, 2 * HIDDEN)
    if TN[0] == 0:  # no steps: the final states are the initial ones
        np.testing.assert_array_equal(h_n, h0)
        np.testing.assert_array_equal(c_n, c0)
    dx, dh0, dc0 = ops.rnn_backward_data(desc, x, w, reserve, h0, c0, np.zeros_like(y), dh_n, None)
    assert dx.shape == x.shape
    assert_on(target, y, h_n, c_n, dx, dh0, dc0)
    if TN[0] == 0:
        np.testing.assert_array_equal(dh0, dh_n)
        np.testing.assert_array_equal(dc0, 0)
    dw = np.zeros_like(w)
    ops.rnn_backward_weights(desc, x, reserve, h0, dw)
    np.testing.assert_array_equal(dw, 0)


def test_weight_shapes_are_pytorchs():
    desc = ops.RNNDescriptor("lstm", 3, 4, num_layers=2, bidirectional=True)
    assert desc.gates == 4
    assert desc.weight_shapes() == [
        ("weight_ih_l0", (16, 3)), ("weight_hh_l0", (16, 4)), ("bias_ih_l0", (16,)), ("bias_hh_l0", (16,)),
        ("weight_ih_l0_reverse", (16, 3)), ("weight_hh_l0_reverse", (16, 4)),
        ("bias_ih_l0_reverse", (16,)), ("bias_hh_l0_reverse", (16,)),
        ("weight_ih_l1", (16, 8)), ("weight_hh_l1", (16, 4)), ("bias_ih_l1", (16,)), ("bias_hh_l1", (16,)),
        ("weight_ih_l1_reverse", (16, 8)), ("weight_hh_l1_reverse", (16, 4)),
        ("bias_ih_l1_reverse", (16,)), ("bias_hh_l1_reverse", (16,)),
    ]
    assert desc.weight_count() == 2 * (16 * 3 + 16 * 4 + 32) + 2 * (16 * 8 + 16 * 4 + 32)
    gru = ops.RNNDescriptor("gru", 5, 2, bias=False)
    assert gru.gates == 3 and gru.weight_shapes() == [("weight_ih_l0", (6, 5)), ("weight_hh_l0", (6, 2))]
    assert ops.RNNDescriptor("rnn_relu", 5, 2).gates == 1


@pytest.mark.parametrize("mode", MODES)
def test_named_weights_packed_in_order_give_the_per_step_result(rng, mode):
    # One bidirectional layer written out by hand from named arrays: the flat
    # buffer is the arrays concatenated in weight_shapes() order.
    desc = ops.RNNDescriptor(mode, INPUT, HIDDEN, bidirectional=True, dtype=np.float64)
    named = {name: rng.uniform(-0.5, 0.5, shape) for name, shape in desc.weight_shapes()}
    flat = np.concatenate([named[name].ravel() for name, _ in desc.weight_shapes()])
    for name, view in desc.views(flat).items():
        np.testing.assert_array_equal(view, named[name])
        assert np.shares_memory(view, flat)
    T, N = 4, 2
    x = rng.standard_normal((T, N, INPUT))
    h0 = rng.standard_normal((2, N, HIDDEN))
    c0 = rng.standard_normal((2, N, HIDDEN)) if mode == "lstm" else None
    y, h_n, _, _ = ops.rnn_forward(desc, x, h0, c0, flat)
    for d, sfx in enumerate(("", "_reverse")):
        h, c = h0[d], (None if c0 is None else c0[d])
        for t in (range(T) if d == 0 else reversed(range(T))):
            h, c = rnn_cell_ref(mode, x[t], h, c, *(named[f"{n}_l0{sfx}"]
                                                     for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")))
            np.testing.assert_allclose(y[t, :, d * HIDDEN:(d + 1) * HIDDEN], h, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(h_n[d], h, rtol=1e-12, atol=1e-12)


def _torch_module_and_weights(torch, mode, layers):
    """A bidirectional float64 torch.nn module of `mode`, its descriptor, and its weights
    copied into minifw's flat layout."""
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}.get(mode)
    module = (cls(INPUT, HIDDEN, layers, bidirectional=True) if cls else
              torch.nn.RNN(INPUT, HIDDEN, layers, nonlinearity=mode[4:], bidirectional=True)).double()
    desc = ops.RNNDescriptor(mode, INPUT, HIDDEN, layers, True, dtype=np.float64)
    flat = np.zeros(desc.weight_count())
    for name, view in desc.views(flat).items():
        view[...] = getattr(module, name).detach().numpy()
    return module, desc, flat


@pytest.mark.parametrize("mode", MODES)
def test_matches_torch_nn_with_copied_weights(rng, mode):
    torch = pytest.importorskip("torch")
    layers = 2
    module, desc, flat = _torch_module_and_weights(torch, mode, layers)
    x = rng.standard_normal((5, 3, INPUT))
    h0 = rng.standard_normal((2 * layers, 3, HIDDEN))
    c0 = rng.standard_normal(h0.shape) if mode == "lstm" else None
    y, h_n, c_n, _ = ops.rnn_forward(desc, x, h0, c0, flat)
    state = (torch.tensor(h0), torch.tensor(c0)) if mode == "lstm" else torch.tensor(h0)
    with torch.no_grad():
        ty, tstate = module(torch.tensor(x), state)
    np.testing.assert_allclose(y, ty.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h_n, (tstate[0] if mode == "lstm" else tstate).numpy(), rtol=1e-12, atol=1e-12)
    if mode == "lstm":
        np.testing.assert_allclose(c_n, tstate[1].numpy(), rtol=1e-12, atol=1e-12)


# ---- variable lengths (packed sequences) ------------------------------------------
# Unsorted, with a sequence of length 1 and one of the full T.
T_LEN, LENGTHS = 5, [3, 5, 1, 4]


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_forward_with_lengths_matches_reference(target, rng, dtype, mode, layout):
    desc, x, h0, c0, w = _problem(rng, mode, *layout, True, dtype, T_LEN, len(LENGTHS))
    y, h_n, c_n, _ = ops.rnn_forward(desc, *place(target, x, h0, c0, w), lengths=LENGTHS)
    assert_on(target, y, h_n)
    y_ref, h_ref, c_ref = rnn_forward_ref(desc, x, h0, c0, w, lengths=LENGTHS)
    np.testing.assert_allclose(y, y_ref, **TOL[dtype])
    np.testing.assert_allclose(h_n, h_ref, **TOL[dtype])
    if mode == "lstm":
        np.testing.assert_allclose(c_n, c_ref, **TOL[dtype])
    for n, length in enumerate(LENGTHS):  # padding is exactly zero
        assert not y[length:, n].any()


def _loss_and_grads_with_lengths(desc, x, h0, c0, w, rng, lengths):
    lstm = desc.mode == "lstm"
    T, N, _ = x.shape
    dy = rng.standard_normal((T, N, desc.num_directions * HIDDEN))
    dh_n = rng.standard_normal(h0.shape)
    dc_n = rng.standard_normal(h0.shape) if lstm else None

    def loss(x=x, h0=h0, c0=c0, w=w):
        y, h_n, c_n, _ = ops.rnn_forward(desc, x, h0, c0, w, training=False, lengths=lengths)
        return np.sum(y * dy) + np.sum(h_n * dh_n) + (np.sum(c_n * dc_n) if lstm else 0.0)

    _, _, _, reserve = ops.rnn_forward(desc, x, h0, c0, w, lengths=lengths)
    dx, dh0, dc0 = ops.rnn_backward_data(desc, x, w, reserve, h0, c0, dy, dh_n, dc_n, lengths=lengths)
    dw = ops.rnn_backward_weights(desc, x, reserve, h0, np.zeros_like(w), lengths=lengths)
    return loss, dx, dh0, dc0, dw


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODES)
def test_gradients_with_lengths_match_finite_differences(rng, mode, layout):
    # dy is nonzero at the padding too: it must contribute nothing.
    desc, x, h0, c0, w = _problem(rng, mode, *layout, True, np.float64, T_LEN, len(LENGTHS))
    loss, dx, dh0, dc0, dw = _loss_and_grads_with_lengths(desc, x, h0, c0, w, rng, LENGTHS)
    np.testing.assert_allclose(dx, numerical_grad(lambda v: loss(x=v), x), **GRAD_TOL)
    np.testing.assert_allclose(dh0, numerical_grad(lambda v: loss(h0=v), h0), **GRAD_TOL)
    np.testing.assert_allclose(dw, numerical_grad(lambda v: loss(w=v), w), **GRAD_TOL)
    if mode == "lstm":
        np.testing.assert_allclose(dc0, numerical_grad(lambda v: loss(c0=v), c0), **GRAD_TOL)
    for n, length in enumerate(LENGTHS):
        assert not dx[length:, n].any()


def test_lengths_of_an_empty_batch(rng):
    desc, _, _, _, w = _problem(rng, "lstm", 2, True, True, np.float64, 3, 0)
    x = np.zeros((3, 0, INPUT))
    y, h_n, c_n, reserve = ops.rnn_forward(desc, x, None, None, w, lengths=[])
    assert y.shape == (3, 0, 2 * HIDDEN) and h_n.shape == c_n.shape == (4, 0, HIDDEN)
    dx, _, _ = ops.rnn_backward_data(desc, x, w, reserve, None, None, np.zeros(y.shape), None, None, lengths=[])
    assert dx.shape == x.shape
    np.testing.assert_array_equal(ops.rnn_backward_weights(desc, x, reserve, None, np.zeros_like(w), lengths=[]), 0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_lengths_all_T_give_exactly_the_fixed_length_results(rng, dtype, mode):
    desc, x, h0, c0, w = _problem(rng, mode, 2, True, True, dtype, 4, 3)
    y, h_n, c_n, reserve = ops.rnn_forward(desc, x, h0, c0, w)
    y_l, h_l, c_l, reserve_l = ops.rnn_forward(desc, x, h0, c0, w, lengths=np.array([4, 4, 4]))
    for a, b in ((y, y_l), (h_n, h_l), (c_n, c_l)):
        np.testing.assert_array_equal(a, b)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dh_n = rng.standard_normal(h0.shape).astype(dtype)
    got = ops.rnn_backward_data(desc, x, w, reserve_l, h0, c0, dy, dh_n, None, lengths=[4, 4, 4])
    want = ops.rnn_backward_data(desc, x, w, reserve, h0, c0, dy, dh_n, None)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    dw_l = ops.rnn_backward_weights(desc, x, reserve_l, h0, np.zeros_like(w), lengths=[4, 4, 4])
    np.testing.assert_array_equal(dw_l, ops.rnn_backward_weights(desc, x, reserve, h0, np.zeros_like(w)))


@pytest.mark.parametrize("mode", MODES)
def test_lengths_match_torch_packed_sequence(rng, mode):
    torch = pytest.importorskip("torch")
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    layers = 2
    module, desc, flat = _torch_module_and_weights(torch, mode, layers)
    N = len(LENGTHS)
    x = rng.standard_normal((T_LEN, N, INPUT))
    h0 = rng.standard_normal((2 * layers, N, HIDDEN))
    c0 = rng.standard_normal(h0.shape) if mode == "lstm" else None
    dy = rng.standard_normal((T_LEN, N, 2 * HIDDEN))
    y, h_n, c_n, reserve = ops.rnn_forward(desc, x, h0, c0, flat, lengths=LENGTHS)
    dx, dh0, _ = ops.rnn_backward_data(desc, x, flat, reserve, h0, c0, dy, None, None, lengths=LENGTHS)
    dw = ops.rnn_backward_weights(desc, x, reserve, h0, np.zeros_like(flat), lengths=LENGTHS)

    tx, th0 = torch.tensor(x, requires_grad=True), torch.tensor(h0, requires_grad=True)
    state = (th0, torch.tensor(c0)) if mode == "lstm" else th0
    packed = pack_padded_sequence(tx, torch.tensor(LENGTHS), enforce_sorted=False)
    out, tstate = module(packed, state)
    ty, _ = pad_packed_sequence(out, total_length=T_LEN)
    (ty * torch.tensor(dy)).sum().backward()
    tol = dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y, ty.detach().numpy(), **tol)
    np.testing.assert_allclose(h_n, (tstate[0] if mode == "lstm" else tstate).detach().numpy(), **tol)
    if mode == "lstm":
        np.testing.assert_allclose(c_n, tstate[1].detach().numpy(), **tol)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **tol)
    np.testing.assert_allclose(dh0, th0.grad.numpy(), **tol)
    for name, view in desc.views(dw).items():
        np.testing.assert_allclose(view, getattr(module, name).grad.numpy(), **tol, err_msg=name)


# ---- the CUDA kernels (on the emulator) against the CPU's ---------------------------
# The gradients above are checked against finite differences on the CPU. The CUDA
# kernels must give the CPU's results for every output of training, the reserve
# included (both devices lay it out alike), with and without lengths, and their
# inference must give their own training's results to the bit. The two differ
# only in their GEMMs' summation orders: within TOL, as each is of the reference.
SIM_VARIANTS = {"bias": (True, None), "bias_lengths": (True, LENGTHS), "no_bias_lengths": (False, LENGTHS)}


def _train_and_infer(desc, device, x, h0, c0, w, dy, dh_n, dc_n, lengths):
    """Every result of a training forward, the data and weight backward (dw accumulated
    onto ones) on `device`, and the results of an inference forward there."""
    x, h0, c0, w, dy, dh_n, dc_n = place(device, x, h0, c0, w, dy, dh_n, dc_n)
    y, h_n, c_n, reserve = ops.rnn_forward(desc, x, h0, c0, w, lengths=lengths)
    dx, dh0, dc0 = ops.rnn_backward_data(desc, x, w, reserve, h0, c0, dy, dh_n, dc_n, lengths=lengths)
    ones = place(device, np.ones(w.shape, w.dtype))
    dw = ops.rnn_backward_weights(desc, x, reserve, h0, ones, lengths=lengths)
    inference = ops.rnn_forward(desc, x, h0, c0, w, training=False, lengths=lengths)
    return (dict(y=y, h_n=h_n, c_n=c_n, reserve=reserve, dx=dx, dh0=dh0, dc0=dc0, dw=dw),
            dict(zip(("y", "h_n", "c_n"), inference)))


def _sim_problem(rng, mode, layout, bias, dtype, T, N):
    desc, x, h0, c0, w = _problem(rng, mode, *layout, bias, dtype, T, N)
    dy = rng.standard_normal((T, N, desc.num_directions * HIDDEN)).astype(dtype)
    dh_n = rng.standard_normal(h0.shape).astype(dtype)
    dc_n = rng.standard_normal(h0.shape).astype(dtype) if mode == "lstm" else None
    return desc, x, h0, c0, w, dy, dh_n, dc_n


def _assert_cuda_matches_cpu(desc, dtype, *problem, lengths, device="cudasim"):
    want, _ = _train_and_infer(desc, "cpu", *problem, lengths)
    got, inference = _train_and_infer(desc, device, *problem, lengths)
    for name, a in got.items():
        if want[name] is None:
            assert a is None and desc.mode != "lstm", name
            continue
        assert_on(device, a)
        np.testing.assert_allclose(host(a), want[name], **TOL[dtype], err_msg=name)
    for name, a in inference.items():
        if a is not None:
            np.testing.assert_array_equal(host(a), host(got[name]), err_msg=f"inference {name}")


@pytest.mark.parametrize("device", kernel_devices())
@pytest.mark.parametrize("variant", SIM_VARIANTS.values(), ids=SIM_VARIANTS.keys())
@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_cuda_kernels_give_the_cpus_training_and_inference_results(rng, dtype, mode, layout, variant, device):
    bias, lengths = variant
    problem = _sim_problem(rng, mode, layout, bias, dtype, T_LEN, len(LENGTHS))
    _assert_cuda_matches_cpu(problem[0], dtype, *problem[1:], lengths=lengths, device=device)


@pytest.mark.parametrize("device", kernel_devices())
@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_cuda_inference_crosses_projection_blocks(mode, device):
    # N 40 puts 13 steps in a block of input projections: T 14 takes two blocks, in
    # both step orders, where training projects every step at once.
    rng = np.random.default_rng(0)
    T, N = 14, 40
    problem = _sim_problem(rng, mode, (1, True), True, np.float32, T, N)
    assert problem[0].workspace_size(T, N, training=False, device="cudasim") < problem[0].reserve_size(T, N)
    _assert_cuda_matches_cpu(problem[0], np.float32, *problem[1:], lengths=rng.integers(1, T + 1, N), device=device)


def test_arrays_on_different_devices_are_refused(rng):
    desc, x, h0, c0, w = _problem(rng, "lstm", 1, False, True, np.float32, 2, 1)
    sim_x, sim_w = place("cudasim", x, w)
    with pytest.raises(ValueError, match="rnn_forward: expected every array on one device, got x on 'cudasim', "
                                         "h0 on 'cpu'"):
        ops.rnn_forward(desc, sim_x, h0, c0, sim_w)
    _, _, _, reserve = ops.rnn_forward(desc, x, h0, c0, w)
    with pytest.raises(ValueError, match="rnn_backward_weights: expected every array on one device, got x on "
                                         "'cudasim', reserve on 'cpu'"):
        ops.rnn_backward_weights(desc, sim_x, reserve, None, np.zeros_like(w))


@pytest.mark.parametrize("mode", MODES)
def test_cuda_data_backward_takes_its_workspace_from_the_device_allocator(rng, mode):
    T, N = 3, 2
    desc, x, h0, c0, w, dy, _, _ = _sim_problem(rng, mode, (2, True), True, np.float32, T, N)
    # The forward's workspace is the CPU's; the data backward needs, with more than one
    # layer, the gradient reaching the lower layer's output (the CPU kernel allocates its own).
    for training in (True, False):
        assert desc.workspace_size(T, N, training, device="cudasim") == desc.workspace_size(T, N, training)
    needed = desc.workspace_size(T, N, direction="backward_data", device="cudasim")
    assert needed == T * N * 2 * HIDDEN and desc.workspace_size(T, N, direction="backward_data") == 0
    one_layer = ops.RNNDescriptor(mode, INPUT, HIDDEN, 1, True)
    assert one_layer.workspace_size(T, N, direction="backward_data", device="cudasim") == 0
    x, h0, c0, w, dy = place("cudasim", x, h0, c0, w, dy)
    _, _, _, reserve = ops.rnn_forward(desc, x, h0, c0, w)
    allocator = minifw.devices.workspace("cudasim")
    allocator.clear()
    try:
        allocator.limit = 4 * needed - 1
        with pytest.raises(MemoryError, match=f"workspace: {4 * needed:,} bytes requested on cudasim"):
            ops.rnn_backward_data(desc, x, w, reserve, h0, c0, dy, None, None)
        allocator.limit = None
        ops.rnn_backward_data(desc, x, w, reserve, h0, c0, dy, None, None)
        assert allocator.peak_bytes == 4 * needed
    finally:
        allocator.limit = None
        allocator.clear()


# ---- bad input -----------------------------------------------------------------

D32 = ops.RNNDescriptor("lstm", 3, 4)
GRU = ops.RNNDescriptor("gru", 3, 4)
X = np.ones((2, 1, 3), np.float32)
H0 = np.zeros((1, 1, 4), np.float32)
W = np.zeros(D32.weight_count(), np.float32)
WG = np.zeros(GRU.weight_count(), np.float32)
RES = np.zeros(D32.reserve_size(2, 1), np.float32)
DY = np.ones((2, 1, 4), np.float32)
BAD_CALLS = {
    "bad_mode": (lambda: ops.RNNDescriptor("LSTM", 3, 4), ValueError, "RNNDescriptor: mode must be one of"),
    "hidden_zero": (lambda: ops.RNNDescriptor("gru", 3, 0), ValueError, "RNNDescriptor: hidden_size must be >= 1"),
    "layers_float": (lambda: ops.RNNDescriptor("gru", 3, 4, 1.0), TypeError, "RNNDescriptor: num_layers"),
    "bidirectional_int": (lambda: ops.RNNDescriptor("gru", 3, 4, bidirectional=1), TypeError,
                          "RNNDescriptor: bidirectional must be a bool"),
    "dtype_int": (lambda: ops.RNNDescriptor("gru", 3, 4, dtype=np.int32), TypeError, "RNNDescriptor: dtype"),
    "workspace_size_negative_T": (lambda: D32.workspace_size(-1, 2), ValueError,
                                  "RNNDescriptor.workspace_size: T must be >= 0, got -1"),
    "workspace_size_float_N": (lambda: D32.workspace_size(2, 1.5), TypeError,
                               "RNNDescriptor.workspace_size: N must be an int, got float 1.5"),
    "workspace_size_training_int": (lambda: D32.workspace_size(2, 2, 1), TypeError,
                                    "RNNDescriptor.workspace_size: training must be a bool, got int 1"),
    "workspace_size_direction": (lambda: D32.workspace_size(2, 2, direction="backward_weights"), ValueError,
                                 "RNNDescriptor.workspace_size: direction must be one of 'forward', "
                                 "'backward_data'; got 'backward_weights'"),
    "workspace_size_device": (lambda: D32.workspace_size(2, 2, device="tpu"), ValueError,
                              "RNNDescriptor.workspace_size: device: type must be one of"),
    "training_int": (lambda: ops.rnn_forward(D32, X, H0, H0, W, training=0), TypeError,
                     "rnn_forward: training must be a bool, got int 0"),
    "desc_missing": (lambda: ops.rnn_forward(None, X, H0, H0, W), TypeError, "rnn_forward: desc must be"),
    "x_2d": (lambda: ops.rnn_forward(D32, X[0], H0, H0, W), ValueError, r"rnn_forward: x must be 3-D \(T, N"),
    "wrong_input_size": (lambda: ops.rnn_forward(D32, np.ones((2, 1, 5), np.float32), H0, H0, W), ValueError,
                         "rnn_forward: x must have input_size 3"),
    "x_float64": (lambda: ops.rnn_forward(D32, X.astype(np.float64), H0, H0, W), TypeError,
                  "rnn_forward: x must have dtype float32"),
    "h0_shape": (lambda: ops.rnn_forward(D32, X, np.zeros((2, 1, 4), np.float32), H0, W), ValueError,
                 r"rnn_forward: h0 must have shape \(1, 1, 4\)"),
    "c0_shape": (lambda: ops.rnn_forward(D32, X, H0, np.zeros((1, 2, 4), np.float32), W), ValueError,
                 r"rnn_forward: c0 must have shape \(1, 1, 4\)"),
    "c0_for_gru": (lambda: ops.rnn_forward(GRU, X, H0, H0, WG), ValueError,
                   "rnn_forward: c0 is LSTM's cell state and must be None for mode 'gru'"),
    "weights_length": (lambda: ops.rnn_forward(D32, X, H0, H0, W[1:]), ValueError,
                       f"rnn_forward: weights must have {W.size} elements"),
    "weights_2d": (lambda: ops.rnn_forward(D32, X, H0, H0, W.reshape(1, -1)), ValueError,
                   "rnn_forward: weights must be 1-D"),
    "weights_dtype": (lambda: ops.rnn_forward(D32, X, H0, H0, W.astype(np.float64)), TypeError,
                      "rnn_forward: weights must have dtype float32"),
    "backward_no_reserve": (lambda: ops.rnn_backward_data(D32, X, W, None, H0, H0, DY, None, None), TypeError,
                            "rnn_backward_data: reserve must be the array"),
    "backward_reserve_size": (lambda: ops.rnn_backward_data(D32, X, W, RES[1:], H0, H0, DY, None, None),
                              ValueError, "rnn_backward_data: reserve must have"),
    "backward_dy_shape": (lambda: ops.rnn_backward_data(D32, X, W, RES, H0, H0, DY[:1], None, None), ValueError,
                          "rnn_backward_data: dy must have y's shape"),
    "backward_dh_n_shape": (lambda: ops.rnn_backward_data(D32, X, W, RES, H0, H0, DY, DY, None), ValueError,
                            "rnn_backward_data: dh_n must have shape"),
    "weights_grad_length": (lambda: ops.rnn_backward_weights(D32, X, RES, H0, W[1:].copy()), ValueError,
                            "rnn_backward_weights: dweights must have"),
    "lengths_count": (lambda: ops.rnn_forward(D32, X, H0, H0, W, lengths=[2, 1]), ValueError,
                      r"rnn_forward: lengths must hold N=1 values \(one per batch entry\), got shape \(2,\)"),
    "lengths_zero": (lambda: ops.rnn_forward(D32, X, H0, H0, W, lengths=[0]), ValueError,
                     r"rnn_forward: lengths must each be in \[1, T=2\], got 0 at index 0"),
    "lengths_past_T": (lambda: ops.rnn_backward_data(D32, X, W, RES, H0, H0, DY, None, None, lengths=[3]),
                       ValueError, r"rnn_backward_data: lengths must each be in \[1, T=2\], got 3"),
    "lengths_float": (lambda: ops.rnn_backward_weights(D32, X, RES, H0, W.copy(), lengths=[1.5]), TypeError,
                      "rnn_backward_weights: lengths must be integers"),
    "lengths_bool": (lambda: ops.rnn_forward(D32, X, H0, H0, W, lengths=[True]), TypeError,
                     "rnn_forward: lengths must be integers"),
    "weights_grad_readonly": (lambda: ops.rnn_backward_weights(D32, X, RES, H0, np.broadcast_to(W, W.shape)),
                              ValueError, "rnn_backward_weights: dweights is updated in place"),
}


test_bad_input_raises_naming_the_argument = bad_call_test(BAD_CALLS)


# ---- the binding's own checks ----------------------------------------------------
# minifw._native called directly: wrapped sizes, unknown modes, arrays of the
# wrong size or dtype, outputs sharing memory with inputs. Each must raise,
# never crash (binding_tests runs them in a child process).

BINDING_SETUP = """
f32 = np.float32
# lstm, I 3, H 4, 1 layer, 1 direction, bias, T 2, N 1: 4*4*(3+4)+2*16 = 144 weights, reserve 8 + 2*2*16 + 2*4 = 80
S = ("lstm", 3, 4, 1, 1, True, 2, 1)
x, h0, c0, w = np.ones(6, f32), np.zeros(4, f32), np.zeros(4, f32), np.zeros(144, f32)
y, hn, cn, res = np.empty(8, f32), np.empty(4, f32), np.empty(4, f32), np.empty(80, f32)
empty = np.empty(0, f32)
nolen = np.empty(0, np.int64)
# forward workspace, in float32s: training N*G*H + N*H = 20; inference also 2 steps' gates, 52
ws, ws_infer = np.empty(80, np.uint8), np.empty(208, np.uint8)
nows = np.empty(0, np.uint8)
# two layers: 144 + 16*(4+4)+32 = 304 weights, reserve 2*80; the CUDA data backward's workspace
# is the gradient reaching layer 0's output, T*N*H = 8 float32s
S2 = ("lstm", 3, 4, 2, 1, True, 2, 1)
w2, res2, h2 = np.zeros(304, f32), np.zeros(160, f32), np.zeros(8, f32)
def backward2(ws):
    on_cudasim(_native.rnn_backward_data_cudasim_f32)(*S2, w2, res2, h2, h2, np.ones(8, f32), h2, h2, np.empty(6, f32),
                                          np.empty(8, f32), np.empty(8, f32), ws, nolen)
"""
BINDING_CASES = {
    "forward_ok": ("_native.rnn_forward_f32(*S, True, x, h0, c0, w, y, hn, cn, res, ws, nolen)", None, ""),
    "bad_mode": ("_native.rnn_forward_f32('LSTM', *S[1:], True, x, h0, c0, w, y, hn, cn, res, ws, nolen)", ValueError,
                 "rnn: mode must be"),
    "three_directions": ("_native.rnn_forward_f32('lstm', 3, 4, 1, 3, True, 2, 1, True, x, h0, c0, w, y, hn, cn, "
                         "res, ws, nolen)", ValueError, "directions must be 1 or 2"),
    "steps_wrap": ("_native.rnn_forward_f32('lstm', 3, 4, 1, 1, True, 2 ** 62 + 2, 1, True, x, h0, c0, w, y, hn, cn, "
                   "res, ws, nolen)", ValueError, "rnn: sizes too large"),
    "negative_batch": ("_native.rnn_forward_f32('lstm', 3, 4, 1, 1, True, -2, -1, True, x, h0, c0, w, y, hn, cn, "
                       "res, ws, nolen)", ValueError, "sizes must be >= 0"),
    "hidden_zero": ("_native.rnn_forward_f32('lstm', 3, 0, 1, 1, True, 2, 1, True, x, h0, c0, w, y, hn, cn, res, ws, "
                    "nolen)", ValueError, "must be >= 1"),
    "weights_short": ("_native.rnn_forward_f32(*S, True, x, h0, c0, w[:143], y, hn, cn, res, ws, nolen)", ValueError,
                      "weights: expected 144 elements, got 143"),
    "reserve_short": ("_native.rnn_forward_f32(*S, True, x, h0, c0, w, y, hn, cn, res[:79], ws, nolen)", ValueError,
                      "reserve: expected 80 elements"),
    "c0_missing_for_lstm": ("_native.rnn_forward_f32(*S, True, x, h0, empty, w, y, hn, cn, res, ws, nolen)", ValueError,
                            "c0: expected 4 elements, got 0"),
    "x_float64": ("_native.rnn_forward_f32(*S, True, np.ones(6), h0, c0, w, y, hn, cn, res, ws, nolen)", TypeError,
                  "x: expected dtype float32"),
    "y_is_reserve": ("_native.rnn_forward_f32(*S, True, x, h0, c0, w, res[:8], hn, cn, res, ws, nolen)", ValueError,
                     "must not share memory"),
    "inference_ok": ("_native.rnn_forward_f32(*S, False, x, h0, c0, w, y, hn, cn, empty, ws_infer, nolen)", None,
                     ""),
    "inference_with_a_reserve": ("_native.rnn_forward_f32(*S, False, x, h0, c0, w, y, hn, cn, res, ws_infer, "
                                 "nolen)", ValueError, "reserve: expected 0 elements, got 80"),
    "inference_workspace_short": ("_native.rnn_forward_f32(*S, False, x, h0, c0, w, y, hn, cn, empty, ws, nolen)",
                                  ValueError, "workspace: expected at least 208 bytes, got 80"),
    "workspace_float32": ("_native.rnn_forward_f32(*S, True, x, h0, c0, w, y, hn, cn, res, np.empty(20, f32), "
                          "nolen)", ValueError, "workspace: expected a writable, C-contiguous uint8 array"),
    "workspace_is_y": ("_native.rnn_forward_f32(*S, False, x, h0, c0, w, ws_infer[:32].view(f32), hn, cn, empty, "
                       "ws_infer, nolen)", ValueError, "y: must not share memory with workspace"),
    "workspace_is_x": ("_native.rnn_forward_f32(*S, False, ws_infer[:24].view(f32), h0, c0, w, y, hn, cn, empty, "
                       "ws_infer, nolen)", ValueError, "workspace: must not share memory with x"),
    "workspace_query": ("assert _native.rnn_workspace_f32(*S, 'forward', True) * 4 == ws.size and "
                        "_native.rnn_workspace_f32(*S, 'forward', False) * 4 == ws_infer.size and "
                        "_native.rnn_workspace_f32(*S, 'backward_data', True) == 0", None, ""),
    "workspace_direction": ("_native.rnn_workspace_f32(*S, 'backward', True)", ValueError,
                            "rnn: workspace direction must be 'forward' or 'backward_data', got 'backward'"),
    "cudasim_workspace_query": ("assert on_cudasim(_native.rnn_workspace_cudasim_f32)(*S, 'forward', False) * 4 == ws_infer.size "
                                "and on_cudasim(_native.rnn_workspace_cudasim_f32)(*S2, 'backward_data', True) == 8", None, ""),
    "backward_dx_is_dy": ("_native.rnn_backward_data_f32(*S, w, res, h0, c0, y, hn, cn, y[:6], "
                          "np.empty(4, f32), np.empty(4, f32), nows, nolen)", ValueError,
                          "dx: must not share memory with dy"),
    "cudasim_backward_ok": ("backward2(np.empty(32, np.uint8))", None, ""),
    "cudasim_backward_workspace_short": ("backward2(np.empty(31, np.uint8))", ValueError,
                                         "workspace: expected at least 32 bytes, got 31"),
    "cudasim_backward_workspace_in_reserve": ("backward2(res2[:8].view(np.uint8))", ValueError,
                                              "reserve: must not share memory with workspace"),
    "cudasim_forward_lengths_past_T": ("on_cudasim(_native.rnn_forward_cudasim_f32)(*S, True, x, h0, c0, w, y, hn, cn, res, ws, "
                                       "np.full(1, 3))", ValueError, r"lengths: each must be in \[1, T=2\], got 3"),
    "backward_weights_short": ("_native.rnn_backward_weights_f32(*S, x, res, h0, np.zeros(10, f32), nolen)",
                               ValueError, "dweights: expected 144 elements"),
    "lengths_count": ("_native.rnn_forward_f32(*S, True, x, h0, c0, w, y, hn, cn, res, ws, np.ones(2, np.int64))",
                      ValueError, "lengths: expected 1 elements, got 2"),
    "lengths_int32": ("_native.rnn_forward_f32(*S, True, x, h0, c0, w, y, hn, cn, res, ws, np.ones(1, np.int32))",
                      TypeError, "lengths: expected dtype int64"),
    "lengths_zero": ("_native.rnn_forward_f32(*S, True, x, h0, c0, w, y, hn, cn, res, ws, np.zeros(1, np.int64))",
                     ValueError, r"lengths: each must be in \[1, T=2\], got 0"),
    "lengths_past_T": ("_native.rnn_backward_weights_f32(*S, x, res, h0, np.zeros(144, f32), np.full(1, 3))",
                       ValueError, r"lengths: each must be in \[1, T=2\], got 3"),
    "backward_weights_dw_in_reserve": ("big = np.zeros(200, f32); _native.rnn_backward_weights_f32(*S, x, "
                                       "big[:80], h0, big[56:], nolen)", ValueError,
                                       "dweights: must not share memory with reserve"),
}


binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(BINDING_SETUP, BINDING_CASES)
