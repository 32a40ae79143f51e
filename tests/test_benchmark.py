"""minifw.benchmark and `minifw bench`: the layer-by-layer decomposition is the model, the JSON
has one entry per engine with the documented fields, memory is counted, and bad arguments are
usage errors (exit status 2). No timing assertions."""
import importlib.util
import json

import numpy as np
import pytest

import minifw
from minifw import benchmark, cli, nn


@pytest.mark.parametrize("name", ["lenet", "alexnet-small"])
def test_the_layers_in_order_are_the_model(name):
    cls, shape, _ = benchmark.MODELS[name]
    minifw.manual_seed(0)
    model = cls().eval()
    x = minifw.randn(2, *shape)
    with minifw.no_grad():
        out = x
        for _, layer in benchmark.layers(model):
            out = layer(out)
        np.testing.assert_array_equal(out.numpy(), model(x).numpy())


def test_an_iteration_is_timed_layer_by_layer_and_trains():
    model, optimizer, x, target = benchmark._setup("lenet", 4)
    before = model.fc2.weight.detach().numpy().copy()
    timing = benchmark.time_iteration(model, optimizer, x, target, nn.CrossEntropyLoss())
    names = [name for name, _ in benchmark.layers(model)]
    assert list(timing["forward"]) == names and sorted(timing["backward"]) == sorted(names)
    assert all(t > 0 for t in list(timing["forward"].values()) + list(timing["backward"].values()))
    assert not np.array_equal(model.fc2.weight.detach().numpy(), before)  # the update ran


def test_layer_by_layer_backward_gives_the_models_gradients():
    timed, optimizer, x, target = benchmark._setup("lenet", 4)
    whole, _, _, _ = benchmark._setup("lenet", 4)  # the same seed: the same parameters
    optimizer.step = lambda: None  # compare the gradients before any update
    benchmark.time_iteration(timed, optimizer, x, target, nn.CrossEntropyLoss())
    nn.CrossEntropyLoss()(whole(x), target).backward()
    for (name, a), (_, b) in zip(timed.named_parameters(), whole.named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-7,
                                   err_msg=name)


def test_peak_memory_counts_parameters_gradients_and_optimizer_state(monkeypatch):
    # Linear(1000, 100): 100,100 float32 parameters; SGD with momentum keeps a gradient and a
    # momentum buffer for each, so at least 3 * 400,400 bytes are held at once.
    monkeypatch.setitem(benchmark.MODELS, "tiny", (lambda: nn.Sequential(nn.Linear(1000, 100)),
                                                   (1000,), 100))
    held = 3 * 100_100 * 4
    for engine in ("caffe", "primitives"):
        peak = benchmark.peak_memory("tiny", engine, 1)
        assert held <= peak < 2 * held, (engine, peak)


