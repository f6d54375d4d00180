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
    lines of one worker (a file, a run of a store, or a ``"worker"`` field's
    value) name different declared loops; the run is judged as the first one named.

A job of several loops: workers that each run one loop, different loops (an
actor and a critic server, NeMo-Aligner's PPO), named by their records or
inferred from each worker's own signature keys. :meth:`LoopJudge.job` gives
each loop's workers and steps, and presence judges each row by the steps of
the loops that emit it. A worker inferred as a loop whose signature another
job loop's extends (GRPO's, beside a PPO worker that logged the critic keys)
counts as that loop: one run of the larger loop, not a job.

Memory is bounded by the catalog's loops and their signature keys, per worker.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from metric_catalog.series_rules import PREFIX_GLUE

from ...catalog.model import Catalog

__all__ = [
    "JobLoop",
    "LoopChoice",
    "LoopJudge",
    "Span",
    "StepSpan",
    "WorkerLoop",
    "merged_span",
]


class StepSpan(Protocol):
    """The training steps some records were logged at (``None``: none)."""

    @property
    def first_step(self) -> int | None:
        """The lowest step."""

    @property
    def last_step(self) -> int | None:
        """The highest step."""


class WorkerLoop:
    """One worker's loop facts: the loop its records named, its steps, its signature keys.

    Its steps are its training steps: those of records holding a key of a row that is
    not periodic (``every``), or, when it logged none, every step it logged. An
    evaluation logged before the first or after the last training step (a final one
    at ``num_steps + 1``) then makes no training row due.
    """

    __slots__ = (
        "_any_first",
        "_any_last",
        "_train_first",
        "_train_last",
        "input",
        "label",
        "named",
        "named_at",
        "seen",
    )

    def __init__(self, label: str, input_key: str = "") -> None:
        self.label = label
        self.input = input_key
        """The input (file, or run of a store) the worker's records came from."""
        self.named: str | None = None
        self.named_at: tuple[str, int] = ("", 0)
        self._any_first: int | None = None
        self._any_last: int | None = None
        self._train_first: int | None = None
        self._train_last: int | None = None
        self.seen: set[str] = set()
        """The declared loops' signature keys this worker logged."""

    def see_step(self, step: int, *, training: bool = True) -> None:
        """A record of this worker at step ``step``; ``training=False`` for one holding
        only keys of periodic rows (an evaluation, a checkpoint)."""
        if self._any_last is None or step > self._any_last:
            self._any_last = step
        if self._any_first is None or step < self._any_first:
            self._any_first = step
        if training:
            if self._train_last is None or step > self._train_last:
                self._train_last = step
            if self._train_first is None or step < self._train_first:
                self._train_first = step

    @property
    def first_step(self) -> int | None:
        """The first training step (any step when the worker logged no training row)."""
        return self._any_first if self._train_first is None else self._train_first

    @property
    def last_step(self) -> int | None:
        """The last training step (any step when the worker logged no training row)."""
        return self._any_last if self._train_last is None else self._train_last


@dataclass(frozen=True, slots=True)
class Span:
    """A first and a last training step (``None``: no step)."""

    first_step: int | None
    last_step: int | None


def merged_span(spans: Iterable[StepSpan]) -> Span:
    """The steps of ``spans`` together: the first of their first steps, the last of their
    last ones (workers of a loop, loops of a job, every worker of the run)."""
    items = list(spans)
    first = min((s.first_step for s in items if s.first_step is not None), default=None)
    last = max((s.last_step for s in items if s.last_step is not None), default=None)
    return Span(first, last)


