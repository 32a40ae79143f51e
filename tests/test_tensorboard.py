"""minifw.utils.tensorboard: the TFRecord framing and its CRC-32C (RFC 3720's vectors), the
hand-written protobuf encoding (protobuf's documented bytes), every add_* method read back
field by field, file names and log_dir defaults, when records reach the file (max_queue,
flush_secs on a fake clock, flush, close, garbage collection, the interpreter's exit), the
errors; where the tensorboard package is installed, TensorBoard's own reader on the same files
and PyTorch's SummaryWriter given the same calls; and tests/scripts/tensorboard_logging.py, a
training loop that logs as a PyTorch script does, under both frameworks."""
import datetime
import gc
import io
import math
import os
import re
import socket
import struct
import subprocess
import sys
import wave
import zlib

import numpy as np
import pytest

import minifw
import minifw.utils
from minifw.utils import tensorboard as tb
from minifw.utils.tensorboard import SummaryWriter, _read_events

WALLTIME = 1_700_000_000.123456  # a wall time given explicitly comes back bit-exact (a double)


def event_files(directory):
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.startswith("events.out.tfevents."))


def events(directory):
    """The events of the one event file in `directory`, the file version first."""
    files = event_files(directory)
    assert len(files) == 1, files
    found = _read_events(files[0])
    assert found[0]["file_version"] == "brain.Event:2" and "summary" not in found[0]
    return found[1:]


def values(directory):
    """(step, wall_time, value) of every summary value written into `directory`."""
    return [(e.get("step", 0), e["wall_time"], v) for e in events(directory) for v in e["summary"]["value"]]


def decode_png(data):
    """(H, W, C) uint8 pixels of a PNG, by Pillow where it is installed, else by zlib (the
    unfiltered 8-bit PNGs minifw writes)."""
    try:
        from PIL import Image
    except ImportError:
        Image = None
    if Image is not None:
        image = Image.open(io.BytesIO(data))
        return np.asarray(image).reshape(image.height, image.width, -1)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, chunks = 8, {}
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        kind = data[offset + 4:offset + 8]
        chunks[kind] = chunks.get(kind, b"") + data[offset + 8:offset + 8 + length]
        offset += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    channels = {0: 1, 2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, 1 + width * channels)
    assert depth == 8 and (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, channels)


@pytest.fixture
def writer(tmp_path):
    with SummaryWriter(tmp_path / "run") as w:
        yield w


# ---- CRC-32C and the record framing -----------------------------------------------------------

@pytest.mark.parametrize("data,crc", [
    pytest.param(b"", 0x00000000, id="empty"),
    pytest.param(b"123456789", 0xE3069283, id="check-string"),
    pytest.param(bytes(32), 0x8A9136AA, id="rfc3720-zeros"),
    pytest.param(b"\xff" * 32, 0x62A8AB43, id="rfc3720-ones"),
    pytest.param(bytes(range(32)), 0x46DD794E, id="rfc3720-incrementing"),
    pytest.param(bytes(range(31, -1, -1)), 0x113FDB5C, id="rfc3720-decrementing"),
])
def test_crc32c_matches_the_published_vectors(data, crc):
    assert tb._crc32c(data) == crc


@pytest.mark.parametrize("data", [b"", b"123456789", bytes(range(256)) * 3])
def test_masked_crc_rotates_right_by_15_and_adds_the_constant(data):
    crc = tb._crc32c(data)
    rotated = ((crc >> 15) | (crc << 17)) % 2**32
    assert tb._masked_crc32c(data) == (rotated + 0xA282EAD8) % 2**32


def test_a_record_is_length_crc_data_crc():
    record = tb._record(b"abc")
    assert record[:8] == struct.pack("<Q", 3)
    assert struct.unpack("<I", record[8:12])[0] == tb._masked_crc32c(struct.pack("<Q", 3))
    assert record[12:15] == b"abc" and struct.unpack("<I", record[15:])[0] == tb._masked_crc32c(b"abc")


@pytest.mark.parametrize("where,message", [
    pytest.param(9, "length's CRC", id="length-crc"),
    pytest.param(-6, "data's CRC", id="data"),
])
def test_the_reader_refuses_a_damaged_record(tmp_path, where, message):
    SummaryWriter(tmp_path).close()
    path = event_files(tmp_path)[0]
    data = bytearray(open(path, "rb").read())
    data[where] ^= 0x01
    open(path, "wb").write(bytes(data))
    with pytest.raises(ValueError, match=message):
        _read_events(path)


def test_the_reader_refuses_a_truncated_record(tmp_path):
    SummaryWriter(tmp_path).close()
    path = event_files(tmp_path)[0]
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-1])
    with pytest.raises(ValueError, match="truncated"):
        _read_events(path)


# ---- the protobuf encoding -------------------------------------------------------------------

@pytest.mark.parametrize("n,wire", [
    (0, "00"), (1, "01"), (150, "9601"), (300, "ac02"), (2**63 - 1, "ffffffffffffffff7f"),
    (-1, "ffffffffffffffffff01"), (-2, "feffffffffffffffff01"),
])
def test_varints_are_protobufs(n, wire):
    assert tb._varint(n).hex() == wire
    assert tb._integer("int64", tb._read_varint(bytes.fromhex(wire), 0)[0]) == n


def test_an_event_encodes_to_the_bytes_the_proto_defines():
    # field 1 wall_time (double, wire type 1), field 2 step (varint), field 3 file_version (string)
    data = tb._encode("Event", {"wall_time": 1.0, "step": 150, "file_version": "brain.Event:2"})
    assert data == (b"\x09" + struct.pack("<d", 1.0) + b"\x10\x96\x01" + b"\x1a\x0d" + b"brain.Event:2")
    # a nested message is length-delimited; a float is wire type 5; repeated doubles are packed
    value = tb._encode("Summary.Value", {"tag": "a", "simple_value": 0.5})
    assert value == b"\x0a\x01a" + b"\x15" + struct.pack("<f", 0.5)
    summary = tb._encode("Summary", {"value": [{"tag": "a", "simple_value": 0.5}]})
    assert summary == b"\x0a" + bytes([len(value)]) + value
    assert tb._encode("HistogramProto", {"bucket": [1.0, 2.0]}) == b"\x3a\x10" + struct.pack("<2d", 1.0, 2.0)


def test_decoding_inverts_encoding_and_skips_unknown_fields():
    event = {"wall_time": WALLTIME, "step": -3, "summary": {"value": [
        {"tag": "t", "tensor": {"dtype": tb.DT_INT64, "tensor_shape": {"dim": [{"size": 2}]},
                                "int64_val": [-5, 2**40]}},
        {"tag": "h", "histo": {"min": -1.5, "max": 2.0, "num": 3.0, "bucket_limit": [0.0, 1.0],
                               "bucket": [0.0, 3.0]}}]}}
    data = tb._encode("Event", event)
    assert tb._decode("Event", data) == event
    unknown = b"\x58\x07" + b"\x62\x02hi"  # field 11 (a varint) and field 12 (bytes): not in Event's table
    assert tb._decode("Event", unknown + data) == event


