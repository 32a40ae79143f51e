"""Everyday PyTorch scripts run on minifw with only their imports renamed (tests/scripts/)."""
import math
import os
import runpy

import pytest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")


@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU"])
def test_the_word_language_model_script_trains(rnn_type, capsys):
    script = runpy.run_path(os.path.join(SCRIPTS, "word_language_model.py"))
    losses = script["run"](rnn_type)
    assert all(math.isfinite(l) for l in losses) and losses[-1] < losses[0]
    if rnn_type == "GRU":  # learns the repeated sentence within 5 epochs (perplexity 7.4 -> 1.7 measured)
        assert math.exp(losses[-1]) < 0.5 * math.exp(losses[0])


def test_the_word_language_model_script_on_the_emulated_gpu(emulated_cuda):
    script = runpy.run_path(os.path.join(SCRIPTS, "word_language_model.py"))
    cpu = script["run"]("GRU", "cpu")
    gpu = script["run"]("GRU", "cuda")
    assert gpu == pytest.approx(cpu, rel=1e-4)
