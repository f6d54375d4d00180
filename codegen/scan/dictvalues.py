"""Dict values: what an expression holds as a dict (literals, ``dict(...)``, comprehensions,
``a | b``, a dict subclass), and the calls that build one, resolved to the scanned function
they reach and what it returns or fills in its arguments."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence
from typing import Final

from .accumulators import dict_holder, read_tags
from .dispatch import is_abstract, overrides
from .inherited import exported, function_named
from .model import Returns
from .objects import (
    Callables,
    Env,
    Gathered,
    Instance,
    Opaque,
    Value,
)
from .own_writes import (
    ever_held,
    is_plain_attribute,
    read_here,
)
from .receivers import annotated_class, is_ray_get, remote_method
from .records import class_node, dataclass_fields
from .scopes import composed_argument
from .sources import Module
from .state import (
    MAX_ALTERNATIVES,
    OBJECT_EXPRESSIONS,
    ScanState,
    is_field,
    is_format,
    joined,
    literal,
    valued,
)
from .strmethods import call_of
from .syntax import FuncDef
from .syntax import bind as _bind
from .syntax import defaults as _defaults
from .syntax import describe as _describe
from .syntax import dotted as _dotted
from .syntax import params as _params
from .syntax import shown as _shown
from .values import (
    DictVal,
    Hole,
    Key,
    KeyList,
    KeysOf,
    Shape,
    Unresolved,
    Where,
    spread_into,
    union,
)
from .values import concat as _concat

__all__ = [
    "DictValues",
]


_DICT_BASES: Final = frozenset({"dict", "defaultdict", "OrderedDict", "Counter", "UserDict"})
"""Bases making a class's instances dicts (``class Tensors(defaultdict)``)."""


_DICT_CALLS: Final = frozenset({"dict", "collections.OrderedDict", "OrderedDict"})

_ASDICT: Final = frozenset({"asdict", "dataclasses.asdict"})
"""``dataclasses.asdict``: a dict keyed by the dataclass's field names."""


_FLAT_FACTORIES: Final = frozenset({"list", "set", "int", "float"})


