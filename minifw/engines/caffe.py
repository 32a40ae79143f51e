"""The Caffe engine: each layer computed the classic way, with the same entry
points and signatures as minifw.ops.

On the CPU, convolution is batched im2col + NumPy's GEMM (OpenBLAS), one GEMM
per group; inner products are that GEMM too, and the bias gradient a sum. This
is the honest baseline: the lowering is done with vectorized strided copies (one
per kernel tap), the GEMMs are single large BLAS calls, and the lowered matrix
lives in a buffer that is kept between calls, as Caffe keeps its col_buffer_.

The other layers follow Caffe's CPU layers (caffe/src/caffe/layers/*.cpp) as
vectorized array code, with Python loops only over kernel taps (pooling) and
channels (LRN): pooling takes the maximum or the sum tap by tap over all outputs
at once (pooling_layer); LRN slides a window sum along the channels
(CrossChannelForward_cpu); activations use Caffe's branch-free forms (relu_layer,
sigmoid, tanh, elu); softmax subtracts the channel maximum, exponentiates and
divides (softmax_layer), and the loss reads the log-probability of the target
(softmax_loss_layer); batch norm computes the channel statistics, normalizes, then
scales and shifts (batch_norm_layer + scale_layer); dropout multiplies by a
Bernoulli mask (dropout_layer); bias gradients are a matrix-vector product with a
vector of ones (bias_multiplier_); the SGD update is a pass per operation
(sgd_solver); recurrent layers unroll a loop over the time steps with one GEMM per step
(recurrent_layer, lstm_layer). None of them calls minifw's primitives, and on the CPU none runs any
native code of minifw.

On the GPU devices ("cudasim" and "cuda") every layer runs on the inputs' device with
that device's array library (devices.array_module: NumPy on "cudasim", CuPy on
"cuda"), as Caffe's GPU layers do: convolution lowers one image at a time with
minifw's im2col CUDA kernel (native/cuda/conv.cu) into a col buffer kept between
calls, then multiplies with the array library's GEMM per group (cuBLAS through CuPy
on "cuda"); backward-data multiplies into the col buffer and gathers it with the
col2im kernel; backward-filter lowers each image again and accumulates its GEMM into
dw. The other layers are the same array code as on the CPU, written against the
array library of their inputs; index and divisor arrays built on the host are moved
to the device first. Every result is an array of the inputs' device
(_on_device_of), as the primitives' results are.

They compute the same functions as minifw.ops: the same argument checks, max
pooling's indices in the same format (so a Function can keep them between its
forward and backward), the same PyTorch semantics (count_include_pad, ignore_index,
label smoothing, reductions, running statistics), results equal to rounding. They
differ in three places: dropout draws its mask from NumPy's generator seeded with
`seed`, the same distribution but not the primitives' Philox mask; LRN's sliding
sum, like Caffe's, turns an inf that has left the window into nan; and an
activation's backward multiplies dy by 0/1 masks, so an inf or nan in dy gives nan
where the primitives give 0. On "cuda" the dropout mask comes from CuPy's generator
(its XORWOW stream) seeded the same way: again the same distribution, but neither the
primitives' mask nor the CPU's.
"""
import numbers
import threading

import numpy as np

from .. import backends, caches, devices
from ..checks import (check_array, check_bool, check_float_array, check_like, check_no_zero_dims,
                      check_same_device, contiguous)
from ..ops.activation import check_activation_backward_args, check_activation_forward_args
from ..ops.batchnorm import (check_batch_norm_backward_args, check_batch_norm_inference_args,
                             check_batch_norm_training_args)
from ..ops.conv import _cached_problem, _check_dy, _check_problem
from ..ops.gemm import check_gemm_args
from ..ops.tensor_ops import _NDIM_DESC as _BIAS_NDIM_DESC
from ..ops.tensor_ops import _layout as _bias_layout
from ..ops.dropout import check_dropout_p as _check_dropout_p
from ..ops.lrn import check_lrn_params
from ..ops.optim import check_sgd_step_args
from ..ops.pooling import check_pool_backward_args, check_pool_forward_args
from ..ops.softmax import NDIM_DESC as _CLASSES_NDIM_DESC
from ..ops.softmax import check_classes as _check_classes
from ..ops.softmax import check_cross_entropy_args as _check_cross_entropy_args
from ..ops.softmax import check_cross_entropy_backward_args

# Argument checks: every public entry point makes the checks minifw.ops makes for it, with
# minifw.ops's own check functions (so the messages are the same), before any array code
# runs. They look at shapes, dtypes and devices only (O(1) per call, no pass over the data),
# and never copy: the array code here reads strided views as they are.

class _Buffers:
    """The engine's scratch buffers (col buffer, padded copy, ...), kept between calls as
    Caffe keeps its col_buffer_: one per (name, device) and thread, grown to the largest
    request. What all threads keep together is bounded by `max_cached_bytes` (1 GiB by
    default, settable: minifw.caches.get("caffe.buffers").max_cached_bytes = n): a request
    that would take them over it gets a buffer of its own, freed after the call. A thread's
    buffers go when the thread has ended; clear() frees every thread's."""

    DEFAULT_MAX_CACHED_BYTES = 1 << 30

    def __init__(self):
        self._max_cached = self.DEFAULT_MAX_CACHED_BYTES
        self._threads = {}  # thread ident -> {(name, device): buffer}
        self._lock = threading.Lock()

    @property
    def max_cached_bytes(self):
        return self._max_cached

    @max_cached_bytes.setter
    def max_cached_bytes(self, nbytes):
        nbytes = caches.check_size_limit("caffe buffers", "max_cached_bytes", nbytes)
        self._max_cached = nbytes
        if self.current_bytes > nbytes:
            self.clear()

    def get(self, name, size, dtype, dev, fill=None):
        """A 1-D buffer of at least `size` elements of `dtype` on `dev` (filled with `fill` when
        it is new)."""
        buffers = self._threads.get(threading.get_ident())
        buf = None if buffers is None else buffers.get((name, dev))
        if buf is not None and buf.size >= size and buf.dtype == dtype:
            return buf
        with self._lock:  # the smaller buffer (and those of ended threads) go first
            if buffers is None:
                alive = {t.ident for t in threading.enumerate()}
                for gone in [i for i in self._threads if i not in alive]:
                    del self._threads[gone]
                buffers = self._threads[threading.get_ident()] = {}
            buffers.pop((name, dev), None)
        buf = None
        buf = devices.empty(size, dtype, dev, recycle=False)  # kept here
        if fill is not None:
            buf.fill(fill)
        with self._lock:
            if self.current_bytes + buf.nbytes <= self._max_cached:
                buffers[(name, dev)] = buf
        return buf

    @property
    def current_bytes(self):
        return sum(b.nbytes for buffers in list(self._threads.values()) for b in list(buffers.values()))

    def release(self):
        """Free this thread's buffers."""
        with self._lock:
            self._threads.pop(threading.get_ident(), None)

    def clear(self):
        """Free every thread's buffers (one in use by a running layer lives until it returns)."""
        with self._lock:
            self._threads.clear()

    def stats(self):
        return {"current_bytes": self.current_bytes, "max_cached_bytes": self._max_cached}


_buffers = caches.register("caffe.buffers", _Buffers())


def _buffer(name, shape, dtype, dev=devices.CPU):
    """A cached buffer on `dev`, grown when needed (Caffe keeps its col buffer per layer)."""
    size = int(np.prod(shape))
    return _buffers.get(name, size, dtype, dev)[:size].reshape(shape)


def _xp(a):
    """The array library of a's device: NumPy, or CuPy on "cuda"."""
    return np if type(a) is np.ndarray else devices.array_module(devices.of(a))


def _on_gpu(a):
    """Whether `a` lives on one of the GPU devices ("cudasim", "cuda")."""
    return type(a) is not np.ndarray and devices.of(a).type != "cpu"


def _on_device_of(ref, array):
    """`array`, computed by the array library (NumPy's functions may return a plain array, or
    a scalar for 0-d operands), as an array on the device of `ref`: a copy only when it is
    elsewhere."""
    dev = devices.of(ref)
    if devices.is_array(array) and devices.of(array) == dev:
        return array
    return devices.to_device(np.asanyarray(array), dev)


def release_buffers():
    """Free this thread's cached buffers (col buffer, padded copy, ...) on every device
    (Caffe keeps them per layer); minifw.caches.get("caffe.buffers").clear() frees every
    thread's."""
    _buffers.release()


def col_buffer_bytes(problem, device="cpu"):
    """Bytes of the lowered matrix: C*R*S rows by N*Ho*Wo columns on the CPU (the whole batch
    at once), by Ho*Wo columns on the GPU devices (one image at a time, as Caffe's GPU path)."""
    n, c, _, _ = problem.x_shape
    _, _, ho, wo = problem.out_shape
    _, _, r, s = problem.w_shape
    images = n if devices.get(device, "col_buffer_bytes").type == "cpu" else 1
    return c * r * s * images * ho * wo * problem.dtype.itemsize


def _tap_slices(problem, r, s):
    (sh, sw), (dh, dw) = problem.stride, problem.dilation
    _, _, ho, wo = problem.out_shape
    return (slice(r * dh, r * dh + sh * (ho - 1) + 1, sh), slice(s * dw, s * dw + sw * (wo - 1) + 1, sw))


