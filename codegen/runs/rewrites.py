"""Key rewriting, all of it: substring rules, prefix rules and the known tables and spellings.

Prefix rules undo a logging backend's prefixing of every key, anchored at its start.

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
from typing import Final

from .records import Item, Record

__all__ = [
    "KNOWN_SPELLINGS",
    "MAX_READINGS",
    "PREFIX_TABLES",
    "PREFIX_TABLE_SOURCES",
    "key_readings",
    "parse_prefix_rewrites",
    "parse_rewrite",
    "rewrite_key",
    "rewrite_prefix",
    "rewrite_prefixes",
]


PREFIX_TABLES: Final[Mapping[str, tuple[tuple[str, str], ...]]] = {
    # transformers' rewrite_logs, undone (WandbCallback, TensorBoardCallback).
    "transformers": (("eval/", "eval_"), ("test/", "test_"), ("train/", "")),
}
"""Named tables of prefix rules: the logging callbacks whose prefixing is known."""

PREFIX_TABLE_SOURCES: Final[Mapping[str, str]] = {
    "transformers": "the Hugging Face Trainer's W&B and TensorBoard callbacks prefix every key",
}
"""What wrote the keys each of :data:`PREFIX_TABLES` undoes (named in live-check's hints)."""


def parse_prefix_rewrites(rules: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``FROM=TO`` rules and table names (``transformers``) as ``(from, to)`` pairs, in order.

    Raises:
        ValueError: a rule is neither a known table name nor ``FROM=TO`` with FROM
            non-empty; the message says how to write one.
    """
    pairs: list[tuple[str, str]] = []
    for rule in rules:
        if rule in PREFIX_TABLES:
            pairs.extend(PREFIX_TABLES[rule])
            continue
        old, sep, new = rule.partition("=")
        if not sep or not old:
            tables = ", ".join(sorted(PREFIX_TABLES))
            msg = (
                f"{rule!r} is neither FROM=TO (the prefix as the backend wrote it, '=', the "
                f"text the catalog's keys start with; FROM non-empty) nor a table ({tables})"
            )
            raise ValueError(msg)
        pairs.append((old, new))
    return tuple(pairs)


def parse_rewrite(rule: str) -> tuple[str, str]:
    """``"FROM=TO"`` as ``(from, to)``: split at the first ``=``; ``FROM`` must not be empty.

    Raises:
        ValueError: ``rule`` has no ``=`` or nothing before it; the message says how to
            write one.
    """
    old, sep, new = rule.partition("=")
    if not sep or not old:
        msg = (
            f"{rule!r} is not FROM=TO (the text as the backend wrote it, '=', the text the "
            "catalog's keys hold; FROM non-empty)"
        )
        raise ValueError(msg)
    return old, new


KNOWN_SPELLINGS: Final = ((("_at_", "@"), "verl's MLflow adapter writes '@' as '_at_'"),)
"""Key spellings logging backends are known to write: an undeclared key that a row would
take under one of these rewrites gets a hint naming the ``--key-rewrite`` to pass."""


def rewrite_key(key: str, rewrites: tuple[tuple[str, str], ...]) -> str:
    """``key`` with each ``(from, to)`` literal substring replaced, in the order given."""
    for old, new in rewrites:
        key = key.replace(old, new)
    return key


MAX_READINGS: Final = 64
"""Readings of one key :func:`key_readings` gives at most (segments are few in practice)."""


def key_readings(key: str, rewrites: tuple[tuple[str, str], ...]) -> list[str]:
    """The ways ``key`` may read under ``rewrites``: the whole key rewritten first, then each
    mix of its ``/`` segments rewritten or kept (most rewritten first); ``key`` itself last.

    MLflow spells ``@`` as ``_at_``, but a key may also hold a genuine ``_at_``:
    ``eval/aime_at_2024/pass_at_1`` reads as ``eval/aime_at_2024/pass@1`` too, so the
    caller can keep the reading a row takes.
    """
    whole = rewrite_key(key, rewrites)
    segments = key.split("/")
    variants = [
        sorted({seg, rewrite_key(seg, rewrites)}, key=lambda s: s == seg) for seg in segments
    ]
    readings: dict[str, int] = {whole: len(segments) + 1}
    combos: list[tuple[int, str]] = [(0, "")]
    for index, options in enumerate(variants):
        combos = [
            (changed + (option != segments[index]), f"{text}/{option}" if index else option)
            for changed, text in combos
            for option in options
        ][:MAX_READINGS]
    for changed, text in combos:
        readings.setdefault(text, changed)
    ordered = sorted(readings, key=lambda text: -readings[text])
    ordered = [text for text in ordered if text != key]
    return [*ordered, key]


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
