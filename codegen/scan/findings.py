"""The codes of ``scan``'s findings, in a module of their own: the walk and the cache name
them without loading the analysis that judges keys (:mod:`.compare` re-exports them)."""

from __future__ import annotations

from typing import Final

__all__ = ["CODES", "SYNTAX", "UNDECLARED", "UNLOGGED", "UNREADABLE", "UNRESOLVED"]

UNDECLARED: Final = "SCAN_UNDECLARED"
"""The code logs a key no teed row declares (error)."""
UNRESOLVED: Final = "SCAN_UNRESOLVED"
"""The scanner cannot tell statically what a call logs there (warning)."""
UNLOGGED: Final = "SCAN_UNLOGGED"
"""A teed row whose key no scanned code logs (warning)."""
SYNTAX: Final = "SCAN_SYNTAX"
"""A file that does not parse as Python (error; the rest is scanned)."""
UNREADABLE: Final = "SCAN_UNREADABLE"
"""A file that cannot be read, or is too large to scan (warning)."""
CODES: Final = (UNDECLARED, UNRESOLVED, UNLOGGED, SYNTAX, UNREADABLE)
