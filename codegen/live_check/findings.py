"""Finding kinds, the one table of their severity and message, and :class:`Finding`.

A finding is every occurrence of one kind for one ``(prefix, key)`` (and
attribute), aggregated: a count, the first occurrence and the last.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, NamedTuple

from metric_catalog.series_rules import qualified_key

from ..catalog.diagnostics import Position, Severity

__all__ = [
    "ATTRIBUTE_KINDS",
    "CAPPED_KINDS",
    "DEFAULT_HINTS",
    "FINDING_KINDS",
    "FINDING_KIND_TABLE",
    "KINDS",
    "LOOP_KINDS",
    "MAX_SHOWN_KEY_CHARS",
    "PER_WORKER_KINDS",
    "RENAMED_MESSAGE",
    "Finding",
    "Kind",
    "Notice",
    "catalog_hints",
    "cut_key",
]


class Kind(NamedTuple):
    """A finding kind's severity (when ``--fail-on`` does not name it), summary and message.

    ``message`` is a :meth:`str.format` template over a finding's fields:
    ``what`` (the logged key and its series), ``key``, ``count``, ``step``,
    ``first`` (the first value and its step), ``example`` (what the judge said),
    ``catalog`` (the catalog's folder) and ``loops_file`` (the file declaring the
    loops), and, for ``missing``, ``required`` and ``fix``.
    """

    severity: Severity
    summary: str
    message: str


DEFAULT_HINTS: Final[dict[str, str]] = {
    "catalog": "catalog/",
    "loops_file": "catalog/common.yaml",
}
"""Where fixes point when the report knows no catalog (this repository's layout)."""


def catalog_hints(paths: list[str], loop_paths: list[str]) -> dict[str, str]:
    """``catalog`` and ``loops_file`` hints for a catalog of files at ``paths``.

    The catalog's folder is the deepest one holding every file (``./`` for the
    project root; ``catalog/`` in this repository, as before); the loops file is
    the first that declares loops, else the first file.
    """
    if not paths:
        return dict(DEFAULT_HINTS)
    folders = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for parts in zip(*folders, strict=False):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    folder = "/".join(common) + "/" if common else "./"
    return {"catalog": folder, "loops_file": (loop_paths or sorted(paths))[0]}


FINDING_KIND_TABLE: Final[dict[str, Kind]] = {
    "undeclared": Kind(
        Severity.WARNING,
        "A logged key no teed row declares.",
        "{what} was logged {count} time(s), first at step {step}, but no teed row declares "
        "it{example}; add a teed row to {catalog} if it should be exported",
    ),
    "missing": Kind(
        Severity.WARNING,
        "A required row that applies to the run was never logged.",
        "{what} is {required} but was never logged; {fix}",
    ),
    "non_scalar": Kind(
        Severity.WARNING,
        "A teed key logged with a value the tee cannot export.",
        "{what} was logged {count} time(s) as a non-scalar, {first}; the tee drops such "
        "values: log an int or float",
    ),
    "non_finite": Kind(
        Severity.WARNING,
        "A teed key logged as NaN or an infinity.",
        "{what} was logged {count} time(s) as NaN or infinity, {first}",
    ),
    "counter_decrease": Kind(
        Severity.WARNING,
        "A teed counter (per-step delta) logged negative.",
        "{what} is a counter (per-step delta) but was logged negative {count} time(s), "
        "{first}; a counter never goes backwards: log the step's increase, or declare the "
        "row an up_down_counter or gauge",
    ),
    "out_of_range": Kind(
        Severity.WARNING,
        "A teed value outside its row's range (declared, or its unit's default).",
        "{what} was logged {count} time(s) outside its range, {first}; a wrong unit shows "
        "this way (percent logged under unit '1', GiB under 'By'): fix the row's unit or "
        "range, or the value the code logs",
    ),
    "not_integer": Kind(
        Severity.WARNING,
        "A teed value with a fraction where its row asks for integers (`int`, `By`).",
        "{what} was logged {count} time(s) with a fraction, {first}, but its row asks for "
        "whole numbers (value_type: int, or a unit in By or bit); log whole numbers, or "
        "fix the row's value_type or unit",
    ),
    "unit_suspect": Kind(
        Severity.WARNING,
        "A value above 1 of a row in unit '1' whose name says it is a share.",
        "{what} is a share by its name, in unit '1' with no range, but was logged above 1 "
        "{count} time(s), {first}; is it logged in percent? declare unit '%' (or the "
        "row's range: range: {{}} if it may exceed 1)",
    ),
    "malformed": Kind(
        Severity.WARNING,
        "A line that is not a well-formed record.",
        "{example}",
    ),
    "attribute_value": Kind(
        Severity.WARNING,
        "An attribute value outside its enum or of another type.",
        "{what} {example}",
    ),
    "attribute_budget": Kind(
        Severity.WARNING,
        "A series got more attribute sets or values than its budget.",
        "{what} {example}",
    ),
    "unknown_loop": Kind(
        Severity.WARNING,
        "A line names a loop the catalog does not declare.",
        "{count} line(s) name loop {key!r}, first at step {step}, but the catalog declares "
        "no such loop ({example}); the loop was chosen without it: name a declared loop "
        "(JsonlLogger(loop=...) or METRIC_CATALOG_LOOP), or declare it under 'loops:' "
        "({loops_file})",
    ),
    "loop_conflict": Kind(
        Severity.WARNING,
        "Lines of one worker name different declared loops.",
        "{count} line(s) name loop {key!r}, first at step {step}, but {example}; a worker "
        "runs one loop (workers running different loops are a job of several, each judged "
        "by its own): give the worker one METRIC_CATALOG_LOOP, check each run's logs on "
        "their own, or pass --loop",
    ),
    "undeclared_series": Kind(
        Severity.WARNING,
        "A point names a series no row declares.",
        "{count} point line(s) name series {key!r}, first at step {step}, but no teed or "
        "recorded row declares it (as a name or a registry key); declare a recorded row for "
        "it in {catalog}, or fix the name",
    ),
    "undeclared_attribute": Kind(
        Severity.WARNING,
        "A point carries an attribute its row does not declare.",
        "{what} {example}",
    ),
    "missing_attribute": Kind(
        Severity.WARNING,
        "A point lacks one of its row's required attributes.",
        "{what} {example}",
    ),
    "kind_mismatch": Kind(
        Severity.WARNING,
        "Live telemetry exports a series with another instrument kind than its row.",
        "{what} {example} ({count} point(s), first in request/scrape {step})",
    ),
    "unit_mismatch": Kind(
        Severity.WARNING,
        "Live telemetry exports a series with another unit than its row.",
        "{what} {example} ({count} point(s), first in request/scrape {step})",
    ),
    "prometheus_name": Kind(
        Severity.WARNING,
        "A scrape exposes a series under another name than the catalog's translation.",
        "{what} {example} ({count} sample(s), first in scrape {step})",
    ),
    "overflow": Kind(
        Severity.WARNING,
        "Live telemetry carries a series' overflow point (past its cardinality budget).",
        "{what} {example} ({count} point(s), first in request/scrape {step})",
    ),
    "missing_identity": Kind(
        Severity.WARNING,
        "A live point lacks a promoted identity attribute.",
        "{what} {example} ({count} point(s), first in request/scrape {step})",
    ),
    "ambiguous_key": Kind(
        Severity.WARNING,
        "A logged key rows of several loops claim, in an input whose loop is not known.",
        "{what} was logged {count} time(s), first at step {step}, but rows of different "
        "loops claim it ({example}) and the loop of the input could not be decided, so it "
        "was credited to none; name the loop (JsonlLogger(loop=...), METRIC_CATALOG_LOOP "
        "or --loop), or log a signature key of the loop ({loops_file})",
    ),
    "ambiguous_rewrite": Kind(
        Severity.WARNING,
        "A logged key whose --key-rewrite readings rows take in different ways.",
        "{what} was logged {count} time(s), first at step {step}, but its readings under "
        "--key-rewrite route to different rows or values ({example}), so it was credited "
        "to none; rename the key or a row so one reading routes, or narrow the rewrite",
    ),
    "new_open_value": Kind(
        Severity.WARNING,
        "An open placeholder took a value the --baseline-values run did not.",
        "{what} took {count} value(s) of an open placeholder the baseline did not have "
        "({example}); if they are right, refresh the baseline, else fix the key the code "
        "logs (or give the attribute an enum in {catalog})",
    ),
}
"""Finding kind -> its severity, summary and message template: the one table of them."""

KINDS: Final = FINDING_KIND_TABLE
"""The documented name of :data:`FINDING_KIND_TABLE` (imported as ``codegen.live_check.KINDS``;
metric kinds are :data:`metric_catalog.series_rules.METRIC_KINDS`)."""

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
    "kind_mismatch",
    "unit_mismatch",
    "prometheus_name",
    "overflow",
    "missing_identity",
    "ambiguous_key",
    "out_of_range",
    "not_integer",
    "ambiguous_rewrite",
    "new_open_value",
    "unit_suspect",
)
"""Every finding kind, as named on ``--fail-on`` (new kinds go last: reports list them
in this order, and a report only ever gains fields)."""

