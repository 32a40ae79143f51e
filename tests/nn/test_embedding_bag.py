"""EmbeddingBag / F.embedding_bag: sums, means and maxima over bags of embedding rows.

Values against a float64 loop reference (1-D input with offsets, include_last_offset, 2-D
input, padding_idx, per_sample_weights, empty bags), float64 gradients against finite
differences, values and gradients against PyTorch's (when torch is installed), the same
results on cudasim and the emulated cuda as on the CPU, the module's repr, state and
from_pretrained, and errors naming the function and the argument."""
import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from gradcheck import gradcheck
from targets import assert_ops_match_the_cpu

MODES = ("sum", "mean", "max")


def bags_ref(w, indices, starts, mode, padding_idx=None, psw=None):
    """The bags' reductions by loops, in float64: bag b holds indices[starts[b]:starts[b+1]]."""
    ends = list(starts[1:]) + [len(indices)]
    out = np.zeros((len(starts), w.shape[1]))
    for b, (s, e) in enumerate(zip(starts, ends)):
        rows = [w[indices[i]] * (1.0 if psw is None else psw[i]) for i in range(s, e)
                if indices[i] != padding_idx]
        if rows:
            out[b] = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode](rows, axis=0)
    return out


def weight(n=9, d=4, seed=0, requires_grad=False):
    w = np.random.default_rng(seed).uniform(-1, 1, (n, d))
    return minifw.tensor(w, dtype=minifw.float64, requires_grad=requires_grad)


CASES = [  # indices, offsets
    ([1, 2, 4, 5, 4, 3, 2, 8, 0, 0], [0, 4, 4, 7]),   # an empty bag in the middle
    ([3], [0]),                                          # one bag of one index
    ([5, 5, 5, 1, 7], [0, 3, 5]),                        # a repeated index; an empty last bag
    ([], [0, 0]),                                        # no indices at all
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("padding_idx", [None, 5])
def test_values_match_the_loop_reference(mode, case, padding_idx):
    indices, offsets = CASES[case]
    w = weight()
    got = F.embedding_bag(minifw.tensor(indices, dtype=minifw.int64), w,
                          minifw.tensor(offsets, dtype=minifw.int64), mode=mode, padding_idx=padding_idx)
    want = bags_ref(w.numpy(), indices, offsets, mode, padding_idx)
    assert tuple(got.shape) == (len(offsets), 4) and got.dtype == minifw.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-15)


def test_include_last_offset_and_2d_input():
    w = weight()
    idx = [1, 2, 4, 5, 4, 3]
    a = F.embedding_bag(minifw.tensor(idx), w, minifw.tensor([0, 2, 6]), mode="sum",
                        include_last_offset=True)
    np.testing.assert_allclose(a.numpy(), bags_ref(w.numpy(), idx, [0, 2], "sum"), rtol=1e-12)
    two_d = F.embedding_bag(minifw.tensor([[1, 2], [4, 5], [4, 3]]), w, mode="mean")
    np.testing.assert_allclose(two_d.numpy(), bags_ref(w.numpy(), idx, [0, 2, 4], "mean"), rtol=1e-12)


def test_per_sample_weights_scale_each_row():
    w = weight()
    idx, off, psw = [1, 2, 4, 5, 4], [0, 2], [0.5, -1.0, 2.0, 0.25, 3.0]
    got = F.embedding_bag(minifw.tensor(idx), w, minifw.tensor(off), mode="sum",
                          per_sample_weights=minifw.tensor(psw, dtype=minifw.float64), padding_idx=2)
    np.testing.assert_allclose(got.numpy(), bags_ref(w.numpy(), idx, off, "sum", 2, psw), rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_gradients_match_finite_differences(mode):
    w = weight(requires_grad=True)
    idx = minifw.tensor([1, 2, 4, 5, 4, 3, 2, 8, 6, 0])
    off = minifw.tensor([0, 4, 4, 7])
    gradcheck(lambda w: F.embedding_bag(idx, w, off, mode=mode, padding_idx=0), [w])
    if mode == "sum":
        psw = minifw.tensor(np.linspace(-1, 2, 10), dtype=minifw.float64, requires_grad=True)
        gradcheck(lambda w, p: F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=p,
                                               padding_idx=2), [w, psw])
    else:
        gradcheck(lambda w: F.embedding_bag(idx, w, off, mode=mode), [w])


