"""Tensors, autograd, nn, optim, data, serialization and training on the GPU devices: "cudasim"
(the CUDA kernels on the CPU emulator) and "cuda" (a GPU where there is one; else the emulated
one: CuPy's stand-in and the emulator's kernels, targets.emulate_cuda). As a PyTorch user
expects of a GPU device: tensors are made on it or copied there, results stay there, mixing
devices is an error, gradients live with their parameters and equal the CPU's, models and
optimizers move and save.

Gradients are compared with the same graph on the CPU. The CUDA kernels add in another order
than the CPU kernels, so float32 results agree to rounding: RTOL, ATOL below. Shapes are small:
every CUDA thread is a fiber on the emulator."""
import numpy as np
import pytest

import minifw
from minifw import devices, nn, optim
from minifw.nn import functional as F
from minifw.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from targets import assert_ops_match_the_cpu, cuda_available

RTOL, ATOL = 1e-5, 1e-6  # float32 sums in another order



def host(t):
    """A tensor's values as a NumPy array (a copy to the CPU first)."""
    return t.detach().cpu().numpy()


def on(dev, *tensors):
    """Every tensor is on `dev`, its data an array of that device."""
    return all(t.device == dev and devices.of(t._data) == dev for t in tensors)


def seeded():
    return minifw.Generator().manual_seed(1)


@pytest.fixture
def kernel_calls(monkeypatch):
    """(family, direction, device of the array) of every native kernel looked up."""
    calls = []
    kernel_for = devices.kernel_for

    def spy(family, direction, array):
        calls.append((family, direction, devices.of(array)))
        return kernel_for(family, direction, array)

    monkeypatch.setattr(devices, "kernel_for", spy)
    return calls


# ---- making tensors and moving them ------------------------------------------------------

@pytest.mark.parametrize("make", [
    pytest.param(lambda d: minifw.tensor([[1.0, 2.0], [3.0, 4.0]], device=d), id="tensor"),
    pytest.param(lambda d: minifw.zeros(2, 3, device=d), id="zeros"),
    pytest.param(lambda d: minifw.ones(2, 3, dtype=minifw.float64, device=d), id="ones"),
    pytest.param(lambda d: minifw.empty(2, 3, device=d).zero_(), id="empty"),
    pytest.param(lambda d: minifw.full((2, 3), 7, device=d), id="full"),
    pytest.param(lambda d: minifw.randn(2, 3, generator=seeded(), device=d),
                 id="randn"),
    pytest.param(lambda d: minifw.rand(4, generator=seeded(), device=d),
                 id="rand"),
    pytest.param(lambda d: minifw.randint(0, 9, (5,), generator=seeded(),
                                          device=d), id="randint"),
    pytest.param(lambda d: minifw.randperm(6, generator=seeded(), device=d),
                 id="randperm"),
    pytest.param(lambda d: minifw.arange(1, 7, 2, device=d), id="arange"),
    pytest.param(lambda d: minifw.zeros_like(minifw.ones(2, 2, device=d)), id="zeros_like"),
    pytest.param(lambda d: minifw.ones_like(minifw.ones(2, 2, device=d), dtype=minifw.int64),
                 id="ones_like"),
    pytest.param(lambda d: minifw.full_like(minifw.ones(3, device=d), 2.5), id="full_like"),
    pytest.param(lambda d: minifw.randn_like(minifw.ones(3, device=d),
                                             generator=seeded()),
                 id="randn_like"),
    pytest.param(lambda d: minifw.rand_like(minifw.ones(3, device=d),
                                            generator=seeded()),
                 id="rand_like"),
])
def test_creation_functions_place_their_tensor_on_the_device(dev, make):
    t, reference = make(dev), make("cpu")
    assert on(dev, t) and reference.device == "cpu"
    # the same values: random draws come from the same (CPU) generators on every device
    assert t.dtype == reference.dtype and t.shape == reference.shape
    np.testing.assert_array_equal(host(t), reference.numpy())


