"""3-D convolution, pooling, normalization and dropout: conv3d / Conv3d, conv_transpose3d /
ConvTranspose3d, max_pool3d / MaxPool3d, avg_pool3d / AvgPool3d, adaptive_avg_pool3d /
AdaptiveAvgPool3d, adaptive_max_pool3d / AdaptiveMaxPool3d, BatchNorm3d, InstanceNorm3d and
dropout3d / Dropout3d.

Values against naive float64 references written here (not the 2-D code the 3-D forms run on),
gradients against finite differences, both engines, the devices' results against the CPU's,
PyTorch's values, gradients, indices, reprs, signatures and state dicts (when torch is
installed; it is not a dependency), and errors that name the 3-D function and the argument."""
import inspect
import itertools
import math
import warnings

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


def triple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * 3


# ---- naive references -----------------------------------------------------------------------------

def _batched(x):
    return (x[None], lambda y: y[0]) if x.ndim == 4 else (x, lambda y: y)


def ref_conv3d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct convolution: for every kernel offset, the strided input block it meets times
    that weight tap, summed over the group's channels. padding: ints, 'valid' or 'same' (an
    odd total's extra at the end)."""
    x, back = _batched(x)
    stride, dilation = triple(stride), triple(dilation)
    k, cg = w.shape[:2]
    if isinstance(padding, str):
        totals = [d * (kk - 1) if padding == "same" else 0 for d, kk in zip(dilation, w.shape[2:])]
        pads = [(t // 2, t - t // 2) for t in totals]
    else:
        pads = [(p, p) for p in triple(padding)]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    out = [(xp.shape[2 + i] - dilation[i] * (w.shape[2 + i] - 1) - 1) // stride[i] + 1 for i in range(3)]
    y = np.zeros((x.shape[0], k) + tuple(out))
    kg = k // groups
    for g in range(groups):
        for a, bb, c in itertools.product(*(range(n) for n in w.shape[2:])):
            block = xp[:, g * cg:(g + 1) * cg,
                       a * dilation[0]:a * dilation[0] + (out[0] - 1) * stride[0] + 1:stride[0],
                       bb * dilation[1]:bb * dilation[1] + (out[1] - 1) * stride[1] + 1:stride[1],
                       c * dilation[2]:c * dilation[2] + (out[2] - 1) * stride[2] + 1:stride[2]]
            y[:, g * kg:(g + 1) * kg] += np.einsum("ncdhw,kc->nkdhw", block,
                                                   w[g * kg:(g + 1) * kg, :, a, bb, c])
    if b is not None:
        y += b[None, :, None, None, None]
    return back(y)


def ref_conv_transpose3d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Each input element scatters its kernel into the output (the transposed convolution's
    definition), then padding is cropped from both ends of every dim."""
    x, back = _batched(x)
    stride, padding, output_padding, dilation = (triple(v) for v in (stride, padding, output_padding,
                                                                     dilation))
    c_in, og = w.shape[:2]
    cg = c_in // groups
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (w.shape[2 + i] - 1) + 1 + output_padding[i]
            for i in range(3)]
    y = np.zeros((x.shape[0], og * groups) + tuple(full))
    for g in range(groups):
        for a, bb, c in itertools.product(*(range(n) for n in w.shape[2:])):
            at = [o * dl for o, dl in zip((a, bb, c), dilation)]
            y[:, g * og:(g + 1) * og,
              at[0]:at[0] + (x.shape[2] - 1) * stride[0] + 1:stride[0],
              at[1]:at[1] + (x.shape[3] - 1) * stride[1] + 1:stride[1],
              at[2]:at[2] + (x.shape[4] - 1) * stride[2] + 1:stride[2]] += np.einsum(
                "ncdhw,co->nodhw", x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg, :, a, bb, c])
    y = y[:, :, padding[0]:full[0] - padding[0], padding[1]:full[1] - padding[1],
          padding[2]:full[2] - padding[2]]
    if b is not None:
        y = y + b[None, :, None, None, None]
    return back(y)


def _pool_length(length, k, s, p, ceil_mode, d=1):
    span = length + 2 * p - d * (k - 1) - 1
    lout = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (lout - 1) * s >= length + p:  # the last window must start inside
        lout -= 1
    return lout


def _windows(x, k, s, p, ceil_mode):
    """For each output position (od, oh, ow): the window's (start, end) per dim as far as the
    padding reaches, and its part inside the input."""
    k, p = triple(k), triple(p)
    s = k if s is None else triple(s)
    out = [_pool_length(x.shape[2 + i], k[i], s[i], p[i], ceil_mode) for i in range(3)]
    for pos in itertools.product(*(range(o) for o in out)):
        start = [j * s[i] - p[i] for i, j in enumerate(pos)]
        end = [min(start[i] + k[i], x.shape[2 + i] + p[i]) for i in range(3)]
        lo = [max(a, 0) for a in start]
        hi = [min(e, x.shape[2 + i]) for i, e in enumerate(end)]
        yield out, pos, start, end, lo, hi


def ref_max_pool3d(x, k, s=None, p=0, ceil_mode=False, dilation=1):
    """(values, flat index d * H * W + h * W + w of the first maximum in (d, h, w) order), the
    taps of a window `dilation` apart."""
    x, back = _batched(x)
    k, p, dil = triple(k), triple(p), triple(dilation)
    s = k if s is None else triple(s)
    out = [_pool_length(x.shape[2 + i], k[i], s[i], p[i], ceil_mode, dil[i]) for i in range(3)]
    y, idx = np.zeros(x.shape[:2] + tuple(out)), np.zeros(x.shape[:2] + tuple(out), np.int64)
    for pos in itertools.product(*(range(o) for o in out)):
        taps = [[j * s[i] - p[i] + t * dil[i] for t in range(k[i])] for i, j in enumerate(pos)]
        taps = [[t for t in axis if 0 <= t < x.shape[2 + i]] for i, axis in enumerate(taps)]
        window = x[:, :, taps[0]][:, :, :, taps[1]][:, :, :, :, taps[2]]
        flat = window.reshape(x.shape[:2] + (-1,))
        first = flat.argmax(axis=2)  # the first maximum in (d, h, w) order
        d, h, w = (np.asarray(axis)[i] for axis, i in zip(taps, np.unravel_index(first, window.shape[2:])))
        y[(...,) + pos] = flat.max(axis=2)
        idx[(...,) + pos] = (d * x.shape[3] + h) * x.shape[4] + w
    return back(y), back(idx)


def ref_avg_pool3d(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    x, back = _batched(x)
    y = None
    for out, pos, start, end, lo, hi in _windows(x, k, s, p, ceil_mode):
        if y is None:
            y = np.zeros(x.shape[:2] + tuple(out))
        total = x[:, :, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]].sum(axis=(2, 3, 4))
        if divisor_override is not None:
            divisor = divisor_override
        elif count_include_pad:
            divisor = math.prod(e - a for a, e in zip(start, end))
        else:
            divisor = math.prod(b - a for a, b in zip(lo, hi))
        y[(...,) + pos] = total / divisor
    return back(y)


def ref_adaptive_pool3d(x, out, op):
    """Window i spans [floor(i * D / out_d), ceil((i + 1) * D / out_d)) in depth, likewise in
    H and W. op 'avg' or 'max'; 'max' also gives the flat indices."""
    x, back = _batched(x)
    out = tuple(size if o is None else o for o, size in zip(triple(out), x.shape[2:]))
    y, idx = np.zeros(x.shape[:2] + out), np.zeros(x.shape[:2] + out, np.int64)
    for pos in itertools.product(*(range(o) for o in out)):
        lo = [(j * x.shape[2 + i]) // out[i] for i, j in enumerate(pos)]
        hi = [-(-((j + 1) * x.shape[2 + i]) // out[i]) for i, j in enumerate(pos)]
        window = x[:, :, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]]
        flat = window.reshape(x.shape[:2] + (-1,))
        if op == "avg":
            y[(...,) + pos] = flat.mean(axis=2)
        else:
            d, h, w = np.unravel_index(flat.argmax(axis=2), window.shape[2:])
            y[(...,) + pos] = flat.max(axis=2)
            idx[(...,) + pos] = ((d + lo[0]) * x.shape[3] + h + lo[1]) * x.shape[4] + w + lo[2]
    return (back(y), back(idx)) if op == "max" else back(y)


# ---- values against the references ----------------------------------------------------------------

CONV_CASES = [  # (input shape, weight shape, with bias, kwargs)
    ((2, 3, 5, 6, 4), (4, 3, 3, 3, 3), True, {}),
    ((1, 2, 3, 4, 5), (3, 2, 1, 1, 1), False, {}),
    ((2, 4, 7, 6, 5), (6, 2, 3, 2, 3), True, dict(stride=(2, 1, 2), padding=(1, 2, 1), groups=2)),
    ((1, 3, 5, 6, 7), (2, 3, 2, 3, 4), True, dict(padding="same")),
    ((2, 2, 6, 5, 5), (2, 2, 3, 3, 2), False, dict(padding="same", dilation=(2, 1, 2))),
    ((1, 3, 9, 7, 8), (3, 3, 3, 2, 2), True, dict(stride=3, padding=2, dilation=(3, 2, 1))),
    ((4, 3, 5, 4), (6, 2, 2, 2, 2), True, dict(padding=(1, 0, 1), stride=(2, 1, 1), groups=2)),  # unbatched
    ((2, 2, 3, 4, 5), (3, 2, 3, 4, 5), False, dict(padding="valid")),
    ((1, 4, 4, 5, 3), (4, 1, 3, 1, 3), True, dict(padding=1, groups=4)),  # depthwise
]


@pytest.mark.parametrize("xs, ws, with_bias, kw", CONV_CASES, ids=[f"conv{i}" for i in range(len(CONV_CASES))])
def test_conv3d_equals_the_reference(xs, ws, with_bias, kw):
    x, w = rand(xs, 1), rand(ws, 2)
    b = rand(ws[0], 3) if with_bias else None
    got = F.conv3d(minifw.tensor(x), minifw.tensor(w), None if b is None else minifw.tensor(b), **kw)
    np.testing.assert_allclose(val(got), ref_conv3d(x, w, b, **kw), **TOL64)


CONVT_CASES = [  # (input shape, weight shape, with bias, kwargs)
    ((2, 3, 3, 4, 2), (3, 2, 3, 2, 3), True, {}),
    ((1, 4, 3, 3, 4), (4, 3, 3, 3, 2), False, dict(stride=2, padding=1, output_padding=1, groups=2)),
    ((2, 2, 2, 3, 2), (2, 3, 2, 2, 3), True, dict(stride=(3, 1, 2), dilation=(2, 1, 2), padding=(2, 0, 1))),
    ((1, 2, 4, 2, 3), (2, 1, 3, 2, 2), True, dict(stride=(2, 3, 1), output_padding=(1, 2, 0), dilation=2)),
    ((4, 2, 3, 2), (4, 1, 2, 3, 2), True, dict(stride=2, groups=4)),  # unbatched
]


@pytest.mark.parametrize("xs, ws, with_bias, kw", CONVT_CASES,
                         ids=[f"convT{i}" for i in range(len(CONVT_CASES))])
def test_conv_transpose3d_equals_the_reference(xs, ws, with_bias, kw):
    x, w = rand(xs, 1), rand(ws, 2)
    b = rand(ws[1] * kw.get("groups", 1), 3) if with_bias else None
    got = F.conv_transpose3d(minifw.tensor(x), minifw.tensor(w), None if b is None else minifw.tensor(b),
                             **kw)
    np.testing.assert_allclose(val(got), ref_conv_transpose3d(x, w, b, **kw), **TOL64)


POOL_CASES = [  # (input shape, kernel_size, stride, padding, ceil_mode)
    ((2, 3, 4, 6, 6), 2, None, 0, False),
    ((1, 2, 7, 6, 5), 3, 2, 1, False),
    ((2, 2, 7, 8, 5), 3, 2, 1, True),
    ((1, 1, 6, 5, 8), (2, 3, 2), (3, 1, 2), (1, 1, 0), True),
    ((2, 5, 5, 7), (3, 2, 3), (1, 2, 2), (1, 0, 1), False),  # unbatched
    ((1, 2, 5, 4, 4), (5, 1, 2), (2, 1, 3), (2, 0, 1), True),
]


@pytest.mark.parametrize("xs, k, s, p, ceil_mode", POOL_CASES, ids=[f"pool{i}" for i in range(len(POOL_CASES))])
def test_max_pool3d_and_its_indices_equal_the_reference(xs, k, s, p, ceil_mode):
    x = rand(xs, 4)
    y, idx = F.max_pool3d(minifw.tensor(x), k, s, p, ceil_mode=ceil_mode, return_indices=True)
    want, want_idx = ref_max_pool3d(x, k, s, p, ceil_mode)
    np.testing.assert_array_equal(val(y), want)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    assert idx.dtype == minifw.int64
    np.testing.assert_array_equal(val(F.max_pool3d(minifw.tensor(x), k, s, p, ceil_mode=ceil_mode)), want)


DILATED_POOL_CASES = [  # (input shape, kernel_size, stride, padding, ceil_mode, dilation)
    ((2, 2, 7, 6, 7), 3, 1, 0, False, 2),
    ((1, 2, 8, 7, 6), (2, 3, 2), (2, 1, 2), 1, True, (3, 2, 2)),
    ((2, 6, 5, 7), 2, 2, 1, False, (2, 1, 3)),  # unbatched; depth windows share taps
    ((1, 1, 3, 4, 5), 2, 1, 1, False, (3, 1, 1)),  # the depth dilation exceeds the input
    ((1, 2, 10, 4, 4), (4, 2, 2), (3, 1, 1), (1, 0, 0), True, (4, 1, 1)),  # the last window overhangs
]


@pytest.mark.parametrize("xs, k, s, p, ceil_mode, dilation", DILATED_POOL_CASES,
                         ids=[f"dilated{i}" for i in range(len(DILATED_POOL_CASES))])
def test_dilated_max_pool3d_equals_the_reference(xs, k, s, p, ceil_mode, dilation):
    x = np.round(rand(xs, 4) * 2)  # ties: the index names the first maximum in (d, h, w) order
    y, idx = F.max_pool3d(minifw.tensor(x), k, s, p, dilation, ceil_mode, return_indices=True)
    want, want_idx = ref_max_pool3d(x, k, s, p, ceil_mode, dilation)
    np.testing.assert_array_equal(val(y), want)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    np.testing.assert_array_equal(val(nn.MaxPool3d(k, s, p, dilation, ceil_mode=ceil_mode)(minifw.tensor(x))),
                                  want)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("xs, k, s, p, ceil_mode", POOL_CASES, ids=[f"pool{i}" for i in range(len(POOL_CASES))])
def test_avg_pool3d_equals_the_reference(xs, k, s, p, ceil_mode, count_include_pad):
    x = rand(xs, 5)
    got = F.avg_pool3d(minifw.tensor(x), k, s, p, ceil_mode, count_include_pad)
    np.testing.assert_allclose(val(got), ref_avg_pool3d(x, k, s, p, ceil_mode, count_include_pad), **TOL64)


@pytest.mark.parametrize("divisor", [1, 7, -3])
def test_avg_pool3d_divisor_override_divides_the_sum(divisor):
    x = rand((2, 2, 5, 7, 6), 6)
    got = F.avg_pool3d(minifw.tensor(x), (3, 2, 3), 2, 1, True, False, divisor)
    np.testing.assert_allclose(val(got), ref_avg_pool3d(x, (3, 2, 3), 2, 1, True, divisor_override=divisor),
                               **TOL64)


@pytest.mark.parametrize("xs, out", [((2, 3, 7, 5, 6), 3), ((1, 2, 4, 9, 5), (3, None, 2)),
                                     ((2, 5, 3, 4), (7, 1, 4)), ((1, 1, 5, 5, 5), 5)])
def test_adaptive_pools_equal_the_reference(xs, out):
    x = rand(xs, 7)
    np.testing.assert_allclose(val(F.adaptive_avg_pool3d(minifw.tensor(x), out)),
                               ref_adaptive_pool3d(x, out, "avg"), **TOL64)
    y, idx = F.adaptive_max_pool3d(minifw.tensor(x), out, return_indices=True)
    want, want_idx = ref_adaptive_pool3d(x, out, "max")
    np.testing.assert_array_equal(val(y), want)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    np.testing.assert_array_equal(val(F.adaptive_max_pool3d(minifw.tensor(x), out)), want)


def test_adaptive_pools_take_an_empty_batch():
    x = minifw.zeros(0, 3, 4, 5, 5, dtype=minifw.float64)
    assert F.adaptive_avg_pool3d(x, 2).shape == (0, 3, 2, 2, 2)
    assert F.adaptive_max_pool3d(x, (1, 2, 3)).shape == (0, 3, 1, 2, 3)


def test_max_pool3d_ties_give_the_first_maximum_all_the_gradient():
    """As PyTorch's CPU kernels: the first maximum in (d, h, w) order takes the whole
    gradient, across depth slices as within one."""
    x = minifw.tensor(np.ones((1, 1, 3, 2, 2)), requires_grad=True)
    y, idx = F.max_pool3d(x, 2, 1, return_indices=True)
    y.sum().backward()
    np.testing.assert_array_equal(idx.numpy().ravel(), [0, 4])
    want = np.zeros((3, 2, 2))
    want[0, 0, 0] = want[1, 0, 0] = 1
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], want)


# ---- gradients (float64 finite differences) --------------------------------------------------------

def _grad_inputs(*shapes):
    return [t64(s, seed=i + 10, requires_grad=True) for i, s in enumerate(shapes)]


GRADS = {  # name: (function, input shapes); distinct inputs, so maxima are unique
    "conv3d": (lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 1), padding=1, dilation=(1, 2, 1), groups=2),
               [(1, 4, 4, 3, 3), (2, 2, 2, 2, 2), (2,)]),
    "conv3d_same_unbatched": (lambda x, w: F.conv3d(x, w, padding="same"), [(2, 3, 3, 2), (2, 2, 2, 3, 2)]),
    "conv_transpose3d": (lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1,
                                                            groups=2, dilation=(2, 1, 1)),
                         [(1, 2, 2, 2, 2), (2, 1, 2, 2, 2), (2,)]),
    "max_pool3d": (lambda x: F.max_pool3d(x, 3, 2, 1, ceil_mode=True), [(1, 2, 5, 4, 6)]),
    "max_pool3d_overlapping": (lambda x: F.max_pool3d(x, 2, 1, 1), [(2, 3, 3, 3)]),
    "max_pool3d_dilated": (lambda x: F.max_pool3d(x, 2, (2, 1, 2), 1, (2, 3, 1), True), [(1, 2, 6, 5, 4)]),
    "avg_pool3d": (lambda x: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True), [(1, 2, 5, 4, 6)]),
    "avg_pool3d_exclude_pad": (lambda x: F.avg_pool3d(x, (2, 3, 2), 2, 1, True, False), [(2, 4, 5, 3)]),
    "avg_pool3d_divisor": (lambda x: F.avg_pool3d(x, 2, 1, 1, divisor_override=3), [(1, 2, 3, 3, 2)]),
    "adaptive_avg_pool3d": (lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), [(1, 2, 5, 4, 3)]),
    "adaptive_max_pool3d": (lambda x: F.adaptive_max_pool3d(x, (3, 2, 2)), [(1, 2, 5, 4, 3)]),
    "batch_norm_5d": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                      [(2, 3, 2, 3, 2), (3,), (3,)]),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradients_match_finite_differences(name):
    fn, shapes = GRADS[name]
    assert gradcheck(fn, _grad_inputs(*shapes))


def test_gradcheck_can_fail():
    """A gradient missing max_pool3d's part is caught (the checks above are not vacuous)."""
    x = t64((1, 1, 4, 4, 4), requires_grad=True)
    with pytest.raises(AssertionError, match="gradient elements differ"):
        gradcheck(lambda x: F.avg_pool3d(x, 2) + F.max_pool3d(x.detach(), 2), [x])


# ---- both engines --------------------------------------------------------------------------------

ENGINE_OPS = {  # name: (function, input shapes)
    "conv3d": GRADS["conv3d"],
    "conv_transpose3d": GRADS["conv_transpose3d"],
    "max_pool3d": GRADS["max_pool3d"],
    "max_pool3d_dilated": GRADS["max_pool3d_dilated"],
    "avg_pool3d": (lambda x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False), [(2, 3, 5, 6, 5)]),
    "adaptive_max_pool3d": GRADS["adaptive_max_pool3d"],
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
        x, w = rand((1, 4, 5, 4, 6), 1), rand((2, 4, 2, 3, 3), 2)
        np.testing.assert_allclose(val(F.conv3d(minifw.tensor(x), minifw.tensor(w), stride=2)),
                                   ref_conv3d(x, w, stride=2), **TOL64)


# ---- devices: the same values and gradients as the CPU -----------------------------------------------

def _x(*shape, seed=5):
    return minifw.randn(*shape, generator=minifw.Generator().manual_seed(seed))


ON_DEVICES = {  # name: (inputs, operation); CPU tensors, moved to the device under test
    "conv3d": (lambda: [_x(1, 4, 4, 5, 4), _x(4, 2, 2, 3, 2, seed=6), _x(4, seed=7)],
               lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 2), padding=1, groups=2)),
    "conv3d_same": (lambda: [_x(2, 3, 4, 4), _x(2, 2, 2, 2, 3, seed=6)],
                    lambda x, w: F.conv3d(x, w, padding="same")),
    "conv_transpose3d": (lambda: [_x(1, 2, 2, 3, 2), _x(2, 2, 2, 2, 2, seed=6), _x(2, seed=7)],
                         lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1)),
    "max_pool3d": (lambda: [_x(1, 2, 5, 4, 5)], lambda x: F.max_pool3d(x, 3, 2, 1, ceil_mode=True)),
    "max_pool3d_dilated": (lambda: [_x(1, 2, 6, 5, 5)], lambda x: F.max_pool3d(x, 2, 1, 1, dilation=(3, 2, 1))),
    "avg_pool3d": (lambda: [_x(2, 5, 4, 5)], lambda x: F.avg_pool3d(x, 3, 2, 1, True, False)),
    "adaptive_pools": (lambda: [_x(1, 2, 5, 4, 3)],
                       lambda x: F.adaptive_avg_pool3d(x, 2) + F.adaptive_max_pool3d(x, 2)),
}


