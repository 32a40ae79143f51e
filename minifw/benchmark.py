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
the most bytes of arrays held at once while the model was built and trained for
two iterations (minifw.devices.peak_memory): parameters, gradients, optimizer
state, activations, the scratch memory the primitives take from minifw.devices,
the caffe engine's col buffer and the recurrent layers' reserves. On the CPU that
is what tracemalloc traced (NumPy reports its arrays there, beside the far smaller
Python objects; the packing buffers the native GEMM allocates per thread are not
counted); on "cuda" the GPU memory CuPy's pool handed to arrays.

With engine "torch" (PyTorch, when it is installed; never a dependency), the same
architecture is built from torch.nn layers holding a copy of the model's initial
parameters and timed by the same code: PyTorch's API is the one minifw's mirrors.
Its peak memory is the most bytes PyTorch's own allocator held at once (from its
profiler's memory events), counted over the same two iterations. PyTorch runs with
minifw's thread count and TF32 switches (`minifw.backends.cudnn.allow_tf32` and
`cuda.matmul.allow_tf32`, off by default; PyTorch's own default lets cuDNN's float32
convolutions use TF32), so both compute at one precision; the result's "tf32" says which.

Inputs are synthetic, as in `caffe time`.
"""
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from collections import OrderedDict
from typing import NamedTuple

import minifw
from minifw import engines, nn, optim
from minifw.functions.recurrent import spare_reserves
from minifw.models import AlexNet, AlexNetSmall, CharLSTM, LeNet, WordLM


class TokenIds(NamedTuple):
    """A model input of token ids, (seq_len, batch) int64, instead of a (batch, *shape) tensor;
    the targets are one id per position, (seq_len * batch,)."""
    seq_len: int


class _Chain(nn.Sequential):
    """A model whose forward is more than its children applied in turn (torchvision's ResNet
    flattens before its classifier), laid out as the chain of layers it applies, for timing
    layer by layer: the same modules (and parameters) as `source`, the model it was made from,
    plus the steps its forward takes between them (nn.Flatten, a pooling)."""

    def __init__(self, source_name, source, steps):
        super().__init__(OrderedDict(steps))
        self.__dict__["source_name"], self.__dict__["source"] = source_name, source  # not a child


def _resnet_steps(tnn, model):
    """torchvision's ResNet.forward as steps: the stem, the four stages, pooling, flatten, fc."""
    return ([(n, getattr(model, n)) for n in ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2",
                                              "layer3", "layer4", "avgpool")]
            + [("flatten", tnn.Flatten(1)), ("fc", model.fc)])


def _features_steps(tnn, model):
    """torchvision's MobileNetV2, MobileNetV3 and EfficientNet forward as steps: each block of
    `features`, global average pooling, flatten, the classifier."""
    return ([(f"features{i}", block) for i, block in enumerate(model.features)]
            + [("pool", tnn.AdaptiveAvgPool2d((1, 1))), ("flatten", tnn.Flatten(1)),
               ("classifier", model.classifier)])


# torchvision's models the bench times: name -> the function laying out its forward as steps
VISION_MODELS = {"resnet18": _resnet_steps, "mobilenet_v2": _features_steps, "mobilenet_v3_large": _features_steps,
                 "efficientnet_b0": _features_steps}


def _vision_chain(name):
    from minifw.vision import models
    source = getattr(models, name)()
    return _Chain(name, source, VISION_MODELS[name](nn, source))


