"""Anomaly detection (minifw.autograd.detect_anomaly / set_detect_anomaly), as PyTorch's:
the first Function whose forward or backward makes a nan or inf is named, with the user's
line that called it."""
import re
import warnings

import numpy as np
import pytest

import minifw
import minifw.nn as nn
import minifw.nn.functional as F
from minifw import autograd
from minifw.autograd import Function, detect_anomaly, set_detect_anomaly

pytestmark = [pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]  # NumPy's divide/invalid notes

DEVICES = ["cpu", "cudasim"]


@pytest.fixture(autouse=True)
def anomaly_off_afterwards():
    before = (minifw.is_anomaly_enabled(), minifw.is_anomaly_check_nan_enabled())
    yield
    assert (minifw.is_anomaly_enabled(), minifw.is_anomaly_check_nan_enabled()) == before
    set_detect_anomaly(False)


def leaf(values, dev="cpu"):
    return minifw.tensor(values, dtype=minifw.float64, device=dev, requires_grad=True)


def this_file():
    return re.escape(__file__.rstrip("c"))


# ---- forward ---------------------------------------------------------------------------

@pytest.mark.parametrize("dev", DEVICES)
def test_log_of_zero_in_forward_names_log_and_the_users_line(dev):
    x = leaf([1.0, 2.0, 0.5], dev)
    with detect_anomaly():
        h = (x - 2).exp() * 0  # made here; 0 everywhere, no anomaly yet
        with pytest.raises(RuntimeError) as caught:
            h.log()  # the line the error shows
    message = str(caught.value)
    assert message.startswith("Function 'Log' returned inf values in its 0th output during forward.")
    assert re.search(rf'File "{this_file()}", line \d+, in test_log_of_zero_in_forward_names_log\w*\n'
                     r"\s+h\.log\(\)  # the line the error shows", message)
    # where its input was made: the Mul of the line above
    assert re.search(r"input 0 is output 0 of MulBackward0, made at:\n.*\n\s+h = \(x - 2\)\.exp\(\) \* 0",
                     message)


@pytest.mark.parametrize("dev", DEVICES)
def test_sqrt_of_a_negative_in_forward(dev):
    x = leaf([4.0, -1.0], dev)
    with detect_anomaly(), pytest.raises(RuntimeError, match=r"^Function 'Sqrt' returned nan values "
                                                             r"in its 0th output during forward"):
        x.sqrt()


class TwoOutputs(Function):
    """A user's Function whose second output is nan where the input is negative."""
    _on_arrays = True  # a minifw-internal style Function: arrays in and out

    @staticmethod
    def forward(ctx, a):
        return a * 2, np.where(a < 0, np.nan, a)

    @staticmethod
    def backward(ctx, g0, g1):
        return 2 * g0 + g1


def test_a_users_function_that_returns_nan_is_named_with_the_output():
    x = leaf([1.0, -1.0])
    with detect_anomaly():
        with pytest.raises(RuntimeError, match="^Function 'TwoOutputs' returned nan values in its 1th "
                                               "output during forward"):
            TwoOutputs.apply(x)
        TwoOutputs.apply(leaf([1.0, 2.0]))  # finite: nothing raised


class InjectNaNInBackward(Function):
    """Identity forward; backward puts a nan into the gradient (a bug to be found)."""
    _on_arrays = True  # a minifw-internal style Function: arrays in and out

    @staticmethod
    def forward(ctx, a):
        return a.copy()

    @staticmethod
    def backward(ctx, g):
        g = g.copy()
        g[0] = np.nan
        return g


def model_with_injected_nan(x):
    h = x.exp()
    y = InjectNaNInBackward.apply(h)  # the culprit's forward call
    return (y * 3).sum()


@pytest.mark.parametrize("dev", DEVICES)
def test_a_nan_injected_by_a_users_backward_names_that_function(dev):
    x = leaf([0.1, 0.2], dev)
    with detect_anomaly():
        loss = model_with_injected_nan(x)
        with pytest.raises(RuntimeError) as caught:
            loss.backward()
    message = str(caught.value)
    # the Functions after it in the backward walk (Sum, Mul) were fine; Exp never ran
    assert message.startswith("Function 'InjectNaNInBackwardBackward' returned nan values in its 0th "
                              "output.\nTraceback of forward call that caused the error")
    assert re.search(r"in model_with_injected_nan\n\s+y = InjectNaNInBackward\.apply\(h\)  # the "
                     r"culprit's forward call", message)
    assert re.search(r"input 0 is output 0 of ExpBackward0, made at:\n.*\n\s+h = x\.exp\(\)", message)
    assert x.grad is None  # raised before any gradient reached the leaf


