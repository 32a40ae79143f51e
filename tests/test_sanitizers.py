"""The native code under sanitizers (docs/sanitizers.md).

AddressSanitizer + UBSan: a second build of minifw from this source tree compiles
the whole extension (the bindings, the CPU kernels, the CUDA emulator and the
emulated CUDA kernels) with -fsanitize=address,undefined -fno-sanitize-recover and
_GLIBCXX_ASSERTIONS (cmake -DMINIFW_SANITIZE=address), and one child pytest runs a
selection of the kernel tests against it: on the CPU every primitive family and
every convolution algorithm, a few shapes each (odd sizes, stride, padding,
dilation, groups), under each ISA this CPU supports and with 2 threads; on
"cudasim" the conformance tests of every family (float32, small shapes). Any out-
of-bounds access, use after free or undefined behaviour aborts the child. The whole
suite under the same build is tests/sanitize.py's run, too long for CI.

ThreadSanitizer (cmake -DMINIFW_CUDASIM_SANITIZE=thread: each CUDA thread an OS
thread) runs the emulator's own tests on small shapes, and must report the missing
barrier of the self-test kernel as a data race (MINIFW_TEST_TSAN=0 leaves it out).
The CPU kernels are not run under TSan: their threads are OpenMP's, whose runtime is
not instrumented, so TSan would report libgomp's own synchronisation as races.

Both are skipped without cmake, a C++ compiler with the sanitizer's runtime, or the
source tree (an installed minifw without its sources)."""
import os
import subprocess

import pytest

import sanitize
from childenv import child_env
from sanitize import ROOT, run_pytest, run_python, sanitizer_reported

# What runs on "cudasim" under AddressSanitizer: the emulator's tests and, per
# kernel family, the conformance tests on cudasim (a few shapes each).
CUDASIM_FILES = ["tests/cuda/test_cudasim.py", "tests/cuda/test_tf32.py", "tests/ops/test_conv.py",
                 "tests/ops/test_gemm.py", "tests/ops/test_pooling.py", "tests/ops/test_rnn.py",
                 "tests/ops/test_batchnorm.py", "tests/ops/test_dropout.py", "tests/ops/test_lrn.py",
                 "tests/ops/test_softmax.py", "tests/ops/test_activation.py", "tests/ops/test_tensor_ops.py",
                 "tests/ops/test_sgd_step.py"]
CUDASIM_SELECTION = ("test_cudasim.py or test_tf32.py or "
                     "(cudasim and (float32 and not threaded and not 521 and not alexnet)) or "
                     "(emulator and float32 and (lenet_conv2 or groups3_dil2 or mixed_stride or k1x1_groups2))")

