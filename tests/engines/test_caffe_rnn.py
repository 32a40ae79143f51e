"""The Caffe engine's recurrent layers (a loop over the steps, one GEMM each) against
the float64 per-step reference and against the primitives: y, h_n, c_n, dx, dh0, dc0
and the weight gradients, every mode, 1 and 2 layers, uni- and bidirectional, with
and without bias; variable lengths (packed-sequence semantics) against the reference
run on each sequence alone, and their gradients against finite differences; and on
the GPU devices ("cudasim", "cuda", emulated where there is no GPU), where every
result stays on the inputs' device and equals the CPU's."""
import re
import tracemalloc

import numpy as np
import pytest

from minifw import devices, ops
from minifw.engines import caffe
from reference import numerical_grad, rnn_forward_ref
from targets import assert_on, cuda_available, place

MODES = ("lstm", "gru", "rnn_tanh", "rnn_relu")
LAYOUTS = {"1layer": (1, False), "1layer_bidir": (1, True), "2layers": (2, False), "2layers_bidir": (2, True)}
INPUT, HIDDEN = 3, 4
LENGTHS = [5, 2, 1, 4]  # variable lengths: unsorted, one of a single step, one full (each in [1, T], as ops)
# float64 throughout: both engines compute the same formulas, so only summation order differs
TOL = dict(rtol=1e-12, atol=1e-12)
# central differences (eps 1e-6) of an O(10) loss are good to ~1e-9
GRAD_TOL = dict(rtol=1e-6, atol=1e-8)


def _problem(rng, mode, layers, bidirectional, bias=True, T=5, N=3):
    desc = ops.RNNDescriptor(mode, INPUT, HIDDEN, layers, bidirectional, bias, np.float64)
    states = (layers * desc.num_directions, N, HIDDEN)
    x = rng.standard_normal((T, N, INPUT))
    h0 = rng.standard_normal(states)
    c0 = rng.standard_normal(states) if mode == "lstm" else None
    w = rng.uniform(-0.5, 0.5, desc.weight_count())
    return desc, x, h0, c0, w


def _gradients(engine, desc, x, h0, c0, w, dy, dh_n, dc_n, **lengths):
    y, h_n, c_n, reserve = engine.rnn_forward(desc, x, h0, c0, w, **lengths)
    dx, dh0, dc0 = engine.rnn_backward_data(desc, x, w, reserve, h0, c0, dy, dh_n, dc_n, **lengths)
    dw = engine.rnn_backward_weights(desc, x, reserve, h0, np.zeros_like(w), **lengths)
    return dict(y=y, h_n=h_n, c_n=c_n, dx=dx, dh0=dh0, dc0=dc0, dw=dw), reserve


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODES)
def test_matches_the_reference_and_the_primitives(rng, mode, layout, bias):
    desc, x, h0, c0, w = _problem(rng, mode, *layout, bias)
    y, h_n, c_n, _ = caffe.rnn_forward(desc, x, h0, c0, w)
    for got, want in zip((y, h_n, c_n), rnn_forward_ref(desc, x, h0, c0, w)):
        np.testing.assert_allclose(got, want, **TOL) if want is not None else None
    dy = rng.standard_normal(y.shape)
    dh_n = rng.standard_normal(h0.shape)
    dc_n = rng.standard_normal(h0.shape) if mode == "lstm" else None
    got, reserve = _gradients(caffe, desc, x, h0, c0, w, dy, dh_n, dc_n)
    want, _ = _gradients(ops, desc, x, h0, c0, w, dy, dh_n, dc_n)
    assert reserve.size == desc.reserve_size(*x.shape[:2])
    for name in want:
        if want[name] is None:
            assert got[name] is None, name
        else:
            np.testing.assert_allclose(got[name], want[name], err_msg=name, **TOL)


@pytest.mark.parametrize("lengths", [None, LENGTHS], ids=["full", "lengths"])
@pytest.mark.parametrize("layout", {**LAYOUTS, "3layers_bidir": (3, True)}.values(),
                         ids=[*LAYOUTS, "3layers_bidir"])
