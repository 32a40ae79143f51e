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


# ---- utils.data ----------------------------------------------------------------------------
from minifw.utils.data import (DataLoader, Dataset, IterableDataset, ChainDataset, Subset,  # noqa: E402
                               TensorDataset, default_collate, default_convert)


class _Stream(IterableDataset):
    def __iter__(self):
        return iter(range(4))


def test_iterable_dataset_has_no_len_and_lists():
    """No __len__ on Dataset, as in PyTorch: len() is a TypeError, which list() (its length
    hint) and DataLoader's len() take for "unknown"."""
    assert list(_Stream()) == [0, 1, 2, 3]
    assert list(ChainDataset([_Stream(), _Stream()])) == [0, 1, 2, 3] * 2
    with pytest.raises(TypeError):
        len(_Stream())
    with pytest.raises(TypeError):
        len(DataLoader(_Stream(), batch_size=2))
    assert [b.tolist() for b in DataLoader(_Stream(), batch_size=3)] == [[0, 1, 2], [3]]


@pytest.mark.parametrize("scalar, dtype", [(np.float32, np.float32), (np.float64, np.float64),
                                           (np.int32, np.int32), (np.int64, np.int64),
                                           (np.bool_, np.bool_)])
def test_default_collate_keeps_numpy_scalars_dtype(scalar, dtype):
    batch = default_collate([scalar(1), scalar(0)])
    assert batch.dtype == dtype and batch.tolist() == [1, 0]
    assert default_collate([(np.ones(2, np.float32), scalar(1))])[1].dtype == dtype


def test_default_collate_numpy_float32_label_trains_with_float32_outputs():
    class Pairs(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return np.full(3, i, np.float32), np.float32(i) / 2

    x, y = next(iter(DataLoader(Pairs(), batch_size=4)))
    assert x.dtype == y.dtype == np.float32
    loss = nn.functional.mse_loss(nn.Linear(3, 1)(x).squeeze(1), y)
    assert loss.dtype == np.float32


def test_default_convert_as_pytorch():
    assert default_convert((1, 2)) == [1, 2]
    converted = default_convert((np.float32(2), np.arange(3)))
    assert isinstance(converted, list)
    assert converted[0].dtype == np.float32 and converted[0].shape == ()
    assert converted[1].tolist() == [0, 1, 2]


@pytest.mark.parametrize("prefetch", [0, 2])
@pytest.mark.parametrize("num_workers", [0, 2])
def test_len_of_an_epoch_iterator(prefetch, num_workers):
    data = TensorDataset(minifw.arange(10.))
    kwargs = dict(prefetch=prefetch) if num_workers == 0 else dict(num_workers=num_workers)
    if num_workers and prefetch == 0:
        kwargs["persistent_workers"] = True
    loader = DataLoader(data, batch_size=3, **kwargs)
    epoch = iter(loader)
    assert len(epoch) == len(loader) == 4
    assert len(list(epoch)) == 4


def test_getitems_fetches_a_batch_in_one_call():
    class Batched(Dataset):
        def __init__(self):
            self.calls = []

        def __len__(self):
            return 6

        def __getitem__(self, i):
            raise AssertionError("a batch is fetched through __getitems__")

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [np.float32(i) for i in indices]

    data = Batched()
    assert [b.tolist() for b in DataLoader(data, batch_size=4, prefetch=0)] == [[0, 1, 2, 3], [4, 5]]
    assert data.calls == [[0, 1, 2, 3], [4, 5]]
    subset = Subset(data, [5, 3, 1])
    assert [b.tolist() for b in DataLoader(subset, batch_size=2, prefetch=0)] == [[5, 3], [1]]
    assert data.calls[-2:] == [[5, 3], [1]]
    plain = Subset(TensorDataset(minifw.arange(4.)), [3, 0])
    assert [s[0].item() for s in plain.__getitems__([0, 1])] == [3.0, 0.0]


def test_data_against_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, minifw):
        assert str(lib.utils.data.default_collate([np.float32(1)]).dtype).endswith("float32")
    assert torch.utils.data.default_convert((1, 2)) == default_convert((1, 2))


# ---- optim ---------------------------------------------------------------------------------
from minifw import optim  # noqa: E402
from minifw.optim import lr_scheduler  # noqa: E402


