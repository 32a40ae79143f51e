"""1-D convolution and pooling: conv1d / Conv1d, conv_transpose1d / ConvTranspose1d,
max_pool1d / MaxPool1d, avg_pool1d / AvgPool1d, adaptive_avg_pool1d / AdaptiveAvgPool1d and
adaptive_max_pool1d / AdaptiveMaxPool1d.

Values against naive float64 loops written here (not the 2-D code the 1-D forms run on),
gradients against finite differences, both engines, the devices' results against the CPU's,
PyTorch's values, gradients, reprs, signatures and state dicts (when torch is installed; it
is not a dependency), and errors that name the 1-D function and the argument."""
import inspect
import math

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from gradcheck import gradcheck
from targets import assert_ops_match_the_cpu, host

# The references sum in another order than the primitives: a few ulp of float64.
TOL64 = dict(rtol=1e-12, atol=1e-13)


def rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


def t64(shape, seed=0, requires_grad=False):
    return minifw.tensor(rand(shape, seed), dtype=minifw.float64, requires_grad=requires_grad)


def val(t):
    return t.detach().numpy()


# ---- naive references: one output element at a time ------------------------------------------

def _batched(x):
    return (x[None], lambda y: y[0]) if x.ndim == 2 else (x, lambda y: y)


def ref_conv1d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """padding: an int, 'valid', 'same' (an odd total's extra on the right)."""
    x, back = _batched(x)
    n, c, length = x.shape
    k, cg, kl = w.shape
    if padding == "valid":
        padding = 0
    if padding == "same":
        total = dilation * (kl - 1)
        left, right = total // 2, total - total // 2
    else:
        left = right = padding
    xp = np.zeros((n, c, length + left + right))
    xp[:, :, left:left + length] = x
    lout = (xp.shape[2] - dilation * (kl - 1) - 1) // stride + 1
    y = np.zeros((n, k, lout))
    kg = k // groups
    for i in range(n):
        for o in range(k):
            g = o // kg
            for j in range(lout):
                s = 0.0
                for ci in range(cg):
                    for t in range(kl):
                        s += xp[i, g * cg + ci, j * stride + t * dilation] * w[o, ci, t]
                y[i, o, j] = s + (0.0 if b is None else b[o])
    return back(y)


def ref_conv_transpose1d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1,
                         dilation=1):
    """Each input element scatters its kernel into the output (the transposed convolution's
    definition), then padding is cropped from both ends."""
    x, back = _batched(x)
    n, c_in, length = x.shape
    _, og, kl = w.shape
    full = (length - 1) * stride + dilation * (kl - 1) + 1 + output_padding
    y = np.zeros((n, og * groups, full))
    cg = c_in // groups
    for i in range(n):
        for ci in range(c_in):
            g = ci // cg
            for j in range(length):
                for o in range(og):
                    for t in range(kl):
                        y[i, g * og + o, j * stride + t * dilation] += x[i, ci, j] * w[ci, o, t]
    y = y[:, :, padding:full - padding]
    if b is not None:
        y = y + b[None, :, None]
    return back(y)


def _pool_length(length, k, s, p, ceil_mode, d=1):
    span = length + 2 * p - d * (k - 1) - 1
    lout = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (lout - 1) * s >= length + p:  # the last window must start inside
        lout -= 1
    return lout


def ref_max_pool1d(x, k, s=None, p=0, ceil_mode=False, d=1):
    """(values, positions along L of the first maximum of each window; its taps d apart)."""
    x, back = _batched(x)
    s = k if s is None else s
    n, c, length = x.shape
    lout = _pool_length(length, k, s, p, ceil_mode, d)
    y, idx = np.zeros((n, c, lout)), np.zeros((n, c, lout), dtype=np.int64)
    for i in range(n):
        for ch in range(c):
            for j in range(lout):
                best, arg = -math.inf, -1
                for pos in range(j * s - p, min(j * s - p + d * (k - 1) + 1, length), d):
                    if pos >= 0 and x[i, ch, pos] > best:
                        best, arg = x[i, ch, pos], pos
                y[i, ch, j], idx[i, ch, j] = best, arg
    return back(y), back(idx)


def ref_avg_pool1d(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True):
    x, back = _batched(x)
    s = k if s is None else s
    n, c, length = x.shape
    lout = _pool_length(length, k, s, p, ceil_mode)
    y = np.zeros((n, c, lout))
    for j in range(lout):
        start = j * s - p
        end = min(start + k, length + p)  # the window as far as the padding reaches
        lo, hi = max(start, 0), min(end, length)
        divisor = end - start if count_include_pad else hi - lo
        y[:, :, j] = x[:, :, lo:hi].sum(axis=2) / divisor
    return back(y)


def ref_adaptive_pool1d(x, out, op):
    """Window j spans [floor(j * L / out), ceil((j + 1) * L / out)). op 'avg' or 'max';
    'max' also gives the positions."""
    x, back = _batched(x)
    length = x.shape[2]
    y, idx = np.zeros(x.shape[:2] + (out,)), np.zeros(x.shape[:2] + (out,), dtype=np.int64)
    for j in range(out):
        lo, hi = (j * length) // out, -(-((j + 1) * length) // out)
        window = x[:, :, lo:hi]
        if op == "avg":
            y[:, :, j] = window.mean(axis=2)
        else:
            y[:, :, j], idx[:, :, j] = window.max(axis=2), lo + window.argmax(axis=2)
    return (back(y), back(idx)) if op == "max" else back(y)


# ---- values against the references ------------------------------------------------------------

