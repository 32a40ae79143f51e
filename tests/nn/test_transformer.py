"""Attention and the Transformer: F.scaled_dot_product_attention,
F.multi_head_attention_forward / nn.MultiheadAttention, nn.TransformerEncoderLayer,
nn.TransformerDecoderLayer, their stacks and nn.Transformer.

scaled_dot_product_attention is checked against a float64 NumPy reference written here; the
layers against PyTorch's (when torch is installed; it is not a dependency) in float64, with
PyTorch's weights loaded through state_dict, so the parameter names, shapes and the order of
every operation must agree. Then: finite-difference gradients, both engines, the emulated
GPUs, the errors, and a few Adam steps that must lower a loss."""
import inspect
import math

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from gradcheck import gradcheck
from targets import assert_ops_match_the_cpu, host

# PyTorch warns when a bool key padding mask meets a float attention mask (both kinds are tested
# here) and when its encoder cannot use nested tensors (minifw has none)
pytestmark = [pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")]

# float64 against float64 computed in another order: a few ulp of O(1) values
TOL64 = dict(rtol=1e-10, atol=1e-12)


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def t64(shape, seed=0, requires_grad=False):
    return minifw.tensor(rand(shape, seed), dtype=minifw.float64, requires_grad=requires_grad)


def bools(shape, seed=0, p_true=0.7):
    return np.random.default_rng(seed).random(shape) < p_true


# ---- scaled_dot_product_attention against NumPy ------------------------------------------------

def sdpa_reference(q, k, v, mask=None, is_causal=False, scale=None):
    """softmax(q k^T * scale + mask) v in float64; a row with every score masked gives zeros."""
    scores = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if is_causal:
        mask = np.tril(np.ones(scores.shape[-2:], dtype=bool))
    if mask is not None and mask.dtype == bool:
        scores = np.where(mask, scores, -np.inf)
    elif mask is not None:
        scores = scores + mask
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0) @ v


def _row_masked_out(shape):
    mask = bools(shape, 3)
    mask[..., 1, :] = False  # a query that may attend to nothing
    return mask


SDPA_CASES = {  # id: (q, k, v shapes, mask maker, keyword arguments)
    "plain": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), None, {}),
    "bool_mask_broadcast": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7),
                            lambda: bools((4, 6), 1), {}),
    "bool_mask_full_shape": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5),
                             lambda: bools((2, 3, 4, 6), 2), {}),
    "bool_mask_row_masked_out": ((1, 2, 4, 3), (1, 2, 5, 3), (1, 2, 5, 3),
                                 lambda: _row_masked_out((1, 2, 4, 5)), {}),
    "float_mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), lambda: rand((2, 1, 4, 6), 4), {}),
    "float_mask_with_inf": ((2, 4, 5), (2, 6, 5), (2, 6, 2),
                            lambda: np.where(bools((4, 6), 5), 0.0, -np.inf), {}),
    "causal_square": ((2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3), None, dict(is_causal=True)),
    "causal_more_keys": ((1, 3, 4), (1, 6, 4), (1, 6, 4), None, dict(is_causal=True)),
    "causal_more_queries": ((2, 6, 4), (2, 3, 4), (2, 3, 4), None, dict(is_causal=True)),
    "scale": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), lambda: bools((4, 6), 6),
              dict(scale=0.37)),
    "odd_sizes_n1": ((1, 1, 7, 3), (1, 1, 5, 3), (1, 1, 5, 1), None, dict(scale=2.0)),
    "unbatched_2d": ((4, 5), (3, 5), (3, 2), lambda: bools((4, 3), 7), {}),
    "batch_dims_broadcast": ((2, 3, 4, 5), (1, 3, 6, 5), (2, 1, 6, 5), None, {}),
}


