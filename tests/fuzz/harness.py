"""Argument fuzzing of minifw.ops and minifw.nn.functional.

A call is named by an id: the function's key in cases.CASES, then one or two mutations,
each "argument:mutation", joined by "|", e.g. ``ops.conv2d_forward|stride:int_2**63``. The
call is the function's base call (cases.py) with those arguments replaced. Everything is
deterministic, so the id alone reproduces a call:

    python -m tests.fuzz.campaign --repro 'ops.conv2d_forward|stride:int_2**63'

Verdicts (see docs/fuzzing.md):
- pass: the call returns (for a mutation that keeps the math the same, such as a
  non-contiguous or read-only copy, the results and the arrays it updates in place equal
  the base call's), or raises TypeError/ValueError (or an exception type the case
  documents) whose message names the function and a mutated argument;
- fail: any other exception type (MemoryError included), a message that does not name
  both, a call that returns where it must refuse (object() or a dict for any argument), a
  result that differs from the base call's, a crash (signal) or a hang (timeout).

Calls run in batches in child processes (``python -m tests.fuzz.harness --child``, ids on
stdin, one JSON verdict a line on stdout) under an address-space limit, so a crash, a
hang or a runaway allocation takes down a child, never the runner. When a child dies the
runner re-runs the batch's calls one per process to name the culprit.
"""
import contextlib
import importlib
import inspect
import json
import math
import os
import random
import re
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings

import numpy as np

from . import cases

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMORY_LIMIT_BYTES = 4 << 30
CALL_TIMEOUT_S = 10.0
# PyTorch's deprecated loss flags: read by truth value, like the bool flags
FLAG_ARGUMENTS = ("size_average", "reduce")


# ---- what is fuzzed ---------------------------------------------------------------------------

def public_callables():
    """{key: callable} of every public callable the modules define (not what they import)."""
    out = {}
    for alias, modname in cases.MODULES.items():
        module = importlib.import_module(modname)
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or not callable(obj):
                continue
            if getattr(obj, "__module__", "") == modname or getattr(obj, "__module__", "").startswith(modname + "."):
                out[f"{alias}.{name}"] = obj
    return out


# tests/fuzz/faulty.py: functions with known faults, which the fuzzer's own tests run
_FAULTY = __package__ + ".faulty"


def resolve(key):
    alias, name = key.split(".", 1)
    modname = cases.MODULES.get(alias) or (_FAULTY if alias == "faulty" else None)
    if modname is None:
        raise KeyError(f"unknown module alias {alias!r} in {key!r}")
    return getattr(importlib.import_module(modname), name)


def case_of(key):
    alias, name = key.split(".", 1)
    if alias == "faulty":
        return importlib.import_module(_FAULTY).CASES[name]
    return cases.CASES[key]


def callable_name(key):
    return key.split(".", 1)[1]


# ---- mutations ------------------------------------------------------------------------------
# A mutation is (name, make(value) -> new value, flags). Flags: "same" (same math: results must
# equal the base call's), "refuse" (returning is a failure), "relational" (an array of another
# valid dtype or shape: it may be refused for not matching another array argument, so a
# message naming that other argument is clear too). make may raise NotApplicable.

class NotApplicable(Exception):
    pass


def _is_tensor(v):
    from minifw import Tensor
    return isinstance(v, Tensor)


def _array_of(v):
    return v.detach().numpy() if _is_tensor(v) else v


def _like(v, arr, **kw):
    """arr as the kind of value v is: a Tensor (keeping requires_grad) or an ndarray."""
    if _is_tensor(v):
        from minifw import tensor
        return tensor(arr, **kw)
    return arr


def _noncontiguous(a):
    if a.ndim == 0:
        raise NotApplicable
    buf = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
    view = buf[..., ::2]
    view[...] = a
    return view


