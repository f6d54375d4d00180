"""Draft catalog rows from what a team already logs: the engine behind ``metric-catalog infer``.

Runs are read through live-check's ingesters (:func:`codegen.runs.ingest.read_source`),
so every format live-check reads works here too. Keys a teed row already
declares (matched with live-check's :class:`~codegen.catalog.matching.KeyMatcher`)
are left alone; for the rest :func:`infer` proposes rows:

* **families**: keys of one shape whose segments (split on ``/``) differ in one
  place become a key family with a placeholder bound to a new attribute: an enum
  of the seen values (at most :data:`MAX_ENUM_VALUES`), else ``max_cardinality``.
  A segment becomes a placeholder only where it looks like a label and not like
  the name of another metric: statistics (``mean``, ``max``...), a context that
  fixes the unit (``timing_s/{stage}``), more than :data:`MAX_ENUM_VALUES`
  values, or values holding digits. Keys that stand alone stay literal rows.
* **units** from the key's words and suffixes (``_s``, ``_time``, ``_ms``,
  ``tokens``, ``_gb``, ``_pct``, ``ratio``...), **kinds** from the values: a
  running total (non-decreasing in every stream) is a cumulative counter when the
  schema has ``temporality``, else a gauge with a comment; per-step integer counts
  are counters; the rest gauges;
* **presence** over the runs: ``required`` when every step of its prefix has
  it (``first_step`` when it starts late or comes periodically),
  ``conditionally_required`` otherwise; the loops the records name become
  ``emitted_by`` (and are declared under ``loops:`` when new);
* **names** ``rl.<prefix>.<key>`` cleaned to pass the naming lints (no unit or
  type words, no reserved suffixes), unique against the catalog;
* **owners**: one file per prefix (per first key segment for keys logged without one).

Descriptions are ``TODO: ...``: ``validate`` accepts them and ``lint`` refuses
them (``DESCRIPTION_TODO``), so a draft cannot be committed half-written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Final

from metric_catalog.series_rules import (
    Capture,
    address_rank,
    overlap,
    parse_pattern,
    unit_scale,
)
from metric_catalog.vocabulary import registry_key

from .catalog.matching import KeyMatcher
from .catalog.model import Catalog
from .catalog.precedence import captures
from .runs.ingest import read_source
from .runs.limits import Limits
from .runs.records import Malformed, Record, Source

__all__ = [
    "MAX_ENUM_VALUES",
    "MAX_KEYS",
    "TODO",
    "Draft",
    "DraftFile",
    "DraftRow",
    "Observations",
    "infer",
    "observe",
    "propose",
    "render",
    "single_file",
]

MAX_ENUM_VALUES: Final = 10
"""A placeholder with at most this many seen values gets an enum, else ``max_cardinality``."""

MAX_KEYS: Final = 10_000
"""Distinct undeclared ``(prefix, key)`` pairs tracked; later ones are only counted."""

TODO: Final = "TODO: say what this measures."
"""The description of a drafted row (``lint`` refuses it: ``DESCRIPTION_TODO``)."""

_SCHEMA: Final = Path(__file__).parent / "schema" / "catalog.schema.json"


def _table(text: str) -> frozenset[str]:
    """A word table written as one space-separated string (keeps long tables compact)."""
    return frozenset(text.split())


_STATISTICS: Final = _table(
    "mean avg average max min std stddev var median sum last first p50 p90 p95 p99 p999"
)
_UNIT_WORDS: Final = _table(
    "ms msec millis millisecond milliseconds s sec secs second seconds us usec microseconds ns "
    "nanoseconds mins minutes hours hrs bytes kb mb gb tb kib mib gib tib kilobytes megabytes "
    "gigabytes mebibytes gibibytes percent pct"
)
_TYPE_WORDS: Final = frozenset({"counter", "gauge", "histogram", "summary"})
_DURATION_WORDS: Final = frozenset({"duration", "latency", "elapsed"})
_RESERVED_LAST: Final = frozenset({"bucket", "sum", "count", "total"})
_COUNT_WORDS: Final = _table(
    "num count tokens toks samples seqs sequences turns steps episodes trajectories"
)
_TOTAL_WORDS: Final = frozenset({"total", "cumulative", "consumed", "global", "overall"})
_RATIO_WORDS: Final = _table(
    "ratio rate fraction frac accuracy acc utilization utilisation clipfrac share"
)
_TIME_WORDS: Final = frozenset(
    {"s", "sec", "secs", "seconds", "time", "duration", "latency", "elapsed"}
)
_TIMER_WORDS: Final = frozenset(
    # NeMo's and Megatron's timers (timers/<section>) report seconds, as timing_s/ does.
    {"timing", "time", "timer", "timers", "duration", "latency", "elapsed"}
)
_ANNOTATIONS: Final[dict[str, str]] = {
    "tokens": "{token}",
    "toks": "{token}",
    "token": "{token}",
    "length": "{token}",
    "lengths": "{token}",
    "len": "{token}",
    "samples": "{sample}",
    "sample": "{sample}",
    "seqs": "{sequence}",
    "sequences": "{sequence}",
    "turns": "{turn}",
    "step": "{step}",
    "steps": "{step}",
    "epoch": "{epoch}",
    "epochs": "{epoch}",
}


def _words(text: str) -> list[str]:
    """Lowercase words of a key segment (``valid_tokens_per_sec`` -> valid, tokens, per, sec)."""
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


@cache
def _schema_pattern(name: str) -> re.Pattern[str]:
    """A ``$defs`` pattern of the catalog schema (keys the schema refuses cannot be drafted)."""
    schema = json.loads(_SCHEMA.read_text(encoding="utf-8"))
    return re.compile(schema["$defs"][name]["pattern"])


@cache
def _has_temporality() -> bool:
    schema = json.loads(_SCHEMA.read_text(encoding="utf-8"))
    return "temporality" in schema["$defs"]["teedRow"]["properties"]


# --- observing runs ---------------------------------------------------------------------


@dataclass(slots=True)
class _KeyStats:
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

    def merge(self, other: _KeyStats) -> None:
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
    keys: dict[tuple[str, str], _KeyStats] = field(default_factory=dict)
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
            known = bool(matcher.match(prefix, key))
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
            stats = keys[pair] = _KeyStats()
        stats.see(run, record, value)


def _refusal(prefix: str, key: str) -> str | None:
    """Why the catalog's schema cannot hold this pair yet (``None``: it can)."""
    if not _schema_pattern("loggerKey").match(key) or "{" in key:
        return "the key has characters a logger_key cannot hold yet"
    if "{" in prefix or not _schema_pattern("prefix").match(prefix):
        return "the prefix has characters a prefix cannot hold yet"
    return None


