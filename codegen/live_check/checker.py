"""The checker: routes each record to the matcher and the judges, and aggregates findings.

State is bounded by the catalog's teed rows plus the caps of
:class:`~codegen.runs.limits.Limits`, whatever the log holds. Per
worker (a file, or a ``"worker"`` field within a file when many files are
checked together) only what is judged per worker is kept: its findings of
:data:`~codegen.live_check.findings.PER_WORKER_KINDS`, its malformed-line
count and, once it logs attributes, its attribute budgets.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Final, NamedTuple

from metric_catalog.series_rules import PREFIX_GLUE

from ..catalog.diagnostics import Position
from ..catalog.matching import KeyMatcher, Match
from ..catalog.model import Catalog, MetricRow
from ..runs.limits import Limits
from ..runs.records import Malformed, Note, Record, RunConfig
from ..runs.rewrites import (
    KNOWN_SPELLINGS,
    PREFIX_TABLE_SOURCES,
    PREFIX_TABLES,
    rewrite_key,
    rewrite_prefix,
)
from .coverage import ValueTracker, compute_coverage
from .findings import CAPPED_KINDS, PER_WORKER_KINDS, Finding, Notice, catalog_hints
from .judges.attributes import AttributeRules, Budgets
from .judges.counters import judge_counter
from .judges.loops import JobLoop, LoopJudge, WorkerLoop
from .judges.presence import agreed, judge_presence
from .judges.telemetry import WireJudge
from .judges.values import judge_value
from .report import LiveCheckReport
from .statistics import RowSummary

__all__ = ["Checker", "Worker"]

Slot = tuple[str, str, str]
Where = tuple[str, str, str, int, int]
"""(prefix, key, path, line, step) of one occurrence."""

_ABANDONED: Final = "\x00abandoned"
_RESTARTS_SHOWN: Final = 10


class _Restart(NamedTuple):
    """How often an input's steps went back, and the first time: in file ``path`` at
    ``line``, to ``step`` after ``last``."""

    times: int
    path: str
    line: int
    step: int
    last: int


class Worker:
    """What one worker's lines alone decide: per-worker findings, malformed lines, budgets."""

    __slots__ = (
        "budgets",
        "checked",
        "findings",
        "label",
        "loop",
        "malformed",
        "named",
        "unreported",
    )

    def __init__(self, label: str, loop: WorkerLoop, *, named: bool = False) -> None:
        self.label = label
        self.loop = loop
        """The loop this worker's records named, its steps and signature keys."""
        self.named = named
        """Whether the worker is a ``"worker"`` field's value within an input."""
        self.findings: dict[Slot, Finding] | None = None
        self.malformed = 0
        self.unreported = 0
        self.budgets: Budgets | None = None
        self.checked: set[tuple[str, str, bool | str]] = set()
        """Family keys logged without attributes whose captured set this worker already
        judged: judging the same set again changes nothing (bounded by the plan cache)."""


_TRAINING_AXIS: Final[frozenset[str]] = frozenset({""})
"""The step axes of a key on the training step (``""``), or of a key no row takes."""


class _KeyPlan(NamedTuple):
    """A logged key's meaning, decided once: where it splits, the rows it counts under, the
    captured values' problems (one per match), the rows' summaries, whether it is a loop's
    signature key, whether it takes the plain path (literal rows, no required attribute),
    and the key as read when a key rewrite changed it.
    """

    prefix: str
    key: str
    matches: tuple[Match, ...]
    problems: tuple[tuple[str, str] | None, ...]
    summaries: tuple[RowSummary, ...]
    signature: bool
    plain: bool
    axes: frozenset[str]
    """The step axes of the rows it counts under: ``_TRAINING_AXIS`` when all are on the
    training step (also for a key no row takes), else their ``step_axis`` values."""
    read_as: str | None = None
    hint: str = ""


_MAX_INPUT_CONFIGS: Final = 4096
"""Inputs whose own configuration is kept for a job of several loops (bounded memory)."""