CONV_CASES = [  # (input shape, weight shape, with bias, kwargs)
    ((2, 3, 9), (4, 3, 3), True, {}),
    ((1, 2, 7), (3, 2, 1), False, {}),
    ((2, 4, 11), (6, 2, 3), True, dict(stride=2, padding=1, groups=2)),
    ((1, 3, 10), (2, 3, 4), True, dict(padding="same")),
    ((2, 2, 9), (2, 2, 3), False, dict(padding="same", dilation=2)),
    ((2, 2, 8), (4, 1, 2), True, dict(padding="same", groups=2)),
    ((1, 3, 13), (5, 3, 3), True, dict(stride=3, padding=2, dilation=3)),
    ((6, 7), (4, 3, 2), True, dict(padding=(1,), stride=(2,), groups=2)),  # unbatched
    ((2, 7), (3, 2, 7), False, dict(padding="valid")),
]


@pytest.mark.parametrize("xs, ws, with_bias, kw", CONV_CASES, ids=[f"conv{i}" for i in range(len(CONV_CASES))])
def test_conv1d_equals_the_loops(xs, ws, with_bias, kw):
    x, w = rand(xs, 1), rand(ws, 2)
    b = rand(ws[0], 3) if with_bias else None
    got = F.conv1d(minifw.tensor(x), minifw.tensor(w), None if b is None else minifw.tensor(b), **kw)
    np.testing.assert_allclose(val(got), ref_conv1d(x, w, b, **{k: v[0] if isinstance(v, tuple) else v
                                                               for k, v in kw.items()}), **TOL64)


CONVT_CASES = [  # (input shape, weight shape, with bias, kwargs)
    ((2, 3, 5), (3, 2, 3), True, {}),
    ((1, 4, 6), (4, 3, 3), False, dict(stride=2, padding=1, output_padding=1, groups=2)),
    ((2, 2, 4), (2, 3, 2), True, dict(stride=3, dilation=2, padding=2)),
    ((1, 2, 7), (2, 1, 3), True, dict(stride=2, output_padding=1, dilation=2)),
    ((4, 5), (4, 1, 4), True, dict(stride=2, groups=4)),  # unbatched
    ((2, 1, 1), (1, 2, 1), False, {}),
]


@pytest.mark.parametrize("xs, ws, with_bias, kw", CONVT_CASES,
                         ids=[f"convT{i}" for i in range(len(CONVT_CASES))])
def test_conv_transpose1d_equals_the_loops(xs, ws, with_bias, kw):
    x, w = rand(xs, 1), rand(ws, 2)
    groups = kw.get("groups", 1)
    b = rand(ws[1] * groups, 3) if with_bias else None
    got = F.conv_transpose1d(minifw.tensor(x), minifw.tensor(w),
                             None if b is None else minifw.tensor(b), **kw)
    np.testing.assert_allclose(val(got), ref_conv_transpose1d(x, w, b, **kw), **TOL64)


POOL_CASES = [  # (input shape, kernel_size, stride, padding, ceil_mode)
    ((2, 3, 9), 3, None, 0, False),
    ((1, 2, 10), 3, 2, 1, False),
    ((2, 2, 10), 3, 2, 1, True),
    ((1, 1, 8), 2, 3, 1, True),
    ((2, 3, 7), 4, 1, 2, False),
    ((1, 2, 5), 5, None, 0, False),
    ((3, 11), 2, 2, 0, True),  # unbatched
    ((2, 1, 6), 4, 3, 2, True),
]
POOL_IDS = [f"pool{i}" for i in range(len(POOL_CASES))]


@pytest.mark.parametrize("xs, k, s, p, ceil_mode", POOL_CASES, ids=POOL_IDS)
def test_max_pool1d_and_its_indices_equal_the_loops(xs, k, s, p, ceil_mode):
    x = rand(xs, 4)
    y, idx = F.max_pool1d(minifw.tensor(x), k, s, p, ceil_mode=ceil_mode, return_indices=True)
    want, want_idx = ref_max_pool1d(x, k, s, p, ceil_mode)
    np.testing.assert_array_equal(val(y), want)
    assert idx.dtype == minifw.int64
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    np.testing.assert_array_equal(val(F.max_pool1d(minifw.tensor(x), k, s, p, ceil_mode=ceil_mode)), want)


DILATED_POOL_CASES = [  # (input shape, kernel_size, stride, padding, ceil_mode, dilation)
    ((2, 3, 11), 3, 1, 0, False, 2),
    ((1, 2, 12), 3, 2, 1, True, 3),
    ((2, 2, 9), 2, 2, 1, False, 2),  # neighbouring windows share taps
    ((3, 3), 2, 1, 1, False, 3),  # unbatched; the dilation exceeds the input
    ((1, 1, 10), 4, 3, 1, True, 4),  # the last window overhangs the padded input
]


@pytest.mark.parametrize("xs, k, s, p, ceil_mode, d", DILATED_POOL_CASES,
                         ids=[f"dilated{i}" for i in range(len(DILATED_POOL_CASES))])
def test_dilated_max_pool1d_equals_the_loops(xs, k, s, p, ceil_mode, d):
    x = rand(xs, 4)
    y, idx = F.max_pool1d(minifw.tensor(x), k, s, p, d, ceil_mode, return_indices=True)
    want, want_idx = ref_max_pool1d(x, k, s, p, ceil_mode, d)
    np.testing.assert_array_equal(val(y), want)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    np.testing.assert_array_equal(val(nn.MaxPool1d(k, s, p, d, ceil_mode=ceil_mode)(minifw.tensor(x))), want)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("xs, k, s, p, ceil_mode", POOL_CASES, ids=POOL_IDS)
def test_avg_pool1d_equals_the_loops(xs, k, s, p, ceil_mode, count_include_pad):
    x = rand(xs, 5)
    got = F.avg_pool1d(minifw.tensor(x), k, s, p, ceil_mode, count_include_pad)
    np.testing.assert_allclose(val(got), ref_avg_pool1d(x, k, s, p, ceil_mode, count_include_pad),
                               **TOL64)