# name: (model class, input shape without the batch (or TokenIds), classes)
MODELS = {"lenet": (LeNet, (1, 28, 28), 10),
          "alexnet": (AlexNet, (3, 227, 227), 1000),
          "alexnet-small": (AlexNetSmall, (1, 32, 32), 10),
          # the language model: 65 characters, embedding 128, 2x LSTM 512, 64 steps
          "charlstm": (lambda: CharLSTM(65, 128, 512, 2), TokenIds(64), 65),
          # the word model, PyTorch word_language_model's medium one (Zaremba et al. 2014):
          # embedding 650, 2x LSTM 650, dropout 0.5, 35 steps, over 10,000 words (their Penn
          # Treebank's vocabulary; Shakespeare's plays keep 10,101 words seen 5 times or more)
          "wordlm": (lambda: WordLM(10_000, 650, 650, 2, "lstm", dropout=0.5), TokenIds(35), 10_000),
          # torchvision's ImageNet models (minifw.vision.models), as torchvision builds them
          **{name: (lambda name=name: _vision_chain(name), (3, 224, 224), 1000) for name in VISION_MODELS}}
# batch sizes of `minifw bench` when none is given: the issue's, where it names one
DEFAULT_BATCH_SIZES = {"alexnet": 16, "charlstm": 32, "wordlm": 20, **{name: 16 for name in VISION_MODELS}}
MINIFW_ENGINES = tuple(engines.ENGINES)
ENGINES = MINIFW_ENGINES + ("torch",)


class BenchmarkError(ValueError):
    """Arguments a benchmark cannot run with; the message says which and why."""


def layers(model):
    """The model's top-level layers in the order its forward applies them: the bench's models
    register their children in that order, each applied once (see WordLM)."""
    return list(model.named_children())


def torch_missing(model=None):
    """Why the torch engine cannot run `model` here (a message), or None when it can."""
    if importlib.util.find_spec("torch") is None:
        return "PyTorch is not installed (pip install torch)"
    if model in VISION_MODELS and importlib.util.find_spec("torchvision") is None:
        return f"{model} is built by torchvision, which is not installed (pip install torchvision)"
    return None


