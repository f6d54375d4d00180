"""What source code logs, read statically: the keys each logging call hands over.

Files are parsed with :mod:`ast` and never imported or run. For every call a
:class:`~codegen.scan.calls.ScanCall` names, the dict argument is followed back
through the function that builds it, statement by statement:

* dict literals (``**`` included), ``dict(...)``, dict comprehensions, ``a | b``;
* ``d[k] = v``, ``d.update(...)``, ``d.setdefault(k, v)``, ``d |= ...`` before the call;
* a dict returned by a function of a scanned file (``compute_data_metrics(batch)``
  in verl), a method of the same class, or a function imported from a scanned module;
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
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from metric_catalog.series_rules import PREFIX_GLUE, PREFIX_SEPARATOR, namespace_prefix

from .calls import ScanCall

__all__ = [
    "Hole",
    "Key",
    "Logged",
    "Module",
    "Project",
    "Shape",
    "Unresolved",
    "Where",
    "shape_text",
]

MAX_ALTERNATIVES: Final = 64
"""Most alternatives one key expression expands to (a product of loops over literals)."""

_MAX_DEPTH: Final = 8
"""How deep dicts are followed through returning functions."""

_SHOWN: Final = 60
_FuncDef: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, slots=True)
class Hole:
    """A part of a key the scanner cannot know: an f-string field or an unknown operand."""

    text: str
    """The expression's source text (``name`` of ``f"timing_s/{name}"``)."""


Shape: TypeAlias = tuple[str | Hole, ...]
"""A key as literal text and holes, adjacent literals merged."""


def shape_text(shape: Shape) -> str:
    """``timing_s/{name}`` as shown in messages."""
    return "".join(part if isinstance(part, str) else "{" + part.text + "}" for part in shape)


def _concat(*shapes: Shape) -> Shape:
    parts: list[str | Hole] = []
    for shape in shapes:
        for part in shape:
            if isinstance(part, str):
                if not part:
                    continue
                if parts and isinstance(parts[-1], str):
                    parts[-1] += part
                    continue
            parts.append(part)
    return tuple(parts)


@dataclass(frozen=True, slots=True, order=True)
class Where:
    """A place in a source file: path as shown, 1-based line and column (characters)."""

    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Key:
    """One key a dict holds (or may hold), where it is written."""

    shape: Shape
    where: Where


@dataclass(frozen=True, slots=True)
class Unresolved:
    """Something logged that the scanner cannot follow: what it is, and where."""

    what: str
    """``a dict built by a call to `reduce_metrics(...)```: reads after "cannot resolve"."""
    where: Where


