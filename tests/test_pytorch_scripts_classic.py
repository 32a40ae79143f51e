"""Everyday PyTorch scripts in the style of the classic examples and tutorials, run on minifw
with only their imports renamed (tests/scripts/): a DCGAN on synthetic 16x16 images
(ConvTranspose2d, BatchNorm2d, BCELoss, weights_init through model.apply; dcgan.py), a VAE
(the reparameterization trick with randn_like, a summed binary cross-entropy plus KL loss,
no_grad sampling, a checkpoint round trip through torch.save/torch.load in a buffer that
resumes the optimizer; vae.py), sine-wave prediction with two stacked LSTMCells in float64
trained by L-BFGS with a closure (time_sequence.py), REINFORCE on a small hand-written
environment (Categorical sampling and log_prob, normalized discounted returns; reinforce.py),
a sub-pixel super-resolution CNN (PixelShuffle, orthogonal init, PSNR; super_resolution.py)
and a tiny ResNet trained the CIFAR way (Nesterov SGD, OneCycleLR, gradient accumulation,
label smoothing, tensor-op augmentation, inference_mode, a checkpoint dict saved and resumed;
resnet_cifar.py). Where PyTorch is installed, the same files run under it (their imports
renamed back) from the same initial weights and data, with the few random draws the
frameworks make differently (randn_like in the VAE, Categorical.sample in REINFORCE) replaced
in both by the same NumPy draws, and the first steps' losses, gradients and parameters must
agree."""
import math
import os
import re
import runpy

import numpy as np
import pytest

import minifw
from pytorch_scripts import IMPORT, SCRIPTS, lines_naming_minifw, run_under_torch

NAMES = ["dcgan.py", "vae.py", "time_sequence.py", "reinforce.py", "super_resolution.py",
         "resnet_cifar.py"]



def _run(name):
    return runpy.run_path(os.path.join(SCRIPTS, name))



def _quiet(*args):
    pass


def _arrays(state):
    return {k: v.detach().numpy().copy() for k, v in state.items()}


def _loader(torch, state):
    return lambda model: model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})


