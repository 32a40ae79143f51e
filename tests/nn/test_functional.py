"""Every Function and every nn.functional op: gradients against finite
differences in float64; forwards against NumPy / the float64 reference in
float32 and float64; PyTorch's signatures, defaults and semantics
(cross_entropy's reduction / ignore_index / label_smoothing / weight, dropout
in training and evaluation and its reproducibility, batch norm's running
statistics, pad's modes); clear errors for bad arguments."""
import dataclasses
import inspect

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import functions
from minifw.autograd import Function
from gradcheck import functions_in_graph, gradcheck
from reference import (activation_ref, batch_norm_inference_ref, batch_norm_training_ref,
                       conv2d_forward_ref, cross_entropy_ref, lrn_ref, pool2d_ref, softmax_ref)

# Forwards in float32 are compared with float64 references: the few-term sums
# and transcendental functions here are within a few ulp, the longer sums
# (conv, linear, batch-norm statistics) within ~sqrt(terms) ulp; 1e-5 relative
# with a small absolute floor covers both without hiding a wrong formula.
# Broadcasting a regression loss's target warns, as in PyTorch (tested in
# test_pytorch_modules.py); the broadcasting gradient checks here do it on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:.*Using a target size:UserWarning")

FWD_TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}
DTYPES = (np.float32, np.float64)


