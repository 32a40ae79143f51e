"""Argument checking of every public entry point of minifw.ops and minifw.nn.functional:
the reproducers of bad arguments that once crashed, leaked an internal name or passed
silently, and a walk over every public function that hands a bool where an int is
expected, an int or a string where a bool is, and a non-finite or float32-overflowing
number where a float is. Every refusal must name the function called and the argument."""
import inspect
import math

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import ops
from reference import batch_norm_backward_ref
from targets import host


def f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def t32(*shape, seed=0, requires_grad=False):
    return minifw.tensor(f32(*shape, seed=seed), requires_grad=requires_grad)


def refused(error, fn, arg, call):
    """call() raises `error` whose message starts with `fn:` and names `arg`."""
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{fn}: "), message
    assert arg in message, message
    return message


# ---- reproducers: unclear errors ----------------------------------------------------------

def test_conv_stride_beyond_int64_names_stride():
    x, w = f32(1, 2, 5, 5), f32(3, 2, 3, 3)
    message = refused(ValueError, "conv2d_forward", "stride",
                      lambda: ops.conv2d_forward(x, w, stride=2 ** 63))
    assert "9223372036854775808" in message


def test_conv_huge_padding_names_padding():
    x, w = f32(1, 2, 5, 5), f32(3, 2, 3, 3)
    refused(ValueError, "conv2d_forward", "padding", lambda: ops.conv2d_forward(x, w, padding=2 ** 31))
    refused(ValueError, "conv2d_forward", "padding", lambda: ops.conv2d_forward(x, w, padding=2 ** 59))


def test_conv_backward_bias_names_itself_and_dy():
    refused(ValueError, "conv2d_backward_bias", "dy",
            lambda: ops.conv2d_backward_bias(np.zeros((2, 0, 3, 3), np.float32)))
    refused(ValueError, "conv2d_backward_bias", "dy",
            lambda: ops.conv2d_backward_bias(np.zeros((4, 3, 3), np.float32)))
    # An empty batch sums nothing: zeros, as torch's bias gradient.
    np.testing.assert_array_equal(ops.conv2d_backward_bias(np.zeros((0, 4, 3, 3), np.float32)),
                                  np.zeros(4, np.float32))


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("ignore_index", [None, float("nan"), 1.5, "2", True, (1,), np.array(1)],
                         ids=["None", "nan", "1.5", "str", "True", "tuple", "array"])
def test_ignore_index_must_be_an_int(fn, ignore_index):
    x = t32(2, 3)
    target = minifw.tensor(np.array([0, 2]))
    refused(TypeError, fn, "ignore_index", lambda: getattr(F, fn)(x, target, ignore_index=ignore_index))


def test_ignore_index_beyond_int64_is_refused():
    x, target = t32(2, 3), minifw.tensor(np.array([0, 2]))
    refused(ValueError, "cross_entropy", "ignore_index", lambda: F.cross_entropy(x, target, ignore_index=2 ** 63))
    # A NumPy integer is an int.
    assert np.isfinite(F.cross_entropy(x, target, ignore_index=np.int64(1)).item())


def test_pool_dilation_array_is_refused_by_name():
    x = t32(1, 2, 6, 6)
    refused(TypeError, "max_pool2d", "dilation", lambda: F.max_pool2d(x, 2, dilation=np.array([2, 2])))


def test_embedding_padding_idx_and_flatten_dims_must_be_ints():
    weight, idx = t32(4, 3), minifw.tensor(np.array([0, 3]))
    refused(TypeError, "embedding", "padding_idx", lambda: F.embedding(idx, weight, padding_idx="a"))
    refused(TypeError, "embedding", "padding_idx", lambda: F.embedding(idx, weight, padding_idx=1.0))
    x = t32(1, 2, 3, 3)
    refused(TypeError, "flatten", "start_dim", lambda: F.flatten(x, start_dim=None))
    refused(TypeError, "flatten", "end_dim", lambda: F.flatten(x, end_dim=True))


@pytest.mark.parametrize("call, fn, arg", [
    (lambda x: F.max_pool2d(x, 0), "max_pool2d", "kernel_size"),
    (lambda x: F.max_pool2d(x, 7), "max_pool2d", "kernel"),
    (lambda x: F.max_pool2d(x, 4, padding=3), "max_pool2d", "padding"),
    (lambda x: F.avg_pool2d(x, 2, stride=0), "avg_pool2d", "stride"),
    (lambda x: F.avg_pool2d(x, 2, stride=2 ** 60), "avg_pool2d", "stride"),
    (lambda x: F.conv2d(x, t32(3, 2, 3, 3), stride=0), "conv2d", "stride"),
    (lambda x: F.conv2d(x, t32(3, 2, 3, 3), dilation=9), "conv2d", "dilation"),
    (lambda x: F.conv2d(x, t32(3, 2, 3, 3), padding=2 ** 31), "conv2d", "padding"),
    (lambda x: F.local_response_norm(x, 0), "local_response_norm", "size"),
], ids=["kernel_0", "kernel_too_big", "padding_over_half", "stride_0", "stride_huge", "conv_stride_0",
        "conv_dilation", "conv_padding_huge", "lrn_size_0"])
