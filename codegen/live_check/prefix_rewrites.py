"""Key prefix rewrites: undo a logging backend's prefixing of every key, anchored at its start.

transformers' ``WandbCallback`` and ``TensorBoardCallback`` pass every dict through
``rewrite_logs`` (``src/transformers/integrations/integration_utils.py``): a key starting
``eval_`` becomes ``eval/<rest>``, one starting ``test_`` becomes ``test/<rest>``, any other
``train/<key>``. ``--key-rewrite`` rules replace text anywhere in a key, so ``train/=``
also eats the ``train/`` inside ``rewards/pretrain/mean`` and ``eval/=eval_`` turns a
reward function named ``llm_eval`` into ``rewards/llm_eval_mean``. A prefix rule
``FROM=TO`` rewrites a key only when it *starts* with ``FROM`` (the first rule that fits,
once), which is exactly ``rewrite_logs`` undone; ``transformers`` names that table.

Applied to every key of every record as read, before the ``--key-rewrite`` rules and the
match, so findings name the key as the code logged it. A rewritten key that another key of
the same record already holds keeps its spelling as read (nothing is lost).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from ..config import PREFIX_TABLE_SOURCES, PREFIX_TABLES, parse_prefix_rewrites
from .records import Item, Record

__all__ = [
    "PREFIX_TABLES",
    "PREFIX_TABLE_SOURCES",
    "parse_prefix_rewrites",
    "rewrite_prefix",
    "rewrite_prefixes",
]


def rewrite_prefix(key: str, rules: tuple[tuple[str, str], ...]) -> str:
    """``key`` with the first rule whose ``from`` it starts with applied; else ``key``."""
    for old, new in rules:
        if key.startswith(old):
            return new + key[len(old) :]
    return key


def _rewritten(
    metrics: Mapping[str, object], rules: tuple[tuple[str, str], ...]
) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in metrics.items():
        new = rewrite_prefix(key, rules)
        taken = new in out or (new != key and new in metrics)
        out[key if taken else new] = value
    return out


def rewrite_prefixes(items: Iterable[Item], rules: tuple[tuple[str, str], ...]) -> Iterator[Item]:
    """``items`` with every record's keys rewritten by ``rules`` (``items`` as is without)."""
    if not rules:
        yield from items
        return
    for item in items:
        if isinstance(item, Record) and item.metrics:
            yield item._replace(metrics=_rewritten(item.metrics, rules))
        else:
            yield item
