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
    assert set(info["caches"]) == {"l1d", "l2"} and all(v >= 0 for v in info["caches"].values())
    assert info["gemm"]["kc"] > 0 and info["gemm"]["name"] == _native_gemm_name()


def _native_gemm_name():
    from minifw import _native

    return _native.gemm_kernel_name("float32")


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


def _imports_of_the_package():
    """{module: set of minifw modules it imports (anywhere in the file)}, read from the source."""
    import ast
    import pathlib

    root = pathlib.Path(minifw.__file__).parent
    names = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    names["minifw._native"] = None  # the extension: imports nothing of the package
    graph = {"minifw._native": set()}
    for module, path in names.items():
        if path is None:
            continue
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")
                base = base[:len(base) - node.level + 1] if node.level else []
                stem = ".".join(base + ([node.module] if node.module else []))
                # `from . import x` names a submodule when there is one, else the package itself
                targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in names else stem
                           for a in node.names]
            else:
                continue
            edges.update(t for t in targets if t in names and t != module)
    return graph


def test_the_import_graph_has_no_cycle():
    graph = _imports_of_the_package()
    assert "minifw.nn" not in graph["minifw.tensor"] and "minifw.tensor" not in graph["minifw.autograd"]
    state = {}

    def visit(module, path):
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                raise AssertionError(f"import cycle: {' -> '.join(path + [target])}")
            if target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def _run_child(code, cwd):
    """stdout of `code` in a fresh interpreter that imports this minifw (the installed one
    under pip install ., the source tree in a developer build), started outside the tree."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=cwd, env=env).stdout


def test_importing_tensor_does_not_import_nn(tmp_path):
    code = "import sys, minifw.tensor; print(sorted(m for m in sys.modules if m.startswith('minifw')))"
    loaded = eval(_run_child(code, tmp_path))
    assert "minifw.tensor" in loaded and "minifw.functions" in loaded
    assert not [m for m in loaded if m.split(".")[1:2] in (["nn"], ["optim"], ["data"], ["models"])]


def test_the_upper_layers_load_on_first_use(tmp_path):
    code = ("import sys, minifw\n"
            "assert 'minifw.nn' not in sys.modules\n"
            "assert minifw.nn.Linear(2, 3).weight.shape == (3, 2) and 'minifw.nn' in sys.modules\n"
            "from minifw import optim\n"
            "import minifw.data as data\n"
            "assert optim.SGD and data.DataLoader and 'nn' in dir(minifw)\n"
            "try:\n    minifw.nothing\nexcept AttributeError as e:\n    print(e)\n")
    assert _run_child(code, tmp_path).strip() == "module 'minifw' has no attribute 'nothing'"


def test_cudnn_benchmark_is_minifws_autotune_switch():
    before = minifw.backends.benchmark
    try:
        minifw.backends.cudnn.benchmark = True  # as a PyTorch script writes it
        assert minifw.backends.benchmark is True and minifw.backends.cudnn.benchmark is True
        minifw.backends.benchmark = False
        assert minifw.backends.cudnn.benchmark is False
        with pytest.raises(TypeError, match=r"cudnn\.benchmark must be a bool"):
            minifw.backends.cudnn.benchmark = 1
    finally:
        minifw.backends.benchmark = before


# ---- glibc malloc's thresholds, fixed at import (minifw.devices) ---------------------------
_STEP_LIKE_ROUNDS = r"""
import json, resource, numpy as np, minifw
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
counts = []
for _ in range(5):  # each round holds four 4 MiB arrays, then frees them, as a training step
    before = faults()
    arrays = [np.empty(4 << 20, np.uint8) for _ in range(4)]
    for a in arrays:
        a.fill(1)
    del arrays, a
    counts.append(faults() - before)
print(json.dumps({"settings": minifw.devices.host_malloc_settings(), "faults": counts}))
"""


def _run_with_env(code, **env):
    import json
    import subprocess
    import sys

    from childenv import child_env

    proc = subprocess.run([sys.executable, "-c", code], env=child_env(**env), capture_output=True,
                          text=True, timeout=120)
    return proc, (json.loads(proc.stdout) if proc.returncode == 0 else None)


def _glibc():
    import platform
    import sys

    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not _glibc(), reason="the thresholds are glibc's")
def test_freed_arrays_are_reused_without_new_page_faults():
    proc, out = _run_with_env(_STEP_LIKE_ROUNDS, MINIFW_MALLOC_TUNING="1")
    assert proc.returncode == 0, proc.stderr
    assert out["settings"] == {"mmap_threshold": 32 << 20, "trim_threshold": 512 << 20}
    assert minifw.info()["host_malloc"] == minifw.devices.host_malloc_settings()
    # 16 MiB is 4,096 pages: the first round maps them, later rounds reuse them (glibc's
    # defaults give the heap back after each round: about 2,000 faults a round)
    assert out["faults"][0] > 0 and max(out["faults"][1:]) < 200, out["faults"]


def test_malloc_tuning_can_be_turned_off():
    proc, out = _run_with_env(_STEP_LIKE_ROUNDS, MINIFW_MALLOC_TUNING="0")
    assert proc.returncode == 0, proc.stderr
    assert out["settings"] is None


def test_malloc_tuning_bad_value_is_a_clear_error():
    proc, _ = _run_with_env("import minifw", MINIFW_MALLOC_TUNING="yes")
    assert proc.returncode != 0
    assert "MINIFW_MALLOC_TUNING must be '0' or '1', got 'yes'" in proc.stderr
