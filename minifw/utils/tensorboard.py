"""TensorBoard logs, as torch.utils.tensorboard: a SummaryWriter writes the event files that
TensorBoard reads, with no TensorFlow, TensorBoard or protobuf package installed.

    writer = SummaryWriter()                   # runs/May04_22-14-54_<host>
    for step in range(100):
        writer.add_scalar("loss", loss, step)
    writer.close()

An event file is a sequence of TFRecords, each holding one `Event` protocol buffer: the data's
length (uint64, little-endian), a masked CRC-32C of those 8 bytes, the data, and a masked
CRC-32C of the data. The messages are encoded here from a table of their fields (_MESSAGES,
with the field numbers of TensorBoard's .proto files); _read_events decodes a file back with
the same table and checks every CRC.

There is no background thread: records wait in memory until max_queue of them are pending,
or until an add finds flush_secs passed since the last write, or until flush(), close(), the
writer's garbage collection or the interpreter's exit. Each write appends whole records to
the file, so a crash leaves every record written before it readable.
"""
import functools
import itertools
import json
import math
import numbers
import os
import socket
import struct
import threading
import time
import warnings
import weakref
from datetime import datetime

import numpy as np

from .. import devices
from ..checks import check_bool, check_int, check_real
from ..tensor import Tensor

__all__ = ["SummaryWriter"]

# ---- protocol buffers ------------------------------------------------------------------------
# The messages minifw writes: field number -> (name, type), a type being a protobuf scalar type
# or another message's name, in brackets for a repeated field. The numbers are those of
# tensorboard/compat/proto (event, summary, tensor, tensor_shape), of the plugins' plugin_data
# and layout protos, and of google/protobuf/struct.proto (hparams' values). Fields minifw never
# writes are left out; the reader skips fields it does not know, as protobuf's parsers do.
_MESSAGES = {
    "Event": {1: ("wall_time", "double"), 2: ("step", "int64"), 3: ("file_version", "string"),
              5: ("summary", "Summary"), 7: ("session_log", "SessionLog")},
    "SessionLog": {1: ("status", "enum"), 2: ("checkpoint_path", "string"), 3: ("msg", "string")},
    "Summary": {1: ("value", "[Summary.Value]")},
    "Summary.Value": {1: ("tag", "string"), 2: ("simple_value", "float"), 4: ("image", "Summary.Image"),
                      5: ("histo", "HistogramProto"), 6: ("audio", "Summary.Audio"), 8: ("tensor", "TensorProto"),
                      9: ("metadata", "SummaryMetadata")},
    "Summary.Image": {1: ("height", "int32"), 2: ("width", "int32"), 3: ("colorspace", "int32"),
                      4: ("encoded_image_string", "bytes")},
    "Summary.Audio": {1: ("sample_rate", "float"), 2: ("num_channels", "int64"), 3: ("length_frames", "int64"),
                      4: ("encoded_audio_string", "bytes"), 5: ("content_type", "string")},
    "SummaryMetadata": {1: ("plugin_data", "SummaryMetadata.PluginData"), 2: ("display_name", "string"),
                        3: ("summary_description", "string")},
    "SummaryMetadata.PluginData": {1: ("plugin_name", "string"), 2: ("content", "bytes")},
    "HistogramProto": {1: ("min", "double"), 2: ("max", "double"), 3: ("num", "double"), 4: ("sum", "double"),
                       5: ("sum_squares", "double"), 6: ("bucket_limit", "[double]"), 7: ("bucket", "[double]")},
    "TensorProto": {1: ("dtype", "enum"), 2: ("tensor_shape", "TensorShapeProto"), 5: ("float_val", "[float]"),
                    6: ("double_val", "[double]"), 7: ("int_val", "[int32]"), 8: ("string_val", "[bytes]"),
                    10: ("int64_val", "[int64]"), 11: ("bool_val", "[bool]")},
    "TensorShapeProto": {2: ("dim", "[TensorShapeProto.Dim]")},
    "TensorShapeProto.Dim": {1: ("size", "int64"), 2: ("name", "string")},
    # the plugins' content (SummaryMetadata.PluginData.content)
    "TextPluginData": {1: ("version", "int32")},
    "PrCurvePluginData": {1: ("version", "int32"), 2: ("num_thresholds", "uint32")},
    "MeshPluginData": {1: ("version", "int32"), 2: ("name", "string"), 3: ("content_type", "enum"),
                       5: ("json_config", "string"), 6: ("shape", "[int32]"), 7: ("components", "uint32")},
    "Layout": {1: ("version", "int32"), 2: ("category", "[Category]")},
    "Category": {1: ("title", "string"), 2: ("chart", "[Chart]"), 3: ("closed", "bool")},
    "Chart": {1: ("title", "string"), 2: ("multiline", "MultilineChartContent"), 3: ("margin", "MarginChartContent")},
    "MultilineChartContent": {1: ("tag", "[string]")},
    "MarginChartContent": {1: ("series", "[MarginChartContent.Series]")},
    "MarginChartContent.Series": {1: ("value", "string"), 2: ("lower", "string"), 3: ("upper", "string")},
    "HParamsPluginData": {1: ("version", "int32"), 2: ("experiment", "Experiment"),
                          3: ("session_start_info", "SessionStartInfo"), 4: ("session_end_info", "SessionEndInfo")},
    "Experiment": {4: ("hparam_infos", "[HParamInfo]"), 5: ("metric_infos", "[MetricInfo]")},
    "HParamInfo": {1: ("name", "string"), 4: ("type", "enum"), 5: ("domain_discrete", "ListValue")},
    "MetricInfo": {1: ("name", "MetricName")},
    "MetricName": {1: ("group", "string"), 2: ("tag", "string")},
    # a map<string, Value> is a repeated message of (key, value) entries
    "SessionStartInfo": {1: ("hparams", "[SessionStartInfo.HparamsEntry]"), 4: ("group_name", "string"),
                         5: ("start_time_secs", "double")},
    "SessionStartInfo.HparamsEntry": {1: ("key", "string"), 2: ("value", "Value")},
    "SessionEndInfo": {1: ("status", "enum"), 2: ("end_time_secs", "double")},
    "Value": {2: ("number_value", "double"), 3: ("string_value", "string"), 4: ("bool_value", "bool"),
              6: ("list_value", "ListValue")},
    "ListValue": {1: ("values", "[Value]")},
}
# name -> (number, type, repeated), per message, for the encoder
_FIELDS = {message: {name: (number, kind.strip("[]"), kind.startswith("["))
                     for number, (name, kind) in fields.items()}
           for message, fields in _MESSAGES.items()}