RENAMED_MESSAGE: Final = (
    "{what} was logged {count} time(s), first at step {step}, but no teed row declares "
    "it{example}? Row {row} declares that key and it was never logged: a renamed key. Log "
    "it as {renames!r} again, or change the row's key to {what!r}"
)
"""An ``undeclared`` finding that renames a row never logged (:attr:`Finding.renames`)."""

LOOP_KINDS: Final = frozenset({"unknown_loop", "loop_conflict"})
"""Finding kinds about the ``"loop"`` field; their ``key`` is the loop name."""

ATTRIBUTE_KINDS: Final = frozenset(
    {"attribute_value", "attribute_budget", "undeclared_attribute", "missing_attribute"}
)
"""Finding kinds about a point's attributes."""

CAPPED_KINDS: Final = frozenset(
    {"undeclared", "undeclared_series", "undeclared_attribute", "attribute_value"}
)
"""Kinds whose distinct findings grow with the log's keys or names: tracked up to a cap."""

PER_WORKER_KINDS: Final = frozenset(
    {
        "non_scalar",
        "non_finite",
        "counter_decrease",
        "out_of_range",
        "not_integer",
        "unit_suspect",
        "malformed",
        "attribute_budget",
        "overflow",
        "missing_identity",
    }
)
"""Finding kinds judged and reported per worker; every other kind is judged over the run.

``attribute_budget`` is per worker because each process's tee has its own budget."""