def test_bench_writes_one_json_entry_per_engine(tmp_path, capsys):
    path = tmp_path / "lenet.json"
    plot = tmp_path / "lenet.png"
    argv = ["bench", "lenet", "--batch-size", "4", "--iterations", "2", "--warmup", "0", "--json",
            str(path)]
    if importlib.util.find_spec("matplotlib"):
        argv += ["--plot", str(plot)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("lenet, batch 4, 2 iterations per engine") and "| conv2 |" in out
    result = json.loads(path.read_text())
    assert [e["engine"] for e in result["engines"]] == ["caffe", "primitives"]
    names = [name for name, _ in benchmark.layers(minifw.models.LeNet())] + ["loss"]
    for e in result["engines"]:
        for key in ("iteration_ms", "forward_ms", "backward_ms", "update_ms"):
            assert e[key] > 0, key
        assert e["peak_memory_bytes"] > 431_080 * 4 * 3  # parameters, gradients, momentum
        assert [row["name"] for row in e["layers"]] == names
        assert all(row["forward_ms"] > 0 and row["backward_ms"] > 0 for row in e["layers"])
    assert set(result["conv_algorithms"]) == {"conv1", "conv2"}
    assert result["tf32"] == {"conv": False, "matmul": False}
    assert result["conv_algorithms"]["conv1"]["forward"] in minifw.ops.conv.ALGORITHMS["forward"]
    if importlib.util.find_spec("matplotlib"):
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_on_the_gpu_syncs_and_counts_gpu_memory(emulated_cuda):
    synced = []
    import cupy
    real = cupy.cuda.Device.synchronize
    cupy.cuda.Device.synchronize = lambda self: synced.append(1) or real(self)
    try:
        result = benchmark.run("lenet", engines=("primitives",), batch_size=1, iterations=1, warmup=0,
                               blocks=1, pause=0, device="cuda")
    finally:
        cupy.cuda.Device.synchronize = real
    assert result["device"] == "cuda:0" and synced  # the clock waits for the GPU
    entry = result["engines"][0]
    assert entry["peak_memory_bytes"] > 431_080 * 4 * 3  # parameters, gradients, momentum, on the GPU
    assert set(result["conv_algorithms"]) == {"conv1", "conv2"}
    # the GPU's choices, not the CPU's (whose forward here is implicit_gemm)
    assert result["conv_algorithms"]["conv2"] == {"forward": "direct", "backward_data": "im2col_gemm",
                                                  "backward_filter": "implicit_gemm"}


@pytest.mark.parametrize("argv, message", [
    (["bench", "vgg"], "invalid choice: 'vgg'"),
    (["bench", "lenet", "--batch-size", "0"], "expected a positive integer, got '0'"),
    (["bench", "lenet", "--engine", "cudnn"], "'cudnn' is not an engine"),
    (["bench", "lenet", "--engine", "torch"], "--engine torch: PyTorch is not installed"),
    pytest.param(["bench", "lenet", "--device", "cuda"], "--device cuda is not available",
                 marks=pytest.mark.skipif(minifw.devices.unavailable_reason("cuda") is None,
                                          reason="cuda is available here")),
])
def test_bad_arguments_are_usage_errors(argv, message, capsys, monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else find_spec(name, *a))
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_run_checks_its_arguments():
    with pytest.raises(benchmark.BenchmarkError, match="unknown model 'vgg'; known: lenet"):
        benchmark.run("vgg")
    with pytest.raises(benchmark.BenchmarkError,
                       match="engines must be distinct ones of primitives, caffe, torch; got cudnn"):
        benchmark.run("lenet", engines=("cudnn",))
    with pytest.raises(benchmark.BenchmarkError, match="got caffe, caffe"):
        benchmark.run("lenet", engines=("caffe", "caffe"))
    with pytest.raises(benchmark.BenchmarkError, match="batch_size must be an int >= 1, got 0"):
        benchmark.run("lenet", batch_size=0)


def test_run_without_pytorch_says_so(monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else find_spec(name, *a))
    with pytest.raises(benchmark.BenchmarkError,
                       match=r"engine torch: PyTorch is not installed \(pip install torch\)"):
        benchmark.run("lenet", engines=("caffe", "torch"))


# ---- the torch engine (where PyTorch is installed) -----------------------------------------------
@pytest.mark.parametrize("name", ["lenet", "alexnet-small"])
def test_the_torch_model_computes_the_same_function(name):
    torch = pytest.importorskip("torch")
    model, _, x, target = benchmark._setup(name, 3)
    tmodel, _, tx, ttarget = benchmark._torch_setup(name, 3)
    np.testing.assert_array_equal(tx.numpy(), x.numpy())
    np.testing.assert_array_equal(ttarget.numpy(), target.numpy())
    model.eval(), tmodel.eval()  # no dropout
    with torch.no_grad():
        expected = tmodel(tx).numpy()
    np.testing.assert_allclose(model(x).detach().numpy(), expected, rtol=1e-4, atol=1e-5)
    # and the same gradients: the conversion copied every parameter
    nn.CrossEntropyLoss()(model(x), target).backward()
    torch.nn.CrossEntropyLoss()(tmodel(tx), ttarget).backward()
    for (mine, p), (theirs, q) in zip(model.named_parameters(), tmodel.named_parameters()):
        assert mine == theirs
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-5,
                                   err_msg=mine)


