"""Recurrent language models: an embedding, a stack of LSTM (or GRU) layers and a linear
decoder to the vocabulary, as in PyTorch's word_language_model example and Karpathy's char-rnn.

    model = CharLSTM(len(vocab))
    logits, hidden = model(ids)              # ids (T, N) int64 -> logits (T, N, vocab_size)
    hidden = detach_hidden(hidden)           # the next BPTT segment starts from this state
"""
from .. import nn
from ..nn import init
from ..tensor import Tensor


def detach_hidden(hidden):
    """The hidden state cut from the graph of the segment that made it (truncated BPTT):
    the next segment starts from its values but does not backpropagate into the previous one.
    Works for an LSTM's (h, c), a GRU's h, and None."""
    if hidden is None:
        return None
    if isinstance(hidden, Tensor):
        return hidden.detach()
    return tuple(detach_hidden(h) for h in hidden)


def _check_ids(cls, x, vocab_size):
    if not isinstance(x, Tensor) or x.ndim != 2:
        raise ValueError(f"{cls}: input must be a 2-D (T, N) tensor of token ids; got "
                         f"{getattr(x, 'shape', type(x).__name__)}")


class CharLSTM(nn.Module):
    """Embedding(vocab_size, embedding_dim) -> LSTM(embedding_dim, hidden_size, num_layers)
    -> Linear(hidden_size, vocab_size). forward(x (T, N) int64, hidden=None) returns
    (logits (T, N, vocab_size), (h_n, c_n)); the layers keep PyTorch's initializations."""

    def __init__(self, vocab_size, embedding_dim=128, hidden_size=512, num_layers=2, dropout=0.0):
        super().__init__()
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_size, num_layers, dropout=dropout)
        self.decoder = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, hidden=None):
        _check_ids("CharLSTM", x, self.vocab_size)
        output, hidden = self.lstm(self.embedding(x), hidden)
        return self.decoder(output), hidden

    detach_hidden = staticmethod(detach_hidden)


class WordLM(nn.Module):
    """PyTorch word_language_model's RNNModel: Embedding -> dropout -> LSTM or GRU (dropout
    between layers) -> dropout -> Linear to the vocabulary. With tie_weights the decoder uses
    the embedding's matrix (Press & Wolf 2016; Inan et al. 2016), which needs embedding_dim ==
    hidden_size. Embedding and decoder weights start U(-0.1, 0.1), the decoder bias at 0.
    forward(x (T, N) int64, hidden=None) -> (logits (T, N, vocab_size), hidden).

    The layers are registered in the order forward applies them (embedding, input_dropout,
    rnn, output_dropout, decoder), each applied once, so that whoever walks the children (as
    `minifw bench` does) runs the model's own computation. The dropouts hold no state, so
    the state_dict (embedding, rnn, decoder) and the parameters' order do not depend on them."""

    MODES = {"lstm": nn.LSTM, "gru": nn.GRU}

    def __init__(self, vocab_size, embedding_dim=650, hidden_size=650, num_layers=2, mode="lstm",
                 dropout=0.5, tie_weights=False):
        super().__init__()
        if mode not in self.MODES:
            raise ValueError(f"WordLM: mode must be one of {', '.join(map(repr, self.MODES))}; "
                             f"got {mode!r}")
        if tie_weights and embedding_dim != hidden_size:
            raise ValueError(f"WordLM: tie_weights=True shares the embedding matrix with the "
                             f"decoder, so embedding_dim must equal hidden_size; got embedding_dim "
                             f"{embedding_dim} and hidden_size {hidden_size}")
        self.vocab_size, self.mode, self.tie_weights = vocab_size, mode, bool(tie_weights)
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        self.input_dropout = nn.Dropout(dropout)
        self.rnn = self.MODES[mode](embedding_dim, hidden_size, num_layers, dropout=dropout)
        self.output_dropout = nn.Dropout(dropout)
        self.decoder = nn.Linear(hidden_size, vocab_size)
        if self.tie_weights:
            self.decoder.weight = self.embedding.weight
        self.reset_parameters()

    def reset_parameters(self):
        init.uniform_(self.embedding.weight, -0.1, 0.1)
        init.zeros_(self.decoder.bias)
        if not self.tie_weights:
            init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, x, hidden=None):
        _check_ids("WordLM", x, self.vocab_size)
        output, hidden = self.rnn(self.input_dropout(self.embedding(x)), hidden)
        return self.decoder(self.output_dropout(output)), hidden

    detach_hidden = staticmethod(detach_hidden)
