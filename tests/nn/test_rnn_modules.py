"""nn.LSTM, GRU, RNN and their cells: PyTorch's parameter names, shapes and layout;
the forward against the float64 per-step reference with the module's own weights;
gradients through RecurrentNetwork against finite differences; torch.nn itself
when installed; both engines alike; batch_first, unbatched input, dropout between
layers, PackedSequence input; the flat weight buffer; a short training run; errors."""
import numpy as np
import pytest

import minifw
from minifw import engines, nn, ops
from minifw.functions.recurrent import RecurrentNetwork
from minifw.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
from gradcheck import gradcheck
from reference import rnn_cell_ref, rnn_forward_ref

# float64 against a float64 reference: only summation order differs
TOL = dict(rtol=1e-10, atol=1e-12)
LAYOUTS = {"1layer": (1, False), "2layers_bidir": (2, True)}
MODULES = {"lstm": (nn.LSTM, {}), "gru": (nn.GRU, {}), "rnn_tanh": (nn.RNN, {}),
           "rnn_relu": (nn.RNN, {"nonlinearity": "relu"})}
CELLS = {"lstm": (nn.LSTMCell, {}), "gru": (nn.GRUCell, {}), "rnn_tanh": (nn.RNNCell, {}),
         "rnn_relu": (nn.RNNCell, {"nonlinearity": "relu"})}
I, H = 3, 4


@pytest.fixture(autouse=True)
def restore_engine():
    yield
    minifw.set_engine("primitives")


def _module(mode, layers=1, bidirectional=False, **kw):
    minifw.manual_seed(0)
    cls, extra = MODULES[mode]
    return cls(I, H, layers, bidirectional=bidirectional, dtype=minifw.float64, **extra, **kw)


def _flat(m):
    return np.concatenate([p.detach().numpy().ravel() for p in m._flat_weights])


def _desc(m):
    return ops.RNNDescriptor(m._layout.mode, I, H, m.num_layers, m.bidirectional, m.bias, np.float64)


def _states(rng, mode, shape):
    h0 = minifw.tensor(rng.standard_normal(shape))
    return (h0, minifw.tensor(rng.standard_normal(shape))) if mode == "lstm" else h0


def _np(t):
    return None if t is None else t.detach().numpy()


# ---- parameters -------------------------------------------------------------------------------

