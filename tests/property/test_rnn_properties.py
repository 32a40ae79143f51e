"""Recurrent layers (LSTM, GRU, tanh and relu RNNs) on drawn problems, on every device:
sizes, layers, directions, bias, initial states given or zeros, variable lengths in any
order, empty batches, both dtypes. The forward is held to the float64 reference (and
inference to training's results, to the bit); the data and weight backward to the
reference's directional derivatives: for a random direction v in each input, the
gradient's <g, v> against a central difference of the reference loss
sum(y * dy) + sum(h_n * dh_n) + sum(c_n * dc_n) along v."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minifw import ops
# tests/ops/test_rnn.py: the forward's error bound and the finite differences' one
from ops.test_rnn import GRAD_TOL, MODES, TOL
from problems import drawn_cpu_variant, dtypes, examples, normal, on_every_device, on_gpu, seeds
from reference import rnn_forward_ref
from targets import assert_on, host, place

# The bound of |<g, v> - central difference|: for float64 the central difference's own
# (tests/ops/test_rnn.py); for float32 ~80 ulp of sum |g_i v_i|, plus 1e-6 sum |v_i| for
# gradients that are sums cancelling to ~0 ("long" runs of 1000 examples found nothing
# past it).
GRAD_BOUND = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: GRAD_TOL}
FD_STEP = 1e-6


@st.composite
def rnn_problems(draw, small):
    """(descriptor arguments, T, N, lengths or None)."""
    desc = dict(mode=draw(st.sampled_from(MODES)), input_size=draw(st.integers(1, 4)),
                hidden_size=draw(st.integers(1, 3 if small else 5)), num_layers=draw(st.integers(1, 2)),
                bidirectional=draw(st.booleans()), bias=draw(st.booleans()))
    t, n = draw(st.integers(0, 3 if small else 5)), draw(st.integers(0, 2 if small else 4))
    lengths = None
    if t and n and draw(st.booleans()):
        lengths = draw(st.lists(st.integers(1, t), min_size=n, max_size=n))
    return desc, t, n, lengths


@on_every_device
@settings(max_examples=examples(2))
@given(data=st.data(), dtype=dtypes, seed=seeds, with_states=st.booleans())
def test_forward_and_backward_match_the_reference(target, data, dtype, seed, with_states):
    args, t, n, lengths = data.draw(rnn_problems(on_gpu(target)), label="problem")
    desc, desc64 = ops.RNNDescriptor(**args, dtype=dtype), ops.RNNDescriptor(**args, dtype=np.float64)
    lstm = desc.mode == "lstm"
    rng = np.random.default_rng(seed)
    states = (desc.num_layers * desc.num_directions, n, desc.hidden_size)
    x, w = normal(rng, (t, n, desc.input_size), dtype), rng.uniform(-0.5, 0.5, desc.weight_count()).astype(dtype)
    h0 = normal(rng, states, dtype) if with_states else np.zeros(states, dtype)
    c0 = (normal(rng, states, dtype) if with_states else np.zeros(states, dtype)) if lstm else None
    dy = normal(rng, (t, n, desc.num_directions * desc.hidden_size), dtype)
    dh_n, dc_n = normal(rng, states, dtype), normal(rng, states, dtype) if lstm else None
    dw0 = normal(rng, w.shape, dtype)  # the weight backward adds to what dweights holds
    given_states = (h0, c0) if with_states else (None, None)
    x_d, w_d, dy_d, dh_n_d, dc_n_d, dw = place(target, x, w, dy, dh_n, dc_n, dw0)
    h0_d, c0_d = place(target, *given_states)
    with drawn_cpu_variant(data, target):
        y, h_n, c_n, reserve = ops.rnn_forward(desc, x_d, h0_d, c0_d, w_d, lengths=lengths)
        inference = ops.rnn_forward(desc, x_d, h0_d, c0_d, w_d, training=False, lengths=lengths)
        dx, dh0, dc0 = ops.rnn_backward_data(desc, x_d, w_d, reserve, h0_d, c0_d, dy_d, dh_n_d, dc_n_d,
                                             lengths=lengths)
        ops.rnn_backward_weights(desc, x_d, reserve, h0_d, dw, lengths=lengths)
    assert_on(target, y, h_n, reserve, dx, dh0, dw, *([c_n, dc0] if lstm else []))
    assert (c_n is None and dc0 is None) != lstm

    inputs = {name: None if a is None else a.astype(np.float64)
              for name, a in dict(x=x, h0=h0, c0=c0, weights=w).items()}
    y_ref, h_ref, c_ref = rnn_forward_ref(desc64, **inputs, lengths=lengths)
    for name, got, want in (("y", y, y_ref), ("h_n", h_n, h_ref), ("c_n", c_n, c_ref)):
        if want is not None:
            np.testing.assert_allclose(got, want, **TOL[dtype], err_msg=name)
    for name, got, want in zip(("y", "h_n", "c_n"), inference[:3], (y, h_n, c_n)):
        if want is not None:
            np.testing.assert_array_equal(got, want, err_msg=f"inference {name}")

    def loss(**changed):
        y, h_n, c_n = rnn_forward_ref(desc64, **dict(inputs, **changed), lengths=lengths)
        return np.sum(y * dy) + np.sum(h_n * dh_n) + (np.sum(c_n * dc_n) if lstm else 0.0)

    grads = dict(x=dx, h0=dh0, c0=dc0, weights=host(dw).astype(np.float64) - dw0)
    for name, g in grads.items():
        if g is None or (name == "h0" and desc.mode == "rnn_relu" and not with_states):
            # a relu RNN from zero states sits on relu's kink (a pre-activation of exactly
            # 0 where nothing else feeds it): the gradient there is relu'(0) = 0, as in
            # PyTorch, and a central difference sees the mean of the two sides
            continue
        g = np.asarray(host(g), np.float64)
        v = rng.standard_normal(g.shape)
        base = inputs[name]
        fd = (loss(**{name: base + FD_STEP * v}) - loss(**{name: base - FD_STEP * v})) / (2 * FD_STEP)
        bound = GRAD_BOUND[dtype]["rtol"] * np.sum(np.abs(g * v)) + GRAD_BOUND[dtype]["atol"] * np.sum(np.abs(v))
        assert abs(np.vdot(g, v) - fd) <= bound, f"d{name}: <g, v> = {np.vdot(g, v)!r}, central difference {fd!r}"