@pytest.mark.parametrize("xs, out", [((2, 3, 10), 4), ((1, 2, 7), 7), ((2, 1, 5), 8), ((3, 9), 2),
                                     ((2, 2, 13), (5,)), ((1, 1, 6), 1)])
def test_adaptive_pools_equal_the_loops(xs, out):
    x = rand(xs, 6)
    size = out[0] if isinstance(out, tuple) else out
    np.testing.assert_allclose(val(F.adaptive_avg_pool1d(minifw.tensor(x), out)),
                               ref_adaptive_pool1d(x, size, "avg"), **TOL64)
    y, idx = F.adaptive_max_pool1d(minifw.tensor(x), out, return_indices=True)
    want, want_idx = ref_adaptive_pool1d(x, size, "max")
    np.testing.assert_array_equal(val(y), want)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    np.testing.assert_array_equal(val(F.adaptive_max_pool1d(minifw.tensor(x), out)), want)


def test_adaptive_pools_take_an_empty_batch():
    x = minifw.zeros(0, 3, 5, dtype=minifw.float64)
    assert F.adaptive_avg_pool1d(x, 2).shape == (0, 3, 2)
    assert F.adaptive_max_pool1d(x, 2).shape == (0, 3, 2)


# ---- gradients (float64 finite differences) ----------------------------------------------------

def _grad_inputs(*shapes):
    return [t64(s, seed=i + 10, requires_grad=True) for i, s in enumerate(shapes)]


GRADS = {  # name: (function, input shapes); distinct inputs, so maxima are unique
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
               [(2, 4, 9), (4, 2, 3), (4,)]),
    "conv1d_same_unbatched": (lambda x, w: F.conv1d(x, w, padding="same"), [(2, 6), (3, 2, 4)]),
    "conv_transpose1d": (lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1,
                                                            output_padding=1, groups=2, dilation=2),
                         [(2, 4, 5), (4, 1, 3), (2,)]),
    "conv_transpose1d_unbatched": (lambda x, w: F.conv_transpose1d(x, w, stride=3), [(2, 4), (2, 3, 2)]),
    "max_pool1d": (lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), [(2, 3, 10)]),
    "max_pool1d_overlapping": (lambda x: F.max_pool1d(x, 4, 1, 2)[0] * 1.0, [(2, 9)]),
    "max_pool1d_dilated": (lambda x: F.max_pool1d(x, 3, 2, 1, dilation=2, ceil_mode=True), [(2, 3, 11)]),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True), [(2, 3, 10)]),
    "avg_pool1d_exclude_pad": (lambda x: F.avg_pool1d(x, 4, 3, 2, True, False), [(3, 8)]),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 4), [(2, 2, 7)]),
    "adaptive_max_pool1d": (lambda x: F.adaptive_max_pool1d(x, 3), [(2, 2, 8)]),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradients_match_finite_differences(name):
    fn, shapes = GRADS[name]
    assert gradcheck(fn, _grad_inputs(*shapes))


def test_gradcheck_can_fail():
    """A gradient missing max_pool1d's part is caught (the checks above are not vacuous)."""
    x = t64((1, 2, 6), requires_grad=True)
    with pytest.raises(AssertionError, match="gradient elements differ"):
        gradcheck(lambda x: F.avg_pool1d(x, 2) + F.max_pool1d(x.detach(), 2), [x])


# ---- both engines -------------------------------------------------------------------------------

ENGINE_OPS = {  # name: (function, input shapes)
    "conv1d": GRADS["conv1d"],
    "conv_transpose1d": GRADS["conv_transpose1d"],
    "max_pool1d": (lambda x: F.max_pool1d(x, 3, 2, 1), [(2, 3, 9)]),
    "max_pool1d_dilated": (lambda x: F.max_pool1d(x, 2, 2, 1, dilation=3), [(2, 3, 9)]),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), [(2, 3, 9)]),
    "adaptive_max_pool1d": GRADS["adaptive_max_pool1d"],
}


@pytest.mark.parametrize("engine", ["primitives", "caffe"])
@pytest.mark.parametrize("name", ENGINE_OPS)
def test_either_engine_gives_the_same_values_and_gradients(engine, name):
    fn, shapes = ENGINE_OPS[name]
    results = {}
    for which in ("primitives", engine):
        inputs = _grad_inputs(*shapes)
        with minifw.engine(which):
            y = fn(*inputs)
            (y * t64(y.shape, 20)).sum().backward()
        results[which] = [val(y)] + [t.grad.numpy() for t in inputs]
    for got, want in zip(results[engine], results["primitives"]):
        np.testing.assert_allclose(got, want, **TOL64)
    with minifw.engine(engine):
        x = rand((1, 4, 9), 1)
        np.testing.assert_allclose(val(F.conv1d(minifw.tensor(x), minifw.tensor(rand((2, 4, 3), 2)), stride=2)),
                                   ref_conv1d(x, rand((2, 4, 3), 2), stride=2), **TOL64)


# ---- devices: the same values and gradients as the CPU -------------------------------------------

def _x(*shape, seed=5):
    return minifw.randn(*shape, generator=minifw.Generator().manual_seed(seed))


ON_DEVICES = {  # name: (inputs, operation); CPU tensors, moved to the device under test
    "conv1d": (lambda: [_x(2, 4, 7), _x(4, 2, 3, seed=6), _x(4, seed=7)],
               lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, groups=2)),
    "conv1d_same": (lambda: [_x(3, 6), _x(2, 3, 2, seed=6)], lambda x, w: F.conv1d(x, w, padding="same")),
    "conv_transpose1d": (lambda: [_x(2, 4, 5), _x(4, 1, 3, seed=6), _x(2, seed=7)],
                         lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1,
                                                            output_padding=1, groups=2)),
    "max_pool1d": (lambda: [_x(2, 3, 9)], lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True)),
    "max_pool1d_dilated": (lambda: [_x(2, 3, 9)], lambda x: F.max_pool1d(x, 3, 1, 1, dilation=2)),
    "avg_pool1d": (lambda: [_x(3, 9)], lambda x: F.avg_pool1d(x, 3, 2, 1, True, False)),
    "adaptive_pools": (lambda: [_x(2, 2, 7)],
                       lambda x: F.adaptive_avg_pool1d(x, 3) + F.adaptive_max_pool1d(x, 3)),
}


