"""Key expressions: the strings a key may be (literals, constants of this or an imported
module, ``a + b``, f-strings, ``%`` and ``str.format``), an unknown part becoming a hole."""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Sequence
from typing import Final

from metric_catalog.series_rules import (
    qualified_key,
)

from .objects import (
    Env,
    Opaque,
)
from .scopes import composed_argument
from .sources import Module
from .state import (
    MAX_ALTERNATIVES,
    ScanState,
    dict_item,
    is_format,
    joined,
)
from .strmethods import apply, call_of
from .syntax import shown as _shown
from .values import (
    SLOT,
    DictVal,
    Hole,
    Key,
    KeysOf,
    Shape,
    Spread,
    StrVal,
    Unresolved,
    rewrite,
    spread_into,
    substitute,
)
from .values import concat as _concat

__all__ = [
    "KeyExpressions",
]


_PERCENT: Final = re.compile(
    r"%(?:\((?P<name>[^)]*)\))?(?P<flags>[-#0 +]*\d*(?:\.\d+)?)(?P<kind>[diouxXeEfFgGcrsa%])"
)
"""One printf-style conversion (``%s``, ``%(name)s``, ``%.2f``, ``%%``)."""


def _added(node: ast.BinOp) -> list[ast.expr]:
    """The operands of a left-nested ``+`` chain, in order, walked without recursion."""
    right: list[ast.expr] = []
    current: ast.expr = node
    while isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add):
        right.append(current.right)
        current = current.left
    return [current, *reversed(right)]


class KeyExpressions(ScanState):
    """The module scanner's reading of keys and strings (a part of ``_Scanner``)."""

    def _keys(self, node: ast.expr, env: Env) -> DictVal:
        """The key expression ``node`` as keys, or why it cannot be resolved."""
        inner = composed_argument(self.project, self.module, self.cls, node)
        if inner is not None:  # ``self._full_key(key)`` in a tracker: ``key`` (.scopes)
            return self._keys(inner, env)
        looped = self._looped(node, env)
        if looped is not None:
            return self._rekeyed(node, env, *looped)
        strings = self._strings(node, env, whole=True)
        if isinstance(strings, StrVal):
            where = self._at(node)
            if len(strings.at) == len(strings.shapes):
                return DictVal(tuple(map(Key, strings.shapes, strings.at)))
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
        source = looped.source
        test = self._loop_test(name)
        if test is not None:
            source = spread_into(Spread("", (SLOT,), ((test, (SLOT,)),)), source)
        if strings is None:
            rewritten = self._per_key(node, env, name, source)
            if rewritten is not None:
                return rewritten
            if source.spreads or source.keys:
                # ``untag(k)``, ``k.rsplit("@", 1)[0] if "@" in k else k``: each key, a
                # caller's too, rewritten by evaluating the expression on it (never kept raw).
                renamer = self._renamer(name, node)
                return spread_into(Spread("", (SLOT,), renames=((renamer, (SLOT,)),)), source)
            what = f"a key computed by `{_shown(node)}` from the keys of `{looped.name}`"
            return DictVal((), (Unresolved(what, self._at(node)),))
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
        if isinstance(node, ast.Call) and is_format(node):
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
            constant = self.module.constants.get(node.id)
            if isinstance(found, StrVal) and constant is not None and node.id not in env:
                return self._element_places(constant, found)  # ``for key in KEYS``
            if isinstance(found, StrVal):
                return found
            if isinstance(found, KeysOf) and found.source.keys and not found.source.unresolved:
                return StrVal(tuple(dict.fromkeys(k.shape for k in found.source.keys)))
            if found is None:
                return self._constant(self.module, node.id, set())
            return None
        method = call_of(node)
        if method is not None:  # ``k.replace("eval/", f"eval/{name}/")`` (.strmethods)
            return self._string_method(*method, env)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name):
                return self._attribute_constant(node.value.id, node.attr)
            if isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name):
                # ``ppo.VALUE_LOSS.prefix``: a field of a row a generated module declares.
                source = self._imported_module(node.value.value.id)
                if source is not None:
                    return self._field(source, node.value.attr, node.attr)
        return None

    def _string_method(self, call: ast.Call, index: int | None, env: Env) -> StrVal | None:
        """A string method on a known string; ``None`` when an operand or the answer is
        unknown (see :mod:`.strmethods`)."""
        assert isinstance(call.func, ast.Attribute)
        base = self._strings(call.func.value, env, whole=True)
        args: list[Shape | int] = []
        for arg in call.args:
            if isinstance(arg, ast.Constant) and type(arg.value) is int:
                args.append(arg.value)
                continue
            value = self._strings(arg, env, whole=True)
            if value is None or len(value.shapes) != 1:
                return None
            args.append(value.shapes[0])
        if base is None:
            return None
        shapes = [apply(call.func.attr, shape, args, index) for shape in base.shapes]
        if any(shape is None for shape in shapes):
            return None
        return StrVal(tuple(dict.fromkeys(shape for shape in shapes if shape is not None)))

    def _per_key(self, node: ast.expr, env: Env, name: str, source: DictVal) -> DictVal | None:
        """Each known key of a looped dict rewritten by ``node`` one at a time (a string
        method on the key is no template around it); ``None`` when one is unknown."""
        if source.spreads or source.unresolved or call_of(node) is None:
            return None
        inner = dict(env)
        keys: list[Key] = []
        for key in source.keys:
            inner[name] = StrVal((key.shape,))
            strings = self._strings(node, inner, whole=True)
            if strings is None:
                return None
            keys.extend(Key(shape, key.where, key.why, key.value) for shape in strings.shapes)
        return DictVal(tuple(dict.fromkeys(keys)))

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
                value = dict_item(named, found.group("name")) if named is not None else None
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
                return type(self)(self.project, module, []).constant_value(keyword.value, set())
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
        return self.project.find_module(joined(module, attr), level, self.module)

    def _constant(self, module: Module, name: str, seen: set[tuple[str, str]]) -> StrVal | None:
        """A module-level string constant (or one imported from a scanned module)."""
        slot = (module.real, name)
        if slot in seen:
            return None
        seen.add(slot)
        expr = module.constants.get(name)
        if expr is not None:
            return type(self)(self.project, module, []).constant_value(expr, seen)
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
                return self._element_places(expr, result)
        return None

    def _element_places(self, expr: ast.expr, value: StrVal) -> StrVal:
        """A list or tuple constant of string literals, one shape per element: each shape
        placed at its element (the constant's own module), so a key from it is reported
        there; any other constant as it is."""
        if not isinstance(expr, ast.Tuple | ast.List) or len(expr.elts) != len(value.shapes):
            return value
        texts = [e.value if isinstance(e, ast.Constant) else None for e in expr.elts]
        if tuple((text,) for text in texts) != value.shapes:
            return value  # not literals only, or a local of that name holding other strings
        return StrVal(value.shapes, tuple(self._at(e) for e in expr.elts))

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
