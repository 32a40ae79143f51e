"""A valid base call of every public callable of minifw.ops and minifw.nn.functional.

Each entry builds fresh arguments (small, deterministic arrays) as an ordered dict of
parameter name to value; the fuzzer mutates one (or two) of them at a time. An entry's
`raises` names the exception types, beyond TypeError and ValueError, that the function
documents (IndexError for an embedding index out of range, ...).

A public callable added to either module without an entry here fails
tests/fuzz/test_fuzz.py::test_every_public_callable_has_a_base_call.
"""
import collections

import numpy as np

# Keys are "<module alias>.<name>"; the aliases are the modules fuzzed.
MODULES = {"ops": "minifw.ops", "F": "minifw.nn.functional"}

# Public callables that take no user data worth fuzzing, with the reason.
NOT_FUZZED = {
    "ops.ConvAlgoPerf": "a result record (a named tuple) that find_conv_algorithms returns; "
                        "like any named tuple it holds whatever it is given",
}

# build: () -> {argument: value}; raises: documented exception types beyond TypeError and
# ValueError; opaque: arguments whose contents after the call are not compared (a buffer
# whose unused parts are uninitialized); result: the part of the result that is compared;
# skip: {"argument:mutation": why} for the few mutations that are not fuzzed.
Case = collections.namedtuple("Case", "build raises opaque result skip")
CASES = {}


def case(key, raises=(), opaque=(), result=None, skip=None):
    def register(build):
        CASES[key] = Case(build, tuple(raises), tuple(opaque), result or (lambda r: r), dict(skip or {}))
        return build
    return register


def _rng():
    return np.random.default_rng(0)


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _tensor(a, **kw):
    import minifw
    return minifw.tensor(a, **kw)


# ---- minifw.ops ---------------------------------------------------------------------------

@case("ops.gemm")
def _gemm():
    r = _rng()
    return dict(a=_f32(r, 3, 4), b=_f32(r, 4, 5), c=_f32(r, 3, 5), trans_a=False, trans_b=False,
                alpha=1.5, beta=0.5)


def _conv_problem():
    from minifw import ops
    return ops.ConvProblem((2, 4, 6, 6), (6, 2, 3, 3), stride=1, padding=1, dilation=1, groups=2)


@case("ops.ConvProblem")
def _conv_problem_case():
    return dict(x_shape=(2, 4, 6, 6), w_shape=(6, 2, 3, 3), stride=1, padding=1, dilation=1, groups=2,
                dtype="float32")


@case("ops.conv2d_forward")
def _conv_fwd():
    r = _rng()
    return dict(x=_f32(r, 2, 4, 6, 6), w=_f32(r, 6, 2, 3, 3), bias=_f32(r, 6), stride=1, padding=1,
                dilation=1, groups=2, algo="auto")


@case("ops.conv2d_backward_data")
def _conv_bwd_data():
    r = _rng()
    return dict(dy=_f32(r, 2, 6, 6, 6), w=_f32(r, 6, 2, 3, 3), x_shape=(2, 4, 6, 6), stride=1, padding=1,
                dilation=1, groups=2, algo="auto")


@case("ops.conv2d_backward_filter")
def _conv_bwd_filter():
    r = _rng()
    return dict(x=_f32(r, 2, 4, 6, 6), dy=_f32(r, 2, 6, 6, 6), w_shape=(6, 2, 3, 3), stride=1, padding=1,
                dilation=1, groups=2, algo="auto")


@case("ops.conv2d_backward_bias")
def _conv_bwd_bias():
    return dict(dy=_f32(_rng(), 2, 6, 5, 5))


@case("ops.conv_algorithm")
def _conv_algorithm():
    return dict(problem=_conv_problem(), direction="forward", device="cpu")


@case("ops.conv_algorithms")
def _conv_algorithms():
    return dict(problem=_conv_problem(), direction="backward_data", device="cpu")


@case("ops.conv_workspace_size")
def _conv_workspace_size():
    return dict(problem=_conv_problem(), direction="backward_filter", algo="im2col_gemm", device="cpu")


# timings vary from call to call: only the algorithms found and their workspaces are compared
@case("ops.find_conv_algorithms", result=lambda perfs: sorted((p.algo, p.workspace_bytes) for p in perfs),
      skip={f"repeats:{m}": "repeats is how many timed runs the caller asks for: 2**31 of them "
                            "take hours by request, not by a fault" for m in ("2**31", "2**31-1", "2**63", "2**64")})
def _find_conv_algorithms():
    from minifw import ops
    problem = ops.ConvProblem((1, 2, 4, 4), (2, 2, 3, 3), padding=1)
    return dict(problem=problem, direction="forward", repeats=1, device="cpu")


@case("ops.autotune_cache")
def _autotune_cache():
    return dict()


@case("ops.clear_autotune_cache")
def _clear_autotune_cache():
    return dict()