def _misaligned(a):
    if a.dtype.itemsize == 1:
        raise NotApplicable
    raw = np.zeros(a.nbytes + 1, np.uint8)
    view = raw[1:].view(a.dtype).reshape(a.shape)
    view[...] = a
    return view


def _readonly(a):
    out = a.copy()
    out.flags.writeable = False
    return out


def _fortran(a):
    if a.ndim < 2:
        raise NotApplicable
    return np.asfortranarray(a)


def _broadcast(a):
    if a.size == 0:
        raise NotApplicable
    return np.broadcast_to(a.reshape(-1)[:1].reshape((1,) * a.ndim), a.shape)


def _filled(value):
    def make(a):
        if a.dtype.kind not in "fc":
            raise NotApplicable
        out = np.empty_like(a)
        with np.errstate(over="ignore"):
            out[...] = value(a.dtype) if callable(value) else value
        return out
    return make


def _int_filled(value):
    def make(a):
        if a.dtype.kind not in "iu":
            raise NotApplicable
        v = value(np.iinfo(a.dtype)) if callable(value) else value
        if a.size == 0 or not np.iinfo(a.dtype).min <= v <= np.iinfo(a.dtype).max:
            raise NotApplicable
        out = a.copy()
        out.reshape(-1)[-1] = v
        return out
    return make


def _astype(dtype):
    def make(a):
        if a.dtype == np.dtype(dtype):
            raise NotApplicable
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return a.astype(dtype)
    return make


def _drop_dim(a):
    if a.ndim == 0:
        raise NotApplicable
    return np.ascontiguousarray(a[0])


def _zero_first(a):
    if a.ndim == 0:
        raise NotApplicable
    return a[:0].copy()


def _zero_last(a):
    if a.ndim == 0:
        raise NotApplicable
    return a[..., :0].copy()


def _grow_last(a):
    if a.ndim == 0:
        raise NotApplicable
    return np.concatenate([a, a[..., :1]], axis=-1)


# (name, transform of the underlying ndarray, flags)
ARRAY_MUTATIONS = [
    ("noncontig", _noncontiguous, {"same"}),
    ("fortran", _fortran, {"same"}),
    ("readonly", _readonly, {"same"}),
    ("misaligned", _misaligned, {"same"}),
    ("broadcast0", _broadcast, set()),
    ("int32", _astype(np.int32), set()),
    ("int64", _astype(np.int64), set()),
    ("uint8", _astype(np.uint8), set()),
    ("float16", _astype(np.float16), set()),
    ("float32", _astype(np.float32), {"relational"}),
    ("float64", _astype(np.float64), {"relational"}),
    ("complex64", _astype(np.complex64), set()),
    ("bool", _astype(np.bool_), set()),
    ("rank_plus1", lambda a: a[None].copy(), {"relational"}),
    ("rank_minus1", _drop_dim, {"relational"}),
    ("rank0", lambda a: np.array(a.reshape(-1)[0] if a.size else 0, a.dtype), {"relational"}),
    ("zero_first", _zero_first, {"relational"}),
    ("zero_last", _zero_last, {"relational"}),
    ("grow_last", _grow_last, {"relational"}),
    ("nan", _filled(np.nan), set()),
    ("inf", _filled(np.inf), set()),
    ("neg_inf", _filled(-np.inf), set()),
    ("huge", _filled(lambda d: np.finfo(d).max), set()),
    ("overflow_1e308", _filled(1e308), set()),
    ("denormal", _filled(lambda d: np.finfo(d).smallest_subnormal), set()),
    ("idx_minus1", _int_filled(-1), set()),
    ("idx_max", _int_filled(lambda i: i.max), set()),
    ("idx_min", _int_filled(lambda i: i.min), set()),
    ("idx_2**31", _int_filled(2 ** 31), set()),
]


def _type_mutations(v):
    return [
        ("none", lambda _: None, set()),
        ("str", lambda _: "1", set()),
        ("bool", lambda _: True, set()),
        ("object", lambda _: object(), {"refuse"}),
        ("dict", lambda _: {}, {"refuse"}),
        ("complex", lambda _: 1j, set()),
    ]