def test_the_decoder_takes_unpacked_repeated_numbers_too():
    unpacked = b"".join(b"\x31" + struct.pack("<d", v) for v in (1.0, 2.5))  # field 6, wire type 1, twice
    assert tb._decode("HistogramProto", unpacked) == {"bucket_limit": [1.0, 2.5]}


# ---- scalars ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [
    pytest.param(0.1, id="float"), pytest.param(3, id="int"), pytest.param(True, id="bool"),
    pytest.param(np.float32(2.5), id="numpy-float32"), pytest.param(np.float64(1 / 3), id="numpy-float64"),
    pytest.param(np.int64(-7), id="numpy-int64"), pytest.param(np.array(1e-3), id="0-d-array"),
    pytest.param(np.array([[4.25]]), id="1-element-array"),
    pytest.param(minifw.tensor(0.7, requires_grad=True), id="tensor-requiring-grad"),
    pytest.param(minifw.tensor([1.2], dtype=minifw.float64), id="1-element-tensor"),
    pytest.param(float("nan"), id="nan"), pytest.param(-math.inf, id="-inf"),
    pytest.param(1e300, id="beyond-float32"),
])
def test_add_scalar_writes_a_float32_simple_value(writer, value):
    writer.add_scalar("loss", value, global_step=7, walltime=WALLTIME)
    writer.flush()
    [(step, wall_time, v)] = values(writer.get_logdir())
    number = np.asarray(value.detach().numpy() if isinstance(value, minifw.Tensor) else value, np.float64)
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        expected = np.float32(number.reshape(-1)[0])
    assert step == 7 and wall_time == WALLTIME and v["tag"] == "loss"
    assert np.float32(v["simple_value"]).tobytes() == expected.tobytes()


@pytest.mark.parametrize("double_precision,field,dtype", [(False, "float_val", np.float32),
                                                          (True, "double_val", np.float64)])
def test_add_scalar_new_style_writes_a_scalars_plugin_tensor(writer, double_precision, field, dtype):
    value = 0.1 + 1e-12  # float32 and float64 tell it apart
    writer.add_scalar("lr", value, 3, new_style=True, double_precision=double_precision)
    writer.flush()
    [(_, _, v)] = values(writer.get_logdir())
    assert v["metadata"]["plugin_data"]["plugin_name"] == "scalars" and "simple_value" not in v
    assert v["tensor"]["dtype"] == {np.float32: tb.DT_FLOAT, np.float64: tb.DT_DOUBLE}[dtype]
    assert np.asarray(v["tensor"][field], dtype).tobytes() == np.asarray([value], dtype).tobytes()


def test_add_scalar_takes_the_step_as_an_integer_and_the_time_now_by_default(writer):
    before = datetime.datetime.now().timestamp()
    writer.add_scalar("a", 1.0, np.int64(3))
    writer.add_scalar("a", 1.0, 4.0)
    writer.add_scalar("a", 1.0, minifw.tensor(5))
    writer.add_scalar("a", 1.0)
    writer.flush()
    got = values(writer.get_logdir())
    assert [step for step, _, _ in got] == [3, 4, 5, 0]
    assert [e.get("step") for e in events(writer.get_logdir())][-1] is None  # no step: the field is absent
    assert all(before - 1 <= wall_time <= datetime.datetime.now().timestamp() + 1 for _, wall_time, _ in got)


@pytest.mark.parametrize("kwargs,exc,pattern", [
    pytest.param({"scalar_value": minifw.ones(3)}, ValueError,
                 r"add_scalar: scalar_value must hold one value, got a Tensor of shape \(3,\)", id="vector-tensor"),
    pytest.param({"scalar_value": np.zeros((2, 2))}, ValueError, r"must hold one value.*\(2, 2\)", id="matrix"),
    pytest.param({"scalar_value": "1.0"}, TypeError, r"scalar_value must be a Tensor.*got str", id="str"),
    pytest.param({"scalar_value": None}, TypeError, r"got NoneType", id="none"),
    pytest.param({"scalar_value": 1j}, TypeError, r"must hold real numbers, got dtype complex128", id="complex"),
    pytest.param({"tag": 3}, TypeError, r"add_scalar: tag must be a str, got int 3", id="tag"),
    pytest.param({"global_step": 2.5}, ValueError, r"global_step must be an integer, got 2\.5", id="fractional-step"),
    pytest.param({"global_step": True}, TypeError, r"global_step must be an int, got bool", id="bool-step"),
    pytest.param({"global_step": minifw.tensor([1.0, 2.0])}, ValueError, r"global_step must be an integer",
                 id="tensor-step"),
    pytest.param({"walltime": "now"}, TypeError, r"walltime must be a real number", id="walltime"),
    pytest.param({"new_style": 1}, TypeError, r"new_style must be a bool, got int", id="new-style"),
])
def test_add_scalar_errors(writer, kwargs, exc, pattern):
    arguments = dict(tag="x", scalar_value=1.0) | kwargs
    with pytest.raises(exc, match=pattern):
        writer.add_scalar(**arguments)
    writer.flush()
    assert values(writer.get_logdir()) == []