def _assert_same_state(mine, theirs, rtol=1e-4, atol=1e-6):
    mine, theirs = mine.state_dict(), theirs.state_dict()
    assert list(mine) == list(theirs)
    for k, v in theirs.items():
        np.testing.assert_allclose(mine[k].numpy(), v.numpy(), rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("name", NAMES)
def test_the_scripts_differ_from_pytorch_code_only_in_their_imports(name):
    code = lines_naming_minifw(name)
    assert code and all(IMPORT.match(line) for line in code), code


# --- dcgan.py ----------------------------------------------------------------------------------

def test_the_dcgan_script_trains(capsys):
    script = _run("dcgan.py")
    result = script["main"]()
    out = capsys.readouterr().out
    history = result["history"]
    assert len(history["D"]) == 100
    assert all(math.isfinite(v) for k in history for v in history[k])
    # at the N(0, 0.02) start the discriminator says 1/2 to everything: 2 ln 2 and ln 2
    assert history["D"][0] == pytest.approx(2 * math.log(2), abs=0.1)
    assert history["G"][0] == pytest.approx(math.log(2), abs=0.1)
    # the fixed-noise samples' pixels move from ~0 (the Tanh of small numbers) towards the
    # real images' -1/+1: distance 1.00 -> 0.68 measured (0.60-0.68 over three seeds; PyTorch
    # alike)
    assert result["before"] == pytest.approx(1.0, abs=0.02)
    assert result["after"] < 0.75 * result["before"]
    samples = result["samples"]
    assert tuple(samples.shape) == (64, 1, 16, 16) and not samples.requires_grad
    assert samples.abs().max().item() <= 1.0
    # the generator is back in training mode after rendering in eval mode
    assert result["netG"].training and all(m.training for m in result["netG"].modules())
    assert re.search(r"^\[0/100\] Loss_D: \d\.\d{4} Loss_G: \d\.\d{4} D\(x\): 0\.\d{4} "
                     r"D\(G\(z\)\): 0\.\d{4} / 0\.\d{4}$", out, re.M), out


def test_the_dcgan_weights_init_reaches_every_convolution_and_batchnorm():
    script = _run("dcgan.py")
    minifw.manual_seed(0)
    netG = script["Generator"]()
    netG.apply(script["weights_init"])
    kinds = {type(m).__name__ for m in netG.modules()}
    assert {"ConvTranspose2d", "BatchNorm2d"} <= kinds
    convs = [m for m in netG.modules() if type(m).__name__ == "ConvTranspose2d"]
    weights = np.concatenate([m.weight.detach().numpy().ravel() for m in convs])
    assert abs(weights.mean()) < 0.003 and weights.std() == pytest.approx(0.02, rel=0.1)
    for m in netG.modules():
        if type(m).__name__ == "BatchNorm2d":
            w = m.weight.detach().numpy()
            assert abs(w.mean() - 1) < 0.02 and 0 < w.std() < 0.05
            assert np.all(m.bias.detach().numpy() == 0)


def test_the_dcgan_script_under_pytorch_gives_the_same_steps(tmp_path):
    torch = pytest.importorskip("torch")
    mine = _run("dcgan.py")["main"](steps=10, log=_quiet)
    state = {part: _arrays(tensors) for part, tensors in mine["initial"].items()}

    def init(netG, netD):
        _loader(torch, state["G"])(netG)
        _loader(torch, state["D"])(netD)

    theirs = run_under_torch("dcgan.py", tmp_path)["main"](steps=10, init=init, log=_quiet)
    # BCELoss on both sides of the detach(), BatchNorm's batch statistics, Adam(0.5, 0.999):
    # within 2e-7 of each other over ten steps measured
    for key in mine["history"]:
        assert mine["history"][key] == pytest.approx(theirs["history"][key], rel=1e-4), key
    np.testing.assert_allclose(mine["samples"].numpy(), theirs["samples"].numpy(), atol=1e-5)
    # the parameters and the running statistics after ten steps (Adam divides each gradient by
    # its running size, so where a gradient is rounding noise its steps differ by more than
    # rounding: 6e-6 apart at most measured)
    _assert_same_state(mine["netG"], theirs["netG"], atol=5e-5)
    _assert_same_state(mine["netD"], theirs["netD"], atol=5e-5)


# --- vae.py ------------------------------------------------------------------------------------

def _numpy_randn_like(monkeypatch, fw, seed=0):
    """Replace fw.randn_like by draws from one NumPy stream, so two runs see the same noise."""
    rng = np.random.RandomState(seed)
    original = fw.randn_like

    def randn_like(input, **kwargs):
        template = original(input, **kwargs)
        return fw.from_numpy(rng.randn(*template.shape).astype(np.float32)).to(template.dtype)

    monkeypatch.setattr(fw, "randn_like", randn_like)


def test_the_vae_script_trains_and_samples(capsys):
    script = _run("vae.py")
    result = script["main"]()
    out = capsys.readouterr().out
    # the test loss per image: 45 -> 28 measured (PyTorch alike)
    assert result["test_losses"][-1] < 0.75 * result["before"]
    assert len(result["losses"]) == 6 * 16 and all(math.isfinite(v) for v in result["losses"])
    assert np.mean(result["losses"][-16:]) < 0.75 * np.mean(result["losses"][:4])
    sample = result["sample"]
    assert tuple(sample.shape) == (16, 1, 8, 8) and not sample.requires_grad
    assert 0 < sample.min().item() and sample.max().item() < 1
    assert re.search(r"^====> Epoch: 4 Average loss: \d+\.\d{4}$", out, re.M), out
    # the optimizer after the round trip carries on from the saved step counts
    state = result["optimizer"].state_dict()["state"]
    assert {int(s["step"]) for s in state.values()} == {6 * 16}


def test_the_vae_checkpoint_round_trip_resumes_the_same_run(monkeypatch):
    script = _run("vae.py")
    _numpy_randn_like(monkeypatch, minifw)
    straight = script["main"](resume_at=None, log=_quiet)
    _numpy_randn_like(monkeypatch, minifw)
    resumed = script["main"](resume_at=2, log=_quiet)
    assert resumed["losses"] == straight["losses"]
    assert resumed["test_losses"] == straight["test_losses"]
    for k, v in straight["model"].state_dict().items():
        np.testing.assert_array_equal(resumed["model"].state_dict()[k].numpy(), v.numpy(),
                                      err_msg=k)


def test_the_vae_script_under_pytorch_gives_the_same_steps(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    _numpy_randn_like(monkeypatch, minifw)
    mine = _run("vae.py")["main"](epochs=2, resume_at=1, log=_quiet)
    _numpy_randn_like(monkeypatch, torch)
    theirs = run_under_torch("vae.py", tmp_path)["main"](
        epochs=2, resume_at=1, init=_loader(torch, _arrays(mine["initial"])), log=_quiet)
    assert mine["before"] == pytest.approx(theirs["before"], rel=1e-5)
    # two epochs, with the round trip through torch.save/torch.load between them
    assert len(mine["losses"]) == 32
    assert mine["losses"] == pytest.approx(theirs["losses"], rel=1e-4)
    assert mine["test_losses"] == pytest.approx(theirs["test_losses"], rel=1e-4)
    _assert_same_state(mine["model"], theirs["model"])


# --- time_sequence.py --------------------------------------------------------------------------

def test_the_time_sequence_script_trains_and_predicts_ahead(capsys):
    result = _run("time_sequence.py")["main"]()
    out = capsys.readouterr().out
    model = result["model"]
    assert all(p.dtype == minifw.float64 for p in model.parameters())
    # L-BFGS calls the closure several times per step; step() returns the first evaluation
    closures, steps = result["closure_losses"], result["step_losses"]
    assert len(closures) > 2 * len(steps) and steps[0] == closures[0]
    # 0.54 -> 0.019 on the training waves, 0.56 -> 0.005 on the test waves measured
    assert steps[-1] < 0.1 * closures[0]
    assert result["test_losses"][-1] < 0.05 * result["before"]
    # twelve steps past the input, fed its own predictions: mean error 0.66 -> 0.03 measured
    assert result["prediction"].shape == (4, 24 + 12)
    assert result["future_error"] < 0.3 * result["future_before"]
    assert re.search(r"^STEP: 3 loss: \d\.\d{6} test loss: \d\.\d{6}$", out, re.M), out


def test_the_time_sequence_script_under_pytorch_gives_the_same_steps(tmp_path):
    torch = pytest.importorskip("torch")
    mine = _run("time_sequence.py")["main"](steps=2, log=_quiet)
    theirs = run_under_torch("time_sequence.py", tmp_path)["main"](
        steps=2, init=_loader(torch, _arrays(mine["initial"])), log=_quiet)
    assert mine["initial"]["lstm1.weight_ih"].dtype == minifw.float64
    # in float64, every closure evaluation of L-BFGS's two steps agrees closely
    assert len(mine["closure_losses"]) == len(theirs["closure_losses"])
    assert mine["closure_losses"] == pytest.approx(theirs["closure_losses"], rel=1e-9)
    assert mine["test_losses"] == pytest.approx(theirs["test_losses"], rel=1e-9)
    np.testing.assert_allclose(mine["prediction"], theirs["prediction"], rtol=1e-9, atol=1e-12)
    _assert_same_state(mine["model"], theirs["model"], rtol=1e-9, atol=1e-12)


# --- reinforce.py ------------------------------------------------------------------------------

def test_the_reinforce_script_learns_to_balance(capsys):
    script = _run("reinforce.py")
    result = script["main"]()
    out = capsys.readouterr().out
    history = result["history"]
    assert len(history["reward"]) == 100
    # the episode return (steps survived, at most 25): 10.8 -> 24.1 over the first and last
    # twenty episodes measured (18.7-24.9 over four seeds)
    assert np.mean(history["reward"][-20:]) > np.mean(history["reward"][:20]) + 5
    assert history["running_reward"][-1] > history["running_reward"][0]
    # the policy starts near uniform (entropy ln 2) and grows surer
    assert history["entropy"][0] == pytest.approx(math.log(2), abs=0.02)
    assert np.mean(history["entropy"][-10:]) < 0.8 * history["entropy"][0]
    assert all(math.isfinite(v) for v in history["loss"])
    assert re.search(r"^Episode 20\tLast reward: \d+\.00\tAverage reward: \d+\.\d\d$", out,
                     re.M), out
    # the episode's lists are emptied after each update
    policy = result["policy"]
    assert policy.rewards == [] and policy.saved_log_probs == [] and policy.entropies == []


def test_the_reinforce_loss_is_the_normalized_return_weighted_log_probability():
    script = _run("reinforce.py")
    minifw.manual_seed(0)
    policy = script["Policy"](dropout=0.0)
    optimizer = minifw.optim.SGD(policy.parameters(), lr=0.0)
    states = np.eye(7, dtype=np.float32)[[3, 4, 2]]
    actions = [script["select_action"](policy, s) for s in states]
    log_probs = [lp.item() for lp in policy.saved_log_probs]
    policy.rewards.extend([1.0, 1.0, 1.0])
    loss, _ = script["finish_episode"](policy, optimizer, 0.5)
    # returns 1.75, 1.5, 1 normalized by their mean and (unbiased) standard deviation
    returns = np.array([1.75, 1.5, 1.0])
    normalized = (returns - returns.mean()) / (returns.std(ddof=1) + np.finfo(np.float32).eps)
    assert loss == pytest.approx(-(np.array(log_probs) * normalized).sum(), rel=1e-5)
    assert all(a in (0, 1) for a in actions)


def _numpy_categorical(monkeypatch, fw, seed=0):
    """Categorical.sample by inverting the CDF at uniforms from one NumPy stream."""
    rng = np.random.RandomState(seed)

    def sample(self, sample_shape=()):
        probs = self.probs.detach().numpy()
        u = rng.rand(*probs.shape[:-1])
        index = np.minimum((probs.cumsum(-1) < u[..., None]).sum(-1), probs.shape[-1] - 1)
        return fw.from_numpy(np.asarray(index, dtype=np.int64))

    monkeypatch.setattr(fw.distributions.Categorical, "sample", sample)


def test_the_reinforce_script_under_pytorch_gives_the_same_episodes(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    _numpy_categorical(monkeypatch, minifw)
    mine = _run("reinforce.py")["main"](episodes=12, dropout=0.0, log=_quiet)
    _numpy_categorical(monkeypatch, torch)
    theirs = run_under_torch("reinforce.py", tmp_path)["main"](
        episodes=12, dropout=0.0, init=_loader(torch, _arrays(mine["initial"])), log=_quiet)
    # the same actions from the same probabilities: the same episodes ...
    assert mine["history"]["reward"] == theirs["history"]["reward"]
    assert mine["history"]["length"] == theirs["history"]["length"]
    # ... and the same updates
    assert mine["history"]["loss"] == pytest.approx(theirs["history"]["loss"], rel=1e-4, abs=1e-5)
    assert mine["history"]["entropy"] == pytest.approx(theirs["history"]["entropy"], rel=1e-5)
    _assert_same_state(mine["policy"], theirs["policy"])


# --- super_resolution.py -----------------------------------------------------------------------

def test_the_super_resolution_script_raises_the_psnr(capsys):
    result = _run("super_resolution.py")["main"]()
    out = capsys.readouterr().out
    # 7.4 dB -> 21.0 dB measured (PyTorch alike); each epoch better than the last
    psnrs = result["psnrs"]
    assert psnrs[-1] > result["before"] + 8
    assert all(b > a for a, b in zip(psnrs, psnrs[1:]))
    assert np.mean(result["losses"][-8:]) < 0.2 * np.mean(result["losses"][:4])
    assert re.search(r"^===> Epoch 1 Complete: Avg\. Loss: \d\.\d{4}  Avg\. PSNR: \d+\.\d{4} dB$",
                     out, re.M), out


def test_the_super_resolution_net_upscales_and_starts_orthogonal():
    script = _run("super_resolution.py")
    minifw.manual_seed(0)
    model = script["Net"](upscale_factor=3)
    x = minifw.rand(2, 1, 5, 7)
    assert tuple(model(x).shape) == (2, 1, 15, 21)
    gain = math.sqrt(2.0)
    for name, expected_gain in (("conv1", gain), ("conv2", gain), ("conv3", gain), ("conv4", 1.0)):
        w = getattr(model, name).weight.detach().numpy()
        flat = w.reshape(w.shape[0], -1)
        # rows orthonormal (times the gain) where there are no more rows than columns
        assert flat.shape[0] <= flat.shape[1], name
        np.testing.assert_allclose(flat @ flat.T, expected_gain ** 2 * np.eye(flat.shape[0]),
                                   atol=1e-5, err_msg=name)


def test_the_super_resolution_script_under_pytorch_gives_the_same_steps(tmp_path):
    torch = pytest.importorskip("torch")
    mine = _run("super_resolution.py")["main"](epochs=1, log=_quiet)
    theirs = run_under_torch("super_resolution.py", tmp_path)["main"](
        epochs=1, init=_loader(torch, _arrays(mine["initial"])), log=_quiet)
    assert mine["before"] == pytest.approx(theirs["before"], rel=1e-5)
    assert mine["nearest"] == pytest.approx(theirs["nearest"], rel=1e-5)
    assert len(mine["losses"]) == 16
    assert mine["losses"] == pytest.approx(theirs["losses"], rel=1e-4)
    assert mine["psnrs"] == pytest.approx(theirs["psnrs"], rel=1e-4)
    _assert_same_state(mine["model"], theirs["model"], rtol=1e-3, atol=1e-5)


# --- resnet_cifar.py ---------------------------------------------------------------------------

def test_the_resnet_script_trains(capsys):
    result = _run("resnet_cifar.py")["main"]()
    out = capsys.readouterr().out
    (loss0, acc0), (loss1, acc1) = result["before"], result["results"][-1]
    # four classes: test accuracy 0.29 -> 0.95 and loss 1.40 -> 0.64 measured (PyTorch alike;
    # label smoothing keeps the loss above ~0.4)
    assert acc0 < 0.45 and acc1 > 0.8 and loss1 < 0.7 * loss0
    assert len(result["losses"]) == 4 * 16
    assert np.mean(result["losses"][-16:]) < 0.7 * np.mean(result["losses"][:16])
    # one OneCycleLR step per optimizer step (two micro-batches each): warm up to max_lr, then
    # anneal far below the start
    lrs = result["lrs"]
    assert len(lrs) == 4 * 8
    peak = int(np.argmax(lrs))
    assert 0 < peak < len(lrs) - 1 and lrs[peak] == pytest.approx(0.1, rel=0.05)
    assert lrs[0] == pytest.approx(0.1 / 25) and lrs[-1] < lrs[0]
    assert result["scheduler"].last_epoch == 4 * 8
    assert re.search(r"^epoch 3: train loss \d\.\d{4}, test loss \d\.\d{4}, test accuracy "
                     r"\d+\.\d%$", out, re.M), out


def test_the_resnet_checkpoint_resumes_the_same_run(tmp_path):
    script = _run("resnet_cifar.py")
    straight = script["main"](epochs=3, resume_at=None, log=_quiet)
    resumed = script["main"](epochs=3, resume_at=1, checkpoint_dir=str(tmp_path), log=_quiet)
    # the model, the momentum buffers and the schedule's position all come back from the file
    assert resumed["losses"] == straight["losses"]
    assert resumed["lrs"] == straight["lrs"]
    assert resumed["results"] == straight["results"]
    checkpoint = minifw.load(str(tmp_path / "checkpoint.pth"))
    assert set(checkpoint) == {"epoch", "model", "optimizer", "scheduler"}
    assert checkpoint["epoch"] == 2
    assert "layer2.0.downsample.1.running_var" in checkpoint["model"]
    assert all("momentum_buffer" in s for s in checkpoint["optimizer"]["state"].values())


class _Draws:
    """A stand-in for the script's NumPy RandomState with the crop offsets and flip draws given."""

    def __init__(self, offsets, uniforms):
        self.offsets, self.uniforms = np.array(offsets), np.array(uniforms)

    def randint(self, low, high, size):
        assert (low, high, size) == (0, 9, self.offsets.shape)
        return self.offsets

    def rand(self, n):
        return self.uniforms


def test_the_random_crop_and_flip():
    crop_flip = _run("resnet_cifar.py")["random_crop_flip"]
    images = minifw.arange(2 * 3 * 4 * 4, dtype=minifw.float32).reshape(2, 3, 4, 4)
    x = images.numpy()
    # padded by 4, the images sit at rows and columns 4..7: offset (4, 4) is the image itself
    out = crop_flip(images, _Draws([[4, 4], [0, 8]], [0.9, 0.1]), padding=4).numpy()
    assert out.shape == (2, 3, 4, 4)
    np.testing.assert_array_equal(out[0], x[0])
    np.testing.assert_array_equal(out[1], 0)  # only padding
    # offset (5, 3): down one row and right one column, zeros coming in; the second flipped
    out = crop_flip(images, _Draws([[5, 3], [4, 4]], [0.9, 0.1]), padding=4).numpy()
    shifted = np.zeros((3, 4, 4), dtype=np.float32)
    shifted[:, :3, 1:] = x[0, :, 1:, :3]
    np.testing.assert_array_equal(out[0], shifted)
    np.testing.assert_array_equal(out[1], x[1][:, :, ::-1])


def test_the_resnet_script_under_pytorch_gives_the_same_steps(tmp_path):
    torch = pytest.importorskip("torch")
    mine = _run("resnet_cifar.py")["main"](epochs=2, resume_at=1, shuffle=False, log=_quiet)
    theirs = run_under_torch("resnet_cifar.py", tmp_path)["main"](
        epochs=2, resume_at=1, shuffle=False, init=_loader(torch, _arrays(mine["initial"])),
        log=_quiet)
    assert mine["before"] == pytest.approx(theirs["before"], rel=1e-5)
    # the same crops and flips, Nesterov momentum with weight decay, OneCycleLR, the
    # accumulated micro-batches, and the checkpoint round trip after the first epoch
    assert mine["lrs"] == pytest.approx(theirs["lrs"], rel=1e-12)
    assert len(mine["losses"]) == 32
    assert mine["losses"] == pytest.approx(theirs["losses"], rel=1e-3)
    assert [acc for _, acc in mine["results"]] == [acc for _, acc in theirs["results"]]
    _assert_same_state(mine["model"], theirs["model"], rtol=1e-3, atol=1e-5)
