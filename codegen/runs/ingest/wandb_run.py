"""A W&B run's transaction log: ``wandb/offline-run-<time>-<id>/run-<id>.wandb``.

What is read. Every ``wandb.log`` call becomes a *history* record of the
run's ``.wandb`` file: its step and one item per logged key. Each becomes a
:class:`~codegen.runs.records.Record` whose keys are split against the
catalog (``series_rules.split_flat_key``'s one rule), as flat JSONL and MLflow
keys are. The run's configuration (``wandb.init(config=...)``, then
``run.config.update``) is the run's configuration for presence conditions
(``config.trainer.test_freq > 0``), exactly as a ``JsonlLogger`` header's.

Keys. A key is logged whole: ``actor/pg_loss``, ``val-core/openai/gsm8k/acc/mean@4``
and ``a b`` stay as they are (W&B keeps ``/``, ``.``, ``@`` and spaces). A
nested dict (``wandb.log({"eval": {"acc": 0.9}})``) is stored as a path of
keys; it is read as the key ``eval.acc``, the name W&B shows it under (so a
nested dict and a flat key ``"eval.acc"`` are the same key, in W&B too).

Steps. A record's step is the history step (``_step``: W&B counts ``wandb.log``
calls unless ``step=`` is given), except for keys whose x axis the run defined
with ``wandb.define_metric(key or glob, step_metric=...)``: those keys (and the
step metric itself) are read at the step metric's value in the same record,
when it is a whole number. OpenRLHF logs ``train/*`` without ``step=`` and
defines ``train/global_step`` as their axis, so a run of 4 steps that logs a
samples table beside each step's metrics is 4 steps long, not 8 calls. A key
with no such definition, or whose step metric is absent or not a whole number
in that record, stays at ``_step``. A step metric is an axis: counted under the row
that declares it, but never reported undeclared, since W&B's ``step_sync`` writes its
last value into every record of its keys that lacks it (OpenRLHF defines ``eval/epoch``
as the axis of ``eval/*`` and never logs it: W&B writes ``eval/epoch`` 0 on each).
The run's definitions (key or glob, step metric, summary, goal, hidden) are listed in a
``metric_definitions`` notice, as ``metric_catalog.wandb_setup`` writes them from the catalog.

What is not read. ``_step``, ``_runtime``, ``_timestamp`` and ``_wandb`` are
W&B's bookkeeping, not metrics. A media value (``wandb.Histogram``,
``wandb.Table``, ``wandb.Image``, ...: an object with a ``_type``) is not a
scalar: it is skipped and counted in a ``skipped_values`` notice, never a
finding. The summary (last values), system metrics, console output, files
and artifacts are not read. A string, list or bool logged for a declared key
is judged as in any format (``non_scalar``).

Why our own reader. wandb no longer ships a Python reader of this file (the
old ``wandb.sdk.internal.datastore`` went with the move to the Go
``wandb-core``), so no maintained library reads it. The file is two small,
stable layers, read here in bounded memory with the standard library alone:

- the container, the record log of LevelDB (``wandb-core``'s
  ``core/pkg/leveldb``): a 7-byte header (``:W&B``, magic ``0xBEE1`` little
  endian, version 0) in the first of a sequence of 32 KiB blocks; each block
  holds chunks (a CRC-32 (IEEE, as :func:`zlib.crc32`) of the chunk type and
  payload, a 2-byte length, a 1-byte type: full, first, middle, last); a
  chunk never crosses a block, fewer than 7 bytes left in a block are zero
  padding, and a record longer than what is left continues in the next
  block's chunks;
- the payload, a ``wandb_internal.Record`` protobuf, of which a few fields
  are read with a small wire-format decoder (history items, the step, the
  configuration's items). Protobuf field numbers are wandb's compatibility
  promise (its own ``wandb sync`` reads old files), and the tests check the
  decoder against runs the real ``wandb`` writes and against its published
  protobuf classes. Both forms of a history value are read: the JSON text
  (``value_json``, the default, with ``NaN`` and ``Infinity`` spellings) and
  the typed form (``x_history_value_encoding="typed"``).

Damage. A chunk whose checksum, length or type is wrong, or a payload that is
not a protobuf, is ``malformed`` (positioned by record number and byte
offset); reading resumes at the next block, as LevelDB's own reader recovers.
Zero-filled blocks are skipped. A last record cut short (the job is still
running, or crashed mid-write) is not an error: it is left out and named in
a ``incomplete_record`` notice. A file that does not start with the header is
abandoned, as is one that skips more than ``max_skipped_bytes`` without a
record or holds ``max_overlong_lines`` records longer than
``max_line_bytes``.

Inputs: a run folder (it holds ``run-*.wandb``), a ``.wandb`` file (detected
by its header), the ``wandb/`` folder above several run folders (each run
folder is then an input of its own, a worker in the report; the
``latest-run`` link is not followed), or the project folder above that
(``wandb.init(dir=...)``'s ``dir``, holding ``wandb/`` or ``.wandb/``). A run
resumed with the same id (``wandb.init(id=..., resume=...)``) is written to a new
folder with that id: both folders are the one run. ``--run`` selects run
folders by id or folder name (see :meth:`~..records.Source.wants`). The
report's runs name each one: its id, display name (an online run's) and project
(as the experiment). Positions count
a file's records as its lines (``line 12`` is its 12th record).
"""

