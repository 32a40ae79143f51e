"""benchmarks/real_caffe.py: the Caffe nets it writes are minifw's models, layer for layer;
it reads `caffe time`'s log; bad arguments and a missing Caffe exit 2 with a message. With
a `caffe` command on PATH (not needed by CI) a one-block comparison runs for real."""
import importlib.util
import os
import re
import shutil

import pytest

import minifw
from minifw import benchmark

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "benchmarks", "real_caffe.py")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("real_caffe_bench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _layers(text):
    """[(name, type, {param: value})] of a prototxt written by the script."""
    out = []
    for block in re.findall(r"layer \{(.*?)\n(?=layer|\Z)", text + "\n", re.S):
        name = re.search(r'name: "(\w+)"', block).group(1)
        kind = re.search(r'type: "(\w+)"', block).group(1)
        params = dict(re.findall(r"(\w+): ([\w.+-]+)(?=\s)", block.split("param {", 1)[-1] + " "))
        out.append((name, kind, params))
    return out


def test_alexnet_is_written_as_bvlc_alexnet(bench):
    model, _, x, _ = benchmark._setup("alexnet", 2)
    text, names = bench.prototxt("alexnet", model, tuple(x.shape), 1000)
    layers = _layers(text)
    kinds = [(n, k) for n, k, _ in layers]
    assert kinds[0] == ("data", "DummyData") and kinds[-1] == ("loss", "SoftmaxWithLoss")
    assert [n for n, _ in kinds[1:-1]] == [n for n in names if n not in ("flatten", "loss")]
    params = {n: p for n, _, p in layers}
    assert params["conv1"]["num_output"] == "96" and params["conv1"]["kernel_h"] == "11"
    assert params["conv1"]["stride_h"] == "4" and params["conv1"]["group"] == "1"
    assert params["conv2"]["group"] == "2" and params["conv2"]["pad_h"] == "2"
    assert params["conv5"]["num_output"] == "256" and params["conv5"]["group"] == "2"
    assert params["norm1"] == {"local_size": "5", "alpha": "0.0001", "beta": "0.75", "k": "1.0"}
    assert params["pool1"]["pool"] == "MAX" and params["pool1"]["kernel_h"] == "3"
    assert params["pool1"]["stride_h"] == "2"
    assert params["fc6"]["num_output"] == "4096" and params["fc8"]["num_output"] == "1000"
    assert params["drop6"]["dropout_ratio"] == "0.5"
    assert 'bottom: "conv1" top: "conv1"' in text  # ReLU in place, as in Caffe's net
    assert names["flatten"] is None  # InnerProduct flattens by itself
    assert "dim: 2 dim: 3 dim: 227 dim: 227" in text


def test_lenet_has_no_relu_after_the_convolutions(bench):
    model, _, x, _ = benchmark._setup("lenet", 4)
    text, _ = bench.prototxt("lenet", model, tuple(x.shape), 10)
    assert [k for _, k, _ in _layers(text)] == ["DummyData", "Convolution", "Pooling", "Convolution", "Pooling",
                                               "InnerProduct", "ReLU", "InnerProduct", "SoftmaxWithLoss"]


def test_a_layer_caffe_has_no_form_for_is_refused(bench):
    model = minifw.nn.Sequential(minifw.nn.Conv2d(1, 2, 3), minifw.nn.GELU())
    with pytest.raises(ValueError, match="1: no Caffe layer is written for GELU"):
        bench.prototxt("m", model, (1, 1, 5, 5), 10)


LOG = """\
I1125 06:15:38.575338 19586 net.cpp:131] Top shape: 64 1 28 28 (50176)
I1125 06:15:38.575361 19586 net.cpp:131] Top shape: 64 (64)
I1125 06:15:38.575459 19586 net.cpp:131] Top shape: 64 20 24 24 (737280)
I1125 06:15:38.578035 19586 net.cpp:131] Top shape: 64 500 (32000)
I1125 06:15:38.578100 19586 net.cpp:131] Top shape: (1)
I1125 06:15:41.113302 19586 caffe.cpp:408] Average time per layer:
I1125 06:15:41.113310 19586 caffe.cpp:411]      conv1\tforward: 3.3672 ms.
I1125 06:15:41.113317 19586 caffe.cpp:414]      conv1\tbackward: 3.31245 ms.
I1125 06:15:41.113323 19586 caffe.cpp:411]       fc1\tforward: 0.69262 ms.
I1125 06:15:41.113330 19586 caffe.cpp:414]       fc1\tbackward: 1.11147 ms.
I1125 06:15:41.113389 19586 caffe.cpp:419] Average Forward pass: 19.5406 ms.
I1125 06:15:41.113395 19586 caffe.cpp:421] Average Backward pass: 18.9248 ms.
"""


def test_caffe_time_log_is_read(bench):
    times, shapes = bench.parse_caffe_log(LOG)
    assert times == {"conv1": (3.3672, 3.31245), "fc1": (0.69262, 1.11147)}
    assert shapes == [(64, 1, 28, 28), (64,), (64, 20, 24, 24), (64, 500)]


@pytest.mark.parametrize("argv, message", [
    (["--models", "resnet"], "--models: expected some of lenet, alexnet-small, alexnet, got 'resnet'"),
    (["--blocks", "0"], "--blocks must be >= 1, got 0"),
    (["--caffe", "/nonexistent/caffe"], "no caffe command found"),
])
def test_bad_arguments_exit_2_with_a_message(bench, capsys, argv, message):
    assert bench.main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("caffe") is None, reason="needs Caffe's `caffe` command (not a dependency)")
def test_against_real_caffe(bench, capsys, tmp_path):
    out = tmp_path / "rows.json"
    assert bench.main(["--models", "lenet", "--batch-size", "2", "--iterations", "2", "--blocks", "1",
                       "--warmup", "0", "--json", str(out)]) == 0
    rows = __import__("json").loads(out.read_text())["lenet"]["rows"]
    assert [r["layer"] for r in rows] == ["conv1", "pool1", "conv2", "pool2", "fc1", "relu", "fc2", "loss"]
    assert all(min(r["caffe_fwd_ms"], r["caffe_bwd_ms"], r["engine_fwd_ms"], r["engine_bwd_ms"]) >= 0
               for r in rows)
    assert sum(r["caffe_fwd_ms"] for r in rows) > 0 and sum(r["engine_fwd_ms"] for r in rows) > 0
    printed = capsys.readouterr().out
    assert "forward + backward: real Caffe" in printed
    assert re.search(r"its BLAS: \S*blas", printed)  # the files `caffe` loads, named


def test_blas_of_a_program_without_one_is_unknown(bench, tmp_path):
    assert bench.blas_libraries(str(tmp_path / "no-such-program")) == "unknown"
    assert bench.blas_libraries(shutil.which("sh")) == "unknown"  # libc and the loader only
