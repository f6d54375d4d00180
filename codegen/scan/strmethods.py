"""String methods on keys: ``k.replace("eval/", f"eval/{name}/")``, ``k.rsplit("@", 1)[0]``.

A key known as literal text and holes (a :data:`~codegen.scan.values.Shape`) is rewritten
the way the method rewrites the string, where that is decidable from the shape:

* ``replace(old, new)``: each occurrence of the literal ``old`` in the key's literal parts
  becomes ``new`` (whose value may hold holes); a hole is taken not to hold ``old``;
* ``removeprefix(p)`` / ``removesuffix(s)``: on the key's first / last literal part; when
  a hole stands there the answer is unknown;
* ``split(sep)[i]``, ``rsplit(sep, n)[i]``, ``partition(sep)[i]``, ``rpartition(sep)[i]``,
  ``strip``, ``lstrip``, ``rstrip``, ``lower``, ``upper``: on a key without holes only.

``None`` means unknown: the caller reports the key ``SCAN_UNRESOLVED`` rather than guess.
"""

from __future__ import annotations

import ast
from typing import Final

from .values import SLOT, Shape, concat

__all__ = ["METHODS", "apply", "call_of"]

METHODS: Final = frozenset(
    {
        "replace",
        "removeprefix",
        "removesuffix",
        "split",
        "rsplit",
        "partition",
        "rpartition",
        "strip",
        "lstrip",
        "rstrip",
        "lower",
        "upper",
    }
)
_INDEXED: Final = frozenset({"split", "rsplit", "partition", "rpartition"})
"""Methods giving a sequence: read through a subscript (``k.rsplit("@", 1)[0]``)."""


def call_of(node: ast.expr) -> tuple[ast.Call, int | None] | None:
    """``x.<method>(...)`` or ``x.<split-like>(...)[i]``: the call and the index (``None``
    for a method giving a string); else ``None``."""
    index: int | None = None
    if isinstance(node, ast.Subscript):
        slice_ = node.slice
        if not (isinstance(slice_, ast.Constant) and type(slice_.value) is int):
            if not (
                isinstance(slice_, ast.UnaryOp)
                and isinstance(slice_.op, ast.USub)
                and isinstance(slice_.operand, ast.Constant)
                and type(slice_.operand.value) is int
            ):
                return None
            index = -slice_.operand.value
        else:
            index = slice_.value
        node = node.value
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in METHODS
        and not node.keywords
    ):
        return None
    if (node.func.attr in _INDEXED) != (index is not None):
        return None
    return node, index


def apply(
    method: str, shape: Shape, args: list[Shape | int], index: int | None = None
) -> Shape | None:
    """``shape`` as ``method(*args)`` (then ``[index]``) rewrites it; ``None``: unknown."""
    if SLOT in shape:
        return None  # a template's slot stands for any key: rewritten per key instead
    if method in {"replace", "removeprefix", "removesuffix"}:
        rewritten = _replace(shape, args) if method == "replace" else _remove(method, shape, args)
        return rewritten or None  # an empty key is no key
    if any(not isinstance(part, str) for part in shape):
        return None  # the other methods read the whole text: a hole makes it unknown
    text = "".join(part for part in shape if isinstance(part, str))
    plain: list[str | int] = []
    for arg in args:
        if isinstance(arg, int):
            plain.append(arg)
        elif all(isinstance(part, str) for part in arg):
            plain.append("".join(part for part in arg if isinstance(part, str)))
        else:
            return None
    try:
        result = getattr(text, method)(*plain)
        if index is not None:
            result = result[index]
    except (TypeError, ValueError, IndexError):
        return None
    return (result,) if isinstance(result, str) and result else None


def _replace(shape: Shape, args: list[Shape | int]) -> Shape | None:
    if len(args) != 2:
        return None
    old, new = args
    if (
        isinstance(old, int)
        or isinstance(new, int)
        or len(old) != 1
        or not isinstance(old[0], str)
        or not old[0]
    ):
        return None
    needle = old[0]
    if _straddles(shape, needle):
        return None
    parts: list[Shape] = []
    for part in shape:
        if not isinstance(part, str):
            parts.append((part,))
            continue
        pieces = part.split(needle)
        for number, piece in enumerate(pieces):
            if number:
                parts.append(new)
            parts.append((piece,))
    return concat(*parts)


def _remove(method: str, shape: Shape, args: list[Shape | int]) -> Shape | None:
    if len(args) != 1:
        return None
    (affix,) = args
    if isinstance(affix, int) or len(affix) != 1 or not isinstance(affix[0], str):
        return None
    text = affix[0]
    if not shape:
        return None
    at = 0 if method == "removeprefix" else -1
    edge = shape[at]
    if not isinstance(edge, str):
        return None  # a hole at that end might hold the affix
    if len(edge) < len(text) and len(shape) > 1:
        return None  # the affix may run on into the hole next to it
    rest = edge.removeprefix(text) if at == 0 else edge.removesuffix(text)
    parts = list(shape)
    parts[at] = rest
    return concat(*((p,) for p in parts))


def _straddles(shape: Shape, needle: str) -> bool:
    """Part of ``needle`` may sit in a literal part and the rest in a hole next to it."""
    for number, part in enumerate(shape):
        if not isinstance(part, str):
            continue
        before = number > 0 and not isinstance(shape[number - 1], str)
        after = number + 1 < len(shape) and not isinstance(shape[number + 1], str)
        for size in range(1, len(needle)):
            if after and part.endswith(needle[:size]):
                return True
            if before and part.startswith(needle[-size:]):
                return True
    return False
