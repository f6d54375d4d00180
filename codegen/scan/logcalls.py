"""Logging calls: which calls are a scanned call (by name, receiver class or inheritance) or
a wrapper's, and the keys, prefixes and unresolved parts each one logs."""

from __future__ import annotations

import ast
import bisect
import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

from metric_catalog.series_rules import (
    PREFIX_GLUE,
    PREFIX_SEPARATOR,
    namespace_prefix,
)

from .calls import ScanCall
from .inherited import function_named, named_like_its_callers_match, subclass_call
from .model import Logged, ProjectIndex, Wrapper
from .numeric import module_function
from .objects import (
    Env,
    Opaque,
)
from .receivers import remote_method, visibly_no_dict
from .sources import Module
from .state import (
    MAX_ALTERNATIVES,
    ScanState,
    is_field,
    joined,
    literal,
)
from .syntax import FuncDef, children, walk
from .syntax import bind as _bind
from .syntax import dotted as _dotted
from .syntax import own_expressions as _own_expressions
from .syntax import params as _params
from .syntax import passed as _passed
from .syntax import shown as _shown
from .values import (
    SLOT,
    DictVal,
    Hole,
    Key,
    Shape,
    Unresolved,
    rewrite,
    spread_into,
)
from .values import concat as _concat

__all__ = [
    "LoggingCalls",
    "instances_of",
]


def _decorator_call(
    module: Module, decorator: ast.expr, project: ProjectIndex
) -> tuple[Module, FuncDef, ast.Call] | None:
    """A scanned decorator (``@untagged``, a function of this or an imported module; or
    ``@untagged("@")``, a factory returning one) that returns a nested function calling the
    function it decorates: (its module, that nested function, the call); else ``None``."""
    factory = isinstance(decorator, ast.Call)
    if isinstance(decorator, ast.Call):
        decorator = decorator.func
    if not isinstance(decorator, ast.Name):
        return None
    target = function_named(project, module.full(), decorator.id)
    if target is None:
        return None
    home, func = target
    decorators = [s for s in func.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
    for candidate in decorators if factory else [func]:
        found = _calling_wrapped(candidate)
        if found is not None:
            return home, *found
    return None


def _calling_wrapped(decorator: FuncDef) -> tuple[FuncDef, ast.Call] | None:
    """The nested function of ``decorator`` that calls its first parameter (the decorated
    function), with that call."""
    wrapped = _params(decorator)[:1]
    if not wrapped:
        return None
    for stmt in decorator.body:
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in walk(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == wrapped[0]
            ):
                return stmt, node
    return None


def _rebound(inner: FuncDef, argument: ast.expr) -> ast.expr | None:
    """What ``inner`` hands on for a parameter when it is not the parameter as received:
    the call (``strip(values)``) passed, or assigned to the name passed; ``None`` when the
    parameter goes on unchanged."""
    if not isinstance(argument, ast.Name):
        return argument
    assigned = [
        node.value
        for node in walk(inner)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == argument.id for t in node.targets)
    ]
    kept = [value for value in assigned if not _same_dict(value, argument.id)]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else ast.Tuple(kept)


