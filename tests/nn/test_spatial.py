"""Spatial sampling and patches: affine_grid, grid_sample, unfold / nn.Unfold and fold / nn.Fold.

Values against plain-loop float64 references written here, float64 gradients against finite
differences, values and gradients against PyTorch's (when torch is installed; it is not a
dependency), the same results on cudasim and the emulated cuda as on the CPU, deterministic
gradients, a small spatial transformer that learns, and errors that name the function, the
argument, what was expected and what arrived."""
import inspect
import math
import warnings

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import nn
from gradcheck import gradcheck
from targets import assert_ops_match_the_cpu

# The references below add the same terms in another order: float64 agrees to a few ulp.
# PyTorch's float32 kernels round the coordinates and weights in float32 as these do, but sum
# in other orders (gradients of the grid: a few ulp of sums of up to 16 terms of size ~ W).
TOL64 = dict(rtol=1e-12, atol=1e-12)
TOL32 = dict(rtol=1e-5, atol=1e-5)

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")


def rand(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def t64(values, grad=False):
    return minifw.tensor(values, dtype=minifw.float64, requires_grad=grad)


# ---- a plain-loop reference of grid sampling ---------------------------------------------------

def _pixel(coord, size, align_corners):
    """A grid coordinate in [-1, 1] as a pixel coordinate."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _into_image(p, size, padding_mode, align_corners):
    """Where padding_mode moves pixel coordinate p: mirrored at the edges ([0, size - 1] with
    align_corners, else [-0.5, size - 0.5]) until inside, then clamped to [0, size - 1]."""
    if padding_mode == "zeros":
        return p
    if padding_mode == "reflection":
        lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
        if lo == hi:
            p = lo
        while p < lo or p > hi:
            p = 2 * lo - p if p < lo else 2 * hi - p
    return min(max(p, 0.0), size - 1.0)


def _keys(d, a=-0.75):
    """Keys's cubic convolution kernel at distance d."""
    d = abs(d)
    if d <= 1:
        return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
    return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a if d < 2 else 0.0


def reference_grid_sample(x, grid, mode, padding_mode, align_corners):
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape
    out = np.zeros((n, c, ho, wo))

    def read(b, ch, i, j):
        return x[b, ch, int(i), int(j)] if 0 <= i < h and 0 <= j < w else 0.0

    for b in range(n):
        for oi in range(ho):
            for oj in range(wo):
                px = _pixel(grid[b, oi, oj, 0], w, align_corners)
                py = _pixel(grid[b, oi, oj, 1], h, align_corners)
                if mode == "bicubic":  # padding moves each of the 4 x 4 taps
                    taps = [(_into_image(math.floor(py) + k, h, padding_mode, align_corners),
                             _into_image(math.floor(px) + m, w, padding_mode, align_corners),
                             _keys(py - math.floor(py) - k) * _keys(px - math.floor(px) - m))
                            for k in (-1, 0, 1, 2) for m in (-1, 0, 1, 2)]
                else:
                    px = _into_image(px, w, padding_mode, align_corners)
                    py = _into_image(py, h, padding_mode, align_corners)
                    if mode == "nearest":
                        taps = [(round(py), round(px), 1.0)]  # round half to even
                    else:
                        y0, x0 = math.floor(py), math.floor(px)
                        taps = [(y0 + k, x0 + m, (1 - abs(py - y0 - k)) * (1 - abs(px - x0 - m)))
                                for k in (0, 1) for m in (0, 1)]
                for ch in range(c):
                    out[b, ch, oi, oj] = sum(wt * read(b, ch, i, j) for i, j, wt in taps)
    return out


@pytest.mark.parametrize("align_corners", [False, True], ids=["edges", "align_corners"])
@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_equals_the_loop_reference(mode, padding_mode, align_corners):
    x = rand((1, 2, 5, 7), 1)
    grid = rand((1, 3, 5, 2), 2, -1.7, 1.7)  # a third of the points outside [-1, 1]
    grid[0, 0, :2] = [[-1.0, 1.0], [1.0, -1.0]]  # the corners themselves
    got = F.grid_sample(t64(x), t64(grid), mode, padding_mode, align_corners).numpy()
    np.testing.assert_allclose(got, reference_grid_sample(x, grid, mode, padding_mode,
                                                          align_corners), **TOL64)


def test_grid_sample_of_the_pixel_centres_copies_the_image():
    x = rand((2, 3, 5, 7), 3)
    ys, xs = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(-1, 1, 7), indexing="ij")
    grid = np.broadcast_to(np.stack([xs, ys], -1), (2, 5, 7, 2))
    for mode in MODES:
        got = F.grid_sample(t64(x), t64(grid), mode, align_corners=True).numpy()
        np.testing.assert_allclose(got, x, atol=1e-14, err_msg=mode)


