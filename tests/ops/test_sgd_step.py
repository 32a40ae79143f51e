"""The fused SGD step against the float64 reference: every flag combination of
PyTorch's SGD (momentum or none, dampening, Nesterov, weight decay, maximize,
first step or later), sizes from empty to large enough to split over threads, and
the caffe engine's NumPy step against the same reference, float32 and float64, on
the CPU and the CUDA emulator; the gradient is never written, the buffer not read
on the first step nor touched without momentum; bad input."""

import numpy as np
import pytest

import minifw
from minifw import engines, ops
from reference import assert_within_bound, bad_call_test, binding_tests, sgd_step_ref
from targets import assert_on, cuda_available, place

DTYPES = (np.float32, np.float64)
# Each element of p and buf is at most eight roundings deep (g' two, buf three,
# Nesterov's term two, lr * d and the subtraction), each within half an ulp of a
# partial result no larger than the reference on absolute values: 8 half-ulps of
# that scale. The float64 reference rounds as often, so float64 gets twice that.
RTOL = {np.float32: 4 * 2.0 ** -23, np.float64: 8 * 2.0 ** -52}
LR = 0.1

SHAPES = {
    "empty": (0,), "one": (1,), "seven": (7,), "seventeen": (17,), "thousand": (1000,),
    "threaded_100003": (100_003,), "scalar_0d": (), "matrix_31x33": (31, 33),
}
# The SGD step has no ISA variants, so it runs once per device: the `target`
# fixture given the device alone leaves the CPU's ISA as it is. The caffe
# engine's step is the same NumPy code on every device, so it runs on the CPU.
# The emulator runs a fiber per CUDA thread: it leaves out the largest size
# ("thousand" already spans several blocks and a partial one).
# The GPU ("cuda", where there is one) runs them as the emulator does.
DEVICES = ("cpu", "cudasim") + (("cuda",) if cuda_available() else ())
ON_EACH_DEVICE = pytest.mark.parametrize("target", DEVICES, indirect=True)
RUNS = {f"{device}-{engine}-{name}": (device, engine, shape)
        for device, engine in (("cpu", "primitives"), ("cpu", "caffe"), *((d, "primitives") for d in DEVICES[1:]))
        for name, shape in SHAPES.items() if device == "cpu" or not name.startswith("threaded")}


def _flag_cases():
    """{id: flags}: momentum 0 (no buffer), and momentum 0.9 plain, with dampening or
    Nesterov, each on its first step and a later one; all with and without weight decay
    and maximize."""
    cases = {}
    for weight_decay in (0.0, 0.1):
        for maximize in (False, True):
            tail = ("-wd" if weight_decay else "") + ("-maximize" if maximize else "")
            cases["no_momentum" + tail] = dict(momentum=0.0, dampening=0.0, nesterov=False,
                                               weight_decay=weight_decay, maximize=maximize, first_step=False)
            for kind, dampening, nesterov in (("momentum", 0.0, False), ("nesterov", 0.0, True),
                                              ("dampening", 0.3, False)):
                for first_step in (True, False):
                    name = kind + ("-first" if first_step else "-later") + tail
                    cases[name] = dict(momentum=0.9, dampening=dampening, nesterov=nesterov,
                                       weight_decay=weight_decay, maximize=maximize, first_step=first_step)
    return cases


FLAGS = _flag_cases()