def test_add_scalars_writes_each_value_into_its_own_run(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("loss/phase", {"train": 0.5, "val": minifw.tensor(0.75)}, 2)
        w.add_scalars("loss/phase", {"train": 0.25}, 3, walltime=WALLTIME)
    assert values(tmp_path) == []
    train, val = tmp_path / "loss_phase_train", tmp_path / "loss_phase_val"
    assert sorted(os.listdir(tmp_path)) == sorted(["loss_phase_train", "loss_phase_val"] +
                                                  [os.path.basename(f) for f in event_files(tmp_path)])
    got = values(train)
    assert [(step, v["tag"], v["simple_value"]) for step, _, v in got] == [(2, "loss/phase", 0.5),
                                                                          (3, "loss/phase", 0.25)]
    assert got[1][1] == WALLTIME
    [(step, wall_time, v)] = values(val)
    assert (step, v["simple_value"]) == (2, 0.75) and wall_time == got[0][1]  # one time for the whole call


def test_add_scalars_wants_a_dict(writer):
    with pytest.raises(TypeError, match=r"add_scalars: tag_scalar_dict must be a dict, got list"):
        writer.add_scalars("a", [1.0])


# ---- histograms ------------------------------------------------------------------------------

def tensorflow_edges():
    positive = [1e-12]
    while positive[-1] * 1.1 < 1e20:
        positive.append(positive[-1] * 1.1)
    return [-e for e in positive[::-1]] + [0.0] + positive


@pytest.mark.parametrize("bins", ["tensorflow", "auto", 7, [-4.0, -1.0, 0.0, 0.5, 4.0]])
def test_add_histogram_matches_numpy(writer, bins):
    data = np.random.default_rng(0).normal(size=(20, 50)).astype(np.float32)
    writer.add_histogram("w", minifw.from_numpy(data), 11, bins=bins, walltime=WALLTIME)
    writer.flush()
    [(step, wall_time, v)] = values(writer.get_logdir())
    histo, flat = v["histo"], data.astype(np.float64).reshape(-1)
    assert (step, wall_time, v["tag"]) == (11, WALLTIME, "w")
    assert histo["min"] == flat.min() and histo["max"] == flat.max() and histo["num"] == flat.size
    assert histo["sum"] == pytest.approx(flat.sum(), rel=1e-12)
    assert histo["sum_squares"] == pytest.approx((flat ** 2).sum(), rel=1e-12)
    limits, counts = np.array(histo["bucket_limit"]), np.array(histo["bucket"])
    # the first bucket is empty, its right edge the left edge of the first bucket that holds values;
    # the others are numpy's buckets between those edges, the first and the last not empty
    assert counts[0] == 0 and counts[1] > 0 and counts[-1] > 0 and counts.sum() == flat.size
    np.testing.assert_array_equal(counts[1:], np.histogram(flat, bins=limits)[0])
    edges = {"tensorflow": tensorflow_edges(), "auto": np.histogram_bin_edges(flat, "auto"),
             7: np.histogram_bin_edges(flat, 7)}.get(bins if not isinstance(bins, list) else None, bins)
    assert set(limits) <= set(np.asarray(edges, np.float64))


def test_add_histogram_by_hand(writer):
    writer.add_histogram("h", np.array([0, 1, 1, 2, 3, 3, 3]), bins=3)
    writer.add_histogram("merged", np.arange(10), bins=list(range(11)), max_bins=3)
    writer.add_histogram("inner", np.array([5.0, 5.5]), bins=[0, 1, 2, 5, 6, 7])
    writer.flush()
    got = {v["tag"]: v["histo"] for _, _, v in values(writer.get_logdir())}
    assert (got["h"]["bucket_limit"], got["h"]["bucket"]) == ([0, 1, 2, 3], [0, 1, 2, 4])
    # ten buckets in groups of 10 // 3 = 3: edges 0, 3, 6, 9 and the last, 10
    assert (got["merged"]["bucket_limit"], got["merged"]["bucket"]) == ([0, 3, 6, 9, 10], [0, 3, 3, 3, 1])
    # only [5, 6) holds values: an empty bucket ending at 5, then it
    assert (got["inner"]["bucket_limit"], got["inner"]["bucket"]) == ([5, 6], [0, 2])


@pytest.mark.parametrize("values_,kwargs,exc,pattern", [
    pytest.param([1.0, float("nan"), float("inf")], {}, ValueError,
                 r"add_histogram: values must be finite .* got 1 NaN and 1 inf among 3 values", id="nan"),
    pytest.param(np.zeros(0), {}, ValueError, r"at least one value", id="empty"),
    pytest.param([1.0, 2.0], {"bins": "sideways"}, ValueError, r"add_histogram: bins='sideways'", id="bins"),
    pytest.param([1.0, 2.0], {"max_bins": 0}, ValueError, r"max_bins must be >= 1, got 0", id="max-bins"),
    pytest.param([10.0, 20.0], {"bins": [0, 1]}, ValueError, r"no value lies within the bins", id="outside"),
])
def test_add_histogram_errors(writer, values_, kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        writer.add_histogram("h", values_, **kwargs)


def test_add_histogram_raw(writer):
    writer.add_histogram_raw("raw", 0.0, 3.0, 4, 6.0, 14.0, [1.0, 2.0, 3.0], minifw.tensor([1, 2, 1]), 5)
    writer.flush()
    [(step, _, v)] = values(writer.get_logdir())
    assert step == 5 and v["histo"] == {"min": 0.0, "max": 3.0, "num": 4.0, "sum": 6.0, "sum_squares": 14.0,
                                        "bucket_limit": [1.0, 2.0, 3.0], "bucket": [1.0, 2.0, 1.0]}
    with pytest.raises(ValueError, match=r"bucket_limits and bucket_counts must have one length, got 2 and 3"):
        writer.add_histogram_raw("raw", 0, 1, 1, 1, 1, [1.0, 2.0], [1, 2, 3])


# ---- images ----------------------------------------------------------------------------------

def written_image(writer):
    writer.flush()
    image = values(writer.get_logdir())[-1][2]["image"]
    pixels = decode_png(image["encoded_image_string"])
    assert (image["height"], image["width"], image["colorspace"]) == pixels.shape
    return pixels


def test_add_image_scales_floats_by_255_and_truncates(writer):
    row = np.array([0.0, 0.5, 1.0, 1.5, -0.2, 0.999, float("nan")], np.float32)
    writer.add_image("img", minifw.from_numpy(np.stack([row, row * 0, row * 0])[:, None, :]), 1)
    pixels = written_image(writer)
    assert pixels.shape == (1, 7, 3)
    assert pixels[0, :, 0].tolist() == [0, 127, 255, 255, 0, 254, 0] and not pixels[:, :, 1:].any()


def test_add_image_keeps_uint8_and_clamps_other_integers(writer):
    data = np.arange(0, 256, dtype=np.uint8).reshape(16, 16)
    writer.add_image("u8", data, dataformats="HW")
    assert (written_image(writer) == data[:, :, None]).all()  # gray, written as three equal channels
    writer.add_image("i64", minifw.tensor([[[-5, 0, 17, 300]]] * 3), dataformats="CHW")
    assert written_image(writer)[0, :, 0].tolist() == [0, 0, 17, 255]


@pytest.mark.parametrize("shape,dataformats,expected", [
    pytest.param((3, 4, 5), "CHW", (4, 5, 3), id="CHW"),
    pytest.param((4, 5, 3), "HWC", (4, 5, 3), id="HWC"),
    pytest.param((5, 4, 3), "WHC", (4, 5, 3), id="WHC"),
    pytest.param((1, 4, 5), "CHW", (4, 5, 3), id="gray-CHW"),
    pytest.param((4, 5), "HW", (4, 5, 3), id="HW"),
    pytest.param((4, 5, 4), "hwc", (4, 5, 4), id="RGBA-lowercase"),
])
def test_add_image_dataformats(writer, shape, dataformats, expected):
    data = np.random.default_rng(1).integers(0, 256, size=shape).astype(np.uint8)
    writer.add_image("img", data, dataformats=dataformats)
    pixels = written_image(writer)
    assert pixels.shape == expected
    letters = dataformats.upper()
    hwc = data.transpose([letters.index(a) for a in "HWC" if a in letters])
    hwc = hwc.reshape(hwc.shape[:2] + (-1,))
    assert (pixels == (np.repeat(hwc, 3, axis=2) if hwc.shape[2] == 1 else hwc)).all()


@pytest.mark.parametrize("dataformats,layout", [("NCHW", lambda b: b), ("NHWC", lambda b: b.transpose(0, 2, 3, 1))])
def test_add_images_lays_a_batch_out_eight_to_a_row(writer, dataformats, layout):
    batch = np.stack([np.full((3, 2, 3), k / 10, np.float32) for k in range(1, 11)])  # 10 images, 2 x 3
    writer.add_images("batch", layout(batch), 4, dataformats=dataformats)
    pixels = written_image(writer)
    assert pixels.shape == (4, 24, 3)  # 2 rows of 8 images
    for k in range(10):
        top, left = (k // 8) * 2, (k % 8) * 3
        assert (pixels[top:top + 2, left:left + 3] == int(np.float32((k + 1) / 10) * np.float32(255))).all()
    assert not pixels[2:, 6:].any()  # the six cells without an image stay black


@pytest.mark.parametrize("img,dataformats,pattern", [
    pytest.param(np.zeros((2, 4, 4)), "CHW", r"add_image: an image must have 1, 3 or 4 channels.*got 2",
                 id="2-channels"),
    pytest.param(np.zeros((4, 4, 5)), "HWC", r"got 5", id="5-channels"),
    pytest.param(np.zeros((3, 4, 4)), "CHWX", r"dataformats must order the letters HW, CHW or NCHW", id="letters"),
    pytest.param(np.zeros((3, 4, 4)), "CCH", r"dataformats must order", id="repeated"),
    pytest.param(np.zeros((4, 4)), "CHW", r"img_tensor must have 3 dims to match dataformats='CHW', got a ndarray",
                 id="ndim"),
    pytest.param(np.zeros((3, 0, 4)), "CHW", r"at least one pixel", id="empty"),
])
def test_add_image_errors(writer, img, dataformats, pattern):
    with pytest.raises(ValueError, match=pattern):
        writer.add_image("img", img, dataformats=dataformats)


def test_add_figure_renders_and_closes(writer):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = [plt.figure(figsize=(2, 1), dpi=50, facecolor=color) for color in ("red", "blue")]
    writer.add_figure("one", figures[0], 1, close=False)
    assert plt.fignum_exists(figures[0].number)
    pixels = written_image(writer)
    assert pixels.shape == (50, 100, 3) and (pixels == [255, 0, 0]).all()
    writer.add_figure("two", figures, 2)
    pixels = written_image(writer)
    assert pixels.shape == (50, 200, 3) and (pixels[:, 100:] == [0, 0, 255]).all()
    assert not any(plt.fignum_exists(f.number) for f in figures)
    with pytest.raises(TypeError, match=r"add_figure: figure must be a matplotlib Figure.*got ndarray"):
        writer.add_figure("bad", np.zeros((3, 4, 4)))


# ---- text, hparams and the plugins' tensors ---------------------------------------------------

def test_add_text_is_a_string_tensor_of_the_text_plugin(writer):
    writer.add_text("notes", "**bold** – ünïcode", 3, walltime=WALLTIME)
    writer.flush()
    [(step, wall_time, v)] = values(writer.get_logdir())
    assert (step, wall_time, v["tag"]) == (3, WALLTIME, "notes/text_summary")
    assert v["tensor"] == {"dtype": tb.DT_STRING, "tensor_shape": {"dim": [{"size": 1}]},
                           "string_val": ["**bold** – ünïcode".encode()]}
    assert v["metadata"]["plugin_data"]["plugin_name"] == "text"
    with pytest.raises(TypeError, match=r"add_text: text_string must be a str, got int"):
        writer.add_text("notes", 3)


def test_add_hparams_writes_a_session_and_its_metrics(tmp_path):
    hparams = {"lr": 0.01, "batch": 32, "optimizer": "adam", "nesterov": True, "dropout": minifw.tensor(0.5),
               "unused": None}
    with SummaryWriter(tmp_path) as w:
        w.add_hparams(hparams, {"hp/accuracy": 0.9, "hp/loss": minifw.tensor(0.25)},
                      hparam_domain_discrete={"optimizer": ["adam", "sgd"], "batch": [16, 32]}, run_name="trial",
                      global_step=4)
    got = values(tmp_path / "trial")
    contents = {v["tag"]: tb._decode("HParamsPluginData", v["metadata"]["plugin_data"]["content"])
                for _, _, v in got if "metadata" in v}
    assert all(v["metadata"]["plugin_data"]["plugin_name"] == "hparams" for _, _, v in got if "metadata" in v)
    experiment = contents["_hparams_/experiment"]["experiment"]
    assert experiment["hparam_infos"] == [
        {"name": "lr", "type": 3}, {"name": "batch", "type": 3, "domain_discrete": {"values": [
            {"number_value": 16.0}, {"number_value": 32.0}]}},
        {"name": "optimizer", "type": 1, "domain_discrete": {"values": [
            {"string_value": "adam"}, {"string_value": "sgd"}]}},
        {"name": "nesterov", "type": 2}, {"name": "dropout", "type": 3}]
    assert experiment["metric_infos"] == [{"name": {"tag": "hp/accuracy"}}, {"name": {"tag": "hp/loss"}}]
    start = contents["_hparams_/session_start_info"]["session_start_info"]["hparams"]
    assert {e["key"]: e["value"] for e in start} == {
        "lr": {"number_value": 0.01}, "batch": {"number_value": 32.0}, "optimizer": {"string_value": "adam"},
        "nesterov": {"bool_value": True}, "dropout": {"number_value": 0.5}}
    assert contents["_hparams_/session_end_info"]["session_end_info"] == {"status": 1}
    scalars = [(step, v["tag"], v["simple_value"]) for step, _, v in got if "simple_value" in v]
    assert scalars == [(4, "hp/accuracy", np.float32(0.9)), (4, "hp/loss", 0.25)]


def test_add_hparams_names_its_run_by_the_time_by_default(tmp_path):
    before = datetime.datetime.now().timestamp()
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1}, {"m": 1.0})
    [run] = [d for d in os.listdir(tmp_path) if os.path.isdir(tmp_path / d)]
    assert before - 1 <= float(run) <= datetime.datetime.now().timestamp() + 1


@pytest.mark.parametrize("hparams,metrics,domains,pattern", [
    pytest.param([("lr", 0.1)], {}, None, r"hparam_dict and metric_dict must be dicts, got list", id="list"),
    pytest.param({"lr": [0.1]}, {}, None, r"hparam_dict\['lr'\] must be an int, float, str, bool", id="value"),
    pytest.param({"lr": 0.1}, {}, {"lr": [1, 2]}, r"hparam_domain_discrete\['lr'\] must be a list of values",
                 id="domain-type"),
    pytest.param({"lr": 0.1}, {}, {"wd": [0.1]}, r"hparam_domain_discrete\['wd'\]", id="domain-name"),
])
def test_add_hparams_errors(writer, hparams, metrics, domains, pattern):
    with pytest.raises(TypeError, match=pattern):
        writer.add_hparams(hparams, metrics, hparam_domain_discrete=domains)


def brute_force_pr_curve(labels, predictions, thresholds):
    rows = []
    for k in range(thresholds):
        positive = np.floor(predictions * (thresholds - 1)) >= k  # predicted positive at threshold k
        tp, fp = np.sum(positive & labels), np.sum(positive & ~labels)
        fn, tn = np.sum(~positive & labels), np.sum(~positive & ~labels)
        rows.append([tp, fp, tn, fn, tp / max(tp + fp, 1e-7), tp / max(tp + fn, 1e-7)])
    return np.array(rows, np.float32).T


def test_add_pr_curve_counts_at_each_threshold(writer):
    rng = np.random.default_rng(2)
    labels, predictions = rng.random(200) < 0.4, rng.random(200)
    writer.add_pr_curve("pr", minifw.tensor(labels), minifw.tensor(predictions), 6, num_thresholds=11)
    writer.add_pr_curve("capped", labels, predictions, num_thresholds=500)
    writer.flush()
    got = {v["tag"]: (step, v) for step, _, v in values(writer.get_logdir())}
    step, pr = got["pr"]
    assert step == 6 and pr["tensor"]["tensor_shape"] == {"dim": [{"size": 6}, {"size": 11}]}
    np.testing.assert_allclose(np.array(pr["tensor"]["float_val"]).reshape(6, 11),
                               brute_force_pr_curve(labels, predictions, 11), rtol=1e-6)
    assert tb._decode("PrCurvePluginData", pr["metadata"]["plugin_data"]["content"])["num_thresholds"] == 11
    assert pr["metadata"]["plugin_data"]["plugin_name"] == "pr_curves"
    assert got["capped"][1]["tensor"]["tensor_shape"] == {"dim": [{"size": 6}, {"size": 127}]}
    with pytest.raises(ValueError, match=r"add_pr_curve: predictions must lie in \[0, 1\]"):
        writer.add_pr_curve("pr", labels, predictions * 2)
    with pytest.raises(ValueError, match=r"labels and predictions must have one shape, got \(200,\) and \(3,\)"):
        writer.add_pr_curve("pr", labels, predictions[:3])


def test_add_pr_curve_raw(writer):
    rows = [np.arange(3) + k for k in range(6)]
    writer.add_pr_curve_raw("raw", *rows, global_step=1, num_thresholds=3)
    writer.flush()
    [(_, _, v)] = values(writer.get_logdir())
    assert v["tensor"]["float_val"] == np.concatenate(rows).tolist()
    with pytest.raises(ValueError, match=r"the six rows must have one length"):
        writer.add_pr_curve_raw("raw", *rows[:5], np.arange(4))


def test_add_audio_writes_a_16_bit_wav(writer):
    samples = np.sin(np.linspace(0, 20, 800))
    writer.add_audio("sine", minifw.tensor(samples[None]), 2, sample_rate=8000)
    writer.flush()
    [(step, _, v)] = values(writer.get_logdir())
    audio = v["audio"]
    assert step == 2 and audio["sample_rate"] == 8000 and audio["num_channels"] == 1
    assert audio["length_frames"] == 800 and audio["content_type"] == "audio/wav"
    with wave.open(io.BytesIO(audio["encoded_audio_string"])) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 8000)
        frames = np.frombuffer(wav.readframes(800), "<i2")
    assert frames.tolist() == (samples * 32767).astype(np.int16).tolist()
    with pytest.warns(UserWarning, match=r"add_audio: samples outside \[-1, 1\] \(up to 2\) are clipped"):
        writer.add_audio("loud", np.array([2.0, -0.5]))
    with pytest.raises(ValueError, match=r"add_audio: snd_tensor must hold one channel"):
        writer.add_audio("stereo", np.zeros((2, 10)))


