"""Which teed rows a logged ``(prefix, key)`` belongs to, and what a key family captured.

This is the one place live-check matches keys; :class:`KeyMatcher` is its
seam (``match(prefix, key)``), so the shared series rules can replace the
matching without touching the judges.

A literal row matches its exact ``(prefix, logger key)`` pairs (a deprecated
row and its replacement may share one: both match). Only when no literal row
matches, a row whose key or prefix is a family (``{attribute}`` placeholders)
matches every pair of its shape, each placeholder open (any text), and says
what each placeholder captured; a capture outside its attribute's values is
then an ``attribute_value`` finding rather than an undeclared key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from ..model import MetricRow
from ..patterns import compile_matcher, parse_pattern, placeholders

__all__ = ["KeyMatcher", "Match"]


class Match(NamedTuple):
    """A row a logged pair belongs to, and what its placeholders captured (empty: literal)."""

    row: MetricRow
    captures: dict[str, str]


class KeyMatcher:
    """Teed rows by logged ``(prefix, key)``; family matches cached up to ``cache_limit`` pairs."""

    def __init__(self, rows: Iterable[MetricRow], cache_limit: int) -> None:
        self.literal: dict[tuple[str, str], tuple[Match, ...]] = {}
        self.prefixes: dict[str, list[str]] = {}
        self.families: list[
            tuple[re.Pattern[str], re.Pattern[str], tuple[str, ...], MetricRow]
        ] = []
        self.cache: dict[tuple[str, str], tuple[Match, ...]] = {}
        self.cache_limit = cache_limit
        for row in rows:
            key = row.logger_key
            if key is None:
                continue
            for prefix in row.prefixes or ("",):
                if "{" in prefix or "{" in key:
                    names = placeholders(prefix) + placeholders(key)
                    prefix_re = compile_matcher(parse_pattern(prefix), {})
                    key_re = compile_matcher(parse_pattern(key), {})
                    self.families.append((prefix_re, key_re, names, row))
                    continue
                found = self.literal.get((prefix, key), ())
                self.literal[(prefix, key)] = (*found, Match(row, {}))
                self.prefixes.setdefault(key, []).append(prefix)

    def match(self, prefix: str, key: str) -> tuple[Match, ...]:
        """Every row ``(prefix, key)`` belongs to (each once); empty when none declares it."""
        found = self.literal.get((prefix, key))
        if found is not None:
            return found
        if not self.families:
            return ()
        slot = (prefix, key)
        cached = self.cache.get(slot)
        if cached is not None:
            return cached
        hits: list[Match] = []
        seen: set[str] = set()
        for prefix_re, key_re, names, row in self.families:
            if row.name in seen:
                continue
            on_prefix = prefix_re.fullmatch(prefix)
            if on_prefix is None:
                continue
            on_key = key_re.fullmatch(key)
            if on_key is None:
                continue
            values = on_prefix.groups() + on_key.groups()
            hits.append(Match(row, dict(zip(names, values, strict=True))))
            seen.add(row.name)
        result = tuple(hits)
        if len(self.cache) < self.cache_limit:
            self.cache[slot] = result
        return result

    def declared_prefixes(self, key: str) -> list[str]:
        """The prefixes literal rows declare ``key`` under (for an undeclared pair's hint)."""
        return self.prefixes.get(key, [])
