"""A Hugging Face ``trainer_state.json``: the ``log_history`` a ``transformers.Trainer`` saves.

``Trainer.log(logs)`` appends ``{**logs, "step": global_step}`` to
``TrainerState.log_history`` and hands ``logs`` to every callback's ``on_log``;
``TrainerState.save_to_json`` writes the whole state as one JSON document
(``indent=2, sort_keys=True``) into each ``checkpoint-N/`` folder and, with
``trainer.save_state()``, into the output folder::

    {
      "best_metric": null,
      "epoch": 1.0,
      "global_step": 40,
      "log_history": [
        {"epoch": 0.25, "grad_norm": 0.8, "loss": 0.02, "reward": 0.4, "step": 10},
        {"epoch": 0.5, "eval_loss": 0.03, "eval_reward": 0.5, "step": 20},
        ...
      ],
      "logging_steps": 10,
      ...
    }

Each ``log_history`` entry is one record: its ``step`` is the record's step,
and every other key is a key the Trainer logged (what ``on_log`` received,
``epoch``, ``num_input_tokens_seen``, ``total_flos``, ``train_runtime`` and the
``eval_``-prefixed keys included), split against the catalog like any flat key.
The state's own fields (``global_step``, ``total_flos``, ``best_metric``,
``stateful_callbacks`` ...) are bookkeeping, not logged values, and are read
past. An entry that is not an object with an integer ``step`` is
``malformed`` (reported at its first line) and skipped.

The document is read as a stream, one ``log_history`` entry at a time, so
memory does not grow with the run: a single value (an entry, or one of the
state's fields) longer than ``max_line_bytes``, a run of more than
``max_skipped_bytes`` of whitespace, text that is not UTF-8 JSON, or a
document without ``log_history`` abandons the input (a fatal ``malformed``
item at the line where it happened), keeping the records read before. A document
that stops short where it was well-formed so far (``save_to_json`` rewrites the file in
place: read while a Trainer writes it, or left by a job killed then) is an
``incomplete_record`` notice instead, the entries before it read.
Detected by the file name ``trainer_state.json`` or by an object whose first
bytes hold a ``"log_history"`` key; ``--input-format hf-trainer-state`` forces
it. A Trainer's output folder (``checkpoint-N/trainer_state.json`` files, its own
``trainer_state.json``) is read as its latest state, which holds the log history of
the others (a ``latest_state`` notice names it); a resumed run's state holds the
history it was resumed from, so nothing is logged twice.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator
from typing import Any, BinaryIO, Final

from ...safe_fs import open_input
from ..limits import Limits
from ..records import Item, Malformed, Note, Record, Source
from ._json import WIDE_DECODER

__all__ = [
    "FILE_NAME",
    "INGESTER_NAME",
    "TrainerStateError",
    "detect",
    "output_folder",
    "parse_entry",
    "read",
    "states",
]

INGESTER_NAME: Final = "hf-trainer-state"
FILE_NAME: Final = "trainer_state.json"
"""The name ``Trainer`` saves its state under (``checkpoint-N/trainer_state.json``)."""

_EXPECTED: Final = "a trainer_state.json log_history entry (an object with an integer 'step')"
_HISTORY: Final = "log_history"
_CHUNK: Final = 64 * 1024
_WHITESPACE: Final = frozenset(" \t\r\n")
_DECODER: Final = json.JSONDecoder()


_CHECKPOINT: Final = re.compile(r"checkpoint-(\d+)")
"""A Trainer's checkpoint folder: ``checkpoint-<global step>``."""


def states(folder: str) -> list[tuple[int, str]]:
    """``(global step, path)`` of the states a Trainer's output folder holds, latest last.

    Each ``checkpoint-N/trainer_state.json`` is the state at step N; the folder's own
    ``trainer_state.json`` (``trainer.save_state()`` after training) comes after them all,
    unless the latest checkpoint's was written after it (a later run in the same folder).
    """
    found: list[tuple[int, str]] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        match = _CHECKPOINT.fullmatch(name)
        path = os.path.join(folder, name, FILE_NAME)
        if match and os.path.isfile(path) and not os.path.islink(path):
            found.append((int(match.group(1)), path))
    found.sort()
    own = os.path.join(folder, FILE_NAME)
    if os.path.isfile(own) and not os.path.islink(own):
        # Saved after training, so the latest, unless a later run's checkpoints are newer.
        if not found or _mtime(own) >= _mtime(found[-1][1]):
            found.append((found[-1][0] if found else 0, own))
        else:
            found.insert(0, (0, own))
    return found


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def output_folder(path: str) -> str | None:
    """The Trainer output folder a ``trainer_state.json`` belongs to (its own, or the one
    above its ``checkpoint-N``), or ``None`` when it is no Trainer's."""
    folder = os.path.dirname(os.path.abspath(path))
    if _CHECKPOINT.fullmatch(os.path.basename(folder)):
        return os.path.dirname(folder)
    return folder if os.path.basename(path) == FILE_NAME else None


