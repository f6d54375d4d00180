"""Compare a catalog with a baseline: what was added, removed, renamed or changed, and what breaks.

The stability level a row had in the *baseline* decides which rules apply,
because that is the promise consumers (dashboards, alerts, recording rules)
relied on. A ``stable`` series is never renamed, removed, or changes kind or
unit: it is deprecated first, and removed in a later change once the baseline
already marks it deprecated. A ``beta`` series may change kind or unit only
while it carries a deprecation, so docs and the generated constant warn
readers; a ``release_candidate`` series keeps beta's promises. A rename this
change starts or completes (``replaced_by``) must keep kind and unit, or moving
a query to the replacement silently changes its meaning.

Rows are matched by series name. A baseline row missing from the new catalog
counts as renamed when a deprecation names its replacement (``replaced_by`` on
the baseline side) or when a new row now takes its qualified logger key (the
same logged value, teed under another name); otherwise it is removed. A row
kept in the new catalog and newly deprecated with ``replaced_by`` is a rename
in progress.

Every rule has a stable code (:data:`RULES`); breaking ones are errors and make
``python -m codegen diff`` exit 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final, Literal

from metric_catalog.series_rules import (
    ATTRIBUTE_REQUIREMENT_LEVELS,
    PRESENCE_LEVELS,
    STABILITY_LEVELS,
    next_scheduled,
)
from metric_catalog.value_rules import ValueRange

from .catalog.diagnostics import Diagnostic, Position, Severity, format_diagnostics, has_errors
from .catalog.model import (
    Attribute,
    Catalog,
    Deprecation,
    Derivation,
    MetricRow,
)
from .catalog.precedence import row_choice
from .catalog.schedule import describe

__all__ = [
    "COMPARED_FIELDS",
    "RULES",
    "DiffReport",
    "FieldChange",
    "Rename",
    "Rule",
    "diff_catalogs",
]

COMPARED_FIELDS: Final[tuple[str, ...]] = (
    "section",
    "kind",
    "unit",
    "logger_key",
    "prefix",
    "stability",
    "description",
    "deprecated",
    "requirement_level",
    "emitted_by",
    "schedule",
    "other_prefixes",
    "attributes",
    "cardinality_limit",
    "temporality",
    "logged_unit",
    "range",
    "goal",
    "value_type",
    "sum_of",
    "non_finite",
)
"""Row fields whose change the report lists, in report order."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One compatibility rule: its stable code, severity, and the promise it protects."""

    code: str
    severity: Severity
    text: str


def _rule(code: str, severity: Severity, text: str) -> tuple[str, Rule]:
    return code, Rule(code, severity, text)