def rand(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def t64(shape, seed=0, low=-1.0, high=1.0):
    """A float64 leaf that requires grad, for gradcheck."""
    return minifw.tensor(rand(shape, seed, low, high), dtype=minifw.float64, requires_grad=True)


def c64(values):
    """A float64 constant."""
    return minifw.tensor(values, dtype=minifw.float64)


def targets(values):
    return minifw.tensor(values, dtype=minifw.int64)


def seeded_dropout(x, **kwargs):
    minifw.manual_seed(5)  # the same mask for every finite-difference evaluation
    return F.dropout(x, **kwargs)


# ---- gradient checks ---------------------------------------------------------------------

@dataclasses.dataclass
class Grad:
    id: str
    fn: object
    inputs: object  # () -> list of inputs
    kwargs: dict = dataclasses.field(default_factory=dict)  # gradcheck tolerances


GRADS = [
    Grad("lu_factor", lambda a: minifw.linalg.lu_factor(a).LU, lambda: [t64((4, 4), 5)]),
    # a piecewise-constant function: zero gradients (ZeroGradient, also behind random draws)
    Grad("angle_of_reals", lambda a: minifw.angle(a), lambda: [t64((3, 4))]),
    # elementwise arithmetic, with broadcasting and numbers on either side
    Grad("add_broadcast_row", lambda a, b: a + b, lambda: [t64((3, 4)), t64((4,), 1)]),
    Grad("add_broadcast_both", lambda a, b: a + b, lambda: [t64((2, 1, 3)), t64((4, 1), 1)]),
    Grad("add_number", lambda a: 2.5 + a, lambda: [t64((3,))]),
    Grad("sub_broadcast", lambda a, b: a - b, lambda: [t64((3, 1)), t64((1, 4), 1)]),
    Grad("rsub_number", lambda a: 1 - a, lambda: [t64((3,))]),
    Grad("mul_broadcast", lambda a, b: a * b, lambda: [t64((2, 3, 4)), t64((3, 1), 1)]),
    Grad("mul_scalar_tensor", lambda a, b: a * b, lambda: [t64((2, 3)), t64((), 1)]),
    Grad("div_broadcast", lambda a, b: a / b, lambda: [t64((2, 3)), t64((3,), 1, 0.5, 2.0)]),
    Grad("rdiv_number", lambda a: 3.0 / a, lambda: [t64((4,), 0, 0.5, 2.0)]),
    Grad("neg", lambda a: -a, lambda: [t64((2, 3))]),
    Grad("pow_number", lambda a: a ** 3, lambda: [t64((2, 3))]),
    Grad("pow_fractional", lambda a: a ** 0.5, lambda: [t64((5,), 0, 0.5, 2.0)]),
    Grad("rpow_number", lambda a: 2.0 ** a, lambda: [t64((5,))]),
    Grad("pow_tensor_tensor", lambda a, b: a ** b, lambda: [t64((2, 3), 0, 0.5, 2.0), t64((3,), 1)]),
    Grad("exp", lambda a: a.exp(), lambda: [t64((2, 3))]),
    Grad("log", lambda a: a.log(), lambda: [t64((2, 3), 0, 0.5, 3.0)]),
    Grad("sqrt", lambda a: a.sqrt(), lambda: [t64((2, 3), 0, 0.5, 3.0)]),
    Grad("abs", lambda a: a.abs(), lambda: [c64([[-1.5, 0.3], [2.0, -0.2]]).requires_grad_()]),
    Grad("clamp_both", lambda a: a.clamp(-0.5, 0.5), lambda: [c64([-0.9, -0.2, 0.1, 0.7]).requires_grad_()]),
    Grad("clamp_min", lambda a: a.clamp(min=0.0), lambda: [c64([-0.9, 0.3]).requires_grad_()]),
    Grad("cast_through_float32", lambda a: a.float().double() * 1.0, lambda: [t64((4,))],
         dict(eps=1e-2, rtol=1e-4, atol=1e-4)),  # float32 rounding of x +- eps: ~1e-7 / eps
    Grad("clone", lambda a: a.clone(), lambda: [t64((2, 2))]),
    Grad("where", lambda a, b: minifw.where(c64([True, False, True]).bool(), a, b),
         lambda: [t64((2, 3)), t64((3,), 1)]),
    # matmul
    Grad("matmul_matrix", lambda a, b: a @ b, lambda: [t64((3, 4)), t64((4, 2), 1)]),
    Grad("matmul_vector_matrix", lambda a, b: a @ b, lambda: [t64((4,)), t64((4, 2), 1)]),
    Grad("matmul_matrix_vector", lambda a, b: a @ b, lambda: [t64((3, 4)), t64((4,), 1)]),
    Grad("matmul_dot", lambda a, b: a @ b, lambda: [t64((4,)), t64((4,), 1)]),
    Grad("matmul_batched_broadcast", lambda a, b: a @ b, lambda: [t64((2, 3, 4)), t64((4, 2), 1)]),
    # reductions
    Grad("sum_all", lambda a: a.sum(), lambda: [t64((2, 3))]),
    Grad("sum_dim", lambda a: a.sum(1), lambda: [t64((2, 3, 4))]),
    Grad("sum_dims_keepdim", lambda a: a.sum((0, 2), keepdim=True), lambda: [t64((2, 3, 4))]),
    Grad("mean_all", lambda a: a.mean(), lambda: [t64((2, 3))]),
    Grad("mean_dim_keepdim", lambda a: a.mean(-1, keepdim=True), lambda: [t64((2, 3, 4))]),
    Grad("max_all", lambda a: a.max(), lambda: [t64((3, 4))]),
    Grad("amin_dims", lambda a: a.amin((0, 1)), lambda: [t64((3, 4, 2))]),
    Grad("max_dim_values", lambda a: a.max(1), lambda: [t64((3, 4))]),
    Grad("min_dim_keepdim", lambda a: a.min(0, keepdim=True), lambda: [t64((3, 4))]),
    Grad("var_std", lambda a: a.var(1) + a.std(0).sum(), lambda: [t64((3, 4))]),
    # shapes
    Grad("reshape", lambda a: a.reshape(4, -1), lambda: [t64((2, 3, 2))]),
    Grad("flatten_unsqueeze_squeeze", lambda a: a.flatten(1).unsqueeze(0).squeeze(0),
         lambda: [t64((2, 3, 2))]),
    Grad("permute", lambda a: a.permute(2, 0, 1), lambda: [t64((2, 3, 4))]),
    Grad("transpose", lambda a: a.transpose(0, 2) * c64(rand((4, 3, 2), 9)), lambda: [t64((2, 3, 4))]),
    Grad("expand", lambda a: a.expand(2, 3, 4), lambda: [t64((3, 1))]),
    # indexing
    Grad("index_basic", lambda a: a[1:, ::2], lambda: [t64((3, 4))]),
    Grad("index_int_and_none", lambda a: a[0, None, 1:3], lambda: [t64((3, 4))]),
    Grad("index_repeated_rows", lambda a: a[[0, 2, 0, 0]], lambda: [t64((3, 4))]),
    Grad("index_bool_mask", lambda a: a[np.array([True, False, True])], lambda: [t64((3, 2))]),
    Grad("index_int_tensor_pairs", lambda a: a[targets([0, 2, 0]), targets([1, 1, 1])],
         lambda: [t64((3, 4))]),
    # joining
    Grad("cat_dim1", lambda a, b: minifw.cat([a, b, a], 1), lambda: [t64((2, 2)), t64((2, 3), 1)]),
    Grad("stack_dim_last", lambda a, b: minifw.stack([a, b], -1), lambda: [t64((2, 3)), t64((2, 3), 1)]),
    # nn.functional: convolution
    Grad("conv2d", lambda x, w, b: F.conv2d(x, w, b), lambda: [t64((2, 3, 6, 5)), t64((4, 3, 3, 2), 1), t64((4,), 2)]),
    Grad("conv2d_stride_pad_dilation", lambda x, w: F.conv2d(x, w, None, 2, 1, 2),
         lambda: [t64((1, 2, 7, 7)), t64((3, 2, 3, 3), 1)]),
    Grad("conv2d_groups", lambda x, w, b: F.conv2d(x, w, b, groups=2),
         lambda: [t64((1, 4, 5, 5)), t64((6, 2, 3, 3), 1), t64((6,), 2)]),
    Grad("conv2d_3d_input", lambda x, w: F.conv2d(x, w, padding=1), lambda: [t64((2, 4, 4)), t64((3, 2, 3, 3), 1)]),
    Grad("conv2d_same_even_kernel", lambda x, w: F.conv2d(x, w, padding="same"),
         lambda: [t64((1, 2, 5, 5)), t64((2, 2, 2, 4), 1)]),
    Grad("linear_gradients_as_products", minifw.enable_grad()(lambda x, w: sum(minifw.autograd.grad(
        (F.linear(x, w) ** 2).sum(), (x, w), create_graph=True)[k].sum() * (k + 1) for k in (0, 1))),
         lambda: [t64((3, 4)), t64((2, 4), 1)]),
    Grad("conv2d_filter_gradient", minifw.enable_grad()(lambda x, w: minifw.autograd.grad(
        (F.conv2d(x, w, stride=2, padding=1) ** 2).sum(), w, create_graph=True)[0]),
         lambda: [t64((1, 2, 5, 4)), t64((3, 2, 3, 2), 1)]),
    # pooling
    Grad("max_pool2d", lambda x: F.max_pool2d(x, 2), lambda: [t64((2, 3, 6, 6))]),
    Grad("max_pool2d_pad_ceil", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), lambda: [t64((1, 2, 6, 7))]),
    Grad("max_pool2d_indices", lambda x: F.max_pool2d(x, 2, return_indices=True), lambda: [t64((1, 2, 4, 4))]),
    Grad("max_pool2d_3d_input", lambda x: F.max_pool2d(x, (2, 3), 1), lambda: [t64((2, 4, 5))]),
    Grad("max_pool2d_dilated", lambda x: F.max_pool2d(x, (2, 3), 2, 1, (3, 2), ceil_mode=True),
         lambda: [t64((1, 2, 7, 8))]),
    Grad("avg_pool2d", lambda x: F.avg_pool2d(x, 2), lambda: [t64((2, 3, 6, 6))]),
    Grad("avg_pool2d_pad_exclude", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
         lambda: [t64((1, 2, 7, 6))]),
    Grad("avg_pool2d_ceil_3d_input", lambda x: F.avg_pool2d(x, 2, ceil_mode=True), lambda: [t64((2, 5, 5))]),
    Grad("avg_pool2d_gradient", minifw.enable_grad()(lambda x: minifw.autograd.grad(
        (F.avg_pool2d(x, 3, 2, 1, ceil_mode=True) ** 3).sum(), x, create_graph=True)[0]), lambda: [t64((1, 2, 6, 5))]),
    # activations
    Grad("relu", lambda x: F.relu(x), lambda: [t64((3, 5))]),
    Grad("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda: [t64((3, 5))]),
    Grad("leaky_relu_negative_slope", lambda x: F.leaky_relu(x, -0.5), lambda: [t64((3, 5))]),
    Grad("elu", lambda x: F.elu(x, 0.7), lambda: [t64((3, 5))]),
    Grad("sigmoid", lambda x: F.sigmoid(x), lambda: [t64((3, 5), 0, -3, 3)]),
    Grad("tanh", lambda x: F.tanh(x), lambda: [t64((2, 3, 4), 0, -3, 3)]),
    Grad("tensor_relu_sigmoid_tanh", lambda x: x.relu() + x.sigmoid() + x.tanh(), lambda: [t64((4,))]),
    # softmax
    Grad("softmax_rows", lambda x: F.softmax(x, 1), lambda: [t64((3, 5), 0, -3, 3)]),
    Grad("softmax_dim0", lambda x: F.softmax(x, 0), lambda: [t64((3, 5), 0, -3, 3)]),
    Grad("softmax_channels", lambda x: F.softmax(x, 1), lambda: [t64((2, 3, 2, 2), 0, -3, 3)]),
    Grad("softmax_3d_last", lambda x: x.softmax(-1), lambda: [t64((2, 3, 4), 0, -3, 3)]),
    Grad("log_softmax_rows", lambda x: F.log_softmax(x, 1), lambda: [t64((3, 5), 0, -3, 3)]),
    Grad("log_softmax_1d", lambda x: F.log_softmax(x, 0), lambda: [t64((6,), 0, -3, 3)]),
    Grad("log_softmax_4d_dim3", lambda x: x.log_softmax(3), lambda: [t64((1, 2, 3, 4), 0, -3, 3)]),
    # losses
    Grad("cross_entropy_mean", lambda x: F.cross_entropy(x, targets([0, 3, 1, 3])), lambda: [t64((4, 5), 0, -2, 2)]),
    Grad("cross_entropy_sum_ignore", lambda x: F.cross_entropy(x, targets([0, -100, 1]), reduction="sum"),
         lambda: [t64((3, 4), 0, -2, 2)]),
    Grad("cross_entropy_none_smoothing", lambda x: F.cross_entropy(
        x, targets([2, 0, 1]), reduction="none", label_smoothing=0.2), lambda: [t64((3, 4), 0, -2, 2)]),
    Grad("cross_entropy_spatial", lambda x: F.cross_entropy(x, targets(rand((2, 2, 3), 3, 0, 3).astype(int))),
         lambda: [t64((2, 3, 2, 3), 0, -2, 2)]),
    Grad("cross_entropy_3d_ignore_smooth", lambda x: F.cross_entropy(
        x, targets([[0, 2, 1, 4]]), ignore_index=4, label_smoothing=0.1), lambda: [t64((1, 3, 4), 0, -2, 2)]),
    Grad("cross_entropy_1d", lambda x: F.cross_entropy(x, targets(2)), lambda: [t64((4,), 0, -2, 2)]),
    Grad("cross_entropy_weighted", lambda x: F.cross_entropy(
        x, targets([0, 2, 1, 2]), c64([0.2, 1.0, 3.0])), lambda: [t64((4, 3), 0, -2, 2)]),
    Grad("cross_entropy_weighted_smooth_ignore", lambda x: F.cross_entropy(
        x, targets([[0, 2], [1, 1]]), c64([0.5, 2.0, 1.5]), ignore_index=1, label_smoothing=0.3),
        lambda: [t64((2, 3, 2), 0, -2, 2)]),
    Grad("nll_loss_mean", lambda x: F.nll_loss(x, targets([1, 0, 2])), lambda: [t64((3, 4))]),
    Grad("nll_loss_weighted_ignore", lambda x: F.nll_loss(x, targets([1, 0, 2, 0]), c64([1.0, 2.0, 0.5]),
                                                         ignore_index=0), lambda: [t64((4, 3))]),
    Grad("nll_loss_spatial_none", lambda x: F.nll_loss(x, targets([[[0, 1], [2, 2]]]), reduction="none"),
         lambda: [t64((1, 3, 2, 2))]),
    Grad("mse_loss_mean", lambda a, b: F.mse_loss(a, b), lambda: [t64((3, 4)), t64((3, 4), 1)]),
    Grad("mse_loss_sum_broadcast", lambda a, b: F.mse_loss(a, b, reduction="sum"),
         lambda: [t64((3, 4)), t64((4,), 1)]),
    Grad("mse_loss_none", lambda a, b: F.mse_loss(a, b, reduction="none"), lambda: [t64((5,)), t64((5,), 1)]),
    # normalization
    Grad("local_response_norm", lambda x: F.local_response_norm(x, 3, alpha=0.5, beta=0.75, k=2.0),
         lambda: [t64((2, 5, 3, 3))]),
    Grad("local_response_norm_3d", lambda x: F.local_response_norm(x, 4, alpha=0.3), lambda: [t64((2, 6, 5))]),
    Grad("batch_norm_training_4d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         lambda: [t64((3, 2, 3, 3)), t64((2,), 1, 0.5, 1.5), t64((2,), 2)]),
    Grad("batch_norm_training_2d_running", lambda x, w, b: F.batch_norm(
        x, minifw.zeros(3, dtype=minifw.float64), minifw.ones(3, dtype=minifw.float64), w, b, True),
        lambda: [t64((4, 3)), t64((3,), 1, 0.5, 1.5), t64((3,), 2)]),
    Grad("batch_norm_training_3d_no_affine", lambda x: F.batch_norm(x, None, None, training=True),
         lambda: [t64((2, 3, 4))]),
    Grad("batch_norm_eval", lambda x, w, b: F.batch_norm(x, c64([0.1, -0.2]), c64([0.5, 2.0]), w, b),
         lambda: [t64((2, 2, 3, 3)), t64((2,), 1, 0.5, 1.5), t64((2,), 2)]),
    Grad("dropout", lambda x: seeded_dropout(x, p=0.3), lambda: [t64((4, 6))]),
    # ops without a primitive (each with more cases in test_pytorch_modules.py)
    Grad("gelu", lambda x: F.gelu(x), lambda: [t64((3, 5), 0, -4, 4)]),
    Grad("silu", lambda x: F.silu(x), lambda: [t64((3, 5), 0, -4, 4)]),
    Grad("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.5), lambda: [t64((3, 5))]),
    Grad("hardswish", lambda x: F.hardswish(x), lambda: [t64((3, 5), 0, -4, 4)]),
    Grad("hardsigmoid", lambda x: F.hardsigmoid(x), lambda: [t64((3, 5), 0, -4, 4)]),
    Grad("mish", lambda x: F.mish(x), lambda: [t64((3, 5), 0, -4, 4)]),
    Grad("logsigmoid", lambda x: F.logsigmoid(x), lambda: [t64((3, 5), 0, -4, 4)]),
    Grad("selu_celu", lambda x: F.selu(x) + F.celu(x, 0.7), lambda: [t64((3, 5), 0, -2, 2)]),
    Grad("softshrink_hardshrink", lambda x: F.softshrink(x, 0.3) + F.hardshrink(x, 0.3),
         lambda: [t64((3, 5), 0, 0.35, 2)]),
    Grad("threshold", lambda x: F.threshold(x, 0.1, -1.0), lambda: [t64((3, 5), 0, 0.2, 2)]),
    Grad("grid_sample", lambda x, g: F.grid_sample(x, g, align_corners=False),
         lambda: [t64((1, 2, 3, 4)), t64((1, 2, 3, 2), 1, -0.83, 0.77)]),
    Grad("unfold_fold", lambda x: F.fold(F.unfold(x, 2, padding=1), (3, 4), 2, padding=1),
         lambda: [t64((1, 2, 3, 4))]),
    Grad("dropout2d", lambda x: (minifw.manual_seed(5), F.dropout2d(x, p=0.3))[1], lambda: [t64((2, 4, 2, 2))]),
    Grad("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), lambda: [t64((2, 2, 5, 7))]),
    Grad("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (2, 3)), lambda: [t64((2, 2, 5, 7))]),
    Grad("interpolate_bicubic", lambda x: F.interpolate(x, scale_factor=(1.5, 0.7), mode="bicubic"),
         lambda: [t64((1, 2, 3, 4))]),
    Grad("l1_loss", lambda a, b: F.l1_loss(a, b), lambda: [t64((3, 4)), t64((3, 4), 1)]),
    Grad("ctc_loss", lambda x: F.ctc_loss(x, targets([[1, 2], [2, 0]]), [4, 3], [2, 1]),
         lambda: [t64((4, 2, 3), 0, -3, -0.1)]),
    Grad("smooth_l1_loss", lambda a, b: F.smooth_l1_loss(a, b, beta=0.5), lambda: [t64((3, 4)), t64((3, 4), 1)]),
    Grad("binary_cross_entropy", lambda x, t: F.binary_cross_entropy(x, t),
         lambda: [t64((3, 4), 0, 0.05, 0.95), t64((3, 4), 1, 0, 1)]),
    Grad("binary_cross_entropy_with_logits", lambda x, t: F.binary_cross_entropy_with_logits(x, t),
         lambda: [t64((3, 4), 0, -3, 3), t64((3, 4), 1, 0, 1)]),
    Grad("kl_div", lambda x, t: F.kl_div(x, t, reduction="batchmean"),
         lambda: [t64((3, 4), 0, -3, 0), t64((3, 4), 1, 0.05, 1)]),
    # linear, embedding, shapes
    Grad("linear", lambda x, w, b: F.linear(x, w, b), lambda: [t64((3, 4)), t64((5, 4), 1), t64((5,), 2)]),
    Grad("linear_3d_no_bias", lambda x, w: F.linear(x, w), lambda: [t64((2, 3, 4)), t64((5, 4), 1)]),
    Grad("linear_1d", lambda x, w, b: F.linear(x, w, b), lambda: [t64((4,)), t64((2, 4), 1), t64((2,), 2)]),
    Grad("embedding_repeated", lambda w: F.embedding(targets([[0, 2], [2, 2]]), w), lambda: [t64((4, 3))]),
    Grad("embedding_bag_sum_weighted", lambda w, p: F.embedding_bag(targets([0, 2, 2, 3]), w, targets([0, 1]),
                                                                     mode="sum", per_sample_weights=p),
         lambda: [t64((4, 3)), t64((4,), 1)]),
    Grad("flatten", lambda x: F.flatten(x, 1), lambda: [t64((2, 3, 2))]),
    Grad("pad_constant", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), lambda: [t64((2, 2, 3))]),
    Grad("pad_reflect", lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), lambda: [t64((1, 1, 4, 3))]),
    Grad("pad_replicate", lambda x: F.pad(x, (3, 1), mode="replicate"), lambda: [t64((2, 3))]),
    Grad("pad_circular", lambda x: F.pad(x, (1, 2, 2, 0), mode="circular"), lambda: [t64((1, 3, 3))]),
    Grad("pad_negative_crops", lambda x: F.pad(x, (-1, 1, 0, -2)), lambda: [t64((4, 4))]),
    Grad("prod_dim", lambda x: x.prod(1), lambda: [t64((3, 4))]),
    Grad("prod_all", lambda x: x.prod(), lambda: [t64((2, 3))]),
    Grad("roll", lambda x: x.roll((1, -2), (0, 1)), lambda: [t64((3, 4))]),
    Grad("diag_of_matrix", lambda x: x.diag(1), lambda: [t64((3, 4))]),
    Grad("diag_of_vector", lambda x: x.diag(-1), lambda: [t64((3,))]),
    Grad("vector_norm_p3", lambda x: x.norm(3, dim=1), lambda: [t64((3, 4))]),
    Grad("vector_norm_p1_5_all", lambda x: x.norm(1.5), lambda: [t64((3, 4))]),
    Grad("vector_norm_fro_keepdim", lambda x: x.norm(dim=0, keepdim=True), lambda: [t64((3, 4))]),
    Grad("layer_norm", lambda x, w, b: F.layer_norm(x, (4, 3), w, b),
         lambda: [t64((2, 4, 3)), t64((4, 3), 1), t64((4, 3), 2)]),
    Grad("normalize_p3", lambda x: F.normalize(x, p=3.0), lambda: [t64((3, 4))]),
    Grad("cosine_similarity", lambda a, b: F.cosine_similarity(a, b),
         lambda: [t64((3, 4)), t64((3, 4), 1)]),
    Grad("softplus", lambda x: F.softplus(x, 2.0, 3.0), lambda: [t64((3, 7), 0, -4, 4)]),
    Grad("cdist", lambda a, b: minifw.cdist(a, b), lambda: [t64((3, 4)), t64((2, 4), 1)]),
    Grad("fmin_fmax", lambda a, b: a.fmin(b) + a.fmax(b) * a, lambda: [t64((3, 4)), t64((4,), 1)]),
    Grad("logaddexp2", lambda a, b: a.logaddexp2(b), lambda: [t64((3, 4)), t64((4,), 1)]),
    Grad("igammac_other", lambda x: minifw.tensor([0.5, 4.0], dtype=minifw.float64).igammac(x),
         lambda: [t64((3, 2), 0, 0.2, 5.0)]),
    Grad("polygamma_i0", lambda a: a.polygamma(3) + a.i0(), lambda: [t64((3, 4), 0, 0.5, 3.0)]),
    Grad("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                                output_padding=1),
         lambda: [t64((1, 2, 3, 4)), t64((2, 3, 3, 3), 1), t64((3,), 2)]),
]


@pytest.mark.parametrize("case", GRADS, ids=[c.id for c in GRADS])
def test_gradients_match_finite_differences(case):
    gradcheck(case.fn, case.inputs(), **case.kwargs)


def _all_functions(module):
    return {v for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Function) and v is not Function}


def test_every_function_has_a_gradient_check():
    covered = set()
    for case in GRADS:
        out = case.fn(*case.inputs())
        covered |= functions_in_graph(out if isinstance(out, tuple) else (out,))
    missing = (_all_functions(functions) | _all_functions(F)) - covered
    assert not missing, f"Functions without a gradient check: {sorted(f.__name__ for f in missing)}"


def test_float32_gradients_reach_leaves_as_float32(monkeypatch):
    """No Function silently upcasts a float32 gradient to float64 (leaves would hide it by
    casting on accumulation, but non-leaf consumers would get float64 and run slower)."""
    upcast, checked = [], 0
    accumulate = minifw.autograd._accumulate_leaf

    def strict(t, g, owned=False):
        if np.asarray(g).dtype != t.dtype:
            upcast.append(f"{case.id}: {np.asarray(g).dtype} gradient for a {t.dtype} leaf")
        accumulate(t, g, owned)

    monkeypatch.setattr(minifw.autograd, "_accumulate_leaf", strict)
    for case in GRADS:
        inputs = [t.detach().float().requires_grad_() if isinstance(t, minifw.Tensor) and t.requires_grad
                  else t for t in case.inputs()]
        try:
            out = case.fn(*inputs)
        except (TypeError, ValueError):
            continue  # the case mixes in float64 constants, which float32 inputs refuse
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.kind == "f"]
        minifw.autograd.backward(outs, [minifw.ones_like(o) for o in outs])
        checked += 1
    assert not upcast, upcast
    assert checked > 0.8 * len(GRADS)


# ---- signatures: PyTorch's names, order and defaults --------------------------------------

SIGNATURES = {
    F.conv2d: "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)",
    F.max_pool2d: "(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, "
                  "return_indices=False)",
    F.avg_pool2d: "(input, kernel_size, stride=None, padding=0, ceil_mode=False, "
                  "count_include_pad=True, divisor_override=None)",
    F.relu: "(input, inplace=False)",
    F.leaky_relu: "(input, negative_slope=0.01, inplace=False)",
    F.elu: "(input, alpha=1.0, inplace=False)",
    F.sigmoid: "(input)",
    F.tanh: "(input)",
    F.softmax: "(input, dim=None, _stacklevel=3, dtype=None)",
    F.log_softmax: "(input, dim=None, _stacklevel=3, dtype=None)",
    F.cross_entropy: "(input, target, weight=None, size_average=None, ignore_index=-100, "
                     "reduce=None, reduction='mean', label_smoothing=0.0)",
    F.nll_loss: "(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, "
                "reduction='mean')",
    F.mse_loss: "(input, target, size_average=None, reduce=None, reduction='mean', weight=None)",
    F.local_response_norm: "(input, size, alpha=0.0001, beta=0.75, k=1.0)",
    F.batch_norm: "(input, running_mean, running_var, weight=None, bias=None, training=False, "
                  "momentum=0.1, eps=1e-05)",
    F.dropout: "(input, p=0.5, training=True, inplace=False)",
    F.linear: "(input, weight, bias=None)",
    F.embedding: "(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, "
                 "scale_grad_by_freq=False, sparse=False)",
    F.flatten: "(input, start_dim=0, end_dim=-1)",
    F.pad: "(input, pad, mode='constant', value=None)",
}


@pytest.mark.parametrize("fn", SIGNATURES, ids=[f.__name__ for f in SIGNATURES])
def test_signature_is_pytorchs(fn):
    assert str(inspect.signature(fn)) == SIGNATURES[fn]


# ---- forwards against references ---------------------------------------------------------

def _as(a, dtype):
    return minifw.tensor(np.asarray(a, dtype))


FORWARDS = {
    "conv2d_lenet": (lambda x, w, b: F.conv2d(x, w, b), [(2, 1, 12, 12), (4, 1, 5, 5), (4,)],
                     lambda x, w, b: conv2d_forward_ref(x, w, b)),
    "conv2d_stride_pad_groups": (lambda x, w: F.conv2d(x, w, stride=2, padding=(1, 2), groups=2),
                                 [(1, 4, 7, 6), (4, 2, 3, 3)],
                                 lambda x, w: conv2d_forward_ref(x, w, None, 2, (1, 2), 1, 2)),
    "conv2d_same_even_kernel": (lambda x, w: F.conv2d(x, w, padding="same", dilation=(1, 2)),
                                [(1, 2, 6, 7), (3, 2, 4, 2)],  # totals 3 and 2: pad (1, 2) and (1, 1)
                                lambda x, w: conv2d_forward_ref(
                                    np.pad(x, ((0, 0), (0, 0), (1, 2), (1, 1))), w, None, 1, 0, (1, 2))),
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, 2, 1), [(2, 3, 7, 8)],
                   lambda x: pool2d_ref(x, 3, 2, 1)[0]),
    "max_pool2d_dilated": (lambda x: F.max_pool2d(x, 3, 1, 1, dilation=(2, 3)), [(2, 3, 9, 10)],
                           lambda x: pool2d_ref(x, 3, 1, 1, dilation=(2, 3))[0]),
    "avg_pool2d_ceil": (lambda x: F.avg_pool2d(x, 2, ceil_mode=True, count_include_pad=False),
                        [(1, 2, 5, 7)], lambda x: pool2d_ref(x, 2, None, 0, "avg", True, False)[0]),
    "relu": (F.relu, [(3, 7)], lambda x: activation_ref(x, "relu")),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), [(3, 7)], lambda x: activation_ref(x, "leaky_relu", 0.1)),
    "elu": (F.elu, [(3, 7)], lambda x: activation_ref(x, "elu")),
    "sigmoid": (F.sigmoid, [(2, 9)], lambda x: activation_ref(x, "sigmoid")),
    "tanh": (F.tanh, [(2, 9)], lambda x: activation_ref(x, "tanh")),
    "softmax_rows": (lambda x: F.softmax(x, 1), [(4, 10)], lambda x: softmax_ref(x)),
    "softmax_dim0": (lambda x: F.softmax(x, 0), [(4, 10)], lambda x: softmax_ref(x.T).T),
    "log_softmax_channels": (lambda x: F.log_softmax(x, 1), [(2, 5, 3, 3)], lambda x: softmax_ref(x, True)),
    "log_softmax_3d_last": (lambda x: F.log_softmax(x, -1), [(2, 3, 6)],
                            lambda x: np.moveaxis(softmax_ref(np.moveaxis(x, -1, 1), True), 1, -1)),
    "local_response_norm": (lambda x: F.local_response_norm(x, 5, 1e-2, 0.75, 2.0), [(2, 7, 3, 4)],
                            lambda x: lrn_ref(x, 5, 1e-2, 0.75, 2.0)[0]),
    "batch_norm_training": (lambda x, w, b: F.batch_norm(x, None, None, w, b, True), [(4, 3, 2, 5), (3,), (3,)],
                            lambda x, w, b: batch_norm_training_ref(x, w, b)[0]),
    "batch_norm_eval": (lambda x, m, v: F.batch_norm(x, m, v.abs() + 0.5), [(4, 3), (3,), (3,)],
                        lambda x, m, v: batch_norm_inference_ref(x, None, None, m, np.abs(v) + 0.5)),
    "linear": (F.linear, [(5, 7), (3, 7), (3,)], lambda x, w, b: x @ w.T + b),
    "linear_3d": (F.linear, [(2, 5, 7), (3, 7)], lambda x, w: x @ w.T),
    "mse_loss": (F.mse_loss, [(3, 4), (3, 4)], lambda a, b: np.mean((a - b) ** 2)),
    "pad_constant": (lambda x: F.pad(x, (1, 2, 3, 0), value=-1.0), [(2, 3, 4)],
                     lambda x: np.pad(x, ((0, 0), (3, 0), (1, 2)), constant_values=-1.0)),
    "pad_reflect": (lambda x: F.pad(x, (2, 3, 1, 1), mode="reflect"), [(1, 2, 4, 5)],
                    lambda x: np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 3)), mode="reflect")),
    "pad_replicate": (lambda x: F.pad(x, (4, 1), mode="replicate"), [(2, 3)],
                      lambda x: np.pad(x, ((0, 0), (4, 1)), mode="edge")),
    "pad_circular": (lambda x: F.pad(x, (2, 3, 1, 2), mode="circular"), [(1, 3, 4)],
                     lambda x: np.pad(x, ((0, 0), (1, 2), (2, 3)), mode="wrap")),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", FORWARDS.values(), ids=FORWARDS.keys())
