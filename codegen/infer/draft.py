"""The draft ``infer`` proposes: owner files of rows, attributes and loops, rendered as YAML."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from ..catalog.words import table
from ..safe_text import shown as escaped
from .observe import MAX_KEYS, Observations

__all__ = [
    "TODO",
    "Bookkeeping",
    "Draft",
    "DraftAttribute",
    "DraftFile",
    "DraftRow",
    "iter_texts",
    "render",
]

TODO: Final = "TODO: say what this measures."


@dataclass(frozen=True, slots=True)
class Bookkeeping:
    """A logged key that is no metric: a step axis or a logger's bookkeeping (``time``)."""

    key: str
    """The key as logged (prefix joined)."""
    role: str
    """``step axis`` or ``bookkeeping``."""
    why: str


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
    every: int | str | None = None
    """The period of a key logged every so many steps (``every: "5"``), or the
    configuration value that sets it (``"config.eval_interval"``)."""
    phase: int = 0
    """With ``every``: the steps of the period it is logged at (``-1``: ``n-1, 2n-1, ...``);
    see :mod:`codegen.catalog.schedule`."""
    temporality: str | None = None
    notes: list[str] = field(default_factory=list)
    """Comments written above the row (why a kind, what values were seen)."""
    value_range: tuple[tuple[str, str], ...] = ()
    """The proposed ``range:`` as (bound, number text) pairs (``(("min", "0"),)``);
    ``()``: none proposed (the unit implies one, or name and values do not agree)."""
    prefixes: list[str] = field(default_factory=list)
    """Several prefixes instead of ``prefix`` (``["", "eval_"]``: also logged as
    ``eval_<key>``); empty: ``prefix`` only."""


@dataclass(slots=True)
class DraftFile:
    """One proposed owner file."""

    module: str
    prefix: str
    rows: list[DraftRow] = field(default_factory=list)
    attributes: list[DraftAttribute] = field(default_factory=list)
    loops: list[tuple[str, list[str]]] = field(default_factory=list)
    """New loops declared here: name and signature keys."""
    step_keys: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """A new loop -> its step keys, ``(key, prefix)`` (``""``: every key of the loop)."""
    bookkeeping: list[Bookkeeping] = field(default_factory=list)
    """Keys proposed as no metric (``bookkeeping:``): a step axis, a logger's timestamp."""

    @property
    def file_name(self) -> str:
        """``<module>.yaml``."""
        return f"{self.module}.yaml"


@dataclass(slots=True)
class Draft:
    """The proposal: owner files, plus what could not be drafted."""

    files: list[DraftFile]
    observations: Observations
    bookkeeping: list[Bookkeeping] = field(default_factory=list)
    """Keys proposed as a step axis or bookkeeping, not as rows."""
    clashes: list[str] = field(default_factory=list)
    """Scale clashes between runs (a key in [0, 1] in one, in [0, 100] in another): findings
    of their own, never merged silently into one row."""

    @property
    def rows(self) -> int:
        """Number of proposed rows."""
        return sum(len(f.rows) for f in self.files)

    def notes(self) -> list[str]:
        """What the user should know about keys left out."""
        seen = self.observations
        notes = list(self.clashes)
        notes += [
            f"not a metric: {b.key!r} is a {b.role}: {b.why}; drafted under bookkeeping: "
            "(a step axis may instead be a loop's step_keys)"
            for b in self.bookkeeping
        ]
        for (prefix, key), why in sorted(seen.refused.items())[:20]:
            whole = f"{prefix}/{key}" if prefix else key
            cut = whole if len(whole) <= 80 else f"{whole[:80]}..."
            notes.append(f"not drafted: {escaped(cut)!r}: {why}")
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


_PLAIN: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*\Z")
_YAML_WORDS: Final = table("y n yes no on off true false null none ~")


def _q(text: str) -> str:
    """A YAML scalar for ``text``: plain when safe, else a double-quoted (JSON) string."""
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


def render(draft_file: DraftFile, runs: Sequence[str]) -> str:
    """The owner file as YAML text, with the notes as comments."""
    out = [
        # Run names are file names: escaped, so a line break cannot start a YAML key.
        "# Drafted by `metric-catalog infer` from: " + escaped(", ".join(runs))[:200],
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
            if name in draft_file.step_keys:
                out.append("    step_keys:")
                for key, prefix in draft_file.step_keys[name]:
                    out.append(f"      - key: {_q(key)}")
                    if prefix:
                        out.append(f"        prefix: {_q(prefix)}")
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
    if draft_file.bookkeeping:
        out.append("bookkeeping:")
        for entry in draft_file.bookkeeping:
            out.append(f"  - key: {_q(entry.key)}")
            out.append(f"    reason: {_q(entry.why[:1].upper() + entry.why[1:] + '.')}")
    out.append("teed:" if draft_file.rows else "teed: []")
    for row in draft_file.rows:
        out.extend(f"  # {escaped(note)}" for note in row.notes)
        out.append(f"  - logger_key: {_q(row.logger_key)}")
        if row.prefixes:
            out.append(f"    prefixes: [{', '.join(json.dumps(p) for p in row.prefixes)}]")
        elif row.prefix != draft_file.prefix:
            out.append(f"    prefix: {_q(row.prefix)}")
        out.append(f"    name: {row.name}")
        out.append(f"    kind: {row.kind}")
        if row.temporality is not None:
            out.append(f"    temporality: {row.temporality}")
        out.append(f"    unit: {json.dumps(row.unit)}")
        if row.value_range:
            bounds = ", ".join(f'{side}: "{number}"' for side, number in row.value_range)
            out.append(f"    range: {{{bounds}}}")
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
        if row.every is not None:
            out.append(f'    every: "{row.every}"')
            if row.phase:
                out.append(f'    phase: "{row.phase}"')
    return "\n".join(out) + "\n"


def iter_texts(draft: Draft) -> Iterable[tuple[DraftFile, str]]:
    """Each drafted file with its YAML text."""
    runs = draft.observations.runs
    for draft_file in draft.files:
        yield draft_file, render(draft_file, runs)