def test_max_sends_each_columns_gradient_to_its_first_maximum():
    w = minifw.tensor([[1.0, 5.0], [3.0, 5.0], [3.0, 0.0]], requires_grad=True)
    out = F.embedding_bag(minifw.tensor([0, 1, 2]), w, minifw.tensor([0]), mode="max")
    assert out.tolist() == [[3.0, 5.0]]
    out.backward(minifw.tensor([[10.0, 20.0]]))
    # column 0: rows 1 and 2 tie at 3, the first (row 1) takes it; column 1: rows 0 and 1 tie
    assert w.grad.tolist() == [[0.0, 20.0], [10.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("variant", ["offsets", "last_offset", "2d", "psw"])
def test_values_and_gradients_match_pytorch(mode, variant):
    torch = pytest.importorskip("torch")
    if variant == "psw" and mode != "sum":
        pytest.skip("PyTorch takes per_sample_weights only with mode='sum'")
    rng = np.random.default_rng(1)
    w = rng.uniform(-1, 1, (12, 5))
    idx = rng.integers(0, 12, 17)
    kwargs = dict(mode=mode, padding_idx=3)
    if variant == "2d":
        idx, off = idx[:16].reshape(4, 4), None
    else:
        off = np.array([0, 3, 3, 9, 16]) if variant == "last_offset" else np.array([0, 3, 3, 9])
        kwargs["include_last_offset"] = variant == "last_offset"
        if variant == "last_offset":
            idx = idx[:16]
    psw = rng.uniform(-1, 1, idx.shape) if variant == "psw" else None
    g = None
    results = []
    for lib in (minifw, torch):
        wt = lib.tensor(w, requires_grad=True)
        p = None if psw is None else lib.tensor(psw, requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor(idx), wt, None if off is None else lib.tensor(off),
                                              per_sample_weights=p, **kwargs)
        if g is None:
            g = rng.uniform(-1, 1, tuple(out.shape))
        out.backward(lib.tensor(g))
        results.append([out.detach().numpy(), wt.grad.numpy()] + ([] if p is None else [p.grad.numpy()]))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq_divides_each_rows_gradient_by_its_count(mode):
    # (PyTorch 2.13's CPU kernel divides some rows by another index's count, its issue 190063;
    # its CUDA kernel and its documentation divide by the row's own count, as here)
    w = weight(6, 2, requires_grad=True)
    idx = [4, 4, 4, 1, 1, 5, 0]
    out = F.embedding_bag(minifw.tensor(idx), w, minifw.tensor([0, 2, 5]), mode=mode,
                          scale_grad_by_freq=True, padding_idx=0)
    out.backward(minifw.ones(3, 2, dtype=minifw.float64))
    # the last bag holds 5 and the padding index, which its count leaves out
    per_entry = np.array([1 / 2, 1 / 2, 1 / 3, 1 / 3, 1 / 3, 1.0, 0.0]) if mode == "mean" else np.ones(7)
    want = np.zeros(6)
    for i, k in enumerate(idx):
        if k != 0:
            want[k] += per_entry[i] / idx.count(k)
    np.testing.assert_allclose(w.grad.numpy(), np.repeat(want[:, None], 2, axis=1), rtol=1e-12)


BAG_ON_DEVICES = {
    "sum_psw": (lambda: [minifw.randn(10, 4, generator=minifw.Generator().manual_seed(3)),
                         minifw.tensor(np.linspace(-1, 1, 7), dtype=minifw.float32)],
                lambda w, p: F.embedding_bag(minifw.tensor([1, 2, 4, 5, 4, 3, 2], device=w.device), w,
                                             minifw.tensor([0, 2, 2], device=w.device), mode="sum",
                                             per_sample_weights=p)),
    "mean_2d": (lambda: [minifw.randn(10, 4, generator=minifw.Generator().manual_seed(4))],
                lambda w: F.embedding_bag(minifw.tensor([[1, 2, 0], [4, 4, 9]], device=w.device), w,
                                          mode="mean", padding_idx=0)),
    "max": (lambda: [minifw.randn(10, 4, generator=minifw.Generator().manual_seed(5))],
            lambda w: F.embedding_bag(minifw.tensor([1, 2, 4, 5, 4, 3], device=w.device), w,
                                      minifw.tensor([0, 3, 3], device=w.device), mode="max")),
}


@pytest.mark.parametrize("name", BAG_ON_DEVICES)
def test_results_and_gradients_on_the_device_equal_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *BAG_ON_DEVICES[name], rtol=1e-6, atol=1e-6, what=name)


def test_the_module():
    minifw.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=0)
    assert repr(bag) == "EmbeddingBag(10, 3, mode='sum', padding_idx=0)"
    assert list(bag.state_dict()) == ["weight"] and tuple(bag.weight.shape) == (10, 3)
    assert bag.weight[0].tolist() == [0.0, 0.0, 0.0]
    out = bag(minifw.tensor([1, 2, 0, 3]), minifw.tensor([0, 2]))
    np.testing.assert_allclose(out.detach().numpy(),
                               bags_ref(bag.weight.detach().numpy(), [1, 2, 0, 3], [0, 2], "sum", 0),
                               rtol=1e-6)
    assert repr(nn.EmbeddingBag(5, 2)) == "EmbeddingBag(5, 2, mode='mean')"
    pretrained = nn.EmbeddingBag.from_pretrained(weight(4, 2), mode="max")
    assert not pretrained.weight.requires_grad and pretrained.mode == "max"
    assert nn.EmbeddingBag.from_pretrained(weight(4, 2), freeze=False).weight.requires_grad