@pytest.mark.parametrize("name", ON_DEVICES)
def test_ops_and_their_gradients_on_the_device_equal_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *ON_DEVICES[name], rtol=1e-5, atol=1e-5, what=name)


def test_max_pool_indices_on_the_device(dev):
    x = _x(1, 2, 5, 4, 6)
    for op in (lambda x: F.max_pool3d(x, 3, 2, 1, return_indices=True),
               lambda x: F.max_pool3d(x, 2, 1, 1, dilation=(2, 2, 3), return_indices=True),
               lambda x: F.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True)):
        (y, idx), (y_cpu, idx_cpu) = op(x.to(dev)), op(x)
        assert y.device == dev and idx.device == dev and idx.dtype == minifw.int64
        np.testing.assert_array_equal(host(idx._data), idx_cpu.numpy())
        np.testing.assert_array_equal(host(y._data), val(y_cpu))


def test_layers_move_to_the_device(dev):
    model = nn.Sequential(nn.Conv3d(2, 4, 3, padding=1, padding_mode="replicate"), nn.BatchNorm3d(4),
                          nn.MaxPool3d(2), nn.ConvTranspose3d(4, 2, 2, stride=2), nn.AvgPool3d(3, 1, 1),
                          nn.InstanceNorm3d(2, affine=True), nn.AdaptiveMaxPool3d(3), nn.AdaptiveAvgPool3d(2))
    model.to(dev)
    y = model(_x(2, 2, 4, 4, 4).to(dev))
    assert y.shape == (2, 2, 2, 2, 2) and y.device == dev
    y.sum().backward()
    assert all(p.grad.device == dev for p in model.parameters())