def test_functional_errors_name_the_functional_function(call, fn, arg):
    """Not the primitive beneath it (pool2d_forward, conv2d_forward, lrn_forward)."""
    refused(ValueError, fn, arg, lambda: call(t32(1, 2, 6, 6)))


def test_functional_target_errors_name_the_functional_function():
    x = t32(2, 3)
    refused(ValueError, "cross_entropy", "target", lambda: F.cross_entropy(x, minifw.tensor(np.array([0, 3]))))


def test_broadcast_giant_view_is_checked_before_it_is_copied():
    """A zero-stride view of a few bytes standing for 32 TiB: the ops check dtype, rank and
    problem sizes on the view itself, and a copy that cannot be made says which argument."""
    giant = np.broadcast_to(np.zeros(1, np.float32), (1 << 20, 1 << 20, 8))
    refused(ValueError, "pool2d_forward", "x", lambda: ops.pool2d_forward(giant, 2))  # rank first
    refused(ValueError, "softmax_forward", "x", lambda: ops.softmax_forward(giant))
    refused(MemoryError, "activation_forward", "x", lambda: ops.activation_forward(giant, "relu"))
    too_many = np.broadcast_to(np.zeros(1, np.float32), (1 << 30, 1 << 29))
    refused(ValueError, "scale_tensor", "x", lambda: ops.scale_tensor(too_many, 2.0))  # > 2**58
    plane = np.broadcast_to(np.zeros(1, np.float32), (1, 1, 1 << 16, 1 << 16))
    refused(ValueError, "pool2d_forward", "x_shape", lambda: ops.pool2d_forward(plane, 2))


def test_flatten_of_an_empty_batch():
    x = minifw.zeros(0, 3, 8, 8)
    assert F.flatten(x, 1).shape == (0, 192)
    assert F.flatten(x).shape == (0,)
    assert F.flatten(x, 1, 2).shape == (0, 24, 8)
    assert F.flatten(minifw.tensor(3.0)).shape == (1,)
    # the Tensor method and nn.Flatten agree with the function
    assert x.flatten(1).shape == (0, 192)
    assert x.flatten(0, 1).shape == (0, 8, 8)
    assert minifw.nn.Flatten()(x).shape == (0, 192)


def test_pad_of_an_empty_dim():
    x = minifw.zeros(2, 0, requires_grad=True)
    y = F.pad(x, (1, 2), value=5.0)
    assert y.shape == (2, 3)
    np.testing.assert_array_equal(y.detach().numpy(), np.full((2, 3), 5.0, np.float32))
    y.sum().backward()
    assert x.grad.shape == (2, 0)
    assert F.pad(minifw.zeros(0, 3), (1, 1)).shape == (0, 5)
    refused(ValueError, "pad", "mode", lambda: F.pad(minifw.zeros(1, 2, 0), (1, 1), mode="reflect"))


def test_flatten_and_pad_of_empty_tensors_match_torch():
    torch = pytest.importorskip("torch")
    tF = torch.nn.functional
    assert F.flatten(minifw.zeros(0, 3, 8, 8), 1).shape == tuple(torch.flatten(torch.zeros(0, 3, 8, 8), 1).shape)
    for shape, pad in (((2, 0), (1, 1)), ((0, 3), (2, 0)), ((1, 0, 2), (1, 0, 2, 1))):
        ours = F.pad(minifw.zeros(*shape), pad, value=1.5).numpy()
        theirs = tF.pad(torch.zeros(*shape), pad, value=1.5).numpy()
        np.testing.assert_array_equal(ours, theirs)


# ---- reproducers: accepted silently ---------------------------------------------------------

def test_bool_and_real_flags_are_checked():
    x = t32(2, 3, 4, 4)
    refused(TypeError, "batch_norm", "training",
            lambda: F.batch_norm(x, minifw.zeros(3), minifw.ones(3), training="True"))
    refused(TypeError, "pad", "value", lambda: F.pad(x, (1, 1), value="1"))
    refused(TypeError, "dropout", "training", lambda: F.dropout(x, training=1))
    refused(TypeError, "kl_div", "log_target", lambda: F.kl_div(x, x, reduction="sum", log_target=0))


def test_find_conv_algorithms_repeats_is_bounded():
    problem = ops.ConvProblem((1, 1, 4, 4), (1, 1, 3, 3))
    message = refused(ValueError, "find_conv_algorithms", "repeats",
                      lambda: ops.find_conv_algorithms(problem, "forward", repeats=2 ** 31))
    assert str(ops.conv.MAX_REPEATS) in message
    refused(TypeError, "find_conv_algorithms", "repeats",
            lambda: ops.find_conv_algorithms(problem, "forward", repeats=True))


