"""Random numbers: one global generator, seeded by `minifw.manual_seed`.

Everything random in minifw (parameter initialization, `randn`/`rand`, dropout
masks, DataLoader shuffling without an explicit generator) draws from
`default_generator` unless given a `Generator`, so a seed makes a run
reproducible and saving `get_rng_state()` in a checkpoint makes it resumable.
"""
import contextlib
import numbers

import numpy as np


class Generator:
    """A seedable source of random numbers (a NumPy PCG64 generator inside).

        g = minifw.Generator().manual_seed(0)
        loader = DataLoader(ds, shuffle=True, generator=g)
    """

    def __init__(self, device="cpu"):
        if not (str(device) == "cpu" or str(device).startswith("cpu:")):
            raise ValueError(f"Generator: device must be 'cpu', got {device!r} (seed a generator "
                             f"with Generator().manual_seed(seed))")
        self.manual_seed(0)

    def manual_seed(self, seed):
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
            raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__} {seed!r}")
        if seed < 0:
            raise ValueError(f"manual_seed: seed must be >= 0, got {seed}")
        self._seed = int(seed)
        self.numpy = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The generator's state as plain ints and strings (JSON-friendly)."""
        return {"seed": self._seed, "bit_generator": self.numpy.bit_generator.state}

    def set_state(self, state):
        if not isinstance(state, dict) or "bit_generator" not in state:
            raise ValueError(f"set_state: expected a dict from Generator.get_state(), got {state!r}")
        self._seed = int(state.get("seed", 0))
        self.numpy.bit_generator.state = state["bit_generator"]

    def random_seed(self):
        """A fresh 63-bit seed drawn from this generator (for a derived generator or a kernel)."""
        return int(self.numpy.integers(0, 2**63 - 1))


default_generator = Generator()


def manual_seed(seed):
    """Seed the global generator; returns it."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the global generator from the operating system's entropy; returns the seed."""
    s = int(np.random.SeedSequence().entropy % (2**63))
    default_generator.manual_seed(s)
    return s


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """As torch.random.fork_rng: the global generator's state is put back when the block
    ends, so draws inside it leave later ones as they would have been. Every device draws
    from the global generator, so `devices` and `device_type` change nothing; enabled=False
    forks nothing."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def _numpy_rng(generator=None):
    """The NumPy generator behind `generator` (the global one when None)."""
    if generator is None:
        return default_generator.numpy
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a minifw.Generator or None, got {type(generator).__name__}")
    return generator.numpy
