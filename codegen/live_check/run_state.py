"""What the checker keeps about the run as a whole, and about each of its workers.

:class:`RunState` holds the run-level facts no single record decides: the
configuration the run logged (and whether runs checked together disagree), each
input's own configuration, and the step order of each logging call (a restart).
:class:`Workers` holds the per-worker :class:`Worker` states, capped at
:attr:`~codegen.runs.limits.Limits.max_workers`. Both are bounded by the limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple

from ..catalog.diagnostics import Position
from ..runs.limits import Limits
from ..runs.records import Record, RunConfig
from .findings import Finding, Notice
from .judges.attributes import Budgets
from .judges.loops import JobLoop, LoopJudge, WorkerLoop
from .judges.presence import agreed

__all__ = ["RunState", "Worker", "Workers"]

Slot = tuple[str, str, str]
"""A finding's aggregation key: ``(kind, prefix, key[\\x00attribute])``."""

_RESTARTS_SHOWN: Final = 10
_MAX_INPUT_CONFIGS: Final = 4096
"""Inputs whose own configuration is kept for a job of several loops (bounded memory)."""


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


class Workers:
    """The workers seen so far, by ``(input, worker name)``; names past the cap fold."""

    def __init__(self, loops: LoopJudge, limits: Limits, *, multi: bool) -> None:
        self.loops = loops
        self.limits = limits
        self.multi = multi
        """Whether a ``"worker"`` field splits an input into workers (several inputs)."""
        self.by_key: dict[tuple[str, str | None], Worker] = {}
        self.folded = 0
        """Lines whose ``"worker"`` value came after :attr:`Limits.max_workers` workers."""

    def get(self, path: str, name: str | None = None) -> Worker:
        """The worker a record of ``path`` (naming worker ``name``) belongs to."""
        key = (path, name if self.multi else None)
        found = self.by_key.get(key)
        if found is None and key[1] is not None and len(self.by_key) >= self.limits.max_workers:
            self.folded += 1
            return self.get(path)
        if found is None:
            label = path if key[1] is None else f"{path}[worker {name}]"
            found = Worker(label, self.loops.worker(label, path), named=key[1] is not None)
            self.by_key[key] = found
        return found

    def count(self) -> int:
        """Workers seen; an input's unnamed lines count only when no line of it names one."""
        named = {path for path, name in self.by_key if name is not None}
        return sum(1 for path, name in self.by_key if name is not None or path not in named)

    def capped_notice(self) -> Notice | None:
        """Information: how many records named a worker past the cap (``None``: none)."""
        if not self.folded:
            return None
        return Notice(
            "workers_capped",
            f"{self.folded} record(s) named a worker after the first "
            f"{self.limits.max_workers} workers; each was judged as its input's "
            "unnamed worker",
        )


class _Restart(NamedTuple):
    """How often an input's steps went back, and the first time: in file ``path`` at
    ``line``, to ``step`` after ``last``."""

    times: int
    path: str
    line: int
    step: int
    last: int


class RunState:
    """The run's configurations and the step order of its logging calls (bounded)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.config: Mapping[str, object] | None = None
        """The configuration the run's header line logged, if any."""
        self.config_from: RunConfig | None = None
        """The record :attr:`config` came from (``None``: none yet, or ``--run-config``)."""
        self.config_conflicts: list[str] = []
        """Runs (W&B run ids) that logged another configuration than the first run's."""
        self.input_configs: dict[str, Mapping[str, object]] = {}
        """Each input's (worker's) own configuration: a job's loops are judged by theirs."""
        self.order: dict[tuple[str, str, str, str, str], int] = {}
        """The last training step of each logging call (input, worker, file, prefix, first
        key), bounded."""
        self.restarts: dict[tuple[str, str], _Restart] = {}
        """Inputs (and workers) whose steps went back (a restart), with the first time."""

    def see_config(self, item: RunConfig) -> None:
        """Note a configuration line: the input's own, and the run's when it is the first."""
        key = item.input or item.path
        if key not in self.input_configs and len(self.input_configs) < _MAX_INPUT_CONFIGS:
            self.input_configs[key] = item.config
        # The first header wins: every worker of one run logs the same configuration,
        # and a restarted job's header repeats it. Another run's differing one does not
        # belong to the same run: the conditions are left undecided (see decided_config).
        first = self.config_from
        if self.config is None:
            self.config, self.config_from = item.config, item
        elif (
            first is not None
            and first.run is not None
            and item.run not in (None, first.run)
            and item.config != first.config
            and item.run not in self.config_conflicts
            and len(self.config_conflicts) < self.limits.max_loop_names
        ):
            self.config_conflicts.append(str(item.run))

    def loop_configs(self, job: tuple[JobLoop, ...]) -> dict[str, Mapping[str, object] | None]:
        """Each job loop's configuration: its workers' one (``None`` when they differ or
        logged none); ``--run-config`` is every loop's. Empty for a run of one loop."""
        out: dict[str, Mapping[str, object] | None] = {}
        for loop in job:
            if self.config_from is None and self.config is not None:
                out[loop.name] = self.config  # --run-config
                continue
            out[loop.name] = agreed(
                [self.input_configs[i] for i in loop.inputs if i in self.input_configs]
            )
        return out

    def decided_config(
        self, loop_configs: Mapping[str, Mapping[str, object] | None]
    ) -> tuple[Mapping[str, object] | None, Notice | None]:
        """The configuration conditions are judged by, and the notice when runs disagree.

        Runs that logged different configurations decide nothing: the run's
        configuration is then ``None``, and the notice is given unless every job
        loop has one of its own.
        """
        if not self.config_conflicts or self.config_from is None:
            return self.config, None
        if None in loop_configs.values() or not loop_configs:
            return None, _config_conflict(self.config_from, self.config_conflicts)
        return None, None

    def see_order(self, record: Record) -> None:
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

    def restart_notices(self) -> list[Notice]:
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