def _array_value_mutations(v):
    """Mutations of an ndarray or a Tensor argument."""
    out = []
    for name, transform, flags in ARRAY_MUTATIONS:
        def make(value, transform=transform, name=name):
            arr = transform(_array_of(value))
            if _is_tensor(value):
                if name in ("noncontig", "fortran", "misaligned", "readonly", "broadcast0"):
                    return _tensor_view(value, name)
                try:
                    return _like(value, arr)
                except TypeError:  # a dtype Tensor cannot hold (float16, complex, uint8)
                    raise NotApplicable
            return arr
        out.append((name, make, flags))
    out += [m for m in _type_mutations(v) if m[0] != "bool"] + [
        ("list", lambda value: _array_of(value).tolist(), set()),
        ("scalar", lambda value: 1.0, set()),
    ]
    if _is_tensor(v):
        out += [("ndarray", lambda value: _array_of(value).copy(), set()),
                ("requires_grad", lambda value: _like(value, _array_of(value).copy(), requires_grad=(
                    _array_of(value).dtype.kind == "f")), {"same"})]
    else:
        out += [("tensor", lambda value: _tensor_of(value), set())]
    return out


def _tensor_of(a):
    from minifw import tensor
    try:
        return tensor(a.copy())
    except TypeError:
        raise NotApplicable


def _tensor_view(t, name):
    """A Tensor whose storage is a strided view (tensor() copies what it is given, so the
    view is made by indexing a larger Tensor)."""
    from minifw import tensor
    a = t.numpy()
    if name == "noncontig":
        if a.ndim == 0:
            raise NotApplicable
        big = tensor(np.concatenate([a[..., None], np.zeros_like(a)[..., None]], axis=-1).reshape(
            a.shape[:-1] + (a.shape[-1] * 2,)))
        return big[..., ::2]
    if name == "broadcast0":
        if a.size == 0:
            raise NotApplicable
        return tensor(a.reshape(-1)[:1].reshape((1,) * a.ndim)).expand(*a.shape)
    raise NotApplicable


def _int_mutations(v):
    return _type_mutations(v) + [
        ("float_integral", lambda v: float(v), set()),
        ("float_frac", lambda v: v + 0.5, set()),
        ("nan", lambda v: math.nan, set()),
        ("np_int64", lambda v: np.int64(v), {"same"}),
        ("zero", lambda v: 0, set()),
        ("minus1", lambda v: -1, set()),
        ("2**31", lambda v: 2 ** 31, set()),
        ("2**31-1", lambda v: 2 ** 31 - 1, set()),
        ("2**63", lambda v: 2 ** 63, set()),
        ("-2**63", lambda v: -2 ** 63, set()),
        ("2**64", lambda v: 2 ** 64, set()),
        ("list1", lambda v: [v], set()),
        ("pair", lambda v: (v, v), set()),
    ]


def _float_mutations(v):
    return _type_mutations(v) + [
        ("nan", lambda v: math.nan, set()),
        ("inf", lambda v: math.inf, set()),
        ("neg_inf", lambda v: -math.inf, set()),
        ("1e308", lambda v: 1e308, set()),
        ("-1e308", lambda v: -1e308, set()),
        ("denormal", lambda v: 5e-324, set()),
        ("negative", lambda v: -abs(v) - 1.0, set()),
        ("zero", lambda v: 0.0, set()),
        ("np_float64", lambda v: np.float64(v), {"same"}),
        ("int_2**63", lambda v: 2 ** 63, set()),
        ("ndarray", lambda v: np.array([v, v]), set()),
    ]


def _bool_mutations(v):
    return _type_mutations(v) + [
        ("np_bool", lambda v: np.bool_(v), {"same"}),
        ("int_1", lambda v: 1, set()),
        ("int_2", lambda v: 2, set()),
        ("float", lambda v: 1.0, set()),
        ("str_false", lambda v: "False", set()),
    ]


