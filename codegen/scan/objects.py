"""Objects and callables as values: the dict a field of a returned object holds, and what a
function handed over as an argument returns.

Real trainers hand their metrics back in a small record (``return Outputs(loss=l,
metrics=m)``) and call functions they are given (``out = loss_fn(inputs)``, then
``out.metrics``). ``scan`` follows both, statically:

* ``Cls(...)`` of a record class of the scanned files (a dataclass, a ``NamedTuple``, an
  attrs or pydantic model, or a class whose ``__init__`` stores its parameters on ``self``)
  is an :class:`Instance` holding what each field was given, by keyword or by position;
* what a function returns is the union over its ``return`` statements; a ``return`` of
  something not followed leaves the fields partly unresolved, reported where it enters;
* a function used as a value (a module function named as an argument, the nested ``def``
  a factory returns from each branch) is a :class:`Callables`: calling it gives the union of
  what every target returns;
* a parameter that is called (``loss_fn(inputs)``) is its callers' business: a field read
  on what it returns is a :class:`~codegen.scan.values.Spread` with a path (``("()",
  "metrics")``), resolved at every call by what that caller passes, and so on up the calls.

A field read on an object no followed construction gives a dict, and a callable nothing
passes, stay ``SCAN_UNRESOLVED``: a key is only ever reported when some path writes it.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias

from .syntax import FuncDef, bind, describe, own_expressions, shown, walk
from .values import CALL, SLOT, DictVal, KeyList, KeysOf, Spread, StrVal, Unresolved, Where

if TYPE_CHECKING:
    from .extract import Module, Project, Returns

__all__ = [
    "UNREAD",
    "Callables",
    "Env",
    "Instance",
    "ObjectFlow",
    "Opaque",
    "Record",
    "Value",
    "gaining",
    "join_objects",
    "record_of",
    "steps",
]

FuncRef: TypeAlias = "tuple[Module, FuncDef, str | None]"
"""A scanned function: its module, its definition, and its class (``None``: no method)."""


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
    param: str = ""
    """The parameter's name when the value is one (its callers' arguments hold the keys)."""
    called: str = ""
    """What calling the parameter of that name returned (``loss_fn(inputs)``): a field read
    on it is the callers' business."""
    callee: Callables | None = None
    """What calling these functions returned (``out = step(x)``, ``step`` a nested ``def``):
    followed only when a field of it is read."""
    field_of: Instance | None = None
    """For ``x = out.metrics``: the object ``out``; ``x`` is read as a dict only where the
    code uses it as one."""
    owner: str = ""
    """For ``self.<attr>`` given to a record's field: the class whose methods write it,
    followed only when that field is read (at ``depth``)."""
    depth: int = 0

    def as_dict(self) -> DictVal:
        """A parameter: its callers' keys (a spread); anything else: unresolved."""
        if self.param:
            return DictVal(spreads=(Spread(self.param, (SLOT,)),))
        return DictVal((), (self.why,))

    @property
    def why(self) -> Unresolved:
        """What cannot be resolved, and where."""
        what = self.label or describe(self.node)
        if self.shown is not None:
            what += f"`{shown(self.shown)}`"
        return Unresolved(what, self.module.where(self.node))


@dataclass(frozen=True, slots=True)
class Instance:
    """An object: what each field was given in every construction that reaches here, what
    reaches here unfollowed, and the objects callers pass (a spread with a path)."""

    fields: tuple[tuple[str, DictVal | Opaque], ...] = ()
    """Field name -> what one construction gave it (an :class:`Opaque`: no dict, described
    only when read)."""
    unresolved: tuple[Unresolved, ...] = ()
    spreads: tuple[Spread, ...] = ()

    def merge(self, other: Instance) -> Instance:
        """Either object: every field's dicts, unresolved parts and spreads (each once)."""
        return Instance(
            tuple(dict.fromkeys(self.fields + other.fields)),
            tuple(dict.fromkeys(self.unresolved + other.unresolved)),
            tuple(dict.fromkeys(self.spreads + other.spreads)),
        )

    def field(self, name: str, unknown: Unresolved, settle: Callable[[Opaque], DictVal]) -> DictVal:
        """The dict the field ``name`` holds; ``unknown`` when nothing here gives it one;
        ``settle`` says what a field given something not yet followed holds."""
        spreads = tuple(dataclasses.replace(s, path=(*s.path, name)) for s in self.spreads)
        result = DictVal((), self.unresolved, spreads)
        given = False
        for field_name, value in self.fields:
            if field_name == name:
                held = value if isinstance(value, DictVal) else settle(value)
                result, given = result.merge(held), True
        if not given and result.empty():
            return DictVal((), (unknown,))
        return result


