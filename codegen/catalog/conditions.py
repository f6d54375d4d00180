"""Presence conditions over a run's configuration: parsed, checked, never ``eval``-ed.

A ``conditionally_required`` row says when it is logged. Written as prose
(``"when validation runs"``) that stays information for a reader; written as
a small expression over the run's configuration it is checked::

    condition: config.algorithm.use_kl_in_reward
    condition: config.trainer.test_freq > 0 and not config.trainer.val_before_train
    condition: config.actor_rollout_ref.rollout.multi_turn.enable == true

The language: ``config.<path>`` (dotted names, ``config.a["b-c"]`` for a key
that is not a name), ``run.format`` (the format live-check read the run in:
``jsonl``, ``flat-jsonl``, ``wandb``, ``tensorboard``, ``mlflow``, ...; for a key
only some of the code's logging backends get, such as Megatron-LM's ``... vs
samples``, which it writes to TensorBoard and not to W&B), literals
(numbers, strings, ``true``/``false``/``null`` and Python's
``True``/``False``/``None``), comparisons (``== != < <= > >=``, ``in``/``not
in`` against a literal list), ``and``, ``or``, ``not`` and parentheses.
Anything else (calls, attribute access on other names, arithmetic, subscripts
with non-literal keys) is refused. A text that does not
parse as such an expression, or names neither ``config`` nor ``run``, is prose.

A value is looked up in the configuration a run logged
(``JsonlLogger(config=...)``); a missing path makes the condition
*undecided* (the row stays information), never an error at check time,
unless the rest decides it: ``and`` is false when any operand is false,
``or`` true when any is true, whatever the undecided ones are.
``first_step`` may name a configuration value the same way
(``first_step: config.trainer.test_freq``), plus or minus a whole number when
the code counts from it (OpenRLHF trains the actor once ``global_step >
freezing_actor_steps``: ``first_step: config.freezing_actor_steps + 1``).

A key family's condition may name the attribute its key captures as a placeholder,
``{rl.role}``: the condition is then one per value of the attribute's enum, the text
with the placeholder replaced by the value (``timing/{rl.role}_offload`` is logged for a
role whose ``config.{rl.role}.offload`` is on). :func:`condition_attributes` finds the
names and :func:`for_value` spells the condition of one value.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from metric_catalog.series_rules import ConfigChoice

__all__ = [
    "MAX_CONDITION_ATTRIBUTE_VALUES",
    "MAX_CONDITION_DEPTH",
    "MAX_CONDITION_LENGTH",
    "RUN_VALUES",
    "Condition",
    "ConditionError",
    "ConfigPath",
    "choice_of",
    "condition_attributes",
    "for_value",
    "parse_condition",
    "parse_config_path",
    "parse_first_step",
]

RUN_VALUES: Final[tuple[str, ...]] = ("format", "loop")
"""What ``run.<name>`` may name: ``run.format``, the input format the run was read in
(an ingester's name, :mod:`codegen.runs.ingest`), and ``run.loop``, the loop the run is
judged as (named by its records, ``--loop`` or inferred; undecided for a job of several
loops or an unknown loop)."""

MAX_CONDITION_LENGTH: Final = 500
"""Longest expression parsed (a longer text is prose): bounds parsing hostile input."""

_LITERAL_NAMES: Final[Mapping[str, object]] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_COMPARE: Final[Mapping[type[ast.cmpop], Callable[[Any, Any], Any]]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


MAX_CONDITION_ATTRIBUTE_VALUES: Final = 256
"""Most values of the attribute a condition names (one condition is parsed per value)."""

_PLACEHOLDER: Final = re.compile(r"\{([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)\}")
"""``{rl.role}``: an attribute name in braces, as a key family's placeholder is written."""


def condition_attributes(text: str) -> tuple[str, ...]:
    """The attributes ``text`` names as placeholders (``{rl.role}``), in order, once each;
    ``()`` for prose (a text naming neither ``config`` nor ``run``: braces in prose that
    validated before stay prose)."""
    if "{" not in text or len(text) > MAX_CONDITION_LENGTH:
        return ()
    if "config" not in text and "run." not in text:
        return ()
    return tuple(dict.fromkeys(_PLACEHOLDER.findall(text)))


def for_value(text: str, name: str, value: str) -> str:
    """The condition ``text`` for one value of the attribute it names as ``{name}``."""
    return text.replace("{" + name + "}", value)


class ConditionError(ValueError):
    """An expression over ``config`` that uses something the language does not allow."""


_UNDECIDED: Final = object()
"""What an expression is when a path is missing or values do not compare."""


@dataclass(frozen=True, slots=True)
class ConfigPath:
    """``config.a.b`` as its keys, ``("a", "b")``."""

    keys: tuple[str, ...]

    def __str__(self) -> str:
        return "config." + ".".join(self.keys)

    def lookup(self, config: Mapping[str, Any]) -> Any:
        """The value at the path; raises :class:`KeyError` when the run did not log it."""
        value: Any = config
        for key in self.keys:
            if not isinstance(value, Mapping) or key not in value:
                raise KeyError(str(self))
            value = value[key]
        return value


def _path(node: ast.expr) -> ConfigPath | None:
    """The config path a node spells (``config.a.b``, ``config["a"]``), else ``None``."""
    keys: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            keys.append(node.attr)
            node = node.value
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            keys.append(node.slice.value)
            node = node.value
        else:
            break
    if isinstance(node, ast.Name) and node.id == "config" and keys:
        return ConfigPath(tuple(reversed(keys)))
    return None


def _mentions_config(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id in ("config", "run") for n in ast.walk(tree))


def _run_value(node: ast.expr) -> str | None:
    """The name ``run.<name>`` spells, else ``None``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "run" else None
    return None


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed expression; :meth:`holds` evaluates it against a run's configuration."""

    text: str
    tree: ast.expr
    paths: tuple[ConfigPath, ...]

    def holds(self, config: Mapping[str, Any], run: Mapping[str, Any] | None = None) -> bool | None:
        """Whether the condition holds; ``None`` when a path is missing or values do not compare.

        ``run`` holds what is known of the run itself (``{"format": "wandb"}``); a
        ``run.<name>`` it does not hold is undecided, like a missing path.
        """
        value = _evaluate(self.tree, config, run or {})
        return None if value is _UNDECIDED else bool(value)


def _literal(node: ast.expr) -> object:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return node.value
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Name) and node.id in _LITERAL_NAMES:
        return _LITERAL_NAMES[node.id]
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        return -node.operand.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return tuple(_literal(item) for item in node.elts)
    raise ConditionError(
        f"{ast.unparse(node)!r} is not allowed: use config.<path>, a literal, a comparison, "
        "and/or/not"
    )