def test_forward_matches_reference(case, dtype):
    fn, shapes, ref = case
    arrays = [rand(s, seed=i, low=-2, high=2) for i, s in enumerate(shapes)]
    out = fn(*(_as(a, dtype) for a in arrays))
    assert out.dtype == dtype
    np.testing.assert_allclose(out.numpy(), ref(*arrays), **FWD_TOL[dtype])


def test_max_gradient_at_ties_as_pytorch():
    # a full reduction shares the gradient evenly; max(dim) sends it to the index it returns
    x = c64([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]).requires_grad_()
    x.max().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0.5, 0.5], [0, 0, 0]])
    x.grad = None
    x.max(dim=1).values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0], [1, 0, 0]])


def test_pow_gradients_at_zero_follow_pytorch():
    # d(a**0)/da = 0 and d(0**b)/db = 0 (b >= 0): no nan from 0 * inf or 0 * log(0)
    a, b = c64([0.0, 0.0, 2.0]).requires_grad_(), c64([0.0, 2.0, 0.0]).requires_grad_()
    (a ** b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.0, 0.0, np.log(2.0)])


def test_max_pool2d_returns_flat_indices_into_each_plane():
    x = minifw.tensor([[[[1.0, 9.0, 2.0, 3.0], [4.0, 5.0, 6.0, 8.0], [0.0, 0.0, 7.0, 0.0],
                         [0.0, 1.0, 0.0, 0.0]]]])
    y, indices = F.max_pool2d(x, 2, return_indices=True)
    assert y.tolist() == [[[[9.0, 8.0], [1.0, 7.0]]]]
    assert indices.dtype == minifw.int64 and indices.tolist() == [[[[1, 7], [13, 10]]]]