# --- proposing rows ---------------------------------------------------------------------


@dataclass(slots=True)
class DraftAttribute:
    """An attribute a drafted family binds: its name and values (or budget)."""

    name: str
    values: list[str]
    open: bool

    @property
    def max_cardinality(self) -> int:
        """The budget of an open attribute: twice the seen values, at least 64."""
        return max(64, 2 * len(self.values))


@dataclass(slots=True)
class DraftRow:
    """One proposed teed row."""

    prefix: str
    logger_key: str
    name: str
    kind: str
    unit: str
    attributes: list[str] = field(default_factory=list)
    requirement_level: str = "recommended"
    condition: str | None = None
    emitted_by: list[str] = field(default_factory=list)
    first_step: int | None = None
    temporality: str | None = None
    notes: list[str] = field(default_factory=list)
    """Comments written above the row (why a kind, what values were seen)."""


@dataclass(slots=True)
class DraftFile:
    """One proposed owner file."""

    module: str
    prefix: str
    rows: list[DraftRow] = field(default_factory=list)
    attributes: list[DraftAttribute] = field(default_factory=list)
    loops: list[tuple[str, list[str]]] = field(default_factory=list)
    """New loops declared here: name and signature keys."""

    @property
    def file_name(self) -> str:
        """``<module>.yaml``."""
        return f"{self.module}.yaml"