# ---- backward --------------------------------------------------------------------------

@pytest.mark.parametrize("dev", DEVICES)
def test_zero_times_inf_in_backward_names_sqrt_backward(dev):
    """sqrt(0) is fine forward; its gradient 1 / (2 sqrt(0)) = inf meets a zero gradient from
    the product: 0 * inf = nan, the classic case forward checks cannot see."""
    x = leaf([0.0, 4.0], dev)
    with detect_anomaly():
        s = x.sqrt()  # the forward call of the culprit
        loss = (s * 0).sum()
        with pytest.raises(RuntimeError) as caught:
            loss.backward()
    message = str(caught.value)
    assert message.startswith("Function 'SqrtBackward0' returned nan values in its 0th output.\n")
    assert re.search(rf'File "{this_file()}", line \d+, in test_zero_times_inf\w*\n'
                     r"\s+s = x\.sqrt\(\)  # the forward call of the culprit", message)


def test_inf_gradient_is_an_anomaly_too():
    x = leaf([0.0, 4.0])
    with detect_anomaly():
        loss = x.sqrt().sum()
        with pytest.raises(RuntimeError, match="^Function 'SqrtBackward0' returned inf values in its "
                                               "0th output"):
            loss.backward()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, x):
        h = F.relu(self.fc(x))
        return h.log().sum()  # log(0) where relu cut: the user's line in the message


def test_the_line_inside_a_modules_forward_is_shown():
    minifw.manual_seed(0)
    net = Net()
    x = minifw.tensor(np.full((2, 3), -10.0, np.float32))
    with detect_anomaly(), pytest.raises(RuntimeError) as caught:
        net(x)
    message = str(caught.value)
    assert message.startswith("Function 'Log' returned inf values in its 0th output during forward.")
    assert "in forward\n    return h.log().sum()  # log(0) where relu cut" in message
    assert "in test_the_line_inside_a_modules_forward_is_shown\n    net(x)" in message
    assert "minifw" + "/nn/" not in message  # minifw's own frames are left out


