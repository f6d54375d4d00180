"""live-check over many workers' logs: several files or globs, merged, judged per worker.

A run with many workers leaves one JSONL file per worker (``run-rank3.jsonl``,
see ``metric_catalog.loggers.JsonlLogger``), or lines carrying a ``"worker"``
field. :func:`check_paths` reads them all and returns one
:class:`~codegen.live_check.LiveCheckReport`:

- the run as a whole decides what was logged: a row is ``missing`` only when
  no worker logged it, ``undeclared`` keys and inactive owners are counted
  over every worker, and the per-row table sums every worker's values;
- the run has one loop: the first declared loop a line names (``"loop"``), and
  a worker naming another (``loop_conflict``) or an undeclared one
  (``unknown_loop``) is reported at its file and line;
- what a single worker's values show (``non_scalar``, ``non_finite``,
  ``counter_decrease``, ``malformed``, and ``attribute_budget``: each process's
  tee has its own budget) is judged on that worker's lines alone,
  in its own order, and reported once per worker at that worker's file and
  line: a counter that goes down in worker 3 is worker 3's finding, and two
  workers' counters are never compared with each other.

Memory stays constant in the length of the logs: files are streamed one line
at a time, one after another, and the state kept is bounded by the catalog per
worker (plus the caps of :mod:`codegen.live_check`). The judgement itself is
:mod:`codegen.live_check`'s; this module only routes lines to it.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import BinaryIO, Final

from .diagnostics import Position
from .live_check import (
    MAX_LINE_BYTES,
    Finding,
    LiveCheckReport,
    _Checker,
    _parse,
    bounded_lines,
)
from .model import Catalog

__all__ = [
    "PER_WORKER_KINDS",
    "LogInputError",
    "check_paths",
    "expand_paths",
]

PER_WORKER_KINDS: Final = frozenset(
    {"non_scalar", "non_finite", "counter_decrease", "malformed", "attribute_budget"}
)
"""Finding kinds judged and reported per worker; every other kind is judged over the run.

``attribute_budget`` is per worker because each process's tee has its own budget."""

_WORKER_FIELD: Final = b'"worker"'


class LogInputError(ValueError):
    """A log argument names no readable file (a glob that matches nothing, a folder)."""


def expand_paths(patterns: Sequence[str]) -> list[str]:
    """The files ``patterns`` name: globs expanded (sorted), plain paths kept, duplicates dropped.

    Raises:
        LogInputError: A glob matches no file, or a path is a folder; the
            message names it and says what to pass.
    """
    found: dict[str, None] = {}
    for pattern in patterns:
        if glob.has_magic(pattern):
            matches = sorted(m for m in glob.glob(pattern, recursive=True) if os.path.isfile(m))
            if not matches:
                msg = (
                    f"{pattern!r} matches no file; pass the JSONL files the run's workers "
                    "wrote, e.g. 'logs/run-rank*.jsonl' (quoted, so the shell leaves it alone)"
                )
                raise LogInputError(msg)
            found.update(dict.fromkeys(matches))
        elif os.path.isdir(pattern):
            msg = f"{pattern!r} is a folder; pass its JSONL files, e.g. '{pattern}/*.jsonl'"
            raise LogInputError(msg)
        else:
            found[pattern] = None
    return list(found)


@dataclass(slots=True)
class _Worker:
    """One worker's own checker, and where its lines come from."""

    checker: _Checker
    path: str
    name: str | None  # the "worker" field, when lines carry one


def _worker_field(raw: bytes) -> str | None:
    if _WORKER_FIELD not in raw:
        return None
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    worker = doc.get("worker") if isinstance(doc, dict) else None
    return str(worker) if isinstance(worker, (str, int)) and not isinstance(worker, bool) else None