def test_dilated_max_pool2d_indices_name_the_first_maximum_among_its_taps():
    x = minifw.tensor(np.arange(25.0).reshape(1, 1, 5, 5) % 7)
    y, indices = F.max_pool2d(x, 2, 1, dilation=3, return_indices=True)  # taps (h, w), (h + 3, w), ...
    want, want_indices = pool2d_ref(x.numpy(), 2, 1, dilation=3)
    # output (1, 1) reads (1, 1), (1, 4), (4, 1), (4, 4): 6, 2, 0, 3
    assert y.tolist() == want.tolist() == [[[[4.0, 5.0], [6.0, 6.0]]]]
    assert indices.tolist() == want_indices.tolist() == [[[[18, 19], [20, 6]]]]


def test_conv2d_same_padding_keeps_the_size():
    x, w = minifw.randn(1, 2, 6, 5), minifw.randn(3, 2, 4, 3)
    assert F.conv2d(x, w, padding="same").shape == (1, 3, 6, 5)
    assert F.conv2d(x, w, padding="valid").shape == (1, 3, 3, 3)


# ---- cross_entropy and nll_loss semantics ------------------------------------------------

LOGITS = rand((5, 4), 11, -3, 3)
LABELS = np.array([0, 3, -100, 1, 3])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.25])
def test_cross_entropy_matches_pytorchs_definition(reduction, label_smoothing):
    out = F.cross_entropy(c64(LOGITS), targets(LABELS), reduction=reduction,
                          label_smoothing=label_smoothing)
    expected = cross_entropy_ref(LOGITS, LABELS, -100, label_smoothing, reduction)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-13)
    if reduction == "none":
        assert out.numpy()[2] == 0.0  # an ignored target costs nothing