def test_add_mesh_writes_one_tensor_per_part(writer):
    vertices = np.random.default_rng(3).random((1, 4, 3)).astype(np.float32)
    faces = np.array([[[0, 1, 2], [1, 2, 3]]])
    colors = np.full((1, 4, 3), 200)
    writer.add_mesh("shape", vertices, colors=colors, faces=faces, config_dict={"camera": {"fov": 75}},
                    global_step=1)
    writer.flush()
    got = {v["tag"]: v for _, _, v in values(writer.get_logdir())}
    assert list(got) == ["shape_VERTEX", "shape_FACE", "shape_COLOR"]
    for (tag, v), array, kind in zip(got.items(), (vertices, faces, colors), (1, 2, 3)):
        assert v["tensor"]["float_val"] == array.astype(np.float32).reshape(-1).tolist()
        content = tb._decode("MeshPluginData", v["metadata"]["plugin_data"]["content"])
        assert content == {"name": "shape", "content_type": kind, "shape": list(array.shape),
                           "json_config": '{"camera": {"fov": 75}}', "components": 0b1110}
    with pytest.raises(ValueError, match=r"add_mesh: vertices must have shape \(B, N, 3\), got shape \(4, 3\)"):
        writer.add_mesh("shape", vertices[0])


def test_add_custom_scalars_writes_the_layout(writer):
    writer.add_custom_scalars({"training": {"losses": ["Multiline", ["loss/train", "loss/val"]],
                                            "band": ["Margin", ["m", "lo", "hi"]]}})
    writer.add_custom_scalars_multilinechart(["a", "b"])
    writer.flush()
    got = values(writer.get_logdir())
    assert [v["tag"] for _, _, v in got] == ["custom_scalars__config__"] * 2
    layout = tb._decode("Layout", got[0][2]["tensor"]["string_val"][0])
    assert layout == {"category": [{"title": "training", "chart": [
        {"title": "losses", "multiline": {"tag": ["loss/train", "loss/val"]}},
        {"title": "band", "margin": {"series": [{"value": "m", "lower": "lo", "upper": "hi"}]}}]}]}
    assert tb._decode("Layout", got[1][2]["tensor"]["string_val"][0])["category"][0]["title"] == "default"
    with pytest.raises(ValueError, match=r"a Margin chart takes 3 tags"):
        writer.add_custom_scalars_marginchart(["a", "b"])


