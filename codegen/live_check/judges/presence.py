"""``missing``, and the presence state of every teed row the log never showed.

An unlogged row gets one :data:`~codegen.live_check.statistics.PRESENCE_STATES`
state: ``not_emitted`` when the run's loop is known and the row's
``emitted_by`` does not list it. When the loop is unknown, the loops the run
may be are those emitting every logged row that lists its loops: a row none
of them emits is ``not_emitted``, one only some of them emit is
``undecided`` (never missing), one all of them emit is judged by its level.
``inactive_owner`` when the row lists no loops and its owner logged none of
its rows, so it was not imported in this run (``all_owners`` judges those
rows anyway), unless the run's configuration decides its condition (below);
otherwise by requirement level: ``required`` rows are
``missing`` (a finding), or ``not_due`` when the run's last step is before
the row's ``first_step``; ``conditionally_required`` rows are
``conditional`` (information, with their condition); ``recommended`` and
``opt_in`` rows are ``not_logged``. A logged row whose ``emitted_by`` does
not list the run's loop is noted as information too.

When the run logged its configuration (a ``config`` header line), a
``conditionally_required`` row whose condition is an expression over it
(:mod:`codegen.catalog.conditions`) is judged as ``required`` when the condition
holds, and is ``not_applicable`` (nothing to report) when it does not; a prose
condition, or a configuration value the run did not log, keeps it
``conditional``. A ``first_step`` naming a configuration value is read from it
(unknown: the row is ``undecided``, never missing).

A job of several loops (workers running different loops, see
:meth:`~codegen.live_check.judges.loops.LoopJudge.job`): a row none of the job's
loops emits is ``not_emitted``; one that some of them emit is expected, and
whether it was due is judged by the steps of the workers running those loops
(a critic server counting many steps per actor step does not make the actor's
validation due); a row that lists no loops is judged by the steps of the whole run.
A logged row is ``unexpected_loop`` information only when none of the job's loops
emits it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from metric_catalog.series_rules import next_scheduled

from ...catalog.conditions import (
    Condition,
    ConditionError,
    condition_attributes,
    for_value,
    parse_condition,
    parse_config_path,
    parse_first_step,
)
from ...catalog.model import MetricRow, fill_template
from ...catalog.schedule import describe
from ..findings import Finding, Notice
from ..statistics import RowSummary
from .loops import JobLoop, LoopJudge, StepSpan, merged_span

if TYPE_CHECKING:
    from ..coverage import ValueTracker

__all__ = ["PresenceOutcome", "agreed", "judge_presence"]


@dataclass(slots=True)
class PresenceOutcome:
    """What presence found: ``missing`` findings, information, owners that logged nothing."""

    findings: list[Finding] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    inactive_owners: dict[str, int] = field(default_factory=dict)


def _candidates(
    rows: Sequence[RowSummary], loops: LoopJudge, loop: str | None, job: Sequence[JobLoop] = ()
) -> frozenset[str]:
    """The loops the run may be: a job's loops, the chosen one, else every declared
    loop that emits each logged row that lists its loops (none when they contradict).
    """
    if job:
        return frozenset(j.name for j in job)
    if loop is not None:
        return frozenset((loop,))
    candidates = {declared.name for declared in loops.loops}
    for summary in rows:
        if summary.logged and summary.row.emitted_by:
            candidates &= set(summary.row.emitted_by)
    return frozenset(candidates)


@lru_cache(maxsize=4096)
def _condition(text: str) -> Condition | None:
    """The row's condition as an expression (``None``: prose, or refused by validate)."""
    try:
        return parse_condition(text)
    except ConditionError:
        return None


def _first_step(row: MetricRow, config: Mapping[str, object] | None) -> int | str | None:
    """The row's first step; ``"unknown"`` when it names a configuration value not logged."""
    if row.first_step_config is None:
        return row.first_step
    parsed = parse_first_step(row.first_step_config)
    if parsed is None or config is None:
        return "unknown"
    path, offset = parsed
    try:
        value = path.lookup(config)
    except KeyError:
        return "unknown"
    step = _whole(value)
    return "unknown" if step is None else step + offset


def _unresolved(row: MetricRow, config: Mapping[str, object] | None) -> tuple[str, str] | None:
    """The ``first_step`` or ``every`` whose configuration value the run did not log."""
    if row.first_step_config is not None and _first_step(row, config) == "unknown":
        return "first_step", row.first_step_config
    if row.every_config is not None and _every(row, config) == "unknown":
        return "every", row.every_config
    return None