def test_grid_sample_far_outside_and_nonfinite_points_read_zeros():
    x = rand((1, 1, 3, 3), 4)
    grid = np.array([[[[1e30, 0.0], [np.inf, 0.0], [-np.inf, 0.0], [0.0, -1e30]]]])
    for mode in MODES:
        got = F.grid_sample(t64(x), t64(grid), mode).numpy()
        np.testing.assert_array_equal(got, 0.0, err_msg=mode)


# ---- affine_grid ----------------------------------------------------------------------------------

def test_affine_grid_of_the_identity_gives_the_pixel_centres():
    identity = t64(np.tile(np.eye(2, 3), (2, 1, 1)))
    grid = F.affine_grid(identity, (2, 3, 4, 5), align_corners=False).numpy()
    np.testing.assert_allclose(grid[0, 0, :, 0], (2 * np.arange(5) + 1) / 5 - 1, atol=1e-15)
    np.testing.assert_allclose(grid[1, :, 0, 1], (2 * np.arange(4) + 1) / 4 - 1, atol=1e-15)
    corners = F.affine_grid(identity, (2, 3, 4, 5), align_corners=True).numpy()
    assert corners[0, 0, 0].tolist() == [-1, -1] and corners[0, -1, -1].tolist() == [1, 1]
    x = t64(rand((2, 3, 4, 5), 5))
    for align in (False, True):  # sampling at the identity grid is a copy
        grid = F.affine_grid(identity, x.shape, align_corners=align)
        np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=align).numpy(),
                                   x.numpy(), atol=1e-14)


def test_affine_grid_maps_every_point_by_theta():
    theta = rand((2, 2, 3), 6)
    grid = F.affine_grid(t64(theta), [2, 1, 3, 1], align_corners=False).numpy()
    for b in range(2):
        for i, y in enumerate((-2 / 3, 0.0, 2 / 3)):
            np.testing.assert_allclose(grid[b, i, 0], theta[b] @ [0.0, y, 1.0], atol=1e-15)


# ---- unfold and fold against loops -----------------------------------------------------------

UNFOLD_CASES = {  # id: (input shape, kernel_size, dilation, padding, stride)
    "plain": ((2, 3, 4, 5), 2, 1, 0, 1),
    "non_square": ((1, 2, 5, 7), (2, 3), 1, 0, 1),
    "strided_padded": ((2, 2, 7, 6), (3, 2), 1, (1, 2), (2, 3)),
    "dilated": ((1, 3, 7, 8), (2, 3), (2, 1), 1, (1, 2)),
    "kernel_of_the_image": ((2, 1, 3, 4), (3, 4), 1, 0, 1),
}


def _pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


def reference_unfold(x, kernel_size, dilation, padding, stride):
    n, c, h, w = x.shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    cols = np.zeros((n, c * kh * kw, oh * ow))
    for b in range(n):
        for ch in range(c):
            for i in range(kh):
                for j in range(kw):
                    for oi in range(oh):
                        for oj in range(ow):
                            y, xx = oi * sh - ph + i * dh, oj * sw - pw + j * dw
                            if 0 <= y < h and 0 <= xx < w:
                                cols[b, (ch * kh + i) * kw + j, oi * ow + oj] = x[b, ch, y, xx]
    return cols