def test_parameter_names_and_shapes_are_pytorchs():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    want = [(f"{k}_l{layer}{sfx}", shape) for layer in range(2) for sfx in ("", "_reverse")
            for k, shape in (("weight_ih", (20, 3 if layer == 0 else 10)), ("weight_hh", (20, 5)),
                             ("bias_ih", (20,)), ("bias_hh", (20,)))]
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == want
    assert [k for k, _ in nn.GRU(3, 5, bias=False).named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    assert tuple(nn.GRU(3, 5).weight_hh_l0.shape) == (15, 5)
    assert tuple(nn.RNN(3, 5).weight_ih_l0.shape) == (5, 3)
    assert [(k, tuple(v.shape)) for k, v in nn.LSTMCell(3, 5).state_dict().items()] == [
        ("weight_ih", (20, 3)), ("weight_hh", (20, 5)), ("bias_ih", (20,)), ("bias_hh", (20,))]
    assert list(nn.GRUCell(3, 5, bias=False).state_dict()) == ["weight_ih", "weight_hh"]


def test_initialization_is_uniform_within_one_over_sqrt_hidden():
    minifw.manual_seed(0)
    m = nn.GRU(10, 16, num_layers=2)
    values = _flat(m)
    assert m.weight_ih_l0.dtype == np.float32 and np.abs(values).max() <= 0.25
    assert np.abs(values).max() > 0.24 and abs(values.mean()) < 0.02  # spread over the whole interval


def test_parameters_are_views_of_one_flat_buffer():
    m = nn.LSTM(3, 4, 2, bidirectional=True)
    assert m._is_packed() and all(np.shares_memory(p._data, m._flat) for p in m.parameters())
    flat = m._flat
    m.flatten_parameters()
    assert m._flat is flat  # already packed: a no-op
    m.double()  # new arrays: Module.to packs them again
    assert m._flat.dtype == np.float64 and m._is_packed()


def test_the_primitive_gets_the_flat_buffer_without_a_copy(monkeypatch):
    m = nn.GRU(3, 4)
    seen = []
    real = ops.rnn_forward
    monkeypatch.setattr(ops, "rnn_forward", lambda desc, x, h0, c0, w, *a, **k: seen.append(w) or
                        real(desc, x, h0, c0, w, *a, **k))
    m(minifw.randn(2, 1, 3))
    assert seen[0] is m._flat


def test_an_unpacked_module_still_computes_and_learns():
    rng = np.random.default_rng(0)
    m = _module("lstm", 2, True)
    x = minifw.tensor(rng.standard_normal((4, 2, I)))
    want = _np(m(x)[0])
    m.weight_hh_l1 = nn.Parameter(m.weight_hh_l1.detach().numpy().copy())  # a new array: not packed
    assert not m._is_packed()
    y = m(x)[0]
    np.testing.assert_allclose(_np(y), want, **TOL)
    y.sum().backward()
    assert m.weight_hh_l1.grad is not None and m.weight_ih_l0.grad is not None
    m.flatten_parameters()
    assert m._is_packed() and m._flat[-1] == m.bias_hh_l1_reverse.detach().numpy()[-1]


def test_optimizer_steps_and_load_state_dict_keep_the_packing():
    m = nn.LSTM(3, 4)
    opt = minifw.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        opt.zero_grad()
        m(minifw.randn(3, 2, 3))[0].sum().backward()
        opt.step()
    assert m._is_packed()
    other = nn.LSTM(3, 4)
    other.load_state_dict(m.state_dict())
    assert other._is_packed()
    np.testing.assert_array_equal(other._flat, m._flat)


# ---- against the reference ---------------------------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODULES)
def test_module_matches_the_reference(rng, mode, layout):
    m = _module(mode, *layout)
    x = rng.standard_normal((5, 2, I))
    hx = _states(rng, mode, (layout[0] * (2 if layout[1] else 1), 2, H))
    y, h_n = m(minifw.tensor(x), hx)
    h0, c0 = (hx if mode == "lstm" else (hx, None))
    y_ref, h_ref, c_ref = rnn_forward_ref(_desc(m), x, _np(h0), _np(c0), _flat(m))
    np.testing.assert_allclose(_np(y), y_ref, **TOL)
    if mode == "lstm":
        np.testing.assert_allclose(_np(h_n[0]), h_ref, **TOL)
        np.testing.assert_allclose(_np(h_n[1]), c_ref, **TOL)
    else:
        np.testing.assert_allclose(_np(h_n), h_ref, **TOL)


@pytest.mark.parametrize("mode", CELLS)
def test_cells_match_the_reference(rng, mode):
    minifw.manual_seed(0)
    cls, extra = CELLS[mode]
    cell = cls(I, H, dtype=minifw.float64, **extra)
    x, h, c = rng.standard_normal((2, I)), rng.standard_normal((2, H)), rng.standard_normal((2, H))
    w = [_np(p) for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
    h_ref, c_ref = rnn_cell_ref(mode, x, h, c if mode == "lstm" else None, *w)
    hx = (minifw.tensor(h), minifw.tensor(c)) if mode == "lstm" else minifw.tensor(h)
    out = cell(minifw.tensor(x), hx)
    np.testing.assert_allclose(_np(out[0] if mode == "lstm" else out), h_ref, **TOL)
    if mode == "lstm":
        np.testing.assert_allclose(_np(out[1]), c_ref, **TOL)
    unbatched = cell(minifw.tensor(x[0]), tuple(t[0] for t in hx) if mode == "lstm" else hx[0])
    np.testing.assert_allclose(_np(unbatched[0] if mode == "lstm" else unbatched), h_ref[0], **TOL)
    zero_state = cell(minifw.tensor(x))  # hx=None: zeros
    h_zero, _ = rnn_cell_ref(mode, x, np.zeros((2, H)), np.zeros((2, H)) if mode == "lstm" else None, *w)
    np.testing.assert_allclose(_np(zero_state[0] if mode == "lstm" else zero_state), h_zero, **TOL)


def test_batch_first_and_unbatched_inputs(rng):
    m = _module("lstm", 2, True)
    x = minifw.tensor(rng.standard_normal((5, 3, I)))
    y, (h, c) = m(x)
    bf = _module("lstm", 2, True, batch_first=True)
    y_bf, (h_bf, _) = bf(x.transpose(0, 1))
    assert y_bf.shape == (3, 5, 2 * H) and h_bf.shape == (4, 3, H)  # h_n stays (L*D, N, H)
    np.testing.assert_allclose(_np(y_bf), _np(y).transpose(1, 0, 2), **TOL)
    y1, (h1, c1) = m(x[:, 1], (h[:, 1], c[:, 1]))  # unbatched: (T, I) with (L*D, H) states
    y_ref, (h_ref, c_ref) = m(x[:, 1:2], (h[:, 1:2], c[:, 1:2]))
    assert y1.shape == (5, 2 * H) and h1.shape == c1.shape == (4, H)
    np.testing.assert_allclose(_np(y1), _np(y_ref)[:, 0], **TOL)
    np.testing.assert_allclose(_np(c1), _np(c_ref)[:, 0], **TOL)


# ---- gradients ----------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("mode", MODULES)
@pytest.mark.parametrize("engine", ["primitives", "caffe"])
def test_recurrent_network_gradients_match_finite_differences(rng, engine, mode, layout):
    desc = ops.RNNDescriptor(mode, I, 2, *layout, True, np.float64)
    states = (layout[0] * desc.num_directions, 2, 2)
    x = minifw.tensor(rng.standard_normal((3, 2, I)), requires_grad=True)
    h0 = minifw.tensor(rng.standard_normal(states), requires_grad=True)
    c0 = minifw.tensor(rng.standard_normal(states), requires_grad=True) if mode == "lstm" else None
    w = minifw.tensor(rng.uniform(-0.5, 0.5, desc.weight_count()), requires_grad=True)
    with minifw.engine(engine):
        gradcheck(lambda *a: RecurrentNetwork.apply(*a, desc=desc), [x, h0, c0, w])


def test_recurrent_network_honours_needs_input_grad(rng, monkeypatch):
    desc = ops.RNNDescriptor("lstm", I, H, 1, False, True, np.float64)
    x = minifw.tensor(rng.standard_normal((3, 2, I)), requires_grad=True)
    w = minifw.tensor(rng.uniform(-0.5, 0.5, desc.weight_count()))
    calls = []
    real = ops.rnn_backward_weights
    monkeypatch.setattr(ops, "rnn_backward_weights", lambda *a, **k: calls.append(1) or real(*a, **k))
    y, h_n, c_n = RecurrentNetwork.apply(x, None, None, w, desc=desc)
    (y.sum() + c_n.sum()).backward()
    assert x.grad is not None and w.grad is None and calls == []
    with minifw.no_grad():
        assert RecurrentNetwork.apply(x, None, None, w, desc=desc)[0].grad_fn is None


def _training_flags(monkeypatch, engine):
    """The `training` argument of every rnn_forward call of `engine`'s module, as it is made."""
    module = engines.ENGINES[engine]
    real, flags = module.rnn_forward, []

    def spy(desc, x, h0, c0, w, training=True, **k):
        flags.append(training)
        return real(desc, x, h0, c0, w, training, **k)

    monkeypatch.setattr(module, "rnn_forward", spy)
    return flags


@pytest.mark.parametrize("engine", ["primitives", "caffe"])
def test_modules_run_the_inference_forward_when_no_gradient_is_needed(rng, monkeypatch, engine):
    # Inference allocates no reserve, so it is what a forward with nothing to differentiate runs.
    flags = _training_flags(monkeypatch, engine)
    minifw.set_engine(engine)
    lstm, cell = _module("lstm", 2, True), nn.GRUCell(I, H, dtype=minifw.float64)
    x, x1 = minifw.tensor(rng.standard_normal((5, 3, I))), minifw.tensor(rng.standard_normal((3, I)))
    lstm(x), cell(x1)  # the parameters require grad
    assert flags == [True, True]
    with minifw.no_grad():
        y, (h_n, c_n) = lstm(x)
        cell(x1)
    assert flags[2:] == [False, False] and y.grad_fn is None
    lstm.eval()  # eval() alone still differentiates: it only switches dropout off
    lstm(x)
    assert flags[4] is True
    lstm.requires_grad_(False)
    lstm(x)
    assert flags[5] is False
    lstm(minifw.tensor(x.numpy(), requires_grad=True))  # the input's gradient needs the reserve
    assert flags[6] is True


def test_an_lstm_under_no_grad_gives_the_training_forwards_results(rng):
    m = _module("lstm", 2, True)
    x = minifw.tensor(rng.standard_normal((6, 3, I)))
    hx = tuple(minifw.tensor(a) for a in rng.standard_normal((2, 4, 3, H)))
    y, (h_n, c_n) = m(x, hx)
    with minifw.no_grad():
        y_i, (h_i, c_i) = m(x, hx)
    for a, b in ((y_i, y), (h_i, h_n), (c_i, c_n)):
        np.testing.assert_array_equal(_np(a), _np(b))


def test_lengths_reach_every_engine_call(rng, monkeypatch):
    desc = ops.RNNDescriptor("gru", I, H, 1, False, True, np.float64)
    x = minifw.tensor(rng.standard_normal((3, 2, I)), requires_grad=True)
    w = minifw.tensor(rng.uniform(-0.5, 0.5, desc.weight_count()), requires_grad=True)
    seen = []
    for name in ("rnn_forward", "rnn_backward_data", "rnn_backward_weights"):
        real = getattr(engines.caffe, name)
        monkeypatch.setattr(engines.caffe, name, lambda *a, _r=real, _n=name, **k: seen.append((_n, k)) or _r(*a, **k))
    with minifw.engine("caffe"):
        RecurrentNetwork.apply(x, None, None, w, desc=desc)[0].sum().backward()
        assert [k["lengths"] for _, k in seen] == [None] * 3
        seen.clear()
        RecurrentNetwork.apply(x, None, None, w, desc=desc, lengths=np.array([3, 1]))[0].sum().backward()
    assert [n for n, _ in seen] == ["rnn_forward", "rnn_backward_data", "rnn_backward_weights"]
    assert all(list(k["lengths"]) == [3, 1] for _, k in seen)


def _lstm_step(rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    m = _module("lstm", 2, True)
    x = minifw.tensor(rng.standard_normal((4, 3, I)), requires_grad=True)
    hx = tuple(minifw.tensor(a, requires_grad=True) for a in rng.standard_normal((2, 4, 3, H)))
    y, (h, c) = m(x, hx)
    (y * minifw.tensor(rng.standard_normal(y.shape))).sum().backward(retain_graph=False)
    return [_np(y), _np(h), _np(c), _np(x.grad), _np(hx[0].grad), _np(hx[1].grad)] + \
        [_np(p.grad) for p in m.parameters()]


def test_both_engines_give_the_same_outputs_and_gradients_through_lstm():
    want = _lstm_step()
    with minifw.engine("caffe"):
        got = _lstm_step()
    for i, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, err_msg=f"result {i}", **TOL)


# ---- dropout, packed sequences ------------------------------------------------------------------

def test_dropout_between_layers_runs_layer_by_layer(monkeypatch):
    m = _module("gru", 3, True, dropout=0.5)
    calls = []
    real = ops.rnn_forward
    monkeypatch.setattr(ops, "rnn_forward", lambda desc, *a, **k: calls.append(desc.num_layers) or
                        real(desc, *a, **k))
    x = minifw.randn(4, 2, I, dtype=minifw.float64)
    y_train, h_train = m(x)
    assert calls == [1, 1, 1] and h_train.shape == (6, 2, H)
    y_train.sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    calls.clear()
    m.eval()
    y_eval, h_eval = m(x)
    assert calls == [3]
    no_dropout = _module("gru", 3, True)  # same seed, same weights
    np.testing.assert_allclose(_np(y_eval), _np(no_dropout(x)[0]), **TOL)
    assert not np.allclose(_np(y_train), _np(y_eval))


def test_dropout_zero_layer_by_layer_equals_one_call():
    # the per-layer path with its dropout set to 0 is the same function as the fused call
    m = _module("lstm", 2, True)
    x = minifw.randn(4, 2, I, dtype=minifw.float64)
    want = m(x)
    m.dropout = 1e-300  # layer by layer; drops nothing in practice
    got = m(x)
    np.testing.assert_allclose(_np(got[0]), _np(want[0]), **TOL)
    np.testing.assert_allclose(_np(got[1][1]), _np(want[1][1]), **TOL)


LENGTHS = [5, 2, 4]


@pytest.mark.parametrize("engine", ["primitives", "caffe"])
@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_packed_sequence_input(rng, mode, engine):
    m = _module(mode, 2, True)
    x = minifw.tensor(rng.standard_normal((5, 3, I)))
    hx = _states(rng, mode, (4, 3, H))
    packed = pack_padded_sequence(x, LENGTHS, enforce_sorted=False)
    with minifw.engine(engine):
        out, h_n = m(packed, hx)
    assert isinstance(out, PackedSequence)
    assert np.array_equal(out.batch_sizes.numpy(), packed.batch_sizes.numpy())
    assert np.array_equal(out.sorted_indices.numpy(), packed.sorted_indices.numpy())
    assert np.array_equal(out.unsorted_indices.numpy(), packed.unsorted_indices.numpy())
    y, lengths = pad_packed_sequence(out)
    assert list(lengths.numpy()) == LENGTHS
    for i, n in enumerate(LENGTHS):  # each sequence alone, in the original batch order
        one = slice(i, i + 1)
        states = tuple(s[:, one] for s in hx) if mode == "lstm" else hx[:, one]
        y_one, h_one = m(x[:n, one], states)
        np.testing.assert_allclose(_np(y)[:n, one], _np(y_one), **TOL)
        for got, want in zip(h_n if mode == "lstm" else [h_n], h_one if mode == "lstm" else [h_one]):
            np.testing.assert_allclose(_np(got)[:, one], _np(want), **TOL)


@pytest.mark.parametrize("engine", ["primitives", "caffe"])
def test_packed_sequence_gradients_flow(engine):
    m = _module("lstm", 1, True)
    x = minifw.randn(5, 3, I, dtype=minifw.float64, requires_grad=True)
    with minifw.engine(engine):
        out, (h, c) = m(pack_padded_sequence(x, LENGTHS, enforce_sorted=False))
        (out.data.sum() + h.sum()).backward()
    g = _np(x.grad)
    assert not g[2:, 1].any() and g[:2, 1].any()  # steps past a sequence's end get no gradient
    assert m.weight_ih_l0_reverse.grad is not None


# ---- training -------------------------------------------------------------------------------

def test_an_lstm_learns_to_sum_a_short_sequence():
    minifw.manual_seed(0)
    rng = np.random.default_rng(0)
    lstm, head = nn.LSTM(1, 8, batch_first=True), nn.Linear(8, 1)
    opt = minifw.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=0.03)
    x = rng.uniform(-1, 1, (64, 4, 1)).astype(np.float32)
    target = minifw.tensor(x.sum(1))
    losses = []
    for _ in range(60):
        opt.zero_grad()
        _, (h, _) = lstm(minifw.tensor(x))
        loss = nn.functional.mse_loss(head(h[-1]), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0], losses[::10]
    assert lstm._is_packed()


# ---- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, message", [
    (lambda: nn.LSTM(3, 4, proj_size=4), ValueError,
     "LSTM: proj_size must be smaller than hidden_size, got proj_size=4 with hidden_size=4"),
    (lambda: nn.LSTM(3, 4, proj_size=-1), ValueError, "LSTM: proj_size must be >= 0"),
    (lambda: nn.LSTM(3, 4, proj_size=1.5), TypeError, "LSTM: proj_size must be an int, got float 1.5"),
    (lambda: nn.LSTM(3, 4, proj_size=2)(minifw.randn(5, 2, 3), (minifw.zeros(1, 2, 4), minifw.zeros(1, 2, 4))),
     ValueError, r"LSTM: hx\[0\] \(h_0\) must have shape \(1, 2, 2\) \(num_layers \* num_directions, batch, "
     r"proj_size\), got \(1, 2, 4\)"),
    (lambda: nn.RNN(3, 4, nonlinearity="sigmoid"), ValueError, "RNN: nonlinearity must be 'tanh' or 'relu'"),
    (lambda: nn.GRU(3, 0), ValueError, "GRU: hidden_size must be >= 1"),
    (lambda: nn.GRU(3, 4, dropout=1.5), ValueError, "GRU: dropout should be a number in range"),
    (lambda: nn.LSTM(3, 4)(minifw.randn(5, 2, 6)), ValueError,
     "LSTM: input.size\\(-1\\) must be equal to input_size. Expected 3, got 6"),
    (lambda: nn.LSTM(3, 4)(minifw.randn(5)), ValueError, "LSTM: input must be 2-D or 3-D"),
    (lambda: nn.LSTM(3, 4)(np.zeros((5, 2, 3))), TypeError, "LSTM: input must be a minifw.Tensor"),
    (lambda: nn.GRU(3, 4)(minifw.randn(5, 2, 3, dtype=minifw.float64)), TypeError,
     "GRU: input has dtype float64 but the parameters have dtype float32"),
    (lambda: nn.GRU(3, 4)(minifw.randn(5, 2, 3), minifw.randn(1, 3, 4)), ValueError,
     r"GRU: hx must have shape \(1, 2, 4\) \(num_layers \* num_directions, batch, hidden_size\), "
     r"got \(1, 3, 4\)"),
    (lambda: nn.LSTM(3, 4)(minifw.randn(5, 2, 3), minifw.randn(1, 2, 4)), TypeError,
     r"LSTM: hx must be a tuple \(h_0, c_0\)"),
    (lambda: nn.LSTM(3, 4)(minifw.randn(5, 2, 3), (minifw.zeros(1, 2, 4), minifw.zeros(2, 2, 4))),
     ValueError, r"LSTM: hx\[1\] \(c_0\) must have shape \(1, 2, 4\)"),
    (lambda: nn.LSTM(3, 4)(minifw.randn(5, 2, 3), (minifw.zeros(1, 2, 4), None)), TypeError,
     r"LSTM: hx must be a tuple \(h_0, c_0\) of two Tensors, got c_0 None"),
    (lambda: nn.RNN(3, 4)(minifw.randn(5, 3), minifw.randn(1, 2, 4)), ValueError,
     r"RNN: hx must have shape \(1, 4\) \(num_layers \* num_directions, hidden_size\) for an unbatched"),
    (lambda: nn.GRUCell(3, 4)(minifw.randn(2, 5)), ValueError, "GRUCell: input.size\\(-1\\) must be equal"),
    (lambda: nn.LSTMCell(3, 4)(minifw.randn(2, 3), (minifw.randn(2, 5), minifw.randn(2, 4))), ValueError,
     r"LSTMCell: hx\[0\] \(h_0\) must have shape \(2, 4\)"),
    (lambda: nn.RNNCell(3, 4)(minifw.randn(2, 3), minifw.randn(2, 4, dtype=minifw.float64)), TypeError,
     "RNNCell: hx has dtype float64 but the parameters have dtype float32"),
], ids=["proj_size_too_large", "proj_size_negative", "proj_size_type", "proj_h0_shape", "nonlinearity", "hidden_size", "dropout", "input_size", "input_ndim", "input_type",
        "input_dtype", "hx_shape", "lstm_hx_not_tuple", "c0_shape", "lstm_c0_none", "unbatched_hx",
        "cell_input",
        "cell_h0", "cell_dtype"])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- PyTorch itself ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODULES)