def _every(row: MetricRow, config: Mapping[str, object] | None) -> int | str | None:
    """The row's period; ``"unknown"`` when it names a configuration value not logged."""
    if row.every_config is None:
        return row.every
    path = parse_config_path(row.every_config)
    if path is None or config is None:
        return "unknown"
    try:
        value = path.lookup(config)
    except KeyError:
        return "unknown"
    return "unknown" if (step := _whole(value)) is None else step


def _whole(value: object) -> int | None:
    """A configuration value as a whole number of steps; ``None`` when it is not one (a
    text, a bool, a fraction, NaN or an infinity: the row's due step is then unknown)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    return int(value)


def _next_due(row: MetricRow, first: int | None, every: int, run_first: int | None) -> int | None:
    """The first step of the row's schedule at or after both ``first`` and the run's first
    step (from step 1 when neither is known); ``None`` when ``every`` is not positive."""
    start = max(first if first is not None else 1, run_first if run_first is not None else 1)
    return next_scheduled(every, row.phase, start)


def _due_step(
    row: MetricRow, config: Mapping[str, object] | None, loops: StepSpan
) -> int | str | None:
    """The first step the run had to log the row at: its ``first_step``, or with ``every``
    the first step of its schedule the run's steps could reach (``"never"`` for a period
    that is not positive); ``"unknown"`` when a configuration value was not logged.

    ``at_last_step`` adds no due step: a log does not say whether its run finished, so a
    run that stopped before its schedule's first step is not missing the row."""
    first = _first_step(row, config)
    every = _every(row, config)
    if first == "unknown" or every == "unknown":
        return "unknown"
    if isinstance(every, int):
        due = _next_due(row, first if isinstance(first, int) else None, every, loops.first_step)
        return "never" if due is None else due
    return first


def _not_due_message(row: MetricRow, config: Mapping[str, object] | None, loops: StepSpan) -> str:
    """Why a required row the run never logged was not due yet."""
    head = f"{row.qualified_logger_key} ({row.name}) was not logged; "
    due = _due_step(row, config, loops)
    if due == "never":
        return head + f"it is logged every {_every(row, config)} steps, which is never"
    if row.every is None and row.every_config is None:
        return (
            head + f"it is first logged at step {due} and the run's last step is {loops.last_step}"
        )
    every = _every(row, config)
    shown = describe(every if every is not None else "?", row.phase, row.at_last_step)
    return head + (
        f"it is logged {shown}, next at step {due}, "
        f"and the run logged steps {loops.first_step} to {loops.last_step}"
    )


def _decided(
    row: MetricRow, config: Mapping[str, object] | None, run: Mapping[str, object] | None = None
) -> bool | None:
    """Whether the row's condition holds for ``config`` and ``run`` (``run.format``);
    ``None`` when nothing decides it (a configuration path the run did not log)."""
    if row.requirement_level != "conditionally_required" or _names_a_value(row):
        return None  # a condition per captured value is judged per value (_per_value)
    condition = None if row.condition is None else _condition(row.condition)
    return None if condition is None else condition.holds(config or {}, run)


def _level(
    row: MetricRow, config: Mapping[str, object] | None, run: Mapping[str, object] | None = None
) -> str:
    """The requirement level the run is judged by (a condition the run decides)."""
    holds = _decided(row, config, run)
    if holds is None:
        return row.requirement_level
    return "required" if holds else "not_applicable"


def _row_config(
    row: MetricRow,
    config: Mapping[str, object] | None,
    job: Sequence[JobLoop],
    loop_configs: Mapping[str, Mapping[str, object] | None] | None,
) -> Mapping[str, object] | None:
    """The configuration a row is judged by: in a job, that of the loops that emit it
    (a row listing no loops: of every loop), ``None`` when they differ; else the run's."""
    if not job or loop_configs is None:
        return config
    found = [
        loop_configs.get(j.name) for j in job if not row.emitted_by or j.name in row.emitted_by
    ]
    return agreed(found) if found else config


def agreed(configs: Sequence[Mapping[str, object] | None]) -> Mapping[str, object] | None:
    """The one configuration all of ``configs`` are; ``None`` when there is none, one of
    them is ``None`` (unknown) or they differ."""
    first = configs[0] if configs else None
    return first if first is not None and all(c == first for c in configs[1:]) else None


def _steps(row: MetricRow, loops: LoopJudge, job: Sequence[JobLoop]) -> StepSpan:
    """The steps a row's due-ness is judged by: its loops' workers' in a job, else the run's."""
    if job and row.emitted_by:
        return merged_span(loop for loop in job if loop.name in row.emitted_by)
    return loops


