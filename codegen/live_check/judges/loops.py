"""The run's loop: ``unknown_loop``, ``loop_conflict``, and which loop the run is judged as.

The run's loop is the ``--loop`` flag, else the first declared loop a record
names (an optional ``"loop"`` field, written by ``JsonlLogger(loop=...)`` or
``METRIC_CATALOG_LOOP``), else inferred from the log: each declared loop's
``signature`` keys that were logged count for it, and the loop with the most
(then the largest share of its signature) wins; a tie or no signature key at
all leaves the loop unknown.

``unknown_loop``
    a line names a loop no catalog file declares under ``loops:``.
``loop_conflict``
    lines (of one file, or of several workers' files) name different declared
    loops; the run is judged as the first one named.

Memory is bounded by the catalog's loops and their signature keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from metric_catalog.series_rules import PREFIX_GLUE

from ...model import Catalog

__all__ = ["LoopChoice", "LoopJudge"]


@dataclass(frozen=True, slots=True)
class LoopChoice:
    """The loop a run was judged as, and why.

    ``source`` is ``flag`` (``--loop``), ``log`` (a record's ``"loop"``),
    ``inferred`` (signature keys, listed in ``evidence``) or ``unknown``
    (``evidence`` then names the loops that tied, if any).
    """

    name: str | None
    source: str
    evidence: tuple[str, ...] = ()

    def describe(self) -> str:
        """``grpo_sync (inferred from timing/train/generation, ...)`` or ``unknown``."""
        if self.name is None and self.evidence:
            tied = " and ".join(self.evidence)
            return f"unknown (the signature keys of {tied} tie; pass --loop)"
        if self.name is None:
            return "unknown (no declared loop's signature keys were logged)"
        if self.source == "flag":
            return f"{self.name} (--loop)"
        if self.source == "log":
            return f"{self.name} (named by the log)"
        shown = ", ".join(self.evidence[:3]) + (", ..." if len(self.evidence) > 3 else "")
        return f"{self.name} (inferred from {shown})"

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with stable keys."""
        return {"name": self.name, "source": self.source, "evidence": list(self.evidence)}


class LoopJudge:
    """Which loop the run is: the ``--loop`` flag, a record's ``"loop"``, or signature keys."""

    def __init__(self, catalog: Catalog, forced: str | None) -> None:
        self.loops = catalog.loops()
        self.forced = forced
        self.declared = {loop.name for loop in self.loops}
        self.named: str | None = None
        self.named_at: tuple[str, int] = ("", 0)
        """Where the first declared loop was named: (path, line)."""
        self.last_step: int | None = None
        """The last training step a record was logged at (a record whose keys all belong
        to rows with a ``step_axis``, such as ``lm loss vs samples``, does not count)."""
        self.first_step: int | None = None
        """The first training step a record was logged at (a resumed run's is past 1)."""
        # A signature key ``a/b/c`` is the logged (prefix, key) ("a", "b/c"),
        # ("a/b", "c") or ("", "a/b/c"): the backends join them with '/' (and a
        # prefix ending in '_' as written: eval_loss is ("eval_", "loss")).
        self.signature_keys: dict[tuple[str, str], str] = {}
        for declared in self.loops:
            for qualified in declared.signature:
                self.signature_keys[("", qualified)] = qualified
                for cut, char in enumerate(qualified):
                    if char == "/":
                        split = (qualified[:cut], qualified[cut + 1 :])
                        self.signature_keys[split] = qualified
                    elif char == PREFIX_GLUE:  # a prefix ending in '_' (eval_) is glued
                        split = (qualified[: cut + 1], qualified[cut + 1 :])
                        self.signature_keys[split] = qualified
        self.seen: set[str] = set()

    def see_step(self, step: int) -> None:
        """A record logged at training step ``step``."""
        if self.last_step is None or step > self.last_step:
            self.last_step = step
        if self.first_step is None or step < self.first_step:
            self.first_step = step

    def seen_signature(self, prefix: str, key: str) -> None:
        """A logged pair is a declared loop's signature key."""
        self.seen.add(self.signature_keys[(prefix, key)])

    def name(self, loop: str, path: str, line: int) -> str | None:
        """A record names its loop: the finding kind it raises, if any.

        The first declared name wins; an undeclared name is ``unknown_loop``, a
        declared one other than the first is ``loop_conflict``.
        """
        if loop == self.named:
            return None
        if loop not in self.declared:
            return "unknown_loop"
        if self.named is None:
            self.named, self.named_at = loop, (path, line)
            return None
        return "loop_conflict"

    def choose(self) -> LoopChoice:
        """The loop the run is judged as."""
        if self.forced is not None:
            return LoopChoice(self.forced, "flag")
        if self.named is not None:
            return LoopChoice(self.named, "log")
        best: list[tuple[int, float, str, tuple[str, ...]]] = []
        for loop in self.loops:
            evidence = tuple(k for k in loop.signature if k in self.seen)
            if evidence:
                share = len(evidence) / len(loop.signature)
                best.append((len(evidence), share, loop.name, evidence))
        best.sort(key=lambda item: (-item[0], -item[1], item[2]))
        if not best:
            return LoopChoice(None, "unknown")
        tied = tuple(item[2] for item in best if item[:2] == best[0][:2])
        if len(tied) > 1:
            return LoopChoice(None, "unknown", tied)
        return LoopChoice(best[0][2], "inferred", best[0][3])