@pytest.mark.parametrize("case", SDPA_CASES)
def test_sdpa_equals_the_numpy_reference(case):
    qs, ks, vs, make_mask, kwargs = SDPA_CASES[case]
    q, k, v = rand(qs, 1), rand(ks, 2), rand(vs, 3)
    mask = None if make_mask is None else make_mask()
    got = F.scaled_dot_product_attention(
        minifw.tensor(q), minifw.tensor(k), minifw.tensor(v),
        attn_mask=None if mask is None else minifw.tensor(mask), **kwargs)
    assert got.shape == np.broadcast_shapes(qs[:-2], ks[:-2], vs[:-2]) + (qs[-2], vs[-1])
    np.testing.assert_allclose(got.numpy(), sdpa_reference(q, k, v, mask, **kwargs), **TOL64)
    assert np.isfinite(got.numpy()).all()


def test_sdpa_grouped_query_attention_repeats_each_key_head():
    q, k, v = rand((2, 6, 3, 4), 1), rand((2, 2, 5, 4), 2), rand((2, 2, 5, 3), 3)
    got = F.scaled_dot_product_attention(*map(minifw.tensor, (q, k, v)), enable_gqa=True)
    want = sdpa_reference(q, np.repeat(k, 3, axis=1), np.repeat(v, 3, axis=1))
    np.testing.assert_allclose(got.numpy(), want, **TOL64)


def test_sdpa_dropout_drops_attention_weights():
    q, k, v = t64((2, 4, 3), 1), t64((2, 5, 3), 2), t64((2, 5, 3), 3)
    np.testing.assert_array_equal(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy(), 0)
    minifw.manual_seed(0)
    dropped = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    assert not np.allclose(dropped, F.scaled_dot_product_attention(q, k, v).numpy())


def test_sdpa_equals_torchs():
    torch = pytest.importorskip("torch")
    q, k, v, m = rand((2, 3, 4, 5), 1), rand((2, 3, 6, 5), 2), rand((2, 3, 6, 7), 3), bools((4, 6))
    for kwargs in (dict(attn_mask=m), dict(attn_mask=rand((3, 4, 6))),
                   dict(is_causal=True, scale=0.5)):
        mine = F.scaled_dot_product_attention(
            *map(minifw.tensor, (q, k, v)),
            **{n: minifw.tensor(a) if isinstance(a, np.ndarray) else a for n, a in kwargs.items()})
        theirs = torch.nn.functional.scaled_dot_product_attention(
            *map(torch.tensor, (q, k, v)),
            **{n: torch.tensor(a) if isinstance(a, np.ndarray) else a for n, a in kwargs.items()})
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), **TOL64)


# ---- gradients against finite differences -------------------------------------------------------

@pytest.mark.parametrize("mask", ["none", "bool", "float", "causal", "row_masked_out",
                                  "float_row_masked_out"])
def test_sdpa_gradients(mask):
    q, k, v = t64((2, 3, 4), 1, True), t64((2, 5, 4), 2, True), t64((2, 5, 3), 3, True)
    kwargs = {"none": {}, "causal": dict(is_causal=True),
              "bool": dict(attn_mask=minifw.tensor(bools((3, 5), 4))),
              "float": dict(attn_mask=t64((2, 3, 5), 5, True)),
              "row_masked_out": dict(attn_mask=minifw.tensor(_row_masked_out((3, 5)))),
              "float_row_masked_out": dict(attn_mask=minifw.tensor(
                  np.where(_row_masked_out((3, 5)), 0.0, -np.inf)))}[mask]
    gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.8, **kwargs),
              [q, k, v])
    if mask.endswith("row_masked_out"):  # no gradient for the query with no key; no NaN anywhere
        assert np.isfinite(k.grad.numpy()).all()
        np.testing.assert_array_equal(q.grad.numpy()[:, 1], 0)


@pytest.mark.parametrize("variant", ["packed", "separate_kv_bias_zero_attn"])
def test_multi_head_attention_gradients(variant):
    e, heads = 4, 2
    if variant == "packed":
        m = nn.MultiheadAttention(e, heads, dtype=minifw.float64)
        kv = t64((3, 2, e), 2, True)
        inputs = [t64((2, 2, e), 1, True), kv, kv]
    else:
        m = nn.MultiheadAttention(e, heads, add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5,
                                  dtype=minifw.float64)
        inputs = [t64((2, 2, e), 1, True), t64((3, 2, 3), 2, True), t64((3, 2, 5), 3, True)]
    names = [n for n, _ in m.named_parameters()]
    params = [p.detach().clone().requires_grad_() for _, p in m.named_parameters()]
    padding = minifw.tensor([[False, False, True], [False, False, False]])
    mask = t64((2, 3), 4)

    def attention(q, k, v, *ps):
        for n, p in zip(names, ps):  # the parameters as plain inputs of the function
            owner, leaf = (m.out_proj, n.split(".")[1]) if n.startswith("out_proj.") else (m, n)
            owner._parameters[leaf] = p
        return m(q, k, v, key_padding_mask=padding, attn_mask=mask, average_attn_weights=False)

    gradcheck(attention, inputs + params)


