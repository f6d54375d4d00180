"""The checker: routes each record to the matcher and the judges, and aggregates findings.

State is bounded by the catalog's teed rows plus the caps of
:class:`~codegen.runs.limits.Limits`, whatever the log holds. Per
worker (a file, or a ``"worker"`` field within a file when many files are
checked together) only what is judged per worker is kept: its findings of
:data:`~codegen.live_check.findings.PER_WORKER_KINDS`, its malformed-line
count and, once it logs attributes, its attribute budgets.

The pieces, one job each: :class:`~codegen.live_check.routing.KeyPlanner`
decides what a logged key means; :class:`~codegen.live_check.tally.Tally`
aggregates findings; :class:`~codegen.live_check.run_state.RunState` keeps the
run's configurations and step order, :class:`~codegen.live_check.run_state.Workers`
each worker's state; the judges under :mod:`codegen.live_check.judges` judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Final, NamedTuple, Unpack

from metric_catalog.series_rules import MatchBudget, literal_text, qualified_key

from ..catalog.diagnostics import Position
from ..catalog.matching import KeyMatcher
from ..catalog.model import Catalog, MetricRow, StepKey
from ..catalog.similar import RenameIndex
from ..runs.limits import Limits
from ..runs.records import NO_STEP, Malformed, Note, Record, RunConfig
from ..runs.rewrites import rewrite_key
from .coverage import ValueTracker, compute_coverage
from .findings import Notice, catalog_hints
from .judges.attributes import AttributeRules, Budgets
from .judges.counters import judge_counter
from .judges.loops import JobLoop, LoopJudge
from .judges.presence import PresenceOutcome, judge_presence
from .judges.ranges import accepts, judge_range
from .judges.telemetry import WireJudge
from .judges.values import judge_value
from .options import CheckKeywords, CheckOptions, resolve_options
from .report import LiveCheckReport
from .routing import TRAINING_AXIS, KeyPlan, KeyPlanner, Memo
from .run_state import RunState, Slot, Worker, Workers
from .statistics import RowSummary
from .tally import Tally, Where

__all__ = ["Checker"]


class _Rows(NamedTuple):
    """The catalog's rows as the checker looks them up."""

    series: dict[str, tuple[MetricRow, RowSummary]]
    """Series name and registry key -> row, for point lines (recorded rows' values are
    counted in summaries of their own, outside the teed rows' table)."""
    summaries: dict[str, RowSummary]
    """Teed row name -> its summary."""
    owner_of: dict[str, str]
    """Teed row name -> its catalog file's path."""
    owners: dict[str, str]
    """Teed row name -> its catalog file's owner (coverage is given per owner)."""
    teed: list[MetricRow]
    listed: list[RowSummary]
    """The teed rows' summaries, in catalog order."""


def _index_rows(catalog: Catalog) -> _Rows:
    """Every row's summary, by series name and registry key; the teed rows' by name."""
    rows = _Rows({}, {}, {}, {}, [], [])
    for catalog_file, row in catalog.rows():
        summary = RowSummary(row)
        rows.series.setdefault(row.registry_key, (row, summary))
        rows.series[row.name] = (row, summary)
        if row.section != "teed" or row.logger_key is None:
            continue
        rows.owner_of[row.name] = catalog_file.path
        rows.owners[row.name] = catalog_file.owner
        rows.summaries[row.name] = summary
        rows.teed.append(row)
        rows.listed.append(summary)
    return rows


