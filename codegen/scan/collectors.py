"""Collector objects and trackers made by a factory: two general rules of the value model.

**Collectors.** A class whose methods add keys to a field of ``self`` (``add_metric(name,
v)`` writes ``self.metrics[name]``; ``add_metrics(d)`` does ``self.metrics.update(d)``; a
method that calls ``self.add_metrics(local)``) and whose getter hands that field back
(``get_metrics()`` returns ``self.metrics.copy()``)::

    mgr = Collector()
    mgr.add_metric("time/step", t)          # the key is found here
    mgr.add_metrics({"loss": l})
    tracker.log(mgr.get_metrics())          # logs both

Each method is summarised once, per class: what it adds to each ``self.<field>``, as keys
whose holes are its parameters and spreads of its parameters' dicts (its own writes, and
the adds of the ``self.<method>(...)`` calls it makes, instantiated with their arguments).
A getter called on a variable bound to ``Cls(...)`` returns what the getter returns (the
class's own writes, read as before) plus what every call on that variable in the same
function adds to the fields the getter reads, filled with that call's arguments. The
order of the calls is not followed: a key some call on the object adds is a key the getter
may return.

**Trackers from a factory.** ``self.tracker = make_tracker(name)`` where ``make_tracker``
is a scanned function annotated ``-> BaseTracker`` (or returning ``BaseTracker(...)``):
a call ``self.tracker.log(values=m)`` may go to ``log`` of that class or of any scanned
subclass, so it logs through each of them that is a wrapper (class hierarchy analysis:
the receiver's class and the overrides below it, never every function named ``log``).

Nothing here guesses: an argument that is not followed stays ``SCAN_UNRESOLVED`` where it
is passed, and a receiver whose class is not found is not a collector.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TypeAlias

from .inherited import exported
from .instances import Bound, aliases, bound_method, may_use
from .model import ProjectIndex, Wrapper
from .reductions import Exporter, exporter_of, tag_of
from .scopes import Around, scope_rules, scoped, scopes_of
from .sources import Module
from .state import ScanState
from .syntax import FuncDef, bind, dotted, params, walk
from .values import SLOT, DictVal, Hole, Key, StrVal, Where, rewrite, union

if TYPE_CHECKING:
    from .objects import Env

__all__ = ["CollectorFlow", "attribute_classes", "factory_classes"]

ClassRef: TypeAlias = "tuple[Module, str]"
"""A scanned class: its module and its name."""

Method: TypeAlias = "tuple[Module, FuncDef, str | None]"
"""A scanned method: its module, its definition, its class (as ``Project.method`` finds it)."""

_MAX_CALL_DEPTH = 4
"""``self.add_token_metrics`` calling ``self.add_metrics``...: deeper chains are not followed."""

_MAX_BASES = 32
"""Classes visited walking up one class's bases (a deep or cyclic hierarchy stops)."""


def _fields_returned(func: FuncDef) -> frozenset[str]:
    """The ``self.<field>`` a getter hands back as they are: read whole (``return
    self.metrics``, ``self.metrics.copy()``, ``dict(self.metrics)``, ``{**self.metrics}``),
    not looped over or indexed (``self.by_domain.items()`` rekeys what it holds)."""
    whole: set[str] = set()
    other: set[str] = set()
    for node in walk(func):
        for child in ast.iter_child_nodes(node):
            if not (
                isinstance(child, ast.Attribute)
                and isinstance(child.value, ast.Name)
                and child.value.id == "self"
                and isinstance(child.ctx, ast.Load)
            ):
                continue
            read = isinstance(node, ast.Subscript) or (
                isinstance(node, ast.Attribute) and node.attr != "copy"
            )
            (other if read else whole).add(child.attr)
    return frozenset(whole - other)


def _field_items(node: ast.expr) -> str | None:
    """``self.<field>.items()``: the field; else ``None``."""
    if (
        isinstance(node, ast.Call)
        and not node.args
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "items"
        and isinstance(node.func.value, ast.Attribute)
        and isinstance(node.func.value.value, ast.Name)
        and node.func.value.value.id == "self"
    ):
        return node.func.value.attr
    return None


def _pair(target: ast.expr) -> tuple[str, str] | None:
    """``for a, b in ...``: ``("a", "b")``."""
    if isinstance(target, ast.Tuple) and len(target.elts) == 2:
        first, second = target.elts
        if isinstance(first, ast.Name) and isinstance(second, ast.Name):
            return first.id, second.id
    return None


