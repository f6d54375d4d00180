"""A content-keyed cache of ``scan``'s work: a re-run over unchanged code parses nothing.

It lives in ``scan/`` under the project's ``cache-dir`` (``[tool.metric-catalog]``, by
default ``.cache/metric-catalog``, the folder of ``generate``'s no-op manifest);
``metric-catalog scan --no-cache`` bypasses it. Two kinds of entry:

* ``files.json``, facts of one file's bytes, by their digest: the ``SCAN_SYNTAX`` finding
  when they do not parse (or that they do), and the lines calling a scanned call, per set
  of scanned calls. A scan after an edit reuses them for every file the edit left alone.
* ``tree-<slot>.json``, the whole report of one scan (its findings, counts and candidate
  calls), one per way scan was asked (paths, calls, catalog, configuration; the *slot*),
  valid while its key matches: the digest of every file read and its path, what the read
  refused, the slot, and :func:`code_stamp`. Scan's later phases are whole-tree (wrappers
  found in waves over other files, the catalog's judgement), so they are kept as one result
  and redone whole when any input changed.

Every entry is read as hostile input, through :mod:`codegen.safe_fs` (a regular file, size
capped): an entry that is missing, corrupt, truncated, of another format or of other code,
or whose fields have the wrong types, is ignored and the work is done again. The key holds
everything the result depends on, so a cache entry cannot change a result that a scan of
the same inputs would give (a writable cache folder is trusted as much as the tree itself:
an entry forged with the right key is believed). Writes replace a file atomically
(:func:`codegen.safe_fs.write_atomic`); a folder that cannot be written (read-only, full,
a file in its way) leaves scan without a cache, with one note (:attr:`ScanCache.note`).
Sizes are bounded: at most :data:`MAX_FILE_FACTS` file facts (this run's first) and
:data:`MAX_TREES` reports, the oldest removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Final, Literal

import metric_catalog

from ..catalog.diagnostics import Diagnostic, Position, Severity
from ..safe_fs import read_regular, write_atomic
from .candidates import Candidate

__all__ = [
    "FOLDER",
    "FORMAT",
    "MAX_FILE_FACTS",
    "MAX_TREES",
    "CachedReport",
    "ScanCache",
    "code_stamp",
    "digest",
]

FORMAT: Final = 1
"""The layout of the entries; an entry of another format is ignored."""

FOLDER: Final = "scan"
"""The cache's folder under the project's ``cache-dir``."""

MAX_FILE_FACTS: Final = 200_000
"""Most file facts kept: this run's first, then earlier runs' (a few tens of bytes each)."""

MAX_TREES: Final = 16
"""Most whole-scan reports kept (one per slot); the least recently written go first."""

_MAX_FACTS_BYTES: Final = 64 * 1024 * 1024
_MAX_TREE_BYTES: Final = 256 * 1024 * 1024
_FACTS: Final = "files.json"
_TREE: Final = re.compile(r"tree-[0-9a-f]{32}\.json\Z")
_DIGEST: Final = re.compile(r"[0-9a-f]{32}(?::[0-9a-f]{32})?\Z")


def digest(data: bytes | str) -> str:
    """A 128-bit hex digest of ``data`` (a file's bytes, or a key's text as UTF-8)."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


_stamp: str | None = None


def code_stamp() -> str:
    """What identifies the code that computes a scan: the Python version (its parser), the
    cache format, and every module of the generator and the runtime package by path, size and
    modification time (an edit or an upgrade is another stamp). Computed once per process."""
    global _stamp  # noqa: PLW0603 - one stamp per process: the code does not change under it
    if _stamp is None:
        parts = [f"{FORMAT}", sys.version, sys.implementation.cache_tag or ""]
        parts += _stamps(Path(__file__).resolve().parents[1], recurse=True)  # codegen/
        parts += _stamps(_runtime_folder(), recurse=False)  # not its generated package
        _stamp = digest("\n".join(parts))
    return _stamp


def _runtime_folder() -> Path:
    """The runtime package's folder (``metric_catalog``), whose rules scan applies."""
    return Path(metric_catalog.__file__ or __file__).resolve().parent


def _stamps(top: Path, *, recurse: bool) -> list[str]:
    """``path:size:mtime`` of every ``*.py`` under ``top`` (its subfolders too if ``recurse``)."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(top), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                if recurse and entry.name != "__pycache__" and not entry.name.startswith("."):
                    found += _stamps(Path(entry.path), recurse=True)
            elif entry.name.endswith(".py"):
                with contextlib.suppress(OSError):
                    info = entry.stat()
                    found.append(f"{entry.path}:{info.st_size}:{info.st_mtime_ns}")
    return found


@dataclass(frozen=True, slots=True)
class CachedReport:
    """A whole scan's result, as :class:`~codegen.scan.scanner.ScanReport` holds it."""

    diagnostics: tuple[Diagnostic, ...]
    files: int
    calls: int
    keys: int
    candidates: tuple[Candidate, ...]