def check_arguments(model, engines_, batch_size, iterations, warmup, device="cpu"):
    if model not in MODELS:
        raise BenchmarkError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    unknown = [e for e in engines_ if e not in ENGINES]
    if unknown or not engines_ or len(set(engines_)) != len(engines_):
        raise BenchmarkError(f"engines must be distinct ones of {', '.join(ENGINES)}; got "
                             f"{', '.join(engines_) or 'none'}")
    if "torch" in engines_:
        if torch_missing(model):
            raise BenchmarkError(f"engine torch: {torch_missing(model)}")
        if minifw.device(device).type not in ("cpu", "cuda"):
            raise BenchmarkError(f"engine torch runs on cpu or cuda, not on device {device!r}")
    for name, value, minimum in (("batch_size", batch_size, 1), ("iterations", iterations, 1),
                                 ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise BenchmarkError(f"{name} must be an int >= {minimum}, got {value!r}")


SGD_SETTINGS = dict(lr=0.01, momentum=0.9, weight_decay=5e-4)


def _setup(model_name, batch_size, seed=0, device="cpu"):
    cls, shape, classes = MODELS[model_name]
    minifw.manual_seed(seed)
    model = cls().to(device)
    optimizer = optim.SGD(model.parameters(), **SGD_SETTINGS)
    if isinstance(shape, TokenIds):
        x = minifw.randint(0, classes, (shape.seq_len, batch_size), device=device)
        target = minifw.randint(0, classes, (shape.seq_len * batch_size,), device=device)
    else:
        x = minifw.randn(batch_size, *shape, device=device)
        target = minifw.randint(0, classes, (batch_size,), device=device)
    return model, optimizer, x, target


# ---- the torch engine --------------------------------------------------------------------------
def _torch_layer(torch, layer, name):
    """The torch.nn counterpart of one minifw layer, with a copy of its parameters and buffers."""
    tnn = torch.nn
    if isinstance(layer, nn.Sequential):
        return tnn.Sequential(OrderedDict((n, _torch_layer(torch, child, f"{name}.{n}"))
                                          for n, child in layer.named_children()))
    if isinstance(layer, nn.Conv2d):
        made = tnn.Conv2d(layer.in_channels, layer.out_channels, layer.kernel_size, layer.stride,
                          layer.padding, layer.dilation, layer.groups, bias=layer.bias is not None)
    elif isinstance(layer, nn.Linear):
        made = tnn.Linear(layer.in_features, layer.out_features, bias=layer.bias is not None)
    elif isinstance(layer, nn.Embedding):
        made = tnn.Embedding(layer.num_embeddings, layer.embedding_dim, layer.padding_idx)
    elif type(layer) in (nn.LSTM, nn.GRU):
        # the same parameter names (weight_ih_l0, ...), so the state dict copies across
        made = getattr(tnn, type(layer).__name__)(
            layer.input_size, layer.hidden_size, layer.num_layers, bias=layer.bias,
            batch_first=layer.batch_first, dropout=layer.dropout,
            bidirectional=layer.bidirectional)
    elif isinstance(layer, nn.MaxPool2d):
        made = tnn.MaxPool2d(layer.kernel_size, layer.stride, layer.padding, layer.dilation,
                             ceil_mode=layer.ceil_mode)
    elif isinstance(layer, nn.AvgPool2d):
        made = tnn.AvgPool2d(layer.kernel_size, layer.stride, layer.padding, layer.ceil_mode,
                             layer.count_include_pad, layer.divisor_override)
    elif isinstance(layer, nn.LocalResponseNorm):
        made = tnn.LocalResponseNorm(layer.size, layer.alpha, layer.beta, layer.k)
    elif isinstance(layer, nn.BatchNorm2d):
        made = tnn.BatchNorm2d(layer.num_features, layer.eps, layer.momentum, layer.affine,
                               layer.track_running_stats)
    elif isinstance(layer, nn.Dropout):
        made = tnn.Dropout(layer.p)
    elif isinstance(layer, nn.Flatten):
        made = tnn.Flatten(layer.start_dim, layer.end_dim)
    elif isinstance(layer, nn.ReLU):
        made = tnn.ReLU(inplace=layer.inplace)  # in place as minifw's (see time_iteration)
    elif type(layer) in (nn.Tanh, nn.Sigmoid):
        made = getattr(tnn, type(layer).__name__)()
    else:
        raise BenchmarkError(f"engine torch: layer {name} ({type(layer).__name__}) has no "
                             f"PyTorch counterpart in the bench")
    state = {k: torch.from_numpy(v.detach().cpu().numpy().copy())
             for k, v in layer.state_dict().items()}
    made.load_state_dict(state)
    return made


def _torch_setup(model_name, batch_size, device="cpu"):
    """The model of _setup (the same initial parameters and data) as torch.nn layers."""
    import torch

    model, _, x, target = _setup(model_name, batch_size)
    dev = torch.device(minifw.device(device).type)
    if isinstance(model, _Chain):  # torchvision builds it; the same parameter names load across
        import torchvision

        source = getattr(torchvision.models, model.source_name)()
        source.load_state_dict({k: torch.from_numpy(v.detach().cpu().numpy().copy())
                                for k, v in model.source.state_dict().items()})
        tmodel = torch.nn.Sequential(OrderedDict(VISION_MODELS[model.source_name](torch.nn, source))).to(dev)
    else:
        tmodel = torch.nn.Sequential(OrderedDict((name, _torch_layer(torch, layer, name))
                                                 for name, layer in layers(model))).to(dev)
    toptimizer = torch.optim.SGD(tmodel.parameters(), **SGD_SETTINGS)
    # torch.tensor copies into PyTorch's own memory, which its peak-memory count sees
    return (tmodel, toptimizer, torch.tensor(x.numpy(), device=dev),
            torch.tensor(target.numpy().astype("int64"), device=dev))


class _native_stderr_silenced:
    """Drop what native code writes to file descriptor 2 in the block: PyTorch's profiler logs
    its start and stop there (and, on a machine without a GPU, that it found none)."""

    def __enter__(self):
        sys.stderr.flush()
        self.saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)


