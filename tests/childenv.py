"""The environment of a child Python process that a test starts: the child must import the
same minifw as the test itself, the installed package in CI (`pip install .`), the source
tree in a developer build (`PYTHONPATH=.`).

`python -c` and `python -m` put the working directory first on sys.path, and a script its
own folder: from the repository root that is the source tree's minifw, which has no built
extension after `pip install .`. So the folder that holds the test's own minifw goes first
on PYTHONPATH and PYTHONSAFEPATH keeps the working directory and the script's folder off
sys.path; with `tests_importable=True` the repository root follows it, for children that
import the `tests` package (`python -m tests.fuzz.campaign`)."""
import os

import minifw

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_env(base=None, *, tests_importable=False, **extra):
    env = dict(os.environ if base is None else base)
    paths = [PACKAGE_PARENT] + ([REPO_ROOT] if tests_importable else [])
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONSAFEPATH"] = "1"
    env.update(extra)
    return env
