"""TensorBoard event files: the scalars a ``SummaryWriter`` logged.

The input is one event file (``events.out.tfevents.*``) or a log folder holding
event files at any depth (TensorBoard's run subfolders, one per run). Detected
as a folder holding a file whose name contains ``tfevents`` (TensorBoard's own
rule), or a file so named or whose first record is an ``Event`` carrying
``file_version`` ``brain.Event:...``; ``--input-format tensorboard`` forces it.

Scalars come in two encodings, both read:

- ``simple_value`` (tensorboardX, ``torch.utils.tensorboard``, TF1's
  ``tf.summary.scalar``);
- a scalar ``tensor`` of the ``scalars`` plugin (TF2's ``tf.summary.scalar``,
  tensorboardX's ``new_style``): float, double, half, integer, bool and string
  dtypes, from the typed value fields or ``tensor_content``. TF2 writes the
  plugin metadata only with a tag's first value, so a file's tags remember it.

The tag is the logger key as logged (no separate prefix: the checker splits it
against the catalog); the step is the event's ``step``. tensorboardX's
``add_scalar`` and TensorFlow's summary ops write a tag with every character
outside ``[-/\\w.]`` replaced by ``_`` (torch's ``SummaryWriter`` keeps it), so
records name that rule (``rewrite``): a tag no row takes as written is matched
against the catalog's keys so rewritten (``mean_4`` counts under ``mean@4``).
The hparams plugin's session start (``add_hparams`` of tensorboardX and torch,
Lightning's ``TensorBoardLogger.log_hyperparams``, Hugging Face's
``TensorBoardCallback``) is the run's configuration, for conditions over
``config.<path>``: its flat keys are nested at ``/`` (Lightning flattens the
configuration with ``/``), numbers and bools kept, and the text ``"None"``
(Lightning's spelling of a null) read as null. Other summaries (images,
histograms, audio, text, other plugins' tensors and metadata) are not judged:
they are counted, and one notice per input says how many of which kind were
skipped. Events without a summary (the file version, graphs, session
logs) are not records. Each file of a folder is the worker of its run folder, so two
runs' counters are never compared with each other; each folder holding event
files is a run of the report (its id: its path under the log folder), which
``--run`` selects.

How it is read, and why not with ``EventFileLoader``: this module reads the
TFRecord framing itself (a little-endian u64 length, the masked CRC32C of
those 8 bytes, the payload, the masked CRC32C of the payload) and parses only
each payload with the ``tensorboard`` package's ``event_pb2.Event`` (the
``tensorboard`` extra). TensorBoard's loader ends its iteration silently at the
first bad checksum or short record (it logs at debug level), so a damaged file
would look like a shorter run with no position to report, and it reads
whatever length a record claims in one allocation. Here every problem has a
position (the file, the 1-based record number as the line, the byte offset):

- a record longer than ``max_line_bytes`` is reported and skipped (sought
  past, never read; one claiming more than the file holds ends the file); an
  input is abandoned at its ``max_overlong_lines``-th;
- a payload whose checksum does not match, or that is not an ``Event``, is
  malformed and skipped (its length was verified, so framing resumes after it);
- a length field whose checksum does not match cannot be framed past: the file
  is abandoned there (the first record: it is not an event file);
- a last record cut short (the run is still writing it) is a notice, not an
  error: the records before it are judged.

One record is held at a time, so memory stays bounded whatever the file's
length. Symbolic links and FIFOs in a folder are not followed or opened (a
notice names each); linked folders are not entered. Checksums use
``google-crc32c`` when its C implementation is installed (the extra brings
it), else tensorboard's pure-Python CRC32C.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, Final

from ...safe_fs import open_input
from ..limits import Limits
from ..records import Item, Malformed, Note, Record, RunConfig, RunInfo, Source
from ._params import MAX_PARAMS, nested

__all__ = [
    "EXTRA_HINT",
    "INGESTER_NAME",
    "detect",
    "event_files",
    "is_event_file_name",
    "read",
]

INGESTER_NAME: Final = "tensorboard"
EXTRA_HINT: Final = "pip install 'metric-catalog[tensorboard]'"
"""How to install what this format is read with (tensorboard, google-crc32c)."""

_EXPECTED: Final = "a TensorBoard event record"
_HEADER: Final = struct.Struct("<QI")
_CRC: Final = struct.Struct("<I")
_MASK_DELTA: Final = 0xA282EAD8
_DETECT_ENTRIES: Final = 10_000
"""Folder entries a detection looks at before giving up (a huge tree is not walked whole)."""
_SKIP_CHUNK: Final = 1024 * 1024
_MAX_SKIP_KINDS: Final = 20

# TensorFlow's DataType numbers (tensorflow/core/framework/types.proto) -> how a scalar of
# that dtype is packed in tensor_content, and the TensorProto field holding it otherwise.
_DTYPES: Final[dict[int, tuple[str, str]]] = {
    1: ("<f", "float_val"),  # DT_FLOAT
    2: ("<d", "double_val"),  # DT_DOUBLE
    3: ("<i", "int_val"),  # DT_INT32
    4: ("<B", "int_val"),  # DT_UINT8
    5: ("<h", "int_val"),  # DT_INT16
    6: ("<b", "int_val"),  # DT_INT8
    7: ("", "string_val"),  # DT_STRING: never in tensor_content
    9: ("<q", "int64_val"),  # DT_INT64
    10: ("<?", "bool_val"),  # DT_BOOL
    17: ("<H", "int_val"),  # DT_UINT16
    19: ("<e", "half_val"),  # DT_HALF (half_val holds the 16 bits)
    22: ("<I", "uint32_val"),  # DT_UINT32
    23: ("<Q", "uint64_val"),  # DT_UINT64
}
_HALF: Final = 19
_STRING: Final = 7


def is_event_file_name(name: str) -> bool:
    """Whether a file name is an event file's, by TensorBoard's rule (it holds ``tfevents``)."""
    return "tfevents" in os.path.basename(name)


def _starts_with_event(head: bytes) -> bool:
    """Whether ``head`` starts with a TFRecord whose payload carries ``brain.Event:``.

    Stdlib only (detection runs without the extra): the payload must lie within
    the head and hold ``file_version`` (field 3, a string) set to ``brain.Event:...``.
    """
    if len(head) < _HEADER.size:
        return False
    (length,) = struct.unpack_from("<Q", head)
    payload = head[_HEADER.size : _HEADER.size + length]
    return length <= 256 and len(payload) == length and b"brain.Event:" in payload


def detect(path: str, head: bytes) -> bool:
    """A folder holding an event file, or a file named like one or starting with an Event."""
    if not head and os.path.isdir(path):
        return _holds_event_file(path)
    return is_event_file_name(path) or _starts_with_event(head)


def _holds_event_file(root: str) -> bool:
    seen = 0
    for _folder, dirs, files in os.walk(root):
        if any(is_event_file_name(name) for name in files):
            return True
        seen += len(dirs) + len(files)
        if seen > _DETECT_ENTRIES:
            return False
    return False


def event_files(root: str) -> Iterator[tuple[str, str | None]]:
    """``(path, why not read)`` of the event files under ``root``, in sorted order.

    ``why not read`` is ``None`` for a regular file; a symbolic link or a FIFO
    (or device) is named with the reason. Linked folders are not entered.
    """
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not is_event_file_name(name):
                continue
            path = os.path.join(folder, name)
            if os.path.islink(path):
                yield path, "a symbolic link (links are not followed: pass the file it names)"
            elif not os.path.isfile(path):
                yield path, "not a regular file (a FIFO or device): it was not opened"
            else:
                yield path, None


def _library() -> tuple[Any, type[Exception], Callable[[bytes], int]]:
    """tensorboard's ``Event`` message, protobuf's ``DecodeError`` and a masked CRC32C.

    Raises:
        ModuleNotFoundError: the ``tensorboard`` extra is not installed; the
            message says what to install.
    """
    try:
        from google.protobuf.message import DecodeError  # noqa: PLC0415 - the extra, on use
        from tensorboard.compat.proto import event_pb2  # noqa: PLC0415
    except ModuleNotFoundError as exc:
        msg = (
            f"reading TensorBoard event files needs the tensorboard package ({exc.name} is "
            f"not installed): {EXTRA_HINT}"
        )
        raise ModuleNotFoundError(msg, name=exc.name) from exc
    crc32c = _crc32c()

    def masked(data: bytes) -> int:
        crc = crc32c(data)
        return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF

    return event_pb2.Event, DecodeError, masked


def _hparams_message() -> Any:
    """tensorboard's ``HParamsPluginData`` message (``None`` when this tensorboard lacks it)."""
    try:
        from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: PLC0415 - the extra
    except ImportError:
        return None
    return plugin_data_pb2.HParamsPluginData


