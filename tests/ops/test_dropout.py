"""Dropout: the mask is exactly the one defined by Philox-4x32-10 (checked
against a Python implementation that itself matches the published known-answer
vectors), identical for any thread count, ISA and device (the CPU and the CUDA
kernels on the emulator); the keep fraction; scaling; p = 0 and p = 1;
backward; bad input."""

import numpy as np
import pytest

import minifw
from minifw import ops
from minifw import devices
from reference import bad_call_test, binding_tests, dropout_mask_ref, numerical_grad, philox4x32_10
from targets import assert_on, place, host

DTYPES = (np.float32, np.float64)


def test_reference_philox_matches_known_answers():
    # Known-answer vectors of Philox-4x32-10 (Random123's kat_vectors).
    assert philox4x32_10((0, 0, 0, 0), (0, 0)) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    m = 0xFFFFFFFF
    assert philox4x32_10((m, m, m, m), (m, m)) == (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)
    assert philox4x32_10((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0)) == (
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)


SHAPES = {"one": (1,), "partial_block_5x7": (5, 7), "blocks_2x3x9x11": (2, 3, 9, 11)}
SEEDS = {"seed_0": 0, "seed_1234": 1234, "seed_high_word": 2 ** 40 + 7, "seed_max": 2 ** 64 - 1}


@pytest.mark.parametrize("seed", SEEDS.values(), ids=SEEDS.keys())
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_mask_is_the_defined_philox_mask(target, rng, dtype, shape, seed):
    x = rng.standard_normal(shape).astype(dtype)
    p = 0.3
    y, mask = ops.dropout_forward(place(target, x), p, seed=seed)
    assert_on(target, y, mask)
    assert mask.dtype == np.uint8 and mask.shape == shape and y.dtype == dtype
    np.testing.assert_array_equal(mask, dropout_mask_ref(shape, p, seed))
    # The kept values are x / (1 - p) rounded once, as PyTorch (x * (1 / (1 - p))).
    np.testing.assert_array_equal(y, np.where(host(mask) == 1, x * dtype(1 / (1 - p)), 0))


def test_same_mask_for_any_thread_count_and_isa(rng):
    x = rng.standard_normal((16, 4096)).astype(np.float32)  # large enough to split over threads
    before_threads, before_isa = minifw.get_num_threads(), minifw.backends.get_isa()
    masks = []
    try:
        for isa in minifw.backends.supported_isas():
            minifw.backends.set_isa(isa)
            for n in (1, 2, 3):
                minifw.set_num_threads(n)
                masks.append(ops.dropout_forward(x, 0.5, seed=99)[1])
    finally:
        minifw.set_num_threads(before_threads)
        minifw.backends.set_isa(before_isa)
    for m in masks[1:]:
        np.testing.assert_array_equal(m, masks[0])


@pytest.mark.parametrize("p", [0.1, 0.5, 0.97])
@pytest.mark.parametrize("seed", [5, 2 ** 63 + 12345], ids=["seed_5", "seed_high_word"])
def test_same_seed_same_mask_on_every_device(rng, seed, p):
    # 3 x 1000 elements: 47 blocks of 64 and a partial one, 752 counters, so the
    # GPU's grid has several blocks of threads.
    x = rng.standard_normal((3, 1000)).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    y_cpu, mask_cpu = ops.dropout_forward(x, p, seed=seed)
    y_sim, mask_sim = ops.dropout_forward(place("cudasim", x), p, seed=seed)
    assert devices.of(mask_sim) == "cudasim"
    np.testing.assert_array_equal(mask_sim, mask_cpu)
    np.testing.assert_array_equal(y_sim, y_cpu)
    np.testing.assert_array_equal(ops.dropout_backward(place("cudasim", dy), mask_sim, p),
                                  ops.dropout_backward(dy, mask_cpu, p))


def test_different_seeds_give_different_masks():
    x = np.ones(4096, np.float32)
    a, b = ops.dropout_forward(x, 0.5, seed=1)[1], ops.dropout_forward(x, 0.5, seed=2)[1]
    assert 0.4 < np.mean(a != b) < 0.6  # independent masks differ in about half the places


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_keep_fraction(isa, p):
    n = 200_000
    _, mask = ops.dropout_forward(np.ones(n, np.float32), p, seed=7)
    # Binomial(n, 1 - p): the fraction kept has std sqrt(p (1 - p) / n) (<= 0.0011
    # here); 5 std leaves a false failure with probability < 1e-6.
    std = np.sqrt(p * (1 - p) / n)
    assert abs(mask.mean() - (1 - p)) < 5 * std


def test_p_zero_and_p_one(target, rng):
    x = rng.standard_normal((3, 70)).astype(np.float32)
    x[0, :3] = np.inf, -np.inf, np.nan
    y, mask = ops.dropout_forward(place(target, x), 0.0, seed=3)
    assert_on(target, y, mask)
    np.testing.assert_array_equal(y, x)
    assert np.all(mask == 1)
    y, mask = ops.dropout_forward(place(target, x), 1.0, seed=3)
    assert np.all(y == 0) and np.all(mask == 0)  # exactly 0, even for inf and nan
    dy = place(target, rng.standard_normal(x.shape).astype(np.float32))
    assert np.all(ops.dropout_backward(dy, mask, 1.0) == 0)  # no inf / nan from 1 / (1 - p)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_backward_scales_the_kept_gradients(target, rng, dtype):
    x = rng.standard_normal((4, 33)).astype(dtype)
    dy = rng.standard_normal(x.shape).astype(dtype)
    _, mask = ops.dropout_forward(place(target, x), 0.25, seed=11)
    dx = ops.dropout_backward(place(target, dy), mask, 0.25)
    assert_on(target, dx)
    np.testing.assert_array_equal(dx, np.where(host(mask) == 1, dy * dtype(1 / 0.75), 0))


