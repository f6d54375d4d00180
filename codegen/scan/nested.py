"""Nested dict literals handed to a flattening helper (:mod:`.flatten`): their leaf paths.

``flatten_dict(stats)`` where ``stats = dict(losses=dict(total=l), values=stats_of(v))``
holds ``losses/total`` and ``values/<each key stats_of returns>``: each nested literal
(``{...}``, ``dict(...)``, a comprehension) adds its key and the separator to the path, a
value that is a dict of another kind (a call returning one) adds its keys under the path,
and any other value ends a path. A name is followed to its one assignment in the function.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Final

from .flatten import flattener, separator
from .objects import Env
from .state import ScanState
from .syntax import walk
from .values import SLOT, DictVal, Key, Shape, rewrite, union
from .values import concat as _concat

__all__ = ["NestedDicts"]

_MAX_NESTING: Final = 8
"""How deep nested literals are followed (deeper: the rest of the path is unknown)."""


class NestedDicts(ScanState):
    """The keys of a call of a flattening helper."""

    def _flattened(self, node: ast.Call, env: Env) -> DictVal | None:
        """The leaf paths of the dict a flattening helper is called on; ``None`` for a call
        of anything else."""
        if not node.args:
            return None
        target = self._function(node.func)
        if target is None:
            return None
        found = flattener(target[1])
        if found is None:
            return None
        sep = separator(found, node)
        if sep is None:
            return None  # a separator known only at run time: the keys are not the leaves'
        return self._leaves(node.args[0], (), sep, env, 0)

    def _leaves(self, node: ast.expr, path: Shape, sep: str, env: Env, depth: int) -> DictVal:
        if depth > _MAX_NESTING:
            return self._under(path, self._dict(node, env))
        if isinstance(node, ast.Dict):
            parts = []
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:  # ``{**other}``: its keys at this level
                    parts.append(self._leaves(value, path, sep, env, depth + 1))
                else:
                    parts.append(
                        self._branch(
                            self._keys(key, env), value, path, sep=sep, env=env, depth=depth
                        )
                    )
            return union(parts)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "dict"
        ):
            parts = [self._leaves(arg, path, sep, env, depth + 1) for arg in node.args]
            for item in node.keywords:
                if item.arg is None:
                    parts.append(self._leaves(item.value, path, sep, env, depth + 1))
                else:
                    named = DictVal((Key((item.arg,), self._at(item.value)),))
                    parts.append(
                        self._branch(named, item.value, path, sep=sep, env=env, depth=depth)
                    )
            return union(parts)
        if isinstance(node, ast.DictComp):
            inner = dict(env)
            for generator in node.generators:
                self._bind_loop(generator.target, generator.iter, inner)
            return self._branch(
                self._keys(node.key, inner), node.value, path, sep=sep, env=inner, depth=depth
            )
        if isinstance(node, ast.Name):
            assigned = self._assigned_once(node.id)
            if assigned is not None:
                return self._leaves(assigned, path, sep, env, depth + 1)
        return self._under(path, self._dict(node, env))

    def _branch(
        self, keys: DictVal, value: ast.expr, path: Shape, *, sep: str, env: Env, depth: int
    ) -> DictVal:
        """``keys`` under ``path``, each holding ``value``: a leaf, or a dict whose keys go
        under ``path/key/``."""
        if not self._nested(value, env):
            return self._under(path, keys)
        parts = [
            self._leaves(value, _concat(path, key.shape, (sep,)), sep, env, depth + 1)
            for key in keys.keys
        ]
        return union([DictVal((), keys.unresolved), *parts])

    def _nested(self, value: ast.expr, env: Env) -> bool:
        if isinstance(value, ast.Name) and self._assigned_once(value.id) is not None:
            return self._nested(self._assigned_once(value.id) or value, env)
        return self._is_dictish(value, env)

    def _under(self, path: Shape, value: DictVal) -> DictVal:
        if not path:
            return value
        moved = rewrite(value, _concat(path, (SLOT,)))
        return dataclasses.replace(moved, keys=tuple(dict.fromkeys(moved.keys)))

    def _assigned_once(self, name: str) -> ast.expr | None:
        """The value of the one ``name = ...`` of the function being read (else ``None``)."""
        func = self.func
        if func is None:
            return None
        found: list[ast.expr] = []
        for stmt in walk(func):
            if isinstance(stmt, ast.Assign):
                if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                    found.append(stmt.value)
            elif isinstance(stmt, ast.AugAssign | ast.AnnAssign | ast.For | ast.With):
                target = getattr(stmt, "target", None)
                if isinstance(target, ast.Name) and target.id == name:
                    return None
        return found[0] if len(found) == 1 else None
