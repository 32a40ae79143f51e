"""CharLSTM and WordLM: shapes, tied weights, the hidden state cut between segments."""
import numpy as np
import pytest

import minifw
from minifw.models import CharLSTM, WordLM, detach_hidden


def ids(T, N, V):
    return minifw.randint(0, V, (T, N))


def test_char_lstm_shapes_and_hidden_state():
    model = CharLSTM(11, embedding_dim=6, hidden_size=8, num_layers=2)
    logits, (h, c) = model(ids(5, 3, 11))
    assert logits.shape == (5, 3, 11) and h.shape == (2, 3, 8) and c.shape == (2, 3, 8)
    logits2, _ = model(ids(4, 3, 11), detach_hidden((h, c)))
    assert logits2.shape == (4, 3, 11)


def test_detach_hidden_cuts_the_graph():
    model = CharLSTM(7, 4, 5, 1)
    _, hidden = model(ids(3, 2, 7))
    detached = detach_hidden(hidden)
    assert all(not h.requires_grad for h in detached)
    assert detach_hidden(None) is None and not detach_hidden(hidden[0]).requires_grad


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_word_lm_shapes(mode):
    model = WordLM(20, embedding_dim=6, hidden_size=8, num_layers=2, mode=mode, dropout=0.2)
    logits, hidden = model(ids(4, 3, 20))
    assert logits.shape == (4, 3, 20)
    h = hidden[0] if mode == "lstm" else hidden
    assert h.shape == (2, 3, 8)


def test_word_lm_init_follows_word_language_model():
    model = WordLM(30, 8, 8)
    assert np.abs(model.embedding.weight.detach().numpy()).max() <= 0.1
    assert np.abs(model.decoder.weight.detach().numpy()).max() <= 0.1
    assert not model.decoder.bias.detach().numpy().any()


def test_tied_weights_share_one_matrix():
    model = WordLM(12, 8, 8, num_layers=1, tie_weights=True, dropout=0.0)
    assert model.decoder.weight is model.embedding.weight
    # the shared matrix is one parameter: an optimizer updates it once
    params = list(model.parameters())
    assert sum(p is model.embedding.weight for p in params) == 1
    logits, _ = model(ids(3, 2, 12))
    logits.sum().backward()
    assert model.embedding.weight.grad is not None


def test_tied_weights_need_equal_sizes():
    with pytest.raises(ValueError, match="embedding_dim must equal hidden_size; got "
                                         "embedding_dim 6 and hidden_size 8"):
        WordLM(12, 6, 8, tie_weights=True)


def test_bad_mode_and_bad_input():
    with pytest.raises(ValueError, match="mode must be one of 'lstm', 'gru'; got 'rnn'"):
        WordLM(12, 8, 8, mode="rnn")
    with pytest.raises(ValueError, match="2-D"):
        CharLSTM(5, 4, 4, 1)(minifw.randint(0, 5, (3,)))


def test_word_lm_children_are_its_forward_in_order():
    # Walking the children (as `minifw bench` does) is the model's own computation: the same
    # dropout masks in the same order, so the same logits to the bit.
    model = WordLM(20, embedding_dim=6, hidden_size=8, num_layers=2, dropout=0.5)
    x = ids(4, 3, 20)
    assert [name for name, _ in model.named_children()] == ["embedding", "input_dropout", "rnn",
                                                            "output_dropout", "decoder"]
    minifw.manual_seed(1)
    logits, _ = model(x)
    minifw.manual_seed(1)
    out = x
    for _, layer in model.named_children():
        out = layer(out)
        out = out[0] if isinstance(out, tuple) else out
    np.testing.assert_array_equal(out.detach().numpy(), logits.detach().numpy())


def test_word_lm_state_dict_holds_only_the_parameters_in_their_order():
    # what checkpoints store: the dropouts add no keys, so older checkpoints load as they are
    model = WordLM(20, embedding_dim=6, hidden_size=8, num_layers=1)
    rnn = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    keys = ["embedding.weight"] + [f"rnn.{k}" for k in rnn] + ["decoder.weight", "decoder.bias"]
    assert list(model.state_dict()) == keys
    assert [name for name, _ in model.named_parameters()] == keys
    other = WordLM(20, embedding_dim=6, hidden_size=8, num_layers=1)
    other.load_state_dict({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
    x = ids(3, 2, 20)
    model.eval(), other.eval()
    np.testing.assert_array_equal(other(x)[0].detach().numpy(), model(x)[0].detach().numpy())
