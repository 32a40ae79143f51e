"""Thread counts and instruction sets: results are right for 1 and 2 threads
and for every ISA, whether it is chosen by set_isa or by MINIFW_ISA at import."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minifw
from minifw import backends, ops
from reference import (assert_within_bound, conv2d_backward_data_ref, conv2d_backward_filter_ref,
                       conv2d_forward_ref, gemm_ref, tolerance)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
DTYPES = [np.float32, np.float64]
DTYPE_IDS = ["float32", "float64"]


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    before = minifw.get_num_threads()
    minifw.set_num_threads(request.param)
    assert minifw.get_num_threads() == request.param
    yield request.param
    minifw.set_num_threads(before)


# ---- GEMM ------------------------------------------------------------------------

@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True), (False, True)], ids=["NN", "TT", "NT"])
@pytest.mark.parametrize("m,n,k", [(97, 113, 131), (300, 7, 290), (5, 600, 80), (521, 533, 401)],
                         ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_gemm_with_threads(threads, dtype, m, n, k, trans_a, trans_b):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(dtype)
    c0 = c.copy()
    ops.gemm(a, b, c, trans_a=trans_a, trans_b=trans_b, alpha=1.5, beta=-0.5)
    ref = gemm_ref(a, b, c0, trans_a, trans_b, 1.5, -0.5)
    ref_abs = gemm_ref(np.abs(a), np.abs(b), np.abs(c0), trans_a, trans_b, 1.5, 0.5)
    assert_within_bound(c, ref, ref_abs, *tolerance(dtype), what=f"{threads} threads")


# ---- convolution -----------------------------------------------------------------

THREAD_CASES = [  # each GEMM is past the size (64^3 multiply-adds) where threads start
    pytest.param((4, 16, 15, 13), (24, 16, 3, 3), dict(padding=1), id="3x3_pad1"),
    # past every size at which Winograd's transforms and 36 GEMMs run on several threads
    pytest.param((3, 40, 30, 29), (36, 40, 3, 3), dict(padding=1), id="winograd_threaded"),
    pytest.param((4, 24, 21, 20), (16, 12, 5, 3), dict(stride=2, padding=(2, 1), dilation=(1, 2), groups=2),
                 id="strided_dilated_groups2"),
    # the direct algorithm's row tiles forward (48 channels) and backward-data (32)
    pytest.param((3, 32, 17, 30), (48, 32, 5, 5), dict(padding=2), id="direct_rows"),
    pytest.param((4, 32, 9, 11), (40, 32, 1, 1), {}, id="1x1"),
    pytest.param((2, 20, 12, 12), (50, 20, 5, 5), {}, id="lenet_conv2"),
    pytest.param((9, 20, 12, 12), (50, 20, 5, 5), {}, id="lenet_conv2_n9_chunked_data"),
    pytest.param((9, 2, 40, 40), (4, 1, 3, 3), dict(stride=2, padding=1, dilation=2, groups=2),
                 id="dot_filter_n9_groups2"),
    # the depthwise algorithm's planes split over threads (and its filters: one channel per thread)
    pytest.param((4, 32, 30, 29), (64, 1, 3, 3), dict(padding=1, groups=32), id="depthwise_mult2"),
    pytest.param((3, 24, 33, 31), (24, 1, 5, 5), dict(stride=2, padding=2, groups=24), id="depthwise_stride2"),
]


def _run(direction, algo, x, w, dy, geometry):
    if direction == "forward":
        return ops.conv2d_forward(x, w, algo=algo, **geometry)
    if direction == "backward_data":
        return ops.conv2d_backward_data(dy, w, x.shape, algo=algo, **geometry)
    return ops.conv2d_backward_filter(x, dy, w.shape, algo=algo, **geometry)


def _ref(direction, x, w, dy, geometry):
    if direction == "forward":
        return conv2d_forward_ref(x, w, None, **geometry)
    if direction == "backward_data":
        return conv2d_backward_data_ref(dy, w, x.shape, **geometry)
    return conv2d_backward_filter_ref(x, dy, w.shape, **geometry)


@pytest.mark.parametrize("direction", ["forward", "backward_data", "backward_filter"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("x_shape,w_shape,geometry", THREAD_CASES)
def test_conv_with_threads(threads, x_shape, w_shape, geometry, dtype, direction):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    dy = rng.standard_normal(ops.ConvProblem(x_shape, w_shape, **geometry).out_shape).astype(dtype)
    ref = _ref(direction, x, w, dy, geometry)
    ref_abs = _ref(direction, np.abs(x), np.abs(w), np.abs(dy), geometry)
    problem = ops.ConvProblem(x_shape, w_shape, dtype=dtype, **geometry)
    for algo in ops.conv_algorithms(problem, direction):
        got = _run(direction, algo, x, w, dy, geometry)
        assert_within_bound(got, ref, ref_abs, *tolerance(dtype, algo), what=f"{direction} {algo} {threads} threads")


@pytest.mark.parametrize("direction", ["forward", "backward_data", "backward_filter"])
@pytest.mark.parametrize("x_shape,w_shape,geometry", THREAD_CASES)
def test_conv_results_do_not_depend_on_thread_count(x_shape, w_shape, geometry, direction):
    """Documented in minifw/ops/conv.py: every CPU algorithm is deterministic."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    dy = rng.standard_normal(ops.ConvProblem(x_shape, w_shape, **geometry).out_shape).astype(np.float32)
    before = minifw.get_num_threads()
    try:
        for algo in ops.conv_algorithms(ops.ConvProblem(x_shape, w_shape, **geometry), direction):
            results = []
            for n in (1, 2):
                minifw.set_num_threads(n)
                results.append(_run(direction, algo, x, w, dy, geometry))
            np.testing.assert_array_equal(results[0], results[1], err_msg=f"{direction} {algo}")
    finally:
        minifw.set_num_threads(before)