# Two orders of the lowered matrix's columns, with the same GEMMs and element counts
# as Caffe's; which one a layer uses depends on how long its output rows are.
#
# Image-major, col[c, r, s, n, oh, ow]: each kernel tap's copy moves one output row
# (Wo values) of one image at a time, and the forward GEMM's (K, N, Ho*Wo) result
# becomes NCHW by moving whole planes. Good while rows are long.
#
# Batch-innermost, col[c, r, s, oh, ow, n]: the images are first copied into a
# (C, H, W, N) buffer, so a tap's copy moves runs of Wo*N (stride 1) or N values.
# Short rows (LeNet's conv2: 8 values) need this: strided array copies and col2im's
# adds pay per run, not per value. The results come back to NCHW by a transpose.
# col2im always works this way: its adds are what the short runs hurt most.

def _batch_inner(problem):
    """Whether the lowering puts the batch innermost (output rows shorter than 16)."""
    return problem.out_shape[3] < 16


def _padded(x, problem, batch_inner):
    """x zero-padded, as (C, N, H + 2ph, W + 2pw), or (C, H + 2ph, W + 2pw, N) if
    batch_inner; a view of x where that needs no copy."""
    n, c, h, w = x.shape
    ph, pw = problem.padding
    if not (batch_inner or ph or pw):
        return x.transpose(1, 0, 2, 3)
    shape = (c, h + 2 * ph, w + 2 * pw, n) if batch_inner else (c, n, h + 2 * ph, w + 2 * pw)
    padded = _buffer("padded", shape, x.dtype)
    if ph or pw:
        padded.fill(0)
    if batch_inner:
        padded[:, ph:ph + h, pw:pw + w, :] = x.transpose(1, 2, 3, 0)
    else:
        padded[:, :, ph:ph + h, pw:pw + w] = x.transpose(1, 0, 2, 3)
    return padded


def _batch_first(a, n, shape, bias=None):
    """a (..., N) as a new (N, ...) array of `shape`, plus bias per channel (axis 1) if
    given. The transpose runs in blocks of rows: one pass over all of `a` would read it
    with a stride of N values and miss the cache on nearly every read."""
    rows = a.reshape(-1, n)
    out = np.empty(shape, dtype=a.dtype)
    flat = out.reshape(n, -1)
    block = 64
    for i in range(0, rows.shape[0], block):
        flat[:, i:i + block] = rows[i:i + block].T
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * (len(shape) - 2))
    return out


def im2col(x, problem, batch_inner=None):
    """The lowered matrix, col[c, r, s, n, oh, ow] = padded x[n, c, oh*sh + r*dh, ow*sw + s*dw]
    or, batch innermost, col[c, r, s, oh, ow, n] (by default as _batch_inner says). x must be
    a host (CPU) float array of problem.x_shape; col has its dtype."""
    fn = "im2col"
    _check_problem(fn, problem)
    x = _check_lowering_input(fn, "x", x, problem.x_shape, problem)
    if batch_inner is not None:
        batch_inner = check_bool(fn, "batch_inner", batch_inner)
    return _im2col(x, problem, batch_inner)


def col2im(col, problem):
    """dx (N, C, H, W) from dcol[c, r, s, oh, ow, n] (batch innermost): each tap's values
    added back where im2col took them from. col must be a host (CPU) float array of that
    shape (C, R, S, Ho, Wo, N) for `problem`; dx has its dtype."""
    fn = "col2im"
    _check_problem(fn, problem)
    n, c, _, _ = problem.x_shape
    _, _, kr, ks = problem.w_shape
    _, _, ho, wo = problem.out_shape
    col = _check_lowering_input(fn, "col", col, (c, kr, ks, ho, wo, n), problem)
    return _col2im(col, problem)


def _check_lowering_input(fn, name, a, shape, problem):
    """im2col's x / col2im's col: a host float32/float64 array of exactly `shape` (the lowering
    copies values, in their own dtype, so the problem's dtype is not required)."""
    a = check_float_array(fn, name, a, ndim=len(shape), copy=False,
                          ndim_desc=f"{len(shape)}-D of shape {shape} (from the problem)")
    if tuple(a.shape) != tuple(shape):
        raise ValueError(f"{fn}: {name} must have shape {shape} for this problem ({problem}), got "
                         f"{tuple(a.shape)}")
    if type(a) is not np.ndarray:
        raise ValueError(f"{fn}: {name} must be on the CPU (a numpy.ndarray), got an array on "
                         f"{str(devices.of(a))!r}; on the GPU devices conv2d_forward lowers with the "
                         f"im2col kernel")
    return a


def _im2col(x, problem, batch_inner=None):
    """im2col without the checks: x is a host array of problem.x_shape and dtype."""
    if batch_inner is None:
        batch_inner = _batch_inner(problem)
    n, c, _, _ = x.shape
    _, _, ho, wo = problem.out_shape
    _, _, kr, ks = problem.w_shape
    padded = _padded(x, problem, batch_inner)
    col = _buffer("col", (c, kr, ks, ho, wo, n) if batch_inner else (c, kr, ks, n, ho, wo), x.dtype)
    sw = problem.stride[1]
    # Image-major with a column stride: a tap's row is every sw-th column, one element at a
    # time (AlexNet conv1's 121 taps took 19 ms so). The padded columns are first dealt into
    # sw phases (columns b, b + sw, ...), where every tap's row is one contiguous run.
    phases = None
    if sw > 1 and not batch_inner:
        phases = [np.ascontiguousarray(padded[..., b::sw]) for b in range(sw)]
    for r in range(kr):
        for s in range(ks):
            rows, cols = _tap_slices(problem, r, s)
            if batch_inner:
                col[:, r, s] = padded[:, rows, cols, :]
            elif phases:
                start = cols.start // sw
                col[:, r, s] = phases[cols.start % sw][:, :, rows, start:start + wo]
            else:
                col[:, r, s] = padded[:, :, rows, cols]
    return col


def _col2im(col, problem):
    """col2im without the checks."""
    n, c, h, w = problem.x_shape
    ph, pw = problem.padding
    _, _, kr, ks = problem.w_shape
    dxt = _buffer("padded", (c, h + 2 * ph, w + 2 * pw, n), col.dtype)
    dxt.fill(0)
    for r in range(kr):
        for s in range(ks):
            rows, cols = _tap_slices(problem, r, s)
            dxt[:, rows, cols, :] += col[:, r, s]
    if ph or pw:
        dxt = np.ascontiguousarray(dxt[:, ph:ph + h, pw:pw + w, :])
    return _batch_first(dxt, n, (n, c, h, w))


_W_NDIM_DESC = "4-D (K, C/groups, R, S)"


def _check_conv_forward_args(fn, x, w, bias, stride, padding, dilation, groups):
    """minifw.ops.conv2d_forward's checks: (x, w, bias, problem)."""
    w = check_float_array(fn, "w", w, ndim=4, ndim_desc=_W_NDIM_DESC, copy=False)
    x = check_float_array(fn, "x", x, ndim=4, dtype=w.dtype, copy=False,
                          ndim_desc=f"4-D (N, C, H, W) to match weight of shape {w.shape}")
    check_no_zero_dims(fn, "x", x)
    check_no_zero_dims(fn, "w", w)
    p = _cached_problem(fn, x.shape, w.shape, stride, padding, dilation, groups, w.dtype)
    if bias is not None:
        bias = check_float_array(fn, "bias", bias, ndim=1, dtype=w.dtype)
        if bias.shape[0] != w.shape[0]:
            raise ValueError(f"{fn}: bias must have shape ({w.shape[0]},) to match weight of shape "
                             f"{w.shape}, got {bias.shape}")
    check_same_device(fn, x=x, w=w, bias=bias)
    return x, w, bias, p


def _check_conv_backward_data_args(fn, dy, w, x_shape, stride, padding, dilation, groups):
    """minifw.ops.conv2d_backward_data's checks: (dy, w, problem)."""
    w = check_float_array(fn, "w", w, ndim=4, ndim_desc=_W_NDIM_DESC, copy=False)
    dy = check_float_array(fn, "dy", dy, ndim=4, dtype=w.dtype, ndim_desc="4-D (N, K, Ho, Wo)", copy=False)
    check_no_zero_dims(fn, "w", w)
    p = _cached_problem(fn, x_shape, w.shape, stride, padding, dilation, groups, w.dtype)
    _check_dy(fn, dy, p)
    check_same_device(fn, dy=dy, w=w)
    return dy, w, p


def _check_conv_backward_filter_args(fn, x, dy, w_shape, stride, padding, dilation, groups):
    """minifw.ops.conv2d_backward_filter's checks: (x, dy, problem)."""
    x = check_float_array(fn, "x", x, ndim=4, ndim_desc="4-D (N, C, H, W)", copy=False)
    dy = check_float_array(fn, "dy", dy, ndim=4, dtype=x.dtype, ndim_desc="4-D (N, K, Ho, Wo)", copy=False)
    check_no_zero_dims(fn, "x", x)
    p = _cached_problem(fn, x.shape, w_shape, stride, padding, dilation, groups, x.dtype)
    _check_dy(fn, dy, p)
    check_same_device(fn, x=x, dy=dy)
    return x, dy, p


