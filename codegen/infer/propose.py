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
    ANNOTATIONS,
    BOOKKEEPING_KEYS,
    COUNT_WORDS,
    DURATION_WORDS,
    INDICATOR_WORDS,
    MEMORY_UNITS,
    MEMORY_WORDS,
    NOT_SHARE_WORDS,
    PERCENT_WORDS,
    PROMETHEUS_SUFFIXES,
    RATIO_WORDS,
    STATISTICS,
    STEP_AXIS_KEYS,
    THROUGHPUT_WORDS,
    TIME_WORDS,
    TIMER_WORDS,
    TOTAL_WORDS,
    TRAINER_BOOKKEEPING_KEYS,
    TYPE_WORDS,
    UNIT_WORDS,
    UTILIZATION_WORDS,
    share_word,
    table,
)
from .draft import Bookkeeping, Draft, DraftAttribute, DraftFile, DraftRow
from .observe import KeyStats, Observations, schema_pattern
from .splits import split_variants

__all__ = ["MAX_ENUM_VALUES", "propose", "single_file"]

MAX_ENUM_VALUES: Final = 10
"""A placeholder with at most this many seen values gets an enum, else ``max_cardinality``."""


def _words(text: str) -> list[str]:
    """Lowercase words of a key segment (``valid_tokens_per_sec`` -> valid, tokens, per, sec)."""
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


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


def _context_unit(prefix: str, parts: Sequence[str | int], stats: KeyStats | None = None) -> str:
    literal = [p for p in parts if isinstance(p, str)]
    return _unit(prefix, literal, stats=stats)


def _subject(segments: Sequence[str]) -> list[str]:
    """Words of the segment naming the quantity: the last one that is not a statistic.

    ``kl_ent_ratio/mean`` measures ``kl_ent_ratio``; ``entropy/{env}/{statistic}`` (its
    literal segments) measures ``entropy``.
    """
    for segment in reversed(segments):
        words = _words(segment)
        if words and not all(w in STATISTICS for w in words):
            return words
    return []


def _unit(prefix: str, segments: Sequence[str], *, stats: KeyStats | None = None) -> str:
    """The unit a key's words suggest, checked against its values (``""``: none known)."""
    last = _subject(segments)
    context = [w for s in (prefix, *segments) for w in _words(s)]
    if "per" in last:
        head = last[: last.index("per")]
        tail = last[last.index("per") + 1 :]
        if tail[:1] and tail[0] in {"s", "sec", "second", "secs", "seconds"}:
            counted = next((ANNOTATIONS[w] for w in reversed(head) if w in ANNOTATIONS), "")
            return f"{counted}/s" if counted else "1/s"
        last = head  # "tokens per sample" counts tokens; "throughput per gpu" is a throughput
    known = _named_unit(last, stats)
    if known:
        return known
    for words in (last, context):
        if "ms" in words or "millis" in words or "milliseconds" in words:
            return "ms"
        if "us" in words or "microseconds" in words:
            return "us"
        if "pct" in words or "percent" in words:
            return "%"
    if last and last[-1] in TIME_WORDS:
        return "s"
    if any(w in TIMER_WORDS for w in context):
        return "s"
    for word in reversed(last):
        if word in ANNOTATIONS:
            return ANNOTATIONS[word]
    return ""


def _named_unit(last: Sequence[str], stats: KeyStats | None) -> str:
    """Units of the quantities real trainers name: throughput, mfu, memory, fractions."""
    high = stats.high if stats is not None and stats.numeric else None
    if any(w in THROUGHPUT_WORDS for w in last):
        return "{sample}/s" if "samples" in last else "{token}/s"
    if any(w in UTILIZATION_WORDS for w in last):
        # prime-rl logs mfu in percent, others as a fraction: the values tell.
        return "%" if high is not None and high > 1 else "1"
    if any(w in PERCENT_WORDS for w in last):
        return "%"
    for word in reversed(last):
        if word in MEMORY_UNITS:
            return MEMORY_UNITS[word]
    if any(w in MEMORY_WORDS for w in last):
        return "GiBy"  # torch.cuda.max_memory_* / 1024**3, as trainers log it
    if NOT_SHARE_WORDS.intersection(last):
        return ""  # a learning rate is no fraction
    if any(w in RATIO_WORDS for w in last) or (last and last[0] in INDICATOR_WORDS):
        fraction = not any(w == "ratio" for w in last)
        if fraction and high is not None and 1 < high <= 100:
            return "%"  # a "rate" of 37.5 is a percentage
        return "1"
    return ""