def test_cross_entropy_mean_leaves_ignored_targets_out_of_the_denominator():
    logp = np.log(softmax_ref(LOGITS))
    kept = [0, 1, 3, 4]
    expected = -np.mean([logp[i, LABELS[i]] for i in kept])
    assert F.cross_entropy(c64(LOGITS), targets(LABELS)).item() == pytest.approx(expected, rel=1e-13)


def test_cross_entropy_with_a_custom_ignore_index():
    full = F.cross_entropy(c64(LOGITS[:2]), targets([0, 3]), reduction="sum").item()
    first = F.cross_entropy(c64(LOGITS[:2]), targets([0, 3]), ignore_index=3, reduction="sum").item()
    assert first == pytest.approx(-np.log(softmax_ref(LOGITS[:1]))[0, 0], rel=1e-13) and first < full


def test_cross_entropy_is_log_softmax_then_nll_loss():
    x, t = c64(LOGITS), targets([0, 3, 2, 1, 3])
    np.testing.assert_allclose(F.cross_entropy(x, t).numpy(),
                               F.nll_loss(F.log_softmax(x, 1), t).numpy(), rtol=1e-14)


def _weighted_ce_ref(logits, labels, weight, ignore_index, eps, reduction):
    """PyTorch's weighted, label-smoothed cross-entropy, spelled out per sample."""
    logp = np.log(softmax_ref(logits))
    c = logits.shape[1]
    losses, denominator = [], 0.0
    for row, t in zip(logp, labels):
        if t == ignore_index:
            losses.append(0.0)
            continue
        nll = -weight[t] * row[t]
        smooth = -(weight * row).sum() / c
        losses.append((1 - eps) * nll + eps * smooth)
        denominator += weight[t]
    losses = np.array(losses)
    return {"none": losses, "sum": losses.sum(), "mean": losses.sum() / denominator}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.3])
