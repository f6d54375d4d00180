"""Following objects and callables through the module scanner (see :mod:`.objects` for
the values): a field of a returned record, what a function handed over as an argument
returns, and a parameter that is called, resolved at each of its callers."""

from __future__ import annotations

import ast

from .model import Returns
from .objects import Callables, Env, Instance, Opaque, steps
from .records import UNREAD, Record, class_node, record_of
from .sources import Module
from .state import ScanState
from .syntax import bind, defaults, own_expressions, shown, walk
from .values import CALL, SLOT, DictVal, Hole, Spread, Unresolved

__all__ = ["ObjectFlow"]


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


class ObjectFlow(ScanState):
    """The module scanner's reading of objects and callables (a part of ``_Scanner``)."""

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
            node = class_node(module.full().tree, name)
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
                # A string parameter left at its default (``tag=""``) is written as that.
                holes = {
                    p.param
                    for v in fills.values()
                    for k in v.keys
                    for p in k.shape
                    if isinstance(p, Hole)
                }
                given = defaults(definition).items()
                arguments |= {k: v for k, v in given if k in holes and k not in arguments}
                for name, value in fills.items():
                    added = self._instantiate(value, inner, arguments, env)
                    current = self._lookup(name, env)
                    env[name] = current.merge(added) if isinstance(current, DictVal) else added