def test_gradient_matches_finite_differences(rng):
    x = rng.standard_normal((3, 20))
    dy = rng.standard_normal(x.shape)
    _, mask = ops.dropout_forward(x, 0.4, seed=5)
    num = numerical_grad(lambda v: np.sum(ops.dropout_forward(v, 0.4, seed=5)[0] * dy), x)
    np.testing.assert_allclose(ops.dropout_backward(dy, mask, 0.4), num, rtol=1e-7, atol=1e-9)


X = np.ones((2, 3))
BAD_CALLS = {
    "x_int": (lambda: ops.dropout_forward(np.ones(3, np.int64), 0.5, seed=1), TypeError, "dropout_forward: x"),
    "p_negative": (lambda: ops.dropout_forward(X, -0.1, seed=1), ValueError, "dropout_forward: p"),
    "p_above_one": (lambda: ops.dropout_forward(X, 1.5, seed=1), ValueError, "dropout_forward: p"),
    "p_nan": (lambda: ops.dropout_forward(X, float("nan"), seed=1), ValueError, "dropout_forward: p"),
    "seed_negative": (lambda: ops.dropout_forward(X, 0.5, seed=-1), ValueError, "dropout_forward: seed"),
    "seed_too_big": (lambda: ops.dropout_forward(X, 0.5, seed=2 ** 64), ValueError, "dropout_forward: seed"),
    "seed_float": (lambda: ops.dropout_forward(X, 0.5, seed=1.0), TypeError, "dropout_forward: seed"),
    "seed_missing": (lambda: ops.dropout_forward(X, 0.5), TypeError, "seed"),
    "mask_float": (lambda: ops.dropout_backward(X, np.ones((2, 3)), 0.5), TypeError, "dropout_backward: mask"),
    "mask_shape": (lambda: ops.dropout_backward(X, np.ones((3, 2), np.uint8), 0.5), ValueError,
                   "dropout_backward: mask"),
}


test_bad_input_raises_naming_the_argument = bad_call_test(BAD_CALLS)


# ---- the binding's own checks ------------------------------------------------
# minifw._native called directly, bypassing the Python validation: sizes whose
# product wraps around int64 (or is a product of negatives), arrays too small
# or of the wrong kind, outputs sharing memory with inputs. Each must raise,
# never crash; the calls run in a child process (binding_tests in reference.py).

BINDING_SETUP = """
f32 = np.float32
x, y, dx = np.ones(8, f32), np.empty(8, f32), np.empty(8, f32)
mask = np.empty(8, np.uint8)
shared = np.empty(8, f32)
"""
# name: (call, exception it must raise (None: it must return), pattern in the message)
BINDING_CASES = {
    "valid": ("_native.dropout_forward_f32(x, 0.5, 2 ** 64 - 1, y, mask)", None, ""),
    "y_too_small": ("_native.dropout_forward_f32(x, 0.5, 1, y[:7], mask)", ValueError,
                    "y: expected 8 elements, got 7"),
    "mask_float32": ("_native.dropout_forward_f32(x, 0.5, 1, y, np.empty(8, f32))", TypeError,
                     "mask: expected dtype uint8"),
    "mask_overlaps_y": ("_native.dropout_forward_f32(x, 0.5, 1, shared, shared.view(np.uint8)[:8])", ValueError,
                        "y: must not share memory with mask"),
    "y_is_x": ("_native.dropout_forward_f32(shared, 0.5, 1, shared, mask)", ValueError,
               "y: must not share memory with x"),
    "p_nan": ("_native.dropout_forward_f32(x, float('nan'), 1, y, mask)", ValueError, r"p: must be in \[0, 1\]"),
    "p_above_one": ("_native.dropout_forward_f32(x, 1.5, 1, y, mask)", ValueError, "p: must be in"),
    "seed_negative": ("_native.dropout_forward_f32(x, 0.5, -1, y, mask)", TypeError, "incompatible function arguments"),
    "backward_mask_too_small": ("_native.dropout_backward_f32(x, mask[:7], 0.5, dx)", ValueError,
                                "mask: expected 8 elements"),
    "backward_dx_is_dy": ("_native.dropout_backward_f32(shared, mask, 0.5, shared)", ValueError,
                          "dx: must not share memory with dy"),
    # The emulator's entry points share these checks; a few show they are wired.
    "cudasim_valid": ("on_cudasim(_native.dropout_forward_cudasim_f32)(x, 0.5, 2 ** 64 - 1, y, mask)", None, ""),
    "cudasim_y_is_x": ("on_cudasim(_native.dropout_forward_cudasim_f32)(shared, 0.5, 1, shared, mask)", ValueError,
                       "y: must not share memory with x"),
    "cudasim_p_nan": ("on_cudasim(_native.dropout_forward_cudasim_f32)(x, float('nan'), 1, y, mask)", ValueError,
                      r"p: must be in \[0, 1\]"),
    "cudasim_backward_mask_too_small": ("on_cudasim(_native.dropout_backward_cudasim_f32)(x, mask[:7], 0.5, dx)", ValueError,
                                        "mask: expected 8 elements"),
}


binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(BINDING_SETUP, BINDING_CASES)
