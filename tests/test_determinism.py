"""minifw.use_deterministic_algorithms: PyTorch's names and switches; in the mode every
primitive gives the same bits run to run and for 1, 2 and 3 threads (outputs, every
gradient, the batch-norm statistics, the loss), on the CPU kernels, on the CUDA kernels
under the emulator (whose workers take blocks in whatever order they finish) and
through the caffe engine; convolution algorithms are chosen without timings; and an
operation with no deterministic implementation on "cuda" (CuPy's atomic scatter-adds)
is refused or warned about. Every comparison is bitwise (np.array_equal)."""
import warnings

import numpy as np
import pytest

import minifw
import minifw.nn as nn
import minifw.nn.functional as F
from minifw import backends, ops
from minifw.ops import conv as conv_ops
from targets import host

THREADS = (1, 2, 3, 1)  # the last run repeats the first: run-to-run as well


@pytest.fixture(autouse=True)
def _restore_switches():
    threads = minifw.get_num_threads()
    before = (minifw.are_deterministic_algorithms_enabled(),
              minifw.is_deterministic_algorithms_warn_only_enabled(),
              backends.cudnn.deterministic, backends.benchmark)
    yield
    minifw.set_num_threads(threads)
    minifw.use_deterministic_algorithms(before[0], warn_only=before[1])
    backends.cudnn.deterministic, backends.benchmark = before[2], before[3]
    conv_ops.clear_autotune_cache()


def assert_bitwise_equal(runs, what):
    """Every run's arrays have the bits of the first run's."""
    (first_threads, first), *rest = runs
    for threads, result in rest:
        assert result.keys() == first.keys()
        for name in first:
            a, b = first[name], result[name]
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes(), (
                f"{what}: {name} differs between {first_threads} and {threads} threads "
                f"(max |diff| {np.max(np.abs(a.astype(np.float64) - b)):.3g})")


def over_threads(run, threads=THREADS):
    return [(n, minifw.set_num_threads(n) or run()) for n in threads]


# ---- the switches --------------------------------------------------------------------

def test_switches_mirror_pytorch():
    assert minifw.are_deterministic_algorithms_enabled() is False
    minifw.use_deterministic_algorithms(True)
    assert minifw.are_deterministic_algorithms_enabled() is True
    assert minifw.is_deterministic_algorithms_warn_only_enabled() is False
    assert minifw._native.get_deterministic() is True
    minifw.use_deterministic_algorithms(True, warn_only=True)
    assert minifw.is_deterministic_algorithms_warn_only_enabled() is True
    minifw.use_deterministic_algorithms(False)
    assert not minifw.are_deterministic_algorithms_enabled()
    assert not minifw.is_deterministic_algorithms_warn_only_enabled()
    assert minifw._native.get_deterministic() is False
    # cudnn.deterministic is its own switch (as in PyTorch) and sets the same native flag
    assert backends.cudnn.deterministic is False
    backends.cudnn.deterministic = True
    assert minifw._native.get_deterministic() is True
    assert not minifw.are_deterministic_algorithms_enabled()
    assert "deterministic=True" in repr(backends.cudnn)
    backends.cudnn.deterministic = False
    assert minifw._native.get_deterministic() is False


@pytest.mark.parametrize("call, message", [
    (lambda: minifw.use_deterministic_algorithms(1), "mode must be a bool"),
    (lambda: minifw.use_deterministic_algorithms(True, warn_only="yes"), "warn_only must be a bool"),
    (lambda: setattr(backends.cudnn, "deterministic", 1), "cudnn.deterministic must be a bool"),
], ids=["mode", "warn_only", "cudnn"])
def test_switches_refuse_non_bools(call, message):
    with pytest.raises(TypeError, match=message):
        call()
    assert not minifw.are_deterministic_algorithms_enabled()


def test_signatures_match_pytorch():
    torch = pytest.importorskip("torch")
    import inspect
    for name in ("use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
                 "is_deterministic_algorithms_warn_only_enabled"):
        ours = inspect.signature(getattr(minifw, name))
        theirs = inspect.signature(getattr(torch, name))
        assert list(ours.parameters) == list(theirs.parameters), name
    assert isinstance(torch.backends.cudnn.deterministic, bool)


# ---- the algorithm choice does not depend on timings ---------------------------------