@pytest.mark.parametrize("mode", MODES)
def test_inference_keeps_no_reserve_and_gives_trainings_results_to_the_bit(rng, mode, layout, lengths):
    desc, x, h0, c0, w = _problem(rng, mode, *layout, N=len(LENGTHS))
    y, h_n, c_n, reserve = caffe.rnn_forward(desc, x, h0, c0, w, lengths=lengths)
    y_i, h_i, c_i, no_reserve = caffe.rnn_forward(desc, x, h0, c0, w, training=False, lengths=lengths)
    assert reserve is not None and no_reserve is None
    for got, want in ((y_i, y), (h_i, h_n), (c_i, c_n)):
        if want is None:
            assert got is None
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_inference_peak_memory_is_far_below_the_reserve(rng, mode):
    # Per step the gates and state are temporaries; what stays is the input projection of one
    # layer and direction (T, N, G*H) and two layers' states (T, N, D*H), beside one step's
    # temporaries (a dozen or so of (N, G*H)), the inputs and the final states.
    T, N, H = 64, 16, 64
    desc = ops.RNNDescriptor(mode, INPUT, H, 2, True, True, np.float64)
    x = rng.standard_normal((T, N, INPUT))
    w = rng.uniform(-0.5, 0.5, desc.weight_count())

    def peak(training):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            caffe.rnn_forward(desc, x, None, None, w, training)
            return tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()

    reserve = 8 * desc.reserve_size(T, N)
    assert peak(True) >= reserve
    inference = peak(False)
    assert inference < 8 * (T * N * (desc.gates * H + 2 * 2 * H) + 16 * N * desc.gates * H) + 2 ** 17
    assert inference < reserve / 2


def test_gradients_accumulate_into_dweights(rng):
    desc, x, h0, c0, w = _problem(rng, "gru", 1, True)
    y, h_n, _, reserve = caffe.rnn_forward(desc, x, h0, c0, w)
    caffe.rnn_backward_data(desc, x, w, reserve, h0, None, np.ones_like(y), None, None)
    once = caffe.rnn_backward_weights(desc, x, reserve, h0, np.zeros_like(w)).copy()
    dw = np.ones_like(w)
    assert caffe.rnn_backward_weights(desc, x, reserve, h0, dw) is dw
    np.testing.assert_allclose(dw, once + 1, **TOL)


# ---- variable lengths ---------------------------------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODES)
def test_lengths_match_each_sequence_run_alone(rng, mode, layout):
    desc, x, h0, c0, w = _problem(rng, mode, *layout, N=len(LENGTHS))
    y, h_n, c_n, _ = caffe.rnn_forward(desc, x, h0, c0, w, lengths=np.array(LENGTHS))
    for i, n in enumerate(LENGTHS):
        one = slice(i, i + 1)
        y_ref, h_ref, c_ref = rnn_forward_ref(desc, x[:n, one], h0[:, one], None if c0 is None else c0[:, one], w)
        np.testing.assert_allclose(y[:n, one], y_ref, err_msg=f"y of entry {i}", **TOL)
        assert not y[n:, i].any(), f"y of entry {i} past its end"
        np.testing.assert_allclose(h_n[:, one], h_ref if n else h0[:, one], err_msg=f"h_n of entry {i}", **TOL)
        if mode == "lstm":
            np.testing.assert_allclose(c_n[:, one], c_ref if n else c0[:, one], err_msg=f"c_n of entry {i}",
                                       **TOL)


def test_full_lengths_equal_no_lengths(rng):
    desc, x, h0, c0, w = _problem(rng, "lstm", 2, True)
    dy, dh_n, dc_n = rng.standard_normal((5, 3, 8)), rng.standard_normal(h0.shape), rng.standard_normal(h0.shape)
    plain, _ = _gradients(caffe, desc, x, h0, c0, w, dy, dh_n, dc_n)
    full, _ = _gradients(caffe, desc, x, h0, c0, w, dy, dh_n, dc_n, lengths=[5, 5, 5])
    for name in plain:
        np.testing.assert_allclose(full[name], plain[name], err_msg=name, **TOL)


