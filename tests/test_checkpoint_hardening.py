"""minifw.save / minifw.load against hostile and damaged files: a save killed mid-write leaves
a temporary file that the next save of the same target removes (and only such files); every
malformed file is refused with one CheckpointError (a ValueError) naming the file and what is
wrong, before anything is allocated from its declared sizes; no code from a file ever runs."""
import io
import json
import os
import signal
import struct
import subprocess
import sys
import textwrap
import time
import zipfile

import numpy as np
import pytest

import minifw
from minifw import serialization
from minifw.serialization import CheckpointError
from childenv import child_env


# ---- files built by hand -----------------------------------------------------------------------
def npy(array):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=True)
    return buffer.getvalue()


def npy_declaring(shape, descr="<f8", data=b""):
    """A .npy entry whose header declares `shape` of `descr` followed by `data`."""
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue() + data


def header_entry(header):
    return npy(np.frombuffer(json.dumps(header).encode("utf-8"), np.uint8))


def write_archive(path, entries):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name + ".npy", data)


def write_checkpoint(path, obj, arrays=None, **header):
    """A checkpoint whose header's object is `obj` (already in the JSON form) with `arrays`."""
    full = {"format": "minifw-checkpoint", "version": 1, "object": obj, **header}
    entries = {"header": header_entry(full)}
    entries.update({key: npy(value) for key, value in (arrays or {}).items()})
    write_archive(path, entries)


def nested_list(depth):
    return "[" * depth + "]" * depth


def refused(path, *fragments):
    with pytest.raises(CheckpointError) as info:
        minifw.load(path)
    message = str(info.value)
    assert message.startswith(f"load: not a valid minifw checkpoint: {path}: "), message
    for fragment in fragments:
        assert fragment in message, message
    assert isinstance(info.value, ValueError)
    return message


