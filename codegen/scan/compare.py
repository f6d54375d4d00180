"""Judge what the code logs against the catalog's teed rows.

A call that takes a prefix (``log_metrics(metrics, step, prefix="train")``)
logs ``(prefix, key)`` pairs, matched the way the tee matches them: a row's
prefix (any of its ``prefixes``) and its logger key. A call without one
(``Tracking.log(data)``, ``wandb.log``) logs flat keys such as ``actor/pg_loss``,
matched against each row's ``prefix/logger_key``.

A key with holes (``f"timing_s/{name}"``) is declared when a key family holds
every key of its shape (``timing_s/{stage}``); a shape that only shares keys
with some rows cannot be judged statically (:data:`UNRESOLVED`). Matching uses
:mod:`metric_catalog.series_rules`, the rules validate, the tee and live-check use:
a literal key must fit the family's attributes; a hole may stand for any value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from metric_catalog.series_rules import (
    Capture,
    CompiledPattern,
    Placeholder,
    compile_pattern,
    is_literal,
    literal_text,
    overlap,
    parse_pattern,
    qualified_key,
)

from ..catalog.diagnostics import Diagnostic, Position, Severity
from ..catalog.matching import KeyMatcher
from ..catalog.model import Catalog, MetricRow
from ..catalog.precedence import captures
from ..catalog.similar import RenameIndex

if TYPE_CHECKING:
    from metric_catalog.series_rules import KeyPattern
from .findings import UNDECLARED, UNLOGGED, UNRESOLVED
from .model import Logged
from .values import NON_SCALAR_VALUES, Hole, Key, Shape, Unresolved, Where, shape_text

__all__ = ["Judge"]


_ROUTE_CACHE: Final = 50_000
"""Logged pairs the scan's matcher remembers."""

_SENTINEL: Final = "\x00"
"""Stands for a hole when testing whether a family holds every key of a shape."""


def _sample(shape: Shape) -> str:
    return "".join(part if isinstance(part, str) else _SENTINEL for part in shape)


def _as_pattern(shape: Shape) -> KeyPattern:
    return tuple(
        part if isinstance(part, str) else Placeholder(f"\x00{index}")
        for index, part in enumerate(shape)
    )


_qualify = qualified_key


@dataclass(slots=True)
class _Family:
    """A family row under one prefix, compiled with its attributes' captures and opened up."""

    row: MetricRow
    prefix: CompiledPattern
    key: CompiledPattern
    flat: CompiledPattern
    open_prefix: CompiledPattern
    open_key: CompiledPattern
    open_flat: CompiledPattern


