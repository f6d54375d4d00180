"""Report renderings: ``text`` for people, ``json`` for dashboards and CI."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..diagnostics import Severity
from .findings import FINDING_KINDS
from .statistics import PRESENCE_STATES

if TYPE_CHECKING:
    from .report import LiveCheckReport

__all__ = ["render_json", "render_text"]


def render_json(report: LiveCheckReport, fail_on: Iterable[str] = ()) -> str:
    """The report as indented JSON with sorted keys.

    ``findings`` holds one object per finding (kind, key, count, first line
    and step, the attribute of an attribute finding, severity, source);
    ``notes`` says what the caps left uncounted by key.
    """
    wanted = sorted(set(fail_on))
    failed = report.failed(wanted)
    findings = []
    for f in sorted(report.findings, key=report.where):
        severity = Severity.ERROR if f.kind in wanted else Severity.WARNING
        shown = f.to_json(report.hints)
        findings.append(shown | {"severity": severity.value, "source": str(report.where(f))})
    notes = [note for _, note in report.cap_notes()]
    doc = {
        "source": report.source,
        "lines": report.lines,
        "records": report.records,
        "rows": [r.to_json() for r in report.rows],
        "findings": findings,
        "inactive_owners": dict(sorted(report.inactive_owners.items())),
        "loop": report.loop.to_json(),
        "last_step": report.last_step,
        "information": [n.to_json() for n in report.notices],
        "presence": {
            state: sum(r.presence == state for r in report.rows) for state in PRESENCE_STATES
        },
        "notes": notes,
        "counts": {k: report.count(k) for k in FINDING_KINDS},
        "fail_on": wanted,
        "failed": failed,
        "ok": not failed,
    }
    return json.dumps(doc, indent=2, sort_keys=True)


def render_text(report: LiveCheckReport, fail_on: Iterable[str] = ()) -> str:
    """A summary table per teed row, then the findings, then the verdict."""
    wanted = set(fail_on)
    header = ("series", "logged as", "kind", "logged", "non-finite", "last value")
    table = [header]
    for r in report.rows:
        last = "-" if r.last_value is None else f"{r.last_value:.6g}"
        table.append(
            (
                r.row.name,
                r.row.qualified_logger_key,
                r.row.kind,
                str(r.logged),
                str(r.non_finite),
                last,
            )
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [
        f"live-check {report.source}: {report.lines} line(s), {report.records} record(s), "
        f"{len(report.rows)} teed row(s) declared",
        f"loop: {report.loop.describe()}",
    ]
    for i, cells in enumerate(table):
        text = "  ".join(
            c.rjust(w) if 3 <= n < 5 else c.ljust(w)
            for n, (c, w) in enumerate(zip(cells, widths, strict=True))
        )
        lines.append(text.rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    diagnostics = report.diagnostics(wanted)
    lines.extend(d.format() for d in diagnostics)
    lines.extend(f"info[{n.kind.upper()}]: {n.message}" for n in report.notices)
    not_emitted = sum(r.presence == "not_emitted" for r in report.rows)
    undecided = sum(r.presence == "undecided" for r in report.rows)
    if not_emitted or undecided:
        by = f"loop {report.loop.name}" if report.loop.name else "any loop the run may be"
        lines.append(
            f"not judged: {not_emitted} row(s) not emitted by {by}, {undecided} row(s) "
            "emitted by only some of the loops the run may be"
        )
    if report.inactive_owners:
        owners = ", ".join(f"{o} ({n} row(s))" for o, n in sorted(report.inactive_owners.items()))
        lines.append(
            f"inactive owners (logged none of their rows; not imported in this run?): {owners}"
        )
    counts = ", ".join(f"{k} {report.count(k)}" for k in FINDING_KINDS)
    lines.append(f"findings: {counts}")
    failed = report.failed(wanted)
    if failed:
        lines.append(f"FAILED: --fail-on {','.join(failed)}")
    return "\n".join(lines)
