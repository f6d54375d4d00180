"""The outcome of a check (:class:`LiveCheckReport`) and its renderings.

The JSON report's fields are a public interface (users pipe it into
dashboards and CI): fields are only ever added.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..catalog.diagnostics import Diagnostic, Position, Severity
from ..runs.limits import Limits
from ..runs.records import Source
from .coverage import Coverage
from .findings import DEFAULT_HINTS, FINDING_KINDS, Finding, Notice
from .judges.loops import JobLoop, LoopChoice
from .render import render_json, render_text
from .render_ci import render_github, render_sarif
from .statistics import RowSummary

__all__ = ["LiveCheckReport"]


@dataclass(slots=True)
class LiveCheckReport:
    """The outcome of checking one log: per-row summaries and aggregated findings."""

    source: str
    lines: int = 0
    records: int = 0
    rows: list[RowSummary] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    undeclared_untracked: int = 0
    """Occurrences of undeclared keys beyond ``MAX_UNDECLARED_KEYS`` distinct pairs."""
    malformed_unreported: int = 0
    """Malformed lines beyond ``MAX_MALFORMED_REPORTED`` (per worker)."""
    untracked: dict[str, int] = field(default_factory=dict)
    """Occurrences of other capped kinds (undeclared series or attributes, attribute
    values) beyond ``MAX_UNDECLARED_KEYS`` distinct findings, by kind."""
    folded_missing: int = 0
    """Required rows never logged whose ``missing`` finding was folded into an ``undeclared``
    key that renames them (one finding per rename): still ``missing`` for ``--fail-on``."""
    inactive_owners: dict[str, int] = field(default_factory=dict)
    """Catalog files none of whose teed rows was logged -> their unjudged row count."""
    loop: LoopChoice = field(default_factory=lambda: LoopChoice(None, "unknown"))
    """The loop the run was judged as."""
    job_loops: tuple[JobLoop, ...] = ()
    """The loops of a job of several (workers running different loops), else empty."""
    last_step: int | None = None
    """The largest step any record carried."""
    notices: list[Notice] = field(default_factory=list)
    """Information that is not a finding (never fails the run)."""
    limits: Limits = field(default_factory=Limits)
    """The caps the check ran with (their values appear in the notes)."""
    abandoned: list[str] = field(default_factory=list)
    """Inputs given up part-way, each ``path: why`` (an endless line, too many overlong lines)."""
    skipped_inputs: list[str] = field(default_factory=list)
    """Inputs not read because an earlier input was the same file (by real path)."""
    hints: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_HINTS))
    """Where the fixes point: the catalog's folder and files, the file declaring loops."""
    coverage: Coverage = field(default_factory=Coverage)
    """Which applicable rows, and which enum values, the run showed."""
    inputs: list[Source] = field(default_factory=list)
    """The inputs read, in order: each one's path, format, lines and (a store) runs."""
    key_rewrites: tuple[tuple[str, str], ...] = ()
    """The ``(from, to)`` substring rewrites applied to every logged key before matching."""
    key_prefix_rewrites: tuple[tuple[str, str], ...] = ()
    """``--key-prefix-rewrite`` rules (applied to each key's start, before ``key_rewrites``)."""
    rewritten_keys: int = 0
    """Distinct logged keys a rewrite changed and that were judged as rewritten."""
    rewritten_values: int = 0
    """Values logged under such keys."""
    selected_runs: tuple[str, ...] = ()
    """``--run``: the runs of store and folder inputs that were read (empty: all)."""

    def selection_json(self) -> dict[str, object]:
        """``--run`` as the JSON report shows it: the names given and the runs left out."""
        left = [run.to_json() for source in self.inputs for run in source.unselected]
        return {"runs": list(self.selected_runs), "left_out": left}

    def inputs_json(self) -> list[dict[str, object]]:
        """The inputs as the JSON report lists them."""
        return [
            {
                "path": source.path,
                "format": source.format,
                "lines": source.lines,
                "runs": [run.to_json() for run in source.runs],
            }
            for source in self.inputs
        ]

    def rewrites_json(self) -> dict[str, object]:
        """The key rewrites and what they changed, for the JSON report."""
        return {
            "rules": [{"from": old, "to": new} for old, new in self.key_rewrites],
            "keys": self.rewritten_keys,
            "values": self.rewritten_values,
        }

    def saw_nothing(self) -> str | None:
        """Why the input held no record at all, or ``None`` when it held one.

        A log whose records are all undeclared did show something: its keys are
        ``undeclared`` findings and its coverage is 0 (``--min-coverage`` gates it).
        """
        if self.records:
            return None
        if self.abandoned:
            return f"nothing was seen: {self.abandoned[0]}"
        if not self.lines:
            return "nothing was seen: the input is empty; pass the log the run wrote"
        return f"nothing was seen: none of the input's {self.lines} line(s) is a record"

    def nothing_judged(self) -> str | None:
        """Why records were read but no row could be judged, or ``None`` when one was.

        A gate over such an input judged nothing: its coverage is not 100%, and under
        ``--fail-on`` it fails (:meth:`verdict_reasons`), naming what would let rows be
        judged.
        """
        if not self.records or self.coverage.applicable:
            return None
        undecided = any(summary.presence == "undecided" for summary in self.rows)
        if (self.loop.name is None and undecided) or self.count("ambiguous_key"):
            fix = (
                "the input's loop could not be decided; name it (--loop NAME, "
                "JsonlLogger(loop=...), METRIC_CATALOG_LOOP, or tee_flat(..., loop=...)) or "
                "log a signature key of its loop"
            )
        elif not any(summary.logged for summary in self.rows):
            fix = (
                "no declared row was logged (only bookkeeping or undeclared keys); check the "
                "input is the run's metrics log and its step key is declared"
            )
        else:
            fix = "every row the input showed is outside the run's loop or condition"
        return f"no row was judged in {self.records} record(s): {fix}"

    def verdict_reasons(self, fail_on: Iterable[str] = ()) -> list[tuple[str, str]]:
        """``(reason, rule)`` of what fails the run: saw nothing, low coverage in every mode;
        under ``fail_on`` (a gate), an input in which no row could be judged."""
        reasons = []
        nothing = self.saw_nothing()
        if nothing is not None:
            reasons.append((nothing, "saw_nothing"))
        unjudged = self.nothing_judged() if set(fail_on) else None
        if unjudged is not None:
            reasons.append((unjudged, "nothing_judged"))
        cover = self.coverage
        if cover.minimum is not None and cover.below_minimum:
            reasons.append(
                (
                    f"coverage {cover.overall:.1%} ({cover.seen} of {cover.applicable} "
                    f"applicable rows logged) is below --min-coverage {cover.minimum:.1%}",
                    "min_coverage",
                )
            )
        return reasons

    def ok(self, fail_on: Iterable[str] = ()) -> bool:
        """Whether the run passes: no ``fail_on`` kind occurred and no verdict reason."""
        wanted = set(fail_on)
        return not self.failed(wanted) and not self.verdict_reasons(wanted)

    def listed_findings(self) -> list[Finding]:
        """The findings a rendered report lists, by position, at most the cap of them."""
        ordered = sorted(self.findings, key=self.where)
        return ordered[: self.limits.max_reported_findings]

    def unlisted_note(self) -> str | None:
        """What the rendered findings leave out, or ``None`` when they list every one."""
        left = len(self.findings) - min(len(self.findings), self.limits.max_reported_findings)
        if not left:
            return None
        return (
            f"{left} more finding(s) were counted, not listed (the report lists the first "
            f"{self.limits.max_reported_findings} by position; counts has them all)"
        )

    def summary(self, fail_on: Iterable[str] = ()) -> dict[str, object]:
        """The verdict and the numbers, for the top of every report."""
        wanted = sorted(set(fail_on))
        listed = min(len(self.findings), self.limits.max_reported_findings)
        return {
            "ok": self.ok(wanted),
            "failed": self.failed(wanted),
            "reasons": [reason for reason, _ in self.verdict_reasons(wanted)],
            "records": self.records,
            "coverage": self.coverage.overall,
            "findings": sum(self.count(k) for k in FINDING_KINDS),
            "distinct_findings": len(self.findings),
            "listed_findings": listed,
            "kinds": {k: self.count(k) for k in FINDING_KINDS if self.count(k)},
        }

    def summary_text(self, fail_on: Iterable[str] = ()) -> str:
        """The summary as one line."""
        doc = self.summary(fail_on)
        cover = self.coverage
        kinds = doc["kinds"]
        shown = ", ".join(f"{k} {n}" for k, n in kinds.items()) if isinstance(kinds, dict) else ""
        verdict = "ok" if doc["ok"] else "failed"
        judged = (
            f"coverage {cover.overall:.1%} ({cover.seen} of {cover.applicable} applicable rows "
            "logged)"
            if cover.applicable or not self.records
            else "coverage: 0 rows judged"
        )
        return (
            f"{verdict}: {self.records} record(s); {judged}; "
            f"{doc['distinct_findings']} distinct finding(s){': ' + shown if shown else ''}"
        )

    def kinds(self) -> set[str]:
        """The finding kinds that occurred."""
        found = {f.kind for f in self.findings}
        if self.undeclared_untracked:
            found.add("undeclared")
        if self.malformed_unreported:
            found.add("malformed")
        if self.folded_missing:
            found.add("missing")
        found.update(kind for kind, count in self.untracked.items() if count)
        return found

    def failed(self, fail_on: Iterable[str]) -> list[str]:
        """The kinds in ``fail_on`` that occurred, in :data:`FINDING_KINDS` order."""
        wanted, found = set(fail_on), self.kinds()
        return [k for k in FINDING_KINDS if k in wanted and k in found]

    def diagnostics(self, fail_on: Iterable[str] = (), *, listed: bool = False) -> list[Diagnostic]:
        """Findings as diagnostics: errors for kinds in ``fail_on``, warnings otherwise.

        ``listed`` keeps only the findings a rendered report lists (the first
        ``max_reported_findings`` by position); :meth:`unlisted_note` counts the rest.
        """
        wanted = set(fail_on)
        out = []
        chosen = self.listed_findings() if listed else self.findings
        for f in chosen:
            severity = Severity.ERROR if f.kind in wanted else Severity.WARNING
            out.append(Diagnostic(f.kind.upper(), severity, f.message(self.hints), self.where(f)))
        for kind, note in self.cap_notes():
            severity = Severity.ERROR if kind in wanted else Severity.WARNING
            out.append(Diagnostic(kind.upper(), severity, note, Position(self.source)))
        return sorted(out, key=Diagnostic.sort_key)

    def cap_notes(self) -> list[tuple[str, str]]:
        """(kind, note) for occurrences the caps counted without listing them."""
        notes = []
        if self.undeclared_untracked:
            notes.append(
                (
                    "undeclared",
                    f"{self.undeclared_untracked} more undeclared value(s) under keys beyond "
                    f"the first {self.limits.max_undeclared_keys} distinct ones were counted, "
                    "not listed",
                )
            )
        if self.malformed_unreported:
            notes.append(
                (
                    "malformed",
                    f"{self.malformed_unreported} more malformed line(s) after the first "
                    f"{self.limits.max_malformed_reported} were counted, not listed",
                )
            )
        for kind, count in sorted(self.untracked.items()):
            notes.append(
                (
                    kind,
                    f"{count} more {kind} occurrence(s) beyond the first "
                    f"{self.limits.max_undeclared_keys} distinct findings were counted, not listed",
                )
            )
        return notes

    def where(self, finding: Finding) -> Position:
        """Where a finding is reported: its position, else its first line in the log."""
        if finding.position is not None:
            return finding.position
        return Position(self.source, finding.line, 1) if finding.line else Position(self.source)

    def count(self, kind: str) -> int:
        """Occurrences of ``kind``, listed or only counted."""
        total = sum(f.count for f in self.findings if f.kind == kind)
        if kind == "undeclared":
            total += self.undeclared_untracked
        if kind == "malformed":
            total += self.malformed_unreported
        if kind == "missing":
            total += self.folded_missing
        return total + self.untracked.get(kind, 0)

    # The names before live-check became a package.
    _count = count
    _where = where
    _cap_notes = cap_notes

    def render(self, fmt: str, fail_on: Iterable[str] = (), *, show_all: bool = False) -> str:
        """The report as ``text``, ``json``, ``sarif`` or ``github`` (workflow commands)."""
        if fmt == "json":
            return render_json(self, fail_on)
        if fmt == "sarif":
            return render_sarif(self, fail_on)
        if fmt == "github":
            return render_github(self, fail_on)
        return render_text(self, fail_on, show_all=show_all)

    def to_json(self, fail_on: Iterable[str] = ()) -> str:
        """The report as indented JSON with sorted keys (see :func:`.render.render_json`)."""
        return render_json(self, fail_on)

    def to_text(self, fail_on: Iterable[str] = (), *, show_all: bool = False) -> str:
        """A table of the judged teed rows (``show_all``: every row), the summary, the
        findings, then the verdict."""
        return render_text(self, fail_on, show_all=show_all)
