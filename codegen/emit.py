"""Sample telemetry from the catalog: every row of one loop, through the real tee.

``metric-catalog emit --loop L`` exercises dashboards, alerts and collectors
before a real run exists. :func:`plan_steps` decides what a plausible run of
loop ``L`` logs at each step; :func:`emit` imports the project's generated
modules (so the registry holds exactly what production declares), then hands
each step to ``TeeLogger(...).log_metrics`` and each recorded row to
``record_metrics``, exactly as training code would. Nothing here knows about a
transport: the caller configures :mod:`metric_catalog.exporters` (OTLP,
Prometheus) and/or passes a JSON Lines path.

What is sampled, per step ``1..steps``:

- every teed row that applies to the loop (no ``emitted_by``, or one listing the
  loop) once the step reaches its ``first_step``, under each of its prefixes;
- key families and prefix patterns are filled with valid values: an enum's
  values are all used at every step (several placeholders advance together), an
  open attribute takes two sample values of its type;
- attributes a row declares that the key does not capture are passed as the
  call's attributes when required (enum values cycled over the steps); derived
  attributes are left to the tee, which fills them from their source;
- every recorded row, with its required attributes;
- values plausible for the kind and unit: ratios in ``[0, 1]``, percentages in
  ``[0, 100]``, positive durations and sizes, small positive counter increments,
  each written in the unit the code logs (a row declared in ``ms`` gets
  millisecond values, one in ``GiBy`` gibibytes); a row's declared ``range`` is
  played inside, whole numbers where it declares ``value_type: int``;
- coherent statistics: one call's ``x/min``, ``x/mean``, ``x/max`` (literal keys or
  a family whose attribute takes those values) get min <= mean <= max, and a row
  with ``sum_of`` logs the sum of its parts' values at the step.
"""

from __future__ import annotations

import functools
import importlib
import random
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from metric_catalog.loggers import JsonlLogger, TeeLogger
from metric_catalog.series_rules import (
    compile_pattern,
    is_scheduled,
    next_scheduled,
    placeholders,
    qualified_key,
    scale_value,
    unit_scale,
)
from metric_catalog.tee import record_metrics, tee_metrics

from .catalog.matching import KeyMatcher
from .catalog.model import Attribute, Catalog, MetricRow, fill_template

if TYPE_CHECKING:
    from .config import Config

__all__ = [
    "EmitError",
    "EmitSummary",
    "LoggedCall",
    "RecordedCall",
    "Step",
    "applies_to_loop",
    "emit",
    "import_generated_modules",
    "plan_steps",
]

_OPEN_SAMPLES = 2
"""How many sample values an attribute without an enum takes."""


class EmitError(ValueError):
    """The catalog cannot be emitted as asked (unknown loop, missing generated module)."""