RULES: Final[dict[str, Rule]] = dict(
    [
        _rule(
            "STABLE_REMOVED",
            Severity.ERROR,
            "a stable series is never removed; deprecate it first and remove it in a later "
            "change, once the baseline marks it deprecated",
        ),
        _rule(
            "STABLE_RENAMED",
            Severity.ERROR,
            "a stable series is never renamed; keep it, add the new series and deprecate the "
            "old one with replaced_by, then remove it in a later change",
        ),
        _rule(
            "STABLE_KIND_CHANGED",
            Severity.ERROR,
            "a stable series never changes kind; add a new series and deprecate this one",
        ),
        _rule(
            "STABLE_UNIT_CHANGED",
            Severity.ERROR,
            "a stable series never changes unit; add a new series and deprecate this one",
        ),
        _rule(
            "STABLE_TEMPORALITY_CHANGED",
            Severity.ERROR,
            "a stable series never changes temporality: a running total read as deltas "
            "(or the other way round) makes the exported counter wrong; add a new series "
            "and deprecate this one",
        ),
        _rule(
            "STABLE_RANGE_NARROWED",
            Severity.ERROR,
            "a stable series never narrows the range its values lie in (nor starts asking "
            "for integers, nor drops non_finite: allowed): values the code logs today would "
            "turn out_of_range (or non_finite) and alerts fire; add a new series and "
            "deprecate this one, or keep the range",
        ),
        _rule(
            "STABLE_GOAL_CHANGED",
            Severity.ERROR,
            "a stable series keeps its goal: W&B summaries, sweeps and dashboards read "
            "better as bigger or smaller; add a new series and deprecate this one",
        ),
        _rule(
            "STABILITY_DOWNGRADED",
            Severity.ERROR,
            "stability never goes down from stable; deprecate the series instead",
        ),
        _rule(
            "STABLE_LOGGER_KEY_CHANGED",
            Severity.ERROR,
            "a stable series keeps its logger key and prefix: code that logs the old key "
            "stops exporting it; add a new series under the new key and deprecate this one "
            "with replaced_by",
        ),
        _rule(
            "STABLE_LOGGED_UNIT_CHANGED",
            Severity.ERROR,
            "a stable series keeps the unit its code logs (unit: ms, exported in s): the "
            "generated row scales by it, so code still logging the old unit exports values "
            "off by the ratio; add a new series and deprecate this one",
        ),
        _rule(
            "BETA_LOGGED_UNIT_CHANGED",
            Severity.ERROR,
            "a beta series changes the unit its code logs only while deprecated (code still "
            "logging the old unit exports values off by the ratio); add a deprecated: block "
            "saying why (or add a new series)",
        ),
        _rule(
            "BETA_KIND_CHANGED",
            Severity.ERROR,
            "a beta series changes kind only while deprecated; add a deprecated: block "
            "saying why (or add a new series)",
        ),
        _rule(
            "BETA_UNIT_CHANGED",
            Severity.ERROR,
            "a beta series changes unit only while deprecated; add a deprecated: block "
            "saying why (or add a new series)",
        ),
        _rule(
            "BETA_TEMPORALITY_CHANGED",
            Severity.ERROR,
            "a beta series changes temporality only while deprecated; add a deprecated: "
            "block saying why (or add a new series)",
        ),
        _rule(
            "BETA_LOGGER_KEY_CHANGED",
            Severity.WARNING,
            "code that logs a beta series' old logger key stops exporting it; change every "
            "log_metrics call site in the same change",
        ),
        _rule(
            "RENAME_KIND_CHANGED",
            Severity.ERROR,
            "a renamed deprecation (replaced_by) keeps the kind; point replaced_by at a "
            "series of the same kind, or drop replaced_by and explain in note",
        ),
        _rule(
            "RENAME_UNIT_CHANGED",
            Severity.ERROR,
            "a renamed deprecation (replaced_by) keeps the unit; point replaced_by at a "
            "series with the same unit, or drop replaced_by and explain in note",
        ),
        _rule(
            "REPLACEMENT_MISSING",
            Severity.WARNING,
            "replaced_by names a series the catalog does not declare; add it or fix the name",
        ),
        # Attributes, enum values, key families and derivations.
        _rule(
            "STABLE_ATTRIBUTE_REMOVED",
            Severity.ERROR,
            "a stable series never loses an attribute: queries that group or filter by it "
            "break; keep it, or add a new series and deprecate this one",
        ),
        _rule(
            "BETA_ATTRIBUTE_REMOVED",
            Severity.WARNING,
            "queries that group or filter a beta series by this attribute break; change "
            "them in the same change",
        ),
        _rule(
            "STABLE_ENUM_VALUE_REMOVED",
            Severity.ERROR,
            "an attribute of a stable series never loses an enum value: points that carry "
            "it are dropped and queries on it go empty; keep the value, or add a new series",
        ),
        _rule(
            "BETA_ENUM_VALUE_REMOVED",
            Severity.WARNING,
            "points of a beta series that carry the removed value are dropped; change every "
            "producer and query in the same change",
        ),
        _rule(
            "STABLE_PATTERN_CHANGED",
            Severity.ERROR,
            "a stable series keeps its key family and prefixes: keys the old pattern "
            "matched stop exporting; add a new series and deprecate this one with "
            "replaced_by",
        ),
        _rule(
            "BETA_PATTERN_CHANGED",
            Severity.WARNING,
            "keys a beta series' old pattern or prefixes matched stop exporting; change "
            "every log_metrics call site in the same change",
        ),
        _rule(
            "STABLE_DERIVATION_CHANGED",
            Severity.ERROR,
            "a stable series keeps how the tee derives an attribute: points that had a "
            "value get another one or none, and queries filtering on it silently change; "
            "keep the table (adding entries for unmapped values is fine), or add a new "
            "series",
        ),
        _rule(
            "BETA_DERIVATION_CHANGED",
            Severity.WARNING,
            "points of a beta series get another derived value, or none, for a source "
            "value they had one for; change every query on the attribute in the same change",
        ),
        _rule(
            "STABLE_ATTRIBUTE_REQUIREMENT_RAISED",
            Severity.ERROR,
            "a stable series never raises an attribute's requirement level (nor gains a "
            "required attribute): producers that omit it stop conforming; keep the level, "
            "or add a new series",
        ),
        _rule(
            "BETA_ATTRIBUTE_REQUIREMENT_RAISED",
            Severity.WARNING,
            "producers of a beta series that omit this attribute stop conforming; change "
            "them in the same change",
        ),
        _rule(
            "STABLE_REQUIREMENT_RAISED",
            Severity.ERROR,
            "a stable series never asks more of the loops that log it; a loop that "
            "does not log it would start failing live-check: keep the level (and "
            "emitted_by and schedule), or add a new series",
        ),
        _rule(
            "BETA_REQUIREMENT_RAISED",
            Severity.WARNING,
            "a beta series asks more of the loops that log it; check every loop in "
            "emitted_by logs it, or live-check reports it missing",
        ),
        _rule(
            "STABLE_SHARED_KEY_SCOPE_CHANGED",
            Severity.ERROR,
            "a stable series shares its logger key with rows of other loops (or rows the "
            "run's configuration chooses between), and its emitted_by (or its condition) "
            "changed: the tee and live-check now route the key of some runs to another row; "
            "keep them, or add a new series",
        ),
        _rule(
            "BETA_SHARED_KEY_SCOPE_CHANGED",
            Severity.WARNING,
            "a beta series shares its logger key with rows of other loops (or rows the "
            "run's configuration chooses between), and its emitted_by (or its condition) "
            "changed: some runs' key now feeds another row; tell its consumers",
        ),
        _rule(
            "STABILITY_LOWERED",
            Severity.WARNING,
            "stability went down (below stable); tell the consumers who relied on beta or "
            "alpha that they lose that promise",
        ),
    ]
)
"""Every diff rule by code. Codes are stable: tooling may match on them."""


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of one row that differs between baseline and new catalog."""

    name: str
    field: str
    old: str | None
    new: str | None
    position: Position

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with stable keys."""
        return {
            "name": self.name,
            "field": self.field,
            "old": self.old,
            "new": self.new,
            "source": str(self.position),
        }


