"""Which teed row a logged ``(prefix, key)`` belongs to, and what a key family captured.

This is the one place live-check matches keys, with the series rules the tee
uses (:mod:`metric_catalog.series_rules`): a pair counts under its most
specific row only. A literal row matches its exact ``(prefix, logger key)``
pairs and beats every family (a deprecated row and its replacement may share a
pair: both match); otherwise the most specific family whose prefix and key
both match takes the pair, with what its placeholders captured (ints for an
int attribute), exactly as :class:`metric_catalog.series_rules.SeriesMatcher`
decides and the tee routes it (:meth:`KeyMatcher.route`).

Only when no row takes a pair, :meth:`KeyMatcher.match` tries the families
once more with every placeholder opened (an enum or int placeholder takes
any segment), so a key of a family's shape with a value outside the enum is
an ``attribute_value`` finding rather than an undeclared key.

Rows are scoped to the loops that emit them (``emitted_by``); rows of disjoint
loops may share a key. :meth:`KeyMatcher.route_in` routes a pair for a run of
one loop exactly as the tee does for a process of that loop: among that loop's
rows first, then, for a key none of them takes (or a run whose loop is not
known), to the one row every loop agrees on; a pair rows of several loops
claim is *ambiguous* then, credited to none.

A logging backend may rewrite keys before they reach its files (TensorBoard's
writers replace every character outside ``[-/\\w.]`` with ``_``): a record read
from such a file names the rule (:data:`KEY_REWRITES`), and a key no row takes
as logged is matched against the rows' keys rewritten by that rule
(:meth:`KeyMatcher.rewritten`), so ``mean@4`` logged through tensorboardX counts
under its row as ``mean_4``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Final, NamedTuple

from metric_catalog.series_rules import (
    Capture,
    CompiledPattern,
    MatchBudget,
    Placeholder,
    SeriesMatcher,
    compile_pattern,
    is_glued,
    is_literal,
    literal_text,
    pair_rank,
    parse_pattern,
    qualified_key,
    split_flat_key,
)

from ..catalog.model import Attribute, MetricRow
from ..catalog.precedence import row_captures
from ..catalog.similar import RenameIndex

if TYPE_CHECKING:
    from metric_catalog.series_rules import Specificity

__all__ = [
    "KEY_REWRITES",
    "KeyMatcher",
    "LoopRoute",
    "Match",
    "rewrite_pattern",
    "tensorboard_tag",
]

_TENSORBOARD_INVALID: Final = re.compile(r"[^-/\w.]")


def tensorboard_tag(text: str) -> str:
    """``text`` as TensorFlow's summary ops and tensorboardX's ``add_scalar`` write a tag.

    Their ``_clean_tag`` (``tensorflow/python/ops/summary_op_util.py``,
    ``tensorboardX/summary.py``) replaces every character outside ``[-/\\w.]``
    with ``_``; torch's ``SummaryWriter`` keeps the tag as given.
    """
    return _TENSORBOARD_INVALID.sub("_", text)


KEY_REWRITES: Final[dict[str, Callable[[str], str]]] = {"tensorboard": tensorboard_tag}
"""A logging backend's rule for the keys it writes, by the name a record gives
(:attr:`~codegen.runs.records.Record.rewrite`)."""


def rewrite_pattern(text: str, rewrite: Callable[[str], str]) -> str:
    """A key or prefix pattern with its literal text rewritten, placeholders kept.

    The rewritten literal text holds no brace when ``rewrite`` replaces braces
    (as TensorBoard's rule does); any left are doubled again.
    """
    out = []
    for part in parse_pattern(text):
        if isinstance(part, Placeholder):
            out.append("{" + part.name + "}")
        else:
            out.append(rewrite(part).replace("{", "{{").replace("}", "}}"))
    return "".join(out)


class Match(NamedTuple):
    """A row a logged pair belongs to, and what its placeholders captured (empty: literal)."""

    row: MetricRow
    captures: dict[str, object]


class LoopRoute(NamedTuple):
    """Where a pair goes for a run of one loop: its matches, or the rows that make it ambiguous."""

    matches: tuple[Match, ...]
    ambiguous: tuple[str, ...] = ()
    """Series names of the rows of different loops that claim the pair (sorted), when the
    run's loop does not decide it; ``matches`` is then empty."""
    shaped: bool = False
    """No row takes the pair as it is: ``matches`` are the families of its shape (every
    placeholder opened), to judge their captures."""


def _emits(row: MetricRow, loop: str | None) -> bool:
    """Whether a run of ``loop`` may log ``row`` (``None``: a loop no row names)."""
    return not row.emitted_by or loop in row.emitted_by


class KeyMatcher:
    """Teed rows by logged ``(prefix, key)``; family matches cached up to ``cache_limit`` pairs."""

    def __init__(
        self,
        rows: Iterable[MetricRow],
        cache_limit: int,
        attributes: Mapping[str, Attribute] | None = None,
        budget: MatchBudget | None = None,
    ) -> None:
        known = attributes or {}
        self.budget = budget
        """Shared by its views and rewritten matchers: see :class:`SeriesMatcher`'s budget
        (``None``: no limit). A pair it cannot afford raises ``MatchBudgetError``."""
        self.rows = tuple(rows)
        self.attributes = known
        self.scopes = tuple(sorted({loop for row in self.rows for loop in row.emitted_by}))
        """Every loop some row names in ``emitted_by`` (empty: routing ignores loops)."""
        self.views: dict[str | None, KeyMatcher] = {}
        self.loop_routes: dict[tuple[str | None, str, str], LoopRoute] = {}
        self.rewrites: dict[str, KeyMatcher] = {}
        self.literal: dict[tuple[str, str], tuple[Match, ...]] = {}
        self.splits: dict[str, tuple[str, str]] = {}
        self.rename_index: RenameIndex | None = None
        self.row_shapes: dict[str, dict[str, Capture]] = {}
        """Each family row's placeholders, every one opened (its shape)."""
        self.cache_limit = cache_limit
        self.prefixes: dict[str, list[str]] = {}
        self.glued: set[str] = set()
        self.glued_patterns: list[CompiledPattern] = []
        self.families = SeriesMatcher(cache_limit)
        self.shapes = SeriesMatcher(cache_limit)
        self.families.budget = self.shapes.budget = budget
        for row in self.rows:
            key = row.logger_key
            if key is None:
                continue
            captures = row_captures(row, known)
            # The shape of a family: every placeholder open (spanning where a value may
            # hold '/').
            shapes = {
                name: Capture(spans=c.spans or any("/" in v for v in c.values or ()))
                for name, c in captures.items()
            }
            self.row_shapes[row.name] = shapes
            for prefix in row.prefixes or ("",):
                if is_glued(prefix):
                    if is_literal(prefix):
                        self.glued.add(literal_text(prefix))
                    else:
                        self.glued_patterns.append(compile_pattern(prefix, captures))
                if not (is_literal(prefix) and is_literal(key)):
                    self.families.add(prefix, key, captures, row)
                    self.shapes.add(prefix, key, shapes, row)
                    continue
                pair = (literal_text(prefix), literal_text(key))
                self.literal[pair] = (*self.literal.get(pair, ()), Match(row, {}))
                self.prefixes.setdefault(pair[1], []).append(pair[0])

    def route(self, prefix: str, key: str) -> tuple[Match, ...]:
        """The rows ``(prefix, key)`` counts under, as the tee routes it (empty: none)."""
        found = self.literal.get((prefix, key))
        if found is not None:
            return found
        if not len(self.families):
            return ()
        return tuple(Match(row, captured) for row, captured in self.families.match(prefix, key))

    def view(self, loop: str | None) -> KeyMatcher:
        """A matcher over the rows a run of ``loop`` may log (``None``: rows of every loop)."""
        found = self.views.get(loop)
        if found is None:
            rows = [row for row in self.rows if _emits(row, loop)]
            found = KeyMatcher(rows, self.cache_limit, self.attributes, self.budget)
            self.views[loop] = found
        return found

    def route_in(self, prefix: str, key: str, loop: str | None) -> LoopRoute:
        """:meth:`route` for a run of ``loop`` (``None``: not known), as the tee routes it.

        A run's own rows take the pair first; otherwise each loop's view (and that of
        a loop no row names) routes it, and the pair goes to the one row they agree
        on, or to none when they disagree (``ambiguous``). Cached up to the limit.
        """
        if not self.scopes:
            return LoopRoute(self.route(prefix, key))
        slot = (loop, prefix, key)
        found = self.loop_routes.get(slot)
        if found is not None:
            return found
        own = self.view(loop).route(prefix, key) if loop is not None else ()
        found = LoopRoute(own) if own else self._agreed(prefix, key)
        if len(self.loop_routes) < self.cache_limit:
            self.loop_routes[slot] = found
        return found

    def _agreed(self, prefix: str, key: str) -> LoopRoute:
        """The row every loop's view routes ``(prefix, key)`` to, or the rows they differ on."""
        claims: dict[tuple[str, ...], tuple[Match, ...]] = {}
        for scope in (*self.scopes, None):
            matches = self.view(scope).route(prefix, key)
            if matches:
                claims.setdefault(tuple(m.row.name for m in matches), matches)
        if len(claims) > 1:
            return LoopRoute((), tuple(sorted({name for names in claims for name in names})))
        return LoopRoute(next(iter(claims.values()), ()))

    def match_in(self, prefix: str, key: str, loop: str | None) -> LoopRoute:
        """:meth:`route_in`, else the families of the pair's shape (see :meth:`match`)."""
        found = self.route_in(prefix, key, loop)
        if found.matches or found.ambiguous or not len(self.shapes):
            return found
        shaped = tuple(Match(row, c) for row, c in self.shapes.match(prefix, key))
        return LoopRoute(shaped, shaped=bool(shaped))

    def open_capture(self, match: Match) -> bool:
        """Whether a family took its key through a placeholder whose attribute is open (no
        enumeration): any text fits it, so a misspelt literal key may land there."""
        domain = row_captures(match.row, self.attributes)
        return any(name in domain and domain[name].values is None for name in match.captures)

    def renamed(self, qualified: str, families: Iterable[MetricRow]) -> str | None:
        """The literal row key (``prefix/key``) that ``qualified`` most likely renames, when
        it is of the same shape as one of ``families`` (a literal row carved out of the
        family, as ``grad_norm`` out of ``{metric}``): a misspelt key the family took."""
        if self.rename_index is None:
            self.rename_index = RenameIndex(qualified_key(*pair) for pair in self.literal)
        target = self.rename_index.find(qualified)
        if target is None:
            return None
        for row in families:
            shape = self.row_shapes.get(row.name, {})
            for prefix in row.prefixes or ("",):
                pattern = qualified_key(prefix, row.logger_key or "")
                if compile_pattern(pattern, shape).match(target) is not None:
                    return target
        return None

    def match(self, prefix: str, key: str) -> tuple[Match, ...]:
        """:meth:`route`, else the families of the pair's shape (to judge their captures)."""
        found = self.route(prefix, key)
        if found or not len(self.shapes):
            return found
        return tuple(Match(row, captured) for row, captured in self.shapes.match(prefix, key))

    def split(self, logged: str, loop: str | None = None) -> tuple[str, str]:
        """``(prefix, key)`` of a key logged without a prefix (``timing/train/generation``).

        :func:`~metric_catalog.series_rules.split_flat_key`'s one rule, as the tee
        splits it: a literal row's pair first, else the most literal row that can
        take the key (every capture within its attribute), then the longest prefix.
        A run of ``loop`` splits by that loop's rows first, then by every row, as the
        tee does for a process of that loop. Only a key no row takes at any cut is
        split by the families' shapes (every placeholder open), so a key of a
        family's shape with a value outside its enum is an ``attribute_value``
        finding. A key no row takes stays ``("", logged)``. Cached up to the limit.
        """
        slot = logged if loop is None else f"{loop}\x00{logged}"
        found = self.splits.get(slot)
        if found is not None:
            return found
        found = None
        if loop is not None and self.scopes:
            found = self.view(loop).strict_split(logged)
        if found is None:
            found = self.strict_split(logged)
        if found is None:
            found = split_flat_key(logged, self.shapes.rank, None, self.is_glued)
        if len(self.splits) < self.cache_limit:
            self.splits[slot] = found
        return found

    def strict_split(self, logged: str) -> tuple[str, str] | None:
        """:meth:`split` by the rows that take the key as they are; ``None``: no cut routes."""
        found = split_flat_key(logged, self.rank, self.is_literal, self.is_glued)
        if found == ("", logged) and not self.rank("", logged):
            return None
        return found

    def rank(self, prefix: str, key: str) -> Specificity | None:
        """The :func:`~metric_catalog.series_rules.flat_rank` of the rows taking the pair."""
        return pair_rank(self.literal, self.families, prefix, key)

    def is_literal(self, prefix: str, key: str) -> bool:
        """Whether ``(prefix, key)`` is a literal row's pair (it beats any family's split)."""
        return (prefix, key) in self.literal

    def is_glued(self, prefix: str) -> bool:
        """Whether a declared prefix ending in ``_`` (``eval_``) takes the text ``prefix``."""
        if prefix in self.glued:
            return True
        return any(pattern.match(prefix) is not None for pattern in self.glued_patterns)

    def declared_prefixes(self, key: str) -> list[str]:
        """The prefixes literal rows declare ``key`` under (for an undeclared pair's hint)."""
        return self.prefixes.get(key, [])

    def rewritten(self, rule: str) -> KeyMatcher:
        """A matcher over the rows whose key or prefix ``rule`` rewrites, rewritten (cached).

        A row the rule leaves alone is left out: it already failed to match as logged.
        """
        found = self.rewrites.get(rule)
        if found is None:
            rewrite = KEY_REWRITES[rule]
            rows = []
            for row in self.rows:
                if row.logger_key is None or row.prefix is None:
                    continue
                key = rewrite_pattern(row.logger_key, rewrite)
                prefix = rewrite_pattern(row.prefix, rewrite)
                others = tuple(rewrite_pattern(p, rewrite) for p in row.other_prefixes)
                if (key, prefix, others) != (row.logger_key, row.prefix, row.other_prefixes):
                    rows.append(
                        dataclasses.replace(
                            row, logger_key=key, prefix=prefix, other_prefixes=others
                        )
                    )
            found = KeyMatcher(rows, self.cache_limit, self.attributes, self.budget)
            self.rewrites[rule] = found
        return found