@case("ops.activation_forward")
def _act_fwd():
    return dict(x=_f32(_rng(), 2, 3, 4), mode="elu", negative_slope=0.1, alpha=0.9, inplace=False)


@case("ops.activation_backward")
def _act_bwd():
    from minifw import ops
    r = _rng()
    x = _f32(r, 2, 3, 4)
    y = ops.activation_forward(x, "elu", alpha=0.9)
    return dict(dy=_f32(r, 2, 3, 4), y=y, mode="elu", x=x, negative_slope=0.1, alpha=0.9)


@case("ops.softmax_forward")
def _softmax_fwd():
    return dict(x=_f32(_rng(), 2, 5, 3, 2), log=False)


@case("ops.softmax_backward")
def _softmax_bwd():
    from minifw import ops
    r = _rng()
    y = ops.softmax_forward(_f32(r, 2, 5, 3, 2), log=True)
    return dict(dy=_f32(r, 2, 5, 3, 2), y=y, log=True)


@case("ops.cross_entropy_forward")
def _ce_fwd():
    return dict(logits=_f32(_rng(), 4, 5), target=np.array([0, 4, 2, -100], dtype=np.int64),
                ignore_index=-100, label_smoothing=0.1, reduction="mean")


@case("ops.cross_entropy_backward")
def _ce_bwd():
    from minifw import ops
    target = np.array([0, 4, 2, -100], dtype=np.int64)
    _, log_probs = ops.cross_entropy_forward(_f32(_rng(), 4, 5), target, label_smoothing=0.1)
    return dict(grad_loss=1.0, log_probs=log_probs, target=target, ignore_index=-100, label_smoothing=0.1,
                reduction="mean")


@case("ops.PoolProblem")
def _pool_problem():
    return dict(x_shape=(2, 3, 6, 6), kernel_size=3, stride=2, padding=1, dilation=1, mode="avg", ceil_mode=True,
                count_include_pad=False, dtype="float32")


@case("ops.pool2d_forward")
def _pool_fwd():
    return dict(x=_f32(_rng(), 2, 3, 6, 6), kernel_size=3, stride=2, padding=1, dilation=2, mode="max",
                ceil_mode=True, count_include_pad=True, return_indices=True)


@case("ops.pool2d_backward")
def _pool_bwd():
    from minifw import ops
    r = _rng()
    y, indices = ops.pool2d_forward(_f32(r, 2, 3, 6, 6), 3, stride=2, padding=1, dilation=2, ceil_mode=True,
                                    return_indices=True)
    return dict(dy=_f32(r, *y.shape), x_shape=(2, 3, 6, 6), kernel_size=3, stride=2, padding=1, dilation=2,
                mode="max", ceil_mode=True, count_include_pad=True, indices=indices)


@case("ops.lrn_forward")
def _lrn_fwd():
    return dict(x=_f32(_rng(), 2, 5, 3, 3), size=3, alpha=1e-3, beta=0.75, k=2.0)


@case("ops.lrn_backward")
def _lrn_bwd():
    from minifw import ops
    r = _rng()
    x = _f32(r, 2, 5, 3, 3)
    y, scale = ops.lrn_forward(x, 3, alpha=1e-3, k=2.0)
    return dict(dy=_f32(r, 2, 5, 3, 3), x=x, y=y, scale=scale, size=3, alpha=1e-3, beta=0.75, k=2.0)


def _bn_args(r):
    return dict(x=_f32(r, 4, 3, 2, 2), weight=_f32(r, 3), bias=_f32(r, 3),
                running_mean=_f32(r, 3), running_var=np.abs(_f32(r, 3)) + 0.5)


@case("ops.batch_norm_forward_training")
def _bn_train():
    return dict(_bn_args(_rng()), momentum=0.1, eps=1e-5)


@case("ops.batch_norm_forward_inference")
def _bn_infer():
    return dict(_bn_args(_rng()), eps=1e-5)


@case("ops.batch_norm_backward")
def _bn_bwd():
    from minifw import ops
    r = _rng()
    args = _bn_args(r)
    _, save_mean, save_invstd = ops.batch_norm_forward_training(**args)
    return dict(dy=_f32(r, 4, 3, 2, 2), x=args["x"], weight=args["weight"], save_mean=save_mean,
                save_invstd=save_invstd)


@case("ops.dropout_forward")
def _dropout_fwd():
    return dict(x=_f32(_rng(), 3, 4), p=0.3, seed=7)


@case("ops.dropout_backward")
def _dropout_bwd():
    from minifw import ops
    r = _rng()
    _, mask = ops.dropout_forward(_f32(r, 3, 4), 0.3, seed=7)
    return dict(dy=_f32(r, 3, 4), mask=mask, p=0.3)


@case("ops.add_tensor")
def _add_tensor():
    r = _rng()
    return dict(a=_f32(r, 2, 3, 2, 2), c=_f32(r, 2, 3, 2, 2), alpha=2.0, beta=0.5)