def test_matches_torch_with_copied_weights(rng, mode):
    torch = pytest.importorskip("torch")
    m = _module(mode, 2, True, batch_first=True)
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}.get(mode, torch.nn.RNN)
    extra = {"nonlinearity": "relu"} if mode == "rnn_relu" else {}
    ref = cls(I, H, 2, bidirectional=True, batch_first=True, dtype=torch.float64, **extra)
    ref.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.state_dict().items()})
    x = rng.standard_normal((3, 5, I))
    y, h_n = m(minifw.tensor(x, requires_grad=True))
    xt = torch.tensor(x, requires_grad=True)
    yt, ht = ref(xt)
    np.testing.assert_allclose(_np(y), yt.detach().numpy(), **TOL)
    for a, b in zip(h_n if mode == "lstm" else [h_n], ht if mode == "lstm" else [ht]):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), **TOL)
    y.sum().backward()
    yt.sum().backward()
    for (name, p), pt in zip(m.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(_np(p.grad), pt.grad.numpy(), err_msg=name, **TOL)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_packed_sequence_matches_torch(rng, mode):
    torch = pytest.importorskip("torch")
    m = _module(mode, 2, True)
    ref = (torch.nn.LSTM if mode == "lstm" else torch.nn.GRU)(I, H, 2, bidirectional=True, dtype=torch.float64)
    ref.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.state_dict().items()})
    x = rng.standard_normal((5, 3, I))
    with minifw.engine("caffe"):
        out, h_n = m(pack_padded_sequence(minifw.tensor(x), LENGTHS, enforce_sorted=False))
    out_t, h_t = ref(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), LENGTHS, enforce_sorted=False))
    np.testing.assert_array_equal(out.batch_sizes.numpy(), out_t.batch_sizes.numpy())
    np.testing.assert_allclose(_np(out.data), out_t.data.detach().numpy(), **TOL)
    for a, b in zip(h_n if mode == "lstm" else [h_n], h_t if mode == "lstm" else [h_t]):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), **TOL)  # the original batch order