def test_the_like_functions_can_be_told_another_device(dev):
    t = minifw.ones(2, device=dev)
    assert minifw.zeros_like(t, device="cpu").device == "cpu"
    assert minifw.ones_like(minifw.ones(2), device=dev).device == dev


def test_tensor_of_a_tensor_keeps_its_device_unless_told_otherwise(dev):
    t = minifw.ones(3, device=dev)
    assert minifw.tensor(t).device == dev and minifw.tensor(t, device="cpu").device == "cpu"
    assert minifw.tensor([1, 2]).device == "cpu" and minifw.from_numpy(np.ones(2)).device == "cpu"


def test_to_and_cpu_copy_between_devices(dev):
    a = minifw.tensor([1.0, 2.0, 3.0])
    s = a.to(dev)
    assert on(dev, s) and s.to(dev) is s and s.to(minifw.device(dev)) is s
    a[0] = 10.0  # a copy: neither sees the other's changes
    b = s.cpu()
    s[1] = 20.0
    assert host(s).tolist() == [1.0, 20.0, 3.0] and b.numpy().tolist() == [1.0, 2.0, 3.0]
    assert b.device == "cpu" and b.cpu() is b
    both = a.to(dev, minifw.float64)
    assert on(dev, both) and both.dtype == minifw.float64
    like = a.to(minifw.zeros(1, dtype=minifw.float64, device=dev))  # another's dtype and device
    assert on(dev, like) and like.dtype == minifw.float64
    assert s.to(dev, copy=True) is not s and on(dev, s.to(dev, copy=True))
    assert on(dev, a.to(dev, non_blocking=True))


def test_to_another_device_is_recorded_by_autograd(dev):
    x = minifw.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = (x.to(dev) * minifw.tensor([2.0, 3.0, 4.0], device=dev)).to("cpu")
    assert y.device == "cpu" and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.device == "cpu" and x.grad.numpy().tolist() == [2.0, 3.0, 4.0]


def test_cuda_is_refused_with_the_reason():
    reason = devices.unavailable_reason("cuda")
    if reason is None:
        pytest.skip("'cuda' is available here")
    for call in (lambda: minifw.ones(2).cuda(), lambda: minifw.ones(2).cuda(0),
                 lambda: nn.Linear(2, 2).cuda()):
        with pytest.raises(RuntimeError, match=r"device 'cuda(:0)?' is not available: " +
                           reason[:30].replace("(", r"\(")):
            call()
    with pytest.raises(ValueError, match="cuda: expected a cuda device, got 'cudasim'"):
        minifw.ones(2).cuda("cudasim")


def test_numpy_refuses_a_device_tensor_as_pytorch_refuses_a_cuda_one(dev):
    t = minifw.tensor([1.5, 2.5], device=dev)
    for call in (t.numpy, lambda: np.asarray(t)):
        with pytest.raises(TypeError, match=f"can't convert a tensor on device '{dev}' to numpy; "
                                            r"use tensor.cpu\(\) to copy it to host memory first"):
            call()
    assert t.tolist() == [1.5, 2.5] and t[1].item() == 2.5 and float(t[0]) == 1.5
    assert bool(t[0] > 1) and int(minifw.tensor(3, device=dev)) == 3


def test_repr_shows_the_device_as_pytorch_shows_cuda(dev):
    assert repr(minifw.tensor([1.0, 2.0], device=dev)) == f"tensor([1., 2.], device='{dev}')"
    assert repr(minifw.tensor([1, 2], dtype=minifw.float64, device=dev, requires_grad=True)) == \
        f"tensor([1., 2.], device='{dev}', dtype=minifw.float64, requires_grad=True)"
    assert "device" not in repr(minifw.tensor([1.0]))


# ---- operations stay on the device, mixing devices is an error ---------------------------

def _on(dev, values):
    return minifw.tensor(values, device=dev)