def _check(node: ast.expr) -> None:
    """Refuse every construct outside the language (before anything is evaluated)."""
    if _path(node) is not None:
        return
    name = _run_value(node)
    if name is not None:
        if name not in RUN_VALUES:
            raise ConditionError(
                f"run.{name} is not known of a run: only run.format (the format "
                "live-check read the run in: jsonl, flat-jsonl, wandb, tensorboard, mlflow, "
                "...) and run.loop (the loop the run is judged as) are"
            )
        return
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _check(value)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _check(node.operand)
    elif isinstance(node, ast.Compare):
        if any(type(op) not in _COMPARE for op in node.ops):
            raise ConditionError(f"{ast.unparse(node)!r}: only == != < <= > >= in, not in")
        for operand in (node.left, *node.comparators):
            _check(operand)
    else:
        _literal(node)


_MAX_LIST_DEPTH: Final = 32
"""Nesting depth up to which configuration lists are compared as tuples (bounds recursion)."""


def _as_tuples(value: Any, depth: int = 0) -> Any:
    """A configuration list as a tuple (nested ones too), as literal lists are parsed.

    JSON, YAML and W&B configurations hold lists; without this ``config.evals != []``
    would compare a list with ``()`` and hold for an empty list too. Lists nested deeper
    than :data:`_MAX_LIST_DEPTH` stay lists (no literal is that deep).
    """
    if isinstance(value, list | tuple) and depth < _MAX_LIST_DEPTH:
        return tuple(_as_tuples(item, depth + 1) for item in value)
    return value


def _evaluate(node: ast.expr, config: Mapping[str, Any], run: Mapping[str, Any]) -> Any:
    """The node's value, or :data:`_UNDECIDED` (which every operator passes on)."""
    path = _path(node)
    if path is not None:
        try:
            return _as_tuples(path.lookup(config))
        except KeyError:
            return _UNDECIDED
    name = _run_value(node)
    if name is not None:
        return run.get(name, _UNDECIDED)
    if isinstance(node, ast.BoolOp):
        # Three-valued (Kleene): one operand that decides (False for and, True for or)
        # decides, whatever the others are; otherwise an undecided operand leaves it so.
        want = isinstance(node.op, ast.Or)  # the value that decides: True for or, False for and
        undecided = False
        for item in node.values:
            value = _evaluate(item, config, run)
            if value is _UNDECIDED:
                undecided = True
            elif bool(value) is want:
                return want
        return _UNDECIDED if undecided else not want
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _evaluate(node.operand, config, run)
        return value if value is _UNDECIDED else not value
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, config, run)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(right_node, config, run)
            if left is _UNDECIDED or right is _UNDECIDED:
                return _UNDECIDED
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except TypeError:  # 3 < "a": the run's value has another type
                return _UNDECIDED
            left = right
        return True
    return _literal(node)