@dataclass(frozen=True, slots=True)
class Rename:
    """A series moving to a new name.

    ``completed`` is true when the old name is gone from the new catalog, false
    while the old row is kept and deprecated. ``via`` says how the pair was
    found: a ``replaced_by`` deprecation, or the replacement taking the old
    row's qualified logger key.
    """

    old_name: str
    new_name: str
    via: Literal["replaced_by", "logger_key"]
    completed: bool
    position: Position

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with stable keys."""
        return {
            "from": self.old_name,
            "to": self.new_name,
            "via": self.via,
            "completed": self.completed,
            "source": str(self.position),
        }


def _identity(position: Position) -> Position:
    return position


def _row_json(row: MetricRow, position: Position) -> dict[str, object]:
    return {
        "name": row.name,
        "section": row.section,
        "kind": row.kind,
        "unit": row.unit,
        "logged_unit": row.declared_unit,
        "stability": row.stability,
        "logger_key": row.qualified_logger_key or None,
        "source": str(position),
    }


@dataclass(frozen=True, slots=True)
class DiffReport:
    """What changed between two catalogs, and the rule findings (errors are breaking)."""

    against: str
    added: tuple[MetricRow, ...]
    removed: tuple[MetricRow, ...]
    """Baseline rows; their positions point into the baseline."""
    renamed: tuple[Rename, ...]
    changed: tuple[FieldChange, ...]
    diagnostics: tuple[Diagnostic, ...]
    baseline_position: Callable[[Position], Position] = field(default=_identity, compare=False)
    """How positions of baseline rows are shown (e.g. prefixed with the git ref)."""

    @property
    def breaking(self) -> bool:
        """True when any rule finding is an error."""
        return has_errors(self.diagnostics)

    @property
    def empty(self) -> bool:
        """True when nothing changed and no rule fired."""
        return not (self.added or self.removed or self.renamed or self.changed or self.diagnostics)

    def to_json(self) -> str:
        """The report as indented JSON with sorted keys (byte-stable for equal reports)."""
        ordered = sorted(self.diagnostics, key=Diagnostic.sort_key)
        doc = {
            "against": self.against,
            "summary": {
                "added": len(self.added),
                "removed": len(self.removed),
                "renamed": len(self.renamed),
                "changed": len(self.changed),
                "errors": sum(d.severity is Severity.ERROR for d in ordered),
                "warnings": sum(d.severity is Severity.WARNING for d in ordered),
            },
            "ok": not self.breaking,
            "added": [_row_json(r, r.position) for r in self.added],
            "removed": [_row_json(r, self.baseline_position(r.position)) for r in self.removed],
            "renamed": [r.to_json() for r in self.renamed],
            "changed": [c.to_json() for c in self.changed],
            "findings": [d.to_json() for d in ordered],
        }
        return json.dumps(doc, indent=2, sort_keys=True)

    def to_text(self) -> str:
        """A human report: one line per change, then the findings with their rule codes."""
        lines = [
            f"catalog diff against {self.against}: {len(self.added)} added, "
            f"{len(self.removed)} removed, {len(self.renamed)} renamed, "
            f"{len(self.changed)} changed"
        ]
        for row in self.added:
            lines.append(f"  + {row.name} ({row.kind}, {row.unit or '-'}, {row.stability})")
        for row in self.removed:
            lines.append(f"  - {row.name} ({row.kind}, {row.unit or '-'}, {row.stability})")
        for rename in self.renamed:
            state = "done" if rename.completed else "in progress, old row deprecated"
            lines.append(f"  > {rename.old_name} -> {rename.new_name} (via {rename.via}; {state})")
        for change in self.changed:
            lines.append(f"  ~ {change.name}: {change.field} {change.old!r} -> {change.new!r}")
        if self.diagnostics:
            lines.append(format_diagnostics(self.diagnostics))
        else:
            lines.append("no compatibility findings")
        return "\n".join(lines)


def _deprecation_text(dep: Deprecation | None) -> str | None:
    if dep is None:
        return None
    text = f"since {dep.since}" if dep.since else "deprecated"
    if dep.replaced_by:
        text += f", replaced by {dep.replaced_by}"
    if dep.note:
        text += f": {dep.note}"
    return text


def _schedule_text(row: MetricRow) -> str | None:
    """A teed row's ``first_step`` and ``every`` schedule as text (``None``: every step)."""
    parts = []
    first = row.first_step if row.first_step is not None else row.first_step_config
    if first is not None:
        parts.append(f"from step {first}")
    every = row.every if row.every is not None else row.every_config
    if every is not None:
        parts.append(describe(every, row.phase, row.at_last_step))
    return ", ".join(parts) or None