@pytest.mark.parametrize("name", ON_DEVICES)
def test_ops_and_their_gradients_on_the_device_equal_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *ON_DEVICES[name], rtol=1e-5, atol=1e-5, what=name)


def test_max_pool_indices_on_the_device(dev):
    x = _x(2, 3, 10)
    for op in (lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True),
               lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True)):
        (y, idx), (y_cpu, idx_cpu) = op(x.to(dev)), op(x)
        assert y.device == dev and idx.device == dev and idx.dtype == minifw.int64
        np.testing.assert_array_equal(host(idx._data), idx_cpu.numpy())
        np.testing.assert_array_equal(host(y._data), val(y_cpu))


def test_layers_move_to_the_device(dev):
    model = nn.Sequential(nn.Conv1d(2, 4, 3, padding=1, padding_mode="circular"), nn.MaxPool1d(2),
                          nn.ConvTranspose1d(4, 2, 2, stride=2), nn.AvgPool1d(3, 1, 1),
                          nn.AdaptiveMaxPool1d(3), nn.AdaptiveAvgPool1d(2))
    model.to(dev)
    y = model(_x(2, 2, 8).to(dev))
    assert y.shape == (2, 2, 2) and y.device == dev
    y.sum().backward()
    assert all(p.grad.device == dev for p in model.parameters())


# ---- the layers ---------------------------------------------------------------------------------

def test_conv1d_layer_parameters_and_forward():
    m = nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2, dtype=minifw.float64)
    assert m.weight.shape == (6, 2, 3) and m.bias.shape == (6,)
    assert list(m.state_dict()) == ["weight", "bias"]
    bound = 1 / math.sqrt(2 * 3)  # kaiming_uniform_(a=sqrt(5)) over fan_in = in // groups * k
    assert np.abs(val(m.weight)).max() <= bound and np.abs(val(m.bias)).max() <= bound
    assert np.abs(val(m.weight)).max() > bound / 2  # drawn over the whole range, not zeros
    x = rand((2, 4, 9), 1)
    np.testing.assert_allclose(val(m(minifw.tensor(x))),
                               ref_conv1d(x, val(m.weight), val(m.bias), 2, 1, 1, 2), **TOL64)
    assert nn.Conv1d(2, 2, 1, bias=False).bias is None
    assert list(nn.Conv1d(2, 2, 1, bias=False).state_dict()) == ["weight"]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [2, "same"])
def test_conv1d_padding_modes(mode, padding):
    m = nn.Conv1d(2, 3, 4, padding=padding, padding_mode=mode, dtype=minifw.float64)
    x = rand((2, 2, 7), 1)
    left, right = (padding, padding) if padding == 2 else (1, 2)
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    xp = np.pad(x, ((0, 0), (0, 0), (left, right)), mode=np_mode)
    np.testing.assert_allclose(val(m(minifw.tensor(x))), ref_conv1d(xp, val(m.weight), val(m.bias)),
                               **TOL64)
    np.testing.assert_allclose(val(m(minifw.tensor(x[0]))), ref_conv1d(xp[0], val(m.weight), val(m.bias)),
                               **TOL64)


def test_conv_transpose1d_layer_and_output_size():
    m = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, groups=2)
    assert m.weight.shape == (4, 3, 3) and m.bias.shape == (6,)
    bound = 1 / math.sqrt(3 * 3)  # fan_in = out_channels // groups * k
    assert np.abs(val(m.weight)).max() <= bound and np.abs(val(m.bias)).max() <= bound
    assert list(m.state_dict()) == ["weight", "bias"]
    assert m(_x(2, 4, 5)).shape == (2, 6, 9)
    assert m(_x(2, 4, 5), output_size=[10]).shape == (2, 6, 10)
    assert m(_x(4, 5), output_size=(6, 10)).shape == (6, 10)
    assert m(_x(2, 4, 5), output_size=(2, 6, 10)).shape == (2, 6, 10)
    with pytest.raises(ValueError, match=r"ConvTranspose1d: requested an output size of \[11\], but "
                                         r"valid sizes range from \[9\] to \[10\]"):
        m(_x(2, 4, 5), output_size=(11,))


def test_pooling_layers_apply_their_functions():
    x = minifw.tensor(rand((2, 3, 11), 2))
    y, idx = nn.MaxPool1d(3, 2, 1, ceil_mode=True, return_indices=True)(x)
    want, want_idx = ref_max_pool1d(x.numpy(), 3, 2, 1, True)
    np.testing.assert_array_equal(val(y), want)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    np.testing.assert_allclose(val(nn.AvgPool1d(4, 2, 2, count_include_pad=False)(x)),
                               ref_avg_pool1d(x.numpy(), 4, 2, 2, False, False), **TOL64)
    np.testing.assert_allclose(val(nn.AdaptiveAvgPool1d(4)(x)), ref_adaptive_pool1d(x.numpy(), 4, "avg"),
                               **TOL64)
    y, idx = nn.AdaptiveMaxPool1d(5, return_indices=True)(x[0])
    np.testing.assert_array_equal(idx.numpy(), ref_adaptive_pool1d(x.numpy()[0], 5, "max")[1])
    m = nn.AvgPool1d(3)
    assert (m.kernel_size, m.stride, m.padding) == ((3,), (3,), (0,))
    assert nn.MaxPool1d(3).stride == 3