MAX_CONDITION_DEPTH: Final = 32
"""Deepest nesting of an expression's syntax tree: every walk of it (checking, evaluating,
quoting it in a message) then stays far from Python's recursion limit."""


def _depth_over(tree: ast.AST, limit: int) -> bool:
    """Whether ``tree`` nests deeper than ``limit`` nodes (walked without recursion)."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


def parse_condition(text: str) -> Condition | None:
    """The expression ``text`` spells, or ``None`` for prose.

    Raises:
        ConditionError: ``text`` is an expression over ``config`` that uses
            something the language does not allow (a call, arithmetic, another
            name); the message names it.
    """
    if len(text) > MAX_CONDITION_LENGTH:
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if _depth_over(tree, MAX_CONDITION_DEPTH):
        raise ConditionError(
            f"the expression nests deeper than {MAX_CONDITION_DEPTH} levels (operators "
            "within operators, such as a run of '-' or 'not'); write it flatter"
        )
    if not _mentions_config(tree):
        return None
    others = sorted(
        {
            n.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Name)
            and n.id not in ("config", "run")
            and n.id not in _LITERAL_NAMES
        }
    )
    if others:
        raise ConditionError(
            f"{', '.join(others)} is not a configuration value: write config.<path> "
            "(the run's configuration as JsonlLogger(config=...) logged it), run.format or "
            "run.loop"
        )
    _check(tree)
    return Condition(text, tree, tuple(_paths(tree)))


def _paths(node: ast.expr) -> list[ConfigPath]:
    """Every whole ``config.<path>`` of the expression, in order (not their parts)."""
    path = _path(node)
    if path is not None:
        return [path]
    found: list[ConfigPath] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            found.extend(_paths(child))
    return found


def parse_config_path(text: str) -> ConfigPath | None:
    """``config.a.b`` as a path (``first_step`` may name one), else ``None``."""
    if not text.startswith("config") or len(text) > MAX_CONDITION_LENGTH:
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _path(tree)


def parse_first_step(text: str) -> tuple[ConfigPath, int] | None:
    """``config.a.b`` or ``config.a.b + 1`` / ``- 2`` as ``(path, offset)``, else ``None``.

    The offset is a whole number added to the configuration value: code that
    starts logging the step *after* a configured one (``step > freeze``) says
    ``config.freeze + 1``.
    """
    if not text.startswith("config") or len(text) > MAX_CONDITION_LENGTH:
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    offset = 0
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, (ast.Add, ast.Sub)):
        right = tree.right
        if not (isinstance(right, ast.Constant) and type(right.value) is int and right.value >= 0):
            return None
        offset = right.value if isinstance(tree.op, ast.Add) else -right.value
        tree = tree.left
    path = _path(tree)
    return None if path is None else (path, offset)


def choice_of(condition: Condition) -> ConfigChoice | None:
    """The condition as a choice on one configuration value, when it is one of the forms
    rows sharing a key may be chosen by (``config.x``, ``not config.x``, ``config.x ==
    <literal>``, the literal on either side); ``None`` for any other expression."""
    tree = condition.tree
    negated = isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not)
    path = _path(tree.operand if isinstance(tree, ast.UnaryOp) and negated else tree)
    if path is not None:
        return ConfigChoice(path.keys, "false" if negated else "true")
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and type(tree.ops[0]) is ast.Eq):
        return None
    left, right = tree.left, tree.comparators[0]
    path = _path(left) or _path(right)
    literal_node = right if _path(left) is not None else left
    if path is None or _path(literal_node) is not None or _run_value(literal_node) is not None:
        return None
    try:
        value = _literal(literal_node)
    except ConditionError:
        return None
    if not isinstance(value, str | int | float | bool | type(None)):
        return None  # a list is no choice of one value
    if isinstance(value, float) and not math.isfinite(value):
        return None  # 1e999: no value a configuration holds, nor a Python literal
    return ConfigChoice(path.keys, "equals", value)