@dataclass(frozen=True, slots=True)
class DictVal:
    """What a dict expression holds: keys, plus parts that could not be followed."""

    keys: tuple[Key, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()

    def merge(self, other: DictVal) -> DictVal:
        """Both dicts' keys and unresolved parts (each once)."""
        if not (self.keys or self.unresolved):
            return other
        if not (other.keys or other.unresolved):
            return self
        keys = tuple(dict.fromkeys(self.keys + other.keys))
        return DictVal(keys, tuple(dict.fromkeys(self.unresolved + other.unresolved)))


@dataclass(frozen=True, slots=True)
class StrVal:
    """A string (or a sequence of strings, for loops) with its possible values."""

    shapes: tuple[Shape, ...]


@dataclass(frozen=True, slots=True)
class KeysOf:
    """A loop variable over a dict's keys (``for k, v in metrics.items()``)."""

    source: DictVal
    name: str
    """The dict's expression text, for messages."""


@dataclass(frozen=True, slots=True)
class Opaque:
    """A value the scanner does not follow (parameters, unknown calls).

    Described lazily: most such values are never logged, and describing one
    unparses source.
    """

    module: Module
    node: ast.AST
    """Where the value comes from."""
    label: str = ""
    """What it is; empty: described from ``node``."""
    shown: ast.AST | None = None
    """An expression shown after ``label``."""
    parameter: bool = False

    @property
    def why(self) -> Unresolved:
        """What cannot be resolved, and where."""
        what = self.label or _describe(self.node)
        if self.shown is not None:
            what += f"`{_shown(self.shown)}`"
        return Unresolved(what, self.module.where(self.node))


Value: TypeAlias = DictVal | StrVal | KeysOf | Opaque
Env: TypeAlias = dict[str, Value]


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


def _shown(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        return f"a dict built by a call to `{_shown(node.func)}(...)`"
    if isinstance(node, ast.Subscript | ast.Attribute):
        return f"a dict read from `{_shown(node)}`"
    if isinstance(node, ast.Name):
        return f"the variable `{node.id}`, which the scanner cannot follow"
    return f"`{_shown(node)}`"


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names, else ``None``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


@dataclass(slots=True)
class _ClassInfo:
    constants: dict[str, ast.expr] = field(default_factory=dict)
    methods: dict[str, _FuncDef] = field(default_factory=dict)


class Module:
    """One parsed source file and what other files may look up in it."""

    def __init__(self, shown: str, real: str, source: bytes, tree: ast.Module) -> None:
        self.shown = shown
        """Path as reported (relative to the working directory when below it)."""
        self.real = real
        self.source = source
        self.tree: ast.Module | None = tree
        self.lines: list[int] = []
        """Lines calling one of :attr:`calls` (set by :meth:`Project.add`)."""
        self.calls: list[ScanCall] = []
        """The scanned calls this file may make."""
        self._line_starts: list[int] | None = None
        self._ascii = source.isascii()
        self.constants: dict[str, ast.expr] = {}
        self.functions: dict[str, _FuncDef] = {}
        self.classes: dict[str, _ClassInfo] = {}
        self.imports: dict[str, tuple[str, str | None, int]] = {}
        """Local name -> (module, imported attribute or None, relative level)."""
        self.instances: dict[str, set[str]] | None = None
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
            self.tree = ast.parse(self.source)
            for stmt in self.tree.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    self._index(stmt)
        return self

    def _index(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            self.functions[stmt.name] = stmt
        elif isinstance(stmt, ast.ClassDef):
            info = _ClassInfo()
            for item in stmt.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    info.methods[item.name] = item
                else:
                    _constant_into(item, info.constants)
            self.classes[stmt.name] = info
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.imports[alias.asname] = (alias.name, None, 0)
                else:
                    head = alias.name.partition(".")[0]
                    self.imports[head] = (head, None, 0)
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                local = alias.asname or alias.name
                self.imports[local] = (stmt.module or "", alias.name, stmt.level)
        elif isinstance(stmt, ast.If | ast.Try):
            # ``if TYPE_CHECKING:`` / ``try: import x`` blocks still bind module names.
            for inner in stmt.body:
                self._index(inner)
        else:
            _constant_into(stmt, self.constants)

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

    def mention_lines(self, names: Iterable[str]) -> list[int]:
        """Sorted 1-based lines where one of ``names`` is called (``name(``) in the text."""
        alternatives = b"|".join(re.escape(name.encode()) for name in sorted(set(names)))
        if not alternatives:
            return []
        pattern = re.compile(rb"\b(?:" + alternatives + rb")\s*\(")
        lines: list[int] = []
        line, position = 1, 0
        for found in pattern.finditer(self.source):
            line += self.source.count(b"\n", position, found.start())
            position = found.start()
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
        self._returns: dict[tuple[str, str], DictVal | None] = {}
        self._active: set[tuple[str, str]] = set()
        self.qualifiers = sorted({q.rpartition(".")[2] for s in calls if (q := s.qualifier)})

    def add(self, module: Module) -> None:
        """Make ``module`` searchable by the dotted names it may be imported as."""
        self.modules.append(module)
        module.calls = module.active(self.calls)
        module.lines = module.mention_lines(spec.name for spec in module.calls)
        if not module.lines:
            module.release()  # most files log nothing: keep memory to their constants
        self._by_real[module.real] = module
        for name in _module_names(module.real):
            self._by_name.setdefault(name, []).append(module)

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

    def logged(self) -> Iterator[Logged]:
        """Every logging call of every module, in file order."""
        for module in self.modules:
            if module.lines:
                yield from _Scanner(self, module, module.lines, calls=module.calls).run()

    # --- following a call to the dict its function returns ---------------------

    def returned_dict(
        self, module: Module, func: _FuncDef, cls: str | None, depth: int
    ) -> DictVal | None:
        """The dicts ``func`` returns, merged; ``None`` when it returns none we can follow."""
        slot = (module.real, f"{cls}.{func.name}" if cls else func.name)
        if slot in self._returns:
            return self._returns[slot]
        if slot in self._active or depth > _MAX_DEPTH:
            return None
        self._active.add(slot)
        try:
            result = _Scanner(self, module, [], cls=cls, depth=depth + 1).returns(func)
        finally:
            self._active.discard(slot)
        self._returns[slot] = result
        return result


def _joined(module: str, attr: str | None) -> str:
    """``pkg.mod`` + ``name`` -> ``pkg.mod.name`` (``from . import name``: just ``name``)."""
    if attr is None:
        return module
    return f"{module}.{attr}" if module else attr


def _params(func: _FuncDef) -> list[str]:
    args = func.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def _join(before: Env, *branches: Env) -> Env:
    """The environment after branches: a dict any branch changed holds every branch's keys."""
    joined = dict(before)
    names = {name for env in branches for name in env}
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
            joined[name] = values[0]
    return joined


class _Scanner:
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
    ) -> None:
        self.project = project
        self.calls = calls
        self.module = module
        self.lines = lines
        self.cls = cls
        self.depth = depth
        self.found: list[Logged] = []
        self.func: _FuncDef | None = None
        self.params: set[str] = set()
        self.outer: list[Env] = []

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
        saved = (self.func, self.params, self.cls, self.outer)
        self.func, self.cls, self.outer = func, cls, outer
        self.params = set(_params(func)) if func is not None else set()
        env: Env = {}
        if func is not None:
            for name in self.params:
                what = f"the parameter `{name}` of `{func.name}` (its value comes from the callers)"
                env[name] = Opaque(self.module, func, what, parameter=True)
        nested: list[tuple[ast.stmt, Env]] = []
        self._block(body, env, nested)
        self.func, self.params, self.cls, self.outer = saved
        for stmt, at in nested:
            if isinstance(stmt, ast.ClassDef):
                for item in stmt.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        self._mentions(item)
                    ):
                        self._scope(item.body, item, stmt.name, [])
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._scope(stmt.body, stmt, cls, [*outer, at])

    def returns(self, func: _FuncDef) -> DictVal | None:
        """The merged dicts of ``func``'s ``return`` statements (``None``: none followed)."""
        self.func = func
        self.params = set(_params(func))
        env: Env = {}
        for name in self.params:
            what = f"the parameter `{name}` of `{func.name}`"
            env[name] = Opaque(self.module, func, what, parameter=True)
        results: list[DictVal] = []
        self._block(func.body, env, [], returns=results)
        if not results:
            return None
        merged = results[0]
        for value in results[1:]:
            merged = merged.merge(value)
        return merged

    # --- statements -----------------------------------------------------------

    def _block(
        self,
        body: list[ast.stmt],
        env: Env,
        nested: list[tuple[ast.stmt, Env]],
        returns: list[DictVal] | None = None,
    ) -> Env:
        for stmt in body:
            env = self._stmt(stmt, env, nested, returns)
        return env

    def _stmt(
        self,
        stmt: ast.stmt,
        env: Env,
        nested: list[tuple[ast.stmt, Env]],
        returns: list[DictVal] | None,
    ) -> Env:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if returns is None and self._mentions(stmt):
                nested.append((stmt, dict(env)))
            return env
        if returns is None:
            self._calls_in(stmt, env)
        if isinstance(stmt, ast.Assign):
            value = self._value(stmt.value, env)
            for target in stmt.targets:
                self._assign(target, stmt.value, value, env)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._assign(stmt.target, stmt.value, self._value(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            if isinstance(stmt.op, ast.BitOr):
                current = env.get(stmt.target.id)
                added = self._dict(stmt.value, env)
                env[stmt.target.id] = (
                    current.merge(added) if isinstance(current, DictVal) else added
                )
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._mutation(stmt.value, env)
        elif isinstance(stmt, ast.Return) and returns is not None and stmt.value is not None:
            if self._is_dictish(stmt.value, env):
                returns.append(self._dict(stmt.value, env))
        elif isinstance(stmt, ast.If):
            body = self._block(stmt.body, dict(env), nested, returns)
            orelse = self._block(stmt.orelse, dict(env), nested, returns)
            env = _join(env, body, orelse)
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            inner = dict(env)
            self._bind_loop(stmt.target, stmt.iter, inner)
            inner = self._block(stmt.body, inner, nested, returns)
            after = self._block(stmt.orelse, dict(env), nested, returns)
            env = _join(env, inner, after)
        elif isinstance(stmt, ast.While):
            inner = self._block(stmt.body, dict(env), nested, returns)
            after = self._block(stmt.orelse, dict(env), nested, returns)
            env = _join(env, inner, after)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
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

    def _assign(self, target: ast.expr, node: ast.expr, value: Value, env: Env) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self._add_key(target.value.id, target.slice, env)
        elif isinstance(target, ast.Tuple | ast.List):
            for item in target.elts:
                if isinstance(item, ast.Name):
                    env[item.id] = Opaque(self.module, item, f"`{item.id}`, unpacked from ", node)

    def _add_key(self, name: str, key: ast.expr, env: Env) -> None:
        """``name[key] = ...``: the dict ``name`` gains ``key``."""
        current = env.get(name)
        holder = self._lookup(name, env) if current is None else current
        looped = self._lookup(key.id, env) if isinstance(key, ast.Name) else None
        if isinstance(looped, KeysOf) and isinstance(holder, DictVal) and looped.source is holder:
            return  # ``for k in d: d[k] = f(d[k])`` rewrites keys it already has
        added = self._keys(key, env)
        if isinstance(holder, DictVal):
            env[name] = holder.merge(added)
        elif isinstance(holder, Opaque):
            env[name] = DictVal(added.keys, (*added.unresolved, holder.why))
        elif holder is None:
            env[name] = added

    def _mutation(self, call: ast.Call, env: Env) -> None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return
        name = func.value.id
        if func.attr == "update":
            added = DictVal()
            for arg in call.args:
                added = added.merge(self._dict(arg, env))
            for keyword in call.keywords:
                if keyword.arg is None:
                    added = added.merge(self._dict(keyword.value, env))
                else:
                    added = added.merge(DictVal((Key((keyword.arg,), self._at(keyword)),)))
        elif func.attr == "setdefault" and call.args:
            added = self._keys(call.args[0], env)
        else:
            return
        current = env.get(name) or self._lookup(name, env)
        if isinstance(current, DictVal):
            env[name] = current.merge(added)
        elif isinstance(current, Opaque):
            env[name] = DictVal(added.keys, (*added.unresolved, current.why))
        else:
            env[name] = added

    def _bind_loop(self, target: ast.expr, iterable: ast.expr, env: Env) -> None:
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
            elif self._is_dictish(source, env) or over_items:
                env[first.id] = KeysOf(self._dict(source, env), _shown(source))

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
        strings = self._strings(node, env)
        if strings is not None:
            return strings
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            if found is not None:
                return found
        return Opaque(self.module, node)

    def _is_dictish(self, node: ast.expr, env: Env) -> bool:
        if isinstance(node, ast.Dict | ast.DictComp):
            return True
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in {"dict", "collections.OrderedDict", "OrderedDict"}:
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr == "copy":
                return self._is_dictish(node.func.value, env)
            target = self._function(node.func)
            if target is None:
                return False
            module, func, cls = target
            return self.project.returned_dict(module, func, cls, self.depth) is not None
        if isinstance(node, ast.Name):
            return isinstance(self._lookup(node.id, env), DictVal)
        if isinstance(node, ast.IfExp):
            return self._is_dictish(node.body, env) or self._is_dictish(node.orelse, env)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._is_dictish(node.left, env) or self._is_dictish(node.right, env)
        return False

    def _dict(self, node: ast.expr, env: Env) -> DictVal:
        """What the dict expression ``node`` holds."""
        if isinstance(node, ast.Dict):
            result = DictVal()
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:
                    result = result.merge(self._dict(value, env))
                else:
                    result = result.merge(self._keys(key, env))
            return result
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
            if isinstance(found, Opaque):
                return DictVal((), (found.why,))
        if isinstance(node, ast.Call):
            return self._call_dict(node, env)
        return DictVal((), (Unresolved(_describe(node), self._at(node)),))

    def _call_dict(self, node: ast.Call, env: Env) -> DictVal:
        name = _dotted(node.func)
        if name in {"dict", "collections.OrderedDict", "OrderedDict"}:
            result = DictVal()
            for arg in node.args:
                result = result.merge(self._dict(arg, env))
            for keyword in node.keywords:
                if keyword.arg is None:
                    result = result.merge(self._dict(keyword.value, env))
                else:
                    result = result.merge(DictVal((Key((keyword.arg,), self._at(keyword)),)))
            return result
        if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
            return self._dict(node.func.value, env)
        target = self._function(node.func)
        if target is not None:
            module, func, cls = target
            returned = self.project.returned_dict(module, func, cls, self.depth)
            if returned is not None:
                return returned
        return DictVal((), (Unresolved(_describe(node), self._at(node)),))

    def _function(self, func: ast.expr) -> tuple[Module, _FuncDef, str | None] | None:
        """The scanned function a call goes to: same module, same class, or imported."""
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
            info = module.classes.get(self.cls)
            if info is not None and func.attr in info.methods:
                return module, info.methods[func.attr], self.cls
            return None
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
        strings = self._strings(node, env, whole=True)
        if isinstance(strings, StrVal):
            where = self._at(node)
            return DictVal(tuple(Key(shape, where) for shape in strings.shapes))
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            if isinstance(found, KeysOf):
                where = self._at(node)
                unresolved = tuple(
                    Unresolved(f"a key of `{found.name}`: {u.what}", where)
                    for u in found.source.unresolved
                )
                return DictVal(found.source.keys, unresolved)
            what = f"a key held by the variable `{node.id}`"
            if isinstance(found, Opaque):
                what += f" ({found.why.what})"
            return DictVal((), (Unresolved(what, self._at(node)),))
        return DictVal((), (Unresolved(f"a key computed by `{_shown(node)}`", self._at(node)),))

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
                    known = None
                    if part.format_spec is None and part.conversion in (-1, 115):
                        known = self._strings(part.value, env, whole=True)
                    options = known.shapes if known else ((Hole(_shown(part.value)),),)
                else:
                    return None
                shapes = [_concat(a, b) for a in shapes for b in options][:MAX_ALTERNATIVES]
            return StrVal(tuple(shapes))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self._strings(node.left, env)
            right = self._strings(node.right, env)
            if left is None and right is None:
                return None
            lefts = left.shapes if left else ((Hole(_shown(node.left)),),)
            rights = right.shapes if right else ((Hole(_shown(node.right)),),)
            combined = [_concat(a, b) for a in lefts for b in rights][:MAX_ALTERNATIVES]
            return StrVal(tuple(combined))
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

    def _field(self, module: Module, name: str, field_name: str) -> StrVal | None:
        """A string keyword of a module-level call: ``X = TeedMetric(prefix="train")``."""
        expr = module.constants.get(name)
        if not isinstance(expr, ast.Call):
            return None
        for keyword in expr.keywords:
            if keyword.arg == field_name:
                return _Scanner(self.project, module, []).constant_value(keyword.value, set())
        return None

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
        for node in _own_expressions(stmt):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call):
                    spec = self._match(inner)
                    if spec is not None:
                        self._log_call(inner, spec, env)

    def _instances(self) -> dict[str, set[str]]:
        """Receivers assigned ``Cls(...)`` or annotated ``Cls`` in this file, by text."""
        module = self.module
        if module.instances is not None:
            return module.instances
        found: dict[str, set[str]] = {}
        names = self.project.qualifiers
        if any(name.encode() in module.source for name in names):
            for node in ast.walk(module.full().tree or ast.Module([], [])):
                target: ast.expr | None = None
                cls: str | None = None
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    target, cls = node.targets[0], _dotted(node.value.func)
                elif isinstance(node, ast.AnnAssign):
                    target = node.target
                    value = node.value
                    if isinstance(value, ast.Call):
                        cls = _dotted(value.func)
                    else:
                        cls = _dotted(node.annotation) if node.annotation else None
                elif isinstance(node, ast.arg) and node.annotation is not None:
                    text = _dotted(node.annotation)
                    if text:
                        found.setdefault(node.arg, set()).add(text.rpartition(".")[2])
                    continue
                receiver = _dotted(target) if target is not None else None
                if receiver and cls:
                    found.setdefault(receiver, set()).add(cls.rpartition(".")[2])
        module.instances = found
        return found

    def _match(self, call: ast.Call) -> ScanCall | None:
        func = call.func
        if isinstance(func, ast.Name):
            name, receiver = func.id, None
        elif isinstance(func, ast.Attribute):
            name, receiver = func.attr, _dotted(func.value)
        else:
            return None
        for spec in self.calls:
            if spec.name != name:
                continue
            qualifier = spec.qualifier
            if qualifier is None:
                return spec
            full = self._normalise(receiver, name)
            if full is not None and (full == spec.call or full.endswith("." + spec.call)):
                return spec
            if (
                receiver is not None
                and "." not in qualifier
                and qualifier in self._instances().get(receiver, ())
            ):
                return spec
        return None

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
        self, call: ast.Call, position: int | None, keyword: str | None
    ) -> ast.expr | None:
        if keyword is not None:
            for item in call.keywords:
                if item.arg == keyword:
                    return item.value
        if position is not None and position < len(call.args):
            if any(isinstance(arg, ast.Starred) for arg in call.args[: position + 1]):
                return None
            return call.args[position]
        return None

    def _forwarded(self, node: ast.expr) -> bool:
        """A logging function passing its own parameter on (``def log_metrics(m): w.log(m)``)."""
        func = self.func
        if func is None or not isinstance(node, ast.Name) or node.id not in self.params:
            return False
        return any(spec.name == func.name for spec in self.project.calls)

    def _log_call(self, call: ast.Call, spec: ScanCall, env: Env) -> None:
        where = self._at(call)
        shown = _shown(call.func)
        unresolved: list[Unresolved] = []
        prefixes: tuple[Shape, ...] | None = None
        if spec.prefix is not None:
            node = self._argument(call, spec.prefix.position, spec.prefix.keyword)
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
        keys: tuple[Key, ...] = ()
        argument = spec.metrics or spec.key
        assert argument is not None
        node = self._argument(call, argument.position, argument.keyword)
        if node is None:
            if any(k.arg is None for k in call.keywords) or any(
                isinstance(a, ast.Starred) for a in call.args
            ):
                what = f"the argument {argument.describe()} of `{shown}` (passed by * or **)"
                unresolved.append(Unresolved(what, where))
            else:
                return  # not a logging call of this shape (another function of that name)
        elif self._forwarded(node):
            return
        elif spec.metrics is not None:
            value = self._dict(node, env)
            keys, unresolved = value.keys, [*unresolved, *value.unresolved]
        else:
            value = self._keys(node, env)
            keys, unresolved = value.keys, [*unresolved, *value.unresolved]
        flat = spec.prefix is None
        self.found.append(Logged(shown, where, spec, prefixes, flat, keys, tuple(unresolved)))


def _own_expressions(stmt: ast.stmt) -> Iterator[ast.expr]:
    """The expressions of ``stmt`` itself, not those of the blocks it holds."""
    for name, value in ast.iter_fields(stmt):
        if name in {"body", "orelse", "finalbody", "handlers", "cases"}:
            continue
        if isinstance(value, ast.expr):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.expr):
                    yield item
                elif isinstance(item, ast.withitem):
                    yield item.context_expr