# ---- LSTM with projections (proj_size > 0) ----------------------------------------------------

def _projected_lstm_ref(m, x, h0, c0):
    """NumPy reference of a (T, B, I) LSTM with projections: per step, per layer and direction,
    c = f*c + i*g, h = weight_hr (o * tanh(c)); gates in PyTorch's order i, f, g, o."""
    sig = lambda v: 1 / (1 + np.exp(-v))
    p = {k: v.detach().numpy() for k, v in m.named_parameters()}
    d = 2 if m.bidirectional else 1
    layer_in, hs, cs = x, [], []
    for layer in range(m.num_layers):
        outs = []
        for k in range(d):
            sfx = f"_l{layer}" + ("_reverse" if k else "")
            h, c = h0[layer * d + k], c0[layer * d + k]
            ys = [None] * len(x)
            for t in (reversed(range(len(x))) if k else range(len(x))):
                z = layer_in[t] @ p["weight_ih" + sfx].T + h @ p["weight_hh" + sfx].T
                if m.bias:
                    z = z + p["bias_ih" + sfx] + p["bias_hh" + sfx]
                i, f, g, o = np.split(z, 4, axis=-1)
                c = sig(f) * c + sig(i) * np.tanh(g)
                h = (sig(o) * np.tanh(c)) @ p["weight_hr" + sfx].T
                ys[t] = h
            outs.append(np.stack(ys))
            hs.append(h)
            cs.append(c)
        layer_in = np.concatenate(outs, axis=-1)
    return layer_in, np.stack(hs), np.stack(cs)


