"""Placing test inputs on the device under test (see the `target` fixture)."""
import numpy as np

from minifw import devices


def place(device, *arrays):
    """Copies of `arrays` on `device` (None stays None); one array for one argument."""
    out = tuple(None if a is None else devices.to_device(np.array(a), devices.device(device))
                for a in arrays)
    return out[0] if len(out) == 1 else out


def assert_on(device, *arrays):
    """Every array is on `device`: results stay where their inputs were."""
    for a in arrays:
        assert devices.of(a) == devices.device(device), f"result on {devices.of(a)}, expected {device}"