# ---- nn.MultiheadAttention and the Transformer against PyTorch -----------------------------------

def from_torch(mine, theirs):
    """Load theirs' state_dict into mine after checking the keys and shapes are the same."""
    want = [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert [(k, tuple(v.shape)) for k, v in mine.state_dict().items()] == want
    mine.load_state_dict({k: minifw.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    return mine


def assert_same_outputs_and_gradients(torch, mine, theirs, inputs, masks=None, **kwargs):
    """mine(*inputs, **masks, **kwargs) equals theirs, and so do the gradients of a weighted sum
    of the first output with respect to the inputs and every parameter."""
    masks = masks or {}
    xs = [minifw.tensor(a, requires_grad=True) for a in inputs]
    ts = [torch.tensor(a, requires_grad=True) for a in inputs]
    out = mine(*xs, **{k: minifw.tensor(a) for k, a in masks.items()}, **kwargs)
    ref = theirs(*ts, **{k: torch.tensor(a) for k, a in masks.items()}, **kwargs)
    out, ref = (out, ref) if isinstance(out, minifw.Tensor) else (out[0], ref[0])
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), **TOL64)
    g = rand(tuple(out.shape), 9)
    out.backward(minifw.tensor(g))
    ref.backward(torch.tensor(g))
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), **TOL64)
    theirs_grads = dict(theirs.named_parameters())
    for name, p in mine.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_grads[name].grad.numpy(), **TOL64,
                                   err_msg=name)


MHA_CASES = {
    "packed": dict(),
    "bias_kv_zero_attn": dict(add_bias_kv=True, add_zero_attn=True),
    "kdim_vdim": dict(kdim=3, vdim=5),
    "no_bias_batch_first": dict(bias=False, batch_first=True),
}


@pytest.mark.parametrize("case", MHA_CASES)
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_multihead_attention_equals_torchs(case, need_weights, average):
    torch = pytest.importorskip("torch")
    kw = MHA_CASES[case]
    theirs = torch.nn.MultiheadAttention(6, 2, dtype=torch.float64, **kw)
    mine = from_torch(nn.MultiheadAttention(6, 2, dtype=minifw.float64, **kw), theirs)
    n, l, s = 3, 4, 5
    order = (lambda b, t, f: (b, t, f)) if kw.get("batch_first") else (lambda b, t, f: (t, b, f))
    inputs = [rand(order(n, l, 6), 1), rand(order(n, s, kw.get("kdim", 6)), 2),
              rand(order(n, s, kw.get("vdim", 6)), 3)]
    padding = bools((n, s), 4, p_true=0.3)
    padding[:, 0] = False  # every query keeps a key (PyTorch's weights are NaN otherwise)
    masks = dict(key_padding_mask=padding, attn_mask=rand((n * 2, l, s), 5))
    assert_same_outputs_and_gradients(torch, mine, theirs, inputs, masks, need_weights=need_weights,
                                      average_attn_weights=average)
    xs = [minifw.tensor(a) for a in inputs]
    got = mine(*xs, key_padding_mask=minifw.tensor(padding), attn_mask=minifw.tensor(bools((l, s))),
               need_weights=need_weights, average_attn_weights=average)
    want = theirs(*map(torch.tensor, inputs), key_padding_mask=torch.tensor(padding),
                  attn_mask=torch.tensor(bools((l, s))), need_weights=need_weights,
                  average_attn_weights=average)
    np.testing.assert_allclose(got[0].detach().numpy(), want[0].detach().numpy(), **TOL64)
    if need_weights:
        assert got[1].shape == ((n, l, s + kw.get("add_bias_kv", 0) + kw.get("add_zero_attn", 0))
                                if average else (n, 2) + tuple(want[1].shape[2:]))
        np.testing.assert_allclose(got[1].detach().numpy(), want[1].detach().numpy(), **TOL64)
    else:
        assert got[1] is None