def test_add_tensor(writer):
    writer.add_tensor("ints", minifw.arange(6).reshape(2, 3), 1)
    writer.add_tensor("doubles", np.array([0.1, 0.2]))
    writer.flush()
    got = {v["tag"]: v["tensor"] for _, _, v in values(writer.get_logdir())}
    assert got["ints"] == {"dtype": tb.DT_INT64, "tensor_shape": {"dim": [{"size": 2}, {"size": 3}]},
                           "int64_val": [0, 1, 2, 3, 4, 5]}
    assert got["doubles"]["double_val"] == [0.1, 0.2]
    with pytest.raises(TypeError, match=r"add_tensor: tensor must be float32, float64, int32, int64 or bool, "
                                        r"got uint8"):
        writer.add_tensor("u8", np.zeros(2, np.uint8))


def test_add_embedding_writes_the_projector_files(tmp_path):
    mat = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
    images = np.random.default_rng(4).random((4, 3, 5, 5))
    with SummaryWriter(tmp_path) as w:
        w.add_embedding(minifw.from_numpy(mat), metadata=["a", "b", "c", "d"], label_img=images, global_step=3)
        w.add_embedding(mat, metadata=[["a", 1], ["b", 2], ["c", 3], ["d", 4]], metadata_header=["name", "n"],
                        tag="with/slash")
    folder = tmp_path / "00003" / "default"
    assert (folder / "tensors.tsv").read_text() == "".join("\t".join(str(float(x)) for x in row) + "\n"
                                                           for row in mat)
    assert (folder / "metadata.tsv").read_text() == "a\nb\nc\nd\n"
    sprite = decode_png((folder / "sprite.png").read_bytes())
    assert sprite.shape == (10, 10, 3)  # 2 x 2 images of 5 x 5
    assert (sprite[5:, 5:] == (images[3].astype(np.float32) * 255).astype(np.uint8).transpose(1, 2, 0)).all()
    assert (tmp_path / "00000" / "with%2fslash" / "metadata.tsv").read_text() == "name\tn\na\t1\nb\t2\nc\t3\nd\t4\n"
    assert (tmp_path / "projector_config.pbtxt").read_text() == (
        'embeddings {\n  tensor_name: "default:00003"\n  metadata_path: "00003/default/metadata.tsv"\n'
        '  sprite {\n    image_path: "00003/default/sprite.png"\n    single_image_dim: 5\n'
        '    single_image_dim: 5\n  }\n  tensor_path: "00003/default/tensors.tsv"\n}\n'
        'embeddings {\n  tensor_name: "with/slash:00000"\n  metadata_path: "00000/with%2fslash/metadata.tsv"\n'
        '  tensor_path: "00000/with%2fslash/tensors.tsv"\n}\n')