@dataclass(slots=True)
class Draft:
    """The proposal: owner files, plus what could not be drafted."""

    files: list[DraftFile]
    observations: Observations

    @property
    def rows(self) -> int:
        """Number of proposed rows."""
        return sum(len(f.rows) for f in self.files)

    def notes(self) -> list[str]:
        """What the user should know about keys left out."""
        seen = self.observations
        notes = []
        for (prefix, key), why in sorted(seen.refused.items())[:20]:
            shown = f"{prefix}/{key}" if prefix else key
            notes.append(f"not drafted: {shown!r}: {why}")
        if len(seen.refused) > 20:
            notes.append(f"not drafted: {len(seen.refused) - 20} more such keys")
        if seen.untracked:
            notes.append(
                f"not drafted: {seen.untracked} undeclared keys past the first {MAX_KEYS}; "
                "run infer again after adding this draft"
            )
        if seen.malformed:
            notes.append(f"{seen.malformed} input line(s) were not records (see live-check)")
        if seen.points:
            notes.append(
                f"{seen.points} point line(s) (recorded series) were left to live-check: "
                "infer drafts teed rows"
            )
        return notes


def _segments(key: str) -> tuple[str, ...]:
    return tuple(key.split("/"))


@dataclass(slots=True)
class _Group:
    """Keys of one prefix merged into one pattern: segments, literal or a placeholder slot."""

    prefix: str
    parts: tuple[str | int, ...]
    """A literal segment, or the index of a placeholder in :attr:`values`."""
    values: list[list[str]]
    members: list[str]


def _context_unit(prefix: str, parts: Sequence[str | int]) -> str:
    literal = [p for p in parts if isinstance(p, str)]
    return _unit(prefix, literal, last_is_literal=isinstance(parts[-1], str))


def _unit(prefix: str, segments: Sequence[str], *, last_is_literal: bool = True) -> str:
    """The unit a key's words suggest (``""``: dimensionless or unknown)."""
    last = _words(segments[-1]) if segments and last_is_literal else []
    context = [w for s in (prefix, *segments) for w in _words(s)]
    if "per" in last:
        head = last[: last.index("per")]
        tail = last[last.index("per") + 1 :]
        if tail[:1] and tail[0] in {"s", "sec", "second", "secs", "seconds"}:
            counted = next((_ANNOTATIONS[w] for w in reversed(head) if w in _ANNOTATIONS), "")
            return f"{counted}/s" if counted else "1/s"
        last = head  # "tokens per sample" counts tokens
    for words in (last, context):
        if "ms" in words or "millis" in words or "milliseconds" in words:
            return "ms"
        if "us" in words or "microseconds" in words:
            return "us"
        if "gb" in words or "gib" in words:
            return "GiBy"
        if "mb" in words or "mib" in words:
            return "MiBy"
        if "bytes" in words:
            return "By"
        if "pct" in words or "percent" in words:
            return "%"
    if any(w in _RATIO_WORDS for w in last):
        return "1"
    if last and last[-1] in _TIME_WORDS:
        return "s"
    if any(w in _TIMER_WORDS for w in context):
        return "s"
    for word in reversed(last):
        if word in _ANNOTATIONS:
            return _ANNOTATIONS[word]
    return ""


def _labelish(values: Sequence[str], prefix: str, parts: Sequence[str | int]) -> bool:
    """Whether values varying at one place are labels of one measurement, not metric names."""
    if all(v.lower() in _STATISTICS for v in values):
        return True
    if len(values) > MAX_ENUM_VALUES:
        return True
    if all(any(c.isdigit() for c in v) for v in values):
        return True
    return _context_unit(prefix, parts) != ""