class Checker:
    """Judges records one at a time; :meth:`finish` returns the report.

    ``multi`` checks several inputs as one run: findings carry their input's
    position, and a ``"worker"`` field splits an input into workers.
    """

    def __init__(
        self,
        catalog: Catalog,
        source: str,
        *,
        all_owners: bool = False,
        loop: str | None = None,
        limits: Limits | None = None,
        multi: bool = False,
        promoted: tuple[str, ...] = (),
        key_rewrites: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.limits = limits or Limits()
        self.report = LiveCheckReport(source, limits=self.limits)
        self.rewrites = tuple((old, new) for old, new in key_rewrites if old)
        """``--key-rewrite`` rules: applied to every logged key before it is matched."""
        self.report.key_rewrites = self.rewrites
        self.rewritten: set[tuple[str, str]] = set()
        """Distinct ``(prefix, key)`` a rewrite changed (bounded by the plan cache)."""
        self.report.hints = catalog_hints(
            [f.path for f in catalog.files], [f.path for f in catalog.files if f.loops]
        )
        self.all_owners = all_owners
        self.multi = multi
        self.loops = LoopJudge(catalog, loop)
        self.rules = AttributeRules(catalog)
        self.with_required = frozenset(
            row.name
            for _, row in catalog.rows()
            if any(ref.requirement_level == "required" for ref in row.attributes)
        )
        """Rows with a required attribute: their points are checked even without attributes."""
        # Series name and registry key -> row, for point lines (recorded rows' values
        # are counted in summaries of their own, outside the teed rows' table).
        self.series: dict[str, tuple[MetricRow, RowSummary]] = {}
        self.summaries: dict[str, RowSummary] = {}
        self.owner_of: dict[str, str] = {}
        # Last value of each running total (temporality: cumulative), per worker and key.
        self.totals: dict[tuple[int, str, str, str], float] = {}
        self.plans: dict[tuple[str, str, bool | str], _KeyPlan] = {}
        """What each logged ``(prefix, key, split)`` means, decided once (bounded)."""
        self.owners: dict[str, str] = {}
        """Teed row name -> its catalog file's owner (coverage is given per owner)."""
        teed: list[MetricRow] = []
        for catalog_file, row in catalog.rows():
            summary = RowSummary(row)
            self.series.setdefault(row.registry_key, (row, summary))
            self.series[row.name] = (row, summary)
            if row.section != "teed" or row.logger_key is None:
                continue
            self.owner_of[row.name] = catalog_file.path
            self.owners[row.name] = catalog_file.owner
            self.summaries[row.name] = summary
            self.report.rows.append(summary)
            teed.append(row)
        self.matcher = KeyMatcher(teed, self.limits.max_family_keys, catalog.attributes())
        self.run_config: Mapping[str, object] | None = None
        """The configuration the run's header line logged, if any."""
        self.config_from: RunConfig | None = None
        """The record :attr:`run_config` came from (``None``: none yet, or ``--run-config``)."""
        self.config_conflicts: list[str] = []
        """Runs (W&B run ids) that logged another configuration than the first run's."""
        self.input_configs: dict[str, Mapping[str, object]] = {}
        """Each input's (worker's) own configuration: a job's loops are judged by theirs."""
        self.values = ValueTracker(catalog)
        """Enum values seen per key family and required attribute, for the coverage."""
        self.wire = WireJudge(catalog, promoted)
        """Live points (OTLP, scrapes): their series, kind, unit, name and identity."""
        self.report.rows.sort(key=lambda s: s.row.name)
        self.findings: dict[Slot, Finding] = {}
        self.workers: dict[tuple[str, str | None], Worker] = {}
        self.undeclared = 0
        self.folded_workers = 0
        """Lines whose ``"worker"`` value came after :attr:`Limits.max_workers` workers."""
        self.loop_names = 0
        self.backend_values = 0
        self.order: dict[tuple[str, str, str, str, str], int] = {}
        """The last training step of each logging call (input, worker, file, prefix, first
        key), bounded."""
        self.restarts: dict[tuple[str, str], _Restart] = {}
        """Inputs (and workers) whose steps went back (a restart), with the first time."""
        """Values of a backend's own metrics no row declares (see ``Record.backend_prefix``)."""

    # --- routing -------------------------------------------------------------------------

    def worker(self, path: str, name: str | None = None) -> Worker:
        """The worker a record of ``path`` (naming worker ``name``) belongs to."""
        key = (path, name if self.multi else None)
        found = self.workers.get(key)
        if found is None and key[1] is not None and len(self.workers) >= self.limits.max_workers:
            self.folded_workers += 1
            return self.worker(path)
        if found is None:
            label = path if key[1] is None else f"{path}[worker {name}]"
            found = Worker(label, self.loops.worker(label, path), named=key[1] is not None)
            self.workers[key] = found
        return found

    @property
    def budgets(self) -> Budgets:
        """The attribute budgets of the report's own source (a single input)."""
        return self._budgets(self.worker(self.report.source))

    def _position(self, path: str, line: int) -> Position | None:
        """Where an occurrence is reported: ``None`` means the report's source at ``line``."""
        return Position(path, line, 1) if self.multi or path != self.report.source else None

    def _budgets(self, worker: Worker) -> Budgets:
        if worker.budgets is None:
            worker.budgets = Budgets(self.rules, self.limits)
        return worker.budgets

    def take(self, item: Record | RunConfig | Malformed | Note) -> None:
        """Judge one record, note the run's configuration, count a malformed part or keep a note."""
        if isinstance(item, Malformed):
            self.malformed(item)
            return
        if isinstance(item, Note):
            position = Position(item.path, item.line, 1) if item.line else None
            self.report.notices.append(Notice(item.kind, item.message, position=position))
            return
        if isinstance(item, RunConfig):
            key = item.input or item.path
            if key not in self.input_configs and len(self.input_configs) < _MAX_INPUT_CONFIGS:
                self.input_configs[key] = item.config
            # The first header wins: every worker of one run logs the same configuration,
            # and a restarted job's header repeats it. Another run's differing one does not
            # belong to the same run: the conditions are left undecided (see finish).
            first = self.config_from
            if self.run_config is None:
                self.run_config, self.config_from = item.config, item
            elif (
                first is not None
                and first.run is not None
                and item.run not in (None, first.run)
                and item.config != first.config
                and item.run not in self.config_conflicts
                and len(self.config_conflicts) < self.limits.max_loop_names
            ):
                self.config_conflicts.append(str(item.run))
            return
        worker = self.worker(item.input or item.path, item.worker)
        self.report.records += 1
        self._see(item, worker)
        if item.series is None:
            self.record(item, worker)
        else:
            self.point(item, worker)

    def malformed(self, item: Malformed) -> None:
        """A line that is not a record (or the reason an input was abandoned)."""
        worker = self.worker(item.input or item.path)
        position = self._position(item.path, item.line)
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
        per_worker = kind in PER_WORKER_KINDS
        if per_worker:
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
        if kind in CAPPED_KINDS:
            if self.undeclared >= self.limits.max_undeclared_keys:
                if kind == "undeclared":
                    self.report.undeclared_untracked += 1
                else:
                    untracked = self.report.untracked
                    untracked[kind] = untracked.get(kind, 0) + 1
                return
            self.undeclared += 1
        findings[slot] = Finding(
            kind,
            prefix,
            key,
            series,
            line,
            step,
            example,
            position=self._position(path, line),
            attribute=detail or None,
            last_line=line,
            last_path=path,
        )

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
        if slot not in self.findings:
            if self.loop_names >= self.limits.max_loop_names:
                return
            self.loop_names += 1
        where = ("", loop, record.path, record.line, record.step)
        example = ""
        if kind == "loop_conflict":
            state = worker.loop
            example = (
                f"{self._locate(*state.named_at)} named {state.named!r} first, the loop "
                "that worker is judged as"
            )
        self.note(kind, where, None, example, worker)

    def point(self, record: Record, worker: Worker) -> None:
        """One point: its series must be declared, its value and attributes fit the row."""
        series = record.series or ""
        where = ("", series, record.path, record.line, record.step)
        if record.transport is not None:
            self.live_point(record, worker, where)
            return
        found = self.series.get(series)
        if found is None:
            self.note("undeclared_series", where, None, "", worker)
            return
        row, summary = found
        self._check_attributes(worker, row, record.attributes, {}, where)
        self._record_row(worker, summary, where, record.value, set())

    def live_point(self, record: Record, worker: Worker, where: Where) -> None:
        """A point of live telemetry: also judge how the wire describes its series."""
        row = self.wire.resolve(record)
        found = None if row is None else self.series.get(row.name)
        if row is None or found is None:
            self.note("undeclared_series", where, None, "", worker)
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
            self.note(kind, where, row.name, example, worker, detail=attribute)
        self._check_attributes(worker, row, attributes, {}, where)
        self._record_row(worker, summary, where, record.value, set())

    def _plan(self, prefix: str, logged: str, split: bool, rewrite: str | None) -> _KeyPlan:
        """What a logged key means, decided once per ``(prefix, key)``: see :class:`_KeyPlan`.

        A key a rewrite changes is judged as rewritten, unless only the key as
        read is declared (a key that merely contains the rewritten text, such as
        ``entropy_at_end`` under ``_at_ -> @``, keeps its meaning). ``rewrite``
        names the rule the record's backend rewrote keys by (see :meth:`_plan_key`).
        """
        plan = None
        if self.rewrites:
            rewritten = rewrite_key(logged, self.rewrites)
            if rewritten != logged:
                plan = self._plan_key(prefix, rewritten, split, rewrite)
                if not plan.matches:
                    kept = self._plan_key(prefix, logged, split, rewrite)
                    if kept.matches:
                        return kept
                plan = plan._replace(read_as=logged)
        if plan is None:
            plan = self._plan_key(prefix, logged, split, rewrite)
        if plan.matches:
            return plan
        for known, why, flag in self._known_spellings(logged):
            other = self._plan_key(prefix, known, split, rewrite)
            if other.matches:
                shown = f"{other.prefix}/{other.key}" if other.prefix else other.key
                return plan._replace(
                    hint=f" ({why}: {flag} reads it as {shown!r}, which a row declares)"
                )
        return plan

    def _known_spellings(self, logged: str) -> Iterator[tuple[str, str, str]]:
        """What a known backend spelling not undone yet reads ``logged`` as: ``(key, what
        wrote it, the flag that undoes it)``, substring spellings before prefix tables."""
        for rule, why in KNOWN_SPELLINGS:
            if rule not in self.rewrites and rule[0] in logged:
                known = rewrite_key(rewrite_key(logged, self.rewrites), (rule,))
                yield known, why, f"--key-rewrite {rule[0]}={rule[1]}"
        if self.report.key_prefix_rewrites:
            return
        for table, rules in PREFIX_TABLES.items():
            known = rewrite_prefix(logged, rules)
            if known != logged:
                flag = f"--key-prefix-rewrite {table}"
                yield rewrite_key(known, self.rewrites), PREFIX_TABLE_SOURCES[table], flag

    def _plan_key(self, prefix: str, logged: str, split: bool, rewrite: str | None) -> _KeyPlan:
        """:meth:`_plan` of a key as given (no ``--key-rewrite``).

        A key no row takes as logged, read from a backend that rewrites keys
        (``rewrite``: TensorBoard writes '@' as '_'), is matched against the rows'
        keys as that backend would have written them.
        """
        loops = self.loops
        signature = bool(loops.signature_keys) and (prefix, logged) in loops.signature_keys
        given, key = prefix, logged
        if split:
            prefix, key = self.matcher.split(logged)
        matches = self.matcher.match(prefix, key)
        if not matches and not prefix and ("/" in logged or PREFIX_GLUE in logged):
            # A flat key logged bare (a tracker's dict through adapters.tee_flat, written
            # under the empty prefix): split as the adapter does, at the longest prefix.
            prefix, key = self.matcher.split(logged)
            matches = self.matcher.match(prefix, key)
        if not matches and rewrite is not None:
            # The backend rewrote the key (TensorBoard: '@' to '_'): match the rows' keys
            # as it would have written them.
            other = self.matcher.rewritten(rewrite)
            found = other.split(logged) if split or not given else (given, logged)
            rewritten = other.match(*found)
            if rewritten:
                (prefix, key), matches = found, rewritten
        problems = tuple(
            self.rules.judge_captures(captures) if captures else None for _, captures in matches
        )
        # The plain path: literal rows only, no attribute the row requires on every point.
        plain = all(not captures for _, captures in matches) and not any(
            row.name in self.with_required for row, _ in matches
        )
        summaries = tuple(self.summaries[row.name] for row, _ in matches)
        axes = frozenset(row.step_axis for row, _ in matches)
        if not axes or axes == _TRAINING_AXIS:
            axes = _TRAINING_AXIS  # one shared object: the record loop tests it by identity
        return _KeyPlan(prefix, key, matches, problems, summaries, signature, plain, axes)

    def record(self, record: Record, worker: Worker) -> None:
        """One logging call: match each key, count it, check its value and attributes."""
        loops = self.loops
        given, split = record.attributes, record.split
        path, line, step = record.path, record.line, record.step
        plans = self.plans
        on_training = False  # a key on the training step's axis (or no row's)
        off_axes: set[str] = set()
        memo_split = split if record.rewrite is None else record.rewrite
        for logged, value in record.metrics.items():
            plan = plans.get((record.prefix, logged, memo_split))
            if plan is None:
                plan = self._plan(record.prefix, logged, split, record.rewrite)
                if len(plans) < self.limits.max_family_keys:
                    plans[(record.prefix, logged, memo_split)] = plan
            if plan.read_as is not None:
                self._note_rewrite(record.prefix, logged)
            if plan.axes is _TRAINING_AXIS:
                on_training = True
            else:
                off_axes.update(plan.axes)
            if plan.signature:
                used = logged if plan.read_as is None else rewrite_key(logged, self.rewrites)
                loops.seen_signature(record.prefix, used, worker.loop)
            matches = plan.matches
            if (
                not given
                and len(matches) == 1
                and type(value) is float
                and value - value == 0.0  # finite
                and self._take_float(
                    worker,
                    plan,
                    (record.prefix, logged, memo_split),
                    value,
                    (plan.prefix, plan.key, path, line, step),
                )
            ):
                continue
            prefix, key = plan.prefix, plan.key
            where = (prefix, key, path, line, step)
            if not matches:
                if _is_media(value) or isinstance(value, list) or logged in record.step_keys:
                    # A backend's media object (a W&B table, image or histogram reference)
                    # or an array (an empty one W&B stores as []) is no metric, and a
                    # backend's x axis (a W&B step metric, which W&B copies into records
                    # the code logged without it) may be the backend's own writing: nothing
                    # a teed row must declare, so not undeclared.
                    continue
                if record.backend_prefix is not None and logged.startswith(record.backend_prefix):
                    # The backend's own metric (MLflow's system/...), not the code's.
                    self.backend_values += 1
                    continue
                elsewhere = self.matcher.declared_prefixes(key)
                hint = ""
                if elsewhere:
                    shown = ", ".join(repr(p) for p in sorted(elsewhere))
                    hint = f" (a row declares it under prefix {shown})"
                if plan.read_as is not None:
                    hint += f" (read as {plan.read_as!r}, before the key rewrites)"
                hint += plan.hint
                self.note("undeclared", where, None, hint, worker)
                continue
            for (row, captures), problem in zip(matches, plan.problems, strict=True):
                if captures:
                    if problem is not None:
                        self.note(problem[0], where, row.name, problem[1], worker)
                    else:
                        self._check_attributes(worker, row, given, captures, where)
                elif given or row.name in self.with_required:
                    self._check_attributes(worker, row, given, {}, where)
            noted: set[str] = set()  # a value shared by two rows is one occurrence
            for summary in plan.summaries:
                self._record_row(worker, summary, where, value, noted)
        # Megatron's "lm loss vs samples" is logged at the sample count, which is not how
        # far training got: a record of only such keys leaves the run's last step alone.
        if on_training or not off_axes:
            worker.loop.see_step(step)
            self._see_order(record)

    def _see_order(self, record: Record) -> None:
        """Note a step lower than the last one of the same logging call: a job restarted
        from a checkpoint logs those steps again (information, never a finding).

        A call is told by its file, worker, prefix and first key: calls on other step
        axes (a W&B run's ``eval/*`` at their own step metric, samples at ``_step``)
        each keep their own order.
        """
        first = next(iter(record.metrics), "")
        key = (record.input or "", record.worker or "", record.path, record.prefix, first)
        last = self.order.get(key)
        if last is None:
            if len(self.order) < self.limits.max_family_keys:
                self.order[key] = record.step
            return
        self.order[key] = record.step
        if record.step < last:
            group = (record.input or record.path, record.worker or "")
            seen = self.restarts.get(group)
            if seen is None:
                if len(self.restarts) < self.limits.max_family_keys:
                    self.restarts[group] = _Restart(1, record.path, record.line, record.step, last)
            else:
                self.restarts[group] = seen._replace(times=seen.times + 1)

    def _note_rewrite(self, prefix: str, logged: str) -> None:
        """Count a value whose key a rewrite changed (and the key, once)."""
        self.report.rewritten_values += 1
        pair = (prefix, logged)
        if pair not in self.rewritten and len(self.rewritten) < self.limits.max_family_keys:
            self.rewritten.add(pair)
            self.report.rewritten_keys += 1

    def _take_float(
        self,
        worker: Worker,
        plan: _KeyPlan,
        memo: tuple[str, str, bool | str],
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
            self.note(kind, where, row.name, text, worker, detail=attribute)
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
        number, kind, example = judge_value(value)
        if number is None:
            summary.non_scalar += 1
        else:
            summary.last_value = number
            if kind is not None:
                summary.non_finite += 1
            else:
                counter = judge_counter(row, number)
                if counter is not None:
                    summary.negative += 1
                    kind, example = "counter_decrease", counter
                elif row.temporality == "cumulative":
                    self._running_total(worker, summary, where, number)
        if kind is not None and kind not in noted:
            noted.add(kind)
            self.note(kind, where, row.name, example, worker)

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

    def _restart_notices(self) -> list[Notice]:
        """One notice per input whose steps went back (at most :data:`_RESTARTS_SHOWN`)."""
        out = []
        shown = list(self.restarts.items())[:_RESTARTS_SHOWN]
        for (where, worker), (times, path, line, step, last) in shown:
            named = f" (worker {worker})" if worker else ""
            at = "" if path == where else f" (counted per file; first in {path})"
            out.append(
                Notice(
                    "restart",
                    f"{where}{named}: the step went back {times} time(s), first to step "
                    f"{step} after step {last}{at}: a job restarted from a checkpoint logs "
                    "those steps again; their values were judged like any other (a restart "
                    "is no finding; a running total that went down counts a reset)",
                    position=Position(path, line, 1) if line else None,
                )
            )
        if len(self.restarts) > _RESTARTS_SHOWN:
            more = len(self.restarts) - _RESTARTS_SHOWN
            out.append(Notice("restart", f"and {more} more input(s) whose step went back"))
        return out

    def _locate(self, path: str, line: int) -> str:
        """How a message names a line of the log (several inputs: ``path:line``)."""
        return str(Position(path, line, 1)) if self.multi else f"line {line}"

    def worker_count(self) -> int:
        """Workers seen; an input's unnamed lines count only when no line of it names one."""
        named = {path for path, name in self.workers if name is not None}
        return sum(1 for path, name in self.workers if name is not None or path not in named)

    def _loop_configs(self, job: tuple[JobLoop, ...]) -> dict[str, Mapping[str, object] | None]:
        """Each job loop's configuration: its workers' one (``None`` when they differ or
        logged none); ``--run-config`` is every loop's. Empty for a run of one loop."""
        out: dict[str, Mapping[str, object] | None] = {}
        for loop in job:
            if self.config_from is None and self.run_config is not None:
                out[loop.name] = self.run_config  # --run-config
                continue
            out[loop.name] = agreed(
                [self.input_configs[i] for i in loop.inputs if i in self.input_configs]
            )
        return out

    def finish(self) -> LiveCheckReport:
        """Choose the loop, judge presence, and return the report with every finding."""
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
        for finding in self.findings.values():
            if finding.kind == "unknown_loop":
                finding.example = f"declared loops: {known}"
        # run.format in a condition: the one format every input was read in (inputs of
        # several formats decide nothing about it).
        formats = {read.format for read in report.inputs if read.format}
        run = {"format": next(iter(formats))} if len(formats) == 1 else {}
        config = self.run_config
        loop_configs = self._loop_configs(report.job_loops)
        if self.config_conflicts and self.config_from is not None:
            config = None
            if None in loop_configs.values() or not loop_configs:
                report.notices.append(_config_conflict(self.config_from, self.config_conflicts))
        outcome = judge_presence(
            report.rows,
            loops,
            report.loop.name,
            self.owner_of,
            all_owners=self.all_owners,
            config=config,
            run=run,
            job=report.job_loops,
            loop_configs=loop_configs,
        )
        for finding in outcome.findings:
            self.findings[("missing", finding.prefix, finding.key)] = finding
        report.notices.extend(outcome.notices)
        report.notices.extend(self._restart_notices())
        if self.folded_workers:
            report.notices.append(
                Notice(
                    "workers_capped",
                    f"{self.folded_workers} record(s) named a worker after the first "
                    f"{self.limits.max_workers} workers; each was judged as its input's "
                    "unnamed worker",
                )
            )
        if self.backend_values:
            report.notices.append(
                Notice(
                    "backend_metrics",
                    f"{self.backend_values} value(s) of the logging backend's own metrics "
                    "(MLflow's system metrics, system/...) that no row declares were not "
                    "judged: the training code did not log them; declare rows for them to "
                    "judge them",
                )
            )
        report.inactive_owners.update(outcome.inactive_owners)
        findings = list(self.findings.values())
        for worker in self.workers.values():
            if worker.findings:
                findings.extend(worker.findings.values())
            report.malformed_unreported += worker.unreported
        if self.multi:
            findings.sort(key=lambda f: (str(f.position or ""), f.line, f.kind, f.prefix, f.key))
        else:
            findings.sort(key=lambda f: (f.line, f.kind, f.prefix, f.key))
        report.findings = findings
        minimum = report.coverage.minimum
        report.coverage = compute_coverage(report.rows, self.owners, self.values)
        report.coverage.minimum = minimum
        return report


def _job_notice(job: tuple[JobLoop, ...]) -> Notice:
    """Information: the workers checked together ran different loops."""
    return Notice(
        "several_loops",
        "the workers checked together ran different loops, a job of several: "
        + "; ".join(loop.describe() for loop in job)
        + ". Each row is judged by the steps of the loops that emit it, and a row is "
        "expected only when one of them emits it",
    )


def _config_conflict(first: RunConfig, others: list[str]) -> Notice:
    """Information: runs checked together logged different configurations."""
    shown = ", ".join(repr(run) for run in others[:3]) + (", ..." if len(others) > 3 else "")
    return Notice(
        "config_conflict",
        f"the runs checked together logged different configurations (run {first.run!r}, "
        f"and {shown}): rows whose condition or first_step names config.<path> were judged "
        "as for a run that logged none (conditional information, never missing); pass "
        "--run with one run's id to judge it by its own configuration",
    )


def _is_media(value: object) -> bool:
    """Whether a logged value is a logging backend's media object, not a number.

    W&B writes a table, image, histogram, audio or other media value into a run's
    history as an object with a ``_type`` (``{"_type": "table-file", "path": ...}``).
    """
    return isinstance(value, dict) and isinstance(value.get("_type"), str)