REPRS = [
    ("nn.Conv1d(2, 4, 3)", "Conv1d(2, 4, kernel_size=(3,), stride=(1,))"),
    ("nn.Conv1d(2, 4, 3, stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode='circular')",
     "Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), groups=2, bias=False, "
     "padding_mode=circular)"),
    ("nn.Conv1d(2, 2, 4, padding='same', padding_mode='reflect')",
     "Conv1d(2, 2, kernel_size=(4,), stride=(1,), padding=same, padding_mode=reflect)"),
    ("nn.Conv1d(2, 2, 4, padding='valid')", "Conv1d(2, 2, kernel_size=(4,), stride=(1,), padding=valid)"),
    ("nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, bias=False, dilation=2)",
     "ConvTranspose1d(4, 6, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), "
     "output_padding=(1,), groups=2, bias=False)"),
    ("nn.MaxPool1d(3, 2, 1, ceil_mode=True)",
     "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True)"),
    ("nn.MaxPool1d(3)", "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"),
    ("nn.AvgPool1d(3, 2, 1, True, False)", "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))"),
    ("nn.AvgPool1d(4)", "AvgPool1d(kernel_size=(4,), stride=(4,), padding=(0,))"),
    ("nn.AdaptiveAvgPool1d(5)", "AdaptiveAvgPool1d(output_size=5)"),
    ("nn.AdaptiveMaxPool1d(2, return_indices=True)", "AdaptiveMaxPool1d(output_size=2)"),
    ("nn.Conv2d(2, 2, 3, padding='same')", "Conv2d(2, 2, kernel_size=(3, 3), stride=(1, 1), padding=same)"),
]


@pytest.mark.parametrize("source, text", REPRS, ids=[s.split("(")[0][3:] + str(i) for i, (s, _) in
                                                    enumerate(REPRS)])
def test_reprs_are_pytorchs(source, text):
    assert repr(eval(source, {"nn": nn})) == text


def test_reprs_and_state_dicts_equal_torchs():
    torch = pytest.importorskip("torch")
    for source, _ in REPRS:
        mine, theirs = eval(source, {"nn": nn}), eval(source, {"nn": torch.nn})
        assert repr(mine) == repr(theirs), source
        assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == \
               {k: tuple(v.shape) for k, v in theirs.state_dict().items()}, source


SIGNATURES = {
    nn.Conv1d: "(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
               "bias=True, padding_mode='zeros', device=None, dtype=None)",
    nn.ConvTranspose1d: "(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, "
                        "groups=1, bias=True, dilation=1, padding_mode='zeros', device=None, dtype=None)",
    nn.MaxPool1d: "(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)",
    nn.AvgPool1d: "(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True)",
    nn.AdaptiveAvgPool1d: "(output_size)",
    nn.AdaptiveMaxPool1d: "(output_size, return_indices=False)",
    F.conv1d: "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)",
    F.conv_transpose1d: "(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, "
                        "dilation=1)",
    F.max_pool1d: "(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, "
                  "return_indices=False)",
    F.avg_pool1d: "(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True)",
    F.adaptive_avg_pool1d: "(input, output_size)",
    F.adaptive_max_pool1d: "(input, output_size, return_indices=False)",
}


@pytest.mark.parametrize("fn", SIGNATURES, ids=lambda f: f.__name__)
def test_signatures_are_pytorchs(fn):
    assert str(inspect.signature(fn)) == SIGNATURES[fn]


def test_names_are_exported():
    for name in ("Conv1d", "ConvTranspose1d", "MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d",
                 "AdaptiveMaxPool1d"):
        assert getattr(nn, name) is getattr(nn.modules, name) and name in nn.modules.__all__


# ---- PyTorch's values and gradients (float64) ----------------------------------------------------

TORCH_OPS = {  # name: (function of (F, inputs...), input shapes)
    "conv1d": (lambda F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
               [(2, 4, 9), (4, 2, 3), (4,)]),
    "conv1d_same": (lambda F, x, w: F.conv1d(x, w, padding="same", dilation=2), [(2, 2, 8), (3, 2, 4)]),
    "conv1d_unbatched": (lambda F, x, w, b: F.conv1d(x, w, b, stride=3), [(2, 10), (3, 2, 2), (3,)]),
    "conv_transpose1d": (lambda F, x, w, b: F.conv_transpose1d(x, w, b, 2, 1, 1, 2, 2),
                         [(2, 4, 5), (4, 1, 3), (2,)]),
    "conv_transpose1d_unbatched": (lambda F, x, w: F.conv_transpose1d(x, w, stride=3, output_padding=2),
                                   [(2, 4), (2, 3, 2)]),
    "max_pool1d": (lambda F, x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), [(2, 3, 10)]),
    "max_pool1d_overlapping": (lambda F, x: F.max_pool1d(x, 2, 1, 1, return_indices=True)[0], [(3, 7)]),
    "max_pool1d_dilated": (lambda F, x: F.max_pool1d(x, 3, 2, 1, 2, True), [(2, 3, 12)]),
    "avg_pool1d": (lambda F, x: F.avg_pool1d(x, 4, 3, 2, True, False), [(2, 3, 10)]),
    "avg_pool1d_include_pad": (lambda F, x: F.avg_pool1d(x, 3, 2, 1, True), [(3, 8)]),
    "adaptive_avg_pool1d": (lambda F, x: F.adaptive_avg_pool1d(x, 4), [(2, 2, 7)]),
    "adaptive_max_pool1d": (lambda F, x: F.adaptive_max_pool1d(x, 3, True)[0], [(2, 2, 8)]),
    "adaptive_max_pool1d_unbatched": (lambda F, x: F.adaptive_max_pool1d(x, 5), [(2, 11)]),
}


