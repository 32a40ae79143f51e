"""The `minifw` command: `info`, and `train lenet` on tiny IDX files written here
(progress, per-epoch accuracy, checkpoint, plot, bit-identical --resume), and clear
errors for bad arguments."""
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import minifw
from minifw import cli
from minifw.data import write_idx



@pytest.fixture(autouse=True)
def keep_thread_count():
    threads = minifw.get_num_threads()
    yield
    minifw.set_num_threads(threads)


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    """A data directory with 48 training and 20 test images in the four MNIST IDX files:
    class k is a bright bar at row 2 + 2k on a noisy background."""
    folder = tmp_path_factory.mktemp("digits")
    rng = np.random.default_rng(0)
    for prefix, n in (("train", 48), ("t10k", 20)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
        for image, k in zip(images, labels):
            image[2 + 2 * k:6 + 2 * k, 4:24] = 255
        write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", images)
        write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", labels)
    return folder


def train(capsys, digits, *options):
    """Run `minifw train lenet` on the tiny digits: (exit status, stdout, stderr)."""
    status = cli.main(["train", "lenet", "--data-dir", str(digits), "--batch-size", "16", *options])
    out, err = capsys.readouterr()
    return status, out, err


def parameters(checkpoint_path):
    return {k: v.numpy() for k, v in minifw.load(checkpoint_path)["model"].items()}


def assert_same_parameters(a, b):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


# ---- minifw info ---------------------------------------------------------------------------
def test_info(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    info = minifw.info()
    for label, value in (("minifw", info["minifw"]), ("numpy", info["numpy"]), ("ISA", info["isa"]),
                         ("threads", str(info["num_threads"])), ("backends", "cpu, cudasim"),
                         ("CUDA kernels", "compiled with CUDA" if minifw._native.has_cuda else "not compiled in"),
                         ("GPU", minifw.devices.unavailable_reason("cuda") or "compute capability")):
        line = next((l for l in out.splitlines() if l.startswith(label + ":")), None)
        assert line is not None and value in line, f"no {label!r} line with {value!r} in:\n{out}"


def test_info_shows_the_gpu(emulated_cuda, capsys):
    assert cli.main(["info"]) == 0
    gpu = minifw.info()["gpu"]
    assert gpu["compute_capability"] == "9.0" and gpu["memory_bytes"] > 0  # the emulated GPU is an H100's
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("GPU:"))
    assert f"cuda:0 {gpu['name']}, compute capability 9.0" in line and f"CuPy {gpu['cupy']}" in line


def test_the_module_runs_as_a_command(tmp_path):
    # the minifw this process imported (a source tree or an installed package),
    # run from an empty directory so a source tree there cannot shadow it
    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    done = subprocess.run([sys.executable, "-m", "minifw.cli", "info"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and "GPU:" in done.stdout


# ---- minifw train lenet -----------------------------------------------------------------------
def test_train_reports_progress_accuracy_and_writes_a_checkpoint(capsys, digits, tmp_path):
    checkpoint = tmp_path / "lenet.npz"
    status, out, err = train(capsys, digits, "--epochs", "2", "--checkpoint", str(checkpoint),
                             "--threads", "1")
    assert status == 0, err
    lines = out.splitlines()
    assert "48 training and 20 test digits" in lines[0] and "1 thread" in lines[0] and "1 threads" not in lines[0]
    assert lines[1].startswith("epoch 1/2: train loss ")
    assert "test accuracy" in lines[1] and "/20)" in lines[1]
    assert lines[2].startswith("epoch 2/2: ")
    assert lines[3].startswith("done: test accuracy ") and "images/s" in lines[3]
    if importlib.util.find_spec("tqdm"):  # the progress bar, cleared after each epoch
        assert "epoch 1/2: " in err and "img/s" in err
    else:
        assert "tqdm is not installed, so there is no progress bar" in err
    saved = minifw.load(checkpoint)
    assert saved["epoch"] == 2 and saved["settings"]["batch_size"] == 16
    assert len(saved["history"]["test_accuracy"]) == 2 and len(saved["history"]["batch_loss"]) == 6
    assert set(parameters(checkpoint)) == {n for n, _ in minifw.models.LeNet().named_parameters()}
    assert os.listdir(tmp_path) == ["lenet.npz"]  # no temporary files left behind


@pytest.mark.parametrize("schedule", ["constant", "cosine"])
def test_an_interrupted_run_resumes_bit_identically(capsys, digits, tmp_path, monkeypatch, schedule):
    common = ("--epochs", "3", "--lr-schedule", schedule, "--seed", "4")
    status, _, err = train(capsys, digits, *common, "--checkpoint", str(tmp_path / "full.npz"))
    assert status == 0, err

    # Interrupt the second run (as Ctrl-C would) right after its first checkpoint is written.
    save = minifw.save

    def save_then_interrupt(obj, path):
        save(obj, path)
        raise KeyboardInterrupt

    monkeypatch.setattr(minifw, "save", save_then_interrupt)
    part = str(tmp_path / "part.npz")
    status, _, err = train(capsys, digits, *common, "--checkpoint", part)
    assert status == 130 and f"holds epoch 1: continue with --resume {part}" in err
    monkeypatch.setattr(minifw, "save", save)

    status, out, err = train(capsys, digits, "--resume", part, "--checkpoint", part)
    assert status == 0, err
    assert out.startswith(f"resuming from {part} after epoch 1")
    assert "epoch 1/3" not in out and "epoch 2/3" in out and "epoch 3/3" in out
    assert_same_parameters(parameters(part), parameters(tmp_path / "full.npz"))
    full, resumed = minifw.load(tmp_path / "full.npz"), minifw.load(part)
    assert resumed["history"] == full["history"]


def test_a_constant_schedule_run_can_be_extended(capsys, digits, tmp_path):
    two = str(tmp_path / "two.npz")
    assert train(capsys, digits, "--epochs", "2", "--lr-schedule", "constant", "--checkpoint", two)[0] == 0
    one = str(tmp_path / "one.npz")
    assert train(capsys, digits, "--epochs", "1", "--lr-schedule", "constant", "--checkpoint", one)[0] == 0
    status, out, err = train(capsys, digits, "--resume", one, "--epochs", "2", "--checkpoint", one)
    assert status == 0, err
    assert_same_parameters(parameters(one), parameters(two))


def test_resuming_a_finished_run_has_nothing_to_do(capsys, digits, tmp_path):
    path = str(tmp_path / "c.npz")
    train(capsys, digits, "--epochs", "1", "--checkpoint", path)
    status, out, _ = train(capsys, digits, "--resume", path, "--checkpoint", path)
    assert status == 0 and "nothing to do: the run in" in out and "(1/1 epochs)" in out


def test_plot(capsys, digits, tmp_path):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "curves.png"
    status, out, err = train(capsys, digits, "--epochs", "1", "--checkpoint", "", "--plot", str(plot))
    assert status == 0, err
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"plot: {plot}" in out


def test_plot_without_matplotlib_says_so_and_still_trains(capsys, digits, tmp_path, monkeypatch):
    find_spec = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else find_spec(name, *a))
    plot = tmp_path / "curves.png"
    status, out, err = train(capsys, digits, "--epochs", "1", "--checkpoint", "", "--plot", str(plot))
    assert status == 0 and "done:" in out
    assert "matplotlib is not installed" in err and "pip install matplotlib" in err
    assert not plot.exists()


# ---- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    pytest.param([], "the following arguments are required: COMMAND", id="no-command"),
    pytest.param(["train"], "the following arguments are required: model", id="no-model"),
    pytest.param(["train", "alexnet"], "invalid choice: 'alexnet'", id="unknown-model"),
    pytest.param(["train", "lenet", "--epochs", "0"],
                 "argument --epochs: expected a positive integer, got '0'",
                 id="epochs-0"),
    pytest.param(["train", "lenet", "--batch-size", "big"], "argument --batch-size: expected a positive "
                 "integer, got 'big'", id="batch-size-text"),
    pytest.param(["train", "lenet", "--lr", "-0.1"], "argument --lr: expected a number > 0.0, got '-0.1'",
                 id="negative-lr"),
    pytest.param(["train", "lenet", "--lr", "nan"], "argument --lr: expected a finite number > 0.0", id="nan-lr"),
    pytest.param(["train", "lenet", "--momentum", "x"], "argument --momentum: expected a number >= 0.0",
                 id="momentum-text"),
    pytest.param(["train", "lenet", "--device", "tpu"], "argument --device: invalid choice: 'tpu'",
                 id="unknown-device"),
    pytest.param(["train", "lenet", "--threads", "0"],
                 f"argument --threads: expected an integer from 1 to {cli.MAX_THREADS}, got '0'", id="threads-0"),
    pytest.param(["train", "lenet", "--bogus"], "unrecognized arguments: --bogus", id="unknown-option"),
])
def test_bad_arguments_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("options, message", [
    pytest.param(["--device", "cuda"], f"--device cuda is not available: {minifw.devices.unavailable_reason('cuda')}",
                 id="cuda", marks=pytest.mark.skipif(minifw.devices.unavailable_reason("cuda") is None,
                                                     reason="cuda is available here")),
    pytest.param(["--data-dir", "{tmp}/nowhere"], "data directory '{tmp}/nowhere' does not exist",
                 id="missing-data-dir"),
    pytest.param(["--data-dir", "{tmp}"], "has no train-images-idx3-ubyte", id="empty-data-dir"),
    pytest.param(["--checkpoint", "{tmp}/no/such/dir/c.npz"], "--checkpoint {tmp}/no/such/dir/c.npz: "
                 "{tmp}/no/such/dir does not exist", id="checkpoint-dir"),
    pytest.param(["--resume", "{tmp}/missing.npz"], "--resume {tmp}/missing.npz: No such file or directory",
                 id="resume-missing"),
    pytest.param(["--resume", "{tmp}/other.npz"], "not a checkpoint written by `minifw train lenet`",
                 id="resume-foreign-checkpoint"),
])
def test_problems_are_reported_clearly(options, message, capsys, tmp_path):
    minifw.save({"model": {}}, tmp_path / "other.npz")
    options = [o.format(tmp=tmp_path) for o in options]
    assert cli.main(["train", "lenet", "--epochs", "1", *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith("minifw train: error: ") and message.format(tmp=tmp_path) in err


@pytest.mark.parametrize("option, value, message", [
    pytest.param("--lr", "0.5", "--lr 0.5 differs from the checkpoint's 0.01: a resumed run continues "
                 "with the checkpoint's settings", id="lr"),
    pytest.param("--seed", "3", "--seed 3 differs from the checkpoint's 0", id="seed"),
    pytest.param("--epochs", "5", "the cosine schedule spans the run's epochs", id="epochs-cosine"),
])
def test_resume_refuses_different_settings(option, value, message, capsys, digits, tmp_path):
    path = str(tmp_path / "c.npz")
    assert train(capsys, digits, "--epochs", "1", "--checkpoint", path)[0] == 0
    status, _, err = train(capsys, digits, "--resume", path, option, value)
    assert status == 2 and message in err


# ---- examples/train_lenet.py ---------------------------------------------------------------
def test_the_example_trains_exactly_as_the_command(capsys, digits, tmp_path):
    # the loop a learner reads is the one `minifw train lenet` runs: same numbers, epoch by epoch
    example = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                           "train_lenet.py")
    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    done = subprocess.run([sys.executable, example, str(digits)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=root), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    status, out, err = train(capsys, digits, "--batch-size", "64",  # the default, over train()'s 16
                             "--checkpoint", str(tmp_path / "cli.npz"))
    assert status == 0, err

    def per_epoch(text, pattern):
        return [tuple(m) for m in re.findall(pattern, text)]

    ours = per_epoch(done.stdout, r"epoch +(\d+): train loss ([\d.]+), test accuracy ([\d.]+)%")
    cli_epochs = per_epoch(out, r"epoch (\d+)/\d+: train loss ([\d.]+), test accuracy ([\d.]+)%")
    assert len(ours) == 20 and ours == cli_epochs
    assert (tmp_path / "lenet_example.npz").exists()


# ---- examples/pytorch_mnist.py: a PyTorch script with its imports renamed ---------------------
def test_the_pytorch_style_example_runs_and_learns(digits, tmp_path):
    example = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                           "pytorch_mnist.py")
    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    done = subprocess.run([sys.executable, example, "--data-dir", str(digits), "--epochs", "4", "--batch-size", "8",
                           "--log-interval", "2", "--save-model"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=root), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    losses = [float(v) for v in re.findall(r"Train Epoch: \d+ \[\d+/48 \(\d+%\)\]\tLoss: ([\d.]+)", done.stdout)]
    accuracy = [int(v) for v in re.findall(r"Accuracy: (\d+)/20", done.stdout)]
    assert len(losses) == 4 * 3 and len(accuracy) == 4, done.stdout
    assert accuracy[-1] >= 12, done.stdout  # the bars are learnable: chance is 2/20
    state = minifw.load(tmp_path / "mnist_cnn.pt")
    assert state["fc1.weight"].shape == (128, 4608)


# ---- minifw train alexnet-small -------------------------------------------------------------
def test_alexnet_small_trains_on_the_digits_padded_to_32x32(capsys, digits, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default checkpoint is alexnet-small.npz here
    status = cli.main(["train", "alexnet-small", "--data-dir", str(digits), "--batch-size", "8",
                       "--epochs", "6", "--lr", "0.02", "--lr-schedule", "constant", "--shift", "0"])
    out, err = capsys.readouterr()
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("AlexNetSmall on 48 training and 20 test digits padded to 32x32")
    assert [line.split(":")[0] for line in lines[1:7]] == [f"epoch {i}/6" for i in range(1, 7)]
    saved = minifw.load("alexnet-small.npz")
    assert saved["kind"] == "minifw train alexnet-small" and saved["epoch"] == 6
    assert saved["model"]["conv2.weight"].shape == (64, 16, 5, 5)
    losses = saved["history"]["epoch_loss"]
    assert losses[-1] < 0.85 * losses[0], losses  # it learns the bars (2.30 -> 1.79 measured; seeds 1-3: 0.67-0.80x)


def test_the_caffe_engine_trains_the_same_lenet(capsys, digits, tmp_path):
    runs = {}
    for engine in ("primitives", "caffe"):
        checkpoint = tmp_path / f"{engine}.npz"
        status, out, err = train(capsys, digits, "--epochs", "1", "--engine", engine,
                                 "--checkpoint", str(checkpoint))
        assert status == 0, err
        assert out.splitlines()[0].endswith("caffe engine") == (engine == "caffe")
        runs[engine] = parameters(checkpoint)
    assert minifw.get_engine() == "primitives"  # the command leaves the default as it was
    for name in runs["primitives"]:  # LeNet has no dropout: the same function, float32 rounding apart
        np.testing.assert_allclose(runs["caffe"][name], runs["primitives"][name], rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    # ... computed another way: the summation orders differ somewhere
    assert any(not np.array_equal(runs["caffe"][n], runs["primitives"][n]) for n in runs["caffe"])