def _families(
    prefix: str, keys: Sequence[str], behaviour: Mapping[str, object] | None = None
) -> list[_Group]:
    """Merge keys of one prefix into families where one segment varies like a label.

    ``behaviour`` (a key's kind and temporality, as its values showed) keeps keys that
    behave differently apart: a family row has one kind, so NeMo-Aligner's running
    total ``train_rollouts/consumed_samples`` is no family with the validation batch's
    size ``val_rollouts/consumed_samples``.
    """
    behaves = behaviour or {}
    groups = [_Group(prefix, _segments(k), [], [k]) for k in sorted(keys)]
    changed = True
    while changed:
        changed = False
        for position in range(max((len(g.parts) for g in groups), default=0)):
            buckets: dict[tuple[object, ...], list[_Group]] = {}
            for group in groups:
                if position >= len(group.parts) or not isinstance(group.parts[position], str):
                    continue
                shape = tuple(
                    ("#", tuple(group.values[p])) if isinstance(p, int) else p
                    for i, p in enumerate(group.parts)
                    if i != position
                )
                like = behaves.get(group.members[0])
                buckets.setdefault((len(group.parts), shape, like), []).append(group)
            merged: list[_Group] = []
            used: set[int] = set()
            for bucket in buckets.values():
                if len(bucket) < 2:
                    continue
                values = [str(g.parts[position]) for g in bucket]
                probe = tuple(-1 if i == position else p for i, p in enumerate(bucket[0].parts))
                if not _labelish(values, prefix, probe):
                    continue
                first = bucket[0]
                slot = len(first.values)
                parts = (*first.parts[:position], slot, *first.parts[position + 1 :])
                members = [m for g in bucket for m in g.members]
                merged.append(_Group(prefix, parts, [*first.values, sorted(values)], members))
                used.update(id(g) for g in bucket)
            if merged:
                groups = [g for g in groups if id(g) not in used] + merged
                changed = True
    return groups


def _name_words(prefix: str, parts: Sequence[str | int]) -> list[str]:
    components: list[str] = []
    for segment in (*prefix.split("/"), *(p for p in parts if isinstance(p, str))):
        words = [w for w in _words(segment) if w not in _UNIT_WORDS and w not in _TYPE_WORDS]
        if words:
            components.append("_".join(words))
    return components


def _series_name(components: list[str], kind: str) -> str:
    if not components:
        components = ["value"]
    if not components[0][0].isalpha():
        components[0] = f"m{components[0]}"
    last_words = components[-1].split("_")
    if kind == "counter":
        while len(last_words) > 1 and last_words[-1] in ("total", "count"):
            last_words.pop()
        if last_words[-1] in ("total", "count"):
            last_words.append("events")
    elif last_words[-1] in _RESERVED_LAST:
        last_words.append("value")
    components[-1] = "_".join(last_words)
    return "rl." + ".".join(components)


def _kind(stats: _KeyStats, last: str) -> tuple[str, str | None, list[str]]:
    """``(kind, temporality, notes)`` from how the values behaved."""
    words = _words(last)
    if stats.types and not stats.numeric:
        shown = ", ".join(sorted(stats.types))
        return "gauge", None, [f"logged as {shown}, not a number: the tee cannot export it"]
    running = (
        stats.monotone
        and stats.nonnegative
        and stats.increases >= 2
        and stats.numeric >= 3
        and stats.high >= 2 * max(stats.low, 1.0)  # a total grows; a drifting gauge does not
        and (stats.integral or any(w in _TOTAL_WORDS for w in words))
        and not any(w in _STATISTICS for w in words)
    )
    if running:
        seen = f"{_number(stats.low)} -> {_number(stats.high)}"
        if _has_temporality():
            return "counter", "cumulative", [f"a running total ({seen} in the runs)"]
        note = (
            f"a running total ({seen} in the runs): a counter with temporality: cumulative "
            "once the schema has it; a gauge until then (a counter adds each value)"
        )
        return "gauge", None, [note]
    counted = any(w in _COUNT_WORDS for w in words) and not any(
        w in _STATISTICS or w == "per" for w in words
    )
    if counted and stats.integral and stats.nonnegative and stats.numeric:
        return "counter", None, ["an integer count logged each step: a per-step counter"]
    return "gauge", None, []