def test_unbatched_multihead_attention_equals_torchs():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.MultiheadAttention(4, 2, dtype=torch.float64, batch_first=True)
    mine = from_torch(nn.MultiheadAttention(4, 2, dtype=minifw.float64, batch_first=True), theirs)
    q, kv = rand((3, 4), 1), rand((5, 4), 2)
    masks = dict(key_padding_mask=np.array([False, True, False, False, True]),
                 attn_mask=rand((2, 3, 5), 3))
    got = mine(minifw.tensor(q), minifw.tensor(kv), minifw.tensor(kv),
               **{k: minifw.tensor(a) for k, a in masks.items()}, average_attn_weights=False)
    want = theirs(torch.tensor(q), torch.tensor(kv), torch.tensor(kv),
                  **{k: torch.tensor(a) for k, a in masks.items()}, average_attn_weights=False)
    assert got[0].shape == (3, 4) and got[1].shape == (2, 3, 5)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL64)


def test_multi_head_attention_forward_with_static_keys_equals_torchs():
    torch = pytest.importorskip("torch")
    e, heads, n = 4, 2, 3
    q, w_in, b_in, w_out, b_out = rand((2, n, e), 1), rand((3 * e, e), 2), rand(3 * e, 3), \
        rand((e, e), 4), rand(e, 5)
    static_k, static_v = rand((n * heads, 5, e // heads), 6), rand((n * heads, 5, e // heads), 7)
    args = lambda lib: [lib(q), lib(q), lib(q), e, heads, lib(w_in), lib(b_in), None, None, True,
                        0.0, lib(w_out), lib(b_out)]
    kwargs = lambda lib: dict(static_k=lib(static_k), static_v=lib(static_v),
                              key_padding_mask=lib(np.array([[False] * 4 + [True]] * n)))
    got = F.multi_head_attention_forward(*args(minifw.tensor), **kwargs(minifw.tensor))
    want = torch.nn.functional.multi_head_attention_forward(*args(torch.tensor),
                                                            **kwargs(torch.tensor))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), **TOL64)


def test_unbatched_encoder_layer_equals_a_batch_of_one():
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, dtype=minifw.float64)
    x, padding = t64((3, 4), 1), minifw.tensor([False, True, False])
    np.testing.assert_allclose(layer(x, src_key_padding_mask=padding).detach().numpy(),
                               layer(x.unsqueeze(1), src_key_padding_mask=padding.unsqueeze(0))
                               .detach().numpy()[:, 0], **TOL64)


LAYER_CASES = [pytest.param(norm_first, activation, batch_first,
                            id=f"{'pre' if norm_first else 'post'}norm-{activation}-"
                               f"{'batch_first' if batch_first else 'seq_first'}")
               for norm_first, activation, batch_first in
               [(False, "relu", False), (True, "gelu", True), (False, "gelu", True),
                (True, "relu", False)]]


@pytest.mark.parametrize("norm_first,activation,batch_first", LAYER_CASES)
def test_encoder_layer_equals_torchs(norm_first, activation, batch_first):
    torch = pytest.importorskip("torch")
    kw = dict(dim_feedforward=7, dropout=0.0, activation=activation, norm_first=norm_first,
              batch_first=batch_first)
    theirs = torch.nn.TransformerEncoderLayer(6, 2, dtype=torch.float64, **kw)
    mine = from_torch(nn.TransformerEncoderLayer(6, 2, dtype=minifw.float64, **kw), theirs)
    n, l = 2, 4
    src = rand((n, l, 6) if batch_first else (l, n, 6), 1)
    causal = nn.Transformer.generate_square_subsequent_mask(l, dtype=minifw.float64).numpy()
    padding = np.array([[False] * l, [False, False, True, True]])
    assert_same_outputs_and_gradients(torch, mine, theirs, [src],
                                      dict(src_mask=causal, src_key_padding_mask=padding))


