"""The recurrent forward's `reserve=` argument (a caller's array filled instead of a new
one) on both engines, and the spare reserve nn's recurrent layers reuse step after step
(minifw.functions.recurrent.SpareReserves, minifw.caches' "rnn.reserves")."""
import gc

import numpy as np
import pytest

import minifw
from minifw import caches, nn, ops
from minifw.engines import caffe

ENGINES = {"primitives": ops, "caffe": caffe}


@pytest.fixture(autouse=True)
def fresh_spares():
    caches.get("rnn.reserves").clear()
    yield
    minifw.set_engine("primitives")
    spares = caches.get("rnn.reserves")
    spares.max_cached_bytes = spares.DEFAULT_MAX_CACHED_BYTES
    spares.clear()


def _problem(mode="lstm", layers=2, bidirectional=True, t=5, n=3, seed=0):
    rng = np.random.default_rng(seed)
    desc = ops.RNNDescriptor(mode, 4, 6, layers, bidirectional)
    states = (layers * desc.num_directions, n, 6)
    x = rng.standard_normal((t, n, 4)).astype(np.float32)
    h0 = rng.standard_normal(states).astype(np.float32)
    c0 = rng.standard_normal(states).astype(np.float32) if mode == "lstm" else None
    w = rng.uniform(-0.5, 0.5, desc.weight_count()).astype(np.float32)
    dy = rng.standard_normal((t, n, desc.num_directions * 6)).astype(np.float32)
    return desc, x, h0, c0, w, dy


def _step(engine, desc, x, h0, c0, w, dy, lengths, reserve=None):
    y, h_n, c_n, res = engine.rnn_forward(desc, x, h0, c0, w, True, lengths=lengths, reserve=reserve)
    dx, dh0, dc0 = engine.rnn_backward_data(desc, x, w, res, h0, c0, dy, None, None, lengths=lengths)
    dw = engine.rnn_backward_weights(desc, x, res, h0, np.zeros_like(w), lengths=lengths)
    return res, [a for a in (y, h_n, c_n, dx, dh0, dc0, dw) if a is not None]


@pytest.mark.parametrize("lengths", [None, [5, 2, 4]], ids=["full", "lengths"])
@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_given_reserve_gives_the_results_of_a_new_one(engine, mode, lengths):
    eng = ENGINES[engine]
    desc, x, h0, c0, w, dy = _problem(mode)
    lengths = None if lengths is None else np.array(lengths, np.int64)
    fresh_reserve, fresh = _step(eng, desc, x, h0, c0, w, dy, lengths)
    # a used reserve, full of another problem's values and NaNs, filled again
    given = np.full(desc.reserve_size(5, 3), np.nan, np.float32)
    given[::7] = 1e30
    res, got = _step(eng, desc, x, h0, c0, w, dy, lengths, reserve=given)
    assert res is given
    for a, b in zip(got, fresh):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(given, fresh_reserve)
    # and once more in the same array
    res, again = _step(eng, desc, x, h0, c0, w, dy, lengths, reserve=given)
    for a, b in zip(again, fresh):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("engine", ENGINES)
def test_bad_reserves_are_refused_naming_the_argument(engine):
    eng = ENGINES[engine]
    desc, x, h0, c0, w, _ = _problem()
    size = desc.reserve_size(5, 3)

    def call(reserve, training=True):
        return eng.rnn_forward(desc, x, h0, c0, w, training, reserve=reserve)

    with pytest.raises(ValueError, match=rf"rnn_forward: reserve must have {size} elements for T=5, N=3, got 7"):
        call(np.empty(7, np.float32))
    with pytest.raises(TypeError, match="rnn_forward: reserve"):
        call(np.empty(size, np.float64))
    with pytest.raises(ValueError, match="rnn_forward: reserve must be C-contiguous"):
        call(np.empty(2 * size, np.float32)[::2])
    read_only = np.empty(size, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="rnn_forward: reserve must be writable"):
        call(read_only)
    with pytest.raises(ValueError, match="rnn_forward: reserve is filled by a training forward only"):
        call(np.empty(size, np.float32), training=False)
    with pytest.raises(TypeError, match="rnn_forward: reserve"):
        call([0.0] * size)
    # the reserve is written while x, the states and the weights are read: no overlap
    shared = np.zeros(size + w.size, np.float32)
    shared[size:] = w
    eng.rnn_forward(desc, x, h0, c0, shared[size:], True, reserve=shared[:size])  # side by side is fine
    with pytest.raises(ValueError, match="rnn_forward: reserve must not share memory with weights"):
        eng.rnn_forward(desc, x, h0, c0, shared[size - 5:size - 5 + w.size], True, reserve=shared[:size])