def _labelish(values: Sequence[str], prefix: str, parts: Sequence[str | int]) -> bool:
    """Whether values varying at one place are labels of one measurement, not metric names."""
    if all(v.lower() in STATISTICS for v in values):
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
            for whole in buckets.values():
                # Beside a placeholder (``entropy/{env}/{statistic}``) a varying inner
                # segment labels the same measurement: one family, several attributes.
                beside = position > 0 and bool(whole[0].values)
                for bucket in [whole] if beside else _by_unit(prefix, whole):
                    family = _merged(prefix, bucket, position, beside=beside)
                    if family is not None:
                        merged.append(family)
                        used.update(id(g) for g in bucket)
            if merged:
                groups = [g for g in groups if id(g) not in used] + merged
                changed = True
    return groups


def _merged(prefix: str, bucket: list[_Group], position: int, *, beside: bool) -> _Group | None:
    """The family of ``bucket``'s groups varying at ``position``, or ``None`` when the
    values there name different metrics."""
    if len(bucket) < 2 or len(bucket[0].parts) < 2:
        return None  # a key that is one varying segment is the name of a metric
    values = [str(g.parts[position]) for g in bucket]
    probe = tuple(-1 if i == position else p for i, p in enumerate(bucket[0].parts))
    if not (beside or _labelish(values, prefix, probe)):
        return None
    first = bucket[0]
    slot = len(first.values)
    parts = (*first.parts[:position], slot, *first.parts[position + 1 :])
    members = [m for g in bucket for m in g.members]
    return _Group(prefix, parts, [*first.values, sorted(values)], members)


def _by_unit(prefix: str, bucket: list[_Group]) -> list[list[_Group]]:
    """A bucket split by the unit its members' own names give: ``completions/clipped_ratio``
    (a fraction) is no family with ``completions/mean_length`` (tokens)."""
    split: dict[str, list[_Group]] = {}
    for group in bucket:
        units = {_unit(prefix, _segments(member)) for member in group.members}
        split.setdefault(units.pop() if len(units) == 1 else "\x00mixed", []).append(group)
    return list(split.values())


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


def _presence(
    stats: KeyStats, prefix: str, seen: Observations, loops: list[str]
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
    by_prefix: dict[str, list[str]] = {}
    aside: list[Bookkeeping] = []
    for prefix, key in seen.keys:
        role = _not_a_metric(prefix, key, seen.keys[(prefix, key)])
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
                if not prefix:
                    row.prefixes = variants.prefixes(single.members)
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
    aside.sort(key=lambda b: b.key)
    if aside:
        if not ordered:
            ordered.append(DraftFile(_module_name("", "bookkeeping", modules), ""))
        ordered[0].bookkeeping.extend(aside)
    return Draft(ordered, seen, aside)


def _not_a_metric(prefix: str, key: str, stats: KeyStats) -> Bookkeeping | None:
    """A step axis (``step``, ``train/global_step``) or a logger's bookkeeping (``time``)."""
    qualified = f"{prefix}/{key}" if prefix else key
    last = key.rsplit("/", 1)[-1]
    if qualified in STEP_AXIS_KEYS or key in STEP_AXIS_KEYS or last == "global_step":
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
        merged.bookkeeping += draft_file.bookkeeping
    return merged


def _signature(seen: Observations, loop: str) -> list[str]:
    mine = seen.loop_keys.get(loop, set())
    others = set().union(*(keys for name, keys in seen.loop_keys.items() if name != loop))
    pattern = schema_pattern("qualifiedKey")
    unique = sorted(k for k in mine - others if pattern.match(k))
    return unique[:3]


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
    stats = KeyStats()
    for member in group.members:
        stats.merge(seen.keys[(group.prefix, member)])
    literal_parts = [p for p in group.parts if isinstance(p, str)]
    last = literal_parts[-1] if literal_parts else ""
    kind, temporality, notes = _kind(stats, last)
    unit = (
        _context_unit(group.prefix, group.parts, stats)
        if group.values
        else _unit(group.prefix, _segments(group.members[0]), stats=stats)
    )
    if unit == "1" and stats.numeric and stats.high > 1:
        notes.append(
            f"values reach {_number(stats.high)}: above 1, so not a fraction; a plain ratio "
            "(unit 1) or a percentage (unit %)?"
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
    if exported != "s" and components and components[-1].split("_")[-1] in DURATION_WORDS:
        # The duration lint wants such names exported in seconds: a time unit the code
        # logs (ms, min) is, so only a name whose unit is no time gets "_value".
        components[-1] += "_value"
    name = _unique(_series_name(components, kind), names)
    loops = sorted(stats.loops)
    level, condition, first_step, more = _presence(stats, group.prefix, seen, loops)
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
        requirement_level=level,
        condition=condition,
        emitted_by=loops,
        first_step=first_step,
        temporality=temporality,
        notes=notes + more,
    )


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