A = [[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]
OPERATIONS = {
    "add_scalar": lambda a, b: a + 1,
    "rsub_scalar": lambda a, b: 2 - a,
    "mul_tensor": lambda a, b: a * b,
    "div_broadcast": lambda a, b: a / b[0],
    "pow": lambda a, b: a ** 2,
    "neg_abs_exp": lambda a, b: (-a).abs().exp(),
    "compare": lambda a, b: a > b,
    "where": lambda a, b: minifw.where(a > 0, a, b),
    "sum_dim": lambda a, b: a.sum(1),
    "mean": lambda a, b: a.mean(),
    "max_dim": lambda a, b: a.max(1).indices,
    "argmax": lambda a, b: a.argmax(),
    "index_int": lambda a, b: a[1, 2],
    "index_slice": lambda a, b: a[:, 1:],
    "index_tensor_on_device": lambda a, b: a[minifw.tensor([1, 0], device=a.device)],
    "index_tensor_on_cpu": lambda a, b: a[minifw.tensor([1, 0])],
    "index_mask": lambda a, b: a[a > 0],
    "reshape_permute": lambda a, b: a.reshape(3, 2).t(),
    "expand": lambda a, b: a[0].expand(4, 3),
    "cat": lambda a, b: minifw.cat([a, b]),
    "stack": lambda a, b: minifw.stack([a, b], 1),
    "matmul": lambda a, b: a @ b.t(),
    "clone_contiguous": lambda a, b: a.t().contiguous(),
    "cast": lambda a, b: a.long(),
    "relu": lambda a, b: a.relu(),
    "softmax": lambda a, b: a.softmax(1),
    "log_softmax_dim0": lambda a, b: a.log_softmax(0),
    "cpu_scalar_tensor": lambda a, b: a * minifw.tensor(2.0),  # as PyTorch: a 0-d CPU tensor joins
}


@pytest.mark.parametrize("name", OPERATIONS)
def test_results_stay_on_the_device_and_equal_the_cpus(dev, name):
    op = OPERATIONS[name]
    b = [[0.5, 1.0, 2.0], [4.0, 8.0, 16.0]]
    got = op(_on(dev, A), _on(dev, b))
    want = op(minifw.tensor(A), minifw.tensor(b))
    assert on(dev, got), f"{name}: result on {got.device}"
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(host(got), want.numpy(), rtol=RTOL, atol=ATOL)


def test_in_place_updates_stay_on_the_device(dev):
    t = _on(dev, A)
    t.add_(1).mul_(_on(dev, [2.0, 2.0, 2.0])).sub_(1, alpha=0.5)
    t[0] = 0.0
    t[1, :2] = minifw.tensor([7.0, 8.0])  # a copy across devices, as PyTorch's copy_
    assert on(dev, t) and host(t).tolist() == [[0.0, 0.0, 0.0], [7.0, 8.0, -10.5]]
    t.copy_(minifw.ones(2, 3))
    assert on(dev, t) and host(t).sum() == 6.0


MIXED = {
    "add": lambda c, s: c + s,
    "matmul": lambda c, s: s @ c.t(),
    "compare": lambda c, s: c < s,
    "cat": lambda c, s: minifw.cat([s, c]),
    "where": lambda c, s: minifw.where(s > 0, s, c),
    "add_": lambda c, s: c.add_(s),
    "linear": lambda c, s: F.linear(c, s),
    "nll_loss_target": lambda c, s: F.nll_loss(s, minifw.tensor([0, 1])),
    "embedding": lambda c, s: F.embedding(minifw.tensor([0, 1]), s),
}


@pytest.mark.parametrize("name", MIXED)
def test_mixing_devices_raises_as_in_pytorch(dev, name):
    cpu, sim = minifw.tensor(A), _on(dev, A)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but "
                                           f"found at least two devices, (cpu and {dev}|{dev} "
                                           f"and cpu)"):
        MIXED[name](cpu, sim)


def test_a_device_index_into_a_cpu_tensor_is_refused(dev):
    with pytest.raises(IndexError, match=r"indices should be either on cpu or on the same device "
                                         r"as the indexed tensor \(cpu\)"):
        minifw.tensor(A)[minifw.tensor([0], device=dev)]


# ---- autograd -------------------------------------------------------------------------------

