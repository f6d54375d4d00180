"""Findings aggregated per kind and key: a count, the first occurrence and the last.

The run's own findings are kept here; per-worker kinds
(:data:`~codegen.live_check.findings.PER_WORKER_KINDS`) on their
:class:`~codegen.live_check.run_state.Worker`. Capped kinds stop being kept
after :attr:`~codegen.runs.limits.Limits.max_undeclared_keys` distinct keys
(the report counts the rest).
"""

from __future__ import annotations

from typing import Final

from ..catalog.diagnostics import Position
from ..runs.limits import Limits
from ..runs.records import Malformed
from .findings import CAPPED_KINDS, PER_WORKER_KINDS, Finding
from .report import LiveCheckReport
from .run_state import Slot, Worker

__all__ = ["Tally", "Where"]

Where = tuple[str, str, str, int, int]
"""(prefix, key, path, line, step) of one occurrence."""

_ABANDONED: Final = "\x00abandoned"


class Tally:
    """Counts occurrences into findings, bounded by the limits."""

    def __init__(self, report: LiveCheckReport, limits: Limits, *, multi: bool) -> None:
        self.report = report
        self.limits = limits
        self.multi = multi
        self.findings: dict[Slot, Finding] = {}
        """The run's findings (not per worker), by kind, prefix and key."""
        self.undeclared = 0
        """Distinct keys of capped kinds kept so far."""

    def position(self, path: str, line: int) -> Position | None:
        """Where an occurrence is reported: ``None`` means the report's source at ``line``."""
        return Position(path, line, 1) if self.multi or path != self.report.source else None

    def locate(self, path: str, line: int) -> str:
        """How a message names a line of the log (several inputs: ``path:line``)."""
        return str(Position(path, line, 1)) if self.multi else f"line {line}"

    def note(
        self,
        kind: str,
        where: Where,
        series: str | None,
        example: str,
        worker: Worker,
        *,
        detail: str = "",
    ) -> None:
        """Count one occurrence at ``where``, keeping the first and the last.

        Occurrences are aggregated per kind, prefix, key and ``detail`` (an
        attribute name); per-worker kinds per worker.
        """
        prefix, key, path, line, step = where
        slot = (kind, prefix, f"{key}\x00{detail}" if detail else key)
        if kind in PER_WORKER_KINDS:
            findings = worker.findings
            if findings is None:
                findings = worker.findings = {}
            if worker.named:
                path = worker.label
        else:
            findings = self.findings
        existing = findings.get(slot)
        if existing is not None:
            existing.count += 1
            existing.last_line = line
            existing.last_path = path
            return
        if kind in CAPPED_KINDS and not self._room_for(kind):
            return
        findings[slot] = Finding(
            kind,
            prefix,
            key,
            series,
            line,
            step,
            example,
            position=self.position(path, line),
            attribute=detail or None,
            last_line=line,
            last_path=path,
        )

    def _room_for(self, kind: str) -> bool:
        """Whether one more key of a capped kind is kept; if not, the report counts it."""
        if self.undeclared < self.limits.max_undeclared_keys:
            self.undeclared += 1
            return True
        if kind == "undeclared":
            self.report.undeclared_untracked += 1
        else:
            untracked = self.report.untracked
            untracked[kind] = untracked.get(kind, 0) + 1
        return False

    def malformed(self, item: Malformed, worker: Worker) -> None:
        """A line that is not a record (or the reason an input was abandoned)."""
        position = self.position(item.path, item.line)
        findings = worker.findings
        if findings is None:
            findings = worker.findings = {}
        at = item.where or f"line {item.line}"
        if item.fatal:
            message = f"{item.path} was abandoned at {at}: {item.why}"
            self.report.abandoned.append(f"{item.path}: {item.why}")
            findings[("malformed", "", _ABANDONED)] = Finding(
                "malformed", "", "#abandoned", None, item.line, None, message, position=position
            )
            return
        worker.malformed += 1
        if worker.malformed > self.limits.max_malformed_reported:
            worker.unreported += 1
            return
        message = f"{at} is not {item.expected}: {item.why}; it was skipped"
        findings[("malformed", "", str(item.line))] = Finding(
            "malformed", "", f"#{item.line}", None, item.line, None, message, position=position
        )

    def collected(self, workers: list[Worker]) -> list[Finding]:
        """Every finding, the run's and each worker's, in report order."""
        findings = list(self.findings.values())
        for worker in workers:
            if worker.findings:
                findings.extend(worker.findings.values())
            self.report.malformed_unreported += worker.unreported
        if self.multi:
            findings.sort(key=lambda f: (str(f.position or ""), f.line, f.kind, f.prefix, f.key))
        else:
            findings.sort(key=lambda f: (f.line, f.kind, f.prefix, f.key))
        return findings
