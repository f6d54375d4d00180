"""What the report adds to an undeclared key's finding to say how it could be declared.

A key no teed row takes may be one a row declares under another prefix, one a
``--key-rewrite`` changed before matching, or one written by a backend whose
known spelling (a substring rewrite, or a prefix table such as the
transformers callback's) no flag undid yet: the hint names the flag that would.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..runs.rewrites import (
    KNOWN_SPELLINGS,
    PREFIX_TABLE_SOURCES,
    PREFIX_TABLES,
    rewrite_key,
    rewrite_prefix,
)

__all__ = ["known_spellings", "spelling_hint", "undeclared_hint"]


def known_spellings(
    logged: str, rewrites: tuple[tuple[str, str], ...], *, prefix_tables: bool
) -> Iterator[tuple[str, str, str]]:
    """What a known backend spelling not undone yet reads ``logged`` as: ``(key, what
    wrote it, the flag that undoes it)``, substring spellings before prefix tables.

    ``prefix_tables`` is false when a ``--key-prefix-rewrite`` is in force (the
    tables are then the user's choice, not a hint's).
    """
    for rule, why in KNOWN_SPELLINGS:
        if rule not in rewrites and rule[0] in logged:
            known = rewrite_key(rewrite_key(logged, rewrites), (rule,))
            yield known, why, f"--key-rewrite {rule[0]}={rule[1]}"
    if not prefix_tables:
        return
    for table, rules in PREFIX_TABLES.items():
        known = rewrite_prefix(logged, rules)
        if known != logged:
            flag = f"--key-prefix-rewrite {table}"
            yield rewrite_key(known, rewrites), PREFIX_TABLE_SOURCES[table], flag


def spelling_hint(why: str, flag: str, prefix: str, key: str) -> str:
    """The hint for a key a known spelling turns into a declared ``prefix``/``key``."""
    shown = f"{prefix}/{key}" if prefix else key
    return f" ({why}: {flag} reads it as {shown!r}, which a row declares)"


def undeclared_hint(elsewhere: list[str], read_as: str | None, spelling: str) -> str:
    """An undeclared key's hint: the prefixes rows declare it under, the key as read
    before the key rewrites, and the known spelling's ``spelling`` hint."""
    hint = ""
    if elsewhere:
        shown = ", ".join(repr(p) for p in sorted(elsewhere))
        hint = f" (a row declares it under prefix {shown})"
    if read_as is not None:
        hint += f" (read as {read_as!r}, before the key rewrites)"
    return hint + spelling