def _str_mutations(v):
    return [m for m in _type_mutations(v) if m[0] != "str"] + [
        ("int", lambda v: 1, set()),
        ("bogus", lambda v: "bogus", set()),
        ("empty", lambda v: "", set()),
        ("upper", lambda v: v.upper() if v.upper() != v else v.lower(), set()),
        ("bytes", lambda v: v.encode(), set()),
        ("trailing_space", lambda v: v + " ", set()),
    ]


def _tuple_mutations(v):
    def with_item(x):
        return lambda v: (x,) + tuple(v)[1:]
    return _type_mutations(v) + [
        ("list", lambda v: list(v), {"same"}),
        ("shorter", lambda v: tuple(v)[:-1], set()),
        ("longer", lambda v: tuple(v) + (tuple(v)[-1],), set()),
        ("empty", lambda v: (), set()),
        ("item_zero", with_item(0), set()),
        ("item_minus1", with_item(-1), set()),
        ("item_2**31", with_item(2 ** 31), set()),
        ("item_2**63", with_item(2 ** 63), set()),
        ("item_float", with_item(2.5), set()),
        ("item_none", with_item(None), set()),
        ("item_bool", with_item(True), set()),
        ("item_str", with_item("2"), set()),
        ("ndarray", lambda v: np.array(v), set()),
        ("nested", lambda v: (tuple(v),), set()),
    ]


def _none_mutations(v):
    return [m for m in _type_mutations(v) if m[0] != "none"] + [
        ("int", lambda v: 1, set()),
        ("float", lambda v: 1.5, set()),
        ("list", lambda v: [1, 2], set()),
        ("ndarray", lambda v: np.zeros(3, np.float32), set()),
    ]


def _dtype_mutations(v):
    return [(name, (lambda make: lambda _: make("float32"))(make), flags)
            for name, make, flags in _str_mutations("float32")] + [
        ("int64", lambda v: np.int64, set()),
        ("float16", lambda v: "float16", set()),
        ("np_float64", lambda v: np.float64, set()),
    ]


def _object_mutations(v):
    """A descriptor (ConvProblem, RNNDescriptor): wrong types and another kind of descriptor."""
    def other(v):
        from minifw import ops
        if isinstance(v, ops.ConvProblem):
            return ops.PoolProblem((2, 4, 6, 6), 2)
        return ops.ConvProblem((2, 4, 6, 6), (6, 4, 3, 3))
    return _type_mutations(v) + [("int", lambda v: 1, set()), ("other_descriptor", other, set())]


def mutations_for(name, value):
    """[(mutation name, make, flags)] for an argument of this base value."""
    if name == "dtype" and value is not None:
        return _dtype_mutations(value)
    if value is None:
        return _none_mutations(value)
    if isinstance(value, (bool, np.bool_)):
        return _bool_mutations(value)
    if isinstance(value, int):
        return _int_mutations(value)
    if isinstance(value, float):
        return _float_mutations(value)
    if isinstance(value, str):
        return _str_mutations(value)
    if isinstance(value, tuple):
        return _tuple_mutations(value)
    if isinstance(value, np.ndarray) or _is_tensor(value):
        return _array_value_mutations(value)
    return _object_mutations(value)