def _graph(device, dtype):
    """A small graph of operations that have CUDA kernels (activation, softmax, GEMM) and
    array glue; returns the loss and the leaves."""
    g = minifw.Generator().manual_seed(3)
    x = minifw.randn(4, 5, generator=g, dtype=dtype).to(device).requires_grad_()
    w = nn.Parameter(minifw.randn(6, 5, generator=g, dtype=dtype).to(device))
    v = nn.Parameter(minifw.randn(6, 3, generator=g, dtype=dtype).to(device))
    scale = minifw.randn(4, 3, generator=g, dtype=dtype).to(device)
    h = F.linear(x, w)                              # GEMMs (no bias)
    a = h.relu() + (h * 0.5).sigmoid() - h.tanh() * 0.25
    z = a @ v                                       # matmul (array code)
    p = z.softmax(1) * scale + z.log_softmax(0) * 0.1 + z.log_softmax(1)
    loss = (p * p).mean() + (p.t().softmax(1) * scale.t()).sum()
    return loss, (x, w, v)


@pytest.mark.parametrize("dtype", [minifw.float32, minifw.float64], ids=["float32", "float64"])
def test_gradients_live_on_the_device_and_equal_the_cpus(dev, dtype, kernel_calls):
    loss, leaves = _graph(dev, dtype)
    assert on(dev, loss)
    loss.backward()
    ran = {(f, d) for f, d, where in kernel_calls if where == dev}
    assert {("gemm", ""), ("activation", "forward"), ("activation", "backward"),
            ("softmax", "forward"), ("softmax", "backward")} <= ran
    cpu_loss, cpu_leaves = _graph("cpu", dtype)
    cpu_loss.backward()
    np.testing.assert_allclose(host(loss), host(cpu_loss), rtol=RTOL)
    for t, c in zip(leaves, cpu_leaves):
        assert on(dev, t.grad) and t.grad.dtype == dtype
        np.testing.assert_allclose(host(t.grad), c.grad.numpy(), rtol=RTOL, atol=ATOL)


def test_gradients_accumulate_on_the_device(dev):
    w = nn.Parameter(minifw.ones(3, device=dev))
    for _ in range(2):
        (w * _on(dev, [1.0, 2.0, 3.0])).sum().backward()
    assert on(dev, w.grad) and host(w.grad).tolist() == [2.0, 4.0, 6.0]
    cpu_leaf = minifw.tensor(2.0, requires_grad=True)  # a 0-d CPU tensor joined a device op
    (_on(dev, [1.0, 2.0]) * cpu_leaf).sum().backward()
    assert cpu_leaf.grad.device == "cpu" and cpu_leaf.grad.item() == 3.0


def test_backward_with_a_gradient_on_another_device_is_refused(dev):
    y = _on(dev, [1.0, 2.0]).requires_grad_() * 2
    with pytest.raises(RuntimeError, match=f"is on device cpu, but the output is on {dev}"):
        y.backward(minifw.ones(2))
    y.backward(_on(dev, [1.0, 1.0]))


def test_embedding_gradients_stay_on_the_device(dev):
    emb = nn.Embedding(5, 3, device=dev)
    idx = minifw.tensor([[0, 2], [2, 4]], device=dev)
    (emb(idx) * 2).sum().backward()
    assert on(dev, emb.weight.grad) and host(emb.weight.grad)[:, 0].tolist() == [2, 0, 4, 0, 2]


def test_non_contiguous_device_data_runs_the_cuda_kernels(dev, kernel_calls):
    y = _on(dev, A).t().relu()  # a transposed view into the activation primitive
    assert on(dev, y) and kernel_calls == [("activation", "forward", dev)]
    loss, _ = _graph(dev, minifw.float32)  # softmax along dim 0, gradients of sum() (broadcast)
    loss.backward()
    assert all(where == dev for _, _, where in kernel_calls), "a CPU kernel ran on device data"


