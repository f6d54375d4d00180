"""Which rows live-check guesses are shares: unit ``1``, no range, a share word in the name.

Unit ``1`` implies no range, so ``perf/mfu`` logged in percent (38.2) under unit ``1``
would pass. A row whose name or key says it is a share
(:data:`~codegen.catalog.words.SHARE_WORDS`, the table lint's ``RANGE_SUGGESTED``
reads) is judged against [0, 1] in live-check only (``unit_suspect``,
:mod:`.ranges`); the generated code never judges the guess.
"""

from __future__ import annotations

import re
from typing import Final

from ...catalog.model import MetricRow
from ...catalog.words import share_word

__all__ = ["share_guess"]

_WORD_SPLIT: Final = re.compile(r"[./_\-\s]+").split


def share_guess(row: MetricRow) -> str | None:
    """The share word of a row in unit ``1`` that declares no range, else ``None``.

    Only a scalar gauge or histogram is guessed (a counter's value is a step's change).
    The name's and the logger key's last two words are read; a learning rate and a
    quotient such as an importance ratio are no share.
    """
    if row.declared_unit != "1" or row.declared_range is not None or not row.is_scalar:
        return None
    if row.kind not in ("gauge", "histogram"):
        return None
    for text in (row.name.removeprefix(row.namespace), row.logger_key or ""):
        words = [w for w in _WORD_SPLIT(text.lower()) if w]
        hit = share_word(words, quotients=False)
        if hit is not None:
            return hit
    return None
