"""Module backward hooks, state-dict hooks and the global module hooks, as PyTorch's.

Each scenario is written once against the shared API (`fw` is minifw or torch) and records what
the hooks receive as NumPy arrays; minifw's record is checked by hand where the arithmetic is
short (a Linear's grad_input is grad_output @ W) and against PyTorch's where torch is installed."""
import warnings

import numpy as np
import pytest

import minifw
from minifw import nn
from minifw.nn.modules import module as module_mod

# float64 throughout: the two frameworks then agree to rounding of a few operations
TOL = dict(rtol=1e-12, atol=1e-12)


def _torch():
    return pytest.importorskip("torch")


def _nn(fw):
    return fw.nn


def _mm(fw):
    return fw.nn.modules.module


def arr(g):
    return None if g is None else g.detach().cpu().numpy().copy()


def record(log, tag):
    def hook(module, grad_input, grad_output):
        log.append((tag, "full", tuple(map(arr, grad_input)), tuple(map(arr, grad_output))))
    return hook


def record_pre(log, tag):
    def hook(module, grad_output):
        log.append((tag, "pre", tuple(map(arr, grad_output))))
    return hook


def linear(fw, n_in, n_out, seed):
    rng = np.random.default_rng(seed)
    m = _nn(fw).Linear(n_in, n_out).double()
    m.load_state_dict({"weight": fw.tensor(rng.standard_normal((n_out, n_in))),
                       "bias": fw.tensor(rng.standard_normal(n_out))})
    return m


def leaf(fw, shape, seed, requires_grad=True):
    data = np.random.default_rng(seed).standard_normal(shape)
    return fw.tensor(data, requires_grad=requires_grad)


def assert_same(a, b):
    """Two records (nested tuples of arrays, None, strings): equal in structure and values."""
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape, (a, b)
        np.testing.assert_allclose(a, b, **TOL)
    else:
        assert a == b, (a, b)


# ---- scenarios: fw -> record ---------------------------------------------------------------------

def scenario_sequential(fw):
    """Nested modules: each layer's hooks, in the order the walk reaches them."""
    log = []
    net = _nn(fw).Sequential(linear(fw, 3, 4, 0), _nn(fw).Tanh(), linear(fw, 4, 2, 1))
    for name, m in [("net", net), ("0", net[0]), ("1", net[1]), ("2", net[2])]:
        m.register_full_backward_hook(record(log, name))
        m.register_full_backward_pre_hook(record_pre(log, name))
    x = leaf(fw, (5, 3), 2)
    (net(x) * leaf(fw, (5, 2), 3, False)).sum().backward()
    return log, arr(x.grad)


def scenario_used_twice(fw):
    """A module called twice in one graph fires once per call, each with its own gradients."""
    log = []
    lin = linear(fw, 2, 2, 4)
    lin.register_full_backward_hook(record(log, "lin"))
    x = leaf(fw, (1, 2), 5)
    (lin(fw.tanh(lin(x))) * fw.tensor([[1.0, 2.0]], dtype=fw.float64)).sum().backward()
    return log, arr(x.grad)