def test_the_caffe_engine_keeps_results_on_the_device(dev):
    # its NumPy code runs on the host arrays; every result is an array of the inputs' device
    from minifw.engines import caffe
    x, w = minifw.randn(2, 3, 6, 6, device=dev)._data, minifw.randn(4, 3, 3, 3, device=dev)._data
    y = caffe.conv2d_forward(x, w, padding=1)
    pooled, indices = caffe.pool2d_forward(x, 2, return_indices=True)
    logits = minifw.randn(4, 5, device=dev)._data
    target = minifw.tensor([0, 1, 2, 3], device=dev)._data
    results = [y, caffe.conv2d_backward_data(y, w, x.shape, padding=1),
               caffe.conv2d_backward_filter(x, y, w.shape, padding=1), pooled, indices,
               caffe.pool2d_backward(pooled, x.shape, 2, indices=indices),
               caffe.activation_forward(x, "relu"), *caffe.dropout_forward(x, 0.5, seed=1),
               *caffe.cross_entropy_forward(logits, target)]
    assert all(devices.of(r) == dev for r in results)


def test_lenet_trains_on_the_device_with_the_caffe_engine(dev):
    def step(device):
        minifw.manual_seed(0)
        model = minifw.models.LeNet().to(device)
        x = minifw.randn(2, 1, 28, 28, generator=seeded(), device=device)
        with minifw.engine("caffe"):
            F.cross_entropy(model(x), minifw.tensor([3, 7], device=device)).backward()
        return [p.grad for p in model.parameters()]

    for g, c in zip(step(dev), step("cpu")):
        assert on(dev, g)
        np.testing.assert_allclose(host(g), c.numpy(), rtol=RTOL, atol=ATOL)


# ---- every nn.functional op and layer, forward and backward ------------------------------

def _x(*shape, seed=5):
    return minifw.randn(*shape, generator=minifw.Generator().manual_seed(seed))


FUNCTIONAL = {  # name: (inputs, operation); inputs are CPU tensors, moved to the device under test
    "conv2d_groups_stride": (lambda: [_x(2, 4, 7, 6), _x(6, 2, 3, 3, seed=6), _x(6, seed=7)],
                             lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2)),
    "conv2d_same_dilation": (lambda: [_x(1, 2, 6, 5), _x(3, 2, 3, 3, seed=6)],
                             lambda x, w: F.conv2d(x, w, padding="same", dilation=2)),
    "max_pool2d_ceil": (lambda: [_x(2, 3, 7, 7)], lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True)),
    "avg_pool2d_pad": (lambda: [_x(2, 3, 6, 5)],
                       lambda x: F.avg_pool2d(x, 3, 2, padding=1, count_include_pad=False)),
    "leaky_relu_elu": (lambda: [_x(3, 4)], lambda x: F.leaky_relu(x, 0.2) + F.elu(x, 0.5)),
    "softmax_dims": (lambda: [_x(2, 3, 4)], lambda x: F.softmax(x, 1) * F.log_softmax(x, -1)),
    "cross_entropy_weights_smoothing": (
        lambda: [_x(5, 4), minifw.tensor([0, 3, 1, -100, 2]), minifw.tensor([1.0, 2.0, 0.5, 1.5])],
        lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=-100, label_smoothing=0.1)),
    "cross_entropy_nchw": (lambda: [_x(2, 3, 4, 5), minifw.randint(0, 3, (2, 4, 5), generator=seeded())],
                           lambda x, t: F.cross_entropy(x, t, reduction="sum")),
    "nll_loss_none": (lambda: [_x(4, 3), minifw.tensor([2, 0, 1, 1])],
                      lambda x, t: F.nll_loss(F.log_softmax(x, 1), t, reduction="none")),
    "mse_loss": (lambda: [_x(3, 4), _x(3, 4, seed=6)], lambda x, y: F.mse_loss(x, y)),
    "local_response_norm": (lambda: [_x(2, 6, 3, 3)], lambda x: F.local_response_norm(x, 5, 1e-2, 0.75, 2.0)),
    "batch_norm_training": (lambda: [_x(4, 3, 2, 2), _x(3, seed=6), _x(3, seed=7)],
                            lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)),
    "linear_bias": (lambda: [_x(3, 5), _x(4, 5, seed=6), _x(4, seed=7)], F.linear),
    "embedding_padding": (lambda: [minifw.tensor([[1, 0], [3, 1]]), _x(4, 3)],
                          lambda i, w: F.embedding(i, w, padding_idx=0)),
    "pad_reflect_replicate": (lambda: [_x(1, 2, 4, 5)],
                              lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect") * 2
                              + F.pad(x, (1, 2, 2, 1), mode="replicate")),
    "pad_circular_constant": (lambda: [_x(1, 2, 4, 5)],
                              lambda x: F.pad(x, (2, 1), mode="circular").sum()
                              + F.pad(x, (1, 1, 1, 1), value=0.5).sum()),
    "flatten_indexing": (lambda: [_x(2, 3, 4)],
                         lambda x: F.flatten(x, 1)[:, minifw.tensor([0, 5, 11])] * x[x > 0].sum()),
    "lstm_gru_rnn": (lambda: [_x(5, 2, 3)],
                     lambda x: sum(o for m in _recurrent(x.device) for o in (m(x)[0].sum(),))),
}