def test_lstm_projection_parameters_and_repr():
    m = nn.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True, bias=False)
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == [
        ("weight_ih_l0", (20, 3)), ("weight_hh_l0", (20, 2)), ("weight_hr_l0", (2, 5)),
        ("weight_ih_l0_reverse", (20, 3)), ("weight_hh_l0_reverse", (20, 2)), ("weight_hr_l0_reverse", (2, 5)),
        ("weight_ih_l1", (20, 4)), ("weight_hh_l1", (20, 2)), ("weight_hr_l1", (2, 5)),
        ("weight_ih_l1_reverse", (20, 4)), ("weight_hh_l1_reverse", (20, 2)), ("weight_hr_l1_reverse", (2, 5))]
    assert [k for k, _ in m.named_parameters()] == list(m.state_dict())
    assert repr(m) == "LSTM(3, 5, proj_size=2, num_layers=2, bias=False, bidirectional=True)"
    bound = 1 / np.sqrt(5)
    assert all(np.abs(p.detach().numpy()).max() <= bound for p in m.parameters())
    m.double()  # plain parameters: converted, nothing to pack
    assert m.weight_hr_l1.dtype == minifw.float64


@pytest.mark.parametrize("layers, bidirectional, batch_first", [(1, False, False), (2, True, True)])
def test_lstm_projection_matches_reference_and_gradcheck(rng, layers, bidirectional, batch_first):
    m = nn.LSTM(3, 4, num_layers=layers, proj_size=2, bidirectional=bidirectional, batch_first=batch_first,
                dtype=minifw.float64)
    d = 2 if bidirectional else 1
    x = rng.standard_normal((5, 2, 3))
    h0, c0 = rng.standard_normal((layers * d, 2, 2)), rng.standard_normal((layers * d, 2, 4))
    xin = x.transpose(1, 0, 2).copy() if batch_first else x
    y, (h_n, c_n) = m(minifw.tensor(xin), (minifw.tensor(h0), minifw.tensor(c0)))
    y_ref, h_ref, c_ref = _projected_lstm_ref(m, x, h0, c0)
    np.testing.assert_allclose(_np(y), y_ref.transpose(1, 0, 2) if batch_first else y_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(h_n), h_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(c_n), c_ref, rtol=1e-10, atol=1e-12)
    assert y.shape == ((2, 5, 2 * d) if batch_first else (5, 2, 2 * d))
    params = list(m.parameters())

    def run(inp, h, c, *ps):
        out, (hn, cn) = m(inp, (h, c))
        return out.sum() + (hn * hn).sum() + cn.sum()

    gradcheck(run, [minifw.tensor(xin, requires_grad=True), minifw.tensor(h0, requires_grad=True),
                    minifw.tensor(c0, requires_grad=True), *params])