def _model():
    minifw.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def test_optimizer_takes_named_parameters():
    model = _model()
    opt = optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["param_names"] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert all(isinstance(p, minifw.Tensor) for p in opt.param_groups[0]["params"])
    model(minifw.randn(5, 3)).sum().backward()
    opt.step()
    saved = opt.state_dict()
    assert saved["param_groups"][0]["param_names"] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert saved["param_groups"][0]["params"] == [0, 1, 2, 3]
    fresh = optim.SGD(model.parameters(), lr=0.5, momentum=0.9)  # names come with the dict
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["param_names"] == saved["param_groups"][0]["param_names"]
    assert fresh.param_groups[0]["lr"] == 0.1
    grouped = optim.Adam([{"params": model[0].named_parameters(), "lr": 0.01},
                          {"params": model[2].named_parameters()}], lr=0.1)
    assert [g["param_names"] for g in grouped.param_groups] == [["weight", "bias"], ["weight", "bias"]]
    with pytest.raises(ValueError, match="with names or all without"):
        grouped.add_param_group({"params": [minifw.zeros(1, requires_grad=True)]})
    with pytest.raises(ValueError, match="some names are missing"):
        optim.SGD([("a", minifw.zeros(1, requires_grad=True)), minifw.zeros(1, requires_grad=True)],
                  lr=0.1)
    with pytest.raises(TypeError, match="ordered"):
        optim.SGD([{"params": set(model.parameters())}], lr=0.1)


def test_optimizer_state_is_a_defaultdict():
    p = minifw.zeros(2, requires_grad=True)
    for opt in (optim.Adam([p]), optim.Adagrad([p], lr=0.1), optim.SGD([p], lr=0.1, momentum=0.5)):
        assert opt.state[p] == {} or "sum" in opt.state[p]  # reading an entry makes it, as PyTorch's
        p.grad = minifw.ones(2)
        opt.step()
        assert opt.state[p]
        opt.load_state_dict(opt.state_dict())
        opt.state[minifw.zeros(1)]["note"] = 1  # as a script keeps something of its own there


def test_optimizer_step_hooks():
    p = minifw.zeros(1, requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt, args, kwargs)))
    post = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", args, kwargs)))
    glob = optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("global",)))
    gpost = optim.optimizer.register_optimizer_step_post_hook(lambda o, a, k: calls.append(("gpost",)))
    try:
        p.grad = minifw.ones(1)
        opt.step()
        assert calls == [("global",), ("pre", True, (), {}), ("post", (), {}), ("gpost",)]
        assert p.item() == -1.0
    finally:
        glob.remove()
        gpost.remove()
    pre.remove()
    post.remove()
    calls.clear()
    opt.step()
    assert calls == [] and p.item() == -2.0

    def closure():
        calls.append("closure")
        return minifw.tensor(3.0)
    # a pre-hook may change step's arguments: here, give it a closure
    opt.register_step_pre_hook(lambda o, args, kwargs: ((), {"closure": closure}))
    assert opt.step().item() == 3.0 and calls == ["closure"]
    opt.register_step_pre_hook(lambda o, args, kwargs: "wrong")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


def test_optimizer_state_dict_hooks():
    p = minifw.zeros(2, requires_grad=True)
    opt = optim.Adam([p], lr=0.1)
    p.grad = minifw.ones(2)
    opt.step()
    seen = []
    opt.register_state_dict_pre_hook(lambda o: seen.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_state_dict_pre_hook(lambda o: seen.append("first"), prepend=True)
    saved = opt.state_dict()
    assert seen == ["first", "pre"] and saved["extra"] == 1

    def drop_extra(o, sd):
        assert sd is not saved  # a shallow copy, as PyTorch's
        sd.pop("extra")
        sd["param_groups"] = [dict(g, lr=0.5) for g in sd["param_groups"]]
    opt.register_load_state_dict_pre_hook(drop_extra)
    opt.register_load_state_dict_post_hook(lambda o: seen.append("loaded"))
    opt.load_state_dict(saved)
    assert "extra" in saved and opt.param_groups[0]["lr"] == 0.5 and seen[-1] == "loaded"


def test_scheduler_stepped_before_the_optimizer_warns_once():
    p = minifw.zeros(1, requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    sched = lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()
        opt2 = optim.SGD([p], lr=1.0)
        sched2 = lr_scheduler.ExponentialLR(opt2, 0.5)
        for _ in range(3):
            opt2.step()
            sched2.step()
        plateau = lr_scheduler.ReduceLROnPlateau(optim.SGD([p], lr=1.0))
        plateau.step(1.0)  # (PyTorch's ReduceLROnPlateau does not check the order)


def test_optim_against_torch():
    torch = pytest.importorskip("torch")
    names = []
    for lib in (torch, minifw):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 1))
        opt = lib.optim.AdamW(model.named_parameters(), lr=0.1)
        names.append(opt.state_dict()["param_groups"][0]["param_names"])
    assert names[0] == names[1]


# ---- more Module API: Sequential's list methods, set_submodule, load_state_dict(assign=True) ----
def _names(seq):
    return [name for name, _ in seq.named_children()]