@case("ops.bias_add")
def _bias_add():
    r = _rng()
    return dict(x=_f32(r, 2, 3, 2, 2), bias=_f32(r, 3))


@case("ops.bias_backward")
def _bias_bwd():
    return dict(dy=_f32(_rng(), 2, 3, 2, 2))


@case("ops.scale_tensor")
def _scale_tensor():
    return dict(x=_f32(_rng(), 2, 3), alpha=0.5)


@case("ops.embedding_backward")
def _embedding_bwd():
    return dict(indices=np.array([0, 2, 2, 1], np.int64), g=_f32(_rng(), 4, 3), num_embeddings=3)


@case("ops.sgd_step")
def _sgd_step():
    r = _rng()
    return dict(p=_f32(r, 3, 4), grad=_f32(r, 3, 4), momentum_buffer=_f32(r, 3, 4), lr=0.1, momentum=0.9,
                dampening=0.0, weight_decay=1e-4, nesterov=True, maximize=False, first_step=False)


@case("ops.RNNDescriptor")
def _rnn_desc():
    return dict(mode="lstm", input_size=3, hidden_size=4, num_layers=2, bidirectional=True, bias=True,
                dtype=np.float32)


def _rnn_setup(r):
    from minifw import ops
    desc = ops.RNNDescriptor("lstm", 3, 4, num_layers=2, bidirectional=True)
    t, n = 5, 2
    return dict(desc=desc, x=_f32(r, t, n, 3), h0=_f32(r, 4, n, 4), c0=_f32(r, 4, n, 4),
                weights=_f32(r, desc.weight_count()) * 0.3,
                lengths=np.array([5, 3], dtype=np.int64))


# the reserve is the kernels' scratch between the directions: steps past a sequence's length
# are left uninitialized, so only y, h_n and c_n are compared
@case("ops.rnn_forward", result=lambda r: r[:3])
def _rnn_fwd():
    s = _rnn_setup(_rng())
    t, n = s["x"].shape[:2]
    return dict(desc=s["desc"], x=s["x"], h0=s["h0"], c0=s["c0"], weights=s["weights"], training=True,
                lengths=s["lengths"], reserve=np.zeros(s["desc"].reserve_size(t, n), np.float32))


def _rnn_after_forward(r):
    from minifw import ops
    s = _rnn_setup(r)
    y, h_n, c_n, reserve = ops.rnn_forward(s["desc"], s["x"], s["h0"], s["c0"], s["weights"],
                                           lengths=s["lengths"])
    return s, y, h_n, c_n, reserve


@case("ops.rnn_backward_data", opaque=("reserve",))
def _rnn_bwd_data():
    r = _rng()
    s, y, h_n, c_n, reserve = _rnn_after_forward(r)
    return dict(desc=s["desc"], x=s["x"], weights=s["weights"], reserve=reserve, h0=s["h0"], c0=s["c0"],
                dy=_f32(r, *y.shape), dh_n=_f32(r, *h_n.shape), dc_n=_f32(r, *c_n.shape),
                lengths=s["lengths"])


@case("ops.rnn_backward_weights", opaque=("reserve",))
def _rnn_bwd_weights():
    from minifw import ops
    r = _rng()
    s, y, h_n, c_n, reserve = _rnn_after_forward(r)
    ops.rnn_backward_data(s["desc"], s["x"], s["weights"], reserve, s["h0"], s["c0"], _f32(r, *y.shape),
                          None, None, lengths=s["lengths"])
    return dict(desc=s["desc"], x=s["x"], reserve=reserve, h0=s["h0"],
                dweights=np.zeros(s["desc"].weight_count(), np.float32), lengths=s["lengths"])


# ---- minifw.nn.functional -------------------------------------------------------------------

def _t(r, *shape):
    return _tensor(_f32(r, *shape))


def _long(values):
    return _tensor(np.array(values, dtype=np.int64))


@case("F.conv2d")
def _f_conv2d():
    r = _rng()
    return dict(input=_t(r, 2, 4, 5, 5), weight=_t(r, 6, 2, 3, 3), bias=_t(r, 6), stride=1, padding=1,
                dilation=1, groups=2)


@case("F.max_pool2d")
def _f_max_pool2d():
    return dict(input=_t(_rng(), 2, 3, 6, 6), kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True,
                return_indices=True)


@case("F.avg_pool2d")
def _f_avg_pool2d():
    return dict(input=_t(_rng(), 2, 3, 6, 6), kernel_size=3, stride=2, padding=1, ceil_mode=False,
                count_include_pad=False, divisor_override=None)


@case("F.adaptive_avg_pool2d")
def _f_adaptive_avg_pool2d():
    return dict(input=_t(_rng(), 2, 3, 7, 5), output_size=(3, 2))


@case("F.adaptive_max_pool2d")
def _f_adaptive_max_pool2d():
    return dict(input=_t(_rng(), 2, 3, 7, 5), output_size=(3, 2), return_indices=True)