class Checker:
    """Judges records one at a time; :meth:`finish` returns the report.

    ``multi`` checks several inputs as one run: findings carry their input's
    position, and a ``"worker"`` field splits an input into workers.
    """

    def __init__(
        self,
        catalog: Catalog,
        source: str,
        options: CheckOptions | None = None,
        *,
        limits: Limits | None = None,
        multi: bool = False,
        **keywords: Unpack[CheckKeywords],
    ) -> None:
        """``options`` (or the older keywords, see :class:`.options.CheckKeywords`): what
        and how to judge; ``all_owners``, ``loop``, ``promoted`` and ``key_rewrites`` are
        read here, the input options by the entry points that read the inputs."""
        options = resolve_options(options, keywords)
        all_owners, loop, promoted = options.all_owners, options.loop, options.promoted
        self.limits = limits = limits or Limits()
        self.report = report = LiveCheckReport(source, limits=limits)
        report.key_rewrites = tuple((old, new) for old, new in options.key_rewrites if old)
        report.hints = catalog_hints(
            [f.path for f in catalog.files], [f.path for f in catalog.files if f.loops]
        )
        self.all_owners = all_owners
        self.multi = multi
        self.loops = LoopJudge(catalog, loop)
        self.rules = AttributeRules(catalog)
        rows = _index_rows(catalog)
        self.rows = rows
        report.rows.extend(sorted(rows.listed, key=lambda s: s.row.name))
        self.planner = KeyPlanner(
            rows.summaries,
            frozenset(
                row.name
                for _, row in catalog.rows()
                if any(ref.requirement_level == "required" for ref in row.attributes)
            ),
            matcher=KeyMatcher(
                rows.teed,
                limits.max_family_keys,
                catalog.attributes(),
                MatchBudget(limits.max_unindexed_attempts),
            ),
            rules=self.rules,
            loops=self.loops,
            limits=limits,
            report=report,
            rewrites=report.key_rewrites,
            is_bookkeeping=catalog.is_bookkeeping,
        )
        self.values = ValueTracker(catalog)
        """Enum values seen per key family and required attribute, for the coverage."""
        self.wire = WireJudge(catalog, promoted)
        """Live points (OTLP, scrapes): their series, kind, unit, name and identity."""
        self.run = RunState(limits)
        self.pool = Workers(self.loops, limits, multi=multi)
        self.tally = Tally(report, limits, multi=multi)
        # Last value of each running total (temporality: cumulative), per worker and key.
        self.totals: dict[tuple[int, str, str, str], float] = {}
        self.step_keys: dict[str | None, tuple[StepKey, ...]] = {
            loop.name: loop.step_keys for loop in catalog.loops() if loop.step_keys
        }
        """Each loop's step keys (``train/global_step``): the step of the keys they cover."""
        self.any_step_keys: tuple[StepKey, ...] = tuple(
            dict.fromkeys(s for keys in self.step_keys.values() for s in keys)
        )
        """Every loop's step keys, for a worker whose loop is not known."""
        self.loop_names = 0
        self.pending: dict[int, tuple[Worker, list[tuple[Record, str, object]]]] = {}
        """Keys rows of several loops claim, logged by a worker whose loop no record named:
        routed once its loop is inferred from its signature keys (see :meth:`finish`)."""
        self.pending_count = 0
        self.backend_values = 0
        """Values of a backend's own metrics no row declares (see ``Record.backend_prefix``)."""
        self.unjudged_values = 0
        """Values whose key the matcher's budget left unrouted (see ``KeyPlan.unjudged``)."""
        self.unjudged_at: Where | None = None
        """The first such value's ``(prefix, key, path, line, step)``."""
        self.suspects: dict[tuple[str, str], tuple[str, Where, Worker, list[int]]] = {}
        """Keys an open family took although they look like a renamed literal row's key:
        ``(prefix, key) -> (that row's key, first occurrence, worker, [count])``, an
        ``undeclared`` rename at the end if that row was never logged (bounded)."""

    # --- the faces others use ------------------------------------------------------------

    @property
    def run_config(self) -> Mapping[str, object] | None:
        """The run's configuration (``--run-config`` sets it before the first record)."""
        return self.run.config

    @run_config.setter
    def run_config(self, config: Mapping[str, object] | None) -> None:
        self.run.config = config

    @property
    def matcher(self) -> KeyMatcher:
        """The teed rows by logged ``(prefix, key)``."""
        return self.planner.matcher

    @property
    def workers(self) -> dict[tuple[str, str | None], Worker]:
        """Each worker's state by ``(input, worker name)``."""
        return self.pool.by_key

    def worker(self, path: str, name: str | None = None) -> Worker:
        """The worker a record of ``path`` (naming worker ``name``) belongs to."""
        return self.pool.get(path, name)

    def worker_count(self) -> int:
        """Workers seen; an input's unnamed lines count only when no line of it names one."""
        return self.pool.count()

    @property
    def budgets(self) -> Budgets:
        """The attribute budgets of the report's own source (a single input)."""
        return self._budgets(self.worker(self.report.source))

    def _budgets(self, worker: Worker) -> Budgets:
        if worker.budgets is None:
            worker.budgets = Budgets(self.rules, self.limits)
        return worker.budgets

    def take(self, item: Record | RunConfig | Malformed | Note) -> None:
        """Judge one record, note the run's configuration, count a malformed part or keep a note."""
        if isinstance(item, Malformed):
            self.tally.malformed(item, self.worker(item.input or item.path))
            return
        if isinstance(item, Note):
            position = Position(item.path, item.line, 1) if item.line else None
            self.report.notices.append(Notice(item.kind, item.message, position=position))
            return
        if isinstance(item, RunConfig):
            self.run.see_config(item)
            return
        worker = self.worker(item.input or item.path, item.worker)
        self.report.records += 1
        self._see(item, worker)
        if item.series is None:
            self.record(item, worker)
        else:
            self.point(item, worker)

    # --- judging -------------------------------------------------------------------------

    def _see(self, record: Record, worker: Worker) -> None:
        """What every record tells presence: its loop and its step."""
        loops = self.loops
        if record.loop is not None:
            kind = loops.name(record.loop, record.path, record.line, worker.loop)
            if kind is not None:
                self._note_loop(kind, record, worker)
        if record.series is not None or not record.metrics:
            worker.loop.see_step(record.step)

    def _note_loop(self, kind: str, record: Record, worker: Worker) -> None:
        """Count a record naming an undeclared loop, or a loop other than its worker's."""
        loop = record.loop or ""
        slot = (kind, "", loop)
        if slot not in self.tally.findings:
            if self.loop_names >= self.limits.max_loop_names:
                return
            self.loop_names += 1
        where = ("", loop, record.path, record.line, record.step)
        example = ""
        if kind == "loop_conflict":
            state = worker.loop
            example = (
                f"{self.tally.locate(*state.named_at)} named {state.named!r} first, the loop "
                "that worker is judged as"
            )
        self.tally.note(kind, where, None, example, worker)

    def point(self, record: Record, worker: Worker) -> None:
        """One point: its series must be declared, its value and attributes fit the row."""
        series = record.series or ""
        where = ("", series, record.path, record.line, record.step)
        if record.transport is not None:
            self.live_point(record, worker, where)
            return
        found = self.rows.series.get(series)
        if found is None:
            self.tally.note("undeclared_series", where, None, "", worker)
            return
        row, summary = found
        self._check_attributes(worker, row, record.attributes, {}, where)
        self._record_row(worker, summary, where, record.value, set())

    def live_point(self, record: Record, worker: Worker, where: Where) -> None:
        """A point of live telemetry: also judge how the wire describes its series."""
        row = self.wire.resolve(record)
        found = None if row is None else self.rows.series.get(row.name)
        if row is None or found is None:
            self.tally.note("undeclared_series", where, None, "", worker)
            return
        summary = found[1]
        signature = self.loops.signature_keys
        if signature and row.logger_key is not None:
            # The series stands for its logged keys: they name the run's loop as in a log.
            for prefix in row.prefixes:
                if (prefix, row.logger_key) in signature:
                    self.loops.seen_signature(prefix, row.logger_key, worker.loop)
        problems, attributes = self.wire.judge(row, record)
        for kind, example, attribute in problems:
            self.tally.note(kind, where, row.name, example, worker, detail=attribute)
        self._check_attributes(worker, row, attributes, {}, where)
        self._record_row(worker, summary, where, record.value, set())

    def record(self, record: Record, worker: Worker) -> None:
        """One logging call: match each key, count it, check its value and attributes."""
        planner = self.planner
        given, split, prefix = record.attributes, record.split, record.prefix
        path, line, step = record.path, record.line, record.step
        if step == NO_STEP:
            step = 0  # findings of a record logged at no step say step 0
        base_step = step
        plans = planner.plans
        on_training = False  # a key on the training step's axis (or no row's)
        on_rows = False  # a key of a training row (on the training axis, not periodic)
        periodic = False  # a key of periodic rows only (an evaluation, a checkpoint)
        off_axes: set[str] = set()
        memo_split = split if record.rewrite is None else record.rewrite
        loop = self.loops.forced or worker.loop.named
        axis = _axis_steps(record, self.step_keys.get(loop, self.any_step_keys))
        seen_steps: dict[int, bool] = {}  # step -> whether a training row's key had it
        shortcut = not given and not axis  # a value in a plan's quiet interval is only counted
        for logged, value in record.metrics.items():
            plan = plans.get((prefix, logged, memo_split, loop))
            if plan is None:
                plan = planner.planned(prefix, logged, split, record.rewrite, loop)
            quiet = plan.quiet
            if shortcut and quiet is not None and type(value) is float:
                summary, low, high = quiet
                if low <= value <= high:
                    on_training = on_rows = True
                    summary.logged += 1
                    summary.last_step = step
                    summary.last_value = value
                    continue
            if plan.bookkeeping:
                continue  # no metric: a logger's timestamp, a backend's own key
            if plan.read_as is not None:
                planner.note_rewrite(prefix, logged)
            if axis:
                step = _key_step(axis, qualified_key(prefix, logged), base_step)
            if plan.axes is TRAINING_AXIS:
                on_training = True
                periodic = periodic or plan.periodic
                trains = bool(plan.matches) and not plan.periodic
                on_rows = on_rows or trains
                if axis:
                    seen_steps[step] = seen_steps.get(step, False) or trains
            else:
                off_axes.update(plan.axes)
            if plan.signature:
                used = logged if plan.read_as is None else rewrite_key(logged, planner.rewrites)
                self.loops.seen_signature(prefix, used, worker.loop)
            where = (plan.prefix, plan.key, path, line, step)
            if plan.renames and plan.matches:
                self._suspect(plan, where, worker)
            if (
                not given
                and len(plan.matches) == 1
                and type(value) is float
                and value - value == 0.0  # finite
                and self._take_float(worker, plan, (prefix, logged, memo_split), value, where)
            ):
                continue
            if plan.matches:
                self._matched(worker, plan, given, value, where)
            elif plan.ambiguous:
                self._ambiguous(worker, plan, record, logged, value, loop, where)
            elif plan.readings:
                self.tally.note("ambiguous_rewrite", where, None, "; ".join(plan.readings), worker)
            elif plan.unjudged:
                self._unjudged(where)
            else:
                self._unmatched(worker, plan, record, logged, value, where)
        steps = seen_steps if axis else None
        self._see_steps(record, worker, step, steps, (on_training, on_rows, periodic, off_axes))

    def _see_steps(
        self,
        record: Record,
        worker: Worker,
        step: int,
        seen_steps: dict[int, bool] | None,
        seen: tuple[bool, bool, bool, set[str]],
    ) -> None:
        """Which steps a record says the loop reached, once its keys are judged."""
        on_training, on_rows, periodic, off_axes = seen
        # Megatron's "lm loss vs samples" is logged at the sample count, which is not how
        # far training got: a record of only such keys leaves the run's last step alone.
        if seen_steps is not None:
            # The loop's step keys say the step (W&B's _step counts calls; a flat line may
            # have none): the keys they cover were logged at those steps.
            for at, trains in seen_steps.items():
                worker.loop.see_step(at, training=trains or not periodic)
        elif (on_training or not off_axes) and record.step != NO_STEP:
            # A record of periodic rows' keys only (a final evaluation past the last
            # step) is no training step: it makes no training row due.
            worker.loop.see_step(step, training=on_rows or not periodic)
            self.run.see_order(record)

    def _unmatched(  # noqa: PLR0917 - the record loop's locals, passed as they are
        self,
        worker: Worker,
        plan: KeyPlan,
        record: Record,
        logged: str,
        value: object,
        where: Where,
    ) -> None:
        """A logged key no teed row takes: undeclared, unless the backend wrote it.

        ``where`` holds the step the loop's step keys give the key (not a tracker's call
        counter), as every other finding of the record says."""
        if _is_media(value) or isinstance(value, list) or logged in record.step_keys:
            # A backend's media object (a W&B table, image or histogram reference)
            # or an array (an empty one W&B stores as []) is no metric, and a
            # backend's x axis (a W&B step metric, which W&B copies into records
            # the code logged without it) may be the backend's own writing: nothing
            # a teed row must declare, so not undeclared.
            return
        if record.backend_prefix is not None and logged.startswith(record.backend_prefix):
            # The backend's own metric (MLflow's system/...), not the code's.
            self.backend_values += 1
            return
        hint = self.planner.undeclared_hint(plan)
        self.tally.note("undeclared", where, None, hint, worker)

    def _unjudged(self, where: Where) -> None:
        """Count a value whose key the budget left unrouted (and where the first one was)."""
        if not self.unjudged_values:
            self.unjudged_at = where
        self.unjudged_values += 1

    def _unjudged_notice(self) -> Notice:
        """The one ``unjudged_keys`` notice, at the first value left unjudged."""
        text = _unjudged_text(self.unjudged_values, self.limits.max_unindexed_attempts)
        if self.unjudged_at is None:  # pragma: no cover - set with the first value
            return Notice("unjudged_keys", text)
        prefix, key, path, line, _step = self.unjudged_at
        first = f"; the first was {qualified_key(prefix, key)!r}"
        position = Position(path or self.report.source, line, 1) if line else None
        return Notice("unjudged_keys", text + first, position=position)

    def _suspect(self, plan: KeyPlan, where: Where, worker: Worker) -> None:
        """Remember a key an open family took that looks like a literal row's key renamed."""
        slot = (plan.prefix, plan.key)
        found = self.suspects.get(slot)
        if found is not None:
            found[3][0] += 1
        elif len(self.suspects) < self.limits.max_undeclared_keys:
            self.suspects[slot] = (plan.renames, where, worker, [1])

    def _fold_renames(self) -> None:
        """An undeclared key beside a row of similar key that was never logged reads as one
        finding: ``undeclared`` with "did you mean" and the rename, the row's ``missing``
        folded into it (the gate still fails on ``missing``: see
        :attr:`~.report.LiveCheckReport.folded_missing`)."""
        unlogged: dict[str, RowSummary] = {}
        for summary in self.rows.summaries.values():
            row = summary.row
            if summary.presence in _NOT_RENAMED or row.logger_key is None or row.is_family:
                continue  # logged, or a row of another loop or condition: renamed by none
            for qualified in row.logged_keys:
                unlogged.setdefault(literal_text(qualified), summary)
        if not unlogged:
            return
        findings = self.tally.findings
        for (prefix, key), (renames, where, worker, count) in self.suspects.items():
            if renames in unlogged:
                self.tally.note("undeclared", where, None, "", worker)
                found = findings.get(("undeclared", prefix, key))
                if found is not None:
                    found.count = count[0]
        index = RenameIndex(unlogged)
        missing: dict[str, list[Slot]] = {}
        for slot, finding in findings.items():
            if finding.kind == "missing" and finding.series is not None:
                missing.setdefault(finding.series, []).append(slot)
        for finding in [f for f in findings.values() if f.kind == "undeclared"]:
            target = index.find(finding.qualified_key)
            if target is None:
                continue
            name = unlogged[target].row.name
            finding.renames, finding.renamed_row = target, name
            for slot in missing.pop(name, ()):
                del findings[slot]  # folded into the rename: one finding
                self.report.folded_missing += 1

    def _ambiguous(  # noqa: PLR0917 - the record loop's locals, passed as they are
        self,
        worker: Worker,
        plan: KeyPlan,
        record: Record,
        logged: str,
        value: object,
        loop: str | None,
        where: Where,
    ) -> None:
        """A key rows of several loops claim: kept until the worker's loop is inferred, or
        an ``ambiguous_key`` finding when the loop was named and still does not decide."""
        if loop is None and self.pending_count < self.limits.max_family_keys:
            self.pending_count += 1
            self.pending.setdefault(id(worker), (worker, []))[1].append((record, logged, value))
            return
        self.tally.note("ambiguous_key", where, None, _claimed(plan), worker)

    def _route_pending(self) -> None:
        """Route each kept shared key by its worker's loop, inferred from its signature keys;
        one whose loop stays undecided is an ``ambiguous_key`` finding, credited to no row."""
        planner = self.planner
        for worker, items in self.pending.values():
            loop = self.loops.infer(worker.loop)
            for record, logged, value in items:
                plan = planner.planned(record.prefix, logged, record.split, record.rewrite, loop)
                where = (plan.prefix, plan.key, record.path, record.line, record.step)
                if plan.matches:
                    self._matched(worker, plan, record.attributes, value, where)
                elif plan.ambiguous:
                    self.tally.note("ambiguous_key", where, None, _claimed(plan), worker)
                elif plan.readings:
                    example = "; ".join(plan.readings)
                    self.tally.note("ambiguous_rewrite", where, None, example, worker)
        self.pending.clear()

    def _matched(
        self,
        worker: Worker,
        plan: KeyPlan,
        given: Mapping[str, object],
        value: object,
        where: Where,
    ) -> None:
        """A logged key the plan's rows take (the general path): attributes, then values."""
        with_required = self.planner.with_required
        if plan.choices:
            plan = self._chosen(plan, value)
        for (row, captures), problem in zip(plan.matches, plan.problems, strict=True):
            if captures:
                if problem is not None:
                    self.tally.note(problem[0], where, row.name, problem[1], worker)
                else:
                    self._check_attributes(worker, row, given, captures, where)
            elif given or row.name in with_required:
                self._check_attributes(worker, row, given, {}, where)
        noted: set[str] = set()  # a value shared by two rows is one occurrence
        for summary in plan.summaries:
            self._record_row(worker, summary, where, value, noted)

    def _chosen(self, plan: KeyPlan, value: object) -> KeyPlan:
        """``plan`` narrowed to the rows the run's configuration chooses (rows sharing a key
        under exclusive conditions); while it does not decide, to the rows that take
        ``value`` (:func:`~.judges.ranges.accepts`; all of them when none does)."""
        run = self.run
        config = None if run.config_conflicts else run.config
        verdicts = [choice.holds(config) for choice in plan.choices]
        if None in verdicts:
            keep = [i for i, summary in enumerate(plan.summaries) if accepts(summary, value)]
            if not keep:
                return plan
        else:
            keep = [i for i, holds in enumerate(verdicts) if holds]
        return plan._replace(
            matches=tuple(plan.matches[i] for i in keep),
            problems=tuple(plan.problems[i] for i in keep),
            summaries=tuple(plan.summaries[i] for i in keep),
        )

    def _take_float(
        self,
        worker: Worker,
        plan: KeyPlan,
        memo: Memo,
        value: float,
        where: Where,
    ) -> bool:
        """The common case inline: a finite float under one row, no call attributes.

        ``False`` leaves it to the general path (a captured value with a problem). A
        family key's captured set is judged once per worker while it gives nothing to
        note; judging the same set again would change nothing.
        """
        row, captures = plan.matches[0]
        summary = plan.summaries[0]
        if not plan.plain:
            if plan.problems[0] is not None:
                return False
            if memo not in worker.checked:
                noted = self._check_attributes(worker, row, {}, captures, where)
                if noted or len(worker.checked) >= self.limits.max_family_keys:
                    self._record_row(worker, summary, where, value, set())
                    return True
                worker.checked.add(memo)
        if value < 0.0 and row.kind == "counter":
            self._record_row(worker, summary, where, value, set())
            return True
        bounds = summary.value_range
        if (bounds is not None and bounds.judge(value) is not None) or (
            value > 1.0 and summary.share_word is not None
        ):
            self._record_row(worker, summary, where, value, set())
            return True
        summary.logged += 1
        summary.last_step = where[4]
        summary.last_value = value
        if row.temporality == "cumulative":
            self._running_total(worker, summary, where, value)
        return True

    def _check_attributes(
        self,
        worker: Worker,
        row: MetricRow,
        given: Mapping[str, object],
        captured: Mapping[str, object],
        where: Where,
    ) -> bool:
        """Judge a point's attributes; whether anything was noted."""
        noted = False
        for kind, attribute, text in self._budgets(worker).check(row, given, captured):
            self.tally.note(kind, where, row.name, text, worker, detail=attribute)
            noted = True
        if row.name in self.values.tracked:
            self.values.see(row, {**given, **captured})
        return noted

    def _record_row(
        self,
        worker: Worker,
        summary: RowSummary,
        where: Where,
        value: object,
        noted: set[str],
    ) -> None:
        """One logged value of one row: count it and note (once per value) what is wrong."""
        summary.logged += 1
        summary.last_step = where[4]
        if value is None:
            # Code logs None for "no value this step" (HF Trainer's grad_norm without
            # clipping, TRL's empty-batch means); the tee skips it without a warning.
            summary.null += 1
            return
        row = summary.row
        if not row.is_scalar:
            return  # a table, a text, an image...: counted, never judged as a number
        number, kind, example = judge_value(value)
        if number is None:
            summary.non_scalar += 1
        else:
            summary.last_value = number
            if kind is not None:
                summary.non_finite += 1
                if row.non_finite == "allowed":
                    kind = None  # counted, not a finding: the row says NaN is legitimate
            else:
                counter = judge_counter(row, number)
                if counter is not None:
                    summary.negative += 1
                    kind, example = "counter_decrease", counter
                else:
                    kind, example = judge_range(summary, number)
                    if row.temporality == "cumulative":
                        self._running_total(worker, summary, where, number)
        if kind is not None and kind not in noted:
            noted.add(kind)
            self.tally.note(kind, where, row.name, example, worker)

    def _running_total(
        self, worker: Worker, summary: RowSummary, where: Where, total: float
    ) -> None:
        """A running total that went down restarted its count: a reset, counted (not an error).

        The tee adds the new value whole then; the report counts resets per row.
        """
        key = (id(worker), summary.row.name, where[0], where[1])
        previous = self.totals.get(key)
        self.totals[key] = total
        if previous is not None and total < previous:
            summary.resets += 1

    # --- the end -------------------------------------------------------------------------

    def finish(self) -> LiveCheckReport:
        """Choose the loop, judge presence, and return the report with every finding."""
        report = self.report
        self._route_pending()
        self._choose_loops()
        outcome = self._judge_presence()
        unsure = self.unjudged_values > 0
        summaries = self.rows.summaries
        for finding in outcome.findings:
            summary = summaries.get(finding.series or "")
            if unsure and (summary is None or summary.row.is_family):
                # An unjudged key may be this family's: not known to be missing.
                if summary is not None and summary.presence == "missing":
                    summary.presence = "not_logged"
                continue
            self.tally.findings[("missing", finding.prefix, finding.key)] = finding
        self._fold_renames()
        report.notices.extend(outcome.notices)
        report.notices.extend(self.run.restart_notices())
        capped = self.pool.capped_notice()
        if capped is not None:
            report.notices.append(capped)
        if self.backend_values:
            report.notices.append(_backend_notice(self.backend_values))
        if self.unjudged_values:
            report.notices.append(self._unjudged_notice())
        report.inactive_owners.update(outcome.inactive_owners)
        report.findings = self.tally.collected(list(self.pool.by_key.values()))
        minimum = report.coverage.minimum
        report.coverage = compute_coverage(report.rows, self.rows.owners, self.values)
        report.coverage.minimum = minimum
        return report

    def _choose_loops(self) -> None:
        """The run's loop (or a job's loops), and the declared loops an unknown one's
        finding lists."""
        report = self.report
        loops = self.loops
        report.loop = loops.choose()
        report.last_step = loops.last_step
        report.job_loops = loops.job()
        if report.job_loops:
            report.notices.append(_job_notice(report.job_loops))
            for at, notice in enumerate(report.notices):
                if notice.kind == "several_runs":
                    # Judged as a job, not as one run: the notice says how.
                    report.notices[at] = replace(
                        notice,
                        message=notice.message + "; they ran different loops, so each row "
                        "was judged over the runs of the loops that emit it (see several_loops)",
                    )
        known = ", ".join(sorted(loops.declared)) or "none"
        for finding in self.tally.findings.values():
            if finding.kind == "unknown_loop":
                finding.example = f"declared loops: {known}"

    def _judge_presence(self) -> PresenceOutcome:
        """Judge which rows that apply to the run were never logged."""
        report = self.report
        # run.format in a condition: the one format every input was read in (inputs of
        # several formats decide nothing about it).
        formats = {read.format for read in report.inputs if read.format}
        run = {"format": next(iter(formats))} if len(formats) == 1 else {}
        if report.loop.name is not None and not report.job_loops:
            run["loop"] = report.loop.name  # a job of several loops leaves run.loop undecided
        loop_configs = self.run.loop_configs(report.job_loops)
        config, conflict = self.run.decided_config(loop_configs)
        if conflict is not None:
            report.notices.append(conflict)
        return judge_presence(
            report.rows,
            self.loops,
            report.loop.name,
            self.rows.owner_of,
            all_owners=self.all_owners,
            config=config,
            run=run,
            job=report.job_loops,
            loop_configs=loop_configs,
            values=self.values,
        )