# What runs on the CPU, per test file: float32 (float64 runs the same code through
# another template instance), odd shapes and every geometry the kernels branch on,
# each ISA (the `target` and `isa` fixtures: "cpu-generic", "cpu-avx2", ...), 2
# threads (test_threads_isa.py and each family's thread-count test), and the
# bindings' own checks of sizes and arrays.
THREADS = "test_results_do_not_depend_on_thread_count"
BINDINGS = "test_binding_checks"
CPU_SELECTION = {
    "test_gemm.py": "cpu and float32 and (test_gemm_matches_numpy and (97x113x131 or 5x1031x7 or 1x1x1 "
                    "or 17x33x9 or 255x1x257 or 13x9x67) or test_alpha_beta_into_c and 17x33x9 and NT "
                    "or test_any_leading_dimension and 37x25x19) or float32 and (test_every_register_block "
                    "or test_prepacked_b_matches_numpy and 17x33x9 or test_long_k_split_among_threads "
                    "and NN and alpha1_beta0)",
    "test_conv.py": "float32 and not auto and (test_forward or test_backward_data or test_backward_filter) "
                    "and (odd11x13_3x3_pad0 or mixed_stride2x3_pad3x0_dil1x2 or groups3_dil2 "
                    "or winograd_tiles_plus_edge or winograd_two_chunks_37x35 or winograd_images_n9_13x13 "
                    "or k1x1_groups2 or depthwise6_5x5_stride2 or stride4_5x5_pad3 "
                    "or depthwise_mult3_dil2_pad3 or depthwise_pad_beyond_filter or depthwise_stride3_5x3_pad2x1 "
                    "or c17_k7_3x3_pad1_n3 or k1x1_stride2 or kernel_eq_input_5x7 "
                    "or dot_filter_n9_groups2_stride2_dil2 or chunked_data_groups2_stride2 or pad3_3x3 "
                    "or k1x1_pad1 or stride4_2x2_gaps or stride4_out1x1 or rows_k48_wide33_5x5_pad2_groups2 "
                    "or rows_k40_stride2_pad1 or rows_data_c48_3x3_pad1 or rows_k12_groups2_wide19) "
                    "or float32 and test_every_isa and (odd11x13_3x3_pad0 or mixed_stride2x3_pad3x0_dil1x2 "
                    "or k1x1_groups2 or groups3_dil2 or winograd_tiles_plus_edge or winograd_two_chunks_37x35 "
                    "or winograd_images_n9_13x13 or depthwise6_5x5_stride2 or depthwise_mult3_dil2_pad3 "
                    "or depthwise_wide40_stride2 or wide37_5x5_pad2_groups2 or wide41_dil1x2_pad1x3 "
                    "or rows_k48_wide33_5x5_pad2_groups2 "
                    "or rows_k40_stride2_pad1 or rows_data_c48_3x3_pad1 or rows_k12_groups2_wide19) "
                    "or float32 and test_backward_bias and (odd or groups) or float32 and test_noncontiguous",
    "test_conv_validation.py": "test_binding",
    "test_threads_isa.py": "2threads and float32 and (test_conv_with_threads or test_gemm_with_threads "
                           "and not 521) or test_conv_results_do_not_depend_on_thread_count and forward",
    "test_pooling.py": f"cpu and (float32 and test_forward_and_backward and (n1_c1_odd_7x9_3x3s2_ceil or "
                       f"pad1_3x3s2_ceil or rect_2x3_s1x3_pad1 or stride3_gathered_columns or wide_rows_vector_tails "
                       f"or threaded_planes or ceil_drops_window_in_padding or dilated_ceil_pad1 "
                       f"or dilated_stride3_vector_tails or dilation_larger_than_input or dilated_ceil_overhangs) "
                       f"or test_max_ or {THREADS} "
                       f"or test_heavily_padded) or {BINDINGS}",
    "test_lrn.py": f"cpu and (float32 and alexnet and test_forward_and_backward and (odd_2x7x5x6 or "
                   f"n1_c3_window_wider_than_c or two_position_blocks or threaded) or test_a_large or {THREADS} "
                   f"or test_empty) or {BINDINGS}",
    "test_batchnorm.py": f"cpu and float32 and (test_training or test_inference_forward) or test_empty_planes "
                         f"or {THREADS} and cpu or {BINDINGS}",
    "test_rnn.py": f"cpu and float32 and bias and not no_bias and T5_N3 and test_forward_matches "
                   f"or cpu and float32 and test_forward_with_lengths or test_empty_batches and cpu "
                   f"or test_inference_gives_trainings_results_to_the_bit and lstm or {THREADS} or {BINDINGS}",
    "test_softmax.py": f"cpu and float32 and (test_forward_and_backward or test_cross_entropy_matches and "
                       f"(plain or ignore_and_smoothing) and mean) or {THREADS} or {BINDINGS}",
    "test_activation.py": f"cpu and float32 and test_forward_and_backward and (vector7 or nchw_odd or threaded) "
                          f"or test_vecmath_special_values "
                          f"or test_vecmath_pow_neg or {THREADS} or test_empty or {BINDINGS}",
    "test_sgd_step.py": f"cpu and float32 and test_sgd_step_matches and (seventeen or matrix_31x33 or "
                        f"threaded_100003 or empty) and (no_momentum or nesterov) and not maximize and not caffe "
                        f"or {THREADS} and cpu "
                        f"or test_a_non_contiguous or {BINDINGS}",
    "test_tensor_ops.py": f"cpu and float32 and (test_add_tensor_matches and mixed or test_bias_add_and_backward "
                          f"or test_scale_tensor) or {THREADS} and cpu or {BINDINGS} "
                          f"or test_embedding_backward and not float64 and not wordlm",
    "test_dropout.py": f"cpu and float32 and test_mask_is_the_defined_philox_mask and (partial_block or "
                       f"seed_high_word) or test_same_mask_for_any_thread_count_and_isa or {BINDINGS}",
}
CPU_FILES = [f"tests/ops/{name}" for name in CPU_SELECTION]
ASAN_FILES = list(dict.fromkeys(CUDASIM_FILES + CPU_FILES))
ASAN_SELECTION = " or ".join([f"({CUDASIM_SELECTION})"] +
                             [f"({name} and ({expr}))" for name, expr in CPU_SELECTION.items()])


def _build(tmp_path_factory, sanitizer):
    try:
        cwd, env, _ = sanitize.build(tmp_path_factory.mktemp(f"sanitize-{sanitizer}"), sanitizer)
    except sanitize.Unavailable as why:
        pytest.skip(str(why))
    return cwd, env


@pytest.fixture(scope="module")
def asan(tmp_path_factory):
    return _build(tmp_path_factory, "address")


