"""Calls of a numeric package's functions: a bare scanned name (``log``) never matches
``math.log(x)``, ``np.log(x)`` or ``torch.log(x)`` of a package the file imports.

Only the file's text and its imports are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["NUMERIC_MODULES", "module_function", "numeric_call"]


NUMERIC_MODULES: Final = frozenset(
    {"math", "cmath", "numpy", "torch", "jax", "scipy", "tensorflow", "mpmath", "sympy"}
)
"""Packages whose ``log``/``exp``... are mathematics: a bare scanned name never matches them."""


def module_function(
    imports: Mapping[str, tuple[str, str | None, int]], receiver: str | None
) -> bool:
    """``receiver`` (``math``, ``np``, ``torch.special``) is a numeric module the file
    imports (``import numpy as np``, ``from jax import numpy as jnp``)."""
    if receiver is None:
        return False
    imported = imports.get(receiver.partition(".")[0])
    if imported is None or imported[2]:
        return False  # not imported, or from a relative (the project's own) module
    package = (imported[0] or imported[1] or "").partition(".")[0]
    return package in NUMERIC_MODULES


def numeric_call(
    source: bytes, start: int, imports: Mapping[str, tuple[str, str | None, int]]
) -> bool:
    """The call of a name at ``start`` is ``np.log(`` of a numeric package the file imports:
    the function holding it need not be analysed for a logging call."""
    if start < 2 or source[start - 1 : start] != b".":
        return False
    begin = start - 1
    while begin > 0 and (source[begin - 1 : begin].isalnum() or source[begin - 1] == 95):
        begin -= 1
    receiver = source[begin : start - 1].decode("ascii", "replace")
    return bool(receiver) and module_function(imports, receiver)
