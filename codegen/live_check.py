"""Check a run's JSONL log against the catalog: did the run log what it declares?

The runtime's ``JsonlLogger`` writes one object per ``log_metrics`` call::

    {"step": 12, "prefix": "train", "metrics": {"loss": 0.41, "reward": NaN}}

Values are JSON numbers, the ``NaN``/``Infinity``/``-Infinity`` tokens Python's
:mod:`json` writes, bools, strings, lists, or ``{"__type__": "<type>"}`` for
objects the logger could not convert.

Each ``(prefix, key)`` pair is matched against the teed rows' prefixes (the
row's or file's ``prefix`` plus any further ``prefixes``) and logger key; a row
whose key or prefix is a family (``{attribute}`` placeholders) matches every
logged pair of its shape, and the captured values are checked against the
attributes. Finding kinds (:data:`FINDING_KINDS`):

``undeclared``
    a logged ``(prefix, key)`` that no teed row declares.
``missing``
    a ``required`` teed row that applies to the run and was never logged (see
    "Presence" below).
``non_scalar``
    a teed key logged with a value the tee cannot export (bool, string, list,
    null, object): :func:`metric_catalog.vocabulary.as_scalar` would drop it.
``non_finite``
    a teed key logged as NaN or an infinity.
``counter_decrease``
    a teed counter logged with a negative value. Teed counters are per-step
    deltas added to a cumulative OpenTelemetry counter, so a negative delta is
    the only way the exported counter could go backwards (and the SDK drops
    it). A delta smaller than the previous step's is normal and not reported.
``attribute_value``
    a logged key that has the shape of a key family (``setup/{rl.setup.phase}_time_s``)
    but captures a value its attribute does not allow (outside the enum, or not
    an integer for an ``int`` attribute), or a line's ``"attributes"`` give a
    declared attribute a value outside its enum or of another type. The tee
    drops such values.
``attribute_budget``
    a series got more distinct values of an open attribute than its
    ``max_cardinality``, or more distinct attribute sets than its budget (the
    row's ``cardinality_limit``, default 2000, smaller when its enums bound it;
    the attribute-less set and the overflow point count, as in the runtime's
    ``series_limit``); past the budget the tee folds new sets into one overflow
    point. Judged per worker (each process has its own budget).
``undeclared_series``
    a point line (``{"step", "series", "value", "attributes"}``, written by
    ``JsonlLogger.record_metrics`` or ``log_point``) names a series no teed or
    recorded row declares (by name or registry key).
``undeclared_attribute``
    a point line, or a ``log_metrics`` line's ``"attributes"``, carries an
    attribute key the matched row does not declare; the tee drops it.
``missing_attribute``
    a point of a row lacks one of the row's ``required`` attributes (after
    captures and derivations); the tee keeps it without the attribute.
``malformed``
    a line that is not a well-formed record (bad JSON, wrong field types, or
    longer than :data:`MAX_LINE_BYTES`).
``unknown_loop``
    a line names (``"loop"`` field) a loop no catalog file declares under
    ``loops:``; the finding lists the declared loops, and the loop is inferred
    from the keys instead.
``loop_conflict``
    lines (of one file, or of several workers' files) name different declared
    loops; the run is judged as the first one named.

Presence: which unlogged rows are "missing"
    The run's loop is the ``loop`` argument (``--loop``), else the first
    declared loop a record names (an optional ``"loop"`` field, written by
    ``JsonlLogger(loop=...)`` or ``METRIC_CATALOG_LOOP``), else inferred from the log: each
    declared loop's ``signature`` keys that were logged count for it, and the
    loop with the most (then the largest share of its signature) wins; a tie
    or no signature key at all leaves the loop unknown. An unlogged row then
    gets one :data:`PRESENCE_STATES` state: ``not_emitted`` when the loop is
    known and the row's ``emitted_by`` does not list it. When the loop is
    unknown, the loops the run may be are those emitting every logged row that
    lists its loops: a row none of them emits is ``not_emitted``, one only some
    of them emit is ``undecided`` (never missing), one all of them emit is
    judged by its level. ``inactive_owner``
    when the row lists no loops and its owner logged
    none of its rows, so it was not imported in this run (``all_owners=True``,
    ``--all-owners``, judges those rows anyway); otherwise by requirement level:
    ``required`` rows are ``missing`` (a finding), or ``not_due`` when the run's
    last step is before the row's ``first_step``; ``conditionally_required``
    rows are ``conditional`` (information, with their condition);
    ``recommended`` and ``opt_in`` rows are ``not_logged``. A logged row whose
    ``emitted_by`` does not list the run's loop is noted as information too.

Attributes
    A ``log_metrics`` line may carry ``"attributes": {...}`` (the attributes the
    tee recorded each of its points with); a *point line* ``{"step": 3, "series":
    "rl.vllm.batch.duration", "value": 0.25, "attributes": {...}}`` is one
    recorded point. Each point's attributes (with what a key family
    captured) are checked against the matched row as the runtime checks them:
    declared keys, enum values and types, then the series' budget.

The file is streamed: one line is held at a time, per-row state is bounded by
the catalog, findings are aggregated per key (count plus first occurrence),
undeclared keys are tracked up to :data:`MAX_UNDECLARED_KEYS` distinct pairs,
and attribute sets per series up to the series' budget (counting stops there).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import BinaryIO, Final

from .diagnostics import Diagnostic, Position, Severity
from .model import Attribute, AttributeRef, Catalog, MetricRow
from .patterns import compile_matcher, parse_pattern, placeholders

__all__ = [
    "DEFAULT_CARDINALITY_LIMIT",
    "FINDING_KINDS",
    "LOOP_KINDS",
    "MAX_FAMILY_KEYS",
    "MAX_LINE_BYTES",
    "MAX_LOOP_NAMES",
    "MAX_MALFORMED_REPORTED",
    "MAX_TRACKED_VALUES",
    "MAX_UNDECLARED_KEYS",
    "PRESENCE_STATES",
    "Finding",
    "LiveCheckReport",
    "LoopChoice",
    "Notice",
    "RowSummary",
    "bounded_lines",
    "check_file",
    "check_stream",
    "series_budget",
]

FINDING_KINDS: Final[tuple[str, ...]] = (
    "undeclared",
    "missing",
    "non_scalar",
    "non_finite",
    "counter_decrease",
    "malformed",
    "attribute_value",
    "attribute_budget",
    "unknown_loop",
    "loop_conflict",
    "undeclared_series",
    "undeclared_attribute",
    "missing_attribute",
)
"""Every finding kind, as named on ``--fail-on``."""

LOOP_KINDS: Final = frozenset({"unknown_loop", "loop_conflict"})
"""Finding kinds about the ``"loop"`` field; their ``key`` is the loop name."""

MAX_LOOP_NAMES: Final = 100
"""Distinct loop names a log may give that are tracked; later ones are only counted."""

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
"""Longer lines are reported malformed and skipped without being held in memory."""

PRESENCE_STATES: Final[tuple[str, ...]] = (
    "logged",
    "missing",
    "not_due",
    "conditional",
    "not_logged",
    "not_emitted",
    "undecided",
    "inactive_owner",
)
"""What the log showed for a teed row, as ``presence`` in the JSON report."""

MAX_UNDECLARED_KEYS: Final = 10_000
"""Distinct undeclared ``(prefix, key)`` pairs tracked; later ones are only counted."""

_ATTRIBUTE_KINDS: Final = frozenset(
    {"attribute_value", "attribute_budget", "undeclared_attribute", "missing_attribute"}
)

_CAPPED_KINDS: Final = frozenset(
    {"undeclared", "undeclared_series", "undeclared_attribute", "attribute_value"}
)
"""Kinds whose distinct findings grow with the log's keys or names: tracked up to a cap."""

