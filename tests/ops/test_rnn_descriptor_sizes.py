"""RNNDescriptor's sizes: input_size, hidden_size and num_layers are bounded as every size the
native library indexes (checks.check_size: [1, 2**58]), and weight_count() is exact (math.prod
on Python ints: np.prod wrapped around int64 and gave 0 for 2**31 x 2**31)."""
import math

import pytest

from minifw.ops import RNNDescriptor


@pytest.mark.parametrize("mode, gates", [("lstm", 4), ("gru", 3), ("rnn_tanh", 1)])
def test_weight_count_is_exact_for_huge_sizes(mode, gates):
    desc = RNNDescriptor(mode, 2 ** 31, 2 ** 31, bias=False)
    assert desc.weight_count() == gates * 2 ** 31 * (2 ** 31 + 2 ** 31) == gates * 2 ** 63
    assert isinstance(desc.weight_count(), int)


def test_weight_count_matches_the_shapes():
    desc = RNNDescriptor("lstm", 3, 5, num_layers=2, bidirectional=True)
    assert desc.weight_count() == sum(math.prod(shape) for _, shape in desc.weight_shapes())


@pytest.mark.parametrize("name", ["input_size", "hidden_size", "num_layers"])
@pytest.mark.parametrize("value", [2 ** 58 + 1, 2 ** 63, 2 ** 100])
def test_sizes_beyond_what_the_native_library_indexes_are_refused(name, value):
    sizes = {"input_size": 3, "hidden_size": 4, "num_layers": 1, name: value}
    with pytest.raises(ValueError, match=rf"RNNDescriptor: {name} must be in \[1, 2\*\*58\] \(the largest size "
                                         rf"the native library indexes\), got {value}"):
        RNNDescriptor("gru", sizes["input_size"], sizes["hidden_size"], sizes["num_layers"])


@pytest.mark.parametrize("T, N", [(2 ** 59, 1), (1, 2 ** 60)])
def test_reserve_and_workspace_sizes_take_bounded_counts(T, N):
    desc = RNNDescriptor("gru", 3, 4)
    with pytest.raises(ValueError, match=r"must be in \[0, 2\*\*58\]"):
        desc.reserve_size(T, N)
    with pytest.raises(ValueError, match=r"must be in \[0, 2\*\*58\]"):
        desc.workspace_size(T, N)