def _unlogged_state(
    summary: RowSummary,
    loops: LoopJudge,
    candidates: frozenset[str],
    inactive: bool,
    config: Mapping[str, object] | None = None,
    *,
    run: Mapping[str, object] | None = None,
    job: Sequence[JobLoop] = (),
) -> str:
    """The presence state of a row the log never showed."""
    row = summary.row
    if row.emitted_by and loops.loops:
        # Judged only when every loop the run may be emits it (in a job: any of its loops).
        emitting = candidates & set(row.emitted_by)
        if not emitting:
            return "not_emitted"
        if emitting != candidates and not job:
            return "undecided"
    elif inactive and _decided(row, config, run) is None:
        # The configuration outranks the file rule: a row it rules out is not applicable
        # and one it requires is due even when nothing of its file was logged.
        return "inactive_owner"
    level = _level(row, config, run)
    if level == "required":
        steps = _steps(row, loops, job)
        due = _due_step(row, config, steps)
        if due == "unknown":
            return "undecided"
        last = steps.last_step
        if due == "never" or (isinstance(due, int) and (last is None or last < due)):
            return "not_due"
        return "missing"
    if level == "not_applicable":
        return "not_applicable"
    if level == "conditionally_required":
        return "conditional"
    return "not_logged"


def judge_presence(
    rows: Sequence[RowSummary],
    loops: LoopJudge,
    loop: str | None,
    owner_of: Mapping[str, str],
    *,
    all_owners: bool,
    config: Mapping[str, object] | None = None,
    run: Mapping[str, object] | None = None,
    job: Sequence[JobLoop] = (),
    loop_configs: Mapping[str, Mapping[str, object] | None] | None = None,
    values: ValueTracker | None = None,
) -> PresenceOutcome:
    """Set every row's presence state; the findings and information it gives.

    ``config`` is the configuration the run logged (its header line), if any;
    ``run`` what is known of the run itself (``{"format": "wandb"}``), for
    conditions naming ``run.format``; ``job`` the loops of a job of several
    (empty: the run is one loop, ``loop``), and ``loop_configs`` each job loop's
    configuration (a row its loops emit is judged by theirs when they agree);
    ``values`` the enum values each key family's keys captured, for a condition naming
    the captured attribute (``{rl.role}``: judged per value, see :func:`_per_value`).
    """
    out = PresenceOutcome()
    active = {owner_of[s.row.name] for s in rows if s.logged}
    candidates = _candidates(rows, loops, loop, job)
    ran = " or ".join(sorted(candidates)) if job else loop
    for summary in rows:
        row = summary.row
        row_config = _row_config(row, config, job, loop_configs)
        # A condition naming the captured attribute: (state, values missing), else None.
        by_value = None
        if values is not None and _names_a_value(row):
            by_value = _per_value(row, row_config, run, values, _steps(row, loops, job))
        if summary.logged:
            if ran is not None and row.emitted_by and not candidates & set(row.emitted_by):
                out.notices.append(_unexpected_loop(row, ran))
            if by_value is not None:  # a value whose condition holds, not logged
                out.findings.extend(_value_missing(row, by_value[1], loop, job, candidates))
            continue
        owner = owner_of[row.name]
        inactive = not all_owners and owner not in active
        summary.presence = _unlogged_state(
            summary, loops, candidates, inactive, row_config, run=run, job=job
        )
        if by_value is not None and summary.presence == "conditional":
            summary.presence = by_value[0]
            if by_value[1]:
                out.findings.extend(_value_missing(row, by_value[1], loop, job, candidates))
                continue
        if summary.presence == "missing":
            prefix, key = row.prefix or "", row.logger_key or ""
            judged_as = _judged_as(row, loop, job, candidates)
            out.findings.append(
                Finding("missing", prefix, key, row.name, 0, None, judged_as, position=row.position)
            )
        elif summary.presence == "undecided":
            unresolved = _unresolved(row, row_config)
            if unresolved is not None:
                out.notices.append(_undecided_step(row, *unresolved))
        elif summary.presence == "inactive_owner":
            out.inactive_owners[owner] = out.inactive_owners.get(owner, 0) + 1
        elif summary.presence == "conditional":
            out.notices.append(_conditional(row))
        elif summary.presence == "not_due":
            out.notices.append(
                Notice(
                    "not_due",
                    _not_due_message(row, row_config, _steps(row, loops, job)),
                    row.name,
                    row.where("every" if row.every or row.every_config else "first_step"),
                )
            )
    return out