def test_thread_count_round_trips_and_shows_in_info(threads):
    assert minifw.get_num_threads() == threads
    assert minifw.info()["num_threads"] == threads


# ---- instruction sets ----------------------------------------------------------

def test_set_isa_shows_in_info(isa):
    assert backends.get_isa() == isa
    assert minifw.info()["isa"] == isa
    assert isa in minifw.info()["supported_isas"]


def test_unsupported_isa_is_refused_by_set_isa():
    missing = [i for i in ("avx512", "avx2") if i not in backends.supported_isas()]
    if not missing:
        pytest.skip("this CPU supports every ISA")
    with pytest.raises(ValueError, match=rf"set_isa: this CPU supports .*got '{missing[0]}'"):
        backends.set_isa(missing[0])


# A child process imports minifw with MINIFW_ISA set, reports the ISA it
# runs and a convolution (every algorithm, every direction) for the parent to
# check against the reference.
CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import minifw
    from minifw import ops
    print(minifw.backends.get_isa())
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 16, 9, 7)).astype(np.float32)
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    dy = rng.standard_normal((2, 16, 9, 7)).astype(np.float32)
    p = ops.ConvProblem(x.shape, w.shape, padding=1)
    out = {"x": x, "w": w, "dy": dy}
    for algo in ops.conv_algorithms(p, "forward"):
        out["forward-" + algo] = ops.conv2d_forward(x, w, padding=1, algo=algo)
    for algo in ops.conv_algorithms(p, "backward_data"):
        out["backward_data-" + algo] = ops.conv2d_backward_data(dy, w, x.shape, padding=1, algo=algo)
    for algo in ops.conv_algorithms(p, "backward_filter"):
        out["backward_filter-" + algo] = ops.conv2d_backward_filter(x, dy, w.shape, padding=1, algo=algo)
    np.savez(sys.argv[1], **out)
""")


def _child(isa_env, out_path):
    env = dict(os.environ, MINIFW_ISA=isa_env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO_ROOT, env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-c", CHILD, str(out_path)], env=env, capture_output=True, text=True,
                          timeout=120, cwd=REPO_ROOT)


@pytest.mark.parametrize("isa_env", ["avx2", "generic"])
def test_minifw_isa_environment_variable(isa_env, tmp_path):
    if isa_env not in backends.supported_isas():
        pytest.skip(f"this CPU does not support {isa_env}")
    out_path = tmp_path / "child.npz"
    proc = _child(isa_env, out_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [isa_env]
    got = np.load(out_path)
    x, w, dy = (got[k].astype(np.float64) for k in ("x", "w", "dy"))
    refs = {"forward": (conv2d_forward_ref(x, w, None, padding=1),
                        conv2d_forward_ref(np.abs(x), np.abs(w), None, padding=1)),
            "backward_data": (conv2d_backward_data_ref(dy, w, x.shape, padding=1),
                              conv2d_backward_data_ref(np.abs(dy), np.abs(w), x.shape, padding=1)),
            "backward_filter": (conv2d_backward_filter_ref(x, dy, w.shape, padding=1),
                                conv2d_backward_filter_ref(np.abs(x), np.abs(dy), w.shape, padding=1))}
    names = [k for k in got.files if "-" in k]
    assert {"forward-winograd", "forward-implicit_gemm", "backward_filter-im2col_gemm"} <= set(names)
    for name in names:
        direction, algo = name.split("-")
        assert_within_bound(got[name], *refs[direction], *tolerance(np.float32, algo),
                            what=f"MINIFW_ISA={isa_env} {name}")


def test_minifw_isa_bogus_fails_at_import(tmp_path):
    proc = _child("bogus", tmp_path / "unused.npz")
    assert proc.returncode != 0
    last_line = proc.stderr.strip().splitlines()[-1]
    assert last_line.startswith("ValueError: MINIFW_ISA must be one of 'avx512', 'avx2', 'generic'; got 'bogus'"), \
        proc.stderr