def _nested_reads(func: FuncDef) -> dict[str, list[tuple[str, str, ast.expr]]]:
    """A getter's fields of dicts, each with how it keys what they hold: ``for group, d in
    self.by_group.items(): for key, v in d.items(): out[f"{group}/{key}"] = v`` gives
    ``{"by_group": [("group", "key", <the key expression>)]}``."""
    found: dict[str, list[tuple[str, str, ast.expr]]] = {}
    for outer in walk(func):
        if not isinstance(outer, ast.For):
            continue
        field = _field_items(outer.iter)
        names = _pair(outer.target)
        if field is None or names is None:
            continue
        for inner in walk(outer):
            if not (
                isinstance(inner, ast.For)
                and (pair := _pair(inner.target)) is not None
                and isinstance(inner.iter, ast.Call)
                and isinstance(inner.iter.func, ast.Attribute)
                and inner.iter.func.attr == "items"
                and isinstance(inner.iter.func.value, ast.Name)
                and inner.iter.func.value.id == names[1]
            ):
                continue
            for stmt in walk(inner):
                if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript):
                    found.setdefault(field, []).append((names[0], pair[0], stmt.targets[0].slice))
    return found


def _group(field: str) -> Hole:
    """In a key added to a field of dicts: between the outer key and the inner one."""
    return Hole("\x00" + field)


def _grouped_writes(func: FuncDef, field: str) -> Iterator[tuple[ast.expr, ast.expr, bool]]:
    """``self.<field>[outer].update(d)``, ``self.<field>.setdefault(outer, {}).update(d)``
    (``(outer, d, True)``) and ``self.<field>[outer][key] = v`` (``(outer, key, False)``)."""
    for node in walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "update"
            and len(node.args) == 1
        ):
            held = node.func.value
            if isinstance(held, ast.Subscript) and _is_field(held.value, field):
                yield held.slice, node.args[0], True
            elif (
                isinstance(held, ast.Call)
                and isinstance(held.func, ast.Attribute)
                and held.func.attr == "setdefault"
                and held.args
                and _is_field(held.func.value, field)
            ):
                yield held.args[0], node.args[0], True
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Subscript)
                    and _is_field(target.value.value, field)
                ):
                    yield target.value.slice, target.slice, False


def _is_field(node: ast.expr, field: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == field
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _own(key: Key, func: FuncDef, own: set[str]) -> bool:
    """A key ``func`` writes itself (at a line of its body, or a hole of its parameter);
    a method's env also holds the keys other methods write into the field it reads."""
    holes = [part for part in key.shape if isinstance(part, Hole) and part.param]
    if holes:
        return all(part.param in own for part in holes)
    end = func.end_lineno or func.lineno
    return func.lineno <= key.where.line <= end


def _derives(
    project: ProjectIndex, module: Module, cls: str, targets: set[tuple[str, str]]
) -> bool:
    """``cls`` is one of ``targets`` or derives from one (through scanned bases)."""
    seen: set[tuple[str, str]] = set()
    todo: list[ClassRef] = [(module, cls)]
    while todo and len(seen) < _MAX_BASES:
        home, name = todo.pop()
        if (home.real, name) in targets:
            return True
        if (home.real, name) in seen:
            continue
        seen.add((home.real, name))
        info = home.classes.get(name)
        for base in info.bases if info is not None else ():
            ref = project.class_named(home, base.rpartition(".")[2])
            if ref is not None:
                todo.append(ref)
    return False


def attribute_classes(project: ProjectIndex, module: Module, cls: str, attr: str) -> list[ClassRef]:
    """The scanned classes ``self.<attr>`` is set to in ``cls`` or its bases: ``Cls(...)``
    or a call of a scanned factory (see :func:`factory_classes`)."""
    found: list[ClassRef] = []
    seen: set[tuple[str, str]] = set()
    todo: list[ClassRef] = [(module, cls)]
    while todo and len(seen) < _MAX_BASES:
        home, name = todo.pop()
        if (home.real, name) in seen:
            continue
        seen.add((home.real, name))
        info = home.full().classes.get(name)
        if info is None:
            continue
        for method in info.methods.values():
            for call in _set_from(method, attr):
                for ref in _made_by(project, home, call.func.id):  # type: ignore[attr-defined]
                    if ref not in found:
                        found.append(ref)
        for base in info.bases:
            parent = project.class_named(home, base.rpartition(".")[2])
            if parent is not None:
                todo.append(parent)
    return found


def _set_from(method: FuncDef, attr: str) -> Iterator[ast.Call]:
    """The calls ``f(...)`` assigned to ``self.<attr>`` in ``method``."""
    yield from _self_assignments(method).get(attr, ())


@functools.lru_cache(maxsize=4096)
def _self_assignments(method: FuncDef) -> dict[str, tuple[ast.Call, ...]]:
    """Every ``self.<attr> = f(...)`` in ``method``, by attribute: one walk per method, as
    a class's methods are asked about each of its attributes in turn."""
    found: dict[str, list[ast.Call]] = {}
    for node in walk(method):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
        ):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    calls = found.setdefault(target.attr, [])
                    if node.value not in calls:
                        calls.append(node.value)
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.annotation, ast.Name)
            and isinstance(node.target, ast.Attribute)
            and isinstance(node.target.value, ast.Name)
            and node.target.value.id == "self"
        ):
            # ``self.ilql: ILQLConfig = cast(...)``: the annotation names the class, as a
            # constructor call would (a call of it stands for the annotation).
            made = ast.Call(func=node.annotation, args=[], keywords=[])
            found.setdefault(node.target.attr, []).append(made)
    return {attr: tuple(calls) for attr, calls in found.items()}


