"""minifw.training without the command: a tiny recipe trains (the loss falls, one history entry
per epoch), resumes bit-identically from a checkpoint, evaluate() counts right, unknown recipes
and settings are named, and LeNet's checkpoints keep the format older ones were written in."""
import os

import numpy as np
import pytest

import minifw
from minifw import nn, optim, training
from minifw.data import Dataset, TensorDataset, write_idx


class Jittered(Dataset):
    """Points with their labels; each draw adds fresh noise from `generator`, so a resumed run
    matches only when that generator is restored too."""

    def __init__(self, points, labels, generator):
        self.points, self.labels, self.generator = points, labels, generator

    def __getitem__(self, index):
        noise = minifw.randn(self.points.shape[1], generator=self.generator)
        return minifw.tensor(self.points[index]) + 0.1 * noise, int(self.labels[index])

    def __len__(self):
        return len(self.points)


class Blobs(training.Recipe):
    """Three classes of 8-D points around fixed centres, and a two-layer perceptron with dropout
    (drawn from the global generator, which a resumed run must restore too)."""

    name, title = "blobs", "MLP"
    defaults = {"epochs": 3, "batch_size": 8, "lr": 0.05, "seed": 0}
    generators = ("noise",)

    def datasets(self, settings, generators):
        rng = np.random.default_rng(0)
        centres = rng.normal(0, 1, (3, 8))
        labels = rng.integers(0, 3, 96)
        points = (centres[labels] + 0.5 * rng.normal(size=(96, 8))).astype(np.float32)
        return (Jittered(points[:64], labels[:64], generators["noise"]),
                TensorDataset(minifw.tensor(points[64:]), minifw.tensor(labels[64:])))

    def model(self, settings):
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 3))

    def optimizer(self, model, settings):
        optimizer = optim.SGD(model.parameters(), lr=settings["lr"], momentum=0.9)
        return optimizer, optim.lr_scheduler.CosineAnnealingLR(optimizer, settings["epochs"])


@pytest.fixture
def blobs(monkeypatch):
    monkeypatch.setattr(training, "RECIPES", dict(training.RECIPES))  # registered for this test only
    return training.register(Blobs())


def parameters(run):
    return {name: value.numpy() for name, value in run.model.state_dict().items()}


def test_a_run_learns_and_records_one_history_entry_per_epoch(blobs):
    run = training.Run("blobs")
    reported = []
    results = run.fit(on_epoch=reported.append)
    assert results == reported and [r.epoch for r in results] == [1, 2, 3] and run.epochs_done == 3
    assert results[-1].loss < 0.5 * results[0].loss
    assert results[-1].correct / results[-1].total >= 0.9 and results[-1].total == 32
    assert all(r.samples == 64 and r.seconds > 0 for r in results)
    history = run.history
    assert history["epoch_loss"] == [r.loss for r in results]
    assert history["test_accuracy"] == [r.correct / r.total for r in results]
    assert len(history["batch_loss"]) == 3 * 8  # 64 samples in batches of 8


def test_a_resumed_run_ends_bit_identical_to_an_uninterrupted_one(blobs, tmp_path):
    full = training.Run("blobs")
    full.fit()

    path = tmp_path / "blobs.npz"
    part = training.Run("blobs")
    part.train_epoch()
    minifw.save(part.checkpoint(), path)
    minifw.randn(100)  # the global generator moves on, as it would in another process

    checkpoint = minifw.load(path)
    resumed = training.Run("blobs", training.resumed_settings(blobs, checkpoint))
    resumed.resume(checkpoint)
    assert resumed.epochs_done == 1
    assert [r.epoch for r in resumed.fit(checkpoint_path=path)] == [2, 3]
    for name, value in parameters(full).items():
        np.testing.assert_array_equal(parameters(resumed)[name], value, err_msg=name)
    assert resumed.history == full.history
    assert minifw.load(path)["epoch"] == 3 and os.listdir(tmp_path) == ["blobs.npz"]


def test_an_interrupted_fit_leaves_the_last_complete_epoch_on_disk(blobs, tmp_path):
    path = tmp_path / "blobs.npz"

    def interrupt_at_epoch_2(result):
        if result.epoch == 2:
            raise KeyboardInterrupt

    run = training.Run("blobs")
    with pytest.raises(KeyboardInterrupt):
        run.fit(checkpoint_path=path, on_epoch=interrupt_at_epoch_2)
    assert minifw.load(path)["epoch"] == 1


class Scores(nn.Module):
    """Its inputs are its class scores; it notes the mode and grad mode it was called in."""

    def forward(self, x):
        self.seen = (self.training, minifw.is_grad_enabled())
        return x