def test_add_embedding_errors(writer):
    with pytest.raises(ValueError, match=r"add_embedding: mat must be 2-D"):
        writer.add_embedding(np.zeros(3))
    with pytest.raises(ValueError, match=r"metadata must have one entry per row of mat \(2\), got 3"):
        writer.add_embedding(np.zeros((2, 3)), metadata=[1, 2, 3])


# ---- files, directories and when records are written ------------------------------------------

def test_file_names_and_the_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1", filename_suffix=".trial") as w:
        log_dir = w.get_logdir()
    host = socket.gethostname()
    assert os.path.dirname(log_dir) == "runs" and log_dir.endswith(f"_{host}_lr0.1")
    stamp = os.path.basename(log_dir)[:-len(f"_{host}_lr0.1")]
    when = datetime.datetime.strptime(stamp, "%b%d_%H-%M-%S").replace(year=datetime.datetime.now().year)
    assert abs((datetime.datetime.now() - when).total_seconds()) < 120
    [path] = event_files(log_dir)
    name = re.fullmatch(rf"events\.out\.tfevents\.(\d{{10}})\.{re.escape(host)}\.{os.getpid()}\.(\d+)\.trial",
                        os.path.basename(path))
    assert name and abs(int(name.group(1)) - datetime.datetime.now().timestamp()) < 120


def test_a_log_dir_given_is_made_and_comment_ignored(tmp_path):
    target = tmp_path / "a" / "b"
    with SummaryWriter(target, comment="ignored") as w:
        assert w.get_logdir() == str(target) and os.path.isdir(target)
    assert len(event_files(target)) == 1


def test_purge_step_writes_a_session_start(tmp_path):
    with SummaryWriter(tmp_path, purge_step=40) as w:
        w.add_scalar("x", 1.0, 40)
    first, start, scalar = events(tmp_path)
    assert (first["step"], first["file_version"]) == (40, "brain.Event:2")
    assert (start["step"], start["session_log"]) == (40, {"status": 1})
    assert scalar["step"] == 40


def test_close_context_manager_and_a_new_file_after_close(tmp_path):
    with SummaryWriter(tmp_path, max_queue=100) as w:
        w.add_scalar("x", 1.0, 1)
        assert len(_read_events(event_files(tmp_path)[0])) == 1  # the file version only: the scalar waits
    assert len(_read_events(event_files(tmp_path)[0])) == 2
    w.close()  # a second close does nothing
    w.add_scalar("x", 2.0, 2)  # a new file, as PyTorch's writer opens one
    w.close()
    assert [len(_read_events(f)) for f in event_files(tmp_path)] == [2, 2]


def test_max_queue_records_wait_then_are_written_together(tmp_path):
    w = SummaryWriter(tmp_path, max_queue=3)
    path = event_files(tmp_path)[0]
    counts = []
    for step in range(7):
        w.add_scalar("x", float(step), step)
        counts.append(len(_read_events(path)) - 1)
    assert counts == [0, 0, 3, 3, 3, 6, 6]
    w.flush()
    assert len(_read_events(path)) - 1 == 7
    w.close()