def _made_by(project: ProjectIndex, module: Module, name: str) -> list[ClassRef]:
    """The scanned classes a call of ``name`` in ``module`` makes: the class itself, or
    what a scanned factory function of that name returns."""
    ref = project.class_named(module, name)
    if ref is not None:
        ref = exported(project, *ref)  # ``from oat.collectors import Collector``: re-exported
        if ref[1] in ref[0].full().classes:
            return [ref]
    if name in module.functions:
        return factory_classes(project, module, module.functions[name])
    imported = module.imports.get(name)
    if imported is None or imported[1] is None:
        return []
    source = project.find_module(imported[0], imported[2], module)
    if source is None or imported[1] not in source.full().functions:
        return []
    return factory_classes(project, source, source.functions[imported[1]])


def factory_classes(project: ProjectIndex, module: Module, func: FuncDef) -> list[ClassRef]:
    """The scanned classes a factory function returns: its return annotation's class, else
    the classes of its ``return Cls(...)`` statements."""
    names: list[str] = []
    annotation = func.returns
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        names.append(annotation.value.rpartition(".")[2])
    elif isinstance(annotation, ast.Name | ast.Attribute):
        names.append(annotation.id if isinstance(annotation, ast.Name) else annotation.attr)
    else:
        for node in walk(func):
            if (
                isinstance(node, ast.Return)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
            ):
                names.append(node.value.func.id)
    found: list[ClassRef] = []
    for name in dict.fromkeys(names):
        ref = project.class_named(module, name)
        if ref is not None and ref not in found:
            found.append(ref)
    return found