@pytest.mark.parametrize("switch", ["use_deterministic_algorithms", "cudnn.deterministic"])
def test_auto_ignores_autotuning_in_the_mode(monkeypatch, switch):
    problem = ops.ConvProblem((2, 16, 10, 10), (16, 16, 3, 3), padding=1)
    heuristic = ops.conv_algorithm(problem, "forward")
    others = [a for a in ops.conv_algorithms(problem, "forward") if a != heuristic]
    timed = []

    def timings(problem, direction, *, repeats=3, device="cpu"):  # the "fastest" is not the heuristic's
        timed.append(direction)
        return [ops.ConvAlgoPerf(a, 1.0, 0) for a in others + [heuristic]]

    monkeypatch.setattr(conv_ops, "find_conv_algorithms", timings)
    backends.benchmark = True
    assert ops.conv_algorithm(problem, "forward") == others[0] and timed  # autotuning picks
    conv_ops.clear_autotune_cache()
    timed.clear()
    if switch == "cudnn.deterministic":
        backends.cudnn.deterministic = True
    else:
        minifw.use_deterministic_algorithms(True)
    assert ops.conv_algorithm(problem, "forward") == heuristic
    x = np.random.default_rng(0).standard_normal(problem.x_shape).astype(np.float32)
    w = np.random.default_rng(1).standard_normal(problem.w_shape).astype(np.float32)
    y = ops.conv2d_forward(x, w, padding=1)
    assert np.array_equal(y, ops.conv2d_forward(x, w, padding=1, algo=heuristic))
    assert timed == [] and ops.autotune_cache() == {}  # nothing was timed


# ---- the CPU kernels across thread counts -----------------------------------------------

# LeNet's conv2 at batch 64 (its backward-filter GEMM sums over 6400 pixels, which the
# GEMM would split among threads), a 3x3 layer Winograd takes, a 1x1 layer with groups.
CONV_PROBLEMS = {
    "lenet_conv2": ((64, 6, 14, 14), (16, 6, 5, 5), dict()),
    "3x3_pad1": ((8, 16, 12, 12), (32, 16, 3, 3), dict(padding=1)),
    "1x1_groups": ((16, 32, 9, 9), (16, 16, 1, 1), dict(groups=2)),
}


@pytest.mark.parametrize("name", CONV_PROBLEMS)
def test_conv_every_algorithm_is_reproducible_across_threads(name):
    x_shape, w_shape, kw = CONV_PROBLEMS[name]
    problem = ops.ConvProblem(x_shape, w_shape, **kw)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    dy = rng.standard_normal(problem.out_shape).astype(np.float32)
    minifw.use_deterministic_algorithms(True)
    for direction in conv_ops.DIRECTIONS:
        for algo in ops.conv_algorithms(problem, direction):
            def run():
                if direction == "forward":
                    out = ops.conv2d_forward(x, w, **kw, algo=algo)
                elif direction == "backward_data":
                    out = ops.conv2d_backward_data(dy, w, x_shape, **kw, algo=algo)
                else:
                    out = ops.conv2d_backward_filter(x, dy, w_shape, **kw, algo=algo)
                return {direction: out}
            assert_bitwise_equal(over_threads(run), f"{name} {direction} {algo}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_with_a_long_reduction_is_reproducible_across_threads(dtype):
    # a small C and a long K: the shape the GEMM otherwise shares among threads by K
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8192, 16)).astype(dtype)
    b = rng.standard_normal((8192, 24)).astype(dtype)
    minifw.use_deterministic_algorithms(True)
    assert_bitwise_equal(over_threads(lambda: {"c": ops.gemm(a, b, trans_a=True)}), "gemm")


def _cnn():
    # conv + bias, batch norm, relu, overlapping max pooling, LRN, a conv whose
    # backward-filter GEMM is long (K = 64 * 7 * 7), avg pooling, dropout, linear
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(3, stride=2),
        nn.LocalResponseNorm(3), nn.Conv2d(8, 16, 5), nn.Tanh(), nn.AvgPool2d(2), nn.Flatten(),
        nn.Dropout(0.25), nn.Linear(16 * 3 * 3, 10))


def _cnn_batch(n, size):
    rng = np.random.default_rng(1)
    return (minifw.tensor(rng.standard_normal((n, 3, size, size)).astype(np.float32)),
            minifw.tensor(rng.integers(0, 10, n)))