def _earliest_due(row: MetricRow) -> int | None:
    """The first step a run counting from 1 must reach for the row to be due; ``None``
    when a configuration value decides it (or a period that is not positive)."""
    if row.first_step_config is not None or row.every_config is not None:
        return None
    first = row.first_step if row.first_step is not None else 1
    return first if row.every is None else next_scheduled(row.every, row.phase, first)


def _field_value(row: MetricRow, field_name: str) -> str | None:
    if field_name == "schedule":
        return _schedule_text(row)
    if field_name == "deprecated":
        return _deprecation_text(row.deprecated)
    if field_name == "emitted_by":
        return ", ".join(row.emitted_by) if row.emitted_by else None
    if field_name == "requirement_level" and row.section != "teed":
        return None
    if field_name == "other_prefixes":
        return ", ".join(repr(p) for p in row.other_prefixes) or None
    if field_name == "attributes":
        return (
            ", ".join(
                f"{a.name} ({a.requirement_level}"
                + (f"; values {', '.join(a.values)})" if a.values else ")")
                for a in row.attributes
            )
            or None
        )
    if field_name == "logged_unit":
        return row.declared_unit if row.logged_unit else None
    if field_name == "range":
        # As written: a unit's default changes with the unit, which is listed already.
        found = row.declared_range
        return None if found is None else found.text()
    if field_name in ("goal", "sum_of"):
        value = getattr(row, field_name)
        return ", ".join(value) if isinstance(value, tuple) and value else (value or None)
    value = getattr(row, field_name)
    return None if value is None else str(value)


def _tier(stability: str) -> str | None:
    """The promise a stability level makes: ``stable``, ``beta`` (a release candidate
    keeps beta's, as it may still change before stable), or ``None``."""
    if stability == "stable":
        return "stable"
    return "beta" if stability in ("beta", "release_candidate") else None


def _level(stability: str) -> int:
    # Unknown levels (a newer schema) sort lowest so they never claim a promise.
    return STABILITY_LEVELS.index(stability) if stability in STABILITY_LEVELS else -1