# ---- the layers ------------------------------------------------------------------------------------

def test_conv3d_layer_parameters_and_forward():
    m = nn.Conv3d(4, 6, 3, stride=2, padding=1, groups=2, dtype=minifw.float64)
    assert m.weight.shape == (6, 2, 3, 3, 3) and m.bias.shape == (6,)
    assert list(m.state_dict()) == ["weight", "bias"]
    bound = 1 / math.sqrt(2 * 27)  # kaiming_uniform_(a=sqrt(5)) over fan_in = in // groups * k^3
    assert np.abs(val(m.weight)).max() <= bound and np.abs(val(m.bias)).max() <= bound
    assert np.abs(val(m.weight)).max() > bound / 2  # drawn over the whole range, not zeros
    x = rand((2, 4, 5, 6, 5), 1)
    np.testing.assert_allclose(val(m(minifw.tensor(x))),
                               ref_conv3d(x, val(m.weight), val(m.bias), 2, 1, 1, 2), **TOL64)
    assert list(nn.Conv3d(2, 2, 1, bias=False).state_dict()) == ["weight"]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [(2, 1, 1), "same"])
def test_conv3d_padding_modes(mode, padding):
    m = nn.Conv3d(2, 3, (4, 3, 2), padding=padding, padding_mode=mode, dtype=minifw.float64)
    x = rand((2, 2, 5, 4, 3), 1)
    pads = [(p, p) for p in padding] if padding != "same" else [(1, 2), (1, 1), (0, 1)]
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads, mode=np_mode)
    np.testing.assert_allclose(val(m(minifw.tensor(x))), ref_conv3d(xp, val(m.weight), val(m.bias)), **TOL64)
    np.testing.assert_allclose(val(m(minifw.tensor(x[0]))), ref_conv3d(xp[0], val(m.weight), val(m.bias)),
                               **TOL64)