# ---- reproducers: wrong without a word --------------------------------------------------------

@pytest.mark.parametrize("call, fn, arg", [
    (lambda: ops.activation_forward(np.zeros(4, np.float32), "elu", alpha=1e308), "activation_forward", "alpha"),
    (lambda: ops.activation_forward(np.zeros(4, np.float32), "leaky_relu", negative_slope=-1e308),
     "activation_forward", "negative_slope"),
    (lambda: ops.lrn_forward(f32(1, 3, 2, 2), 3, alpha=1e308), "lrn_forward", "alpha"),
    (lambda: ops.lrn_forward(f32(1, 3, 2, 2), 3, beta=1e308), "lrn_forward", "beta"),
    (lambda: ops.scale_tensor(np.ones(3, np.float32), 1e308), "scale_tensor", "alpha"),
    (lambda: ops.add_tensor(f32(3), f32(3), beta=-1e39), "add_tensor", "beta"),
    (lambda: ops.gemm(f32(2, 2), f32(2, 2), alpha=1e308), "gemm", "alpha"),
    (lambda: F.elu(t32(4), alpha=1e308), "elu", "alpha"),
    (lambda: F.leaky_relu(t32(4), 1e308), "leaky_relu", "negative_slope"),
    (lambda: F.local_response_norm(t32(1, 3, 2, 2), 3, alpha=1e308), "local_response_norm", "alpha"),
    (lambda: F.hardtanh(t32(4), -1e308, 1.0), "hardtanh", "min_val"),
    (lambda: F.pad(t32(4), (1, 1), value=1e308), "pad", "value"),
], ids=["elu", "leaky_relu", "lrn_alpha", "lrn_beta", "scale", "add_beta", "gemm_alpha", "F.elu",
        "F.leaky_relu", "F.lrn", "F.hardtanh", "F.pad"])
def test_float_parameters_must_fit_float32_data(call, fn, arg):
    message = refused(ValueError, fn, arg, call)
    assert "float32" in message


def test_float_parameters_that_fit_float64_data_are_taken():
    y = ops.activation_forward(-np.ones(2), "elu", alpha=1e300)
    np.testing.assert_allclose(y, -1e300 * (1 - np.exp(-1)))
    np.testing.assert_array_equal(ops.scale_tensor(np.ones(2), 1e300), [1e300, 1e300])


def test_float_overflow_refusals_agree_with_torch_where_torch_refuses():
    torch = pytest.importorskip("torch")
    tF = torch.nn.functional
    for theirs in (lambda: tF.elu(torch.zeros(2), alpha=1e308),
                   lambda: tF.leaky_relu(torch.zeros(2), 1e308),
                   lambda: tF.hardtanh(torch.zeros(2), -1e308, 1.0),
                   lambda: tF.pad(torch.zeros(2), (1, 1), value=1e308)):
        with pytest.raises(RuntimeError, match="overflow"):
            theirs()


