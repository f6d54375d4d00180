"""Observing runs for ``infer``: what every undeclared key was logged with, in bounded memory."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Final

from ..catalog.matching import KeyMatcher
from ..catalog.model import Catalog
from ..runs.ingest import read_source
from ..runs.limits import Limits
from ..runs.records import Malformed, Record, Source

__all__ = [
    "MAX_DRAFTED_KEY_CHARS",
    "MAX_KEYS",
    "KeyStats",
    "Observations",
    "observe",
    "schema_pattern",
]

MAX_KEYS: Final = 10_000
"""Distinct undeclared ``(prefix, key)`` pairs tracked; later ones are only counted."""

SCHEMA: Final = Path(__file__).parents[1] / "schema" / "catalog.schema.json"


@cache
def schema_pattern(name: str) -> re.Pattern[str]:
    """A ``$defs`` pattern of the catalog schema (keys the schema refuses cannot be drafted)."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
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
    integral: bool = True
    nonnegative: bool = True
    monotone: bool = True
    increases: int = 0
    last: dict[tuple[int, str, str | None], float] = field(default_factory=dict)
    low: float = math.inf
    high: float = -math.inf

    def see(self, run: int, record: Record, value: object) -> None:
        step = record.step
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
        number = float(value)
        if not math.isfinite(number):
            return
        self.numeric += 1
        if not number.is_integer():
            self.integral = False
        if number < 0:
            self.nonnegative = False
        self.low = min(self.low, number)
        self.high = max(self.high, number)
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
        self.integral &= other.integral
        self.nonnegative &= other.nonnegative
        self.monotone &= other.monotone
        self.increases += other.increases
        self.low = min(self.low, other.low)
        self.high = max(self.high, other.high)


@dataclass(slots=True)
class Observations:
    """What the runs logged that the catalog does not declare, and how each run looked."""

    runs: list[str] = field(default_factory=list)
    """Each run as given (a file, or a glob of one run's worker files)."""
    keys: dict[tuple[str, str], KeyStats] = field(default_factory=dict)
    prefix_steps: dict[tuple[int, str], int] = field(default_factory=dict)
    """(run, prefix) -> distinct steps that logged the prefix."""
    prefix_first: dict[tuple[int, str], int] = field(default_factory=dict)
    run_first: dict[int, int] = field(default_factory=dict)
    run_loops: dict[int, set[str]] = field(default_factory=dict)
    loop_keys: dict[str, set[str]] = field(default_factory=dict)
    """Loop -> qualified keys it logged (declared ones too, up to a bound): signatures."""
    records: int = 0
    malformed: int = 0
    points: int = 0
    untracked: int = 0
    """Undeclared pairs past :data:`MAX_KEYS` (counted, not drafted)."""
    refused: dict[tuple[str, str], str] = field(default_factory=dict)
    """Pairs the catalog's format cannot hold yet, and why (not drafted)."""


_MAX_SIGNATURE_KEYS: Final = 2_000


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
    last_prefix_step: dict[tuple[int, str], int] = {}
    for run, paths in enumerate(runs):
        seen.runs.append(" ".join(paths))
        for path in paths:
            for item in read_source(Source(path), limits, input_format):
                if isinstance(item, Malformed):
                    seen.malformed += 1
                    continue
                if not isinstance(item, Record):
                    continue  # a run's header (its configuration): no keys
                _take(
                    seen,
                    run,
                    record=item,
                    matcher=matcher,
                    is_bookkeeping=catalog.is_bookkeeping,
                    declared=declared,
                    last_prefix_step=last_prefix_step,
                )
    return seen


def _take(
    seen: Observations,
    run: int,
    *,
    record: Record,
    matcher: KeyMatcher,
    is_bookkeeping: Callable[[str], bool],
    declared: dict[tuple[str, str], bool],
    last_prefix_step: dict[tuple[int, str], int],
) -> None:
    if record.series is not None:
        seen.points += 1  # a recorded point, not a logged key
        return
    seen.records += 1
    step, prefix = record.step, record.prefix
    if run not in seen.run_first or step < seen.run_first[run]:
        seen.run_first[run] = step
    slot = (run, prefix)
    if last_prefix_step.get(slot) != step:
        last_prefix_step[slot] = step
        seen.prefix_steps[slot] = seen.prefix_steps.get(slot, 0) + 1
        seen.prefix_first.setdefault(slot, step)
    loop = record.loop
    signature: set[str] | None = None
    if loop is not None:
        seen.run_loops.setdefault(run, set()).add(loop)
        signature = seen.loop_keys.setdefault(loop, set())
    keys = seen.keys
    for key, value in record.metrics.items():
        pair = (prefix, key)
        if signature is not None and len(signature) < _MAX_SIGNATURE_KEYS:
            signature.add(f"{prefix}/{key}" if prefix else key)
        known = declared.get(pair)
        if known is None:
            qualified = f"{prefix}/{key}" if prefix else key
            known = bool(matcher.match(prefix, key)) or is_bookkeeping(qualified)
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
        stats.see(run, record, value)


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