def test_conv_transpose3d_layer_and_output_size():
    m = nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, groups=2)
    assert m.weight.shape == (4, 3, 3, 3, 3) and m.bias.shape == (6,)
    assert list(m.state_dict()) == ["weight", "bias"]
    assert m(_x(1, 4, 3, 2, 3)).shape == (1, 6, 5, 3, 5)
    assert m(_x(1, 4, 3, 2, 3), output_size=[6, 4, 5]).shape == (1, 6, 6, 4, 5)
    assert m(_x(4, 3, 2, 3), output_size=(6, 5, 3, 6)).shape == (6, 5, 3, 6)
    with pytest.raises(ValueError, match=r"ConvTranspose3d: requested an output size of \[7, 3, 5\], "
                                         r"but valid sizes range from \[5, 3, 5\] to \[6, 4, 6\]"):
        m(_x(1, 4, 3, 2, 3), output_size=(7, 3, 5))


def test_pooling_layers_apply_their_functions():
    x = minifw.tensor(rand((2, 3, 5, 7, 6), 2))
    y, idx = nn.MaxPool3d(3, 2, 1, ceil_mode=True, return_indices=True)(x)
    want, want_idx = ref_max_pool3d(x.numpy(), 3, 2, 1, True)
    np.testing.assert_array_equal(val(y), want)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    np.testing.assert_allclose(val(nn.AvgPool3d((2, 4, 3), 2, 1, count_include_pad=False)(x)),
                               ref_avg_pool3d(x.numpy(), (2, 4, 3), 2, 1, False, False), **TOL64)
    np.testing.assert_allclose(val(nn.AvgPool3d(2, divisor_override=2)(x)),
                               ref_avg_pool3d(x.numpy(), 2, divisor_override=2), **TOL64)
    np.testing.assert_allclose(val(nn.AdaptiveAvgPool3d((2, None, 4))(x)),
                               ref_adaptive_pool3d(x.numpy(), (2, None, 4), "avg"), **TOL64)
    y, idx = nn.AdaptiveMaxPool3d(3, return_indices=True)(x[0])
    np.testing.assert_array_equal(idx.numpy(), ref_adaptive_pool3d(x.numpy()[0], 3, "max")[1])
    assert nn.MaxPool3d(3).stride == 3 and nn.AvgPool3d((1, 2, 3)).stride == (1, 2, 3)