def detect(path: str, head: bytes) -> bool:
    """Whether the input is a ``trainer_state.json`` (by its name, or a ``log_history`` key),
    or a Trainer's output folder of them (see :func:`states`) holding no TensorBoard event
    files (the Trainer's ``report_to="tensorboard"`` logs: the folder is read as those)."""
    if not head and os.path.isdir(path):
        return bool(states(path)) and not any(
            "tfevents" in name for _, _, files in os.walk(path) for name in files
        )
    if os.path.basename(path) == FILE_NAME and not head.strip():
        return True  # cut before its first byte: the Trainer is writing it (a notice)
    if not head.lstrip().startswith(b"{"):
        return False
    return os.path.basename(path) == FILE_NAME or b'"log_history"' in head


def parse_entry(entry: object, path: str, line: int) -> Record | str:
    """One ``log_history`` entry as a record of flat keys, or why it is not one."""
    if not isinstance(entry, dict):
        return f"expected an object, got a JSON {_json_type(entry)}"
    step = entry.get("step")
    if isinstance(step, bool) or not isinstance(step, int):
        return '"step" must be an integer (the global step the Trainer logged at)'
    metrics = {key: value for key, value in entry.items() if key != "step"}
    return Record(step, "", metrics, path, line, split=True)


def _json_type(value: object) -> str:
    names = {list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


class TrainerStateError(ValueError):
    """The document cannot be read on (why, at the scanner's line); :func:`read` turns it
    into a fatal ``malformed`` item, so it never leaves this module.

    ``cut``: the document stops short where it was well-formed so far (the file ends
    inside it): a Trainer writing it now, or killed while writing it.
    """

    def __init__(self, why: str, *, cut: bool = False) -> None:
        super().__init__(why)
        self.cut = cut


class _Scanner:
    """A JSON document read in bounded chunks: whitespace, punctuation and one value at a time."""

    def __init__(self, stream: BinaryIO, limits: Limits) -> None:
        self.stream = stream
        self.limits = limits
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.text = ""
        self.pos = 0
        self.line = 1
        self.eof = False

    def _fill(self, want: int = _CHUNK) -> bool:
        """Read at least ``want`` more bytes (or to the end); ``False`` at the end."""
        if self.eof:
            return False
        if self.pos > _CHUNK:  # drop what was read past; lines are already counted
            self.text = self.text[self.pos :]
            self.pos = 0
        raw = self.stream.read(max(want, _CHUNK))
        try:
            self.text += self.decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            raise TrainerStateError(f"not UTF-8 text ({exc.reason})") from None
        self.eof = not raw
        return bool(raw)

    def _advance(self, end: int) -> None:
        self.line += self.text.count("\n", self.pos, end)
        self.pos = end

    def peek(self) -> str:
        """The next character that is not whitespace (``""`` at the end), not consumed."""
        skipped = 0
        while True:
            text, pos = self.text, self.pos
            while pos < len(text) and text[pos] in _WHITESPACE:
                pos += 1
            skipped += pos - self.pos
            self._advance(pos)
            if pos < len(text):
                return text[pos]
            if skipped > self.limits.max_skipped_bytes:
                msg = f"more than {self.limits.max_skipped_bytes} bytes of whitespace"
                raise TrainerStateError(msg)
            if not self._fill():
                return ""

    def expect(self, char: str, what: str) -> None:
        """Consume ``char`` (after whitespace), else abandon saying ``what`` was expected."""
        found = self.peek()
        if found != char:
            shown = repr(found) if found else "the end of the file"
            raise TrainerStateError(f"expected {what}, found {shown}", cut=not found)
        self._advance(self.pos + 1)

    def value(self) -> Any:
        """The JSON value at the current position (after whitespace), consumed."""
        if not self.peek():
            raise TrainerStateError("the file ends where a value was expected", cut=True)
        limit = self.limits.max_line_bytes
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    # Stopped by the end of the text (a value cut short), or by bad text.
                    cut = _cut_at(self.text[exc.pos :]) or exc.msg.startswith("Unterminated string")
                    raise TrainerStateError(f"invalid JSON ({exc.msg})", cut=cut) from None
                value, end = None, -1
            except RecursionError:
                raise TrainerStateError("a value nested too deeply") from None
            except ValueError:  # an integer past Python's digits limit: decoded again, once
                value, end = WIDE_DECODER.raw_decode(self.text, self.pos)
            # A number (or a value) that reaches the end of what was read may go on.
            if end != -1 and (end < len(self.text) or self.eof):
                if end - self.pos > limit:
                    raise TrainerStateError(f"a value longer than {limit} characters")
                self._advance(end)
                return value
            held = len(self.text) - self.pos
            if held > limit:
                raise TrainerStateError(f"a value longer than {limit} characters")
            self._fill(held)  # doubling: a long value is parsed O(log n) times, not O(n)


_PARTIAL_NUMBER: Final = re.compile(r"-?[0-9.eE+-]*")
_WORDS: Final = ("true", "false", "null", "NaN", "Infinity", "-Infinity")


def _cut_at(tail: str) -> bool:
    """Whether JSON that failed at ``tail`` stopped because the text ends there: ``tail``
    is blank or the start of a number or a literal (``0.`` of ``0.25``, ``tr`` of ``true``)."""
    tail = tail.rstrip()
    return (
        not tail
        or _PARTIAL_NUMBER.fullmatch(tail) is not None
        or any(word.startswith(tail) for word in _WORDS)
    )


def _history(scanner: _Scanner, source: Source) -> Iterator[Item]:
    """The entries of the ``log_history`` array, one record (or malformed item) each."""
    path = source.path
    scanner.expect("[", 'a list after "log_history"')
    first = True
    while True:
        if scanner.peek() == "]":
            scanner.expect("]", "']'")
            return
        if not first:
            scanner.expect(",", "',' or ']' between log_history entries")
        first = False
        scanner.peek()
        line = scanner.line
        parsed = parse_entry(scanner.value(), path, line)
        source.lines = scanner.line
        if isinstance(parsed, str):
            yield Malformed(path, line, parsed, expected=_EXPECTED)
        else:
            yield parsed


def _document(scanner: _Scanner, source: Source) -> Iterator[Item]:
    scanner.expect("{", "a JSON object (a trainer_state.json)")
    found = False
    first = True
    while scanner.peek() != "}":
        if not first:
            scanner.expect(",", "',' or '}' between the state's fields")
        first = False
        scanner.peek()
        key = scanner.value()
        if not isinstance(key, str):
            raise TrainerStateError("expected a field name (a string)")
        scanner.expect(":", f"':' after {key!r}")
        if key == _HISTORY:
            found = True
            yield from _history(scanner, source)
        else:
            scanner.value()  # the state's bookkeeping (global_step, total_flos, ...): no metric
    scanner.expect("}", "'}'")
    if scanner.peek():
        raise TrainerStateError("text after the end of the JSON document")
    if not found:
        raise TrainerStateError('no "log_history" list: this is not a trainer_state.json')


def read(source: Source, stream: BinaryIO | None, limits: Limits) -> Iterator[Item]:
    """The ``log_history`` entries of one ``trainer_state.json``, in order, in bounded memory.

    A Trainer's output folder is read as its latest state (see :func:`states`): each
    checkpoint's holds the history up to it, so the latest holds the others'.
    """
    if stream is None:
        found = states(source.path)
        if not found:
            msg = f"{source.path} is not a file; the {INGESTER_NAME} format reads {FILE_NAME}"
            raise IsADirectoryError(msg)
        latest = found[-1][1]
        if len(found) > 1:
            yield Note(
                "latest_state",
                f"{source.path} holds {len(found)} {FILE_NAME} files (the state at each "
                f"checkpoint); {latest} was read, the latest, since each holds the log "
                "history of those before it",
                latest,
            )
        with open_input(latest, root=source.path) as state:
            yield from _read(Source(latest), state, limits, source)
        return
    yield from _read(source, stream, limits, source)


def _read(source: Source, stream: BinaryIO, limits: Limits, counted: Source) -> Iterator[Item]:
    scanner = _Scanner(stream, limits)
    try:
        yield from _document(scanner, source)
    except TrainerStateError as exc:
        if exc.cut:
            # Trainer.save_to_json rewrites the file in place: read while it is written, or
            # left by a job killed while writing it, the document stops short.
            message = (
                f"{source.path}: the document ends at line {scanner.line}, inside it ({exc}): "
                "the Trainer is writing it, or was killed while writing it; the log_history "
                "entries before were read"
            )
            yield Note("incomplete_record", message, source.path, scanner.line)
        else:
            why = f"{exc}; pass the {FILE_NAME} a transformers Trainer saved"
            yield Malformed(source.path, scanner.line, why, True, _EXPECTED)
    counted.lines = scanner.line