def _dy_rows(dy, groups, batch_inner):
    """dy (N, K, Ho, Wo) as (groups, K / groups, columns), the columns in the lowering's
    order."""
    n, k, ho, wo = dy.shape
    dyt = _buffer("dy", (k, ho, wo, n) if batch_inner else (k, n, ho, wo), dy.dtype)
    dyt[...] = dy.transpose(1, 2, 3, 0) if batch_inner else dy.transpose(1, 0, 2, 3)
    return dyt.reshape(groups, k // groups, ho * wo * n)


def conv2d_forward(x, w, bias=None, *, stride=1, padding=0, dilation=1, groups=1):
    """As minifw.ops.conv2d_forward (same checks): batched im2col + one GEMM per group."""
    x, w, bias, p = _check_conv_forward_args("conv2d_forward", x, w, bias, stride, padding, dilation, groups)
    if _on_gpu(x):
        return _gpu_conv2d_forward(x, w, bias, p)
    n, k, ho, wo = p.out_shape
    g, kg = p.groups, k // p.groups
    batch_inner = _batch_inner(p)
    col = _im2col(x, p, batch_inner).reshape(g, -1, ho * wo * n)
    out = np.matmul(w.reshape(g, kg, -1), col)  # one GEMM per group
    if batch_inner:
        return _on_device_of(x, _batch_first(out, n, (n, k, ho, wo), bias))
    planes = out.reshape(k, n, ho, wo).transpose(1, 0, 2, 3)
    y = devices.empty((n, k, ho, wo), x.dtype, devices.of(x))
    if bias is None:
        y[...] = planes
    else:
        np.add(planes, bias.reshape(1, k, 1, 1), out=y)
    return y


def conv2d_backward_data(dy, w, x_shape, *, stride=1, padding=0, dilation=1, groups=1):
    """As minifw.ops.conv2d_backward_data (same checks): GEMM into the col buffer, then col2im."""
    dy, w, p = _check_conv_backward_data_args("conv2d_backward_data", dy, w, x_shape, stride, padding,
                                              dilation, groups)
    if _on_gpu(dy):
        return _gpu_conv2d_backward_data(dy, w, p)
    n, k, ho, wo = p.out_shape
    _, cg, kr, ks = w.shape
    g, kg = p.groups, k // p.groups
    dcol = np.matmul(w.reshape(g, kg, -1).transpose(0, 2, 1), _dy_rows(dy, g, True))
    return _on_device_of(dy, _col2im(dcol.reshape(cg * g, kr, ks, ho, wo, n), p))


def conv2d_backward_filter(x, dy, w_shape, *, stride=1, padding=0, dilation=1, groups=1):
    """As minifw.ops.conv2d_backward_filter (same checks): im2col, then the weight GEMMs."""
    x, dy, p = _check_conv_backward_filter_args("conv2d_backward_filter", x, dy, w_shape, stride, padding,
                                                dilation, groups)
    if _on_gpu(x):
        return _gpu_conv2d_backward_filter(x, dy, p)
    n, k, ho, wo = p.out_shape
    batch_inner = _batch_inner(p)
    if not batch_inner:
        return _on_device_of(x, _weight_gemm_per_image(dy, _im2col(x, p, False), p).reshape(p.w_shape))
    col = _im2col(x, p, batch_inner).reshape(p.groups, -1, ho * wo * n)
    dy_rows = _dy_rows(dy, p.groups, batch_inner)
    return _on_device_of(x, np.matmul(dy_rows, col.transpose(0, 2, 1)).reshape(p.w_shape))


WEIGHT_GEMM_CHUNK_ELEMENTS = 1 << 20  # of _weight_gemm_per_image's stacked products


def _weight_gemm_per_image(dy, col, p):
    """dW from an image-major col, as Caffe's weight_cpu_gemm: per image and group one GEMM,
    dW_g += dy[i]_g col[i]_g^T, added up in image order. dy is read where it lies (no
    transposed copy), and each GEMM's K is one image's pixels: a whole batch's as one K (LeNet
    conv1: 20 x 25 x 36864) ran at a third of the speed. The images go to np.matmul in
    chunks, so that its stacked result stays near WEIGHT_GEMM_CHUNK_ELEMENTS values."""
    n, k, ho, wo = p.out_shape
    g = p.groups
    dy_images = dy.reshape(n, g, k // g, ho * wo)
    col_images = col.reshape(g, -1, n, ho * wo).transpose(2, 0, 3, 1)  # image i: (g, Ho*Wo, Cg*R*S) views
    dw = np.zeros((g, k // g, col_images.shape[3]), dy.dtype)
    chunk = max(1, WEIGHT_GEMM_CHUNK_ELEMENTS // dw.size)
    for i in range(0, n, chunk):
        for partial in np.matmul(dy_images[i:i + chunk], col_images[i:i + chunk]):
            dw += partial
    return dw


def conv2d_backward_bias(dy):
    """db[k] = sum of dy[:, k] over N, H, W (as minifw.ops.conv2d_backward_bias)."""
    fn = "conv2d_backward_bias"
    check_float_array(fn, "dy", dy, ndim=4, ndim_desc="4-D (N, K, Ho, Wo)", copy=False)
    return _bias_backward(fn, dy)


# ---- convolution on the GPU devices (Caffe's BaseConvolutionLayer forward_gpu_gemm,
# backward_gpu_gemm, weight_gpu_gemm) -------------------------------------------------------
#
# One image at a time: the im2col kernel writes its lowered matrix, col (C*R*S rows of Ho*Wo
# values, every channel), into a buffer kept between calls, and the array library multiplies
# w's row block of each group with col's, as Caffe's per-group GEMMs (one batched matmul over
# the groups here). The im2col/col2im kernels are minifw's CUDA kernels (native/cuda/conv.cu);
# the GEMMs are the array library's (cuBLAS through CuPy on "cuda").

def _gpu_operands(fn, dtype, **arrays):
    """The arrays C-contiguous (the kernels read them so), after checking that they share
    one device and `dtype`, as the kernels need."""
    check_same_device(fn, **arrays)
    for name, a in arrays.items():
        if a is not None and a.dtype != dtype:
            raise TypeError(f"{fn}: {name} must have dtype {np.dtype(dtype).name} like the other "
                            f"operands, got {a.dtype}")
    return [None if a is None else contiguous(a) for a in arrays.values()]


def _col_buffer(p, dev):
    """One image's lowered matrix as (groups, Cg*R*S, Ho*Wo): each group's row block."""
    _, cg, r, s = p.w_shape
    _, _, ho, wo = p.out_shape
    return _buffer("col", (p.groups, cg * r * s, ho * wo), p.dtype, dev)


def _gpu_conv2d_forward(x, w, bias, p):
    x, w, bias = _gpu_operands("conv2d_forward", x.dtype, x=x, w=w, bias=bias)
    dev, xp = devices.of(x), _xp(x)
    n, k, ho, wo = p.out_shape
    g = p.groups
    col = _col_buffer(p, dev)
    im2col_kernel = devices.kernel_for("conv", "im2col", x)
    w_rows = w.reshape(g, k // g, -1)
    y = devices.empty(p.out_shape, x.dtype, dev)
    y_rows = y.reshape(n, g, k // g, ho * wo)
    for i in range(n):
        im2col_kernel(p._args, x, i, col)
        xp.matmul(w_rows, col, out=y_rows[i])  # y[i] of group j = w_j col_j
    if bias is not None:
        y += bias.reshape(1, k, 1, 1)
    return y


def _gpu_conv2d_backward_data(dy, w, p):
    dy, w = _gpu_operands("conv2d_backward_data", dy.dtype, dy=dy, w=w)
    dev, xp = devices.of(dy), _xp(dy)
    n, k, ho, wo = p.out_shape
    g = p.groups
    col = _col_buffer(p, dev)
    col2im_kernel = devices.kernel_for("conv", "col2im", dy)
    w_cols = w.reshape(g, k // g, -1).transpose(0, 2, 1)
    dy_rows = dy.reshape(n, g, k // g, ho * wo)
    dx = devices.empty(p.x_shape, dy.dtype, dev)
    for i in range(n):
        xp.matmul(w_cols, dy_rows[i], out=col)  # col_j = w_j^T dy[i] of group j
        col2im_kernel(p._args, col, i, dx)  # writes dx[i]
    return dx


def _gpu_conv2d_backward_filter(x, dy, p):
    x, dy = _gpu_operands("conv2d_backward_filter", x.dtype, x=x, dy=dy)
    dev, xp = devices.of(x), _xp(x)
    n, k, ho, wo = p.out_shape
    g = p.groups
    col = _col_buffer(p, dev)
    im2col_kernel = devices.kernel_for("conv", "im2col", x)
    dy_rows = dy.reshape(n, g, k // g, ho * wo)
    dw = devices.zeros(p.w_shape, x.dtype, dev)
    dw_rows = dw.reshape(g, k // g, -1)
    for i in range(n):
        im2col_kernel(p._args, x, i, col)
        dw_rows += xp.matmul(dy_rows[i], col.transpose(0, 2, 1))  # dw_j += dy[i] of group j col_j^T
    return dw


def _ones(size, dtype, dev=devices.CPU):
    """A cached vector of ones on `dev` (Caffe's bias_multiplier_)."""
    return _buffers.get("ones", size, dtype, dev, fill=1)[:size]


def bias_backward(dy):
    """dy summed over every axis but the channel axis 1, as Caffe does it: a matrix-vector
    product with a vector of ones (its bias_multiplier_), per image for a convolution. dy is
    2-D (N, C) or 4-D (N, C, H, W), as minifw.ops.bias_backward takes it."""
    return _bias_backward("bias_backward", dy)


def _bias_backward(fn, dy):
    dy = check_float_array(fn, "dy", dy, ndim=(2, 4), ndim_desc=_BIAS_NDIM_DESC, copy=False)
    n, k, inner = _bias_layout(fn, "dy", dy)
    xp, dev = _xp(dy), devices.of(dy)
    if dy.ndim == 2:
        return xp.matmul(_ones(n, dy.dtype, dev), dy)
    rows = dy.reshape(n, k, inner)  # inner given: reshape's -1 is ambiguous for N = 0
    return xp.matmul(rows, _ones(inner, dy.dtype, dev)).sum(axis=0)


def gemm(a, b, c=None, *, trans_a=False, trans_b=False, alpha=1.0, beta=0.0):
    """alpha * op(a) @ op(b) + beta * c by the array library's GEMM (c, when given, is
    written and returned), as minifw.ops.gemm (same checks)."""
    a, b, alpha, beta, trans_a, trans_b, (m, _, n) = check_gemm_args(a, b, c, trans_a, trans_b, alpha, beta)
    # into an array of minifw's allocator: a large product (AlexNet's weight gradients) takes
    # memory already touched, as Caffe's layers write into blobs they keep
    product = _xp(a).matmul(a.T if trans_a else a, b.T if trans_b else b,
                            out=devices.empty((m, n), a.dtype, devices.of(a)))
    if alpha != 1.0:
        product *= alpha
    if c is None:
        return product
    if beta == 0.0:
        c[...] = product
    else:
        c *= beta
        c += product
    return c


# ---- pooling (pooling_layer) --------------------------------------------------------
#
# Caffe visits each output's window clipped to the input. Here the loop runs over
# the kernel taps instead, each tap handling at once every output whose tap lands
# inside the input; taps that only ever land in the padding are skipped, so
# nothing is padded and the work is that of the clipped windows. (Caffe's pooling
# has no dilation; max pooling's taps here lie `dilation` apart, as PyTorch's.)

def _axis_taps(size, kernel, stride, padding, out, dilation=1):
    """(outputs, first input) along one axis for every tap t that lands in the input
    for some output: the outputs o in that slice read input o * stride - padding + t * dilation."""
    lowest = max(0, -(-(padding - (out - 1) * stride) // dilation))  # the first tap reaching the input
    for t in range(lowest, min(kernel, -(-(size + padding) // dilation))):
        at = t * dilation - padding  # the tap's position in output 0's window
        first = max(0, -(-(-at) // stride))
        end = min(out, (size - 1 - at) // stride + 1)
        if first < end:
            yield slice(first, end), first * stride + at


def _pool_taps(p):
    """(outputs, inputs) of every kernel tap, as index tuples of (N, C, Ho, Wo) and
    (N, C, H, W) arrays, in row-major tap order, which is each window's row-major order."""
    _, _, h, w = p.x_shape
    _, _, ho, wo = p.out_shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = p.kernel_size, p.stride, p.padding, p.dilation
    cols = list(_axis_taps(w, kw, sw, pw, wo, dw))
    for out_rows, h0 in _axis_taps(h, kh, sh, ph, ho, dh):
        in_rows = slice(h0, h0 + sh * (out_rows.stop - out_rows.start - 1) + 1, sh)
        for out_cols, w0 in cols:
            in_cols = slice(w0, w0 + sw * (out_cols.stop - out_cols.start - 1) + 1, sw)
            yield (Ellipsis, out_rows, out_cols), (Ellipsis, in_rows, in_cols)


def _window_starts(p):
    """Top row and left column of every window, in input coordinates (negative in the padding)."""
    _, _, ho, wo = p.out_shape
    return np.arange(ho) * p.stride[0] - p.padding[0], np.arange(wo) * p.stride[1] - p.padding[1]


def _avg_divisors(p, dtype):
    """(Ho, Wo) divisors: Caffe's pool_size, the window clipped to the padded input
    (count_include_pad), or the part of it inside the input."""
    _, _, h, w = p.x_shape
    (kh, kw), (ph, pw) = p.kernel_size, p.padding
    h0, w0 = _window_starts(p)
    if p.count_include_pad:
        rows, cols = np.minimum(h0 + kh, h + ph) - h0, np.minimum(w0 + kw, w + pw) - w0
    else:
        rows = np.minimum(h0 + kh, h) - np.maximum(h0, 0)
        cols = np.minimum(w0 + kw, w) - np.maximum(w0, 0)
    # each factor in floating point: a heavily padded area can exceed int64
    return np.multiply.outer(rows.astype(dtype), cols.astype(dtype))


def _max_pool(x, p, return_indices):
    xp, dev = _xp(x), devices.of(x)
    best = devices.empty(p.out_shape, x.dtype, dev)
    best.fill(-np.inf)
    taps = list(_pool_taps(p))
    for y_at, x_at in taps:
        xp.maximum(best[y_at], x[x_at], out=best[y_at])  # propagates NaN
    if not return_indices:
        return best, None
    # Then Caffe's mask: where each maximum came from, as a flat index into its input
    # plane. Each window's first maximum (or first NaN) wins, as in the primitives:
    # `first` keeps, per output, the largest (taps - i) over the visited taps i (row-major
    # tap order) that hold the maximum, in a small integer type, and the index follows from
    # the tap's place in the window. Only taps that reach the input are numbered (a huge,
    # heavily padded kernel has few). Every window holds at least one input value, so every
    # output gets an index.
    (sh, sw), (ph, pw), (dh, dw) = p.stride, p.padding, p.dilation
    _, _, _, w = p.x_shape
    count = len(taps)
    code = np.uint8 if count < 256 else np.uint16 if count < 65536 else np.uint32
    first = devices.zeros(p.out_shape, code, dev)
    has_nan = bool(xp.isnan(best).any())
    offset = np.zeros(count + 1, np.int64)  # code -> the tap's offset from its window's top left; code 0 never stays
    for i, (y_at, x_at) in enumerate(taps):
        v, (_, out_rows, out_cols), (_, rows, cols) = x[x_at], y_at, x_at
        found = v == best[y_at]
        if has_nan:
            found |= v != v
        offset[count - i] = (rows.start - out_rows.start * sh + ph) * w + cols.start - out_cols.start * sw + pw
        xp.maximum(first[y_at], found.view(np.uint8) * code(count - i), out=first[y_at])
    _, _, ho, wo = p.out_shape
    # the lookup tables are made on the host, then moved to the device of `first`
    window = np.add.outer((np.arange(ho) * sh - ph) * w, np.arange(wo) * sw - pw)
    return best, devices.to_device(offset, dev)[first] + devices.to_device(window, dev)


def pool2d_forward(x, kernel_size, *, stride=None, padding=0, dilation=1, mode="max", ceil_mode=False,
                   count_include_pad=True, return_indices=False):
    """As minifw.ops.pool2d_forward: y, or (y, indices) with return_indices (max only)."""
    x, p, return_indices = check_pool_forward_args(x, kernel_size, stride, padding, mode, ceil_mode,
                                                   count_include_pad, return_indices, dilation=dilation)
    if p.mode == "max":
        y, indices = _max_pool(x, p, return_indices)
        y = _on_device_of(x, y)
        return (y, _on_device_of(x, indices)) if return_indices else y
    total = devices.zeros(p.out_shape, x.dtype, devices.of(x))
    for y_at, x_at in _pool_taps(p):
        total[y_at] += x[x_at]
    total /= devices.to_device(_avg_divisors(p, x.dtype), devices.of(x))
    return total


def pool2d_backward(dy, x_shape, kernel_size, *, stride=None, padding=0, dilation=1, mode="max",
                    ceil_mode=False, count_include_pad=True, indices=None):
    """As minifw.ops.pool2d_backward: dx of shape x_shape (max pooling needs the indices)."""
    dy, p, indices = check_pool_backward_args(dy, x_shape, kernel_size, stride, padding, mode,
                                              ceil_mode, count_include_pad, indices, dilation=dilation)
    n, c, h, w = p.x_shape
    xp, dev = _xp(dy), devices.of(dy)
    if p.mode == "avg":
        share = dy / devices.to_device(_avg_divisors(p, dy.dtype), dev)
        dx = devices.zeros(p.x_shape, dy.dtype, dev)
        for y_at, x_at in _pool_taps(p):
            dx[x_at] += share[y_at]
        return dx
    (kh, kw), (sh, sw), (dh, dw) = p.kernel_size, p.stride, p.dilation
    overlap = sh < dh * (kh - 1) + 1 or sw < dw * (kw - 1) + 1  # else no input element receives twice
    if overlap and backends.are_deterministic_algorithms_enabled():
        _check_indices_in_planes(indices, p)
        dx = _max_pool_backward_by_taps(dy, indices, p)
        if dx is not None:
            return dx
    if xp is np:
        # Caffe's loop itself: each output adds its gradient where its maximum came from, in
        # output order, in the input's type (ufunc.at adds in index order, so the result is
        # the same at every run; the deterministic mode's taps above give the same bits on
        # every device instead). dx is zeroed by a pass of its own, as caffe_set does: with
        # np.zeros the kernel's page zeroing would land inside the scattered adds, slower.
        dx = np.empty(n * c * h * w, dy.dtype)
        dx.fill(0)
        _scatter_by_planes(dx, indices, dy, p, overlap)
        return _on_device_of(dy, dx.reshape(p.x_shape))
    # MaxPoolBackward's scatter, bottom_diff[mask[i]] += top_diff[i], over every plane at once
    _check_indices_in_planes(indices, p)
    at = indices + xp.arange(n * c, dtype=np.int64).reshape(n, c, 1, 1) * (h * w)
    if not overlap:
        dx = devices.zeros(n * c * h * w, dy.dtype, dev)
        dx[at.ravel()] = dy.ravel()
        return dx.reshape(p.x_shape)
    if backends.are_deterministic_algorithms_enabled():  # (an index outside its window: no tap names it)
        # the scatter in index order, as on the CPU (devices.ufunc_at does it in host memory in the mode)
        dx = devices.zeros(n * c * h * w, dy.dtype, dev)
        devices.ufunc_at(np.add, dx, at.ravel(), dy.ravel())
        return dx.reshape(p.x_shape)
    # CuPy's bincount adds the weights with atomicAdd: on a GPU the order, and so the bits,
    # may change from run to run
    dx = xp.bincount(at.ravel(), weights=dy.ravel(), minlength=n * c * h * w)
    return _on_device_of(dy, dx.astype(dy.dtype, copy=False).reshape(p.x_shape))


# Elements of dy per chunk of _scatter_by_planes: the chunk's indices, offset indices and
# gradients (640 KiB in float32) stay in a 1 MiB L2 cache between the chunk's passes.
SCATTER_CHUNK_ELEMENTS = 1 << 15


def _scatter_by_planes(dx, indices, dy, p, add):
    """dx[plane's start + indices] += dy (add) or = dy (no input receives twice) over every
    (image, channel) plane, on host arrays. A chunk of planes at a time: the chunk's indices
    are checked to lie in their plane, offset by the planes' starts (in a buffer kept
    between calls) and scattered while they are in the cache; three passes over the whole
    index array would read it from memory three times."""
    planes, plane = p.x_shape[0] * p.x_shape[1], p.x_shape[2] * p.x_shape[3]
    rows = np.asarray(indices).reshape(planes, -1)
    grads = np.asarray(dy).reshape(planes, -1)
    per = max(1, SCATTER_CHUNK_ELEMENTS // max(1, rows.shape[1]))
    flat = _buffer("pool_indices", (min(per, planes), rows.shape[1]), np.int64)
    for r0 in range(0, planes, per):
        r1 = min(planes, r0 + per)
        chunk, at = rows[r0:r1], flat[:r1 - r0]
        # seen as unsigned, a negative index is past every plane
        if chunk.size and int(chunk.view(np.uint64).max()) >= plane:
            _check_indices_in_planes(indices, p)  # raises, naming the first index outside
        np.add(chunk, (np.arange(r0, r1, dtype=np.int64) * plane)[:, None], out=at)
        if add:
            np.add.at(dx, at.ravel(), grads[r0:r1].ravel())
        else:
            dx[at.ravel()] = grads[r0:r1].ravel()


def _max_pool_backward_by_taps(dy, indices, p):
    """Max pooling's dx without a scatter, for the deterministic mode: per kernel tap, in the
    windows' row-major order, dy is added where the window's index names that tap (a tap
    reads each input at most once, so each add is a plain strided one). Every input gets its
    contributions in tap order on every device. None if an index lies outside its window
    (no tap names it)."""
    xp, dev = _xp(dy), devices.of(dy)
    w = p.x_shape[3]
    dx = devices.zeros(p.x_shape, dy.dtype, dev)
    named = devices.zeros(p.out_shape, np.bool_, dev)
    for y_at, x_at in _pool_taps(p):
        rows, cols = x_at[1], x_at[2]
        flat = np.add.outer(np.arange(rows.start, rows.stop, rows.step) * w,
                            np.arange(cols.start, cols.stop, cols.step))
        hit = indices[y_at] == devices.to_device(flat.astype(np.int64), dev)
        dx[x_at] += xp.where(hit, dy[y_at], dy.dtype.type(0))
        named[y_at] |= hit
    return dx if bool(named.all()) else None


def _check_indices_in_planes(indices, p):
    """The scatter must stay inside each input plane (the native kernel checks the same)."""
    fn = "pool2d_backward"
    plane = p.x_shape[2] * p.x_shape[3]
    # one pass: seen as unsigned, a negative index is past every plane
    if indices.size == 0 or int(indices.view(np.uint64).max()) < plane:
        return
    outside = (indices < 0) | (indices >= plane)
    at = int(_xp(outside).flatnonzero(outside)[0])
    raise ValueError(f"{fn}: indices: value {int(indices.reshape(-1)[at])} at flat position {at} is "
                     f"outside the input plane [0, {plane})")


# ---- activations (relu_layer, sigmoid_layer, tanh_layer, elu_layer) -----------------

_ZERO_ROW = 16384


def _relu(x, out):
    """max(x, 0) into `out` (x itself for the in-place form), NaN passing through. NumPy's
    maximum against a scalar 0 ran at half the speed of its maximum against an array of
    zeros on a Zen 4 (AlexNet's relu1, 4.6 M values: 1.74 against 0.85 ms; Caffe's loop
    0.71 ms), so x is seen as rows of 16384 values and a kept row of zeros is broadcast."""
    xp = _xp(x)
    n = x.size // _ZERO_ROW * _ZERO_ROW
    if xp is not np or n == 0 or not (x.flags.c_contiguous and out.flags.c_contiguous):
        return xp.maximum(x, 0, out=out)
    zeros = _buffers.get("zeros", _ZERO_ROW, x.dtype, devices.CPU, fill=0)[:_ZERO_ROW]
    src, dst = x.reshape(-1), out.reshape(-1)
    np.maximum(src[:n].reshape(-1, _ZERO_ROW), zeros, out=dst[:n].reshape(-1, _ZERO_ROW))
    np.maximum(src[n:], 0, out=dst[n:])
    return out


def _activate(x, mode, slope, alpha):
    # Caffe's branch-free forms, max(x, 0) + f(min(x, 0)); NaN passes through
    xp = _xp(x)
    if mode == "relu":
        return _relu(x, devices.empty(x.shape, x.dtype, devices.of(x)))
    if mode == "leaky_relu":
        return xp.maximum(x, 0) + slope * xp.minimum(x, 0)
    if mode == "relu6":
        return xp.minimum(xp.maximum(x, 0), 6)
    if mode == "sigmoid":
        with np.errstate(over="ignore"):  # exp(-x) = inf gives the limit, 0
            return 1 / (1 + xp.exp(-x))
    if mode == "tanh":
        return xp.tanh(x)
    return xp.maximum(x, 0) + alpha * xp.expm1(xp.minimum(x, 0))  # elu


def activation_forward(x, mode, *, negative_slope=0.01, alpha=1.0, inplace=False):
    """As minifw.ops.activation_forward; with inplace=True the result is written into x
    (C-contiguous and writable) and x is returned."""
    x, slope, alpha, inplace = check_activation_forward_args(x, mode, negative_slope, alpha, inplace)
    if inplace and mode == "relu":
        # ReLULayer's in-place form: the bottom blob is overwritten as it is read
        return _relu(x, x)
    y = _on_device_of(x, _activate(x, mode, slope, alpha))
    if inplace:
        x[...] = y
        return x
    return y


def activation_backward(dy, y, mode, *, x=None, negative_slope=0.01, alpha=1.0):
    """dx = dy * f'(x), from the forward output y; the branch is taken on x when given
    (required for leaky_relu with negative_slope < 0 and elu with alpha < 0)."""
    dy, y, x, slope, alpha = check_activation_backward_args(dy, y, mode, x, negative_slope, alpha)
    positive = (y if x is None else x) > 0
    return _on_device_of(y, _activation_gradient(dy, y, positive, mode, slope, alpha))


def _activation_gradient(dy, y, positive, mode, slope, alpha):
    # Caffe's form, dy times the derivative of each branch times its 0/1 mask (a NaN
    # input takes the negative branch, as in the primitives; an inf or NaN in dy
    # becomes NaN where its mask is 0, where the primitives give 0)
    if mode == "relu":
        return dy * positive
    if mode == "leaky_relu":
        return dy * positive + dy * slope * ~positive
    if mode == "relu6":
        return dy * ((y > 0) & (y < 6))
    if mode == "sigmoid":
        return dy * y * (1 - y)
    if mode == "tanh":
        return dy * (1 - y * y)
    # elu: alpha * exp(x) = y + alpha, where y is at most max(0, -alpha); the bound keeps
    # an infinite y of the positive branch out of the product
    return dy * positive + dy * (_xp(y).minimum(y, max(0.0, -alpha)) + alpha) * ~positive


# ---- softmax and cross-entropy (softmax_layer, softmax_loss_layer) ------------------
#
# The class axis is axis 1: the columns of (N, classes), the channels of (N, C, H, W).

def _softmax(x, log):
    # shifted by the maximum, exp never overflows; like the primitives, no warning where
    # x - max itself overflows to -inf (whose exp is the right 0) or meets inf (nan)
    xp = _xp(x)
    with np.errstate(over="ignore", invalid="ignore"):
        shifted = x - x.max(axis=1, keepdims=True)
        if log:
            return shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
        e = xp.exp(shifted, out=shifted)
        e /= e.sum(axis=1, keepdims=True)
        return e


def softmax_forward(x, *, log=False):
    """softmax(x) (or log_softmax(x) with log=True) over axis 1."""
    fn = "softmax_forward"
    x = check_float_array(fn, "x", x, ndim=(2, 4), ndim_desc=_CLASSES_NDIM_DESC)
    log = check_bool(fn, "log", log)
    _check_classes(fn, "x", x)
    return _softmax(x, log)


def softmax_backward(dy, y, *, log=False):
    """dx from dy and the forward output y (softmax, or log-softmax with log=True)."""
    fn = "softmax_backward"
    y = check_float_array(fn, "y", y, ndim=(2, 4), ndim_desc=_CLASSES_NDIM_DESC)
    dy = check_like(fn, "dy", dy, y, "y")
    log = check_bool(fn, "log", log)
    _check_classes(fn, "y", y)
    if log:
        return dy - _xp(y).exp(y) * dy.sum(axis=1, keepdims=True)
    return (dy - (dy * y).sum(axis=1, keepdims=True)) * y


def _at_target(a, target, kept):
    """a[:, target] at every position, as an (N, 1, ...) view-shaped array (class 0 where ignored)."""
    xp = _xp(a)
    return xp.take_along_axis(a, xp.expand_dims(xp.where(kept, target, 0), 1), axis=1)


def cross_entropy_forward(logits, target, *, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """(loss, log_probs), as minifw.ops.cross_entropy_forward (PyTorch's F.cross_entropy)."""
    fn = "cross_entropy_forward"
    logits = check_float_array(fn, "logits", logits, ndim=(2, 4), ndim_desc=_CLASSES_NDIM_DESC)
    target, ignore_index, eps = _check_cross_entropy_args(fn, "logits", logits, target, ignore_index,
                                                          label_smoothing, reduction)
    xp = _xp(logits)
    log_probs = _softmax(logits, log=True)
    kept = target != ignore_index
    # per position: (1 - eps) * -log p_target + eps / C * -sum_c log p_c
    keep, spread = 1 - eps, eps / logits.shape[1]
    losses = keep * -_at_target(log_probs, target, kept)[:, 0] + spread * -log_probs.sum(axis=1)
    losses = xp.where(kept, losses, 0)
    if reduction == "none":
        return _on_device_of(logits, losses), log_probs
    total = losses.sum(dtype=np.float64)
    if reduction == "sum":
        return _on_device_of(logits, xp.asarray(total, dtype=logits.dtype)), log_probs
    with np.errstate(invalid="ignore", divide="ignore"):
        # 0 / 0 = nan, as PyTorch; the count is read back to the host, as Caffe's loss layer does
        mean = total / np.float64(int(xp.count_nonzero(kept)))
    return _on_device_of(logits, xp.asarray(mean, dtype=logits.dtype)), log_probs


def cross_entropy_backward(grad_loss, log_probs, target, *, ignore_index=-100, label_smoothing=0.0,
                           reduction="mean"):
    """dlogits from the gradient of the loss (a scalar for "mean"/"sum", an array of
    target's shape for "none") and the forward's log_probs."""
    log_probs, target, ignore_index, eps, grad = check_cross_entropy_backward_args(
        grad_loss, log_probs, target, ignore_index, label_smoothing, reduction)
    xp = _xp(log_probs)
    kept = target != ignore_index
    if reduction != "none":
        if reduction == "mean":
            count = int(xp.count_nonzero(kept))
            grad = grad / count if count else 0.0  # with count 0 every position is ignored
        grad = log_probs.dtype.type(grad)
    grad = xp.expand_dims(xp.where(kept, grad, 0), 1)
    # d/dz of (1 - eps) * -log p_t + eps / C * -sum_c log p_c = p - (1 - eps) * onehot(t) - eps / C
    keep, spread = 1 - eps, eps / log_probs.shape[1]
    dlogits = grad * (xp.exp(log_probs) - spread)
    target_class = xp.expand_dims(xp.where(kept, target, 0), 1)
    if xp is np:
        np.put_along_axis(dlogits, target_class,
                          np.take_along_axis(dlogits, target_class, axis=1) - grad * keep, axis=1)
    else:  # CuPy has no put_along_axis: the same subtraction where the class is the target
        classes = xp.arange(log_probs.shape[1]).reshape((1, -1) + (1,) * (log_probs.ndim - 2))
        dlogits -= xp.where(classes == target_class, grad * keep, 0)
    if not kept.all():  # exactly 0, even where log_probs holds inf or nan
        xp.copyto(dlogits, 0, where=~xp.expand_dims(kept, 1))
    return dlogits


# ---- local response normalization across channels (lrn_layer) -----------------------
#
#   scale[:, c] = k + alpha / size * sum of x[:, j]**2 over j = c - size//2 .. c + (size-1)//2 in [0, C)
#   y = x * scale**-beta
#
# (PyTorch's LocalResponseNorm window, which is Caffe's for odd sizes.)

def _lrn_params(fn, x, size, alpha, beta, k):
    if x.shape[1] < 1:
        raise ValueError(f"{fn}: x must have at least one channel, got shape {tuple(x.shape)}")
    return check_lrn_params(fn, size, alpha, beta, k, x.dtype)


def _channel_window_sums(a, before, after):
    """sums[:, c] = sum of a[:, j] over j = c - before .. c + after inside [0, C): Caffe's
    running sum, slid along the channels by one add and one subtract per channel whatever
    the window size. It is kept in double, so that a large value leaving the window leaves
    no float32 rounding error behind."""
    channels = a.shape[1]
    sums = _xp(a).empty_like(a)
    running = a[:, :min(after + 1, channels)].sum(axis=1, dtype=np.float64)
    sums[:, 0] = running
    for c in range(1, channels):
        if c + after < channels:
            running += a[:, c + after]
        if c - before - 1 >= 0:
            running -= a[:, c - before - 1]
        sums[:, c] = running
    return sums


def lrn_forward(x, size, *, alpha=1e-4, beta=0.75, k=1.0):
    """(y, scale), both of x's shape (CrossChannelForward_cpu)."""
    fn = "lrn_forward"
    x = check_float_array(fn, "x", x, ndim=4, ndim_desc="4-D (N, C, H, W)")
    size, alpha, beta, k = _lrn_params(fn, x, size, alpha, beta, k)
    scale = _channel_window_sums(x * x, size // 2, (size - 1) // 2)
    scale *= alpha / size
    scale += k
    # powx then mul, as Caffe's; each pass writes the array it reads where it can (a new
    # array per pass would be one more allocation, and one more pass, per call)
    y = _xp(x).power(scale, -beta)
    y *= x
    return y, scale


def lrn_backward(dy, x, y, scale, size, *, alpha=1e-4, beta=0.75, k=1.0):
    """dx from dy and the forward's x, y and scale (CrossChannelBackward_cpu):
    dy * scale**-beta - 2 alpha beta / size * x * (sum of dy * y / scale over the channels
    whose window holds c, j = c - (size-1)//2 .. c + size//2)."""
    fn = "lrn_backward"
    x = check_float_array(fn, "x", x, ndim=4, ndim_desc="4-D (N, C, H, W)")
    dy = check_like(fn, "dy", dy, x, "x")
    y = check_like(fn, "y", y, x, "x")
    scale = check_like(fn, "scale", scale, x, "x")
    size, alpha, beta, k = _lrn_params(fn, x, size, alpha, beta, k)
    ratio = dy * y
    ratio /= scale
    ratio_sums = _channel_window_sums(ratio, (size - 1) // 2, size // 2)
    dx = _xp(x).power(scale, -beta)
    dx *= dy
    ratio_sums *= x
    ratio_sums *= 2 * alpha * beta / size
    dx -= ratio_sums
    return dx


# ---- batch normalization (batch_norm_layer + scale_layer) ---------------------------
#
# Per channel of an (N, C) or (N, C, H, W) input, viewed as (N, C, inner). The channel
# statistics are summed in double, as minifw.ops sums them.

def _as_rows(x):
    """(N, C, inner) view of x (inner given: reshape's -1 is ambiguous for N = 0)."""
    n, c = x.shape[:2]
    return x.reshape(n, c, x.shape[2] * x.shape[3] if x.ndim == 4 else 1)


def _channel_sums(a):
    return a.sum(axis=2, dtype=np.float64).sum(axis=0)


def _per_channel(v, dtype):
    """A channel vector cast to dtype, shaped to broadcast over (N, C, inner)."""
    return _xp(v).asarray(v, dtype=dtype)[:, None]


def batch_norm_forward_training(x, weight, bias, running_mean, running_var, *, momentum=0.1, eps=1e-5):
    """(y, save_mean, save_invstd), as minifw.ops; updates running_mean / running_var in
    place when given (with the unbiased variance)."""
    x, weight, bias, running_mean, running_var, momentum, eps = check_batch_norm_training_args(
        x, weight, bias, running_mean, running_var, momentum, eps)
    rows = _as_rows(x)
    m = rows.shape[0] * rows.shape[2]
    mean = _channel_sums(rows) / m
    centered = rows - _per_channel(mean, x.dtype)
    var = _channel_sums(centered * centered) / m  # two passes, as Caffe: no cancellation
    invstd = 1 / _xp(x).sqrt(var + eps)
    gain = invstd if weight is None else invstd * weight
    y = centered * _per_channel(gain, x.dtype)
    if bias is not None:
        y += _per_channel(bias, x.dtype)
    if running_mean is not None:
        running_mean[...] = (1 - momentum) * running_mean + momentum * mean
        running_var[...] = (1 - momentum) * running_var + momentum * var * (m / (m - 1))
    return y.reshape(x.shape), mean.astype(x.dtype), invstd.astype(x.dtype)


def batch_norm_forward_inference(x, weight, bias, running_mean, running_var, *, eps=1e-5):
    """y = (x - running_mean) / sqrt(running_var + eps) * weight + bias."""
    x, weight, bias, running_mean, running_var, eps = check_batch_norm_inference_args(
        x, weight, bias, running_mean, running_var, eps)
    gain = 1 / _xp(x).sqrt(running_var.astype(np.float64) + eps)
    if weight is not None:
        gain = gain * weight
    y = (_as_rows(x) - _per_channel(running_mean, x.dtype)) * _per_channel(gain, x.dtype)
    if bias is not None:
        y += _per_channel(bias, x.dtype)
    return y.reshape(x.shape)


def batch_norm_backward(dy, x, weight, save_mean, save_invstd):
    """(dx, dweight, dbias) of the training-mode forward, as minifw.ops (dweight and
    dbias even when weight is None)."""
    dy, x, weight, save_mean, save_invstd = check_batch_norm_backward_args(dy, x, weight, save_mean,
                                                                           save_invstd)
    rows, dy_rows = _as_rows(x), _as_rows(dy)
    m = max(1, rows.shape[0] * rows.shape[2])  # N = 0: no values, sums 0 (as the primitives)
    xhat = (rows - _per_channel(save_mean, x.dtype)) * _per_channel(save_invstd, x.dtype)
    dbias = _channel_sums(dy_rows)
    dweight = _channel_sums(dy_rows * xhat)
    # the folded chain rule through mean and variance: w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat))
    gain = save_invstd.astype(np.float64) if weight is None else save_invstd * weight.astype(np.float64)
    dx = dy_rows - _per_channel(dbias / m, x.dtype)
    dx -= xhat * _per_channel(dweight / m, x.dtype)
    dx *= _per_channel(gain, x.dtype)
    return dx.reshape(x.shape), dweight.astype(x.dtype), dbias.astype(x.dtype)


# ---- dropout (dropout_layer) ----------------------------------------------------------
#
# y = x * mask / (1 - p) with a Bernoulli(1 - p) uint8 mask, as Caffe draws it with its
# RNG; here the Generator of the device's array library seeded with `seed` (NumPy's on
# "cpu" and "cudasim", CuPy's on "cuda"). The mask is a function of the seed, the shape
# and the library, but not the primitives' mask (their Philox stream): the engines agree
# in distribution, not element by element.

def _keep_scale(p):
    return 1.0 / (1.0 - p) if p < 1 else 0.0


def dropout_forward(x, p, *, seed):
    """(y, mask); seed is an int in [0, 2**64)."""
    fn = "dropout_forward"
    x = check_float_array(fn, "x", x)
    p = _check_dropout_p(fn, p)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{fn}: seed must be an int, got {type(seed).__name__} {seed!r}")
    seed = int(seed)
    if not 0 <= seed < 2 ** 64:
        raise ValueError(f"{fn}: seed must be in [0, 2**64), got {seed}")
    xp = _xp(x)
    if p >= 1:  # nothing kept: y = 0 even where x is inf, and no random numbers
        return xp.zeros_like(x), devices.zeros(x.shape, np.uint8, devices.of(x))
    uniform = xp.random.default_rng(seed).random(x.shape, dtype=np.float32)
    mask = _on_device_of(x, (uniform >= p).view(np.uint8))
    return _on_device_of(x, x * mask * _keep_scale(p)), mask


def dropout_backward(dy, mask, p):
    """dx = dy * mask / (1 - p) (0 where mask is 0, and everywhere when p == 1)."""
    fn = "dropout_backward"
    dy = check_float_array(fn, "dy", dy)
    p = _check_dropout_p(fn, p)
    check_array(fn, "mask", mask)
    if mask.dtype not in (np.uint8, np.bool_):
        raise TypeError(f"{fn}: mask must have dtype uint8 (from dropout_forward), got {mask.dtype}")
    if mask.shape != dy.shape:
        raise ValueError(f"{fn}: mask must have the shape of dy {tuple(dy.shape)}, got {tuple(mask.shape)}")
    check_same_device(fn, dy=dy, mask=mask)
    return _on_device_of(dy, dy * mask * _keep_scale(p))


# ---- the SGD update (sgd_solver) -------------------------------------------------------
def sgd_step(p, grad, momentum_buffer, *, lr, momentum, dampening, weight_decay, nesterov, maximize,
             first_step):
    """As minifw.ops.sgd_step (PyTorch's formulas), the way Caffe's SGDSolver updates: one
    pass over the parameter per operation (regularize, momentum, update: its axpy, axpby
    and copy calls), with a scratch array kept between calls. grad is not modified."""
    p, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize, first_step = \
        check_sgd_step_args(p, grad, momentum_buffer, lr, momentum, dampening, weight_decay,
                            nesterov, maximize, first_step)
    xp, dev = _xp(p), devices.of(p)
    s = _buffer("sgd", p.shape, p.dtype, dev)  # g' and later lr * d
    if weight_decay != 0:
        g = xp.multiply(p, weight_decay, out=s)
        if maximize:
            g -= grad
        else:
            g += grad
    elif maximize:
        g = xp.negative(grad, out=s)
    else:
        g = grad  # only read
    d = g
    if momentum != 0:
        if first_step:
            xp.copyto(buf, g)
        else:
            buf *= momentum
            if dampening != 0:
                g = xp.multiply(g, 1 - dampening, out=s)  # (Nesterov needs dampening 0)
            buf += g
        if nesterov:
            d = xp.multiply(buf, momentum, out=_buffer("sgd_nesterov", p.shape, p.dtype, dev))
            d += g
        else:
            d = buf
    p -= xp.multiply(d, lr, out=s)


# ---- recurrent layers ---------------------------------------------------------------------------
#
# As Caffe's RecurrentLayer / LSTMLayer unroll a net over time: the input projection of a layer is
# one GEMM over all steps, then a Python loop over the steps does one GEMM with the recurrent weights
# and the gates as array code. The reserve has the primitives' size with this engine's own layout:
#
#   per layer:      states (T, N, D*H), each direction's state after step t, carried unchanged
#                   past a sequence's end (y is these states masked by the lengths)
#   per direction:  gates (T, N, G*H) activated; dgates_input (T, N, G*H), written by the backward;
#                   GRU: dgates_hidden (T, N, G*H) and W_hn h + b_hn (T, N, H); LSTM: cells (T, N, H)
#
# Inference allocates no reserve: each step's gates and cell state are temporaries, and a layer's
# states live until the next layer has projected them.

def _rnn_lengths(fn, lengths, t, n, dev):
    """lengths as (T, N, 1) masks on `dev` of the steps each entry runs, or None for all of
    them. The lengths are checked as minifw.ops checks them (N values, each in [1, T]) and
    the masks made on the host, then moved."""
    if lengths is None:
        return None
    from ..ops import rnn as rnn_ops
    lengths = rnn_ops._check_lengths(fn, getattr(lengths, "_data", lengths), t, n, devices.CPU)
    return devices.to_device((np.arange(t)[:, None] < lengths[None, :])[:, :, None], dev)


def _rnn_reserve_views(desc, reserve, t, n):
    """[(states, [per direction: {name: array}])] per layer, views into the reserve."""
    h, gh, d = desc.hidden_size, desc.gates * desc.hidden_size, desc.num_directions
    parts, off = [], 0

    def take(*shape):
        nonlocal off
        size = int(np.prod(shape))
        off += size
        return reserve[off - size:off].reshape(shape)

    for _ in range(desc.num_layers):
        states = take(t, n, d * h)
        directions = []
        for _ in range(d):
            r = {"gates": take(t, n, gh), "dgates_input": take(t, n, gh)}
            if desc.mode == "gru":
                r.update(dgates_hidden=take(t, n, gh), hidden_n=take(t, n, h))
            if desc.mode == "lstm":
                r["cells"] = take(t, n, h)
            directions.append(r)
        parts.append((states, directions))
    return parts


def _rnn_weights(desc, weights, layer, direction):
    views = desc.views(weights)
    sfx = f"_l{layer}" + ("_reverse" if direction else "")
    return [views.get(f"{name}{sfx}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]


def _sigmoid(a):
    return 0.5 * (_xp(a).tanh(0.5 * a) + 1)  # no overflow warning for large |a|


def _rnn_steps(t, direction):
    return range(t - 1, -1, -1) if direction else range(t)


def _rnn_previous(states, first, t, direction):
    """The state a direction starts step t from: its state after the previous step, or `first`."""
    before = t + 1 if direction else t - 1
    return first if before < 0 or before >= states.shape[0] else states[before]


def _rnn_layer_input(x, parts, layer, masks):
    if layer == 0:
        return x
    return _rnn_output(parts[layer - 1][0], masks)


def _rnn_output(states, masks):
    """A layer's output from its states: zero past each entry's end."""
    return states if masks is None else states * masks


def rnn_forward(desc, x, h0, c0, weights, training=True, *, lengths=None, reserve=None):
    """As minifw.ops.rnn_forward, a loop over the steps with one GEMM each. Training
    writes every step's gates and states into the reserve (the caller's `reserve`,
    zeroed first, when given); inference keeps none."""
    from ..ops import rnn as rnn_ops
    fn = "rnn_forward"
    rnn_ops._check_desc(fn, desc)
    x = rnn_ops._check_x(fn, desc, x)
    t, n = x.shape[:2]
    dev, xp = devices.of(x), _xp(x)
    h0 = rnn_ops._check_state(fn, "h0", h0, desc, n, optional=True, dev=dev)
    c0 = rnn_ops._cell(fn, "c0", c0, desc, n, optional=True, dev=dev)
    weights = rnn_ops._check_weights(fn, "weights", weights, desc)
    check_same_device(fn, x=x, h0=h0, c0=c0, weights=weights)
    training = check_bool(fn, "training", training)
    masks = _rnn_lengths(fn, lengths, t, n, dev)
    mode, hs, d = desc.mode, desc.hidden_size, desc.num_directions
    lstm = mode == "lstm"
    if reserve is None:
        reserve = devices.zeros(desc.reserve_size(t, n), desc.dtype, dev) if training else None
    else:
        reserve = rnn_ops._reserve_out(fn, desc, reserve, training, t, n, dev,
                                       dict(x=x, h0=h0, c0=c0, weights=weights))
        check_same_device(fn, x=x, reserve=reserve)
        reserve[...] = 0
    parts = _rnn_reserve_views(desc, reserve, t, n) if training else None
    h_n, c_n = xp.empty_like(h0), xp.empty_like(c0)
    inp = x
    for layer in range(desc.num_layers):
        if training:
            states, directions = parts[layer]
        else:
            states, directions = devices.empty((t, n, d * hs), desc.dtype, dev), [None] * d
        for direction, r in enumerate(directions):
            k = layer * d + direction
            w_ih, w_hh, b_ih, b_hh = _rnn_weights(desc, weights, layer, direction)
            projected = xp.matmul(inp, w_ih.T)  # (T, N, G*H): every step's input at once
            if b_ih is not None:
                projected += b_ih
            h, c = h0[k], (c0[k] if lstm else None)
            for step in _rnn_steps(t, direction):
                gi, gh = projected[step], xp.matmul(h, w_hh.T)
                if b_hh is not None:
                    gh += b_hh
                gates = xp.empty_like(gi) if r is None else r["gates"][step]
                if lstm:
                    a = gi + gh
                    gates[:, :2 * hs] = _sigmoid(a[:, :2 * hs])
                    gates[:, 2 * hs:3 * hs] = xp.tanh(a[:, 2 * hs:3 * hs])
                    gates[:, 3 * hs:] = _sigmoid(a[:, 3 * hs:])
                    i, f, g, o = xp.split(gates, 4, axis=1)
                    c_new = f * c + i * g
                    h_new = o * xp.tanh(c_new)
                elif mode == "gru":
                    gates[:, :2 * hs] = _sigmoid(gi[:, :2 * hs] + gh[:, :2 * hs])
                    if r is not None:
                        r["hidden_n"][step] = gh[:, 2 * hs:]
                    gates[:, 2 * hs:] = xp.tanh(gi[:, 2 * hs:] + gates[:, :hs] * gh[:, 2 * hs:])
                    _, z, n_gate = xp.split(gates, 3, axis=1)
                    h_new = (1 - z) * n_gate + z * h
                else:
                    a = gi + gh
                    gates[...] = xp.tanh(a) if mode == "rnn_tanh" else xp.maximum(a, 0)
                    h_new = gates
                if masks is not None:  # entries past their end keep their state
                    h_new = xp.where(masks[step], h_new, h)
                    if lstm:
                        c_new = xp.where(masks[step], c_new, c)
                h = states[step, :, direction * hs:(direction + 1) * hs] = h_new
                if lstm:
                    c = c_new
                    if r is not None:
                        r["cells"][step] = c_new
            h_n[k] = h
            if lstm:
                c_n[k] = c
            projected = gi = None  # (gi views it) freed before the next direction's is made
        inp = _rnn_output(states, masks)  # the previous layer's states go once this is made
    y = inp.copy() if training and inp is states else inp  # not a view of the reserve
    return y, h_n, (c_n if lstm else None), reserve


def rnn_backward_data(desc, x, weights, reserve, h0, c0, dy, dh_n, dc_n, *, lengths=None):
    """As minifw.ops.rnn_backward_data: back through the steps, one GEMM each for
    dh and one per layer for dx; stores the gate gradients in the reserve."""
    from ..ops import rnn as rnn_ops
    fn = "rnn_backward_data"
    rnn_ops._check_desc(fn, desc)
    x = rnn_ops._check_x(fn, desc, x)
    t, n = x.shape[:2]
    dev, xp = devices.of(x), _xp(x)
    weights = rnn_ops._check_weights(fn, "weights", weights, desc)
    reserve = rnn_ops._check_reserve(fn, desc, reserve, t, n)
    h0 = rnn_ops._check_state(fn, "h0", h0, desc, n, optional=True, dev=dev)
    c0 = rnn_ops._cell(fn, "c0", c0, desc, n, optional=True, dev=dev)
    dy = check_float_array(fn, "dy", dy, ndim=3, dtype=desc.dtype)
    y_shape = (t, n, desc.num_directions * desc.hidden_size)
    if dy.shape != y_shape:
        raise ValueError(f"{fn}: dy must have y's shape {y_shape}, got {tuple(dy.shape)}")
    dh_n = rnn_ops._check_state(fn, "dh_n", dh_n, desc, n, optional=True, dev=dev)
    dc_n = rnn_ops._cell(fn, "dc_n", dc_n, desc, n, optional=True, dev=dev)
    check_same_device(fn, x=x, weights=weights, reserve=reserve, h0=h0, c0=c0, dy=dy, dh_n=dh_n, dc_n=dc_n)
    masks = _rnn_lengths(fn, lengths, t, n, dev)
    mode, hs, d = desc.mode, desc.hidden_size, desc.num_directions
    lstm = mode == "lstm"
    parts = _rnn_reserve_views(desc, reserve, t, n)
    dh0, dc0 = xp.empty_like(h0), xp.empty_like(c0)
    d_out = dy if masks is None else dy * masks  # y = states * masks
    for layer in reversed(range(desc.num_layers)):
        states, directions = parts[layer]
        inp = _rnn_layer_input(x, parts, layer, masks)
        d_inp = devices.zeros(inp.shape, desc.dtype, dev)
        for direction, r in enumerate(directions):
            k = layer * d + direction
            w_ih, w_hh, _, _ = _rnn_weights(desc, weights, layer, direction)
            mine = states[:, :, direction * hs:(direction + 1) * hs]
            dh, dc = dh_n[k].copy(), (dc_n[k].copy() if lstm else None)
            dgi_all = r["dgates_input"]
            dgh_all = r["dgates_hidden"] if mode == "gru" else dgi_all
            for step in reversed(_rnn_steps(t, direction)):
                dh = dh + d_out[step, :, direction * hs:(direction + 1) * hs]
                h_prev = _rnn_previous(mine, h0[k], step, direction)
                if masks is not None:  # only the entries that ran this step pass through the cell
                    carried, dh = dh * ~masks[step], dh * masks[step]
                    if lstm:
                        carried_c, dc = dc * ~masks[step], dc * masks[step]
                gates = r["gates"][step]
                if lstm:
                    i, f, g, o = xp.split(gates, 4, axis=1)
                    c_prev = _rnn_previous(r["cells"], c0[k], step, direction)
                    tanh_c = xp.tanh(r["cells"][step])
                    dc = dc + dh * o * (1 - tanh_c * tanh_c)
                    dgi_all[step] = xp.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                                                    dc * i * (1 - g * g), dh * tanh_c * o * (1 - o)], axis=1)
                    dc = dc * f
                    dh = xp.zeros_like(dh)
                elif mode == "gru":
                    reset, z, n_gate = xp.split(gates, 3, axis=1)
                    dn = dh * (1 - z) * (1 - n_gate * n_gate)
                    dr = dn * r["hidden_n"][step] * reset * (1 - reset)
                    dz = dh * (h_prev - n_gate) * z * (1 - z)
                    dgi_all[step] = xp.concatenate([dr, dz, dn], axis=1)
                    dgh_all[step] = xp.concatenate([dr, dz, dn * reset], axis=1)
                    dh = dh * z
                else:
                    dgi_all[step] = dh * ((1 - gates * gates) if mode == "rnn_tanh" else (gates > 0))
                    dh = xp.zeros_like(dh)
                dh = dh + xp.matmul(dgh_all[step], w_hh)
                if masks is not None:
                    dh = dh + carried
                    if lstm:
                        dc = dc + carried_c
            d_inp += xp.matmul(dgi_all, w_ih)
            dh0[k] = dh
            if lstm:
                dc0[k] = dc
        d_out = d_inp if masks is None or layer == 0 else d_inp * masks
    return d_out, dh0, (dc0 if lstm else None)


def rnn_backward_weights(desc, x, reserve, h0, dweights, *, lengths=None):
    """As minifw.ops.rnn_backward_weights: dweights += the weight gradients, one GEMM
    over all steps per weight matrix, from the gate gradients rnn_backward_data stored."""
    from ..ops import rnn as rnn_ops
    fn = "rnn_backward_weights"
    rnn_ops._check_desc(fn, desc)
    x = rnn_ops._check_x(fn, desc, x)
    t, n = x.shape[:2]
    dev, xp = devices.of(x), _xp(x)
    reserve = rnn_ops._check_reserve(fn, desc, reserve, t, n)
    h0 = rnn_ops._check_state(fn, "h0", h0, desc, n, optional=True, dev=dev)
    check_array(fn, "dweights", dweights)
    if not dweights.flags.c_contiguous or not devices.is_writeable(dweights):
        raise ValueError(f"{fn}: dweights is updated in place and must be writable and C-contiguous")
    rnn_ops._check_weights(fn, "dweights", dweights, desc)
    check_same_device(fn, x=x, reserve=reserve, h0=h0, dweights=dweights)
    masks = _rnn_lengths(fn, lengths, t, n, dev)
    hs, d = desc.hidden_size, desc.num_directions
    parts = _rnn_reserve_views(desc, reserve, t, n)
    for layer, (states, directions) in enumerate(parts):
        inp = _rnn_layer_input(x, parts, layer, masks).reshape(t * n, -1)
        for direction, r in enumerate(directions):
            k = layer * d + direction
            dw_ih, dw_hh, db_ih, db_hh = _rnn_weights(desc, dweights, layer, direction)
            mine = states[:, :, direction * hs:(direction + 1) * hs]
            # the state each step started from: the neighbouring step's, or h0 at the start (a
            # reverse direction's state stays h0 past an entry's end; entries past their end have
            # zero gate gradients, so what they read does not matter)
            before = (xp.concatenate([mine[1:], h0[k][None]]) if direction
                      else xp.concatenate([h0[k][None], mine[:-1]]))
            dgi = r["dgates_input"].reshape(t * n, -1)
            dgh = (r["dgates_hidden"] if desc.mode == "gru" else r["dgates_input"]).reshape(t * n, -1)
            dw_ih += xp.matmul(dgi.T, inp)
            dw_hh += xp.matmul(dgh.T, before.reshape(t * n, -1))
            if db_ih is not None:
                db_ih += dgi.sum(0)
                db_hh += dgh.sum(0)
    return dweights