def _recurrent(device):
    minifw.manual_seed(0)
    return [nn.LSTM(3, 4, num_layers=2, bidirectional=True).to(device), nn.GRU(3, 4).to(device),
            nn.RNN(3, 4, nonlinearity="relu").to(device)]


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional_ops_and_their_gradients_on_the_device_equal_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *FUNCTIONAL[name], what=name)


@pytest.mark.parametrize("model", ["lenet", "alexnet-small", "charlstm"])
def test_a_training_step_of_each_model_on_the_device_equals_the_cpus(dev, model):
    def step(device):
        minifw.manual_seed(0)
        if model == "charlstm":
            net = minifw.models.CharLSTM(vocab_size=7, embedding_dim=4, hidden_size=5, num_layers=2)
            x = minifw.randint(0, 7, (3, 2), generator=seeded())
            target = minifw.randint(0, 7, (3, 2), generator=seeded())
        else:
            net = minifw.models.LeNet() if model == "lenet" else minifw.models.AlexNetSmall(num_classes=10)
            x = minifw.randn(2, 1, *((28, 28) if model == "lenet" else (32, 32)), generator=seeded())
            target = minifw.tensor([3, 7])
        net = net.to(device).train()
        opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        out = net(x.to(device))
        logits = out[0] if isinstance(out, tuple) else out
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]) if model == "charlstm" else logits,
                               target.to(device).reshape(-1))
        loss.backward()
        opt.step()
        return [loss] + [p.detach() for p in net.parameters()]

    for got, want in zip(step(dev), step("cpu")):
        assert got.device == dev
        np.testing.assert_allclose(host(got), host(want), rtol=1e-4, atol=1e-5)


# ---- nn, optim ------------------------------------------------------------------------------

def test_modules_are_built_on_a_device_with_the_cpus_initial_values(dev):
    builders = {
        "linear": lambda d: nn.Linear(4, 3, device=d),
        "conv": lambda d: nn.Conv2d(2, 3, 3, device=d),
        "batch_norm": lambda d: nn.BatchNorm2d(3, device=d),
        "embedding": lambda d: nn.Embedding(5, 2, device=d),
        "lstm": lambda d: nn.LSTM(3, 4, num_layers=2, device=d),
        "gru_cell": lambda d: nn.GRUCell(3, 4, device=d),
    }
    for name, build in builders.items():
        minifw.manual_seed(0)
        m = build(dev)
        minifw.manual_seed(0)
        c = build("cpu")
        for (key, t), (_, ref) in zip(m.state_dict().items(), c.state_dict().items()):
            assert on(dev, t), f"{name}.{key} is on {t.device}"
            np.testing.assert_array_equal(host(t), ref.numpy(), err_msg=f"{name}.{key}")
    lstm = nn.LSTM(3, 4, device=dev)
    assert lstm._is_packed() and devices.of(lstm._flat) == dev  # views of one buffer


def test_module_to_moves_parameters_gradients_and_buffers_in_place(dev):
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    weight = m[0].weight
    m(minifw.randn(4, 3)).sum().backward()
    assert m.to(dev) is m and m[0].weight is weight
    assert all(on(dev, t) for t in m.state_dict().values())
    assert on(dev, weight.grad)
    assert m.cpu() is m and all(t.device == "cpu" for t in m.state_dict().values())


