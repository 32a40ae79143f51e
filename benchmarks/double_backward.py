"""Gradients of gradients (create_graph=True): one training step that differentiates a
gradient, minifw against PyTorch CPU in one run.

    gp      a WGAN-GP critic step: a small convolutional critic (conv, leaky_relu, conv,
            leaky_relu, linear) on a batch of 64 1x28x28 images; the gradient of its scores
            with respect to the interpolated inputs, taken with create_graph=True; the
            penalty ((|grad| - 1)^2).mean(); backward to the critic's weights
    hvp     a Hessian-vector product of a 3-layer tanh MLP's squared loss with respect to
            its weights (batch 256, widths 784-256-256-10): grad with create_graph=True,
            then the gradient of <grad, v>
    maml    a MAML meta-step: one inner SGD step of a 1-40-40-1 ReLU MLP on 4 tasks of 10
            points, the meta-loss backward through it to the initial weights

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/double_backward.py

Both frameworks compute the same function from the same float32 weights and data (checked
before timing: the gradients agree to float32 rounding). Times are medians of --repeats
steps, each framework timed in blocks that alternate, after a warm-up (benchmarks/_common.py).
minifw runs its primitives engine; PyTorch runs on as many threads as minifw.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import header, table, time_engines, warn_openblas_env  # noqa: E402

import minifw  # noqa: E402

try:
    import torch
except ImportError:  # the benchmark needs PyTorch to compare with
    torch = None


def _arrays(seed, shapes):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) / np.sqrt(np.prod(s[1:]) if len(s) > 1 else 1)).astype(np.float32)
            for s in shapes]


def gradient_penalty(lib, F):
    """The WGAN-GP critic step of library `lib` (minifw or torch), as a function of nothing
    returning the weights' gradients."""
    shapes = [(16, 1, 4, 4), (16,), (32, 16, 4, 4), (32,), (1, 32 * 5 * 5), (1,)]
    params = [lib.tensor(a, requires_grad=True) for a in _arrays(0, shapes)]
    real, fake = (lib.tensor(a) for a in _arrays(1, [(64, 1, 28, 28), (64, 1, 28, 28)]))
    alpha = lib.tensor(np.random.default_rng(2).random((64, 1, 1, 1)).astype(np.float32))

    def critic(x):
        w1, b1, w2, b2, w3, b3 = params
        h = F.leaky_relu(F.conv2d(x, w1, b1, stride=2, padding=1), 0.2)
        h = F.leaky_relu(F.conv2d(h, w2, b2, stride=2, padding=1), 0.2)
        return F.linear(h.flatten(1)[:, :32 * 5 * 5], w3, b3)

    def step():
        for p in params:
            p.grad = None
        x = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        g, = lib.autograd.grad(critic(x).sum(), x, create_graph=True)
        penalty = ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        (critic(fake).mean() - critic(real).mean() + 10 * penalty).backward()
        return [p.grad for p in params]
    return step


def hessian_vector(lib, F):
    shapes = [(256, 784), (256,), (256, 256), (256,), (10, 256), (10,)]
    params = [lib.tensor(a, requires_grad=True) for a in _arrays(3, shapes)]
    vs = [lib.tensor(a) for a in _arrays(4, shapes)]
    x, y = (lib.tensor(a) for a in _arrays(5, [(256, 784), (256, 10)]))

    def step():
        w1, b1, w2, b2, w3, b3 = params
        out = F.linear(lib.tanh(F.linear(lib.tanh(F.linear(x, w1, b1)), w2, b2)), w3, b3)
        grads = lib.autograd.grad(((out - y) ** 2).mean(), params, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(grads, vs))
        return lib.autograd.grad(dot, params)
    return step


def maml(lib, F):
    shapes = [(40, 1), (40,), (40, 40), (40,), (1, 40), (1,)]
    params = [lib.tensor(a, requires_grad=True) for a in _arrays(6, shapes)]
    rng = np.random.default_rng(7)
    tasks = []
    for _ in range(4):
        amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0, np.pi)
        xs = [rng.uniform(-5, 5, (10, 1)).astype(np.float32) for _ in range(2)]
        tasks.append([lib.tensor(v) for x in xs for v in (x, (amplitude * np.sin(x + phase)).astype(np.float32))])

    def forward(ws, x):
        w1, b1, w2, b2, w3, b3 = ws
        return F.linear(F.relu(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)), w3, b3)

    def step():
        for p in params:
            p.grad = None
        meta = 0.0
        for xs, ys, xq, yq in tasks:
            grads = lib.autograd.grad(F.mse_loss(forward(params, xs), ys), params, create_graph=True)
            meta = meta + F.mse_loss(forward([p - 0.01 * g for p, g in zip(params, grads)], xq), yq)
        (meta / len(tasks)).backward()
        return [p.grad for p in params]
    return step


CASES = {"gp": gradient_penalty, "hvp": hessian_vector, "maml": maml}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {sorted(CASES)}")
    args = ap.parse_args(argv)
    warn_openblas_env()
    if torch is None:
        ap.error("PyTorch is not importable: this benchmark compares with it")
    keys = args.cases.split(",")
    unknown = [k for k in keys if k not in CASES]
    if unknown:
        ap.error(f"--cases: unknown {unknown}; choose from {sorted(CASES)}")
    torch.set_num_threads(minifw.get_num_threads())
    minifw.set_engine("primitives")
    command = "python benchmarks/double_backward.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(header("Gradients of gradients: one step, minifw against PyTorch", command.strip(),
                 extra=[f"PyTorch {torch.__version__} on {torch.get_num_threads()} threads"]))
    rows = []
    for key in keys:
        steps = {"minifw": CASES[key](minifw, minifw.nn.functional),
                 "torch": CASES[key](torch, torch.nn.functional)}
        ours = [g.detach().numpy() for g in steps["minifw"]()]
        theirs = [g.detach().numpy() for g in steps["torch"]()]
        diff = max(float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30))
                   for a, b in zip(ours, theirs))
        t = time_engines(steps, args.repeats)
        rows.append({"case": key, "minifw ms": f"{1e3 * t['minifw']:.2f}",
                     "torch ms": f"{1e3 * t['torch']:.2f}",
                     "speedup of minifw": f"{t['torch'] / t['minifw']:.2f}x",
                     "max rel. diff of the gradients": f"{diff:.1e}"})
    print(table(rows, ["case", "minifw ms", "torch ms", "speedup of minifw",
                       "max rel. diff of the gradients"]))


if __name__ == "__main__":
    main()