@pytest.mark.parametrize("name", TORCH_OPS)
def test_values_and_gradients_equal_torchs(name):
    torch = pytest.importorskip("torch")
    fn, shapes = TORCH_OPS[name]
    mine = _grad_inputs(*shapes)
    theirs = [torch.tensor(val(t), requires_grad=True) for t in mine]
    y, ty = fn(F, *mine), fn(torch.nn.functional, *theirs)
    weights = rand(tuple(y.shape), 30)
    (y * minifw.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(val(y), ty.detach().numpy(), **TOL64)
    for t, tt in zip(mine, theirs):
        np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), **TOL64)


def test_max_pool_indices_equal_torchs():
    torch = pytest.importorskip("torch")
    x = rand((2, 3, 13), 8)
    for args in [(3, 2, 1, 1, True), (2, 1, 1), (4, None, 2, 1, False), (5,)]:
        mine = F.max_pool1d(minifw.tensor(x), *args, return_indices=True)[1]
        theirs = torch.nn.functional.max_pool1d(torch.tensor(x), *args, return_indices=True)[1]
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=str(args))
    for size in (1, 4, 13, 20):
        mine = F.adaptive_max_pool1d(minifw.tensor(x[0]), size, return_indices=True)[1]
        theirs = torch.nn.functional.adaptive_max_pool1d(torch.tensor(x[0]), size, return_indices=True)[1]
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=str(size))


@pytest.mark.parametrize("source, shape", [
    ("nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)", (2, 4, 9)),
    ("nn.Conv1d(2, 3, 4, padding='same', padding_mode='reflect', bias=False)", (2, 2, 7)),
    ("nn.Conv1d(2, 3, 3, padding=2, padding_mode='circular', dilation=2)", (2, 7)),
    ("nn.Conv1d(2, 3, 3, padding=1, padding_mode='replicate')", (1, 2, 5)),
    ("nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2)", (2, 4, 5)),
    # Conv2d shares Conv1d's layer code: 'same' with a padding_mode, as PyTorch
    ("nn.Conv2d(2, 3, (4, 3), padding='same', padding_mode='replicate', dilation=(1, 2))", (2, 2, 7, 6)),
])
def test_layers_equal_torchs_with_its_parameters(source, shape):
    torch = pytest.importorskip("torch")
    mine, theirs = eval(source, {"nn": nn}).double(), eval(source, {"nn": torch.nn}).double()
    mine.load_state_dict({k: minifw.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x = t64(shape, 3, requires_grad=True)
    tx = torch.tensor(val(x), requires_grad=True)
    y, ty = mine(x), theirs(tx)
    np.testing.assert_allclose(val(y), ty.detach().numpy(), **TOL64)
    y.sum().backward(), ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **TOL64)
    for (name, p), tp in zip(mine.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), err_msg=name, **TOL64)


def test_signatures_agree_with_torchs_own():
    torch = pytest.importorskip("torch")
    for fn in SIGNATURES:
        theirs = getattr(torch.nn.functional if fn.__module__.endswith("functional") else torch.nn,
                         fn.__name__)
        try:
            params = inspect.signature(theirs).parameters
        except ValueError:  # a builtin (conv1d, avg_pool1d, ...)
            continue
        if list(params) == ["args", "kwargs"]:  # max_pool1d: a dispatcher on return_indices
            continue
        mine = inspect.signature(fn).parameters
        assert list(mine) == list(params), fn.__name__
        assert [p.default for p in mine.values()] == [p.default for p in params.values()], fn.__name__


# ---- errors: the 1-D function or layer, the argument, expected and actual ----------------------

def _f(*shape):
    return minifw.zeros(*shape)