def test_lstm_projection_packed_and_unbatched(rng):
    m = nn.LSTM(3, 4, proj_size=2, bidirectional=True, dtype=minifw.float64)
    x = rng.standard_normal((5, 3, 3))
    out, (h_n, c_n) = m(pack_padded_sequence(minifw.tensor(x), LENGTHS, enforce_sorted=False))
    y, lengths = pad_packed_sequence(out)
    for b, n in enumerate(LENGTHS):  # each sequence alone, unbatched, gives the same
        yb, (hb, cb) = m(minifw.tensor(x[:n, b]))
        assert yb.shape == (n, 4) and hb.shape == (2, 2) and cb.shape == (2, 4)
        np.testing.assert_allclose(_np(y)[:n, b], _np(yb), rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(_np(y)[n:, b], 0)
        np.testing.assert_allclose(_np(h_n)[:, b], _np(hb), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(_np(c_n)[:, b], _np(cb), rtol=1e-10, atol=1e-12)


def test_lstm_projection_matches_torch(rng):
    torch = pytest.importorskip("torch")
    ref = torch.nn.LSTM(3, 5, 2, proj_size=2, bidirectional=True, batch_first=True, dtype=torch.float64)
    m = nn.LSTM(3, 5, 2, proj_size=2, bidirectional=True, batch_first=True, dtype=minifw.float64)
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    assert repr(m) == repr(ref)
    m.load_state_dict({k: minifw.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    x = rng.standard_normal((3, 6, 3))
    xm, xt = minifw.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, (h, c) = m(xm)
    yt, (ht, ct) = ref(xt)
    for a, b in ((y, yt), (h, ht), (c, ct)):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=1e-9, atol=1e-12)
    (y.sum() + h.sum() + c.sum()).backward()
    (yt.sum() + ht.sum() + ct.sum()).backward()
    np.testing.assert_allclose(_np(xm.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (name, p), pt in zip(m.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(_np(p.grad), pt.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