class CollectorFlow(ScanState):
    """The scanner's side of the two rules (a part of the module scanner)."""

    if TYPE_CHECKING:

        def collect(
            self, func: FuncDef, *, spread: bool = False, seed: Env | None = None
        ) -> Env: ...

    # --- collectors -------------------------------------------------------------

    def _note_object(self, name: str, node: ast.expr) -> None:
        """``mgr = Collector()``: ``mgr`` holds an instance of a scanned class (forgotten
        when rebound to anything else)."""
        self.objects.pop(name, None)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            ref = self.project.class_named(self.module, node.func.id)
            if ref is not None and node.func.id in ref[0].classes:
                self.objects[name] = ref

    def _collected(self, returned: DictVal, call: ast.Call, env: Env) -> tuple[DictVal, DictVal]:
        """For a getter ``call`` on a collector object: what it returns without the keys its
        class's adders leave to their callers (each call fills them below), and what the
        calls on that object in this function add to the fields the getter reads."""
        func = call.func
        bound = bound_method(self.project, self.module, func)
        local = (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in self.objects
        )
        if bound is not None and not local:
            return self._instance_collected(returned, bound)
        if (
            self.func is None
            or not isinstance(func, ast.Attribute)
            or not isinstance(func.value, ast.Name)
            or func.value.id not in self.objects
        ):
            return returned, DictVal()
        receiver = func.value.id
        home, cls = self.objects[receiver]
        getter = self.project.method(home, cls, func.attr)
        if getter is None:
            return returned, DictVal()
        grouped = _nested_reads(getter[1])
        fields = (_fields_returned(getter[1]), frozenset(grouped))
        if not (fields[0] or fields[1]):
            return returned, DictVal()
        added: list[DictVal] = []
        seed = self._written_from_outside(receiver, env)
        for other, name in _calls_on(self.func, receiver):
            target = self.project.method(home, cls, name)
            if other is call or target is None or target[2] is None:
                continue
            adds = _adds(self, target, fields, 0, seed)
            if not adds.empty():
                arguments = bind(other, target[1], method=True)
                adds = _located(adds, arguments, self.module)
                added.append(self._instantiate(adds, other, arguments, env))
        if _one_object(home, cls):
            added.append(self._global_adds(home, cls, fields))
        value = _ungrouped(
            union(added), grouped, type(self)(self.project, home, [], cls=cls, depth=self.depth + 1)
        )
        return _without_parameters(returned, getter[1], self._adders(home, cls, fields)), value

    # --- objects made at module level (.instances) -----------------------------------

    def _on_instance(self, func: ast.expr) -> Method | None:
        """The method a call of a module-level object's method goes to (``DEFAULT.stat``,
        ``stats.stat`` for ``stat = DEFAULT.stat``), else ``None``."""
        bound = bound_method(self.project, self.module, func)
        if bound is None:
            return None
        (home, cls), name = bound[2], bound[3]
        found = self.project.method(home, cls, name)
        return found if found is not None and found[2] is not None else None

    def _instance_collected(self, returned: DictVal, bound: Bound) -> tuple[DictVal, DictVal]:
        """A getter called on a module-level object: what it returns without what its
        class's adders leave to their callers, and what every call on that object adds."""
        (home, cls), name = bound[2], bound[3]
        getter = self.project.method(home, cls, name)
        if getter is None:
            return returned, DictVal()
        info = getter[0].full().classes.get(getter[2] or "")
        export = exporter_of(info.methods, getter[1]) if info is not None else None
        if export is not None:  # ``export()`` reducing each key by its tag (.reductions)
            fields = (frozenset({export.field}), frozenset[str]())
            return DictVal(), self._instance_adds(bound, fields, export)
        grouped = _nested_reads(getter[1])
        fields = (_fields_returned(getter[1]), frozenset(grouped))
        if not (fields[0] or fields[1]):
            return returned, DictVal()
        added = self._instance_adds(bound, fields)
        value = _ungrouped(
            added, grouped, type(self)(self.project, home, [], cls=cls, depth=self.depth + 1)
        )
        return _without_parameters(returned, getter[1], self._adders(home, cls, fields)), value

    def _instance_adds(
        self,
        bound: Bound,
        fields: tuple[frozenset[str], frozenset[str]],
        export: Exporter | None = None,
    ) -> DictVal:
        """What the whole program adds to one module-level object: every call of one of its
        methods, through its name or an alias, in any scanned module (each key is found at
        the argument; a dict the calling function builds is read from that function)."""
        maker, name = bound[0], bound[1]
        slot = ("module object", maker.real, name, fields, export)
        cache = self.project.collector_adds
        if slot in cache:
            return cache[slot]
        cache[slot] = DictVal()
        names = {name, *_aliases_of(self, maker, name)}
        needles = [found.encode() for found in names]
        found: list[DictVal] = []
        rules = scope_rules(self.project, *bound[2])
        for module in self.project.modules:
            if not any(needle in module.source for needle in needles):
                continue
            if not may_use(self.project, module, maker, names):
                continue
            tree = module.full().tree
            # One per module: the scopes around a function and its callers are read once.
            around = Around(self.project, module, bound[:2], rules) if rules is not None else None
            for func, cls_name in scopes_of(tree) if tree is not None else ():
                found.extend(
                    self._instance_sites(
                        module,
                        func,
                        cls_name,
                        bound=bound,
                        fields=fields,
                        export=export,
                        around=around,
                    )
                )
        result = union(found)
        cache[slot] = result
        return result

    def _instance_sites(
        self,
        module: Module,
        scope: FuncDef | ast.Module,
        cls_name: str | None,
        *,
        bound: Bound,
        fields: tuple[frozenset[str], frozenset[str]],
        export: Exporter | None,
        around: Around | None,
    ) -> list[DictVal]:
        """The adds of the calls on the object ``scope`` makes itself (its nested
        functions' calls included; a module's top level: its statements outside any
        ``def``), each instantiated with what the function holds when it ends."""
        home, cls = bound[2]
        calls = []
        for node in walk(scope) if not isinstance(scope, ast.Module) else _top_nodes(scope):
            if not isinstance(node, ast.Call):
                continue
            other = bound_method(self.project, module, node.func)
            if other is None or other[:2] != bound[:2] or other[3] == bound[3]:
                continue
            target = self.project.method(home, cls, other[3])
            if target is not None and target[2] is not None:
                calls.append((node, target))
        if not calls:
            return []
        scanner = type(self)(self.project, module, [], cls=cls_name, depth=self.depth + 1)
        env: Env | None = None  # what the function holds: read only when an argument needs it
        found = []
        for node, target in calls:
            adds = _adds(self, target, fields, 0)
            if not adds.empty():
                arguments = bind(node, target[1], method=True)
                located = _located(adds, arguments, module)
                if env is None and _reads_variables(adds, arguments, node):
                    env = scanner.collect(scope) if not isinstance(scope, ast.Module) else {}
                value = scanner._instantiate(located, node, arguments, env or {})
                rules = around.rules if around is not None else None
                if around is not None and rules is not None and target[1].name in rules.recorders:
                    value = union(
                        [
                            rewrite(value, scoped(segments, rules.separator))
                            for segments in around.prefixes(scope, cls_name, node)
                        ]
                    )
                if export is not None:
                    value = _reduced(value, export, node, target, self.project)
                found.append(value)
        return found

    # --- one object for the whole program ---------------------------------------------

    def _global_adds(
        self, home: Module, cls: str, fields: tuple[frozenset[str], frozenset[str]]
    ) -> DictVal:
        """What the whole program adds to the one object of ``cls`` (a singleton): calls
        ``Cls().<method>(...)`` anywhere, and calls of the module functions of ``cls``'s
        module that hand their parameter to one (``timer("train")`` where ``timer(name)``
        does ``Timer().context(name)``); ``@timer`` on a ``def`` when the function hands
        ``func.__name__`` on: the function's name. Each key is found at the argument."""
        slot = ("one object", home.real, cls, fields)
        cache = self.project.collector_adds
        if slot in cache:
            return cache[slot]
        cache[slot] = DictVal()
        forwarders: dict[str, tuple[DictVal, FuncDef, bool]] = {}
        for name, func in home.full().functions.items():
            adds, by_name = self._forwarded_adds(home, cls, func, fields)
            if not adds.empty() or by_name:
                forwarders[name] = (adds, func, by_name)
        found: list[DictVal] = []
        needles = [f"{cls}(".encode(), *(f"{name}".encode() for name in forwarders)]
        for module in self.project.modules:
            if not any(needle in module.source for needle in needles):
                continue
            scanner = type(self)(self.project, module, [], cls=None, depth=self.depth + 1)
            tree = module.full().tree
            for node in walk(tree) if tree is not None else ():
                found.extend(scanner._one_object_site(node, home, cls, fields, forwarders))
        result = union(found)
        cache[slot] = result
        return result

    def _forwarded_adds(
        self, home: Module, cls: str, func: FuncDef, fields: tuple[frozenset[str], frozenset[str]]
    ) -> tuple[DictVal, bool]:
        """What a module function adds to the one object from its parameters, and whether
        it hands a function's ``__name__`` to it (a decorator timing what it wraps)."""
        scanner = type(self)(self.project, home, [], cls=None, depth=self.depth + 1)
        env = scanner.collect(func, spread=True)
        parts: list[DictVal] = []
        by_name = False
        for node in walk(func):
            target = _on_new(node, cls, self.project, home)
            if target is None:
                continue
            assert isinstance(node, ast.Call)
            adds = _adds(self, target, fields, 0)
            if adds.empty():
                continue
            if any(_names_a_function(arg) for arg in node.args):
                by_name = True
                continue
            arguments = bind(node, target[1], method=True)
            parts.append(scanner._instantiate(adds, node, arguments, env))
        return union(parts), by_name

    def _one_object_site(
        self,
        node: ast.AST,
        home: Module,
        cls: str,
        fields: tuple[frozenset[str], frozenset[str]],
        forwarders: dict[str, tuple[DictVal, FuncDef, bool]],
    ) -> list[DictVal]:
        """The keys one node of a module adds to the one object: ``Cls().m(...)``, a call
        of a forwarding function, or a ``def`` it decorates."""
        module = self.module
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return [
                DictVal((Key((node.name,), module.where(decorator)),))
                for decorator in node.decorator_list
                if isinstance(decorator, ast.Name)
                and decorator.id in forwarders
                and forwarders[decorator.id][2]
                and _imports(self.project, module, decorator.id, home)
            ]
        if not isinstance(node, ast.Call):
            return []
        target = _on_new(node, cls, self.project, module)
        if target is not None and module is not home:
            adds = _adds(self, target, fields, 0)
            arguments = bind(node, target[1], method=True)
            return [self._instantiate(_located(adds, arguments, module), node, arguments, {})]
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name is None or name not in forwarders or not _imports(self.project, module, name, home):
            return []
        adds, func, _ = forwarders[name]
        arguments = bind(node, func, method=False)
        return [self._instantiate(_located(adds, arguments, module), node, arguments, {})]

    def _written_from_outside(self, receiver: str, env: Env) -> tuple[tuple[str, DictVal], ...]:
        """The keys this function writes into fields of the object (``mgr.timers["tps"] =
        t``): its methods reading those fields read them (``for name in self.timers``)."""
        assert self.func is not None
        written: dict[str, list[DictVal]] = {}
        for node in walk(self.func):
            for target in node.targets if isinstance(node, ast.Assign) else ():
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Attribute)
                    and isinstance(target.value.value, ast.Name)
                    and target.value.value.id == receiver
                ):
                    written.setdefault(target.value.attr, []).append(self._keys(target.slice, env))
        return tuple(sorted((field, union(keys)) for field, keys in written.items()))

    def _adders(
        self, home: Module, cls: str, fields: tuple[frozenset[str], frozenset[str]]
    ) -> list[tuple[str, int, int]]:
        """Where the methods of ``cls`` are that add to ``fields`` what their callers pass (a
        dict, a key): what they leave unresolved in the getter's dict, each call on the
        object fills."""
        info = home.full().classes.get(cls)
        found = []
        for method in info.methods.values() if info is not None else ():
            adds = _adds(self, (home, method, cls), fields, 0)
            if adds.spreads or any(
                isinstance(part, Hole) and part.param for key in adds.keys for part in key.shape
            ):
                found.append((home.shown, method.lineno, method.end_lineno or method.lineno))
        return found

    def _super_method(self, name: str) -> Method | None:
        """The method ``super().<name>(...)`` calls in a method of ``self.cls``: the first
        scanned base (in order) that has it, the class itself left out."""
        info = self.module.full().classes.get(self.cls or "")
        for base in info.bases if info is not None else ():
            ref = self.project.class_named(self.module, base.rpartition(".")[2])
            found = self.project.method(ref[0], ref[1], name) if ref is not None else None
            if found is not None:
                return found
        return None

    # --- trackers from a factory ---------------------------------------------------

    def _member_targets(self, func: ast.expr) -> list[Method]:
        """The methods ``self.<attr>.<name>(...)`` may call: ``name`` of each scanned class
        ``self.<attr>`` is set to (see :func:`attribute_classes`), found through its bases."""
        holder = func.value if isinstance(func, ast.Attribute) else None
        if (
            self.cls is None
            or not isinstance(func, ast.Attribute)
            or not isinstance(holder, ast.Attribute)
            or not isinstance(holder.value, ast.Name)
            or holder.value.id != "self"
        ):
            return []
        targets: list[Method] = []
        for home, cls in attribute_classes(self.project, self.module, self.cls, holder.attr):
            target = self.project.method(home, cls, func.attr)
            if target is not None and all(target[1] is not t[1] for t in targets):
                targets.append(target)
        return targets

    def _dispatched(self, func: ast.Attribute, wrappers: Sequence[Wrapper]) -> list[Wrapper]:
        """The wrappers ``self.<attr>.<name>(...)`` may go to when ``self.<attr>`` is set
        from a scanned factory in this class or a base: the overrides of ``name`` in the
        factory's class and its subclasses that are wrappers."""
        holder = func.value
        if (
            self.cls is None
            or not isinstance(holder, ast.Attribute)
            or not isinstance(holder.value, ast.Name)
            or holder.value.id != "self"
        ):
            return []
        classes = attribute_classes(self.project, self.module, self.cls, holder.attr)
        targets = {(home.real, cls) for home, cls in classes}
        return [
            w
            for w in wrappers
            if w.cls is not None and _derives(self.project, w.module, w.cls, targets)
        ]


