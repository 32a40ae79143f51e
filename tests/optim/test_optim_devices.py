"""The optimizers on the GPU devices: "cudasim" (NumPy arrays in host memory) and "cuda" (a GPU
where there is one, else the emulated one: CuPy's stand-in, targets.emulate_cuda). Each step is
array code that NumPy hands to the device's array library, so the parameters and every state
buffer stay on the device and the trajectory equals the CPU's."""
import numpy as np
import pytest

import minifw
from minifw import devices, nn, optim
from minifw.optim import lr_scheduler


# Element-wise float32 arithmetic in the same order on every device; a real GPU may round a
# square root or a division differently in the last place.
RTOL, ATOL = 1e-6, 1e-7



def host(t):
    return t.detach().cpu().numpy()


OPTIMIZERS = {
    "Adadelta": lambda ps: optim.Adadelta(ps, lr=0.5, weight_decay=0.01),
    "Adadelta-maximize": lambda ps: optim.Adadelta(ps, maximize=True),
    "Adagrad": lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.1, initial_accumulator_value=0.1,
                                        weight_decay=0.01),
    "RMSprop": lambda ps: optim.RMSprop(ps, lr=0.01),
    "RMSprop-centered-momentum": lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.9, centered=True,
                                                          weight_decay=0.01, maximize=True),
    "Adam": lambda ps: optim.Adam(ps, lr=0.01, decoupled_weight_decay=True, weight_decay=0.1),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_steps_on_the_device_equal_the_cpus(dev, name):
    make = OPTIMIZERS[name]
    g = minifw.Generator().manual_seed(4)
    start = minifw.randn(3, 4, generator=g)
    grads = [minifw.randn(3, 4, generator=g) for _ in range(3)]
    results = {}
    for device in ("cpu", dev):
        p = nn.Parameter(start.to(device, copy=True))
        opt = make([p])
        for grad in grads:
            p.grad = grad.to(device)
            opt.step()
        assert p.device == device and devices.of(p._data) == device
        arrays = [v for v in opt.state[p].values() if devices.is_array(v)]
        assert arrays and all(devices.of(a) == device and a.dtype == np.float32 for a in arrays)
        assert all(v.device == device for v in opt.state_dict()["state"][0].values()
                   if isinstance(v, minifw.Tensor))
        results[str(device)] = host(p)
    np.testing.assert_allclose(results[str(dev)], results["cpu"], rtol=RTOL, atol=ATOL)


def test_a_cpu_state_dict_loads_onto_the_device_and_continues_alike(dev):
    def run(p, opt, grads):
        for grad in grads:
            p.grad = grad.to(p.device)
            opt.step()

    g = minifw.Generator().manual_seed(5)
    start = minifw.randn(2, 3, generator=g)
    grads = [minifw.randn(2, 3, generator=g) for _ in range(4)]
    cpu = nn.Parameter(start.clone())
    cpu_opt = optim.RMSprop([cpu], lr=0.01, momentum=0.9, centered=True)
    run(cpu, cpu_opt, grads[:2])
    moved = nn.Parameter(cpu.detach().to(dev, copy=True))
    moved_opt = optim.RMSprop([moved], lr=0.01, momentum=0.9, centered=True)
    moved_opt.load_state_dict(cpu_opt.state_dict())
    assert all(devices.of(v) == dev for v in moved_opt.state[moved].values() if devices.is_array(v))
    run(cpu, cpu_opt, grads[2:])
    run(moved, moved_opt, grads[2:])
    np.testing.assert_allclose(host(moved), host(cpu), rtol=RTOL, atol=ATOL)


def test_one_cycle_drives_a_device_optimizer(dev):
    p = nn.Parameter(minifw.ones(2, device=dev))
    opt = optim.RMSprop([p], lr=0.01)
    scheduler = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=5)
    for _ in range(5):
        p.grad = minifw.ones(2, device=dev)
        opt.step()
        scheduler.step()
    assert p.device == dev and "momentum_buffer" in opt.state[p]
    assert devices.of(opt.state[p]["momentum_buffer"]) == dev
