"""F.interpolate's interpolating modes ('linear', 'bilinear', 'bicubic', 'trilinear') and 'area',
and the modules that apply them (nn.Upsample, nn.UpsamplingBilinear2d, nn.UpsamplingNearest2d).

Each mode: values against a float64 reference written here one output element at a time from
PyTorch's documented formulas (so the tests mean something without PyTorch), values and
gradients against PyTorch's (when torch is installed; it is not a dependency) for many sizes,
scale factors and align_corners, float64 gradients against finite differences on "cpu" and on
the GPU devices, and errors that name the argument, what was expected and what arrived."""
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

# float64: the reference and PyTorch sum the same few terms in other orders (a few ulp).
# float32: PyTorch computes the source coordinates in float32 as minifw does; the weighted
# sums of up to 4 x 4 terms of O(1) values differ by a few float32 ulp of the largest term.
TOL64 = dict(rtol=1e-12, atol=1e-13)
TOL32 = dict(rtol=1e-5, atol=1e-5)
CUBIC_A = -0.75
RANKS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


# ---- the reference: one output element at a time ---------------------------------------------

def _taps(mode, n_in, n_out, i, align_corners, scale_factor, antialias=False):
    """[(input index, weight)] of output i along one dim, in float64, from PyTorch's
    formulas: source = (i + 0.5) * scale - 0.5 (i * scale with align_corners)."""
    if mode == "area":  # adaptive average pooling's window
        start, end = (i * n_in) // n_out, -(-(i + 1) * n_in // n_out)
        return [(j, 1.0 / (end - start)) for j in range(start, end)]
    if (mode == "linear" or antialias) and n_in == n_out:
        return [(i, 1.0)]  # PyTorch's linear and antialiased kernels copy when the sizes agree
    if align_corners:
        scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        source = i * scale
    else:
        scale = 1.0 / scale_factor if scale_factor else n_in / n_out
        source = (i + 0.5) * scale - 0.5
    if antialias:  # PIL's resampling: the filter stretched by the shrink factor, normalized
        stretch = max(scale, 1.0)
        support = (1.0 if mode == "linear" else 2.0) * stretch
        center = (i + 0.5) * scale
        first, end = max(int(center - support + 0.5), 0), min(int(center + support + 0.5), n_in)
        kernel = (lambda d: max(1.0 - abs(d), 0.0)) if mode == "linear" else \
            (lambda d: _keys(d, -0.5))
        weights = [kernel((j - center + 0.5) / stretch) for j in range(first, end)]
        return [(j, w / sum(weights)) for j, w in zip(range(first, end), weights)]
    if mode == "linear":
        source = max(source, 0.0)
        left = min(math.floor(source), n_in - 1)
        t = min(source - left, 1.0)
        return [(left, 1.0 - t), (min(left + 1, n_in - 1), t)]
    left = min(math.floor(source), n_in - 1)
    t = min(max(source - left, 0.0), 1.0)
    return [(min(max(left + k, 0), n_in - 1), _keys(t - k, CUBIC_A)) for k in (-1, 0, 1, 2)]


def _keys(d, a):
    """Keys's cubic convolution kernel."""
    d = abs(d)
    if d <= 1:
        return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
    return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a if d < 2 else 0.0


def interpolate_ref(x, mode, sizes, align_corners=False, scale_factors=None, antialias=False):
    """x (N, C, *spatial) resized in float64: each output element a sum over the product of
    its per-dim taps ('bilinear', 'bicubic', 'trilinear' taken per dim as 'linear' or cubic)."""
    dim_mode = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    spatial, scale_factors = x.shape[2:], scale_factors or (None,) * len(sizes)
    out = np.zeros(x.shape[:2] + tuple(sizes))
    for o in itertools.product(*map(range, sizes)):
        taps = [_taps(dim_mode, n_in, n_out, i, align_corners, f, antialias)
                for n_in, n_out, i, f in zip(spatial, sizes, o, scale_factors)]
        for combo in itertools.product(*taps):
            index = tuple(j for j, _ in combo)
            out[(slice(None), slice(None)) + o] += math.prod(w for _, w in combo) * x[(...,) + index]
    return out