def test_alexnet_converts_with_caffes_layers():
    torch = pytest.importorskip("torch")
    model = minifw.models.AlexNet()
    converted = {name: benchmark._torch_layer(torch, layer, name)
                 for name, layer in benchmark.layers(model)}
    assert converted["pool1"].ceil_mode and converted["conv2"].groups == 2
    assert (converted["norm1"].size, converted["norm1"].alpha) == (5, 1e-4)
    np.testing.assert_array_equal(converted["fc8"].weight.detach().numpy(),
                                  model.fc8.weight.detach().numpy())


def test_a_layer_without_a_torch_counterpart_is_named(monkeypatch):
    torch = pytest.importorskip("torch")

    class Odd(nn.Module):
        def forward(self, x):
            return x

    with pytest.raises(benchmark.BenchmarkError, match=r"layer odd \(Odd\) has no PyTorch"):
        benchmark._torch_layer(torch, Odd(), "odd")


def test_bench_times_torch_beside_the_engines(tmp_path, capsys):
    pytest.importorskip("torch")
    path = tmp_path / "lenet.json"
    argv = ["bench", "lenet", "--batch-size", "4", "--iterations", "2", "--warmup", "0",
            "--engine", "caffe,primitives,torch", "--json", str(path)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "speedup (primitives vs caffe) | speedup (primitives vs torch) |" in out
    assert "primitives vs torch: " in out
    result = json.loads(path.read_text())
    assert [e["engine"] for e in result["engines"]] == ["caffe", "primitives", "torch"]
    assert result["torch_version"]
    torch_entry = result["engines"][2]
    assert torch_entry["peak_memory_bytes"] > 431_080 * 4 * 3  # parameters, gradients, momentum
    assert all(row["forward_ms"] > 0 for row in torch_entry["layers"])


def test_torch_engine_runs_only_on_cpu_or_cuda():
    pytest.importorskip("torch")
    with pytest.raises(benchmark.BenchmarkError, match="engine torch runs on cpu or cuda, not on "
                                                       "device 'cudasim'"):
        benchmark.check_arguments("lenet", ("torch",), 1, 1, 0, device="cudasim")


def test_the_op_overhead_benchmark_runs(capsys):
    pytest.importorskip("torch")
    import pathlib
    import runpy
    script = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "op_overhead.py"
    runpy.run_path(str(script))["main"](["--repeats", "1", "--calls", "2"])
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and not line.startswith("| operation")]
    assert len(rows) == 9
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert float(cells[1]) > 0 and float(cells[2]) > 0 and cells[3].endswith("x")