def test_weighted_cross_entropy(reduction, label_smoothing):
    weight = np.array([0.5, 2.0, 1.0, 3.0])
    out = F.cross_entropy(c64(LOGITS), targets(LABELS), c64(weight), reduction=reduction,
                          label_smoothing=label_smoothing)
    expected = _weighted_ce_ref(LOGITS, LABELS, weight, -100, label_smoothing, reduction)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-13)


def test_nll_loss_weighted_mean_divides_by_the_weights_used():
    logp = np.log(softmax_ref(LOGITS))
    weight = np.array([0.5, 2.0, 1.0, 3.0])
    labels = np.array([0, 3, 2, 1, 3])
    expected = -sum(weight[t] * logp[i, t] for i, t in enumerate(labels)) / weight[labels].sum()
    out = F.nll_loss(c64(logp), targets(labels), c64(weight))
    assert out.item() == pytest.approx(expected, rel=1e-13)


def test_losses_of_every_target_ignored_are_nan_as_pytorch():
    with np.errstate(all="ignore"):
        out = F.cross_entropy(c64(LOGITS[:2]), targets([-100, -100]))
    assert np.isnan(out.item())


def test_deprecated_size_average_and_reduce_still_decide_the_reduction():
    x, t = c64(LOGITS[:2]), targets([0, 1])
    assert F.cross_entropy(x, t, size_average=False).item() == pytest.approx(
        F.cross_entropy(x, t, reduction="sum").item())
    assert F.nll_loss(x, t, reduce=False).shape == (2,)


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda: F.cross_entropy(minifw.randn(2, 3), minifw.tensor([0.0, 1.0])), TypeError,
                 "target must hold int64 class indices", id="float_target"),
    pytest.param(lambda: F.cross_entropy(minifw.randn(2, 3), targets([0, 1, 2])), ValueError,
                 r"target must have shape \(N,\) = \(2,\) to match the input; got \(3,\)",
                 id="target_shape"),
    pytest.param(lambda: F.cross_entropy(minifw.randn(2, 3), targets([0, 3])), ValueError,
                 r"target values must be class indices in \[0, 3\)", id="target_out_of_range"),
    pytest.param(lambda: F.cross_entropy(minifw.randn(2, 3), targets([0, 1]), reduction="avg"),
                 ValueError, "reduction must be one of 'none', 'mean', 'sum'; got 'avg'",
                 id="bad_reduction"),
    pytest.param(lambda: F.cross_entropy(minifw.randn(2, 3), targets([0, 1]), label_smoothing=1.5),
                 ValueError, r"label_smoothing must be in \[0, 1\], got 1.5", id="bad_smoothing"),
    pytest.param(lambda: F.cross_entropy(minifw.randn(2, 3), targets([0, 1]), minifw.ones(2)),
                 ValueError, r"weight must have shape \(3,\), one per class", id="weight_size"),
    pytest.param(lambda: F.nll_loss(minifw.randn(2, 3), targets([0, 5])), ValueError,
                 r"nll_loss: target values must be class indices in \[0, 3\)", id="nll_target_out_of_range"),
    pytest.param(lambda: F.cross_entropy(minifw.tensor(1.0), targets(0)), ValueError,
                 "input must have a class dim", id="0d_input"),
    pytest.param(lambda: F.mse_loss(minifw.ones(2, 3), minifw.ones(4)), ValueError,
                 r"input of shape \(2, 3\) and target of shape \(4,\) do not broadcast",
                 id="mse_shapes"),
    pytest.param(lambda: F.mse_loss(minifw.ones(2), minifw.ones(2, dtype=minifw.float64)), TypeError,
                 "target has dtype float64 but input has dtype float32", id="mse_dtypes"),
])
def test_loss_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- dropout ----------------------------------------------------------------------------

def test_dropout_in_training_zeroes_about_p_and_scales_the_rest():
    minifw.manual_seed(0)
    x = minifw.ones(200, 100)
    y = F.dropout(x, p=0.3).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)


@pytest.mark.parametrize("kwargs", [
    pytest.param(dict(training=False), id="evaluation"),
    pytest.param(dict(p=0.0), id="p_zero"),
])
def test_dropout_is_the_identity(kwargs):
    x = minifw.randn(4, 5)
    assert F.dropout(x, **kwargs) is x


def test_dropout_of_p_one_zeroes_everything():
    assert (F.dropout(minifw.randn(3, 4), p=1.0).numpy() == 0).all()


def test_dropout_is_reproducible_under_manual_seed():
    x = minifw.randn(8, 9)
    minifw.manual_seed(42)
    a, b = F.dropout(x).numpy(), F.dropout(x).numpy()
    minifw.manual_seed(42)
    np.testing.assert_array_equal(F.dropout(x).numpy(), a)
    np.testing.assert_array_equal(F.dropout(x).numpy(), b)
    assert not np.array_equal(a, b)  # each call draws a fresh mask


def test_dropout_gradient_uses_the_forward_mask():
    minifw.manual_seed(1)
    x = minifw.ones(6, 7, requires_grad=True)
    y = F.dropout(x, 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


def test_dropout_in_place_without_a_graph():
    x = minifw.ones(10, 10)
    assert F.dropout(x, 0.5, inplace=True) is x
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_probability_must_be_in_range(p):
    with pytest.raises(ValueError, match=rf"p must be a probability in \[0, 1\], got {p}"):
        F.dropout(minifw.ones(2), p)


# ---- batch norm -------------------------------------------------------------------------

def test_batch_norm_training_updates_running_stats_with_the_unbiased_variance():
    x = rand((6, 3, 2, 2), 4, -2, 2)
    mean, var = minifw.zeros(3, dtype=minifw.float64), minifw.ones(3, dtype=minifw.float64)
    F.batch_norm(c64(x), mean, var, training=True, momentum=0.25)
    np.testing.assert_allclose(mean.numpy(), 0.25 * x.mean(axis=(0, 2, 3)), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), 0.75 + 0.25 * x.var(axis=(0, 2, 3), ddof=1), rtol=1e-12)


