"""What source code logs, read statically: the keys each logging call hands over.

Files are parsed with :mod:`ast` and never imported or run. For every call a
:class:`~codegen.scan.calls.ScanCall` names, the dict argument is followed back
through the function that builds it, statement by statement:

* dict literals (``**`` included), ``dict(...)``, dict comprehensions, ``a | b``;
* ``d[k] = v``, ``d.update(...)``, ``d.setdefault(k, v)``, ``d |= ...`` before the call;
* a dict returned by a function of a scanned file (``compute_data_metrics(batch)``
  in verl), a method of the same class, or a function imported from a scanned module;
* a field of a returned record (``out.metrics`` of ``return Outputs(metrics=m)``) and
  what a function passed as an argument returns (:mod:`.objects`);
* keys as string literals, module or class constants (also imported ones),
  ``a + "/" + b``, f-strings (an unknown part becomes a hole such as
  ``timing_s/{name}``, matched later against key families), a loop variable over
  a literal tuple of strings or over another dict's keys.

What cannot be followed (a dict built by an unknown call, read from a
subscript, a key held by a variable) becomes an :class:`Unresolved` with what it
is and where: never dropped silently. Branches of an ``if`` are both taken.

Only functions whose text mentions a scanned call (or that a logged dict comes
from) are analysed, so a scan costs little more than parsing the files.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import functools
import os
import re
import string
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import is_not
from typing import TYPE_CHECKING, Final, TypeAlias

from metric_catalog.series_rules import (
    PREFIX_GLUE,
    PREFIX_SEPARATOR,
    namespace_prefix,
    qualified_key,
)

from .accumulators import caller_keys, narrowed, nested_holder, read_tags, write_lines
from .calls import ScanCall
from .dispatch import is_abstract, overrides
from .inherited import (
    module_function,
    named_like_its_callers_match,
    numeric_call,
    subclass_call,
)
from .keyfilter import KeyTest, has_exit, literal_table
from .objects import (
    UNREAD,
    Callables,
    Env,
    Instance,
    ObjectFlow,
    Opaque,
    Record,
    Value,
    gaining,
    join_objects,
)
from .objects import steps as _steps
from .own_writes import (
    carried_names,
    ever_held,
    is_plain_attribute,
    loop_carried,
    may_fill,
    read_here,
    remember,
)
from .syntax import bind as _bind
from .syntax import children, walk
from .syntax import describe as _describe
from .syntax import dotted as _dotted
from .syntax import own_expressions as _own_expressions
from .syntax import params as _params
from .syntax import shown as _shown
from .timers import fill_from
from .values import (
    NON_SCALAR_VALUES,
    SLOT,
    DictVal,
    Hole,
    Key,
    KeyList,
    KeysOf,
    Shape,
    Spread,
    StrVal,
    Unresolved,
    Where,
    rewrite,
    spread_into,
    substitute,
    union,
)
from .values import concat as _concat

__all__ = [
    "KEEP_TREES_BYTES",
    "WORK_BUDGET",
    "Logged",
    "Module",
    "Project",
    "Returns",
    "Wrapper",
]

MAX_ALTERNATIVES: Final = 64
"""Most alternatives one key expression expands to (a product of loops over literals)."""

KEEP_TREES_BYTES: Final = 48 * 1024 * 1024
"""Syntax trees of files that call no logging function, built before the analysis (their
imports tell ``np.log(`` apart), are kept up to this much source: following a dict into
them then costs no second parse (beyond it, they are parsed again). The others are built
when the analysis first looks into them, and kept."""

WORK_BUDGET: Final = 250_000
"""Most writer parts merged over all reads of ``self.<attr>`` dicts in one scan: a class of
n methods each reading what the others write costs n * n (the five real trees: at most 150)."""

_DICT_TYPES: Final = frozenset(
    {"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict", "DefaultDict"}
)
"""Annotations that make a parameter a dict (see :meth:`_Scanner._dict_parameter`)."""

_MAX_DEPTH: Final = 8
"""How deep dicts are followed through returning functions."""

_FuncDef: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(slots=True)
class Returns:
    """What a function hands back: its returned dict, the dicts of a returned tuple, and the
    keys it adds to dicts passed as parameters (``metrics.update(...)`` on its argument)."""

    whole: DictVal | None = None
    items: dict[int, DictVal] = field(default_factory=dict)
    filled: dict[str, DictVal] = field(default_factory=dict)
    guarded: list[tuple[str, bool, DictVal]] = field(default_factory=list)
    """Dicts returned under ``if param:`` (``True``) or ``if not param:`` (``False``)."""
    instance: Instance | None = None
    """The objects it returns (``return Outputs(metrics=m)``), see :mod:`.objects`."""
    callables: Callables | None = None
    """The functions it returns (a factory's nested ``def``)."""
    opaque: list[Opaque] = field(default_factory=list)
    """What else it returns: unfollowed parts of its objects or functions."""
    settled: Instance | Callables | None = None
    """Its objects or functions with the unfollowed parts, once asked for (see
    :meth:`~codegen.scan.objects.ObjectFlow._returned_object`)."""

    def add(self, value: DictVal | tuple[DictVal | None, ...]) -> None:
        """Merge one ``return`` statement's value."""
        if isinstance(value, DictVal):
            self.whole = value if self.whole is None else self.whole.merge(value)
            return
        for index, item in enumerate(value):
            if item is not None:
                now = self.items.get(index)
                self.items[index] = item if now is None else now.merge(item)


@dataclass(frozen=True, slots=True)
class Logged:
    """One logging call: what it logs, under which prefixes, and what could not be resolved."""

    call: str
    """The call as written (``logger.log_metrics``)."""
    where: Where
    spec: ScanCall
    prefixes: tuple[Shape, ...] | None
    """Prefix alternatives; ``None`` when the prefix is unknown (see ``unresolved``)."""
    flat: bool
    """The call takes no prefix: keys are matched as ``prefix/key`` of the rows."""
    keys: tuple[Key, ...]
    unresolved: tuple[Unresolved, ...]
    spreads: tuple[Spread, ...] = ()
    """Keys of parameters of the enclosing function: its callers' arguments say which."""
    inside: Wrapper | None = None
    """The enclosing function, when ``spreads`` is not empty."""


@dataclass(eq=False, slots=True)
class Wrapper:
    """A function that logs (part of) a parameter's dict: its callers say what is logged."""

    module: Module
    func: _FuncDef
    cls: str | None
    where: Where
    used: bool = False

    @property
    def name(self) -> str:
        """The function's name, as callers spell it."""
        return self.func.name


def _namespace(shape: Shape) -> Shape:
    """A prefix passed with its separator (``prefix="train/"``) names ``train``, as in the tee.

    NeMo-Aligner's logger joins ``f"{prefix}{key}"``, so its ``"train/"`` logs the keys the
    declared prefix ``train`` names (:func:`~metric_catalog.series_rules.namespace_prefix`).
    """
    if not shape or not isinstance(shape[-1], str):
        return shape
    last = shape[-1]
    if len(shape) == 1:
        return (namespace_prefix(last),)
    rest = last[:-1]
    if last.endswith(PREFIX_SEPARATOR) and not rest.endswith((PREFIX_SEPARATOR, PREFIX_GLUE)):
        return (*shape[:-1], rest) if rest else shape[:-1]
    return shape


@dataclass(slots=True)
class _ClassInfo:
    constants: dict[str, ast.expr] = field(default_factory=dict)
    methods: dict[str, _FuncDef] = field(default_factory=dict)
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
        if tree is not None:
            self.attach(tree)

    if TYPE_CHECKING:  # set by :meth:`attach`
        tree: ast.Module | None
        constants: dict[str, ast.expr]
        functions: dict[str, _FuncDef]
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


def _module_names(real: str) -> list[str]:
    """Dotted names a file may be imported as: every suffix of its path's folders."""
    parts = real.replace(os.sep, "/").split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    parts = parts[:-1] if stem == "__init__" else [*parts[:-1], stem]
    parts = [part for part in parts if part]
    return [".".join(parts[i:]) for i in range(max(0, len(parts) - 8), len(parts))]


class Project:
    """Every parsed file, the calls to scan, and the analysis of what each call logs."""

    def __init__(self, calls: Sequence[ScanCall]) -> None:
        self.calls = tuple(calls)
        self.modules: list[Module] = []
        self._by_name: dict[str, list[Module]] = {}
        self._by_real: dict[str, Module] = {}
        self._returns: dict[tuple[str, ...], Returns] = {}
        self._attributes: dict[tuple[str, str], DictVal | None] = {}
        self._writer_lists: dict[tuple[str, str], list[_FuncDef]] = {}
        """The methods that may write an attribute (``self.<attr>``), by its slot."""
        self._part_values: dict[tuple[tuple[str, str], int], DictVal | None] = {}
        """What one method writes into an attribute, once a reader needed it."""
        self._collecting: set[tuple[str, int]] = set()
        """The methods being analysed for their attributes (a read inside leaves them out)."""
        self._active: set[tuple[str, ...]] = set()
        self._envs: dict[tuple[str, int], Env] = {}
        """A method's variables after its body (``self.<attr>`` holders): analysed once for
        every attribute it writes (``__init__`` sets dozens)."""
        self.qualifiers = sorted({q.rpartition(".")[2] for s in calls if (q := s.qualifier)})
        self.throughs = tuple(spec for spec in self.calls if spec.through is not None)
        self.producers = tuple(spec for spec in self.calls if spec.returns)
        self.fields = tuple(spec for spec in self.calls if spec.field)
        self.calls = tuple(spec for spec in self.calls if spec.logs)
        self.wrappers: dict[str, list[Wrapper]] = {}
        self._wrapped: dict[tuple[str, int], Wrapper] = {}
        self._defined: dict[str, int] = {}
        self._inner: dict[tuple[str, int], list[Logged]] = {}
        self._kept = 0
        self.work = 0
        """Parts merged by attribute reads so far (see :data:`WORK_BUDGET`)."""
        self._names: dict[int, tuple[ast.expr, tuple[str, ...]]] = {}
        self._spec_names: dict[int, tuple[Sequence[ScanCall], frozenset[str]]] = {}

    def read(self, module: Module) -> Module:
        """Set the calls ``module`` may make and the lines making them (from its text)."""
        module.calls = module.active(self.calls)
        module.lines = module.mention_lines(spec.name for spec in module.calls)
        return module

    def add(self, module: Module, *, read: bool = True) -> None:
        """Make ``module`` searchable by the dotted names it may be imported as (``read``:
        find its logging lines first, unless :meth:`read` did)."""
        self.modules.append(module)
        if read:
            self.read(module)
        if not module.lines and module.loaded:
            self._kept += len(module.source)
            if self._kept > KEEP_TREES_BYTES:
                module.release()  # a large tree: keep memory to its constants
        self._by_real[module.real] = module
        for name in _module_names(module.real):
            self._by_name.setdefault(name, []).append(module)

    def names_of(self, specs: Sequence[ScanCall]) -> frozenset[str]:
        """The names ``specs`` call (``log`` of ``wandb.log``), remembered per sequence."""
        held = self._spec_names.get(id(specs))
        if held is None or held[0] is not specs:  # the sequence is held: its id is not reused
            held = self._spec_names[id(specs)] = (specs, frozenset(s.name for s in specs))
        return held[1]

    def names_in(self, node: ast.expr) -> tuple[str, ...]:
        """The names ``node`` reads, in :func:`ast.walk`'s order: remembered, as a key's
        expression is asked again at every statement of a wave or method that reads it."""
        held = self._names.get(id(node))
        if held is None or held[0] is not node:  # the node is held: its id is not reused
            names = tuple(inner.id for inner in walk(node) if isinstance(inner, ast.Name))
            held = self._names[id(node)] = (node, names)
        return held[1]

    def find_module(self, name: str, level: int, importer: Module) -> Module | None:
        """The scanned module ``from <level dots><name> import ...`` in ``importer`` names."""
        if level:
            base = os.path.dirname(importer.real)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            path = os.path.join(base, *name.split(".")) if name else base
            return self._by_real.get(path + ".py") or self._by_real.get(
                os.path.join(path, "__init__.py")
            )
        found = self._by_name.get(name)
        return found[0] if found else None

    def class_named(self, importer: Module, name: str) -> tuple[Module, str] | None:
        """Where the class ``name`` in ``importer`` is: defined there, or imported by name
        (``from .outputs import Outputs``); ``None`` for anything else."""
        if name in importer.classes:
            return importer, name
        imported = importer.imports.get(name)
        if imported is None or imported[1] is None:
            return None
        module = self.find_module(imported[0], imported[2], importer)
        return None if module is None else (module, imported[1])

    def logged(self) -> Iterator[Logged]:
        """Every logging call: the scanned calls, then calls of the functions wrapping them.

        A logging call whose dict holds a parameter's keys makes its function a
        wrapper; the calls of wrappers are found in waves until no new wrapper appears.
        """
        found: list[Logged] = []
        for module in self.modules:
            if module.lines:
                found += _Scanner(self, module, module.lines, calls=module.calls).run()
        found += self._produced()
        wave = self._new_wrappers(found)
        for _ in range(_MAX_DEPTH):
            if not wave:
                break
            names = {wrapper.name for wrapper in wave}
            new: list[Logged] = []
            for module in self.modules:
                if not any(name.encode() in module.source for name in names):
                    continue
                lines = module.mention_lines(names)
                if lines and not self._misses(module, lines, wave):
                    new += _Scanner(self, module, lines, wrappers=wave).run()
            found += new
            wave = self._new_wrappers(new)
        for logged in found:
            yield self._settled(logged)

    def _misses(self, module: Module, lines: list[int], wave: Sequence[Wrapper]) -> bool:
        """Whether no call in ``module`` can go to a wrapper of ``wave``: each call of one's
        name is ``self.<name>(...)`` in a method whose class resolves it to another function
        (OpenRLHF's trainers each call their own ``save_logs_and_checkpoints``), a wrapper
        of an earlier wave. A wave finds calls of its wrappers only, so analysing the module
        again would find nothing, and the wave that had that wrapper analysed its callers."""
        tree = module.full().tree
        assert tree is not None  # full() parsed it
        funcs = [wrapper.func for wrapper in wave]
        for call, cls in _calls_named(tree, lines, {wrapper.name for wrapper in wave}):
            func = call.func
            if cls is None or not isinstance(func, ast.Attribute):
                return False
            if not isinstance(func.value, ast.Name) or func.value.id not in {"self", "cls"}:
                return False
            target = self.method(module, cls, func.attr)  # as the scanner resolves it
            if target is None or any(target[1] is wrapped for wrapped in funcs):
                return False
            if (target[0].real, id(target[1])) not in self._wrapped:
                return False  # an earlier wave's wrapper: that wave analysed these callers
        return True

    def method(
        self, module: Module, cls: str, name: str, depth: int = 0
    ) -> tuple[Module, _FuncDef, str | None] | None:
        """The method ``name`` of class ``cls`` or of its bases (same file or imported)."""
        info = module.full().classes.get(cls)
        if info is None or depth > _MAX_DEPTH:
            return None
        if name in info.methods:
            return module, info.methods[name], cls
        for base in info.bases:
            head, _, last = base.rpartition(".")
            source: Module | None = module
            if head or last not in module.classes:
                imported = module.imports.get(head.partition(".")[0] if head else last)
                source = None
                if imported is not None:
                    where = _joined(*imported[:2]) if head else imported[0]
                    source = self.find_module(where, imported[2], module)
            if source is not None:
                found = self.method(source, last, name, depth + 1)
                if found is not None:
                    return found
        return None

    def wrapped_by(self, wrapper: Wrapper) -> list[Logged]:
        """The logging calls inside ``wrapper`` that log its parameters' keys."""
        return self._inner.get((wrapper.module.real, id(wrapper.func)), [])

    def _new_wrappers(self, found: Sequence[Logged]) -> list[Wrapper]:
        wave = []
        for logged in found:
            wrapper = logged.inside
            if wrapper is None or not logged.spreads:
                continue
            slot = (wrapper.module.real, id(wrapper.func))
            self._inner.setdefault(slot, []).append(logged)
            if slot not in self._wrapped:
                self._wrapped[slot] = wrapper
                self.wrappers.setdefault(wrapper.name, []).append(wrapper)
                wave.append(wrapper)
        return wave

    def _settled(self, logged: Logged) -> Logged:
        """A logged dict whose parameters no scanned call passes: unresolved there."""
        wrapper = logged.inside
        if not logged.spreads or wrapper is None:
            return logged
        slot = (wrapper.module.real, id(wrapper.func))
        if self._wrapped.get(slot, wrapper).used:
            return logged
        params = sorted({spread.param + _steps(spread.path) for spread in logged.spreads})
        what = (
            f"the keys of the parameter(s) {', '.join(params)} of `{wrapper.name}`, "
            "which no scanned call passes (scan its callers too, or name it in scan-calls)"
        )
        extra = Unresolved(what, logged.where)
        return dataclasses.replace(logged, unresolved=(*logged.unresolved, extra))

    def defined(self, name: str) -> int:
        """How many functions or methods of the scanned files are named ``name``."""
        count = self._defined.get(name)
        if count is None:
            pattern = re.compile(rb"\bdef\s+" + re.escape(name.encode()) + rb"\s*\(")
            word = name.encode()
            count = sum(len(pattern.findall(m.source)) for m in self.modules if word in m.source)
            self._defined[name] = count
        return count

    def _produced(self) -> list[Logged]:
        """The dicts declared producers return (``returns = true``) or fields receive."""
        found: list[Logged] = []
        for spec in self.producers:
            pattern = re.compile(rb"\bdef\s+" + re.escape(spec.name.encode()) + rb"\s*\(")
            for module in self.modules:
                if spec.name.encode() in module.source and pattern.search(module.source):
                    found += self._returned_by(module.full(), spec)
        heads: dict[str, list[ScanCall]] = {}
        for spec in self.fields:
            heads.setdefault(spec.field.partition(".")[0], []).append(spec)
        for head, specs in heads.items():
            for module in self.modules:
                if head.encode() in module.source:
                    lines = module.mention_lines([head], field=True)
                    if lines:
                        found += _Scanner(self, module, lines, fields=specs).run()
        return found

    def _returned_by(self, module: Module, spec: ScanCall) -> list[Logged]:
        qualifier = spec.qualifier
        targets: list[tuple[_FuncDef, str | None]] = []
        if qualifier is None and spec.name in module.functions:
            targets.append((module.functions[spec.name], None))
        for name, info in module.classes.items():
            if spec.name in info.methods and qualifier in (None, name):
                targets.append((info.methods[spec.name], name))
        found = []
        for func, cls in targets:
            if spec.returns_key:
                scanner = _Scanner(self, module, [], cls=cls, depth=1)
                scanner.pick = spec.returns_key
                returned = scanner.returns(func)
            else:
                returned = self.returned(module, func, cls, 0)
            value = returned.whole
            for item in returned.items.values():
                value = item if value is None else value.merge(item)
            if value is None:
                continue
            value = rewrite(value, (spec.key_prefix, SLOT))
            where = module.where(func)
            shown = f"{spec.call} (returns)"
            found.append(Logged(shown, where, spec, ((),), True, value.keys, value.unresolved))
        return found

    # --- following a call to the dict its function returns ---------------------

    def attribute_dict(
        self, module: Module, cls: str, attr: str, depth: int, skip: _FuncDef | None = None
    ) -> DictVal | None:
        """The keys the methods of ``cls`` (but ``skip``, the reader: its own writes are
        flow) write into ``self.<attr>``; ``None``: no writes.

        A writer is analysed when a reader first needs it: the reader itself is not, so a
        method reading and writing an attribute is not analysed a second time inside its
        own analysis (TRL's ``__init__`` reads what it has just set)."""
        slot = (module.real, f"{cls}.self.{attr}")
        writers = self._writers(module, cls, attr)
        # Each read merges every writer's part: n readers of n writers is n * n work.
        self.work += len(writers)
        if self.work > WORK_BUDGET:
            return self._over_budget(module, f"self.{attr}", skip)
        # Left out: the reader, and a method being analysed (read without its writes).
        wanted = [
            method
            for method in writers
            if method is not skip and (module.real, id(method)) not in self._collecting
        ]
        whole = len(wanted) == len(writers)  # only then is the value remembered
        if whole and slot in self._attributes:
            return self._attributes[slot]
        missing = [method for method in wanted if (slot, id(method)) not in self._part_values]
        if missing and (slot in self._active or depth > _MAX_DEPTH):
            return None
        if missing:
            self._active.add(slot)
            try:
                for method in missing:
                    self._part_values[(slot, id(method))] = self._written(
                        module, cls, attr, method, depth
                    )
            finally:
                self._active.discard(slot)
        merged = _merged(
            value
            for method in wanted
            if (value := self._part_values[(slot, id(method))]) is not None
        )
        if whole:
            self._attributes[slot] = merged
        return merged

    def _over_budget(self, module: Module, what: str, at: ast.AST | None) -> DictVal:
        """What a read returns once :data:`WORK_BUDGET` is spent: unresolved where it is
        read (or at its module's start), never a guess and never a hang."""
        why = (
            f"the keys of `{what}`: scan's work budget ({WORK_BUDGET:,} parts merged, a class "
            "whose many methods each read what all of them write) was spent before this read; "
            "scan this file alone, or split the class"
        )
        return DictVal(
            (), (Unresolved(why, module.where(at) if at else Where(module.shown, 1, 1)),)
        )

    def _writers(self, module: Module, cls: str, attr: str) -> list[_FuncDef]:
        """The methods of ``cls`` with a line that may write ``self.<attr>`` (by the text)."""
        slot = (module.real, f"{cls}.self.{attr}")
        found = self._writer_lists.get(slot)
        if found is None:
            info = module.full().classes.get(cls)
            starts = write_lines(attr, module.source)
            found = []
            if info is not None and starts:
                ordered = sorted(starts)  # a bisection per method: a class of 10,000 stays fast
                for method in info.methods.values():
                    end = method.end_lineno or method.lineno
                    index = bisect.bisect_left(ordered, method.lineno)
                    if index < len(ordered) and ordered[index] <= end:
                        found.append(method)
            self._writer_lists[slot] = found
        return found

    def _written(
        self, module: Module, cls: str, attr: str, method: _FuncDef, depth: int
    ) -> DictVal | None:
        """What ``method`` leaves in ``self.<attr>``, its callers' strings filled in."""
        env = self._envs.get((module.real, id(method)))
        if env is None:
            scanner = _Scanner(self, module, [], cls=cls, depth=depth + 1)
            self._collecting.add((module.real, id(method)))
            try:
                env = self._envs[(module.real, id(method))] = scanner.collect(method)
            finally:
                self._collecting.discard((module.real, id(method)))
        value = _held(env.get(f"self.{attr}"))
        return None if value is None else caller_keys(self, module, cls, method, value)

    def returned(self, module: Module, func: _FuncDef, cls: str | None, depth: int) -> Returns:
        """What ``func`` returns and fills in its parameters (empty when nothing is followed)."""
        # The line tells nested functions of one name apart (a factory's ``def rl_fn``s).
        slot = (module.real, cls or "", func.name, str(func.lineno))
        if slot in self._returns:
            return self._returns[slot]
        if slot in self._active or depth > _MAX_DEPTH:
            return Returns()
        self._active.add(slot)
        try:
            result = _Scanner(self, module, [], cls=cls, depth=depth + 1).returns(func)
        finally:
            self._active.discard(slot)
        self._returns[slot] = result
        return result


_WORD_BYTE: Final = tuple(
    chr(b).isascii() and (chr(b).isalnum() or b == ord("_")) for b in range(256)
)
"""Bytes that continue a name (so ``catalog(`` is no call of ``log``)."""


@functools.lru_cache(maxsize=256)
def _call_pattern(name: str) -> re.Pattern[bytes]:
    """``name(`` (spaces allowed before the parenthesis)."""
    return re.compile(re.escape(name.encode()) + rb"\s*\(")


def _merged(values: Iterable[DictVal]) -> DictVal | None:
    """The union of ``values`` (``None``: none)."""
    held = list(values)
    return union(held) if held else None


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


def _held(value: Value | None) -> DictVal | None:
    """What a method left in a ``self.<attr>`` holder, as a dict (``None``: no dict)."""
    if isinstance(value, Opaque):
        return value.as_dict()
    return value if isinstance(value, DictVal) else None


def _holder(node: ast.expr) -> str | None:
    """The name a dict is followed under: a variable, or ``self.metrics`` (an attribute)."""
    if isinstance(node, ast.Name):
        return node.id
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return f"self.{node.attr}"
    return nested_holder(node)  # ``self.m[mode]``: the inner dicts as one (``self.m[]``)


def _valued(keys: DictVal, value: ast.expr | None) -> DictVal:
    """``keys`` with the constructor of their value when it is not a number
    (``wandb.Table(...)``, see :data:`~codegen.scan.values.NON_SCALAR_VALUES`)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return keys
    if value.func.attr not in NON_SCALAR_VALUES or not keys.keys:
        return keys
    made = _dotted(value.func) or value.func.attr
    marked = tuple(dataclasses.replace(key, value=made) for key in keys.keys)
    return DictVal(marked, keys.unresolved, keys.spreads)


def _literal_constants(module: Module) -> dict[str, object]:
    """The module's constants that are literals (``SKIP = ("a/", "b/")``), for key filters."""
    if module.literals is None:
        module.literals = literal_table(
            [ast.Assign([ast.Name(name)], value) for name, value in module.constants.items()]
        )
    return module.literals


_DICT_BASES: Final = frozenset({"dict", "defaultdict", "OrderedDict", "Counter", "UserDict"})
"""Bases making a class's instances dicts (``class Tensors(defaultdict)``)."""

_DICT_CALLS: Final = frozenset({"dict", "collections.OrderedDict", "OrderedDict"})
_FLAT_FACTORIES: Final = frozenset({"list", "set", "int", "float"})


def _flat_defaultdict(node: ast.Call) -> bool:
    """``defaultdict(list)``: a new dict whose keys are only those written into it (``d[k]
    .append(v)``, followed). A nested one (``defaultdict(lambda: defaultdict(list))``) is
    filled through two subscripts, which are not followed: it stays unresolved."""
    return (
        _dotted(node.func) in {"defaultdict", "collections.defaultdict"}
        and bool(node.args)
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in _FLAT_FACTORIES
    )


_GATHER_OBJECT: Final = "all_gather_object"
"""``dist.all_gather_object(out, obj)``: ``out`` becomes a list of every rank's ``obj``."""


def _joined(module: str, attr: str | None) -> str:
    """``pkg.mod`` + ``name`` -> ``pkg.mod.name`` (``from . import name``: just ``name``)."""
    if attr is None:
        return module
    return f"{module}.{attr}" if module else attr


def _defaults(func: _FuncDef) -> dict[str, ast.expr]:
    """Parameter name -> its default expression."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    with_default = positional[len(positional) - len(args.defaults) :]
    found = {arg.arg: value for arg, value in zip(with_default, args.defaults, strict=True)}
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None:
            found[arg.arg] = default
    return found


def _join(before: Env, *branches: Env) -> Env:
    """The environment after branches: a dict any branch changed holds every branch's keys."""
    joined = dict(before)
    # The names a branch rebound, compared by identity in C (``compress`` over ``is_not``):
    # large functions carry hundreds of variables through every ``if``.
    names: set[str] = set()
    for env in branches:
        names.update(compress(env, map(is_not, env.values(), map(before.get, env))))
    for name in names:
        values = [env[name] for env in branches if name in env]
        if name in before and len(values) < len(branches):
            values.append(before[name])
        dicts = [v for v in values if isinstance(v, DictVal)]
        strs = [v for v in values if isinstance(v, StrVal)]
        if dicts:
            merged = DictVal()
            for value in dicts:
                merged = merged.merge(value)
            joined[name] = merged
        elif strs and len(strs) == len(values):
            joined[name] = StrVal(tuple(dict.fromkeys(s for v in strs for s in v.shapes)))
        else:
            held = join_objects(values)
            joined[name] = values[0] if held is None else held
    return joined


class _Scanner(ObjectFlow):
    """One module's analysis: scopes, values, and the logging calls found in them."""

    def __init__(
        self,
        project: Project,
        module: Module,
        lines: list[int],
        *,
        cls: str | None = None,
        depth: int = 0,
        calls: Sequence[ScanCall] = (),
        wrappers: Sequence[Wrapper] = (),
        fields: Sequence[ScanCall] = (),
    ) -> None:
        self.project = project
        self.calls = calls
        self.pick = ""
        self.guard: tuple[str, bool] | None = None
        """Set for a producer returning its metrics under a key (``returns = "metrics"``)."""
        self.wrappers: dict[str, list[Wrapper]] = {}
        for wrapper in wrappers:
            self.wrappers.setdefault(wrapper.name, []).append(wrapper)
        self.fields = fields
        self.module = module
        self.lines = lines
        self.cls = cls
        self.depth = depth
        self.found: list[Logged] = []
        self.func: _FuncDef | None = None
        self.params: set[str] = set()
        self.outer: list[Env] = []
        self.typed: dict[str, tuple[Module, str]] = {}
        """Variables assigned an instance of a scanned dict subclass (``t = Tensors()``)."""
        self.stmt: ast.stmt | None = None
        """The statement being analysed (a key filter decides whether it runs)."""
        self.loops: dict[str, tuple[ast.For | ast.AsyncFor, dict[str, object]]] = {}
        """Loop variables over a dict's keys whose loop may skip keys (``continue``)."""
        self.tests: dict[tuple[int, int], KeyTest | None] = {}
        self.tags: dict[Key, tuple[str, str]] = {}
        """Keys read from ``self.m[mode]`` that one mode only holds (see :mod:`.accumulators`)."""
        self.last_target: tuple[ast.expr, tuple[Module, _FuncDef, str | None] | None] | None = None
        """The last call resolved by :meth:`_function`, valid within one statement."""
        self.pending: dict[str, tuple[_FuncDef, dict[str, DictVal]]] = {}
        self.dry = False
        """Inside the first pass over a loop's body (see :meth:`_carried`)."""
        self.ever: dict[str, DictVal] = {}
        """What each ``self.<attr>`` held before a method replaced it (see :mod:`.own_writes`)."""
        """Nested functions filling a dict of this one from their parameters: each call
        of one adds what it passes (see :meth:`_closure`)."""

    # --- scopes ---------------------------------------------------------------

    def _mentions(self, node: ast.stmt) -> bool:
        start = node.lineno
        end = getattr(node, "end_lineno", None) or start
        index = bisect.bisect_left(self.lines, start)
        return index < len(self.lines) and self.lines[index] <= end

    def run(self) -> list[Logged]:
        """Analyse the module body and every function mentioning a scanned call."""
        tree = self.module.full().tree
        assert tree is not None  # full() parsed it
        self._scope(tree.body, None, None, [])
        return self.found

    def _scope(
        self, body: list[ast.stmt], func: _FuncDef | None, cls: str | None, outer: list[Env]
    ) -> None:
        saved = (self.func, self.params, self.cls, self.outer, self.pending)
        self.func, self.cls, self.outer, self.pending = func, cls, outer, {}
        self.params = set(_params(func)) if func is not None else set()
        env: Env = {}
        if func is not None:
            for name in self.params:
                what = f"the parameter `{name}` of `{func.name}` (its value comes from the callers)"
                env[name] = Opaque(self.module, func, what, parameter=True, param=name)
        nested: list[tuple[ast.stmt, Env]] = []
        self._block(body, env, nested)
        self.func, self.params, self.cls, self.outer, self.pending = saved
        for stmt, at in nested:
            if isinstance(stmt, ast.ClassDef):
                for item in stmt.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        self._mentions(item)
                    ):
                        self._scope(item.body, item, stmt.name, [])
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._scope(stmt.body, stmt, cls, [*outer, at])

    def returns(self, func: _FuncDef) -> Returns:
        """What ``func``'s ``return`` statements hand back and what it adds to its parameters."""
        self.func, self.pending = func, {}
        self.params = set(_params(func))
        env: Env = {}
        for name in self.params:
            what = f"the parameter `{name}` of `{func.name}`"
            env[name] = Opaque(self.module, func, what, parameter=True, param=name)
        results = Returns()
        env = self._block(func.body, env, [], returns=results)
        for name in self.params:
            value = env.get(name)
            own = Spread(name, (SLOT,))
            if isinstance(value, DictVal) and own in value.spreads:
                others = tuple(s for s in value.spreads if s != own)
                added = DictVal(value.keys, value.unresolved, others)
                if not added.empty():
                    results.filled[name] = added
        return results

    # --- statements -----------------------------------------------------------

    def _block(
        self,
        body: list[ast.stmt],
        env: Env,
        nested: list[tuple[ast.stmt, Env]],
        returns: Returns | None = None,
    ) -> Env:
        for stmt in body:
            env = self._stmt(stmt, env, nested, returns)
        return env

    def _stmt(
        self,
        stmt: ast.stmt,
        env: Env,
        nested: list[tuple[ast.stmt, Env]],
        returns: Returns | None,
    ) -> Env:
        self.stmt = stmt
        self.last_target = None
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if returns is None and self._mentions(stmt):
                nested.append((stmt, dict(env)))
            if not isinstance(stmt, ast.ClassDef):
                self._closure(stmt, env)
                if self.func is not None:
                    env[stmt.name] = Callables(((self.module, stmt, None),))
            return env
        if self.pending:
            self._closure_calls(stmt, env)
        if returns is None:
            self._calls_in(stmt, env)
        if isinstance(stmt, ast.Assign):
            value = self._value(stmt.value, env)
            for target in stmt.targets:
                self._assign(target, stmt.value, value, env)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._assign(stmt.target, stmt.value, self._value(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign) and (holder := _holder(stmt.target)) is not None:
            if isinstance(stmt.op, ast.BitOr):
                current = env.get(holder)
                added = self._dict(stmt.value, env)
                env[holder] = current.merge(added) if isinstance(current, DictVal) else added
        elif isinstance(stmt, ast.Expr):
            call = stmt.value.value if isinstance(stmt.value, ast.Await) else stmt.value
            if isinstance(call, ast.YieldFrom) and isinstance(call.value, ast.Call):
                fill_from(self, call.value, env)  # ``yield from _timer(name, d)``
            elif isinstance(call, ast.Call):
                self._mutation(call, env)
                self._filled(call, env)
        elif isinstance(stmt, ast.Return) and returns is not None and stmt.value is not None:
            self._return(stmt.value, env, returns)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            self.module.index_import(stmt, keep=True)  # an import in a function body binds too
        elif isinstance(stmt, ast.If):
            guard = self._guard(stmt.test)
            saved = self.guard
            self.guard = guard if guard is not None else saved
            taken = narrowed(dict(env), stmt.test, self.tags, taken=True)
            body = self._block(stmt.body, taken, nested, returns)
            self.guard = (guard[0], not guard[1]) if guard is not None else saved
            skipped = narrowed(dict(env), stmt.test, self.tags, taken=False)
            orelse = self._block(stmt.orelse, skipped, nested, returns)
            self.guard = saved
            env = _join(env, body, orelse)
        elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            env = self._loop(stmt, env, nested, returns)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                if isinstance(item.context_expr, ast.Call):
                    fill_from(self, item.context_expr, env)  # ``with timer("gen", d):``
            env = self._block(stmt.body, env, nested, returns)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            branches = [self._block(stmt.body, dict(env), nested, returns)]
            for handler in stmt.handlers:
                branches.append(self._block(handler.body, dict(env), nested, returns))
            env = _join(env, *branches)
            env = self._block(stmt.orelse, env, nested, returns)
            env = self._block(stmt.finalbody, env, nested, returns)
        elif isinstance(stmt, ast.Match):
            cases = [self._block(case.body, dict(env), nested, returns) for case in stmt.cases]
            env = _join(env, *cases)
        return env

    def _loop(
        self,
        stmt: ast.For | ast.AsyncFor | ast.While,
        env: Env,
        nested: list[tuple[ast.stmt, Env]],
        returns: Returns | None,
    ) -> Env:
        """A loop: its body from the entry and what a turn carries to the next, or skipped."""
        inner = dict(env)
        variable = None
        if not isinstance(stmt, ast.While):
            self._bind_loop(stmt.target, stmt.iter, inner)
            variable = self._filtering(stmt, inner)
        if returns is None and self._mentions(stmt):
            inner = self._carried(stmt, inner)
        inner = self._block(stmt.body, inner, nested, returns)
        if variable is not None:
            self.loops.pop(variable, None)
        after = self._block(stmt.orelse, dict(env), nested, returns)
        return _join(env, inner, after)

    def _carried(self, loop: ast.For | ast.AsyncFor | ast.While, entry: Env) -> Env:
        """A loop's entry for its reported pass: what its body carries to the next turn."""
        body = loop.body
        first = self.lines[bisect.bisect_left(self.lines, loop.lineno)]  # it mentions one
        if self.dry or not may_fill(self._text(first + 1, loop.end_lineno or first)):
            return entry  # inside a first pass its turns are carried by the outer loop's
        names = carried_names(body, first)
        if not names:
            return entry  # nothing after the call fills a dict a next turn still holds
        self.dry = True
        try:
            return loop_carried(
                lambda env: self._block(body, env, [], None), self.found, entry, names
            )
        finally:
            self.dry = False

    def _text(self, first: int, last: int) -> bytes:
        """The source of lines ``first`` to ``last``."""
        starts = self.module.line_starts()
        source = self.module.source
        if first > last or first > len(starts):
            return b""
        end = starts[last] if last < len(starts) else len(source)
        return source[starts[first - 1] : end]

    def _closure(self, func: _FuncDef, env: Env) -> None:
        """A nested function that fills a dict of the enclosing one (``all_metrics[k] = v``,
        ``all_metrics.setdefault(k, [])``): the dict holds those keys from the ``def`` on,
        since a closure written to fill it is called; without this they vanish silently."""
        names = _closure_writes(func, env)
        if not names:
            return
        enclosing = self.func
        saved = (self.func, self.params, self.guard, self.pick, self.stmt, self.pending)
        self.func, self.guard, self.pick, self.pending = func, None, "", {}
        self.params = own = set(_params(func))
        inner: Env = dict(env)
        for name in self.params:
            what = f"the parameter `{name}` of `{func.name}` (its value comes from the callers)"
            inner[name] = Opaque(self.module, func, what, parameter=True, param=name)
        inner = self._block(func.body, inner, [], returns=Returns())
        self.func, self.params, self.guard, self.pick, self.stmt, self.pending = saved
        fills: dict[str, DictVal] = {}
        for name in names:
            value = inner.get(name)
            if not isinstance(value, DictVal):
                continue
            # Keys from the closure's own parameters: each call of it says which.
            later = tuple(s for s in value.spreads if s.param in own)
            now = tuple(s for s in value.spreads if s.param not in own)
            env[name] = DictVal(value.keys, value.unresolved, now)
            if later:
                fills[name] = DictVal(spreads=later)
        if not fills:
            return
        if enclosing is not None and not _only_called(enclosing, func.name):
            what = f"the keys `{func.name}` adds from its parameters, where it is passed on"
            for name in fills:
                current = env[name]
                assert isinstance(current, DictVal)
                env[name] = current.merge(DictVal((), (Unresolved(what, self._at(func)),)))
            return
        self.pending[func.name] = (func, fills)

    def _filtering(self, loop: ast.For | ast.AsyncFor, env: Env) -> str | None:
        """A loop over a dict's keys that skips some (``continue``): its variable, registered
        so the keys written in its body are tested per key (see :mod:`.keyfilter`)."""
        target = loop.target
        first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
        if not isinstance(first, ast.Name) or not isinstance(env.get(first.id), KeysOf):
            return None
        if not self._has_word(loop, (b"continue", b"break")) or not has_exit(loop.body):
            return None
        names: dict[str, object] = {}
        if self.func is not None:
            names.update(literal_table(self.func.body))
        self.loops[first.id] = (loop, names)
        return first.id

    def _has_word(self, node: ast.stmt, words: Sequence[bytes]) -> bool:
        """One of ``words`` is in ``node``'s source text (a cheap test before walking it)."""
        starts = self.module.line_starts()
        first = node.lineno - 1
        last = node.end_lineno or node.lineno
        begin = starts[first] if first < len(starts) else len(self.module.source)
        end = starts[last] if last < len(starts) else len(self.module.source)
        text = self.module.source[begin:end]
        return any(word in text for word in words)

    def _loop_test(self, name: str) -> KeyTest | None:
        """The filter deciding whether the current statement runs for a key of loop ``name``."""
        loop = self.loops.get(name)
        stmt = self.stmt
        if loop is None or stmt is None:
            return None
        slot = (id(loop[0]), id(stmt))
        if slot not in self.tests:
            module = self.module
            test: KeyTest | None = KeyTest(
                name,
                tuple(loop[0].body),
                stmt,
                {**_literal_constants(module), **loop[1]},
                module.functions.get,
                self.func.name if self.func is not None else module.shown,
            )
            self.tests[slot] = test if test is not None and test.covers(stmt) else None
        return self.tests[slot]

    def _guard(self, test: ast.expr) -> tuple[str, bool] | None:
        """``if merged:`` / ``if not merged:`` on a parameter: (parameter, when taken)."""
        truthy = True
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, truthy = test.operand, False
        if isinstance(test, ast.Name) and test.id in self.params:
            return test.id, truthy
        return None

    def _return(self, node: ast.expr, env: Env, returns: Returns) -> None:
        if self.guard is not None:
            # Returned only when a parameter is (not) true: the caller's argument decides.
            if self._is_dictish(node, env):
                returns.guarded.append((*self.guard, self._dict(node, env)))
            elif isinstance(node, _OBJECT_EXPRESSIONS):
                self._return_object(node, env, returns)
            return
        if self.pick:
            # ``return {"metrics": metrics, ...}`` with ``returns = "metrics"``: that entry.
            value = _dict_item(node, self.pick) if isinstance(node, ast.Dict) else None
            if value is not None:
                returns.add(self._dict(value, env))
            return
        if isinstance(node, ast.Tuple):
            items = [self._dict(i, env) if self._is_dictish(i, env) else None for i in node.elts]
            if any(item is not None for item in items):
                returns.add(tuple(items))
        elif self._is_dictish(node, env) or (
            isinstance(node, ast.Attribute) and self._holds_object(node.value, env)
        ):
            returns.add(self._dict(node, env))  # ``return out.metrics`` of an object too
        elif isinstance(node, _OBJECT_EXPRESSIONS):
            self._return_object(node, env, returns)

    def _assign(self, target: ast.expr, node: ast.expr, value: Value, env: Env) -> None:
        self.last_target = None  # a receiver's class may change here
        if isinstance(target, ast.Attribute) and (holder := _holder(target)) is not None:
            remember(self.ever, holder, env)
            env[holder] = value  # ``self.metrics = {...}``: followed within the class
        elif isinstance(target, ast.Name):
            env[target.id] = value
            owner = self._dict_class(node) if isinstance(node, ast.Call) else None
            if owner is not None:
                self.typed[target.id] = owner
            else:
                self.typed.pop(target.id, None)
        elif isinstance(target, ast.Subscript) and (holder := _holder(target.value)) is not None:
            self._add_key(holder, target.slice, env, node)
        elif isinstance(target, ast.Tuple | ast.List):
            items = self._unpacked(node, env)
            for index, item in enumerate(target.elts):
                if isinstance(item, ast.Name):
                    got = items.get(index)
                    if got is not None:
                        env[item.id] = got
                    else:
                        what = f"`{item.id}`, unpacked from "
                        env[item.id] = Opaque(self.module, item, what, node)

    def _unpacked(self, node: ast.expr, env: Env) -> dict[int, Value]:
        """The dicts of a tuple a call returns (``batch, metrics = correct(batch)``)."""
        if isinstance(node, ast.Await):
            node = node.value
        if isinstance(node, ast.Tuple):
            elts = enumerate(node.elts)
            return {i: self._dict(e, env) for i, e in elts if self._is_dictish(e, env)}
        if not isinstance(node, ast.Call):
            return {}
        returned = self._returned(node)
        if returned is None:
            return {}
        return {
            index: self._instantiate(item, node, returned[1], env)
            for index, item in returned[0].items.items()
        }

    def _add_key(self, name: str, key: ast.expr, env: Env, value: ast.expr | None = None) -> None:
        """``name[key] = value``: the dict ``name`` gains ``key``."""
        current = env.get(name)
        holder = self._lookup(name, env) if current is None else current
        looped = self._lookup(key.id, env) if isinstance(key, ast.Name) else None
        if isinstance(looped, KeysOf) and isinstance(holder, DictVal) and looped.source is holder:
            return  # ``for k in d: d[k] = f(d[k])`` rewrites keys it already has
        gained = gaining(holder, _valued(self._keys(key, env), value))
        if gained is not None:
            env[name] = gained

    def _mutation(self, call: ast.Call, env: Env) -> None:
        func = call.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name == _GATHER_OBJECT and len(call.args) == 2 and isinstance(call.args[0], ast.Name):
            gathered = self._keylist(call.args[1], env)
            if gathered is not None:
                nest = gathered.nest + 1
                env[call.args[0].id] = KeyList(gathered.source, gathered.name, nest)
            return
        if not isinstance(func, ast.Attribute):
            return
        held = func.value
        if (
            func.attr in _ACCUMULATE
            and isinstance(held, ast.Subscript)
            and (holder := _holder(held.value)) is not None
        ):
            # ``tensors["loss"].append(t)``: a dict of lists gains the key ``loss``.
            self._add_key(holder, held.slice, env)
            return
        if (
            func.attr in _ACCUMULATE
            and isinstance(held, ast.Call)
            and held.args
            and isinstance(held.func, ast.Attribute)
            and held.func.attr == "setdefault"
            and isinstance(held.func.value, ast.Name)
        ):
            # ``groups.setdefault(name, []).append(i)``: ``groups`` gains the key ``name``.
            self._add_key(held.func.value.id, held.args[0], env)
            return
        holder = _holder(held)
        if holder is None:
            return
        name = holder
        if func.attr == "update":
            added = self._arguments_dict(call.args, call.keywords, env)
        elif func.attr == "setdefault" and call.args:
            added = self._keys(call.args[0], env)
        else:
            return
        current = env.get(name) or self._lookup(name, env)
        if isinstance(current, DictVal):
            env[name] = current.merge(added)
        elif isinstance(current, Opaque):
            env[name] = current.as_dict().merge(added)
        else:
            env[name] = added

    def _bind_loop(self, target: ast.expr, iterable: ast.expr, env: Env) -> None:
        listed = self._keylist(iterable, env)
        if listed is not None and isinstance(target, ast.Name):
            # ``for key in sorted(keys)``: each key of the dict (or, nested, each list of them)
            env[target.id] = (
                KeysOf(listed.source, listed.name)
                if listed.nest <= 1
                else KeyList(listed.source, listed.name, listed.nest - 1)
            )
            return
        names = [target] if isinstance(target, ast.Name) else []
        if isinstance(target, ast.Tuple) and target.elts:
            names = [e for e in target.elts if isinstance(e, ast.Name)]
            first = target.elts[0]
        else:
            first = target
        source = iterable
        over_items = False
        if (
            isinstance(source, ast.Call)
            and isinstance(source.func, ast.Attribute)
            and source.func.attr in {"items", "keys"}
            and not source.args
        ):
            over_items = source.func.attr == "items"
            source = source.func.value
        strings = None if over_items else self._strings(source, env)
        for item in names:
            env[item.id] = Opaque(self.module, item, f"the loop variable `{item.id}`")
        if isinstance(first, ast.Name):
            if strings is not None and isinstance(target, ast.Name):
                env[first.id] = strings
            elif self._is_dictish(source, env) or over_items or self._dict_parameter(source):
                env[first.id] = KeysOf(self._dict(source, env), _shown(source))

    def _dict_parameter(self, node: ast.expr) -> bool:
        """``node`` is a parameter annotated as a dict (``log_dict: dict``, ``Dict[str,
        float]``, ``Mapping[...]``): a loop over it (``for key in log_dict``) is over its
        keys, which the callers' arguments give."""
        func = self.func
        if func is None or not isinstance(node, ast.Name) or node.id not in self.params:
            return False
        args = func.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if arg.arg == node.id and arg.annotation is not None:
                annotation = arg.annotation
                if isinstance(annotation, ast.Subscript):
                    annotation = annotation.value
                named = _dotted(annotation) if isinstance(annotation, ast.expr) else None
                return named is not None and named.rpartition(".")[2] in _DICT_TYPES
        return False

    # --- values ---------------------------------------------------------------

    def _at(self, node: ast.AST) -> Where:
        return self.module.where(node)

    def _lookup(self, name: str, env: Env) -> Value | None:
        if name in env:
            return env[name]
        for outer in reversed(self.outer):
            if name in outer:
                return outer[name]
        return None

    def _value(self, node: ast.expr, env: Env) -> Value:
        if self._is_dictish(node, env):
            return self._dict(node, env)
        if isinstance(node, ast.JoinedStr | ast.BinOp | ast.IfExp) or (
            isinstance(node, ast.Call) and _is_format(node)
        ):
            looped = self._looped(node, env)
            if looped is not None:
                # ``new_key = f"{prefix}{key}"`` in a loop over a dict: keys rewritten.
                return KeysOf(self._rekeyed(node, env, *looped), looped[1].name)
        strings = self._strings(node, env)
        if strings is not None:
            return strings
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            if found is not None:
                return found
        listed = self._keylist(node, env)
        if listed is not None:
            return listed
        if isinstance(node, ast.Attribute) and self._holds_object(node.value, env):
            base = self._object(node.value, env)
            if isinstance(base, Instance):
                return Opaque(self.module, node, field_of=base)  # a dict if used as one
        if isinstance(node, _OBJECT_EXPRESSIONS):
            held = self._object_value(node, env)
            if held is not None:
                return held
        return Opaque(self.module, node)

    def _keylist(self, node: ast.expr, env: Env) -> KeyList | None:
        """``list(d.keys())``, ``sorted(d)``, ``{k for ks in gathered for k in ks}``: a
        collection of a dict's keys, or ``None``."""
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            return found if isinstance(found, KeyList) else None
        if isinstance(node, ast.Call) and not node.keywords:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "keys" and not node.args:
                held = func.value
                attribute = self._attribute_dict(held, env)
                if attribute is not None:
                    return KeyList(attribute, _shown(held))
                if isinstance(held, ast.Name) and isinstance(
                    self._lookup(held.id, env), DictVal | Opaque
                ):
                    return KeyList(self._dict(held, env), _shown(held))
                return None
            if isinstance(func, ast.Name) and func.id in _KEY_COLLECTIONS and len(node.args) == 1:
                arg = node.args[0]
                listed = self._keylist(arg, env)
                attribute = self._attribute_dict(arg, env) if listed is None else None
                if attribute is not None:
                    return KeyList(attribute, _shown(arg))  # ``sorted(self.pending)``
                if listed is None and isinstance(arg, ast.Name):
                    found = self._lookup(arg.id, env)
                    if isinstance(found, DictVal):
                        return KeyList(found, arg.id)
                return listed
            return None
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            if not isinstance(node.elt, ast.Name):
                return None
            inner = dict(env)
            for generator in node.generators:
                self._bind_loop(generator.target, generator.iter, inner)
            found = inner.get(node.elt.id)
            if isinstance(found, KeysOf):
                return KeyList(found.source, found.name)
        return None

    def _is_dictish(self, node: ast.expr, env: Env) -> bool:
        if isinstance(node, ast.Dict | ast.DictComp):
            return True
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in _DICT_CALLS or _flat_defaultdict(node):
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr == "copy":
                return self._is_dictish(node.func.value, env)
            if self._producer(node):
                return True
            if self._dict_class(node) is not None:
                return True
            if self._through(node) is not None:
                return True  # ``reduce_metrics(x)``: x's keys, or why they are unknown
            returned = self._returned(node)
            return returned is not None and (
                returned[0].whole is not None or bool(returned[0].guarded)
            )
        if isinstance(node, ast.Name):
            return isinstance(self._lookup(node.id, env), DictVal)
        if self._declared_field(node):
            return True
        if isinstance(node, ast.Attribute | ast.Subscript) and self._attribute_dict(node, env):
            return True
        if isinstance(node, ast.Attribute) and self._holds_dict_field(node, env):
            return True
        if isinstance(node, ast.IfExp):
            return self._is_dictish(node.body, env) or self._is_dictish(node.orelse, env)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._is_dictish(node.left, env) or self._is_dictish(node.right, env)
        if isinstance(node, ast.BoolOp):
            return any(self._is_dictish(item, env) for item in node.values)
        if isinstance(node, ast.Await):
            return self._is_dictish(node.value, env)
        return False

    def _dict(self, node: ast.expr, env: Env) -> DictVal:
        """What the dict expression ``node`` holds."""
        if isinstance(node, ast.Dict):
            return union(
                self._dict(value, env) if key is None else _valued(self._keys(key, env), value)
                for key, value in zip(node.keys, node.values, strict=True)
            )
        if isinstance(node, ast.DictComp):
            inner = dict(env)
            for generator in node.generators:
                self._bind_loop(generator.target, generator.iter, inner)
            return self._keys(node.key, inner)
        if isinstance(node, ast.IfExp):
            return self._dict(node.body, env).merge(self._dict(node.orelse, env))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._dict(node.left, env).merge(self._dict(node.right, env))
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            if isinstance(found, DictVal):
                return found
            if isinstance(found, Opaque) and found.field_of is not None:
                return self._field_value_of(found)
            if isinstance(found, Opaque):
                return found.as_dict()
            if isinstance(found, Instance | Callables):
                what = f"`{node.id}`, an object or function where a dict is expected"
                return DictVal((), (Unresolved(what, self._at(node)),))
        if isinstance(node, ast.BoolOp):
            result = DictVal()
            for item in node.values:  # ``d or {}``: the keys of either
                result = result.merge(self._dict(item, env))
            return result
        if isinstance(node, ast.Await):
            return self._dict(node.value, env)
        if isinstance(node, ast.Call):
            return self._call_dict(node, env)
        if isinstance(node, ast.Constant) and node.value is None:
            return DictVal()  # ``metrics=None``, ``d or None``: no keys
        if self._declared_field(node):
            return DictVal()  # a declared field's keys are logged where they are written
        if isinstance(node, ast.Attribute | ast.Subscript):
            held = self._attribute_dict(node, env)
            if held is None and isinstance(node, ast.Attribute):
                held = self._field_dict(node, env)
            if held is not None:
                return held
        return DictVal((), (Unresolved(_describe(node), self._at(node)),))

    def _arguments_dict(
        self, args: Sequence[ast.expr], keywords: Sequence[ast.keyword], env: Env
    ) -> DictVal:
        """The keys ``dict(*args, **keywords)`` (or ``d.update(...)``) holds: each argument's
        dict, ``**d``'s keys, and each keyword's name."""
        return union(
            [
                *(self._dict(arg, env) for arg in args),
                *(
                    self._dict(kw.value, env)
                    if kw.arg is None
                    else DictVal((Key((kw.arg,), self._at(kw)),))
                    for kw in keywords
                ),
            ]
        )

    def _attribute_dict(self, node: ast.expr, env: Env | None = None) -> DictVal | None:
        """``self.metrics`` (or ``self.metrics[mode]``, its inner dicts): the keys every
        method of the class writes into it, or ``None``; read with ``env``, the method's
        own writes are those made before the read (see :mod:`.own_writes`)."""
        holder = _holder(node)
        if holder is None or not holder.startswith("self.") or self.cls is None:
            return None
        attr = holder.removeprefix("self.")
        if env is not None and is_plain_attribute(node):
            reader = self._method()
            folded = self.project.attribute_dict(self.module, self.cls, attr, self.depth, reader)
            return read_here(folded, self._lookup(holder, env))
        value = self.project.attribute_dict(self.module, self.cls, attr, self.depth)
        if value is not None and isinstance(node, ast.Subscript):
            self.tags.update(read_tags(node, value, self.module, self.cls))
        return value

    def _method(self) -> _FuncDef | None:
        """The method of ``self.cls`` being read (``None`` in a nested function)."""
        info = self.module.full().classes.get(self.cls or "")
        func = self.func
        if info is None or func is None or info.methods.get(func.name) is not func:
            return None
        return func

    def collect(self, func: _FuncDef) -> Env:
        """The variables after ``func``'s body, ``self.metrics`` holders included; a
        parameter's keys are unresolved where the function starts (its callers are not
        followed)."""
        self.func, self.pending = func, {}
        self.params = set(_params(func))
        env: Env = {}
        for name in self.params:
            what = f"the parameter `{name}` of `{func.name}`"
            env[name] = Opaque(self.module, func, what, parameter=True)
        self.ever = {}
        return ever_held(self._block(func.body, env, [], returns=Returns()), self.ever)

    def _call_dict(self, node: ast.Call, env: Env) -> DictVal:
        name = _dotted(node.func)
        flat = _flat_defaultdict(node)
        if name in _DICT_CALLS or flat:
            # ``defaultdict(list)``: the first argument is the factory, not a dict of keys
            return self._arguments_dict(node.args[1:] if flat else node.args, node.keywords, env)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
            return self._dict(node.func.value, env)
        if self._producer(node):
            return DictVal()  # a declared producer's keys are logged where it returns them
        if self._dict_class(node) is not None:
            return DictVal()  # ``Tensors()``: a new, empty dict subclass
        through = self._through(node)
        if through is not None:
            return self._dict(through, env)
        returned = self._returned(node)
        if returned is not None:
            value = self._guarded(returned[0], node, returned[1])
            if value is not None:
                return self._instantiate(value, node, returned[1], env)
        return DictVal((), (Unresolved(_describe(node), self._at(node)),))

    def _guarded(
        self, returned: Returns, call: ast.Call, arguments: dict[str, ast.expr]
    ) -> DictVal | None:
        """The returned dict, with the dicts of branches this call's arguments cannot take."""
        value = returned.whole
        target = self._function(call.func) if returned.guarded else None
        defaults = _defaults(target[1]) if target is not None else {}
        for param, when, part in returned.guarded:
            given = arguments.get(param, defaults.get(param))
            if isinstance(given, ast.Constant) and bool(given.value) is not when:
                continue  # ``_validate()`` with ``merged=False``: that return is not taken
            value = part if value is None else value.merge(part)
        return value

    def _dict_class(self, node: ast.Call) -> tuple[Module, str] | None:
        """``Tensors()`` of a scanned ``class Tensors(defaultdict)``: where the class is."""
        func = node.func
        if not isinstance(func, ast.Name) or func.id in _KEY_COLLECTIONS:
            return None
        found = self.project.class_named(self.module, func.id)
        if found is None:
            return None
        module, name = found
        info = module.classes.get(name)
        if info is None or not any(b.rpartition(".")[2] in _DICT_BASES for b in info.bases):
            return None
        return module, name

    def _declared_field(self, node: ast.expr) -> bool:
        """``exp.info`` or ``out.meta_info["metrics"]`` for a ``field`` entry of scan-calls."""
        for spec in self.project.fields:
            head, _, tail = spec.field.partition(".")
            if not tail and _is_field(node, head):
                return True
            if (
                tail
                and isinstance(node, ast.Subscript)
                and _is_field(node.value, head)
                and _literal(node.slice) == tail
            ):
                return True
        return False

    def _producer(self, node: ast.Call) -> bool:
        """A call of a function scan-calls declares with ``returns``."""
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return any(spec.name == name for spec in self.project.producers)

    def _through(self, node: ast.Call) -> ast.expr | None:
        """The argument a pass-through call (``all_reduce(d)``) hands back with its keys."""
        spec = self._match(node, self.project.throughs)
        if spec is None or spec.through is None:
            return None
        return self._argument(node, spec.through.position, spec.through.keywords)

    def _returned(self, node: ast.Call) -> tuple[Returns, dict[str, ast.expr]] | None:
        """What the scanned function ``node`` calls returns, with the arguments it is passed."""
        target = self._function(node.func)
        if target is None:
            return None
        module, func, cls = target
        returned = self.project.returned(module, func, cls, self.depth)
        if cls is not None and is_abstract(func):
            returned = self._overridden(cls, func.name) or returned
        bound = _bind(node, func, method=cls is not None)
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        positional = func.args.posonlyargs + func.args.args
        if isinstance(receiver, ast.Name) and receiver.id in self.typed and positional:
            bound[positional[0].arg] = receiver  # ``tensors.compute_stats()``: self's keys
        return returned, bound

    def _overridden(self, cls: str, name: str) -> Returns | None:
        """What the scanned overrides of an abstract method return, merged (see
        :mod:`.dispatch`); ``None`` when no override returns a dict."""
        merged = Returns()
        for module, func, owner in overrides(self.project, cls, name):
            returned = self.project.returned(module, func, owner, self.depth)
            if returned.whole is not None:
                merged.add(returned.whole)
            for index, item in returned.items.items():
                merged.add(tuple(item if i == index else None for i in range(index + 1)))
        return None if merged.whole is None and not merged.items else merged

    def _instantiate(
        self, value: DictVal, call: ast.Call, arguments: dict[str, ast.expr], env: Env
    ) -> DictVal:
        """A callee's dict with the keys of the dicts the caller passes for its parameters,
        and the strings it passes for parameters written into keys (``f"{prefix}/min"``)."""
        value = self._fill(value, call, arguments, env)
        if not value.spreads:
            return value
        result = DictVal(value.keys, value.unresolved)
        for spread in value.spreads:
            argument = arguments.get(spread.param)
            if argument is None:
                continue  # left at its default (``metrics=None``): no keys from the caller
            result = result.merge(spread_into(spread, self._reach(argument, spread.path, env)))
        return result

    def _fill(
        self, value: DictVal, call: ast.Call, arguments: dict[str, ast.expr], env: Env
    ) -> DictVal:
        """Keys with holes for the callee's parameters, filled with the caller's strings."""
        shapes = [k.shape for k in value.keys] + [s.template for s in value.spreads]
        if not any(isinstance(p, Hole) and p.param for shape in shapes for p in shape):
            return value
        target = self._returned_target(call)
        defaults = _defaults(target[1]) if target is not None else {}
        keys = [
            Key(shape, key.where)
            for key in value.keys
            for shape in self._filled_shape(key.shape, arguments, defaults, env)
        ]
        spreads = [
            dataclasses.replace(spread, template=shape)
            for spread in value.spreads
            for shape in self._filled_shape(spread.template, arguments, defaults, env)
        ]
        return DictVal(tuple(dict.fromkeys(keys)), value.unresolved, tuple(dict.fromkeys(spreads)))

    def _filled_shape(
        self,
        shape: Shape,
        arguments: dict[str, ast.expr],
        defaults: dict[str, ast.expr],
        env: Env,
    ) -> list[Shape]:
        shapes: list[Shape] = [()]
        for part in shape:
            options: Sequence[Shape] = ((part,),)
            if isinstance(part, Hole) and part.param:
                given = arguments.get(part.param, defaults.get(part.param))
                if given is not None:
                    options = self._part(given, env, True)
                else:
                    options = ((Hole(part.text),),)
            shapes = [_concat(a, b) for a in shapes for b in options][:MAX_ALTERNATIVES]
        return shapes

    def _returned_target(self, call: ast.Call) -> tuple[Module, _FuncDef, str | None] | None:
        return self._function(call.func)

    def _filled(self, call: ast.Call, env: Env) -> None:
        """Keys a called function adds to dicts the caller passes (``_balance(b, metrics=m)``)."""
        passed = [
            a for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name)
        ]
        if not any(isinstance(self._lookup(a.id, env), DictVal) for a in passed):
            return
        returned = self._returned(call)
        if returned is None or not returned[0].filled:
            return
        for param, added in returned[0].filled.items():
            argument = returned[1].get(param)
            if isinstance(argument, ast.Name):
                current = self._lookup(argument.id, env)
                if isinstance(current, DictVal):
                    filled = self._instantiate(added, call, returned[1], env)
                    env[argument.id] = current.merge(filled)

    def _function(self, func: ast.expr) -> tuple[Module, _FuncDef, str | None] | None:
        """The scanned function a call goes to: same module, same class, or imported."""
        last = self.last_target
        if last is not None and last[0] is func:
            return last[1]  # asked twice for one call (is it a dict? an object?)
        target = self._resolve_function(func)
        self.last_target = (func, target)
        return target

    def _resolve_function(self, func: ast.expr) -> tuple[Module, _FuncDef, str | None] | None:
        module = self.module
        if isinstance(func, ast.Name):
            if func.id in module.functions:
                return module, module.functions[func.id], None
            imported = module.imports.get(func.id)
            if imported is not None and imported[1] is not None:
                source = self.project.find_module(imported[0], imported[2], module)
                if source is not None and imported[1] in source.full().functions:
                    return source, source.functions[imported[1]], None
            return None
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return None
        owner = func.value.id
        if owner in {"self", "cls"} and self.cls is not None:
            return self.project.method(module, self.cls, func.attr)
        if owner in self.typed:
            home, cls = self.typed[owner]
            return self.project.method(home, cls, func.attr)
        if owner in module.classes and func.attr in module.classes[owner].methods:
            return module, module.classes[owner].methods[func.attr], owner
        imported = module.imports.get(owner)
        if imported is not None:
            name, attr, level = imported
            source = self.project.find_module(_joined(name, attr), level, module)
            if source is not None and func.attr in source.full().functions:
                return source, source.functions[func.attr], None
        return None

    def _keys(self, node: ast.expr, env: Env) -> DictVal:
        """The key expression ``node`` as keys, or why it cannot be resolved."""
        looped = self._looped(node, env)
        if looped is not None:
            return self._rekeyed(node, env, *looped)
        strings = self._strings(node, env, whole=True)
        if isinstance(strings, StrVal):
            where = self._at(node)
            return DictVal(tuple(Key(shape, where) for shape in strings.shapes))
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            if isinstance(found, Opaque) and found.parameter:
                # ``d[name] = v`` of a parameter: the callers' strings fill it, if followed.
                hole = Hole(node.id, param=found.param or node.id)
                return DictVal((Key((hole,), self._at(node)),))
        # A key only known at run time: a hole, written (and reported) here.
        return DictVal((Key((Hole(_shown(node)),), self._at(node)),))

    def _looped(self, node: ast.expr, env: Env) -> tuple[str, KeysOf] | None:
        """The loop variable over a dict's keys that ``node`` uses (``"train/%s" % k``), if any."""
        for name in self.project.names_in(node):
            found = self._lookup(name, env)
            if isinstance(found, KeysOf):
                return name, found
        return None

    def _rekeyed(self, node: ast.expr, env: Env, name: str, looped: KeysOf) -> DictVal:
        """Each key of the looped dict as ``node`` rewrites it: a template around the key."""
        inner = dict(env)
        inner[name] = StrVal(((SLOT,),))
        strings = self._strings(node, inner, whole=True)
        if strings is None:
            what = f"a key computed by `{_shown(node)}` from the keys of `{looped.name}`"
            return DictVal((), (Unresolved(what, self._at(node)),))
        source = looped.source
        test = self._loop_test(name)
        if test is not None:
            source = spread_into(Spread("", (SLOT,), ((test, (SLOT,)),)), source)
        where = self._at(node)
        result = DictVal()
        for template in strings.shapes:
            if SLOT not in template:
                result = result.merge(DictVal((Key(template, where),)))
                continue
            result = result.merge(rewrite(DictVal(source.keys, (), source.spreads), template))
            for origin in source.unresolved:
                # Keys of a dict the scanner cannot follow: known up to a hole, reported
                # where that dict enters (``f"val/{name}"`` over an unknown dict's names).
                hole = substitute(template, (Hole(name),))
                result = result.merge(DictVal((Key(hole, origin.where, origin.what),)))
        return result

    def _sum(self, operands: list[ast.expr], env: Env) -> StrVal | None:
        """``a + b + ...`` folded left to right (a loop: a chain of 2,000 literals is fine)."""
        values = [self._strings(operand, env) for operand in operands]
        if all(value is None for value in values):
            return None
        shapes: list[Shape] = [()]
        for operand, value in zip(operands, values, strict=True):
            options = value.shapes if value else self._part(operand, env, True)
            shapes = [_concat(a, b) for a in shapes for b in options][:MAX_ALTERNATIVES]
        return StrVal(tuple(shapes))

    def _strings(self, node: ast.expr, env: Env, *, whole: bool = False) -> StrVal | None:
        """The string values of ``node`` (holes for unknown parts), or ``None``.

        ``None`` means the expression is not recognisably a string at all (a bare
        variable the scanner cannot follow); an f-string or a concatenation with
        a literal is one, with holes for what is unknown.
        """
        if isinstance(node, ast.Constant):
            return StrVal(((node.value,),)) if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            shapes: list[Shape] = [()]
            for part in node.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    options: Sequence[Shape] = ((part.value,),)
                elif isinstance(part, ast.FormattedValue):
                    plain = part.format_spec is None and part.conversion in (-1, 115)
                    options = self._part(part.value, env, plain)
                else:
                    return None
                shapes = [_concat(a, b) for a in shapes for b in options][:MAX_ALTERNATIVES]
            return StrVal(tuple(shapes))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return self._percent(node, env)
        if isinstance(node, ast.Call) and _is_format(node):
            return self._format(node, env)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._sum(_added(node), env)
        if isinstance(node, ast.IfExp):
            body = self._strings(node.body, env)
            orelse = self._strings(node.orelse, env)
            if body is None or orelse is None:
                return None
            return StrVal(tuple(dict.fromkeys(body.shapes + orelse.shapes)))
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and not whole:
            items = [self._strings(item, env) for item in node.elts]
            if not items or any(item is None for item in items):
                return None
            return StrVal(tuple(shape for item in items if item for shape in item.shapes))
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            if isinstance(found, StrVal):
                return found
            if isinstance(found, KeysOf) and found.source.keys and not found.source.unresolved:
                return StrVal(tuple(dict.fromkeys(k.shape for k in found.source.keys)))
            if found is None:
                return self._constant(self.module, node.id, set())
            return None
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name):
                return self._attribute_constant(node.value.id, node.attr)
            if isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name):
                # ``ppo.VALUE_LOSS.prefix``: a field of a row a generated module declares.
                source = self._imported_module(node.value.value.id)
                if source is not None:
                    return self._field(source, node.value.attr, node.attr)
        return None

    def _part(self, node: ast.expr | None, env: Env, plain: bool) -> Sequence[Shape]:
        """The values of one formatted field; a hole when unknown or formatted (``%.2f``)."""
        if node is None:
            return (("",),)
        known = self._strings(node, env, whole=True) if plain else None
        if known is not None:
            return known.shapes
        if plain and isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            if isinstance(found, Opaque) and found.param:
                return ((Hole(node.id, param=found.param),),)  # the callers fill it
        return ((Hole(_shown(node)),),)

    def _percent(self, node: ast.BinOp, env: Env) -> StrVal | None:
        """``"train/%s" % k`` and ``"%s/%s" % (a, b)``: printf-style formatting of a literal."""
        if not (isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)):
            return None
        right = node.right
        items = list(right.elts) if isinstance(right, ast.Tuple) else [right]
        named = right if isinstance(right, ast.Dict) else None
        shapes: list[Shape] = [()]
        position = 0
        text = node.left.value
        last = 0
        for found in _PERCENT.finditer(text):
            literal = text[last : found.start()]
            last = found.end()
            spec = found.group(0)
            if spec == "%%":
                shapes = [_concat(shape, (literal + "%",)) for shape in shapes]
                continue
            if found.group("name") is not None:
                value = _dict_item(named, found.group("name")) if named is not None else None
            elif position < len(items) and not isinstance(items[position], ast.Starred):
                value = items[position]
                position += 1
            else:
                return None
            plain = found.group("kind") in "sr" and found.group("flags") == ""
            options = self._part(value, env, plain and value is not None)
            shapes = [_concat(a, (literal,), b) for a in shapes for b in options]
            shapes = shapes[:MAX_ALTERNATIVES]
        return StrVal(tuple(_concat(shape, (text[last:],)) for shape in shapes))

    def _format(self, node: ast.Call, env: Env) -> StrVal | None:
        """``"{}/{stat}".format(name, stat=s)``: ``str.format`` of a literal."""
        assert isinstance(node.func, ast.Attribute)
        assert isinstance(node.func.value, ast.Constant)
        text = node.func.value.value
        assert isinstance(text, str)
        keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
        try:
            fields = list(string.Formatter().parse(text))
        except ValueError:
            return None
        shapes: list[Shape] = [()]
        automatic = 0
        for literal, name, spec, conversion in fields:
            shapes = [_concat(shape, (literal,)) for shape in shapes]
            if name is None:
                continue
            value: ast.expr | None
            if name == "":
                value = node.args[automatic] if automatic < len(node.args) else None
                automatic += 1
            elif name.isdigit():
                index = int(name)
                value = node.args[index] if index < len(node.args) else None
            else:
                value = keywords.get(name)
            if value is None or isinstance(value, ast.Starred):
                return None
            plain = not spec and conversion in (None, "s")
            options = self._part(value, env, plain)
            shapes = [_concat(a, b) for a in shapes for b in options][:MAX_ALTERNATIVES]
        return StrVal(tuple(shapes))

    def _field(self, module: Module, name: str, field_name: str) -> StrVal | None:
        """A string keyword of a module-level call: ``X = TeedMetric(prefix="train")``."""
        expr = module.constants.get(name)
        if not isinstance(expr, ast.Call):
            return None
        if field_name == "logged_key":  # ``T.TRAIN_LOSS.logged_key``: a property of the row
            return self._logged_key(module, name)
        for keyword in expr.keywords:
            if keyword.arg == field_name:
                return _Scanner(self.project, module, []).constant_value(keyword.value, set())
        return None

    def _logged_key(self, module: Module, name: str) -> StrVal | None:
        """``TeedMetric.logged_key`` of the row ``name`` declares: its ``prefix`` and
        ``logger_key`` joined as the runtime joins them (``qualified_key``); ``None`` unless
        both are literal text."""
        prefix = self._field(module, name, "prefix") or StrVal(((),))
        key = self._field(module, name, "logger_key")
        if key is None or len(prefix.shapes) != 1 or len(key.shapes) != 1:
            return None
        head, tail = "".join(map(str, prefix.shapes[0])), "".join(map(str, key.shapes[0]))
        return StrVal(((qualified_key(head, tail),),))

    def _imported_module(self, name: str) -> Module | None:
        imported = self.module.imports.get(name)
        if imported is None:
            return None
        module, attr, level = imported
        return self.project.find_module(_joined(module, attr), level, self.module)

    def _constant(self, module: Module, name: str, seen: set[tuple[str, str]]) -> StrVal | None:
        """A module-level string constant (or one imported from a scanned module)."""
        slot = (module.real, name)
        if slot in seen:
            return None
        seen.add(slot)
        expr = module.constants.get(name)
        if expr is not None:
            return _Scanner(self.project, module, []).constant_value(expr, seen)
        imported = module.imports.get(name)
        if imported is not None and imported[1] is not None:
            source = self.project.find_module(imported[0], imported[2], module)
            if source is not None:
                return self._constant(source, imported[1], seen)
        return None

    def constant_value(self, expr: ast.expr, seen: set[tuple[str, str]]) -> StrVal | None:
        """A constant's string values, following names to other constants."""
        if isinstance(expr, ast.Name):
            return self._constant(self.module, expr.id, seen)
        if isinstance(expr, ast.Constant | ast.JoinedStr | ast.BinOp | ast.Tuple | ast.List):
            result = self._strings(expr, {})
            if result is not None and all(
                all(isinstance(part, str) for part in shape) for shape in result.shapes
            ):
                return result
        return None

    def _attribute_constant(self, owner: str, attr: str) -> StrVal | None:
        module = self.module
        cls = self.cls if owner in {"self", "cls"} else owner
        if cls is not None and cls in module.classes:
            expr = module.classes[cls].constants.get(attr)
            if expr is not None:
                return self.constant_value(expr, set())
        if owner in module.constants:
            return self._field(module, owner, attr)
        source = self._imported_module(owner)
        if source is not None:
            return self._constant(source, attr, set())
        return None

    # --- logging calls --------------------------------------------------------

    def _calls_in(self, stmt: ast.stmt, env: Env) -> None:
        """Find the scanned calls in ``stmt``'s own expressions (not nested blocks)."""
        if not self._mentions(stmt):
            return
        if self.fields:
            self._field_writes(stmt, env)
        for node in _own_expressions(stmt):
            for inner in self._calls_on_lines(node):
                spec = self._match(inner, self.calls)
                if spec is not None:
                    self._log_call(inner, spec, env)
                elif self.wrappers:
                    for wrapper in self._wrapper(inner):
                        self._log_wrapped(inner, wrapper, env)

    def _calls_on_lines(self, node: ast.expr) -> list[ast.Call]:
        """The calls in ``node`` (outermost first) whose text spans a line naming a scanned
        call: subexpressions on other lines are not walked."""
        found: list[ast.Call] = []
        lines = self.lines
        stack: list[ast.AST] = [node]
        while stack:
            item = stack.pop()
            start = getattr(item, "lineno", None)
            if start is not None:
                end = getattr(item, "end_lineno", None) or start
                index = bisect.bisect_left(lines, start)
                if index >= len(lines) or lines[index] > end:
                    continue
                if isinstance(item, ast.Call):
                    found.append(item)
            stack.extend(reversed(children(item)))
        return found

    def _wrapper(self, call: ast.Call) -> list[Wrapper]:
        """The wrappers ``call`` may go to: the one it resolves to, else every function of
        its name when each of them is a wrapper (``self.logger.log_train(...)``)."""
        func = call.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        wrappers = self.wrappers.get(name or "")
        if not wrappers:
            return []
        target = self._function(func)
        if target is not None:
            return [w for w in wrappers if target[1] is w.func]
        if not isinstance(func, ast.Attribute):
            return []
        head = _dotted(func.value)
        if head is not None and head.partition(".")[0] in self.module.imports:
            return []  # ``np.log(x)``: a module's function, not the wrapper
        all_wrappers = self.project.wrappers.get(wrappers[0].name, [])
        return wrappers if self.project.defined(wrappers[0].name) == len(all_wrappers) else []

    def _log_wrapped(self, call: ast.Call, wrapper: Wrapper, env: Env) -> None:
        """A call of a wrapper: each logging call inside it logs the argument's keys."""
        wrapper.used = True
        method = wrapper.cls is not None
        arguments = _bind(call, wrapper.func, method=method)
        for logged in self.project.wrapped_by(wrapper):
            value = DictVal()
            for spread in logged.spreads:
                argument = arguments.get(spread.param)
                if argument is not None:
                    given = self._reach(argument, spread.path, env)
                    value = value.merge(spread_into(spread, given))
            if value.empty():
                continue
            self._found(logged, call, self._params_filled(value, arguments, env))

    def _params_filled(self, value: DictVal, arguments: dict[str, ast.expr], env: Env) -> DictVal:
        """``value``'s keys with each hole a wrapper's parameter left (``f"{name}/{key}"``)
        filled by the string the call passes there (``gather("multi_turn", d)``)."""
        keys: list[Key] = []
        for key in value.keys:
            shapes: list[Shape] = [()]
            for part in key.shape:
                given = arguments.get(part.param) if isinstance(part, Hole) else None
                options = (
                    self._part(given, env, True)
                    if isinstance(part, Hole) and part.param and given is not None
                    else ((part,),)
                )
                shapes = [_concat(a, b) for a in shapes for b in options][:MAX_ALTERNATIVES]
            keys.extend(dataclasses.replace(key, shape=shape) for shape in shapes)
        return dataclasses.replace(value, keys=tuple(dict.fromkeys(keys)))

    def _found(self, inner: Logged, call: ast.Call, value: DictVal) -> None:
        inside = self._inside() if value.spreads else None
        self.found.append(
            Logged(
                _shown(call.func),
                self._at(call),
                inner.spec,
                inner.prefixes,
                inner.flat,
                value.keys,
                value.unresolved,
                value.spreads if inside is not None else (),
                inside,
            )
        )

    def _named_like_a_call(self) -> bool:
        """In a function whose callers are matched as scanned calls (by its name, or as an
        override of a qualified one): those calls are judged, so it is no wrapper."""
        func = self.func
        return func is not None and named_like_its_callers_match(
            self.project, self.module, self.cls, func.name, self.project.calls
        )

    def _inside(self) -> Wrapper | None:
        func = self.func
        if func is None or self._named_like_a_call():
            return None  # its calls are matched already
        return Wrapper(self.module, func, self.cls, self._at(func))

    def _field_writes(self, stmt: ast.stmt, env: Env) -> None:
        """Keys written into a declared producer field (``exp.info["kl"] = v``)."""
        for spec in self.fields:
            for node, value in _field_targets(stmt, spec.field):
                added = self._keys(node, env) if value is None else self._dict(value, env)
                added = rewrite(added, (spec.key_prefix, SLOT))
                shown = f"field {spec.field}"
                where = self._at(node)
                logged = Logged(shown, where, spec, ((),), True, added.keys, added.unresolved)
                self.found.append(logged)

    def _instances(self) -> dict[str, set[str]]:
        """Receivers assigned ``Cls(...)`` (or a module: ``self._wandb = wandb``) or annotated
        ``Cls`` in this file, read from the text (a regular expression, not a second walk)."""
        module = self.module
        if module.instances is not None:
            return module.instances
        found: dict[str, set[str]] = {}
        names = set(self.project.qualifiers)
        if any(name.encode() in module.source for name in names):
            text = module.source.decode("utf-8", "replace")
            # A binding never spans lines, and one naming a class names it on its line: the
            # lines holding a class name give every class binding without matching the whole
            # text (the pattern matches at every name, most of a file's cost).
            for receiver, annotation, value in _bindings(_lines_with(text, names)):
                cls = (value or annotation).rpartition(".")[2]
                if cls in names:
                    found.setdefault(receiver, set()).add(cls)
            if found:
                found = _aliased(text, found, names)
        module.instances = found
        return found

    def _match(self, call: ast.Call, specs: Sequence[ScanCall]) -> ScanCall | None:
        func = call.func
        if isinstance(func, ast.Name):
            name = func.id
        elif isinstance(func, ast.Attribute):
            name = func.attr
        else:
            return None
        if name not in self.project.names_of(specs):
            if isinstance(func, ast.Name) and _CALLED in self.project.names_of(specs):
                return self._called_value(name, specs)
            return None  # most calls: no receiver to read
        receiver = _dotted(func.value) if isinstance(func, ast.Attribute) else None
        for spec in specs:
            if spec.name != name:
                continue
            qualifier = spec.qualifier
            if qualifier is None:
                if module_function(self.module.imports, receiver):
                    continue  # ``math.log(x)``: a module's function, not a logging method
                return spec
            if subclass_call(self.project, self.module, self.cls, func, qualifier):
                return spec  # ``super().log(logs)`` in a subclass of ``Trainer``
            full = self._normalise(receiver, name)
            if full is not None and (full == spec.call or full.endswith("." + spec.call)):
                return spec
            if (
                receiver not in {None, "self"}  # ``self.log``: the class itself (see above)
                and "." not in qualifier
                and qualifier in self._instances().get(receiver or "", ())
            ):
                return spec
        if isinstance(func, ast.Name) and _CALLED in self.project.names_of(specs):
            return self._called_value(name, specs)
        return None

    def _called_value(self, name: str, specs: Sequence[ScanCall]) -> ScanCall | None:
        """``log({...})`` where ``log = tee_wandb_log(run)``: a call of what a known function
        returned (an entry ``tee_wandb_log.__call__``), whatever the user named it."""
        bound = self._instances().get(name)
        if not bound:
            return None
        return next((s for s in specs if s.name == _CALLED and s.qualifier in bound), None)

    def _normalise(self, receiver: str | None, name: str) -> str | None:
        """``wb.log`` -> ``wandb.log`` through ``import wandb as wb``; ``None``: unknown."""
        if receiver is None:
            imported = self.module.imports.get(name)
            if imported is None or imported[1] is None:
                return None
            return f"{imported[0]}.{imported[1]}" if imported[0] else imported[1]
        head, dot, rest = receiver.partition(".")
        imported = self.module.imports.get(head)
        if imported is not None:
            head = _joined(imported[0], imported[1])
        return f"{head}{dot}{rest}.{name}"

    def _argument(
        self, call: ast.Call, position: int | None, keywords: tuple[str, ...]
    ) -> ast.expr | None:
        for item in call.keywords:
            if item.arg is not None and item.arg in keywords:
                return item.value
        if position is not None and position < len(call.args):
            if any(isinstance(arg, ast.Starred) for arg in call.args[: position + 1]):
                return None
            return call.args[position]
        return None

    def _forwarded(self, node: ast.expr) -> bool:
        """A logging function passing its own parameter on (``def log_metrics(m): w.log(m)``)."""
        if self.func is None or not isinstance(node, ast.Name) or node.id not in self.params:
            return False
        return self._named_like_a_call()

    def _extended(self, node: ast.expr, env: Env) -> bool:
        """A forwarded parameter the function added keys to first (``logs.update(metrics)``
        before ``super().log(logs)``): those keys are logged here."""
        found = self._lookup(node.id, env) if isinstance(node, ast.Name) else None
        return isinstance(found, DictVal) and bool(found.keys or found.unresolved)

    def _log_call(self, call: ast.Call, spec: ScanCall, env: Env) -> None:
        where = self._at(call)
        shown = _shown(call.func)
        unresolved: list[Unresolved] = []
        prefixes: tuple[Shape, ...] | None = None
        if spec.prefix is not None:
            node = self._argument(call, spec.prefix.position, spec.prefix.keywords)
            if node is None:
                prefixes = ((),)
            elif not self._forwarded(node):
                strings = self._strings(node, env, whole=True)
                if strings is None:
                    what = f"the prefix `{_shown(node)}`"
                    found = self._lookup(node.id, env) if isinstance(node, ast.Name) else None
                    if isinstance(found, Opaque):
                        what += f" ({found.why.what})"
                    unresolved.append(Unresolved(what, self._at(node)))
                else:
                    prefixes = tuple(_namespace(shape) for shape in strings.shapes)
        argument = spec.metrics or spec.key
        assert argument is not None
        node = self._argument(call, argument.position, argument.keywords)
        if node is None:
            if any(k.arg is None for k in call.keywords) or any(
                isinstance(a, ast.Starred) for a in call.args
            ):
                what = f"the argument {argument.describe()} of `{shown}` (passed by * or **)"
                unresolved.append(Unresolved(what, where))
            else:
                return  # not a logging call of this shape (another function of that name)
            value = DictVal()
        elif self._forwarded(node) and not self._extended(node, env):
            return
        elif spec.metrics is not None:
            if spec.dict_only and self._not_a_dict(node, env):
                return  # ``monitors.log([episode])``: the entry logs dicts only
            value = self._dict(node, env)
        else:
            value = self._keys(node, env)
        value = rewrite(value, (spec.key_prefix, SLOT))
        unresolved += value.unresolved
        flat = spec.prefix is None
        inside = self._inside() if value.spreads else None
        if value.spreads and inside is None and not self._named_like_a_call():
            params = ", ".join(sorted({s.param for s in value.spreads}))
            unresolved.append(Unresolved(f"the keys of the parameter(s) {params}", where))
        spreads = value.spreads if inside is not None else ()
        logged = Logged(
            shown, where, spec, prefixes, flat, value.keys, tuple(unresolved), spreads, inside
        )
        self.found.append(logged)

    def _not_a_dict(self, node: ast.expr, env: Env) -> bool:
        """Visibly something else than a dict: a list or tuple, an attribute, a name not a dict."""
        if self._is_dictish(node, env):
            return False
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.ListComp | ast.GeneratorExp):
            return True
        if isinstance(node, ast.Constant | ast.JoinedStr | ast.UnaryOp | ast.Compare):
            return True  # ``log(1e-08)``: a number or a string is no dict
        if isinstance(node, ast.Attribute | ast.Subscript):
            return True
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            return not (isinstance(found, Opaque) and found.param)
        return False