class _Findings:
    """Collects rule findings as diagnostics with the rule text appended."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(self, code: str, what: str, position: Position) -> None:
        rule = RULES[code]
        self.items.append(Diagnostic(code, rule.severity, f"{what}: {rule.text}", position))


def _rename_pairs(
    old_rows: dict[str, MetricRow], new_rows: dict[str, MetricRow]
) -> dict[str, tuple[str, Literal["replaced_by", "logger_key"], bool]]:
    """Old name -> (new name, via, completed) for every rename the two sides show."""
    pairs: dict[str, tuple[str, Literal["replaced_by", "logger_key"], bool]] = {}
    new_by_key = {r.qualified_logger_key: r for r in new_rows.values() if r.logger_key}
    claimed = set(new_rows) - set(old_rows)
    for name, old in old_rows.items():
        new = new_rows.get(name)
        if new is not None:
            # Kept row: a rename is in progress when its replacement is new or changed.
            dep = new.deprecated
            old_target = old.deprecated.replaced_by if old.deprecated else None
            if dep is not None and dep.replaced_by and dep.replaced_by != old_target:
                pairs[name] = (dep.replaced_by, "replaced_by", False)
            continue
        target = old.deprecated.replaced_by if old.deprecated else None
        if target and target in new_rows:
            pairs[name] = (target, "replaced_by", True)
            continue
        heir = new_by_key.get(old.qualified_logger_key) if old.logger_key else None
        if heir is not None and heir.name in claimed:
            pairs[name] = (heir.name, "logger_key", True)
            claimed.discard(heir.name)
    return pairs


def diff_catalogs(
    baseline: Catalog,
    catalog: Catalog,
    *,
    against: str = "baseline",
    baseline_position: Callable[[Position], Position] | None = None,
) -> DiffReport:
    """Compare ``catalog`` with ``baseline`` and apply every rule in :data:`RULES`.

    ``against`` names the baseline in the report; ``baseline_position`` maps a
    baseline row's position to how the report shows it (for example prefixed
    with the git ref), since those rows are not in the working tree.
    """
    to_report = baseline_position or _identity
    old_rows = {row.name: row for _, row in baseline.rows()}
    new_rows = {row.name: row for _, row in catalog.rows()}
    pairs = _rename_pairs(old_rows, new_rows)
    rename_targets = {new_name for new_name, _, _ in pairs.values()}
    added = tuple(
        new_rows[n] for n in sorted(new_rows) if n not in old_rows and n not in rename_targets
    )
    changes = _Changes(
        old_rows, new_rows, pairs, (baseline.attributes(), catalog.attributes()), to_report
    )
    for name in sorted(old_rows):
        changes.compare(name)
    findings = changes.findings
    for name, (target, via, completed) in sorted(pairs.items()):
        if via != "replaced_by":
            continue
        if completed:
            # The old row is gone, so the rename rule compares its last known shape.
            _check_replacement(old_rows[name], target, new_rows.get(target), findings, to_report)
        else:
            _check_replacement(new_rows[name], target, new_rows.get(target), findings)

    return DiffReport(
        against=against,
        added=added,
        removed=tuple(changes.removed),
        renamed=tuple(changes.renamed),
        changed=tuple(changes.changed),
        diagnostics=tuple(sorted(set(findings.items), key=Diagnostic.sort_key)),
        baseline_position=to_report,
    )


class _Changes:
    """The rows removed, renamed and changed between two catalogs, and the rules' findings."""

    def __init__(
        self,
        old_rows: dict[str, MetricRow],
        new_rows: dict[str, MetricRow],
        pairs: dict[str, tuple[str, Literal["replaced_by", "logger_key"], bool]],
        attributes: tuple[dict[str, Attribute], dict[str, Attribute]],
        to_report: Callable[[Position], Position],
    ) -> None:
        self.old_rows, self.new_rows, self.pairs = old_rows, new_rows, pairs
        self.attributes = attributes
        self.shared = (_shared_keys(old_rows.values()), _shared_keys(new_rows.values()))
        """The logged keys more than one teed row declares, in the baseline and now."""
        self.to_report = to_report
        self.findings = _Findings()
        self.removed: list[MetricRow] = []
        self.renamed: list[Rename] = []
        self.changed: list[FieldChange] = []

    def compare(self, name: str) -> None:
        """One baseline row: renamed, removed, or kept with its changed fields judged."""
        old = self.old_rows[name]
        new = self.new_rows.get(name)
        stable = old.stability == "stable" and old.deprecated is None
        if name in self.pairs:
            self._renamed(name, new, stable=stable)
        if new is None:
            if name not in self.pairs:
                self._removed(old, stable=stable)
            return
        for field_name in COMPARED_FIELDS:
            before, after = _field_value(old, field_name), _field_value(new, field_name)
            if before != after:
                self.changed.append(
                    FieldChange(name, field_name, before, after, new.where(field_name))
                )
        _check_kept_row(old, new, self.findings)
        _check_scope(old, new, self.shared, self.findings)
        _check_attributes(old, new, self.attributes, self.findings)

    def _renamed(self, name: str, new: MetricRow | None, *, stable: bool) -> None:
        """A rename in progress (``new`` kept) or completed (a stable one is a finding)."""
        target, via, completed = self.pairs[name]
        where = new.where("deprecated") if new is not None else self.new_rows[target].position
        self.renamed.append(Rename(name, target, via, completed, where))
        if completed and stable:
            self.findings.add(
                "STABLE_RENAMED",
                f"stable series {name} was renamed to {target} without a deprecation "
                f"in the baseline (found via {via})",
                self.new_rows[target].position,
            )

    def _removed(self, old: MetricRow, *, stable: bool) -> None:
        """A row gone without a rename: its named successor is checked; a stable one is a
        finding."""
        self.removed.append(old)
        successor = old.deprecated.replaced_by if old.deprecated else None
        if successor:
            _check_replacement(old, successor, None, self.findings, self.to_report)
        if stable:
            self.findings.add(
                "STABLE_REMOVED",
                f"stable series {old.name} was removed",
                self.to_report(old.position),
            )


def _check_logger_key(old: MetricRow, new: MetricRow, findings: _Findings) -> None:
    """A kept teed row no longer teed under a key it had: code logging that key stops exporting."""
    if old.deprecated is not None:
        return
    if new.logger_key is not None and (old.is_family or new.is_family):
        return  # a key family: STABLE_PATTERN_CHANGED / BETA_PATTERN_CHANGED
    after = new.logged_keys
    lost = [key for key in old.logged_keys if key not in after]
    if not lost:
        return
    shown = ", ".join(repr(key) for key in lost)
    now = ", ".join(repr(key) for key in after)
    what = f"now {now}" if after else "now a recorded row"
    where = new.where("logger_key") if new.logger_key else new.position
    if new.logger_key == old.logger_key:
        where = new.where("prefixes") if "prefixes" in new.positions else new.where("prefix")
    if old.stability == "stable":
        findings.add(
            "STABLE_LOGGER_KEY_CHANGED",
            f"stable series {old.name} was logged as {shown}, {what}",
            where,
        )
    elif _tier(old.stability) == "beta":
        findings.add(
            "BETA_LOGGER_KEY_CHANGED",
            f"{old.stability} series {old.name} was logged as {shown}, {what}",
            where,
        )