@pytest.mark.parametrize("norm_first,activation,batch_first", LAYER_CASES[:2])
def test_decoder_layer_equals_torchs(norm_first, activation, batch_first):
    torch = pytest.importorskip("torch")
    kw = dict(dim_feedforward=7, dropout=0.0, activation=activation, norm_first=norm_first,
              batch_first=batch_first)
    theirs = torch.nn.TransformerDecoderLayer(6, 2, dtype=torch.float64, **kw)
    mine = from_torch(nn.TransformerDecoderLayer(6, 2, dtype=minifw.float64, **kw), theirs)
    n, l, s = 2, 4, 3
    tgt = rand((n, l, 6) if batch_first else (l, n, 6), 1)
    memory = rand((n, s, 6) if batch_first else (s, n, 6), 2)
    masks = dict(tgt_mask=bools((l, l), 3) | np.eye(l, dtype=bool), memory_mask=rand((l, s), 4),
                 tgt_key_padding_mask=np.array([[False] * l, [False, True, False, True]]),
                 memory_key_padding_mask=np.array([[False, True, False], [False] * s]))
    assert_same_outputs_and_gradients(torch, mine, theirs, [tgt, memory], masks)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_equals_torchs(batch_first):
    torch = pytest.importorskip("torch")
    kw = dict(d_model=4, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=5,
              batch_first=batch_first)
    theirs = torch.nn.Transformer(**kw, dtype=torch.float64).eval()  # dropout 0.1, off in eval
    mine = from_torch(nn.Transformer(**kw, dtype=minifw.float64), theirs).eval()
    n, s, l = 2, 5, 3
    src = rand((n, s, 4) if batch_first else (s, n, 4), 1)
    tgt = rand((n, l, 4) if batch_first else (l, n, 4), 2)
    padding = np.array([[False] * s, [False, False, False, True, True]])
    masks = dict(tgt_mask=nn.Transformer.generate_square_subsequent_mask(l, dtype=minifw.float64)
                 .numpy(), src_key_padding_mask=padding, memory_key_padding_mask=padding)
    assert_same_outputs_and_gradients(torch, mine, theirs, [src, tgt], masks)


def test_encoder_stack_equals_torchs_in_eval_with_dropout():
    torch = pytest.importorskip("torch")
    layer = torch.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.3, dtype=torch.float64)
    theirs = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(4, dtype=torch.float64),
                                         enable_nested_tensor=False).eval()
    mine = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 6, dropout=0.3,
                                                            dtype=minifw.float64),
                                 2, norm=nn.LayerNorm(4, dtype=minifw.float64))
    from_torch(mine, theirs).eval()
    x = rand((3, 2, 4), 1)
    mask = nn.Transformer.generate_square_subsequent_mask(3)  # float32, as PyTorch's default
    with minifw.no_grad():
        got = mine(minifw.tensor(x), mask=mask)
    with torch.no_grad():
        want = theirs(torch.tensor(x), mask=torch.tensor(mask.numpy()))
    np.testing.assert_allclose(got.numpy(), want.numpy(), **TOL64)
    mine.train()
    minifw.manual_seed(0)
    assert not np.allclose(mine(minifw.tensor(x)).detach().numpy(), got.numpy())


# ---- parameters, names, initialization, signatures --------------------------------------------

def test_state_dict_keys_and_shapes_without_torch():
    m = nn.MultiheadAttention(6, 3, add_bias_kv=True)
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == [
        ("in_proj_weight", (18, 6)), ("in_proj_bias", (18,)), ("bias_k", (1, 1, 6)),
        ("bias_v", (1, 1, 6)), ("out_proj.weight", (6, 6)), ("out_proj.bias", (6,))]
    m = nn.MultiheadAttention(6, 3, kdim=2, vdim=5, bias=False)
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == [
        ("q_proj_weight", (6, 6)), ("k_proj_weight", (6, 2)), ("v_proj_weight", (6, 5)),
        ("out_proj.weight", (6, 6))]
    layer = nn.TransformerDecoderLayer(4, 2, 8)
    assert [k for k in layer.state_dict() if not k.startswith(("self_attn", "multihead_attn"))] == [
        "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight",
        "norm1.bias", "norm2.weight", "norm2.bias", "norm3.weight", "norm3.bias"]
    t = nn.Transformer(4, 2, 2, 3, 8)
    keys = list(t.state_dict())
    assert "encoder.layers.1.self_attn.in_proj_weight" in keys and "encoder.norm.bias" in keys
    assert "decoder.layers.2.multihead_attn.out_proj.weight" in keys
    assert "decoder.layers.3.norm1.weight" not in keys