MAX_SHOWN_KEY_CHARS: Final = 256
"""Longest key (or prefix) a report shows whole; a longer one is shown cut, with its
length, so a log of 20-million-character keys still gives a report well under 1 MB."""


def cut_key(key: str) -> str:
    """``key``, or its first :data:`MAX_SHOWN_KEY_CHARS` characters and its length."""
    if len(key) <= MAX_SHOWN_KEY_CHARS:
        return key
    return f"{key[:MAX_SHOWN_KEY_CHARS]}...({len(key)} characters)"


@dataclass(slots=True)
class Finding:
    """Every occurrence of one finding kind for one ``(prefix, key)``, aggregated.

    ``line`` and ``step`` are the first occurrence; ``example`` describes its
    value; ``last_line`` and ``last_path`` are where the last one was.
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
    last_line: int = 0
    """The line of the last occurrence (0: only one, or not a log line)."""
    last_path: str | None = None
    """The input of the last occurrence (``None``: the report's source)."""
    renames: str | None = None
    """On an ``undeclared`` finding, the key of a row that was never logged which this key
    most likely renames (:func:`~codegen.catalog.similar.renamed_key`): one finding for the
    rename, with the row's ``missing`` folded into it (``None``: no such row)."""
    renamed_row: str | None = None
    """The series of the row :attr:`renames` names, and whether it was ``missing``."""

    @property
    def qualified_key(self) -> str:
        """``prefix/key``, or ``key`` when the prefix is empty."""
        return qualified_key(self.prefix, self.key)

    def message(self, hints: Mapping[str, str] | None = None) -> str:
        """One sentence saying what happened, how often, first where, and how to fix it.

        ``hints`` name the project's catalog folder (``catalog``) and the file
        declaring its loops (``loops_file``), as the fixes point there.
        """
        shown_series = self.series and self.series != self.key
        what = cut_key(self.qualified_key) + (f" ({self.series})" if shown_series else "")
        fields = {
            **DEFAULT_HINTS,
            **(hints or {}),
            "what": what,
            "key": cut_key(self.key),
            "count": self.count,
            "step": self.step,
            "first": f"first {self.example} at step {self.step}",
            "example": self.example,
            "required": f"required of {self.example} runs" if self.example else "required",
            "fix": (
                "log it, or fix the row's requirement_level or emitted_by"
                if self.example
                else "log it or lower its requirement_level"
            ),
        }
        if self.renames is not None:
            fields["example"] = f"{self.example}; did you mean {cut_key(self.renames)!r}"
            return RENAMED_MESSAGE.format(
                **fields, renames=cut_key(self.renames), row=self.renamed_row
            )
        kind = FINDING_KIND_TABLE.get(self.kind)
        return self.example if kind is None else kind.message.format(**fields)

    def to_json(self, hints: Mapping[str, str] | None = None) -> dict[str, object]:
        """A JSON-ready dict with stable keys (``hints``: see :meth:`message`)."""
        line_only = self.kind == "malformed"
        return {
            "kind": self.kind,
            "prefix": None if line_only or self.kind in LOOP_KINDS else cut_key(self.prefix),
            "key": None if line_only else cut_key(self.key),
            "series": self.series,
            "count": self.count,
            "first_line": self.line or None,
            "first_step": self.step,
            "attribute": self.attribute,
            "message": self.message(hints),
            "did_you_mean": None if self.renames is None else cut_key(self.renames),
        }


@dataclass(frozen=True, slots=True)
class Notice:
    """Information that is not a finding: it never fails a run.

    ``kind`` is ``conditional`` (a conditionally required row not logged, with
    its condition), ``not_due`` (a required row whose first step the run never
    reached), ``unexpected_loop`` (a row logged although its ``emitted_by``
    does not list the run's loop), ``duplicate_input`` (inputs that were the
    same file, read once); an ingester's :class:`~.records.Note` keeps its own
    kind (``incomplete_record``: a TensorBoard event file's, a W&B run file's or a
    line-based log's last record is cut short, as while the run still writes it or
    after it was killed, or a restart appended a record after a line cut short;
    ``skipped_summaries``: TensorBoard summaries that are not scalars, counted;
    ``skipped_values``: W&B media and tables, counted; ``metric_definitions``: a W&B run's
    ``define_metric`` calls, listed; ``latest_state``: the
    ``trainer_state.json`` of a Trainer output folder that was read), and the check's
    own: ``several_runs`` (an input held several runs, judged together; ``--run``
    judges one), ``several_loops`` (the workers ran different loops, a job of
    several, each row judged by its loops' workers), ``config_conflict`` (runs
    checked together logged different configurations, so none decides a condition),
    ``several_states`` (several states of one Trainer output folder were read),
    ``restart`` (an input's step went back: a job restarted from a checkpoint),
    ``unjudged_keys`` (the check's budget of attempts on families no literal text indexes
    ran out: later keys needing one were left unjudged, at the first of them),
    ``undecided_step`` (a row's ``first_step`` or ``every`` names a configuration value
    the run did not log, so the row is undecided; the notice names the path),
    ``unread_config`` (a configuration file that could not be read safely),
    ``workers_capped`` (records named more workers than are judged apart) and
    ``backend_metrics`` (a backend's own metrics no row declares, counted).
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