@cache
def _unit_refused(unit: str) -> str:
    """What the unit lint says about ``unit`` (``""``: it accepts it)."""
    from .catalog.diagnostics import Position  # noqa: PLC0415
    from .catalog.lints import RULES  # noqa: PLC0415
    from .catalog.model import MetricRow  # noqa: PLC0415

    row = MetricRow("teed", "rl.x", "gauge", unit, "X.", "development", Position("", 1, 1))
    rule = RULES.get("UNIT_NOT_UCUM")
    found = next(iter(rule.check(row)), "") if rule is not None else ""
    return found if isinstance(found, str) else found.message


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _presence(
    stats: _KeyStats, prefix: str, seen: Observations, loops: list[str]
) -> tuple[str, str | None, int | None, list[str]]:
    """``(requirement_level, condition, first_step, notes)`` over every run."""
    relevant = [
        run
        for run in range(len(seen.runs))
        if (run, prefix) in seen.prefix_steps
        and (not loops or seen.run_loops.get(run, set()) & set(loops))
    ]
    missing = [run for run in relevant if run not in stats.steps]
    first = min(stats.first.values())
    late = all(stats.first[run] > seen.run_first.get(run, 0) for run in stats.steps)
    if missing:
        condition = (
            f"TODO: when is it logged? (in {len(relevant) - len(missing)} of {len(relevant)} "
            "runs of its loops)"
        )
        return "conditionally_required", condition, None, []
    every = all(stats.steps[run] == seen.prefix_steps[(run, prefix)] for run in relevant)
    periodic = all(stats.gap.get(run, 0) >= 2 for run in relevant) and all(
        stats.steps[run] >= 2 for run in relevant
    )
    if every or periodic:
        notes = []
        if periodic and not every:
            gaps = sorted({stats.gap[run] for run in relevant})
            notes.append(f"logged every {', '.join(map(str, gaps))} steps")
        return "required", None, (first if late else None), notes
    counts = [f"{stats.steps[run]} of {seen.prefix_steps[(run, prefix)]}" for run in relevant]
    condition = f"TODO: when is it logged? (at {'; '.join(counts[:3])} steps of its prefix)"
    return "conditionally_required", condition, None, []


def _module_name(prefix: str, head: str, taken: set[str]) -> str:
    words = [w for w in _words(prefix or head) if w not in _UNIT_WORDS] or ["metrics"]
    base = "_".join(words)
    if not base[0].isalpha():
        base = f"m_{base}"
    if base in _KEYWORDS:
        base = f"{base}_metrics"
    name, index = base, 2
    while name in taken:
        name = f"{base}_{index}"
        index += 1
    taken.add(name)
    return name


_KEYWORDS: Final = _table(
    "and as assert async await break class continue def del elif else except finally for from "
    "global if import in is lambda nonlocal not or pass raise return try while with yield"
)


def _unique(name: str, taken: set[str]) -> str:
    candidate, index = name, 2
    while registry_key(candidate) in taken:
        candidate = f"{name}_{index}"
        index += 1
    taken.add(registry_key(candidate))
    return candidate