@dataclass(frozen=True, slots=True)
class LoggedCall:
    """One ``log_metrics(metrics, step, prefix, attributes=...)`` call."""

    prefix: str
    metrics: dict[str, float]
    attributes: dict[str, str | int | float | bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One ``record_metrics({registry_key: value}, attributes)`` call."""

    values: dict[str, float]
    attributes: dict[str, str | int | float | bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Step:
    """What the sample run does at one step."""

    step: int
    logged: tuple[LoggedCall, ...]
    recorded: tuple[RecordedCall, ...]


@dataclass(frozen=True, slots=True)
class EmitSummary:
    """What :func:`emit` sent."""

    loop: str | None
    steps: int
    calls: int
    """``log_metrics`` calls made."""
    keys: int
    """Logged key occurrences (one per key per call)."""
    recorded_points: int
    series: tuple[str, ...]
    """Every series name a value was sent to, sorted."""


def _first_emitted(row: MetricRow, last: int) -> int:
    """The first step a sample run of ``last`` steps logs the row at (see :func:`_emitted_at`)."""
    first = row.first_step if row.first_step is not None else 1
    if row.every is None:
        return first
    due = next_scheduled(row.every, row.phase, first)
    due = last + 1 if due is None else due
    return min(due, last) if row.at_last_step and first <= last else due


def _emitted_at(row: MetricRow, step: int, last: int) -> bool:
    """Whether a sample run of ``last`` steps logs the row at ``step``: from its
    ``first_step`` on, at every step, or with a literal ``every`` at the steps of its
    schedule (and the last step with ``at_last_step``), as live-check judges it."""
    if row.first_step is not None and step < row.first_step:
        return False
    if row.every is None:
        return True
    return is_scheduled(step, row.every, row.phase) or (row.at_last_step and step == last)


def applies_to_loop(row: MetricRow, loop: str | None) -> bool:
    """Whether a run of ``loop`` logs the row (rows without ``emitted_by`` apply to every loop)."""
    return loop is None or not row.emitted_by or loop in row.emitted_by


def _sample_values(attribute: Attribute | None) -> tuple[str | int | float | bool, ...]:
    """Valid values of an attribute, typed; an unknown attribute gets neutral strings."""
    if attribute is None:
        return tuple(f"sample{i}" for i in range(_OPEN_SAMPLES))
    if attribute.values:
        return attribute.typed_values()
    if attribute.type == "bool":
        return (True, False)
    if attribute.type == "int":
        return tuple(range(_OPEN_SAMPLES))
    if attribute.type == "double":
        return tuple(0.5 + i for i in range(_OPEN_SAMPLES))
    return tuple(f"sample{i}" for i in range(_OPEN_SAMPLES))


def _as_text(value: str | int | float | bool) -> str:
    """A value as it appears inside a logged key (``true``, ``3``, ``0.5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _fill(template: str, values: Mapping[str, str | int | float | bool]) -> str:
    """The template with each placeholder replaced by its value's text."""
    return fill_template(template, {name: _as_text(value) for name, value in values.items()})


def _combinations(
    names: Sequence[str], attributes: Mapping[str, Attribute]
) -> list[dict[str, str | int | float | bool]]:
    """Value sets covering every value of every placeholder (advanced together, not crossed)."""
    if not names:
        return [{}]
    domains = [_sample_values(attributes.get(name)) for name in names]
    width = max(len(domain) for domain in domains)
    return [
        {name: domain[i % len(domain)] for name, domain in zip(names, domains, strict=True)}
        for i in range(width)
    ]


def _value(row: MetricRow, rng: random.Random, step: int) -> float:
    """A plausible value for the row's kind and unit, in the unit the code logs.

    The size is chosen in the exported (base) unit, then expressed in the logged one:
    a row logged in ``ms`` gets millisecond values (a few hundred), one in ``GiBy``
    gibibytes, as the code writing the log would.
    """
    bounds = row.value_range
    value = _base_value(row, rng, step)
    if row.logged_unit:
        _base, numerator, denominator = unit_scale(row.logged_unit)
        # One logged unit is numerator/denominator base units: divide to express it.
        value = scale_value(value, denominator, numerator)
    if bounds is not None and bounds.integer:
        value = float(round(value))
    if bounds is not None and not bounds.contains(value):
        # The range (declared, in the unit the code logs) says where values lie.
        value = bounds.sample(rng.random())
    return value


def _base_value(row: MetricRow, rng: random.Random, step: int) -> float:
    """A plausible value for the row's kind in its exported unit (``s``, ``By``, ``1``)."""
    unit = row.unit
    if row.kind == "up_down_counter":
        return float(rng.choice((-1, 1)) * rng.randint(1, 5))
    if unit == "1":
        magnitude = rng.random()
    elif unit == "%":
        magnitude = rng.random() * 100.0
    elif unit in ("s", "ms", "us", "ns", "min", "h"):
        magnitude = round(rng.uniform(0.05, 5.0), 4)
    elif unit.endswith("By"):
        magnitude = float(rng.randint(1 << 20, 1 << 30))
    elif unit.startswith("{") or unit == "":
        magnitude = float(rng.randint(1, 1000)) if row.kind == "counter" else rng.uniform(0, 10)
    else:
        magnitude = rng.uniform(0.0, 10.0)
    if row.kind == "counter":
        # A counter takes this step's amount: never negative, rarely zero.
        return max(magnitude, 1.0) if unit not in ("1", "%") else magnitude + 0.01
    return magnitude + 0.0 * step


def _call_attributes(
    row: MetricRow,
    captured: set[str],
    attributes: Mapping[str, Attribute],
    step: int,
) -> dict[str, str | int | float | bool]:
    """Required attributes the key does not capture and the tee does not derive, cycled by step."""
    chosen: dict[str, str | int | float | bool] = {}
    for ref in row.attributes:
        if ref.name in captured or ref.derive is not None or ref.requirement_level != "required":
            continue
        domain = _sample_values(attributes.get(ref.name))
        chosen[ref.name] = domain[step % len(domain)]
    return chosen


# Statistics of one quantity, smallest first: a call logging several of one stem
# (loss/min, loss/mean, loss/max, or a family whose attribute takes these values) gets
# values in this order.
_STATISTIC_ORDER: Final = {"min": 0, "p5": 1, "p25": 2, "median": 3, "mean": 3, "avg": 3}
_STATISTIC_ORDER_TOP: Final = {"p75": 4, "p95": 5, "p99": 6, "max": 7}
_STATISTICS: Final = {**_STATISTIC_ORDER, **_STATISTIC_ORDER_TOP}
_STATISTIC_SPLIT: Final = re.compile(r"([/_.@-])")


def _statistic_stem(key: str) -> tuple[str, int] | None:
    """``(stem, rank)`` when a segment of ``key`` names a statistic (``loss/min`` ->
    ``("loss/*", 0)``); ``None`` otherwise. The last such segment counts."""
    parts = _STATISTIC_SPLIT.split(key)
    for index in range(len(parts) - 1, -1, -1):
        rank = _STATISTICS.get(parts[index])
        if rank is not None:
            return "".join((*parts[:index], "*", *parts[index + 1 :])), rank
    return None


def _order_statistics(metrics: dict[str, float]) -> None:
    """Reorder the values of each stem's statistics so min <= mean <= max (in place)."""
    stems: dict[str, list[tuple[int, str]]] = {}
    for key in metrics:
        found = _statistic_stem(key)
        if found is not None:
            stems.setdefault(found[0], []).append((found[1], key))
    for members in stems.values():
        if len(members) < 2:
            continue
        members.sort()
        values = sorted(metrics[key] for _rank, key in members)
        for (_rank, key), value in zip(members, values, strict=True):
            metrics[key] = value


def _make_coherent(calls: Iterable[LoggedCall], teed: list[MetricRow], loop: str | None) -> None:
    """One step's values made coherent: statistics ordered, totals the sum of their parts.

    A row with ``sum_of`` logs the sum of every value its parts log at the step (each
    key of a part family); the total goes where the row's single key is logged. Totals
    are summed parts first, so a chain (a total of totals) adds up at every link. Each
    logged key is matched to the rows involved once (a dict lookup for a literal row):
    linear in keys and rows, not their product.
    """
    calls = list(calls)
    for call in calls:
        _order_statistics(call.metrics)
    totals = [row for row in teed if row.sum_of and applies_to_loop(row, loop)]
    if not totals:
        return
    by_name = {row.name: row for row in teed}
    involved = {row.name: row for row in totals}
    involved.update(
        (part, by_name[part]) for row in totals for part in row.sum_of if part in by_name
    )
    logged = _keys_by_row(calls, involved.values())
    for total in _parts_first(totals, by_name):
        amount = 0.0
        for part in total.sum_of:
            for call, key in logged.get(part, ()):
                amount += call.metrics[key]
        for call, key in logged.get(total.name, ()):
            call.metrics[key] = amount


def _parts_first(totals: list[MetricRow], by_name: Mapping[str, MetricRow]) -> list[MetricRow]:
    """``totals`` ordered so each comes after the totals among its parts (an iterative
    depth-first walk: a chain thousands long never recurses; a cycle is cut where met)."""
    wanted = {row.name for row in totals}
    done: set[str] = set()
    ordered: list[MetricRow] = []
    for root in totals:
        stack = [(root, iter(root.sum_of))]
        done.add(root.name)
        while stack:
            row, parts = stack[-1]
            part = next(parts, None)
            if part is None:
                stack.pop()
                ordered.append(row)
            elif part in wanted and part not in done:
                done.add(part)
                stack.append((by_name[part], iter(by_name[part].sum_of)))
    return ordered


def _keys_by_row(
    calls: list[LoggedCall], rows: Iterable[MetricRow]
) -> dict[str, list[tuple[LoggedCall, str]]]:
    """Row name -> the ``(call, key)`` pairs of the step that are its logged keys."""
    literal: dict[tuple[str, str], list[str]] = {}
    patterns: list[tuple[str, re.Pattern[str], tuple[re.Pattern[str], ...]]] = []
    for row in rows:
        if row.logger_key is None:
            continue
        if "{" in row.logger_key or any("{" in prefix for prefix in row.prefixes):
            patterns.append((row.name, *_row_patterns(row.logger_key, tuple(row.prefixes))))
        else:
            for prefix in row.prefixes:
                literal.setdefault((prefix, row.logger_key), []).append(row.name)
    found: dict[str, list[tuple[LoggedCall, str]]] = {}
    for call in calls:
        for key in call.metrics:
            for name in literal.get((call.prefix, key), ()):
                found.setdefault(name, []).append((call, key))
            for name, key_regex, prefix_regexes in patterns:
                if key_regex.fullmatch(key) and any(
                    p.fullmatch(call.prefix) for p in prefix_regexes
                ):
                    found.setdefault(name, []).append((call, key))
    return found


@functools.lru_cache(maxsize=4096)
def _row_patterns(
    logger_key: str, prefixes: tuple[str, ...]
) -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...]]:
    """A family row's key and prefix patterns, compiled once (every step matches them)."""
    return (
        compile_pattern(logger_key, {}).regex,
        tuple(compile_pattern(prefix, {}).regex for prefix in prefixes),
    )