def _requirement_raised(old: MetricRow, new: MetricRow) -> str | None:
    """How ``new`` asks more presence of the loops than ``old``, or ``None``.

    Raising the level to ``conditionally_required`` or ``required`` counts
    (``opt_in`` to ``recommended`` asks nothing of a run), and so does a
    ``required`` row now applying to more loops (``emitted_by`` gaining a loop,
    or dropped so every loop applies), and a ``required`` row due earlier (its
    ``first_step``, ``every`` or ``phase`` changed so a shorter run reaches it).
    """
    if old.deprecated is not None or new.deprecated is not None:
        return None
    before, after = old.requirement_level, new.requirement_level
    rank = {level: index for index, level in enumerate(PRESENCE_LEVELS)}
    accountable = ("conditionally_required", "required")
    if after in accountable and rank.get(after, -1) > rank.get(before, len(rank)):
        return f"requirement level raised {before} -> {after}"
    if before == after == "required" and old.emitted_by:
        if not new.emitted_by:
            return "required by every loop now (emitted_by dropped)"
        gained = [loop for loop in new.emitted_by if loop not in old.emitted_by]
        if gained:
            return f"required by more loops now (emitted_by gained {', '.join(gained)})"
    if before == after == "required":
        was, now = _earliest_due(old), _earliest_due(new)
        if was is not None and now is not None and now < was:
            # A run that stops between the two steps was fine and is now missing the row.
            return f"due from step {now} now (schedule), was from step {was}"
    return None


def _raised_at(raised: str, new: MetricRow) -> Position:
    """Where :func:`_requirement_raised`'s reason is written in ``new``."""
    if "schedule" in raised:
        return new.where("every" if new.every is not None else "first_step")
    return new.where("requirement_level" if "level" in raised else "emitted_by")


def _shared_keys(rows: Iterable[MetricRow]) -> frozenset[str]:
    """The logged keys (as written) that more than one teed row declares."""
    seen: set[str] = set()
    shared: set[str] = set()
    for row in rows:
        for key in row.logged_keys:
            (shared if key in seen else seen).add(key)
    return frozenset(shared)


def _check_scope(
    old: MetricRow,
    new: MetricRow,
    shared: tuple[frozenset[str], frozenset[str]],
    findings: _Findings,
) -> None:
    """An ``emitted_by`` change of a stable or beta row whose key other loops' rows share,
    or a change of the configuration value that chooses it among rows sharing its key."""
    loops_changed = set(old.emitted_by) != set(new.emitted_by)
    choices = row_choice(old), row_choice(new)
    chosen_changed = choices[0] != choices[1] and None not in choices
    if not (loops_changed or chosen_changed) or old.deprecated is not None:
        return
    keys = set(old.logged_keys) & shared[0] | set(new.logged_keys) & shared[1]
    tier = _tier(old.stability)
    if not keys or tier is None:
        return
    code = f"{tier.upper()}_SHARED_KEY_SCOPE_CHANGED"
    if loops_changed:
        before = ", ".join(old.emitted_by) or "every loop"
        after = ", ".join(new.emitted_by) or "every loop"
        findings.add(
            code,
            f"{old.stability} series {old.name} shares {', '.join(sorted(keys))} with rows of "
            f"other loops and its emitted_by changed ({before} -> {after})",
            new.where("emitted_by"),
        )
        return
    before_choice, after_choice = (choice.text() if choice else "" for choice in choices)
    findings.add(
        code,
        f"{old.stability} series {old.name} shares {', '.join(sorted(keys))} with rows the "
        f"run's configuration chooses between, and the value that chooses it changed "
        f"({before_choice} -> {after_choice}): runs configured alike now feed another row",
        new.where("condition"),
    )