def test_initialization_is_pytorchs():
    minifw.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, add_bias_kv=True)
    w = m.in_proj_weight.detach().numpy()
    bound = math.sqrt(6 / (8 + 24))  # Glorot-uniform of the (3E, E) packed weight
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    np.testing.assert_array_equal(m.in_proj_bias.detach().numpy(), 0)
    np.testing.assert_array_equal(m.out_proj.bias.detach().numpy(), 0)
    assert np.abs(m.out_proj.weight.detach().numpy()).max() <= 1 / math.sqrt(8)  # Linear's
    assert m.bias_k.detach().numpy().std() > 0
    t = nn.Transformer(8, 2, 1, 1, 16)
    w = t.encoder.layers[0].linear1.weight.detach().numpy()  # re-initialized Glorot-uniform
    assert np.abs(w).max() <= math.sqrt(6 / 24) and np.abs(w).max() > 1 / math.sqrt(8)
    layer = nn.TransformerEncoderLayer(4, 2, 8)
    stack = nn.TransformerEncoder(layer, 2).layers
    assert stack[0] is not layer and stack[0] is not stack[1]  # deep copies
    assert stack[0].linear1.weight is not stack[1].linear1.weight


def test_square_subsequent_mask():
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype == minifw.float32
    np.testing.assert_array_equal(mask.numpy(), [[0, -np.inf, -np.inf], [0, 0, -np.inf],
                                                 [0, 0, 0]])
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=minifw.float64).dtype == \
        minifw.float64


@pytest.mark.parametrize("name", ["MultiheadAttention", "TransformerEncoderLayer",
                                  "TransformerDecoderLayer", "TransformerEncoder",
                                  "TransformerDecoder", "Transformer"])
def test_signatures_and_reprs_are_torchs(name):
    torch = pytest.importorskip("torch")
    for method in ("__init__", "forward"):
        mine = inspect.signature(getattr(getattr(nn, name), method)).parameters
        theirs = inspect.signature(getattr(getattr(torch.nn, name), method)).parameters
        assert list(mine) == list(theirs), (name, method)
        for p in mine:
            if not callable(theirs[p].default):
                assert mine[p].default == theirs[p].default, (name, method, p)
    assert repr(nn.MultiheadAttention(4, 2)) == repr(torch.nn.MultiheadAttention(4, 2))
    assert repr(nn.TransformerEncoderLayer(4, 2, 8)) == \
        repr(torch.nn.TransformerEncoderLayer(4, 2, 8))
    mine = inspect.signature(F.multi_head_attention_forward).parameters
    theirs = inspect.signature(torch.nn.functional.multi_head_attention_forward).parameters
    assert [(p, mine[p].default) for p in mine] == [(p, theirs[p].default) for p in theirs]


def test_sdpa_signature_is_pytorchs():  # PyTorch's is a builtin without an inspectable one
    assert str(inspect.signature(F.scaled_dot_product_attention)) == (
        "(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, "
        "enable_gqa=False)")


# ---- engines, devices, training -----------------------------------------------------------------

def _encoder_step(x, mask, padding):
    minifw.manual_seed(3)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu",
                                       dtype=minifw.float64)
    out = layer(x, src_mask=mask, src_key_padding_mask=padding)
    out.backward(minifw.tensor(rand(tuple(out.shape), 8)))
    return [out.detach().numpy(), x.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()]


def test_both_engines_give_the_same_encoder_layer():
    mask, padding = t64((3, 3), 2), minifw.tensor([[False, False, True], [False, False, False]])
    results = {}
    for engine in ("primitives", "caffe"):
        with minifw.engine(engine):
            results[engine] = _encoder_step(t64((3, 2, 4), 1, True), mask, padding)
    for got, want in zip(results["caffe"], results["primitives"]):
        np.testing.assert_allclose(got, want, **TOL64)