def plan_steps(catalog: Catalog, loop: str | None, steps: int, *, seed: int = 0) -> Iterator[Step]:
    """What a sample run of ``loop`` logs and records at each step ``1..steps``.

    Raises:
        EmitError: ``loop`` is not declared (and the catalog declares loops), or
            ``steps`` is below 1.
    """
    if steps < 1:
        msg = f"--steps {steps}: a sample run needs at least one step"
        raise EmitError(msg)
    declared = sorted(item.name for item in catalog.loops())
    if loop is not None and loop not in declared:
        known = ", ".join(declared) if declared else "none (declare them under 'loops:')"
        msg = f"--loop: unknown loop {loop!r}; declared loops: {known}"
        raise EmitError(msg)
    attributes = catalog.attributes()
    rng = random.Random(seed)
    teed = [row for _, row in catalog.rows() if row.logger_key is not None]
    # A filled key is logged only where the one routing rule sends it back to its row: a
    # sample value may spell a more specific row's key, or a step key (the tee's rule).
    matcher = KeyMatcher(teed, _ROUTE_CACHE, attributes)
    recorded = [row for _, row in catalog.rows() if row.logger_key is None]
    views: dict[str, dict[str, Attribute]] = {}
    for step in range(1, steps + 1):
        # (prefix, frozen call attributes) -> metrics: one log_metrics call each.
        calls: dict[tuple[str, tuple[tuple[str, object], ...]], LoggedCall] = {}
        for row in teed:
            if not applies_to_loop(row, loop):
                continue
            if not _emitted_at(row, step, steps):
                continue
            assert row.logger_key is not None
            seen = views.get(row.name)
            if seen is None:  # the row's own enums (a ref's values cut the attribute's)
                seen = views[row.name] = Catalog.row_attributes(row, attributes)
            for prefix in row.prefixes:
                names = list(dict.fromkeys((*placeholders(prefix), *placeholders(row.logger_key))))
                extra = _call_attributes(row, set(names), seen, step)
                frozen = tuple(sorted((k, v) for k, v in extra.items()))
                for values in _combinations(names, seen):
                    call_key = (_fill(prefix, values), frozen)
                    if names and not _routes_back(matcher, catalog, row, call_key[0], loop, values):
                        continue
                    call = calls.get(call_key)
                    if call is None:
                        call = calls[call_key] = LoggedCall(call_key[0], {}, dict(extra))
                    call.metrics[_fill(row.logger_key, values)] = _value(row, rng, step)
        _make_coherent(calls.values(), teed, loop)
        records: list[RecordedCall] = []
        for row in recorded:
            extra = _call_attributes(row, set(), Catalog.row_attributes(row, attributes), step)
            records.append(RecordedCall({row.registry_key: _value(row, rng, step)}, extra))
        yield Step(step, tuple(calls.values()), tuple(records))