def scenario_multiple_outputs_and_args(fw):
    """Non-Tensor args, an input that does not require grad, an integer input, a keyword Tensor,
    an output that gets no gradient and an integer output."""
    log = []

    class Block(_nn(fw).Module):
        def __init__(self):
            super().__init__()
            self.lin = linear(fw, 3, 2, 6)

        def forward(self, a, k, b, idx, scale=1.0, extra=None):
            y = self.lin(a) * k + b.sum() + extra.sum() * scale
            return y, a[idx].sum() * 3, y.argmax(), "tag"

    block = Block()
    block.register_full_backward_hook(record(log, "block"))
    block.register_full_backward_pre_hook(record_pre(log, "block"))
    a, b = leaf(fw, (4, 3), 7), leaf(fw, (5,), 8, requires_grad=False)
    extra = leaf(fw, (2,), 9)
    idx = fw.tensor([0, 0, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "output should be a Tensor or a tuple of Tensors"
        y, s, top, tag = block(a, 2.0, b, idx, scale=3.0, extra=extra)
    (y * leaf(fw, (4, 2), 10, False)).sum().backward()
    return log, arr(a.grad), arr(extra.grad)


def scenario_replace(fw):
    """A pre-hook's tuple replaces grad_output, a full hook's replaces grad_input."""
    lin = linear(fw, 3, 2, 11)
    seen = []
    lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
    lin.register_full_backward_hook(lambda m, gi, go: seen.append(arr(go[0])) or (gi[0] + 1,))
    lin.register_full_backward_hook(lambda m, gi, go: seen.append(arr(gi[0])))
    x = leaf(fw, (2, 3), 12)
    lin(x).sum().backward()
    return seen, arr(x.grad), arr(lin.weight.grad)


def scenario_no_input_requires_grad(fw):
    log = []
    lin = linear(fw, 3, 2, 13)
    lin.register_full_backward_hook(record(log, "lin"))
    lin.register_full_backward_pre_hook(record_pre(log, "lin"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin(leaf(fw, (2, 3), 14, requires_grad=False)).sum().backward()
    return log, [str(w.message).split(".")[0] for w in caught]


def scenario_global_hooks(fw):
    mm = _mm(fw)
    log = []
    net = _nn(fw).Sequential(linear(fw, 3, 2, 15), _nn(fw).ReLU())
    net[0].register_full_backward_hook(record(log, "own"))
    net[0].register_forward_hook(lambda m, args, out: log.append(("own forward",)))
    handles = [
        mm.register_module_forward_pre_hook(
            lambda m, args: log.append(("pre", type(m).__name__, arr(args[0])))),
        mm.register_module_forward_hook(
            lambda m, args, out: log.append(("post", type(m).__name__, arr(out)))),
        mm.register_module_forward_hook(
            lambda m, args, kwargs, out: log.append(("kwargs", type(m).__name__, tuple(kwargs))),
            with_kwargs=True),
        mm.register_module_full_backward_pre_hook(
            lambda m, go: log.append(("bpre", type(m).__name__, tuple(map(arr, go))))),
        mm.register_module_full_backward_hook(record(log, "global")),
    ]
    try:
        x = leaf(fw, (2, 3), 16)
        net(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    log.append(("removed",))
    net(leaf(fw, (2, 3), 16)).sum().backward()  # only the module's own hooks now
    return log


SCENARIOS = [scenario_sequential, scenario_used_twice, scenario_multiple_outputs_and_args,
             scenario_replace, scenario_no_input_requires_grad, scenario_global_hooks]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__[len("scenario_"):])
def test_backward_and_global_hooks_match_pytorch(scenario):
    torch = _torch()
    torch.set_default_dtype(torch.float64)
    try:
        expected = scenario(torch)
    finally:
        torch.set_default_dtype(torch.float32)
    assert_same(scenario(minifw), expected)


# ---- the same behaviours, by hand -----------------------------------------------------------------

def test_linear_grad_input_is_grad_output_times_weight():
    (log, x_grad) = scenario_sequential(minifw)
    order = [(tag, kind) for tag, kind, *_ in log]
    # the walk reaches the outputs first (pre-hooks), each module's inputs after its body
    assert order == [("net", "pre"), ("2", "pre"), ("2", "full"), ("1", "pre"), ("1", "full"),
                     ("0", "pre"), ("0", "full"), ("net", "full")]
    tags = {(tag, kind): rest for tag, kind, *rest in log}
    w0 = linear(minifw, 3, 4, 0).weight.detach().numpy()
    w2 = linear(minifw, 4, 2, 1).weight.detach().numpy()
    grad_y = np.random.default_rng(3).standard_normal((5, 2))
    (gi2, go2) = tags[("2", "full")]
    np.testing.assert_allclose(go2[0], grad_y, **TOL)
    np.testing.assert_allclose(gi2[0], grad_y @ w2, **TOL)
    (gi0, go0) = tags[("0", "full")]
    np.testing.assert_allclose(gi0[0], go0[0] @ w0, **TOL)
    np.testing.assert_allclose(tags[("net", "full")][0][0], x_grad, **TOL)
    np.testing.assert_allclose(tags[("1", "pre")][0][0], gi2[0], **TOL)  # Tanh's grad_output


def test_none_positions_and_zeros_for_inputs_without_gradient():
    log, a_grad, extra_grad = scenario_multiple_outputs_and_args(minifw)
    (_, _, grad_output), (_, _, grad_input, grad_output_full) = log
    assert [g is None for g in grad_output] == [False, True, True, True]  # s unused, int, str
    assert grad_output_full[1:] == (None, None, None)
    # (a, k, b, idx): k is not a Tensor; b and idx get zeros, as PyTorch's
    assert grad_input[1] is None and len(grad_input) == 4
    np.testing.assert_array_equal(grad_input[2], np.zeros(5))
    np.testing.assert_array_equal(grad_input[3], np.zeros(3, dtype=grad_input[3].dtype))
    np.testing.assert_allclose(grad_input[0], a_grad, **TOL)
    assert extra_grad is not None  # a keyword Tensor still gets its gradient, not in grad_input


def test_replaced_gradients_flow_on():
    seen, x_grad, w_grad = scenario_replace(minifw)
    lin = linear(minifw, 3, 2, 11)
    w = lin.weight.detach().numpy()
    np.testing.assert_array_equal(seen[0], np.full((2, 2), 10.0))
    np.testing.assert_allclose(seen[1], np.full((2, 2), 10.0) @ w + 1, **TOL)
    np.testing.assert_allclose(x_grad, seen[1], **TOL)
    x = np.random.default_rng(12).standard_normal((2, 3))
    np.testing.assert_allclose(w_grad, np.full((2, 2), 10.0).T @ x, **TOL)


def test_a_module_called_twice_fires_twice_per_backward():
    log, _ = scenario_used_twice(minifw)
    assert len(log) == 2
    np.testing.assert_array_equal(log[0][3][0], [[1.0, 2.0]])  # the outer call comes first


def test_no_input_requires_grad_calls_the_hook_with_none():
    log, messages = scenario_no_input_requires_grad(minifw)
    assert [entry[1] for entry in log] == ["pre", "full"]
    assert log[1][2] == (None,)
    np.testing.assert_array_equal(log[1][3][0], np.ones((2, 2)))
    assert messages == ["Full backward hook is firing when gradients are computed with respect "
                        "to module outputs since no inputs require gradients"]
    lin = nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: (minifw.zeros(1),))
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="no input requires gradient"):
        lin(minifw.randn(2, 3)).sum().backward()


@pytest.mark.parametrize("kind", ["full", "pre"])
def test_a_tuple_of_the_wrong_length_is_an_error(kind):
    lin = nn.Linear(3, 2)
    if kind == "full":
        lin.register_full_backward_hook(lambda m, gi, go: (None, None))
        message = "Backward hook returned an invalid number of grad_input, got 2, but expected 1"
    else:
        lin.register_full_backward_pre_hook(lambda m, go: (None, None))
        message = "Backward pre hook returned an invalid number of grad_output, got 2, but expected 1"
    with pytest.raises(RuntimeError, match=message):
        lin(minifw.randn(2, 3, requires_grad=True)).sum().backward()


def test_hooks_fire_once_per_backward_and_handles_remove_them():
    lin = nn.Linear(2, 2)
    calls = []
    handle = lin.register_full_backward_hook(lambda m, gi, go: calls.append("full"))
    with lin.register_full_backward_pre_hook(lambda m, go: calls.append("pre")):
        y = lin(minifw.randn(3, 2, requires_grad=True)).sum()
        y.backward(retain_graph=True)
        y.backward()
        assert calls == ["pre", "full", "pre", "full"]
    handle.remove()
    handle.remove()  # again: nothing
    lin(minifw.randn(3, 2, requires_grad=True)).sum().backward()
    assert calls == ["pre", "full", "pre", "full"]
    assert not lin._backward_hooks and not lin._backward_pre_hooks


def test_prepend_puts_a_hook_first():
    lin, order = nn.Linear(2, 2), []
    lin.register_full_backward_hook(lambda m, gi, go: order.append("a"))
    lin.register_full_backward_hook(lambda m, gi, go: order.append("b"), prepend=True)
    lin.register_full_backward_pre_hook(lambda m, go: order.append("c"))
    lin.register_full_backward_pre_hook(lambda m, go: order.append("d"), prepend=True)
    lin(minifw.randn(1, 2, requires_grad=True)).sum().backward()
    assert order == ["d", "c", "b", "a"]


def test_old_backward_hook_warns_and_cannot_be_mixed_with_full_ones():
    lin, seen = nn.Linear(3, 2), []
    with pytest.warns(FutureWarning, match="register_full_backward_hook"):
        lin.register_backward_hook(lambda m, gi, go: seen.append(gi[0].shape))
    lin(minifw.randn(4, 3, requires_grad=True)).sum().backward()
    assert seen == [(4, 3)]
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        lin.register_full_backward_hook(lambda m, gi, go: None)


def test_list_output_warns_and_fires_no_hook():
    class Listing(nn.Module):
        def forward(self, x):
            return [x * 2]

    m, calls = Listing(), []
    m.register_full_backward_hook(lambda *a: calls.append(a))
    with pytest.warns(UserWarning, match="module output should be a Tensor or a tuple of Tensors"):
        out = m(minifw.randn(2, requires_grad=True))
    out[0].sum().backward()
    assert calls == []


def test_no_hook_no_extra_node():
    lin = nn.Linear(2, 2)
    assert lin(minifw.randn(1, 2, requires_grad=True)).grad_fn.name() != "BackwardHookFunctionBackward"
    lin.register_full_backward_hook(lambda *a: None)
    assert lin(minifw.randn(1, 2, requires_grad=True)).grad_fn.name() == "BackwardHookFunctionBackward"
    with minifw.no_grad():
        assert lin(minifw.randn(1, 2, requires_grad=True)).grad_fn is None


def test_global_hooks_by_hand():
    log = scenario_global_hooks(minifw)
    kinds = [entry[0] for entry in log]
    assert kinds[:7] == ["pre", "pre", "post", "kwargs", "own forward", "pre", "post"]
    after = kinds[kinds.index("removed"):]
    assert after == ["removed", "own forward", "own"]
    backward = [entry[:2] for entry in log[:kinds.index("removed")]
                if entry[0] in ("bpre", "global", "own")]
    # the walk: Sequential's outputs, ReLU, Linear, Sequential's inputs; global hooks first
    assert backward == [("bpre", "Sequential"), ("bpre", "ReLU"), ("global", "full"),
                        ("bpre", "Linear"), ("global", "full"), ("own", "full"),
                        ("global", "full")]
    assert not module_mod._global_hook_ids


def test_global_forward_hook_replaces_output_and_always_call():
    lin = nn.Linear(2, 2)
    with module_mod.register_module_forward_hook(lambda m, a, out: out * 0):
        assert np.all(lin(minifw.randn(1, 2)).detach().numpy() == 0)
    assert np.any(lin(minifw.randn(1, 2)).detach().numpy() != 0)

    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("broken")

    calls = []
    with module_mod.register_module_forward_hook(lambda m, a, out: calls.append(out),
                                                 always_call=True):
        with pytest.raises(ValueError, match="broken"):
            Broken()(minifw.ones(1))
    assert calls == [None]


def test_backward_hook_on_cudasim_gets_gradients_there():
    lin = nn.Linear(3, 2).to("cudasim")
    seen = []
    lin.register_full_backward_pre_hook(lambda m, go: seen.append(go[0].device))
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0].device, go[0].device)))
    x = minifw.randn(4, 3).to("cudasim").requires_grad_()
    lin(x).sum().backward()
    cudasim = minifw.devices.get("cudasim")
    assert seen == [cudasim, (cudasim, cudasim)]
    w = lin.weight.detach().cpu().numpy()
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.ones((4, 2)) @ w, rtol=1e-6)