@dataclass(frozen=True, slots=True)
class JobLoop:
    """One loop of a job of several: the workers that ran it and the steps they logged."""

    name: str
    source: str
    """``log`` (every worker named it) or ``inferred`` (some worker's signature keys)."""
    workers: tuple[str, ...]
    first_step: int | None
    last_step: int | None
    inputs: tuple[str, ...] = ()
    """The inputs the workers' records came from (their configurations are the loop's)."""

    def describe(self) -> str:
        """``ppo_critic (1 worker, steps 1 to 40; named by the log)``."""
        count = len(self.workers)
        steps = (
            "no steps"
            if self.first_step is None
            else f"steps {self.first_step} to {self.last_step}"
        )
        how = "named by the log" if self.source == "log" else "inferred"
        return f"{self.name} ({count} worker{'s' if count != 1 else ''}, {steps}; {how})"

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with stable keys."""
        return {
            "name": self.name,
            "source": self.source,
            "workers": list(self.workers),
            "first_step": self.first_step,
            "last_step": self.last_step,
        }


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
        """The first declared loop a record named (each worker's own: its ``named``)."""
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
        self.workers: list[WorkerLoop] = []
        """Each worker's loop facts, in the order the workers were first seen: the run's
        steps and signature keys are theirs together (read once the records are in)."""

    def worker(self, label: str, input_key: str = "") -> WorkerLoop:
        """A new worker's loop facts (the checker keeps one per worker)."""
        state = WorkerLoop(label, input_key)
        self.workers.append(state)
        return state

    @cached_property
    def _span(self) -> Span:
        return merged_span(self.workers)

    @property
    def last_step(self) -> int | None:
        """The last training step a record was logged at (a record whose keys all belong
        to rows with a ``step_axis``, such as ``lm loss vs samples``, does not count)."""
        return self._span.last_step

    @property
    def first_step(self) -> int | None:
        """The first training step a record was logged at (a resumed run's is past 1)."""
        return self._span.first_step

    @cached_property
    def seen(self) -> frozenset[str]:
        """The declared loops' signature keys any worker logged."""
        return frozenset().union(*(w.seen for w in self.workers))

    def seen_signature(self, prefix: str, key: str, worker: WorkerLoop) -> None:
        """A logged pair of ``worker`` is a declared loop's signature key."""
        worker.seen.add(self.signature_keys[(prefix, key)])

    def name(self, loop: str, path: str, line: int, worker: WorkerLoop) -> str | None:
        """A record names its loop: the finding kind it raises, if any.

        An undeclared name is ``unknown_loop``. The first declared name of the
        worker is its loop; another one the same worker names is ``loop_conflict``.
        Workers naming different loops are a job of several loops (see :meth:`job`);
        the run's :attr:`named` is the first.
        """
        if loop not in self.declared:
            return "unknown_loop"
        if self.named is None:
            self.named = loop
        if worker.named is None:
            worker.named, worker.named_at = loop, (path, line)
            return None
        return None if loop == worker.named else "loop_conflict"

    def choose(self) -> LoopChoice:
        """The loop the run is judged as."""
        if self.forced is not None:
            return LoopChoice(self.forced, "flag")
        if self.named is not None:
            return LoopChoice(self.named, "log")
        return self._infer(self.seen)

    def infer(self, worker: WorkerLoop) -> str | None:
        """The loop one worker ran: ``--loop``, its records' named loop, else the loop its
        own signature keys infer (``None``: undecided)."""
        if self.forced is not None:
            return self.forced
        if worker.named is not None:
            return worker.named
        return self._infer(worker.seen).name

    def _infer(self, seen: Set[str]) -> LoopChoice:
        """The loop whose signature keys ``seen`` holds most of (then the largest share)."""
        best: list[tuple[int, float, str, tuple[str, ...]]] = []
        for loop in self.loops:
            evidence = tuple(k for k in loop.signature if k in seen)
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

    @staticmethod
    def _overlaps(
        found: dict[str, list[WorkerLoop]],
        source: dict[str, str],
        signatures: dict[str, frozenset[str]],
    ) -> bool:
        """Whether an inferred worker logged signature keys of two of the found loops: its
        ranks logged different parts of one loop's keys (a rank that logged only some
        keys infers another loop), not workers of different loops."""
        for name, workers in found.items():
            if source[name] != "inferred":
                continue
            for worker in workers:
                if worker.named is not None:
                    continue
                hit = [loop for loop in found if worker.seen & signatures.get(loop, frozenset())]
                if len(hit) > 1:
                    return True
        return False

    def job(self) -> tuple[JobLoop, ...]:
        """The loops of a job of several (empty for a run of one loop, or with ``--loop``).

        Each worker runs the loop its records named, else the one its own signature
        keys infer (a worker with neither runs no known loop and is left out). A
        loop whose signature another found loop's contains is merged into that one;
        an inferred worker that logged signature keys of two found loops makes it no
        job (one run whose ranks logged different parts of its keys).
        """
        if self.forced is not None or len(self.workers) < 2:
            return ()
        found: dict[str, list[WorkerLoop]] = {}
        source: dict[str, str] = {}
        for worker in self.workers:
            name: str | None = worker.named
            how = "log"
            if name is None:
                name, how = self._infer(worker.seen).name, "inferred"
            if name is not None:
                found.setdefault(name, []).append(worker)
                source[name] = how if source.get(name, how) == how else "inferred"
        if len(found) < 2:
            return ()
        signatures = {loop.name: frozenset(loop.signature) for loop in self.loops}
        for name in sorted(found, key=lambda n: len(signatures.get(n, ()))):
            mine = signatures.get(name, frozenset())
            wider = [
                other
                for other in found
                if other != name and mine and mine < signatures.get(other, frozenset())
            ]
            if wider and source[name] == "inferred":
                found[wider[0]].extend(found.pop(name))
        if len(found) < 2 or self._overlaps(found, source, signatures):
            return ()
        job: list[JobLoop] = []
        for name, workers in found.items():
            span = merged_span(workers)
            labels = tuple(w.label for w in workers)
            inputs = tuple(dict.fromkeys(w.input for w in workers))
            job.append(JobLoop(name, source[name], labels, span.first_step, span.last_step, inputs))
        return tuple(job)