def _crc32c() -> Callable[[bytes], int]:
    """The fastest CRC32C installed: google-crc32c's C one, else tensorboard's Python one."""
    try:
        import google_crc32c  # noqa: PLC0415 - optional, the C CRC32C when installed
    except ModuleNotFoundError:
        pass
    else:
        if google_crc32c.implementation == "c":
            fast: Callable[[bytes], int] = google_crc32c.value
            return fast
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import crc32c  # noqa: PLC0415

    slow: Callable[[bytes], int] = crc32c
    return slow


class _Skipped:
    """Summary values not judged, counted by kind (a bounded number of kinds)."""

    def __init__(self) -> None:
        self.total = 0
        self.kinds: dict[str, int] = {}

    def add(self, kind: str) -> None:
        self.total += 1
        if kind in self.kinds or len(self.kinds) < _MAX_SKIP_KINDS:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def note(self, path: str) -> Note:
        shown = ", ".join(f"{kind} {count}" for kind, count in sorted(self.kinds.items()))
        message = (
            f"{path}: {self.total} summary value(s) that are not scalars were not judged "
            f"({shown}); live-check reads a TensorBoard log's scalars"
        )
        return Note("skipped_summaries", message, path)


_NOT_SCALAR: Final = object()
_HPARAMS: Final = "hparams"
"""The plugin whose session start holds the run's hyperparameters (its configuration)."""