@pytest.mark.parametrize("flags", FLAGS.values(), ids=FLAGS.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("target,engine,shape", RUNS.values(), ids=RUNS.keys(), indirect=["target"])
def test_sgd_step_matches_reference(target, rng, engine, dtype, shape, flags):
    p = rng.standard_normal(shape).astype(dtype)
    grad = rng.standard_normal(shape).astype(dtype)
    buf = None
    if flags["momentum"]:
        # On the first step the buffer's contents must not be read: NaN would show.
        buf = np.full(shape, np.nan, dtype) if flags["first_step"] else rng.standard_normal(shape).astype(dtype)
    p0, grad0, buf0 = p.copy(), grad.copy(), None if buf is None else buf.copy()
    p, grad, buf = place(target, p, grad, buf)
    engines.ENGINES[engine].sgd_step(p, grad, buf, lr=LR, **flags)
    ref_p, ref_buf = sgd_step_ref(p0, grad0, buf0, lr=LR, **flags)
    abs_p, abs_buf = sgd_step_ref(p0, grad0, buf0, lr=LR, **flags, absolute=True)
    assert p.dtype == dtype and p.shape == shape
    assert_on(target, p, grad, *([] if buf is None else [buf]))
    assert_within_bound(p, ref_p, abs_p, RTOL[dtype], 0, "p")
    if buf is not None:
        assert_within_bound(buf, ref_buf, abs_buf, RTOL[dtype], 0, "momentum_buffer")
    np.testing.assert_array_equal(grad, grad0)  # the gradient is only read


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@ON_EACH_DEVICE
def test_without_momentum_a_given_buffer_is_left_alone(target, rng, dtype):
    p, grad = rng.standard_normal((2, 50)).astype(dtype)
    buf = rng.standard_normal(50).astype(dtype)
    buf0, p0, g0 = buf.copy(), p.copy(), grad.copy()
    p, grad, buf = place(target, p, grad, buf)
    ops.sgd_step(p, grad, buf, lr=LR, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 maximize=False, first_step=True)
    np.testing.assert_array_equal(buf, buf0)
    assert_within_bound(p, p0 - LR * g0.astype(np.float64), np.abs(p0) + LR * np.abs(g0), RTOL[dtype], 0, "p")


@ON_EACH_DEVICE
def test_weight_decay_zero_adds_no_decay_term(target):
    # 0 * inf is NaN: with weight_decay == 0 the kernel must not form weight_decay * p.
    p, grad = place(target, np.array([np.inf, -np.inf, 1.0]), np.ones(3))
    ops.sgd_step(p, grad, None, lr=LR, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 maximize=False, first_step=False)
    np.testing.assert_array_equal(p, [np.inf, -np.inf, 0.9])


def test_a_non_contiguous_or_read_only_grad_is_accepted(rng):
    p = rng.standard_normal((6, 5))
    grad = rng.standard_normal((5, 6)).T
    grad.setflags(write=False)
    buf = rng.standard_normal((6, 5))
    args = dict(lr=LR, momentum=0.9, dampening=0.0, weight_decay=0.01, nesterov=True, maximize=False,
                first_step=False)
    ref_p, ref_buf = sgd_step_ref(p, grad, buf, **args)
    ops.sgd_step(p, grad, buf, **args)
    np.testing.assert_allclose(p, ref_p, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(buf, ref_buf, rtol=1e-14, atol=1e-15)


@ON_EACH_DEVICE
def test_results_do_not_depend_on_thread_count(target, rng):
    p, grad, buf = place(target, *rng.standard_normal((3, 100_003)).astype(np.float32))
    args = dict(lr=LR, momentum=0.9, dampening=0.1, weight_decay=5e-4, nesterov=False, maximize=False,
                first_step=False)
    before = minifw.get_num_threads()
    out = []
    try:
        for n in (1, 2):
            minifw.set_num_threads(n)
            q, b = p.copy(), buf.copy()
            ops.sgd_step(q, grad, b, **args)
            out.append((q, b))
    finally:
        minifw.set_num_threads(before)
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def _read_only(a):
    a.setflags(write=False)
    return a


P = np.ones((4, 3), np.float32)
ARGS = dict(lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
            first_step=False)
SHARED = np.ones(24, np.float32)


def _sgd(p=None, grad=None, buf="like p", **changes):
    """A call of sgd_step on copies of P except where given, with ARGS but for `changes`."""
    p = P.copy() if p is None else p
    grad = P.copy() if grad is None else grad
    buf = P.copy() if isinstance(buf, str) else buf
    return lambda: ops.sgd_step(p, grad, buf, **dict(ARGS, **changes))


BAD_CALLS = {
    "grad_shape": (_sgd(grad=np.ones((3, 4), np.float32)), ValueError,
                   r"sgd_step: grad must have the shape of p \(4, 3\), got \(3, 4\)"),
    "grad_dtype": (_sgd(grad=np.ones((4, 3))), TypeError, "sgd_step: grad must have dtype float32"),
    "grad_list": (_sgd(grad=[[1.0] * 3] * 4), TypeError, "sgd_step: grad must be a numpy.ndarray"),
    "buffer_shape": (_sgd(buf=np.ones(12, np.float32)), ValueError,
                     r"sgd_step: momentum_buffer must have the shape of p \(4, 3\), got \(12,\)"),
    "buffer_dtype": (_sgd(buf=np.ones((4, 3))), TypeError, "sgd_step: momentum_buffer must have dtype float32"),
    "buffer_missing": (_sgd(buf=None), ValueError,
                       "sgd_step: momentum_buffer must be an array of p's shape when momentum != 0"),
    "p_non_contiguous": (_sgd(p=np.ones((3, 4), np.float32).T), ValueError,
                         "sgd_step: p is updated in place, so it must be a writable, C-contiguous array"),
    "p_read_only": (_sgd(p=_read_only(P.copy())), ValueError, "sgd_step: p is updated in place"),
    "buffer_non_contiguous": (_sgd(buf=np.ones((4, 6), np.float32)[:, ::2]), ValueError,
                              "sgd_step: momentum_buffer is updated in place, so it must be a writable"),
    "buffer_read_only": (_sgd(buf=_read_only(P.copy())), ValueError,
                         "sgd_step: momentum_buffer is updated in place"),
    "p_int": (_sgd(p=np.ones((4, 3), np.int32)), TypeError, "sgd_step: p must have dtype float32 or float64"),
    "p_float16": (_sgd(p=np.ones((4, 3), np.float16)), TypeError, "sgd_step: p must have dtype float32"),
    "p_tensor": (_sgd(p=minifw.ones(4, 3)), TypeError, "sgd_step: p must be a numpy.ndarray .*got Tensor"),
    "grad_is_p": (_sgd(p=SHARED, grad=SHARED, buf=None, momentum=0.0), ValueError,
                  "sgd_step: p and grad must not share memory"),
    "buffer_overlaps_p": (_sgd(p=SHARED[:12].reshape(4, 3), buf=SHARED[6:18].reshape(4, 3)), ValueError,
                          "sgd_step: p and momentum_buffer must not share memory"),
    "lr_nan": (_sgd(lr=float("nan")), ValueError, "sgd_step: lr must be finite"),
    "momentum_string": (_sgd(momentum="0.9"), TypeError, "sgd_step: momentum must be a real number"),
    "weight_decay_inf": (_sgd(weight_decay=float("inf")), ValueError, "sgd_step: weight_decay must be finite"),
    "nesterov_int": (_sgd(nesterov=1), TypeError, "sgd_step: nesterov must be a bool"),
    "first_step_none": (_sgd(first_step=None), TypeError, "sgd_step: first_step must be a bool"),
}

test_bad_input_raises_naming_the_argument = bad_call_test(BAD_CALLS)


# ---- the binding's own checks ------------------------------------------------
# minifw._native called directly, bypassing the Python validation: arrays of the
# wrong shape, dtype or layout, read-only ones, a missing buffer, operands sharing
# memory. Each must raise, never crash; the calls run in a child process
# (binding_tests in reference.py).

BINDING_SETUP = """
f32 = np.float32
p, g, b = np.ones(8, f32), np.ones(8, f32), np.zeros(8, f32)
read_only = np.ones(8, f32)
read_only.setflags(write=False)
shared = np.ones(16, f32)
args = dict(lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
            first_step=False)
no_momentum = dict(args, momentum=0.0)
"""
# name: (call, exception it must raise (None: it must return), pattern in the message)
BINDING_CASES = {
    "valid": ("_native.sgd_step_f32(p, g, b, **args)", None, ""),
    "valid_without_buffer": ("_native.sgd_step_f32(p, g, None, **no_momentum)", None, ""),
    "valid_empty": ("_native.sgd_step_f64(np.empty(0), np.empty(0), np.empty(0), **args)", None, ""),
    "grad_shape": ("_native.sgd_step_f32(p, g.reshape(2, 4), b, **args)", ValueError, "grad: must have p's shape"),
    "grad_too_short": ("_native.sgd_step_f32(p, g[:7], b, **args)", ValueError, "grad: must have p's shape"),
    "buffer_too_short": ("_native.sgd_step_f32(p, g, b[:7], **args)", ValueError,
                         "momentum_buffer: must have p's shape"),
    "p_dtype": ("_native.sgd_step_f32(p.astype(np.float64), g, b, **args)", TypeError,
                "p: expected dtype float32"),
    "grad_dtype": ("_native.sgd_step_f64(p.astype(np.float64), g, b.astype(np.float64), **args)", TypeError,
                   "grad: expected dtype float64"),
    "p_strided": ("_native.sgd_step_f32(shared[::2], g, b, **args)", ValueError,
                  "p: expected a C-contiguous array"),
    "buffer_strided": ("_native.sgd_step_f32(p, g, shared[::2], **args)", ValueError,
                       "momentum_buffer: expected a C-contiguous array"),
    "p_read_only": ("_native.sgd_step_f32(read_only, g, b, **args)", ValueError, "p: expected a writable array"),
    "buffer_read_only": ("_native.sgd_step_f32(p, g, read_only, **args)", ValueError,
                         "momentum_buffer: expected a writable array"),
    "buffer_missing": ("_native.sgd_step_f32(p, g, None, **args)", ValueError,
                       "momentum_buffer: required when momentum != 0"),
    "grad_is_p": ("_native.sgd_step_f32(p, p, b, **args)", ValueError, "p: must not share memory with grad"),
    "buffer_is_p": ("_native.sgd_step_f32(p, g, p, **args)", ValueError,
                    "p: must not share memory with momentum_buffer"),
    "buffer_overlaps_grad": ("_native.sgd_step_f32(p, shared[:8], shared[4:12], **args)", ValueError,
                             "momentum_buffer: must not share memory with grad"),
    # the entry points of device "cudasim" make the same checks
    "cudasim_valid": ("on_cudasim(_native.sgd_step_cudasim_f32)(p, g, b, **args)", None, ""),
    "cudasim_valid_without_buffer": ("on_cudasim(_native.sgd_step_cudasim_f32)(p, g, None, **no_momentum)", None, ""),
    "cudasim_buffer_too_short": ("on_cudasim(_native.sgd_step_cudasim_f32)(p, g, b[:7], **args)", ValueError,
                                 "momentum_buffer: must have p's shape"),
    "cudasim_buffer_missing": ("on_cudasim(_native.sgd_step_cudasim_f32)(p, g, None, **args)", ValueError,
                               "momentum_buffer: required when momentum != 0"),
    "cudasim_grad_is_p": ("on_cudasim(_native.sgd_step_cudasim_f32)(p, p, b, **args)", ValueError,
                          "p: must not share memory with grad"),
    "grad_is_a_list": ("_native.sgd_step_f32(p, [1.0] * 8, b, **args)", TypeError,
                       "incompatible function arguments"),
}

binding_results, test_binding_checks_sizes_and_arrays_itself = binding_tests(BINDING_SETUP, BINDING_CASES)