ON_DEVICES = {  # name: (inputs, operation); CPU tensors, moved to the device under test
    "sdpa_bool_mask": (lambda: [minifw.randn(2, 3, 4, generator=minifw.Generator().manual_seed(1)),
                                minifw.randn(2, 5, 4, generator=minifw.Generator().manual_seed(2)),
                                minifw.randn(2, 5, 3, generator=minifw.Generator().manual_seed(3)),
                                minifw.tensor(_row_masked_out((3, 5)))],
                       lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)),
    "encoder_layer": (lambda: [minifw.randn(3, 2, 4, generator=minifw.Generator().manual_seed(4)),
                               minifw.tensor([[False, True, False], [False, False, False]])],
                      lambda x, padding: _seeded_layer(x.device)(
                          x, src_key_padding_mask=padding,
                          src_mask=nn.Transformer.generate_square_subsequent_mask(3, x.device))),
}


def _seeded_layer(device):
    minifw.manual_seed(5)
    return nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0).to(device)


@pytest.mark.parametrize("name", ON_DEVICES)
def test_attention_on_the_device_equals_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *ON_DEVICES[name], rtol=1e-5, atol=1e-5, what=name)


def test_multihead_attention_on_the_device(dev):
    m = nn.MultiheadAttention(4, 2).to(dev)
    x = minifw.randn(3, 2, 4).to(dev)
    out, weights = m(x, x, x)
    assert out.device == dev and weights.device == dev and weights.shape == (2, 3, 3)
    np.testing.assert_allclose(host(weights.detach()._data).sum(-1), 1, rtol=1e-6)