def test_evaluate_counts_the_highest_scores_that_match():
    scores = minifw.tensor([[0.9, 0.1, 0.0], [0.1, 0.2, 0.7], [0.2, 0.5, 0.3],
                            [0.0, 0.6, 0.4], [0.5, 0.1, 0.4]])
    labels = minifw.tensor(np.array([0, 2, 0, 1, 2]))  # right, right, wrong, right, wrong
    model = Scores()
    loader = minifw.data.DataLoader(TensorDataset(scores, labels), batch_size=2)  # last batch of 1
    assert training.evaluate(model, loader) == (3, 5)
    assert model.seen == (False, False) and model.training  # eval mode and no graph, then back


def test_an_unknown_recipe_names_the_known_ones():
    message = (r"^get_recipe: name must be one of 'lenet', 'alexnet-small', 'charlstm', "
               r"'wordlm'; got 'gpt'$")
    with pytest.raises(ValueError, match=message):
        training.get_recipe("gpt")
    with pytest.raises(ValueError, match="name must be one of 'lenet', 'alexnet-small', 'charlstm'"):
        training.Run("gpt")


def test_an_unknown_setting_names_the_recipe_and_its_settings(blobs):
    with pytest.raises(ValueError, match=r"Run: unknown settings \['lrr'\] for recipe 'blobs'; "
                                         r"its settings are \['batch_size', 'epochs', 'lr', 'seed', "
                                         r"'data_dir'\]"):
        training.Run("blobs", {"lrr": 0.1})


def test_a_recipe_without_the_loop_settings_is_refused(monkeypatch):
    monkeypatch.setattr(training, "RECIPES", dict(training.RECIPES))

    class NoEpochs(Blobs):
        name, defaults = "no-epochs", {"batch_size": 8, "seed": 0}

    with pytest.raises(ValueError, match=r"recipe 'no-epochs' must have defaults for \['epochs'\]"):
        training.register(NoEpochs())
    assert "no-epochs" not in training.RECIPES


def test_resumed_settings_keep_the_checkpoints(blobs):
    checkpoint = {"kind": "minifw train blobs", "settings": {**Blobs.defaults, "data_dir": None}}
    assert training.resumed_settings(blobs, checkpoint, {"lr": 0.05, "data_dir": "elsewhere"}) == \
        {**Blobs.defaults, "data_dir": "elsewhere"}  # the same lr is no conflict; data may move
    with pytest.raises(training.SettingConflict, match="lr 0.5 differs from the checkpoint's 0.05") as e:
        training.resumed_settings(blobs, checkpoint, {"lr": 0.5})
    assert (e.value.name, e.value.value, e.value.saved) == ("lr", 0.5, 0.05)
    with pytest.raises(training.TrainingError, match="not a checkpoint written by `minifw train blobs`"):
        training.resumed_settings(blobs, {**checkpoint, "kind": "minifw train lenet"})
    with pytest.raises(training.TrainingError, match="the checkpoint has no complete settings"):
        training.resumed_settings(blobs, {**checkpoint, "settings": {"lr": 0.05}})


@pytest.mark.parametrize("schedule, extendable", [("constant", True), ("cosine", False)])
def test_a_lenet_run_can_be_extended_only_with_a_constant_lr(schedule, extendable):
    settings = {**training.get_recipe("lenet").defaults, "lr_schedule": schedule, "data_dir": None}
    checkpoint = {"kind": "minifw train lenet", "settings": settings}
    if extendable:
        assert training.resumed_settings("lenet", checkpoint, {"epochs": 30})["epochs"] == 30
    else:
        with pytest.raises(training.SettingConflict, match="epochs 30 differs"):
            training.resumed_settings("lenet", checkpoint, {"epochs": 30})


def test_lenet_checkpoints_keep_the_format_earlier_ones_were_written_in(tmp_path):
    # a checkpoint written by `minifw train lenet` before minifw.training existed has exactly
    # these entries and settings; --resume must keep reading them
    for prefix, n in (("train", 4), ("t10k", 2)):
        write_idx(tmp_path / f"{prefix}-images-idx3-ubyte", np.zeros((n, 28, 28), np.uint8))
        write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte", np.arange(n, dtype=np.uint8))
    run = training.Run("lenet", {"data_dir": str(tmp_path)})
    checkpoint = run.checkpoint()
    assert checkpoint["kind"] == "minifw train lenet"
    assert set(checkpoint) == {"kind", "settings", "epoch", "model", "optimizer", "scheduler", "rng",
                               "order_rng", "shift_rng", "history"}
    assert set(checkpoint["settings"]) == {"epochs", "batch_size", "lr", "momentum", "weight_decay",
                                           "lr_schedule", "shift", "seed", "data_dir"}
    assert set(checkpoint["history"]) == {"epoch_loss", "test_accuracy", "batch_loss"}
    training.Run("lenet", training.resumed_settings("lenet", checkpoint)).resume(checkpoint)