def _shape(mode, n):
    return (2, 3) + {3: (n,), 4: (n, n + 1), 5: (2, n, n + 1)}[RANKS.get(mode, 4)]


REF_CASES = [  # (mode, input size n, interpolate kwargs)
    (mode, n, kwargs)
    for mode in ("linear", "bilinear", "bicubic", "trilinear", "area")
    for n in (1, 2, 5)
    for kwargs in ([dict(size=_shape(mode, s)[2:]) for s in (1, 3, 8)]
                   + [dict(scale_factor=f) for f in (1.5, 2.0, 0.6)])
    if not (kwargs.get("scale_factor", 1) < 1 and n < 2)  # an output of size 0
]


def _ids(cases):
    return [f"{m}-{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for m, n, kw in cases]


@pytest.mark.parametrize("mode, n, kwargs", REF_CASES, ids=_ids(REF_CASES))
def test_values_equal_the_reference(mode, n, kwargs):
    x = rand(_shape(mode, n), n)
    for align_corners in ((None,) if mode == "area" else (False, True)):
        got = F.interpolate(minifw.tensor(x), mode=mode, align_corners=align_corners, **kwargs)
        sizes = got.shape[2:]
        if "size" in kwargs:
            assert sizes == tuple(kwargs["size"])
        else:
            assert sizes == tuple(int(s * kwargs["scale_factor"]) for s in x.shape[2:])
        factors = (kwargs["scale_factor"],) * len(sizes) if "scale_factor" in kwargs and \
            mode != "area" else None
        want = interpolate_ref(x, mode, sizes, bool(align_corners), factors)
        np.testing.assert_allclose(got.numpy(), want, **TOL64, err_msg=f"{align_corners=}")
        got32 = F.interpolate(minifw.tensor(x, dtype=minifw.float32), mode=mode,
                              align_corners=align_corners, **kwargs)
        assert got32.dtype == minifw.float32
        np.testing.assert_allclose(got32.numpy(), want, **TOL32, err_msg=f"{align_corners=}")


AA_CASES = [(mode, (h, w), kwargs) for mode in ("bilinear", "bicubic")
            for h, w in ((1, 2), (5, 8), (13, 6))
            for kwargs in (dict(size=(2, 3)), dict(size=(7, 16)), dict(scale_factor=0.3),
                           dict(scale_factor=(0.45, 1.5)), dict(scale_factor=1.05))
            if min(int(n * f) for n, f in zip((h, w), np.broadcast_to(kwargs.get("scale_factor", 1), 2))) > 0]


@pytest.mark.parametrize("mode, hw, kwargs", AA_CASES, ids=_ids(AA_CASES))
def test_antialiased_values_equal_the_reference(mode, hw, kwargs):
    x = rand((2, 2) + hw, hw[0])
    for align_corners in (False, True):
        got = F.interpolate(minifw.tensor(x), mode=mode, align_corners=align_corners, antialias=True,
                            **kwargs)
        factors = tuple(np.broadcast_to(kwargs["scale_factor"], 2)) if "scale_factor" in kwargs \
            else None
        want = interpolate_ref(x, mode, got.shape[2:], align_corners, factors, antialias=True)
        np.testing.assert_allclose(got.numpy(), want, **TOL64, err_msg=f"{align_corners=}")


def test_known_values():
    """Small cases worked by hand."""
    x = minifw.tensor([[[1.0, 2.0, 4.0]]], dtype=minifw.float64)
    assert F.interpolate(x, size=5, mode="linear", align_corners=True).tolist() == \
        [[[1.0, 1.5, 2.0, 3.0, 4.0]]]
    # half-pixel centres: outputs at inputs 0.25, 0.75, ... clamped at 0 and at the last
    assert F.interpolate(x, scale_factor=2, mode="linear").tolist() == \
        [[[1.0, 1.25, 1.75, 2.5, 3.5, 4.0]]]
    np.testing.assert_allclose(F.interpolate(x, size=1, mode="area").numpy(), [[[7 / 3]]], **TOL64)
    assert F.interpolate(x, size=2, mode="area").tolist() == [[[1.5, 3.0]]]  # windows overlap
    # bicubic keeps a linear ramp away from the edges (Keys's kernel reproduces lines)
    ramp = minifw.tensor(np.arange(8.0).reshape(1, 1, 1, 8))
    y = F.interpolate(ramp, size=(1, 15), mode="bicubic", align_corners=True).numpy()[0, 0, 0]
    np.testing.assert_allclose(y[2:-2], np.arange(15)[2:-2] / 2, **TOL64)


def test_equal_sizes_copy_in_the_linear_modes_whatever_the_scale_factor():
    """PyTorch's linear kernels copy when the output size equals the input's, even where
    scale_factor (1.05 of 3 elements: 3) would move the sample points; bicubic does not."""
    x = minifw.tensor(rand((1, 2, 3, 3)))
    assert F.interpolate(x, scale_factor=1.05, mode="bilinear").tolist() == x.tolist()
    y = F.interpolate(x, scale_factor=1.05, mode="bicubic")
    assert y.shape == x.shape and not np.allclose(y.numpy(), x.numpy())
    assert F.interpolate(x, size=(3, 3), mode="bicubic").tolist() == x.tolist()


# ---- against PyTorch -------------------------------------------------------------------------

TORCH_SIZES = (1, 2, 3, 5, 8)
TORCH_RESIZES = ([dict(size=s) for s in (1, 2, 3, 4, 7, 13)]
                 + [dict(scale_factor=f) for f in (0.5, 0.7, 1.0, 1.05, 1.3, 1.5, 2.0, 2.5, 3.7, 1 / 3)]
                 + [dict(scale_factor=f, recompute_scale_factor=True) for f in (1.3, 2.6)]
                 + [dict(scale_factor=f, recompute_scale_factor=False) for f in (0.7, 2.6)])


def _torch_and_minifw(torch, mode, x, g, dtype, **kwargs):
    """(value, input gradient) by PyTorch and by minifw, or None where PyTorch refuses."""
    tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    try:
        ty = torch.nn.functional.interpolate(tx, mode=mode, **kwargs)
    except (RuntimeError, ValueError):
        return None
    if ty.numel() == 0:  # minifw refuses an output size of 0 (test_errors_*)
        return None
    ty.backward(torch.tensor(g[tuple(slice(s) for s in ty.shape)], dtype=ty.dtype))
    mx = minifw.tensor(x, dtype=getattr(minifw, dtype), requires_grad=True)
    my = F.interpolate(mx, mode=mode, **kwargs)
    assert my.shape == tuple(ty.shape), (mode, x.shape, kwargs)
    my.backward(minifw.tensor(g[tuple(slice(s) for s in my.shape)], dtype=my.dtype))
    return (my.detach().numpy(), mx.grad.numpy()), (ty.detach().numpy(), tx.grad.numpy())


@pytest.mark.parametrize("mode", ["linear", "bilinear", "bicubic", "trilinear", "area"])
def test_values_and_gradients_equal_torchs(mode):
    torch = pytest.importorskip("torch")
    rank = RANKS.get(mode, 4)
    g = rand((2, 3, 40, 40, 40)[:rank], 9)
    compared = 0
    for n, kwargs, align_corners in itertools.product(
            TORCH_SIZES, TORCH_RESIZES, (None,) if mode == "area" else (None, False, True)):
        shape = (2, 3) + {3: (n,), 4: (n, 6 - n % 4), 5: (2, n, 3)}[rank]
        x = rand(shape, n)
        for dtype, tol in (("float64", TOL64), ("float32", TOL32)):
            pair = _torch_and_minifw(torch, mode, x, g, dtype, align_corners=align_corners,
                                     **kwargs)
            if pair is None:
                continue
            (got, got_grad), (want, want_grad) = pair
            what = f"{mode} {shape} {kwargs} {align_corners=} {dtype}"
            np.testing.assert_allclose(got, want, **tol, err_msg=what)
            if mode == "bicubic" and got.shape == x.shape:
                # PyTorch's bicubic backward copies the gradient when the sizes agree though
                # its forward moves the sample points (scale_factor 1.05); torch.autograd's
                # gradcheck fails there. minifw's is the gradient of the forward.
                continue
            np.testing.assert_allclose(got_grad, want_grad, **tol, err_msg=what + " gradient")
            compared += 1
    assert compared > 100


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialiased_values_and_gradients_equal_torchs(mode):
    torch = pytest.importorskip("torch")
    g = rand((2, 3, 90, 90), 9)
    for (h, w), kwargs, align_corners in itertools.product(
            ((1, 1), (2, 3), (5, 8), (13, 7), (32, 17)),
            [dict(size=s) for s in ((1, 1), (2, 3), (4, 4), (7, 13), (3, 40))]
            + [dict(scale_factor=f) for f in (0.5, 0.3, 0.7, 1.05, 1.3, 2.5, 1 / 3)]
            + [dict(scale_factor=0.3, recompute_scale_factor=True)], (False, True)):
        x = rand((2, 3, h, w), h * w)
        for dtype, tol in (("float64", TOL64), ("float32", TOL32)):
            pair = _torch_and_minifw(torch, mode, x, g, dtype, align_corners=align_corners,
                                     antialias=True, **kwargs)
            if pair is None:
                continue
            (got, got_grad), (want, want_grad) = pair
            what = f"{mode} {(h, w)} {kwargs} {align_corners=} {dtype}"
            np.testing.assert_allclose(got, want, **tol, err_msg=what)
            if "scale_factor" in kwargs and (h == got.shape[2] or w == got.shape[3]):
                # PyTorch's antialiased forward copies along a dim whose size is kept, its
                # backward does not (torch.autograd's gradcheck fails); minifw's is the
                # gradient of the forward.
                continue
            np.testing.assert_allclose(got_grad, want_grad, **tol, err_msg=what + " gradient")


def test_larger_images_equal_torchs():
    torch = pytest.importorskip("torch")
    x = rand((2, 4, 37, 23), 3)
    for mode, kwargs in (("bilinear", dict(size=(64, 70))), ("bicubic", dict(scale_factor=(0.45, 2.3))),
                         ("bilinear", dict(scale_factor=0.3, align_corners=True)),
                         ("area", dict(size=(9, 11))),
                         ("bicubic", dict(size=(11, 9), antialias=True))):
        for dtype, tol in (("float64", TOL64), ("float32", TOL32)):
            (got, got_grad), (want, want_grad) = _torch_and_minifw(
                torch, mode, x, rand((2, 4, 80, 80), 4), dtype, **kwargs)
            np.testing.assert_allclose(got, want, **tol, err_msg=f"{mode} {kwargs}")
            np.testing.assert_allclose(got_grad, want_grad, **tol, err_msg=f"{mode} {kwargs}")


def test_modules_and_deprecated_functions_equal_torchs():
    torch = pytest.importorskip("torch")
    x = rand((1, 2, 3, 4), 5)
    pairs = [(nn.UpsamplingBilinear2d(scale_factor=2), torch.nn.UpsamplingBilinear2d(scale_factor=2)),
             (nn.UpsamplingNearest2d(size=(5, 3)), torch.nn.UpsamplingNearest2d(size=(5, 3))),
             (nn.Upsample(scale_factor=(1.5, 0.5), mode="bicubic"),
              torch.nn.Upsample(scale_factor=(1.5, 0.5), mode="bicubic")),
             (nn.Upsample(size=(2, 7), mode="bilinear", align_corners=True),
              torch.nn.Upsample(size=(2, 7), mode="bilinear", align_corners=True))]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(minifw.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                                   **TOL64, err_msg=repr(ours))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kwargs in (("upsample_bilinear", dict(size=(4, 6))),
                             ("upsample_nearest", dict(scale_factor=2)),
                             ("upsample", dict(scale_factor=1.5, mode="bicubic", align_corners=True))):
            want = getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs).numpy()
            got = getattr(F, name)(minifw.tensor(x), **kwargs).numpy()
            np.testing.assert_allclose(got, want, **TOL64, err_msg=name)