def _check_kept_row(old: MetricRow, new: MetricRow, findings: _Findings) -> None:
    """Rules for a row present on both sides, by the baseline's stability."""
    name = old.name
    _check_logger_key(old, new, findings)
    raised = _requirement_raised(old, new)
    if raised is not None and _tier(old.stability) is not None:
        code = (
            "STABLE_REQUIREMENT_RAISED" if old.stability == "stable" else "BETA_REQUIREMENT_RAISED"
        )
        findings.add(code, f"{old.stability} series {name}: {raised}", _raised_at(raised, new))
    if old.stability == "stable":
        _check_values(old, new, findings)
        if new.kind != old.kind:
            findings.add(
                "STABLE_KIND_CHANGED",
                f"stable series {name} changed kind {old.kind} -> {new.kind}",
                new.where("kind"),
            )
        if new.unit != old.unit:
            findings.add(
                "STABLE_UNIT_CHANGED",
                f"stable series {name} changed unit {old.unit!r} -> {new.unit!r}",
                new.where("unit"),
            )
        if new.temporality != old.temporality:
            findings.add(
                "STABLE_TEMPORALITY_CHANGED",
                f"stable series {name} changed temporality {old.temporality} -> {new.temporality}",
                new.where("temporality"),
            )
        if new.unit == old.unit and new.declared_unit != old.declared_unit:
            findings.add(
                "STABLE_LOGGED_UNIT_CHANGED",
                f"stable series {name} changed the unit its code logs "
                f"{old.declared_unit!r} -> {new.declared_unit!r} (exported in {new.unit!r})",
                new.where("unit"),
            )
        if _level(new.stability) < _level(old.stability):
            findings.add(
                "STABILITY_DOWNGRADED",
                f"stable series {name} went down to {new.stability}",
                new.where("stability"),
            )
        return
    if _level(new.stability) < _level(old.stability):
        findings.add(
            "STABILITY_LOWERED",
            f"series {name} went down from {old.stability} to {new.stability}",
            new.where("stability"),
        )
    series = f"{old.stability} series {name}"  # beta, or a release candidate held to its rules
    if _tier(old.stability) == "beta" and old.deprecated is None and new.deprecated is None:
        if new.kind != old.kind:
            findings.add(
                "BETA_KIND_CHANGED",
                f"{series} changed kind {old.kind} -> {new.kind} without a deprecation",
                new.where("kind"),
            )
        if new.unit != old.unit:
            findings.add(
                "BETA_UNIT_CHANGED",
                f"{series} changed unit {old.unit!r} -> {new.unit!r} without a deprecation",
                new.where("unit"),
            )
        if new.temporality != old.temporality:
            findings.add(
                "BETA_TEMPORALITY_CHANGED",
                f"{series} changed temporality {old.temporality} -> "
                f"{new.temporality} without a deprecation",
                new.where("temporality"),
            )
        if new.unit == old.unit and new.declared_unit != old.declared_unit:
            findings.add(
                "BETA_LOGGED_UNIT_CHANGED",
                f"{series} changed the unit its code logs {old.declared_unit!r} -> "
                f"{new.declared_unit!r} (exported in {new.unit!r}) without a deprecation",
                new.where("unit"),
            )


def _check_values(old: MetricRow, new: MetricRow, findings: _Findings) -> None:
    """A stable row's range may widen, never narrow (nor stop allowing non-finite values);
    its goal never changes once set."""
    before, after = old.value_range, new.value_range
    # A changed unit or kind is its own finding; their defaults move with them.
    same = old.declared_unit == new.declared_unit and old.kind == new.kind
    if same and after is not None and not after.covers(before or _UNBOUNDED):
        was = "any number" if before is None else before.text()
        findings.add(
            "STABLE_RANGE_NARROWED",
            f"stable series {old.name} narrowed its range {was} -> {after.text()}",
            new.where("range" if "range" in new.positions else "value_type"),
        )
    if old.non_finite == "allowed" and new.non_finite != "allowed":
        findings.add(
            "STABLE_RANGE_NARROWED",
            f"stable series {old.name} no longer allows non-finite values (non_finite: "
            f"allowed -> {new.non_finite})",
            new.where("non_finite"),
        )
    if old.goal and new.goal != old.goal:
        findings.add(
            "STABLE_GOAL_CHANGED",
            f"stable series {old.name} changed goal {old.goal} -> {new.goal or 'none'}",
            new.where("goal"),
        )


_UNBOUNDED: Final = ValueRange()


def _check_replacement(
    row: MetricRow,
    target: str,
    replacement: MetricRow | None,
    findings: _Findings,
    to_report: Callable[[Position], Position] | None = None,
) -> None:
    """A ``replaced_by`` deprecation must name a declared series of the same kind and unit."""
    where = row.where("deprecated")
    if to_report is not None:
        where = to_report(where)
    if replacement is None:
        findings.add(
            "REPLACEMENT_MISSING",
            f"{row.name} is deprecated in favour of {target}, which is not declared",
            where,
        )
        return
    if replacement.kind != row.kind:
        findings.add(
            "RENAME_KIND_CHANGED",
            f"{row.name} ({row.kind}) is replaced by {replacement.name} ({replacement.kind})",
            where,
        )
    if replacement.unit != row.unit:
        findings.add(
            "RENAME_UNIT_CHANGED",
            f"{row.name} ({row.unit!r}) is replaced by {replacement.name} ({replacement.unit!r})",
            where,
        )


# --- attributes and key families ----------------------------------------------------------


