"""Finite-difference gradient checks for minifw Functions, in float64.

    from gradcheck import gradcheck
    gradcheck(lambda x, w: F.linear(x, w), [x, w])

Every float64 Tensor input with requires_grad=True is checked: the gradient
autograd puts in its .grad is compared with central differences of the same
function. Non-scalar (and multiple) outputs are projected onto fixed random
weights first, L = sum_k <r_k, out_k>, so a single backward checks every
output element's contribution, with a gradient argument that is not all ones.
"""
import numpy as np

import minifw
from minifw.autograd import Node

# Central differences in float64 have a truncation error ~ eps^2 * f''' and a
# rounding error ~ 1e-16 * |L| / eps; with eps = 1e-6 both stay near 1e-9 for
# the O(1) values these checks use, so 1e-6 relative (plus 1e-7 absolute, for
# gradients that are zero) leaves margin without hiding a wrong formula.
EPS = 1e-6
RTOL = 1e-6
ATOL = 1e-7


def _outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, minifw.Tensor) and o.dtype.kind == "f"]


def gradcheck(fn, inputs, *, eps=EPS, atol=ATOL, rtol=RTOL, seed=0):
    """Assert that autograd's gradients of fn(*inputs) match central differences.

    inputs: Tensors (float64 ones with requires_grad=True are checked) and any
    other arguments, passed through. Raises AssertionError naming the input and
    the worst element; returns True otherwise."""
    checked = [i for i, t in enumerate(inputs) if isinstance(t, minifw.Tensor) and t.requires_grad]
    assert checked, "gradcheck: no input requires grad"
    for i in checked:
        assert inputs[i].dtype == np.float64, (
            f"gradcheck: input {i} is {inputs[i].dtype}; finite differences need float64")
    before = [t.detach().numpy().copy() if isinstance(t, minifw.Tensor) else None for t in inputs]

    outs = _outputs(fn(*inputs))
    assert outs, "gradcheck: fn returned no floating point tensor"
    rng = np.random.default_rng(seed)
    weights = [rng.uniform(-1.0, 1.0, o.shape) for o in outs]

    def objective():
        with minifw.no_grad():
            return sum(float(np.sum(w * o.detach().numpy())) for w, o in zip(weights, _outputs(fn(*inputs))))

    # analytic: one backward of sum_k <r_k, out_k>, i.e. backward(gradient=r_k) per output
    for i in checked:
        inputs[i].grad = None
    minifw.autograd.backward(outs, [minifw.tensor(w, dtype=o.dtype) for w, o in zip(weights, outs)])
    for i, t in enumerate(inputs):
        if isinstance(t, minifw.Tensor):
            assert np.array_equal(t.detach().numpy(), before[i], equal_nan=True), (
                f"gradcheck: fn or its backward changed input {i} in place")

    for i in checked:
        t = inputs[i]
        analytic = np.zeros(t.shape) if t.grad is None else t.grad.numpy()
        assert analytic.shape == t.shape and analytic.dtype == t.dtype, (
            f"gradcheck: input {i}: .grad has shape {analytic.shape} and dtype {analytic.dtype}, "
            f"expected {t.shape} and {t.dtype}")
        _compare(f"gradcheck: input {i}", "gradient", t, analytic,
                 _central_differences(t, objective, eps), atol, rtol)
    return True


def _central_differences(t, objective, eps):
    """d objective / d t by central differences, each element of t perturbed in place."""
    numeric = np.zeros(t.shape)
    flat, nflat = t.detach().numpy().reshape(-1), numeric.reshape(-1)  # views: perturb in place
    for j in range(flat.size):
        old = flat[j]
        flat[j] = old + eps
        up = objective()
        flat[j] = old - eps
        down = objective()
        flat[j] = old
        nflat[j] = (up - down) / (2 * eps)
    return numeric


def _compare(what, kind, t, analytic, numeric, atol, rtol):
    err = np.abs(analytic - numeric)
    bad = ~(err <= atol + rtol * np.abs(numeric))
    if bad.any():
        j = np.unravel_index(np.argmax(np.where(bad, err, -1)), t.shape)
        raise AssertionError(
            f"{what} of shape {t.shape}: {int(bad.sum())} of {t.numel()} {kind} elements differ; "
            f"worst at {tuple(int(k) for k in j)}: autograd {analytic[j]!r}, finite differences "
            f"{numeric[j]!r}")


def functions_in_graph(outputs):
    """The Function classes recorded in the graphs behind `outputs` (the coverage tests' view
    of which Functions a gradient check reached)."""
    found, stack = set(), [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if isinstance(node, Node) and node.function not in found:
            found.add(node.function)
            stack.extend(f for f, _ in node.next_functions)
    return found


def gradgradcheck(fn, inputs, *, eps=EPS, atol=ATOL, rtol=RTOL, seed=0):
    """Assert that the second derivatives autograd records (create_graph=True) match central
    differences of first derivatives, as torch.autograd.gradgradcheck checks them.

    With fixed random r_k (one per float output) and s_i (one per checked input x_i),
    G_i(x, r) = d<r, fn(x)>/dx_i and M(x, r) = sum_i <s_i, G_i>. The gradient of M with
    respect to every x_i and r_k, from one backward through the gradients grad() recorded,
    is compared with central differences of M, each evaluation of which is a first-order
    backward (no graph). A gradient that depends on no input (a linear fn) has zero second
    derivatives in x and is still checked in r. Returns True; raises AssertionError naming
    what differs."""
    checked = [t for t in inputs if isinstance(t, minifw.Tensor) and t.requires_grad]
    assert checked, "gradgradcheck: no input requires grad"
    for t in checked:
        assert t.dtype == np.float64, "gradgradcheck: finite differences need float64 inputs"
    rng = np.random.default_rng(seed)
    outs = _outputs(fn(*inputs))
    assert outs, "gradgradcheck: fn returned no floating point tensor"
    rs = [minifw.tensor(rng.uniform(-1.0, 1.0, o.shape), dtype=o.dtype, requires_grad=True)
          for o in outs]
    ss = [rng.uniform(-1.0, 1.0, t.shape) for t in checked]

    def first_order_objective():
        """M by a first-order backward: the numeric side."""
        outs = _outputs(fn(*inputs))
        weights = [minifw.tensor(r.detach().numpy()) for r in rs]
        grads = minifw.autograd.grad(outs, checked, weights, allow_unused=True)
        return sum(float(np.sum(s * g.numpy())) for s, g in zip(ss, grads) if g is not None)

    grads = minifw.autograd.grad(outs, checked, rs, create_graph=True, allow_unused=True)
    terms = [(g * minifw.tensor(s)).sum() for s, g in zip(ss, grads) if g is not None]
    wrt = checked + rs
    if terms and any(t.requires_grad for t in terms):
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        analytic = minifw.autograd.grad(total, wrt, allow_unused=True)
    else:
        analytic = [None] * len(wrt)
    for idx, (t, a) in enumerate(zip(wrt, analytic)):
        what = f"input {idx}" if idx < len(checked) else f"grad_output {idx - len(checked)}"
        a = np.zeros(t.shape) if a is None else a.detach().numpy()
        assert a.shape == t.shape, f"gradgradcheck: {what}: shape {a.shape}, expected {t.shape}"
        _compare(f"gradgradcheck: {what}", "second-derivative", t, a,
                 _central_differences(t, first_order_objective, eps), atol, rtol)
    return True
