"""Observing runs for ``infer``: what every undeclared key was logged with, in bounded memory."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Final

from ..catalog.matching import KeyMatcher
from ..catalog.model import Catalog
from ..catalog.words import (
    CALL_COUNTER_KEYS,
    STEP_AXIS_KEYS,
    STEP_AXIS_WORDS,
    TIME_WORDS,
    TIMER_WORDS,
    key_words,
)
from ..runs.ingest import read_source
from ..runs.limits import Limits
from ..runs.records import Malformed, Record, RunConfig, Source
from ..safe_fs import read_regular

__all__ = [
    "MAX_DRAFTED_KEY_CHARS",
    "MAX_KEYS",
    "KeyStats",
    "Observations",
    "axis_head",
    "may_be_step_axis",
    "observe",
    "schema_pattern",
]

MAX_KEYS: Final = 10_000
"""Distinct undeclared ``(prefix, key)`` pairs tracked; later ones are only counted."""

SCHEMA: Final = Path(__file__).parents[1] / "schema" / "catalog.schema.json"


@cache
def schema_pattern(name: str) -> re.Pattern[str]:
    """A ``$defs`` pattern of the catalog schema (keys the schema refuses cannot be drafted)."""
    schema = json.loads(read_regular(SCHEMA))
    return re.compile(schema["$defs"][name]["pattern"])


@dataclass(slots=True)
class KeyStats:
    """What one undeclared ``(prefix, key)`` was logged with, in bounded memory."""

    steps: dict[int, int] = field(default_factory=dict)
    """Run index -> distinct steps that logged it."""
    first: dict[int, int] = field(default_factory=dict)
    """Run index -> first step."""
    gap: dict[int, int] = field(default_factory=dict)
    """Run index -> the one gap between its steps (-1: irregular)."""
    last_step: dict[int, int] = field(default_factory=dict)
    loops: set[str] = field(default_factory=set)
    types: set[str] = field(default_factory=set)
    """Value types other than numbers (``str``, ``list``...)."""
    numeric: int = 0
    non_finite: int = 0
    """Values that were NaN or an infinity (not counted in ``numeric``)."""
    integral: bool = True
    nonnegative: bool = True
    monotone: bool = True
    increases: int = 0
    last: dict[tuple[int, str, str | None], float] = field(default_factory=dict)
    low: float = math.inf
    high: float = -math.inf

    run_low: dict[int, float] = field(default_factory=dict)
    """Run index -> its lowest value (a scale clash between runs shows here)."""
    run_high: dict[int, float] = field(default_factory=dict)
    axis: dict[int, str] = field(default_factory=dict)
    """Run index -> the step axis key its steps were read from (absent: the record's step)."""
    huge: int = 0
    """Whole numbers too large for a float (a 401-digit integer): counted, never converted."""
    whole: bool = False
    """One of sibling keys (``error_cat/correct``, ``error_cat/wrong``) whose values sum
    to 1 in every record that logs them: shares of one whole (set after reading)."""

    def see(self, run: int, step: int, record: Record, value: object) -> None:
        """Count one logged ``value`` at ``step`` (the step axis's, else the record's)."""
        previous = self.last_step.get(run)
        if previous != step:
            self.steps[run] = self.steps.get(run, 0) + 1
            if previous is None:
                self.first[run] = step
            else:
                gap = step - previous
                known = self.gap.get(run)
                self.gap[run] = gap if known is None or known == gap else -1
            self.last_step[run] = step
        if record.loop is not None:
            self.loops.add(record.loop)
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.types.add(type(value).__name__)
            return
        number = as_float(value)
        if number is None:
            self.huge += 1
            return
        if not math.isfinite(number):
            self.non_finite += 1
            return
        self.numeric += 1
        if not number.is_integer():
            self.integral = False
        if number < 0:
            self.nonnegative = False
        self.low = min(self.low, number)
        self.high = max(self.high, number)
        self.run_low[run] = min(self.run_low.get(run, math.inf), number)
        self.run_high[run] = max(self.run_high.get(run, -math.inf), number)
        stream = (run, record.path, record.worker)
        before = self.last.get(stream)
        if before is not None:
            if number < before:
                self.monotone = False
            elif number > before:
                self.increases += 1
        self.last[stream] = number

    def merge(self, other: KeyStats) -> None:
        """Fold a family member's statistics into this one (presence: the union's bounds)."""
        for run, count in other.steps.items():
            self.steps[run] = max(self.steps.get(run, 0), count)
            self.first[run] = min(self.first.get(run, other.first[run]), other.first[run])
            gap = other.gap.get(run)
            if gap is not None:
                known = self.gap.get(run)
                self.gap[run] = gap if known is None or known == gap else -1
        self.loops |= other.loops
        self.types |= other.types
        self.numeric += other.numeric
        self.non_finite += other.non_finite
        self.integral &= other.integral
        self.nonnegative &= other.nonnegative
        self.monotone &= other.monotone
        self.increases += other.increases
        self.low = min(self.low, other.low)
        self.high = max(self.high, other.high)
        self.huge += other.huge
        for run, low in other.run_low.items():
            self.run_low[run] = min(self.run_low.get(run, math.inf), low)
        for run, high in other.run_high.items():
            self.run_high[run] = max(self.run_high.get(run, -math.inf), high)
        for run, axis in other.axis.items():
            self.axis.setdefault(run, axis)

    def of_runs(self, runs: Sequence[int]) -> KeyStats:
        """These statistics restricted to ``runs`` (bounds from their own values; the
        flags a whole-key property, kept; loops: the runs' own, from their records)."""
        keep = set(runs)
        part = KeyStats(
            steps={r: n for r, n in self.steps.items() if r in keep},
            first={r: n for r, n in self.first.items() if r in keep},
            gap={r: n for r, n in self.gap.items() if r in keep},
            last_step={r: n for r, n in self.last_step.items() if r in keep},
            types=set(self.types),
            numeric=self.numeric,
            integral=self.integral,
            nonnegative=all(self.run_low.get(r, 0.0) >= 0 for r in keep),
            monotone=self.monotone,
            increases=self.increases,
            run_low={r: v for r, v in self.run_low.items() if r in keep},
            run_high={r: v for r, v in self.run_high.items() if r in keep},
            axis={r: a for r, a in self.axis.items() if r in keep},
            huge=self.huge,
            whole=self.whole,
        )
        part.low = min(part.run_low.values(), default=math.inf)
        part.high = max(part.run_high.values(), default=-math.inf)
        return part


def as_float(value: int | float) -> float | None:
    """``value`` as a float, or ``None`` when it is a whole number beyond a float's range
    (``float(10**400)`` raises ``OverflowError``: a hostile log must not stop ``infer``)."""
    try:
        return float(value)
    except OverflowError:
        return None


@dataclass(slots=True)
class Observations:
    """What the runs logged that the catalog does not declare, and how each run looked."""

    runs: list[str] = field(default_factory=list)
    """Each run as given (a file, or a glob of one run's worker files)."""
    keys: dict[tuple[str, str], KeyStats] = field(default_factory=dict)
    prefix_steps: dict[tuple[int, str, str], int] = field(default_factory=dict)
    """(run, prefix, step axis) -> distinct steps that logged the prefix, on that axis
    (``""``: the records' own steps)."""
    prefix_first: dict[tuple[int, str, str], int] = field(default_factory=dict)
    run_first: dict[int, int] = field(default_factory=dict)
    run_loops: dict[int, set[str]] = field(default_factory=dict)
    run_configs: dict[int, Mapping[str, object]] = field(default_factory=dict)
    """Run -> the configuration it logged (its first), where a period may be set."""
    run_axes: dict[int, set[str]] = field(default_factory=dict)
    """Run -> the keys that may be its step axes (by name; values whole and growing)."""
    loop_keys: dict[str, set[str]] = field(default_factory=dict)
    """Loop -> qualified keys it logged (declared ones too, up to a bound): signatures."""
    records: int = 0
    malformed: int = 0
    points: int = 0
    untracked: int = 0
    """Undeclared pairs past :data:`MAX_KEYS` (counted, not drafted)."""
    refused: dict[tuple[str, str], str] = field(default_factory=dict)
    """Pairs the catalog's format cannot hold yet, and why (not drafted)."""
    wholes: dict[tuple[str, str], int] = field(default_factory=dict)
    """(prefix, parent segment path) -> records whose children under it summed to 1 (each
    value in [0, 1], two or more); -1 once one did not: shares of one whole."""


_MAX_SIGNATURE_KEYS: Final = 2_000
_WHOLE_RECORDS: Final = 3
"""Records whose sibling values summed to 1 before the siblings count as shares of a whole
(two shares that sum to 1 once may be chance)."""
_WHOLE_TOLERANCE: Final = 1e-3
"""How far from 1 a sum of shares may be: trackers round what they write (6 digits)."""
_MAX_NAMES: Final = 4 * MAX_KEYS
"""Keys whose step-axis verdict is remembered (like the declared verdicts)."""


def observe(
    runs: Sequence[Sequence[str]], catalog: Catalog, *, input_format: str | None = None
) -> Observations:
    """Read every run (each a list of input paths: one run's worker files) once.

    Raises:
        OSError: An input cannot be read (``filename`` names it).
        ValueError: ``input_format`` is not a registered format.
    """
    limits = Limits()
    matcher = KeyMatcher(
        (row for _, row in catalog.rows()), limits.max_family_keys, catalog.attributes()
    )
    declared: dict[tuple[str, str], bool] = {}
    seen = Observations()
    last_prefix_step: dict[tuple[int, str, str], int] = {}
    axes = _Axes(catalog.step_key_names())
    for run, paths in enumerate(runs):
        seen.runs.append(" ".join(paths))
        for path in paths:
            for item in read_source(Source(path), limits, input_format):
                if isinstance(item, Malformed):
                    seen.malformed += 1
                    continue
                if isinstance(item, RunConfig):
                    seen.run_configs.setdefault(run, item.config)  # periods it may set
                    continue
                if not isinstance(item, Record):
                    continue
                _take(
                    seen,
                    run,
                    record=item,
                    matcher=matcher,
                    is_bookkeeping=catalog.is_bookkeeping,
                    declared=declared,
                    last_prefix_step=last_prefix_step,
                    axes=axes,
                )
    for (prefix, key), stats in seen.keys.items():
        parent = key.rpartition("/")[0]
        stats.whole = bool(parent) and seen.wholes.get((prefix, parent), 0) >= _WHOLE_RECORDS
    for run, key in axes.refused:
        seen.run_axes.get(run, set()).discard(key)
    for found in seen.run_axes.values():
        if found - CALL_COUNTER_KEYS:
            found.difference_update(CALL_COUNTER_KEYS)  # a training step, not a call count
    return seen


def may_be_step_axis(qualified: str) -> bool:
    """Whether a logged key's name says it may carry the step (``train/step``,
    ``global_step``): a step word last, no timer word (``timing/step`` is a duration)."""
    if qualified in STEP_AXIS_KEYS and qualified != "epoch":
        return True  # a Trainer's fractional epoch is bookkeeping, not a step
    last = "_".join(key_words(qualified.rsplit("/", 1)[-1]))
    if last not in STEP_AXIS_WORDS:
        return False
    return not any(w in TIMER_WORDS or w in TIME_WORDS for w in key_words(qualified))


def axis_head(axis: str) -> str:
    """The prefix a step axis key covers (``train/step`` -> ``train``; ``step`` -> ``""``)."""
    return axis.rpartition("/")[0]


def _whole(value: object) -> int | None:
    """A logged value as a whole number, else ``None`` (a bool is no number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


class _Axes:
    """The step axes each run logged so far, and their latest values."""

    def __init__(self, declared: frozenset[str]) -> None:
        self.declared = declared
        self.values: dict[tuple[int, str, str | None], dict[str, int]] = {}
        """(run, file, worker) -> its axes' latest values: each worker counts its own."""
        self.refused: set[tuple[int, str]] = set()
        """Candidates whose values went back or were not whole: no axis in that run."""
        self.candidates: dict[str, bool] = {}
        """Key -> whether its name may be a step axis (bounded: :data:`_MAX_NAMES`)."""

    def read(self, run: int, record: Record) -> dict[str, int]:
        """Update the run's axes from one record; return them (axis key -> step)."""
        mine = self.values.setdefault((run, record.path, record.worker), {})
        prefix = record.prefix
        for key, value in record.metrics.items():
            qualified = f"{prefix}/{key}" if prefix else key
            # The backend's own x axis (a W&B ``define_metric(step_metric=...)``) is a step
            # axis whatever its name (``training_step``), when its values are a step's.
            candidate = key in record.step_keys or self.candidates.get(qualified)
            if candidate is None:
                candidate = qualified in self.declared or may_be_step_axis(qualified)
                if len(self.candidates) < _MAX_NAMES:
                    self.candidates[qualified] = candidate
            if not candidate:
                continue
            if (run, qualified) in self.refused:
                continue
            step = _whole(value)
            # A step fits a float's integers exactly (2**53); larger is no step a run reaches.
            if step is None or not 0 <= step <= 2**53 or step < mine.get(qualified, 0):
                self.refused.add((run, qualified))
                mine.pop(qualified, None)
                continue
            mine[qualified] = step
        return mine

    @staticmethod
    def of(qualified: str, axes: dict[str, int]) -> str:
        """The axis a key's step is read from: the step key whose head is the longest
        prefix of the key, else the run's only axis; ``""``: the record's own step. A
        tracker's call counter (``_step``) counts only where the run logs no other axis."""
        if len(axes) == 1:
            return next(iter(axes))
        best = ""
        if len(axes) > 1:
            axes = {a: v for a, v in axes.items() if a not in CALL_COUNTER_KEYS} or axes
        for axis in axes:
            head = axis_head(axis)
            if (not head or qualified.startswith(head + "/")) and (
                not best or len(head) > len(axis_head(best))
            ):
                best = axis
        if not best and len(axes) == 1:
            best = next(iter(axes))
        return best


def _take(
    seen: Observations,
    run: int,
    *,
    record: Record,
    matcher: KeyMatcher,
    is_bookkeeping: Callable[[str], bool],
    declared: dict[tuple[str, str], bool],
    last_prefix_step: dict[tuple[int, str, str], int],
    axes: _Axes,
) -> None:
    if record.series is not None:
        seen.points += 1  # a recorded point, not a logged key
        return
    seen.records += 1
    step, prefix = record.step, record.prefix
    if run not in seen.run_first or step < seen.run_first[run]:
        seen.run_first[run] = step
    current = axes.read(run, record)
    if current:
        seen.run_axes.setdefault(run, set()).update(current)
    loop = record.loop
    signature: set[str] | None = None
    if loop is not None:
        seen.run_loops.setdefault(run, set()).add(loop)
        signature = seen.loop_keys.setdefault(loop, set())
    keys = seen.keys
    counted: set[str] = set()
    # The backend's own x axis of this record's keys (W&B groups a record's keys by their
    # step metric) is their axis, over any other key whose name only says "step".
    named = [q for k in record.step_keys if (q := f"{prefix}/{k}" if prefix else k) in current]
    defined = named[0] if len(named) == 1 else None
    for key, value in record.metrics.items():
        pair = (prefix, key)
        qualified = f"{prefix}/{key}" if prefix else key
        if signature is not None and len(signature) < _MAX_SIGNATURE_KEYS:
            signature.add(qualified)
        axis = defined or (_Axes.of(qualified, current) if current else "")
        at = current[axis] if axis else step
        if axis not in counted:
            # Presence is judged per axis: the prefix's steps on the axis this key is on.
            counted.add(axis)
            slot = (run, prefix, axis)
            if last_prefix_step.get(slot) != at:
                last_prefix_step[slot] = at
                seen.prefix_steps[slot] = seen.prefix_steps.get(slot, 0) + 1
                seen.prefix_first.setdefault(slot, at)
        known = declared.get(pair)
        if known is None:
            # Split and routed as live-check and the tee do (the loop's rows first).
            where = matcher.split(key, loop) if record.split else pair
            known = is_bookkeeping(qualified) or bool(matcher.match(*where))
            if len(declared) < 4 * MAX_KEYS:
                declared[pair] = known
        if known:
            continue
        stats = keys.get(pair)
        if stats is None:
            if pair in seen.refused:
                continue
            why = _refusal(prefix, key)
            if why is not None:
                seen.refused[pair] = why
                continue
            if len(keys) >= MAX_KEYS:
                seen.untracked += 1
                continue
            stats = keys[pair] = KeyStats()
        if axis:
            stats.axis[run] = axis
        stats.see(run, at, record, value)
    _sum_siblings(seen, prefix, record.metrics)


def _sum_siblings(seen: Observations, prefix: str, metrics: Mapping[str, object]) -> None:
    """Note, per parent segment path, whether the record's values under it sum to 1."""
    sums: dict[str, list[float]] = {}
    for key, value in metrics.items():
        parent = key.rpartition("/")[0]
        if not parent:
            continue
        found = sums.setdefault(parent, [0.0, 0.0])
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if number is None or not 0 <= number <= 1:  # NaN fails both comparisons
            found[1] = -math.inf  # a value no share takes: not a whole
            continue
        found[0] += number
        found[1] += 1
    wholes = seen.wholes
    for parent, (total, count) in sums.items():
        slot = (prefix, parent)
        before = wholes.get(slot)
        if before == -1 or (before is None and len(wholes) >= MAX_KEYS):
            continue
        summed = count >= 2 and abs(total - 1.0) <= _WHOLE_TOLERANCE
        wholes[slot] = (before or 0) + 1 if summed else -1


MAX_DRAFTED_KEY_CHARS: Final = 200
"""Longest ``prefix/key`` a row is drafted for: the series name made of it must stay within
OpenTelemetry's 255 characters. A longer key is reported, not drafted."""


def _refusal(prefix: str, key: str) -> str | None:
    """Why the catalog's schema cannot hold this pair yet (``None``: it can)."""
    if len(prefix) + len(key) > MAX_DRAFTED_KEY_CHARS:
        return (
            f"the key is {len(prefix) + len(key)} characters long, over the "
            f"{MAX_DRAFTED_KEY_CHARS} a series name can be drafted from (OpenTelemetry "
            "allows 255): name its row by hand"
        )
    if not schema_pattern("loggerKey").match(key) or "{" in key:
        return "the key has characters a logger_key cannot hold yet"
    if "{" in prefix or not schema_pattern("prefix").match(prefix):
        return "the prefix has characters a prefix cannot hold yet"
    return None