_BINDING: Final = re.compile(
    r"(?P<receiver>[A-Za-z_][\w.]*)[ \t]*"
    r"(?::[ \t]*(?P<annotation>[A-Za-z_][\w.]*)[^=\n,)]*)?"
    r"(?:=[ \t]*(?P<value>[A-Za-z_][\w.]*)[ \t]*(?:\(|$))?",
    re.MULTILINE,
)
"""``x = Cls(``, ``self.w = wandb``, ``x: Cls = ...`` and ``def f(x: Cls)``: a receiver's class."""


_CALLED: Final = "__call__"
"""The name of an entry that logs through the value a call returned (``tee_wandb_log.__call__``:
``log = tee_wandb_log(run)`` then ``log({...})``)."""


def _bindings(text: str) -> list[tuple[str, str, str]]:
    """``(receiver, annotation, value)`` of each :data:`_BINDING` match binding something (a
    name alone binds nothing), in the text's order; an absent part is ``""``."""
    return [found for found in _BINDING.findall(text) if found[1] or found[2]]


def _aliased(text: str, classes: dict[str, set[str]], names: set[str]) -> dict[str, set[str]]:
    """``classes`` with the receivers bound to one of its receivers, in the text's order:
    ``def __init__(self, tracker: Tracking): self.tracker = tracker`` gives ``self.tracker``
    what the annotated parameter holds.

    Only lines holding a receiver's name can bind to it: those lines are matched, again
    with the receivers they added until none is added (a chain of aliases), which gives
    what matching the whole text would.
    """
    keys = set(classes)
    while True:
        found = {receiver: set(held) for receiver, held in classes.items()}
        for receiver, annotation, value in _bindings(_lines_with(text, keys)):
            if annotation or value not in found or receiver == value:
                continue
            if value.rpartition(".")[2] not in names:
                found.setdefault(receiver, set()).update(found[value])
        if found.keys() <= keys:
            return found
        keys |= found.keys()


