"""Loops, step axes and presence for ``infer``: which runs judge a key, on which steps.

A run's loop is the one its records name (``JsonlLogger(loop=...)``); a run whose records
name none but that logs a step axis (``train/step``, ``rollout/global_step``: a key whose
name ends in a step word and whose values are whole and never go back) is of the loop
that axis belongs to, named after it (``train``, ``rollout``). Runs that log different
axes are different loops. The step axes become the loop's ``step_keys`` and presence is
judged on them, not on a tracker's call counter: a key is ``required`` when every step of
its axis logs it in every run of its loops, runs of other loops say nothing about it, and
a key logged every N steps gets ``every: "N"``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from ..catalog.words import key_words
from .observe import KeyStats, Observations, axis_head
from .units import Values, key_unit

__all__ = ["Presence", "RunLoops", "presence", "run_loops", "scale_clash"]

_DEFAULT_LOOP: Final = "train"
"""The loop of a run whose only step axis has no prefix (``global_step``, ``step``)."""
_LOOP_NAME: Final = re.compile(r"[a-z][a-z0-9_]*\Z")
_MAX_LOOP_CHARS: Final = 64


@dataclass(slots=True)
class RunLoops:
    """Each run's loops, and the step axes of the loops this draft declares."""

    of_run: dict[int, set[str]] = field(default_factory=dict)
    """Run -> its loops (named by its records, else derived from its step axes)."""
    derived: dict[str, list[str]] = field(default_factory=dict)
    """A loop derived from step axes -> those axes (sorted)."""
    axes: dict[int, list[str]] = field(default_factory=dict)
    """Run -> its step axes (values whole, never going back)."""
    logged: set[tuple[int, str]] = field(default_factory=set)
    """(run, prefix) pairs of the records."""
    configured: dict[int, dict[int, list[str]]] = field(default_factory=dict)
    """Run -> whole numbers of its configuration -> their paths (periods it may set)."""
    finest: dict[int, int] = field(default_factory=dict)
    """Run -> the smallest gap between two steps any key of it was logged at: a key
    logged at a larger one, on every step of its axis (``eval/step`` at 0, 10, 20), is
    periodic; a trainer that logs everything every 10 steps makes nothing periodic."""

    def of_key(self, stats: KeyStats) -> list[str]:
        """The loops that logged a key: named by its records or derived from its runs."""
        found = set(stats.loops)
        for run in stats.steps:
            found |= self.of_run.get(run, set())
        return sorted(found)

    def step_keys(self, loop: str, explicit: set[str]) -> list[tuple[str, str]]:
        """``(key, prefix)`` step keys of a loop the draft declares: one axis covers every
        key of the loop (no prefix); several cover their own prefixes."""
        axes = set(self.derived.get(loop, ()))
        if loop in explicit:
            for run, loops in self.of_run.items():
                if loop in loops:
                    axes.update(self.axes.get(run, ()))
        if len(axes) == 1:
            return [(next(iter(axes)), "")]
        return sorted((axis, axis_head(axis)) for axis in axes)


def run_loops(seen: Observations, declared: set[str]) -> RunLoops:
    """Each run's loops; a run naming none is of the loop its step axes make it."""
    found = RunLoops(logged={(run, prefix) for run, prefix, _ in seen.prefix_steps})
    found.configured = {run: _whole_values(c) for run, c in seen.run_configs.items()}
    for stats in seen.keys.values():
        for run, gap in stats.gap.items():
            if gap > 0 and gap < found.finest.get(run, gap + 1):
                found.finest[run] = gap
    taken = set(declared) | {loop for loops in seen.run_loops.values() for loop in loops}
    unnamed: list[int] = []
    for run in range(len(seen.runs)):
        axes = sorted(seen.run_axes.get(run, ()))
        if axes:
            found.axes[run] = axes
        named = seen.run_loops.get(run)
        if named:
            found.of_run[run] = set(named)
        elif axes:
            unnamed.append(run)
    # Runs that share a step axis are of one loop (a run with evaluation off logs no
    # eval/step, and is the same trainer); runs on disjoint axes are different loops.
    for group in _sharing(unnamed, found.axes):
        axes = sorted({axis for run in group for axis in found.axes[run]})
        name = _loop_name(axes)
        if name in declared:
            loop = name  # the catalog's own loop: its step keys are the catalog's to say
        else:
            loop = _unique(name, taken)
            found.derived[loop] = axes
        for run in group:
            found.of_run[run] = {loop}
    return found