from __future__ import annotations

import os
import stat
import struct
import zlib
from collections.abc import Iterator
from typing import BinaryIO, Final, NamedTuple

from ...safe_fs import open_input
from ..limits import Limits
from ..records import Item, Malformed, Note, Record, RunConfig, RunInfo, Source
from ._json import loads

__all__ = [
    "BLOCK_SIZE",
    "FILE_HEADER",
    "INGESTER_NAME",
    "ConfigChange",
    "Decoded",
    "Frame",
    "History",
    "MetricDefinition",
    "RunStart",
    "decode_record",
    "detect",
    "folder_run_id",
    "frames",
    "read",
    "run_files",
    "run_folders",
    "wandb_folder",
]

INGESTER_NAME: Final = "wandb"
FILE_HEADER: Final = b":W&B\xe1\xbe\x00"
"""``:W&B``, magic ``0xBEE1`` (little endian), version 0: the first 7 bytes of every run file."""
BLOCK_SIZE: Final = 32 * 1024
_CHUNK_HEADER: Final = 7
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
_EXPECTED: Final = "a W&B record"
_BOOKKEEPING: Final = frozenset({"_step", "_runtime", "_timestamp"})
_MEDIA_KINDS: Final = 32
"""Distinct media ``_type`` values counted by name per file; later ones count as ``other``."""
_HEAD = struct.Struct("<IHB")
_DOUBLE = struct.Struct("<d")

# Field numbers of wandb_internal.proto (wandb/proto/wandb_internal.proto).
_RECORD_HISTORY, _RECORD_CONFIG, _RECORD_METRIC, _RECORD_RUN = 2, 5, 12, 17
_METRIC_NAME, _METRIC_GLOB, _METRIC_STEP = 1, 2, 4
_METRIC_OPTIONS, _METRIC_SUMMARY, _METRIC_GOAL, _OPTION_HIDDEN = 6, 7, 8, 2
_SUMMARIES: Final = ("min", "max", "mean", "best", "last", "none", "copy", "first")
_GOALS: Final = {1: "minimize", 2: "maximize"}
_DEFINITIONS_SHOWN: Final = 8
_RUN_ID, _RUN_PROJECT, _RUN_CONFIG, _RUN_NAME = 1, 3, 4, 8
_HISTORY_ITEM, _HISTORY_STEP = 1, 2
_CONFIG_UPDATE, _CONFIG_REMOVE = 1, 2
_ITEM_KEY, _ITEM_NESTED_KEY, _ITEM_VALUE_JSON = 1, 2, 16
_ITEM_NONE, _ITEM_BOOL, _ITEM_INT, _ITEM_DOUBLE, _ITEM_TEXT, _ITEM_JSON = 3, 4, 5, 6, 7, 8
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
_TYPED: Final = {
    _ITEM_NONE: _VARINT,
    _ITEM_BOOL: _VARINT,
    _ITEM_INT: _VARINT,
    _ITEM_DOUBLE: _FIXED64,
    _ITEM_TEXT: _BYTES,
    _ITEM_JSON: _BYTES,
}
"""The typed forms of a history value and the wire type each is written with."""


# --- the container ---------------------------------------------------------------------


class Frame(NamedTuple):
    """One thing the container holds: a whole record's payload, or what went wrong.

    ``kind`` is ``record`` (``payload`` set), ``bad`` (a damaged part, skipped),
    ``torn`` (the file ends inside its last record) or ``fatal`` (the file was
    abandoned). ``offset`` is the byte offset of the first chunk concerned.
    """

    kind: str
    offset: int
    payload: bytes = b""
    why: str = ""


