"""minifw.testing: assert_close's verdicts, tolerances and messages (as torch.testing's,
compared with it where PyTorch is installed), make_tensor's ranges and dtypes."""
import math

import numpy as np
import pytest

import minifw
from minifw.testing import assert_allclose, assert_close, make_tensor

F64 = minifw.float64


def t(v, dtype=None):
    return minifw.tensor(v, dtype=dtype)


def test_close_values_pass_and_far_ones_fail():
    assert_close(t([1.0, 2.0]), t([1.0, 2.0 + 2e-6]))  # within float32's rtol 1.3e-6 + atol 1e-5
    with pytest.raises(AssertionError, match="Tensor-likes are not close!"):
        assert_close(t([1.0, 2.0]), t([1.0, 2.1]))
    assert_close(t([1.0], F64), t([1.0 + 1e-8], F64))
    with pytest.raises(AssertionError):
        assert_close(t([1.0], F64), t([1.0 + 1e-6], F64))  # float64: 1e-7 both
    assert_close(t([1, 2]), t([1, 2]))
    with pytest.raises(AssertionError, match="Tensor-likes are not equal!"):
        assert_close(t([1, 2]), t([1, 3]))  # integers: exact
    assert_close(t([1.0]), t([1.5]), rtol=0.0, atol=0.5)
    with pytest.raises(AssertionError):
        assert_close(t([1.0]), t([1.5]), rtol=0.0, atol=0.4)


def test_message_names_the_mismatch():
    with pytest.raises(AssertionError) as info:
        assert_close(t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0]))
    text = str(info.value)
    assert "Mismatched elements: 1 / 3 (33.3%)" in text
    assert "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)" in text
    assert "Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)" in text
    with pytest.raises(AssertionError, match=r"Scalars are not close!\n\nExpected 2.0 but got 1.0"):
        assert_close(t(1.0), t(2.0))
    with pytest.raises(AssertionError, match="The failure occurred for item \\['a'\\]\\[1\\]"):
        assert_close({"a": [t([1.0]), t([2.0])]}, {"a": [t([1.0]), t([3.0])]})
    with pytest.raises(AssertionError, match="^custom$"):
        assert_close(t([1.0]), t([2.0]), msg="custom")
    with pytest.raises(AssertionError, match="^prefix: Tensor-likes"):
        assert_close(t([1.0]), t([2.0]), msg=lambda m: "prefix: " + m)


def test_metadata_checks():
    with pytest.raises(AssertionError, match="attribute 'shape' do not match: \\(2, 3\\) != \\(3, 2\\)"):
        assert_close(minifw.ones(2, 3), minifw.ones(3, 2))
    with pytest.raises(AssertionError, match="attribute 'dtype' do not match: float32 != float64"):
        assert_close(t([1.0]), t([1.0], F64))
    assert_close(t([1.0]), t([1.0], F64), check_dtype=False)
    with pytest.raises(AssertionError, match="attribute 'device' do not match"):
        assert_close(t([1.0]), t([1.0]).to("cudasim"))
    assert_close(t([1.0]), t([1.0]).to("cudasim"), check_device=False)
    assert_close(t([1.0]).to("cudasim"), t([1.0]).to("cudasim"))


def test_nan_inf_and_numbers():
    with pytest.raises(AssertionError):
        assert_close(t([math.nan]), t([math.nan]))
    assert_close(t([math.nan, 1.0]), t([math.nan, 1.0]), equal_nan=True)
    assert_close(t([math.inf]), t([math.inf]))
    with pytest.raises(AssertionError):
        assert_close(t([math.inf]), t([-math.inf]))
    assert_close(1.0, 1.0 + 1e-9)
    with pytest.raises(AssertionError, match="Scalars are not close"):
        assert_close(1.0, 1.5)
    with pytest.raises(AssertionError, match="The \\(d\\)types do not match"):
        assert_close(1, 1.0)
    assert_close(np.ones(3), np.ones(3))
    assert_close([1, 2.0, True], (1, 2.0, True))