def _ungrouped(
    value: DictVal, grouped: dict[str, list[tuple[str, str, ast.expr]]], flow: CollectorFlow
) -> DictVal:
    """Keys added to a field of dicts (``group``, then the inner key), keyed as the getter
    keys them (``f"{group}/{key}"``); one the getter does not read is no key of it."""
    keys: list[Key] = []
    for key in value.keys:
        marks = [
            i
            for i, part in enumerate(key.shape)
            if isinstance(part, Hole) and part.text[:1] == "\x00"
        ]
        if not marks:
            keys.append(key)
            continue
        at = marks[0]
        outer, inner = key.shape[:at], key.shape[at + 1 :]
        for group, name, expression in grouped.get(key.shape[at].text[1:], ()):  # type: ignore[union-attr]
            env: Env = {group: StrVal((outer,)), name: StrVal((inner,))}
            strings = flow._strings(expression, env, whole=True)
            for shape in strings.shapes if strings is not None else ():
                keys.append(Key(shape, key.where, key.why, key.value))
    spreads = tuple(
        s
        for s in value.spreads
        if not any(isinstance(p, Hole) and p.text[:1] == "\x00" for p in s.template)
    )
    return DictVal(tuple(dict.fromkeys(keys)), value.unresolved, spreads)


def _aliases_of(flow: CollectorFlow, maker: Module, name: str) -> list[str]:
    """The names ``maker`` binds to methods of its object ``name`` (``stat = DEFAULT.stat``)."""
    return [alias for alias, (obj, _) in aliases(flow.project, maker).items() if obj == name]