def _routes_back(  # noqa: PLR0917 - plan_steps' locals
    matcher: KeyMatcher,
    catalog: Catalog,
    row: MetricRow,
    prefix: str,
    loop: str | None,
    values: Mapping[str, str | int | float | bool],
) -> bool:
    """Whether the family ``row``'s key filled with ``values`` is the row's by the routing
    rule the tee and live-check use (not another row's, not a step or bookkeeping key)."""
    key = _fill(row.logger_key or "", values)
    if catalog.is_bookkeeping(qualified_key(prefix, key)):
        return False
    return any(match.row.name == row.name for match in matcher.route_in(prefix, key, loop).matches)


_ROUTE_CACHE: Final = 10_000
"""Filled keys whose route a sample run remembers."""


def import_generated_modules(catalog: Catalog, config: Config) -> list[str]:
    """Import ``<package>.<module>`` of every catalog file, as the owners would.

    The package folder's import root (``package-dir`` less the package's own
    folders) goes first on ``sys.path``, so an adopter's package is found
    without being installed. Returns the module names imported.

    Raises:
        EmitError: a generated module is missing or fails to import (run
            ``generate`` first).
    """
    package_dir = (config.root / config.package_dir).resolve()
    depth = len(config.package.split("."))
    import_root = package_dir
    for _ in range(depth):
        import_root = import_root.parent
    if str(import_root) not in sys.path:
        sys.path.insert(0, str(import_root))
    imported: list[str] = []
    for catalog_file in catalog.files:
        name = f"{config.package}.{catalog_file.module}"
        try:
            importlib.import_module(name)
        except ImportError as exc:
            msg = (
                f"{catalog_file.path}: cannot import its generated module {name} "
                f"({type(exc).__name__}: {exc}); run '{config.generate_command}' first"
            )
            raise EmitError(msg) from exc
        imported.append(name)
    return imported