def _read_block(stream: BinaryIO, size: int) -> bytes:
    """Up to ``size`` bytes; fewer only at the end of the input (a pipe may return less)."""
    data = stream.read(size)
    if not data or len(data) == size:
        return data or b""
    parts = [data]
    got = len(data)
    while got < size:
        more = stream.read(size - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def frames(stream: BinaryIO, limits: Limits) -> Iterator[Frame]:
    """The records of a run file's container, in order, in bounded memory.

    At most one block and one record (up to ``max_line_bytes``) are held.
    """
    head = _read_block(stream, len(FILE_HEADER))
    refused = _header_problem(head)
    if refused:
        yield Frame("fatal", 0, why=refused)
        return
    yield from _Container(stream, limits, head).frames()


def _header_problem(head: bytes) -> str:
    """Why a file starting with ``head`` is not read, or ``""`` when it is a W&B run file."""
    if head[:6] != FILE_HEADER[:6]:
        return "it does not start with the W&B header (':W&B', 0xBEE1)"
    if len(head) < len(FILE_HEADER) or head[6] != FILE_HEADER[6]:
        version = head[6] if len(head) > 6 else "missing"
        return f"unknown W&B file version {version} (0 is read)"
    return ""


class _Container:
    """The reading state of one run file past its header: the block in hand and the record
    being assembled from its chunks.

    Each step below returns the frames it found (most often none or one) and sets
    ``done`` when the file is done with (its end, or a reason to abandon it).
    """

    def __init__(self, stream: BinaryIO, limits: Limits, head: bytes) -> None:
        self.stream = stream
        self.limits = limits
        self.block = head + _read_block(stream, BLOCK_SIZE - len(head))
        self.start = 0  # the file offset of the block in hand
        self.pos = len(head)
        self.pending: list[bytes] = []  # the chunks of the record being assembled
        self.pending_at = -1
        self.pending_size = 0
        self.dropping = False  # the rest of a record already reported is skipped silently
        self.overlong = 0
        self.skipped = 0  # bytes skipped since the last good record
        self.done = False

    def frames(self) -> Iterator[Frame]:
        """Every frame from the current position to the end of the file."""
        while not self.done:
            if self.pos + _CHUNK_HEADER > len(self.block):
                yield from self._next_block()
            else:
                yield from self._chunk()

    def _end(self, *last: Frame) -> tuple[Frame, ...]:
        """``last``, the file's final frames; nothing more is read."""
        self.done = True
        return last

    def _skip_block(self) -> None:
        """Pass over the rest of the block in hand."""
        self.skipped += len(self.block) - self.pos
        self.pos = len(self.block)

    def _next_block(self) -> tuple[Frame, ...]:
        """Move to the next block, past the zero trailer of this one."""
        torn = "the file ends inside this record"
        if len(self.block) < BLOCK_SIZE:  # the last, short block: the end of the file
            if self.pending or self.block[self.pos :].strip(b"\x00"):
                at = self.pending_at if self.pending else self.start + self.pos
                return self._end(Frame("torn", at, why=torn))
            return self._end()
        self.skipped += len(self.block) - self.pos
        self.start += BLOCK_SIZE
        self.block, self.pos = _read_block(self.stream, BLOCK_SIZE), 0
        if not self.block:
            if self.pending:
                return self._end(Frame("torn", self.pending_at, why=torn))
            return self._end()
        if self.skipped > self.limits.max_skipped_bytes:
            why = f"more than {self.limits.max_skipped_bytes} bytes without a record"
            return self._end(Frame("fatal", self.start, why=why))
        return ()

    def _chunk(self) -> tuple[Frame, ...]:
        """Read the chunk at the current position: check it, then add it to its record."""
        crc, length, kind = _HEAD.unpack_from(self.block, self.pos)
        at = self.start + self.pos
        end = self.pos + _CHUNK_HEADER + length
        if crc == 0 and length == 0 and kind == 0 and not self.pending:
            self._skip_block()  # zero padding: the rest of the block is empty
            return ()
        if end > len(self.block) and len(self.block) < BLOCK_SIZE and end <= BLOCK_SIZE:
            at = self.pending_at if self.pending else at
            return self._end(Frame("torn", at, why="the file ends inside it"))
        problem = self._chunk_problem(crc, length, kind, end)
        if problem:
            # As LevelDB's reader recovers: drop the record, resume at the next block.
            self.pending, self.pending_size, self.dropping = [], 0, True
            self._skip_block()
            return (Frame("bad", at, why=problem),)
        payload = self.block[self.pos + _CHUNK_HEADER : end]
        self.pos = end
        return self._assemble(kind, payload, at)

    def _chunk_problem(self, crc: int, length: int, kind: int, end: int) -> str:
        """What is wrong with the chunk at the current position, or ``""``."""
        if crc == 0 and length == 0 and kind == 0:
            return "zero bytes where the record's next chunk should be"
        if end > len(self.block):
            return f"chunk length {length} runs past the end of its 32 KiB block"
        if kind not in (_FULL, _FIRST, _MIDDLE, _LAST):
            return f"unknown chunk type {kind}"
        if zlib.crc32(self.block[self.pos + 6 : end]) != crc:
            return "checksum mismatch (the chunk is damaged)"
        return ""

    def _assemble(self, kind: int, payload: bytes, at: int) -> tuple[Frame, ...]:
        """Add a sound chunk to the record it belongs to; the record once it is whole."""
        found: tuple[Frame, ...] = ()
        if kind == _FULL and not self.pending and len(payload) <= self.limits.max_line_bytes:
            self.skipped, self.dropping = 0, False  # the common case: a record in one chunk
            return (Frame("record", at, payload),)
        if kind in (_FULL, _FIRST):
            if self.pending:
                found = (Frame("bad", self.pending_at, why="the record's last chunk is missing"),)
            self.pending, self.pending_at, self.dropping = [payload], at, False
            self.pending_size = len(payload)
        elif not self.pending:
            if self.dropping:
                return ()
            self.dropping = True
            return (Frame("bad", at, why="a continuation chunk without its first chunk"),)
        else:
            self.pending.append(payload)
            self.pending_size += len(payload)
        if self.pending_size > self.limits.max_line_bytes:
            return found + self._overlong(at)
        if kind in (_FULL, _LAST):
            whole = self.pending[0] if len(self.pending) == 1 else b"".join(self.pending)
            found += (Frame("record", self.pending_at, whole),)
            self.pending, self.pending_size, self.skipped = [], 0, 0
        return found

    def _overlong(self, at: int) -> tuple[Frame, ...]:
        """Drop a record past ``max_line_bytes``; give up once too many were."""
        limit = self.limits.max_line_bytes
        self.overlong += 1
        dropped = Frame("bad", self.pending_at, why=f"longer than {limit} bytes")
        self.pending, self.pending_size, self.dropping = [], 0, True
        if self.overlong >= self.limits.max_overlong_lines:
            why = f"{self.overlong} records longer than {limit} bytes"
            return self._end(dropped, Frame("fatal", at, why=why))
        return (dropped,)


# --- the payload: a few fields of wandb_internal.Record ---------------------------------


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if i >= len(buf):
            msg = "a varint runs past the end"
            raise ValueError(msg)
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            msg = "a varint longer than 10 bytes"
            raise ValueError(msg)


def _fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """``(field number, wire type, value)`` of one message: an int or the raw bytes."""
    i, end = 0, len(buf)
    while i < end:
        tag, i = _varint(buf, i)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            msg = "field number 0"
            raise ValueError(msg)
        value: int | bytes
        if wire == _VARINT:
            value, i = _varint(buf, i)
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            if i + size > end:
                msg = f"field {number} runs past the end"
                raise ValueError(msg)
            value, i = buf[i : i + size], i + size
        elif wire == _BYTES:
            size, i = _varint(buf, i)
            if i + size > end:
                msg = f"field {number} (length {size}) runs past the end"
                raise ValueError(msg)
            value, i = buf[i : i + size], i + size
        else:
            msg = f"field {number} has wire type {wire}, which wandb does not write"
            raise ValueError(msg)
        yield number, wire, value


def _message(value: int | bytes, what: str) -> bytes:
    if not isinstance(value, bytes):
        msg = f"{what} is not a message"
        raise ValueError(msg)
    return value


def _text(value: int | bytes, what: str) -> str:
    return _message(value, what).decode("utf-8")  # UnicodeDecodeError is a ValueError


class _Item(NamedTuple):
    path: tuple[str, ...]
    value: object


def _item(buf: bytes, what: str) -> _Item | None:
    """A history or configuration item: its key path and value (``None`` when it has none).

    The typed form of the value wins over the JSON text when an item has both
    (wandb writes both with ``x_history_value_encoding="json,typed"``): it keeps
    a float a float.
    """
    key: str | None = None
    nested: list[str] = []
    legacy: bytes | None = None
    value: object = None
    typed = False
    for number, wire, raw in _fields(buf):
        if number == _ITEM_KEY:
            key = _text(raw, f"the key of {what}")
        elif number == _ITEM_NESTED_KEY:
            nested.append(_text(raw, f"the key of {what}"))
        elif number == _ITEM_VALUE_JSON:
            legacy = _message(raw, f"the value of {what}")
        elif number in _TYPED:
            if wire != _TYPED[number]:
                msg = f"field {number} of {what} has wire type {wire}, not {_TYPED[number]}"
                raise ValueError(msg)
            typed = True
            if number == _ITEM_JSON:
                value = loads(_message(raw, f"the value of {what}"))
            elif number == _ITEM_TEXT:
                value = _text(raw, f"the value of {what}")
            elif number == _ITEM_NONE:
                value = None
            elif number == _ITEM_DOUBLE:
                value = _DOUBLE.unpack(_message(raw, f"the value of {what}"))[0]
            elif isinstance(raw, int):
                value = bool(raw) if number == _ITEM_BOOL else (raw >> 1) ^ -(raw & 1)  # sint64
    path = tuple(nested) if nested else (key,) if key is not None else ()
    if not path:
        msg = f"{what} has no key"
        raise ValueError(msg)
    if not typed:
        if legacy is None:
            return None
        value = loads(legacy)
    return _Item(path, value)


def _expand(path: tuple[str, ...], value: object, out: list[_Item]) -> None:
    """``path: value``, a dict value (old files: a nested dict as one JSON object) expanded."""
    if isinstance(value, dict) and value and "_type" not in value:
        for name, inner in value.items():
            _expand((*path, str(name)), inner, out)
    else:
        out.append(_Item(path, value))


class History(NamedTuple):
    """One history record: its step, the metrics read and the media values skipped."""

    step: int
    metrics: dict[str, object]
    media: dict[str, int]


class ConfigChange(NamedTuple):
    """A configuration update: items set and key paths removed."""

    update: list[_Item]
    remove: list[tuple[str, ...]]


class MetricDefinition(NamedTuple):
    """``wandb.define_metric``: a key (``name``) or glob (``train/*``) and its x axis,
    with the run summaries, goal and hidden flag it asked for."""

    name: str
    glob: str
    step_metric: str
    summary: tuple[str, ...] = ()
    goal: str = ""
    hidden: bool = False

    def describe(self) -> str:
        """``train/* against train/global_step (summary max, goal maximize)``."""
        parts = []
        if self.summary:
            parts.append(f"summary {'+'.join(self.summary)}")
        if self.goal:
            parts.append(f"goal {self.goal}")
        if self.hidden:
            parts.append("hidden")
        text = self.name or self.glob
        if self.step_metric:
            text += f" against {self.step_metric}"
        return text + (f" ({', '.join(parts)})" if parts else "")


class RunStart(NamedTuple):
    """The run record: the run's id, display name and project, and its configuration."""

    config: ConfigChange
    run_id: str
    name: str
    project: str


def _history(buf: bytes) -> History:
    items: list[_Item] = []
    step: int | None = None
    for number, _, raw in _fields(buf):
        if number == _HISTORY_ITEM:
            item = _item(_message(raw, "a history item"), "a history item")
            if item is None:
                continue
            _expand(item.path, item.value, items)
        elif number == _HISTORY_STEP:
            step = 0
            for inner, _, num in _fields(_message(raw, "the history step")):
                if inner == 1 and isinstance(num, int):
                    step = num - (1 << 64) if num >= 1 << 63 else num
    media_at = {
        item.path[:-1]: item.value
        for item in items
        if item.path[-1] == "_type" and len(item.path) > 1 and isinstance(item.value, str)
    }
    metrics: dict[str, object] = {}
    media: dict[str, int] = {}
    for item in items:
        path, value = item.path, item.value
        if path[0] == "_wandb" or (len(path) == 1 and path[0] in _BOOKKEEPING):
            if path == ("_step",) and step is None and isinstance(value, int):
                step = value
            continue
        if isinstance(value, dict) and isinstance(value.get("_type"), str):
            kind = str(value["_type"])
            media[kind] = media.get(kind, 0) + 1
            continue
        owner = next((path[:n] for n in range(1, len(path)) if path[:n] in media_at), None)
        if owner is not None:
            if path[len(owner)] == "_type":
                kind = str(media_at[owner])
                media[kind] = media.get(kind, 0) + 1
            continue
        metrics[".".join(path)] = value
    if step is None:
        msg = "a history record without a step"
        raise ValueError(msg)
    return History(step, metrics, media)


def _config(buf: bytes) -> ConfigChange:
    change = ConfigChange([], [])
    what = "a configuration item"
    for number, _, raw in _fields(buf):
        if number == _CONFIG_UPDATE:
            item = _item(_message(raw, what), what)
            if item is not None:
                change.update.append(item)
        elif number == _CONFIG_REMOVE:
            change.remove.append(_key_path(_message(raw, what)))
    return change


def _key_path(buf: bytes) -> tuple[str, ...]:
    """The key path of an item (its nested key, else its key), whatever its value."""
    key: tuple[str, ...] = ()
    nested: list[str] = []
    for number, _, value in _fields(buf):
        if number == _ITEM_KEY:
            key = (_text(value, "a configuration key"),)
        elif number == _ITEM_NESTED_KEY:
            nested.append(_text(value, "a configuration key"))
    return tuple(nested) or key


def _run(buf: bytes) -> RunStart:
    config = ConfigChange([], [])
    text = {_RUN_ID: "", _RUN_PROJECT: "", _RUN_NAME: ""}
    for number, _, value in _fields(buf):
        if number == _RUN_CONFIG:
            config = _config(_message(value, "the run's configuration"))
        elif number in text:
            text[number] = _text(value, "a field of the run record")
    return RunStart(config, text[_RUN_ID], text[_RUN_NAME], text[_RUN_PROJECT])


def _metric(buf: bytes) -> MetricDefinition:
    text = {_METRIC_NAME: "", _METRIC_GLOB: "", _METRIC_STEP: ""}
    summary: tuple[str, ...] = ()
    goal, hidden = "", False
    for number, _, value in _fields(buf):
        if number in text:
            text[number] = _text(value, "a field of a metric definition")
        elif number == _METRIC_SUMMARY:
            flags = _fields(_message(value, "a metric summary"))
            summary = tuple(
                _SUMMARIES[n - 1] for n, _, on in flags if 1 <= n <= len(_SUMMARIES) and on
            )
        elif number == _METRIC_GOAL and isinstance(value, int):
            goal = _GOALS.get(value, "")
        elif number == _METRIC_OPTIONS:
            options = _fields(_message(value, "metric options"))
            hidden = any(n == _OPTION_HIDDEN and on for n, _, on in options)
    return MetricDefinition(
        text[_METRIC_NAME], text[_METRIC_GLOB], text[_METRIC_STEP], summary, goal, hidden
    )


Decoded = History | ConfigChange | RunStart | MetricDefinition
"""What :func:`decode_record` reads from a record."""


def decode_record(payload: bytes) -> Decoded | None:
    """The history, configuration, run or metric definition a record holds; else ``None``.

    Raises:
        ValueError: the payload is not a well-formed ``wandb_internal.Record``
            (the message says what is wrong); a history record with no step.
        RecursionError: a value nests too deep.
    """
    found: Decoded | None = None
    for number, _, raw in _fields(payload):
        if number == _RECORD_HISTORY:
            found = _history(_message(raw, "the history record"))
        elif number == _RECORD_METRIC:
            found = _metric(_message(raw, "the metric record"))
        elif number == _RECORD_CONFIG:
            found = _config(_message(raw, "the configuration record"))
        elif number == _RECORD_RUN:
            found = _run(_message(raw, "the run record"))
    return found


# --- inputs ----------------------------------------------------------------------------


def run_files(folder: str) -> list[str]:
    """The ``run-*.wandb`` entries of a run folder, sorted (whatever their file type)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(
        os.path.join(folder, name)
        for name in names
        if name.startswith("run-") and name.endswith(".wandb")
    )


def run_folders(folder: str) -> list[str]:
    """The run folders directly under ``folder`` (a ``wandb/`` folder), sorted; links skipped."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    return [
        entry.path
        for entry in entries
        if entry.is_dir(follow_symlinks=False) and run_files(entry.path)
    ]