_Finding = tuple[int, int, str]
"""A ``SCAN_SYNTAX`` finding of a file's bytes: line, column, message."""


@dataclass(slots=True)
class ScanCache:
    """The scan cache in ``folder`` (``<cache-dir>/scan``).

    ``context`` is what decides a report besides the files and the scan's own settings: the
    catalog and the configuration (the command line gives a digest of the catalog's files
    and of ``[tool.metric-catalog]``). Reads never raise; writes never raise and set
    :attr:`note` when the folder cannot be written.
    """

    folder: Path
    context: str = ""
    note: str | None = None
    """Why the cache could not be written this run, once (``None`` when it could)."""
    _parse: dict[str, _Finding | None] = field(default_factory=dict)
    _lines: dict[str, tuple[int, ...]] = field(default_factory=dict)
    _old: dict[str, object] | None = None
    _dirty: bool = False
    _tree: tuple[Path, str] | None = None
    """This run's report file (its slot) and key, once :meth:`report` is asked."""

    def report(
        self,
        settings: Sequence[str],
        files: Iterable[tuple[str, str, str]],
        refused: Sequence[str],
    ) -> CachedReport | None:
        """The report of a scan of the same inputs, or ``None`` (absent, stale, corrupt).

        ``settings``: the scan's own (paths, calls, working folder...), which with
        :attr:`context` make its slot; ``files``: every file read, ``(path shown, real path,
        digest of its bytes)`` in walk order; ``refused``: the read's findings, as text.
        Remembers the slot and key for :meth:`store`.
        """
        slot = digest("\n".join([self.context, *settings]))
        lines = [f"{FORMAT}", code_stamp(), slot]
        lines += ("\0".join(entry) for entry in files)
        lines.append("refused")
        lines += refused
        key = digest("\n".join(lines))
        path = self.folder / f"tree-{slot}.json"
        self._tree = (path, key)
        doc = _load(path, _MAX_TREE_BYTES)
        if doc is None or doc.get("format") != FORMAT or doc.get("key") != key:
            return None
        return _report_from(doc.get("report"))

    def store(self, report: CachedReport) -> None:
        """Keep ``report`` as the result of the inputs :meth:`report` was last asked about,
        and write the file facts learnt (see :meth:`save`)."""
        if self._tree is not None:
            path, key = self._tree
            doc = {"format": FORMAT, "key": key, "report": _report_json(report)}
            if self._write(path, doc):
                self._prune()
        self.save()

    def parse_finding(self, file_digest: str) -> _Finding | Literal[False] | None:
        """The ``SCAN_SYNTAX`` finding of the bytes ``file_digest`` names: ``None`` when they
        parse, ``False`` when not known."""
        if file_digest in self._parse:
            return self._parse[file_digest]
        value = self._facts().get(f"p{file_digest}", False)
        if value is None:
            found: _Finding | None = None
        elif (
            isinstance(value, list)
            and len(value) == 3  # line, column, message
            and all(type(v) is int and v > 0 for v in value[:2])
            and isinstance(value[2], str)
        ):
            found = (value[0], value[1], value[2])
        else:
            return False
        self._parse[file_digest] = found
        return found

    def remember_parse(self, file_digest: str, finding: _Finding | None) -> None:
        """Remember whether the bytes ``file_digest`` names parse (else their finding)."""
        self._parse[file_digest] = finding
        self._dirty = True

    def lines(self, file_digest: str, calls: str) -> tuple[int, ...] | None:
        """The lines calling a scanned call in the bytes ``file_digest`` names, for the
        calls ``calls`` digests; ``None`` when not known."""
        name = f"l{file_digest}:{calls}"
        found = self._lines.get(name)
        if found is not None:
            return found
        value = self._facts().get(name)
        if not isinstance(value, list) or not all(type(v) is int and v > 0 for v in value):
            return None
        if any(a >= b for a, b in pairwise(value)):
            return None  # the scanner's lines are sorted and distinct
        found = self._lines[name] = tuple(value)
        return found

    def remember_lines(self, file_digest: str, calls: str, lines: Sequence[int]) -> None:
        """Remember the lines calling a scanned call in the bytes ``file_digest`` names."""
        name = f"l{file_digest}:{calls}"
        self._lines[name] = tuple(lines)
        self._dirty = True

    def save(self) -> None:
        """Write the file facts learnt this run, if any, with earlier ones up to the cap."""
        if not self._dirty:
            return
        facts: dict[str, object] = {}
        for name, finding in self._parse.items():
            facts[f"p{name}"] = None if finding is None else list(finding)
        for name, lines in self._lines.items():
            facts[name] = list(lines)
        for name, value in self._facts().items():
            if len(facts) >= MAX_FILE_FACTS:
                break
            facts.setdefault(name, value)
        doc = {"format": FORMAT, "code": code_stamp(), "facts": facts}
        if self._write(self.folder / _FACTS, doc):
            self._dirty = False

    def _facts(self) -> dict[str, object]:
        """The stored file facts of this code (read once; empty when unusable)."""
        if self._old is None:
            doc = _load(self.folder / _FACTS, _MAX_FACTS_BYTES)
            facts = None if doc is None or doc.get("code") != code_stamp() else doc.get("facts")
            ok = isinstance(facts, dict) and doc is not None and doc.get("format") == FORMAT
            self._old = (
                {k: v for k, v in facts.items() if _DIGEST.match(k[1:])}
                if ok and isinstance(facts, dict)
                else {}
            )
        return self._old

    def _write(self, path: Path, doc: dict[str, object]) -> bool:
        """Write ``doc`` as JSON to ``path`` atomically; ``False`` (and :attr:`note`) when the
        folder cannot be written: a cache never fails a scan."""
        if self.note is not None:
            return False
        try:
            write_atomic(path, json.dumps(doc, separators=(",", ":")))
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.note = (
                f"note: the scan cache in {self.folder} cannot be written ({reason}); this "
                "run and the next scan without it (make the folder writable, set cache-dir "
                "in [tool.metric-catalog], or pass --no-cache)"
            )
            return False
        return True

    def _prune(self) -> None:
        """Remove the least recently written reports past :data:`MAX_TREES`."""
        try:
            entries = [e for e in os.scandir(self.folder) if _TREE.match(e.name)]
            dated = sorted(
                ((e.stat(follow_symlinks=False).st_mtime_ns, e.path) for e in entries),
                reverse=True,
            )
        except OSError:
            return
        for _mtime, path in dated[MAX_TREES:]:
            with contextlib.suppress(OSError):
                os.unlink(path)  # a link is removed, never followed