class _Run:
    """The whole run's checker plus one checker per worker."""

    def __init__(
        self, catalog: Catalog, source: str, *, all_owners: bool, loop: str | None = None
    ) -> None:
        self.catalog = catalog
        self.all_owners = all_owners
        # Presence (the run's loop) is judged over the whole run.
        self.run = _Checker(catalog, source, all_owners=all_owners, loop=loop)
        self.run.locate = lambda global_line: str(self.where(global_line))
        self.workers: dict[tuple[str, str | None], _Worker] = {}
        # Run-wide findings point at a global line number; map it back to (file, line).
        self.offsets: list[tuple[int, str]] = []
        self.lines = 0

    def worker(self, path: str, name: str | None) -> _Worker:
        key = (path, name)
        found = self.workers.get(key)
        if found is None:
            label = path if name is None else f"{path}[worker {name}]"
            found = _Worker(_Checker(self.catalog, label, all_owners=self.all_owners), path, name)
            self.workers[key] = found
        return found

    def read(self, path: str, stream: BinaryIO) -> None:
        self.offsets.append((self.lines, path))
        last = 0
        for line_no, raw in bounded_lines(stream):
            last = line_no
            global_no = self.lines + line_no
            if raw is None:
                why = f"longer than {MAX_LINE_BYTES} bytes"
                self.run.malformed_line(global_no, why)
                self.worker(path, None).checker.malformed_line(line_no, why)
                continue
            if not raw.strip():
                continue
            parsed = _parse(raw)
            if isinstance(parsed, str):
                self.run.malformed_line(global_no, parsed)
                self.worker(path, None).checker.malformed_line(line_no, parsed)
                continue
            self.run.report.records += 1
            self.run.take(global_no, parsed)
            own = self.worker(path, _worker_field(raw)).checker
            own.report.records += 1
            own.take(line_no, parsed)
        self.lines += last

    def where(self, global_line: int) -> Position:
        path, local = self.offsets[0][1], global_line
        for start, name in self.offsets:
            if global_line > start:
                path, local = name, global_line - start
        return Position(path, local, 1)

    def worker_count(self) -> int:
        """Workers seen; a file's unnamed lines count only when no line of it names one."""
        named_files = {path for path, name in self.workers if name is not None}
        return sum(1 for path, name in self.workers if name is not None or path not in named_files)

    def finish(self, source: str) -> LiveCheckReport:
        self.run.report.lines = self.lines
        report = self.run.finish()
        report.source = source
        findings: list[Finding] = []
        unreported = 0
        for finding in report.findings:
            if finding.kind in PER_WORKER_KINDS:
                continue
            if finding.line and finding.position is None:
                finding.position = self.where(finding.line)
                finding.line = finding.position.line
            findings.append(finding)
        for worker in self.workers.values():
            own = worker.checker.finish()
            for finding in own.findings:
                if finding.kind not in PER_WORKER_KINDS:
                    continue
                if finding.position is None:
                    path = worker.path if worker.name is None else own.source
                    finding.position = Position(path, finding.line, 1) if finding.line else None
                findings.append(finding)
            unreported += own.malformed_unreported
        report.malformed_unreported = unreported
        report.findings = sorted(
            findings,
            key=lambda f: (str(f.position or ""), f.line, f.kind, f.prefix, f.key),
        )
        return report


def _source(paths: Sequence[str], workers: int) -> str:
    if len(paths) == 1:
        return paths[0] if workers <= 1 else f"{paths[0]} ({workers} workers)"
    shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
    return f"{len(paths)} files, {workers} worker(s): {shown}"


def check_paths(
    paths: Iterable[str],
    catalog: Catalog,
    *,
    all_owners: bool = False,
    loop: str | None = None,
) -> LiveCheckReport:
    """Check the JSONL logs at ``paths`` (already expanded) together, per worker.

    ``loop`` judges the run as that declared loop (see :func:`codegen.live_check.check_stream`).

    A worker is a file, or within a file a ``"worker"`` field value. See the
    module docstring for what is judged per worker and what over the run.

    Raises:
        OSError: A file cannot be read; ``filename`` names it.
    """
    ordered = list(paths)
    run = _Run(catalog, _source(ordered, len(ordered)), all_owners=all_owners, loop=loop)
    for path in ordered:
        with open(path, "rb") as stream:
            run.read(path, stream)
    return run.finish(_source(ordered, run.worker_count()))
