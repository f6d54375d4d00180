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
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

from .accumulators import caller_keys, handed_out, self_call_index, write_lines
from .basebound import extend_to_mixins, extend_to_subclasses
from .calls import ScanCall
from .collectors import CollectorFlow
from .dictvalues import DictValues
from .inner import InnerDicts, holds_inner, may_pass_inner, passed_inner, reads_inner
from .keyexpr import KeyExpressions
from .kvfields import kv_logged
from .logcalls import LoggingCalls
from .model import Logged, ReceiverIndex, Returns, Wrapper
from .nested import NestedDicts
from .objectflow import ObjectFlow
from .objects import (
    Env,
    Opaque,
    Value,
)
from .objects import steps as _steps
from .receivers import REMOTE, Receivers, called_name
from .sources import Module
from .state import joined
from .statements import Statements
from .syntax import FuncDef, children, walk
from .values import (
    SLOT,
    DictVal,
    Unresolved,
    Where,
    rewrite,
    union,
)

__all__ = [
    "KEEP_TREES_BYTES",
    "WORK_BUDGET",
    "Project",
]


KEEP_TREES_BYTES: Final = 48 * 1024 * 1024
"""Syntax trees of files that call no logging function, built before the analysis (their
imports tell ``np.log(`` apart), are kept up to this much source: following a dict into
them then costs no second parse (beyond it, they are parsed again). The others are built
when the analysis first looks into them, and kept."""


WORK_BUDGET: Final = 250_000
"""Most writer parts merged over all reads of ``self.<attr>`` dicts in one scan: a class of
n methods each reading what the others write costs n * n (the five real trees: at most 150)."""


_MAX_DEPTH: Final = 8
"""How deep dicts are followed through returning functions."""


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
        self._writer_lists: dict[tuple[str, str], list[FuncDef]] = {}
        """The methods that may write an attribute (``self.<attr>``), by its slot."""
        self._part_values: dict[tuple[tuple[str, str], int], DictVal | None] = {}
        """What one method writes into an attribute, once a reader needed it."""
        self._collecting: set[tuple[str, int]] = set()
        """The methods being analysed for their attributes (a read inside leaves them out)."""
        self._active: set[tuple[str, ...]] = set()
        self.collector_adds: dict[tuple[object, ...], DictVal] = {}
        """What a method adds to its object's fields (see :mod:`.collectors`)."""
        self._envs: dict[tuple[str, int], Env] = {}
        self._self_calls: dict[tuple[str, str], dict[str, list[tuple[FuncDef, ast.Call]]]] = {}
        """A class's ``self.<name>(...)`` calls by name, with their methods (see :mod:`.inner`)."""
        """A method's variables after its body (``self.<attr>`` holders): analysed once for
        every attribute it writes (``__init__`` sets dozens)."""
        self.qualifiers = sorted({q.rpartition(".")[2] for s in calls if (q := s.qualifier)})
        self.throughs = tuple(spec for spec in self.calls if spec.through is not None)
        self.producers = tuple(spec for spec in self.calls if spec.returns)
        self.fields = tuple(spec for spec in self.calls if spec.field)
        self.calls = tuple(spec for spec in self.calls if spec.logs)
        self.wrappers: dict[str, list[Wrapper]] = {}
        self.receivers: ReceiverIndex = Receivers(self)
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
        extend_to_subclasses(self, self.calls)
        extend_to_mixins(self, self.calls)
        for module in self.modules:
            if module.lines:
                found += _Scanner(self, module, module.lines, calls=module.calls).run()
        found += self._produced()
        found = kv_logged(self, found)  # key-value loggers (a dict field dumped to a sink)
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
            if cls is None or not isinstance(func, ast.Attribute) or func.attr == REMOTE:
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
    ) -> tuple[Module, FuncDef, str | None] | None:
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
                    where = joined(*imported[:2]) if head else imported[0]
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
        targets: list[tuple[FuncDef, str | None]] = []
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
        self, module: Module, cls: str, attr: str, depth: int, skip: FuncDef | None = None
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

    def _writers(self, module: Module, cls: str, attr: str) -> list[FuncDef]:
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
        self, module: Module, cls: str, attr: str, method: FuncDef, depth: int
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
        if value is None:
            return None
        if holds_inner(value):
            value = self._written_per_caller(module, cls, attr, method, depth=depth, value=value)
        scanner = _Scanner(self, module, [], cls=cls)
        return caller_keys(module, cls, method, value, lambda node: scanner._part(node, {}, True))

    def _written_per_caller(
        self, module: Module, cls: str, attr: str, method: FuncDef, *, depth: int, value: DictVal
    ) -> DictVal:
        """What ``method`` writes into ``self.<attr>`` for each ``self.<method>(data)`` in
        the class passing a dict with inner dicts (``data["fipo"] = {...}`` read back by
        ``for k in data["fipo"]``, see :mod:`.inner`), and ``value`` (its writes with the
        parameters unknown) too unless every call passes one: then each caller's reading
        says all there is, and the unknown one would only repeat it as unresolved."""
        info = module.classes.get(cls)
        if info is None or depth > _MAX_DEPTH or not reads_inner(method, module):
            return value
        index = self._self_calls.get((module.real, cls))
        if index is None:
            index = self._self_calls[(module.real, cls)] = self_call_index(info.methods.values())
        if method.name not in index:
            return value
        parts: list[DictVal] = []
        unbound = handed_out(module.source, method.name)
        for caller, call in index[method.name]:
            if caller is method or (module.real, id(caller)) in self._collecting:
                unbound = True
                continue
            if not may_pass_inner(call, method, caller):
                unbound = True
                continue
            env = self._envs.get((module.real, id(caller)))
            if env is None:
                self._collecting.add((module.real, id(caller)))
                try:
                    scanner = _Scanner(self, module, [], cls=cls, depth=depth + 1)
                    env = self._envs[(module.real, id(caller))] = scanner.collect(caller)
                finally:
                    self._collecting.discard((module.real, id(caller)))
            bound = passed_inner(call, method, env)
            if bound:
                scanner = _Scanner(self, module, [], cls=cls, depth=depth + 1)
                again = _held(scanner.collect(method, bound=bound).get(f"self.{attr}"))
                if again is not None:
                    parts.append(again)
                    continue
            unbound = True
        return union([*parts, value]) if unbound or not parts else union(parts)

    def returned(self, module: Module, func: FuncDef, cls: str | None, depth: int) -> Returns:
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


def _merged(values: Iterable[DictVal]) -> DictVal | None:
    """The union of ``values`` (``None``: none)."""
    held = list(values)
    return union(held) if held else None


def _held(value: Value | None) -> DictVal | None:
    """What a method left in a ``self.<attr>`` holder, as a dict (``None``: no dict)."""
    if isinstance(value, Opaque):
        return value.as_dict()
    return value if isinstance(value, DictVal) else None


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
            if called_name(func) in names:
                found.append((item, cls))
        stack.extend((child, cls) for child in children(item))
    return found


class _Scanner(
    LoggingCalls,
    Statements,
    DictValues,
    NestedDicts,
    InnerDicts,
    KeyExpressions,
    ObjectFlow,
    CollectorFlow,
):
    """One module's analysis: scopes, values, and the logging calls found in them."""