# ---- state-dict hooks -----------------------------------------------------------------------------

def state_scenario(fw):
    """Every state-dict hook on a nested model: arguments, prefixes, order and effects."""
    nn_ = _nn(fw)
    log = []
    model = nn_.Sequential(nn_.Linear(2, 2), nn_.Sequential(nn_.Linear(2, 1)))
    for name, m in [("root", model), ("inner", model[1]), ("leaf", model[1][0])]:
        m.register_state_dict_pre_hook(
            lambda m, prefix, keep_vars, name=name: log.append(("pre", name, prefix, keep_vars)))

        def post(m, sd, prefix, local_metadata, name=name):
            log.append(("post", name, prefix, sorted(sd), local_metadata))
            sd[prefix + "note"] = fw.zeros(1)

        m.register_state_dict_post_hook(post)

        def load_pre(m, sd, prefix, local_metadata, strict, missing, unexpected, errors, name=name):
            log.append(("load_pre", name, prefix, sorted(sd), local_metadata, strict,
                        list(missing), list(unexpected), list(errors)))
            sd.pop(prefix + "note", None)

        m.register_load_state_dict_pre_hook(load_pre)

        def load_post(m, incompatible, name=name):
            log.append(("load_post", name, list(incompatible.missing_keys),
                        list(incompatible.unexpected_keys)))
            if name == "root":
                incompatible.missing_keys.remove("1.0.bias")

        m.register_load_state_dict_post_hook(load_post)
    sd = model.state_dict(keep_vars=True)
    keys = list(sd)
    del sd["1.0.bias"]
    sd["1.0.weight"] = fw.ones(1, 2)
    result = model.load_state_dict(sd)
    return log, keys, arr(model[1][0].weight), (list(result.missing_keys),
                                                 list(result.unexpected_keys))


