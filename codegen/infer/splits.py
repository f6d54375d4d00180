"""Split prefixes glued to keys: ``eval_loss`` is ``loss`` logged by an evaluation.

A Hugging Face ``Trainer`` logs the same quantities during training (``loss``,
``completions/mean_length``) and evaluation, where it glues ``eval_`` to each key
(``eval_loss``); its end-of-training summary glues ``train_`` (``train_runtime`` beside
``eval_runtime``); Keras glues ``val_``. Drafting a row per variant would declare each
quantity twice, and a family over ``{loss, eval_loss}`` would mistake the pass for a
label of the key. A key is such a variant when the rest of it is logged bare too, or
under another split: the row is drafted for the rest, teed under ``prefixes`` (``["",
"eval_"]``), the glued prefixes the catalog splits such keys by
(:data:`~metric_catalog.series_rules.PREFIX_GLUE`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from ..catalog.words import SPLIT_GLUES
from .observe import KeyStats

__all__ = ["Variants", "split_variants"]


class Variants:
    """Keys logged bare and under split prefixes, folded into one key each."""

    def __init__(self, keys: Iterable[str], behaviour: Mapping[str, object]) -> None:
        present = set(keys)
        glued: dict[str, tuple[str, str]] = {}
        for key in present:
            for glue in SPLIT_GLUES:
                if key.startswith(glue) and len(key) > len(glue):
                    glued[key] = (key[len(glue) :], glue)
                    break
        # Variants fold only when they behave alike (a family row has one kind): a running
        # total ``train_rollouts/consumed_samples`` is not a validation batch's size.
        kinds: dict[str, set[object]] = {}
        for key, (rest, _) in glued.items():
            kinds.setdefault(rest, {behaviour.get(rest)} if rest in present else set())
            kinds[rest].add(behaviour.get(key))
        splits = Counter(rest for rest, _ in glued.values() if len(kinds[rest]) == 1)
        self.base: dict[str, str] = {}
        """A variant -> the key it is a variant of (``eval_loss`` -> ``loss``)."""
        self.glues: dict[str, set[str]] = {}
        """A folded key -> its prefixes (``""`` when it is logged bare too)."""
        for key, (rest, glue) in sorted(glued.items()):
            if len(kinds[rest]) == 1 and (rest in present or splits[rest] >= 2):
                self.base[key] = rest
                self.glues.setdefault(rest, {""} if rest in present else set()).add(glue)

    def keys(self, keys: Iterable[str]) -> list[str]:
        """``keys`` with each variant replaced by the key it is a variant of (once)."""
        return sorted({self.base.get(key, key) for key in keys})

    def prefixes(self, members: Iterable[str]) -> list[str]:
        """The prefixes a row of these keys is teed under; empty: its file's prefix only."""
        found: set[str] = set()
        for member in members:
            found |= self.glues.get(member, set())
        if not found:
            return []
        return sorted(found)

    def stats(self, keys: Mapping[tuple[str, str], KeyStats]) -> dict[tuple[str, str], KeyStats]:
        """Statistics of a key only logged under split prefixes (``runtime`` for
        ``train_runtime`` and ``eval_runtime``): its variants' merged."""
        merged: dict[tuple[str, str], KeyStats] = {}
        for variant, rest in self.base.items():
            if ("", rest) in keys:
                continue
            stats = merged.setdefault(("", rest), KeyStats())
            stats.merge(keys[("", variant)])
        return merged


def split_variants(keys: Iterable[tuple[str, str]], behaviour: Mapping[str, object]) -> Variants:
    """The variants among the keys logged without a prefix (a glue joins no ``/`` prefix);
    ``behaviour``: each key's kind and temporality, as its values showed."""
    return Variants((key for prefix, key in keys if prefix == ""), behaviour)