# (RuntimeError: inplace=True on a read-only (expanded) input, as PyTorch, in these and below)
for _name in ("relu", "relu6", "silu"):
    case(f"F.{_name}", raises=(RuntimeError,))(lambda: dict(input=_t(_rng(), 2, 3, 4), inplace=False))
for _name in ("sigmoid", "tanh"):
    case(f"F.{_name}")(lambda: dict(input=_t(_rng(), 2, 3, 4)))


@case("F.leaky_relu", raises=(RuntimeError,))
def _f_leaky_relu():
    return dict(input=_t(_rng(), 2, 3, 4), negative_slope=0.2, inplace=False)


@case("F.elu", raises=(RuntimeError,))
def _f_elu():
    return dict(input=_t(_rng(), 2, 3, 4), alpha=0.8, inplace=False)


@case("F.gelu")
def _f_gelu():
    return dict(input=_t(_rng(), 2, 3, 4), approximate="tanh")


@case("F.hardtanh", raises=(RuntimeError,))
def _f_hardtanh():
    return dict(input=_t(_rng(), 2, 3, 4), min_val=-0.5, max_val=0.7, inplace=False)


for _name in ("softmax", "log_softmax", "softmin"):  # IndexError: dim out of range, as PyTorch
    case(f"F.{_name}", raises=(IndexError,))(lambda: dict(input=_t(_rng(), 2, 5, 3), dim=1, dtype=None))


@case("F.cross_entropy")
def _f_cross_entropy():
    r = _rng()
    return dict(input=_t(r, 4, 5), target=_long([0, 4, 2, 1]), weight=_tensor(np.abs(_f32(r, 5)) + 0.1),
                size_average=None, ignore_index=2, reduce=None, reduction="mean", label_smoothing=0.1)


@case("F.nll_loss")
def _f_nll_loss():
    r = _rng()
    return dict(input=_t(r, 4, 5), target=_long([0, 4, 2, 1]), weight=_tensor(np.abs(_f32(r, 5)) + 0.1),
                size_average=None, ignore_index=2, reduce=None, reduction="sum")


for _name in ("mse_loss", "l1_loss"):
    case(f"F.{_name}")(lambda: dict(input=_t(_rng(), 3, 4), target=_t(np.random.default_rng(1), 3, 4),
                                    size_average=None, reduce=None, reduction="mean"))


@case("F.smooth_l1_loss")
def _f_smooth_l1_loss():
    r = _rng()
    return dict(input=_t(r, 3, 4), target=_t(r, 3, 4), size_average=None, reduce=None, reduction="sum",
                beta=0.5)


@case("F.huber_loss")
def _f_huber_loss():
    r = _rng()
    return dict(input=_t(r, 3, 4), target=_t(r, 3, 4), reduction="mean", delta=0.5)


@case("F.binary_cross_entropy", raises=(RuntimeError,))  # input outside [0, 1], as PyTorch
def _f_bce():
    r = _rng()
    return dict(input=_tensor(r.uniform(0.05, 0.95, (3, 4)).astype(np.float32)),
                target=_tensor(r.uniform(0, 1, (3, 4)).astype(np.float32)),
                weight=_tensor(r.uniform(0.5, 1.5, (4,)).astype(np.float32)), size_average=None, reduce=None,
                reduction="mean")


@case("F.binary_cross_entropy_with_logits")
def _f_bce_logits():
    r = _rng()
    return dict(input=_t(r, 3, 4), target=_tensor(r.uniform(0, 1, (3, 4)).astype(np.float32)),
                weight=_tensor(r.uniform(0.5, 1.5, (4,)).astype(np.float32)), size_average=None, reduce=None,
                reduction="mean", pos_weight=_tensor(r.uniform(0.5, 2, (4,)).astype(np.float32)))


@case("F.kl_div")
def _f_kl_div():
    r = _rng()
    return dict(input=_tensor(np.log(r.dirichlet(np.ones(5), 3)).astype(np.float32)),
                target=_tensor(r.dirichlet(np.ones(5), 3).astype(np.float32)), size_average=None, reduce=None,
                reduction="batchmean", log_target=False)


@case("F.local_response_norm")
def _f_lrn():
    return dict(input=_t(_rng(), 2, 5, 3, 3), size=3, alpha=1e-3, beta=0.75, k=2.0)


@case("F.batch_norm")
def _f_batch_norm():
    r = _rng()
    return dict(input=_t(r, 4, 3, 2, 2), running_mean=_t(r, 3), running_var=_tensor(np.abs(_f32(r, 3)) + 0.5),
                weight=_t(r, 3), bias=_t(r, 3), training=True, momentum=0.2, eps=1e-4)


@case("F.dropout")
def _f_dropout():
    return dict(input=_t(_rng(), 3, 4), p=0.3, training=True, inplace=False)


@case("F.dropout1d")
def _f_dropout1d():
    return dict(input=_t(_rng(), 2, 3, 4), p=0.3, training=True, inplace=False)