def test_state_dict_hooks_match_pytorch():
    torch = _torch()
    assert_same(state_scenario(minifw), state_scenario(torch))


def test_state_dict_hooks_by_hand():
    log, keys, weight, result = state_scenario(minifw)
    assert keys == ["0.weight", "0.bias", "1.0.weight", "1.0.bias", "1.0.note", "1.note", "note"]
    assert [entry[:3] for entry in log[:9]] == [
        ("pre", "root", ""), ("pre", "inner", "1."), ("pre", "leaf", "1.0."),
        ("post", "leaf", "1.0."), ("post", "inner", "1."), ("post", "root", ""),
        ("load_pre", "root", ""), ("load_pre", "inner", "1."), ("load_pre", "leaf", "1.0.")]
    assert [entry[:2] for entry in log[9:]] == [("load_post", "leaf"), ("load_post", "inner"),
                                                 ("load_post", "root")]
    assert log[3][4] == {"version": 1}
    leaf_load = log[8]
    assert leaf_load[3] == ["1.0.note", "1.0.weight"]  # a child sees only its keys
    assert leaf_load[5] is True
    assert log[9][2] == ["1.0.bias"]  # missing, seen by the post-hooks
    np.testing.assert_array_equal(weight, [[1.0, 1.0]])
    assert result == ([], [])  # the root's post-hook forgave the missing key