_WANDB_DIRS: Final = ("wandb", ".wandb")
"""The folder ``wandb.init(dir=...)`` writes its runs into, under ``dir`` (``.wandb`` when
``wandb`` is taken)."""


def wandb_folder(path: str) -> str | None:
    """The ``wandb/`` folder of runs under the project folder ``path``, if it has one."""
    for name in _WANDB_DIRS:
        folder = os.path.join(path, name)
        if os.path.isdir(folder) and not os.path.islink(folder) and run_folders(folder):
            return folder
    return None


def folder_run_id(folder: str) -> str:
    """The run id of a run folder: its one ``run-<id>.wandb`` file's, else the id its name
    ends with, ``[offline-]run-<YYYYMMDD_HHMMSS>-<id>`` (an id may hold ``-``), else the
    name itself. The file comes first: wandb names a second folder of the same run started
    in the same second ``...-<id>-1``."""
    files = run_files(folder)
    if len(files) == 1:
        return os.path.basename(files[0])[4:-6]
    name = os.path.basename(os.path.normpath(folder))
    rest = name.removeprefix("offline-").removeprefix("run-")
    stamp, dash, run_id = rest.partition("-")
    return run_id if dash and run_id and stamp[:8].isdigit() else name


def detect(path: str, head: bytes) -> bool:
    """A ``.wandb`` file (its header), a run folder, a folder of run folders (``wandb/``),
    or the project folder above one."""
    if head:
        return head.startswith(FILE_HEADER[:6])
    if not os.path.isdir(path):
        return False
    return bool(run_files(path) or run_folders(path) or wandb_folder(path))


