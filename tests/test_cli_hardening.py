"""`minifw train` / `sample` / `bench` against values that used to train NaN for 20 epochs, end
in a traceback, or fail only after an epoch: each is refused up front with a clear message and
exit status 2 (argparse's, for usage errors), and a run whose loss becomes NaN stops with
status 1 without overwriting the last good checkpoint."""
import os
import struct
import sys

import numpy as np
import pytest

import minifw
from minifw import cli, training
from minifw.data import mnist, write_idx


@pytest.fixture(autouse=True)
def keep_thread_count():
    threads = minifw.get_num_threads()
    yield
    minifw.set_num_threads(threads)


def write_digits(folder, train=24, test=8, size=28):
    """The four MNIST IDX files in `folder`: `train` and `test` noisy images of size x size."""
    rng = np.random.default_rng(0)
    os.makedirs(folder, exist_ok=True)
    for prefix, n in (("train", train), ("t10k", test)):
        write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte"),
                  rng.integers(0, 255, (n, size, size)).astype(np.uint8))
        write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"),
                  rng.integers(0, 10, n).astype(np.uint8))
    return str(folder)


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    return write_digits(tmp_path_factory.mktemp("digits"))


def train(capsys, *options):
    status = cli.main(["train", "lenet", "--batch-size", "8", "--epochs", "1", *options])
    out, err = capsys.readouterr()
    return status, out, err


# ---- values refused while the arguments are parsed ---------------------------------------------
@pytest.mark.parametrize("argv, message", [
    pytest.param(["train", "lenet", "--lr", "inf"], "--lr: expected a finite number > 0.0, got 'inf'", id="lr-inf"),
    pytest.param(["train", "lenet", "--lr=-inf"], "--lr: expected a finite number > 0.0", id="lr-minus-inf"),
    pytest.param(["train", "lenet", "--lr", "NaN"], "--lr: expected a finite number > 0.0, got 'NaN'", id="lr-nan"),
    pytest.param(["train", "lenet", "--lr", "0"], "--lr: expected a number > 0.0, got '0'", id="lr-0"),
    pytest.param(["train", "lenet", "--lr=-1e-3"], "--lr: expected a number > 0.0", id="lr-negative"),
    pytest.param(["train", "lenet", "--weight-decay", "inf"],
                 "--weight-decay: expected a finite number >= 0.0, got 'inf'", id="weight-decay-inf"),
    pytest.param(["train", "lenet", "--weight-decay", "nan"], "--weight-decay: expected a finite number",
                 id="weight-decay-nan"),
    pytest.param(["train", "lenet", "--weight-decay", "-0.1"], "--weight-decay: expected a number >= 0.0",
                 id="weight-decay-negative"),
    pytest.param(["train", "lenet", "--momentum", "1"],
                 "--momentum: expected a number >= 0.0 and < 1.0, got '1'", id="momentum-1"),
    pytest.param(["train", "lenet", "--momentum", "1.5"], "--momentum: expected a number >= 0.0 and < 1.0",
                 id="momentum-1.5"),
    pytest.param(["train", "lenet", "--momentum", "-0.5"], "--momentum: expected a number >= 0.0 and < 1.0",
                 id="momentum-negative"),
    pytest.param(["train", "lenet", "--momentum", "nan"], "--momentum: expected a finite number", id="momentum-nan"),
    pytest.param(["train", "charlstm", "--clip", "inf"], "--clip: expected a finite number >= 0.0", id="clip-inf"),
    pytest.param(["train", "wordlm", "--dropout", "1"], "--dropout: expected a number >= 0.0 and < 1.0",
                 id="dropout-1"),
    pytest.param(["train", "lenet", "--batch-size", "0"], "--batch-size: expected a positive integer, got '0'",
                 id="batch-size-0"),
    pytest.param(["train", "lenet", "--epochs", "-1"], "--epochs: expected a positive integer, got '-1'",
                 id="epochs-negative"),
    pytest.param(["train", "lenet", "--threads", "100000000000"],
                 f"--threads: expected an integer from 1 to {cli.MAX_THREADS}, got '100000000000'",
                 id="threads-huge"),
    pytest.param(["bench", "lenet", "--threads", "0"], "--threads: expected an integer from 1 to", id="bench-threads-0"),
    # above set_num_threads' limit: a usage error, not set_num_threads' traceback once parsed
    pytest.param(["train", "lenet", "--threads", str(minifw.backends.max_num_threads() + 1)],
                 f"--threads: expected an integer from 1 to {minifw.backends.max_num_threads()}, got",
                 id="threads-over-the-library-limit"),
    pytest.param(["bench", "lenet", "--threads", str(minifw.backends.max_num_threads() + 1)],
                 f"--threads: expected an integer from 1 to {minifw.backends.max_num_threads()}, got",
                 id="bench-threads-over-the-library-limit"),
    pytest.param(["train", "lenet", "--shift", "100000"],
                 f"--shift: expected an integer from 0 to {cli.MAX_SHIFT}, got '100000'", id="shift-huge"),
    pytest.param(["sample", "c.npz", "--temperature", "inf"], "--temperature: expected a finite number > 0.0",
                 id="temperature-inf"),
    pytest.param(["sample", "c.npz", "--temperature", "0"], "--temperature: expected a number > 0.0",
                 id="temperature-0"),
])
def test_out_of_range_values_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_the_bounds_themselves_are_accepted():
    args = cli.build_parser().parse_args(["train", "lenet", "--momentum", "0", "--weight-decay", "0",
                                          "--threads", str(cli.MAX_THREADS), "--shift", str(cli.MAX_SHIFT),
                                          "--lr", "1e-300"])
    assert (args.momentum, args.weight_decay, args.threads, args.shift, args.lr) == \
        (0.0, 0.0, cli.MAX_THREADS, cli.MAX_SHIFT, 1e-300)