def _reads_variables(adds: DictVal, arguments: dict[str, ast.expr], call: ast.Call) -> bool:
    """Whether filling ``adds`` from ``call`` reads a variable (``put(**parts)``, ``add(name,
    v)``), not only literals (``put(loss=v)``: the keywords are the keys)."""
    if any(keyword.arg is None for keyword in call.keywords):
        return True
    used = {s.param for s in adds.spreads} | {
        part.param
        for key in adds.keys
        for part in key.shape
        if isinstance(part, Hole) and part.param
    }
    for param in used:
        given = arguments.get(param)
        if isinstance(given, ast.Dict):
            if not all(isinstance(k, ast.Constant) for k in given.keys):
                return True
        elif given is not None and not isinstance(given, ast.Constant):
            return True
    return False


def _reduced(
    value: DictVal, export: Exporter, call: ast.Call, target: Method, project: ProjectIndex
) -> DictVal:
    """The keys a call records as the exporter hands them out for the tag it gives them
    (``loss`` recorded with ``MEAN_MIN_MAX``: ``loss/mean``, ``loss/min``, ``loss/max``)."""
    module, method, cls = target
    info = module.full().classes.get(cls or "")
    methods = info.methods if info is not None else {}
    templates = export.exported(tag_of(method, call, export.tags, methods))
    return union([rewrite(value, template) for template in templates])