def _glob_matches(glob: str, key: str) -> bool:
    """W&B's metric glob: ``train/*`` takes every key starting ``train/``.

    ``wandb.define_metric`` accepts ``*`` only at the end of a name (``wandb_run.py``,
    "glob suffixes only"); a glob without it names one key.
    """
    if glob.endswith("*"):
        return key.startswith(glob[:-1])
    return key == glob


def _whole(value: object) -> int | None:
    """``value`` as a step when it is a whole number (``4`` or ``4.0``), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return None


class _Run:
    """What one run file adds up to: its configuration, x axes and the values it skipped."""

    def __init__(self) -> None:
        self.config: dict[str, object] = {}
        self.config_line = 0
        self.media: dict[str, int] = {}
        self.run: RunStart | None = None
        self.axis_of_key: dict[str, str] = {}  # define_metric(name, step_metric=...)
        self.axis_of_glob: list[tuple[str, str]] = []  # define_metric(glob, ...), latest first
        self.axes: set[str] = set()
        self.axis_cache: dict[str, str] = {}
        self.definitions: dict[str, MetricDefinition] = {}  # what the run defined, shown

    def define(self, metric: MetricDefinition) -> None:
        """Note one ``define_metric`` call (a later one for the same key or glob wins)."""
        self.axis_cache.clear()
        if len(self.definitions) < _DEFINITIONS_SHOWN * 64:
            self.definitions[metric.name or f"glob:{metric.glob}"] = metric
        # A later definition of the same key or glob is merged into the earlier one
        # (wandb's handler merges unless overwrite=True): an empty step metric keeps it.
        if metric.name:
            if metric.step_metric or metric.name not in self.axis_of_key:
                self.axis_of_key[metric.name] = metric.step_metric
        elif metric.glob:
            earlier = [a for g, a in self.axis_of_glob if g == metric.glob]
            step_metric = metric.step_metric or (earlier[0] if earlier else "")
            self.axis_of_glob = [(g, a) for g, a in self.axis_of_glob if g != metric.glob]
            self.axis_of_glob.insert(0, (metric.glob, step_metric))
        if metric.step_metric:
            self.axes.add(metric.step_metric)

    def axis(self, key: str) -> str:
        """The step metric ``key`` is plotted against (``""``: the history step)."""
        if key in self.axes:
            return key  # a step metric is read at its own value
        found = self.axis_cache.get(key)
        if found is None:
            found = self.axis_of_key.get(key, "")
            if key not in self.axis_of_key:
                found = next((a for g, a in self.axis_of_glob if _glob_matches(g, key)), "")
            if len(self.axis_cache) < 4096:
                self.axis_cache[key] = found
        return found

    def steps(self, history: History) -> list[tuple[int, dict[str, object], frozenset[str]]]:
        """``history``'s metrics grouped by the step each is read at, in first-key order,
        each group with the step metrics among its keys."""
        if not self.axes:
            return [(history.step, history.metrics, frozenset())]
        groups: dict[int, dict[str, object]] = {}
        for key, value in history.metrics.items():
            axis = self.axis(key)
            step = _whole(history.metrics.get(axis)) if axis else None
            groups.setdefault(history.step if step is None else step, {})[key] = value
        if not groups:
            return [(history.step, history.metrics, frozenset())]
        return [
            (step, keys, frozenset(self.axes.intersection(keys))) for step, keys in groups.items()
        ]

    def apply(self, change: ConfigChange, line: int) -> None:
        self.config_line = self.config_line or line
        for item in change.update:
            if item.path[0] == "_wandb":
                continue
            node = self.config
            for name in item.path[:-1]:
                inner = node.get(name)
                if not isinstance(inner, dict):
                    inner = node[name] = {}
                node = inner
            node[item.path[-1]] = item.value
        for path in change.remove:
            node = self.config
            for name in path[:-1]:
                inner = node.get(name)
                if not isinstance(inner, dict):
                    break
                node = inner
            else:
                if path:
                    node.pop(path[-1], None)


def _read_file(
    path: str, stream: BinaryIO, limits: Limits, run: str | None, source: Source
) -> Iterator[Item]:
    """The items of one run file (``run``: the input it belongs to, when not the file)."""
    state = _Run()
    line = 0
    for frame in frames(stream, limits):
        if frame.kind == "record":
            line += 1
            source.lines += 1
            try:
                found = decode_record(frame.payload)
            except (ValueError, RecursionError) as exc:
                why = f"not a W&B record protobuf ({exc})"
                where = f"record {line} (byte {frame.offset})"
                yield Malformed(path, line, why, expected=_EXPECTED, input=run, where=where)
                continue
            if isinstance(found, History):
                for kind, count in found.media.items():
                    named = (
                        kind if kind in state.media or len(state.media) < _MEDIA_KINDS else "other"
                    )
                    state.media[named] = state.media.get(named, 0) + count
                for step, metrics, axes in state.steps(found):
                    yield Record(
                        step, "", metrics, path, line, split=True, input=run, step_keys=axes
                    )
            elif isinstance(found, MetricDefinition):
                state.define(found)
            elif isinstance(found, ConfigChange):
                state.apply(found, line)
            elif isinstance(found, RunStart):
                state.apply(found.config, line)
                state.run = found
        elif frame.kind == "torn":
            message = (
                f"the last record (byte {frame.offset}) is incomplete: {frame.why}; the run was "
                "still writing or it crashed, so that record was not read"
            )
            yield Note("incomplete_record", message, path, line + 1)
        else:
            where = f"record {line + 1} (byte {frame.offset})"
            fatal = frame.kind == "fatal"
            yield Malformed(path, line + 1, frame.why, fatal, _EXPECTED, run, where)
    name = os.path.basename(path)
    run_id = state.run.run_id if state.run is not None else ""
    if not run_id and name.startswith("run-") and name.endswith(".wandb"):
        run_id = name[4:-6]
    source.runs.append(
        RunInfo(
            run or path,
            run_id or name,
            (state.run.name or None) if state.run is not None else None,
            (state.run.project or None) if state.run is not None else None,
        )
    )
    if state.config:
        yield RunConfig(state.config, path, state.config_line, run=run_id or name, input=run)
    if state.definitions:
        yield Note("metric_definitions", _definitions_message(state.definitions), path)
    if state.media:
        kinds = ", ".join(f"{kind}: {count}" for kind, count in sorted(state.media.items()))
        total = sum(state.media.values())
        message = (
            f"{total} logged value(s) were W&B media or tables ({kinds}), not scalars; "
            "live-check judges scalar values only, so they were skipped"
        )
        yield Note("skipped_values", message, path)


def _definitions_message(definitions: dict[str, MetricDefinition]) -> str:
    """The run's ``define_metric`` calls, the first few by name."""
    shown = [d.describe() for _, d in sorted(definitions.items())[:_DEFINITIONS_SHOWN]]
    more = len(definitions) - len(shown)
    tail = f"; and {more} more" if more > 0 else ""
    return (
        f"the run defined {len(definitions)} metric(s) with define_metric: "
        f"{'; '.join(shown)}{tail}; keys are read at their step metric"
    )


def _read_run_folder(folder: str, limits: Limits, run: str, source: Source) -> Iterator[Item]:
    for path in run_files(folder):
        try:
            mode = os.lstat(path).st_mode
        except OSError as exc:
            why = f"cannot be read ({exc.strerror})"
            yield Malformed(path, 0, why, True, _EXPECTED, run, "its start")
            continue
        if not stat.S_ISREG(mode):
            why = "not a regular file (a link, a FIFO or a device); pass the run's .wandb file"
            yield Malformed(path, 0, why, True, _EXPECTED, run, "its start")
            continue
        with open_input(path, root=source.path) as stream:
            yield from _read_file(path, stream, limits, run, source)


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Item]:
    """The records of a run file, a run folder, or each run folder of a ``wandb/`` folder.

    Raises:
        OSError: a run file cannot be opened (``filename`` names it).
    """
    if stream is not None:
        yield from _read_file(source.path, stream, limits, None, source)
        return
    if run_files(source.path):
        runs = [source.path]
    else:
        runs = run_folders(source.path) or run_folders(wandb_folder(source.path) or "")
    for folder in runs:
        if source.wants(RunInfo(folder, folder_run_id(folder))):
            yield from _read_run_folder(folder, limits, folder, source)