@case("F.dropout2d")
def _f_dropout2d():
    return dict(input=_t(_rng(), 2, 3, 2, 2), p=0.3, training=True, inplace=False)


@case("F.linear")
def _f_linear():
    r = _rng()
    return dict(input=_t(r, 2, 3, 4), weight=_t(r, 5, 4), bias=_t(r, 5))


@case("F.embedding", raises=(IndexError,))  # an index out of range, as PyTorch
def _f_embedding():
    return dict(input=_long([[0, 3], [5, 3]]), weight=_t(_rng(), 6, 4), padding_idx=3, max_norm=None,
                norm_type=2.0, scale_grad_by_freq=False, sparse=False)


@case("F.flatten", raises=(IndexError,))  # start_dim or end_dim out of range, as PyTorch
def _f_flatten():
    return dict(input=_t(_rng(), 2, 3, 4), start_dim=1, end_dim=-1)


@case("F.pad")
def _f_pad():
    return dict(input=_t(_rng(), 2, 3, 4), pad=(1, 2, 0, 1), mode="constant", value=0.5)


@case("F.layer_norm")
def _f_layer_norm():
    r = _rng()
    return dict(input=_t(r, 2, 3, 4), normalized_shape=(3, 4), weight=_t(r, 3, 4), bias=_t(r, 3, 4),
                eps=1e-5)


@case("F.group_norm")
def _f_group_norm():
    r = _rng()
    return dict(input=_t(r, 2, 4, 3), num_groups=2, weight=_t(r, 4), bias=_t(r, 4), eps=1e-5)


@case("F.normalize", raises=(IndexError,))  # dim out of range, as PyTorch
def _f_normalize():
    return dict(input=_t(_rng(), 3, 4), p=2.0, dim=1, eps=1e-12, out=None)


@case("F.cosine_similarity", raises=(IndexError,))  # dim out of range, as PyTorch
def _f_cosine_similarity():
    r = _rng()
    return dict(x1=_t(r, 3, 4), x2=_t(r, 3, 4), dim=1, eps=1e-8)


@case("F.one_hot")
def _f_one_hot():
    return dict(tensor=_long([[0, 3], [2, 1]]), num_classes=5)


@case("F.prelu")
def _f_prelu():
    r = _rng()
    return dict(input=_t(r, 2, 3, 4), weight=_t(r, 3))


@case("F.softplus")
def _f_softplus():
    return dict(input=_t(_rng(), 2, 3), beta=2.0, threshold=10.0)


@case("F.conv_transpose2d")
def _f_conv_transpose2d():
    r = _rng()
    return dict(input=_t(r, 1, 2, 3, 4), weight=_t(r, 2, 3, 3, 3), bias=_t(r, 3), stride=2, padding=1,
                output_padding=1, groups=1, dilation=1)


@case("F.interpolate")
def _f_interpolate():
    return dict(input=_t(_rng(), 1, 2, 3, 4), size=None, scale_factor=2.0, mode="nearest",
                align_corners=None, recompute_scale_factor=None, antialias=False)


@case("F.upsample")
def _f_upsample():
    return dict(input=_t(_rng(), 1, 2, 3, 4), size=None, scale_factor=1.5, mode="bicubic",
                align_corners=True)


@case("F.upsample_nearest")
def _f_upsample_nearest():
    return dict(input=_t(_rng(), 1, 2, 3, 4), size=(5, 3), scale_factor=None)


@case("F.upsample_bilinear")
def _f_upsample_bilinear():
    return dict(input=_t(_rng(), 1, 2, 3, 4), size=None, scale_factor=2.0)


@case("F.embedding_bag", raises=(IndexError,))  # an index out of range, as embedding
def _f_embedding_bag():
    r = _rng()
    return dict(input=_long([1, 2, 4, 0, 3]), weight=_t(r, 5, 3), offsets=_long([0, 2, 2]), max_norm=None,
                norm_type=2.0, scale_grad_by_freq=False, mode="sum", sparse=False,
                per_sample_weights=_t(r, 5), include_last_offset=False, padding_idx=0)


@case("F.bilinear")
def _f_bilinear():
    r = _rng()
    return dict(input1=_t(r, 2, 3), input2=_t(r, 2, 4), weight=_t(r, 5, 3, 4), bias=_t(r, 5))


@case("F.ctc_loss")
def _f_ctc_loss():
    import minifw
    return dict(log_probs=minifw.log_softmax(_t(_rng(), 5, 2, 4), 2), targets=_long([[1, 2], [3, 0]]),
                input_lengths=[5, 4], target_lengths=[2, 1], blank=0, reduction="mean", zero_infinity=True)


# RuntimeError: inplace=True on a read-only (expanded) input, as PyTorch
for _name in ("hardswish", "hardsigmoid", "mish", "selu"):
    case(f"F.{_name}", raises=(RuntimeError,))(lambda: dict(input=_t(_rng(), 2, 3, 4), inplace=False))