# ---- gradients: finite differences -----------------------------------------------------------

GRADS = {
    "linear_up": (lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"), (2, 2, 3)),
    "linear_down_corners": (lambda x: F.interpolate(x, size=3, mode="linear", align_corners=True),
                            (1, 2, 7)),
    "bilinear": (lambda x: F.interpolate(x, size=(5, 2), mode="bilinear"), (2, 1, 3, 4)),
    "bilinear_corners_to_one": (lambda x: F.interpolate(x, size=(1, 6), mode="bilinear",
                                                        align_corners=True), (1, 2, 3, 2)),
    "bicubic": (lambda x: F.interpolate(x, scale_factor=(1.7, 0.6), mode="bicubic"), (1, 2, 4, 5)),
    "bicubic_corners": (lambda x: F.interpolate(x, size=(4, 3), mode="bicubic", align_corners=True),
                        (2, 1, 2, 5)),
    "bicubic_equal_size": (lambda x: F.interpolate(x, scale_factor=1.1, mode="bicubic"), (1, 1, 3, 3)),
    "trilinear": (lambda x: F.interpolate(x, size=(3, 2, 4), mode="trilinear"), (1, 2, 2, 3, 2)),
    "area": (lambda x: F.interpolate(x, size=(2, 3), mode="area"), (2, 2, 5, 7)),
    "area_1d_scale": (lambda x: F.interpolate(x, scale_factor=0.6, mode="area"), (2, 2, 7)),
    "upsampling_bilinear_2d": (lambda x: nn.UpsamplingBilinear2d(scale_factor=2)(x), (1, 2, 2, 3)),
    "bilinear_antialias": (lambda x: F.interpolate(x, size=(2, 5), mode="bilinear", antialias=True),
                           (1, 2, 7, 3)),
    "bicubic_antialias": (lambda x: F.interpolate(x, scale_factor=(0.4, 1.0), mode="bicubic",
                                                  antialias=True), (2, 1, 8, 3)),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradients_match_finite_differences(name):
    fn, shape = GRADS[name]
    gradcheck(fn, [minifw.tensor(rand(shape), dtype=minifw.float64, requires_grad=True)])


def _device_gradcheck(fn, x, device, eps=1e-6):
    """gradcheck's central differences, the function evaluated on `device`."""
    weights = rand(fn(minifw.tensor(x)).shape, 7)
    t = minifw.tensor(x, device=device, requires_grad=True)
    out = fn(t)
    assert out.device == t.device
    out.backward(minifw.tensor(weights, device=device))
    analytic = host(t.grad._data)
    numeric = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        sides = []
        for step in (eps, -eps):
            shifted = x.copy()
            shifted[j] += step
            with minifw.no_grad():
                sides.append(np.sum(weights * fn(minifw.tensor(shifted, device=device)).cpu().numpy()))
        numeric[j] = (sides[0] - sides[1]) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["linear_up", "bilinear", "bicubic", "trilinear", "area",
                                  "bicubic_antialias"])
def test_gradients_on_the_device_match_finite_differences(dev, name):
    fn, shape = GRADS[name]
    _device_gradcheck(fn, rand(shape), dev)


ON_DEVICES = {
    "linear": (lambda: [minifw.tensor(rand((2, 3, 5)), dtype=minifw.float32)],
               lambda x: F.interpolate(x, scale_factor=1.6, mode="linear", align_corners=True)),
    "bilinear": (lambda: [minifw.tensor(rand((2, 3, 4, 5)), dtype=minifw.float32)],
                 lambda x: F.interpolate(x, size=(7, 3), mode="bilinear")),
    "bicubic": (lambda: [minifw.tensor(rand((2, 3, 4, 5)), dtype=minifw.float32)],
                lambda x: F.interpolate(x, scale_factor=(1.5, 0.8), mode="bicubic")),
    "bilinear_antialias": (lambda: [minifw.tensor(rand((2, 3, 9, 5)), dtype=minifw.float32)],
                           lambda x: F.interpolate(x, size=(4, 3), mode="bilinear", antialias=True)),
    "area": (lambda: [minifw.tensor(rand((2, 3, 6, 5)), dtype=minifw.float32)],
             lambda x: F.interpolate(x, size=(4, 2), mode="area")),
    "trilinear": (lambda: [minifw.tensor(rand((1, 2, 3, 2, 4)), dtype=minifw.float32)],
                  lambda x: F.interpolate(x, scale_factor=(1.0, 2.0, 0.5), mode="trilinear")),
}


@pytest.mark.parametrize("name", ON_DEVICES)
def test_values_and_gradients_on_the_device_equal_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *ON_DEVICES[name], rtol=1e-6, atol=1e-6, what=name)