def _base_args(key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return case_of(key).build()


def argument_names(key):
    return list(_base_args(key))


def all_single_ids(key):
    """Every single-mutation id of one function (only its mutation names: applicability is
    decided when the call runs)."""
    ids = []
    for arg, value in _base_args(key).items():
        ids += [f"{key}|{arg}:{name}" for name, _, _ in mutations_for(arg, value)
                if f"{arg}:{name}" not in case_of(key).skip]
    return ids


def parse_id(call_id):
    key, *muts = call_id.split("|")
    return key, [tuple(m.split(":", 1)) for m in muts]


# ---- one call, in the child ----------------------------------------------------------------

def _snapshot(v):
    """A comparable copy of a result or argument (arrays and Tensors as ndarrays)."""
    if _is_tensor(v):
        return np.array(v.detach().numpy())
    if isinstance(v, np.ndarray):
        return np.array(v)
    if isinstance(v, (tuple, list)):
        return [_snapshot(x) for x in v]
    if isinstance(v, dict):
        return {k: _snapshot(x) for k, x in v.items()}
    return v


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def _invoke(fn, kwargs, case=None):
    import minifw
    minifw.manual_seed(0)  # dropout in nn.functional draws its seed from the global generator
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = fn(**kwargs)
    return result


def _compared(result, kwargs, case=None):
    if case is not None:
        result = case.result(result)
    opaque = case.opaque if case is not None else ()
    return _snapshot(result), {k: _snapshot(v) for k, v in kwargs.items() if k not in opaque}


def _names_argument(message, arg):
    if len(arg) > 2:
        return re.search(rf"(?<![\w.]){re.escape(arg)}(?!\w)", message) is not None
    # A one- or two-letter name ("x", "dy", "p") must read as the subject of the message, not
    # as a word ("got a 3-D array"): followed by a verb, a possessive, "=", its shape in
    # parentheses or punctuation.
    return re.search(rf"(?<![\w.]){re.escape(arg)}(?=\s+(must|has|have|is|of|and|or|with|to|needs|"
                     rf"does|cannot|should|was|are|at|holds|needs)\b|\s*\(|'s|=|\)|,|:|\.|$)",
                     message) is not None


def run_call(call_id):
    """The verdict of one call: {"id", "ok", "kind", "detail"}."""
    key, muts = parse_id(call_id)
    fn_name = callable_name(key)
    try:
        fn = resolve(key)
        case = case_of(key)
    except (KeyError, AttributeError) as e:
        return dict(id=call_id, ok=False, kind="unknown", detail=f"no such function: {e}")
    try:
        base_kwargs = _base_args(key)
        base_result, base_after = _compared(_invoke(fn, base_kwargs), base_kwargs, case)
    except Exception as e:  # the table is wrong, or the function broke
        return dict(id=call_id, ok=False, kind="base-fails",
                    detail=f"the base call raised {type(e).__name__}: {e}")
    kwargs = _base_args(key)
    flags = set()
    same = True
    for arg, mut in muts:
        if arg not in kwargs:
            return dict(id=call_id, ok=False, kind="unknown", detail=f"{fn_name} has no argument {arg!r}")
        table = {name: (make, fl) for name, make, fl in mutations_for(arg, kwargs[arg])}
        if mut not in table:
            return dict(id=call_id, ok=False, kind="unknown", detail=f"no mutation {mut!r} for {arg}")
        make, fl = table[mut]
        try:
            with np.errstate(all="ignore"):
                kwargs[arg] = make(kwargs[arg])
        except NotApplicable:
            return dict(id=call_id, ok=True, kind="not-applicable", detail="")
        except Exception as e:
            return dict(id=call_id, ok=False, kind="harness-error",
                        detail=f"making the mutation raised {type(e).__name__}: {e}")
        if "refuse" in fl and (isinstance(_base_args(key).get(arg), (bool, np.bool_))
                               or arg in FLAG_ARGUMENTS):
            fl = fl - {"refuse"}  # flags are read by truth value, as in PyTorch
        flags |= fl
        same = same and "same" in fl
    mutated = [arg for arg, _ in muts]
    try:
        result = _invoke(fn, kwargs)
    except Exception as e:
        # MemoryError counts as a clear refusal only when the function raised it itself, naming
        # the argument that asked for too much (NumPy's own names neither).
        allowed = (TypeError, ValueError, MemoryError) + case.raises
        message = str(e)
        if not isinstance(e, allowed) or type(e) in (RecursionError,):
            tb = traceback.extract_tb(e.__traceback__)[-1]
            return dict(id=call_id, ok=False, kind="wrong-exception",
                        detail=f"{type(e).__name__}: {message} (at {os.path.basename(tb.filename)}:{tb.lineno})")
        missing = []
        if not re.search(rf"(?<!\w){re.escape(fn_name)}(?!\w)", message):
            missing.append(f"the function {fn_name!r}")
        named = list(mutated)
        if "relational" in flags:
            named += list(kwargs)
        if not any(_names_argument(message, arg) for arg in named):
            missing.append("the argument " + " or ".join(repr(a) for a in mutated))
        if missing and isinstance(e, MemoryError):
            return dict(id=call_id, ok=False, kind="memory-error", detail=f"MemoryError: {message}")
        if missing:
            return dict(id=call_id, ok=False, kind="unclear-message",
                        detail=f"{type(e).__name__}: {message} (does not name {' and '.join(missing)})")
        return dict(id=call_id, ok=True, kind="raised", detail=f"{type(e).__name__}: {message}")
    result, after = _compared(result, kwargs, case)
    if "refuse" in flags:
        return dict(id=call_id, ok=False, kind="accepted",
                    detail=f"returned {type(result).__name__} where it must refuse the argument")
    if same:
        if not _same(result, base_result):
            return dict(id=call_id, ok=False, kind="mismatch", detail="the result differs from the base call's")
        for arg in after:
            if not _same(after[arg], base_after[arg]):
                return dict(id=call_id, ok=False, kind="mismatch",
                            detail=f"after the call, {arg} differs from the base call's (an in-place "
                                   f"update lost or misplaced)")
    return dict(id=call_id, ok=True, kind="returned", detail="")


def child_main():
    """Run the ids read from stdin (one a line), write one JSON verdict a line."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    out = sys.stdout
    sys.stdout = sys.stderr  # anything a function prints stays out of the verdict stream
    for line in sys.stdin:
        call_id = line.strip()
        if not call_id:
            continue
        out.write(json.dumps(run_call(call_id)) + "\n")
        out.flush()


# ---- the runner, in the parent ----------------------------------------------------------------

def _child_env():
    """The child imports the parent's minifw (the installed package in CI, where the source
    tree's has no built extension: PYTHONSAFEPATH keeps the working directory off sys.path)
    and this package, from the repository root (tests/childenv.py says more)."""
    import minifw
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(minifw.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([package_parent, REPO_ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONSAFEPATH"] = "1"
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _run_batch_once(ids, timeout=CALL_TIMEOUT_S):
    """Run ids in one child. Returns (verdicts, status): status None when the child finished
    normally, else (index of the call that was running, "crash" or "timeout", detail)."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.fuzz.harness", "--child"], cwd=REPO_ROOT,
                            env=_child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    # stderr is drained by a thread so a chatty child cannot block on a full pipe
    err_chunks = []
    drain = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()), daemon=True)
    drain.start()
    proc.stdin.write(("\n".join(ids) + "\n").encode())
    proc.stdin.close()
    verdicts, buf = [], b""
    deadline = time.monotonic() + timeout
    status = None
    while len(verdicts) < len(ids):
        left = deadline - time.monotonic()
        if left <= 0:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            status = (len(verdicts), "timeout", f"no verdict within {timeout:.0f} s")
            break
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if not ready:
            continue
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:  # the child is gone
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            verdicts.append(json.loads(line))
            deadline = time.monotonic() + timeout
    proc.wait()
    drain.join(timeout=5)
    if status is None and len(verdicts) < len(ids):
        rc = proc.returncode
        why = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
        tail = b"".join(err_chunks).decode(errors="replace").strip().splitlines()[-3:]
        status = (len(verdicts), "crash", f"the process died ({why}): " + " / ".join(tail))
    return verdicts, status