def _judged_as(
    row: MetricRow, loop: str | None, job: Sequence[JobLoop], candidates: frozenset[str]
) -> str:
    """The loop(s) a ``missing`` finding of ``row`` says the run was judged as (``""``: any)."""
    if job and row.emitted_by:
        return " or ".join(sorted(candidates & set(row.emitted_by)))
    return loop if loop is not None and row.emitted_by else ""


def _names_a_value(row: MetricRow) -> bool:
    """Whether the row's condition names the attribute its key captures (``{rl.role}``)."""
    return (
        row.requirement_level == "conditionally_required"
        and row.condition is not None
        and len(condition_attributes(row.condition)) == 1
    )


def _per_value(
    row: MetricRow,
    config: Mapping[str, object] | None,
    run: Mapping[str, object] | None,
    values: ValueTracker,
    steps: StepSpan,
) -> tuple[str, list[str]]:
    """``(state, missing values)`` of a key family whose condition names its attribute.

    The condition is judged once per value of the attribute's enum (the row's own
    subset): a value for which it holds is due like a ``required`` row, and missing when
    the run reached its due step without logging the key of that value; one for which it
    does not hold is not applicable. The state of a row logged under no value:
    ``missing`` (a value is), ``not_applicable`` (the condition holds for none),
    ``not_due``, ``undecided`` (a step field the run's configuration lacks), else
    ``conditional`` (the configuration does not decide it)."""
    text = row.condition or ""
    (name,) = condition_attributes(text)
    domain = dict(values.tracked.get(row.name, ())).get(name)
    if domain is None:
        return "conditional", []  # validate refuses a condition naming no enum attribute
    seen = values.seen.get((row.name, name), set())
    holds = {value: _holds(for_value(text, name, value), config, run) for value in domain}
    if not any(holds.values()):
        decided = all(held is not None for held in holds.values())
        return ("not_applicable" if decided else "conditional"), []
    due = _due_step(row, config, steps)
    if due == "unknown":
        return "undecided", []
    last = steps.last_step
    if due == "never" or (isinstance(due, int) and (last is None or last < due)):
        return "not_due", []
    missing = sorted(value for value, held in holds.items() if held and value not in seen)
    return ("missing" if missing else "conditional"), missing


def _holds(
    text: str, config: Mapping[str, object] | None, run: Mapping[str, object] | None
) -> bool | None:
    """Whether one value's condition holds (``None``: undecided)."""
    condition = _condition(text)
    return None if condition is None else condition.holds(config or {}, run)


def _value_missing(
    row: MetricRow,
    missing: Sequence[str],
    loop: str | None,
    job: Sequence[JobLoop],
    candidates: frozenset[str],
) -> list[Finding]:
    """A ``missing`` finding per value whose key the run should have logged."""
    (name,) = condition_attributes(row.condition or "")
    judged_as = _judged_as(row, loop, job, candidates)
    return [
        Finding(
            "missing",
            fill_template(row.prefix or "", {name: value}),
            fill_template(row.logger_key or "", {name: value}),
            row.name,
            0,
            None,
            judged_as,
            position=row.where("condition"),
        )
        for value in missing
    ]


def _conditional(row: MetricRow) -> Notice:
    """Information: a ``conditionally_required`` row the run's configuration did not decide."""
    return Notice(
        "conditional",
        f"{row.qualified_logger_key} ({row.name}) was not logged; it is logged only "
        f"{row.condition}",
        row.name,
        row.where("condition"),
    )


def _unexpected_loop(row: MetricRow, ran: str) -> Notice:
    """Information: a row was logged by a loop its ``emitted_by`` does not list."""
    return Notice(
        "unexpected_loop",
        f"{row.qualified_logger_key} ({row.name}) was logged, but its "
        f"emitted_by ({', '.join(row.emitted_by)}) does not list loop "
        f"{ran}; add the loop to emitted_by if it really logs the key",
        row.name,
        row.where("emitted_by"),
    )


def _undecided_step(row: MetricRow, field_name: str, text: str) -> Notice:
    """Information: an unlogged row's step field names a configuration path the run lacks."""
    return Notice(
        "undecided_step",
        f"{row.qualified_logger_key} ({row.name}) was not logged and is "
        f"undecided: its {field_name} names {text}, which the run's "
        "configuration does not hold as a whole number (log it with "
        "JsonlLogger(config=...), or fix the path; a flat, dotted key is "
        'written config["a.b"])',
        row.name,
        row.where(field_name),
    )