# ---- shapes, dtypes, edge cases -----------------------------------------------------------------

def test_float32_stays_float32_and_the_result_is_new():
    x = minifw.tensor(rand((1, 2, 3, 3)), dtype=minifw.float32, requires_grad=True)
    for mode in ("bilinear", "bicubic", "area"):
        y = F.interpolate(x, size=(3, 3), mode=mode)  # the identity: still a new tensor
        assert y.dtype == minifw.float32 and y.tolist() == x.tolist()
        assert y._data is not x._data and not np.shares_memory(y._data, x._data)
        y.sum().backward()
        assert x.grad.dtype == minifw.float32
        x.grad = None


def test_empty_batch_non_contiguous_input_and_size_one():
    y = F.interpolate(minifw.zeros(0, 2, 3, 3), size=(5, 4), mode="bicubic")
    assert y.shape == (0, 2, 5, 4)
    x = rand((2, 3, 4, 5))
    transposed = F.interpolate(minifw.tensor(x).permute(0, 1, 3, 2), size=(7, 3), mode="bilinear")
    np.testing.assert_allclose(transposed.numpy(), interpolate_ref(x.transpose(0, 1, 3, 2), "bilinear",
                                                                   (7, 3)), **TOL64)
    one = minifw.tensor(rand((1, 1, 1, 1)))  # one input element: every output copies it
    for mode in ("bilinear", "bicubic", "area"):
        out = F.interpolate(one, size=(3, 2), mode=mode) if mode != "area" else \
            F.interpolate(one, size=(1, 1), mode=mode)
        np.testing.assert_allclose(out.numpy(), np.full(out.shape, one.item()), **TOL64)


