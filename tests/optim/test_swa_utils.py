"""optim.swa_utils: AveragedModel (running mean, EMA, avg_fn, buffers), SWALR, update_bn,
against NumPy restatements and PyTorch (when installed), and errors."""
import numpy as np
import pytest

import minifw
from minifw import nn
from minifw.optim import swa_utils as S


def model():
    minifw.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def perturbed(m, k):
    with minifw.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(minifw.full(p.shape, float(k + i), dtype=p.dtype))
        m[1].running_mean.fill_(float(k))
    return m


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema_single", "swa_single"])
def test_averages(kind):
    base = model()
    make = {"swa": lambda: S.AveragedModel(base),
            "ema_multi": lambda: S.AveragedModel(base, multi_avg_fn=S.get_ema_multi_avg_fn(0.9)),
            "ema_single": lambda: S.AveragedModel(base, avg_fn=S.get_ema_avg_fn(0.9)),
            "swa_single": lambda: S.AveragedModel(base, avg_fn=S.get_swa_avg_fn())}
    avg = make[kind]()
    assert list(avg.state_dict())[0] == "n_averaged" or "n_averaged" in avg.state_dict()
    values = [1.0, 5.0, 2.0]
    for v in values:
        avg.update_parameters(perturbed(base, v))
    assert avg.n_averaged.item() == 3
    want = values[0]
    for i, v in enumerate(values[1:], start=1):
        want = want + (v - want) / (i + 1) if kind.startswith("swa") else 0.9 * want + 0.1 * v
    got = avg.module[0].weight.detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # buffers follow the model's unless use_buffers
    assert avg.module[1].running_mean.tolist() == [2.0] * 4


def test_use_buffers_averages_the_buffers_too():
    base = model()
    avg = S.AveragedModel(base, use_buffers=True)
    for v in (1.0, 3.0):
        avg.update_parameters(perturbed(base, v))
    np.testing.assert_allclose(avg.module[1].running_mean.numpy(), 2.0)


def test_forward_runs_the_copy_and_the_copy_is_its_own():
    base = model()
    avg = S.AveragedModel(base)
    x = minifw.randn(5, 3)
    base.eval(), avg.eval()
    np.testing.assert_allclose(avg(x).detach().numpy(), base(x).detach().numpy())
    perturbed(base, 7.0)
    assert avg.module[0].weight is not base[0].weight
    assert not np.allclose(avg(x).detach().numpy(), base(x).detach().numpy())


def test_update_bn_recomputes_the_statistics():
    base = model()
    data = [minifw.randn(8, 3) * 2 + 1 for _ in range(4)]
    base.eval()
    S.update_bn([(x, 0) for x in data], base)
    assert not base.training and base[1].momentum == 0.1
    h = minifw.cat([base[0](x) for x in data]).detach().numpy()
    # the cumulative average of the per-batch means and unbiased variances
    means = np.mean([base[0](x).detach().numpy().mean(0) for x in data], axis=0)
    variances = np.mean([base[0](x).detach().numpy().var(0, ddof=1) for x in data], axis=0)
    np.testing.assert_allclose(base[1].running_mean.numpy(), means, rtol=1e-5)
    np.testing.assert_allclose(base[1].running_var.numpy(), variances, rtol=1e-5)
    assert h.shape == (32, 4)
    S.update_bn(data, nn.Linear(2, 2))  # no batch norm: nothing to do


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
def test_swalr_matches_pytorch(strategy, anneal_epochs):
    torch = pytest.importorskip("torch")
    lrs = []
    for lib in (minifw, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.5)
        sched = (S if lib is minifw else torch.optim.swa_utils).SWALR(
            opt, swa_lr=0.05, anneal_epochs=anneal_epochs, anneal_strategy=strategy)
        seq = []
        for _ in range(7):
            seq.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        lrs.append(seq)
    np.testing.assert_allclose(lrs[0], lrs[1], rtol=1e-12)


def test_averaged_model_matches_pytorch():
    torch = pytest.importorskip("torch")
    base = model()
    mine = S.AveragedModel(base, multi_avg_fn=S.get_ema_multi_avg_fn(0.99))
    tbase = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(),
                                torch.nn.Linear(4, 2))
    theirs = torch.optim.swa_utils.AveragedModel(
        tbase, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.99))
    assert list(mine.state_dict()) == list(theirs.state_dict())
    rng = np.random.default_rng(0)
    for _ in range(4):
        state = {k: rng.standard_normal(tuple(v.shape)).astype(np.float32) if v.dtype == minifw.float32
                 else v.numpy() for k, v in base.state_dict().items()}
        base.load_state_dict({k: minifw.tensor(v) for k, v in state.items()})
        tbase.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})
        mine.update_parameters(base)
        theirs.update_parameters(tbase)
    for (k, a), b in zip(mine.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7, err_msg=k)


def test_errors():
    with pytest.raises(ValueError, match=r"decay must be a number in \[0, 1\]"):
        S.get_ema_multi_avg_fn(1.5)
    with pytest.raises(ValueError, match="avg_fn or multi_avg_fn, not both"):
        S.AveragedModel(model(), avg_fn=S.get_swa_avg_fn(), multi_avg_fn=S.get_swa_multi_avg_fn())
    with pytest.raises(TypeError, match="model must be a minifw.nn.Module"):
        S.AveragedModel([1, 2])
    opt = minifw.optim.SGD([minifw.zeros(1, requires_grad=True)], lr=0.5)
    with pytest.raises(ValueError, match="anneal_strategy must be 'cos' or 'linear'"):
        S.SWALR(opt, 0.05, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be an int >= 0"):
        S.SWALR(opt, 0.05, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must be a finite number >= 0"):
        S.SWALR(opt, float("nan"))
    avg = S.AveragedModel(model())
    with pytest.raises(ValueError, match="not the model it was made from"):
        avg.update_parameters(nn.Linear(3, 4))