def propose(seen: Observations, catalog: Catalog) -> Draft:
    """Turn observations into owner files of drafted rows (deterministic order)."""
    by_prefix: dict[str, list[str]] = {}
    for prefix, key in seen.keys:
        by_prefix.setdefault(prefix, []).append(key)
    names = {registry_key(row.name) for _, row in catalog.rows()}
    modules = {f.module for f in catalog.files}
    declared_attributes = catalog.attributes()
    declared_loops = {loop.name for loop in catalog.loops()}
    attributes: dict[str, DraftAttribute] = {}
    files: dict[str, DraftFile] = {}
    domains = captures(declared_attributes)
    for prefix in sorted(by_prefix):
        behaviour = {
            key: _kind(seen.keys[(prefix, key)], key.rsplit("/", 1)[-1])[:2]
            for key in by_prefix[prefix]
        }
        families = _families(prefix, by_prefix[prefix], behaviour)
        for family in sorted(families, key=lambda g: g.members[0]):
            for single in _checked_family(family, catalog, domains):
                row = _row(single, seen, attributes, declared_attributes, names)
                # Without a prefix, keys group by their first segment (actor/..., critic/...).
                head = single.parts[0] if len(single.parts) > 1 else ""
                owner = prefix if prefix else (head if isinstance(head, str) else "")
                target = files.get(owner)
                if target is None:
                    module = _module_name(prefix, owner, modules)
                    target = files[owner] = DraftFile(module, prefix)
                target.rows.append(row)
    ordered = [files[owner] for owner in sorted(files)]
    _untangle([row for f in ordered for row in f.rows], catalog, names)
    for attribute in sorted(attributes.values(), key=lambda a: a.name):
        home = next(f for f in ordered if any(attribute.name in r.attributes for r in f.rows))
        home.attributes.append(attribute)
    new_loops = sorted(set(seen.loop_keys) - declared_loops)
    if new_loops and ordered:
        for loop in new_loops:
            ordered[0].loops.append((loop, _signature(seen, loop)))
    return Draft(ordered, seen)


def _untangle(rows: list[DraftRow], catalog: Catalog, taken: set[str]) -> None:
    """Rename drafted series so names form a tree: none is another one's namespace."""
    existing = {row.name for _, row in catalog.rows()}
    drafted = {row.name for row in rows}
    for row in rows:
        parts = row.name.split(".")
        ancestors = {".".join(parts[:i]) for i in range(2, len(parts))}
        if ancestors & (existing | drafted):
            # rl.grad_norm.x under a declared rl.grad_norm: join the last component instead.
            flat = ".".join(parts[:-2]) + "." + parts[-2] + "_" + parts[-1]
            row.name = _unique(flat, taken)
        below = row.name + "."
        if any(name.startswith(below) for name in existing | drafted if name != row.name):
            row.name = _unique(row.name + ".value", taken)


def single_file(draft: Draft, module: str, catalog: Catalog) -> DraftFile:
    """Every drafted row in one owner file named ``module`` (``--out FILE``).

    Raises:
        ValueError: ``module`` is not a module name, or the catalog has one of that name.
    """
    if not re.fullmatch(r"[a-z][a-z0-9_]*", module) or module in _KEYWORDS:
        msg = (
            f"{module!r} is not a module name (lowercase letters, digits and '_', starting "
            "with a letter): name the file after the module it declares, e.g. grpo_draft.yaml"
        )
        raise ValueError(msg)
    if module in {f.module for f in catalog.files}:
        msg = f"the catalog already has a module {module!r}: name the draft file after a new one"
        raise ValueError(msg)
    prefixes = [row.prefix for f in draft.files for row in f.rows]
    prefix = max(sorted(set(prefixes)), key=prefixes.count) if prefixes else ""
    merged = DraftFile(module, prefix)
    for draft_file in draft.files:
        merged.rows += draft_file.rows
        merged.attributes += draft_file.attributes
        merged.loops += draft_file.loops
    return merged


def _signature(seen: Observations, loop: str) -> list[str]:
    mine = seen.loop_keys.get(loop, set())
    others = set().union(*(keys for name, keys in seen.loop_keys.items() if name != loop))
    pattern = _schema_pattern("qualifiedKey") if _has_def("qualifiedKey") else None
    unique = sorted(k for k in mine - others if pattern is None or pattern.match(k))
    return unique[:3]


@cache
def _has_def(name: str) -> bool:
    schema = json.loads(_SCHEMA.read_text(encoding="utf-8"))
    return "pattern" in schema["$defs"].get(name, {})