MAX_MALFORMED_REPORTED: Final = 100
"""Malformed lines reported one by one; later ones are only counted."""


@dataclass(slots=True)
class Finding:
    """Every occurrence of one finding kind for one ``(prefix, key)``, aggregated.

    ``line`` and ``step`` are the first occurrence; ``example`` describes its value.
    """

    kind: str
    prefix: str
    key: str
    series: str | None
    line: int
    step: int | None
    example: str
    count: int = 1
    position: Position | None = None
    """Where to report it when not a log line (a missing row: its catalog position)."""
    attribute: str | None = None
    """The attribute an attribute finding is about (``None``: the whole attribute set)."""

    @property
    def qualified_key(self) -> str:
        """``prefix/key``, or ``key`` when the prefix is empty."""
        return f"{self.prefix}/{self.key}" if self.prefix else self.key

    def message(self) -> str:
        """One sentence saying what happened, how often, first where, and how to fix it."""
        shown_series = self.series and self.series != self.key
        what = self.qualified_key + (f" ({self.series})" if shown_series else "")
        first = f"first {self.example} at step {self.step}"
        if self.kind == "undeclared":
            return (
                f"{what} was logged {self.count} time(s), first at step {self.step}, but no "
                f"teed row declares it{self.example}; add a teed row to catalog/ if it "
                "should be exported"
            )
        if self.kind == "missing":
            if self.example:
                return (
                    f"{what} is required of {self.example} runs but was never logged; log it, "
                    "or fix the row's requirement_level or emitted_by"
                )
            return f"{what} is required but was never logged; log it or lower its requirement_level"
        if self.kind == "non_scalar":
            return (
                f"{what} was logged {self.count} time(s) as a non-scalar, {first}; the tee "
                "drops such values: log an int or float"
            )
        if self.kind == "non_finite":
            return f"{what} was logged {self.count} time(s) as NaN or infinity, {first}"
        if self.kind in _ATTRIBUTE_KINDS:
            return f"{what} {self.example}"
        if self.kind == "undeclared_series":
            return (
                f"{self.count} point line(s) name series {self.key!r}, first at step "
                f"{self.step}, but no teed or recorded row declares it (as a name or a "
                "registry key); declare a recorded row for it in catalog/, or fix the name"
            )
        if self.kind == "unknown_loop":
            return (
                f"{self.count} line(s) name loop {self.key!r}, first at step {self.step}, but "
                f"the catalog declares no such loop ({self.example}); the loop was chosen "
                "without it: name a declared loop (JsonlLogger(loop=...) or "
                "METRIC_CATALOG_LOOP), or declare it under 'loops:' (catalog/common.yaml)"
            )
        if self.kind == "loop_conflict":
            return (
                f"{self.count} line(s) name loop {self.key!r}, first at step {self.step}, but "
                f"{self.example}; one run has one loop: give every worker the same "
                "METRIC_CATALOG_LOOP, check each run's logs on their own, or pass --loop"
            )
        if self.kind == "counter_decrease":
            return (
                f"{what} is a counter (per-step delta) but was logged negative "
                f"{self.count} time(s), {first}; a counter never goes backwards: log the "
                "step's increase, or declare the row an up_down_counter or gauge"
            )
        return self.example

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with stable keys."""
        line_only = self.kind == "malformed"
        return {
            "kind": self.kind,
            "prefix": None if line_only or self.kind in LOOP_KINDS else self.prefix,
            "key": None if line_only else self.key,
            "series": self.series,
            "count": self.count,
            "first_line": self.line or None,
            "first_step": self.step,
            "attribute": self.attribute,
            "message": self.message(),
        }


@dataclass(slots=True)
class RowSummary:
    """What the log showed for one teed row."""

    row: MetricRow
    logged: int = 0
    non_finite: int = 0
    non_scalar: int = 0
    negative: int = 0
    last_value: float | None = None
    last_step: int | None = None
    presence: str = "logged"
    """One of :data:`PRESENCE_STATES`, set when the log is finished."""

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict; non-finite last values become the strings ``NaN``, ``Infinity``."""
        return {
            "presence": self.presence,
            "requirement_level": self.row.requirement_level,
            "emitted_by": list(self.row.emitted_by),
            "series": self.row.name,
            "logger_key": self.row.qualified_logger_key,
            "kind": self.row.kind,
            "logged": self.logged,
            "non_finite": self.non_finite,
            "non_scalar": self.non_scalar,
            "negative": self.negative,
            "last_value": _json_number(self.last_value),
            "last_step": self.last_step,
        }


def _number_text(value: float) -> str:
    text = _json_number(value)
    return f"{text:g}" if isinstance(text, float) else str(text)


def _json_number(value: float | None) -> float | str | None:
    if value is None or math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