def _sharing(runs: list[int], axes: dict[int, list[str]]) -> list[list[int]]:
    """``runs`` grouped so that runs sharing a step axis, directly or through others, are
    in one group (in run order)."""
    parent = {run: run for run in runs}

    def root(run: int) -> int:
        while parent[run] != run:
            parent[run] = parent[parent[run]]
            run = parent[run]
        return run

    owner: dict[str, int] = {}
    for run in runs:
        for axis in axes[run]:
            if axis in owner:
                parent[root(run)] = root(owner[axis])
            else:
                owner[axis] = run
    groups: dict[int, list[int]] = {}
    for run in runs:
        groups.setdefault(root(run), []).append(run)
    return sorted(groups.values())


def _loop_name(axes: list[str]) -> str:
    """A loop's name from its step axes: the training axis's head if one is (``train``
    of ``train/step`` beside ``eval/step``), else the first head, else ``train``."""
    heads = sorted((axis_head(a) for a in axes if axis_head(a)), key=lambda h: "train" not in h)
    words = key_words(heads[0].split("/")[0]) if heads else []
    name = "_".join(words)[:_MAX_LOOP_CHARS] if words else _DEFAULT_LOOP
    if not _LOOP_NAME.match(name):
        name = f"loop_{name}"[:_MAX_LOOP_CHARS]
    return name


def _unique(name: str, taken: set[str]) -> str:
    candidate, index = name, 2
    while candidate in taken:
        suffix = f"_{index}"
        candidate = name[: _MAX_LOOP_CHARS - len(suffix)] + suffix
        index += 1
    taken.add(candidate)
    return candidate


@dataclass(frozen=True, slots=True)
class Presence:
    """When a drafted row is logged."""

    level: str
    condition: str | None = None
    first_step: int | None = None
    every: int | str | None = None
    phase: int = 0
    """With ``every``: the steps of the period (``-1``: a 0-based loop's ``n-1, 2n-1``)."""
    notes: tuple[str, ...] = ()


def presence(
    stats: KeyStats, prefix: str, seen: Observations, loops: list[str], runs: RunLoops
) -> Presence:
    """Presence over the runs of the key's loops, each step read on the key's axis."""
    wanted = set(loops)
    relevant = [
        run
        for run in range(len(seen.runs))
        if (run, prefix) in runs.logged and (not wanted or runs.of_run.get(run, set()) & wanted)
    ]
    present = [run for run in relevant if run in stats.steps]
    slots = {run: (run, prefix, stats.axis.get(run, "")) for run in present}
    # As many steps as its axis; records before the axis's first value count on the
    # record's own step (as live-check counts them), which may coincide with the axis's.
    every_step = all(
        stats.steps[run] + _before_axis(seen, slots[run]) >= seen.prefix_steps.get(slots[run], 0)
        for run in present
    )
    periods = {run: stats.gap.get(run, 0) for run in present}
    periodic = all(
        period >= 2
        and stats.steps[run] >= 2
        and (not every_step or runs.finest.get(run, period) < period)
        for run, period in periods.items()
    )
    first = min(stats.first.values())
    # live-check counts a period from its multiples: a key logged off them (steps 1, 6,
    # 11) gets its first step only; a first step past the first multiple is said.
    phased = periodic and all(stats.first[run] % periods[run] == 0 for run in present)
    every = _every(periods, runs) if phased else None
    told: tuple[str, ...] = ()
    if phased and every is None:
        shown = ", ".join(map(str, sorted(set(periods.values()))))
        told = (
            f"logged every {shown} steps in different runs and no configuration value says "
            'so in each: a configured period? (every: "config.<its key>")',
        )
    if len(present) < len(relevant):
        condition = (
            f"TODO: when is it logged? (in {len(present)} of {len(relevant)} runs of its loops)"
        )
        return Presence("conditionally_required", condition, every=every, notes=told)
    if phased:
        start = first if isinstance(every, int) and first > every else None
        return Presence("required", first_step=start, every=every, notes=told)
    if periodic:
        period = max(periods.values())
        phases = {stats.first[run] % periods[run] for run in present}
        if len(set(periods.values())) == 1 and len(phases) == 1:
            # Off the multiples, on one phase of them: 0-based loops log at n-1, 2n-1, ...
            phase = phases.pop()
            offset = phase - period if phase == period - 1 else phase
            note = (
                f'its steps are not multiples of {period}: every: "{period}" with phase: "{offset}"'
            )
            return Presence("required", every=period, phase=offset, notes=(note,))
        note = (
            f"logged every {period} steps from step {first}, off the multiples of {period} "
            "that `every` counts: first_step only"
        )
        return Presence("required", first_step=first, notes=(note,))
    if every_step:
        late = all(stats.first[run] > seen.prefix_first.get(slots[run], 0) for run in present)
        return Presence("required", first_step=first if late else None)
    counts = [f"{stats.steps[run]} of {seen.prefix_steps.get(slots[run], 0)}" for run in present]
    condition = f"TODO: when is it logged? (at {'; '.join(counts[:3])} steps of its prefix)"
    return Presence("conditionally_required", condition)