def test_the_whole_extension_is_instrumented(asan):
    cwd, env = asan
    probe = run_python(cwd, env, "-c", "import minifw._native as n; print(n.__file__)")
    assert probe.returncode == 0, probe.stderr[-3000:]
    assert probe.stdout.strip().startswith(str(cwd))  # this build, not the one under test
    library = probe.stdout.strip()
    assert "__asan_report" in subprocess.run(["nm", "-D", library], capture_output=True, text=True).stdout
    # every object file of the extension, CPU kernels and bindings included, is instrumented
    objects = sorted((cwd.parent / "build-address").rglob("*.o"))
    assert len(objects) > 40
    for obj in objects:
        undefined = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True).stdout
        assert "__asan_" in undefined, f"{obj.name} is not compiled with AddressSanitizer"
    names = {o.name for o in objects}
    assert {"gemm.cpp.o", "conv_winograd.cpp.o", "bind_conv.cpp.o", "conv.cpp.o"} <= names


def test_a_sanitizer_report_fails_the_child(asan):
    """The check below cannot pass by accident: an out-of-bounds write and a signed
    overflow, done by the instrumented extension's own code, end the child."""
    cwd, env = asan
    for fault in ("heap_overflow", "signed_overflow"):
        done = run_python(cwd, env, "-c", f"import minifw._native as n; n.sanitizer_selftest({fault!r})")
        assert done.returncode != 0 and sanitizer_reported(done.stderr), (fault, done.stderr[-3000:])
    clean = run_python(cwd, env, "-c", "import minifw._native as n; print(n.sanitizer_selftest('none'))")
    assert clean.returncode == 0 and not sanitizer_reported(clean.stderr), clean.stderr[-3000:]


def test_kernel_tests_pass_under_address_and_undefined_behaviour_sanitizers(asan):
    cwd, env = asan
    done = run_pytest(cwd, env, *[str(ROOT / f) for f in ASAN_FILES], "-k", ASAN_SELECTION)
    tail = done.stdout[-2000:] + "\n" + done.stderr[-6000:]
    assert done.returncode == 0, tail
    assert " passed" in done.stdout and not sanitizer_reported(done.stderr), tail


def test_the_selection_covers_every_family_isa_and_algorithm():
    """What the selection holds (collected here, no build needed): each CPU test file,
    each ISA, every convolution algorithm in each direction, 2 threads, and cudasim."""
    import minifw
    from minifw import ops
    done = run_pytest(ROOT, child_env(), "--collect-only", *[str(ROOT / f) for f in ASAN_FILES],
                      "-k", ASAN_SELECTION)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    for name in CPU_SELECTION:
        assert any(f"/{name}::" in i and "cudasim" not in i for i in ids), name
    for isa in minifw.backends.supported_isas():
        assert sum(f"cpu-{isa}-" in i for i in ids) > 50, isa
        assert any(i.startswith("tests/ops/test_conv.py::test_every_isa") and f"[{isa}-" in i for i in ids), isa
    for direction in ("forward", "backward_data", "backward_filter"):
        for algo in ops.conv_algorithms(ops.ConvProblem((1, 4, 9, 9), (4, 4, 3, 3)), direction):
            if algo != "auto":
                assert any(f"test_{direction}[" in i and f"-{algo}-" in i for i in ids), (direction, algo)
    assert sum("2threads" in i for i in ids) >= 10
    assert sum("cudasim" in i or "emulator" in i for i in ids) > 100


@pytest.fixture(scope="module")
def tsan(tmp_path_factory):
    if os.environ.get("MINIFW_TEST_TSAN") == "0":
        pytest.skip("MINIFW_TEST_TSAN=0")
    return _build(tmp_path_factory, "thread")


def test_thread_sanitizer_reports_the_missing_barrier_as_a_race(tsan):
    cwd, env = tsan
    clean = run_python(cwd, env, "-c", "import minifw._native as n; print(n.cudasim_selftest('none', 64)[:2])")
    assert clean.returncode == 0 and "ThreadSanitizer" not in clean.stderr, clean.stderr[-3000:]
    racy = run_python(cwd, env, "-c", "import minifw._native as n; n.cudasim_selftest('missing_barrier', 64)")
    assert racy.returncode != 0 and "WARNING: ThreadSanitizer: data race" in racy.stderr, racy.stderr[-3000:]


def test_emulator_tests_pass_under_thread_sanitizer(tsan):
    cwd, env = tsan
    # (the missing barrier's race is the test above; it would stop this run)
    done = run_pytest(cwd, env, str(ROOT / "tests/cuda/test_cudasim.py"),
                      "-k", "not several_workers and not missing_barrier")
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