ERRORS = [
    # conv1d
    (lambda: F.conv1d(_f(1, 2, 3, 4), _f(2, 2, 3)), ValueError,
     r"conv1d: input must be 2-D \(C, L\) or 3-D \(N, C, L\); got a 4-D tensor of shape \(1, 2, 3, 4\)",
     "conv1d_input_ndim"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 3, 3)), ValueError,
     r"conv1d: weight must be 3-D \(K, C // groups, kL\); got a 4-D tensor of shape \(2, 2, 3, 3\)",
     "conv1d_weight_ndim"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 3), stride=0), ValueError, "conv1d: stride must be >= 1, got 0",
     "conv1d_stride"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 3), stride=(1, 1)), ValueError,
     r"conv1d: stride must be an int or a tuple of 1 ints, got \(1, 1\)", "conv1d_stride_pair"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 3), padding=-1), ValueError, "conv1d: padding must be >= 0, got -1",
     "conv1d_padding"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 3), padding="full"), ValueError,
     "conv1d: padding must be an int, a 1-tuple of ints, 'valid' or 'same'; got 'full'", "conv1d_padding_str"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 3), padding="same", stride=2), ValueError,
     "conv1d: padding='same' needs stride 1, got stride=2", "conv1d_same_stride"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 3), dilation=1.0), TypeError,
     "conv1d: dilation must be an int or a tuple of 1 ints, got 1.0", "conv1d_dilation_type"),
    (lambda: F.conv1d(_f(1, 4, 5), _f(3, 2, 3), groups=2), ValueError,
     r"conv1d: weight.shape\[0\] \(the output channels, 3\) must be divisible by groups=2",
     "conv1d_groups"),
    (lambda: F.conv1d(_f(1, 3, 5), _f(2, 2, 3), groups=2), ValueError,
     r"conv1d: input must have 4 channels to match weight of shape \(2, 2, 3\) with groups=2; got input "
     r"of shape \(1, 3, 5\)", "conv1d_channels"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 3), groups=0), ValueError, "conv1d: groups must be >= 1, got 0",
     "conv1d_groups_zero"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 3), _f(3)), ValueError,
     r"conv1d: bias must have shape \(2,\) to match weight", "conv1d_bias"),
    (lambda: F.conv1d(_f(1, 2, 2), _f(2, 2, 3)), ValueError,
     "conv1d: the output length would be < 1: the padded input length 2 is shorter than the dilated "
     "kernel 3", "conv1d_too_short"),
    (lambda: F.conv1d(_f(1, 2, 5), _f(2, 2, 0)), ValueError,
     r"conv1d: weight must have every dimension >= 1, got shape \(2, 2, 0\)", "conv1d_empty_kernel"),
    (lambda: F.conv1d(_f(1, 2, 5), minifw.zeros(2, 2, 3, dtype=minifw.float64)), TypeError,
     "conv1d: weight has dtype float64 but input has dtype float32", "conv1d_dtype"),
    (lambda: F.conv1d(_f(1, 2, 5).numpy(), _f(2, 2, 3)), TypeError,
     "conv1d: input must be a minifw.Tensor, got ndarray", "conv1d_not_tensor"),
    # conv_transpose1d
    (lambda: F.conv_transpose1d(_f(2, 3, 4, 4), _f(3, 2, 3)), ValueError,
     r"conv_transpose1d: input must be 2-D \(C_in, L\) or 3-D \(N, C_in, L\); got a 4-D tensor",
     "convT_input_ndim"),
    (lambda: F.conv_transpose1d(_f(1, 3, 4), _f(3, 2)), ValueError,
     r"conv_transpose1d: weight must be 3-D \(C_in, C_out // groups, kL\); got a 2-D tensor",
     "convT_weight_ndim"),
    (lambda: F.conv_transpose1d(_f(1, 3, 4), _f(3, 2, 2), groups=2), ValueError,
     r"conv_transpose1d: weight.shape\[0\] \(the input channels, 3\) must be divisible by groups=2",
     "convT_groups"),
    (lambda: F.conv_transpose1d(_f(1, 2, 4), _f(3, 2, 2)), ValueError,
     r"conv_transpose1d: input must have 3 channels to match weight of shape \(3, 2, 2\)", "convT_channels"),
    (lambda: F.conv_transpose1d(_f(1, 3, 4), _f(3, 2, 2), output_padding=1), ValueError,
     "conv_transpose1d: output_padding must be smaller than either stride or dilation, got "
     "output_padding=1, stride=1, dilation=1", "convT_output_padding"),
    (lambda: F.conv_transpose1d(_f(1, 3, 2), _f(3, 2, 1), padding=1), ValueError,
     "conv_transpose1d: the output length 0 would be < 1", "convT_too_short"),
    (lambda: F.conv_transpose1d(_f(1, 3, 2), _f(3, 2, 1), stride=0), ValueError,
     "conv_transpose1d: stride must be >= 1, got 0", "convT_stride"),
    (lambda: F.conv_transpose1d(_f(1, 3, 2), _f(3, 2, 1), _f(3)), ValueError,
     r"conv_transpose1d: bias must have shape \(2,\)", "convT_bias"),
    # pooling
    (lambda: F.max_pool1d(_f(1, 2, 3, 4), 2), ValueError,
     r"max_pool1d: input must be 2-D \(C, L\) or 3-D \(N, C, L\); got a 4-D tensor", "max_ndim"),
    (lambda: F.max_pool1d(_f(1, 2, 5), 0), ValueError, "max_pool1d: kernel_size must be >= 1, got 0",
     "max_kernel"),
    (lambda: F.max_pool1d(_f(1, 2, 5), (2, 2)), ValueError,
     r"max_pool1d: kernel_size must be an int or a tuple of 1 ints, got \(2, 2\)", "max_kernel_pair"),
    (lambda: F.max_pool1d(_f(1, 2, 5), 2, 0), ValueError, "max_pool1d: stride must be >= 1, got 0",
     "max_stride"),
    (lambda: F.max_pool1d(_f(1, 2, 5), 2, 1, -1), ValueError, "max_pool1d: padding must be >= 0, got -1",
     "max_padding"),
    (lambda: F.max_pool1d(_f(1, 2, 5), 2, 1, 2), ValueError,
     "max_pool1d: padding must be at most half the kernel size; got padding=2 with kernel_size=2",
     "max_padding_half"),
    (lambda: F.max_pool1d(_f(1, 2, 5), 2, dilation=0), ValueError,
     "max_pool1d: dilation must be >= 1, got 0", "max_dilation"),
    (lambda: F.max_pool1d(_f(1, 2, 5), 3, dilation=3), ValueError,
     "max_pool1d: the output length would be < 1: the padded input length 5 is shorter than kernel_size=3 "
     "dilated to 7 by dilation=3", "max_dilated_too_long"),
    (lambda: F.max_pool1d(_f(1, 2, 3), 2, 1, 1, dilation=4), ValueError,
     "max_pool1d: output 0 along the width holds no input element", "max_dilated_window_misses_input"),
    (lambda: F.max_pool1d(_f(1, 2, 5), 2, ceil_mode=1), TypeError,
     "max_pool1d: ceil_mode must be a bool, got int 1", "max_ceil_mode"),
    (lambda: F.max_pool1d(_f(1, 2, 5), 2, return_indices="yes"), TypeError,
     "max_pool1d: return_indices must be a bool", "max_return_indices"),
    (lambda: F.max_pool1d(_f(1, 2, 2), 3, padding=0), ValueError,
     "max_pool1d: the output length would be < 1: the padded input length 2 is shorter than "
     "kernel_size=3", "max_too_short"),
    (lambda: F.max_pool1d(_f(0, 2, 5), 2), ValueError,
     r"max_pool1d: input must have every dimension >= 1, got shape \(0, 2, 5\)", "max_empty"),
    (lambda: F.avg_pool1d(_f(1, 2, 5), 2, 2, 0, False, 1), TypeError,
     "avg_pool1d: count_include_pad must be a bool", "avg_count_include_pad"),
    (lambda: F.avg_pool1d(_f(1, 2, 5), 2.0), TypeError,
     "avg_pool1d: kernel_size must be an int or a tuple of 1 ints, got 2.0", "avg_kernel_type"),
    (lambda: F.avg_pool1d(_f(5), 2), ValueError,
     r"avg_pool1d: input must be 2-D \(C, L\) or 3-D \(N, C, L\); got a 1-D tensor", "avg_ndim"),
    (lambda: F.adaptive_avg_pool1d(_f(1, 2, 5), 0), ValueError,
     "adaptive_avg_pool1d: output_size must be >= 1, got 0", "adaptive_avg_zero"),
    (lambda: F.adaptive_avg_pool1d(_f(1, 2, 5), (2, 2)), ValueError,
     r"adaptive_avg_pool1d: output_size must be an int or a tuple of 1 ints, got \(2, 2\)",
     "adaptive_avg_pair"),
    (lambda: F.adaptive_avg_pool1d(_f(1, 2, 5), None), TypeError,
     "adaptive_avg_pool1d: output_size must be an int or a tuple of 1 ints, got None", "adaptive_avg_none"),
    (lambda: F.adaptive_max_pool1d(_f(1, 0, 5), 2), ValueError,
     r"adaptive_max_pool1d: input must have non-zero sizes in its \(C, L\) dims", "adaptive_max_empty"),
    (lambda: F.adaptive_max_pool1d(_f(1, 2, 5, 1), 2), ValueError,
     r"adaptive_max_pool1d: input must be 2-D \(C, L\) or 3-D \(N, C, L\)", "adaptive_max_ndim"),
    # layers, when built
    (lambda: nn.Conv1d(4, 6, 3, groups=4), ValueError,
     r"Conv1d: in_channels \(4\) and out_channels \(6\) must be divisible by groups \(4\)", "Conv1d_groups"),
    (lambda: nn.Conv1d(2, 2, 0), ValueError, "Conv1d: kernel_size must be >= 1, got 0", "Conv1d_kernel"),
    (lambda: nn.Conv1d(2, 2, (3, 3)), ValueError,
     r"Conv1d: kernel_size must be an int or a tuple of 1 ints, got \(3, 3\)", "Conv1d_kernel_pair"),
    (lambda: nn.Conv1d(2, 2, 3, stride=0), ValueError, "Conv1d: stride must be >= 1, got 0", "Conv1d_stride"),
    (lambda: nn.Conv1d(2, 2, 3, padding=-1), ValueError, "Conv1d: padding must be >= 0, got -1",
     "Conv1d_padding"),
    (lambda: nn.Conv1d(2, 2, 3, padding_mode="mirror"), ValueError,
     "Conv1d: padding_mode must be 'zeros', 'reflect', 'replicate' or 'circular'; got 'mirror'",
     "Conv1d_padding_mode"),
    (lambda: nn.Conv1d(2, 2, 3, padding="same", stride=2), ValueError,
     "Conv1d: padding='same' is not supported for strided convolutions", "Conv1d_same"),
    (lambda: nn.Conv1d(2, 2, 3, padding="full"), ValueError, "Conv1d: invalid padding string 'full'",
     "Conv1d_padding_str"),
    (lambda: nn.Conv1d(2, 2, 3)(_f(1, 3, 5)), ValueError,
     r"conv1d: input must have 2 channels to match weight of shape \(2, 2, 3\)", "Conv1d_forward"),
    (lambda: nn.ConvTranspose1d(2, 3, 3, padding_mode="reflect"), ValueError,
     'ConvTranspose1d: only "zeros" padding mode is supported', "ConvTranspose1d_padding_mode"),
    (lambda: nn.ConvTranspose1d(2, 4, 3, groups=3), ValueError,
     r"ConvTranspose1d: in_channels \(2\) and out_channels \(4\) must be divisible by groups \(3\)",
     "ConvTranspose1d_groups"),
    (lambda: nn.ConvTranspose1d(2, 3, 3, padding="same"), ValueError,
     "ConvTranspose1d: padding must be an int or a tuple of 1 ints, got 'same'", "ConvTranspose1d_padding"),
    (lambda: nn.ConvTranspose1d(2, 3, 3, output_padding=-1), ValueError,
     "ConvTranspose1d: output_padding must be >= 0, got -1", "ConvTranspose1d_output_padding"),
    (lambda: nn.MaxPool1d(0), ValueError, "MaxPool1d: kernel_size must be >= 1, got 0", "MaxPool1d_kernel"),
    (lambda: nn.MaxPool1d(2, dilation=0), ValueError, "MaxPool1d: dilation must be >= 1, got 0",
     "MaxPool1d_dilation"),
    (lambda: nn.MaxPool1d(2, padding=2), ValueError, "MaxPool1d: padding must be at most half the kernel",
     "MaxPool1d_padding"),
    (lambda: nn.AvgPool1d(2, stride=0), ValueError, "AvgPool1d: stride must be >= 1, got 0", "AvgPool1d_stride"),
    (lambda: nn.AvgPool1d(2, ceil_mode=None), TypeError, "AvgPool1d: ceil_mode must be a bool, got NoneType",
     "AvgPool1d_ceil_mode"),
    (lambda: nn.AdaptiveAvgPool1d(-1), ValueError, "AdaptiveAvgPool1d: output_size must be >= 1, got -1",
     "AdaptiveAvgPool1d_size"),
    (lambda: nn.AdaptiveMaxPool1d(2, return_indices=1), TypeError,
     "AdaptiveMaxPool1d: return_indices must be a bool", "AdaptiveMaxPool1d_flag"),
]


@pytest.mark.parametrize("call, error, message", [e[:3] for e in ERRORS], ids=[e[3] for e in ERRORS])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
