"""One source file of a scanned tree and what other files may look up in it.

A :class:`Module` is parsed and indexed (its constants, functions, classes and imports)
when the analysis first looks into it, and finds the lines calling a name from its text
alone, so most files of a tree are never parsed twice, or at all, beyond the syntax check.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from .calls import ScanCall
from .numeric import numeric_call
from .records import UNREAD, Record
from .syntax import FuncDef
from .syntax import dotted as _dotted
from .values import (
    Where,
)

__all__ = [
    "Module",
]


@dataclass(slots=True)
class _ClassInfo:
    constants: dict[str, ast.expr] = field(default_factory=dict)
    methods: dict[str, FuncDef] = field(default_factory=dict)
    bases: list[str] = field(default_factory=list)
    """The base classes' names as written (``BasePPOTrainer``, ``base.Trainer``)."""
    record: Record | None = UNREAD
    """How its constructor fills its fields, for a record class (a dataclass, ...); read
    when first needed (:data:`~codegen.scan.objects.UNREAD` until then)."""


class Module:
    """One source file and what other files may look up in it.

    Built without a syntax tree (``tree=None``), it is parsed and indexed when first looked
    into (:data:`_INDEXED`): most files of a tree are never needed by the analysis, and a
    syntax check without a tree costs two thirds of a parse (see :func:`syntax_checked`).
    """

    def __init__(self, shown: str, real: str, source: bytes, tree: ast.Module | None) -> None:
        self.shown = shown
        """Path as reported (relative to the working directory when below it)."""
        self.real = real
        self.source = source
        self.lines: list[int] = []
        """Lines calling one of :attr:`calls` (set by :meth:`Project.add`)."""
        self.calls: list[ScanCall] = []
        """The scanned calls this file may make."""
        self._line_starts: list[int] | None = None
        self._ascii = source.isascii()
        self.instances: dict[str, set[str]] | None = None
        self.literals: dict[str, object] | None = None
        self.failure: str | None = None
        """Why the file, parsed when first looked into, gave no tree (it then reads as empty)."""
        self.inherited: dict[str, set[str]] = {}
        """``self.<attr>`` receivers a base class in another file binds to a scanned call's
        class (``self.accelerator = Accelerator(...)``), by :mod:`.basebound`."""
        self.mixed: dict[tuple[str, str], bool] = {}
        """(mixin class, base) -> whether a scanned class derives from both (see
        :func:`~codegen.scan.inherited.mixed_into`), found once per pair."""
        if tree is not None:
            self.attach(tree)

    if TYPE_CHECKING:  # set by :meth:`attach`
        tree: ast.Module | None
        constants: dict[str, ast.expr]
        functions: dict[str, FuncDef]
        classes: dict[str, _ClassInfo]
        imports: dict[str, tuple[str, str | None, int]]
        """Local name -> (module, imported attribute or None, relative level)."""

    def __getattr__(self, name: str) -> object:
        """Parse and index the file when one of :data:`_INDEXED` is first read."""
        if name not in _INDEXED:
            raise AttributeError(name)
        self.attach(self._parsed())
        return self.__dict__[name]

    @property
    def loaded(self) -> bool:
        """Whether the file has been parsed and indexed."""
        return "imports" in self.__dict__

    def _parsed(self) -> ast.Module:
        try:
            return ast.parse(self.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            # The syntax check passed, so this is a tree too deep to build (Python 3.12+).
            self.failure = f"{type(exc).__name__}: {exc}"
            return ast.Module(body=[], type_ignores=[])

    def attach(self, tree: ast.Module) -> None:
        """Index the file from ``tree``, its syntax tree."""
        self.tree = tree
        self.constants = {}
        self.functions = {}
        self.classes = {}
        self.imports = {}
        for stmt in tree.body:
            self._index(stmt)

    def release(self) -> None:
        """Drop the syntax tree (a file calling no logging function), keeping its constants.

        Its functions come back with :meth:`full` when a logged dict is built by one.
        """
        self.tree = None
        self.functions = {}
        for info in self.classes.values():
            info.methods = {}

    def full(self) -> Module:
        """This module with its functions indexed (parsed again after :meth:`release`)."""
        if self.tree is None:
            self.tree = self._parsed()
            for stmt in self.tree.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    self._index(stmt)
        return self

    def _index(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            self.functions[stmt.name] = stmt
        elif isinstance(stmt, ast.ClassDef):
            info = _ClassInfo(bases=[b for b in map(_dotted, stmt.bases) if b])
            for item in stmt.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    info.methods[item.name] = item
                else:
                    _constant_into(item, info.constants)
            self.classes[stmt.name] = info
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            self.index_import(stmt)
        elif isinstance(stmt, ast.If | ast.Try):
            # ``if TYPE_CHECKING:`` / ``try: import x`` blocks still bind module names.
            for inner in stmt.body:
                self._index(inner)
        else:
            _constant_into(stmt, self.constants)

    def index_import(self, stmt: ast.Import | ast.ImportFrom, *, keep: bool = False) -> None:
        """Record the names ``stmt`` binds (``keep``: a module-level binding wins)."""
        bound: dict[str, tuple[str, str | None, int]] = {}
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    bound[alias.asname] = (alias.name, None, 0)
                else:
                    head = alias.name.partition(".")[0]
                    bound[head] = (head, None, 0)
        else:
            for alias in stmt.names:
                local = alias.asname or alias.name
                bound[local] = (stmt.module or "", alias.name, stmt.level)
        for name, target in bound.items():
            if keep:
                self.imports.setdefault(name, target)
            else:
                self.imports[name] = target

    def where(self, node: ast.AST) -> Where:
        """The 1-based line and character column of ``node`` (``col_offset`` counts bytes)."""
        line = getattr(node, "lineno", 1)
        offset = getattr(node, "col_offset", 0)
        if offset and not self._ascii:
            starts = self.line_starts()
            if line - 1 < len(starts):
                start = starts[line - 1]
                prefix = self.source[start : start + offset]
                offset = len(prefix.decode("utf-8", "replace"))
        return Where(self.shown, line, offset + 1)

    def line_starts(self) -> list[int]:
        """Byte offset of each line's start."""
        if self._line_starts is None:
            starts = [0]
            starts.extend(m.end() for m in re.finditer(rb"\n", self.source))
            self._line_starts = starts
        return self._line_starts

    def line_text(self, line: int) -> bytes:
        """The raw bytes of a 1-based line (empty past the end)."""
        starts = self.line_starts()
        if not 0 < line <= len(starts):
            return b""
        end = starts[line] if line < len(starts) else len(self.source)
        return self.source[starts[line - 1] : end]

    def mention_lines(self, names: Iterable[str], *, field: bool = False) -> list[int]:
        """Sorted 1-based lines where one of ``names`` is called (``name(``) in the text.

        ``field=True``: lines writing the field ``names`` (``.info[``, ``.info =``,
        ``.info.update(``, ``info=`` as a keyword).
        """
        unique = sorted(set(names))
        alternatives = b"|".join(re.escape(name.encode()) for name in unique)
        if not alternatives:
            return []
        source = self.source
        if field:
            pattern = re.compile(
                rb"\.(?:" + alternatives + rb")\s*(?:\[[^\]\n]*\]\s*=(?!=)|=(?!=)|\.update\b)"
                rb"|[(,]\s*(?:" + alternatives + rb")\s*=(?!=)"
            )
            starts = _field_starts(pattern, source, unique)
        else:
            # One pattern per name: a literal prefix the regex engine searches for fast.
            starts = sorted(
                found.start()
                for name in unique
                if name.encode() in source
                for found in _call_pattern(name).finditer(source)
                if not (found.start() and _WORD_BYTE[source[found.start() - 1]])
                and not numeric_call(source, found.start(), self.imports)
            )
        lines: list[int] = []
        line, position = 1, 0
        for start in starts:
            line += source.count(b"\n", position, start)
            position = start
            if not lines or lines[-1] != line:
                lines.append(line)
        return lines

    def active(self, calls: Sequence[ScanCall]) -> list[ScanCall]:
        """The calls this file may make: a qualified one only when its qualifier is in the text.

        ``Tracking.log`` needs ``Tracking`` somewhere in the file (the import, an
        annotation or the constructor call), so ``np.log(x)`` elsewhere is not
        analysed as a logging call.
        """
        return [
            spec
            for spec in calls
            if spec.qualifier is None or spec.qualifier.rpartition(".")[2].encode() in self.source
        ]


_INDEXED: Final = frozenset({"tree", "constants", "functions", "classes", "imports"})
"""What :class:`Module` reads from its syntax tree (parsed on first use)."""


def _constant_into(stmt: ast.stmt, table: dict[str, ast.expr]) -> None:
    """Record ``NAME = <expr>`` (and annotated ones) as a possible constant."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            table[target.id] = stmt.value
    elif (
        isinstance(stmt, ast.AnnAssign)
        and stmt.value is not None
        and isinstance(stmt.target, ast.Name)
    ):
        table[stmt.target.id] = stmt.value


_WORD_BYTE: Final = tuple(
    chr(b).isascii() and (chr(b).isalnum() or b == ord("_")) for b in range(256)
)
"""Bytes that continue a name (so ``catalog(`` is no call of ``log``)."""


@functools.lru_cache(maxsize=256)
def _call_pattern(name: str) -> re.Pattern[bytes]:
    """``name(`` (spaces allowed before the parenthesis), or ``name.remote(``: a Ray actor
    method called through its handle (:mod:`.receivers`)."""
    return re.compile(re.escape(name.encode()) + rb"(?:\s*\.\s*remote)?\s*\(")


_SPACE: Final = frozenset(b" \t\n\r\f\v")
"""The bytes ``\\s`` matches in a bytes pattern."""


def _field_starts(pattern: re.Pattern[bytes], source: bytes, names: Sequence[str]) -> list[int]:
    """Where :meth:`Module.mention_lines`' field ``pattern`` matches, as ``finditer`` finds
    them, tried only where it can start: at the ``.`` just before a name, or the ``(`` or
    ``,`` before one and blanks. The pattern has no literal prefix to search for, so
    ``finditer`` would try every byte of the file."""
    if not all(names):
        return [found.start() for found in pattern.finditer(source)]
    candidates: set[int] = set()
    for name in names:
        word = name.encode()
        at = source.find(word)
        while at >= 0:
            if at and source[at - 1] == ord("."):
                candidates.add(at - 1)
            before = at - 1
            while before >= 0 and source[before] in _SPACE:
                before -= 1
            if before >= 0 and source[before] in b"(,":
                candidates.add(before)
            at = source.find(word, at + 1)
    starts: list[int] = []
    end = 0
    for candidate in sorted(candidates):
        found = pattern.match(source, candidate) if candidate >= end else None
        if found is not None:  # matches do not overlap, as ``finditer``'s do not
            starts.append(found.start())
            end = found.end()
    return starts
