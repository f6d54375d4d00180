"""What ingesters yield: :class:`Record` (one logging call or point) and :class:`Malformed`.

An ingester turns one input (a file, stdin, a run folder) into these, each
with its source position, so the judges never see a format.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import BinaryIO, Final, NamedTuple

__all__ = [
    "NO_ATTRIBUTES",
    "NO_STEP",
    "Item",
    "Malformed",
    "Note",
    "Record",
    "RunConfig",
    "RunInfo",
    "Source",
]

NO_ATTRIBUTES: Final[Mapping[str, object]] = MappingProxyType({})
"""The attributes of a record that has none (shared, read-only)."""

NO_STEP: Final = -(2**63)
"""The ``step`` of a record the input gave none (a flat JSONL line logging a table at the
end of a run): it says nothing of how far the run trained, unless a loop's step key in
its ``metrics`` gives the step. (A field would cost every record: a sentinel costs none.)"""


class Record(NamedTuple):
    """One logging call (``metrics``: logged key -> value under ``prefix``) or one point.

    A point names its ``series`` (a declared series name or registry key) and
    carries its ``value``; ``metrics`` is then empty. ``path`` and ``line`` say
    where it was read (``line`` 1-based; 0 when the input has no lines);
    ``worker`` is the process that logged it when the input says so.

    A point read from live telemetry (OTLP, a Prometheus scrape) also says how
    the wire described its series: ``kind`` (``gauge``, ``counter``,
    ``up_down_counter``, ``histogram``, ...), ``unit``, ``transport``
    (``otlp`` or ``prometheus``) and, for a scrape, ``exposed_as`` (the metric
    family name as exposed); a log's records leave them ``None``.

    A named tuple: ingesters build one per line or point, and a tuple is
    built several times faster than a frozen dataclass.
    """

    step: int
    prefix: str
    metrics: Mapping[str, object]
    path: str
    line: int
    loop: str | None = None
    attributes: Mapping[str, object] = NO_ATTRIBUTES
    series: str | None = None
    value: object = None
    worker: str | None = None
    kind: str | None = None
    unit: str | None = None
    transport: str | None = None
    exposed_as: str | None = None
    split: bool = False
    """The ``metrics`` keys are whole keys logged without a prefix (flat JSONL, MLflow):
    each is split against the catalog by ``series_rules.split_flat_key``'s one rule."""
    input: str | None = None
    """The input the record belongs to when it is not ``path`` (an MLflow run folder of
    which ``path`` is one metric file): its worker."""
    rewrite: str | None = None
    """The rule by which the logging backend may have rewritten the keys before writing
    them (``tensorboard``; see :data:`~codegen.catalog.matching.KEY_REWRITES`): a key
    no row takes as logged is matched against the rows' keys rewritten by it."""
    step_keys: frozenset[str] = frozenset()
    """Keys of ``metrics`` that are the record's x axis in the logging backend rather than
    values the code logged for their own sake (a W&B step metric, which ``step_sync``
    writes into every record of its keys): counted under a row that declares them, never
    reported undeclared."""
    backend_prefix: str | None = None
    """Where the logging backend writes metrics of its own next to the run's (MLflow's
    system metrics, ``system/``): a key under it that no row takes is the backend's, not
    the training code's, so it is counted in a ``backend_metrics`` notice, not
    ``undeclared``."""


class RunConfig(NamedTuple):
    """The run's configuration, as a header line logged it (``JsonlLogger(config=...)``).

    Conditions of ``conditionally_required`` rows and ``first_step`` values that
    name ``config.<path>`` are judged against it (see :mod:`codegen.catalog.conditions`).
    """

    config: Mapping[str, object]
    path: str
    line: int
    loop: str | None = None
    worker: str | None = None
    run: str | None = None
    """The run it belongs to, when the input says (a W&B run's id): runs that logged
    different configurations cannot share one (see :class:`~.checker.Checker`)."""
    input: str | None = None
    """The input its records name as theirs (``Record.input``) when that is not ``path``:
    the worker whose configuration it is (a job of several loops judges each loop's rows
    by its own workers' configuration)."""


@dataclass(frozen=True, slots=True)
class Malformed:
    """A part of an input that is not a record, and why (``fatal``: the input was abandoned)."""

    path: str
    line: int
    why: str
    fatal: bool = False
    expected: str = "a JSONL record"
    """What the input should have held there (``a JSONL record``, ``an MLflow metric line``)."""
    input: str | None = None
    """The input it belongs to when it is not ``path`` (see :attr:`Record.input`)."""
    where: str | None = None
    """How the report names the position when the input has no lines (a binary file:
    ``record 12, byte 40967``); ``None`` says ``line <line>``."""


class Note(NamedTuple):
    """Information about an input that is neither a record nor malformed: it never fails a run.

    The report lists it as a notice of ``kind`` (for example a run still writing
    its last record, or summaries of a kind live-check does not judge); ``path``
    and ``line`` say where (``line`` 0: the input as a whole).
    """

    kind: str
    message: str
    path: str
    line: int = 0


class RunInfo(NamedTuple):
    """One run a store input holds (an MLflow run folder, a run in an MLflow database).

    ``input`` is the label its records carry as :attr:`Record.input` (the
    worker the check judges it as); ``run_id``, ``name`` and ``experiment`` are
    what the store says about it (``None`` when it does not say).
    """

    input: str
    run_id: str
    name: str | None = None
    experiment: str | None = None

    def matches(self, selector: str) -> bool:
        """Whether ``--run selector`` names this run: its id, its name, or its folder
        (as given, or its last part)."""
        folder = self.input.rstrip("/\\")
        return selector in (self.run_id, self.name, folder, os.path.basename(folder))

    def to_json(self) -> dict[str, str | None]:
        """The run as the JSON report's ``inputs`` list shows it."""
        return {
            "input": self.input,
            "run_id": self.run_id,
            "run_name": self.name,
            "experiment": self.experiment,
        }


@dataclass(slots=True)
class Source:
    """One input being read: its name, an open stream (stdin) if any, and lines read so far."""

    path: str
    stream: BinaryIO | None = None
    lines: int = 0
    format: str | None = None
    """The ingester's name, once chosen (``--input-format`` or detected)."""
    runs: list[RunInfo] = field(default_factory=list)
    """The runs a store input held (MLflow), in the order they were read."""
    select: tuple[str, ...] = ()
    """``--run``: read only the runs one of these names (see :meth:`RunInfo.matches`);
    empty: every run."""
    unselected: list[RunInfo] = field(default_factory=list)
    """The runs the input held that ``select`` left out, in the order they were met."""

    def wants(self, run: RunInfo) -> bool:
        """Whether to read ``run`` (``select`` names it, or selects nothing); a run left
        out is remembered in :attr:`unselected`."""
        if not self.select or any(run.matches(s) for s in self.select):
            return True
        self.unselected.append(run)
        return False


Item = Record | RunConfig | Malformed | Note
"""What an ingester yields."""