# ---- malformed files: one clear error each ----------------------------------------------------
MALFORMED = {
    "empty": (lambda p: p.write_bytes(b""), ["not a .npz (zip) archive"]),
    "wrong-magic": (lambda p: p.write_bytes(b"GIF89a" + bytes(100)), ["not a .npz (zip) archive",
                                                                       "474946"]),
    "zip-of-text": (lambda p: zipfile.ZipFile(p, "w").writestr("notes.txt", "hi"),
                    ["'notes.txt' is not a .npy array"]),
    "no-header": (lambda p: np.savez(p, x=np.ones(2)), ["no header entry"]),
    "header-not-json": (lambda p: write_archive(p, {"header": npy(np.frombuffer(b"{nope", np.uint8))}),
                        ["not UTF-8 JSON"]),
    "header-not-utf8": (lambda p: write_archive(p, {"header": npy(np.frombuffer(b"\xff\xfe", np.uint8))}),
                        ["not UTF-8 JSON"]),
    "header-of-floats": (lambda p: write_archive(p, {"header": npy(np.ones(3))}),
                         ["header entry must be a 1-D uint8 array"]),
    "header-a-list": (lambda p: write_archive(p, {"header": header_entry([1, 2])}),
                      ["its header is a JSON list"]),
    "foreign-format": (lambda p: write_archive(p, {"header": header_entry({"format": 5})}),
                       ["names format '5'"]),
    "version-a-string": (lambda p: write_checkpoint(p, 1, version="1"), ["version must be a positive int"]),
    "version-a-bool": (lambda p: write_checkpoint(p, 1, version=True), ["version must be a positive int"]),
    "no-object": (lambda p: write_archive(p, {"header": header_entry({"format": "minifw-checkpoint",
                                                                      "version": 1})}),
                  ["no 'object' entry"]),
    # deep nesting: past what JSON's parser recurses through, and past minifw's own limit
    "nested-beyond-the-parser": (
        lambda p: write_archive(p, {"header": npy(np.frombuffer(
            ('{"format": "minifw-checkpoint", "version": 1, "object": ' + nested_list(200_000) + "}").encode(),
            np.uint8))}), ["nests too deeply"]),
    "nested-beyond-the-limit": (
        lambda p: write_archive(p, {"header": npy(np.frombuffer(
            ('{"format": "minifw-checkpoint", "version": 1, "object": ' + nested_list(500) + "}").encode(),
            np.uint8))}), ["containers nest more than 64 deep"]),
    "dict-not-pairs": (lambda p: write_checkpoint(p, {"__dict__": {"a": 1}}), ["__dict__ must be a list"]),
    "dict-key-a-list": (lambda p: write_checkpoint(p, {"__dict__": [[[1], 2]]}),
                        ["item 0 of __dict__ must be a [key, value] pair"]),
    "dict-key-a-bool": (lambda p: write_checkpoint(p, {"__dict__": [[True, 2]]}),
                        ["item 0 of __dict__"]),
    "tuple-not-a-list": (lambda p: write_checkpoint(p, {"__tuple__": 3}), ["__tuple__ must be a list"]),
    "float-not-a-string": (lambda p: write_checkpoint(p, {"__float__": 3}), ["__float__ must be a string"]),
    "float-not-a-number": (lambda p: write_checkpoint(p, {"__float__": "pi"}), ["__float__ must be"]),
    "unknown-entry": (lambda p: write_checkpoint(p, {"__class__": "os.system", "args": ["ls"]}),
                      ["unknown entry with keys ['__class__', 'args']"]),
    "two-markers": (lambda p: write_checkpoint(p, {"__tuple__": [], "__float__": "inf"}), ["unknown entry"]),
    "missing-array": (lambda p: write_checkpoint(p, {"__dict__": [["w", {"__tensor__": "a7"}]]}),
                      ["obj['w']", "refers to array 'a7', which the file does not hold"]),
    "array-key-an-int": (lambda p: write_checkpoint(p, {"__array__": 0}, {"a0": np.ones(2)}),
                         ["refers to array 0"]),
    "requires-grad-a-string": (lambda p: write_checkpoint(p, {"__tensor__": "a0", "requires_grad": "yes"},
                                                          {"a0": np.ones(2)}),
                               ["requires_grad must be true or false"]),
    "requires-grad-on-ints": (lambda p: write_checkpoint(p, {"__tensor__": "a0", "requires_grad": True},
                                                         {"a0": np.arange(3)}),
                              ["only float tensors have gradients"]),
    "parameter-a-string": (lambda p: write_checkpoint(p, {"__tensor__": "a0", "parameter": "yes"},
                                                      {"a0": np.ones(2)}, version=2),
                           ["parameter must be true or false; got 'yes'"]),
    "parameter-on-an-array": (lambda p: write_checkpoint(p, {"__array__": "a0", "parameter": True},
                                                         {"a0": np.ones(2)}, version=2),
                              ["unknown entry with keys ['__array__', 'parameter']"]),
    "parameter-requiring-grad-on-ints": (
        lambda p: write_checkpoint(p, {"__tensor__": "a0", "parameter": True, "requires_grad": True},
                                   {"a0": np.arange(3)}, version=2),
        ["only float tensors have gradients"]),
    "device-a-number": (lambda p: write_checkpoint(p, {"__array__": "a0", "device": 7}, {"a0": np.ones(2)}),
                        ["device must be a device name"]),
    "device-unknown": (lambda p: write_checkpoint(p, {"__array__": "a0", "device": "tpu"}, {"a0": np.ones(2)}),
                       ["device must be a device name"]),
    # entries that are not numeric arrays
    "object-array": (lambda p: write_checkpoint(p, {"__array__": "a0"},
                                                {"a0": np.array([{"x": 1}], dtype=object)}),
                     ["entry 'a0'", "bool, integer or float numbers; this one holds object"]),
    "string-array": (lambda p: write_checkpoint(p, {"__array__": "a0"}, {"a0": np.array(["abc", "de"])}),
                     ["entry 'a0'", "holds <U3"]),
    "structured-array": (lambda p: write_checkpoint(p, {"__array__": "a0"},
                                                    {"a0": np.zeros(2, [("x", "<f4"), ("y", "<i4")])}),
                         ["entry 'a0'", "bool, integer or float"]),
    "complex-array": (lambda p: write_checkpoint(p, {"__array__": "a0"}, {"a0": np.ones(2, np.complex64)}),
                      ["entry 'a0'", "complex64"]),
    "datetime-array": (lambda p: write_checkpoint(p, {"__array__": "a0"},
                                                  {"a0": np.array(["2020-01-01"], "datetime64[D]")}),
                       ["entry 'a0'", "datetime64"]),
    # sizes: declared shapes checked against the bytes really there, in Python ints
    "huge-shape": (lambda p: write_archive(p, {"header": header_entry({}),
                                               "a0": npy_declaring((1 << 20, 1 << 20, 1 << 20))}),
                   ["entry 'a0'", "declares shape (1048576, 1048576, 1048576) of float64 "
                    "(9223372036854775808 bytes), but the entry holds 0 bytes"]),
    "shape-overflowing-int64": (lambda p: write_archive(p, {"header": header_entry({}),
                                                            "a0": npy_declaring((1 << 32, 1 << 32), "|u1")}),
                                ["(18446744073709551616 bytes)"]),
    "short-data": (lambda p: write_archive(p, {"header": header_entry({}),
                                               "a0": npy_declaring((4,), "<f4", bytes(12))}),
                   ["declares shape (4,) of float32 (16 bytes), but the entry holds 12 bytes"]),
    "bad-npy-header": (lambda p: write_archive(p, {"header": header_entry({}), "a0": b"\x93NUMPY\x01\x00junk"}),
                       ["entry 'a0'", "unreadable"]),
    "not-npy": (lambda p: write_archive(p, {"header": header_entry({}), "a0": b"plain bytes"}),
                ["entry 'a0'", "unreadable"]),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_file_is_refused_with_one_clear_error(case, tmp_path):
    make, fragments = MALFORMED[case]
    path = tmp_path / "bad.npz"
    make(path)
    refused(path, *fragments)


def test_a_zip_entry_declaring_more_than_the_file_holds_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "c.npz"
    minifw.save({"w": minifw.ones(1000)}, path)
    data = bytearray(path.read_bytes())
    record = data.index(b"PK\x01\x02")  # the central directory's first record
    data[record + 24:record + 28] = struct.pack("<I", 0xFFFFFF00)  # its uncompressed size: ~4 GiB
    path.write_bytes(bytes(data))
    refused(path, ".npy' declares 4294967040 bytes, more than its")


def test_truncated_and_corrupted_files_give_only_checkpoint_errors(tmp_path):
    good = tmp_path / "good.npz"
    minifw.save({"model": {"w": minifw.ones(64, 64), "b": minifw.zeros(64)}, "epoch": 3,
                 "history": {"loss": [1.0, 0.5]}}, good)
    data = good.read_bytes()
    bad = tmp_path / "bad.npz"
    for cut in range(0, len(data), max(1, len(data) // 40)):
        bad.write_bytes(data[:cut])
        refused(bad)
    for at in range(0, len(data), max(1, len(data) // 60)):
        flipped = bytearray(data)
        flipped[at] ^= 0xFF
        bad.write_bytes(bytes(flipped))
        try:
            loaded = minifw.load(bad)
        except CheckpointError:
            continue
        # a flip in a field the reader does not use (a timestamp, a comment): the data is intact
        np.testing.assert_array_equal(loaded["model"]["w"].numpy(), np.ones((64, 64), np.float32))


def test_an_open_file_is_refused_by_its_name(tmp_path):
    path = tmp_path / "bad.npz"
    write_checkpoint(path, {"__array__": "a0"}, {"a0": np.array(["x"])})
    with open(path, "rb") as f:
        refused(f.name, "entry 'a0'")
        with pytest.raises(CheckpointError, match=f"load: not a valid minifw checkpoint: {path}: entry 'a0'"):
            minifw.load(f)


def test_loading_never_runs_code_from_the_file(tmp_path):
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (marker.touch, ())

    path = tmp_path / "evil.npz"
    write_checkpoint(path, {"__array__": "a0"}, {"a0": np.array([Payload()], dtype=object)})
    refused(path, "holds object")
    # the same pickle as a bare .npy inside an archive, and as the header itself
    write_archive(path, {"header": npy(np.array([Payload()], dtype=object))})
    refused(path, "entry 'header'")
    assert not marker.exists()


def test_nesting_up_to_the_limit_round_trips_and_deeper_is_refused_by_save(tmp_path):
    deep = 0
    for _ in range(serialization.MAX_DEPTH):
        deep = [deep]
    minifw.save(deep, tmp_path / "deep.npz")
    assert minifw.load(tmp_path / "deep.npz") == deep
    with pytest.raises(ValueError, match="nests containers more than 64 deep"):
        minifw.save([deep], tmp_path / "deeper.npz")
    assert not (tmp_path / "deeper.npz").exists()


def test_every_numeric_dtype_still_round_trips(tmp_path):
    arrays = {str(dtype): np.arange(6).astype(dtype).reshape(2, 3)
              for dtype in (np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32,
                            np.float64)}
    arrays["fortran"] = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    arrays["empty"] = np.zeros((0, 5), np.float32)
    minifw.save(arrays, tmp_path / "a.npz")
    loaded = minifw.load(tmp_path / "a.npz")
    for key, array in arrays.items():
        assert loaded[key].dtype == array.dtype and loaded[key].flags.writeable
        np.testing.assert_array_equal(loaded[key], array)


# ---- temporary files of a save killed mid-write -----------------------------------------------
KILLED_WRITER = textwrap.dedent("""
    import os, sys, time
    import minifw
    path = sys.argv[1]
    minifw.save({"w": minifw.ones(3)}, path)  # the previous checkpoint

    def stall(fd):  # the new file is written, not yet renamed: the moment to be killed
        print("writing", flush=True)
        time.sleep(120)

    os.fsync = stall
    minifw.save({"w": minifw.zeros(1 << 20)}, path)
""")


def temp_files(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


def test_a_save_killed_mid_write_leaves_a_temp_file_that_the_next_save_removes(tmp_path):
    path = tmp_path / "c.npz"
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)], stdout=subprocess.PIPE,
                              text=True, env=child_env())
    try:
        assert writer.stdout.readline() == "writing\n"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
        writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL
    stale = temp_files(tmp_path)
    assert len(stale) == 1 and stale[0].startswith(".c.npz.") and f".{writer.pid}." in stale[0]
    assert os.path.getsize(tmp_path / stale[0]) > 4 << 20  # the killed write's 4 MiB
    np.testing.assert_array_equal(minifw.load(path)["w"].numpy(), np.ones(3))  # the previous file, whole

    # files that the next save must not touch: another target's, a live process's, another host's
    live = os.getppid()
    keep = [f".other.npz.{serialization._HOST}.{writer.pid}.{'0' * 32}.tmp",
            f".c.npz.{serialization._HOST}.{live}.{'1' * 32}.tmp",
            f".c.npz.elsewhere-{serialization._HOST}.{writer.pid}.{'2' * 32}.tmp",
            f".c.npz.{'3' * 32}.tmp"]  # the older naming, written just now
    old = f".c.npz.{'4' * 32}.tmp"  # the older naming, untouched for two hours: stale
    for name in keep + [old]:
        (tmp_path / name).write_bytes(b"partial")
    os.utime(tmp_path / old, (time.time() - 7200,) * 2)

    minifw.save({"w": minifw.full((2,), 5.0)}, path)
    assert temp_files(tmp_path) == sorted(keep)
    np.testing.assert_array_equal(minifw.load(path)["w"].numpy(), [5.0, 5.0])


def test_a_temp_file_this_process_is_writing_is_not_removed(tmp_path, monkeypatch):
    # two threads saving to the same target: each leaves the other's temporary file alone
    path = tmp_path / "c.npz"
    mine = f".c.npz.{serialization._HOST}.{os.getpid()}.{'5' * 32}.tmp"
    abandoned = f".c.npz.{serialization._HOST}.{os.getpid()}.{'6' * 32}.tmp"
    for name in (mine, abandoned):
        (tmp_path / name).write_bytes(b"partial")
    monkeypatch.setattr(serialization, "_writing", {str(tmp_path / mine)})
    minifw.save({"x": 1}, path)
    assert temp_files(tmp_path) == [mine]
    assert minifw.load(path) == {"x": 1}


def test_a_parameter_entry_builds_only_a_parameter_of_the_files_numbers(tmp_path):
    path = tmp_path / "p.npz"
    write_checkpoint(path, {"__tensor__": "a0", "parameter": True}, {"a0": np.arange(3)}, version=2)
    got = minifw.load(path)
    assert type(got) is minifw.nn.Parameter and not got.requires_grad and got.tolist() == [0, 1, 2]


def test_a_file_newer_than_this_minifw_is_refused_as_newer(tmp_path):
    path = tmp_path / "new.npz"
    write_checkpoint(path, 1, version=serialization.VERSION + 1)
    with pytest.raises(ValueError, match="written by a newer minifw"):
        minifw.load(path)