for _name in ("logsigmoid", "softsign", "tanhshrink"):
    case(f"F.{_name}")(lambda: dict(input=_t(_rng(), 2, 3, 4)))
for _name in ("hardshrink", "softshrink"):
    case(f"F.{_name}")(lambda: dict(input=_t(_rng(), 2, 3, 4), lambd=0.3))


@case("F.celu", raises=(RuntimeError,))
def _f_celu():
    return dict(input=_t(_rng(), 2, 3, 4), alpha=0.7, inplace=False)


@case("F.glu", raises=(IndexError,))  # dim out of range, as PyTorch
def _f_glu():
    return dict(input=_t(_rng(), 2, 4), dim=-1)


@case("F.threshold", raises=(RuntimeError,))
def _f_threshold():
    return dict(input=_t(_rng(), 2, 3, 4), threshold=0.1, value=-1.0, inplace=False)


@case("F.rms_norm")
def _f_rms_norm():
    r = _rng()
    return dict(input=_t(r, 2, 3, 4), normalized_shape=(4,), weight=_t(r, 4), eps=1e-6)


@case("F.instance_norm")
def _f_instance_norm():
    r = _rng()
    return dict(input=_t(r, 2, 3, 5), running_mean=_t(r, 3), running_var=_tensor(np.abs(_f32(r, 3)) + 0.5),
                weight=_t(r, 3), bias=_t(r, 3), use_input_stats=True, momentum=0.2, eps=1e-4)


@case("F.pixel_shuffle")
def _f_pixel_shuffle():
    return dict(input=_t(_rng(), 1, 8, 2, 3), upscale_factor=2)


@case("F.pixel_unshuffle")
def _f_pixel_unshuffle():
    return dict(input=_t(_rng(), 1, 2, 4, 6), downscale_factor=2)


@case("F.channel_shuffle")
def _f_channel_shuffle():
    return dict(input=_t(_rng(), 1, 6, 2, 2), groups=3)


@case("F.triplet_margin_loss")
def _f_triplet_margin_loss():
    r = _rng()
    return dict(anchor=_t(r, 3, 4), positive=_t(r, 3, 4), negative=_t(r, 3, 4), margin=1.0, p=2.0, eps=1e-6,
                swap=True, size_average=None, reduce=None, reduction="mean")


for _name in ("margin_ranking_loss", "cosine_embedding_loss"):
    case(f"F.{_name}")(lambda: dict(input1=_t(_rng(), 3, 4), input2=_t(np.random.default_rng(1), 3, 4),
                                    target=_tensor(np.array([1.0, -1.0, 1.0], np.float32)), margin=0.2,
                                    size_average=None, reduce=None, reduction="sum"))
_f_margin_ranking = CASES["F.margin_ranking_loss"]
CASES["F.margin_ranking_loss"] = _f_margin_ranking._replace(
    build=lambda: dict(input1=_t(_rng(), 3), input2=_t(np.random.default_rng(1), 3),
                       target=_tensor(np.array([1.0, -1.0, 1.0], np.float32)), margin=0.2, size_average=None,
                       reduce=None, reduction="sum"))


@case("F.poisson_nll_loss")
def _f_poisson_nll_loss():
    r = _rng()
    return dict(input=_t(r, 3, 4), target=_tensor(r.poisson(2.0, (3, 4)).astype(np.float32)), log_input=True,
                full=True, size_average=None, eps=1e-8, reduce=None, reduction="mean")


@case("F.gaussian_nll_loss")
def _f_gaussian_nll_loss():
    r = _rng()
    return dict(input=_t(r, 3, 4), target=_t(r, 3, 4), var=_tensor(np.abs(_f32(r, 3, 4)) + 0.1), full=False,
                eps=1e-6, reduction="mean")


@case("F.soft_margin_loss")
def _f_soft_margin_loss():
    return dict(input=_t(_rng(), 3, 4), target=_tensor(np.sign(_f32(np.random.default_rng(1), 3, 4))),
                size_average=None, reduce=None, reduction="mean")


@case("F.multilabel_soft_margin_loss")
def _f_multilabel_soft_margin_loss():
    r = _rng()
    return dict(input=_t(r, 3, 4), target=_tensor((r.uniform(0, 1, (3, 4)) > 0.5).astype(np.float32)),
                weight=_tensor(np.abs(_f32(r, 4)) + 0.1), size_average=None, reduce=None, reduction="mean")


@case("F.hinge_embedding_loss")
def _f_hinge_embedding_loss():
    return dict(input=_t(_rng(), 3, 4), target=_tensor(np.sign(_f32(np.random.default_rng(1), 3, 4))),
                margin=1.0, size_average=None, reduce=None, reduction="mean")


@case("F.conv1d")
def _f_conv1d():
    r = _rng()
    return dict(input=_t(r, 2, 4, 9), weight=_t(r, 6, 2, 3), bias=_t(r, 6), stride=2, padding=1, dilation=1,
                groups=2)


