"""Argument fuzzing of every public function of minifw.ops and minifw.nn.functional
(docs/fuzzing.md). CI runs a fixed sample: every argument of every function mutated a few
ways; `python -m tests.fuzz.campaign` runs every mutation and pairs of them."""
import pytest

from . import cases, harness

CI_SEED = 0
CI_PER_ARGUMENT = 3


def test_every_public_callable_has_a_base_call():
    public = set(harness.public_callables())
    listed = set(cases.CASES) | set(cases.NOT_FUZZED)
    missing = sorted(public - listed)
    assert not missing, (f"public callables without a base call: {missing}; add an entry to "
                         f"tests/fuzz/cases.py (or, with the reason, to cases.NOT_FUZZED)")
    assert not sorted(listed - public), f"entries for callables that are gone: {sorted(listed - public)}"


def test_the_ci_sample_covers_every_argument():
    plan = harness.sample_plan(CI_SEED, CI_PER_ARGUMENT)
    covered = {(key, m[0]) for key, muts in map(harness.parse_id, plan) for m in muts}
    for key in cases.CASES:
        for arg in harness.argument_names(key):
            assert (key, arg) in covered, f"{key}: argument {arg} is not fuzzed"
    assert {harness.parse_id(i)[0] for i in plan} == set(cases.CASES)


def test_fuzz_sample():
    """Every call of the sample passes: it returns (equal to the base call where the math is
    the same) or raises a clear TypeError/ValueError naming the function and the argument."""
    plan = harness.sample_plan(CI_SEED, CI_PER_ARGUMENT)
    verdicts = harness.run(plan, workers=2, batch_size=150)
    assert len(verdicts) == len(plan)
    failures = [v for v in verdicts if not v["ok"]]
    assert not failures, f"{len(failures)} of {len(plan)} fuzzed calls fail:\n" + "\n".join(
        harness.format_failure(v) for v in failures)


@pytest.mark.parametrize("call_id, kind", [
    ("faulty.checked|n:2**31", "raised"),
    ("faulty.checked|x:noncontig", "returned"),
    ("faulty.crashes|n:zero", "crash"),
    ("faulty.hangs|n:zero", "timeout"),
    ("faulty.unclear|n:2**31", "unclear-message"),
    ("faulty.checked|x:object", "raised"),
    ("faulty.wrong_strides|x:noncontig", "mismatch"),
    ("faulty.unclear|n:float_frac", "unclear-message"),
    ("faulty.allocates|n:zero", "memory-error"),
])
def test_the_harness_tells_faults_apart(call_id, kind):
    (verdict,) = harness.run_batch([call_id], timeout=3)
    assert verdict["kind"] == kind, verdict
    assert verdict["ok"] == (kind in ("raised", "returned")), verdict


def test_a_crash_in_a_batch_is_blamed_on_its_call_and_the_batch_goes_on():
    ids = ["faulty.checked|n:minus1", "faulty.crashes|n:zero", "faulty.checked|x:readonly"]
    verdicts = harness.run_batch(ids, timeout=3)
    assert [v["id"] for v in verdicts] == ids
    assert [v["ok"] for v in verdicts] == [True, False, True]
    assert verdicts[1]["kind"] == "crash" and "SIGSEGV" in verdicts[1]["detail"]


# Calls that failed before the fixes the fuzzer led to, all run on every CI run (the sample
# draws only some of them).
FIXED_AFTER_FUZZING = [
    "F.softmax|dtype:object",                       # a dtype compared equal to None: taken as float64
    "F.batch_norm|running_mean:noncontig",          # a strided running_mean: updated through a copy
    "F.batch_norm|running_var:readonly",
    "F.nll_loss|weight:list",                       # AttributeError before the weight's own check
    "F.cross_entropy|weight:str",
    "F.conv2d|bias:grow_last",                      # named conv2d_forward, not conv2d
    "F.conv2d|input:zero_first",                    # named x_shape, not input
    "ops.conv2d_forward|w:zero_last",
    "ops.pool2d_forward|x:zero_first",
    "ops.pool2d_forward|kernel_size:2**31",         # "the kernel 2147483648x2147483648"
    "ops.gemm|trans_a:bool",                        # op(a) named, trans_a not
    "F.embedding|input:idx_max",                    # "index ... out of range", input not named
    "F.flatten|start_dim:2**31",                    # "dimension out of range", start_dim not named
    "F.softmax|dim:-2**63",
    "F.pad|input:int32",
    "F.pad|pad:item_2**31",                         # NumPy's bare MemoryError
    "F.adaptive_avg_pool2d|output_size:item_2**31",
    "F.softmax|input:zero_first|dim:zero",          # softmax over an empty dim: a reshape error
    "F.mse_loss|size_average:bool|reduction:dict",  # reduction unchecked when a legacy flag is given
    "F.kl_div|size_average:bool|reduction:dict",
    "F.pad|value:-1e308|input:int32",               # OverflowError filling an int tensor
]


def test_calls_fixed_after_fuzzing():
    verdicts = harness.run_batch(FIXED_AFTER_FUZZING)
    failures = [v for v in verdicts if not v["ok"]]
    assert not failures, "\n".join(harness.format_failure(v) for v in failures)