def test_the_torch_engine_runs_with_minifw_threads_and_tf32_switches():
    torch = pytest.importorskip("torch")
    saved = (torch.get_num_threads(), torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = True, True
    try:
        with benchmark._torch_settings(torch, 1):
            assert torch.get_num_threads() == 1
            assert torch.backends.cudnn.allow_tf32 is minifw.backends.cudnn.allow_tf32 is False
            assert torch.backends.cuda.matmul.allow_tf32 is minifw.backends.cuda.matmul.allow_tf32 is False
            minifw.backends.cudnn.allow_tf32 = True
            with benchmark._torch_settings(torch, 1):
                assert torch.backends.cudnn.allow_tf32 is True
                assert torch.backends.cuda.matmul.allow_tf32 is False
            minifw.backends.cudnn.allow_tf32 = False
        assert torch.backends.cudnn.allow_tf32 is True and torch.backends.cuda.matmul.allow_tf32 is True
    finally:
        minifw.backends.cudnn.allow_tf32 = False
        torch.set_num_threads(saved[0])
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved[1:]


# ---- torchvision's models in the bench ----------------------------------------------------------
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0"])
def test_a_vision_models_chain_is_the_model(name):
    minifw.manual_seed(0)
    chain = benchmark.MODELS[name][0]().eval()
    source = chain.source.eval()
    # the chain holds the model's own parameters, no copy and none left out
    assert {id(p) for p in chain.parameters()} == {id(p) for p in source.parameters()}
    assert benchmark.MODELS[name][1:] == ((3, 224, 224), 1000) and "source" not in dict(chain.named_children())
    x = minifw.randn(2, 3, 64, 64)
    with minifw.no_grad():
        out = x
        for _, layer in benchmark.layers(chain):
            out = layer(out)
        np.testing.assert_allclose(out.numpy(), source(x).numpy(), rtol=1e-5, atol=1e-6)


def test_a_resnets_chain_keeps_torchvisions_parameter_names():
    chain = benchmark.MODELS["resnet18"][0]()
    assert list(chain.state_dict()) == list(chain.source.state_dict())
    assert [name for name, _ in benchmark.layers(chain)] == [
        "conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool", "flatten", "fc"]


def test_the_convolutions_inside_layers_are_reported():
    minifw.manual_seed(0)
    chain = benchmark.MODELS["resnet18"][0]()
    chosen = benchmark.conv_algorithms(chain, minifw.randn(1, 3, 64, 64))
    convs = [name for name, m in chain.named_modules() if isinstance(m, nn.Conv2d)]
    assert list(chosen) == convs and len(convs) == 20 and "layer2.0.downsample.0" in chosen
    for algos in chosen.values():
        assert set(algos) == set(minifw.ops.conv.DIRECTIONS)
        assert all(a in minifw.ops.conv.ALGORITHMS[d] for d, a in algos.items())


def test_a_vision_model_runs_through_the_bench():
    result = benchmark.run("mobilenet_v2", engines=("caffe", "primitives"), batch_size=1, iterations=1,
                           warmup=0, blocks=1, pause=0)
    assert [e["engine"] for e in result["engines"]] == ["caffe", "primitives"]
    names = [row["name"] for row in result["engines"][0]["layers"]]
    assert names[:2] == ["features0", "features1"] and names[-4:] == ["pool", "flatten", "classifier", "loss"]
    assert len(result["conv_algorithms"]) == 52
    parameters = sum(p.numel() for p in benchmark.MODELS["mobilenet_v2"][0]().parameters())
    assert parameters == 3_504_872
    for entry in result["engines"]:  # at least the parameters, their gradients and momentum
        assert entry["peak_memory_bytes"] > 3 * 4 * parameters


def test_the_torch_engine_of_a_vision_model_wants_torchvision(monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torchvision" else find_spec(name, *a))
    if find_spec("torch") is None:
        pytest.skip("PyTorch is not installed: the message is about it")
    with pytest.raises(benchmark.BenchmarkError, match=r"engine torch: resnet18 is built by torchvision, which is "
                                                       r"not installed \(pip install torchvision\)"):
        benchmark.run("resnet18", engines=("primitives", "torch"))
    benchmark.check_arguments("lenet", ("torch",), 1, 1, 0)  # the others need PyTorch alone


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_the_torch_engine_builds_the_vision_model_with_torchvision(name):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchvision")
    model, _, x, _ = benchmark._setup(name, 2)
    tmodel, _, tx, _ = benchmark._torch_setup(name, 2)
    assert [n for n, _ in tmodel.named_children()] == [n for n, _ in benchmark.layers(model)]
    model.eval(), tmodel.eval()
    with torch.no_grad():
        expected = tmodel(tx).numpy()
    with minifw.no_grad():
        np.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-3, atol=1e-4)


def test_a_layer_holding_an_in_place_module_gets_a_copy_of_its_input():
    # EfficientNet's classifier: Dropout(inplace=True) first, on the detached input the bench
    # gives each layer, which is a leaf that requires grad
    minifw.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Sequential(nn.Dropout(0.2, inplace=True), nn.Linear(8, 3)))
    optimizer = minifw.optim.SGD(model.parameters(), lr=0.1)
    timing = benchmark.time_iteration(model, optimizer, minifw.randn(4, 8), minifw.tensor([0, 1, 2, 0]),
                                      nn.CrossEntropyLoss())
    assert set(timing["forward"]) == {"0", "1"} and all(v >= 0 for v in timing["backward"].values())
    assert model[1][1].weight.grad is not None and model[0].weight.grad is not None