def _lstm_step(m, x, seed):
    y, _ = m(x)
    (y * minifw.tensor(np.random.default_rng(seed).standard_normal(y.shape).astype(np.float32))).sum().backward()
    grads = [p.grad.numpy().copy() for p in m.parameters()]
    m.zero_grad()
    return grads


@pytest.mark.parametrize("engine", ENGINES)
def test_nn_layers_reuse_one_reserve_step_after_step(engine):
    minifw.set_engine(engine)
    spares = caches.get("rnn.reserves")
    minifw.manual_seed(0)
    m = nn.LSTM(4, 6, 2, bidirectional=True)
    x = minifw.tensor(np.random.default_rng(1).standard_normal((5, 3, 4)).astype(np.float32))
    first = _lstm_step(m, x, 2)
    stats = spares.stats()
    nbytes = ops.RNNDescriptor("lstm", 4, 6, 2, True).reserve_size(5, 3) * 4
    assert stats["entries"] == 1 and stats["current_bytes"] == nbytes  # given back after backward
    out = m(x)  # the next training forward takes it
    assert spares.stats()["entries"] == 0
    del out
    gc.collect()
    assert spares.stats()["entries"] == 1  # a graph dropped without backward gives it back too
    for seed in (2, 2, 3):
        again = _lstm_step(m, x, seed)
        if seed == 2:
            for a, b in zip(again, first):
                np.testing.assert_array_equal(a, b)
    # inference keeps no reserve and takes none
    with minifw.no_grad():
        m(x)
    assert spares.stats()["entries"] == 1


def test_a_retained_graph_keeps_its_reserve():
    minifw.manual_seed(0)
    m = nn.GRU(4, 6, 1)
    rng = np.random.default_rng(0)
    x1 = minifw.tensor(rng.standard_normal((5, 3, 4)).astype(np.float32))
    x2 = minifw.tensor(rng.standard_normal((5, 3, 4)).astype(np.float32))
    y1 = m(x1)[0]
    loss1 = (y1 * y1).sum()
    loss1.backward(retain_graph=True)
    first = [p.grad.numpy().copy() for p in m.parameters()]
    m.zero_grad()
    # another step while the first graph is alive: it must not get the first one's reserve
    m(x2)[0].sum().backward()
    m.zero_grad()
    loss1.backward()
    for p, g in zip(m.parameters(), first):
        np.testing.assert_array_equal(p.grad.numpy(), g)


def test_spares_follow_the_cache_limit_and_clear():
    spares = caches.get("rnn.reserves")
    m = nn.RNN(4, 6, 1)
    x = minifw.tensor(np.ones((5, 3, 4), np.float32))
    spares.max_cached_bytes = 0
    m(x)[0].sum().backward()
    assert spares.stats() == {"entries": 0, "current_bytes": 0, "max_cached_bytes": 0}
    spares.max_cached_bytes = 1 << 20
    m(x)[0].sum().backward()
    assert spares.stats()["entries"] == 1
    nbytes = spares.stats()["current_bytes"]
    spares.max_cached_bytes = nbytes  # still fits
    assert spares.stats()["entries"] == 1
    spares.max_cached_bytes = nbytes - 1  # lowering the limit drops what is over it
    assert spares.stats() == {"entries": 0, "current_bytes": 0, "max_cached_bytes": nbytes - 1}
    spares.max_cached_bytes = 1 << 20
    m(x)[0].sum().backward()
    caches.clear()
    assert spares.stats()["entries"] == 0
    for bad, error in ((-1, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="rnn reserves: max_cached_bytes must be an int >= 0"):
            spares.max_cached_bytes = bad


def test_the_bench_counts_the_reserve_even_with_a_spare_cached():
    from minifw import benchmark
    reserve_bytes = ops.RNNDescriptor("lstm", 128, 512, 2).reserve_size(64, 2) * 4
    fresh = benchmark.peak_memory("charlstm", "primitives", 2)
    assert caches.get("rnn.reserves").stats()["entries"] == 0  # it leaves nothing cached
    m = nn.LSTM(128, 512, 2)  # a spare of the bench's size, cached beforehand
    m(minifw.tensor(np.zeros((64, 2, 128), np.float32)))[0].sum().backward()
    assert caches.get("rnn.reserves").stats()["current_bytes"] == reserve_bytes
    # is not used uncounted: the peak is the same as from nothing cached
    assert abs(benchmark.peak_memory("charlstm", "primitives", 2) - fresh) < reserve_bytes / 4