def test_max_norm_renormalizes_the_looked_up_rows_in_place():
    w = minifw.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    F.embedding_bag(minifw.tensor([0, 1]), w, minifw.tensor([0]), max_norm=1.0)
    np.testing.assert_allclose(w.numpy(), [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]], rtol=1e-6)


@pytest.mark.parametrize("call, error, match", [
    (lambda w: F.embedding_bag(minifw.tensor([[1, 2]]), w, minifw.tensor([0])), ValueError,
     "offsets must be None for a 2-D input"),
    (lambda w: F.embedding_bag(minifw.tensor([1, 2]), w), ValueError, "offsets is required"),
    (lambda w: F.embedding_bag(minifw.tensor([1, 2]), w, minifw.tensor([1])), ValueError,
     r"offsets\[0\] must be 0"),
    (lambda w: F.embedding_bag(minifw.tensor([1, 2]), w, minifw.tensor([0, 2, 1])), ValueError,
     "non-decreasing"),
    (lambda w: F.embedding_bag(minifw.tensor([1, 2]), w, minifw.tensor([0, 3])), ValueError,
     "at most len"),
    (lambda w: F.embedding_bag(minifw.tensor([1, 9]), w, minifw.tensor([0])), IndexError,
     "index 9, which is out of range for 9"),
    (lambda w: F.embedding_bag(minifw.tensor([1, 2]), w, minifw.tensor([0]), mode="mean",
                               per_sample_weights=minifw.ones(2, dtype=minifw.float64)), ValueError,
     "only supported with mode='sum'"),
    (lambda w: F.embedding_bag(minifw.tensor([1, 2]), w, minifw.tensor([0]), mode="sum",
                               per_sample_weights=minifw.ones(3, dtype=minifw.float64)), ValueError,
     "per_sample_weights must have input's shape"),
    (lambda w: F.embedding_bag(minifw.tensor([1, 2]), w, minifw.tensor([0]), mode="median"), ValueError,
     "mode"),
    (lambda w: F.embedding_bag(minifw.tensor([[[1]]]), w), ValueError, "got 3-D"),
    (lambda w: F.embedding_bag(minifw.tensor([1.0]), w, minifw.tensor([0])), TypeError,
     "input must be an int64 tensor"),
    (lambda w: F.embedding_bag(minifw.tensor([1]), w, minifw.tensor([0.0])), TypeError,
     "offsets must be a 1-D int64 tensor"),
    (lambda w: F.embedding_bag(minifw.tensor([1]), w, minifw.tensor([0]), mode="max",
                               scale_grad_by_freq=True), ValueError, "scale_grad_by_freq"),
    (lambda w: F.embedding_bag(minifw.tensor([1]), w, minifw.tensor([0]), sparse=True), ValueError,
     "sparse"),
    (lambda w: nn.EmbeddingBag(0, 3), ValueError, "num_embeddings"),
    (lambda w: nn.EmbeddingBag(4, 3, padding_idx=4), ValueError, "padding_idx"),
])
def test_errors_name_the_function_and_argument(call, error, match):
    with pytest.raises(error, match=match) as info:
        call(weight())
    assert "embedding_bag" in str(info.value) or "EmbeddingBag" in str(info.value)