def test_private_state_dict_hooks():
    lin = nn.Linear(2, 1)
    lin._register_state_dict_hook(lambda m, sd, prefix, meta: {"only": minifw.ones(1)})
    assert list(lin.state_dict()) == ["only"]  # the private hook's return value replaces it
    seen = []
    lin._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: seen.append(prefix))
    lin.load_state_dict(nn.Linear(2, 1).state_dict(), strict=False)
    assert seen == [""]

    def public(m, sd, prefix, meta):
        return {}

    lin.register_state_dict_post_hook(public)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        lin.state_dict()
    with pytest.raises(RuntimeError, match="Cannot register the same function"):
        lin._register_state_dict_hook(public)


def test_load_post_hook_must_return_none_and_failed_loads_change_nothing():
    lin = nn.Linear(2, 1)
    lin.register_load_state_dict_post_hook(lambda m, keys: keys)
    with pytest.raises(AssertionError, match="not expected to return new values"):
        lin.load_state_dict(nn.Linear(2, 1).state_dict())
    other, before = nn.Linear(2, 1), lin.weight.detach().numpy().copy()
    other.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, *rest: sd.__setitem__("bias", minifw.ones(3)))
    with pytest.raises(RuntimeError, match="size mismatch for bias"):
        other.load_state_dict(lin.state_dict())
    assert not np.array_equal(other.weight.detach().numpy(), before)  # nothing was copied