def _bn_backward_pair(x, dy, weight, device):
    """(dx on `device`, brought back to the host; the float64 reference's dx)."""
    xd, dyd, wd = (minifw.devices.to_device(a, minifw.device(device)) for a in (x, dy, weight))
    _, mean, invstd = ops.batch_norm_forward_training(xd, wd, None, None, None)
    dx = host(ops.batch_norm_backward(dyd, xd, wd, mean, invstd)[0])
    with np.errstate(all="ignore"):
        ref = batch_norm_backward_ref(dy, x, weight)[0].astype(x.dtype)
    return dx, ref


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
@pytest.mark.parametrize("w0", [np.inf, -np.inf, np.nan], ids=["inf", "-inf", "nan"])
def test_batch_norm_backward_non_finite_weight_agrees_with_reference(w0, device):
    """The chain rule through mean and variance gives inf * 0 and inf - inf: NaN over the
    whole channel; the other channels are untouched."""
    x, dy = f32(3, 2, 2, 2, seed=1), f32(3, 2, 2, 2, seed=2)
    weight = np.array([w0, 0.5], np.float32)
    dx, ref = _bn_backward_pair(x, dy, weight, device)
    assert np.isnan(ref[:, 0]).all()
    np.testing.assert_array_equal(dx[:, 0], ref[:, 0])
    np.testing.assert_allclose(dx[:, 1], ref[:, 1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_batch_norm_backward_weight_near_float32_max_agrees_with_reference(device):
    """w * invstd overflows float32 though the gradient need not: computed in double, as
    the reference, then rounded (to +-inf where it does not fit)."""
    x, dy = f32(2, 1, 1, 2, seed=3), f32(2, 1, 1, 2, seed=4)
    weight = np.array([3e38], np.float32)
    dx, ref = _bn_backward_pair(x, dy, weight, device)
    assert not np.isnan(dx).any()
    np.testing.assert_array_equal(np.isinf(dx), np.isinf(ref))
    finite = np.isfinite(ref)
    np.testing.assert_allclose(dx[finite], ref[finite], rtol=1e-4)


# ---- the walk: every public function -------------------------------------------------------

def _ops_calls():
    x4, w4 = f32(1, 2, 5, 5), f32(3, 2, 3, 3)
    dy4 = f32(1, 3, 3, 3)
    problem = ops.ConvProblem((1, 2, 5, 5), (3, 2, 3, 3))
    logits, target = f32(2, 3), np.array([0, 2])
    log_probs = ops.softmax_forward(logits, log=True)
    p6 = f32(1, 2, 6, 6)
    y_lrn, scale = ops.lrn_forward(x4, 3)
    bn = lambda: (f32(4, 3), np.ones(3, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32),
                  np.ones(3, np.float32))
    _, save_mean, save_invstd = ops.batch_norm_forward_training(f32(4, 3), None, None, None, None)
    _, mask = ops.dropout_forward(f32(6), 0.5, seed=1)
    desc = ops.RNNDescriptor("gru", 3, 4)
    xr, wr = f32(2, 1, 3), f32(desc.weight_count())
    _, _, _, reserve = ops.rnn_forward(desc, xr, None, None, wr)
    sgd = dict(lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
               first_step=True)
    return {
        # name: (a function building (args, kwargs) afresh, extra int params, extra float params)
        "ConvProblem": (lambda: (((1, 2, 5, 5), (3, 2, 3, 3)), {}), (), ()),
        "conv2d_forward": (lambda: ((x4, w4), {}), (), ()),
        "conv2d_backward_data": (lambda: ((dy4, w4, (1, 2, 5, 5)), {}), (), ()),
        "conv2d_backward_filter": (lambda: ((x4, dy4, (3, 2, 3, 3)), {}), (), ()),
        "conv2d_backward_bias": (lambda: ((dy4,), {}), (), ()),
        "conv_algorithms": (lambda: ((problem, "forward"), {}), (), ()),
        "conv_algorithm": (lambda: ((problem, "forward"), {}), (), ()),
        "conv_workspace_size": (lambda: ((problem, "forward", "im2col_gemm"), {}), (), ()),
        "find_conv_algorithms": (lambda: ((problem, "forward"), {"repeats": 1}), (), ()),
        "autotune_cache": (lambda: ((), {}), (), ()),
        "clear_autotune_cache": (lambda: ((), {}), (), ()),
        "activation_forward": (lambda: ((f32(4), "elu"), {}), (), ()),
        "activation_backward": (lambda: ((f32(4), f32(4, seed=1), "relu"), {}), (), ()),
        "softmax_forward": (lambda: ((logits,), {}), (), ()),
        "softmax_backward": (lambda: ((f32(2, 3), ops.softmax_forward(logits)), {}), (), ()),
        "cross_entropy_forward": (lambda: ((logits, target), {}), (), ()),
        "cross_entropy_backward": (lambda: ((1.0, log_probs, target), {}), (), ()),
        "PoolProblem": (lambda: (((1, 2, 6, 6), 2), {}), ("kernel_size",), ()),
        "pool2d_forward": (lambda: ((p6, 2), {}), ("kernel_size",), ()),
        "pool2d_backward": (lambda: ((f32(1, 2, 3, 3), (1, 2, 6, 6), 2), {"mode": "avg"}), ("kernel_size",), ()),
        "lrn_forward": (lambda: ((x4, 3), {}), ("size",), ()),
        "lrn_backward": (lambda: ((f32(1, 2, 5, 5), x4, y_lrn, scale, 3), {}), ("size",), ()),
        "batch_norm_forward_training": (lambda: (bn(), {}), (), ()),
        "batch_norm_forward_inference": (lambda: (bn(), {}), (), ()),
        "batch_norm_backward": (lambda: ((f32(4, 3), f32(4, 3), None, save_mean, save_invstd), {}), (), ()),
        "dropout_forward": (lambda: ((f32(6), 0.5), {"seed": 1}), ("seed",), ("p",)),
        "dropout_backward": (lambda: ((f32(6), mask, 0.5), {}), (), ("p",)),
        "bias_add": (lambda: ((f32(2, 3), f32(3)), {}), (), ()),
        "bias_backward": (lambda: ((f32(2, 3),), {}), (), ()),
        "add_tensor": (lambda: ((f32(3), f32(3)), {}), (), ()),
        "scale_tensor": (lambda: ((f32(3), 2.0), {}), (), ("alpha",)),
        "embedding_backward": (lambda: ((np.array([0, 2, 2]), f32(3, 2), 4), {}), ("num_embeddings",), ()),
        "gemm": (lambda: ((f32(2, 3), f32(3, 2)), {}), (), ()),
        "sgd_step": (lambda: ((f32(3), f32(3, seed=1), np.zeros(3, np.float32)), dict(sgd)), (),
                     ("lr", "momentum", "dampening", "weight_decay")),
        "RNNDescriptor": (lambda: (("gru", 3, 4), {}), ("input_size", "hidden_size"), ()),
        "rnn_forward": (lambda: ((desc, xr, None, None, wr), {}), (), ()),
        "rnn_backward_data": (lambda: ((desc, xr, wr, reserve.copy(), None, None, f32(2, 1, 4), None, None),
                                       {}), (), ()),
        "rnn_backward_weights": (lambda: ((desc, xr, reserve.copy(), None, np.zeros_like(wr)), {}), (), ()),
    }


def _functional_calls():
    x4 = lambda: t32(1, 2, 6, 6)
    x2 = lambda: t32(2, 3)
    probs = lambda: minifw.tensor(np.full((2, 3), 0.5, np.float32))
    target = lambda: minifw.tensor(np.array([0, 2]))
    return {
        "conv2d": (lambda: ((x4(), t32(3, 2, 3, 3)), {}), (), ()),
        "max_pool2d": (lambda: ((x4(), 2), {}), ("kernel_size",), ()),
        "avg_pool2d": (lambda: ((x4(), 2), {}), ("kernel_size",), ()),
        "adaptive_avg_pool2d": (lambda: ((x4(), 2), {}), ("output_size",), ()),
        "adaptive_max_pool2d": (lambda: ((x4(), 2), {}), ("output_size",), ()),
        "relu": (lambda: ((x2(),), {}), (), ()),
        "relu6": (lambda: ((x2(),), {}), (), ()),
        "leaky_relu": (lambda: ((x2(),), {}), (), ()),
        "elu": (lambda: ((x2(),), {}), (), ()),
        "sigmoid": (lambda: ((x2(),), {}), (), ()),
        "tanh": (lambda: ((x2(),), {}), (), ()),
        "gelu": (lambda: ((x2(),), {}), (), ()),
        "silu": (lambda: ((x2(),), {}), (), ()),
        "hardtanh": (lambda: ((x2(),), {}), (), ()),
        "softmax": (lambda: ((x2(), 1), {}), ("dim",), ()),
        "log_softmax": (lambda: ((x2(), 1), {}), ("dim",), ()),
        "softmin": (lambda: ((x2(), 1), {}), ("dim",), ()),
        "cross_entropy": (lambda: ((x2(), target()), {}), (), ()),
        "nll_loss": (lambda: ((x2(), target()), {}), (), ()),
        "mse_loss": (lambda: ((x2(), x2()), {}), (), ()),
        "l1_loss": (lambda: ((x2(), x2()), {}), (), ()),
        "smooth_l1_loss": (lambda: ((x2(), x2()), {}), (), ()),
        "huber_loss": (lambda: ((x2(), x2()), {}), (), ()),
        "binary_cross_entropy": (lambda: ((probs(), probs()), {}), (), ()),
        "binary_cross_entropy_with_logits": (lambda: ((x2(), probs()), {}), (), ()),
        "kl_div": (lambda: ((x2(), probs()), {"reduction": "sum"}), (), ()),
        "local_response_norm": (lambda: ((x4(), 3), {}), ("size",), ()),
        "batch_norm": (lambda: ((t32(4, 3), minifw.zeros(3), minifw.ones(3)), {}), (), ()),
        "dropout": (lambda: ((x2(),), {}), (), ()),
        "dropout1d": (lambda: ((t32(2, 3, 4),), {}), (), ()),
        "dropout2d": (lambda: ((x4(),), {}), (), ()),
        "linear": (lambda: ((x2(), t32(4, 3)), {}), (), ()),
        "embedding": (lambda: ((target(), t32(4, 3)), {}), ("padding_idx",), ("max_norm",)),
        "flatten": (lambda: ((x4(),), {}), (), ()),
        "pad": (lambda: ((x2(), (1, 1)), {}), (), ()),
        "layer_norm": (lambda: ((t32(2, 3), (3,)), {}), (), ()),
        "group_norm": (lambda: ((t32(2, 4, 3), 2), {}), ("num_groups",), ()),
        "normalize": (lambda: ((x2(),), {}), (), ()),
        "cosine_similarity": (lambda: ((x2(), t32(2, 3, seed=1)), {}), (), ()),
        "softplus": (lambda: ((x2(),), {}), (), ()),
        "prelu": (lambda: ((x2(), t32(1)), {}), (), ()),
        "one_hot": (lambda: ((target(),), {}), (), ()),
        "conv_transpose2d": (lambda: ((x4(), t32(2, 3, 3, 3)), {}), (), ()),
        "interpolate": (lambda: ((x4(),), {"scale_factor": 2.0}), (), ("scale_factor",)),
        "upsample": (lambda: ((x4(),), {"scale_factor": 2.0}), (), ("scale_factor",)),
        "upsample_nearest": (lambda: ((x4(),), {"scale_factor": 2.0}), (), ("scale_factor",)),
        "upsample_bilinear": (lambda: ((x4(),), {"scale_factor": 2.0}), (), ("scale_factor",)),
        "embedding_bag": (lambda: ((minifw.tensor([0, 2, 1]), t32(4, 3), minifw.tensor([0, 1])), {}),
                          ("padding_idx",), ("max_norm", "norm_type")),
        "bilinear": (lambda: ((x2(), t32(2, 4), t32(5, 3, 4)), {}), (), ()),
        "ctc_loss": (lambda: ((minifw.log_softmax(t32(4, 2, 3), 2), minifw.tensor([[1, 2], [2, 0]]),
                               [4, 3], [2, 1]), {}), (), ()),
        "hardswish": (lambda: ((x2(),), {}), (), ()),
        "hardsigmoid": (lambda: ((x2(),), {}), (), ()),
        "mish": (lambda: ((x2(),), {}), (), ()),
        "selu": (lambda: ((x2(),), {}), (), ()),
        "celu": (lambda: ((x2(),), {}), (), ()),
        "glu": (lambda: ((t32(2, 4),), {}), (), ()),
        "logsigmoid": (lambda: ((x2(),), {}), (), ()),
        "softsign": (lambda: ((x2(),), {}), (), ()),
        "tanhshrink": (lambda: ((x2(),), {}), (), ()),
        "hardshrink": (lambda: ((x2(),), {}), (), ()),
        "softshrink": (lambda: ((x2(),), {}), (), ()),
        "threshold": (lambda: ((x2(), 0.1, 0.0), {}), (), ("threshold", "value")),
        "rms_norm": (lambda: ((x2(), (3,)), {}), (), ("eps",)),
        "instance_norm": (lambda: ((t32(2, 3, 4),), {}), (), ()),
        "pixel_shuffle": (lambda: ((t32(1, 4, 2, 2), 2), {}), ("upscale_factor",), ()),
        "pixel_unshuffle": (lambda: ((t32(1, 1, 4, 4), 2), {}), ("downscale_factor",), ()),
        "channel_shuffle": (lambda: ((t32(1, 4, 2, 2), 2), {}), ("groups",), ()),
        "triplet_margin_loss": (lambda: ((x2(), t32(2, 3, seed=1), t32(2, 3, seed=2)), {}), (), ("p",)),
        "margin_ranking_loss": (lambda: ((t32(3), t32(3, seed=1), minifw.tensor([1.0, -1.0, 1.0])), {}),
                                (), ("margin",)),
        "cosine_embedding_loss": (lambda: ((x2(), t32(2, 3, seed=1), minifw.tensor([1.0, -1.0])), {}),
                                  (), ("margin",)),
        "poisson_nll_loss": (lambda: ((x2(), probs()), {}), (), ()),
        "gaussian_nll_loss": (lambda: ((x2(), t32(2, 3, seed=1), probs()), {}), (), ()),
        "soft_margin_loss": (lambda: ((x2(), minifw.tensor(np.ones((2, 3), np.float32))), {}), (), ()),
        "multilabel_soft_margin_loss": (lambda: ((x2(), probs()), {}), (), ()),
        "hinge_embedding_loss": (lambda: ((x2(), minifw.tensor(np.ones((2, 3), np.float32))), {}), (), ()),
        "conv1d": (lambda: ((t32(2, 2, 7), t32(3, 2, 3)), {}), (), ()),
        "conv_transpose1d": (lambda: ((t32(2, 2, 5), t32(2, 3, 3)), {}), (), ()),
        "max_pool1d": (lambda: ((t32(2, 3, 8), 2), {}), ("kernel_size",), ()),
        "avg_pool1d": (lambda: ((t32(2, 3, 8), 2), {}), ("kernel_size",), ()),
        "adaptive_avg_pool1d": (lambda: ((t32(2, 3, 8), 3), {}), ("output_size",), ()),
        "adaptive_max_pool1d": (lambda: ((t32(2, 3, 8), 3), {}), ("output_size",), ()),
        "conv3d": (lambda: ((t32(1, 2, 4, 5, 5), t32(3, 2, 2, 3, 3)), {}), (), ()),
        "conv_transpose3d": (lambda: ((t32(1, 2, 3, 3, 3), t32(2, 3, 2, 2, 2)), {}), (), ()),
        "max_pool3d": (lambda: ((t32(1, 2, 4, 6, 6), 2), {}), ("kernel_size",), ()),
        "avg_pool3d": (lambda: ((t32(1, 2, 4, 6, 6), 2), {}), ("kernel_size", "divisor_override"), ()),
        "adaptive_avg_pool3d": (lambda: ((t32(1, 2, 4, 6, 6), 2), {}), ("output_size",), ()),
        "adaptive_max_pool3d": (lambda: ((t32(1, 2, 4, 6, 6), 2), {}), ("output_size",), ()),
        "dropout3d": (lambda: ((t32(2, 3, 2, 3, 4),), {}), (), ()),
        "scaled_dot_product_attention": (lambda: ((t32(2, 3, 4), t32(2, 5, 4, seed=1), t32(2, 5, 4, seed=2)),
                                                  {}), (), ("scale",)),
        "multi_head_attention_forward": (lambda: ((t32(3, 2, 4), t32(3, 2, 4, seed=1), t32(3, 2, 4, seed=2), 4, 2,
                                                   t32(12, 4, seed=3), t32(12, seed=4), None, None, False, 0.0,
                                                   t32(4, 4, seed=5), t32(4, seed=6)), {}),
                                         ("embed_dim_to_check", "num_heads"), ("dropout_p",)),
        "affine_grid": (lambda: ((t32(2, 2, 3), (2, 1, 4, 5)), {}), (), ()),
        "grid_sample": (lambda: ((x4(), minifw.tensor(np.zeros((1, 3, 4, 2), np.float32))), {}), (), ()),
        "unfold": (lambda: ((x4(), 3), {}), ("kernel_size",), ()),
        "fold": (lambda: ((t32(1, 8, 9), (4, 4), 2), {}), ("output_size", "kernel_size"), ()),
        "max_pool1d_with_indices": (lambda: ((t32(2, 3, 8), 2), {}), ("kernel_size",), ()),
        "max_pool2d_with_indices": (lambda: ((x4(), 2), {}), ("kernel_size",), ()),
        "max_pool3d_with_indices": (lambda: ((t32(1, 2, 4, 6, 6), 2), {}), ("kernel_size",), ()),
        "adaptive_max_pool1d_with_indices": (lambda: ((t32(2, 3, 8), 3), {}), ("output_size",), ()),
        "adaptive_max_pool2d_with_indices": (lambda: ((x4(), 2), {}), ("output_size",), ()),
        "adaptive_max_pool3d_with_indices": (lambda: ((t32(1, 2, 4, 6, 6), 2), {}), ("output_size",), ()),
        "max_unpool1d": (lambda: ((t32(2, 3, 4), F.max_pool1d(t32(2, 3, 8), 2, return_indices=True)[1], 2),
                                  {}), ("kernel_size",), ()),
        "max_unpool2d": (lambda: ((t32(1, 2, 3, 3), F.max_pool2d(x4(), 2, return_indices=True)[1], 2), {}),
                         ("kernel_size",), ()),
        "max_unpool3d": (lambda: ((t32(1, 2, 2, 3, 3), F.max_pool3d(t32(1, 2, 4, 6, 6), 2, return_indices=True)[1],
                                   2), {}), ("kernel_size",), ()),
        "lp_pool1d": (lambda: ((t32(2, 3, 8), 2.0, 2), {}), ("kernel_size",), ("norm_type",)),
        "lp_pool2d": (lambda: ((x4(), 2.0, 2), {}), ("kernel_size",), ("norm_type",)),
        "lp_pool3d": (lambda: ((t32(1, 2, 4, 6, 6), 2.0, 2), {}), ("kernel_size",), ("norm_type",)),
        "fractional_max_pool2d": (lambda: ((x4(), 2), {"output_size": 3}), ("kernel_size",), ()),
        "fractional_max_pool2d_with_indices": (lambda: ((x4(), 2), {"output_size": 3}), ("kernel_size",), ()),
        "fractional_max_pool3d": (lambda: ((t32(1, 2, 4, 6, 6), 2), {"output_size": 2}), ("kernel_size",), ()),
        "fractional_max_pool3d_with_indices": (lambda: ((t32(1, 2, 4, 6, 6), 2), {"output_size": 2}),
                                               ("kernel_size",), ()),
        "relu_": (lambda: ((x2(),), {}), (), ()),
        "elu_": (lambda: ((x2(),), {}), (), ()),
        "leaky_relu_": (lambda: ((x2(),), {}), (), ()),
        "celu_": (lambda: ((x2(),), {}), (), ()),
        "selu_": (lambda: ((x2(),), {}), (), ()),
        "hardtanh_": (lambda: ((x2(),), {}), (), ()),
        "threshold_": (lambda: ((x2(), 0.1, 0.0), {}), (), ("threshold", "value")),
        "rrelu": (lambda: ((x2(),), {}), (), ()),
        "rrelu_": (lambda: ((x2(),), {}), (), ()),
        "alpha_dropout": (lambda: ((x2(),), {"training": True}), (), ()),
        "feature_alpha_dropout": (lambda: ((x4(),), {"training": True}), (), ()),
        "native_channel_shuffle": (lambda: ((t32(1, 4, 2, 2), 2), {}), ("groups",), ()),
        "gumbel_softmax": (lambda: ((x2(),), {}), (), ("tau",)),
        "multi_margin_loss": (lambda: ((x2(), target()), {}), (), ()),
        "multilabel_margin_loss": (lambda: ((x2(), minifw.tensor([[2, 0, -1], [1, -1, 0]])), {}), (), ()),
        "pairwise_distance": (lambda: ((x2(), t32(2, 3, seed=1)), {}), (), ()),
        "pdist": (lambda: ((t32(4, 3),), {}), (), ("p",)),
        "triplet_margin_with_distance_loss": (lambda: ((x2(), t32(2, 3, seed=1), t32(2, 3, seed=2)), {}),
                                              (), ()),
    }


# Float parameters that take inf and NaN on purpose: BLAS's alpha and beta propagate them,
# a loss gradient may be non-finite, and inf is a usual pad fill (all as in PyTorch).
NON_FINITE_ALLOWED = {("gemm", "alpha"), ("gemm", "beta"), ("cross_entropy_backward", "grad_loss"),
                      ("pad", "value"), ("normalize", "p")}
NON_FINITE_ALLOWED |= {("pdist", "p"), ("pairwise_distance", "p")}  # p=inf: the largest |difference|


def _public(module):
    names = getattr(module, "__all__", None) or dir(module)
    return sorted(n for n in names if not n.startswith("_") and (
        inspect.isfunction(getattr(module, n)) or inspect.isclass(getattr(module, n)))
        and getattr(getattr(module, n), "__module__", "").startswith(module.__name__))


def _params(fn, extra_ints, extra_floats):
    """(int params, float params, bool params) from the signature's defaults plus the
    extras named (parameters with no default or a None default)."""
    ints, floats, bools = list(extra_ints), list(extra_floats), []
    for p in inspect.signature(fn).parameters.values():
        if p.name.startswith("_") or p.default is inspect.Parameter.empty:
            continue
        if isinstance(p.default, bool):
            bools.append(p.name)
        elif isinstance(p.default, int):
            ints.append(p.name)
        elif isinstance(p.default, float):
            floats.append(p.name)
    # a float parameter whose default PyTorch writes as an int (margin=0, p=2) is named in
    # extra_floats, and checked as a float
    ints = [n for n in ints if n not in extra_floats]
    return ints, list(dict.fromkeys(floats)), bools


def _call_with(fn, make, name, value):
    args, kwargs = make()
    params = list(inspect.signature(fn).parameters)
    position = params.index(name)
    if position < len(args):
        args = args[:position] + (value,) + args[position + 1:]
    else:
        kwargs = dict(kwargs, **{name: value})
    return fn(*args, **kwargs)


CASES = [("ops", name) for name in _ops_calls()] + [("F", name) for name in _functional_calls()]
MODULES = {"ops": ops, "F": F}
TABLES = {}


def _table(which):
    if which not in TABLES:
        TABLES[which] = _ops_calls() if which == "ops" else _functional_calls()
    return TABLES[which]


@pytest.mark.parametrize("which", ["ops", "F"])
def test_the_walk_covers_every_public_function(which):
    public = set(_public(MODULES[which])) - {"ConvAlgoPerf"}  # a namedtuple: nothing to check
    assert public == set(_table(which)), public.symmetric_difference(_table(which))


@pytest.mark.parametrize("which, name", CASES, ids=[f"{w}.{n}" for w, n in CASES])
def test_every_public_function_refuses_wrong_types_by_name(which, name):
    fn = getattr(MODULES[which], name)
    make, extra_ints, extra_floats = _table(which)[name]
    args, kwargs = make()
    fn(*args, **kwargs)  # the base call is valid
    fn_name = "RNNDescriptor" if name == "RNNDescriptor" else name
    ints, floats, bools = _params(fn, extra_ints, extra_floats)
    for arg in ints:
        refused(TypeError, fn_name, arg, lambda: _call_with(fn, make, arg, True))
        refused(TypeError, fn_name, arg, lambda: _call_with(fn, make, arg, 2.0))
    for arg in bools:
        refused(TypeError, fn_name, arg, lambda: _call_with(fn, make, arg, 1))
        refused(TypeError, fn_name, arg, lambda: _call_with(fn, make, arg, "True"))
    for arg in floats:
        refused(TypeError, fn_name, arg, lambda: _call_with(fn, make, arg, True))
        refused((TypeError, ValueError), fn_name, arg, lambda: _call_with(fn, make, arg, 1e308))
        if (name, arg) not in NON_FINITE_ALLOWED:
            for bad in (math.nan, math.inf):
                refused(ValueError, fn_name, arg, lambda: _call_with(fn, make, arg, bad))