@pytest.mark.parametrize("layout", [(1, True), (2, True)], ids=["1layer_bidir", "2layers_bidir"])
@pytest.mark.parametrize("mode", MODES)
def test_length_gradients_match_finite_differences(rng, mode, layout):
    desc, x, h0, c0, w = _problem(rng, mode, *layout, N=len(LENGTHS))
    lstm, lengths = mode == "lstm", np.array(LENGTHS)
    dy = rng.standard_normal((x.shape[0], x.shape[1], desc.num_directions * HIDDEN))
    dh_n = rng.standard_normal(h0.shape)
    dc_n = rng.standard_normal(h0.shape) if lstm else None

    def loss(x=x, h0=h0, c0=c0, w=w):
        y, h_n, c_n, _ = caffe.rnn_forward(desc, x, h0, c0, w, training=False, lengths=lengths)
        return np.sum(y * dy) + np.sum(h_n * dh_n) + (np.sum(c_n * dc_n) if lstm else 0.0)

    got, _ = _gradients(caffe, desc, x, h0, c0, w, dy, dh_n, dc_n, lengths=lengths)
    np.testing.assert_allclose(got["dx"], numerical_grad(lambda a: loss(x=a), x), err_msg="dx", **GRAD_TOL)
    np.testing.assert_allclose(got["dh0"], numerical_grad(lambda a: loss(h0=a), h0), err_msg="dh0", **GRAD_TOL)
    if lstm:
        np.testing.assert_allclose(got["dc0"], numerical_grad(lambda a: loss(c0=a), c0), err_msg="dc0",
                                   **GRAD_TOL)
    np.testing.assert_allclose(got["dw"], numerical_grad(lambda a: loss(w=a), w), err_msg="dw", **GRAD_TOL)


@pytest.mark.parametrize("lengths, error, message", [
    ([1, 2], ValueError, "lengths must hold N=3 values"),
    ([1.0, 2.0, 3.0], TypeError, "lengths must be integers"),
    ([1, 6, 2], ValueError, r"lengths must each be in \[1, T=5\], got 6 at index 1"),
    ([1, -1, 2], ValueError, r"lengths must each be in \[1, T=5\], got -1 at index 1"),
    ([1, 0, 2], ValueError, r"lengths must each be in \[1, T=5\], got 0 at index 1"),
], ids=["wrong_size", "float", "too_long", "negative", "empty"])
def test_bad_lengths(rng, lengths, error, message):
    desc, x, h0, c0, w = _problem(rng, "gru", 1, False)
    with pytest.raises(error, match="rnn_forward: " + message):
        caffe.rnn_forward(desc, x, h0, c0, w, lengths=lengths)


def test_bad_input_raises_what_the_primitives_raise(rng):
    desc, x, h0, c0, w = _problem(rng, "lstm", 1, False)
    for args in [(desc, x[..., :2], h0, c0, w), (desc, x, h0[:, :2], c0, w), (desc, x, h0, c0, w[:-1]),
                 (desc, x.astype(np.float32), h0, c0, w)]:
        with pytest.raises((ValueError, TypeError)) as want:
            ops.rnn_forward(*args)
        with pytest.raises(type(want.value), match=re.escape(str(want.value))):
            caffe.rnn_forward(*args)


# ---- the GPU devices ------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["cudasim", "cuda" if cuda_available() else "cuda-emulated"], indirect=True)
@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_runs_on_the_device_of_its_inputs_as_on_the_cpu(target, rng, mode):
    # 2 layers, both directions, variable lengths (given as an array of the device), h0 and c0
    # left to the engine: every array it makes is made on the device
    desc, x, _, _, w = _problem(rng, mode, 2, True, N=len(LENGTHS))
    dy = rng.standard_normal((x.shape[0], x.shape[1], 2 * HIDDEN))
    dh_n = rng.standard_normal((4, len(LENGTHS), HIDDEN))
    dc_n = dh_n[::-1].copy() if mode == "lstm" else None
    on = dict(zip(("x", "w", "dy", "dh_n", "dc_n", "lengths"), place(target, x, w, dy, dh_n, dc_n, LENGTHS)))
    want, _ = _gradients(caffe, desc, x, None, None, w, dy, dh_n, dc_n, lengths=np.array(LENGTHS))
    got, reserve = _gradients(caffe, desc, on["x"], None, None, on["w"], on["dy"], on["dh_n"], on["dc_n"],
                              lengths=on["lengths"])
    assert_on(target, reserve, *(a for a in got.values() if a is not None))
    for name in want:
        if want[name] is None:
            assert got[name] is None, name
        else:
            np.testing.assert_allclose(got[name], want[name], err_msg=name, **TOL)
    inference = caffe.rnn_forward(desc, on["x"], None, None, on["w"], False, lengths=on["lengths"])
    assert inference[3] is None
    assert_on(target, *(a for a in inference[:3] if a is not None))
    with pytest.raises(ValueError, match="rnn_forward: expected every array on one device"):
        caffe.rnn_forward(desc, on["x"], None, None, devices.to_device(on["w"], devices.CPU))
