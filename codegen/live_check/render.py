"""Report renderings: ``text`` for people, ``json`` for dashboards and CI.

SARIF and GitHub workflow commands are in :mod:`.render_ci`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from ..catalog.diagnostics import Position, Severity
from ..runs.records import RunInfo
from ..safe_text import printable
from .findings import FINDING_KINDS
from .statistics import PRESENCE_STATES, RowSummary

if TYPE_CHECKING:
    from .report import LiveCheckReport

__all__ = ["render_json", "render_text"]

_NOT_JUDGED: Final = frozenset({"not_emitted", "undecided", "inactive_owner", "not_applicable"})
_RUNS_SHOWN: Final = 10
"""Runs of a store the text report names one by one (the JSON report lists every one)."""


def _run_text(run: RunInfo) -> str:
    named = f"{run.name!r} " if run.name else ""
    where = f" in experiment {run.experiment!r}" if run.experiment else ""
    return f"{named}({run.run_id}){where}"


def render_json(report: LiveCheckReport, fail_on: Iterable[str] = ()) -> str:
    """The report as indented JSON with sorted keys.

    ``summary`` holds the verdict and the numbers; ``findings`` one object per
    finding (kind, key, count, first line and step, last line and source, the
    attribute of an attribute finding, severity, source), at most
    ``MAX_REPORTED_FINDINGS`` of them (``findings_unlisted`` counts the rest);
    ``notes`` says what the caps left uncounted by key; ``coverage`` which
    applicable rows and enum values were seen; ``inputs`` each input read
    (path, format, lines, and the runs of an MLflow store: id, name,
    experiment); ``key_rewrites`` the ``--key-rewrite`` rules and how many
    distinct keys and values they changed, and ``key_prefix_rewrites`` the
    ``--key-prefix-rewrite`` rules. ``ok`` is false when a
    ``fail_on`` kind occurred, nothing was seen (``saw_nothing``) or coverage
    is below ``--min-coverage``.
    """
    wanted = sorted(set(fail_on))
    failed = report.failed(wanted)
    findings = []
    listed = report.listed_findings()
    for f in listed:
        severity = Severity.ERROR if f.kind in wanted else Severity.WARNING
        last = Position(f.last_path or report.source, f.last_line, 1) if f.last_line else None
        findings.append(
            f.to_json(report.hints)
            | {
                "severity": severity.value,
                "source": str(report.where(f)),
                "last_line": f.last_line or None,
                "last_source": str(last or report.where(f)),
            }
        )
    notes = [note for _, note in report.cap_notes()]
    doc = {
        "summary": report.summary(wanted),
        "source": report.source,
        "lines": report.lines,
        "records": report.records,
        "rows": [r.to_json() for r in report.rows],
        "findings": findings,
        "findings_unlisted": len(report.findings) - len(listed),
        "inactive_owners": dict(sorted(report.inactive_owners.items())),
        "loop": report.loop.to_json(),
        "job_loops": [loop.to_json() for loop in report.job_loops],
        "last_step": report.last_step,
        "information": [n.to_json() for n in report.notices],
        "presence": {
            state: sum(r.presence == state for r in report.rows) for state in PRESENCE_STATES
        },
        "notes": notes,
        "counts": {k: report.count(k) for k in FINDING_KINDS},
        "coverage": report.coverage.to_json(),
        "saw_nothing": report.saw_nothing(),
        "abandoned": list(report.abandoned),
        "skipped_inputs": list(report.skipped_inputs),
        "inputs": report.inputs_json(),
        "run_selection": report.selection_json(),
        "key_rewrites": report.rewrites_json(),
        "key_prefix_rewrites": [
            {"from": old, "to": new} for old, new in report.key_prefix_rewrites
        ],
        "fail_on": wanted,
        "failed": failed,
        "ok": report.ok(wanted),
    }
    return json.dumps(doc, indent=2, sort_keys=True)


def render_text(
    report: LiveCheckReport, fail_on: Iterable[str] = (), *, show_all: bool = False
) -> str:
    """The summary, a table of the judged rows, the findings, then the verdict.

    Rows the run was not judged on (not emitted by its loop, undecided, of an
    inactive owner) are left out of the table unless ``show_all``.
    """
    wanted = set(fail_on)
    shown = [r for r in report.rows if show_all or r.presence not in _NOT_JUDGED]
    lines = _summary_lines(report, wanted)
    lines.extend(_table_lines(shown))
    hidden = len(report.rows) - len(shown)
    if hidden:
        lines.append(f"({hidden} row(s) the run was not judged on are hidden; --all shows them)")
    reasons = report.verdict_reasons(wanted)
    lines.extend(f"error: {reason}" for reason, _ in reasons)
    diagnostics = report.diagnostics(wanted, listed=True)
    lines.extend(d.format() for d in diagnostics)
    unlisted = report.unlisted_note()
    if unlisted is not None:
        lines.append(f"note: {unlisted}")
    lines.extend(f"info[{n.kind.upper()}]: {n.message}" for n in report.notices)
    lines.extend(_not_judged_lines(report))
    counts = ", ".join(f"{k} {report.count(k)}" for k in FINDING_KINDS)
    lines.append(f"findings: {counts}")
    failed = report.failed(wanted)
    if failed:
        lines.append(f"FAILED: --fail-on {','.join(failed)}")
    elif reasons:
        lines.append("FAILED: " + "; ".join(rule for _, rule in reasons))
    # Keys, series and loop names come from the log or the network: one safe line each.
    return "\n".join(printable(line) for line in lines)


def _summary_lines(report: LiveCheckReport, wanted: set[str]) -> list[str]:
    """What was read, the loop(s), the summary, the runs and the key rewrites in force."""
    lines = [
        f"live-check {report.source}: {report.lines} line(s), {report.records} record(s), "
        f"{len(report.rows)} teed row(s) declared",
        (
            "loops (a job of several): " + "; ".join(loop.describe() for loop in report.job_loops)
            if report.job_loops
            else f"loop: {report.loop.describe()}"
        ),
        f"summary: {report.summary_text(wanted)}",
    ]
    runs = [run for source in report.inputs for run in source.runs]
    if runs:
        named = [_run_text(run) for run in runs[:_RUNS_SHOWN]]
        more = f", and {len(runs) - _RUNS_SHOWN} more" if len(runs) > _RUNS_SHOWN else ""
        lines.append(f"runs ({len(runs)}, each an input): {', '.join(named)}{more}")
    if report.key_prefix_rewrites:
        rules = ", ".join(f"{old!r} -> {new!r}" for old, new in report.key_prefix_rewrites)
        lines.append(f"key prefix rewrites (at a key's start): {rules}")
    if report.key_rewrites:
        rules = ", ".join(f"{old!r} -> {new!r}" for old, new in report.key_rewrites)
        lines.append(
            f"key rewrites: {rules}: {report.rewritten_keys} distinct key(s), "
            f"{report.rewritten_values} value(s) rewritten"
        )
    return lines


def _table_lines(shown: list[RowSummary]) -> list[str]:
    """The judged rows as a table: a header, a rule, one line per row (counts right-aligned)."""
    header = ("series", "logged as", "kind", "logged", "non-finite", "last value")
    table = [header]
    for r in shown:
        last = "-" if r.last_value is None else f"{r.last_value:.6g}"
        row = r.row
        logged, non_finite = str(r.logged), str(r.non_finite)
        table.append((row.name, row.qualified_logger_key, row.kind, logged, non_finite, last))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = []
    for i, cells in enumerate(table):
        text = "  ".join(
            c.rjust(w) if 3 <= n < 5 else c.ljust(w)
            for n, (c, w) in enumerate(zip(cells, widths, strict=True))
        )
        lines.append(text.rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _not_judged_lines(report: LiveCheckReport) -> list[str]:
    """How many rows the run's loop(s) do not emit or may not emit, and inactive owners."""
    lines = []
    not_emitted = sum(r.presence == "not_emitted" for r in report.rows)
    undecided = sum(r.presence == "undecided" for r in report.rows)
    if not_emitted or undecided:
        if report.job_loops:
            by = "any of the job's loops (" + ", ".join(j.name for j in report.job_loops) + ")"
        elif report.loop.name:
            by = f"loop {report.loop.name}"
        else:
            by = "any loop the run may be"
        lines.append(
            f"not judged: {not_emitted} row(s) not emitted by {by}, {undecided} row(s) "
            "emitted by only some of the loops the run may be"
        )
    if report.inactive_owners:
        owners = ", ".join(f"{o} ({n} row(s))" for o, n in sorted(report.inactive_owners.items()))
        lines.append(
            f"inactive owners (logged none of their rows; not imported in this run?): {owners}"
        )
    return lines