def test_refusals():
    with pytest.raises(TypeError, match="assert_close: cannot compare inputs of type Tensor and float"):
        assert_close(t([1.0]), 1.0)
    with pytest.raises(TypeError, match="cannot compare a Tensor with a ndarray"):
        assert_close(t([1.0]), np.ones(1, np.float32))
    with pytest.raises(ValueError, match="give both rtol and atol or neither"):
        assert_close(t([1.0]), t([1.0]), rtol=1e-3)
    with pytest.raises(TypeError, match="assert_close: equal_nan must be a bool"):
        assert_close(t([1.0]), t([1.0]), equal_nan=1)
    with pytest.raises(AssertionError, match="The length of the sequences mismatch: 1 != 2"):
        assert_close([t([1.0])], [t([1.0]), t([1.0])])
    with pytest.raises(AssertionError, match="keys of the mappings do not match"):
        assert_close({"a": 1}, {"b": 1})


def test_gradients_and_requires_grad_do_not_matter():
    a = minifw.ones(2, requires_grad=True)
    assert_close(a * 2, minifw.full((2,), 2.0))


def test_assert_allclose_is_deprecated_and_lenient():
    with pytest.warns(FutureWarning):
        assert_allclose(t([1.0, math.nan]), [1.0, math.nan])


CASES = [
    ([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], "float32", {}),
    ([1.0, 2.0], [1.0, 2.0 + 1e-5], "float32", {}),
    ([1.0, 2.0], [1.0, 2.0 + 3e-5], "float32", {}),
    ([1.0], [1.0 + 2e-7], "float64", {}),
    ([1.0], [1.0 + 2e-7], "float64", {"rtol": 1e-6, "atol": 0.0}),
    ([1, 5], [1, 6], "int64", {}),
    ([[0.0, 1.0], [2.0, 3.0]], [[0.0, 1.0], [2.0, 3.1]], "float32", {}),
    ([math.nan], [math.nan], "float32", {"equal_nan": True}),
    ([math.nan], [math.nan], "float32", {}),
    ([0.0], [1e-6], "float32", {}),
    (2.0, 2.5, "float32", {}),
    ([True, False], [True, True], "bool", {}),
]


@pytest.mark.parametrize("actual, expected, dtype, kw", CASES)
def test_verdicts_and_messages_match_torch(actual, expected, dtype, kw):
    torch = pytest.importorskip("torch")

    def verdict(fn, make):
        try:
            fn(make(actual), make(expected), **kw)
            return None
        except AssertionError as e:
            return str(e).splitlines()

    mine = verdict(assert_close, lambda v: minifw.tensor(v, dtype=getattr(minifw, dtype)))
    theirs = verdict(torch.testing.assert_close,
                     lambda v: torch.tensor(v, dtype=getattr(torch, dtype)))
    assert (mine is None) == (theirs is None), (mine, theirs)
    if mine is not None:
        assert mine[0] == theirs[0]
        for m, w in zip(mine, theirs):  # same lines; differences printed in float64 here
            assert m.split(":")[0] == w.split(":")[0]
            if m.startswith(("Mismatched", "Expected")):
                assert m == w


def test_make_tensor():
    minifw.manual_seed(0)
    x = make_tensor(200, 3, dtype=minifw.float32, device="cpu")
    assert x.shape == (200, 3) and x.dtype == minifw.float32
    assert x.numpy().min() >= -9 and x.numpy().max() < 9
    y = make_tensor((50,), dtype=F64, device="cpu", low=2, high=3, requires_grad=True)
    assert y.requires_grad and 2 <= y.detach().numpy().min() and y.detach().numpy().max() < 3
    z = make_tensor((500,), dtype=minifw.int64, device="cpu", exclude_zero=True)
    assert (z.numpy() != 0).all() and z.numpy().min() >= -9 and z.numpy().max() <= 9
    b = make_tensor(100, dtype=minifw.bool, device="cpu")
    assert b.dtype == minifw.bool and 0 < b.numpy().sum() < 100
    assert make_tensor(2, dtype=minifw.float32, device="cudasim").device == minifw.device("cudasim")
    with pytest.raises(ValueError, match="make_tensor: low must be below high"):
        make_tensor(3, dtype=minifw.int64, device="cpu", low=3, high=3)


def test_without_the_dtype_check_the_looser_tolerance_applies_as_torch():
    a = np.array([1.0, 2.0], np.float32)
    assert_close(t(a), t(a.astype(np.float64) * (1 + 1e-6), F64), check_dtype=False)
    with pytest.raises(AssertionError):
        assert_close(t(a), t(a.astype(np.float64) * (1 + 1e-4), F64), check_dtype=False)
    assert_close(1, 1.0, check_dtype=False)
    with pytest.raises(AssertionError, match="Scalars are not close"):
        assert_close(1, 1.5, check_dtype=False)