def test_an_optimizer_steps_device_parameters_with_state_on_the_device(dev, monkeypatch):
    fused, sgd_step = [], minifw.ops.sgd_step

    def spy(p, *args, **kwargs):
        fused.append(devices.of(p).type)
        return sgd_step(p, *args, **kwargs)

    monkeypatch.setattr(minifw.ops, "sgd_step", spy)
    g = minifw.Generator().manual_seed(2)
    start = minifw.randn(3, 4, generator=g)
    grads = [minifw.randn(3, 4, generator=g) for _ in range(3)]
    results = {}
    for device in ("cpu", dev):
        for make in (lambda p: optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01,
                                         nesterov=True),
                     lambda p: optim.Adam([p], lr=0.01, amsgrad=True)):
            p = nn.Parameter(start.to(device, copy=True))  # a Parameter shares its data
            opt = make(p)
            for grad in grads:
                p.grad = grad.to(device)
                opt.step()
            assert p.device == device and all(
                v.device == device for v in opt.state_dict()["state"][0].values()
                if isinstance(v, minifw.Tensor))
            results.setdefault(type(opt).__name__, []).append(host(p))
    assert fused == ["cpu"] * 3 + [dev.type] * 3  # SGD takes the fused step on every device
    for name, (cpu, sim) in results.items():
        np.testing.assert_allclose(sim, cpu, rtol=RTOL, atol=ATOL, err_msg=name)


def test_an_lr_scheduler_drives_a_device_optimizer(dev):
    p = nn.Parameter(minifw.ones(2, device=dev))
    opt = optim.SGD([p], lr=1.0)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(2):
        p.grad = minifw.ones(2, device=dev)
        opt.step()
        sched.step()
    assert on(dev, p) and host(p).tolist() == [-0.5, -0.5]


def test_clip_grad_norm_on_device_gradients(dev):
    ps = [nn.Parameter(minifw.zeros(2, device=dev)), nn.Parameter(minifw.zeros(2, device=dev))]
    ps[0].grad, ps[1].grad = _on(dev, [3.0, 0.0]), _on(dev, [0.0, 4.0])
    total = nn.utils.clip_grad_norm_(ps, 1.0)
    assert on(dev, total, *(p.grad for p in ps)) and total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(host(ps[0].grad), [0.6, 0.0], rtol=1e-5)


# ---- serialization ------------------------------------------------------------------------------

def test_save_writes_host_copies_and_load_puts_them_back_on_their_device(dev, tmp_path):
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).to(dev)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model[0].weight.grad = minifw.ones(2, 3, device=dev)
    opt.step()
    path = tmp_path / "model.npz"
    minifw.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, path)
    with np.load(path) as npz:
        assert all(type(npz[k]) is np.ndarray for k in npz.files)
    loaded = minifw.load(path)
    for key, t in model.state_dict().items():
        assert on(dev, loaded["model"][key]) and np.array_equal(host(loaded["model"][key]), host(t))
    assert on(dev, loaded["optimizer"]["state"][0]["momentum_buffer"])
    cpu = minifw.load(path, map_location="cpu")
    assert all(t.device == "cpu" for t in cpu["model"].values())
    mapped = minifw.load(path, map_location={str(dev): minifw.device("cpu")})
    assert all(t.device == "cpu" for t in mapped["model"].values())
    fresh = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))  # on the CPU: loading copies across
    fresh.load_state_dict(loaded["model"])
    assert all(t.device == "cpu" for t in fresh.state_dict().values())
    np.testing.assert_array_equal(host(fresh[0].weight), host(model[0].weight))
    assert minifw.load(path, map_location=dev)["model"]["1.running_var"].device == dev


def test_load_onto_an_unavailable_device_says_how_to_map_it(tmp_path):
    if cuda_available():
        pytest.skip("'cuda' is available here")
    path = tmp_path / "t.npz"
    minifw.save({"t": minifw.ones(2)}, path)
    with pytest.raises(RuntimeError, match="device 'cuda' is not available: .*pass map_location"):
        minifw.load(path, map_location="cuda")
    with pytest.raises(TypeError, match="map_location must be None, a device"):
        minifw.load(path, map_location=42)  # a function (storage, location) is accepted, as torch.load