def test_state_dict_metadata_and_handles():
    lin = nn.Linear(2, 1)
    sd = lin.state_dict()
    assert sd._metadata == {"": {"version": 1}}
    calls = []
    with lin.register_state_dict_pre_hook(lambda *a: calls.append(a)):
        lin.state_dict()
    lin.state_dict()
    assert len(calls) == 1


def test_in_place_module_with_hooks_gets_right_gradients():
    # PyTorch refuses this (its identity node's outputs are views it will not modify in place)
    net = nn.Sequential(nn.Linear(3, 2), nn.ReLU(inplace=True))
    seen = []
    net[1].register_full_backward_hook(lambda m, gi, go: seen.append(gi[0].detach().numpy().copy()))
    x = minifw.randn(4, 3, requires_grad=True)
    y = net(x)
    y.sum().backward()
    mask = (y.detach().numpy() > 0).astype(np.float32)
    np.testing.assert_array_equal(seen[0], mask)
    np.testing.assert_allclose(x.grad.numpy(), mask @ net[0].weight.detach().numpy(), rtol=1e-6)


# ---- overrides of _save_to_state_dict / _load_from_state_dict --------------------------------

class _ExtraEntry(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", minifw.zeros(2))

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "meta"] = {"v": 1}


class _ReadsAfterLoading(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", minifw.zeros(2))
        self.cached = None

    def _load_from_state_dict(self, *args):
        super()._load_from_state_dict(*args)
        self.cached = float(self.w.sum())


def test_an_extra_saved_entry_is_unexpected_when_loaded_as_in_pytorch():
    module = _ExtraEntry()
    result = module.load_state_dict(module.state_dict(), strict=False)
    assert result.unexpected_keys == ["meta"] and result.missing_keys == []


def test_an_override_of_load_from_state_dict_sees_the_loaded_values():
    module = _ReadsAfterLoading()
    module.load_state_dict({"w": minifw.ones(2)})
    assert module.cached == 2.0 and module.w.tolist() == [1.0, 1.0]


def test_a_failed_load_undoes_the_copies_an_override_made_at_once():
    model = nn.Sequential(_ReadsAfterLoading(), nn.Linear(2, 2))
    before = model[1].weight.detach().numpy().copy()
    state = {"0.w": minifw.ones(2) * 3, "1.weight": minifw.ones(3, 2), "1.bias": minifw.ones(2)}
    with pytest.raises(RuntimeError, match="size mismatch for 1.weight"):
        model.load_state_dict(state)
    assert model[0].w.tolist() == [0.0, 0.0]
    assert (model[1].weight.detach().numpy() == before).all()