def _scalar(tensor: Any) -> object:
    """The value of a scalar ``TensorProto``, or :data:`_NOT_SCALAR`."""
    if any(dim.size != 1 for dim in tensor.tensor_shape.dim):
        return _NOT_SCALAR
    spec = _DTYPES.get(tensor.dtype)
    if spec is None:
        return _NOT_SCALAR
    fmt, field = spec
    content: bytes = tensor.tensor_content
    if content and fmt:
        if len(content) != struct.calcsize(fmt):
            return _NOT_SCALAR
        value: object = struct.unpack(fmt, content)[0]
    else:
        values = getattr(tensor, field)
        if len(values) != 1:
            return _NOT_SCALAR
        value = values[0]
        if tensor.dtype == _HALF:
            value = struct.unpack("<e", struct.pack("<H", values[0] & 0xFFFF))[0]
    if tensor.dtype == _STRING and isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


class _FileReader:
    """The items of an input's event files, one file at a time.

    ``source.lines`` counts the records framed over the input; ``skipped`` the
    summary values not judged; ``run`` is the worker of the file being read.
    """

    def __init__(
        self,
        library: tuple[Any, type[Exception], Callable[[bytes], int]],
        source: Source,
        limits: Limits,
    ) -> None:
        self.event, self.decode_error, self.crc = library
        self.source = source
        self.limits = limits
        self.skipped = _Skipped()
        self.run: str | None = None
        self.plugins: dict[str, str] = {}
        self.hparams_data = _hparams_message()

    def items(self, stream: BinaryIO, path: str) -> Iterator[Item]:
        """Records, malformed parts and notes of one file, in order."""
        self.plugins = {}
        limit = self.limits.max_line_bytes
        offset = index = overlong = 0
        while True:
            header = stream.read(_HEADER.size)
            if not header:
                return
            index += 1
            where = f"at byte offset {offset}"
            if len(header) < _HEADER.size:
                yield self._incomplete(path, index, where)
                return
            length, length_crc = _HEADER.unpack(header)
            if self.crc(header[:8]) != length_crc:
                yield self._unframed(path, index, where)
                return
            if length > limit:
                overlong += 1
                why = f"{where}, the record claims {length} bytes, over {limit}; not read"
                if not _skip(stream, length + _CRC.size, self.limits):
                    why = (
                        f"{where}, the record claims {length} bytes, over {limit} and more than "
                        "the file holds; not read"
                    )
                    yield Malformed(path, index, why, expected=_EXPECTED, input=self.run)
                    return
                if overlong >= self.limits.max_overlong_lines:
                    why = (
                        f"{overlong} records longer than {limit} bytes (the last {where}); "
                        "this is not a TensorBoard event file"
                    )
                    yield Malformed(path, index, why, True, _EXPECTED, self.run)
                    return
                yield Malformed(path, index, why, expected=_EXPECTED, input=self.run)
                self.source.lines += 1
                offset += _HEADER.size + length + _CRC.size
                continue
            payload = stream.read(length)
            footer = stream.read(_CRC.size)
            if len(payload) < length or len(footer) < _CRC.size:
                yield self._incomplete(path, index, where)
                return
            offset += _HEADER.size + length + _CRC.size
            self.source.lines += 1
            if self.crc(payload) != _CRC.unpack(footer)[0]:
                why = f"{where}, its data checksum does not match (a damaged file)"
                yield Malformed(path, index, why, expected=_EXPECTED, input=self.run)
                continue
            item = self._parse(payload, path, index, where)
            if item is not None:
                yield item

    def _incomplete(self, path: str, index: int, where: str) -> Note:
        message = (
            f"{path}: the last record (record {index}, {where}) is incomplete, as while the "
            f"run is still writing it; the {index - 1} record(s) before it were read"
        )
        return Note("incomplete_record", message, path, index)

    def _unframed(self, path: str, index: int, where: str) -> Malformed:
        if index == 1:
            why = (
                "the first record's length checksum does not match: this is not a TensorBoard "
                "event file (pass the events.out.tfevents.* files a SummaryWriter wrote)"
            )
        else:
            why = (
                f"{where}, its length checksum does not match (a damaged file); the records "
                "after it cannot be found and were not read"
            )
        return Malformed(path, index, why, True, _EXPECTED, self.run)

    def _parse(self, payload: bytes, path: str, index: int, where: str) -> Item | None:
        try:
            event = self.event.FromString(payload)
        except (self.decode_error, RecursionError, ValueError) as exc:
            why = f"{where}, the payload is not an Event ({exc})"
            return Malformed(path, index, why, expected=_EXPECTED, input=self.run)
        if not event.HasField("summary"):
            return None
        metrics: dict[str, object] = {}
        config: dict[str, object] | None = None
        for value in event.summary.value:
            which = value.WhichOneof("value")
            if which == "simple_value":
                metrics[value.tag] = value.simple_value
                continue
            if which is None and value.metadata.plugin_data.plugin_name == _HPARAMS:
                config = self._hparams(value.metadata.plugin_data.content)
                if config is not None:
                    continue
            if which != "tensor":
                plugin = value.metadata.plugin_data.plugin_name
                self.skipped.add(which or (f"{plugin} metadata" if plugin else "empty"))
                continue
            plugin = self._plugin(value)
            scalar = _scalar(value.tensor) if plugin == "scalars" else _NOT_SCALAR
            if scalar is _NOT_SCALAR:
                self.skipped.add(f"{plugin or 'untyped'} tensor")
            else:
                metrics[value.tag] = scalar
        if not metrics:
            if config is None:
                return None
            return RunConfig(config, path, index, run=self.run, input=self.run)
        return Record(
            int(event.step),
            "",
            metrics,
            path,
            index,
            split=True,
            input=self.run,
            rewrite=INGESTER_NAME,
        )

    def _hparams(self, content: bytes) -> dict[str, object] | None:
        """The configuration an hparams session start holds (``None``: not one, or unreadable).

        Each hparam is a ``google.protobuf.Value``: a number, a bool, a text (``"None"``,
        Lightning's spelling of a null, is read as null) or a null; at most
        :data:`~._params.MAX_PARAMS` are read.
        """
        if self.hparams_data is None:
            return None
        try:
            data = self.hparams_data.FromString(content)
        except (self.decode_error, RecursionError, ValueError):
            return None
        if not data.HasField("session_start_info"):
            return None
        items: list[tuple[str, object]] = []
        for key, value in data.session_start_info.hparams.items():
            if len(items) >= MAX_PARAMS:
                break
            kind = value.WhichOneof("kind")
            if kind == "number_value":
                number = value.number_value
                items.append((key, int(number) if number.is_integer() else number))
            elif kind == "bool_value":
                items.append((key, value.bool_value))
            elif kind == "string_value":
                text = value.string_value
                items.append((key, None if text == "None" else text))
            elif kind == "null_value":
                items.append((key, None))
        return nested(items)

    def _plugin(self, value: Any) -> str:
        """The value's plugin: its metadata's, else the one its tag's first value named."""
        name: str = value.metadata.plugin_data.plugin_name
        if name:
            if value.tag in self.plugins or len(self.plugins) < self.limits.max_family_keys:
                self.plugins[value.tag] = name
            return name
        return self.plugins.get(value.tag, "")