@dataclass(frozen=True, slots=True)
class Callables:
    """A function as a value: the scanned functions it may be, and what reaches unfollowed."""

    targets: tuple[FuncRef, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()

    def merge(self, other: Callables) -> Callables:
        """Any function of either."""
        return Callables(
            tuple(dict.fromkeys(self.targets + other.targets)),
            tuple(dict.fromkeys(self.unresolved + other.unresolved)),
        )


Value: TypeAlias = DictVal | StrVal | KeysOf | KeyList | Opaque | Instance | Callables
Env: TypeAlias = dict[str, Value]


@dataclass(frozen=True, slots=True)
class Record:
    """How a record class's constructor fills its fields."""

    positional: tuple[str, ...]
    """The field each positional argument fills (``""``: none); empty when unknown."""
    keywords: dict[str, str]
    """Keyword argument -> the field it fills."""


_RECORD_DECORATORS = frozenset({"dataclass", "define", "frozen", "mutable", "attrs"})
_RECORD_BASES = frozenset({"NamedTuple", "BaseModel", "Struct"})


def _last_name(node: ast.expr) -> str:
    """``dataclasses.dataclass(frozen=True)`` -> ``dataclass``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


UNREAD: Final = Record((), {})
"""A class whose constructor has not been read yet (see ``ObjectFlow._record``)."""


def _class_node(tree: ast.Module | None, name: str) -> ast.ClassDef | None:
    """The module-level class ``name`` (also under ``if``/``try``) of ``tree``."""
    body = list(tree.body) if tree is not None else []
    while body:
        stmt = body.pop(0)
        if isinstance(stmt, ast.ClassDef) and stmt.name == name:
            return stmt
        if isinstance(stmt, ast.If | ast.Try):
            body.extend(stmt.body)
    return None


def record_of(node: ast.ClassDef) -> Record | None:
    """How ``Cls(...)`` fills the fields of the class ``node``, or ``None`` (not a record)."""
    bases = [_last_name(base) for base in node.bases]
    if any(_last_name(d) in _RECORD_DECORATORS for d in node.decorator_list) or any(
        base in _RECORD_BASES for base in bases
    ):
        names: list[str] = []
        held: list[str] = []
        by_position = True
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                annotation = _words(item.annotation)
                if "classvar" in annotation:
                    continue  # a class attribute, no field
                if "kw_only" in annotation:
                    by_position = False  # the fields after ``_: KW_ONLY`` take keywords only
                    continue
                names += [item.target.id] if by_position else []
                held += [item.target.id] if _may_hold_dict(item.annotation) else []
        keyword_only = any(
            isinstance(d, ast.Call) and any(k.arg == "kw_only" for k in d.keywords)
            for d in node.decorator_list
        )
        own = all(base in _RECORD_BASES or base == "object" for base in bases)
        positional = (
            tuple(n if n in held else "" for n in names) if own and not keyword_only else ()
        )
        return Record(positional, {name: name for name in held}) if held else None
    return _stored_by_init(node)


def _may_hold_dict(annotation: ast.expr | None) -> bool:
    """A field or parameter annotated so that it may hold a dict of metrics (or unannotated):
    a field typed ``Tensor`` or ``int`` never does, and is not followed."""
    if annotation is None:
        return True
    text = _words(annotation)
    return any(word in text for word in _DICT_WORDS)


def _words(annotation: ast.expr) -> str:
    """The names and strings of an annotation, lower case (``optional dict str float``)."""
    words = []
    for node in walk(annotation):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.append(node.value)  # a string annotation: its text holds the names
    return " ".join(words).lower()


_DICT_WORDS: Final = ("dict", "mapping", "any", "object", "metrics")
"""Words of an annotation that may name a dict (``dict[str, float]``, ``Mapping``, ``Any``,
a ``TypedDict`` subclass named ``...Metrics``)."""


def _stored_by_init(node: ast.ClassDef) -> Record | None:
    """A class whose ``__init__`` stores parameters as they are (``self.metrics = metrics``)."""
    init = next(
        (i for i in node.body if isinstance(i, ast.FunctionDef) and i.name == "__init__"), None
    )
    if init is None:
        return None
    stored: dict[str, str] = {}
    annotated = {a.arg: a.annotation for a in (*init.args.posonlyargs, *init.args.args)}
    for stmt in init.body:
        if (
            isinstance(stmt, ast.Assign | ast.AnnAssign)
            and isinstance(stmt.value, ast.Name)
            and (target := stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target)
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and _may_hold_dict(annotated.get(stmt.value.id))
        ):
            stored[stmt.value.id] = target.attr
    if not stored:
        return None
    args = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    return Record(tuple(stored.get(arg, "") for arg in args), stored)


def gaining(holder: object, added: DictVal) -> DictVal | None:
    """What a dict holding ``holder`` holds once ``added`` is written into it: a followed
    dict or a parameter (its callers' keys) gains the keys; ``None`` holder (nothing
    known yet) becomes ``added``; ``None`` back: anything else, left as it is."""
    if isinstance(holder, DictVal):
        return holder.merge(added)
    if isinstance(holder, Opaque):
        return holder.as_dict().merge(added)
    return added if holder is None else None


def join_objects(values: list[Value]) -> Value | None:
    """The objects or callables a name holds after branches, or ``None`` (none of them)."""
    if not any(isinstance(v, Instance | Callables) for v in values):
        return None
    objects = [v for v in values if isinstance(v, Instance)]
    functions = [v for v in values if isinstance(v, Callables)]
    if not objects and not functions:
        return None
    unknown = tuple(
        v.why
        for v in values
        if isinstance(v, Opaque) and not (isinstance(v.node, ast.Constant) and v.node.value is None)
    )
    if objects and not functions:
        joined = Instance(unresolved=unknown)
        for item in objects:
            joined = joined.merge(item)
        return joined
    if functions and not objects:
        together = Callables(unresolved=unknown)
        for function in functions:
            together = together.merge(function)
        return together
    return None


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def steps(path: tuple[str, ...]) -> str:
    """A spread's path as shown in messages: ``("()", "metrics")`` -> ``(...).metrics``."""
    return "".join("(...)" if step == CALL else f".{step}" for step in path)


class ObjectFlow:
    """The module scanner's reading of objects and callables (a part of ``_Scanner``)."""

    if TYPE_CHECKING:
        module: Module
        project: Project
        depth: int
        cls: str | None
        pending: dict[str, tuple[FuncDef, dict[str, DictVal]]]

        def _lookup(self, name: str, env: Env) -> Value | None: ...
        def _dict(self, node: ast.expr, env: Env) -> DictVal: ...
        def _is_dictish(self, node: ast.expr, env: Env) -> bool: ...
        def _function(self, func: ast.expr) -> FuncRef | None: ...
        def _at(self, node: ast.AST) -> Where: ...
        def _instantiate(
            self, value: DictVal, call: ast.Call, arguments: dict[str, ast.expr], env: Env
        ) -> DictVal: ...

    def _object(self, node: ast.expr, env: Env) -> Instance | Callables | None:
        """The object or functions ``node`` evaluates to, or ``None`` (not followed)."""
        if isinstance(node, ast.Await):
            node = node.value
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            if isinstance(found, Instance | Callables):
                return found
            if isinstance(found, Opaque) and found.called:
                return Instance(spreads=(Spread(found.called, (SLOT,), path=(CALL,)),))
            if isinstance(found, Opaque) and found.callee is not None:
                return self._called(found.callee)
            if found is None:
                target = self._function(node)
                return Callables((target,)) if target is not None else None
            return None
        if isinstance(node, ast.Call):
            called = self._called_param(node, env)
            if called:
                return Instance(spreads=(Spread(called, (SLOT,), path=(CALL,)),))
            return self._call_object(node, env)
        return None

    def _holds_dict_field(self, node: ast.Attribute, env: Env) -> bool:
        """``out.metrics`` where ``out`` was built here with a dict for ``metrics``: a dict for
        sure. Fields of what a parameter or nested function returned are read as dicts only
        where the code uses them as one (:meth:`_field_dict`), never assumed."""
        base = node.value
        found = self._lookup(base.id, env) if isinstance(base, ast.Name) else None
        if not isinstance(found, Instance):
            return False
        return any(name == node.attr and isinstance(v, DictVal) for name, v in found.fields)

    def _holds_object(self, node: ast.expr, env: Env) -> bool:
        """``node`` is a name holding an object or what a parameter or function returned."""
        found = self._lookup(node.id, env) if isinstance(node, ast.Name) else None
        return isinstance(found, Instance) or (
            isinstance(found, Opaque) and bool(found.called or found.callee)
        )

    def _field_value_of(self, found: Opaque) -> DictVal:
        """A name assigned ``out.metrics`` (``out`` an object), used as a dict."""
        node = found.node
        assert isinstance(node, ast.Attribute)
        assert found.field_of is not None
        what = (
            f"a dict read from `{shown(node)}`: no construction scan follows gives "
            f"`{node.attr}` a dict"
        )
        unknown = Unresolved(what, found.module.where(node))
        return found.field_of.field(node.attr, unknown, self._settle)

    def _object_value(self, node: ast.expr, env: Env) -> Opaque | Instance | Callables | None:
        """A call or name as a value: what a called parameter or a nested function returns
        (an :class:`Opaque` a field read follows), an object, functions, or ``None``."""
        inner = node.value if isinstance(node, ast.Await) else node
        if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)):
            return self._object(node, env)
        found = self._lookup(inner.func.id, env)
        if isinstance(found, Opaque) and found.param:
            return Opaque(self.module, node, called=found.param)
        if isinstance(found, Callables):
            return Opaque(self.module, node, callee=found)  # followed when a field is read
        return self._target_object(inner, env) if found is None else None

    def _called_param(self, node: ast.expr, env: Env) -> str:
        """``loss_fn(inputs)`` with ``loss_fn`` a parameter: its name (else ``""``)."""
        if isinstance(node, ast.Await):
            node = node.value
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            return ""
        found = self._lookup(node.func.id, env)
        return found.param if isinstance(found, Opaque) else ""

    def _call_object(self, call: ast.Call, env: Env) -> Instance | Callables | None:
        """What ``call`` returns as an object: a record's construction, a scanned function's
        returned objects (its parameters' filled by this call), a function value's."""
        func = call.func
        if isinstance(func, ast.Name):
            found = self._lookup(func.id, env)
            if isinstance(found, Callables):
                return self._called(found)
            if found is not None:
                return None
        return self._target_object(call, env)

    def _target_object(self, call: ast.Call, env: Env) -> Instance | Callables | None:
        """What the scanned function or record class ``call`` names returns or builds."""
        func = call.func
        target = self._function(func)  # resolved already by the is-it-a-dict question
        if target is None:
            record = self._record(func)
            return self._constructed(call, record, env) if record is not None else None
        module, definition, cls = target
        value = self._returned_object(self.project.returned(module, definition, cls, self.depth))
        if isinstance(value, Instance) and value.spreads:
            arguments = bind(call, definition, method=cls is not None)
            value = self._passed_object(value, call, arguments, env)
        return value

    def _returned_object(self, returned: Returns) -> Instance | Callables | None:
        """A function's returned objects or functions, with what it returns unfollowed."""
        if returned.instance is None and returned.callables is None:
            return None
        if returned.settled is None:
            unknown = tuple(dict.fromkeys(item.why for item in returned.opaque))
            if returned.instance is not None:
                held = returned.instance
                returned.settled = held.merge(Instance(unresolved=unknown)) if unknown else held
            else:
                assert returned.callables is not None
                returned.settled = returned.callables.merge(Callables(unresolved=unknown))
        return returned.settled

    def _called(self, functions: Callables) -> Instance:
        """What calling any of ``functions`` returns (their parameters unknown here)."""
        result = Instance(unresolved=functions.unresolved)
        for module, definition, cls in functions.targets:
            returned = self.project.returned(module, definition, cls, self.depth)
            value = self._returned_object(returned)
            if isinstance(value, Instance):
                unknown = tuple(
                    Unresolved(
                        f"what `{definition.name}` returns from its parameter `{s.param}`",
                        module.where(definition),
                    )
                    for s in value.spreads
                )
                value = Instance(value.fields, value.unresolved + unknown)
            else:
                whys = tuple(item.why for item in returned.opaque) or (
                    Unresolved(
                        f"what `{definition.name}` returns, which scan cannot follow",
                        module.where(definition),
                    ),
                )
                value = Instance(unresolved=whys)
            result = result.merge(value)
        return result

    def _passed_object(
        self, value: Instance, call: ast.Call, arguments: dict[str, ast.expr], env: Env
    ) -> Instance:
        """A callee's returned object with the objects this call passes for its parameters."""
        result = Instance(value.fields, value.unresolved)
        for spread in value.spreads:
            argument = arguments.get(spread.param)
            if argument is None:
                what = f"the object the parameter `{spread.param}{steps(spread.path)}` gives"
                result = result.merge(Instance(unresolved=(Unresolved(what, self._at(call)),)))
                continue
            result = result.merge(self._reached_object(argument, spread.path, env))
        return result

    def _reached_object(self, argument: ast.expr, path: tuple[str, ...], env: Env) -> Instance:
        """The object ``path`` reaches from ``argument`` (``(CALL,)``: what calling it gives)."""
        found = self._lookup(argument.id, env) if isinstance(argument, ast.Name) else None
        if isinstance(found, Opaque) and found.param:
            return Instance(spreads=(Spread(found.param, (SLOT,), path=path),))
        value: Instance | Callables | None = self._object(argument, env)
        for step in path:
            value = self._called(value) if step == CALL and isinstance(value, Callables) else None
        if isinstance(value, Instance):
            return value
        what = f"the object `{shown(argument)}{steps(path)}`, which scan cannot follow"
        return Instance(unresolved=(Unresolved(what, self._at(argument)),))

    def _reach(self, argument: ast.expr, path: tuple[str, ...], env: Env) -> DictVal:
        """The dict ``path`` reaches from a caller's ``argument`` (``loss_fn(...).metrics``)."""
        if not path:
            return self._dict(argument, env)
        *head, name = path
        if name == CALL:
            what = f"the dict `{shown(argument)}{steps(path)}` returns, which scan cannot follow"
            return DictVal((), (Unresolved(what, self._at(argument)),))
        held = self._reached_object(argument, tuple(head), env)
        what = (
            f"a dict read from `{shown(argument)}{steps(path)}`: no construction scan follows "
            f"gives `{name}` a dict"
        )
        return held.field(name, Unresolved(what, self._at(argument)), self._settle)

    def _field_dict(self, node: ast.Attribute, env: Env) -> DictVal | None:
        """``out.metrics`` on an object: the dicts its constructions give the field."""
        held = self._object(node.value, env)
        if not isinstance(held, Instance):
            return None
        what = (
            f"a dict read from `{shown(node)}`: no construction scan follows gives "
            f"`{node.attr}` a dict"
        )
        return held.field(node.attr, Unresolved(what, self._at(node)), self._settle)

    def _settle(self, given: Opaque) -> DictVal:
        """What a record's field given ``self.<attr>`` holds (the class's writes into it)."""
        node = given.node
        if given.owner and isinstance(node, ast.Attribute):
            held = self.project.attribute_dict(given.module, given.owner, node.attr, given.depth)
            if held is not None:
                return held
        return DictVal((), (given.why,))

    def _record(self, func: ast.expr) -> Record | None:
        """The record class a constructor call names (same file or imported), or ``None``."""
        module: Module | None
        if isinstance(func, ast.Name):
            found = self.project.class_named(self.module, func.id)
            if found is None:
                return None
            module, name = found
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.attr[:1].isupper()  # ``mod.Outputs(...)``, not ``torch.cat(...)``
        ):
            imported = self.module.imports.get(func.value.id)
            if imported is None:
                return None
            where, attr, level = imported
            dotted = f"{where}.{attr}" if where and attr else (attr or where)
            module = self.project.find_module(dotted, level, self.module)
            name = func.attr
        else:
            return None
        info = module.classes.get(name) if module is not None else None
        if info is None or module is None:
            return None
        if info.record is UNREAD:
            # Read when a constructor is first followed: most classes are never constructed
            # where a logged dict comes from.
            node = _class_node(module.full().tree, name)
            info.record = record_of(node) if node is not None else None
        return info.record if isinstance(info.record, Record) else None

    def _constructed(self, call: ast.Call, record: Record, env: Env) -> Instance:
        """``Outputs(loss=l, metrics=m)``: the dict each field is given."""
        fields: list[tuple[str, DictVal | Opaque]] = []
        unknown: list[Unresolved] = []
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred) or index >= len(record.positional):
                what = f"the fields `{shown(call.func)}(...)` is given by position"
                unknown.append(Unresolved(what, self._at(argument)))
                break
            if record.positional[index]:
                fields.append((record.positional[index], self._field_value(argument, env)))
        for keyword in call.keywords:
            if keyword.arg is None:
                what = f"the fields `{shown(call.func)}(...)` is given by `**`"
                unknown.append(Unresolved(what, self._at(keyword.value)))
            elif keyword.arg in record.keywords:
                name = record.keywords[keyword.arg]
                fields.append((name, self._field_value(keyword.value, env)))
        return Instance(tuple(fields), tuple(unknown))

    def _field_value(self, node: ast.expr, env: Env) -> DictVal | Opaque:
        """What a constructor argument holds as a dict (no dict: described when read)."""
        found = self._lookup(node.id, env) if isinstance(node, ast.Name) else None
        if isinstance(node, ast.Attribute) and self.cls is not None and _is_self(node.value):
            # ``Outputs(metrics=self.metrics)``: the class's writes, read if the field is.
            return Opaque(self.module, node, owner=self.cls, depth=self.depth)
        if self._is_dictish(node, env) or (isinstance(found, Opaque) and found.param):
            return self._dict(node, env)
        return Opaque(self.module, node)

    def _return_object(self, node: ast.expr, env: Env, returns: Returns) -> None:
        """A ``return`` of an object or a function (or of something not followed)."""
        value = self._object(node, env)
        if isinstance(value, Instance):
            now = returns.instance
            returns.instance = value if now is None else now.merge(value)
        elif isinstance(value, Callables):
            held = returns.callables
            returns.callables = value if held is None else held.merge(value)
        elif not isinstance(node, ast.Constant):
            label = "an object returned by " if isinstance(node, ast.Call) else ""
            returns.opaque.append(
                Opaque(self.module, node, label, node.func if isinstance(node, ast.Call) else None)
            )

    def _closure_calls(self, stmt: ast.stmt, env: Env) -> None:
        """Calls of a nested function that fills a dict of this one from its parameters
        (``run(loss_fn, x)``): the dict gains what this call passes."""
        for node in own_expressions(stmt):
            for inner in walk(node):
                if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)):
                    continue
                pending = self.pending.get(inner.func.id)
                if pending is None:
                    continue
                definition, fills = pending
                arguments = bind(inner, definition, method=False)
                for name, value in fills.items():
                    added = self._instantiate(value, inner, arguments, env)
                    current = self._lookup(name, env)
                    env[name] = current.merge(added) if isinstance(current, DictVal) else added