_VARINT_TYPES = {"int32", "int64", "uint32", "uint64", "bool", "enum"}
_PACKABLE = _VARINT_TYPES | {"double", "float"}  # repeated ones are written packed, as proto3 does
_WIRE_TYPES = dict.fromkeys(_VARINT_TYPES, 0) | {"double": 1, "float": 5}  # all others: 2, length-delimited

# types.proto's DataType values, SessionLog's START, and hparams' enums
DT_FLOAT, DT_DOUBLE, DT_INT32, DT_STRING, DT_INT64, DT_BOOL = 1, 2, 3, 7, 9, 10
_SESSION_START = 1
_HPARAM_STRING, _HPARAM_BOOL, _HPARAM_FLOAT64 = 1, 2, 3
_STATUS_SUCCESS = 1
_MESH_VERTEX, _MESH_FACE, _MESH_COLOR = 1, 2, 3


def _varint(n):
    n &= (1 << 64) - 1  # a negative int as 64-bit two's complement, as protobuf writes int32 and int64
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(data, offset):
    result = shift = 0
    while True:
        if offset >= len(data):
            raise ValueError("truncated varint")
        byte = data[offset]
        result |= (byte & 0x7F) << shift
        offset += 1
        if byte < 0x80:
            return result, offset
        shift += 7


def _float32_bytes(values):
    with np.errstate(over="ignore"):  # beyond float32's range is inf, as protobuf stores a float field
        return np.asarray(values, "<f4").tobytes()


def _field(number, kind, value):
    """One field's key and value on the wire."""
    if kind == "double":
        return _varint(number << 3 | 1) + struct.pack("<d", value)
    if kind == "float":
        return _varint(number << 3 | 5) + _float32_bytes(value)
    if kind in _VARINT_TYPES:
        return _varint(number << 3) + _varint(int(value))
    if kind == "string":
        value = value.encode("utf-8")
    elif kind != "bytes":
        value = _encode(kind, value)
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _encode(message, fields):
    """The wire bytes of `message` (a name in _MESSAGES) from a dict {field name: value}: nested
    messages as dicts, repeated fields as sequences; a field given as None is not written."""
    out = []
    for name, value in fields.items():
        if value is None:
            continue
        number, kind, repeated = _FIELDS[message][name]
        if not repeated:
            out.append(_field(number, kind, value))
        elif kind in _PACKABLE:
            if kind == "double":
                packed = np.asarray(value, "<f8").tobytes()
            elif kind == "float":
                packed = _float32_bytes(value)
            else:
                packed = b"".join(_varint(int(v)) for v in value)
            out.append(_varint(number << 3 | 2) + _varint(len(packed)) + packed)
        else:
            out.extend(_field(number, kind, v) for v in value)
    return b"".join(out)


def _integer(kind, n):
    if kind == "bool":
        return n != 0
    if kind in ("uint32", "uint64"):
        return n
    return n - (1 << 64) if n >= 1 << 63 else n


def _decode_values(kind, wire, raw):
    """The values of one field on the wire: several for a packed repeated field."""
    if wire == 2 and kind in _PACKABLE:
        if kind == "double":
            return np.frombuffer(raw, "<f8").tolist()
        if kind == "float":
            return np.frombuffer(raw, "<f4").tolist()
        values, offset = [], 0
        while offset < len(raw):
            n, offset = _read_varint(raw, offset)
            values.append(_integer(kind, n))
        return values
    if wire != _WIRE_TYPES.get(kind, 2):
        raise ValueError(f"a field of type {kind} arrived with wire type {wire}")
    if kind == "double":
        return [struct.unpack("<d", raw)[0]]
    if kind == "float":
        return [struct.unpack("<f", raw)[0]]
    if kind in _VARINT_TYPES:
        return [_integer(kind, raw)]
    if kind == "string":
        return [raw.decode("utf-8")]
    if kind == "bytes":
        return [bytes(raw)]
    return [_decode(kind, raw)]


def _decode(message, data):
    """A dict {field name: value} from the wire bytes of `message`, the inverse of _encode; fields
    not in _MESSAGES are skipped. A field absent from the data is absent from the dict."""
    out, offset = {}, 0
    while offset < len(data):
        key, offset = _read_varint(data, offset)
        number, wire = key >> 3, key & 7
        if wire == 0:
            raw, offset = _read_varint(data, offset)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            raw, offset = data[offset:offset + size], offset + size
        elif wire == 2:
            size, offset = _read_varint(data, offset)
            raw, offset = data[offset:offset + size], offset + size
        else:
            raise ValueError(f"{message}: unsupported wire type {wire} (field {number})")
        if offset > len(data):
            raise ValueError(f"{message}: truncated field {number}")
        if number not in _MESSAGES[message]:
            continue
        name, kind = _MESSAGES[message][number]
        values = _decode_values(kind.strip("[]"), wire, raw)
        if kind.startswith("["):
            out.setdefault(name, []).extend(values)
        else:
            out[name] = values[-1]  # the last occurrence wins, as in protobuf
    return out


# ---- TFRecords -------------------------------------------------------------------------------

def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):  # reflected CRC-32C: the Castagnoli polynomial 0x1EDC6F41 bit-reversed
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def _crc32c(data):
    """CRC-32C (Castagnoli) of bytes, as RFC 3720 defines it (crc32c(b"123456789") == 0xE3069283)."""
    crc, table = 0xFFFFFFFF, _CRC32C_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc32c(data):
    """A TFRecord's checksum: the CRC rotated right by 15 bits plus a constant, so that a CRC of
    data that itself holds CRCs does not degenerate."""
    crc = _crc32c(data)
    return ((crc >> 15 | crc << 17) + 0xA282EAD8) & 0xFFFFFFFF


