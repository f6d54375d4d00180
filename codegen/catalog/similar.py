"""One similarity rule for "did you mean": a name, and a logged key that renames a row's.

Every "did you mean" the tools print reads it from here: :func:`closest` for a
name among known names (a field, a finding code, an attribute), and
:func:`renamed_key` for a logged key that no row takes beside a row whose key
was not logged (live-check's ``undeclared`` next to ``missing``, scan's
``SCAN_UNDECLARED`` next to ``SCAN_UNLOGGED``): the two read as one rename.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

__all__ = ["SIMILARITY_CUTOFF", "RenameIndex", "closest", "renamed_key"]

SIMILARITY_CUTOFF: Final = 0.6
"""Least :class:`difflib.SequenceMatcher` ratio at which two names read as one misspelt."""

_WORD_BREAKS: Final = str.maketrans({"-": "_", ".": "_"})


def closest(word: str, choices: Iterable[str], cutoff: float = SIMILARITY_CUTOFF) -> str | None:
    """The choice ``word`` most likely misspells (``None``: none is close enough)."""
    found = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=cutoff)
    return found[0] if found else None


def renamed_key(logged: str, keys: Iterable[str]) -> str | None:
    """The key of ``keys`` that ``logged`` most likely renames, or ``None``.

    Keys are compared as ``/``-separated segments: a rename changes exactly one
    segment (``train/kl_div`` for ``train/kl``, ``actor/grad_nrom`` for
    ``actor/grad_norm``, ``training/loss`` for ``train/loss``), and the two
    segments are close: a :data:`SIMILARITY_CUTOFF` spelling match, or one's
    words (split at ``_``, ``-`` and ``.``) begin or end the other's
    (``kl``/``kl_div``, ``loss``/``policy_loss``). Keys that differ in a whole
    word only (``train/loss``, ``train/lr``) are not renames. The closest
    segment wins, then the first key in sorted order. See :class:`RenameIndex`
    to ask about many logged keys.
    """
    return RenameIndex(keys).find(logged)


class RenameIndex:
    """Keys indexed so :meth:`find` answers :func:`renamed_key` in time linear in a key's
    segments (a run's undeclared keys against a catalog's unlogged rows)."""

    __slots__ = ("_by_mask", "_lengths")

    def __init__(self, keys: Iterable[str]) -> None:
        self._by_mask: dict[tuple[int, str], list[str]] = {}
        self._lengths: set[int] = set()
        for key in sorted(set(keys)):
            parts = key.split("/")
            self._lengths.add(len(parts))
            for index in range(len(parts)):
                self._by_mask.setdefault(_masked(parts, index), []).append(key)

    def find(self, logged: str) -> str | None:
        """The indexed key ``logged`` most likely renames (see :func:`renamed_key`)."""
        if logged.count("/") + 1 not in self._lengths:
            return None  # a rename keeps the segment count (and a hostile key costs one pass)
        parts = logged.split("/")
        best: tuple[float, str] | None = None
        for index, mine in enumerate(parts):
            for key in self._by_mask.get(_masked(parts, index), ()):
                theirs = key.split("/")[index]
                if theirs == mine:
                    continue
                score = _closeness(mine, theirs)
                if score is not None and (best is None or (score, best[1]) > (best[0], key)):
                    best = (score, key)
        return None if best is None else best[1]


def _masked(parts: list[str], index: int) -> tuple[int, str]:
    """``parts`` joined with segment ``index`` left out, and that index."""
    return index, "/".join([*parts[:index], "\x00", *parts[index + 1 :]])


def _closeness(mine: str, theirs: str) -> float | None:
    """How close two segments are (``None``: not close enough to be one renamed)."""
    matcher = difflib.SequenceMatcher(None, mine, theirs)
    # The linear upper bounds first: a hostile segment of megabytes never reaches ratio().
    ratio = matcher.real_quick_ratio()
    if ratio >= SIMILARITY_CUTOFF and matcher.quick_ratio() >= SIMILARITY_CUTOFF:
        ratio = matcher.ratio()
        if ratio >= SIMILARITY_CUTOFF:
            return ratio
    words = [w for w in mine.translate(_WORD_BREAKS).split("_") if w]
    other = [w for w in theirs.translate(_WORD_BREAKS).split("_") if w]
    short, long = sorted((words, other), key=len)
    if short and len(short) < len(long) and short in (long[: len(short)], long[-len(short) :]):
        return ratio
    return None