def test_batch_norm3d_normalizes_each_channel_over_n_d_h_w():
    m = nn.BatchNorm3d(3, dtype=minifw.float64)
    x = rand((2, 3, 4, 3, 2), 3) * 2 + 1
    y = val(m(minifw.tensor(x)))
    mean, var = x.mean(axis=(0, 2, 3, 4)), x.var(axis=(0, 2, 3, 4))
    np.testing.assert_allclose(y, (x - mean[:, None, None, None]) / np.sqrt(var[:, None, None, None] + 1e-5),
                               **TOL64)
    count = x.size // 3
    np.testing.assert_allclose(val(m.running_mean), 0.1 * mean, **TOL64)
    np.testing.assert_allclose(val(m.running_var), 0.9 + 0.1 * var * count / (count - 1), **TOL64)
    with pytest.raises(ValueError, match=r"BatchNorm3d: expected 5D input \(got 4D input\)"):
        m(minifw.tensor(x[0]))


def test_instance_norm3d_normalizes_each_sample_and_channel():
    m = nn.InstanceNorm3d(3, dtype=minifw.float64)
    x = rand((2, 3, 4, 3, 2), 4) * 3 - 1
    mean, var = x.mean(axis=(2, 3, 4), keepdims=True), x.var(axis=(2, 3, 4), keepdims=True)
    np.testing.assert_allclose(val(m(minifw.tensor(x))), (x - mean) / np.sqrt(var + 1e-5), **TOL64)
    np.testing.assert_allclose(val(m(minifw.tensor(x[1]))), ((x - mean) / np.sqrt(var + 1e-5))[1], **TOL64)
    with pytest.raises(ValueError, match=r"InstanceNorm3d: expected 4-D \(C, D, H, W\) or 5-D"):
        m(minifw.tensor(x[0, 0]))


def test_dropout3d_drops_whole_volumes():
    minifw.manual_seed(3)
    x = minifw.ones(4, 8, 2, 3, 2)
    y = F.dropout3d(x, 0.5).numpy()
    per_volume = y.reshape(4, 8, -1)
    assert set(np.unique(per_volume)) <= {0.0, 2.0}
    assert (per_volume.min(axis=2) == per_volume.max(axis=2)).all()  # each volume all kept or all dropped
    assert 0 < (per_volume[:, :, 0] == 0).sum() < 32
    unbatched = F.dropout3d(minifw.ones(8, 2, 3, 2), 0.5).numpy().reshape(8, -1)
    assert (unbatched.min(axis=1) == unbatched.max(axis=1)).all() and 0 < (unbatched[:, 0] == 0).sum() < 8
    m = nn.Dropout3d(0.5)
    m.eval()
    assert m(x) is x
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        F.dropout3d(minifw.ones(2, 3, 4), 0.5)


