"""Which calls log metrics: the ``scan-calls`` table of ``[tool.metric-catalog]``.

Each entry names a call and the argument holding what it logs, by position,
by keyword, or both (``metrics = [0, "data"]``)::

    [tool.metric-catalog]
    scan-calls = [
      {call = "log_metrics", metrics = 0, prefix = "prefix"},
      {call = "Tracking.log", metrics = "data"},
      {call = "mlflow.log_metric", key = 0},
    ]

``metrics`` is a dict of key -> value; ``key`` a single key (``add_scalar(tag,
value)``); ``prefix`` the argument prefixing every key with ``prefix/``. A call
name without a dot matches any call of that function or method
(``self.logger.log_metrics(...)``); ``A.f`` matches ``A.f(...)``, ``x.A.f(...)``,
and ``v.f(...)`` where ``v`` was assigned ``A(...)`` or annotated ``A`` in the
same file. Configured entries are added to :data:`DEFAULT_SCAN_CALLS`; one with
the same ``call`` replaces the default.

Standard library only: :mod:`codegen.config` parses the table with it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["DEFAULT_SCAN_CALLS", "Argument", "ScanCall", "merge_calls", "parse_scan_call"]

_DOTTED: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True, slots=True)
class Argument:
    """Where an argument is passed: its position (0-based, ``self`` not counted), keyword, both."""

    position: int | None = None
    keyword: str | None = None

    def describe(self) -> str:
        """``0 or data=`` as shown in messages."""
        parts = [] if self.position is None else [f"position {self.position}"]
        if self.keyword is not None:
            parts.append(f"{self.keyword}=")
        return " or ".join(parts)


@dataclass(frozen=True, slots=True)
class ScanCall:
    """A call that logs metrics and which of its arguments hold the keys and the prefix."""

    call: str
    """``log_metrics``, ``Tracking.log``, ``wandb.log``, ``self.log_dict``..."""
    metrics: Argument | None = None
    """The argument holding a dict of key -> value (exactly one of ``metrics`` and ``key``)."""
    key: Argument | None = None
    """The argument holding one key (``add_scalar(tag, value)``)."""
    prefix: Argument | None = None
    """The argument holding the prefix (keys are logged as ``prefix/key``); absent: none."""

    @property
    def name(self) -> str:
        """The called function or method: the last part of :attr:`call`."""
        return self.call.rpartition(".")[2]

    @property
    def qualifier(self) -> str | None:
        """What the call is made on (``Tracking`` of ``Tracking.log``); ``None`` for a bare name."""
        head, _, _ = self.call.rpartition(".")
        return head or None


DEFAULT_SCAN_CALLS: Final[tuple[ScanCall, ...]] = (
    # NeMo-RL's Logger, this project's TeeLogger/JsonlLogger, mlflow.log_metrics.
    ScanCall("log_metrics", metrics=Argument(0, "metrics"), prefix=Argument(2, "prefix")),
    # verl's utils.tracking.Tracking.log(data, step).
    ScanCall("Tracking.log", metrics=Argument(0, "data")),
    ScanCall("wandb.log", metrics=Argument(0, "data")),
    # PyTorch Lightning's LightningModule.log_dict(dictionary, ...).
    ScanCall("self.log_dict", metrics=Argument(0, "dictionary")),
    ScanCall("mlflow.log_metric", key=Argument(0, "key")),
    ScanCall("SummaryWriter.add_scalar", key=Argument(0, "tag")),
)
"""The calls scanned when ``scan-calls`` configures none (and under any that it adds)."""


def _argument(value: object, what: str) -> Argument:
    items: Sequence[object] = value if isinstance(value, list) else [value]
    position: int | None = None
    keyword: str | None = None
    for item in items:
        if isinstance(item, bool):
            raise ValueError(f"{what} {item!r} is a bool, not a position or a keyword")
        if isinstance(item, int):
            if item < 0 or position is not None:
                raise ValueError(f"{what} {value!r} needs one position >= 0")
            position = item
        elif isinstance(item, str) and _IDENTIFIER.match(item):
            if keyword is not None:
                raise ValueError(f"{what} {value!r} names two keywords")
            keyword = item
        else:
            raise ValueError(f"{what} {item!r} is not a position (0, 1...) or a keyword name")
    if position is None and keyword is None:
        raise ValueError(f"{what} {value!r} names no argument")
    return Argument(position, keyword)


def parse_scan_call(entry: object) -> ScanCall:
    """One ``scan-calls`` entry as a :class:`ScanCall`.

    Raises:
        ValueError: The entry is not a table of ``call`` and ``metrics`` or
            ``key`` (and optionally ``prefix``); the message says which field.
    """
    if not isinstance(entry, Mapping):
        raise ValueError(f"{entry!r} is not a table")
    unknown = sorted(set(entry) - {"call", "metrics", "key", "prefix"})
    if unknown:
        raise ValueError(f"{dict(entry)!r} has unknown field(s) {', '.join(unknown)}")
    call = entry.get("call")
    if not isinstance(call, str) or not _DOTTED.match(call):
        raise ValueError(f"call {call!r} is not a dotted name such as 'Tracking.log'")
    if ("metrics" in entry) == ("key" in entry):
        raise ValueError(f"{call!r} needs exactly one of metrics (a dict argument) and key")
    metrics = _argument(entry["metrics"], "metrics") if "metrics" in entry else None
    key = _argument(entry["key"], "key") if "key" in entry else None
    prefix = _argument(entry["prefix"], "prefix") if "prefix" in entry else None
    return ScanCall(call, metrics=metrics, key=key, prefix=prefix)


def merge_calls(configured: Sequence[ScanCall]) -> tuple[ScanCall, ...]:
    """The defaults with ``configured`` added; a configured ``call`` replaces its default."""
    merged = {spec.call: spec for spec in DEFAULT_SCAN_CALLS}
    merged.update((spec.call, spec) for spec in configured)
    return tuple(merged.values())