def reference_fold(cols, output_size, kernel_size, dilation, padding, stride):
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(
        _pair, (output_size, kernel_size, dilation, padding, stride))
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c, h, w))
    for b in range(n):
        for row in range(cols.shape[1]):
            ch, i, j = row // (kh * kw), row // kw % kh, row % kw
            for col in range(cols.shape[2]):
                y, xx = col // ow * sh - ph + i * dh, col % ow * sw - pw + j * dw
                if 0 <= y < h and 0 <= xx < w:
                    out[b, ch, y, xx] += cols[b, row, col]
    return out


@pytest.mark.parametrize("case", UNFOLD_CASES)
def test_unfold_and_fold_equal_the_loop_references(case):
    shape, *args = UNFOLD_CASES[case]
    x = rand(shape, 7)
    cols = F.unfold(t64(x), *args).numpy()
    np.testing.assert_array_equal(cols, reference_unfold(x, *args))
    c = rand(cols.shape, 8)
    np.testing.assert_allclose(F.fold(t64(c), shape[2:], *args).numpy(),
                               reference_fold(c, shape[2:], *args), **TOL64)
    # unbatched forms, and the modules
    np.testing.assert_array_equal(F.unfold(t64(x[0]), *args).numpy(), cols[0])
    np.testing.assert_allclose(F.fold(t64(c[0]), shape[2:], *args).numpy(),
                               reference_fold(c, shape[2:], *args)[0], **TOL64)
    np.testing.assert_array_equal(nn.Unfold(*args)(t64(x)).numpy(), cols)
    np.testing.assert_allclose(nn.Fold(shape[2:], *args)(t64(c)).numpy(),
                               reference_fold(c, shape[2:], *args), **TOL64)


def test_fold_of_unfold_counts_the_windows_over_each_pixel():
    ones = minifw.ones(1, 1, 4, 4, dtype=minifw.float64)
    counts = F.fold(F.unfold(ones, 3, padding=1), (4, 4), 3, padding=1).numpy()[0, 0]
    np.testing.assert_array_equal(counts, [[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6], [4, 6, 6, 4]])


# ---- gradients against finite differences ----------------------------------------------------

def grid_off_the_kinks(shape, h, w, align_corners, seed):
    """Grid points whose pixel coordinates are 0.15 to 0.35 (or 0.65 to 0.85) past an integer,
    some outside the image: away from the integers where bilinear weights bend and the
    half-integers where reflection turns back."""
    rng = np.random.default_rng(seed)
    frac = rng.uniform(0.15, 0.35, shape) + 0.5 * rng.integers(0, 2, shape)
    pixels = np.stack([rng.integers(-3, w + 2, shape[:-1]), rng.integers(-3, h + 2, shape[:-1])],
                      -1) + frac
    sizes = np.array([w, h])
    if align_corners:
        return pixels / (sizes - 1) * 2 - 1
    return (2 * pixels + 1) / sizes - 1


@pytest.mark.parametrize("align_corners", [False, True], ids=["edges", "align_corners"])
@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample_gradients_match_finite_differences(mode, padding_mode, align_corners):
    x = t64(rand((1, 2, 4, 5), 9), grad=True)
    grid = t64(grid_off_the_kinks((1, 3, 3, 2), 4, 5, align_corners, 10), grad=True)
    gradcheck(lambda a, g: F.grid_sample(a, g, mode, padding_mode, align_corners), [x, grid])


def test_nearest_grid_sample_gradients():
    x = t64(rand((2, 2, 3, 4), 11), grad=True)
    grid = t64(grid_off_the_kinks((2, 3, 2, 2), 3, 4, False, 12), grad=True)
    gradcheck(lambda a, g: F.grid_sample(a, g, "nearest", "reflection"), [x, grid])
    F.grid_sample(x, grid, "nearest").sum().backward()
    assert not grid.grad.numpy().any()  # piecewise constant in the grid


def test_affine_grid_and_the_transformer_gradients_match_finite_differences():
    theta = t64(rand((2, 2, 3), 13, -0.6, 0.6) + np.eye(2, 3), grad=True)
    gradcheck(lambda t: F.affine_grid(t, (2, 3, 3, 4), align_corners=False), [theta])
    x = t64(rand((2, 1, 4, 5), 14), grad=True)
    gradcheck(lambda a, t: F.grid_sample(a, F.affine_grid(t, (2, 1, 3, 3), False),
                                         padding_mode="border"), [x, theta])