def _record(data):
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", _masked_crc32c(header)) + data + struct.pack("<I", _masked_crc32c(data))


def _read_events(path):
    """The events of an event file as dicts (see _decode: {"wall_time": ..., "step": ...,
    "summary": {"value": [{"tag": ..., "simple_value": ...}]}}), each record's two CRCs
    checked. For the tests, and for a look inside a log without TensorBoard."""
    with open(path, "rb") as f:
        data = f.read()
    events, offset = [], 0
    while offset < len(data):
        header = data[offset:offset + 8]
        if len(data) - offset < 12:
            raise ValueError(f"_read_events: {path}: a record truncated at byte {offset}")
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[offset + 8:offset + 12])
        if header_crc != _masked_crc32c(header):
            raise ValueError(f"_read_events: {path}: the length's CRC of the record at byte {offset} is wrong")
        body = data[offset + 12:offset + 12 + length]
        if len(data) - offset < 16 + length:
            raise ValueError(f"_read_events: {path}: a record truncated at byte {offset}")
        (body_crc,) = struct.unpack("<I", data[offset + 12 + length:offset + 16 + length])
        if body_crc != _masked_crc32c(body):
            raise ValueError(f"_read_events: {path}: the data's CRC of the record at byte {offset} is wrong")
        events.append(_decode("Event", body))
        offset += 16 + length
    return events


# ---- event files -----------------------------------------------------------------------------
_clock = time.monotonic  # when records were last written (the tests replace it)
_file_numbers = itertools.count()  # the last part of an event file's name, unique in the process


def _write_pending(file, pending):
    if pending:
        file.write(b"".join(pending))
        del pending[:]
    file.flush()


def _write_out(file, pending, pid):
    """An _EventFile's finalizer: write what is pending and close. In a forked child the pending
    records are the parent's, which writes them itself."""
    if os.getpid() == pid and not file.closed:
        _write_pending(file, pending)
    file.close()


class _EventFile:
    """One event file in log_dir, opened for appending, its first record the file version.
    Encoded records wait in `pending`; a finalizer writes what is left when the file is
    closed, garbage-collected or the interpreter exits."""

    def __init__(self, log_dir, max_queue, flush_secs, filename_suffix):
        os.makedirs(log_dir, exist_ok=True)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{next(_file_numbers)}{filename_suffix}")
        self.log_dir, self.path = log_dir, os.path.join(log_dir, name)
        self._max_queue, self._flush_secs = max_queue, flush_secs
        self._pending, self._lock = [], threading.Lock()
        self._file = open(self.path, "ab")
        self._finalizer = weakref.finalize(self, _write_out, self._file, self._pending, os.getpid())
        self._last_write = _clock()
        self.add({"wall_time": time.time(), "file_version": "brain.Event:2"})
        self.flush()

    def add(self, event):
        record = _record(_encode("Event", event))
        with self._lock:
            self._pending.append(record)
            if len(self._pending) >= self._max_queue or _clock() - self._last_write >= self._flush_secs:
                self._write()

    def _write(self):
        _write_pending(self._file, self._pending)
        self._last_write = _clock()

    def flush(self):
        with self._lock:
            self._write()

    def close(self):
        with self._lock:
            self._finalizer()


# ---- values ----------------------------------------------------------------------------------

def _host_array(fn, name, value):
    """A NumPy array of numbers from a Tensor (on any device), an array, or a number or a
    (nested) list of numbers."""
    if isinstance(value, Tensor):
        return devices.to_device(value._data, devices.CPU)
    if devices.is_array(value):
        array = devices.to_device(value, devices.CPU)
    elif isinstance(value, (numbers.Number, np.generic, list, tuple)):
        array = np.asarray(value)
    else:
        raise TypeError(f"{fn}: {name} must be a Tensor, a NumPy array or a number, got {type(value).__name__}")
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{fn}: {name} must hold real numbers, got dtype {array.dtype}")
    return array


def _describe(value, array):
    return f"a {type(value).__name__} of shape {tuple(array.shape)}"


def _scalar(fn, name, value):
    """The one number in `value` (a number, a one-element Tensor or array), as a float."""
    array = _host_array(fn, name, value)
    if array.size != 1:
        raise ValueError(f"{fn}: {name} must hold one value, got {_describe(value, array)}")
    return float(array.reshape(-1)[0])


def _step(fn, global_step):
    """global_step as an int: an integer, an integral float or a one-element integer Tensor."""
    if global_step is None:
        return None
    if isinstance(global_step, (Tensor, np.ndarray)):
        array = _host_array(fn, "global_step", global_step)
        if array.size != 1 or array.dtype.kind not in "iu":
            raise ValueError(f"{fn}: global_step must be an integer, got {_describe(global_step, array)} "
                             f"of dtype {array.dtype}")
        return int(array.reshape(-1)[0])
    if isinstance(global_step, (float, np.floating)) and float(global_step).is_integer():
        return int(global_step)
    if isinstance(global_step, (float, np.floating)):
        raise ValueError(f"{fn}: global_step must be an integer, got {global_step!r} (PyTorch would "
                         f"truncate it to {int(global_step)})")
    return check_int(fn, "global_step", global_step)


def _walltime(fn, walltime):
    return time.time() if walltime is None else check_real(fn, "walltime", walltime)


def _check_tag(fn, tag, name="tag"):
    if not isinstance(tag, str):
        raise TypeError(f"{fn}: {name} must be a str, got {type(tag).__name__} {tag!r}")
    return tag


@functools.lru_cache(maxsize=None)
def _tensorflow_bins():
    """TensorFlow's default histogram edges, PyTorch's bins="tensorflow": +-1e-12 x 1.1^k
    below 1e20, and 0."""
    positive, edge = [], 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return np.array([-e for e in reversed(positive)] + [0.0] + positive)