def _lines_with(text: str, names: Iterable[str]) -> str:
    """The lines of ``text`` holding one of ``names``, in order, each once."""
    starts: set[int] = set()
    for name in names:
        at = text.find(name)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find(name, at + len(name))
    lines = []
    for start in sorted(starts):
        end = text.find("\n", start)
        lines.append(text[start:] if end < 0 else text[start:end])
    return "\n".join(lines)


_OBJECT_EXPRESSIONS: Final = (ast.Call, ast.Name, ast.Await)
"""Expressions that may hold an object or a function (see :mod:`.objects`)."""

_KEY_COLLECTIONS: Final = frozenset({"list", "sorted", "set", "tuple", "frozenset"})
"""Calls that make a collection of their argument's items (a dict's: its keys)."""

_ACCUMULATE: Final = frozenset({"append", "extend", "add", "update"})
"""``d[k].append(v)`` and the like: ``d`` (a dict of lists or sets) holds ``k``."""

_PERCENT: Final = re.compile(
    r"%(?:\((?P<name>[^)]*)\))?(?P<flags>[-#0 +]*\d*(?:\.\d+)?)(?P<kind>[diouxXeEfFgGcrsa%])"
)
"""One printf-style conversion (``%s``, ``%(name)s``, ``%.2f``, ``%%``)."""


