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


def test_module_api_against_torch():
    torch = pytest.importorskip("torch")
    for lib_layers in ((torch.nn, minifw.nn),):
        reprs = [repr(lib.ModuleList([lib.Linear(2, 2), lib.Linear(2, 2), lib.ReLU()]))
                 for lib in lib_layers]
        assert reprs[0] == reprs[1]
    results = [repr(lib.nn.Linear(2, 2).load_state_dict(lib.nn.Linear(2, 2).state_dict()))
               for lib in (torch, minifw)]
    assert results[0] == results[1]