def run_batch(ids, timeout=CALL_TIMEOUT_S):
    """Verdicts of every id. When a child dies, the call it was running is run again alone:
    if it dies alone it is the culprit; if not, the calls that child ran before it are run
    one per process too (one of them may have corrupted memory), and the rest of the batch
    goes on in a new child."""
    verdicts, rest = [], list(ids)
    while rest:
        got, status = _run_batch_once(rest, timeout)
        verdicts += got
        if status is None:
            break
        index, kind, detail = status
        culprit, before = rest[index], rest[:index]
        alone = _run_batch_once([culprit], timeout)[1] if before or index else status
        if alone is not None:
            verdicts.append(dict(id=culprit, ok=False, kind=alone[1], detail=alone[2]))
        else:
            by_id = {v["id"]: i for i, v in enumerate(verdicts)}
            blamed = False
            for other in before:
                other_status = _run_batch_once([other], timeout)[1]
                if other_status is not None:
                    verdicts[by_id[other]] = dict(id=other, ok=False, kind=other_status[1], detail=other_status[2])
                    blamed = True
            verdicts.append(dict(id=culprit, ok=blamed, kind=kind if not blamed else "returned",
                                 detail="" if blamed else
                                 f"{detail} (only after the {len(before)} calls before it in one process: "
                                 f"{' '.join(before)})"))
        rest = rest[index + 1:]
    return verdicts


