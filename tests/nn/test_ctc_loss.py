"""F.ctc_loss: against a brute-force sum over every alignment (float64), PyTorch's values and
its gradients through log_softmax (when installed), float64 finite differences on the
log-probabilities, padded and concatenated targets, unbatched input, zero_infinity, the
reductions, the GPU devices, and errors."""
import itertools

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from gradcheck import gradcheck
from targets import assert_ops_match_the_cpu


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def brute_force_nll(lp, target, blank=0):
    """-log of the sum, over every frame-wise path that collapses to target, of its
    probability (lp: (T, C) log-probabilities)."""
    t, c = lp.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t):
        collapsed = [k for i, k in enumerate(path) if k != blank and (i == 0 or path[i - 1] != k)]
        if collapsed == list(target):
            total += np.exp(sum(lp[i, k] for i, k in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


def case(seed=0, t=5, n=3, c=4):
    rng = np.random.default_rng(seed)
    return log_softmax(rng.standard_normal((t, n, c)))


@pytest.mark.parametrize("targets, lengths, inputs", [
    ([[1, 2], [3, 3], [2, 0]], [2, 2, 1], [5, 5, 4]),     # a repeated label needs a blank between
    ([[1, 1], [2, 1], [3, 0]], [2, 2, 0], [3, 2, 5]),     # an empty target; a 2-frame input
    ([[1, 2], [1, 3], [2, 2]], [2, 2, 2], [5, 1, 3]),     # 1 frame for 2 labels: impossible
])
def test_losses_match_the_brute_force_sum(targets, lengths, inputs):
    lp = case()
    got = F.ctc_loss(minifw.tensor(lp), minifw.tensor(targets), inputs, lengths, reduction="none").numpy()
    want = [brute_force_nll(lp[:inputs[i], i], targets[i][:lengths[i]]) for i in range(3)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_blank_elsewhere_and_concatenated_targets():
    lp = case(1)
    padded = F.ctc_loss(minifw.tensor(lp), minifw.tensor([[0, 1], [2, 0], [1, 1]]), [5, 4, 5], [2, 1, 2],
                        blank=3, reduction="none").numpy()
    concat = F.ctc_loss(minifw.tensor(lp), minifw.tensor([0, 1, 2, 1, 1]), [5, 4, 5], [2, 1, 2], blank=3,
                        reduction="none").numpy()
    want = [brute_force_nll(lp[:5, 0], [0, 1], 3), brute_force_nll(lp[:4, 1], [2], 3),
            brute_force_nll(lp[:5, 2], [1, 1], 3)]
    np.testing.assert_allclose(padded, want, rtol=1e-12)
    np.testing.assert_allclose(concat, want, rtol=1e-12)
    unbatched = F.ctc_loss(minifw.tensor(lp[:, 0]), minifw.tensor([0, 1]), 5, 2, blank=3, reduction="none")
    assert unbatched.shape == () and unbatched.item() == pytest.approx(want[0], rel=1e-12)


def test_reductions_and_zero_infinity():
    lp = minifw.tensor(case(2), requires_grad=True)
    args = (minifw.tensor([[1, 2], [1, 3], [2, 2]]), [5, 1, 3], [2, 2, 2])
    each = F.ctc_loss(lp, *args, reduction="none").detach().numpy()
    assert np.isinf(each[1]) and np.isfinite(each[[0, 2]]).all()
    assert F.ctc_loss(lp, *args, reduction="sum").item() == np.inf
    zeroed = F.ctc_loss(lp, *args, reduction="none", zero_infinity=True).detach().numpy()
    np.testing.assert_allclose(zeroed, [each[0], 0.0, each[2]])
    mean = F.ctc_loss(lp, *args, zero_infinity=True)
    assert mean.item() == pytest.approx((each[0] / 2 + each[2] / 2) / 3, rel=1e-12)
    mean.backward()
    assert np.isfinite(lp.grad.numpy()).all() and not lp.grad.numpy()[:, 1].any()
    lp.grad = None
    F.ctc_loss(lp, *args, reduction="sum").backward()
    assert np.isnan(lp.grad.numpy()[:, 1]).all()  # an impossible alignment's gradient, unasked to zero


def test_gradient_is_the_negative_posterior():
    # d nll / d log_probs (free log-probabilities, not through a softmax) by finite differences
    lp = minifw.tensor(case(3, t=6), requires_grad=True)
    gradcheck(lambda x: F.ctc_loss(x, minifw.tensor([[1, 2, 2], [3, 1, 0], [2, 0, 0]]), [6, 5, 6], [3, 2, 1],
                                   reduction="sum"), [lp])
    gradcheck(lambda x: F.ctc_loss(x, minifw.tensor([[1, 2], [3, 1], [2, 0]]), [6, 4, 3], [2, 2, 1]), [lp])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_matches_pytorch_through_log_softmax(reduction):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((15, 4, 6))
    targets = rng.integers(1, 6, (4, 5))
    inputs, lengths = [15, 11, 9, 4], [5, 3, 0, 4]
    results = []
    for lib in (minifw, torch):
        x = lib.tensor(logits, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(lib.nn.functional.log_softmax(x, 2), lib.tensor(targets),
                                          lib.tensor(inputs), lib.tensor(lengths), reduction=reduction,
                                          zero_infinity=True)
        loss.sum().backward()
        results.append((loss.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-9, atol=1e-13)


def test_on_the_device_equal_the_cpus(dev):
    make = lambda: [minifw.tensor(case(5, t=7), dtype=minifw.float32)]
    assert_ops_match_the_cpu(dev, make, lambda lp: F.ctc_loss(
        lp, minifw.tensor([[1, 2], [3, 3], [2, 0]], device=lp.device), [7, 6, 5], [2, 2, 1]),
        rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call, error, match", [
    (lambda lp: F.ctc_loss(lp, minifw.tensor([[1, 2]] * 3), [5, 5, 6], [2, 2, 2]), ValueError,
     "input_lengths must be <= the 5 frames"),
    (lambda lp: F.ctc_loss(lp, minifw.tensor([[1, 2]] * 3), [5, 5], [2, 2, 2]), ValueError,
     "input_lengths must hold 3 lengths"),
    (lambda lp: F.ctc_loss(lp, minifw.tensor([[1, 2]] * 3), [5, 5, 5], [2, 3, 2]), ValueError,
     "target_lengths must be <= the 2 columns"),
    (lambda lp: F.ctc_loss(lp, minifw.tensor([[1, 0]] * 3), [5, 5, 5], [2, 2, 2]), ValueError,
     "other than blank"),
    (lambda lp: F.ctc_loss(lp, minifw.tensor([[1, 4]] * 3), [5, 5, 5], [2, 2, 2]), ValueError,
     r"class indices in \[0, 3\]"),
    (lambda lp: F.ctc_loss(lp, minifw.tensor([1, 2, 1]), [5, 5, 5], [2, 2, 2]), ValueError,
     "fewer than target_lengths add up to"),
    (lambda lp: F.ctc_loss(lp, minifw.tensor([[1.0, 2.0]] * 3), [5, 5, 5], [2, 2, 2]), TypeError,
     "targets must be an integer tensor"),
    (lambda lp: F.ctc_loss(lp, minifw.tensor([[1, 2]] * 3), [5, 5, 5], [2, -1, 2]), ValueError,
     "target_lengths must be >= 0"),
    (lambda lp: F.ctc_loss(lp, minifw.tensor([[1, 2]] * 3), [5, 5, 5], [2, 2, 2], blank=4), ValueError,
     r"blank must be a class index in \[0, 3\]"),
    (lambda lp: F.ctc_loss(lp[0, 0], minifw.tensor([1]), 1, 1), ValueError, "log_probs must be 3-D"),
])
def test_errors_name_the_argument(call, error, match):
    lp = minifw.tensor(case())
    with pytest.raises(error, match=match) as info:
        call(lp)
    assert str(info.value).startswith("ctc_loss:")


def test_the_module():
    loss = minifw.nn.CTCLoss(blank=3, reduction="sum", zero_infinity=True)
    lp = minifw.tensor(case(1))
    args = (minifw.tensor([[0, 1], [2, 0], [1, 1]]), [5, 4, 5], [2, 1, 2])
    assert loss(lp, *args).item() == pytest.approx(
        F.ctc_loss(lp, *args, blank=3, reduction="sum", zero_infinity=True).item(), rel=1e-15)
    assert repr(loss) == "CTCLoss()"
    with pytest.raises(ValueError, match="CTCLoss: blank must be a class index >= 0"):
        minifw.nn.CTCLoss(blank=-1)
    with pytest.raises(ValueError, match="reduction"):
        minifw.nn.CTCLoss(reduction="avg")
