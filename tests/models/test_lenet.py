"""minifw.models.LeNet: Caffe's architecture and initialization, a short training run
on synthetic digits that the test draws, and resuming from a checkpoint bit for bit."""
import math

import numpy as np
import pytest

import minifw
import minifw.nn.functional as F
from minifw import optim
from minifw.data import DataLoader, TensorDataset
from minifw.models import LeNet

# conv 20 5x5 (+20), conv 50x20 5x5 (+50), fc 800 -> 500 (+500), fc 500 -> 10 (+10)
PARAMETER_SHAPES = {
    "conv1.weight": (20, 1, 5, 5), "conv1.bias": (20,),
    "conv2.weight": (50, 20, 5, 5), "conv2.bias": (50,),
    "fc1.weight": (500, 800), "fc1.bias": (500,),
    "fc2.weight": (10, 500), "fc2.bias": (10,),
}


def test_parameters_and_count():
    model = LeNet()
    assert {name: p.shape for name, p in model.named_parameters()} == PARAMETER_SHAPES
    assert sum(p.numel() for p in model.parameters()) == 520 + 25_050 + 400_500 + 5_010 == 431_080


@pytest.mark.parametrize("batch", [1, 3])
def test_shapes_through_the_layers(batch):
    model = LeNet()
    x = minifw.randn(batch, 1, 28, 28)
    shapes = []
    for layer in (model.conv1, model.pool1, model.conv2, model.pool2, model.flatten, model.fc1,
                  model.relu, model.fc2):
        x = layer(x)
        shapes.append(x.shape[1:])
    assert shapes == [(20, 24, 24), (20, 12, 12), (50, 8, 8), (50, 4, 4), (800,), (500,), (500,), (10,)]
    assert LeNet()(minifw.randn(batch, 1, 28, 28)).shape == (batch, 10)


def test_num_classes_and_in_channels():
    assert LeNet(num_classes=7, in_channels=3)(minifw.randn(2, 3, 28, 28)).shape == (2, 7)


@pytest.mark.parametrize("shape", [(2, 28, 28), (2, 1, 32, 32), (2, 3, 28, 28)],
                         ids=["no-channel-dim", "32x32", "3-channels"])
def test_wrong_input_shape(shape):
    with pytest.raises(ValueError, match=r"LeNet: input must be \(N, 1, 28, 28\) images"):
        LeNet()(minifw.zeros(*shape))


def test_caffe_xavier_initialization():
    """Weights U(-sqrt(3 / fan_in), sqrt(3 / fan_in)), i.e. variance 1 / fan_in; biases 0."""
    minifw.manual_seed(0)
    model = LeNet()
    for name, fan_in in (("conv1", 25), ("conv2", 500), ("fc1", 800), ("fc2", 500)):
        w = getattr(model, name).weight.detach().numpy()
        bound = math.sqrt(3 / fan_in)
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound, name
        assert w.var() == pytest.approx(1 / fan_in, rel=0.2), name
        assert not getattr(model, name).bias.detach().numpy().any(), name


def test_initialization_follows_manual_seed():
    minifw.manual_seed(3)
    a = LeNet().state_dict()
    minifw.manual_seed(3)
    b = LeNet().state_dict()
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)


def synthetic_digits(n, seed=0):
    """Ten classes of 28x28 images: class k is a bright 4x20 bar at row 2 + 2k, plus noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = rng.uniform(0, 0.3, (n, 1, 28, 28)).astype(np.float32)
    for i, k in enumerate(labels):
        images[i, 0, 2 + 2 * k:6 + 2 * k, 4:24] += 0.7
    return TensorDataset(minifw.tensor(images), minifw.tensor(labels))


def test_fifty_sgd_steps_at_least_halve_the_loss():
    minifw.manual_seed(0)
    model = LeNet()
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    loader = DataLoader(synthetic_digits(320), batch_size=32, shuffle=True,
                        generator=minifw.Generator().manual_seed(0))
    losses = []
    while len(losses) < 50:
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    assert first > 2.0  # about log(10) at the start
    assert last < first / 2, f"loss went from {first:.3f} to {last:.3f} in {len(losses)} steps"


def make_run(seed=0):
    minifw.manual_seed(seed)
    model = LeNet()
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    scheduler = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    order = minifw.Generator().manual_seed(seed)
    loader = DataLoader(synthetic_digits(96, seed=1), batch_size=32, shuffle=True, generator=order)
    return model, opt, scheduler, order, loader


def train_epoch(model, opt, scheduler, loader):
    for images, labels in loader:
        loss = F.cross_entropy(model(images), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    scheduler.step()


def test_resuming_from_a_checkpoint_is_bit_identical(tmp_path):
    model, opt, scheduler, order, loader = make_run()
    for _ in range(3):
        train_epoch(model, opt, scheduler, loader)
    uninterrupted = {k: v.numpy().copy() for k, v in model.state_dict().items()}

    model, opt, scheduler, order, loader = make_run()
    train_epoch(model, opt, scheduler, loader)
    minifw.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                 "scheduler": scheduler.state_dict(), "order": order.get_state(),
                 "rng": minifw.get_rng_state()}, tmp_path / "ckpt.npz")
    del model, opt, scheduler, order, loader

    model, opt, scheduler, order, loader = make_run(seed=5)  # everything is overwritten below
    checkpoint = minifw.load(tmp_path / "ckpt.npz")
    model.load_state_dict(checkpoint["model"])
    opt.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    order.set_state(checkpoint["order"])
    minifw.set_rng_state(checkpoint["rng"])
    for _ in range(2):
        train_epoch(model, opt, scheduler, loader)
    resumed = {k: v.numpy() for k, v in model.state_dict().items()}
    for name in uninterrupted:
        np.testing.assert_array_equal(resumed[name], uninterrupted[name], err_msg=name)