def _is_super(node: ast.expr) -> bool:
    """``super()`` (no arguments: the class and instance of the method it is in)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
        and not node.keywords
    )


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


_KEY_COLLECTIONS: Final = frozenset({"list", "sorted", "set", "tuple", "frozenset"})
"""Calls that make a collection of their argument's items (a dict's: its keys)."""


class DictValues(ScanState):
    """The module scanner's reading of dicts and the calls building them (part of ``_Scanner``)."""

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
        gathered = self._gathered(node, env)
        if gathered is not None:
            return gathered
        inner = composed_argument(self.project, self.module, self.cls, node)
        if inner is not None:  # ``self._full_key(key)`` in a tracker: ``key`` (.scopes)
            return self._value(inner, env)
        if self._is_dictish(node, env):
            return self._dict(node, env)
        if isinstance(node, ast.JoinedStr | ast.BinOp | ast.IfExp) or (
            isinstance(node, ast.Call) and is_format(node)
        ):
            looped = self._looped(node, env)
            if looped is not None:
                # ``new_key = f"{prefix}{key}"`` in a loop over a dict: keys rewritten.
                return KeysOf(self._rekeyed(node, env, *looped), looped[1].name)
        elif call_of(node) is not None or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        ):
            looped = self._looped(node, env)
            if looped is not None and looped[1].source.spreads:
                # ``new = untag(name)`` over a parameter's keys: each caller's key renamed
                # (over the keys of a dict of this function, the name stays what it was).
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
        if isinstance(node, OBJECT_EXPRESSIONS):
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
            if is_ray_get(node.func, self.module) and len(node.args) == 1:
                return self._is_dictish(node.args[0], env)  # ``ray.get(ref)``: its value
            if self._asdict(node) is not None:
                return True
            if remote_method(node.func) is not None:
                acted = self._actor_returned(node)
                return acted is not None and acted.whole is not None
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
        if self._element(node, env) is not None:
            return True
        if self._declared_field(node):
            return True
        if isinstance(node, ast.Attribute | ast.Subscript) and self._attribute_dict(node, env):
            return True
        if isinstance(node, ast.Subscript) and self._inner_read(node, env) is not None:
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
                self._dict(value, env)
                if key is None
                else self._hold(valued(self._keys(key, env), value), key, value, env, calls=False)
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
        element = self._element(node, env)
        if element is not None:
            return element
        if isinstance(node, ast.Subscript) and (kept := self._inner_read(node, env)) is not None:
            return kept  # ``d["fipo"]`` of a dict holding one there (.inner)
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
        holder = dict_holder(node)
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

    def _method(self) -> FuncDef | None:
        """The method of ``self.cls`` being read (``None`` in a nested function)."""
        info = self.module.full().classes.get(self.cls or "")
        func = self.func
        if info is None or func is None or info.methods.get(func.name) is not func:
            return None
        return func

    def collect(
        self,
        func: FuncDef,
        *,
        spread: bool = False,
        seed: Env | None = None,
        bound: Env | None = None,
    ) -> Env:
        """The variables after ``func``'s body, ``self.metrics`` holders included; a
        parameter's keys are unresolved where the function starts (its callers are not
        followed), or with ``spread`` its callers' keys; ``seed``: what some ``self.<attr>``
        holds when it starts (see :mod:`.collectors`); ``bound``: what one caller passes
        for some parameters (see :mod:`.inner`)."""
        self.func, self.pending = func, {}
        self.params = set(_params(func))
        env: Env = dict(seed or {})
        for name in self.params:
            what = f"the parameter `{name}` of `{func.name}`"
            param = name if spread else ""
            env[name] = Opaque(self.module, func, what, parameter=True, param=param)
        env.update(bound or {})
        self.ever = {}
        return ever_held(self._block(func.body, env, [], returns=Returns()), self.ever)

    # --- what Ray workers hand back (see :mod:`.receivers`) ----------------------------

    def _actor_returned(self, call: ast.Call) -> Returns | None:
        """What ``handle.<name>.remote(...)`` hands back: the returns of the methods
        ``<name>`` of the actor classes, merged (``None``: no actor class has one)."""
        method = remote_method(call.func)
        if method is None:
            return None
        merged: Returns | None = None
        for module, func, cls in self.project.receivers.actor_methods(method.attr):
            returned = self.project.returned(module, func, cls, self.depth)
            merged = merged or Returns()
            if returned.whole is not None:
                merged.add(returned.whole)
            for index, item in returned.items.items():
                merged.add(tuple(item if i == index else None for i in range(index + 1)))
        return merged

    def _asdict(self, node: ast.Call) -> DictVal | None:
        """``asdict(stats)`` of a ``@dataclass`` instance whose class is known (``stats =
        BatchStats(...)``, or a parameter annotated ``BatchStats``): its field names as
        keys, each where the field is declared; ``None`` for anything else."""
        if _dotted(node.func) not in _ASDICT or len(node.args) != 1:
            return None
        argument = node.args[0]
        if not isinstance(argument, ast.Name):
            return None
        ref = self.objects.get(argument.id)
        if ref is None and argument.id in self.params:
            ref = annotated_class(self.project, self.module, self.func, argument.id)
        if ref is None:
            return None
        home = ref[0].full()
        declared = class_node(home.tree, ref[1])
        fields = dataclass_fields(declared) if declared is not None else None
        if fields is None:
            return None
        return DictVal(tuple(Key((field.id,), home.where(field)) for field in fields))

    def _gathered(self, node: ast.expr, env: Env) -> Gathered | None:
        """``[w.step.remote() for w in workers]``, ``ray.get`` of it, or a name holding it:
        the list of what each worker returns; ``None`` for anything else."""
        if isinstance(node, ast.Name):
            found = self._lookup(node.id, env)
            return found if isinstance(found, Gathered) else None
        if isinstance(node, ast.Call) and is_ray_get(node.func, self.module) and node.args:
            return self._gathered(node.args[0], env)
        calls = (
            [node.elt]
            if isinstance(node, ast.ListComp)
            else list(node.elts)
            if isinstance(node, ast.List | ast.Tuple)
            else []
        )
        returned: list[Returns] = []
        for item in calls:
            if not isinstance(item, ast.Call) or remote_method(item.func) is None:
                return None
            acted = self._actor_returned(item)
            if acted is None:
                return None
            returned.append(acted)
        if not returned:
            return None
        wholes = [r.whole for r in returned if r.whole is not None]
        whole = union(wholes) if wholes else None
        indexes = sorted({index for r in returned for index in r.items})
        items = tuple(
            (index, union([r.items[index] for r in returned if index in r.items]))
            for index in indexes
        )
        return Gathered(whole, items)

    def _element(self, node: ast.expr, env: Env) -> DictVal | None:
        """``results[0]`` of a list of worker dicts: one worker's dict (``None``: no such)."""
        if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
            return None
        if isinstance(node.slice, ast.Slice):
            return None  # ``results[1:]``: a list still
        found = self._lookup(node.value.id, env)
        return found.element if isinstance(found, Gathered) else None

    def _call_dict(self, node: ast.Call, env: Env) -> DictVal:
        name = _dotted(node.func)
        flat = _flat_defaultdict(node)
        if name in _DICT_CALLS or flat:
            # ``defaultdict(list)``: the first argument is the factory, not a dict of keys
            return self._arguments_dict(node.args[1:] if flat else node.args, node.keywords, env)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
            return self._dict(node.func.value, env)
        if is_ray_get(node.func, self.module) and len(node.args) == 1:
            return self._dict(node.args[0], env)  # ``ray.get(ref)``: the value the ref holds
        fields = self._asdict(node)
        if fields is not None:
            return fields
        if remote_method(node.func) is not None:
            acted = self._actor_returned(node)
            if acted is not None and acted.whole is not None:
                return acted.whole
        if self._producer(node):
            return DictVal()  # a declared producer's keys are logged where it returns them
        if self._dict_class(node) is not None:
            return DictVal()  # ``Tensors()``: a new, empty dict subclass
        through = self._through(node)
        if through is not None:
            return self._dict(through, env)
        flattened = self._flattened(node, env)  # ``flatten_dict(nested)``: its leaf paths
        if flattened is not None:
            return flattened
        returned = self._returned(node)
        if returned is not None:
            value = self._guarded(returned[0], node, returned[1])
            if value is not None:
                # A collector's getter: plus what calls on the object add (.collectors).
                value, added = self._collected(value, node, env)
                return self._instantiate(value, node, returned[1], env).merge(added)
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
            if not tail and is_field(node, head):
                return True
            if (
                tail
                and isinstance(node, ast.Subscript)
                and is_field(node.value, head)
                and literal(node.slice) == tail
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
            return self._member_returned(node)
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

    def _member_returned(self, node: ast.Call) -> tuple[Returns, dict[str, ast.expr]] | None:
        """``self.collector.collect(...)``: what the methods of the classes assigned to
        ``self.collector`` return, merged (see :mod:`.collectors`)."""
        targets = self._member_targets(node.func)
        if not targets:
            return None
        merged = Returns()
        for module, func, owner in targets:
            returned = self.project.returned(module, func, owner, self.depth)
            if returned.whole is not None:
                merged.add(returned.whole)
            for index, item in returned.items.items():
                merged.add(tuple(item if i == index else None for i in range(index + 1)))
        if merged.whole is None and not merged.items:
            return None
        return merged, _bind(node, targets[0][1], method=True)

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
        result = DictVal(value.keys, value.unresolved, inner=value.inner)
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
        return DictVal(
            tuple(dict.fromkeys(keys)), value.unresolved, tuple(dict.fromkeys(spreads)), value.inner
        )

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

    def _returned_target(self, call: ast.Call) -> tuple[Module, FuncDef, str | None] | None:
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

    def _function(self, func: ast.expr) -> tuple[Module, FuncDef, str | None] | None:
        """The scanned function a call goes to: same module, same class, or imported."""
        last = self.last_target
        if last is not None and last[0] is func:
            return last[1]  # asked twice for one call (is it a dict? an object?)
        target = self._resolve_function(func)
        self.last_target = (func, target)
        return target

    def _resolve_function(self, func: ast.expr) -> tuple[Module, FuncDef, str | None] | None:
        module = self.module
        if isinstance(func, ast.Name):
            found = function_named(self.project, module, func.id)
            if found is None:
                return self._on_instance(func)  # ``stat = DEFAULT.stat`` (.collectors)
            return (*found, None)
        if isinstance(func, ast.Attribute) and _is_super(func.value):
            return self._super_method(func.attr)  # ``super().evaluate(...)`` (.collectors)
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return self._on_instance(func)
        owner = func.value.id
        if owner in {"self", "cls"} and self.cls is not None:
            return self.project.method(module, self.cls, func.attr)
        if owner in self.typed:
            home, cls = self.typed[owner]
            return self.project.method(home, cls, func.attr)
        if owner in self.objects:  # ``mgr.get_metrics()``, ``mgr = Collector()``
            home, cls = self.objects[owner]
            return self.project.method(home, cls, func.attr)
        if owner in self.params:  # ``model_dims: ModelDims``: a method of its class
            annotated = annotated_class(self.project, module, self.func, owner)
            if annotated is not None:
                return self.project.method(*annotated, func.attr)
        if owner in module.classes and func.attr in module.classes[owner].methods:
            return module, module.classes[owner].methods[func.attr], owner
        imported = module.imports.get(owner)
        if imported is not None:
            name, attr, level = imported
            source = self.project.find_module(joined(name, attr), level, module)
            if source is not None:
                # ``training.get_memory_stats``: a package re-exporting its module's function
                source, name = exported(self.project, source.full(), func.attr, function=True)
                if name in source.functions:
                    return source, source.functions[name], None
        return self._on_instance(func)