def _checked_family(group: _Group, catalog: Catalog, declared: dict[str, Capture]) -> list[_Group]:
    """The family, or its members as literal rows when it would overlap a declared row."""
    if not group.values:
        return [group]
    pattern = parse_pattern(_pattern_text(group, [f"p{i}" for i in range(len(group.values))]))
    domains = {
        f"p{i}": Capture(None if len(v) > MAX_ENUM_VALUES else tuple(v))
        for i, v in enumerate(group.values)
    }
    known = {**declared, **domains}
    mine = address_rank(parse_pattern(group.prefix), pattern, known)
    for _, row in catalog.rows():
        if row.logger_key is None or group.prefix not in (row.prefixes or ("",)):
            continue
        theirs = parse_pattern(row.logger_key)
        # The more specific row takes a shared key; only an equal rank is an overlap.
        if address_rank(parse_pattern(group.prefix), theirs, known) != mine:
            continue
        if overlap(pattern, theirs, known) is not None:
            return [_Group(group.prefix, _segments(m), [], [m]) for m in group.members]
    return [group]


def _pattern_text(group: _Group, names: Sequence[str]) -> str:
    return "/".join("{" + names[p] + "}" if isinstance(p, int) else p for p in group.parts)


def _row(
    group: _Group,
    seen: Observations,
    attributes: dict[str, DraftAttribute],
    declared: Mapping[str, object],
    names: set[str],
) -> DraftRow:
    stats = _KeyStats()
    for member in group.members:
        stats.merge(seen.keys[(group.prefix, member)])
    literal_parts = [p for p in group.parts if isinstance(p, str)]
    last = literal_parts[-1] if literal_parts else ""
    kind, temporality, notes = _kind(stats, last)
    unit = (
        _context_unit(group.prefix, group.parts)
        if group.values
        else _unit(group.prefix, _segments(group.members[0]))
    )
    refused = _unit_refused(unit)
    if refused:
        notes.append(f"the unit says what the code logs; {refused}")
    bound: list[str] = []
    for index, values in enumerate(group.values):
        bound.append(_attribute(group, index, values, attributes, declared))
    key = _pattern_text(group, bound)
    components = _name_words(group.prefix, group.parts)
    exported = unit_scale(unit)[0]
    if exported != "s" and components and components[-1].split("_")[-1] in _DURATION_WORDS:
        # The duration lint wants such names exported in seconds: a time unit the code
        # logs (ms, min) is, so only a name whose unit is no time gets "_value".
        components[-1] += "_value"
    name = _unique(_series_name(components, kind), names)
    loops = sorted(stats.loops)
    level, condition, first_step, more = _presence(stats, group.prefix, seen, loops)
    if group.values:
        shown = ", ".join(group.members[:3]) + (", ..." if len(group.members) > 3 else "")
        notes.append(f"a family of {len(group.members)} keys: {shown}")
    return DraftRow(
        prefix=group.prefix,
        logger_key=key,
        name=name,
        kind=kind,
        unit=unit,
        attributes=bound,
        requirement_level=level,
        condition=condition,
        emitted_by=loops,
        first_step=first_step,
        temporality=temporality,
        notes=notes + more,
    )


def _attribute(
    group: _Group,
    index: int,
    values: list[str],
    attributes: dict[str, DraftAttribute],
    declared: Mapping[str, object],
) -> str:
    """The attribute a placeholder binds: shared by families of the same context and values."""
    position = group.parts.index(index)
    before = [p for p in group.parts[:position] if isinstance(p, str)]
    context = _name_words(group.prefix if not before else "", before) or ["key"]
    context = [c if c[0].isalpha() else f"m{c}" for c in context]
    role = "statistic" if all(v.lower() in _STATISTICS for v in values) else "name"
    base = "rl." + ".".join(context[-2:]) + "." + role
    name, number = base, 2
    while True:
        existing = attributes.get(name)
        if name in declared and existing is None:
            name = f"{base}_{number}"
            number += 1
            continue
        if existing is None:
            attributes[name] = DraftAttribute(name, list(values), len(values) > MAX_ENUM_VALUES)
            return name
        if existing.values == sorted(values):
            return name  # the same labels in another family (timing_s/, timing_per_token_ms/)
        # Other values: another attribute (a union could overlap rows the catalog declares).
        name = f"{base}_{number}"
        number += 1