@case("F.conv_transpose1d")
def _f_conv_transpose1d():
    r = _rng()
    return dict(input=_t(r, 1, 2, 5), weight=_t(r, 2, 3, 3), bias=_t(r, 3), stride=2, padding=1,
                output_padding=1, groups=1, dilation=1)


@case("F.max_pool1d")
def _f_max_pool1d():
    return dict(input=_t(_rng(), 2, 3, 9), kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True,
                return_indices=True)


@case("F.avg_pool1d")
def _f_avg_pool1d():
    return dict(input=_t(_rng(), 2, 3, 9), kernel_size=3, stride=2, padding=1, ceil_mode=False,
                count_include_pad=False)


@case("F.adaptive_avg_pool1d")
def _f_adaptive_avg_pool1d():
    return dict(input=_t(_rng(), 2, 3, 7), output_size=3)


@case("F.adaptive_max_pool1d")
def _f_adaptive_max_pool1d():
    return dict(input=_t(_rng(), 2, 3, 7), output_size=3, return_indices=True)


@case("F.conv3d")
def _f_conv3d():
    r = _rng()
    return dict(input=_t(r, 1, 4, 4, 5, 5), weight=_t(r, 6, 2, 2, 3, 3), bias=_t(r, 6), stride=(1, 2, 1),
                padding=1, dilation=1, groups=2)


@case("F.conv_transpose3d")
def _f_conv_transpose3d():
    r = _rng()
    return dict(input=_t(r, 1, 2, 3, 3, 3), weight=_t(r, 2, 3, 2, 2, 2), bias=_t(r, 3), stride=2, padding=1,
                output_padding=1, groups=1, dilation=1)


@case("F.max_pool3d")
def _f_max_pool3d():
    return dict(input=_t(_rng(), 1, 2, 5, 6, 6), kernel_size=3, stride=2, padding=1, dilation=(2, 1, 2),
                ceil_mode=True, return_indices=True)


@case("F.avg_pool3d")
def _f_avg_pool3d():
    return dict(input=_t(_rng(), 1, 2, 5, 6, 6), kernel_size=3, stride=2, padding=1, ceil_mode=False,
                count_include_pad=False, divisor_override=None)


@case("F.adaptive_avg_pool3d")
def _f_adaptive_avg_pool3d():
    return dict(input=_t(_rng(), 1, 2, 5, 7, 5), output_size=(2, 3, 2))


@case("F.adaptive_max_pool3d")
def _f_adaptive_max_pool3d():
    return dict(input=_t(_rng(), 1, 2, 5, 7, 5), output_size=(2, 3, 2), return_indices=True)


@case("F.dropout3d")
def _f_dropout3d():
    return dict(input=_t(_rng(), 2, 3, 2, 3, 2), p=0.3, training=True, inplace=False)


@case("F.scaled_dot_product_attention")
def _f_sdpa():
    r = _rng()
    return dict(query=_t(r, 2, 3, 4), key=_t(r, 2, 5, 4), value=_t(r, 2, 5, 4),
                attn_mask=_tensor(r.uniform(0, 1, (3, 5)) > 0.3), dropout_p=0.0, is_causal=False, scale=0.5,
                enable_gqa=False)


@case("F.multi_head_attention_forward")
def _f_mha():
    r = _rng()
    return dict(query=_t(r, 3, 2, 4), key=_t(r, 3, 2, 4), value=_t(r, 3, 2, 4), embed_dim_to_check=4,
                num_heads=2, in_proj_weight=_t(r, 12, 4), in_proj_bias=_t(r, 12), bias_k=None, bias_v=None,
                add_zero_attn=False, dropout_p=0.0, out_proj_weight=_t(r, 4, 4), out_proj_bias=_t(r, 4),
                training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None, v_proj_weight=None,
                static_k=None, static_v=None, average_attn_weights=True, is_causal=False)


@case("F.affine_grid")
def _f_affine_grid():
    return dict(theta=_t(_rng(), 2, 2, 3), size=(2, 3, 4, 5), align_corners=False)


@case("F.grid_sample")
def _f_grid_sample():
    r = _rng()
    return dict(input=_t(r, 2, 3, 4, 5), grid=_tensor(r.uniform(-1.2, 1.2, (2, 3, 2, 2)).astype(np.float32)),
                mode="bilinear", padding_mode="reflection", align_corners=True)


@case("F.unfold")
def _f_unfold():
    return dict(input=_t(_rng(), 2, 3, 5, 6), kernel_size=(2, 3), dilation=1, padding=1, stride=2)


@case("F.fold")
def _f_fold():
    return dict(input=_t(_rng(), 2, 12, 12), output_size=(5, 6), kernel_size=(2, 2), dilation=1, padding=0,
                stride=(1, 2))


# ---- with-indices pooling, unpooling, power-average and fractional max pooling ----------------