def _top_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """The nodes of a module's statements outside its ``def`` and ``class`` bodies."""
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield from walk(stmt)


def _one_object(home: Module, cls: str) -> bool:
    """``cls`` makes one object for the whole program: its metaclass is a singleton's
    (``class Timer(metaclass=SingletonMeta)``), so ``Timer()`` anywhere is that object."""
    tree = home.full().tree
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return any(
                keyword.arg == "metaclass" and "singleton" in (dotted(keyword.value) or "").lower()
                for keyword in node.keywords
            )
    return False


def _on_new(node: ast.AST, cls: str, project: ProjectIndex, module: Module) -> Method | None:
    """``Cls().<method>(...)``: the method (of the scanned class ``cls``), else ``None``."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == cls
    ):
        return None
    ref = project.class_named(module, cls)
    if ref is None:
        return None
    found = project.method(ref[0], ref[1], node.func.attr)
    return found if found is not None and found[2] is not None else None


def _names_a_function(node: ast.expr) -> bool:
    """``func.__name__``: the name of a function the code is handed."""
    return isinstance(node, ast.Attribute) and node.attr == "__name__"


def _imports(project: ProjectIndex, module: Module, name: str, home: Module) -> bool:
    """``name`` in ``module`` is the function of ``home`` (defined there, or imported)."""
    if module is home:
        return name in home.functions
    imported = module.imports.get(name)
    if imported is None or imported[1] != name:
        return False
    return project.find_module(imported[0], imported[2], module) is home


def _located(value: DictVal, arguments: dict[str, ast.expr], module: Module) -> DictVal:
    """A key that is a parameter alone (``self.metrics[name] = v``) is found where the
    call passes it (``mgr.add_metric("time/step", t)``), not inside the class."""
    keys = []
    for key in value.keys:
        part = key.shape[0] if len(key.shape) == 1 else None
        given = arguments.get(part.param) if isinstance(part, Hole) and part.param else None
        keys.append(key if given is None else Key(key.shape, module.where(given), key.why))
    return DictVal(tuple(keys), value.unresolved, value.spreads)


def _without_parameters(
    value: DictVal, getter: FuncDef, spans: Sequence[tuple[str, int, int]]
) -> DictVal:
    """A getter's dict without what its class's methods leave to their callers: keys with a
    hole of a parameter not the getter's, and the holes and dicts the adders (at ``spans``)
    take from their parameters (``{key}`` of ``for key in kwargs``; unresolved where the
    method is defined): each call on the object fills them (see ``_collected``)."""
    own = set(params(getter))

    def inside(where: Where) -> bool:
        return any(
            where.path == path and first <= where.line <= last for path, first, last in spans
        )

    keys = tuple(
        key
        for key in value.keys
        if all(part.param in own for part in key.shape if isinstance(part, Hole) and part.param)
        and not (any(isinstance(part, Hole) for part in key.shape) and inside(key.where))
    )
    unresolved = tuple(u for u in value.unresolved if not inside(u.where))
    return DictVal(keys, unresolved, value.spreads)


def _calls_on(func: FuncDef, receiver: str) -> Iterator[tuple[ast.Call, str]]:
    """The calls ``<receiver>.<method>(...)`` in ``func`` (nested functions included), with
    the method's name."""
    for node in walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == receiver
        ):
            yield node, node.func.attr


