import numpy as np
import pytest

import minifw


@pytest.fixture(params=minifw.backends.supported_isas())
def isa(request):
    """Run a test once for every instruction set this CPU supports."""
    before = minifw.backends.get_isa()
    minifw.backends.set_isa(request.param)
    yield request.param
    minifw.backends.set_isa(before)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