def run(ids, *, workers=2, batch_size=200, timeout=CALL_TIMEOUT_S, progress=None):
    """Verdicts of every id, in batches on `workers` children at a time."""
    batches = [ids[i:i + batch_size] for i in range(0, len(ids), batch_size)]
    results = [None] * len(batches)
    lock = threading.Lock()
    next_batch = iter(range(len(batches)))

    def worker():
        while True:
            with lock:
                i = next(next_batch, None)
            if i is None:
                return
            results[i] = run_batch(batches[i], timeout)
            if progress:
                with lock:
                    progress(sum(len(r) for r in results if r), len(ids))

    threads = [threading.Thread(target=worker) for _ in range(max(1, workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [v for r in results for v in r]


# ---- plans ------------------------------------------------------------------------------

def sample_plan(seed, per_argument):
    """Up to `per_argument` random mutations of every argument of every function (every
    argument at least once; functions without arguments: their base call)."""
    rng = random.Random(seed)
    ids = []
    for key in sorted(cases.CASES):
        base = _base_args(key)
        if not base:
            ids.append(key)
        for arg, value in base.items():
            names = [name for name, _, _ in mutations_for(arg, value)
                     if f"{arg}:{name}" not in cases.CASES[key].skip]
            ids += [f"{key}|{arg}:{name}" for name in rng.sample(names, min(per_argument, len(names)))]
    return ids


def full_plan():
    ids = []
    for key in sorted(cases.CASES):
        ids += all_single_ids(key) or [key]
    return ids


def pair_plan(seed, count):
    """`count` random calls with two arguments of one function mutated at once."""
    rng = random.Random(seed)
    keys = [k for k in sorted(cases.CASES) if len(_base_args(k)) >= 2]
    bases = {k: _base_args(k) for k in keys}
    ids = []
    for _ in range(count):
        key = rng.choice(keys)
        a, b = rng.sample(list(bases[key]), 2)
        ma = rng.choice(mutations_for(a, bases[key][a]))[0]
        mb = rng.choice(mutations_for(b, bases[key][b]))[0]
        if f"{a}:{ma}" not in cases.CASES[key].skip and f"{b}:{mb}" not in cases.CASES[key].skip:
            ids.append(f"{key}|{a}:{ma}|{b}:{mb}")
    return ids


def reproducer(call_id):
    return f"python -m tests.fuzz.campaign --repro '{call_id}'"


def format_failure(v):
    return f"{v['kind']}: {v['detail']}\n    {reproducer(v['id'])}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child_main()
    else:
        sys.exit("usage: python -m tests.fuzz.harness --child (the fuzz runner's worker; "
                 "see python -m tests.fuzz.campaign --help)")
