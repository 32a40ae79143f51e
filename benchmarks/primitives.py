"""The memory-bound primitives (pooling, activations, softmax, cross-entropy,
LRN, batch norm, dropout, bias) against a straightforward vectorized NumPy
implementation of the same operation (what a framework without primitives
does), on LeNet's tensors (batch 64) and Caffe's bvlc_alexnet's (batch 16),
forward and backward, float32.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/primitives.py

Times are medians of --repeats runs after a warm-up, the two engines timed in
alternating blocks. "GB/s" counts the bytes the operation must move at least
(each operand read or written once); "% copy" compares that with this
machine's memory-copy bandwidth (np.copyto between two large arrays, bytes
read + written), "% copy here" with np.copyto of the op's own input, which
may sit in cache. Both engines allocate their outputs.
"""
import argparse
import ctypes
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import header, table, time_engines, warn_openblas_env  # noqa: E402

import minifw  # noqa: E402
from minifw import ops  # noqa: E402

F32 = 4


# ---- the NumPy versions -------------------------------------------------------

def np_relu_forward(x):
    return np.maximum(x, 0)


def np_relu_backward(dy, y):
    return dy * (y > 0)


def _pool_taps(h, w, k, s, ceil_mode):
    """(Ho, Wo, padded height, padded width) as PyTorch (no padding)."""
    def out(n):
        o = (-(-(n - k) // s) if ceil_mode else (n - k) // s) + 1
        return o - 1 if ceil_mode and (o - 1) * s >= n else o
    ho, wo = out(h), out(w)
    return ho, wo, max(h, (ho - 1) * s + k), max(w, (wo - 1) * s + k)


def np_maxpool_forward(x, k, s, ceil_mode):
    """(y, flat indices h * W + w), scanning the k * k taps as strided slices."""
    n, c, h, w = x.shape
    ho, wo, hp, wp = _pool_taps(h, w, k, s, ceil_mode)
    xp = np.full((n, c, hp, wp), -np.inf, x.dtype)
    xp[:, :, :h, :w] = x
    y = np.full((n, c, ho, wo), -np.inf, x.dtype)
    tap = np.zeros((n, c, ho, wo), np.int64)
    for i in range(k):
        for j in range(k):
            v = xp[:, :, i:i + s * (ho - 1) + 1:s, j:j + s * (wo - 1) + 1:s]
            better = v > y
            y = np.where(better, v, y)
            tap = np.where(better, i * k + j, tap)
    rows = np.arange(ho)[:, None] * s + tap // k
    cols = np.arange(wo)[None, :] * s + tap % k
    return y, rows * w + cols


def np_maxpool_backward(dy, indices, x_shape):
    n, c, h, w = x_shape
    dx = np.zeros((n * c, h * w), dy.dtype)
    planes = np.arange(n * c)[:, None]
    np.add.at(dx, (planes, indices.reshape(n * c, -1)), dy.reshape(n * c, -1))
    return dx.reshape(x_shape)


def _channel_window_sum(a, before, after):
    """sum of a over channels c - before .. c + after (zero outside)."""
    c = a.shape[1]
    padded = np.zeros((a.shape[0], c + before + after) + a.shape[2:], a.dtype)
    padded[:, before:before + c] = a
    out = np.zeros_like(a)
    for j in range(before + after + 1):
        out += padded[:, j:j + c]
    return out


def np_lrn_forward(x, size, alpha, beta, k):
    scale = k + alpha / size * _channel_window_sum(x * x, size // 2, (size - 1) // 2)
    return x * scale ** -beta, scale


def np_lrn_backward(dy, x, y, scale, size, alpha, beta, k):
    r = _channel_window_sum(dy * y / scale, (size - 1) // 2, size // 2)
    return dy * scale ** -beta - 2 * alpha * beta / size * x * r


def np_softmax_forward(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_softmax_backward(dy, y):
    return y * (dy - (dy * y).sum(axis=1, keepdims=True))


def np_cross_entropy_forward(logits, target):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_probs[np.arange(len(target)), target].mean(), log_probs


def np_cross_entropy_backward(log_probs, target):
    d = np.exp(log_probs)
    d[np.arange(len(target)), target] -= 1
    return d / len(target)


def np_dropout_forward(x, p, rng):
    mask = rng.random(x.shape, dtype=np.float32) >= p
    return x * mask * np.float32(1 / (1 - p)), mask


def np_dropout_backward(dy, mask, p):
    return dy * mask * np.float32(1 / (1 - p))


def np_batch_norm_forward(x, weight, bias, eps=1e-5):
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    invstd = 1 / np.sqrt(x.var(axis=(0, 2, 3), keepdims=True) + eps)
    return (x - mean) * (invstd * weight[:, None, None]) + bias[:, None, None], mean, invstd


def np_batch_norm_backward(dy, x, weight, mean, invstd):
    xhat = (x - mean) * invstd
    dbias = dy.sum(axis=(0, 2, 3))
    dweight = (dy * xhat).sum(axis=(0, 2, 3))
    m = x.size // x.shape[1]
    g = (weight[:, None, None] * invstd) / m
    dx = g * (m * dy - dbias[:, None, None] - xhat * dweight[:, None, None])
    return dx, dweight, dbias


# ---- the table ----------------------------------------------------------------

def cases(rng):
    """(net, layer, shape, direction, ours, numpy, bytes moved) for every row."""
    rows = []

    def pool(net, layer, shape, k, s, ceil_mode):
        x = rng.standard_normal(shape, dtype=np.float32)
        kw = dict(stride=s, ceil_mode=ceil_mode)
        y, idx = ops.pool2d_forward(x, k, return_indices=True, **kw)
        dy = rng.standard_normal(y.shape, dtype=np.float32)
        nx, ny = x.size, y.size
        geometry = f"max {k}x{k}/{s}" + (" ceil" if ceil_mode else "")
        rows.append((net, f"{layer} {geometry}", shape, "forward",
                     lambda: ops.pool2d_forward(x, k, return_indices=True, **kw),
                     lambda: np_maxpool_forward(x, k, s, ceil_mode), F32 * nx + (F32 + 8) * ny))
        rows.append((net, f"{layer} {geometry}", shape, "backward",
                     lambda: ops.pool2d_backward(dy, x.shape, k, indices=idx, **kw),
                     lambda: np_maxpool_backward(dy, idx, x.shape), (F32 + 8) * ny + F32 * nx))

    def relu(net, layer, shape):
        x = rng.standard_normal(shape, dtype=np.float32)
        y = ops.activation_forward(x, "relu")
        dy = rng.standard_normal(shape, dtype=np.float32)
        rows.append((net, layer, shape, "forward", lambda: ops.activation_forward(x, "relu"),
                     lambda: np_relu_forward(x), 2 * F32 * x.size))
        rows.append((net, layer, shape, "backward", lambda: ops.activation_backward(dy, y, "relu"),
                     lambda: np_relu_backward(dy, y), 3 * F32 * x.size))

    def lrn(net, layer, shape):
        x = rng.standard_normal(shape, dtype=np.float32)
        p = dict(alpha=1e-4, beta=0.75, k=1.0)
        y, scale = ops.lrn_forward(x, 5, **p)
        dy = rng.standard_normal(shape, dtype=np.float32)
        rows.append((net, f"{layer} size 5", shape, "forward", lambda: ops.lrn_forward(x, 5, **p),
                     lambda: np_lrn_forward(x, 5, **p), 3 * F32 * x.size))
        rows.append((net, f"{layer} size 5", shape, "backward", lambda: ops.lrn_backward(dy, x, y, scale, 5, **p),
                     lambda: np_lrn_backward(dy, x, y, scale, 5, **p), 5 * F32 * x.size))

    def softmax(net, layer, shape):
        x = rng.standard_normal(shape, dtype=np.float32)
        y = ops.softmax_forward(x)
        dy = rng.standard_normal(shape, dtype=np.float32)
        rows.append((net, layer, shape, "forward", lambda: ops.softmax_forward(x), lambda: np_softmax_forward(x),
                     2 * F32 * x.size))
        rows.append((net, layer, shape, "backward", lambda: ops.softmax_backward(dy, y),
                     lambda: np_softmax_backward(dy, y), 3 * F32 * x.size))
        target = rng.integers(0, shape[1], shape[0])
        _, log_probs = ops.cross_entropy_forward(x, target)
        rows.append((net, "cross-entropy (mean)", shape, "forward", lambda: ops.cross_entropy_forward(x, target),
                     lambda: np_cross_entropy_forward(x, target), 2 * F32 * x.size + 8 * target.size))
        rows.append((net, "cross-entropy (mean)", shape, "backward",
                     lambda: ops.cross_entropy_backward(1.0, log_probs, target),
                     lambda: np_cross_entropy_backward(log_probs, target), 2 * F32 * x.size + 8 * target.size))

    def dropout(net, layer, shape):
        x = rng.standard_normal(shape, dtype=np.float32)
        y, mask = ops.dropout_forward(x, 0.5, seed=1)
        dy = rng.standard_normal(shape, dtype=np.float32)
        np_rng = np.random.default_rng(1)
        rows.append((net, f"{layer} p=0.5", shape, "forward", lambda: ops.dropout_forward(x, 0.5, seed=1),
                     lambda: np_dropout_forward(x, 0.5, np_rng), (2 * F32 + 1) * x.size))
        rows.append((net, f"{layer} p=0.5", shape, "backward", lambda: ops.dropout_backward(dy, mask, 0.5),
                     lambda: np_dropout_backward(dy, mask, 0.5), (2 * F32 + 1) * x.size))

    def batch_norm(net, layer, shape):
        x = rng.standard_normal(shape, dtype=np.float32)
        w = rng.standard_normal(shape[1], dtype=np.float32)
        b = rng.standard_normal(shape[1], dtype=np.float32)
        _, mean, invstd = ops.batch_norm_forward_training(x, w, b, None, None)
        _, np_mean, np_invstd = np_batch_norm_forward(x, w, b)
        dy = rng.standard_normal(shape, dtype=np.float32)
        rows.append((net, layer, shape, "forward", lambda: ops.batch_norm_forward_training(x, w, b, None, None),
                     lambda: np_batch_norm_forward(x, w, b), 2 * F32 * x.size))
        rows.append((net, layer, shape, "backward", lambda: ops.batch_norm_backward(dy, x, w, mean, invstd),
                     lambda: np_batch_norm_backward(dy, x, w, np_mean, np_invstd), 3 * F32 * x.size))

    def bias(net, layer, shape):
        x = rng.standard_normal(shape, dtype=np.float32)
        b = rng.standard_normal(shape[1], dtype=np.float32)
        rows.append((net, layer, shape, "forward", lambda: ops.bias_add(x, b), lambda: x + b[:, None, None],
                     2 * F32 * x.size))
        rows.append((net, layer, shape, "backward", lambda: ops.bias_backward(x),
                     lambda: x.sum(axis=(0, 2, 3)), F32 * x.size))

    pool("lenet", "pool1", (64, 20, 24, 24), 2, 2, False)
    pool("lenet", "pool2", (64, 50, 8, 8), 2, 2, False)
    relu("lenet", "relu (fc)", (64, 500))
    softmax("lenet", "softmax", (64, 10))
    relu("alexnet", "relu1", (16, 96, 55, 55))
    lrn("alexnet", "lrn1", (16, 96, 55, 55))
    pool("alexnet", "pool1", (16, 96, 55, 55), 3, 2, True)
    relu("alexnet", "relu2", (16, 256, 27, 27))
    lrn("alexnet", "lrn2", (16, 256, 27, 27))
    pool("alexnet", "pool2", (16, 256, 27, 27), 3, 2, True)
    pool("alexnet", "pool5", (16, 256, 13, 13), 3, 2, True)
    softmax("alexnet", "softmax", (16, 1000))
    dropout("alexnet", "dropout6", (16, 4096))
    batch_norm("alexnet", "batch norm (spatial)", (16, 96, 55, 55))
    bias("alexnet", "bias (conv1)", (16, 96, 55, 55))
    return rows


def keep_freed_memory():
    """Ask glibc's malloc to keep freed memory instead of returning it to the
    kernel. Otherwise an output of tens of MB can come back as fresh pages on
    every call, and the kernel's page zeroing (for either engine) dominates what
    is measured; a framework's caching allocator avoids that in training."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 1 << 30) and libc.mallopt(m_trim_threshold, 1 << 31))
    except (OSError, AttributeError):
        return False


def copy_bandwidth(nbytes, repeats):
    """Bytes read + written per second by np.copyto between two arrays of nbytes."""
    src = np.ones(nbytes // F32, np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    return 2 * nbytes / float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--copy-mib", type=int, default=512, help="size of each array of the copy-bandwidth test")
    ap.add_argument("--layers", default="", help="comma-separated substrings of layer names to run")
    ap.add_argument("--threads", type=int, default=0, help="minifw's thread count (default: as configured)")
    ap.add_argument("--fresh-pages", action="store_true",
                    help="let malloc return freed memory to the kernel (outputs may then be fresh pages every call)")
    args = ap.parse_args(argv)
    warn_openblas_env()
    if args.threads:
        minifw.set_num_threads(args.threads)
    kept = False if args.fresh_pages else keep_freed_memory()
    print(header("Memory-bound primitives, float32",
                 "python benchmarks/primitives.py " + " ".join(argv if argv is not None else sys.argv[1:])))
    print(f"- freed memory kept by malloc (no page zeroing per call): {'yes' if kept else 'no'}")
    copy_bw = copy_bandwidth(args.copy_mib << 20, max(args.repeats, 3))
    print(f"- memory-copy bandwidth (np.copyto, {args.copy_mib} MiB arrays, read + write): "
          f"{copy_bw / 1e9:.1f} GB/s\n")
    rows = []
    local_copy = {}
    for net, layer, shape, direction, ours, base, nbytes in cases(np.random.default_rng(0)):
        if args.layers and not any(s in layer for s in args.layers.split(",")):
            continue
        t = time_engines({"minifw": ours, "numpy": base}, args.repeats)
        size = int(np.prod(shape)) * F32
        if size not in local_copy:
            local_copy[size] = copy_bandwidth(size, 5 * args.repeats)
        bw = nbytes / t["minifw"]
        rows.append({"net": net, "layer": layer, "shape": "x".join(map(str, shape)), "direction": direction,
                     "minifw ms": f"{1e3 * t['minifw']:.3f}", "NumPy ms": f"{1e3 * t['numpy']:.3f}",
                     "speedup": f"{t['numpy'] / t['minifw']:.1f}x", "GB/s": f"{bw / 1e9:.1f}",
                     "% copy": f"{100 * bw / copy_bw:.0f}%", "% copy here": f"{100 * bw / local_copy[size]:.0f}%"})
    print(table(rows, ["net", "layer", "shape", "direction", "minifw ms", "NumPy ms", "speedup", "GB/s", "% copy",
                       "% copy here"]))


if __name__ == "__main__":
    main()