def emit(
    catalog: Catalog,
    config: Config,
    *,
    loop: str | None,
    steps: int,
    jsonl: Path | None = None,
    seed: int = 0,
) -> EmitSummary:
    """Send a sample run through the real tee (and a ``JsonlLogger`` when ``jsonl`` is set).

    The exporters are whatever :mod:`metric_catalog.exporters` is configured
    with (the caller's choice); the first tee freezes the registry.

    Raises:
        EmitError: see :func:`plan_steps` and :func:`import_generated_modules`.
        OSError: the JSON Lines file cannot be opened.
    """
    plan = list(plan_steps(catalog, loop, steps, seed=seed))
    import_generated_modules(catalog, config)
    names = {row.registry_key: row.name for _, row in catalog.rows()}
    series: set[str] = set()
    calls = keys = points = 0
    writer = None if jsonl is None else JsonlLogger(jsonl, loop=loop)
    try:
        for sample in plan:
            for call in sample.logged:
                if writer is not None:
                    tee_logger = TeeLogger(writer, attributes=call.attributes or None)
                    tee_logger.log_metrics(call.metrics, sample.step, call.prefix)
                else:
                    tee_metrics(
                        call.metrics, call.prefix, attributes=call.attributes or None, loop=loop
                    )
                calls += 1
                keys += len(call.metrics)
            for record in sample.recorded:
                if writer is not None:
                    writer.record_metrics(
                        record.values, record.attributes or None, step=sample.step
                    )
                else:
                    record_metrics(record.values, record.attributes or None)
                points += len(record.values)
                series.update(names[key] for key in record.values)
        series.update(
            row.name
            for _, row in catalog.rows()
            if row.logger_key is not None
            and applies_to_loop(row, loop)
            and _first_emitted(row, steps) <= steps
        )
    finally:
        if writer is not None:
            writer.close()
    return EmitSummary(loop, steps, calls, keys, points, tuple(sorted(series)))