# ---- paths checked before training ------------------------------------------------------------
def _unwritable_directory(tmp_path):
    if sys.platform.startswith("linux") and os.path.isdir("/proc/self"):
        return "/proc/self"  # no file can be created there, not even by root
    if os.geteuid() == 0:
        pytest.skip("no directory here that root cannot write to")
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o500)
    return str(folder)


@pytest.mark.parametrize("option", ["--checkpoint", "--plot"])
@pytest.mark.parametrize("where", ["a-directory", "in-a-missing-directory", "in-a-file", "unwritable"])
def test_an_output_path_that_cannot_be_written_is_refused_before_training(where, option, capsys, digits,
                                                                          tmp_path):
    (tmp_path / "file").write_text("x")
    path, message = {
        "a-directory": (str(tmp_path), f"{option} {tmp_path}: is a directory; give a file name, e.g. "),
        "in-a-missing-directory": (f"{tmp_path}/no/c.npz", f"{tmp_path}/no does not exist"),
        "in-a-file": (f"{tmp_path}/file/c.npz", f"{tmp_path}/file is not a directory"),
        "unwritable": (None, "cannot write to directory"),
    }[where]
    if path is None:
        path = os.path.join(_unwritable_directory(tmp_path), "c.npz")
    status, out, err = train(capsys, "--data-dir", digits, option, path)
    assert status == 2 and err.startswith(f"minifw train: error: {option} {path}: "), err
    assert message in err and "epoch" not in out


@pytest.mark.parametrize("option", ["--json", "--plot"])
@pytest.mark.parametrize("where", ["a-directory", "in-a-missing-directory"])
def test_a_bench_output_path_that_cannot_be_written_is_refused_before_timing(where, option, capsys,
                                                                              tmp_path, monkeypatch):
    monkeypatch.setattr(cli.benchmark, "run", lambda *a, **k: pytest.fail("the benchmark ran"))
    path, message = {
        "a-directory": (str(tmp_path), f"{option} {tmp_path}: is a directory; give a file name, e.g. "),
        "in-a-missing-directory": (f"{tmp_path}/no/b.out", f"{tmp_path}/no does not exist"),
    }[where]
    status = cli.main(["bench", "lenet", "--iterations", "1", option, path])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(f"minifw bench: error: {option} {path}: ") and message in err, err


def test_bench_refuses_what_the_benchmark_cannot_run_as_a_usage_error(capsys, monkeypatch):
    monkeypatch.setattr(cli.benchmark, "run", lambda *a, **k: pytest.fail("the benchmark ran"))
    monkeypatch.setattr(cli.benchmark, "torch_missing", lambda *model: None)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", "lenet", "--engine", "torch", "--device", "cudasim"])
    assert exit_info.value.code == 2
    assert "minifw bench: error: engine torch runs on cpu or cuda, not on device 'cudasim'" in \
        capsys.readouterr().err


@pytest.mark.parametrize("make, message", [
    pytest.param(lambda p: p.mkdir(), "--resume {p}: Is a directory", id="a-directory"),
    pytest.param(lambda p: p.write_text("not a checkpoint"), "--resume: load: not a valid minifw checkpoint: {p}: "
                 "not a .npz (zip) archive", id="a-text-file"),
    pytest.param(lambda p: np.savez(p, header=np.ones(3)), "header entry must be a 1-D uint8 array", id="malformed"),
    pytest.param(lambda p: minifw.save({"kind": "minifw train lenet", "settings": 3}, p),
                 "--resume {p}: the checkpoint has no complete settings", id="wrong-contents"),
])
def test_resume_from_what_is_not_a_checkpoint(make, message, capsys, digits, tmp_path):
    path = tmp_path / "c.npz"
    make(path)
    status, out, err = train(capsys, "--data-dir", digits, "--resume", str(path), "--checkpoint", "")
    assert status == 2 and message.format(p=path) in err, err
    assert cli.main(["sample", str(path)]) == 2
    assert str(path) in capsys.readouterr().err