def _promise(row: MetricRow) -> str | None:
    """``"STABLE"`` or ``"BETA"`` when the baseline row makes that promise, else ``None``."""
    if row.deprecated is not None:
        return None
    tier = _tier(row.stability)
    return None if tier is None else tier.upper()


def _check_attributes(
    old: MetricRow,
    new: MetricRow,
    declared: tuple[dict[str, Attribute], dict[str, Attribute]],
    findings: _Findings,
) -> None:
    """Attributes removed, enum values removed, requirement raised, key family changed."""
    level = _promise(old)
    if level is None:
        return
    name = f"{old.stability} series {old.name}"
    old_refs = {ref.name: ref for ref in old.attributes}
    new_refs = {ref.name: ref for ref in new.attributes}
    for attribute, old_ref in old_refs.items():
        if attribute not in new_refs:
            findings.add(
                f"{level}_ATTRIBUTE_REMOVED",
                f"{name} no longer carries attribute {attribute}",
                new.where("attributes"),
            )
            continue
        before = declared[0].get(attribute)
        after = declared[1].get(attribute)
        # As each row sees it: a ref's values that drop one lose it as much as the enum.
        before = None if before is None else old_ref.narrow(before)
        after = None if after is None else new_refs[attribute].narrow(after)
        old_values = before.domain if before is not None and before.values else None
        new_values = after.domain if after is not None else None
        gone = (
            [value for value in old_values if value not in new_values]
            if old_values is not None and new_values is not None
            else []
        )
        if before is not None and before.open_enum and new_values is not None:
            # An open enum closed: the tee now drops every value it does not list.
            gone = [
                *(v.value for v in before.values if v.value not in new_values),
                "every value it does not list (it was an open enum)",
            ]
        if gone:
            findings.add(
                f"{level}_ENUM_VALUE_REMOVED",
                f"attribute {attribute} of {name} lost the value(s) {', '.join(gone)}",
                new_refs[attribute].position,
            )
    for attribute, ref in new_refs.items():
        was = old_refs.get(attribute)
        change = _derivation_change(was.derive, ref.derive) if was is not None else None
        if change is not None:
            findings.add(
                f"{level}_DERIVATION_CHANGED",
                f"attribute {attribute} of {name}: {change}",
                ref.position,
            )
        rank_before = _requirement_rank(was.requirement_level) if was else None
        rank_after = _requirement_rank(ref.requirement_level)
        raised = rank_after < rank_before if rank_before is not None else rank_after == 0
        if raised:
            before_text = was.requirement_level if was else "absent"
            findings.add(
                f"{level}_ATTRIBUTE_REQUIREMENT_RAISED",
                f"attribute {attribute} of {name} went from {before_text} to "
                f"{ref.requirement_level}",
                ref.position,
            )
    _check_pattern(old, new, level, name, findings)


def _derivation_change(before: Derivation | None, after: Derivation | None) -> str | None:
    """How a derivation stopped giving a point the value it gave (``None``: it still does).

    New entries for source values the old table left unmapped (with no default) are
    additive and not a change.
    """
    if before is None or before == after:
        return None
    if after is None:
        return f"no longer derived from {before.source}"
    if after.source != before.source:
        return f"derived from {after.source}, no longer from {before.source}"
    changed = [
        f"{key!r}: {value!r} -> {after.lookup(key)!r}"
        for key, value in before.table
        if after.lookup(key) != value
    ]
    old_keys = {key for key, _value in before.table}
    changed += [
        f"{key!r}: {before.default!r} -> {value!r}"
        for key, value in after.table
        if key not in old_keys and before.default is not None and value != before.default
    ]
    if before.default is not None and after.default != before.default:
        changed.append(f"default: {before.default!r} -> {after.default!r}")
    if not changed:
        return None
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    return f"the table deriving it from {after.source} changed ({'; '.join(changed[:3])}{more})"


def _requirement_rank(requirement: str) -> int:
    """0 for required, higher for weaker levels (unknown ones weakest)."""
    return (
        ATTRIBUTE_REQUIREMENT_LEVELS.index(requirement)
        if requirement in ATTRIBUTE_REQUIREMENT_LEVELS
        else 99
    )


def _check_pattern(
    old: MetricRow, new: MetricRow, level: str, name: str, findings: _Findings
) -> None:
    """A key family or prefix set that no longer tees every key it did."""
    if old.logger_key is None or new.logger_key is None:
        return  # teed <-> recorded: the logger-key rules cover it
    lost = [p for p in old.prefixes if p not in new.prefixes]
    family = old.is_family or new.is_family
    if family and (old.logger_key != new.logger_key or lost):
        what = f"key {old.qualified_logger_key!r} is now {new.qualified_logger_key!r}"
        if old.logger_key == new.logger_key:
            what = f"no longer teed under prefix(es) {', '.join(repr(p) for p in lost)}"
        where = new.where("logger_key") if old.logger_key != new.logger_key else new.position
        findings.add(f"{level}_PATTERN_CHANGED", f"key family of {name}: {what}", where)