def test_upsample_modules():
    x = minifw.tensor(rand((1, 2, 3, 4)))
    assert repr(nn.UpsamplingBilinear2d(scale_factor=2)) == \
        "UpsamplingBilinear2d(scale_factor=2.0, mode='bilinear')"
    assert repr(nn.UpsamplingNearest2d(size=(4, 5))) == "UpsamplingNearest2d(size=(4, 5), mode='nearest')"
    assert nn.UpsamplingBilinear2d(size=3).align_corners is True
    assert nn.modules.upsampling.UpsamplingBilinear2d is nn.UpsamplingBilinear2d
    assert nn.UpsamplingNearest2d(scale_factor=2)(x).tolist() == F.interpolate(x, scale_factor=2).tolist()
    assert nn.UpsamplingBilinear2d(size=(5, 6))(x).tolist() == \
        F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=True).tolist()
    assert nn.Upsample(scale_factor=1.5, mode="bicubic")(x).tolist() == \
        F.interpolate(x, scale_factor=1.5, mode="bicubic").tolist()


def test_deprecated_functions_warn_as_pytorchs():
    x = minifw.tensor(rand((1, 2, 3, 4)))
    for name, kwargs, same in (
            ("upsample_bilinear", dict(size=(4, 6)), dict(mode="bilinear", align_corners=True)),
            ("upsample_nearest", dict(scale_factor=2), dict(mode="nearest")),
            ("upsample", dict(scale_factor=2, mode="bicubic"), {})):
        with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated. Use "
                                             f"`nn.functional.interpolate` instead."):
            got = getattr(F, name)(x, **kwargs)
        assert got.tolist() == F.interpolate(x, **kwargs, **same).tolist()


