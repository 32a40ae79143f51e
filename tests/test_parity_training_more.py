"""What a PyTorch training script sees of the module, optimizer and data APIs, where minifw
once answered otherwise: load_state_dict's printed result, ModuleList's printed runs of
alike modules, batch norm state dicts without num_batches_tracked, and more. Expected values
are written out here; where torch is installed, a few are compared with it as well."""
import numpy as np
import pytest

import minifw
from minifw import nn


# ---- Module API ----------------------------------------------------------------------------
def test_load_state_dict_result_prints_as_pytorch():
    m = nn.Linear(2, 3)
    result = m.load_state_dict(m.state_dict())
    assert repr(result) == str(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert type(result).__name__ == "_IncompatibleKeys"
    result = m.load_state_dict({"weight": m.weight.detach(), "extra": minifw.zeros(1)}, strict=False)
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['extra'])"
    missing, unexpected = result
    assert missing == ["bias"] and unexpected == ["extra"]


def test_module_list_repr_groups_runs_of_alike_modules():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [
        nn.ReLU(), nn.Sequential(nn.Linear(1, 1), nn.ReLU()), nn.Sequential(nn.Linear(1, 1), nn.ReLU()),
        nn.ReLU()])
    assert repr(layers) == (
        "ModuleList(\n"
        "  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
        "  (3): ReLU()\n"
        "  (4-5): 2 x Sequential(\n"
        "    (0): Linear(in_features=1, out_features=1, bias=True)\n"
        "    (1): ReLU()\n"
        "  )\n"
        "  (6): ReLU()\n"
        ")")
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.ModuleList([nn.Tanh()])) == "ModuleList(\n  (0): Tanh()\n)"
    assert repr(nn.Sequential(nn.ModuleList([nn.Tanh(), nn.Tanh()]))) == (
        "Sequential(\n  (0): ModuleList(\n    (0-1): 2 x Tanh()\n  )\n)")


@pytest.mark.parametrize("make", [lambda: nn.BatchNorm1d(3),
                                  lambda: nn.InstanceNorm1d(3, track_running_stats=True)])
def test_norm_state_dict_without_num_batches_tracked(make):
    """A plain dict (no _metadata: an old checkpoint, or one filtered by a comprehension) may
    lack num_batches_tracked: the module keeps its own count, as PyTorch's norms (state dict
    version 2) do; with version-2 metadata the key is missing as any other."""
    m = make()
    m.num_batches_tracked.fill_(2)  # (a batch norm counts its training batches; instance norm not)
    fresh = make()
    plain = {k: v for k, v in fresh.state_dict().items() if k != "num_batches_tracked"}
    assert repr(m.load_state_dict(plain)) == "<All keys matched successfully>"
    assert m.num_batches_tracked.item() == 2
    np.testing.assert_array_equal(m.running_mean.numpy(), np.zeros(3, np.float32))
    with_metadata = fresh.state_dict()
    assert with_metadata._metadata[""] == {"version": 2}
    del with_metadata["num_batches_tracked"]
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        m.load_state_dict(with_metadata)
    assert m.load_state_dict(with_metadata, strict=False).missing_keys == ["num_batches_tracked"]


def test_nested_batch_norm_state_dict_without_num_batches_tracked():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))
    assert dict(model.state_dict()._metadata) == {"": {"version": 1}, "0": {"version": 1},
                                                  "1": {"version": 2}, "2": {"version": 1}}
    plain = {k: v for k, v in model.state_dict().items() if "num_batches" not in k}
    assert not model.load_state_dict(plain).missing_keys
    lazy = nn.LazyBatchNorm1d()
    lazy.load_state_dict({k: v for k, v in nn.BatchNorm1d(3).state_dict().items()
                          if "num_batches" not in k})
    assert lazy.weight.shape == (3,) and lazy.num_batches_tracked.item() == 0


def test_module_api_against_torch():
    torch = pytest.importorskip("torch")
    for lib_layers in ((torch.nn, minifw.nn),):
        reprs = [repr(lib.ModuleList([lib.Linear(2, 2), lib.Linear(2, 2), lib.ReLU()]))
                 for lib in lib_layers]
        assert reprs[0] == reprs[1]
    results = [repr(lib.nn.BatchNorm1d(2).load_state_dict(
        {k: v for k, v in lib.nn.BatchNorm1d(2).state_dict().items() if "num" not in k}))
        for lib in (torch, minifw)]
    assert results[0] == results[1]