def test_pytorch_words_the_backward_error_the_same_way():
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.0, 4.0], dtype=torch.float64, requires_grad=True)
    with torch.autograd.detect_anomaly(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = (x.sqrt() * 0).sum()
        with pytest.raises(RuntimeError) as theirs:
            loss.backward()
    y = leaf([0.0, 4.0])
    with detect_anomaly():
        loss = (y.sqrt() * 0).sum()
        with pytest.raises(RuntimeError) as ours:
            loss.backward()
    # theirs: "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


# ---- off, nesting, check_nan=False ------------------------------------------------------

def test_off_by_default_nothing_is_checked_or_recorded(monkeypatch):
    assert not minifw.is_anomaly_enabled() and minifw.is_anomaly_check_nan_enabled()

    def no_stack_walks():
        raise AssertionError("the stack was walked with anomaly detection off")
    monkeypatch.setattr(autograd, "_user_frames", no_stack_walks)
    x = leaf([0.0, 4.0])
    y = x.log()  # -inf, allowed
    loss = (x.sqrt() * 0).sum()
    loss.backward()
    assert np.isneginf(y.detach().numpy()[0]) and np.isnan(x.grad.numpy()[0])
    assert getattr(y.grad_fn, "site", None) is None


def test_nesting_restores_each_previous_state():
    with detect_anomaly(check_nan=False):
        assert minifw.is_anomaly_enabled() and not minifw.is_anomaly_check_nan_enabled()
        with detect_anomaly():
            assert minifw.is_anomaly_enabled() and minifw.is_anomaly_check_nan_enabled()
        assert minifw.is_anomaly_enabled() and not minifw.is_anomaly_check_nan_enabled()
        with set_detect_anomaly(False):
            assert not minifw.is_anomaly_enabled()
        assert minifw.is_anomaly_enabled() and not minifw.is_anomaly_check_nan_enabled()
    assert not minifw.is_anomaly_enabled() and minifw.is_anomaly_check_nan_enabled()
    with pytest.raises(ZeroDivisionError):  # restored on an exception too
        with detect_anomaly():
            1 / 0
    assert not minifw.is_anomaly_enabled()


def test_set_detect_anomaly_as_a_call_and_as_a_context_manager():
    set_detect_anomaly(True, check_nan=False)
    try:
        assert minifw.is_anomaly_enabled() and not minifw.is_anomaly_check_nan_enabled()
    finally:
        set_detect_anomaly(False)
    assert not minifw.is_anomaly_enabled() and minifw.is_anomaly_check_nan_enabled()
    with set_detect_anomaly(True):
        with pytest.raises(RuntimeError, match="'Log' returned inf"):
            leaf([0.0]).log()
    assert not minifw.is_anomaly_enabled()


def test_detect_anomaly_as_a_decorator_warns_once_as_pytorch_does():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        @detect_anomaly()
        def step(x):
            assert minifw.is_anomaly_enabled()
            return x.log()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        for _ in range(2):
            with pytest.raises(RuntimeError, match="'Log' returned inf"):
                step(leaf([0.0]))
    assert not minifw.is_anomaly_enabled()


def test_check_nan_false_records_the_sites_but_checks_nothing():
    x = leaf([0.0, 4.0])
    with detect_anomaly(check_nan=False):
        y = x.log()  # -inf: not checked
        s = x.sqrt()  # recorded here
        loss = (s * 0).sum() + y[1]
        loss.backward()  # nan gradient: not checked
    assert np.isnan(x.grad.numpy()[0])
    site = s.grad_fn.site
    assert site[-1][0] == __file__.rstrip("c") and site[-1][2] == \
        "test_check_nan_false_records_the_sites_but_checks_nothing"
    assert all("minifw" + "/" not in f or "/tests/" in f for f, _, _ in site)


class FailingBackward(Function):
    _on_arrays = True  # a minifw-internal style Function: arrays in and out
    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, g):
        raise ValueError("a bug in backward")


def test_an_error_inside_backward_is_reported_with_its_forward_call():
    x = leaf([1.0])
    with detect_anomaly(check_nan=False):
        y = FailingBackward.apply(x)  # where the failing node was made
        with pytest.warns(UserWarning, match=r"(?s)Error detected in FailingBackwardBackward\. "
                                             r"Traceback of forward call.*y = FailingBackward\.apply"):
            with pytest.raises(ValueError, match="a bug in backward"):
                y.sum().backward()


def test_a_graph_made_before_detection_was_on_is_still_checked():
    x = leaf([0.0])
    loss = (x.sqrt() * 0).sum()
    with detect_anomaly(), pytest.raises(RuntimeError, match=r"'SqrtBackward0' returned nan values in its "
                                                            r"0th output.\n\(it was made before"):
        loss.backward()


@pytest.mark.parametrize("call", [lambda: set_detect_anomaly("yes"),
                                  lambda: set_detect_anomaly(True, check_nan=1),
                                  lambda: detect_anomaly(check_nan=None)],
                         ids=["mode", "check_nan", "detect_anomaly"])
def test_flags_must_be_bools(call):
    with pytest.raises(TypeError, match=r"(set_detect_anomaly|detect_anomaly): (mode|check_nan) must be a "
                                        r"bool, got"):
        call()
    assert not minifw.is_anomaly_enabled()


def test_no_grad_forward_is_checked_too():
    with detect_anomaly(), minifw.no_grad(), pytest.raises(RuntimeError, match="'Log' returned inf"):
        minifw.tensor([0.0]).log()


def test_on_the_gpu_devices(dev):
    """"cudasim", and "cuda" (the emulated GPU where there is none): the checks run with the
    device's array library, whose answer comes back to the host."""
    x = leaf([0.0, 4.0], dev)
    with detect_anomaly():
        with pytest.raises(RuntimeError, match="^Function 'Log' returned inf values in its 0th output"):
            x.log()
        loss = (x.sqrt() * 0).sum()
        with pytest.raises(RuntimeError, match="^Function 'SqrtBackward0' returned nan values in its 0th"):
            loss.backward()
    (x * 2).sum().backward()  # off again: nothing checked
    assert x.grad.device == x.device