def _unjudged_text(values: int, limit: int) -> str:
    """The ``unjudged_keys`` notice: what stopped, what was left unjudged, and the fix."""
    return (
        f"live-check stopped matching keys against families with no literal text after "
        f"{limit} attempts: {values} value(s) under keys that needed another attempt were "
        "not judged (neither credited to a row nor undeclared), and no family was judged "
        "missing; give such families (a logger_key like '{x}_{y}') a literal head, tail or "
        "'/'-segment ('{x}/loss_{y}')"
    )


def _backend_notice(values: int) -> Notice:
    """Information: values of the logging backend's own metrics were not judged."""
    return Notice(
        "backend_metrics",
        f"{values} value(s) of the logging backend's own metrics "
        "(MLflow's system metrics, system/...) that no row declares were not "
        "judged: the training code did not log them; declare rows for them to "
        "judge them",
    )


def _job_notice(job: tuple[JobLoop, ...]) -> Notice:
    """Information: the workers checked together ran different loops."""
    return Notice(
        "several_loops",
        "the workers checked together ran different loops, a job of several: "
        + "; ".join(loop.describe() for loop in job)
        + ". Each row is judged by the steps of the loops that emit it, and a row is "
        "expected only when one of them emits it",
    )


AxisStep = tuple[StepKey, int]
"""A loop's step key a record holds, and the step it says."""