def _histogram(fn, values, bins, max_bins):
    """A HistogramProto dict of `values` as PyTorch makes it: numpy.histogram's counts, adjacent
    buckets merged to at most max_bins, trimmed to the buckets from the first to the last that
    hold a value, after one empty bucket (TensorBoard reads only right edges, so that empty
    bucket's right edge is the histogram's left edge)."""
    if max_bins is not None:
        max_bins = check_int(fn, "max_bins", max_bins, minimum=1)
    array = _host_array(fn, "values", values).astype(np.float64).reshape(-1)
    if array.size == 0:
        raise ValueError(f"{fn}: values must hold at least one value, got an empty {type(values).__name__}")
    if not np.isfinite(array).all():
        raise ValueError(f"{fn}: values must be finite (a histogram has no bucket for NaN or inf), got "
                         f"{int(np.isnan(array).sum())} NaN and {int(np.isinf(array).sum())} inf among "
                         f"{array.size} values")
    if isinstance(bins, str) and bins == "tensorflow":
        bins = _tensorflow_bins()
    try:
        counts, edges = np.histogram(array, bins=bins)
    except (ValueError, TypeError) as e:
        raise type(e)(f"{fn}: bins={bins!r} is not one numpy.histogram takes: {e}") from e
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % group)).reshape(-1, group).sum(axis=1)
        edges = np.concatenate([edges[:-1:group], edges[-1:]])
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError(f"{fn}: no value lies within the bins (from {edges[0]!r} to {edges[-1]!r})")
    first, last = int(filled[0]), int(filled[-1])
    return {"min": array.min(), "max": array.max(), "num": float(array.size), "sum": array.sum(),
            "sum_squares": array.dot(array), "bucket_limit": edges[first:last + 2],
            "bucket": np.concatenate([[0], counts[first:last + 1]]).astype(np.float64)}


# the axes of an image's dataformats, by number of dims, in the order the pixels are laid out
_IMAGE_AXES = {2: "HW", 3: "CHW", 4: "NCHW"}


def _pixels(array):
    """uint8 pixels: uint8 kept, other integers clamped to 0-255, floats (and bools) times 255
    clamped and truncated, as PyTorch's image summaries (NaN as 0)."""
    if array.dtype == np.uint8:
        return array
    if array.dtype.kind in "iu":
        return np.clip(array, 0, 255).astype(np.uint8)
    scaled = array.astype(np.float32) * np.float32(255)
    return np.clip(np.nan_to_num(scaled, nan=0.0), 0, 255).astype(np.uint8)