@dataclass(frozen=True, slots=True)
class Notice:
    """Information that is not a finding: it never fails a run.

    ``kind`` is ``conditional`` (a conditionally required row not logged, with
    its condition), ``not_due`` (a required row whose first step the run never
    reached), ``unexpected_loop`` (a row logged although its ``emitted_by``
    does not list the run's loop).
    """

    kind: str
    message: str
    series: str | None = None
    position: Position | None = None

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with stable keys."""
        return {
            "kind": self.kind,
            "series": self.series,
            "message": self.message,
            "source": None if self.position is None else str(self.position),
        }


@dataclass(frozen=True, slots=True)
class LoopChoice:
    """The loop a run was judged as, and why.

    ``source`` is ``flag`` (``--loop``), ``log`` (a record's ``"loop"``),
    ``inferred`` (signature keys, listed in ``evidence``) or ``unknown``
    (``evidence`` then names the loops that tied, if any).
    """

    name: str | None
    source: str
    evidence: tuple[str, ...] = ()

    def describe(self) -> str:
        """``grpo_sync (inferred from timing/train/generation, ...)`` or ``unknown``."""
        if self.name is None and self.evidence:
            tied = " and ".join(self.evidence)
            return f"unknown (the signature keys of {tied} tie; pass --loop)"
        if self.name is None:
            return "unknown (no declared loop's signature keys were logged)"
        if self.source == "flag":
            return f"{self.name} (--loop)"
        if self.source == "log":
            return f"{self.name} (named by the log)"
        shown = ", ".join(self.evidence[:3]) + (", ..." if len(self.evidence) > 3 else "")
        return f"{self.name} (inferred from {shown})"

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with stable keys."""
        return {"name": self.name, "source": self.source, "evidence": list(self.evidence)}


@dataclass(slots=True)
class LiveCheckReport:
    """The outcome of checking one log: per-row summaries and aggregated findings."""

    source: str
    lines: int = 0
    records: int = 0
    rows: list[RowSummary] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    undeclared_untracked: int = 0
    """Occurrences of undeclared keys beyond :data:`MAX_UNDECLARED_KEYS` distinct pairs."""
    malformed_unreported: int = 0
    """Malformed lines beyond :data:`MAX_MALFORMED_REPORTED`."""
    untracked: dict[str, int] = field(default_factory=dict)
    """Occurrences of other capped kinds (undeclared series or attributes, attribute
    values) beyond :data:`MAX_UNDECLARED_KEYS` distinct findings, by kind."""
    inactive_owners: dict[str, int] = field(default_factory=dict)
    """Catalog files none of whose teed rows was logged -> their unjudged row count."""
    loop: LoopChoice = field(default_factory=lambda: LoopChoice(None, "unknown"))
    """The loop the run was judged as."""
    last_step: int | None = None
    """The largest step any record carried."""
    notices: list[Notice] = field(default_factory=list)
    """Information that is not a finding (never fails the run)."""

    def kinds(self) -> set[str]:
        """The finding kinds that occurred."""
        found = {f.kind for f in self.findings}
        if self.undeclared_untracked:
            found.add("undeclared")
        if self.malformed_unreported:
            found.add("malformed")
        found.update(kind for kind, count in self.untracked.items() if count)
        return found

    def failed(self, fail_on: Iterable[str]) -> list[str]:
        """The kinds in ``fail_on`` that occurred, in :data:`FINDING_KINDS` order."""
        wanted, found = set(fail_on), self.kinds()
        return [k for k in FINDING_KINDS if k in wanted and k in found]

    def diagnostics(self, fail_on: Iterable[str] = ()) -> list[Diagnostic]:
        """Findings as diagnostics: errors for kinds in ``fail_on``, warnings otherwise."""
        wanted = set(fail_on)
        out = []
        for f in self.findings:
            severity = Severity.ERROR if f.kind in wanted else Severity.WARNING
            out.append(Diagnostic(f.kind.upper(), severity, f.message(), self._where(f)))
        for kind, note in self._cap_notes():
            severity = Severity.ERROR if kind in wanted else Severity.WARNING
            out.append(Diagnostic(kind.upper(), severity, note, Position(self.source)))
        return sorted(out, key=Diagnostic.sort_key)

    def _cap_notes(self) -> list[tuple[str, str]]:
        """(kind, note) for occurrences the caps counted without listing them."""
        notes = []
        if self.undeclared_untracked:
            notes.append(
                (
                    "undeclared",
                    f"{self.undeclared_untracked} more undeclared value(s) under keys beyond "
                    f"the first {MAX_UNDECLARED_KEYS} distinct ones were counted, not listed",
                )
            )
        if self.malformed_unreported:
            notes.append(
                (
                    "malformed",
                    f"{self.malformed_unreported} more malformed line(s) after the first "
                    f"{MAX_MALFORMED_REPORTED} were counted, not listed",
                )
            )
        for kind, count in sorted(self.untracked.items()):
            notes.append(
                (
                    kind,
                    f"{count} more {kind} occurrence(s) beyond the first {MAX_UNDECLARED_KEYS} "
                    "distinct findings were counted, not listed",
                )
            )
        return notes

    def _where(self, finding: Finding) -> Position:
        if finding.position is not None:
            return finding.position
        return Position(self.source, finding.line, 1) if finding.line else Position(self.source)

    def to_json(self, fail_on: Iterable[str] = ()) -> str:
        """The report as indented JSON with sorted keys.

        ``findings`` holds one object per finding (kind, key, count, first line
        and step, the attribute of an attribute finding, severity, source);
        ``notes`` says what the caps left uncounted by key.
        """
        wanted = sorted(set(fail_on))
        failed = self.failed(wanted)
        findings = []
        for f in sorted(self.findings, key=self._where):
            severity = Severity.ERROR if f.kind in wanted else Severity.WARNING
            findings.append(
                f.to_json() | {"severity": severity.value, "source": str(self._where(f))}
            )
        notes = [note for _, note in self._cap_notes()]
        doc = {
            "source": self.source,
            "lines": self.lines,
            "records": self.records,
            "rows": [r.to_json() for r in self.rows],
            "findings": findings,
            "inactive_owners": dict(sorted(self.inactive_owners.items())),
            "loop": self.loop.to_json(),
            "last_step": self.last_step,
            "information": [n.to_json() for n in self.notices],
            "presence": {
                state: sum(r.presence == state for r in self.rows) for state in PRESENCE_STATES
            },
            "notes": notes,
            "counts": {k: self._count(k) for k in FINDING_KINDS},
            "fail_on": wanted,
            "failed": failed,
            "ok": not failed,
        }
        return json.dumps(doc, indent=2, sort_keys=True)

    def _count(self, kind: str) -> int:
        total = sum(f.count for f in self.findings if f.kind == kind)
        if kind == "undeclared":
            total += self.undeclared_untracked
        if kind == "malformed":
            total += self.malformed_unreported
        return total + self.untracked.get(kind, 0)

    def to_text(self, fail_on: Iterable[str] = ()) -> str:
        """A summary table per teed row, then the findings, then the verdict."""
        wanted = set(fail_on)
        header = ("series", "logged as", "kind", "logged", "non-finite", "last value")
        table = [header]
        for r in self.rows:
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
            f"live-check {self.source}: {self.lines} line(s), {self.records} record(s), "
            f"{len(self.rows)} teed row(s) declared",
            f"loop: {self.loop.describe()}",
        ]
        for i, cells in enumerate(table):
            text = "  ".join(
                c.rjust(w) if 3 <= n < 5 else c.ljust(w)
                for n, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
            lines.append(text.rstrip())
            if i == 0:
                lines.append("  ".join("-" * w for w in widths))
        diagnostics = self.diagnostics(wanted)
        lines.extend(d.format() for d in diagnostics)
        lines.extend(f"info[{n.kind.upper()}]: {n.message}" for n in self.notices)
        not_emitted = sum(r.presence == "not_emitted" for r in self.rows)
        undecided = sum(r.presence == "undecided" for r in self.rows)
        if not_emitted or undecided:
            by = f"loop {self.loop.name}" if self.loop.name else "any loop the run may be"
            lines.append(
                f"not judged: {not_emitted} row(s) not emitted by {by}, {undecided} row(s) "
                "emitted by only some of the loops the run may be"
            )
        if self.inactive_owners:
            owners = ", ".join(f"{o} ({n} row(s))" for o, n in sorted(self.inactive_owners.items()))
            lines.append(
                f"inactive owners (logged none of their rows; not imported in this run?): {owners}"
            )
        counts = ", ".join(f"{k} {self._count(k)}" for k in FINDING_KINDS)
        lines.append(f"findings: {counts}")
        failed = self.failed(wanted)
        if failed:
            lines.append(f"FAILED: --fail-on {','.join(failed)}")
        return "\n".join(lines)


class _Checker:
    """Streaming state: bounded by the catalog's teed rows plus the undeclared-key cap."""

    def __init__(
        self,
        catalog: Catalog,
        source: str,
        *,
        all_owners: bool = False,
        loop: str | None = None,
    ) -> None:
        self.report = LiveCheckReport(source)
        self.all_owners = all_owners
        self.presence = _Presence(catalog, loop)
        # A deprecated row and its replacement may share a key: the value feeds both.
        self.by_key: dict[tuple[str, str], list[RowSummary]] = {}
        self.declared_prefixes: dict[str, list[str]] = {}
        self.owner_of: dict[str, str] = {}
        self.families = _Families(catalog)
        self.budgets = _Budgets(catalog)
        self.with_required = frozenset(
            row.name
            for _, row in catalog.rows()
            if any(ref.requirement_level == "required" for ref in row.attributes)
        )
        """Rows with a required attribute: their points are checked even without attributes."""
        # Series name and registry key -> row, for point lines (recorded rows' values
        # are counted in summaries of their own, outside the teed rows' table).
        self.series: dict[str, tuple[MetricRow, RowSummary]] = {}
        for catalog_file, row in catalog.rows():
            if row.section != "teed" or row.logger_key is None:
                own = (row, RowSummary(row))
                self.series.setdefault(row.registry_key, own)
                self.series[row.name] = own
                continue
            self.owner_of[row.name] = catalog_file.path
            summary = RowSummary(row)
            self.series.setdefault(row.registry_key, (row, summary))
            self.series[row.name] = (row, summary)
            self.report.rows.append(summary)
            for prefix in row.prefixes or ("",):
                if "{" in prefix or "{" in row.logger_key:
                    self.families.add(prefix, row.logger_key, summary)
                    continue
                self.by_key.setdefault((prefix, row.logger_key), []).append(summary)
                self.declared_prefixes.setdefault(row.logger_key, []).append(prefix)
        self.report.rows.sort(key=lambda s: s.row.name)
        self.findings: dict[tuple[str, str, str], Finding] = {}
        self.candidates: frozenset[str] = frozenset()
        self.undeclared: int = 0
        self.malformed: int = 0
        self.loop_names: int = 0
        self.locate: Callable[[int], str] = lambda line_no: f"line {line_no}"
        """How a message names a line of the log (several files: ``path:line``)."""

    def malformed_line(self, line_no: int, why: str) -> None:
        self.malformed += 1
        if self.malformed > MAX_MALFORMED_REPORTED:
            self.report.malformed_unreported += 1
            return
        message = f"line {line_no} is not a JSONL record: {why}; it was skipped"
        finding = Finding("malformed", "", f"#{line_no}", None, line_no, None, message)
        self.findings[("malformed", "", str(line_no))] = finding

    def note(
        self,
        kind: str,
        where: tuple[str, str, int, int],
        series: str | None,
        example: str,
        *,
        detail: str = "",
    ) -> None:
        """Count one occurrence at ``where`` = (prefix, key, line, step), keeping the first.

        Occurrences are aggregated per kind, prefix, key and ``detail`` (an attribute name).
        """
        prefix, key, line_no, step = where
        slot = (kind, prefix, f"{key}\x00{detail}" if detail else key)
        existing = self.findings.get(slot)
        if existing is not None:
            existing.count += 1
            return
        if kind in _CAPPED_KINDS:
            if self.undeclared >= MAX_UNDECLARED_KEYS:
                if kind == "undeclared":
                    self.report.undeclared_untracked += 1
                else:
                    untracked = self.report.untracked
                    untracked[kind] = untracked.get(kind, 0) + 1
                return
            self.undeclared += 1
        self.findings[slot] = Finding(
            kind, prefix, key, series, line_no, step, example, attribute=detail or None
        )

    def take(self, line_no: int, line: _Line) -> None:
        """Judge one well-formed line: a ``log_metrics`` call or a point."""
        if line.series is None:
            self.record(
                line_no, line.step, line.prefix, line.metrics, line.loop, attributes=line.attributes
            )
        else:
            self.point(line_no, line)

    def _see(self, line_no: int, step: int, loop: str | None) -> None:
        """What every line tells presence: its loop and its step."""
        presence = self.presence
        if loop is not None:
            kind = presence.name(loop, line_no)
            if kind is not None:
                self._note_loop(kind, loop, line_no, step)
        if presence.last_step is None or step > presence.last_step:
            presence.last_step = step

    def point(self, line_no: int, line: _Line) -> None:
        """One point line: its series must be declared, its value and attributes fit the row."""
        self._see(line_no, line.step, line.loop)
        series = line.series or ""
        where = ("", series, line_no, line.step)
        found = self.series.get(series)
        if found is None:
            self.note("undeclared_series", where, None, "")
            return
        row, summary = found
        self._check_attributes(row, line.attributes, {}, where)
        self._record_row(summary, where, line.value, set())

    def _check_attributes(
        self,
        row: MetricRow,
        given: dict[str, object],
        captured: dict[str, str],
        where: tuple[str, str, int, int],
    ) -> None:
        for kind, attribute, text in self.budgets.check(row, given, captured):
            self.note(kind, where, row.name, text, detail=attribute)

    def record(
        self,
        line_no: int,
        step: int,
        prefix: str,
        metrics: dict[str, object],
        loop: str | None = None,
        *,
        attributes: dict[str, object] | None = None,
    ) -> None:
        """One ``log_metrics`` line: match each key, count it, check its value and attributes."""
        presence = self.presence
        self._see(line_no, step, loop)
        given = attributes or {}
        signature = presence.signature_keys
        for key, value in metrics.items():
            if signature and (prefix, key) in signature:
                presence.seen_signature(prefix, key)
            summaries = self.by_key.get((prefix, key))
            if summaries is not None and (given or self.with_required):
                for summary in summaries:
                    if given or summary.row.name in self.with_required:
                        where = (prefix, key, line_no, step)
                        self._check_attributes(summary.row, given, {}, where)
            if summaries is None and self.families.rows:
                summaries = self._family_hits(prefix, key, (line_no, step), given)
            if summaries is None:
                elsewhere = self.declared_prefixes.get(key)
                hint = ""
                if elsewhere:
                    shown = ", ".join(repr(p) for p in sorted(elsewhere))
                    hint = f" (a row declares it under prefix {shown})"
                self.note("undeclared", (prefix, key, line_no, step), None, hint)
                continue
            noted: set[str] = set()  # a value shared by two rows is one occurrence
            for summary in summaries:
                self._record_row(summary, (prefix, key, line_no, step), value, noted)

    def _note_loop(self, kind: str, loop: str, line_no: int, step: int) -> None:
        """Count a line naming an undeclared loop, or a loop other than the run's."""
        slot = (kind, "", loop)
        if slot not in self.findings and self.loop_names >= MAX_LOOP_NAMES:
            return
        if slot not in self.findings:
            self.loop_names += 1
        self.note(kind, ("", loop, line_no, step), None, "")

    def _family_hits(
        self, prefix: str, key: str, at: tuple[int, int], given: dict[str, object]
    ) -> list[RowSummary] | None:
        """The family rows ``(prefix, key)`` belongs to, after checking what it captures."""
        hits = self.families.match(prefix, key)
        if not hits:
            return None
        found: list[RowSummary] = []
        where = (prefix, key, *at)
        for summary, captured in hits:
            problem = self.families.judge(captured)
            if problem is not None:
                kind, text = problem
                self.note(kind, where, summary.row.name, text)
            else:
                self._check_attributes(summary.row, given, captured, where)
            found.append(summary)
        return found

    def _record_row(
        self,
        summary: RowSummary,
        where: tuple[str, str, int, int],
        value: object,
        noted: set[str],
    ) -> None:
        """One logged value of one row: count it and note (once per value) what is wrong."""
        summary.logged += 1
        summary.last_step = where[3]
        row = summary.row
        number = _as_number(value)
        if number is None:
            summary.non_scalar += 1
            self._note_once("non_scalar", noted, where, row.name, _describe(value))
            return
        summary.last_value = number
        if not math.isfinite(number):
            summary.non_finite += 1
            self._note_once("non_finite", noted, where, row.name, _number_text(number))
        elif row.kind == "counter" and number < 0:
            summary.negative += 1
            self._note_once("counter_decrease", noted, where, row.name, _number_text(number))

    def _note_once(
        self,
        kind: str,
        noted: set[str],
        where: tuple[str, str, int, int],
        series: str,
        example: str,
    ) -> None:
        if kind not in noted:
            noted.add(kind)
            self.note(kind, where, series, example)

    def finish(self) -> LiveCheckReport:
        report = self.report
        presence = self.presence
        report.loop = presence.choose()
        report.last_step = presence.last_step
        loop = report.loop.name
        known = ", ".join(sorted(presence.declared)) or "none"
        for finding in self.findings.values():
            if finding.kind == "unknown_loop":
                finding.example = f"declared loops: {known}"
            elif finding.kind == "loop_conflict":
                finding.example = (
                    f"{self.locate(presence.named_line)} named {presence.named!r} first "
                    f"(the run was judged as {report.loop.name!r})"
                )
        active = {self.owner_of[s.row.name] for s in report.rows if s.logged}
        self.candidates = self._candidates(loop)
        for summary in report.rows:
            row = summary.row
            if summary.logged:
                if loop is not None and row.emitted_by and loop not in row.emitted_by:
                    report.notices.append(
                        Notice(
                            "unexpected_loop",
                            f"{row.qualified_logger_key} ({row.name}) was logged, but its "
                            f"emitted_by ({', '.join(row.emitted_by)}) does not list loop "
                            f"{loop}; add the loop to emitted_by if it really logs the key",
                            row.name,
                            row.where("emitted_by"),
                        )
                    )
                continue
            summary.presence = self._unlogged_state(summary, loop, active)
            prefix, key = row.prefix or "", row.logger_key or ""
            if summary.presence == "missing":
                judged_as = loop if loop is not None and row.emitted_by else ""
                self.findings[("missing", prefix, key)] = Finding(
                    "missing", prefix, key, row.name, 0, None, judged_as, position=row.position
                )
            elif summary.presence == "inactive_owner":
                owner = self.owner_of[row.name]
                report.inactive_owners[owner] = report.inactive_owners.get(owner, 0) + 1
            elif summary.presence == "conditional":
                report.notices.append(
                    Notice(
                        "conditional",
                        f"{row.qualified_logger_key} ({row.name}) was not logged; it is "
                        f"logged only {row.condition}",
                        row.name,
                        row.where("condition"),
                    )
                )
            elif summary.presence == "not_due":
                report.notices.append(
                    Notice(
                        "not_due",
                        f"{row.qualified_logger_key} ({row.name}) was not logged; it is first "
                        f"logged at step {row.first_step} and the run's last step is "
                        f"{presence.last_step}",
                        row.name,
                        row.where("first_step"),
                    )
                )
        report.findings = sorted(
            self.findings.values(), key=lambda f: (f.line, f.kind, f.prefix, f.key)
        )
        return report

    def _candidates(self, loop: str | None) -> frozenset[str]:
        """The loops the run may be: the chosen one, else every declared loop that
        emits each logged row that lists its loops (none when they contradict).
        """
        if loop is not None:
            return frozenset((loop,))
        candidates = {declared.name for declared in self.presence.loops}
        for summary in self.report.rows:
            if summary.logged and summary.row.emitted_by:
                candidates &= set(summary.row.emitted_by)
        return frozenset(candidates)

    def _unlogged_state(self, summary: RowSummary, loop: str | None, active: set[str]) -> str:
        """The :data:`PRESENCE_STATES` state of a row the log never showed."""
        row = summary.row
        if row.emitted_by and self.presence.loops:
            # Judged only when every loop the run may be emits it.
            emitting = self.candidates & set(row.emitted_by)
            if not emitting:
                return "not_emitted"
            if emitting != self.candidates:
                return "undecided"
        elif not self.all_owners and self.owner_of[row.name] not in active:
            return "inactive_owner"
        level = row.requirement_level
        if level == "required":
            last = self.presence.last_step
            if row.first_step is not None and (last is None or last < row.first_step):
                return "not_due"
            return "missing"
        if level == "conditionally_required":
            return "conditional"
        return "not_logged"


MAX_FAMILY_KEYS: Final = 50_000
"""Distinct logged ``(prefix, key)`` pairs whose family match is cached."""

MAX_TRACKED_VALUES: Final = 10_000
"""Most distinct values of one open attribute tracked per series (its ``max_cardinality``
when smaller); attribute sets are tracked up to the series' budget."""


class _Families:
    """Rows whose logger key or prefix holds ``{attribute}`` placeholders, and their budgets.

    A logged pair is matched with every placeholder open (any text), so a key of
    the family's shape with a value outside the enum is an ``attribute_value``
    finding instead of an undeclared key. Matches are cached per pair (up to
    :data:`MAX_FAMILY_KEYS`); distinct values are tracked up to each budget.
    """

    def __init__(self, catalog: Catalog) -> None:
        self.attributes = catalog.attributes()
        self.rows: list[tuple[re.Pattern[str], re.Pattern[str], tuple[str, ...], RowSummary]] = []
        self.cache: dict[tuple[str, str], list[tuple[RowSummary, dict[str, str]]]] = {}
        self.values: dict[tuple[str, str], set[str]] = {}
        self.sets: dict[str, set[tuple[tuple[str, str], ...]]] = {}
        self.reported: set[tuple[str, str]] = set()

    def add(self, prefix: str, key: str, summary: RowSummary) -> None:
        names = placeholders(prefix) + placeholders(key)
        prefix_re = compile_matcher(parse_pattern(prefix), {})
        key_re = compile_matcher(parse_pattern(key), {})
        self.rows.append((prefix_re, key_re, names, summary))

    def match(self, prefix: str, key: str) -> list[tuple[RowSummary, dict[str, str]]]:
        slot = (prefix, key)
        cached = self.cache.get(slot)
        if cached is not None:
            return cached
        hits: list[tuple[RowSummary, dict[str, str]]] = []
        seen: set[int] = set()
        for prefix_re, key_re, names, summary in self.rows:
            if id(summary) in seen:
                continue
            on_prefix = prefix_re.fullmatch(prefix)
            if on_prefix is None:
                continue
            on_key = key_re.fullmatch(key)
            if on_key is None:
                continue
            values = on_prefix.groups() + on_key.groups()
            hits.append((summary, dict(zip(names, values, strict=True))))
            seen.add(id(summary))
        if len(self.cache) < MAX_FAMILY_KEYS:
            self.cache[slot] = hits
        return hits

    def judge(self, captured: dict[str, str]) -> tuple[str, str] | None:
        """``(kind, text)`` when a captured value is not allowed by its attribute."""
        for name, value in captured.items():
            attribute = self.attributes.get(name)
            if attribute is None:
                continue  # validate reports the unbound placeholder
            domain = attribute.domain
            if domain is not None and value not in domain:
                shown = ", ".join(domain[:8]) + (", ..." if len(domain) > 8 else "")
                return (
                    "attribute_value",
                    f"captures {name}={value!r}, which is not one of its values ({shown}); "
                    "the tee drops it: log one of them, or add the value to the attribute",
                )
            if attribute.type == "int" and not value.lstrip("-").isdigit():
                return (
                    "attribute_value",
                    f"captures {name}={value!r}, which is not an integer; the tee drops it",
                )
        return None


DEFAULT_CARDINALITY_LIMIT: Final = 2000
"""The runtime's default budget of attribute sets per series (``metric_catalog.vocabulary``)."""


def series_budget(row: MetricRow, attributes: Mapping[str, Attribute]) -> int:
    """The series' budget of attribute sets, overflow point included, as the runtime has it.

    Mirrors ``metric_catalog._attributes.series_limit``: the row's
    ``cardinality_limit`` (default :data:`DEFAULT_CARDINALITY_LIMIT`), or less
    when its attributes bound it (each enum attribute absent or one of its
    values, each open attribute with ``max_cardinality`` absent or one of
    that many values), plus one for the overflow point.
    """
    limit = row.cardinality_limit or DEFAULT_CARDINALITY_LIMIT
    product = 1
    for name in row.attribute_names():
        attribute = attributes.get(name)
        if attribute is None:
            return limit
        domain = attribute.domain if attribute.values else None
        if domain is not None:
            product *= len(domain) + 1
        elif attribute.max_cardinality is not None:
            product *= attribute.max_cardinality + 1
        else:
            return limit
        if product >= limit:
            return limit
    return min(limit, product + 1)


def _accepts(attribute: Attribute, value: object) -> bool:
    """Whether a JSON ``value`` is of the attribute's type and, for an enum, one of its values."""
    kind = attribute.type
    if kind == "string":
        ok = isinstance(value, str)
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif isinstance(value, bool):
        ok = False
    elif kind == "int":
        ok = isinstance(value, int)
    else:
        ok = isinstance(value, (int, float))
    if not ok or not attribute.values:
        return ok
    return value in attribute.typed_values()


_MISSING: Final = object()


def _first(item: tuple[str, object]) -> str:
    return item[0]


def _as_written(value: object) -> str:
    """A JSON value as catalog tables write it (``true``, ``3``, ``step``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _shown(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Budgets:
    """Attribute keys, values and the budget of every series' points, as the tee checks them.

    Per series, the admitted attribute sets are counted up to its budget
    (:func:`series_budget`) and the values of each open attribute with a
    ``max_cardinality`` up to that count; counting stops there, so memory is
    bounded by the catalog whatever the log holds.
    """

    def __init__(self, catalog: Catalog) -> None:
        self.attributes = catalog.attributes()
        self.sets: dict[str, set[tuple[tuple[str, object], ...]]] = {}
        self.values: dict[tuple[str, str], set[object]] = {}
        self.limits: dict[str, int] = {}
        self.over: set[tuple[str, str]] = set()
        self.derived: dict[str, tuple[AttributeRef, ...]] = {}
        self.required: dict[str, tuple[str, ...]] = {}
        self.clean: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        """(series, captures) whose point was admitted without a problem (up to a cap)."""

    def _missing(self, row: MetricRow, checked: Mapping[str, object]) -> list[tuple[str, str, str]]:
        """A ``missing_attribute`` problem per required attribute the point lacks."""
        required = self.required.get(row.name)
        if required is None:
            required = tuple(r.name for r in row.attributes if r.requirement_level == "required")
            self.required[row.name] = required
        return [
            (
                "missing_attribute",
                name,
                f"has no value for its required attribute {name!r}; the tee keeps the point "
                "without it, so queries grouping by it miss the point: pass it on every "
                "point (or capture it from the logger key), or lower its requirement_level",
            )
            for name in required
            if name not in checked
        ]

    def _derived(self, row: MetricRow) -> tuple[AttributeRef, ...]:
        """The row's derived attributes, each after the attributes it reads (cached per row)."""
        found = self.derived.get(row.name)
        if found is not None:
            return found
        pending = [ref for ref in row.attributes if ref.derive is not None]
        done = {ref.name for ref in row.attributes if ref.derive is None}
        ordered: list[AttributeRef] = []
        while pending:
            ready = [ref for ref in pending if ref.derive is not None and ref.derive.source in done]
            if not ready:  # a cycle or an unknown source: validate reports both
                break
            for ref in ready:
                ordered.append(ref)
                done.add(ref.name)
                pending.remove(ref)
        self.derived[row.name] = found = tuple(ordered)
        return found

    def check(
        self, row: MetricRow, given: Mapping[str, object], captured: Mapping[str, str]
    ) -> list[tuple[str, str, str]]:
        """``(kind, attribute, text)`` of what the tee would drop or fold for this point."""
        problems: list[tuple[str, str, str]] = []
        if not given and not captured:
            # The attribute-less set is always within the budget; only a required
            # attribute can be wanting.
            problems.extend(self._missing(row, {}))
            return problems
        if not given:
            # A family key seen before with the same captures and no attributes
            # was admitted cleanly: the same input gives the same set.
            memo = (row.name, tuple(captured.items()))
            if memo in self.clean:
                return problems
        checked: dict[str, object] = dict(captured)
        declared = row.attribute_names() if given else ()
        for key, value in given.items():
            if key in checked:
                continue  # a captured value wins, as in the tee
            attribute = self.attributes.get(key) if key in declared else None
            if attribute is None:
                listed = ", ".join(declared) if declared else "none"
                problems.append(
                    (
                        "undeclared_attribute",
                        key,
                        f"carries attribute {key!r}, which its row does not declare "
                        f"(declared: {listed}); the tee drops it from the point: declare it "
                        "in the row's attributes, or stop passing it",
                    )
                )
                continue
            if not _accepts(attribute, value):
                if attribute.values:
                    listed = ", ".join(v.value for v in attribute.values[:8])
                    more = ", ..." if len(attribute.values) > 8 else ""
                    allowed = f"one of the {attribute.type} values {listed}{more}"
                else:
                    allowed = f"values of type {attribute.type}"
                problems.append(
                    (
                        "attribute_value",
                        key,
                        f"carries {key}={_shown(value)}, but the attribute takes {allowed}; "
                        "the tee drops the attribute from the point: pass an allowed value, "
                        "or add it to the attribute",
                    )
                )
                continue
            checked[key] = value
        for ref in self._derived(row):
            derive = ref.derive
            found = checked.get(derive.source, _MISSING) if derive is not None else _MISSING
            if derive is not None and found is not _MISSING:
                derived = derive.lookup(_as_written(found))
                if derived is not None:
                    checked[ref.name] = derived  # replaces a passed value, as in the tee
        problems.extend(self._missing(row, checked))
        over = self._admit(row, checked)
        if over is not None:
            problems.append(over)
        elif not problems and not given and len(self.clean) < MAX_FAMILY_KEYS:
            admitted = self.sets.get(row.name)
            if admitted is not None and tuple(sorted(checked.items(), key=_first)) in admitted:
                self.clean.add((row.name, tuple(captured.items())))
        return problems

    def _admit(self, row: MetricRow, checked: dict[str, object]) -> tuple[str, str, str] | None:
        """Count the point's attribute set; the budget finding when it would overflow."""
        name = row.name
        chosen = tuple(sorted(checked.items(), key=_first))
        sets = self.sets.get(name)
        if sets is None:
            sets = self.sets[name] = {()}
            self.limits[name] = series_budget(row, self.attributes)
        if chosen in sets:
            return None
        for key, value in chosen:
            attribute = self.attributes.get(key)
            budget = None if attribute is None else attribute.max_cardinality
            if attribute is None or attribute.values or budget is None:
                continue
            seen = self.values.setdefault((name, key), set())
            if value not in seen and len(seen) >= min(budget, MAX_TRACKED_VALUES):
                return self._over(
                    (name, key),
                    f"got more than {budget} distinct values of {key} (its max_cardinality), "
                    f"first over it {_shown(value)}; the tee folds further values into one "
                    "overflow point: raise the budget or log fewer values",
                )
        limit = self.limits[name]
        if len(sets) >= limit - 1:
            return self._over(
                (name, ""),
                f"got more distinct attribute sets than its budget of {limit} (the attribute-"
                "less set and the overflow point included; the row's cardinality_limit, "
                f"bounded by its enums), first over it {dict(chosen)!r}; the tee folds further "
                "sets into one overflow point: raise cardinality_limit or log fewer sets",
            )
        for key, value in chosen:
            seen_values = self.values.get((name, key))
            if seen_values is not None:
                seen_values.add(value)
        sets.add(chosen)
        return None

    def _over(self, slot: tuple[str, str], text: str) -> tuple[str, str, str] | None:
        """The budget finding, the first time ``slot`` overflows (later ones are folded)."""
        if slot in self.over:
            return None
        self.over.add(slot)
        return ("attribute_budget", slot[1], text)


class _Presence:
    """Which loop the run is: the ``--loop`` flag, a record's ``"loop"``, or signature keys.

    Memory is bounded by the catalog's loops and their signature keys.
    """

    def __init__(self, catalog: Catalog, forced: str | None) -> None:
        self.loops = catalog.loops()
        self.forced = forced
        self.declared = {loop.name for loop in self.loops}
        self.named: str | None = None
        self.named_line = 0
        self.last_step: int | None = None
        # A signature key ``a/b/c`` is the logged (prefix, key) ("a", "b/c"),
        # ("a/b", "c") or ("", "a/b/c"): the backends join them with '/'.
        self.signature_keys: dict[tuple[str, str], str] = {}
        for declared in self.loops:
            for qualified in declared.signature:
                self.signature_keys[("", qualified)] = qualified
                for cut, char in enumerate(qualified):
                    if char == "/":
                        split = (qualified[:cut], qualified[cut + 1 :])
                        self.signature_keys[split] = qualified
        self.seen: set[str] = set()

    def seen_signature(self, prefix: str, key: str) -> None:
        self.seen.add(self.signature_keys[(prefix, key)])

    def name(self, loop: str, line_no: int) -> str | None:
        """A record names its loop: the finding kind it raises, if any.

        The first declared name wins; an undeclared name is ``unknown_loop``, a
        declared one other than the first is ``loop_conflict``.
        """
        if loop == self.named:
            return None
        if loop not in self.declared:
            return "unknown_loop"
        if self.named is None:
            self.named, self.named_line = loop, line_no
            return None
        return "loop_conflict"

    def choose(self) -> LoopChoice:
        if self.forced is not None:
            return LoopChoice(self.forced, "flag")
        if self.named is not None:
            return LoopChoice(self.named, "log")
        best: list[tuple[int, float, str, tuple[str, ...]]] = []
        for loop in self.loops:
            evidence = tuple(k for k in loop.signature if k in self.seen)
            if evidence:
                share = len(evidence) / len(loop.signature)
                best.append((len(evidence), share, loop.name, evidence))
        best.sort(key=lambda item: (-item[0], -item[1], item[2]))
        if not best:
            return LoopChoice(None, "unknown")
        tied = tuple(item[2] for item in best if item[:2] == best[0][:2])
        if len(tied) > 1:
            return LoopChoice(None, "unknown", tied)
        return LoopChoice(best[0][2], "inferred", best[0][3])


def _as_number(value: object) -> float | None:
    """The float the tee would export, mirroring ``as_scalar`` on decoded JSON values."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float
        return None


def _describe(value: object) -> str:
    if isinstance(value, dict) and isinstance(value.get("__type__"), str):
        return f"an unconvertible {value['__type__']} object"
    if isinstance(value, (list, dict)):
        return f"a JSON {'array' if isinstance(value, list) else 'object'}"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"a string ({value[:20]!r})"
    if isinstance(value, bool):
        return f"a bool ({'true' if value else 'false'})"
    if isinstance(value, int):
        return "an integer too large for a float"
    return f"a {type(value).__name__}"


@dataclass(frozen=True, slots=True)
class _Line:
    """One well-formed record: a ``log_metrics`` call, or a point (``series`` set)."""

    step: int
    prefix: str
    metrics: dict[str, object]
    loop: str | None
    attributes: dict[str, object]
    series: str | None = None
    value: object = None


def _parse(raw: bytes) -> _Line | str:
    """A record, or why the line is not one.

    A ``log_metrics`` line has ``step``, ``prefix`` and ``metrics``; a point line
    has ``step``, ``series`` and ``value`` instead. Both may carry ``"loop"``
    (the training loop's name), ``"worker"`` and ``"attributes"`` (an object).
    """
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return f"invalid JSON ({exc})"
    if not isinstance(doc, dict):
        return f"expected an object, got a JSON {type(doc).__name__}"
    step = doc.get("step")
    if isinstance(step, bool) or not isinstance(step, int):
        return '"step" must be an integer'
    loop = doc.get("loop")
    if loop is not None and not isinstance(loop, str):
        return '"loop" must be a string (the training loop\'s name) when present'
    attributes = doc.get("attributes", {})
    if not isinstance(attributes, dict):
        return '"attributes" must be an object (attribute name -> value) when present'
    if "series" in doc:
        series = doc["series"]
        if "metrics" in doc:
            return 'a line has "metrics" (a log_metrics call) or "series" (a point), not both'
        if not isinstance(series, str) or not series:
            return '"series" must be a non-empty string (a declared series name)'
        if "value" not in doc:
            return 'a point line ("series") needs a "value"'
        return _Line(step, "", {}, loop, attributes, series, doc["value"])
    prefix, metrics = doc.get("prefix"), doc.get("metrics")
    if not isinstance(prefix, str):
        return '"prefix" must be a string'
    if not isinstance(metrics, dict):
        return '"metrics" must be an object'
    return _Line(step, prefix, metrics, loop, attributes)


def check_stream(
    stream: BinaryIO,
    catalog: Catalog,
    *,
    source: str = "<stream>",
    all_owners: bool = False,
    loop: str | None = None,
) -> LiveCheckReport:
    """Check a JSONL stream against ``catalog``'s teed rows, one line at a time.

    ``loop`` judges the run as that declared loop instead of the one the log
    names or its keys suggest. ``all_owners`` judges unlogged rows of owners
    that logged nothing too, instead of listing those owners as inactive.
    """
    checker = _Checker(catalog, source, all_owners=all_owners, loop=loop)
    line_no = 0
    for line_no, raw in bounded_lines(stream):
        if raw is None:
            checker.malformed_line(line_no, f"longer than {MAX_LINE_BYTES} bytes")
            continue
        if not raw.strip():
            continue
        parsed = _parse(raw)
        if isinstance(parsed, str):
            checker.malformed_line(line_no, parsed)
            continue
        checker.report.records += 1
        checker.take(line_no, parsed)
    checker.report.lines = line_no
    return checker.finish()


def bounded_lines(stream: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, raw line)`` of a JSONL stream, in bounded memory.

    A line longer than :data:`MAX_LINE_BYTES` comes back as ``None``: its rest is
    skipped in bounded chunks instead of being held.
    """
    line_no = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        line_no += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield line_no, None
            continue
        yield line_no, raw


def check_file(
    path: str, catalog: Catalog, *, all_owners: bool = False, loop: str | None = None
) -> LiveCheckReport:
    """Check the JSONL log at ``path``; raises :class:`OSError` when it cannot be read."""
    with open(path, "rb") as stream:
        return check_stream(stream, catalog, source=path, all_owners=all_owners, loop=loop)