def test_sequential_delitem_renumbers_and_takes_slices():
    seq = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1))
    del seq[1]
    assert _names(seq) == ["0", "1"]
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity())
    del seq[1:3]
    assert _names(seq) == ["0", "1"] and isinstance(seq[1], nn.Identity)
    import collections
    named = nn.Sequential(collections.OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
    del named[0]
    assert _names(named) == ["0"]  # renumbered, as PyTorch's


def test_sequential_insert_extend_pop_add_mul():
    def four():
        return nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity())

    def kinds(seq):
        return [type(m).__name__ for m in seq]
    for index, at in ((0, 0), (2, 2), (4, 4), (-1, 3), (-4, 0)):
        seq = four().insert(index, nn.GELU())
        assert kinds(seq)[at] == "GELU" and _names(seq) == ["0", "1", "2", "3", "4"]
    for index in (5, -5):
        with pytest.raises(IndexError):
            four().insert(index, nn.GELU())
    seq = four()
    assert isinstance(seq.pop(0), nn.ReLU) and kinds(seq) == ["Tanh", "Sigmoid", "Identity"]
    assert len(four().extend(four())) == 8 and len(four() + four()) == 8
    seq = four()
    seq += four()
    assert _names(seq) == [str(i) for i in range(8)]
    with pytest.raises(ValueError):
        four() + nn.ModuleList([nn.ReLU()])
    layer = nn.Linear(1, 1)
    tripled = nn.Sequential(layer) * 3
    assert len(tripled) == 3 and tripled[2] is layer and len(list(tripled.parameters())) == 2
    assert kinds(2 * nn.Sequential(nn.ReLU(), nn.Tanh())) == ["ReLU", "Tanh"] * 2
    seq = nn.Sequential(nn.ReLU(), nn.Tanh())
    seq *= 3
    assert kinds(seq) == ["ReLU", "Tanh"] * 3
    with pytest.raises(ValueError):
        nn.Sequential(nn.ReLU()) * 0
    with pytest.raises(TypeError):
        nn.Sequential(nn.ReLU()) * 1.5


def test_set_submodule():
    model = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    model.set_submodule("1.0", nn.Tanh())
    assert isinstance(model[1][0], nn.Tanh)
    model.set_submodule("head", nn.Identity())
    assert _names(model) == ["0", "1", "head"]
    with pytest.raises(AttributeError):
        model.set_submodule("1.x", nn.ReLU(), strict=True)
    with pytest.raises(AttributeError):
        model.set_submodule("0.weight", nn.ReLU())  # not a module there
    with pytest.raises(AttributeError):
        model.set_submodule("9.a", nn.ReLU())
    with pytest.raises(ValueError):
        model.set_submodule("0", 3)
    assert model.compile() is None


def test_load_state_dict_assign():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    model[0].bias.requires_grad_(False)
    loaded = {k: v.clone() for k, v in model.state_dict().items()}
    loaded["0.weight"] = loaded["0.weight"].double()
    assert repr(model.load_state_dict(loaded, assign=True)) == "<All keys matched successfully>"
    weight = model[0].weight
    assert isinstance(weight, nn.Parameter) and weight.dtype == np.float64 and weight.requires_grad
    assert not model[0].bias.requires_grad  # the module's requires_grad, the loaded values
    assert model[1].running_mean is loaded["1.running_mean"]
    loaded["0.bias"].add_(5.0)  # the memory is shared
    np.testing.assert_array_equal(model[0].bias.detach().numpy(), loaded["0.bias"].numpy())
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]

    layer = nn.Linear(2, 3)
    result = layer.load_state_dict({"weight": nn.Parameter(minifw.ones(3, 2), requires_grad=False)},
                                   strict=False, assign=True)
    assert result.missing_keys == ["bias"] and layer.weight.requires_grad
    opt = optim.SGD(layer.parameters(), lr=0.1)
    layer(minifw.ones(1, 2)).sum().backward()
    opt.step()
    np.testing.assert_allclose(layer.weight.detach().numpy(), np.full((3, 2), 0.9), rtol=1e-6)

    before = layer.weight
    with pytest.raises(RuntimeError, match="size mismatch"):
        layer.load_state_dict({"weight": minifw.zeros(3, 2), "bias": minifw.zeros(4)}, assign=True)
    assert layer.weight is before  # a failed load changes nothing (minifw's rule)
    norm = nn.BatchNorm1d(3)  # a module whose class loads its own entries assigns at once
    old_mean = norm.running_mean
    with pytest.raises(RuntimeError, match="size mismatch"):
        norm.load_state_dict({**norm.state_dict(), "running_var": minifw.ones(4)}, assign=True)
    assert norm.running_mean is old_mean


def test_default_collate_ints_then_a_float_is_not_truncated():
    batch = default_collate([1, 2.5])
    assert batch.dtype == np.float32 and batch.tolist() == [1.0, 2.5]  # as torch.tensor([1, 2.5])
    batch = default_collate([1, 2])
    assert batch.dtype == np.int64 and batch.tolist() == [1, 2]
    assert default_collate([1.0, 2]).dtype == np.float64


def test_module_share_memory_half_and_bfloat16():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    assert model.share_memory() is model
    assert all(t.is_shared() for t in list(model.parameters()) + list(model.buffers()))
    with pytest.raises(TypeError, match="Module.half: minifw has no float16 tensors"):
        model.half()
    with pytest.raises(TypeError, match="Module.bfloat16: minifw has no bfloat16 tensors"):
        model.bfloat16()
