"""The package surface: minifw.info(), thread count and ISA switches."""
import pytest

import minifw
from minifw import backends


def test_info_has_the_documented_keys():
    info = minifw.info()
    assert {"minifw", "isa", "num_threads", "backends"} <= set(info)
    assert info["minifw"] == minifw.__version__
    assert info["isa"] == backends.get_isa() and info["isa"] in ("avx512", "avx2", "generic")
    assert isinstance(info["num_threads"], int) and info["num_threads"] == minifw.get_num_threads() >= 1
    assert "cpu" in info["backends"]


def test_supported_isas_are_ordered_and_include_the_current_one():
    isas = backends.supported_isas()
    assert isas[0] == "generic" and backends.get_isa() in isas
    assert isas == [i for i in ("generic", "avx2", "avx512") if i in isas]


@pytest.mark.parametrize("n,exc,pattern", [
    pytest.param(0, ValueError, r"set_num_threads: n must be >= 1, got 0", id="zero"),
    pytest.param(-3, ValueError, r"set_num_threads: n must be >= 1, got -3", id="negative"),
    pytest.param("2", TypeError, r"set_num_threads: n must be an int, got str", id="str"),
    pytest.param(2.0, TypeError, r"set_num_threads: n must be an int, got float", id="float"),
    pytest.param(True, TypeError, r"set_num_threads: n must be an int, got bool", id="bool"),
    pytest.param(None, TypeError, r"set_num_threads: n must be an int, got NoneType", id="none"),
])
def test_set_num_threads_bad_input(n, exc, pattern):
    before = minifw.get_num_threads()
    with pytest.raises(exc, match=pattern):
        minifw.set_num_threads(n)
    assert minifw.get_num_threads() == before


@pytest.mark.parametrize("name", ["bogus", "AVX2", "", None, "sse4"])
def test_set_isa_bad_name(name):
    before = backends.get_isa()
    with pytest.raises(ValueError, match=r"set_isa: name must be one of 'avx512', 'avx2', 'generic'; got "):
        backends.set_isa(name)
    assert backends.get_isa() == before


def test_benchmark_switch_defaults_off():
    assert backends.benchmark is False