def test_align_corners_defaults_to_false_without_a_warning():
    x = minifw.tensor(rand((1, 1, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = F.interpolate(x, scale_factor=2, mode="linear")
    assert y.tolist() == F.interpolate(x, scale_factor=2, mode="linear", align_corners=False).tolist()


# ---- errors -----------------------------------------------------------------------------------

def _x(*shape):
    return minifw.tensor(rand(shape), dtype=minifw.float32)


ERRORS = [
    ("align_corners_nearest", lambda: F.interpolate(_x(1, 1, 3, 3), scale_factor=2, align_corners=False),
     ValueError, r"interpolate: align_corners option can only be set with the interpolating modes: "
     r"linear \| bilinear \| bicubic \| trilinear; it must be None for mode='nearest'"),
    ("align_corners_area", lambda: F.interpolate(_x(1, 1, 3, 3), size=2, mode="area", align_corners=True),
     ValueError, "interpolate: align_corners option can only be set .* it must be None for mode='area'"),
    ("align_corners_type", lambda: F.interpolate(_x(1, 1, 3, 3), size=2, mode="bilinear", align_corners=1),
     TypeError, "interpolate: align_corners must be a bool, got int 1"),
    ("bilinear_3d", lambda: F.interpolate(_x(1, 2, 3), scale_factor=2, mode="bilinear"), ValueError,
     r"interpolate: mode='bilinear' needs a 4-D \(N, C, H, W\) input; got a 3-D input of shape "
     r"\(1, 2, 3\) \(for it, use mode='linear'\)"),
    ("linear_4d", lambda: F.interpolate(_x(1, 2, 3, 3), scale_factor=2, mode="linear"), ValueError,
     r"interpolate: mode='linear' needs a 3-D \(N, C, L\) input; got a 4-D input .*use mode='bilinear'"),
    ("bicubic_5d", lambda: F.interpolate(_x(1, 1, 2, 2, 2), size=3, mode="bicubic"), ValueError,
     r"interpolate: mode='bicubic' needs a 4-D \(N, C, H, W\) input; got a 5-D input .*'trilinear'"),
    ("trilinear_4d", lambda: F.interpolate(_x(1, 2, 3, 3), size=4, mode="trilinear"), ValueError,
     r"interpolate: mode='trilinear' needs a 5-D \(N, C, D, H, W\) input; got a 4-D input"),
    ("antialias_mode", lambda: F.interpolate(_x(1, 2, 3), size=2, mode="linear", antialias=True),
     ValueError, "interpolate: antialias applies to the modes bilinear and bicubic of a 4-D input "
     "only; it must be False for mode='linear' and a 3-D input"),
    ("antialias_area", lambda: F.interpolate(_x(1, 2, 3, 3), size=2, mode="area", antialias=True),
     ValueError, "interpolate: antialias applies .* it must be False for mode='area'"),
    ("antialias_type", lambda: F.interpolate(_x(1, 2, 3, 3), size=2, mode="bilinear", antialias=1),
     TypeError, "interpolate: antialias must be a bool, got int 1"),
    ("lanczos", lambda: F.interpolate(_x(1, 2, 3, 3), size=2, mode="lanczos", antialias=True),
     ValueError, "interpolate: mode must be one of 'nearest', 'nearest-exact', 'linear', 'bilinear', "
     "'bicubic', 'trilinear', 'area'; got 'lanczos'"),
    ("integer_input", lambda: F.interpolate(minifw.arange(6).reshape(1, 1, 6), size=3, mode="linear"),
     TypeError, "interpolate: mode='linear' needs a float32 or float64 input, got int64"),
    ("area_size_zero", lambda: F.interpolate(_x(1, 2, 3), scale_factor=0.2, mode="area"), ValueError,
     r"interpolate: scale_factor=0.2 gives an output of size \(0,\)"),
    ("empty_spatial", lambda: F.interpolate(_x(1, 2, 0, 3), size=2, mode="bilinear"), ValueError,
     r"interpolate: input must have non-zero spatial sizes, got shape \(1, 2, 0, 3\)"),
    ("upsample_bilinear_name", lambda: F.upsample_bilinear(_x(1, 2, 3), scale_factor=2), ValueError,
     r"upsample_bilinear: mode='bilinear' needs a 4-D"),
    ("module_mode", lambda: nn.Upsample(scale_factor=2, mode="bilinear")(_x(1, 2, 3)), ValueError,
     r"interpolate: mode='bilinear' needs a 4-D"),
]


@pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning")
@pytest.mark.parametrize("name, call, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_the_argument_and_what_was_expected(name, call, error, message):
    with pytest.raises(error, match=message):
        call()