def _adds(
    flow: CollectorFlow,
    target: Method,
    fields: tuple[frozenset[str], frozenset[str]],
    depth: int,
    seed: tuple[tuple[str, DictVal], ...] = (),
) -> DictVal:
    """What ``method`` of ``cls`` adds to the getter's ``fields`` (those it hands back as
    they are, and its fields of dicts): keys with holes of its parameters, spreads of its
    parameters' dicts; its own writes and those of the ``self.<other>(...)`` calls it
    makes, with their arguments (summarised once per method, fields and ``seed``: keys the
    caller wrote into other fields of the object, ``mgr.timers["tps"] = t``)."""
    project = flow.project
    module, method, cls = target
    assert cls is not None  # a method
    slot = (module.real, cls, method.name, method.lineno, fields, seed)
    cache = project.collector_adds
    if slot in cache:
        return cache[slot]
    if depth > _MAX_CALL_DEPTH:
        return DictVal()
    cache[slot] = DictVal()  # a method calling itself adds nothing more
    scanner = type(flow)(project, module, [], cls=cls, depth=flow.depth + 1)
    env = scanner.collect(method, spread=True, seed={f"self.{f}": held for f, held in seed})
    own = set(params(method))
    seeded = {key.where for _, held in seed for key in held.keys}
    parts: list[DictVal] = []
    for name in fields[1]:
        for outer, inner, whole in _grouped_writes(method, name):
            added = scanner._dict(inner, env) if whole else scanner._keys(inner, env)
            for shape in scanner._part(outer, env, True):
                parts.append(rewrite(added, (*shape, _group(name), SLOT)))
    for name in fields[0]:
        held = env.get(f"self.{name}")
        if isinstance(held, DictVal):
            keys = tuple(key for key in held.keys if _own(key, method, own) or key.where in seeded)
            spreads = tuple(s for s in held.spreads if s.param in own)
            parts.append(DictVal(keys, (), spreads))
    for call, name in _calls_on(method, "self"):
        other = project.method(module, cls, name)
        if other is None or other[1] is method or other[2] is None:
            continue
        called = _adds(flow, other, fields, depth + 1, seed)
        if not called.empty():
            arguments = bind(call, other[1], method=True)
            parts.append(scanner._instantiate(called, call, arguments, env))
    result = union(parts)
    cache[slot] = result
    return result
