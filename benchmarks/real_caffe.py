"""The caffe engine against real Caffe, layer by layer: is the yardstick honest?

minifw's caffe engine (minifw.engines.caffe) stands in for Caffe's CPU layers in every
speedup minifw reports. This benchmark checks it against the real thing: it writes each
model as a Caffe net (prototxt, generated from the minifw model itself, layer names
and all), times it with `caffe time`, and times the same model on the caffe engine
the way `minifw bench` does, in alternating blocks with a pause between them.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/real_caffe.py

It needs the `caffe` command (Caffe 1.0, CPU_ONLY). Caffe is no dependency of minifw and
is not built by it; Debian 11 packages it: `apt install caffe` there, or, on Debian 12,
from bullseye's main archive (a sources entry for suite bullseye, then
`apt install -t bullseye caffe`), with `libopenblas0-pthread` so that its BLAS is
OpenBLAS. Take that OpenBLAS from Debian 12 (`apt install -t bookworm libopenblas0-pthread`
after Caffe): bullseye's 0.3.13 predates the Xeons with AMX and ran Caffe's AlexNet
iteration in 1282 ms where 0.3.21 took 638 ms on the same 2-core Xeon. The header names
the BLAS libraries `caffe` loads. Without `caffe` on PATH (or --caffe) the benchmark says
so and exits 2.

Conventions. Caffe's layers read and write persistent blobs, and `caffe time` reports,
per layer, the mean over its iterations; each block here is one `caffe time` run, and
the figure kept is the median of the blocks' means. The caffe engine's figure is the
median over its iterations, each timed as `minifw bench` times them. Both use OpenBLAS
on minifw's thread count (OPENBLAS_NUM_THREADS for Caffe). Caffe's input is a
DummyData layer (its time, and the Flatten layer minifw has where Caffe's InnerProduct
flattens by itself, are left out of the totals). "ratio" is the caffe engine's time
over real Caffe's; the issue asks for 0.8-1.5 per layer, and rows outside it are
marked; no ratio is given where both times are under half a millisecond (the cost
of the call, not of the layer's work). Results go to benchmarks/RESULTS.md by hand, with the command and the CPU.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import header, table, warn_openblas_env  # noqa: E402

import minifw  # noqa: E402
from minifw import benchmark, nn  # noqa: E402

MODELS = ("lenet", "alexnet-small", "alexnet")
BAND = (0.8, 1.5)
# below this on both sides a layer's time is the cost of calling it (a Python call and a
# Tensor on minifw's side, a virtual call on Caffe's), not of its work: no ratio is given
TINY_MS = 0.5


def _pair(v):
    return v if isinstance(v, tuple) else (v, v)


def _conv(name, bottom, layer):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = (_pair(layer.kernel_size), _pair(layer.stride),
                                              _pair(layer.padding), _pair(layer.dilation))
    if dh != dw:
        raise ValueError(f"{name}: Caffe's dilation is one value for both axes, got {(dh, dw)}")
    if isinstance(layer.padding, str):
        raise ValueError(f"{name}: padding {layer.padding!r} has no Caffe form")
    bias = "" if layer.bias is not None else " bias_term: false"
    return (f'layer {{ name: "{name}" type: "Convolution" bottom: "{bottom}" top: "{name}"\n'
            f'  convolution_param {{ num_output: {layer.out_channels} kernel_h: {kh} kernel_w: {kw}'
            f' stride_h: {sh} stride_w: {sw} pad_h: {ph} pad_w: {pw} dilation: {dh}'
            f' group: {layer.groups}{bias}\n'
            f'    weight_filler {{ type: "xavier" }} bias_filler {{ type: "constant" value: 0.1 }} }} }}\n')


def _pool(name, bottom, layer, mode):
    (kh, kw), (sh, sw), (ph, pw) = (_pair(layer.kernel_size), _pair(layer.stride or layer.kernel_size),
                                    _pair(layer.padding))
    return (f'layer {{ name: "{name}" type: "Pooling" bottom: "{bottom}" top: "{name}"\n'
            f'  pooling_param {{ pool: {mode} kernel_h: {kh} kernel_w: {kw} stride_h: {sh} stride_w: {sw}'
            f' pad_h: {ph} pad_w: {pw} }} }}\n')


def prototxt(model_name, model, x_shape, classes):
    """The model as a Caffe net: (text, {layer name: Caffe layer name or None}); the values
    name the layer whose times stand beside minifw's, None where Caffe has no such layer
    (Flatten). Raises ValueError for a layer with no Caffe counterpart here."""
    dims = " ".join(f"dim: {d}" for d in x_shape)
    text = [f'name: "{model_name}"\n',
            f'layer {{ name: "data" type: "DummyData" top: "data" top: "label"\n'
            f'  dummy_data_param {{ shape {{ {dims} }} shape {{ dim: {x_shape[0]} }}\n'
            f'    data_filler {{ type: "gaussian" std: 1 }} data_filler {{ type: "constant" value: '
            f'{classes // 2} }} }} }}\n']
    names, bottom = {}, "data"
    for name, layer in benchmark.layers(model):
        if isinstance(layer, nn.Conv2d):
            text.append(_conv(name, bottom, layer))
        elif isinstance(layer, (nn.MaxPool2d, nn.AvgPool2d)):
            # Caffe rounds the output size up, as ceil_mode=True does: where minifw's layer
            # rounds down the sizes may differ, which compare() checks against Caffe's log
            text.append(_pool(name, bottom, layer, "MAX" if isinstance(layer, nn.MaxPool2d) else "AVE"))
        elif isinstance(layer, nn.ReLU):
            if not layer.inplace:
                raise ValueError(f"{name}: only in-place ReLU is written (Caffe's usual form)")
            text.append(f'layer {{ name: "{name}" type: "ReLU" bottom: "{bottom}" top: "{bottom}" }}\n')
            names[name] = name
            continue
        elif isinstance(layer, nn.LocalResponseNorm):
            text.append(f'layer {{ name: "{name}" type: "LRN" bottom: "{bottom}" top: "{name}"\n'
                        f'  lrn_param {{ local_size: {layer.size} alpha: {layer.alpha} beta: {layer.beta}'
                        f' k: {layer.k} }} }}\n')
        elif isinstance(layer, nn.Flatten):
            names[name] = None
            continue
        elif isinstance(layer, nn.Linear):
            bias = "" if layer.bias is not None else " bias_term: false"
            text.append(f'layer {{ name: "{name}" type: "InnerProduct" bottom: "{bottom}" top: "{name}"\n'
                        f'  inner_product_param {{ num_output: {layer.out_features}{bias}\n'
                        f'    weight_filler {{ type: "xavier" }} bias_filler {{ type: "constant" }} }} }}\n')
        elif isinstance(layer, nn.Dropout):
            text.append(f'layer {{ name: "{name}" type: "Dropout" bottom: "{bottom}" top: "{bottom}"\n'
                        f'  dropout_param {{ dropout_ratio: {layer.p} }} }}\n')
            names[name] = name
            continue
        else:
            raise ValueError(f"{name}: no Caffe layer is written for {type(layer).__name__}")
        names[name], bottom = name, name
    text.append(f'layer {{ name: "loss" type: "SoftmaxWithLoss" bottom: "{bottom}" bottom: "label" '
                f'top: "loss" }}\n')
    names["loss"] = "loss"
    return "".join(text), names


_LAYER_LINE = re.compile(r"^\s*(\S+)\s+(forward|backward): ([0-9.eE+-]+) ms\.\s*$")
_SHAPE_LINE = re.compile(r"Top shape: ([0-9 ]+) \(\d+\)")


def run_caffe(caffe, net_path, iterations, threads):
    """One `caffe time` run: {layer: (forward ms, backward ms)} (means over its iterations)
    and the top shapes it logged, in order."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), GLOG_logtostderr="1")
    done = subprocess.run([caffe, "time", "-model", net_path, "-iterations", str(iterations)],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"caffe time failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return parse_caffe_log(done.stderr)


def parse_caffe_log(log):
    """`caffe time`'s log (glog lines on stderr) -> ({layer: (forward ms, backward ms)}, the
    "Top shape" of every top blob, in the order the net was set up)."""
    times, shapes = {}, []
    for line in log.splitlines():
        body = line.split("] ", 1)[-1]
        m = _LAYER_LINE.match(body)
        if m:
            times.setdefault(m.group(1), {})[m.group(2)] = float(m.group(3))
            continue
        m = _SHAPE_LINE.search(body)
        if m:
            shapes.append(tuple(int(d) for d in m.group(1).split()))
    return {name: (t["forward"], t["backward"]) for name, t in times.items()}, shapes


def minifw_block(state, loss_fn, warmup, iterations):
    samples = []
    with minifw.engine("caffe"):
        for i in range(warmup + iterations):
            timing = benchmark.time_iteration(*state, loss_fn)
            if i >= warmup:
                samples.append(timing)
    return samples


def compare(model_name, batch_size, iterations, blocks, warmup, caffe, pause, workdir):
    cls, shape, classes = benchmark.MODELS[model_name]
    state = benchmark._setup(model_name, batch_size)
    model, x = state[0], state[2]
    text, names = prototxt(model_name, model, tuple(x.shape), classes)
    net_path = os.path.join(workdir, f"{model_name}.prototxt")
    with open(net_path, "w") as f:
        f.write(text)
    threads = minifw.get_num_threads()
    loss_fn = nn.CrossEntropyLoss()
    caffe_runs, samples = [], []
    for block in range(blocks):
        runs = (("caffe", lambda: caffe_runs.append(run_caffe(caffe, net_path, iterations, threads))),
                ("minifw", lambda: samples.extend(minifw_block(state, loss_fn, warmup, iterations))))
        for _, fn in (runs if block % 2 == 0 else runs[::-1]):
            fn()
            time.sleep(pause)
    # the nets must have the same shapes: every layer's output, in order, as Caffe logged them
    expected, out = [], x
    with minifw.no_grad(), minifw.engine("caffe"):
        for name, layer in benchmark.layers(model):
            out = layer(out)
            if names[name] is not None:
                expected.append(tuple(out.shape))
    logged = caffe_runs[0][1][2:2 + len(expected)]  # after the data layer's two tops
    if logged != expected:
        raise RuntimeError(f"{model_name}: Caffe's net has output shapes {logged}, minifw's {expected}")
    rows = []
    for name, caffe_name in names.items():
        if caffe_name is None:
            continue
        if name == "loss":
            ours = ([s["loss_forward"] for s in samples], [s["loss_backward"] for s in samples])
        else:
            ours = ([s["forward"][name] for s in samples], [s["backward"][name] for s in samples])
        ours = tuple(1e3 * statistics.median(v) for v in ours)
        real = tuple(statistics.median(run[0][caffe_name][d] for run in caffe_runs) for d in (0, 1))
        rows.append({"layer": name, "caffe_fwd_ms": real[0], "engine_fwd_ms": ours[0],
                     "caffe_bwd_ms": real[1], "engine_bwd_ms": ours[1]})
    return rows


def _ratio(ours, real):
    if max(ours, real) < TINY_MS:
        return "-"
    r = ours / real if real > 0 else float("inf")
    mark = "" if BAND[0] <= r <= BAND[1] else (" (faster)" if r < BAND[0] else " (SLOWER)")
    return f"{r:.2f}{mark}"


def format_rows(rows):
    out = []
    for r in rows:
        out.append({"layer": r["layer"],
                    "Caffe fwd ms": f"{r['caffe_fwd_ms']:.2f}", "engine fwd ms": f"{r['engine_fwd_ms']:.2f}",
                    "fwd ratio": _ratio(r["engine_fwd_ms"], r["caffe_fwd_ms"]),
                    "Caffe bwd ms": f"{r['caffe_bwd_ms']:.2f}", "engine bwd ms": f"{r['engine_bwd_ms']:.2f}",
                    "bwd ratio": _ratio(r["engine_bwd_ms"], r["caffe_bwd_ms"])})
    total = {k: sum(r[k] for r in rows) for k in ("caffe_fwd_ms", "engine_fwd_ms", "caffe_bwd_ms",
                                                  "engine_bwd_ms")}
    both_real, both_ours = total["caffe_fwd_ms"] + total["caffe_bwd_ms"], total["engine_fwd_ms"] + total[
        "engine_bwd_ms"]
    out.append({"layer": "**forward + backward**",
                "Caffe fwd ms": f"{total['caffe_fwd_ms']:.2f}", "engine fwd ms": f"{total['engine_fwd_ms']:.2f}",
                "fwd ratio": f"{total['engine_fwd_ms'] / total['caffe_fwd_ms']:.2f}",
                "Caffe bwd ms": f"{total['caffe_bwd_ms']:.2f}", "engine bwd ms": f"{total['engine_bwd_ms']:.2f}",
                "bwd ratio": f"{total['engine_bwd_ms'] / total['caffe_bwd_ms']:.2f}"})
    columns = list(out[0])
    return table(out, columns) + (f"\n\nforward + backward: real Caffe {both_real:.2f} ms, caffe engine "
                                  f"{both_ours:.2f} ms, ratio {both_ours / both_real:.2f}")


def blas_libraries(caffe):
    """The BLAS files the dynamic loader gives `caffe` (ldd, links resolved), so that a
    result names the BLAS real Caffe ran on; "unknown" where ldd cannot tell."""
    try:
        out = subprocess.run(["ldd", caffe], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    found = sorted({os.path.realpath(m.group(1)) for m in re.finditer(r"=>\s*(\S*blas\S*)", out)})
    return ", ".join(found) or "unknown"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="lenet,alexnet",
                    help=f"comma-separated, of {', '.join(MODELS)} (default lenet,alexnet)")
    ap.add_argument("--batch-size", type=int, default=None,
                    help="default: minifw bench's (64; alexnet 16)")
    ap.add_argument("--iterations", type=int, default=None,
                    help="timed iterations per block (default 40; alexnet 4)")
    ap.add_argument("--blocks", type=int, default=4, help="blocks per engine, alternating (default 4)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed caffe-engine iterations per block")
    ap.add_argument("--caffe", default=None, help="the caffe command (default: caffe on PATH)")
    ap.add_argument("--json", default=None, help="also write the rows as JSON to this path")
    args = ap.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown or not models:
        print(f"error: --models: expected some of {', '.join(MODELS)}, got {args.models!r}", file=sys.stderr)
        return 2
    for name in ("batch_size", "iterations", "blocks"):
        value = getattr(args, name)
        if value is not None and value < 1:
            print(f"error: --{name.replace('_', '-')} must be >= 1, got {value}", file=sys.stderr)
            return 2
    caffe = args.caffe or shutil.which("caffe")
    if caffe is None or not os.access(caffe, os.X_OK):
        print("error: no caffe command found (Caffe 1.0, CPU_ONLY; see this script's docstring for "
              "how to install it), or give --caffe PATH", file=sys.stderr)
        return 2
    warn_openblas_env()
    print(header("The caffe engine against real Caffe, per layer",
                 "python benchmarks/real_caffe.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                 extra=[f"Caffe: {caffe}, OpenBLAS threads {minifw.get_num_threads()}; its BLAS: "
                        f"{blas_libraries(caffe)}"]))
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for model_name in models:
            batch = args.batch_size or benchmark.DEFAULT_BATCH_SIZES.get(model_name, 64)
            iterations = args.iterations or (4 if model_name == "alexnet" else 40)
            rows = compare(model_name, batch, iterations, args.blocks, args.warmup, caffe, 0.3, workdir)
            results[model_name] = {"batch_size": batch, "iterations_per_block": iterations,
                                   "blocks": args.blocks, "rows": rows}
            print(f"### {model_name}, batch {batch} ({args.blocks} blocks of {iterations} iterations per "
                  f"engine)\n")
            print(format_rows(rows) + "\n", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