def _same_dict(value: ast.expr, name: str) -> bool:
    """``value`` is the dict ``name`` holds, or a copy of it (``dict(stats)``)."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dict"
        and len(value.args) == 1
        and not value.keywords
    ):
        value = value.args[0]
    return isinstance(value, ast.Name) and value.id == name


def _helper_of(
    module: Module, source: ast.expr, argument: ast.expr, project: ProjectIndex
) -> tuple[Module, FuncDef, str] | None:
    """``strip(values)``: the scanned module function called and its parameter given the
    dict (the name passed, or the parameter it was assigned from); else ``None``."""
    if not (isinstance(source, ast.Call) and isinstance(source.func, ast.Name)):
        return None
    target = function_named(project, module, source.func.id)
    if target is None:
        return None
    names = {argument.id} if isinstance(argument, ast.Name) else set()
    bound = _bind(source, target[1], method=False)
    for param, value in bound.items():
        if isinstance(value, ast.Name) and (value.id in names or not names):
            return target[0], target[1], param
    return None


def instances_of(module: Module, qualifiers: Iterable[str]) -> dict[str, set[str]]:
    """Receivers assigned ``Cls(...)`` (or a module: ``self._wandb = wandb``) or annotated
    ``Cls`` in ``module``, for the classes ``qualifiers`` names, read from the text (a regular
    expression, not a second walk)."""
    found: dict[str, set[str]] = {}
    names = set(qualifiers)
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
    return found


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
        if isinstance(target, ast.Subscript) and is_field(target.value, head):
            if not tail:
                yield target.slice, None
            elif literal(target.slice) == tail and value is not None:
                yield value, value
        elif is_field(target, head) and isinstance(value, ast.Dict):
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
            if is_field(func.value, head) and inner.args:
                yield inner.args[0], inner.args[0]


def _dict_field(node: ast.Dict, tail: str) -> Iterator[tuple[ast.expr, ast.expr | None]]:
    if not tail:
        yield node, node
        return
    for key, value in zip(node.keys, node.values, strict=True):
        if key is not None and literal(key) == tail:
            yield value, value


class LoggingCalls(ScanState):
    """The module scanner's reading of logging calls (a part of ``_Scanner``)."""

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
        if self._match(call, self.project.calls) is not None:
            return []  # judged as the scan-calls entry it matches, not a second time
        method = remote_method(func)
        if method is not None:  # ``handle.log_dict.remote(d)``: an actor's ``log_dict(d)``
            wave = {id(w.func) for w in self.wrappers.get(method.attr, [])}
            return [
                w for w in self.project.receivers.actor_wrappers(method.attr) if id(w.func) in wave
            ]
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        wrappers = self.wrappers.get(name or "")
        if not wrappers:
            return []
        target = self._function(func)
        if target is not None:
            return [w for w in wrappers if target[1] is w.func]
        if not isinstance(func, ast.Attribute):
            return []
        dispatched = self._dispatched(func, wrappers)  # ``self.tracker`` from a factory
        if dispatched:
            return dispatched
        head = _dotted(func.value)
        if head is not None and head.partition(".")[0] in self.module.imports:
            return []  # ``np.log(x)``: a module's function, not the wrapper
        all_wrappers = self.project.wrappers.get(wrappers[0].name, [])
        if self.project.defined(wrappers[0].name) == len(all_wrappers):
            return wrappers
        # A logger built from config (``self.logger = instantiate(cfg.metric_logger)``): any
        # class of the wrappers' family, when no other class has a method of the name; not
        # a call on what a call returned (``logger.opt(depth=1).log(...)`` of loguru).
        if head is None:
            return []
        family = self.project.receivers.family_wrappers(wrappers[0].name, self.func)
        wave = {id(w.func) for w in wrappers}
        return [w for w in family if id(w.func) in wave]

    def _log_wrapped(self, call: ast.Call, wrapper: Wrapper, env: Env) -> None:
        """A call of a wrapper: each logging call inside it logs the argument's keys."""
        wrapper.used = True
        method = wrapper.cls is not None
        arguments = _bind(call, wrapper.func, method=method)
        for logged in self.project.wrapped_by(wrapper):
            value = DictVal()
            for spread in logged.spreads:
                argument = arguments.get(spread.param)
                if argument is not None and not visibly_no_dict(argument):
                    given = self._reach(argument, spread.path, env)
                    given = self._decorated(wrapper, spread.param, given, call)
                    value = value.merge(spread_into(spread, given))
            if value.empty():
                continue
            self._found(logged, call, self._params_filled(value, arguments, env))

    def _decorated(self, wrapper: Wrapper, param: str, given: DictVal, call: ast.Call) -> DictVal:
        """``given``, passed for ``param``, as the scanned decorators of ``wrapper`` hand it
        on: a decorator's inner function calling the wrapped one with ``strip(values)``
        (or after ``values = strip(values)``) rewrites each key as ``strip`` does; a
        rewrite scan cannot follow makes the keys unresolved at the call, never kept raw."""
        for decorator in wrapper.func.decorator_list:
            found = _decorator_call(wrapper.module, decorator, self.project)
            if found is None:
                continue  # not scanned (``functools.cache``): the keys pass unchanged
            home, inner, passed = found
            argument = _bind(passed, wrapper.func, method=False).get(param)
            if argument is None:
                continue
            source = _rebound(inner, argument)
            if source is None:
                continue  # handed on as received
            helper = _helper_of(home, source, argument, self.project)
            if helper is None:
                what = (
                    f"the keys passed to `{wrapper.name}`, which its decorator "
                    f"`{_shown(decorator)}` rewrites by `{_shown(source)}` (not followed)"
                )
                return DictVal((), (Unresolved(what, self._at(call)),))
            helper_module, helper_func, helper_param = helper
            returned = self.project.returned(helper_module, helper_func, None, self.depth)
            whole = returned.whole or DictVal()
            rewritten = DictVal(whole.keys, whole.unresolved)
            for spread in whole.spreads:
                if spread.param == helper_param and not spread.path:
                    rewritten = rewritten.merge(spread_into(spread, given))
            given = rewritten
        return given

    def _params_filled(self, value: DictVal, arguments: dict[str, ast.expr], env: Env) -> DictVal:
        """``value``'s keys with each hole a wrapper's parameter left (``f"{name}/{key}"``)
        filled by the string the call passes there (``gather("multi_turn", d)``)."""
        keys: list[Key] = []
        for key in value.keys:
            shapes = self._shape_filled(key.shape, arguments, env)
            keys.extend(dataclasses.replace(key, shape=shape) for shape in shapes)
        # The callers' keys handed on (``gather("rollout", log_dict)`` inside a wrapper of
        # ``log_dict``'s own caller) take this call's strings in their template too.
        spreads = [
            dataclasses.replace(spread, template=shape)
            for spread in value.spreads
            for shape in self._shape_filled(spread.template, arguments, env)
        ]
        return dataclasses.replace(
            value, keys=tuple(dict.fromkeys(keys)), spreads=tuple(dict.fromkeys(spreads))
        )

    def _shape_filled(self, shape: Shape, arguments: dict[str, ast.expr], env: Env) -> list[Shape]:
        """``shape`` with each hole of a parameter this call passes a string for filled."""
        shapes: list[Shape] = [()]
        for part in shape:
            given = arguments.get(part.param) if isinstance(part, Hole) else None
            options = (
                self._part(given, env, True)
                if isinstance(part, Hole) and part.param and given is not None
                else ((part,),)
            )
            shapes = [_concat(a, b) for a in shapes for b in options][:MAX_ALTERNATIVES]
        return shapes

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
        ``Cls`` in this file, and the ``self.<attr>`` a base class in another file binds."""
        module = self.module
        if module.instances is not None:
            return module.instances
        found = instances_of(module, self.project.qualifiers)
        for receiver, classes in module.inherited.items():
            found.setdefault(receiver, set()).update(classes)
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
            head = joined(imported[0], imported[1])
        return f"{head}{dot}{rest}.{name}"

    def _argument(
        self, call: ast.Call, position: int | None, keywords: tuple[str, ...]
    ) -> ast.expr | None:
        return _passed(call, position, keywords)

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