class _LanguageModel(nn.Module):
    # embedding, a 2-layer LSTM, a GRU, linear, cross-entropy over every step
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=2)
        self.gru = nn.GRU(hidden, hidden, bidirectional=True)
        self.out = nn.Linear(2 * hidden, vocab)

    def forward(self, tokens):
        y, _ = self.lstm(self.embed(tokens))
        y, _ = self.gru(y)
        return self.out(y)


def _tokens(t, n, vocab):
    rng = np.random.default_rng(2)
    return minifw.tensor(rng.integers(0, vocab, (t, n))), minifw.tensor(rng.integers(0, vocab, t * n))


def _training_step(model, x, target, device, steps=2):
    """Outputs, loss, every gradient, the parameters after SGD steps with momentum, and the
    buffers (batch-norm statistics), as host arrays."""
    minifw.manual_seed(0)
    model = model().to(device) if callable(model) and not isinstance(model, nn.Module) else model
    x, target = x.to(device), target.to(device)
    opt = minifw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    result = {}
    for step in range(steps):
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out.reshape(target.shape[0], -1), target)
        loss.backward()
        result[f"out{step}"] = host(out.detach().to("cpu").numpy())
        result[f"loss{step}"] = np.asarray(loss.item())
        for name, p in model.named_parameters():
            result[f"grad{step} {name}"] = host(p.grad.detach().to("cpu").numpy())
        opt.step()
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        result[name] = host(t.detach().to("cpu").numpy())
    return result


def _seeded(make):
    def build():
        minifw.manual_seed(0)
        return make()
    return build


def test_cnn_training_step_is_reproducible_across_threads():
    x, target = _cnn_batch(64, 24)
    minifw.use_deterministic_algorithms(True)
    runs = over_threads(lambda: _training_step(_seeded(_cnn), x, target, "cpu"))
    assert_bitwise_equal(runs, "cnn on the cpu")


def test_language_model_training_step_is_reproducible_across_threads():
    # the weight gradients' GEMMs sum over T * N = 1536 rows
    tokens, target = _tokens(16, 96, 50)
    minifw.use_deterministic_algorithms(True)
    runs = over_threads(lambda: _training_step(_seeded(lambda: _LanguageModel(50, 32)), tokens, target, "cpu",
                                               steps=1))
    assert_bitwise_equal(runs, "language model on the cpu")


# ---- the CUDA kernels on the emulator, and the caffe engine -------------------------------

def test_cuda_kernels_are_reproducible_across_emulator_workers(dev):
    # The emulator runs a launch's blocks on as many workers as minifw.set_num_threads
    # gives, each taking the next block as it finishes one: a result that depended on the
    # order of blocks would change with the worker count.
    x, target = _cnn_batch(8, 16)
    tokens, next_tokens = _tokens(6, 8, 20)
    minifw.use_deterministic_algorithms(True)
    cnn = over_threads(lambda: _training_step(_seeded(_cnn_small), x, target, dev, steps=1), (1, 3, 2))
    assert_bitwise_equal(cnn, f"cnn on {dev}")
    lm = over_threads(lambda: _training_step(_seeded(lambda: _LanguageModel(20, 16)), tokens, next_tokens,
                                             dev, steps=1), (1, 3))
    assert_bitwise_equal(lm, f"language model on {dev}")


def _cnn_small():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(3, stride=2),
        nn.LocalResponseNorm(3), nn.Conv2d(8, 8, 3), nn.AvgPool2d(2), nn.Flatten(),
        nn.Dropout(0.25), nn.Linear(8 * 2 * 2, 10))


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_caffe_engine_is_reproducible(device):
    # on the CPU the caffe engine runs NumPy (OpenBLAS's threads, not minifw's): run to run
    x, target = _cnn_batch(8, 16)
    minifw.use_deterministic_algorithms(True)
    with minifw.engine("caffe"):
        runs = over_threads(lambda: _training_step(_seeded(_cnn_small), x, target, device, steps=1), (1, 3))
    assert_bitwise_equal(runs, f"caffe engine on {device}")


# ---- scatter-adds on "cuda" ---------------------------------------------------------------------