def _every(periods: dict[int, int], runs: RunLoops) -> int | str | None:
    """The ``every`` of runs' periods: the one configuration value equal to each run's
    period (``"config.eval_interval"``) when the runs logged one, else the period all
    runs share, else ``None``."""
    matches: set[str] | None = None
    for run, period in periods.items():
        found = set(runs.configured.get(run, {}).get(period, ()))
        matches = found if matches is None else matches & found
    if matches is not None and len(matches) == 1:
        return f"config.{matches.pop()}"
    shared = set(periods.values())
    return shared.pop() if len(shared) == 1 else None


_MAX_CONFIG_VALUES: Final = 5_000
_MAX_CONFIG_DEPTH: Final = 8
_CONFIG_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _whole_values(config: Mapping[str, object]) -> dict[int, list[str]]:
    """Whole numbers of ``config`` -> the dotted paths holding them (one bounded walk; a
    path the condition language cannot spell is left out)."""
    found: dict[int, list[str]] = {}
    stack: list[tuple[str, Mapping[str, object], int]] = [("", config, 0)]
    seen = 0
    while stack and seen < _MAX_CONFIG_VALUES:
        path, mapping, depth = stack.pop()
        for key, value in mapping.items():
            seen += 1
            if not isinstance(key, str) or not _CONFIG_NAME.match(key):
                continue
            here = f"{path}.{key}" if path else key
            if isinstance(value, Mapping) and depth < _MAX_CONFIG_DEPTH:
                stack.append((here, value, depth + 1))
            elif isinstance(value, int) and not isinstance(value, bool):
                found.setdefault(value, []).append(here)
    return found


def _before_axis(seen: Observations, slot: tuple[int, str, str]) -> int:
    """Steps of a run's records of this prefix that held no step axis (0 on no axis)."""
    run, prefix, axis = slot
    return seen.prefix_steps.get((run, prefix, ""), 0) if axis else 0


def scale_clash(prefix: str, key: str, stats: KeyStats, seen: Observations) -> dict[str, list[int]]:
    """Runs grouped by the unit their own values give the key; more than one group is a
    scale clash (``gpu/util`` in [0, 1] in one run and in [0, 100] in another)."""
    units: dict[str, list[int]] = {}
    segments = key.split("/")
    for run in sorted(stats.run_high):
        values = Values(stats.run_low[run], stats.run_high[run])
        units.setdefault(key_unit(prefix, segments, values), []).append(run)
    return units if len(units) > 1 else {}