def test_flush_secs_is_checked_on_each_add(tmp_path, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(tb, "_clock", lambda: now[0])
    w = SummaryWriter(tmp_path, max_queue=100, flush_secs=10)
    path = event_files(tmp_path)[0]
    counts = []
    for advance in (0, 4, 5.9, 0.2, 3, 7):  # seconds since the previous add
        now[0] += advance
        w.add_scalar("x", 1.0)
        counts.append(len(_read_events(path)) - 1)
    # 10.1 s after the first write the 4th add writes all four; 10 s after that the 6th writes two
    assert counts == [0, 0, 0, 4, 4, 6]
    w.close()


def test_nothing_is_lost_without_close(tmp_path):
    code = ("import sys\nfrom minifw.utils.tensorboard import SummaryWriter\n"
            "w = SummaryWriter(sys.argv[1])\n"
            "for step in range(5):\n    w.add_scalar('loss', 1.0 / (step + 1), step)\n")
    assert _run_child(code, tmp_path).returncode == 0
    assert [(step, v["simple_value"]) for step, _, v in values(tmp_path)] == [
        (s, np.float32(1.0 / (s + 1))) for s in range(5)]


def _run_child(code, *args):
    from childenv import child_env

    return subprocess.run([sys.executable, "-c", code, *map(str, args)], env=child_env(), timeout=120)


def test_a_killed_process_leaves_every_written_record_readable(tmp_path):
    code = ("import os, signal, sys\nfrom minifw.utils.tensorboard import SummaryWriter\n"
            "w = SummaryWriter(sys.argv[1], max_queue=2)\n"
            "for step in range(5):\n    w.add_scalar('x', float(step), step)\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    assert _run_child(code, tmp_path).returncode == -9
    # two writes of two records each; the fifth record was still waiting
    assert [step for step, _, _ in values(tmp_path)] == [0, 1, 2, 3]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_write_the_parents_records(tmp_path):
    code = ("import os, sys\nfrom minifw.utils.tensorboard import SummaryWriter\n"
            "w = SummaryWriter(sys.argv[1])\nw.add_scalar('x', 1.0, 1)\n"
            "pid = os.fork()\n"
            "if pid == 0:\n    sys.exit(0)\n"  # the child exits normally: its finalizers run
            "os.waitpid(pid, 0)\nw.add_scalar('x', 2.0, 2)\nw.close()\n")
    assert _run_child(code, tmp_path).returncode == 0
    assert [step for step, _, _ in values(tmp_path)] == [1, 2]


def test_a_writer_collected_without_close_writes_its_records(tmp_path):
    w = SummaryWriter(tmp_path)
    w.add_scalar("x", 1.0, 1)
    del w
    gc.collect()
    assert len(values(tmp_path)) == 1


@pytest.mark.parametrize("kwargs,exc,pattern", [
    pytest.param({"max_queue": 0}, ValueError, r"SummaryWriter: max_queue must be >= 1, got 0", id="max-queue"),
    pytest.param({"flush_secs": -1}, ValueError, r"flush_secs must be >= 0", id="flush-secs"),
    pytest.param({"purge_step": -2}, ValueError, r"purge_step must be >= 0", id="purge-step"),
    pytest.param({"comment": 5}, TypeError, r"comment must be a str, got int", id="comment"),
    pytest.param({"log_dir": 5}, TypeError, r"log_dir must be a str or a path, got int", id="log-dir"),
])
def test_constructor_errors(tmp_path, monkeypatch, kwargs, exc, pattern):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(exc, match=pattern):
        SummaryWriter(**kwargs)
    assert not os.path.exists(tmp_path / "runs")


def test_reachable_as_an_attribute_and_leaves_out_what_it_cannot_do():
    assert minifw.utils.tensorboard.SummaryWriter is SummaryWriter
    for name in ("add_graph", "add_onnx_graph", "add_video", "add_image_with_boxes"):
        assert not hasattr(SummaryWriter, name)


# ---- TensorBoard's own reader ----------------------------------------------------------------

def test_tensorboard_reads_what_minifw_writes(tmp_path):
    pytest.importorskip("tensorboard")
    from google.protobuf import text_format
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.compat.proto import event_pb2
    from tensorboard.compat.tensorflow_stub import pywrap_tensorflow
    from tensorboard.plugins.custom_scalar import layout_pb2
    from tensorboard.plugins.hparams import plugin_data_pb2 as hparams_pb2
    from tensorboard.plugins.pr_curve import plugin_data_pb2 as pr_curve_pb2
    from tensorboard.plugins.projector import projector_config_pb2

    rng = np.random.default_rng(5)
    data, image = rng.normal(size=500), rng.random((3, 6, 7)).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalar("loss", 1.0 / (step + 1), step, walltime=WALLTIME + step)
        w.add_scalar("lr", 0.125, 0, new_style=True, double_precision=True)
        w.add_histogram("weights", data, 1)
        w.add_image("picture", image, 2)
        w.add_text("notes", "hello", 3)
        w.add_pr_curve("pr", rng.random(50) < 0.5, rng.random(50), 4, num_thresholds=9)
        w.add_custom_scalars_multilinechart(["loss", "lr"])
        w.add_hparams({"lr": 0.1, "opt": "sgd"}, {"hp/acc": 0.5}, run_name="session")
        w.add_embedding(rng.random((3, 2)), metadata=["x", "y", "z"])
        w.add_scalars("phase", {"train": 1.0}, 0)

    # every record passes TensorBoard's CRC checks and parses as its Event proto
    [path] = event_files(tmp_path)
    reader, ours = pywrap_tensorflow.PyRecordReader_New(path), _read_events(path)
    for expected in ours:
        reader.GetNext()
        event = event_pb2.Event.FromString(reader.record())
        assert event.wall_time == expected["wall_time"] and event.step == expected.get("step", 0)

    accumulator = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0, "histograms": 0, "images": 0,
                                                                 "tensors": 0})
    accumulator.Reload()
    assert [(e.step, e.wall_time, e.value) for e in accumulator.Scalars("loss")] == [
        (s, WALLTIME + s, np.float32(1.0 / (s + 1))) for s in range(3)]
    [lr] = accumulator.Tensors("lr")
    assert list(lr.tensor_proto.double_val) == [0.125]
    [histogram] = accumulator.Histograms("weights")
    ours_histogram = [v for e in ours if "summary" in e for v in e["summary"]["value"] if v["tag"] == "weights"][0]
    assert histogram.step == 1 and list(histogram.histogram_value.bucket) == ours_histogram["histo"]["bucket"]
    assert list(histogram.histogram_value.bucket_limit) == ours_histogram["histo"]["bucket_limit"]
    assert histogram.histogram_value.num == 500 and histogram.histogram_value.min == data.min()
    [picture] = accumulator.Images("picture")
    pixels = decode_png(picture.encoded_image_string)
    assert (picture.step, picture.height, picture.width) == (2, 6, 7)
    assert (pixels == (image * 255).astype(np.uint8).transpose(1, 2, 0)).all()
    [text] = accumulator.Tensors("notes/text_summary")
    assert text.step == 3 and list(text.tensor_proto.string_val) == [b"hello"]
    assert accumulator.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"
    [pr] = accumulator.Tensors("pr")
    content = accumulator.PluginTagToContent("pr_curves")["pr"]
    assert pr_curve_pb2.PrCurvePluginData.FromString(content).num_thresholds == 9
    assert [d.size for d in pr.tensor_proto.tensor_shape.dim] == [6, 9]
    [layout_event] = accumulator.Tensors("custom_scalars__config__")
    layout = layout_pb2.Layout.FromString(layout_event.tensor_proto.string_val[0])
    assert list(layout.category[0].chart[0].multiline.tag) == ["loss", "lr"]

    session = EventAccumulator(str(tmp_path / "session"), size_guidance={"scalars": 0})
    session.Reload()
    contents = session.PluginTagToContent("hparams")
    start = hparams_pb2.HParamsPluginData.FromString(contents["_hparams_/session_start_info"])
    assert start.session_start_info.hparams["lr"].number_value == 0.1
    assert start.session_start_info.hparams["opt"].string_value == "sgd"
    experiment = hparams_pb2.HParamsPluginData.FromString(contents["_hparams_/experiment"]).experiment
    assert [info.name for info in experiment.hparam_infos] == ["lr", "opt"]
    assert [m.name.tag for m in experiment.metric_infos] == ["hp/acc"]
    end = hparams_pb2.HParamsPluginData.FromString(contents["_hparams_/session_end_info"]).session_end_info
    assert end.status == 1 and session.Scalars("hp/acc")[0].value == 0.5

    config = text_format.Parse((tmp_path / "projector_config.pbtxt").read_text(),
                               projector_config_pb2.ProjectorConfig())
    assert [e.tensor_name for e in config.embeddings] == ["default:00000"]
    assert (tmp_path / config.embeddings[0].tensor_path).is_file()

    phase = EventAccumulator(str(tmp_path / "phase_train"), size_guidance={"scalars": 0})
    phase.Reload()
    assert [(e.step, e.value) for e in phase.Scalars("phase")] == [(0, 1.0)]


def test_add_figure_without_matplotlib_says_so(writer, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)  # its import now fails
    with pytest.raises(ImportError, match=r"add_figure needs matplotlib, which is not installed"):
        writer.add_figure("fig", object())


# ---- PyTorch's writer ------------------------------------------------------------------------

