"""Opaque ``annotations`` of rows and attributes: YAML data the catalog carries, never reads.

A team keeps its own metadata on a row or an attribute (a dashboard folder, a
code-generation hint for Weaver's templates, semconv's ``code_generation``) as a
mapping of any YAML data. The catalog checks only that it is bounded (hostile
input: a deep or huge tree would slow every reader) and that it leaves the key
``metric_catalog`` alone (``export weaver`` writes the catalog's own fields there);
``resolve`` shows it and ``export weaver`` writes it beside ``metric_catalog``,
where ``import weaver`` reads it back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "CODE_GENERATION",
    "EMPTY",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_TEXT",
    "METRIC_VALUE_TYPE",
    "RESERVED_KEYS",
    "Annotations",
    "annotation_problem",
    "annotations_from",
]

MAX_DEPTH: Final = 8
"""Deepest nesting of mappings and lists under ``annotations`` (the mapping itself is 1)."""

MAX_NODES: Final = 1_000
"""Most keys, items and scalars one ``annotations`` mapping holds."""

MAX_TEXT: Final = 4_096
"""Longest key or string in it, in characters."""

RESERVED_KEYS: Final = ("metric_catalog",)
"""Top-level keys export writes itself (the catalog's own fields)."""

CODE_GENERATION: Final = "code_generation"
"""Semconv's annotation for code generators; export weaver adds :data:`METRIC_VALUE_TYPE`
to a row's own, so a row may hold other keys of it (``exclude``) but not that one."""

METRIC_VALUE_TYPE: Final = "metric_value_type"
"""The key of :data:`CODE_GENERATION` export weaver writes (``int`` or ``double``)."""


@dataclass(frozen=True, slots=True)
class Annotations:
    """An annotations mapping, held as its JSON text so rows stay immutable and hashable."""

    text: str = ""
    """The mapping as JSON (keys in the order written); ``""`` when there is none."""

    def data(self) -> dict[str, object]:
        """The mapping as plain data (a new copy each call)."""
        found = json.loads(self.text) if self.text else {}
        return found if isinstance(found, dict) else {}

    def __bool__(self) -> bool:
        return bool(self.text) and self.text != "{}"


EMPTY: Final = Annotations()
"""No annotations."""


def annotations_from(data: Mapping[str, object]) -> Annotations:
    """``data`` (already checked by :func:`annotation_problem`) as :class:`Annotations`."""
    if not data:
        return EMPTY
    return Annotations(json.dumps(dict(data), ensure_ascii=False, allow_nan=False))


def annotation_problem(data: object) -> str | None:
    """What makes ``data`` no valid ``annotations`` mapping, as a sentence's end; None if valid."""
    if not isinstance(data, Mapping):
        return "must be a mapping of keys to any YAML data"
    reserved = [key for key in RESERVED_KEYS if key in data]
    if reserved:
        return (
            f"uses the key {reserved[0]!r}, which export weaver writes the catalog's own "
            "fields under; rename the key"
        )
    generation = data.get(CODE_GENERATION)
    if generation is not None and (
        not isinstance(generation, Mapping) or METRIC_VALUE_TYPE in generation
    ):
        return (
            f"has a {CODE_GENERATION!r} that is no mapping or sets {METRIC_VALUE_TYPE!r}, "
            "which export weaver writes from the row's value_type; drop that key"
        )
    count = 0
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            return f"holds more than {MAX_NODES} keys, items and values; keep it smaller"
        if isinstance(node, Mapping):
            if depth > MAX_DEPTH:
                return f"nests deeper than {MAX_DEPTH} levels; flatten it"
            for key, value in node.items():
                if not isinstance(key, str) or len(key) > MAX_TEXT:
                    return f"has a key that is not a string of at most {MAX_TEXT} characters"
                stack.append((value, depth + 1))
        elif isinstance(node, list):
            if depth > MAX_DEPTH:
                return f"nests deeper than {MAX_DEPTH} levels; flatten it"
            stack.extend((item, depth + 1) for item in node)
        elif isinstance(node, str):
            if len(node) > MAX_TEXT:
                return f"has a string longer than {MAX_TEXT} characters; shorten it"
        elif isinstance(node, float) and not math.isfinite(node):
            return "has a NaN or infinite number, which JSON cannot hold; quote it"
        elif node is not None and not isinstance(node, bool | int | float):
            return f"has a value of type {type(node).__name__}; use YAML data only"
    return None