_NOT_RENAMED: Final = frozenset({"logged", "not_emitted", "not_applicable"})
"""Presence states of a row no undeclared key is taken to rename."""


def _axis_steps(record: Record, step_keys: tuple[StepKey, ...]) -> list[AxisStep]:
    """The step keys of ``step_keys`` the record holds with a whole-number value."""
    found: list[AxisStep] = []
    prefix, metrics = record.prefix, record.metrics
    for step_key in step_keys:
        name = step_key.key
        if prefix:
            if not name.startswith(prefix + "/"):
                continue
            name = name[len(prefix) + 1 :]
        value = metrics.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if isinstance(value, float) and not value.is_integer():
            continue
        found.append((step_key, int(value)))
    return found


def _key_step(axis: list[AxisStep], qualified: str, default: int) -> int:
    """The step of a logged key: its most specific covering step key's, else ``default``."""
    best: AxisStep | None = None
    for step_key, value in axis:
        if step_key.covers(qualified) and (
            best is None or len(step_key.prefix) > len(best[0].prefix)
        ):
            best = (step_key, value)
    return default if best is None else best[1]


def _claimed(plan: KeyPlan) -> str:
    """The rows an ambiguous key's finding names."""
    return ", ".join(repr(name) for name in plan.ambiguous)


def _is_media(value: object) -> bool:
    """Whether a logged value is a logging backend's media object, not a number.

    W&B writes a table, image, histogram, audio or other media value into a run's
    history as an object with a ``_type`` (``{"_type": "table-file", "path": ...}``).
    """
    return isinstance(value, dict) and isinstance(value.get("_type"), str)