# ---- data, sequences, training ------------------------------------------------------------------

def test_data_loader_batches_move_to_the_device(dev):
    data = minifw.data.TensorDataset(minifw.randn(6, 2), minifw.arange(6))
    for x, y in minifw.data.DataLoader(data, batch_size=4, prefetch=0):
        x, y = x.to(dev), y.to(dev)
        assert on(dev, x, y)
    device_data = minifw.data.TensorDataset(minifw.randn(6, 2, device=dev),
                                            minifw.arange(6, device=dev))
    x, y = next(iter(minifw.data.DataLoader(device_data, batch_size=4, prefetch=0)))
    assert on(dev, x, y) and x.shape == (4, 2)


def test_packed_sequences_keep_batch_sizes_on_the_cpu_and_the_rest_on_data_s_device(dev):
    padded = minifw.randn(4, 3, 2, device=dev)
    packed = pack_padded_sequence(padded, [2, 4, 3], enforce_sorted=False)
    assert on(dev, packed.data, packed.sorted_indices, packed.unsorted_indices)
    assert packed.batch_sizes.device == "cpu"
    back, lengths = pad_packed_sequence(packed)
    assert on(dev, back) and lengths.device == "cpu" and lengths.tolist() == [2, 4, 3]
    np.testing.assert_array_equal(host(back)[:2, 0], host(padded)[:2, 0])
    moved = packed.to("cpu")
    assert all(t.device == "cpu"
               for t in (moved.data, moved.sorted_indices, moved.unsorted_indices))
    with pytest.raises(RuntimeError, match="'lengths' must be a list or a 1-D CPU int64 tensor"):
        pack_padded_sequence(padded, minifw.tensor([4, 3, 2], device=dev))


class _TinyRecipe(minifw.training.Recipe):
    """Two clusters and a bias-free two-layer perceptron with log_softmax + nll_loss: only
    operations with a CUDA kernel (GEMM, activation, softmax) or array code."""

    name, title = "tiny-cudasim", "MLP"
    defaults = {"epochs": 2, "batch_size": 8, "seed": 0}

    def datasets(self, settings, generators):
        rng = np.random.default_rng(0)
        labels = rng.integers(0, 2, 48)
        points = (rng.normal(0, 0.3, (48, 4)) + labels[:, None]).astype(np.float32)
        dataset = minifw.data.TensorDataset(minifw.tensor(points), minifw.tensor(labels))
        return dataset, dataset

    def model(self, settings):
        return nn.Sequential(nn.Linear(4, 8, bias=False), nn.Tanh(), nn.Linear(8, 2, bias=False))

    def loss_fn(self, settings):
        return lambda logits, target: F.nll_loss(F.log_softmax(logits, 1), target)

    def optimizer(self, model, settings):
        return optim.SGD(model.parameters(), lr=0.5, momentum=0.9), None


def test_a_training_run_on_the_device_matches_the_cpu_run(dev, monkeypatch, tmp_path):
    monkeypatch.setattr(minifw.training, "RECIPES", dict(minifw.training.RECIPES))
    minifw.training.register(_TinyRecipe())
    results = {}
    for device in ("cpu", dev):
        run = minifw.training.Run("tiny-cudasim", device=device)
        results[device] = run.fit(checkpoint_path=tmp_path / f"{device}.npz")
        assert all(p.device == device for p in run.model.parameters())
    for cpu, sim in zip(results["cpu"], results[dev]):
        assert sim.loss == pytest.approx(cpu.loss, rel=1e-5) and sim.correct == cpu.correct
    checkpoint = minifw.load(tmp_path / f"{dev}.npz")
    resumed = minifw.training.Run("tiny-cudasim", device="cpu")  # a run may move to another device
    resumed.resume(checkpoint)
    assert all(p.device == "cpu" for p in resumed.model.parameters())
