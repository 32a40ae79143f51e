"""Hypothesis profiles for the property tests, chosen by MINIFW_HYPOTHESIS_PROFILE:

- "ci" (the default): a few examples per test, drawn from a fixed seed (derandomize), so a
  CI run is reproducible and the whole folder stays within its share of CI time; no
  deadline (timings vary on shared machines) and no example database written.
- "long": a campaign: 25 times the examples, drawn afresh each run (a different seed
  each time, or the one given by --hypothesis-seed). A failure prints the falsifying
  example and a @reproduce_failure blob that replays it.

Each test's example count is a multiple of the profile's (problems.examples), larger for
the cheaper families. The CUDA kernels' tests draw smaller shapes than the CPU's, not
fewer examples.

The device fixtures are tests/conftest.py's: `target` given "cpu" leaves the CPU's ISA
alone, and the CPU tests draw the ISA and the thread count with the rest of the example.
That fixture is function-scoped, so it is set up once for all of a test's examples: what
it sets up (the device) is the same for every example.
"""
import os

from hypothesis import HealthCheck, Phase, settings

CI_EXAMPLES = 20
_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                      HealthCheck.data_too_large])
# CI stops at the shrunk example: the explain phase's search for what varies freely can
# take a minute per failing test.
settings.register_profile("ci", max_examples=CI_EXAMPLES, derandomize=True,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink], **_COMMON)
settings.register_profile("long", max_examples=25 * CI_EXAMPLES, derandomize=False, **_COMMON)
settings.load_profile(os.environ.get("MINIFW_HYPOTHESIS_PROFILE", "ci"))