def test_batch_norm_evaluation_uses_the_running_stats_and_leaves_them():
    mean, var = c64([1.0, -1.0]), c64([4.0, 0.25])
    x = c64(rand((3, 2), 5))
    out = F.batch_norm(x, mean, var, c64([2.0, 1.0]), c64([0.0, 1.0]), eps=0.0)
    np.testing.assert_allclose(out.numpy(), (x.numpy() - [1, -1]) / [2.0, 0.5] * [2, 1] + [0, 1])
    assert mean.tolist() == [1.0, -1.0] and var.tolist() == [4.0, 0.25]


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda: F.batch_norm(minifw.randn(2, 3), None, None), ValueError,
                 r"evaluation \(training=False\) needs running_mean and running_var", id="eval_no_stats"),
    pytest.param(lambda: F.batch_norm(minifw.randn(1, 3), None, None, training=True), ValueError,
                 "expected more than 1 value per channel when training", id="one_value"),
    pytest.param(lambda: F.batch_norm(minifw.randn(2, 3), minifw.zeros(4), minifw.ones(4)), ValueError,
                 r"running_mean must have shape \(3,\), one value per channel", id="stat_size"),
    pytest.param(lambda: F.batch_norm(minifw.randn(2, 3), minifw.zeros(3), None), ValueError,
                 "give both running_mean and running_var", id="one_stat"),
    pytest.param(lambda: F.batch_norm(minifw.randn(3), None, None, training=True), ValueError,
                 "must be 2-D .* got a 1-D tensor", id="1d_input"),
])
def test_batch_norm_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- embedding, linear, pooling, activation specifics ------------------------------------

def test_embedding_looks_up_rows_and_negative_indices_count_from_the_end():
    w = c64(np.arange(12.0).reshape(4, 3))
    out = F.embedding(targets([[0, -1], [2, 2]]), w)
    np.testing.assert_array_equal(out.numpy(), w.numpy()[[[0, 3], [2, 2]]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_gradient_sums_each_rows_picks_as_add_at(dtype):
    # the backward sums the rows of dy by index after a stable sort; np.add.at is the reference
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 7, size=(40, 13))  # rows 7 and 8 of the 9 are never picked
    idx[0, :4] = 6  # a run of one index
    w = minifw.tensor(rng.standard_normal((9, 5)).astype(dtype), requires_grad=True)
    dy = rng.standard_normal((40, 13, 5)).astype(dtype)
    F.embedding(minifw.tensor(idx), w).backward(minifw.tensor(dy))
    expected = np.zeros((9, 5), dtype)
    np.add.at(expected, idx.reshape(-1), dy.reshape(-1, 5))
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)
    assert w.grad.dtype == dtype and not w.grad.numpy()[7:].any()
    w.grad = None
    F.embedding(minifw.tensor(np.zeros((0, 3), np.int64)), w).sum().backward()  # no index at all
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros((9, 5)))


def test_embedding_padding_idx_row_gets_no_gradient():
    w = t64((4, 3))
    F.embedding(targets([0, 1, 0]), w, padding_idx=0).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[0] * 3, [1] * 3, [0] * 3, [0] * 3])


def test_embedding_scale_grad_by_freq_divides_by_each_rows_count():
    # as PyTorch: not the true gradient (which finite differences would give) by design
    w = t64((4, 2))
    F.embedding(targets([[1, 3], [3, 3]]), w, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[0, 0], [1, 1], [0, 0], [1, 1]])
    # the gradient keeps float32 (it flows on into non-leaf nodes unconverted)
    out = F.embedding(targets([1, 1]), minifw.randn(4, 2, requires_grad=True), scale_grad_by_freq=True)
    node = out.grad_fn
    assert node.function.backward(node.ctx, np.ones(out.shape, np.float32)).dtype == np.float32