# ---- data refused before training -------------------------------------------------------------
def test_a_data_directory_without_images_is_refused(capsys, tmp_path):
    for train_images, test_images, which in ((0, 8, "training"), (24, 0, "test")):
        folder = write_digits(tmp_path / which, train=train_images, test=test_images)
        status, out, err = train(capsys, "--data-dir", folder)
        assert status == 2, err
        assert f"minifw train: error: LeNet: the {which} set in {folder} holds no samples" in err


@pytest.mark.parametrize("model", ["lenet", "alexnet-small"])
def test_images_that_are_not_28x28_are_refused(model, capsys, tmp_path):
    folder = write_digits(tmp_path, size=32)
    status = cli.main(["train", model, "--data-dir", folder, "--epochs", "1", "--checkpoint", ""])
    err = capsys.readouterr().err
    title = training.get_recipe(model).title
    assert status == 2 and f"{title} trains on 28x28 MNIST digits; the training images in {folder} are 32x32" in err


def test_idx_sizes_that_overflow_int64_are_compared_exactly(capsys, tmp_path):
    folder = write_digits(tmp_path)
    # 2**31 * 2**31 * 4 images of bytes: 2**64, which is 0 in int64 arithmetic, as is the data here
    path = os.path.join(folder, "train-images-idx3-ubyte")
    with open(path, "wb") as f:
        f.write(struct.pack(">BBBB3I", 0, 0, 0x08, 3, 1 << 31, 1 << 31, 4))
    with pytest.raises(ValueError, match="needs 18446744073709551616 bytes of data, found 0"):
        mnist.read_idx(path)
    status, out, err = train(capsys, "--data-dir", folder)
    assert status == 2 and "truncated IDX file" in err and "18446744073709551616" in err


# ---- a run whose loss becomes NaN --------------------------------------------------------------
def test_a_diverging_run_stops_with_the_epoch_and_iteration(capsys, digits, tmp_path):
    checkpoint = tmp_path / "c.npz"
    status, out, err = train(capsys, "--data-dir", digits, "--lr", "1e4", "--lr-schedule", "constant",
                             "--checkpoint", str(checkpoint))
    assert status == 1, err
    assert "minifw train: error: training diverged: the loss became nan at epoch 1, iteration " in err
    assert "Most often the steps are too large: try a lower --lr and start again" in err
    assert "epoch 1/1:" not in out and not checkpoint.exists()  # no epoch recorded, nothing saved


def poison(model):
    with minifw.no_grad():
        next(model.parameters()).fill_(float("nan"))


@pytest.mark.parametrize("poisoned", ["loss", "parameters"])
def test_divergence_keeps_the_last_good_checkpoint(poisoned, capsys, digits, tmp_path, monkeypatch):
    checkpoint = tmp_path / "c.npz"
    status, _, err = train(capsys, "--data-dir", digits, "--epochs", "1", "--lr-schedule", "constant",
                           "--checkpoint", str(checkpoint))
    assert status == 0, err
    good = checkpoint.read_bytes()
    step = training.LeNetRecipe.train_step
    calls = []

    def poisoning_step(self, run, inputs, targets):
        # epoch 2 of 3 iterations: NaN enters a weight before its 2nd step ("loss": that step's
        # loss is NaN) or after its 3rd and last ("parameters": every loss finite, the weights not)
        calls.append(1)
        if poisoned == "loss" and len(calls) == 2:
            poison(run.model)
        result = step(self, run, inputs, targets)
        if poisoned == "parameters" and len(calls) == 3:
            poison(run.model)
        return result

    monkeypatch.setattr(training.LeNetRecipe, "train_step", poisoning_step)
    status, out, err = train(capsys, "--data-dir", digits, "--resume", str(checkpoint), "--epochs", "2",
                             "--checkpoint", str(checkpoint))
    assert status == 1
    where = "the loss became nan at epoch 2, iteration 2" if poisoned == "loss" else \
        "the parameters became NaN or infinite at the end of epoch 2"
    assert f"training diverged: {where}; {checkpoint} still holds epoch 1, the last with finite parameters" in err
    assert checkpoint.read_bytes() == good
    saved = minifw.load(checkpoint)
    assert saved["epoch"] == 1
    assert all(np.isfinite(v.numpy()).all() for v in saved["model"].values())


def test_a_training_set_that_gives_no_batches_is_an_error_not_a_division_by_zero(digits, monkeypatch):
    loaders = training.LeNetRecipe.loaders
    monkeypatch.setattr(training.LeNetRecipe, "loaders", lambda self, run: ([], loaders(self, run)[1]))
    run = training.Run("lenet", {"data_dir": digits, "epochs": 1})
    with pytest.raises(training.TrainingError, match="LeNet: the training data gave no batches"):
        run.train_epoch()
    assert run.epochs_done == 0 and run.history["epoch_loss"] == []