# --- rendering ----------------------------------------------------------------------------

_PLAIN: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*\Z")
_YAML_WORDS: Final = _table("y n yes no on off true false null none ~")


def _q(text: str) -> str:
    """A YAML scalar for ``text``: plain when safe, else a double-quoted (JSON) string."""
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


def render(draft_file: DraftFile, runs: Sequence[str]) -> str:
    """The owner file as YAML text, with the notes as comments."""
    out = [
        "# Drafted by `metric-catalog infer` from: " + ", ".join(runs)[:200],
        "# Replace every TODO (lint refuses them), check units and kinds, then commit.",
        "owner: TODO.owner",
        f"module: {draft_file.module}",
        f"description: {_q('TODO: what these metrics are about.')}",
        f"prefix: {_q(draft_file.prefix)}",
    ]
    if draft_file.loops:
        out.append("loops:")
        for name, signature in draft_file.loops:
            out.append(f"  - name: {name}")
            out.append(f"    description: {_q('TODO: what this training loop is.')}")
            if signature:
                out.append("    signature: [" + ", ".join(_q(k) for k in signature) + "]")
    if draft_file.attributes:
        out.append("attributes:")
        for attribute in draft_file.attributes:
            out.append(f"  - name: {attribute.name}")
            out.append("    type: string")
            out.append(f"    description: {_q('TODO: what this attribute tells apart.')}")
            if attribute.open:
                out.append(f'    max_cardinality: "{attribute.max_cardinality}"')
            else:
                out.append("    values:")
                for value in attribute.values:
                    out.append(f"      - value: {_q(value)}")
                    out.append(f"        description: {_q('TODO: what this value means.')}")
    out.append("teed:" if draft_file.rows else "teed: []")
    for row in draft_file.rows:
        out.extend(f"  # {note}" for note in row.notes)
        out.append(f"  - logger_key: {_q(row.logger_key)}")
        if row.prefix != draft_file.prefix:
            out.append(f"    prefix: {_q(row.prefix)}")
        out.append(f"    name: {row.name}")
        out.append(f"    kind: {row.kind}")
        if row.temporality is not None:
            out.append(f"    temporality: {row.temporality}")
        out.append(f"    unit: {json.dumps(row.unit)}")
        out.append(f"    description: {_q(TODO)}")
        if row.attributes:
            refs = ", ".join(f"{{ref: {name}}}" for name in row.attributes)
            out.append(f"    attributes: [{refs}]")
        out.append(f"    requirement_level: {row.requirement_level}")
        if row.condition is not None:
            out.append(f"    condition: {_q(row.condition)}")
        if row.emitted_by:
            out.append(f"    emitted_by: [{', '.join(row.emitted_by)}]")
        if row.first_step is not None and row.first_step >= 0:
            out.append(f'    first_step: "{row.first_step}"')
    return "\n".join(out) + "\n"


def infer(
    runs: Sequence[Sequence[str]], catalog: Catalog, *, input_format: str | None = None
) -> Draft:
    """Read ``runs`` and propose rows for every key ``catalog`` does not declare.

    Raises:
        OSError: An input cannot be read.
        ValueError: ``input_format`` is not a registered format.
    """
    return propose(observe(runs, catalog, input_format=input_format), catalog)


def iter_texts(draft: Draft) -> Iterable[tuple[DraftFile, str]]:
    """Each drafted file with its YAML text."""
    runs = draft.observations.runs
    for draft_file in draft.files:
        yield draft_file, render(draft_file, runs)
