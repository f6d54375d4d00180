"""Proposing rows for ``infer``: families, units, kinds, presence and names from observations."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Final

from metric_catalog.series_rules import (
    Capture,
    address_rank,
    overlap,
    parse_pattern,
    unit_scale,
)
from metric_catalog.value_rules import implied_range
from metric_catalog.vocabulary import registry_key

from ..catalog.model import Catalog
from ..catalog.precedence import captures
from ..catalog.words import (
    BOOKKEEPING_KEYS,
    COUNT_WORDS,
    DURATION_WORDS,
    PROMETHEUS_SUFFIXES,
    STATISTICS,
    STEP_AXIS_KEYS,
    TOTAL_WORDS,
    TRAINER_BOOKKEEPING_KEYS,
    TYPE_WORDS,
    UNIT_WORDS,
    key_words,
    share_word,
    table,
)
from ..safe_text import shown as escaped
from .draft import Bookkeeping, Draft, DraftAttribute, DraftFile, DraftRow
from .loops import RunLoops, presence, run_loops, scale_clash
from .observe import KeyStats, Observations, schema_pattern
from .splits import split_variants
from .units import Values, key_unit

__all__ = ["MAX_ENUM_VALUES", "propose", "single_file"]

MAX_ENUM_VALUES: Final = 10
"""A placeholder with at most this many seen values gets an enum, else ``max_cardinality``."""


def _words(text: str) -> list[str]:
    """Lowercase words of a key segment (``valid_tokens_per_sec`` -> valid, tokens, per, sec)."""
    return key_words(text)


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


def _values(stats: KeyStats | None) -> Values:
    if stats is None or not stats.numeric:
        return Values()
    return Values(stats.low, stats.high, stats.whole)


def _context_unit(prefix: str, parts: Sequence[str | int], stats: KeyStats | None = None) -> str:
    literal = [p for p in parts if isinstance(p, str)]
    return key_unit(prefix, literal, _values(stats))


def _labelish(
    values: Sequence[str], prefix: str, parts: Sequence[str | int], position: int, unit: str
) -> bool:
    """Whether values varying at one place are labels of one measurement, not metric names.

    Many values label a measurement (datasets of ``{set}/accuracy``), unless they are the
    subject of the key (nothing but statistics after them) and the keys share no unit:
    ``train/{name}`` over ``loss``, ``grad_norm``, ``kl`` and ``lr`` names metrics.
    """
    if all(v.lower() in STATISTICS for v in values):
        return True
    subject = all(isinstance(p, int) or p.lower() in STATISTICS for p in parts[position + 1 :])
    if len(values) > MAX_ENUM_VALUES and (unit or not subject):
        return True
    if all(any(c.isdigit() for c in v) for v in values):
        return True
    return _context_unit(prefix, parts) != ""


def _families(
    prefix: str,
    keys: Sequence[str],
    behaviour: Mapping[str, object] | None = None,
    stats: Mapping[str, KeyStats] | None = None,
) -> list[_Group]:
    """Merge keys of one prefix into families where one segment varies like a label.

    ``behaviour`` (a key's kind and temporality, as its values showed) keeps keys that
    behave differently apart: a family row has one kind, so NeMo-Aligner's running
    total ``train_rollouts/consumed_samples`` is no family with the validation batch's
    size ``val_rollouts/consumed_samples``; ``stats`` keeps keys whose values and units
    disagree apart (``rollout/{name}`` is no family of advantages, kl and round numbers).
    """
    behaves = behaviour or {}
    observed = stats or {}
    units = {key: key_unit(prefix, _segments(key), _values(observed.get(key))) for key in keys}
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
            for whole in buckets.values():
                # Beside a placeholder (``entropy/{env}/{statistic}``) a varying inner
                # segment labels the same measurement: one family, several attributes.
                beside = position > 0 and bool(whole[0].values)
                for unit, bucket in _agreeing(whole, position, observed, units):
                    family = _merged(prefix, bucket, position, beside=beside, unit=unit)
                    if family is not None:
                        merged.append(family)
                        used.update(id(g) for g in bucket)
            if merged:
                groups = [g for g in groups if id(g) not in used] + merged
                changed = True
    return groups


def _merged(
    prefix: str, bucket: list[_Group], position: int, *, beside: bool, unit: str
) -> _Group | None:
    """The family of ``bucket``'s groups varying at ``position``, or ``None`` when the
    values there name different metrics (``unit``: the one the members agree on)."""
    if len(bucket) < 2 or len(bucket[0].parts) < 2:
        return None  # a key that is one varying segment is the name of a metric
    values = [str(g.parts[position]) for g in bucket]
    probe = tuple(-1 if i == position else p for i, p in enumerate(bucket[0].parts))
    if not (beside or _labelish(values, prefix, probe, position, unit)):
        return None
    first = bucket[0]
    slot = len(first.values)
    parts = (*first.parts[:position], slot, *first.parts[position + 1 :])
    members = [m for g in bucket for m in g.members]
    return _Group(prefix, parts, [*first.values, sorted(values)], members)


def _agreeing(
    bucket: list[_Group], position: int, stats: Mapping[str, KeyStats], units: Mapping[str, str]
) -> list[tuple[str, list[_Group]]]:
    """A bucket split into groups whose members agree: one unit (``units``: by name and
    values, as :func:`~codegen.infer.units.key_unit` reads them), one sign, and (unless the varying
    segment is a statistic, where a mean is fractional and a max whole) varying whole
    numbers or not. ``completions/clipped_ratio`` (a share) is no family with
    ``completions/mean_length`` (tokens), nor a signed advantage with a round number."""
    statistic = all(
        isinstance(g.parts[position], str) and str(g.parts[position]).lower() in STATISTICS
        for g in bucket
    )
    split: dict[tuple[object, ...], list[_Group]] = {}
    for group in bucket:
        traits: set[tuple[object, ...]] = set()
        for member in group.members:
            seen = stats.get(member)
            unit = units.get(member, "")
            if seen is None or not seen.numeric:
                traits.add((unit,))
            else:
                # Whole numbers that vary (a round, a 0/1 flag) are counts, not a float
                # that happened to be whole (a timer that logged 0).
                counted = seen.integral and seen.high > seen.low
                traits.add((unit, seen.nonnegative, statistic or counted))
        split.setdefault(traits.pop() if len(traits) == 1 else ("", "mixed"), []).append(group)
    # A bucket whose groups are each mixed already (a statistic family's mean and max)
    # stays one: it agreed when it was merged.
    return [(str(trait[0]), groups) for trait, groups in split.items()]


def _name_words(prefix: str, parts: Sequence[str | int]) -> list[str]:
    components: list[str] = []
    for segment in (*prefix.split("/"), *(p for p in parts if isinstance(p, str))):
        words = [w for w in _words(segment) if w not in UNIT_WORDS and w not in TYPE_WORDS]
        if len(words) > 1 and words[-1] == "per":
            words[-1] = "rate"  # ``samples_per_second`` (unit ``{sample}/s``): samples_rate
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
    elif last_words[-1] in PROMETHEUS_SUFFIXES:
        # ``ckpt_disk_total`` (a gauge) is ``ckpt_disk``: drop the reserved word, no artifact.
        if len(last_words) > 1:
            last_words.pop()
        elif len(components) > 1:
            components.pop()
            last_words = components[-1].split("_")
        else:
            last_words.append("value")
    components[-1] = "_".join(last_words)
    return "rl." + ".".join(components)


def _kind(stats: KeyStats, last: str) -> tuple[str, str | None, list[str]]:
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
        and (stats.integral or any(w in TOTAL_WORDS for w in words))
        and not any(w in STATISTICS for w in words)
    )
    if running:
        seen = f"{_number(stats.low)} -> {_number(stats.high)}"
        return "counter", "cumulative", [f"a running total ({seen} in the runs)"]
    counted = any(w in COUNT_WORDS for w in words) and not any(
        w in STATISTICS or w == "per" for w in words
    )
    if counted and stats.integral and stats.nonnegative and stats.numeric:
        return "counter", None, ["an integer count logged each step: a per-step counter"]
    return "gauge", None, []


@cache
def _unit_refused(unit: str) -> str:
    """What the unit lint says about ``unit`` (``""``: it accepts it)."""
    from ..catalog.diagnostics import Position  # noqa: PLC0415
    from ..catalog.lints import RULES  # noqa: PLC0415
    from ..catalog.model import MetricRow  # noqa: PLC0415

    row = MetricRow("teed", "rl.x", "gauge", unit, "X.", "development", Position("", 1, 1))
    rule = RULES.get("UNIT_NOT_UCUM")
    found = next(iter(rule.check(row)), "") if rule is not None else ""
    return found if isinstance(found, str) else found.message


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _module_name(prefix: str, head: str, taken: set[str]) -> str:
    words = [w for w in _words(prefix or head) if w not in UNIT_WORDS] or ["metrics"]
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


_KEYWORDS: Final = table(
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
    declared_loops = {loop.name for loop in catalog.loops()}
    loops = run_loops(seen, declared_loops)
    new_loops = sorted((set(seen.loop_keys) | set(loops.derived)) - declared_loops)
    axes = {axis for run_axes in loops.axes.values() for axis in run_axes}
    by_prefix: dict[str, list[str]] = {}
    aside: list[Bookkeeping] = []
    step_keys: dict[str, list[tuple[str, str]]] = {}
    for loop in new_loops:
        found = loops.step_keys(loop, set(seen.loop_keys))
        if found:
            step_keys[loop] = found
    in_loops = {key for found in step_keys.values() for key, _ in found}
    for prefix, key in seen.keys:
        qualified = f"{prefix}/{key}" if prefix else key
        if qualified in in_loops:
            continue  # a new loop's step key: declared under its step_keys, no row
        role = _not_a_metric(prefix, key, seen.keys[(prefix, key)], qualified in axes)
        if role is not None:
            aside.append(role)
            continue
        by_prefix.setdefault(prefix, []).append(key)
    # ``eval_loss`` beside ``loss``: one row teed under ``prefixes: ["", eval_]``.
    bare = by_prefix.get("", [])
    variants = split_variants(
        (("", k) for k in bare),
        {k: _kind(seen.keys[("", k)], k.rsplit("/", 1)[-1])[:2] for k in bare},
    )
    if "" in by_prefix:
        by_prefix[""] = variants.keys(by_prefix[""])
        seen = dataclasses.replace(seen, keys={**seen.keys, **variants.stats(seen.keys)})
    names = {registry_key(row.name) for _, row in catalog.rows()}
    modules = {f.module for f in catalog.files}
    declared_attributes = catalog.attributes()
    attributes: dict[str, DraftAttribute] = {}
    files: dict[str, DraftFile] = {}
    domains = captures(declared_attributes)
    clashes: dict[tuple[str, str], str] = {}

    for prefix in sorted(by_prefix):
        keys = by_prefix[prefix]
        split = {key: _clash(prefix, key, seen, loops, clashes) for key in keys}
        behaviour = {
            key: (*_kind(seen.keys[(prefix, key)], key.rsplit("/", 1)[-1])[:2], split[key] != [])
            for key in keys
        }
        stats = {key: seen.keys[(prefix, key)] for key in keys}
        families = _families(prefix, keys, behaviour, stats)
        for family in sorted(families, key=lambda g: g.members[0]):
            for single in _checked_family(family, catalog, domains, axes):
                parts = split.get(single.members[0]) if len(single.members) == 1 else None
                pieces: list[tuple[str, list[int]] | None] = [*parts] if parts else [None]
                for only in pieces:
                    row = _row(
                        single, seen, attributes, declared_attributes, names, loops=loops, only=only
                    )
                    if not prefix:
                        row.prefixes = variants.prefixes(single.members)
                    if only is None and any((prefix, m) in clashes for m in single.members):
                        row.notes.append(_CLASH_NOTE)
                    _file_of(files, single, prefix, modules).rows.append(row)
    ordered = [files[owner] for owner in sorted(files)]
    _untangle([row for f in ordered for row in f.rows], catalog, names)
    for attribute in sorted(attributes.values(), key=lambda a: a.name):
        home = next(f for f in ordered if any(attribute.name in r.attributes for r in f.rows))
        home.attributes.append(attribute)
    if new_loops and not ordered:
        ordered.append(DraftFile(_module_name("", "loops", modules), ""))
    for loop in new_loops:
        ordered[0].loops.append((loop, _signature(seen, loop, loops, axes)))
        if loop in step_keys:
            ordered[0].step_keys[loop] = step_keys[loop]
    aside.sort(key=lambda b: b.key)
    if aside:
        if not ordered:
            ordered.append(DraftFile(_module_name("", "bookkeeping", modules), ""))
        ordered[0].bookkeeping.extend(aside)
    return Draft(ordered, seen, aside, list(clashes.values()))


_CLASH_NOTE: Final = (
    "TODO: a scale clash between runs (see infer's finding): make the code paths agree, "
    "then check the unit"
)


def _file_of(
    files: dict[str, DraftFile], group: _Group, prefix: str, modules: set[str]
) -> DraftFile:
    """The owner file of a row: one per prefix, else per first key segment (actor/...)."""
    head = group.parts[0] if len(group.parts) > 1 else ""
    owner = prefix if prefix else (head if isinstance(head, str) else "")
    target = files.get(owner)
    if target is None:
        target = files[owner] = DraftFile(_module_name(prefix, owner, modules), prefix)
    return target


def _clash(
    prefix: str, key: str, seen: Observations, loops: RunLoops, clashes: dict[tuple[str, str], str]
) -> list[tuple[str, list[int]]]:
    """A scale clash of a key between runs, told as a finding of its own (``clashes``).

    Where the runs of each unit are of their own loops, the key gets one row per loop
    (rows of disjoint loops may share a logger key): ``[(unit, runs)]``; else ``[]``, and
    the one row says so.
    """
    stats = seen.keys[(prefix, key)]
    units = scale_clash(prefix, key, stats, seen)
    if not units:
        return []
    qualified = f"{prefix}/{key}" if prefix else key
    shown = "; ".join(
        f"{unit or 'no unit'} in {', '.join(escaped(seen.runs[r]) for r in runs[:3])} "
        f"({_number(min(stats.run_low[r] for r in runs))} .. "
        f"{_number(max(stats.run_high[r] for r in runs))})"
        for unit, runs in sorted(units.items())
    )
    by_loop: dict[str, set[str]] = {}
    for unit, runs in units.items():
        for run in runs:
            for loop in loops.of_run.get(run, set()) or {""}:
                by_loop.setdefault(loop, set()).add(unit)
    apart = "" not in by_loop and all(len(found) == 1 for found in by_loop.values())
    fix = (
        "drafted one row per loop (rows of disjoint loops may share a key)"
        if apart
        else "the runs' values give it different units (a share and a percentage?): make "
        "the code paths agree, then declare one unit"
    )
    clashes[(prefix, key)] = f"scale clash: {escaped(qualified)!r} is {shown}: {fix}"
    return sorted(units.items()) if apart else []


def _not_a_metric(prefix: str, key: str, stats: KeyStats, axis: bool) -> Bookkeeping | None:
    """A step axis (``step``, ``train/global_step``) or a logger's bookkeeping (``time``)."""
    qualified = f"{prefix}/{key}" if prefix else key
    last = key.rsplit("/", 1)[-1]
    if axis or qualified in STEP_AXIS_KEYS or key in STEP_AXIS_KEYS or last == "global_step":
        why = "the step the record was logged at (a step axis), not a metric"
        return Bookkeeping(qualified, "step axis", why)
    # A timestamp grows like unix seconds; a key named ``time`` with small values is a
    # duration, drafted as a metric.
    if qualified in TRAINER_BOOKKEEPING_KEYS:
        why = "a training framework's own state (a Trainer's FLOP estimate), not a metric"
        return Bookkeeping(qualified, "bookkeeping", why)
    named = qualified in BOOKKEEPING_KEYS or key in BOOKKEEPING_KEYS
    if named and (not stats.numeric or stats.low >= _UNIX_2001):
        seen = f" ({_number(stats.low)} .. {_number(stats.high)})" if stats.numeric else ""
        why = f"a logger's timestamp{seen}, not a metric"
        return Bookkeeping(qualified, "bookkeeping", why)
    return None


_UNIX_2001: Final = 1e9
"""Unix seconds of September 2001: a value past it named ``time`` is a timestamp."""


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
        merged.step_keys |= draft_file.step_keys
        merged.bookkeeping += draft_file.bookkeeping
    return merged


def _signature(seen: Observations, loop: str, loops: RunLoops, axes: set[str]) -> list[str]:
    """Up to three keys only this loop logged (its step axes aside)."""
    keyed: dict[str, set[str]] = {name: set(keys) for name, keys in seen.loop_keys.items()}
    for (prefix, key), stats in seen.keys.items():
        for name in loops.of_key(stats):
            keyed.setdefault(name, set()).add(f"{prefix}/{key}" if prefix else key)
    mine = keyed.get(loop, set())
    others = set().union(*(keys for name, keys in keyed.items() if name != loop))
    pattern = schema_pattern("qualifiedKey")
    unique = sorted(k for k in mine - others - axes if pattern.match(k))
    return unique[:3]


def _checked_family(
    group: _Group, catalog: Catalog, declared: dict[str, Capture], axes: set[str]
) -> list[_Group]:
    """The family, or its members as literal rows when it would overlap a declared row or
    take a step axis (``eval/{name}`` open to any name would take ``eval/step``)."""
    if not group.values:
        return [group]
    literals = [_Group(group.prefix, _segments(m), [], [m]) for m in group.members]
    if any(_takes(group, axis) for axis in axes):
        return literals
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
            return literals
    return [group]


def _takes(group: _Group, qualified: str) -> bool:
    """Whether the family's key pattern, its open placeholders taking any segment, matches
    a logged key (``prefix/key``)."""
    if group.prefix:
        if not qualified.startswith(group.prefix + "/"):
            return False
        qualified = qualified[len(group.prefix) + 1 :]
    segments = qualified.split("/")
    if len(segments) != len(group.parts):
        return False
    for part, segment in zip(group.parts, segments, strict=True):
        if isinstance(part, str):
            if part != segment:
                return False
        elif len(group.values[part]) <= MAX_ENUM_VALUES and segment not in group.values[part]:
            return False
    return True


def _pattern_text(group: _Group, names: Sequence[str]) -> str:
    return "/".join("{" + names[p] + "}" if isinstance(p, int) else p for p in group.parts)


def _row(
    group: _Group,
    seen: Observations,
    attributes: dict[str, DraftAttribute],
    declared: Mapping[str, object],
    names: set[str],
    *,
    loops: RunLoops,
    only: tuple[str, list[int]] | None = None,
) -> DraftRow:
    """The row of a group; ``only``: a clashing key's row for the runs of one unit."""
    stats = KeyStats()
    for member in group.members:
        stats.merge(seen.keys[(group.prefix, member)])
    stats.whole = all(seen.keys[(group.prefix, m)].whole for m in group.members)
    if only is not None:
        stats = stats.of_runs(only[1])
    literal_parts = [p for p in group.parts if isinstance(p, str)]
    # The kind reads the words of the last segment: a placeholder's members' own
    # (``{role}/{count}`` over ``ppo_actor/n_tokens``...: counts).
    last = group.members[0].rsplit("/", 1)[-1]
    kind, temporality, notes = _kind(stats, last)
    unit = key_unit(group.prefix, _segments(group.members[0]), _values(stats))
    if group.values:
        # A family's unit is the one its members agree on (timers of named phases:
        # ``perf/{name}`` over ``perf/step_time``...), else its literal context's.
        units = {
            key_unit(group.prefix, _segments(m), _values(seen.keys[(group.prefix, m)]))
            for m in group.members
        }
        unit = units.pop() if len(units) == 1 else _context_unit(group.prefix, group.parts, stats)
    notes += _value_notes(stats)
    refused = _unit_refused(unit)
    if refused:
        notes.append(f"the unit says what the code logs; {refused}")
    bound: list[str] = []
    for index, values in enumerate(group.values):
        bound.append(_attribute(group, index, values, attributes, declared))
    key = _pattern_text(group, bound)
    components = _name_words(group.prefix, group.parts)
    exported = unit_scale(unit)[0]
    if exported != "s" and components and components[-1].split("_")[-1] in DURATION_WORDS:
        # The duration lint wants such names exported in seconds: a time unit the code
        # logs (ms, min) is, so only a name whose unit is no time gets "_value".
        components[-1] += "_value"
    emitted_by = loops.of_key(stats)
    if only is not None and emitted_by:
        # One row per loop of a clashing key: the loop names its series.
        components[-1] += "_" + "_".join(emitted_by)
    name = _unique(_series_name(components, kind), names)
    when = presence(stats, group.prefix, seen, emitted_by, loops)
    if only is not None:
        notes.append(f"a scale clash between runs: the values of loop(s) {', '.join(emitted_by)}")
    if group.values:
        shown = ", ".join(group.members[:3]) + (", ..." if len(group.members) > 3 else "")
        notes.append(f"a family of {len(group.members)} keys: {shown}")
    words = [w for part in literal_parts for w in _words(part)]
    value_range, why = _proposed_range(unit, kind, stats, words)
    if why:
        notes.append(why)
    return DraftRow(
        prefix=group.prefix,
        logger_key=key,
        name=name,
        kind=kind,
        unit=unit,
        value_range=value_range,
        attributes=bound,
        requirement_level=when.level,
        condition=when.condition,
        emitted_by=emitted_by,
        first_step=when.first_step,
        every=when.every,
        phase=when.phase,
        temporality=temporality,
        notes=[*notes, *when.notes],
    )


def _value_notes(stats: KeyStats) -> list[str]:
    """Comments on values the tee would not export as they are: whole numbers past a
    float, NaN and infinities (a defect, or ``non_finite: allowed``)."""
    notes = []
    if stats.huge:
        notes.append(
            f"{stats.huge} value(s) were whole numbers too large for a float (over 1e308): "
            "not a measurement the tee can export"
        )
    if stats.non_finite:
        notes.append(
            f"logged NaN or an infinity {stats.non_finite} time(s): a defect, or add "
            "non_finite: allowed if such values are legitimate (a skipped update's inf)"
        )
    return notes


def _proposed_range(
    unit: str, kind: str, stats: KeyStats, words: Sequence[str]
) -> tuple[tuple[tuple[str, str], ...], str]:
    """The ``range`` to propose where the observed values and the name agree, and why.

    A share by its name (:func:`~codegen.catalog.words.share_word`, not a quotient) in
    unit ``1`` whose values all lie in [0, 1] gets ``{min: "0", max: "1"}``; a count by its
    name (``num_*``, ``*_count``; a gauge: a mean of counts) whose unit implies no lower
    bound and whose values are never negative gets ``{min: "0"}``. A unit that implies a
    range (``%``, durations, sizes, ``{token}``) needs none; counters log a step's change:
    none.
    """
    if kind not in ("gauge", "histogram") or not stats.numeric or stats.types:
        return (), ""
    implied = implied_range(unit, kind)
    if implied is not None and implied.low is not None:
        return (), ""
    if unit == "1" and share_word(words, quotients=False) is not None:
        if stats.low >= 0.0 and stats.high <= 1.0:
            return (("min", "0"), ("max", "1")), "range: a share by its name, every value in [0, 1]"
        return (), ""
    counted = any(w in COUNT_WORDS for w in words)
    if counted and unit in ("", "1") and stats.nonnegative:
        return (("min", "0"),), "range: a count by its name, never negative"
    return (), ""


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
    role = "statistic" if all(v.lower() in STATISTICS for v in values) else "name"
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