@pytest.mark.parametrize("case", ["strided_padded", "dilated"])
def test_unfold_and_fold_gradients_match_finite_differences(case):
    shape, *args = UNFOLD_CASES[case]
    x = t64(rand(shape, 15), grad=True)
    gradcheck(lambda a: F.unfold(a, *args), [x])
    cols = t64(rand(F.unfold(x.detach(), *args).shape, 16), grad=True)
    gradcheck(lambda c: F.fold(c, shape[2:], *args), [cols])


def test_gradients_are_the_same_on_every_run():
    """Many points on the same pixels: the scatter-add of dx adds in one order."""
    x = minifw.tensor(rand((2, 3, 4, 4), 17), dtype=minifw.float32, requires_grad=True)
    grid = minifw.tensor(rand((2, 16, 16, 2), 18, -1.2, 1.2), dtype=minifw.float32,
                         requires_grad=True)
    runs = []
    for _ in range(2):
        x.grad = grid.grad = None
        F.grid_sample(x, grid, "bicubic").pow(2).sum().backward()
        runs.append((x.grad.numpy().copy(), grid.grad.numpy().copy()))
    for first, second in zip(*runs):
        np.testing.assert_array_equal(first, second)


# ---- against PyTorch -------------------------------------------------------------------------

def _both(torch, fn, arrays, dy, dtype):
    """fn's output and input gradients in minifw and in torch, for arrays of `dtype`."""
    mine = [minifw.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    out = fn(F, *mine)
    out.backward(minifw.tensor(dy, dtype=dtype))
    theirs = [torch.tensor(a, dtype=getattr(torch, np.dtype(dtype).name), requires_grad=True)
              for a in arrays]
    ref = fn(torch.nn.functional, *theirs)
    ref.backward(torch.tensor(dy, dtype=ref.dtype))
    return ([out.detach().numpy()] + [t.grad.numpy() for t in mine],
            [ref.detach().numpy()] + [t.grad.numpy() for t in theirs])


TORCH_CASES = {
    **{f"grid_sample_{m}_{p}_{a}": (
        (lambda m, p, a: lambda f, x, g: f.grid_sample(x, g, m, p, a))(m, p, a),
        [rand((2, 3, 5, 6), 19), rand((2, 4, 3, 2), 20, -1.4, 1.4)])
       for m in MODES for p in PADDINGS for a in (False, True)},
    # points on the edges, the pixel centres and halfway between them: the ties of rounding,
    # and the gradients at the kinks (PyTorch's one-sided choices)
    **{f"grid_sample_{m}_{p}_on_ties": (
        (lambda m, p: lambda f, x, g: f.grid_sample(x, g, m, p, True))(m, p),
        [rand((1, 2, 3, 5), 26), np.round(rand((1, 5, 5, 2), 27, -1.3, 1.3) * 8) / 8])
       for m in MODES for p in PADDINGS},
    "affine_grid_sample": (lambda f, x, t: f.grid_sample(x, f.affine_grid(t, (2, 3, 4, 6), True),
                                                         "bilinear", "reflection", True),
                           [rand((2, 3, 5, 6), 21), rand((2, 2, 3), 22)]),
    "unfold": (lambda f, x: f.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
               [rand((2, 3, 5, 6), 23)]),
    "fold": (lambda f, c: f.fold(c, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
             [rand((2, 18, 12), 24)]),
}


@pytest.mark.parametrize("name", TORCH_CASES)
def test_values_and_gradients_equal_torchs(name):
    torch = pytest.importorskip("torch")
    fn, arrays = TORCH_CASES[name]
    with minifw.no_grad():
        shape = fn(F, *[t64(a) for a in arrays]).shape
    dy = rand(shape, 25)
    for dtype, tol in ((np.float64, TOL64), (np.float32, TOL32)):
        got, want = _both(torch, fn, arrays, dy, dtype)
        for g, w in zip(got, want):
            assert g.dtype == dtype
            np.testing.assert_allclose(g, w, err_msg=f"{name} {np.dtype(dtype).name}", **tol)


SIGNATURES = {
    F.affine_grid: "(theta, size, align_corners=None)",
    F.grid_sample: "(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None)",
    F.unfold: "(input, kernel_size, dilation=1, padding=0, stride=1)",
    F.fold: "(input, output_size, kernel_size, dilation=1, padding=0, stride=1)",
    nn.Unfold: "(kernel_size, dilation=1, padding=0, stride=1)",
    nn.Fold: "(output_size, kernel_size, dilation=1, padding=0, stride=1)",
}


@pytest.mark.parametrize("fn", SIGNATURES, ids=lambda f: f.__name__)
def test_signatures_and_reprs_are_pytorchs(fn):
    assert str(inspect.signature(fn)) == SIGNATURES[fn]
    assert repr(nn.Unfold((2, 3), stride=2)) == \
        "Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=2)"
    assert repr(nn.Fold(4, 2)) == "Fold(output_size=4, kernel_size=2, dilation=1, padding=0, stride=1)"


def test_signatures_and_reprs_agree_with_torchs_own():
    torch = pytest.importorskip("torch")
    for fn in SIGNATURES:
        theirs = getattr(torch.nn.functional if fn.__module__.endswith("functional") else torch.nn,
                         fn.__name__)
        mine, params = inspect.signature(fn).parameters, inspect.signature(theirs).parameters
        assert list(mine) == list(params), fn.__name__
        assert [p.default for p in mine.values()] == [p.default for p in params.values()], fn.__name__
    assert repr(torch.nn.Unfold((2, 3), stride=2)) == repr(nn.Unfold((2, 3), stride=2))
    assert repr(torch.nn.Fold(4, 2)) == repr(nn.Fold(4, 2))


# ---- the same results on the devices --------------------------------------------------------

def _x(*shape, seed=5, scale=1.0):
    return minifw.randn(*shape, generator=minifw.Generator().manual_seed(seed)) * scale


ON_DEVICES = {  # name: (inputs, operation); CPU tensors, moved to the device under test
    "grid_sample_bilinear": (lambda: [_x(2, 3, 4, 5), _x(2, 3, 4, 2, seed=6, scale=0.7)],
                             lambda x, g: F.grid_sample(x, g, padding_mode="reflection")),
    "grid_sample_bicubic": (lambda: [_x(1, 2, 4, 5), _x(1, 3, 2, 2, seed=6, scale=0.7)],
                            lambda x, g: F.grid_sample(x, g, "bicubic", "border", True)),
    "grid_sample_nearest": (lambda: [_x(1, 2, 4, 5), _x(1, 3, 2, 2, seed=6, scale=0.7)],
                            lambda x, g: F.grid_sample(x, g, "nearest")),
    "affine_grid": (lambda: [_x(2, 1, 4, 4), _x(2, 2, 3, seed=7, scale=0.5)],
                    lambda x, t: F.grid_sample(x, F.affine_grid(t, (2, 1, 3, 5), False))),
    "unfold_fold": (lambda: [_x(2, 2, 5, 4)],
                    lambda x: F.fold(F.unfold(x, (2, 3), padding=1, stride=(2, 1)).relu(), (5, 4),
                                     (2, 3), padding=1, stride=(2, 1))),
}


@pytest.mark.parametrize("name", ON_DEVICES)
def test_ops_and_their_gradients_on_the_device_equal_the_cpus(dev, name):
    assert_ops_match_the_cpu(dev, *ON_DEVICES[name], rtol=1e-5, atol=1e-5, what=name)


# ---- a spatial transformer network learns ------------------------------------------------------

class SpatialTransformerNet(nn.Module):
    """Jaderberg et al.'s spatial transformer in front of a small classifier, as in PyTorch's
    tutorial on MNIST (here on 12 x 12 images)."""

    def __init__(self):
        super().__init__()
        self.localization = nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), nn.ReLU(),
                                          nn.Flatten(), nn.Linear(4 * 5 * 5, 6))
        self.localization[-1].weight.data.zero_()
        self.localization[-1].bias.data.copy_(minifw.tensor([1.0, 0, 0, 0, 1, 0]))
        self.classifier = nn.Sequential(nn.Conv2d(1, 6, 3), nn.ReLU(), nn.MaxPool2d(2),
                                        nn.Flatten(), nn.Linear(6 * 5 * 5, 3))

    def forward(self, x):
        theta = self.localization(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return self.classifier(F.grid_sample(x, grid, align_corners=False))


def test_a_spatial_transformer_network_learns():
    minifw.manual_seed(0)
    model = SpatialTransformerNet()
    images = minifw.randn(24, 1, 12, 12, generator=minifw.Generator().manual_seed(1))
    labels = minifw.tensor(np.arange(24) % 3, dtype=minifw.int64)
    images = images + labels.float().view(-1, 1, 1, 1)  # a learnable class signal
    # theta's gradient sums over every pixel: the localization net takes small steps
    optimizer = minifw.optim.SGD([{"params": model.localization.parameters(), "lr": 0.001},
                                  {"params": model.classifier.parameters()}], lr=0.05,
                                 momentum=0.9)
    losses = []
    for _ in range(8):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses
    assert model.localization[-1].weight.grad.abs().sum().item() > 0  # theta learns too


def test_the_tutorials_calls_run_without_align_corners_or_warnings():
    x = _x(2, 1, 6, 6)
    theta = minifw.tensor(np.tile(np.eye(2, 3), (2, 1, 1)), dtype=minifw.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = F.grid_sample(x, F.affine_grid(theta, x.size()))
    np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-6)


# ---- errors ----------------------------------------------------------------------------------

def _f(*shape):
    return minifw.zeros(*shape)


ERRORS = [
    (lambda: F.grid_sample(_f(1, 1, 4, 4).numpy(), _f(1, 2, 2, 2)), TypeError,
     "grid_sample: input must be a minifw.Tensor, got ndarray", "gs_array"),
    (lambda: F.grid_sample(_f(1, 1, 4, 4, 4), _f(1, 2, 2, 2, 3)), ValueError,
     r"grid_sample: input must be 4-D \(N, C, H, W\) \(5-D volumes are not supported\); got a "
     r"5-D tensor of shape \(1, 1, 4, 4, 4\)", "gs_5d"),
    (lambda: F.grid_sample(_f(1, 1, 4, 4), _f(1, 2, 2)), ValueError,
     r"grid_sample: grid must be 4-D \(N, H_out, W_out, 2\); got a 3-D tensor", "gs_grid_rank"),
    (lambda: F.grid_sample(_f(2, 1, 4, 4), _f(1, 2, 2, 2)), ValueError,
     r"grid_sample: grid must have shape \(N, H_out, W_out, 2\) with N = 2 \(input's batch "
     r"size\); got \(1, 2, 2, 2\)", "gs_grid_batch"),
    (lambda: F.grid_sample(_f(1, 1, 4, 4), _f(1, 2, 2, 3)), ValueError,
     r"grid_sample: grid must have shape \(N, H_out, W_out, 2\).*got \(1, 2, 2, 3\)", "gs_grid_last"),
    (lambda: F.grid_sample(_f(1, 1, 4, 4), _f(1, 2, 2, 2), mode="area"), ValueError,
     "grid_sample: mode must be one of 'bilinear', 'nearest', 'bicubic'; got 'area'", "gs_mode"),
    (lambda: F.grid_sample(_f(1, 1, 4, 4), _f(1, 2, 2, 2), padding_mode="circular"), ValueError,
     "grid_sample: padding_mode must be one of 'zeros', 'border', 'reflection'; got 'circular'",
     "gs_padding"),
    (lambda: F.grid_sample(_f(1, 1, 4, 4), _f(1, 2, 2, 2), align_corners=1), TypeError,
     "grid_sample: align_corners must be a bool, got int 1", "gs_align"),
    (lambda: F.grid_sample(_f(1, 1, 4, 4), _f(1, 2, 2, 2).double()), TypeError,
     "grid_sample: grid has dtype float64 but input has dtype float32", "gs_dtype"),
    (lambda: F.grid_sample(_f(1, 1, 0, 4), _f(1, 2, 2, 2)), ValueError,
     r"grid_sample: input must have H and W >= 1, got shape \(1, 1, 0, 4\)", "gs_empty"),
    (lambda: F.affine_grid(_f(2, 2, 3), (2, 1, 4)), ValueError,
     r"affine_grid: size must be a sequence of 4 ints \(N, C, H, W\) \(only 2-D affine grids are "
     r"supported\), got \(2, 1, 4\)", "ag_size_len"),
    (lambda: F.affine_grid(_f(2, 2, 3), (2, 1, 4, 4.0)), TypeError,
     "affine_grid: size must be an int or a tuple of 4 ints", "ag_size_float"),
    (lambda: F.affine_grid(_f(2, 3, 3), (2, 1, 4, 4)), ValueError,
     r"affine_grid: theta must have shape \(N, 2, 3\) = \(2, 2, 3\) for size \(2, 1, 4, 4\); got "
     r"\(2, 3, 3\)", "ag_theta"),
    (lambda: F.affine_grid(_f(2, 2, 3), (2, 1, 0, 4)), ValueError,
     r"affine_grid: size must have H and W >= 1, got \(2, 1, 0, 4\)", "ag_empty"),
    (lambda: F.affine_grid(_f(2, 2, 3), (2, 1, 4, 4), align_corners="no"), TypeError,
     "affine_grid: align_corners must be a bool, got str 'no'", "ag_align"),
    (lambda: F.unfold(_f(2, 3), 2), ValueError,
     r"unfold: input must be 3-D \(C, H, W\) or 4-D \(N, C, H, W\); got a 2-D tensor of shape "
     r"\(2, 3\)", "unfold_rank"),
    (lambda: F.unfold(_f(1, 1, 3, 3), 4), ValueError,
     r"unfold: kernel_size=\(4, 4\) with dilation=\(1, 1\) does not fit the spatial size \(3, 3\) "
     r"padded by \(0, 0\): it gives \(0, 0\) window positions, and each must be >= 1",
     "unfold_too_big"),
    (lambda: F.unfold(_f(1, 1, 3, 3), 2, stride=0), ValueError,
     "unfold: stride must be >= 1, got 0", "unfold_stride"),
    (lambda: F.unfold(_f(1, 1, 3, 3), 2, padding=-1), ValueError,
     "unfold: padding must be >= 0, got -1", "unfold_padding"),
    (lambda: F.unfold(_f(1, 1, 3, 3), (2, 2, 2)), ValueError,
     r"unfold: kernel_size must be an int or a pair of ints, got \(2, 2, 2\)", "unfold_kernel"),
    (lambda: nn.Unfold(2.5)(_f(1, 1, 3, 3)), TypeError,
     "unfold: kernel_size must be an int or a pair of ints, got 2.5", "Unfold_kernel_float"),
    (lambda: F.fold(_f(1, 5, 4), (3, 3), 2), ValueError,
     r"fold: input's dim 1 must be divisible by kh\*kw = 4 \(kernel_size=\(2, 2\)\); got input of "
     r"shape \(1, 5, 4\)", "fold_rows"),
    (lambda: F.fold(_f(1, 4, 5), (3, 3), 2), ValueError,
     r"fold: input's last dim must be the number of windows L = 2 \* 2 = 4 for "
     r"output_size=\(3, 3\)", "fold_length"),
    (lambda: F.fold(_f(1, 4, 4), (3, 0), 2), ValueError,
     "fold: output_size must be >= 1", "fold_output_size"),
    (lambda: nn.Fold((3, 3), 2)(_f(4, 4, 4, 4)), ValueError,
     r"fold: input must be 2-D \(C\*kh\*kw, L\) or 3-D \(N, C\*kh\*kw, L\); got a 4-D tensor",
     "Fold_rank"),
]


@pytest.mark.parametrize("call, error, message", [e[:3] for e in ERRORS], ids=[e[3] for e in ERRORS])
def test_bad_arguments_raise_errors_that_say_what_is_wrong(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_grid_on_another_device_is_refused(dev):
    with pytest.raises(RuntimeError, match=r"grid_sample: grid is on"):
        F.grid_sample(_f(1, 1, 4, 4), _f(1, 2, 2, 2).to(dev))