def torch_profiled_peak(run, cuda=False):
    """The most bytes PyTorch's allocator held at once while run() ran, from the memory events
    of its profiler; None if it reported none."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with _native_stderr_silenced(), profile(activities=activities, profile_memory=True) as prof:
        run()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    finally:
        os.remove(path)
    totals = [e["args"]["Total Allocated"] for e in trace.get("traceEvents", [])
              if e.get("name") == "[memory]" and "Total Allocated" in e.get("args", {})]
    return int(max(totals)) if totals else None


def _torch_peak_memory(model_name, batch_size, device="cpu"):
    """The most bytes PyTorch's allocator held at once while the model was built and trained for
    two iterations."""
    import torch

    loss_fn = torch.nn.CrossEntropyLoss()

    def run():
        state = _torch_setup(model_name, batch_size, device)
        for _ in range(2):
            time_iteration(*state, loss_fn)

    peak = torch_profiled_peak(run, cuda=minifw.device(device).type == "cuda")
    if peak is None:
        raise BenchmarkError("engine torch: PyTorch's profiler reported no memory events")
    return peak


def time_iteration(model, optimizer, x, target, loss_fn, sync=None):
    """One training iteration timed layer by layer: {"forward": {name: s}, "backward": {name: s},
    "loss_forward": s, "loss_backward": s, "update": s}. The model, optimizer and tensors may be
    minifw's or PyTorch's: the code is the same. sync, if given, is called before each reading
    of the clock (to wait for a GPU's queued work)."""
    if sync is None:
        clock = time.perf_counter
    else:
        def clock():
            sync()
            return time.perf_counter()
    forward, backward, steps = {}, {}, []
    optimizer.zero_grad()
    out = x
    for name, layer in layers(model):
        inp = out if out is x else out.detach().requires_grad_()
        # An in-place layer (ReLU(inplace=True), or one holding such a module first, as
        # EfficientNet's classifier holds Dropout(inplace=True)) may not write a leaf that requires
        # grad (nor may PyTorch's): it gets a copy of it, made before the clock starts.
        in_place = any(getattr(m, "inplace", False) is True for m in layer.modules())
        arg = inp.clone() if in_place and inp.requires_grad else inp
        start = clock()
        out = layer(arg)
        forward[name] = clock() - start
        if isinstance(out, tuple):  # a recurrent layer's (output, hidden): the output goes on
            out = out[0]
        steps.append((name, inp, out))
    scores = out.detach().requires_grad_()
    start = clock()
    # a sequence model's (T, N, classes) scores are scored as T * N predictions
    loss = loss_fn(scores.reshape(-1, scores.shape[-1]) if scores.ndim > 2 else scores, target)
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


def peak_memory(model_name, engine, batch_size, device="cpu"):
    """The most bytes of arrays held at once (devices.peak_memory) while the model was built and
    trained for two iterations with `engine`, from a state with no cached scratch memory (for
    engine "torch": the most bytes PyTorch's allocator held)."""
    if engine == "torch":
        return _torch_peak_memory(model_name, batch_size, device)
    dev = minifw.devices.get(device, "bench")
    _release_cached_memory(dev)
    loss_fn = nn.CrossEntropyLoss()
    try:
        with minifw.devices.peak_memory(dev) as meter, minifw.engine(engine):
            model, optimizer, x, target = _setup(model_name, batch_size, device=device)
            for _ in range(2):
                time_iteration(model, optimizer, x, target, loss_fn)
        return meter.bytes
    finally:
        _release_cached_memory(dev)


def _release_cached_memory(dev):
    """Drop the memory minifw keeps between calls (scratch, the caffe engine's buffers, the
    recurrent layers' spare reserves, freed large host arrays), so that what an engine uses
    is allocated, and counted, while it is measured."""
    minifw.devices.workspace(dev).clear()
    engines.caffe.release_buffers()
    spare_reserves.clear()
    minifw.devices.host_arrays.clear()


def conv_algorithms(model, x):
    """{layer name: {direction: algorithm}} that algo="auto" picks for each convolution, those
    inside a layer too (named by their path: "layer1.0.conv1")."""
    inputs = {}

    def recorder(name):
        def hook(module, args):
            inputs.setdefault(name, (module, args[0]))
        return hook

    handles = [m.register_forward_pre_hook(recorder(name)) for name, m in model.named_modules()
               if isinstance(m, nn.Conv2d)]
    out = x
    try:
        with minifw.no_grad():
            for _, layer in layers(model):
                out = layer(out)
                out = out[0] if isinstance(out, tuple) else out
    finally:
        for handle in handles:
            handle.remove()
    chosen = {}
    for name, (conv, inp) in inputs.items():
        problem = minifw.ops.ConvProblem(tuple(inp.shape), tuple(conv.weight.shape), stride=conv.stride,
                                         padding=conv.padding, dilation=conv.dilation, groups=conv.groups,
                                         dtype=inp.dtype)
        chosen[name] = {d: minifw.ops.conv_algorithm(problem, d, device=inp.device)
                        for d in minifw.ops.conv.DIRECTIONS}
    return chosen


def run(model_name, engines=("caffe", "primitives"), batch_size=64, iterations=10, warmup=3,
        blocks=3, pause=0.2, progress=None, device="cpu"):
    """Time a training iteration of `model_name` with each engine; returns a dict (see
    format_table and the JSON written by `minifw bench --json`). progress, when given, is
    called with the number of iterations just done (for a progress bar)."""
    check_arguments(model_name, engines, batch_size, iterations, warmup, device)
    state, loss_fns, contexts = {}, {}, {}
    for engine in engines:
        if engine == "torch":
            import torch

            state[engine] = _torch_setup(model_name, batch_size, device)
            loss_fns[engine] = torch.nn.CrossEntropyLoss()
            contexts[engine] = lambda: _torch_settings(torch, minifw.get_num_threads())
        else:
            state[engine] = _setup(model_name, batch_size, device=device)
            loss_fns[engine] = nn.CrossEntropyLoss()
            contexts[engine] = lambda engine=engine: minifw.engine(engine)
    sync = _synchronizer(engines, device)
    samples = {e: [] for e in engines}
    per_block = -(-iterations // blocks)
    for block in range(blocks):
        order = engines if block % 2 == 0 else tuple(reversed(engines))
        for engine in order:
            with contexts[engine]():
                for i in range(warmup + per_block):
                    timing = time_iteration(*state[engine], loss_fns[engine], sync=sync)
                    if i >= warmup and len(samples[engine]) < iterations:
                        samples[engine].append(timing)
                    if progress is not None:
                        progress(1)
            time.sleep(pause)
    model, _, x, _ = _setup(model_name, batch_size, device=device)
    result = {"model": model_name, "batch_size": batch_size, "iterations": iterations,
              "device": str(minifw.devices.get(device, "bench")), "threads": minifw.get_num_threads(),
              "isa": minifw.backends.get_isa(), "cpu": minifw.info()["cpu"],
              "conv_algorithms": conv_algorithms(model, x),
              "tf32": {"conv": minifw.backends.cudnn.allow_tf32, "matmul": minifw.backends.cuda.matmul.allow_tf32},
              "engines": []}
    for engine in engines:
        result["engines"].append(_summary(engine, samples[engine], model_name, batch_size, device))
    if "torch" in engines:
        import torch

        result["torch_version"] = torch.__version__
    return result


class _torch_settings:
    """Run PyTorch on `n` threads (minifw's count) and with minifw's TF32 switches for the block,
    then restore its own. PyTorch lets cuDNN's float32 convolutions use TF32 tensor cores by
    default, minifw does not: compared as they come, the two would not compute at one
    precision."""

    _switches = (("backends.cudnn", "allow_tf32"), ("backends.cuda.matmul", "allow_tf32"))

    def __init__(self, torch, n):
        self.torch, self.n = torch, n

    def _owner(self, root, path):
        for name in path.split("."):
            root = getattr(root, name)
        return root

    def __enter__(self):
        self.saved = self.torch.get_num_threads()
        self.torch.set_num_threads(self.n)
        self.saved_switches = []
        for path, name in self._switches:
            theirs, ours = self._owner(self.torch, path), self._owner(minifw, path)
            self.saved_switches.append((theirs, name, getattr(theirs, name)))
            setattr(theirs, name, getattr(ours, name))

    def __exit__(self, *exc):
        self.torch.set_num_threads(self.saved)
        for owner, name, value in self.saved_switches:
            setattr(owner, name, value)


def _synchronizer(engines_, device):
    """A function that waits for the device's queued work, so the clock times it; None on the
    CPU, where every call returns when its work is done."""
    if minifw.device(device).type != "cuda":
        return None
    waits = []
    if "torch" in engines_:
        import torch

        waits.append(torch.cuda.synchronize)
    if any(e != "torch" for e in engines_):
        import cupy

        waits.append(lambda: cupy.cuda.Device().synchronize())
    return lambda: [wait() for wait in waits]


def _median_ms(values):
    return 1e3 * statistics.median(values)


def _summary(engine, samples, model_name, batch_size, device):
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
            "peak_memory_bytes": peak_memory(model_name, engine, batch_size, device),
            "layers": rows}


def _speedup_pairs(result):
    """(subject, baseline) engine entries for the speedup columns: the primitives engine (or,
    without it, the last engine) against each other engine."""
    entries = result["engines"]
    names = [e["engine"] for e in entries]
    subject = entries[names.index("primitives")] if "primitives" in names else entries[-1]
    return [(subject, e) for e in entries if e is not subject]


def format_table(result):
    """A Markdown table: per layer, forward and backward ms per engine and the speedup of the
    primitives engine over each other engine; then the totals, peak memory and the
    per-iteration speedups."""
    entries = result["engines"]
    pairs = _speedup_pairs(result)
    header = (["layer"] + [f"{e['engine']} fwd ms" for e in entries]
              + [f"{e['engine']} bwd ms" for e in entries]
              + [f"speedup ({a['engine']} vs {b['engine']})" for a, b in pairs])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def row(label, fwd, bwd, speeds):
        cells = ([label] + [f"{v:.2f}" for v in fwd] + [f"{v:.2f}" for v in bwd]
                 + [f"{v:.2f}x" if v else "" for v in speeds])
        lines.append("| " + " | ".join(cells) + " |")

    def layer_ms(entry, i):
        return entry["layers"][i]["forward_ms"] + entry["layers"][i]["backward_ms"]

    for i, layer in enumerate(entries[0]["layers"]):
        row(layer["name"], [e["layers"][i]["forward_ms"] for e in entries],
            [e["layers"][i]["backward_ms"] for e in entries],
            [layer_ms(b, i) / layer_ms(a, i) if layer_ms(a, i) else None for a, b in pairs])
    row("**forward + backward**", [e["forward_ms"] for e in entries],
        [e["backward_ms"] for e in entries],
        [(b["forward_ms"] + b["backward_ms"]) / (a["forward_ms"] + a["backward_ms"])
         for a, b in pairs])
    lines.append("")
    lines.append("| engine | iteration ms | forward ms | backward ms | update ms | peak memory MiB |")
    lines.append("|---|---|---|---|---|---|")
    for e in entries:
        lines.append(f"| {e['engine']} | {e['iteration_ms']:.2f} | {e['forward_ms']:.2f} | "
                     f"{e['backward_ms']:.2f} | {e['update_ms']:.2f} | "
                     f"{e['peak_memory_bytes'] / 2 ** 20:.1f} |")
    if pairs:
        lines.append("")
    for a, b in pairs:
        lines.append(f"{a['engine']} vs {b['engine']}: "
                     f"{b['iteration_ms'] / a['iteration_ms']:.2f}x the speed per iteration, "
                     f"{a['peak_memory_bytes'] / b['peak_memory_bytes']:.2f}x the peak memory")
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