REPRS = [
    ("nn.Conv3d(2, 4, 3)", "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))"),
    ("nn.Conv3d(2, 4, (3, 2, 1), stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode='circular')",
     "Conv3d(2, 4, kernel_size=(3, 2, 1), stride=(2, 2, 2), padding=(1, 1, 1), dilation=(2, 2, 2), groups=2, "
     "bias=False, padding_mode=circular)"),
    ("nn.Conv3d(2, 2, 4, padding='same', padding_mode='reflect')",
     "Conv3d(2, 2, kernel_size=(4, 4, 4), stride=(1, 1, 1), padding=same, padding_mode=reflect)"),
    ("nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, bias=False, dilation=2)",
     "ConvTranspose3d(4, 6, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), dilation=(2, 2, 2), "
     "output_padding=(1, 1, 1), groups=2, bias=False)"),
    ("nn.MaxPool3d(3, 2, 1, ceil_mode=True)",
     "MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True)"),
    ("nn.MaxPool3d((3, 2, 2))", "MaxPool3d(kernel_size=(3, 2, 2), stride=(3, 2, 2), padding=0, dilation=1, "
                                "ceil_mode=False)"),
    ("nn.AvgPool3d(3, 2, 1, True, False, 4)", "AvgPool3d(kernel_size=3, stride=2, padding=1)"),
    ("nn.AvgPool3d((4, 2, 2))", "AvgPool3d(kernel_size=(4, 2, 2), stride=(4, 2, 2), padding=0)"),
    ("nn.AdaptiveAvgPool3d((5, None, 2))", "AdaptiveAvgPool3d(output_size=(5, None, 2))"),
    ("nn.AdaptiveMaxPool3d(2, return_indices=True)", "AdaptiveMaxPool3d(output_size=2)"),
    ("nn.InstanceNorm3d(3, affine=True)",
     "InstanceNorm3d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=False)"),
    ("nn.Dropout3d(0.2)", "Dropout3d(p=0.2, inplace=False)"),
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
    for source in ("nn.BatchNorm3d(5)", "nn.BatchNorm3d(2, affine=False)",
                   "nn.InstanceNorm3d(4, track_running_stats=True)"):
        mine, theirs = eval(source, {"nn": nn}), eval(source, {"nn": torch.nn})
        assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == \
               {k: tuple(v.shape) for k, v in theirs.state_dict().items()}, source


SIGNATURES = {
    nn.Conv3d: "(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
               "bias=True, padding_mode='zeros', device=None, dtype=None)",
    nn.ConvTranspose3d: "(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, "
                        "groups=1, bias=True, dilation=1, padding_mode='zeros', device=None, dtype=None)",
    nn.MaxPool3d: "(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)",
    nn.AvgPool3d: "(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, "
                  "divisor_override=None)",
    nn.AdaptiveAvgPool3d: "(output_size)",
    nn.AdaptiveMaxPool3d: "(output_size, return_indices=False)",
    nn.Dropout3d: "(p=0.5, inplace=False)",
    F.conv3d: "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)",
    F.conv_transpose3d: "(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, "
                        "dilation=1)",
    F.max_pool3d: "(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, "
                  "return_indices=False)",
    F.avg_pool3d: "(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, "
                  "divisor_override=None)",
    F.adaptive_avg_pool3d: "(input, output_size)",
    F.adaptive_max_pool3d: "(input, output_size, return_indices=False)",
    F.dropout3d: "(input, p=0.5, training=True, inplace=False)",
}


@pytest.mark.parametrize("fn", SIGNATURES, ids=lambda f: f.__name__)
def test_signatures_are_pytorchs(fn):
    assert str(inspect.signature(fn)) == SIGNATURES[fn]


def test_names_are_exported():
    for name in ("Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
                 "AdaptiveMaxPool3d", "BatchNorm3d", "InstanceNorm3d", "Dropout3d"):
        assert getattr(nn, name) is getattr(nn.modules, name) and name in nn.modules.__all__


# ---- PyTorch's values and gradients (float64) -------------------------------------------------------

TORCH_OPS = {  # name: (function of (F, inputs...), input shapes)
    "conv3d": (lambda F, x, w, b: F.conv3d(x, w, b, stride=(2, 1, 2), padding=(1, 2, 1), dilation=(2, 1, 1),
                                           groups=2), [(2, 4, 7, 6, 5), (6, 2, 3, 2, 3), (6,)]),
    "conv3d_same": (lambda F, x, w: F.conv3d(x, w, padding="same", dilation=(1, 2, 1)),
                    [(1, 2, 5, 6, 5), (3, 2, 2, 3, 4)]),
    "conv3d_unbatched": (lambda F, x, w, b: F.conv3d(x, w, b, stride=2), [(2, 5, 6, 5), (3, 2, 2, 3, 1), (3,)]),
    "conv_transpose3d": (lambda F, x, w, b: F.conv_transpose3d(x, w, b, (2, 1, 3), (1, 0, 1), (1, 0, 2), 2,
                                                               (2, 1, 1)),
                         [(2, 4, 3, 4, 3), (4, 1, 3, 2, 2), (2,)]),
    "conv_transpose3d_unbatched": (lambda F, x, w: F.conv_transpose3d(x, w, stride=3, output_padding=2),
                                   [(2, 2, 3, 2), (2, 3, 2, 2, 1)]),
    "max_pool3d": (lambda F, x: F.max_pool3d(x, 3, 2, 1, ceil_mode=True), [(2, 3, 8, 7, 6)]),
    "max_pool3d_overlapping": (lambda F, x: F.max_pool3d(x, (2, 3, 2), (1, 2, 3), (1, 1, 0),
                                                         return_indices=True)[0], [(3, 5, 7, 6)]),
    "avg_pool3d": (lambda F, x: F.avg_pool3d(x, 3, 2, 1, True, False), [(2, 3, 8, 7, 6)]),
    "avg_pool3d_include_pad": (lambda F, x: F.avg_pool3d(x, (4, 3, 2), 3, (2, 1, 1), True), [(2, 7, 8, 5)]),
    "avg_pool3d_divisor": (lambda F, x: F.avg_pool3d(x, (3, 2, 3), 2, 1, True, divisor_override=5),
                           [(2, 3, 8, 7, 6)]),
    "adaptive_avg_pool3d": (lambda F, x: F.adaptive_avg_pool3d(x, (3, None, 4)), [(2, 3, 8, 7, 6)]),
    "adaptive_max_pool3d": (lambda F, x: F.adaptive_max_pool3d(x, (3, 2, 4), True)[0], [(2, 3, 8, 7, 6)]),
    "batch_norm_5d": (lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True), [(2, 3, 4, 3, 2), (3,), (3,)]),
    "instance_norm_5d": (lambda F, x: F.instance_norm(x), [(2, 3, 4, 3, 2)]),
}


@pytest.mark.parametrize("name", TORCH_OPS)
def test_values_and_gradients_equal_torchs(name):
    torch = pytest.importorskip("torch")
    fn, shapes = TORCH_OPS[name]
    mine = _grad_inputs(*shapes)
    theirs = [torch.tensor(val(t), requires_grad=True) for t in mine]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note that 'same' with an even kernel pads a copy
        y, ty = fn(F, *mine), fn(torch.nn.functional, *theirs)
    weights = rand(tuple(y.shape), 30)
    (y * minifw.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(val(y), ty.detach().numpy(), **TOL64)
    for t, tt in zip(mine, theirs):
        np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), **TOL64)