def test_a_small_encoder_learns():
    minifw.manual_seed(0)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                               batch_first=True), 2)
    head = nn.Linear(8, 1)
    params = list(encoder.parameters()) + list(head.parameters())
    optimizer = minifw.optim.Adam(params, lr=1e-2)
    x = minifw.randn(4, 5, 8, generator=minifw.Generator().manual_seed(1))
    target = x.sum(dim=(1, 2), keepdim=True).reshape(4, 1) * 0.1
    losses = []
    for _ in range(8):
        optimizer.zero_grad()
        loss = F.mse_loss(head(encoder(x).mean(dim=1)), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


# ---- errors -----------------------------------------------------------------------------------

def _q():
    return t64((2, 3, 4), 1)


ERRORS = [  # (id, call, exception, words the message must hold)
    ("heads_divide", lambda: nn.MultiheadAttention(6, 4), ValueError,
     ["embed_dim (6)", "divisible by num_heads (4)"]),
    ("num_heads_positive", lambda: nn.MultiheadAttention(6, 0), ValueError, ["num_heads", "got 0"]),
    ("dropout_range", lambda: nn.MultiheadAttention(4, 2, dropout=1.5), ValueError, ["p", "1.5"]),
    ("sdpa_mask_dtype", lambda: F.scaled_dot_product_attention(
        _q(), _q(), _q(), attn_mask=minifw.ones(3, 3, dtype=minifw.int64)), TypeError,
     ["attn_mask", "bool", "int64"]),
    ("sdpa_float_mask_dtype", lambda: F.scaled_dot_product_attention(
        _q(), _q(), _q(), attn_mask=minifw.zeros(3, 3)), TypeError, ["attn_mask", "float32"]),
    ("sdpa_mask_shape", lambda: F.scaled_dot_product_attention(
        _q(), _q(), _q(), attn_mask=minifw.ones(3, 4, dtype=minifw.bool)), ValueError,
     ["attn_mask", "(2, 3, 3)", "(3, 4)"]),
    ("sdpa_feature_mismatch", lambda: F.scaled_dot_product_attention(_q(), t64((2, 3, 5)), _q()),
     ValueError, ["key", "E = 4", "(2, 3, 5)"]),
    ("sdpa_length_mismatch", lambda: F.scaled_dot_product_attention(_q(), _q(), t64((2, 2, 4))),
     ValueError, ["key and value", "(2, 3, 4)", "(2, 2, 4)"]),
    ("sdpa_mask_and_causal", lambda: F.scaled_dot_product_attention(
        _q(), _q(), _q(), attn_mask=minifw.ones(3, 3, dtype=minifw.bool), is_causal=True),
     ValueError, ["attn_mask", "is_causal"]),
    ("sdpa_dtypes", lambda: F.scaled_dot_product_attention(_q(), _q().float(), _q()), TypeError,
     ["key", "float64", "float32"]),
    ("sdpa_heads_without_gqa", lambda: F.scaled_dot_product_attention(
        t64((4, 3, 2)), t64((2, 3, 2)), t64((2, 3, 2))), ValueError, ["broadcast", "enable_gqa"]),
    ("sdpa_gqa_heads", lambda: F.scaled_dot_product_attention(
        t64((1, 3, 3, 2)), t64((1, 2, 3, 2)), t64((1, 2, 3, 2)), enable_gqa=True), ValueError,
     ["heads", "dividing query's 3", "got 2 and 2"]),
    ("sdpa_dropout", lambda: F.scaled_dot_product_attention(_q(), _q(), _q(), dropout_p=-0.1),
     ValueError, ["dropout_p", "-0.1"]),
    ("mha_key_padding_shape", lambda: nn.MultiheadAttention(4, 2, dtype=minifw.float64)(
        _q(), _q(), _q(), key_padding_mask=minifw.ones(3, 3, dtype=minifw.bool)), ValueError,
     ["key_padding_mask", "(3, 2)", "(3, 3)"]),
    ("mha_attn_mask_shape", lambda: nn.MultiheadAttention(4, 2, dtype=minifw.float64)(
        _q(), _q(), _q(), attn_mask=minifw.ones(2, 3, 3, dtype=minifw.bool)), ValueError,
     ["attn_mask", "(6, 2, 2)", "(2, 3, 3)"]),
    ("mha_mask_dtype", lambda: nn.MultiheadAttention(4, 2, dtype=minifw.float64)(
        _q(), _q(), _q(), key_padding_mask=minifw.zeros(3, 2, dtype=minifw.int64)), TypeError,
     ["key_padding_mask", "bool", "int64"]),
    ("mha_embed_dim", lambda: nn.MultiheadAttention(6, 2, dtype=minifw.float64)(_q(), _q(), _q()),
     ValueError, ["embed_dim_to_check = 6", "(2, 3, 4)"]),
    ("mha_kdim", lambda: nn.MultiheadAttention(4, 2, kdim=3, vdim=3, dtype=minifw.float64)(
        _q(), _q(), _q()), ValueError, ["k_proj_weight", "(4, 3)", "(4, 4)"]),
    ("mha_rank", lambda: nn.MultiheadAttention(4, 2, dtype=minifw.float64)(
        _q(), t64((3, 4)), t64((3, 4))), ValueError, ["key", "3-D like query", "(3, 4)"]),
    ("mha_causal_needs_mask", lambda: nn.MultiheadAttention(4, 2, dtype=minifw.float64)(
        _q(), _q(), _q(), is_causal=True), ValueError, ["is_causal", "attn_mask"]),
    ("activation", lambda: nn.TransformerEncoderLayer(4, 2, activation="tanh"), ValueError,
     ["activation", "'relu', 'gelu'", "'tanh'"]),
    ("num_layers", lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2), 0), ValueError,
     ["num_layers", "got 0"]),
    ("transformer_batch", lambda: nn.Transformer(4, 2, 1, 1, 8, dtype=minifw.float64)(
        t64((3, 2, 4)), t64((3, 5, 4))), ValueError, ["batch size", "(3, 2, 4)", "(3, 5, 4)"]),
    ("transformer_d_model", lambda: nn.Transformer(4, 2, 1, 1, 8, dtype=minifw.float64)(
        t64((3, 2, 4)), t64((3, 2, 5))), ValueError, ["d_model = 4", "(3, 2, 5)"]),
]


@pytest.mark.parametrize("call,exception,words", [pytest.param(*e[1:], id=e[0]) for e in ERRORS])
def test_errors_name_the_argument_and_values(call, exception, words):
    with pytest.raises(exception) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))
