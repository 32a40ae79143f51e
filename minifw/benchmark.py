"""Whole-model benchmarks of the engines, as `caffe time` and past it: `minifw bench`.

    result = benchmark.run("lenet", engines=("caffe", "primitives"), batch_size=64)
    print(benchmark.format_table(result))

One training iteration is timed layer by layer, as `caffe time` does: each top-level
layer of the model runs forward on the previous layer's output (detached, so that
its backward can be timed on its own), then the loss, then every layer's backward in
reverse order, then the optimizer's update (which `caffe time` leaves out). Times
are medians over the iterations. The engines take turns in blocks of iterations
with a pause between blocks: OpenBLAS's and OpenMP's worker threads spin after a
call and, on few cores, slow whatever runs next.

Peak memory is measured apart from the timing, in a fresh state for each engine:
the most bytes traced by tracemalloc at once while the model was built and trained
for two iterations: NumPy reports its arrays there (parameters, gradients,
optimizer state, activations, the scratch memory the primitives take from
minifw.devices and the caffe engine's col buffer), beside the far smaller Python
objects. The packing buffers the native GEMM allocates per thread are not counted.

Inputs are synthetic, as in `caffe time`.
"""
import statistics
import time
import tracemalloc

import minifw
from minifw import engines, nn, optim
from minifw.models import AlexNet, AlexNetSmall, LeNet

# name: (model class, input shape without the batch, classes)
MODELS = {"lenet": (LeNet, (1, 28, 28), 10),
          "alexnet": (AlexNet, (3, 227, 227), 1000),
          "alexnet-small": (AlexNetSmall, (1, 32, 32), 10)}
ENGINES = tuple(engines.ENGINES)


class BenchmarkError(ValueError):
    """Arguments a benchmark cannot run with; the message says which and why."""


def layers(model):
    """The model's top-level layers in the order its forward applies them."""
    return list(model.named_children())