def test_max_pool_indices_equal_torchs():
    torch = pytest.importorskip("torch")
    x = rand((2, 3, 7, 8, 6), 8)
    x[0, 0, 1:3, 1:3, 1:3] = 2.0  # a tie across depth slices and within one
    for args in [(3, 2, 1, 1, True), (2, 1, 1), ((4, 2, 3), None, (2, 1, 1), 1, False), (5,)]:
        mine = F.max_pool3d(minifw.tensor(x), *args, return_indices=True)[1]
        theirs = torch.nn.functional.max_pool3d(torch.tensor(x), *args, return_indices=True)[1]
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=str(args))
    for size in (1, (2, 3, 4), (7, 8, 6), (9, 2, 1)):
        mine = F.adaptive_max_pool3d(minifw.tensor(x[0]), size, return_indices=True)[1]
        theirs = torch.nn.functional.adaptive_max_pool3d(torch.tensor(x[0]), size, return_indices=True)[1]
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=str(size))


@pytest.mark.parametrize("source, shape", [
    ("nn.Conv3d(4, 6, 3, stride=2, padding=1, groups=2)", (2, 4, 5, 6, 5)),
    ("nn.Conv3d(2, 3, (4, 3, 2), padding='same', padding_mode='reflect', bias=False)", (2, 2, 5, 4, 3)),
    ("nn.Conv3d(2, 3, 2, padding=(2, 1, 1), padding_mode='circular', dilation=2)", (2, 5, 4, 3)),
    ("nn.Conv3d(2, 3, 3, padding=1, padding_mode='replicate')", (1, 2, 3, 4, 5)),
    ("nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2)", (2, 4, 3, 2, 3)),
    ("nn.BatchNorm3d(3)", (2, 3, 2, 3, 2)),
    ("nn.InstanceNorm3d(3, affine=True, track_running_stats=True)", (2, 3, 2, 3, 2)),
])
def test_layers_equal_torchs_with_its_parameters(source, shape):
    torch = pytest.importorskip("torch")
    mine, theirs = eval(source, {"nn": nn}).double(), eval(source, {"nn": torch.nn}).double()
    with torch.no_grad():
        for p in theirs.parameters():  # not the norms' ones and zeros
            p.uniform_(-1, 1)
    mine.load_state_dict({k: minifw.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x = t64(shape, 3, requires_grad=True)
    tx = torch.tensor(val(x), requires_grad=True)
    y, ty = mine(x), theirs(tx)
    np.testing.assert_allclose(val(y), ty.detach().numpy(), **TOL64)
    (y * minifw.tensor(rand(y.shape, 4))).sum().backward()
    (ty * torch.tensor(rand(y.shape, 4))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **TOL64)
    for (name, p), tp in zip(mine.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), err_msg=name, **TOL64)
    for (name, b), tb in zip(mine.named_buffers(), theirs.buffers()):
        np.testing.assert_allclose(b.numpy(), tb.numpy(), err_msg=name, **TOL64)


def test_signatures_agree_with_torchs_own():
    torch = pytest.importorskip("torch")
    for fn in SIGNATURES:
        theirs = getattr(torch.nn.functional if fn.__module__.endswith("functional") else torch.nn,
                         fn.__name__)
        try:
            params = inspect.signature(theirs).parameters
        except ValueError:  # a builtin (conv3d, avg_pool3d, ...)
            continue
        if list(params) == ["args", "kwargs"]:  # max_pool3d: a dispatcher on return_indices
            continue
        mine = inspect.signature(fn).parameters
        assert list(mine) == list(params), fn.__name__
        assert [p.default for p in mine.values()] == [p.default for p in params.values()], fn.__name__


# ---- errors: the 3-D function or layer, the argument, expected and actual ----------------------------

def _f(*shape):
    return minifw.zeros(*shape)


ERRORS = [
    (lambda: F.conv3d(_f(2, 3, 4), _f(2, 2, 3, 3, 3)), ValueError,
     r"conv3d: input must be 4-D \(C, D, H, W\) or 5-D \(N, C, D, H, W\); got a 3-D tensor of shape "
     r"\(2, 3, 4\)", "conv3d_input_ndim"),
    (lambda: F.conv3d(_f(1, 2, 5, 5, 5), _f(2, 2, 3, 3)), ValueError,
     r"conv3d: weight must be 5-D \(K, C // groups, kD, kH, kW\); got a 4-D tensor of shape \(2, 2, 3, 3\)",
     "conv3d_weight_ndim"),
    (lambda: F.conv3d(_f(1, 2, 5, 5, 5), _f(2, 2, 3, 3, 3), stride=0), ValueError,
     "conv3d: stride must be >= 1, got 0", "conv3d_stride"),
    (lambda: F.conv3d(_f(1, 2, 5, 5, 5), _f(2, 2, 3, 3, 3), stride=(1, 1)), ValueError,
     r"conv3d: stride must be an int or a tuple of 3 ints, got \(1, 1\)", "conv3d_stride_pair"),
    (lambda: F.conv3d(_f(1, 2, 5, 5, 5), _f(2, 2, 3, 3, 3), padding="full"), ValueError,
     "conv3d: padding must be an int, a tuple of 3 ints, 'valid' or 'same'; got 'full'", "conv3d_padding_str"),
    (lambda: F.conv3d(_f(1, 2, 5, 5, 5), _f(2, 2, 3, 3, 3), padding="same", stride=2), ValueError,
     r"conv3d: padding='same' needs stride 1, got stride=\(2, 2, 2\)", "conv3d_same_stride"),
    (lambda: F.conv3d(_f(1, 4, 5, 5, 5), _f(3, 2, 3, 3, 3), groups=2), ValueError,
     r"conv3d: weight.shape\[0\] \(the output channels, 3\) must be divisible by groups=2", "conv3d_groups"),
    (lambda: F.conv3d(_f(1, 3, 5, 5, 5), _f(2, 2, 3, 3, 3)), ValueError,
     r"conv3d: input must have 2 channels to match weight of shape \(2, 2, 3, 3, 3\) with groups=1; got "
     r"input of shape \(1, 3, 5, 5, 5\)", "conv3d_channels"),
    (lambda: F.conv3d(_f(1, 2, 2, 5, 5), _f(2, 2, 3, 3, 3)), ValueError,
     r"conv3d: the output size would be < 1: the padded input \(2, 5, 5\) \(D, H, W\) is smaller than the "
     r"dilated kernel \(3, 3, 3\)", "conv3d_output_size"),
    (lambda: F.conv3d(_f(1, 2, 5, 5, 5), _f(2, 2, 3, 3, 3), _f(3)), ValueError,
     r"conv3d: bias must have shape \(2,\) to match weight", "conv3d_bias"),
    (lambda: F.conv3d(_f(1, 2, 5, 5, 5), _f(2, 2, 3, 3, 3).double()), TypeError,
     "conv3d: weight has dtype float64 but input has dtype float32", "conv3d_dtype"),
    (lambda: F.conv_transpose3d(_f(1, 2, 2, 2, 2), _f(2, 2, 3, 3, 3), padding=3), ValueError,
     r"conv_transpose3d: the output size \(-2, -2, -2\) would be < 1", "conv_transpose3d_output_size"),
    (lambda: F.conv_transpose3d(_f(1, 2, 2, 2, 2), _f(2, 2, 3, 3, 3), output_padding=1), ValueError,
     "conv_transpose3d: output_padding must be smaller than either stride or dilation",
     "conv_transpose3d_output_padding"),
    (lambda: F.conv_transpose3d(_f(1, 3, 2, 2, 2), _f(2, 2, 3, 3, 3)), ValueError,
     r"conv_transpose3d: input must have 2 channels to match weight of shape \(2, 2, 3, 3, 3\)",
     "conv_transpose3d_channels"),
    (lambda: nn.Conv3d(2, 2, (3, 3)), ValueError,
     r"Conv3d: kernel_size must be an int or a tuple of 3 ints, got \(3, 3\)", "Conv3d_kernel"),
    (lambda: nn.Conv3d(2, 4, 3, groups=3), ValueError,
     r"Conv3d: in_channels \(2\) and out_channels \(4\) must be divisible by groups \(3\)", "Conv3d_groups"),
    (lambda: nn.Conv3d(2, 2, 3)(_f(1, 3, 5, 5, 5)), ValueError,
     r"conv3d: input must have 2 channels to match weight of shape \(2, 2, 3, 3, 3\)", "Conv3d_forward"),
    (lambda: nn.ConvTranspose3d(2, 3, 3, padding_mode="reflect"), ValueError,
     'ConvTranspose3d: only "zeros" padding mode is supported', "ConvTranspose3d_padding_mode"),
    (lambda: F.max_pool3d(_f(2, 3, 4), 2), ValueError,
     r"max_pool3d: input must be 4-D \(C, D, H, W\) or 5-D \(N, C, D, H, W\); got a 3-D tensor",
     "max_pool3d_ndim"),
    (lambda: F.max_pool3d(_f(1, 2, 2, 8, 8), 3), ValueError,
     r"max_pool3d: the output depth would be < 1: the padded input depth 2 is shorter than kernel_size=3",
     "max_pool3d_depth"),
    (lambda: F.max_pool3d(_f(1, 2, 8, 2, 8), 3), ValueError, "max_pool3d", "max_pool3d_height"),
    (lambda: F.max_pool3d(_f(1, 2, 8, 8, 8), (2, 2, 2), padding=(0, 0, 2)), ValueError,
     r"max_pool3d: padding must be at most half the kernel size; got padding=\(0, 0, 2\) with "
     r"kernel_size=\(2, 2, 2\) \(width\)", "max_pool3d_padding"),
    (lambda: F.max_pool3d(_f(1, 2, 8, 8, 8), 2, dilation=(1, 0, 1)), ValueError,
     r"max_pool3d: dilation must be >= 1, got \(1, 0, 1\)", "max_pool3d_dilation"),
    (lambda: F.max_pool3d(_f(1, 2, 4, 8, 8), 3, dilation=(2, 1, 1)), ValueError,
     "max_pool3d: the output depth would be < 1: the padded input depth 4 is shorter than kernel_size=3 "
     r"dilated to 5 by dilation=\(2, 1, 1\)", "max_pool3d_dilated_too_deep"),
    (lambda: F.max_pool3d(_f(1, 2, 3, 8, 8), 2, 1, 1, dilation=(4, 1, 1)), ValueError,
     "max_pool3d: output 0 along the depth holds no input element", "max_pool3d_window_misses_input"),
    (lambda: F.avg_pool3d(_f(1, 2, 8, 8, 8), 2, divisor_override=0), ValueError,
     "avg_pool3d: divisor_override must be non-zero, got 0", "avg_pool3d_divisor"),
    (lambda: F.avg_pool3d(_f(1, 2, 8, 8, 8), 2, divisor_override=2.0), TypeError,
     "avg_pool3d: divisor_override", "avg_pool3d_divisor_type"),
    (lambda: F.adaptive_avg_pool3d(_f(1, 2, 8, 8, 8), (2, 2)), ValueError,
     r"adaptive_avg_pool3d: output_size must be an int or a tuple \(out_d, out_h, out_w\), got \(2, 2\)",
     "adaptive_avg_pool3d_size"),
    (lambda: F.adaptive_max_pool3d(_f(1, 2, 8, 8, 8), 0), ValueError,
     "adaptive_max_pool3d: output_size entries must be positive", "adaptive_max_pool3d_size"),
    (lambda: nn.MaxPool3d(0), ValueError, "MaxPool3d: kernel_size must be >= 1, got 0", "MaxPool3d_kernel"),
    (lambda: nn.MaxPool3d(2, padding=2), ValueError, "MaxPool3d: padding must be at most half the kernel",
     "MaxPool3d_padding"),
    (lambda: nn.AvgPool3d(2, stride=0), ValueError, "AvgPool3d: stride must be >= 1, got 0", "AvgPool3d_stride"),
    (lambda: nn.AvgPool3d(2, ceil_mode=None), TypeError, "AvgPool3d: ceil_mode must be a bool, got NoneType",
     "AvgPool3d_ceil_mode"),
    (lambda: nn.AdaptiveAvgPool3d((1, 2)), ValueError, "AdaptiveAvgPool3d: output_size must be an int or a tuple",
     "AdaptiveAvgPool3d_size"),
    (lambda: nn.AdaptiveMaxPool3d(2, return_indices=1), TypeError,
     "AdaptiveMaxPool3d: return_indices must be a bool", "AdaptiveMaxPool3d_flag"),
    (lambda: nn.Dropout3d(1.5), ValueError, r"Dropout3d: p must be a probability in \[0, 1\], got 1.5",
     "Dropout3d_p"),
]


@pytest.mark.parametrize("call, error, message", [e[:3] for e in ERRORS], ids=[e[3] for e in ERRORS])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (4, 3)), ("BatchNorm2d", (2, 3, 2, 2)),
                                       ("BatchNorm3d", (2, 3, 2, 1, 2))])
def test_batch_norm_without_bias_as_pytorchs(cls, shape):
    torch = pytest.importorskip("torch")
    mine, theirs = getattr(nn, cls)(3, bias=False), getattr(torch.nn, cls)(3, bias=False)
    assert repr(mine) == repr(theirs) and mine.bias is None
    assert list(mine.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(mine(minifw.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert repr(getattr(nn, cls)(3, affine=False)) == repr(getattr(torch.nn, cls)(3, affine=False))
