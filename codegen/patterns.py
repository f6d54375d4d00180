"""Logger-key and prefix patterns: literal text with ``{attribute}`` placeholders.

A key family such as ``setup/{rl.setup.phase}_time_s`` stands for every logged
key where the placeholder is replaced by a value of its attribute: one of an
enum's values, or any non-empty text for an open attribute. Two patterns
overlap when some logged key matches both; :func:`overlap` decides that
exactly with a product of two small automata (one state per literal character,
an enum value a chain of states, an open placeholder one looping state) and
returns a key both match, for the error message.

Pure functions of strings; nothing here knows about rows or files.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

__all__ = [
    "Domain",
    "KeyPattern",
    "Placeholder",
    "adjacent_placeholders",
    "compile_matcher",
    "overlap",
    "parse_pattern",
    "placeholders",
]

_PLACEHOLDER: Final = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A ``{name}`` in a pattern: captures the value of attribute ``name``."""

    name: str


KeyPattern: TypeAlias = tuple[str | Placeholder, ...]
"""A pattern as literal text runs and placeholders, in order."""

Domain: TypeAlias = tuple[str, ...] | None
"""An attribute's values as logged, or ``None`` for any non-empty text."""


@functools.lru_cache(maxsize=4096)
def parse_pattern(text: str) -> KeyPattern:
    """``"a/{x}_s"`` -> ``("a/", Placeholder("x"), "_s")``; plain text is one literal."""
    parts: list[str | Placeholder] = []
    end = 0
    for found in _PLACEHOLDER.finditer(text):
        if found.start() > end:
            parts.append(text[end : found.start()])
        parts.append(Placeholder(found.group(1)))
        end = found.end()
    if end < len(text):
        parts.append(text[end:])
    return tuple(parts)


def placeholders(text: str) -> tuple[str, ...]:
    """Attribute names of the placeholders in ``text``, in order."""
    return tuple(p.name for p in parse_pattern(text) if isinstance(p, Placeholder))


def adjacent_placeholders(text: str) -> tuple[str, str] | None:
    """The first two placeholders with no literal text between them, if any.

    ``{a}{b}`` cannot say where ``a``'s value ends, so a pattern must separate them.
    """
    parts = parse_pattern(text)
    for left, right in itertools.pairwise(parts):
        if isinstance(left, Placeholder) and isinstance(right, Placeholder):
            return left.name, right.name
    return None


# One automaton: transitions per state as (character or None for "any", target),
# and the accepting state.
_Automaton: TypeAlias = tuple[list[list[tuple[str | None, int]]], int]


def _automaton(pattern: KeyPattern, domains: Mapping[str, Domain]) -> _Automaton:
    states: list[list[tuple[str | None, int]]] = [[]]
    current = 0
    for part in pattern:
        if isinstance(part, str):
            for char in part:
                states.append([])
                states[current].append((char, len(states) - 1))
                current = len(states) - 1
            continue
        states.append([])
        end = len(states) - 1
        domain = domains.get(part.name)
        if domain is None:
            states[current].append((None, end))
            states[end].append((None, end))
        else:
            for value in domain:
                source = current
                for index, char in enumerate(value):
                    if index == len(value) - 1:
                        target = end
                    else:
                        states.append([])
                        target = len(states) - 1
                    states[source].append((char, target))
                    source = target
        current = end
    return states, current


def overlap(first: KeyPattern, second: KeyPattern, domains: Mapping[str, Domain]) -> str | None:
    """A text both patterns match, or ``None`` when no text matches both.

    ``domains`` gives each placeholder's values (``None``: any non-empty text;
    a name missing from it counts as ``None``). Shortest witness first.
    """
    states_a, final_a = _automaton(first, domains)
    states_b, final_b = _automaton(second, domains)
    start = (0, 0)
    parents: dict[tuple[int, int], tuple[tuple[int, int], str] | None] = {start: None}
    queue: deque[tuple[int, int]] = deque([start])
    while queue:
        pair = queue.popleft()
        a, b = pair
        if a == final_a and b == final_b:
            chars: list[str] = []
            step = parents[pair]
            while step is not None:
                previous, char = step
                chars.append(char)
                step = parents[previous]
            return "".join(reversed(chars))
        for label_a, target_a in states_a[a]:
            for label_b, target_b in states_b[b]:
                if label_a is None:
                    char = "x" if label_b is None else label_b
                elif label_b is None or label_a == label_b:
                    char = label_a
                else:
                    continue
                following = (target_a, target_b)
                if following not in parents:
                    parents[following] = (pair, char)
                    queue.append(following)
    return None


def compile_matcher(pattern: KeyPattern, domains: Mapping[str, Domain]) -> re.Pattern[str]:
    """A regular expression matching exactly the texts of ``pattern`` (use ``fullmatch``).

    Group ``i`` (1-based) captures the value of the ``i``-th placeholder.
    """
    pieces: list[str] = []
    for part in pattern:
        if isinstance(part, str):
            pieces.append(re.escape(part))
            continue
        domain = domains.get(part.name)
        if domain is None:
            pieces.append("(.+)")
        else:
            choices = sorted(domain, key=lambda value: (-len(value), value))
            pieces.append("(" + "|".join(re.escape(value) for value in choices) + ")")
    return re.compile("".join(pieces))