def _grid(batch, columns):
    """One (C, H', W') image of a (N, C, H, W) batch in rows of `columns`, without padding."""
    count, channels, height, width = batch.shape
    rows = math.ceil(count / columns)
    canvas = np.zeros((channels, rows * height, columns * width), batch.dtype)
    for k, image in enumerate(batch):
        top, left = (k // columns) * height, (k % columns) * width
        canvas[:, top:top + height, left:left + width] = image
    return canvas


def _image(fn, img_tensor, dataformats):
    """A Summary.Image dict of an image or a batch of them (laid out 8 to a row), as PNG."""
    from ..vision.utils import encode_png

    array = _host_array(fn, "img_tensor", img_tensor)
    if not isinstance(dataformats, str):
        raise TypeError(f"{fn}: dataformats must be a str, got {type(dataformats).__name__}")
    letters = dataformats.upper()
    if len(letters) not in _IMAGE_AXES or sorted(letters) != sorted(_IMAGE_AXES[len(letters)]):
        raise ValueError(f"{fn}: dataformats must order the letters HW, CHW or NCHW (e.g. 'HWC', 'NHWC'), "
                         f"got {dataformats!r}")
    if array.ndim != len(letters):
        raise ValueError(f"{fn}: img_tensor must have {len(letters)} dims to match dataformats={dataformats!r}, "
                         f"got {_describe(img_tensor, array)}")
    batch = array.transpose([letters.index(axis) for axis in _IMAGE_AXES[len(letters)]])
    batch = batch.reshape((1,) * (4 - batch.ndim) + batch.shape)  # (N, C, H, W)
    if batch.shape[1] not in (1, 3, 4):
        raise ValueError(f"{fn}: an image must have 1, 3 or 4 channels (gray, RGB, RGBA), got {batch.shape[1]} "
                         f"({_describe(img_tensor, array)}, dataformats={dataformats!r})")
    if 0 in batch.shape:
        raise ValueError(f"{fn}: img_tensor must hold at least one pixel, got {_describe(img_tensor, array)}")
    pixels = _pixels(batch)
    if pixels.shape[1] == 1:  # gray as RGB, as PyTorch writes it
        pixels = np.repeat(pixels, 3, axis=1)
    image = _grid(pixels, min(len(pixels), 8)).transpose(1, 2, 0)
    height, width, channels = image.shape
    return {"height": height, "width": width, "colorspace": channels,
            "encoded_image_string": encode_png(np.ascontiguousarray(image))}


def _plugin(name, content=None):
    return {"plugin_data": {"plugin_name": name, "content": content}}


def _tensor_proto(dtype, values, shape):
    field = {DT_FLOAT: "float_val", DT_DOUBLE: "double_val", DT_INT32: "int_val", DT_INT64: "int64_val",
             DT_BOOL: "bool_val", DT_STRING: "string_val"}[dtype]
    return {"dtype": dtype, "tensor_shape": {"dim": [{"size": n} for n in shape]}, field: values}


def _pr_curve(labels, predictions, num_thresholds, weights):
    """The (6, num_thresholds) rows TensorBoard's PR-curve plugin reads: true positives, false
    positives, true negatives, false negatives, precision and recall when predicting positive
    at or above each of num_thresholds evenly spaced thresholds from 0 to 1."""
    bucket = np.floor(predictions * (num_thresholds - 1)).astype(np.int32)
    positive = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_counts, _ = np.histogram(bucket, bins=num_thresholds, range=span, weights=positive * weights)
    fp_counts, _ = np.histogram(bucket, bins=num_thresholds, range=span, weights=(1.0 - positive) * weights)
    tp = np.cumsum(tp_counts[::-1])[::-1]  # at threshold k: every prediction in bucket k or above
    fp = np.cumsum(fp_counts[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(1e-7, tp + fp)
    recall = tp / np.maximum(1e-7, tp + fn)
    return np.stack([tp, fp, tn, fn, precision, recall])


def _pbtxt_string(text):
    """A quoted string of protobuf's text format: non-ASCII bytes as octal escapes."""
    escapes = {ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}
    return '"' + "".join(escapes.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}")
                         for b in text.encode("utf-8")) + '"'


def _write_atomically(path, data):
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


# ---- the writer ------------------------------------------------------------------------------

class SummaryWriter:
    """Writes TensorBoard event files into log_dir, as torch.utils.tensorboard.SummaryWriter.

    log_dir defaults to runs/<Mon><DD>_<HH>-<MM>-<SS>_<hostname><comment>; it is made if missing.
    purge_step: TensorBoard hides the events of earlier runs in log_dir from this step on (for a
    run resumed after a crash). max_queue records wait in memory before they are written;
    flush_secs is the longest a record waits, checked when the next one is added (there is no
    background thread: flush() writes at once, and close(), garbage collection and the
    interpreter's exit write what is left). filename_suffix ends the event file's name.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        fn = "SummaryWriter"
        _check_tag(fn, comment, "comment")
        _check_tag(fn, filename_suffix, "filename_suffix")
        self.max_queue = check_int(fn, "max_queue", max_queue, minimum=1)
        self.flush_secs = check_real(fn, "flush_secs", flush_secs, minimum=0)
        self.purge_step = None if purge_step is None else check_int(fn, "purge_step", purge_step, minimum=0)
        if not log_dir:
            log_dir = os.path.join("runs", f"{datetime.now():%b%d_%H-%M-%S}_{socket.gethostname()}{comment}")
        if not isinstance(log_dir, (str, os.PathLike)):
            raise TypeError(f"{fn}: log_dir must be a str or a path, got {type(log_dir).__name__}")
        self.log_dir = os.fspath(log_dir)
        self.filename_suffix = filename_suffix
        self._writers = None  # {directory: _EventFile}, the first this writer's own log_dir
        self._projector_embeddings = []
        self._main()

    def _main(self):
        """The event file of log_dir, opened anew after close(), as PyTorch's writer does."""
        if self._writers is None:
            main = _EventFile(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self._writers = {self.log_dir: main}
            if self.purge_step is not None:
                # a second file version, then a START at purge_step: TensorBoard drops what it
                # read before from steps >= purge_step
                main.add({"wall_time": time.time(), "step": self.purge_step, "file_version": "brain.Event:2"})
                main.add({"wall_time": time.time(), "step": self.purge_step,
                          "session_log": {"status": _SESSION_START}})
                self.purge_step = None
        return self._writers[self.log_dir]

    def _add(self, fn, values, global_step, walltime, event_file=None):
        event = {"wall_time": _walltime(fn, walltime), "step": _step(fn, global_step),
                 "summary": {"value": values}}
        (event_file or self._main()).add(event)

    def get_logdir(self):
        """The directory this writer's event file is in."""
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One number (a Python or NumPy number, or a one-element Tensor or array) under tag, as a
        float32 simple_value; with new_style=True as a tensor of the scalars plugin, float64
        with double_precision=True. NaN and inf are written as they are."""
        fn = "add_scalar"
        _check_tag(fn, tag)
        value = _scalar(fn, "scalar_value", scalar_value)
        if check_bool(fn, "new_style", new_style):
            dtype = DT_DOUBLE if check_bool(fn, "double_precision", double_precision) else DT_FLOAT
            field = "double_val" if dtype == DT_DOUBLE else "float_val"
            summary = {"tag": tag, "tensor": {"dtype": dtype, field: [value]}, "metadata": _plugin("scalars")}
        else:
            check_bool(fn, "double_precision", double_precision)
            summary = {"tag": tag, "simple_value": value}
        self._add(fn, [summary], global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several numbers in one chart: each value of tag_scalar_dict goes under main_tag into
        its own run, the directory <log_dir>/<main_tag with / as _>_<key>."""
        fn = "add_scalars"
        _check_tag(fn, main_tag, "main_tag")
        if not isinstance(tag_scalar_dict, dict):
            raise TypeError(f"{fn}: tag_scalar_dict must be a dict, got {type(tag_scalar_dict).__name__}")
        walltime, global_step = _walltime(fn, walltime), _step(fn, global_step)
        values = {_check_tag(fn, key, "a key of tag_scalar_dict"): _scalar(fn, f"tag_scalar_dict[{key!r}]", v)
                  for key, v in tag_scalar_dict.items()}
        self._main()
        for key, value in values.items():
            directory = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{key}")
            if directory not in self._writers:
                self._writers[directory] = _EventFile(directory, self.max_queue, self.flush_secs,
                                                      self.filename_suffix)
            self._add(fn, [{"tag": main_tag, "simple_value": value}], global_step, walltime,
                      self._writers[directory])

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """A whole tensor (float32, float64, int32, int64 or bool) under tag, for the tensor plugin."""
        fn = "add_tensor"
        _check_tag(fn, tag)
        array = _host_array(fn, "tensor", tensor)
        dtypes = {"float32": DT_FLOAT, "float64": DT_DOUBLE, "int32": DT_INT32, "int64": DT_INT64, "bool": DT_BOOL}
        if array.dtype.name not in dtypes:
            raise TypeError(f"{fn}: tensor must be float32, float64, int32, int64 or bool, got {array.dtype}")
        proto = _tensor_proto(dtypes[array.dtype.name], array.reshape(-1).tolist(), array.shape)
        self._add(fn, [{"tag": tag, "tensor": proto, "metadata": _plugin("tensor")}], global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """A histogram of values (a Tensor or array of any shape; every value finite): bins is
        "tensorflow" (exponential buckets, +-1e-12 growing by 10% up to 1e20) or anything
        numpy.histogram takes ("auto", "fd", a count, edges); max_bins merges adjacent buckets."""
        fn = "add_histogram"
        _check_tag(fn, tag)
        self._add(fn, [{"tag": tag, "histo": _histogram(fn, values, bins, max_bins)}], global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,
                          global_step=None, walltime=None):
        """A histogram from its statistics and buckets (bucket_limits: each bucket's right edge)."""
        fn = "add_histogram_raw"
        _check_tag(fn, tag)
        limits = _host_array(fn, "bucket_limits", bucket_limits).reshape(-1)
        counts = _host_array(fn, "bucket_counts", bucket_counts).reshape(-1)
        if len(limits) != len(counts):
            raise ValueError(f"{fn}: bucket_limits and bucket_counts must have one length, got {len(limits)} "
                             f"and {len(counts)}")
        stats = {name: _scalar(fn, name, v) for name, v in
                 (("min", min), ("max", max), ("num", num), ("sum", sum), ("sum_squares", sum_squares))}
        histo = dict(stats, bucket_limit=limits.astype(np.float64), bucket=counts.astype(np.float64))
        self._add(fn, [{"tag": tag, "histo": histo}], global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image as PNG: dataformats orders its axes ("CHW", "HWC", "HW", ...); 1 (gray, written
        as RGB), 3 (RGB) or 4 (RGBA) channels. Float values in [0, 1] (times 255, clamped,
        truncated), uint8 arrays as they are, other integers clamped to 0-255."""
        fn = "add_image"
        _check_tag(fn, tag)
        self._add(fn, [{"tag": tag, "image": _image(fn, img_tensor, dataformats)}], global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images as one PNG, laid out 8 to a row; values as in add_image."""
        fn = "add_images"
        _check_tag(fn, tag)
        self._add(fn, [{"tag": tag, "image": _image(fn, img_tensor, dataformats)}], global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, laid out as add_images does) rendered as an
        image; close=True closes the figures. Needs matplotlib."""
        fn = "add_figure"
        _check_tag(fn, tag)
        close = check_bool(fn, "close", close)
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError as e:
            raise ImportError(f"{fn} needs matplotlib, which is not installed (pip install matplotlib)") from e
        figures = figure if isinstance(figure, list) else [figure]
        images = []
        for f in figures:
            if not isinstance(f, Figure):
                raise TypeError(f"{fn}: figure must be a matplotlib Figure or a list of them, got {type(f).__name__}")
            canvas = FigureCanvasAgg(f)
            canvas.draw()
            images.append(np.asarray(canvas.buffer_rgba())[:, :, :3].transpose(2, 0, 1))
            if close:
                import matplotlib.pyplot as plt
                plt.close(f)
        if isinstance(figure, list):
            self.add_images(tag, np.stack(images), global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, images[0], global_step, walltime, dataformats="CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A string (markdown) under the tag <tag>/text_summary, for the text plugin."""
        fn = "add_text"
        _check_tag(fn, tag)
        _check_tag(fn, text_string, "text_string")
        proto = _tensor_proto(DT_STRING, [text_string.encode("utf-8")], [1])
        metadata = _plugin("text")  # TextPluginData of version 0: no bytes
        self._add(fn, [{"tag": f"{tag}/text_summary", "tensor": proto, "metadata": metadata}], global_step,
                  walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """One session of the hparams plugin in the run <log_dir>/<run_name> (the time by
        default): the hyperparameters (int, float, str, bool, a one-element Tensor; None left
        out), their discrete domains if given (hparam_domain_discrete: {name: list of values of
        the hyperparameter's type}), and the metrics, each also written as a scalar."""
        fn = "add_hparams"
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError(f"{fn}: hparam_dict and metric_dict must be dicts, got {type(hparam_dict).__name__} "
                            f"and {type(metric_dict).__name__}")
        domains = hparam_domain_discrete or {}
        if not isinstance(domains, dict):
            raise TypeError(f"{fn}: hparam_domain_discrete must be a dict, got {type(domains).__name__}")
        for name, domain in domains.items():
            if (name not in hparam_dict or not isinstance(domain, list)
                    or not all(isinstance(d, type(hparam_dict[name])) for d in domain)):
                raise TypeError(f"{fn}: hparam_domain_discrete[{name!r}] must be a list of values of the type of "
                                f"hparam_dict[{name!r}], got {domain!r}")
        infos, values = [], []
        for name, value in hparam_dict.items():
            _check_tag(fn, name, "a key of hparam_dict")
            if value is None:
                continue
            if isinstance(value, (Tensor, np.ndarray)):
                value = _scalar(fn, f"hparam_dict[{name!r}]", value)
            if isinstance(value, (bool, np.bool_)):
                kind, field, convert = _HPARAM_BOOL, "bool_value", bool
            elif isinstance(value, numbers.Real):
                kind, field, convert = _HPARAM_FLOAT64, "number_value", float
            elif isinstance(value, str):
                kind, field, convert = _HPARAM_STRING, "string_value", str
            else:
                raise TypeError(f"{fn}: hparam_dict[{name!r}] must be an int, float, str, bool, one-element "
                                f"Tensor or None, got {type(value).__name__}")
            values.append({"key": name, "value": {field: convert(value)}})
            domain = domains.get(name)
            infos.append({"name": name, "type": kind, "domain_discrete":
                          None if domain is None else {"values": [{field: convert(d)} for d in domain]}})
        metrics = {_check_tag(fn, name, "a key of metric_dict"): _scalar(fn, f"metric_dict[{name!r}]", value)
                   for name, value in metric_dict.items()}
        experiment = {"hparam_infos": infos, "metric_infos": [{"name": {"tag": name}} for name in metrics]}
        summaries = [("_hparams_/experiment", {"experiment": experiment}),
                     ("_hparams_/session_start_info", {"session_start_info": {"hparams": values}}),
                     ("_hparams_/session_end_info", {"session_end_info": {"status": _STATUS_SUCCESS}})]
        run_name = _check_tag(fn, run_name, "run_name") if run_name else str(time.time())
        with SummaryWriter(log_dir=os.path.join(self._main().log_dir, run_name)) as session:
            for tag, data in summaries:
                content = _encode("HParamsPluginData", data)  # version 0, protobuf's default, not written
                session._add(fn, [{"tag": tag, "metadata": _plugin("hparams", content)}], global_step, None)
            for name, value in metrics.items():
                session.add_scalar(name, value, global_step)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        """A precision-recall curve of predictions (probabilities in [0, 1]) against labels (1 or
        True for a positive), at num_thresholds thresholds (at most 127); weights, a number or
        one per prediction, weigh the counts."""
        fn = "add_pr_curve"
        _check_tag(fn, tag)
        num_thresholds = min(check_int(fn, "num_thresholds", num_thresholds, minimum=2), 127)
        labels = _host_array(fn, "labels", labels)
        predictions = _host_array(fn, "predictions", predictions)
        if labels.shape != predictions.shape:
            raise ValueError(f"{fn}: labels and predictions must have one shape, got {tuple(labels.shape)} and "
                             f"{tuple(predictions.shape)}")
        if predictions.size and not ((predictions >= 0) & (predictions <= 1)).all():
            raise ValueError(f"{fn}: predictions must lie in [0, 1], got values from {predictions.min()!r} to "
                             f"{predictions.max()!r}")
        weights = 1.0 if weights is None else _host_array(fn, "weights", weights)
        data = _pr_curve(labels, predictions, num_thresholds, weights)
        self._add_pr_curve(fn, tag, data, num_thresholds, global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds=127,
                         weights=None, walltime=None):
        """A precision-recall curve from its counts, precision and recall at each threshold."""
        fn = "add_pr_curve_raw"
        _check_tag(fn, tag)
        num_thresholds = min(check_int(fn, "num_thresholds", num_thresholds, minimum=2), 127)
        names = ("true_positive_counts", "false_positive_counts", "true_negative_counts",
                 "false_negative_counts", "precision", "recall")
        rows = [_host_array(fn, name, v).reshape(-1) for name, v in
                zip(names, (true_positive_counts, false_positive_counts, true_negative_counts,
                            false_negative_counts, precision, recall))]
        if len({len(row) for row in rows}) != 1:
            raise ValueError(f"{fn}: the six rows must have one length, got lengths "
                             f"{dict(zip(names, map(len, rows)))}")
        self._add_pr_curve(fn, tag, np.stack(rows), num_thresholds, global_step, walltime)

    def _add_pr_curve(self, fn, tag, data, num_thresholds, global_step, walltime):
        content = _encode("PrCurvePluginData", {"num_thresholds": num_thresholds})  # version 0
        proto = _tensor_proto(DT_FLOAT, data.reshape(-1), data.shape)
        self._add(fn, [{"tag": tag, "tensor": proto, "metadata": _plugin("pr_curves", content)}], global_step,
                  walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """A mono sound as a 16-bit WAV: snd_tensor holds its samples (one dim once squeezed),
        in [-1, 1]; louder samples are clipped, with a warning."""
        import io
        import wave

        fn = "add_audio"
        _check_tag(fn, tag)
        sample_rate = check_int(fn, "sample_rate", sample_rate, minimum=1)
        samples = _host_array(fn, "snd_tensor", snd_tensor).astype(np.float64).squeeze()
        if samples.ndim != 1:
            raise ValueError(f"{fn}: snd_tensor must hold one channel (one dim once squeezed), got "
                             f"{_describe(snd_tensor, samples)} after squeezing")
        if not np.isfinite(samples).all():
            raise ValueError(f"{fn}: snd_tensor must be finite, got {int((~np.isfinite(samples)).sum())} NaN or inf")
        if samples.size and np.abs(samples).max() > 1:
            warnings.warn(f"{fn}: samples outside [-1, 1] (up to {np.abs(samples).max():g}) are clipped",
                          stacklevel=2)
            samples = samples.clip(-1, 1)
        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(sample_rate)
            wav.writeframes((samples * 32767).astype("<i2").tobytes())
        audio = {"sample_rate": sample_rate, "num_channels": 1, "length_frames": samples.size,
                 "encoded_audio_string": buffer.getvalue(), "content_type": "audio/wav"}
        self._add(fn, [{"tag": tag, "audio": audio}], global_step, walltime)

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None, global_step=None, walltime=None):
        """A mesh or point cloud for the mesh plugin: vertices (B, N, 3) coordinates, colors
        (B, N, 3) (0-255), faces (B, F, 3) vertex indices; config_dict, three.js settings."""
        fn = "add_mesh"
        _check_tag(fn, tag)
        if config_dict is not None and not isinstance(config_dict, dict):
            raise TypeError(f"{fn}: config_dict must be a dict or None, got {type(config_dict).__name__}")
        json_config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
        parts = [(name, kind, _host_array(fn, name, v)) for name, kind, v in
                 (("vertices", _MESH_VERTEX, vertices), ("faces", _MESH_FACE, faces), ("colors", _MESH_COLOR, colors))
                 if v is not None]
        for name, _, array in parts:
            if array.ndim != 3 or array.shape[2] != 3:
                raise ValueError(f"{fn}: {name} must have shape (B, N, 3), got shape {tuple(array.shape)}")
        components = sum(1 << kind for _, kind, _ in parts)
        values = []
        for _, kind, array in parts:
            content = _encode("MeshPluginData", {"name": tag, "content_type": kind,  # version 0
                                                 "json_config": json_config, "shape": array.shape,
                                                 "components": components})
            values.append({"tag": f"{tag}_{('VERTEX', 'FACE', 'COLOR')[kind - 1]}",
                           "tensor": _tensor_proto(DT_FLOAT, array.reshape(-1), array.shape),
                           "metadata": _plugin("mesh", content)})
        self._add(fn, values, global_step, walltime)

    def add_custom_scalars(self, layout):
        """The custom scalars plugin's layout: {category: {chart title: ["Multiline", [tags]] or
        ["Margin", [value tag, lower tag, upper tag]]}}."""
        fn = "add_custom_scalars"
        if not isinstance(layout, dict):
            raise TypeError(f"{fn}: layout must be a dict, got {type(layout).__name__}")
        categories = []
        for title, charts in layout.items():
            if not isinstance(charts, dict):
                raise TypeError(f"{fn}: layout[{title!r}] must be a dict of charts, got {type(charts).__name__}")
            entries = []
            for name, chart in charts.items():
                if not isinstance(chart, (list, tuple)) or len(chart) != 2:
                    raise ValueError(f"{fn}: layout[{title!r}][{name!r}] must be [kind, tags], got {chart!r}")
                kind, tags = chart
                if kind == "Margin":
                    if len(tags) != 3:
                        raise ValueError(f"{fn}: a Margin chart takes 3 tags (value, lower, upper), got {tags!r}")
                    entries.append({"title": name, "margin": {"series": [dict(zip(("value", "lower", "upper"),
                                                                                   tags))]}})
                elif kind == "Multiline":
                    entries.append({"title": name, "multiline": {"tag": list(tags)}})
                else:
                    raise ValueError(f"{fn}: a chart is 'Multiline' or 'Margin', got {kind!r} for {name!r}")
            categories.append({"title": title, "chart": entries})
        proto = _tensor_proto(DT_STRING, [_encode("Layout", {"category": categories})], [])
        self._add(fn, [{"tag": "custom_scalars__config__", "tensor": proto, "metadata": _plugin("custom_scalars")}],
                  None, None)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """A custom-scalars chart of several scalar tags' lines."""
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """A custom-scalars chart of a value between a lower and an upper bound (3 tags)."""
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Points for the projector plugin: mat (N, D), one row per point; metadata, a label per
        point (a row of columns per point with metadata_header); label_img (N, C, H, W), an image
        per point. Written as tsv and png files under <log_dir>/<step, 5 digits>/<tag>, listed in
        <log_dir>/projector_config.pbtxt."""
        fn = "add_embedding"
        _check_tag(fn, tag)
        mat = _host_array(fn, "mat", mat)
        if mat.ndim != 2:
            raise ValueError(f"{fn}: mat must be 2-D (points, features), got shape {tuple(mat.shape)}")
        step = 0 if global_step is None else _step(fn, global_step)
        escaped = tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")
        subdir = f"{step:05d}/{escaped}"
        save_path = os.path.join(self._main().log_dir, subdir)
        if os.path.exists(save_path):
            if not os.path.isdir(save_path):
                raise NotADirectoryError(f"{fn}: {save_path} exists and is not a directory")
            warnings.warn(f"{fn}: {save_path} exists already and is written over; give each embedding "
                          f"its own global_step or tag", stacklevel=2)
        os.makedirs(save_path, exist_ok=True)
        info = {"tensor_name": f"{tag}:{step:05d}"}
        if metadata is not None:
            if isinstance(metadata, (Tensor, np.ndarray)):
                metadata = _host_array(fn, "metadata", metadata).tolist()
            if len(metadata) != len(mat):
                raise ValueError(f"{fn}: metadata must have one entry per row of mat ({len(mat)}), got {len(metadata)}")
            if metadata_header:
                rows = [list(metadata_header)] + [list(row) for row in metadata]
                if any(len(row) != len(rows[0]) for row in rows):
                    raise ValueError(f"{fn}: every row of metadata must have one column per name in "
                                     f"metadata_header ({len(rows[0])})")
                lines = ["\t".join(str(v) for v in row) for row in rows]
            else:
                lines = [str(v) for v in metadata]
            _write_atomically(os.path.join(save_path, "metadata.tsv"), ("\n".join(lines) + "\n").encode("utf-8"))
            info["metadata_path"] = f"{subdir}/metadata.tsv"
        if label_img is not None:
            from ..vision.utils import encode_png

            images = _host_array(fn, "label_img", label_img)
            if images.ndim != 4 or len(images) != len(mat) or images.shape[1] not in (1, 3):
                raise ValueError(f"{fn}: label_img must be (N, C, H, W) with N = {len(mat)} (the rows of mat) and "
                                 f"C 1 or 3, got shape {tuple(images.shape)}")
            pixels = _pixels(images)
            pixels = np.repeat(pixels, 3, axis=1) if pixels.shape[1] == 1 else pixels
            grid = _grid(pixels, math.ceil(math.sqrt(len(pixels))))
            side = max(grid.shape[1:])  # a square sprite, as the projector expects
            sprite = np.zeros((side, side, 3), np.uint8)
            sprite[:grid.shape[1], :grid.shape[2]] = grid.transpose(1, 2, 0)
            _write_atomically(os.path.join(save_path, "sprite.png"), encode_png(sprite))
            info["sprite"] = {"image_path": f"{subdir}/sprite.png", "dims": (images.shape[3], images.shape[2])}
        info["tensor_path"] = f"{subdir}/tensors.tsv"
        rows = ("\t".join(str(v) for v in row) + "\n" for row in mat.tolist())
        _write_atomically(os.path.join(save_path, "tensors.tsv"), "".join(rows).encode("utf-8"))
        self._projector_embeddings.append(info)
        lines = []
        for embedding in self._projector_embeddings:  # ProjectorConfig in protobuf's text format
            lines.append("embeddings {")
            for key in ("tensor_name", "metadata_path"):
                if key in embedding:
                    lines.append(f"  {key}: {_pbtxt_string(embedding[key])}")
            if "sprite" in embedding:
                lines += ["  sprite {", f"    image_path: {_pbtxt_string(embedding['sprite']['image_path'])}"]
                lines += [f"    single_image_dim: {d}" for d in embedding["sprite"]["dims"]] + ["  }"]
            lines += [f"  tensor_path: {_pbtxt_string(embedding['tensor_path'])}", "}"]
        _write_atomically(os.path.join(self.log_dir, "projector_config.pbtxt"), ("\n".join(lines) + "\n").encode())

    def flush(self):
        """Write every pending record of this writer's event files."""
        for event_file in (self._writers or {}).values():
            event_file.flush()

    def close(self):
        """Write what is pending and close the event files; a later add opens a new file."""
        for event_file in (self._writers or {}).values():
            event_file.close()
        self._writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()