def _normalized(directory, given_times):
    """{run: events} under directory, with PNGs as pixels, plugin contents decoded, maps sorted,
    and the wall times not given explicitly (the time of writing) left out."""
    from PIL import Image

    contents = {"pr_curves": "PrCurvePluginData", "mesh": "MeshPluginData", "hparams": "HParamsPluginData"}

    def normalize(value):
        if isinstance(value, list):
            return [normalize(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {k: normalize(v) for k, v in value.items()}
        if "encoded_image_string" in value:
            out["encoded_image_string"] = np.asarray(Image.open(io.BytesIO(value["encoded_image_string"]))).tolist()
        if value.get("plugin_name") in contents and "content" in value:
            out["content"] = normalize(tb._decode(contents[value["plugin_name"]], value["content"]))
        if "hparams" in value and isinstance(value["hparams"], list):
            out["hparams"] = sorted(out["hparams"], key=lambda entry: entry["key"])
        if out.get("wall_time") not in given_times:
            out.pop("wall_time", None)
        return out

    return {os.path.relpath(folder, directory): [normalize(e) for e in _read_events(path)]
            for folder, _, files in os.walk(directory) for path in event_files(folder)}


def test_the_same_calls_write_what_pytorchs_writer_writes(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    pytest.importorskip("PIL")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    rng = np.random.default_rng(6)
    data, image = rng.normal(size=300).astype(np.float32), rng.random((3, 5, 6)).astype(np.float32)
    batch, sound = rng.random((10, 1, 4, 4)).astype(np.float32), np.sin(np.linspace(0, 50, 1000))
    labels, predictions = rng.random(60) < 0.5, rng.random(60)
    vertices, faces = rng.random((1, 4, 3)).astype(np.float32), np.array([[[0, 1, 2], [1, 2, 3]]])

    def log(w, tensor):
        w.add_scalar("s", tensor(0.3), 1, walltime=1.0)
        w.add_scalar("s", 0.3, 2, walltime=2.0, new_style=True)
        w.add_scalar("s", 0.3, 3, walltime=3.0, new_style=True, double_precision=True)
        w.add_scalars("main/tag", {"a": 1.0, "b": tensor(2.0)}, 4, walltime=4.0)
        for k, bins in enumerate(["tensorflow", "auto", 20, [-3.0, 0.0, 0.5, 3.0]]):
            w.add_histogram(f"h{k}", tensor(data), 5, bins=bins, walltime=5.0)
        w.add_histogram("merged", tensor(data), 5, bins="auto", max_bins=7, walltime=5.0)
        w.add_image("chw", tensor(image), 6, walltime=6.0)
        w.add_image("hwc", tensor(image.transpose(1, 2, 0).copy()), 6, walltime=6.0, dataformats="HWC")
        w.add_image("hw", tensor(image[0].copy()), 6, walltime=6.0, dataformats="HW")
        w.add_images("batch", tensor(batch), 6, walltime=6.0)
        w.add_text("text", "héllo **world**", 7, walltime=7.0)
        w.add_pr_curve("pr", labels, predictions, 8, num_thresholds=20, walltime=8.0)
        w.add_audio("sound", tensor(sound[None]), 9, sample_rate=1000, walltime=9.0)
        w.add_mesh("mesh", tensor(vertices), faces=tensor(faces), global_step=10, walltime=10.0)
        w.add_custom_scalars({"c": {"x": ["Multiline", ["s"]], "y": ["Margin", ["s", "lo", "hi"]]}})
        w.add_hparams({"lr": 0.1, "opt": "sgd", "n": 3}, {"hp/m": 0.5}, run_name="hp",
                      hparam_domain_discrete={"opt": ["sgd", "adam"]})

    for name, writer_class, tensor in (("torch", TorchWriter, torch.tensor), ("minifw", SummaryWriter, minifw.tensor)):
        with writer_class(tmp_path / name, purge_step=3) as w:
            log(w, tensor)
    given = {float(t) for t in range(1, 11)}
    theirs, ours = _normalized(tmp_path / "torch", given), _normalized(tmp_path / "minifw", given)
    assert sorted(ours) == sorted(theirs) == [".", "hp", "main_tag_a", "main_tag_b"]
    for run in theirs:
        assert len(ours[run]) == len(theirs[run])
        for mine, pytorchs in zip(ours[run], theirs[run]):
            assert mine == pytorchs


# ---- a PyTorch-style script (tests/scripts/tensorboard_logging.py) ----------------------------

def _script_logs(log_dir):
    scalars = {}
    for run in ("", "parameters_w0", "parameters_w1", "parameters_w2"):
        for step, _, v in values(os.path.join(log_dir, run)):
            if "simple_value" in v:
                scalars.setdefault((run, v["tag"]), []).append((step, v["simple_value"]))
    histograms = [(step, v["histo"]) for step, _, v in values(log_dir) if "histo" in v]
    return scalars, histograms


def test_the_logging_script_differs_from_pytorch_code_only_in_its_imports():
    from pytorch_scripts import IMPORT, lines_naming_minifw

    code = lines_naming_minifw("tensorboard_logging.py")
    assert "from minifw.utils.tensorboard import SummaryWriter" in code and all(IMPORT.match(line) for line in code)


def test_the_logging_script_writes_its_training_run(tmp_path):
    import runpy

    from pytorch_scripts import SCRIPTS

    script = runpy.run_path(os.path.join(SCRIPTS, "tensorboard_logging.py"))
    losses = script["main"](str(tmp_path))
    scalars, histograms = _script_logs(tmp_path)
    assert [step for step, _ in scalars[("", "loss/step")]] == list(range(16))
    assert [(s, v) for s, v in scalars[("", "loss/epoch")]] == [(e, np.float32(loss)) for e, loss in enumerate(losses)]
    assert losses[-1] < 0.05 * losses[0]  # the regression converges
    assert [step for step, _ in histograms] == [0, 1, 2, 3] and all(h["num"] == 3 for _, h in histograms)
    assert [scalars[(f"parameters_w{i}", "parameters")][-1][1] for i in range(3)] == pytest.approx([1.5, -2.0, 0.5],
                                                                                                  abs=0.2)
    [(step, _, text)] = [(s, t, v) for s, t, v in values(tmp_path) if "tensor" in v]
    assert step == 4 and text["tensor"]["string_val"] == [f"final loss {losses[-1]:.4f} after 4 epochs".encode()]
    assert values(tmp_path / "hparams")[-1][2] == {"tag": "hparam/loss", "simple_value": np.float32(losses[-1])}


def test_the_logging_script_under_pytorch_logs_the_same_run(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("tensorboard")  # PyTorch's SummaryWriter needs it; minifw's does not
    import runpy

    from pytorch_scripts import SCRIPTS, run_under_torch

    ours = runpy.run_path(os.path.join(SCRIPTS, "tensorboard_logging.py"))["main"](str(tmp_path / "minifw"))
    theirs = run_under_torch("tensorboard_logging.py", tmp_path)["main"](str(tmp_path / "torch"))
    assert ours == pytest.approx(theirs, rel=1e-5)
    (our_scalars, our_histograms), (their_scalars, their_histograms) = (_script_logs(tmp_path / "minifw"),
                                                                        _script_logs(tmp_path / "torch"))
    assert our_scalars.keys() == their_scalars.keys()
    for key, series in our_scalars.items():
        assert [s for s, _ in series] == [s for s, _ in their_scalars[key]]
        assert [v for _, v in series] == pytest.approx([v for _, v in their_scalars[key]], rel=1e-5, abs=1e-7)
    for (step, mine), (their_step, pytorchs) in zip(our_histograms, their_histograms, strict=True):
        assert step == their_step and mine["num"] == pytorchs["num"]
        assert (mine["min"], mine["max"]) == pytest.approx((pytorchs["min"], pytorchs["max"]), rel=1e-5)