def _calls_named(
    tree: ast.Module, lines: list[int], names: set[str]
) -> list[tuple[ast.Call, str | None]]:
    """The calls named one of ``names`` (``f(...)``, ``x.f(...)``) spanning one of ``lines``
    where the scanner looks for calls, each with the class of the method holding it (or
    ``None``); like the scanner, decorators and class bodies outside methods are skipped."""
    found: list[tuple[ast.Call, str | None]] = []
    stack: list[tuple[ast.AST, str | None]] = [(tree, None)]
    while stack:
        item, cls = stack.pop()
        start = getattr(item, "lineno", None)
        if start is not None:
            index = bisect.bisect_left(lines, start)
            if index >= len(lines) or lines[index] > (getattr(item, "end_lineno", None) or start):
                continue
        if isinstance(item, ast.ClassDef):
            methods = (
                s for s in item.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            )
            stack.extend((method, item.name) for method in methods)
            continue
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            stack.extend((stmt, cls) for stmt in item.body)
            continue
        if isinstance(item, ast.Call):
            func = item.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in names:
                found.append((item, cls))
        stack.extend((child, cls) for child in children(item))
    return found


def _only_called(scope: _FuncDef, name: str) -> bool:
    """``name`` is only ever called in ``scope`` (never passed on as a value)."""
    called = {id(node.func) for node in walk(scope) if isinstance(node, ast.Call)}
    return all(
        id(node) in called
        for node in walk(scope)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
    )