for _n, _shape in ((1, (2, 3, 7)), (2, (1, 2, 5, 6)), (3, (1, 2, 5, 6, 6))):
    case(f"F.max_pool{_n}d_with_indices")(
        lambda _shape=_shape: dict(input=_t(_rng(), *_shape), kernel_size=3, stride=2, padding=1, dilation=1,
                                   ceil_mode=True, return_indices=False))
    case(f"F.adaptive_max_pool{_n}d_with_indices")(
        lambda _shape=_shape: dict(input=_t(_rng(), *_shape), output_size=2, return_indices=False))
    case(f"F.lp_pool{_n}d")(
        lambda _shape=_shape: dict(input=_t(_rng(), *_shape), norm_type=2.0, kernel_size=2, stride=None,
                                   ceil_mode=True))


def _unpool_case(n, shape):
    import minifw.nn.functional as F
    x = _t(_rng(), *shape)
    y, indices = getattr(F, f"max_pool{n}d")(x, 2, return_indices=True)
    return dict(input=y, indices=indices, kernel_size=2, stride=None, padding=0,
                output_size=tuple(shape[2:]))


case("F.max_unpool1d")(lambda: _unpool_case(1, (2, 3, 7)))
case("F.max_unpool2d")(lambda: _unpool_case(2, (1, 2, 5, 6)))
case("F.max_unpool3d")(lambda: _unpool_case(3, (1, 2, 4, 5, 6)))

for _n, _shape in ((2, (1, 2, 7, 8)), (3, (1, 2, 5, 6, 6))):
    for _suffix in ("", "_with_indices"):
        case(f"F.fractional_max_pool{_n}d{_suffix}")(
            lambda _n=_n, _shape=_shape: dict(
                input=_t(_rng(), *_shape), kernel_size=2, output_size=3, output_ratio=None, return_indices=True,
                _random_samples=_tensor(_rng().random(_shape[:2] + (_n,)).astype(np.float32))))


# ---- in-place activations, random activations and dropouts, shuffles ---------------------------

# RuntimeError: writing over a read-only (expanded) input, as PyTorch
for _name, _extra in (("relu_", {}), ("elu_", {"alpha": 0.5}), ("leaky_relu_", {"negative_slope": 0.1}),
                      ("celu_", {"alpha": 0.7}), ("selu_", {}), ("hardtanh_", {"min_val": -0.5, "max_val": 0.5}),
                      ("threshold_", {"threshold": 0.1, "value": -1.0})):
    case(f"F.{_name}", raises=(RuntimeError,))(lambda _extra=_extra: dict(input=_t(_rng(), 2, 3, 4), **_extra))
case("F.rrelu", raises=(RuntimeError,))(lambda: dict(input=_t(_rng(), 2, 3, 4), lower=0.1, upper=0.3,
                                                    training=True, inplace=False))
case("F.rrelu_", raises=(RuntimeError,))(lambda: dict(input=_t(_rng(), 2, 3, 4), lower=0.1, upper=0.3,
                                                     training=True))
case("F.alpha_dropout", raises=(RuntimeError,))(lambda: dict(input=_t(_rng(), 2, 3, 4), p=0.3, training=True,
                                                            inplace=False))
case("F.feature_alpha_dropout", raises=(RuntimeError,))(lambda: dict(input=_t(_rng(), 2, 3, 4), p=0.3,
                                                                    training=True, inplace=False))
case("F.native_channel_shuffle")(lambda: dict(input=_t(_rng(), 1, 6, 2, 2), groups=3))
# dim out of range, and hard=True's argmax along an empty dim: IndexError, as PyTorch
case("F.gumbel_softmax", raises=(IndexError,))(lambda: dict(logits=_t(_rng(), 2, 5), tau=0.5, hard=True, eps=1e-10,
                                                           dim=-1))


# ---- more losses and distances ----------------------------------------------------------------

@case("F.multi_margin_loss")
def _f_multi_margin_loss():
    r = _rng()
    return dict(input=_t(r, 4, 5), target=_long([0, 4, 2, 1]), p=2, margin=0.7,
                weight=_tensor(np.abs(_f32(r, 5)) + 0.1), size_average=None, reduce=None, reduction="mean")


@case("F.multilabel_margin_loss")
def _f_multilabel_margin_loss():
    return dict(input=_t(_rng(), 3, 4), target=_long([[3, 0, -1, 1], [1, 2, 0, 3], [-1, 0, 0, 0]]),
                size_average=None, reduce=None, reduction="sum")


@case("F.pairwise_distance")
def _f_pairwise_distance():
    r = _rng()
    return dict(x1=_t(r, 3, 4), x2=_t(r, 3, 4), p=3.0, eps=1e-6, keepdim=True)


@case("F.pdist")
def _f_pdist():
    return dict(input=_t(_rng(), 4, 3), p=2.0)


@case("F.triplet_margin_with_distance_loss")
def _f_triplet_margin_with_distance_loss():
    r = _rng()
    return dict(anchor=_t(r, 3, 4), positive=_t(r, 3, 4), negative=_t(r, 3, 4), distance_function=None,
                margin=0.5, swap=True, reduction="mean")