def _skip(stream: BinaryIO, count: int, limits: Limits) -> bool:
    """Move past ``count`` bytes without holding them; ``False`` when the input ends first."""
    if stream.seekable():
        here = stream.tell()
        end = stream.seek(0, os.SEEK_END)
        if here + count > end:
            return False
        stream.seek(here + count)
        return True
    if count > limits.max_skipped_bytes:
        return False
    while count > 0:
        chunk = stream.read(min(count, _SKIP_CHUNK))
        if not chunk:
            return False
        count -= len(chunk)
    return True


def _run_info(root: str, folder: str) -> RunInfo:
    """A folder of event files as a run: its path under the log folder is its id."""
    relative = os.path.relpath(folder, root)
    name = os.path.basename(os.path.normpath(folder))
    return RunInfo(folder, name if relative == os.curdir else relative.replace(os.sep, "/"))


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Item]:
    """The scalars of one event file or log folder, malformed parts and notes included.

    Raises:
        ModuleNotFoundError: the ``tensorboard`` extra is not installed (the
            message says what to install).
        OSError: an event file cannot be read (``filename`` names it).
    """
    reader = _FileReader(_library(), source, limits)
    if stream is not None:
        yield from reader.items(stream, source.path)
    else:
        runs: dict[str, bool] = {}  # each folder of event files: read (selected) or not
        for path, why_not in event_files(source.path):
            folder = os.path.dirname(path)
            wanted = runs.get(folder)
            if wanted is None:
                run = _run_info(source.path, folder)
                wanted = runs[folder] = source.wants(run)
                if wanted:
                    source.runs.append(run)
            if not wanted:
                continue
            if why_not is not None:
                yield Note("not_read", f"{path} was not read: {why_not}", path)
                continue
            reader.run = folder
            with open_input(path, root=source.path) as events:
                yield from reader.items(events, path)
    if reader.skipped.total:
        yield reader.skipped.note(source.path)