def _closure_writes(func: _FuncDef, env: Env) -> list[str]:
    """The dicts of ``env`` that ``func``'s body writes keys into without rebinding them."""
    held = {name for name, value in env.items() if isinstance(value, DictVal)}
    held -= set(_params(func))
    if not held:
        return []
    written: set[str] = set()
    bound: set[str] = set()
    for node in walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
        ):
            written.add(node.value.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.attr in {"setdefault", "update"}:
                written.add(node.value.id)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in _ACCUMULATE
            and isinstance(node.value, ast.Subscript)
            and isinstance(node.value.value, ast.Name)
        ):
            written.add(node.value.value.id)
    return sorted((written & held) - bound)


def _is_format(node: ast.Call) -> bool:
    """``"...".format(...)`` on a string literal."""
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "format"
        and isinstance(func.value, ast.Constant)
        and isinstance(func.value.value, str)
    )


def _dict_item(node: ast.Dict, name: str) -> ast.expr | None:
    """The value under the literal key ``name`` of a dict display."""
    for key, value in zip(node.keys, node.values, strict=True):
        if isinstance(key, ast.Constant) and key.value == name:
            return value
    return None


def _field_targets(stmt: ast.stmt, field: str) -> Iterator[tuple[ast.expr, ast.expr | None]]:
    """Writes into the field ``a`` or ``a.b`` in ``stmt``: (key node, None) or (dict node, value).

    ``x.info["k"] = v`` gives the key ``"k"``; ``x.info = {...}``, ``x.info.update({...})``
    and ``Obj(info={...})`` give a dict. For ``meta_info.metrics``:
    ``x.meta_info["metrics"] = d``, ``Obj(meta_info={"metrics": d})``.
    """
    head, _, tail = field.partition(".")
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    value = getattr(stmt, "value", None)
    for target in targets:
        if isinstance(target, ast.Subscript) and _is_field(target.value, head):
            if not tail:
                yield target.slice, None
            elif _literal(target.slice) == tail and value is not None:
                yield value, value
        elif _is_field(target, head) and isinstance(value, ast.Dict):
            yield from _dict_field(value, tail)
    for node in _own_expressions(stmt):
        for inner in walk(node):
            if not isinstance(inner, ast.Call):
                continue
            for keyword in inner.keywords:
                if keyword.arg != head:
                    continue
                if isinstance(keyword.value, ast.Dict):
                    yield from _dict_field(keyword.value, tail)
                elif not tail:
                    yield keyword.value, keyword.value  # ``Experience(info=info)``
            func = inner.func
            if not (isinstance(func, ast.Attribute) and func.attr == "update") or tail:
                continue
            if _is_field(func.value, head) and inner.args:
                yield inner.args[0], inner.args[0]


def _dict_field(node: ast.Dict, tail: str) -> Iterator[tuple[ast.expr, ast.expr | None]]:
    if not tail:
        yield node, node
        return
    for key, value in zip(node.keys, node.values, strict=True):
        if key is not None and _literal(key) == tail:
            yield value, value


def _is_field(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name


def _literal(node: ast.expr) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _added(node: ast.BinOp) -> list[ast.expr]:
    """The operands of a left-nested ``+`` chain, in order, walked without recursion."""
    right: list[ast.expr] = []
    current: ast.expr = node
    while isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add):
        right.append(current.right)
        current = current.left
    return [current, *reversed(right)]