@dataclass(slots=True)
class Judge:
    """The catalog's teed rows indexed for matching, and which of them were seen logged."""

    catalog: Catalog
    pairs: dict[tuple[str, str], list[MetricRow]] = field(default_factory=dict)
    flat: dict[str, list[MetricRow]] = field(default_factory=dict)
    keys: dict[str, list[MetricRow]] = field(default_factory=dict)
    families: list[_Family] = field(default_factory=list)
    logged: set[str] = field(default_factory=set)
    """Names of rows some scanned call logs (or may log)."""
    captures: dict[str, Capture] = field(default_factory=dict)
    renamed: set[str] = field(default_factory=set)
    """Names of rows an undeclared key's "did you mean" named: one finding per rename, so
    the row's own ``SCAN_UNLOGGED`` is left out."""
    matcher: KeyMatcher | None = None
    """The teed rows as live-check and the tee route a literal key (the one rule)."""
    renames: RenameIndex | None = None
    literal_rows: dict[str, MetricRow] = field(default_factory=dict)
    """Literal rows by the key they are logged as (``prefix/key``)."""
    reported: set[tuple[str, str, int, int, str]] = field(default_factory=set)
    """Findings already made, by code, place and the whole key logged: a call reached by
    two kinds of wrapper (one flat, one with the prefix ``''``) logs each key once."""

    def __post_init__(self) -> None:
        known = self.catalog.attributes()
        self.captures = captures(known)
        teed = [r for _, r in self.catalog.rows() if r.section == "teed" and r.logger_key]
        self.matcher = KeyMatcher(teed, _ROUTE_CACHE, known)
        # A hole of the code may stand for any value: every placeholder opened up.
        opened = {name: Capture(spans=c.spans) for name, c in self.captures.items()}
        for _, row in self.catalog.rows():
            key = row.logger_key
            if row.section != "teed" or key is None:
                continue
            for prefix in row.prefixes or ("",):
                if not (is_literal(prefix) and is_literal(key)):
                    flat = _qualify(prefix, key)
                    self.families.append(
                        _Family(
                            row,
                            compile_pattern(prefix, self.captures),
                            compile_pattern(key, self.captures),
                            compile_pattern(flat, self.captures),
                            compile_pattern(prefix, opened),
                            compile_pattern(key, opened),
                            compile_pattern(flat, opened),
                        )
                    )
                    continue
                plain_prefix, plain_key = literal_text(prefix), literal_text(key)
                self.pairs.setdefault((plain_prefix, plain_key), []).append(row)
                self.flat.setdefault(_qualify(plain_prefix, plain_key), []).append(row)
                self.keys.setdefault(plain_key, []).append(row)
                self.literal_rows.setdefault(_qualify(plain_prefix, plain_key), row)
        self.renames = RenameIndex(self.literal_rows)

    # --- matching ---------------------------------------------------------------

    def _holding(self, prefix: Shape | None, key: Shape, flat: bool) -> list[MetricRow]:
        """Rows declaring every key of the shape (with ``prefix``; ``None``: any prefix)."""
        key_text = _sample(key)
        holes = _SENTINEL in key_text or (prefix is not None and _SENTINEL in _sample(prefix))
        if not holes and self.matcher is not None and (flat or prefix is not None):
            # A literal key: routed by the one rule the tee and live-check use.
            pair = self.matcher.split(key_text) if flat else (_sample(prefix or ()), key_text)
            return [match.row for match in self.matcher.route(*pair)]
        rows: list[MetricRow] = []
        if flat:
            rows += self.flat.get(key_text, [])
            rows += [
                f.row
                for f in self.families
                if (f.open_flat if holes else f.flat).match(key_text) is not None
            ]
        elif prefix is None:
            rows += self.keys.get(key_text, [])
            rows += [
                f.row
                for f in self.families
                if (f.open_key if holes else f.key).match(key_text) is not None
            ]
        else:
            prefix_text = _sample(prefix)
            rows += self.pairs.get((prefix_text, key_text), [])
            for f in self.families:
                on_prefix = (f.open_prefix if holes else f.prefix).match(prefix_text)
                on_key = (f.open_key if holes else f.key).match(key_text)
                if on_prefix is not None and on_key is not None:
                    rows.append(f.row)
        return rows

    def _sharing(self, prefix: Shape | None, key: Shape, flat: bool) -> list[MetricRow]:
        """Rows declaring some key of a shape with holes (which ones, the code decides)."""
        rows: list[MetricRow] = []
        for _, row in self.catalog.rows():
            if row.section != "teed" or row.logger_key is None:
                continue
            row_key = parse_pattern(row.logger_key)
            for row_prefix in row.prefixes or ("",):
                pattern = parse_pattern(_qualify(row_prefix, row.logger_key))
                if flat:
                    hit = overlap(_as_pattern(key), pattern, self.captures)
                else:
                    hit = overlap(_as_pattern(key), row_key, self.captures)
                    if hit is not None and prefix is not None:
                        theirs = parse_pattern(row_prefix)
                        hit = overlap(_as_pattern(prefix), theirs, self.captures)
                if hit is not None:
                    rows.append(row)
                    break
        return rows

    def judge(self, logged: Logged) -> Iterable[Diagnostic]:
        """Findings for one logging call; marks the rows it logs."""
        for item in logged.unresolved:
            yield self._unresolved(logged, item)
        prefixes: tuple[Shape | None, ...] = (None,) if logged.prefixes is None else logged.prefixes
        for key in logged.keys:
            for prefix in prefixes:
                yield from self._judge_key(logged, prefix, key)

    def _judge_key(self, logged: Logged, prefix: Shape | None, key: Key) -> Iterable[Diagnostic]:
        flat = logged.flat
        shown = self._shown(prefix, key.shape, flat)
        via = self._via(logged, key.where)
        holes = [p for p in (*key.shape, *(prefix or ())) if isinstance(p, Hole)]
        if self._again(UNRESOLVED if holes else UNDECLARED, prefix, key, flat):
            return
        if holes:
            # Never credit a row on a guess: a key with an unknown part logs no row known.
            parts = ", ".join(dict.fromkeys("{" + hole.text + "}" for hole in holes))
            literal = any(isinstance(p, str) and p for p in (*key.shape, *(prefix or ())))
            sharing = self._sharing(prefix, key.shape, flat) if literal else []
            if sharing and all(UNRESOLVED in row.no_lint for row in sharing):
                return  # every row it may stand for says so (``no_lint: [SCAN_UNRESOLVED]``)
            names = ", ".join(sorted(row.qualified_logger_key for row in sharing)[:5])
            more = ", ..." if len(sharing) > 5 else ""
            rows = f"; it may log the rows {names}{more}, which are not credited" if sharing else ""
            source = f"are keys of {key.why}" if key.why else "written here are"
            yield _diagnostic(
                UNRESOLVED,
                Severity.WARNING,
                f"cannot resolve statically which keys {shown}{via} logs: the part(s) {parts} "
                f"{source} known only at run time{rows}; build the key from literals, "
                "module constants or loops over literal tuples, or mark the line "
                "`# metric-catalog: ignore`",
                key.where,
            )
            return
        if self._aside(prefix, key.shape, flat):
            return
        holding = self._holding(prefix, key.shape, flat)
        if holding:
            self.logged.update(row.name for row in holding)
            return
        fix = self._rename(prefix, key.shape, flat) or self._fix(
            prefix, key.shape, flat, _value_fix(key)
        )
        yield _diagnostic(
            UNDECLARED,
            Severity.ERROR,
            f"{shown}{via} is declared by no teed row; {fix}",
            key.where,
        )

    def _again(self, code: str, prefix: Shape | None, key: Key, flat: bool) -> bool:
        """Whether this key, logged whole as the same text at the same place, was judged
        already (a key whose prefix is unknown is never the same as another)."""
        if not flat and prefix is None:
            return False
        text = _sample(key.shape) if flat else _qualify(_sample(prefix or ()), _sample(key.shape))
        where = key.where
        seen = (code, where.path, where.line, where.column, text)
        if seen in self.reported:
            return True
        self.reported.add(seen)
        return False

    def _aside(self, prefix: Shape | None, key: Shape, flat: bool) -> bool:
        """A key the catalog declares as a loop's step key or bookkeeping: not undeclared
        (``Catalog.is_bookkeeping``: ``bookkeeping:``, ``step_keys``, W&B's ``_*`` keys)."""
        text = _sample(key)
        logged = text if flat or prefix is None else _qualify(_sample(prefix), text)
        return self.catalog.is_bookkeeping(logged)

    def _rename(self, prefix: Shape | None, key: Shape, flat: bool) -> str:
        """ "did you mean" when a literal row's key is this one renamed (``""``: none is).

        The rule live-check uses (:func:`~codegen.catalog.similar.renamed_key`); the row
        named is not reported ``SCAN_UNLOGGED`` as well: the rename is one finding."""
        if self.renames is None or (prefix is None and not flat):
            return ""
        text = _sample(key) if flat or prefix is None else _qualify(_sample(prefix), _sample(key))
        target = self.renames.find(text)
        if target is None:
            return ""
        row = self.literal_rows[target]
        self.renamed.add(row.name)
        return (
            f"did you mean {target!r}? Row {row.name} declares that key: a renamed key. Log "
            f"it as {target!r}, or change the row's key to {text!r}"
        )

    @staticmethod
    def _shown(prefix: Shape | None, key: Shape, flat: bool) -> str:
        if flat:
            return f"key {shape_text(key)!r}"
        if prefix is None:
            return f"key {shape_text(key)!r} (prefix unknown)"
        return f"key {shape_text(key)!r} with prefix {shape_text(prefix)!r}"

    @staticmethod
    def _fix(prefix: Shape | None, key: Shape, flat: bool, typed: str = "") -> str:
        if any(isinstance(part, Hole) for part in (*key, *(prefix or ()))):
            return (
                "declare a key family whose {attribute} placeholders stand for the parts in "
                f"braces{typed}, or run `metric-catalog infer` on a run's log to draft rows"
            )
        if flat:
            return (
                f"add a teed row for it (its prefix and logger_key joined by '/' give "
                f"{shape_text(key)!r}){typed}, or run `metric-catalog infer` on a run's log"
            )
        where = "" if prefix is None else f" under prefix {shape_text(prefix)!r}"
        return (
            f"add a teed row with logger_key {shape_text(key)!r}{where}{typed}, or run "
            "`metric-catalog infer` on a run's log to draft rows"
        )

    @staticmethod
    def _via(logged: Logged, where: Where) -> str:
        if where.path == logged.where.path and where.line == logged.where.line:
            return f" (logged by `{logged.call}`)"
        return f" (logged by `{logged.call}` at {logged.where})"

    def _unresolved(self, logged: Logged, item: Unresolved) -> Diagnostic:
        via = self._via(logged, item.where)
        return _diagnostic(
            UNRESOLVED,
            Severity.WARNING,
            f"cannot resolve statically what is logged here{via}: {item.what}; its keys are not "
            "checked (build the dict from literal keys or module constants where it is logged, "
            "or mark the line `# metric-catalog: ignore`)",
            item.where,
        )

    def unlogged(self) -> list[Diagnostic]:
        """A warning per teed row no scanned call logs."""
        found = []
        for _, row in self.catalog.rows():
            if row.section != "teed" or row.logger_key is None or row.name in self.logged:
                continue
            if UNLOGGED in row.no_lint:
                continue  # the adopter says code outside the scan logs it
            if row.name in self.renamed:
                continue  # an undeclared key's "did you mean" names it: one finding
            keys = ", ".join(repr(_qualify(p, row.logger_key)) for p in row.prefixes or ("",))
            found.append(
                Diagnostic(
                    UNLOGGED,
                    Severity.WARNING,
                    f"no scanned code logs {keys} (row {row.name}); scan the code that logs it, "
                    "or remove the row if nothing does",
                    row.where("logger_key"),
                )
            )
        return found


def _value_fix(key: Key) -> str:
    """`` and value_type: table (...)`` when ``key``'s value is not a number, else nothing."""
    if not key.value:
        return ""
    value_type = NON_SCALAR_VALUES[key.value.rpartition(".")[2]]
    return f" and value_type: {value_type} (its value is a `{key.value}(...)`, not a number)"


def _diagnostic(code: str, severity: Severity, message: str, where: Where) -> Diagnostic:
    return Diagnostic(code, severity, message, Position(where.path, where.line, where.column))