def test_embedding_max_norm_renormalizes_the_rows_it_looks_up():
    w = c64([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    F.embedding(targets([0, 1]), w, max_norm=1.0)
    norms = np.linalg.norm(w.numpy(), axis=1)
    np.testing.assert_allclose(norms, [1.0, 0.5, 10.0], rtol=1e-6)  # row 2 was not looked up


@pytest.mark.parametrize("call, error, message", [
    pytest.param(lambda: F.embedding(targets([4]), minifw.ones(4, 2)), IndexError,
                 "input holds index 4, which is out of range for 4 embeddings", id="embedding_index"),
    pytest.param(lambda: F.embedding(minifw.tensor([0.0]), minifw.ones(4, 2)), TypeError,
                 "input must be an int64 tensor of indices", id="embedding_float_indices"),
    pytest.param(lambda: F.embedding(targets([0]), minifw.ones(4, 2), sparse=True), ValueError,
                 "sparse gradients are not supported", id="embedding_sparse"),
    pytest.param(lambda: F.linear(minifw.ones(2, 3), minifw.ones(4, 5)), ValueError,
                 r"input's last dim must be in_features = 5 to match weight \(4, 5\); got input of "
                 r"shape \(2, 3\)", id="linear_features"),
    pytest.param(lambda: F.linear(minifw.ones(2, 3), minifw.ones(4, 3), minifw.ones(5)), ValueError,
                 r"bias must have shape \(4,\)", id="linear_bias"),
    pytest.param(lambda: F.linear(minifw.ones(2, 3), minifw.ones(4, 3, dtype=minifw.float64)),
                 TypeError, "weight has dtype float64 but input has dtype float32", id="linear_dtype"),
    pytest.param(lambda: F.conv2d(minifw.ones(3, 28, 28), minifw.ones(20, 1, 5, 5)), ValueError,
                 r"input must have 1 channels to match weight of shape \(20, 1, 5, 5\) with "
                 r"groups=1; got input of shape \(3, 28, 28\)", id="conv2d_channels"),
    pytest.param(lambda: F.conv2d(minifw.ones(28, 28), minifw.ones(20, 1, 5, 5)), ValueError,
                 r"input must be 3-D \(C, H, W\) or 4-D \(N, C, H, W\); got a 2-D tensor", id="conv2d_2d"),
    pytest.param(lambda: F.conv2d(minifw.ones(1, 1, 5, 5), minifw.ones(1, 1, 3, 3), stride=2,
                                  padding="same"), ValueError, "padding='same' needs stride 1",
                 id="conv2d_same_stride"),
    pytest.param(lambda: F.conv2d(minifw.ones(1, 1, 5, 5, dtype=minifw.int64), minifw.ones(1, 1, 3, 3)),
                 TypeError, "input must have dtype float32 or float64, got int64", id="conv2d_int"),
    pytest.param(lambda: F.max_pool2d(minifw.ones(1, 1, 4, 4), 2, dilation=0), ValueError,
                 "max_pool2d: dilation must be >= 1, got 0", id="pool_dilation"),
    pytest.param(lambda: F.max_pool2d(minifw.ones(1, 1, 4, 4), 2, dilation=4), ValueError,
                 r"max_pool2d: output size would be < 1: .* dilated to 5x5 by dilation=\(4, 4\)",
                 id="pool_dilated_kernel_too_large"),
    pytest.param(lambda: F.avg_pool2d(minifw.ones(1, 1, 4, 4), 2, divisor_override=0), ValueError,
                 "divisor_override must be non-zero, got 0", id="pool_divisor_override"),
    pytest.param(lambda: F.max_pool2d(minifw.ones(4, 4), 2), ValueError,
                 "input must be 3-D .* or 4-D", id="pool_2d_input"),
    pytest.param(lambda: F.local_response_norm(minifw.ones(2, 3), 2), ValueError,
                 "input must be 3-D or more", id="lrn_2d"),
    pytest.param(lambda: F.relu([1.0]), TypeError, "relu: input must be a minifw.Tensor, got list",
                 id="relu_list"),
    pytest.param(lambda: F.leaky_relu(minifw.ones(2), "0.1"), TypeError,
                 "negative_slope must be a real number", id="leaky_relu_slope"),
    pytest.param(lambda: F.pad(minifw.ones(2, 2), (1,)), ValueError,
                 "pad must be a tuple of an even number of ints", id="pad_odd"),
    pytest.param(lambda: F.pad(minifw.ones(2, 2), (3, 3), mode="reflect"), ValueError,
                 "reflect padding of dim 1 needs pad < its size 2", id="pad_reflect_too_far"),
    pytest.param(lambda: F.pad(minifw.ones(2, 2), (1, 1), mode="wrap"), ValueError,
                 "mode must be one of 'constant', 'reflect', 'replicate', 'circular'; got 'wrap'", id="pad_mode"),
    pytest.param(lambda: F.pad(minifw.ones(2, 2), (1, 1, 1, 1, 1, 1)), ValueError,
                 "pads 3 dims but input has only 2", id="pad_too_many"),
])
def test_functional_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_in_place_activation_without_a_graph_reuses_the_input():
    x = minifw.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    y = minifw.tensor([-1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):  # as PyTorch
        F.relu(y, inplace=True)
    assert y.tolist() == [-1.0, 2.0]
    # PyTorch's sentence, after the function, and naming the argument
    for fn in (F.relu_, F.elu_, F.selu_, F.celu_, F.leaky_relu_, F.hardtanh_, F.rrelu_,
               lambda t: F.threshold_(t, 0.5, 0.0), lambda t: F.silu(t, inplace=True)):
        with pytest.raises(RuntimeError, match=r"^\w+: a leaf Variable that requires grad is being used in an "
                                               r"in-place operation\. \(input is a leaf that requires grad"):
            fn(y)
    assert y.tolist() == [-1.0, 2.0]


def test_softmax_dtype_argument_and_legacy_default_dim():
    x = minifw.randn(3, 4)
    assert F.softmax(x, 1, dtype=minifw.float64).dtype == minifw.float64
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        np.testing.assert_allclose(F.softmax(x).numpy(), F.softmax(x, 1).numpy())  # 2-D: dim 1
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        np.testing.assert_allclose(F.softmax(x[0]).numpy().sum(), 1.0, rtol=1e-6)  # 1-D: dim 0


def test_flatten_defaults_to_every_dim():
    assert F.flatten(minifw.ones(2, 3, 4)).shape == (24,)
    assert F.flatten(minifw.ones(2, 3, 4), 1, 1).shape == (2, 3, 4)


# ---- linear with a 1-D weight, a 1-D input, a broadcast bias ----------------------------------

def _linear_cases():
    rng = np.random.RandomState(3)
    x1, x2, x3 = rng.rand(4), rng.rand(3, 4), rng.rand(2, 3, 4)
    w1, w2 = rng.rand(4), rng.rand(5, 4)
    return [("x2_w1", x2, w1, None), ("x1_w1", x1, w1, None), ("x3_w1", x3, w1, None),
            ("x1_w1_b0", x1, w1, np.array(0.5)), ("x3_w1_b0", x3, w1, np.array(-1.5)),
            ("x1_w2", x1, w2, None), ("x1_w2_b", x1, w2, rng.rand(5)),
            ("x2_w2_b0", x2, w2, np.array(2.0)), ("x2_w2_b2", x2, w2, rng.rand(3, 5)),
            ("x3_w2_b2", x3, w2, rng.rand(3, 5)), ("x3_w2_b", x3, w2, rng.rand(5))]


@pytest.mark.parametrize("name, x, w, b", _linear_cases(), ids=[c[0] for c in _linear_cases()])
def test_linear_with_a_1d_weight_or_input_or_a_broadcast_bias(name, x, w, b):
    args = [minifw.tensor(a, dtype=minifw.float64, requires_grad=True)
            for a in (x, w, b) if a is not None]
    y = F.linear(*args)
    expected = x @ (w if w.ndim == 1 else w.T) + (0 if b is None else b)
    assert y.shape == expected.shape  # a 1-D weight drops the last dim
    np.testing.assert_allclose(y.detach().numpy(), expected)
    gradcheck(F.linear, args)


@pytest.mark.parametrize("name, x, w, b", _linear_cases(), ids=[c[0] for c in _linear_cases()])
def test_linear_with_a_1d_weight_matches_torch(name, x, w, b):
    torch = pytest.importorskip("torch")
    want = torch.nn.functional.linear(*[torch.tensor(a) for a in (x, w, b) if a is not None])
    got = F.linear(*[minifw.tensor(a, dtype=minifw.float64) for a in (x, w, b) if a is not None])
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("args, message", [
    ((minifw.ones(3, 4), minifw.ones(2, 5, 4)), r"weight must be 2-D \(out_features, in_features\) "
     r"or 1-D \(in_features,\); got a 3-D tensor"),
    ((minifw.ones(3, 4), minifw.ones(())), r"weight must be 2-D .* or 1-D .*; got a 0-D tensor"),
    ((minifw.ones(3, 4), minifw.ones(5)), r"input's last dim must be in_features = 5"),
    ((minifw.ones(3, 4), minifw.ones(4), minifw.ones(1)), r"with a 1-D weight \(4,\) the output "
     r"\(3,\) has no feature dim, so bias must be 0-d; got shape \(1,\)"),
    ((minifw.ones(3, 4), minifw.ones(5, 4), minifw.ones(2, 5)), r"bias must have shape \(5,\), or "
     r"a shape that broadcasts to the output's \(3, 5\) without changing it; got \(2, 5\)"),
])
def test_linear_refuses_a_weight_or_bias_that_does_not_fit(args, message):
    with pytest.raises(ValueError, match=message):
        F.linear(*args)


@pytest.mark.parametrize("dtype", [minifw.int64, minifw.int32])
def test_activations_of_integer_tensors_as_pytorch(dtype):
    # relu, relu6 and hardtanh keep the integer dtype (hardtanh's bounds truncated toward
    # zero); sigmoid, tanh, softsign and tanhshrink compute in the default float dtype
    x = minifw.tensor([1, -2, 3, 7], dtype=dtype)
    for out, want in ((F.relu(x), [1, 0, 3, 7]), (F.relu6(x), [1, 0, 3, 6]),
                      (F.hardtanh(x), [1, -1, 1, 1]), (F.hardtanh(x, -0.5, 2.5), [1, 0, 2, 2]),
                      (F.hardtanh(x, -1.5, 2.7), [1, -1, 2, 2])):
        assert out.dtype == dtype and out.tolist() == want
    a = np.array([1.0, -2.0, 3.0, 7.0])
    for fn, ref in ((F.sigmoid, 1 / (1 + np.exp(-a))), (F.tanh, np.tanh(a)),
                    (F.softsign, a / (1 + np.abs(a))), (F.tanhshrink, a - np.tanh(a))):
        out = fn(x)
        assert out.dtype == minifw.float32
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    for fn in (lambda v: F.relu(v, inplace=True), F.relu_, F.hardtanh_,
               lambda v: F.relu6(v, inplace=True)):
        y = minifw.tensor([1, -2, 3, 7], dtype=dtype)
        assert fn(y) is y and y.dtype == dtype and y.tolist()[1] in (0, -1)
    assert F.sigmoid(minifw.tensor([True, False])).tolist() == pytest.approx([0.7310586, 0.5])
    # PyTorch refuses bool tensors there, and minifw's own checks still apply
    b = minifw.tensor([True, False])
    for fn in (F.relu, F.relu6, F.hardtanh, F.softsign, F.tanhshrink):
        with pytest.raises(TypeError, match="must have dtype float32 or float64, got bool"):
            fn(b)
    with pytest.raises(TypeError, match="relu: inplace must be a bool"):
        F.relu(x, inplace=2)
    with pytest.raises(ValueError, match="hardtanh: max_val cannot be less than min_val"):
        F.hardtanh(x, 2, 1)
    with pytest.raises(TypeError, match="hardtanh: min_val must be a finite real number"):
        F.hardtanh(x, "a", 1)