def check_arguments(model, engines_, batch_size, iterations, warmup):
    if model not in MODELS:
        raise BenchmarkError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    unknown = [e for e in engines_ if e not in ENGINES]
    if unknown or not engines_:
        raise BenchmarkError(f"engines must be some of {', '.join(ENGINES)}; got "
                             f"{', '.join(engines_) or 'none'}")
    for name, value, minimum in (("batch_size", batch_size, 1), ("iterations", iterations, 1),
                                 ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise BenchmarkError(f"{name} must be an int >= {minimum}, got {value!r}")


def _setup(model_name, batch_size, seed=0):
    cls, shape, classes = MODELS[model_name]
    minifw.manual_seed(seed)
    model = cls()
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    x = minifw.randn(batch_size, *shape)
    target = minifw.randint(0, classes, (batch_size,))
    return model, optimizer, x, target


def time_iteration(model, optimizer, x, target, loss_fn):
    """One training iteration timed layer by layer: {"forward": {name: s}, "backward": {name: s},
    "loss_forward": s, "loss_backward": s, "update": s}."""
    clock = time.perf_counter
    forward, backward, steps = {}, {}, []
    optimizer.zero_grad()
    out = x
    for name, layer in layers(model):
        inp = out if out is x else out.detach().requires_grad_()
        start = clock()
        out = layer(inp)
        forward[name] = clock() - start
        steps.append((name, inp, out))
    scores = out.detach().requires_grad_()
    start = clock()
    loss = loss_fn(scores, target)
    loss_forward = clock() - start
    start = clock()
    loss.backward()
    loss_backward = clock() - start
    grad = scores.grad
    for name, inp, out in reversed(steps):
        start = clock()
        out.backward(grad)
        backward[name] = clock() - start
        grad = inp.grad
    start = clock()
    optimizer.step()
    update = clock() - start
    return {"forward": forward, "backward": backward, "loss_forward": loss_forward,
            "loss_backward": loss_backward, "update": update}


def peak_memory(model_name, engine, batch_size):
    """The most bytes tracemalloc saw held at once while the model was built and trained for two
    iterations with `engine`, from a state with no cached scratch memory."""
    minifw.devices.workspace("cpu").clear()
    engines.caffe.release_buffers()
    loss_fn = nn.CrossEntropyLoss()
    tracemalloc.start()
    try:
        with minifw.engine(engine):
            model, optimizer, x, target = _setup(model_name, batch_size)
            for _ in range(2):
                time_iteration(model, optimizer, x, target, loss_fn)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        minifw.devices.workspace("cpu").clear()
        engines.caffe.release_buffers()


def conv_algorithms(model, x):
    """{layer name: {direction: algorithm}} that algo="auto" picks for each convolution."""
    chosen, out = {}, x
    with minifw.no_grad():
        for name, layer in layers(model):
            if isinstance(layer, nn.Conv2d):
                problem = minifw.ops.ConvProblem(tuple(out.shape), tuple(layer.weight.shape),
                                                 stride=layer.stride, padding=layer.padding,
                                                 dilation=layer.dilation, groups=layer.groups,
                                                 dtype=out.dtype)
                chosen[name] = {d: minifw.ops.conv_algorithm(problem, d)
                                for d in minifw.ops.conv.DIRECTIONS}
            out = layer(out)
    return chosen


def run(model_name, engines=("caffe", "primitives"), batch_size=64, iterations=10, warmup=3,
        blocks=3, pause=0.2, progress=None):
    """Time a training iteration of `model_name` with each engine; returns a dict (see
    format_table and the JSON written by `minifw bench --json`). progress, when given, is
    called with the number of iterations just done (for a progress bar)."""
    check_arguments(model_name, engines, batch_size, iterations, warmup)
    loss_fn = nn.CrossEntropyLoss()
    state = {e: _setup(model_name, batch_size) for e in engines}
    samples = {e: [] for e in engines}
    per_block = -(-iterations // blocks)
    for block in range(blocks):
        order = engines if block % 2 == 0 else tuple(reversed(engines))
        for engine in order:
            with minifw.engine(engine):
                for i in range(warmup + per_block):
                    timing = time_iteration(*state[engine], loss_fn)
                    if i >= warmup and len(samples[engine]) < iterations:
                        samples[engine].append(timing)
                    if progress is not None:
                        progress(1)
            time.sleep(pause)
    model, _, x, _ = state[engines[0]]
    result = {"model": model_name, "batch_size": batch_size, "iterations": iterations,
              "threads": minifw.get_num_threads(), "isa": minifw.backends.get_isa(),
              "cpu": minifw.info()["cpu"], "conv_algorithms": conv_algorithms(model, x),
              "engines": []}
    for engine in engines:
        result["engines"].append(_summary(engine, samples[engine], model_name, batch_size))
    return result


def _median_ms(values):
    return 1e3 * statistics.median(values)


def _summary(engine, samples, model_name, batch_size):
    names = list(samples[0]["forward"])
    rows = [{"name": name,
             "forward_ms": _median_ms([s["forward"][name] for s in samples]),
             "backward_ms": _median_ms([s["backward"][name] for s in samples])}
            for name in names]
    rows.append({"name": "loss", "forward_ms": _median_ms([s["loss_forward"] for s in samples]),
                 "backward_ms": _median_ms([s["loss_backward"] for s in samples])})
    forward = _median_ms([sum(s["forward"].values()) + s["loss_forward"] for s in samples])
    backward = _median_ms([sum(s["backward"].values()) + s["loss_backward"] for s in samples])
    update = _median_ms([s["update"] for s in samples])
    iteration = _median_ms([sum(s["forward"].values()) + s["loss_forward"] + s["loss_backward"]
                            + sum(s["backward"].values()) + s["update"] for s in samples])
    return {"engine": engine, "iteration_ms": iteration, "forward_ms": forward,
            "backward_ms": backward, "update_ms": update,
            "peak_memory_bytes": peak_memory(model_name, engine, batch_size), "layers": rows}


def format_table(result):
    """A Markdown table: per layer, forward and backward ms per engine; then the totals, peak
    memory, and the speedup of the last engine over the first."""
    engines_ = [e["engine"] for e in result["engines"]]
    first, last = result["engines"][0], result["engines"][-1]
    header = ["layer"] + [f"{e} fwd ms" for e in engines_] + [f"{e} bwd ms" for e in engines_]
    if len(engines_) > 1:
        header.append(f"speedup ({last['engine']} vs {first['engine']})")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def row(label, fwd, bwd, speed):
        cells = [label] + [f"{v:.2f}" for v in fwd] + [f"{v:.2f}" for v in bwd]
        if len(engines_) > 1:
            cells.append(f"{speed:.2f}x" if speed else "")
        lines.append("| " + " | ".join(cells) + " |")

    for i, layer in enumerate(first["layers"]):
        fwd = [e["layers"][i]["forward_ms"] for e in result["engines"]]
        bwd = [e["layers"][i]["backward_ms"] for e in result["engines"]]
        total_last = last["layers"][i]["forward_ms"] + last["layers"][i]["backward_ms"]
        total_first = layer["forward_ms"] + layer["backward_ms"]
        row(layer["name"], fwd, bwd, total_first / total_last if total_last else None)
    row("**forward + backward**", [e["forward_ms"] for e in result["engines"]],
        [e["backward_ms"] for e in result["engines"]], None)
    lines.append("")
    lines.append("| engine | iteration ms | forward ms | backward ms | update ms | peak memory MiB |")
    lines.append("|---|---|---|---|---|---|")
    for e in result["engines"]:
        lines.append(f"| {e['engine']} | {e['iteration_ms']:.2f} | {e['forward_ms']:.2f} | "
                     f"{e['backward_ms']:.2f} | {e['update_ms']:.2f} | "
                     f"{e['peak_memory_bytes'] / 2 ** 20:.1f} |")
    if len(engines_) > 1:
        lines.append("")
        lines.append(f"{last['engine']} vs {first['engine']}: "
                     f"{first['iteration_ms'] / last['iteration_ms']:.2f}x the speed per iteration, "
                     f"{last['peak_memory_bytes'] / first['peak_memory_bytes']:.2f}x the peak memory")
    if result["conv_algorithms"]:
        lines.append("")
        lines.append("Convolution algorithms (primitives engine): " + "; ".join(
            f"{name} " + ", ".join(f"{d} {a}" for d, a in algos.items())
            for name, algos in result["conv_algorithms"].items()))
    return "\n".join(lines)


def plot(result, path):
    """A PNG of forward + backward ms per layer, one bar per engine (needs matplotlib)."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    names = [layer["name"] for layer in result["engines"][0]["layers"]]
    fig = Figure(figsize=(max(6, 0.5 * len(names) + 2), 4), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / len(result["engines"])
    for k, e in enumerate(result["engines"]):
        ms = [layer["forward_ms"] + layer["backward_ms"] for layer in e["layers"]]
        ax.bar([i + k * width for i in range(len(names))], ms, width, label=e["engine"])
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))], names, rotation=45, ha="right")
    ax.set(ylabel="forward + backward ms", title=f"{result['model']}, batch {result['batch_size']}")
    ax.legend()
    fig.savefig(path, dpi=100)