def _scatter_adds(dev):
    """The gradients of every operation whose backward (or forward) scatter-adds, on `dev`."""
    gen = minifw.Generator().manual_seed(4)
    weight = minifw.randn(10, 4, generator=gen).to(dev).requires_grad_()
    x = minifw.randn(2, 3, 7, 6, generator=gen).to(dev).requires_grad_()
    tokens = minifw.tensor(np.array([1, 2, 1, 1, 7, 1]), device=dev)
    rows = minifw.tensor(np.array([[0, 2, 0], [1, 0, 0]]), device=dev)
    out = (F.embedding(tokens, weight).sum() + weight[tokens[:3]].sum()  # embedding, advanced indexing
           + weight.gather(0, rows).sum() + weight.index_select(0, tokens).sum()
           + F.adaptive_max_pool2d(x, (4, 5)).sum() + F.pad(x, (2, 2, 1, 1), mode="reflect").sum()
           + x.cummax(3)[0].sum())
    out.backward()
    added = minifw.zeros(3, 4, device=dev).scatter_add(0, rows, weight[:2, :3].detach())
    indexed = minifw.zeros(3, 4, device=dev).index_add(0, tokens[:3] % 3, weight[:3].detach())
    return [t.to("cpu").numpy() for t in (weight.grad, x.grad, added, indexed)]


def test_cuda_scatter_adds_run_in_index_order_in_the_mode(emulated_cuda, monkeypatch):
    # On "cuda", NumPy's add.at reaches CuPy's scatter kernel, which adds with atomicAdd: the
    # order of a float sum, and so its bits, change from run to run on a GPU. In the mode
    # each such scatter goes through host memory, where NumPy adds in index order: nothing
    # is refused, and "cuda" gives the CPU's bits.
    cupy_add = type(minifw.devices._cupy().add)
    kernel_calls = []
    at = cupy_add.at
    monkeypatch.setattr(cupy_add, "at", lambda self, *args: (kernel_calls.append(self.__name__), at(self, *args))[1])
    outside = _scatter_adds("cuda")
    assert kernel_calls.count("add") >= 8  # CuPy's kernel outside the mode
    minifw.use_deterministic_algorithms(True)
    del kernel_calls[:]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = {device: _scatter_adds(device) for device in ("cpu", "cudasim", "cuda")}
    assert "add" not in kernel_calls
    for device in ("cudasim", "cuda"):
        for got, want in zip(runs[device], runs["cpu"]):
            assert np.array_equal(got, want), device
    for got, want in zip(outside, runs["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _overlapping_max_pool_problem(rng):
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    y, indices = ops.pool2d_forward(x, 3, stride=2, mode="max", return_indices=True)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    return x, dy, indices


def test_caffe_max_pool_backward_adds_by_taps_in_the_mode(rng, emulated_cuda):
    # Caffe's scatter of max pooling's gradient is a bincount, which CuPy runs with atomicAdd;
    # the mode adds tap by tap instead, on every device, with the same bits.
    from minifw.engines import caffe
    x, dy, indices = _overlapping_max_pool_problem(rng)
    kw = dict(stride=2, mode="max", indices=indices)
    scattered = caffe.pool2d_backward(dy, x.shape, 3, **kw)
    minifw.use_deterministic_algorithms(True)
    by_taps = {device: host(caffe.pool2d_backward(minifw.devices.to_device(dy, minifw.devices.get(device)),
                                                  x.shape, 3, stride=2, mode="max",
                                                  indices=minifw.devices.to_device(indices, minifw.devices.get(device))))
               for device in ("cpu", "cudasim", "cuda")}
    np.testing.assert_allclose(by_taps["cpu"], scattered, rtol=1e-6, atol=1e-6)
    assert np.count_nonzero(by_taps["cpu"]) == np.count_nonzero(scattered)
    for device in ("cudasim", "cuda"):
        assert np.array_equal(by_taps[device], by_taps["cpu"]), device
    # an index outside its window (still inside the plane) has no tap: scattered, in index
    # order on every device (on "cuda" through host memory, not CuPy's atomic bincount)
    elsewhere = indices.copy()
    elsewhere[0, 0, 0, 0] = 80
    scattered = {device: host(caffe.pool2d_backward(*[minifw.devices.to_device(a, minifw.devices.get(device))
                                                      for a in (dy,)], x.shape, 3, stride=2, mode="max",
                                                    indices=minifw.devices.to_device(elsewhere,
                                                                                     minifw.devices.get(device))))
                 for device in ("cpu", "cudasim", "cuda")}
    for device in ("cudasim", "cuda"):
        assert np.array_equal(scattered[device], scattered["cpu"]), device
    assert scattered["cpu"].reshape(-1)[80] != by_taps["cpu"].reshape(-1)[80]