def _load(path: Path, limit: int) -> dict[str, object] | None:
    """A JSON object read from the regular file ``path`` (at most ``limit`` bytes), or ``None``."""
    try:
        doc = json.loads(read_regular(path, limit))
    except (OSError, ValueError, RecursionError, MemoryError):
        return None
    return doc if isinstance(doc, dict) else None


def _report_json(report: CachedReport) -> dict[str, object]:
    return {
        "files": report.files,
        "calls": report.calls,
        "keys": report.keys,
        "diagnostics": [_diagnostic_json(d) for d in report.diagnostics],
        "candidates": [[c.call, c.position, c.keys, c.where] for c in report.candidates],
    }


def _diagnostic_json(found: Diagnostic) -> list[object]:
    at = found.position
    where: list[object] = [None, 0, 0] if at is None else [at.path, at.line, at.column]
    return [found.code, found.severity.value, found.message, *where]


_COUNTS: Final = ("files", "calls", "keys")
_DIAGNOSTIC_FIELDS: Final = 6
_CANDIDATE_FIELDS: Final = 4


def _count(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _report_from(doc: object) -> CachedReport | None:
    """A stored report, or ``None`` when any field is missing or of the wrong type."""
    if not isinstance(doc, dict):
        return None
    counts = [_count(doc.get(name)) for name in _COUNTS]
    rows, picks = doc.get("diagnostics"), doc.get("candidates")
    if not isinstance(rows, list) or not isinstance(picks, list):
        return None
    diagnostics = [_diagnostic_from(row) for row in rows]
    candidates = [_candidate_from(row) for row in picks]
    files, calls, keys = counts
    if files is None or calls is None or keys is None:
        return None
    kept = [d for d in diagnostics if d is not None]
    chosen = [c for c in candidates if c is not None]
    if len(kept) != len(diagnostics) or len(chosen) != len(candidates):
        return None
    return CachedReport(tuple(kept), files, calls, keys, tuple(chosen))


def _diagnostic_from(row: object) -> Diagnostic | None:
    if not isinstance(row, list) or len(row) != _DIAGNOSTIC_FIELDS:
        return None
    code, severity, message, path, line, column = row
    if not (isinstance(code, str) and isinstance(message, str)):
        return None
    if severity not in {s.value for s in Severity}:
        return None
    if _count(line) is None or _count(column) is None:
        return None
    if path is None:
        position = None
    elif isinstance(path, str):
        position = Position(path, line, column)
    else:
        return None
    return Diagnostic(code, Severity(severity), message, position)


def _candidate_from(row: object) -> Candidate | None:
    if not isinstance(row, list) or len(row) != _CANDIDATE_FIELDS:
        return None
    call, position, keys, where = row
    if not (isinstance(call, str) and isinstance(where, str) and _count(keys) is not None):
        return None
    if not (isinstance(position, str) or (type(position) is int and position >= 0)):
        return None
    return Candidate(call, position, keys, where)
