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
value)``); ``prefix`` the argument prefixing every key with ``prefix/``;
``key-prefix`` literal text written before every key (``"train/"`` for a
wrapper that adds it in a way the scanner cannot read); ``dict-only = true``
skips calls whose ``metrics`` argument is visibly not a dict (a list of
episodes). Three more kinds of entry say what the scanner cannot see:

* ``{call = "all_reduce", through = 0}``: the call hands back the dict passed
  there with the same keys (a collective, a reduce, a filter);
* ``{call = "training_step", returns = true, key-prefix = "train/"}``: the dict
  the function (or method) of that name returns is logged, across a process
  boundary the scanner cannot follow (a Ray actor's result); ``returns =
  "metrics"`` when it returns ``{"metrics": m, ...}`` and ``m`` is what is logged;
* ``{field = "info", key-prefix = "train/"}``: keys written into that field of
  any object (``exp.info["kl"] = ...``; ``meta_info.metrics`` for
  ``meta_info={"metrics": m}`` or ``x.meta_info["metrics"]``) are logged.

A call
name without a dot matches any call of that function or method
(``self.logger.log_metrics(...)``); ``A.f`` matches ``A.f(...)``, ``x.A.f(...)``,
and ``v.f(...)`` where ``v`` was assigned ``A(...)`` or annotated ``A`` in the
same file, and ``self.f(...)`` or ``super().f(...)`` in a class deriving from a class
named ``A`` (directly or through scanned classes). A bare name does not match a function
of a numeric package (``math.log``: see :mod:`.inherited`). Configured entries are added
to :data:`DEFAULT_SCAN_CALLS`; one with the same ``call`` replaces the default.

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
    aliases: tuple[str, ...] = ()
    """Other keywords for it (a default entry: ``Tracking.log``'s ``data=`` or ``values=``)."""

    def describe(self) -> str:
        """``0 or data=`` as shown in messages."""
        parts = [] if self.position is None else [f"position {self.position}"]
        parts += [f"{name}=" for name in self.keywords]
        return " or ".join(parts)

    @property
    def keywords(self) -> tuple[str, ...]:
        """Every keyword the argument may be passed by: :attr:`keyword`, then the aliases."""
        return (*(() if self.keyword is None else (self.keyword,)), *self.aliases)


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
    key_prefix: str = ""
    """Literal text before every key the call logs (``train/``)."""
    through: Argument | None = None
    """A pass-through call: it returns the dict passed there, same keys (logs nothing)."""
    returns: bool = False
    """A producer: the dict the function of this name returns is logged (``key_prefix``)."""
    returns_key: str = ""
    """The producer returns a dict holding the metrics under this key (``{"metrics": m}``)."""
    field: str = ""
    """A producer: keys written into this object field are logged (``meta_info.metrics``)."""
    dict_only: bool = False
    """Skip calls whose ``metrics`` argument is visibly not a dict (a list, a tuple)."""

    @property
    def logs(self) -> bool:
        """The entry is a logging call (``metrics`` or ``key``), not a pass-through or producer."""
        return self.metrics is not None or self.key is not None

    @property
    def slot(self) -> str:
        """What a configured entry replaces: its ``call``, or its ``field``."""
        return self.call or f"field:{self.field}"

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
    # verl's utils.tracking.Tracking.log(data, step); trackers of its shape name it values=.
    ScanCall("Tracking.log", metrics=Argument(0, "data", ("values",))),
    ScanCall("wandb.log", metrics=Argument(0, "data")),
    # Hugging Face transformers' Trainer.log(logs, start_time): TRL's trainers override it
    # and call ``super().log(logs)``; matched through ``self``/``super()`` in subclasses.
    ScanCall("Trainer.log", metrics=Argument(0, "logs")),
    # PyTorch Lightning's LightningModule.log_dict(dictionary, ...).
    ScanCall("self.log_dict", metrics=Argument(0, "dictionary")),
    ScanCall("mlflow.log_metric", key=Argument(0, "key")),
    ScanCall("SummaryWriter.add_scalar", key=Argument(0, "tag")),
    # The trackers teams use, each call matched through what its receiver is bound to by
    # the file's imports (``import swanlab as sl`` then ``sl.log``) or assigned (``run =
    # wandb.init(...)``, ``self.run = swanlab.init(...)``: the run any tracker's ``init``
    # returns logs a dict with ``run.log``).
    ScanCall("init.log", metrics=Argument(0, "data"), dict_only=True),
    ScanCall("swanlab.log", metrics=Argument(0, "data")),
    ScanCall("trackio.log", metrics=Argument(0, "metrics")),
    # ``add_scalars(main_tag, {tag: value})`` logs ``main_tag/tag``.
    ScanCall(
        "SummaryWriter.add_scalars",
        metrics=Argument(1, "tag_scalar_dict"),
        prefix=Argument(0, "main_tag"),
    ),
    ScanCall("Accelerator.log", metrics=Argument(0, "values")),
    ScanCall("LightningModule.log", key=Argument(0, "name")),
    ScanCall("LightningModule.log_dict", metrics=Argument(0, "dictionary")),
    ScanCall("Experiment.log_metric", key=Argument(0, "name")),  # Comet
    ScanCall("Experiment.log_metrics", metrics=Argument(0, "dic"), prefix=Argument(None, "prefix")),
    # ClearML's ``Logger.report_scalar(title, series, value, iteration)``: ``title/series``.
    ScanCall("report_scalar", key=Argument(1, "series"), prefix=Argument(0, "title")),
    ScanCall("Run.track", key=Argument(1, "name")),  # Aim
    # This package's own tee calls (``record_metrics`` takes registry keys, not logged keys).
    ScanCall("tee_metrics", metrics=Argument(0, "metrics"), prefix=Argument(1, "prefix")),
    ScanCall("tee_flat", metrics=Argument(0, "metrics")),
    ScanCall("TrackingTee.log", metrics=Argument(0, "data")),
    # ``log = tee_wandb_log(run)`` returns a ``log(data, step=...)``: its calls are read under
    # a name scan reads calls of (``log``, as the README writes it).
    ScanCall("tee_wandb_log.__call__", metrics=Argument(0, "data")),
    # Collectives and reductions of a dict of metrics: the same keys come back.
    ScanCall("all_reduce", through=Argument(0, "data")),
    ScanCall("all_reduce_dict", through=Argument(0, "data")),
    ScanCall("reduce_metrics", through=Argument(0, "metrics")),
    ScanCall("reduce_dict", through=Argument(0, "input_dict")),
    ScanCall("reduce_mean_dict", through=Argument(0, "data")),
    ScanCall("all_gather_dict", through=Argument(0, "data")),
    ScanCall("detach_dict", through=Argument(0, "data")),
    # A copy of a dict has its keys (``log_dict = deepcopy(timer.log_dict())``).
    ScanCall("copy.deepcopy", through=Argument(0, "x")),
    ScanCall("copy.copy", through=Argument(0, "x")),
    # Maps over a nested structure keep its keys: dm-tree's ``tree.map_structure(fn, d)``,
    # JAX's and PyTorch's ``tree_map(fn, d)``.
    ScanCall("tree.map_structure", through=Argument(1)),
    ScanCall("tree_map", through=Argument(1, "tree")),
    ScanCall("tree_util.tree_map", through=Argument(1, "tree")),  # jax: numeric, so named
    ScanCall("jax.tree.map", through=Argument(1, "tree")),
)
"""The calls scanned when ``scan-calls`` configures none (and under any that it adds)."""

_FIELDS: Final = frozenset(
    {"call", "metrics", "key", "prefix", "key-prefix", "through", "returns", "field", "dict-only"}
)


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
        ValueError: The entry is not a table of ``call`` and one of ``metrics``,
            ``key``, ``through`` or ``returns`` (or of ``field``), with optional
            ``prefix``, ``key-prefix``, ``dict-only``; the message says which field.
    """
    if not isinstance(entry, Mapping):
        raise ValueError(f"{entry!r} is not a table")
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise ValueError(f"{dict(entry)!r} has unknown field(s) {', '.join(unknown)}")
    key_prefix = _text(entry, "key-prefix")
    dict_only = _flag(entry, "dict-only")
    if "field" in entry:
        return _field_entry(entry, key_prefix)
    call = entry.get("call")
    if not isinstance(call, str) or not _DOTTED.match(call):
        raise ValueError(f"call {call!r} is not a dotted name such as 'Tracking.log'")
    kinds = [name for name in ("metrics", "key", "through", "returns") if name in entry]
    if len(kinds) != 1:
        raise ValueError(
            f"{call!r} needs exactly one of metrics (a dict argument), key (one key argument), "
            "through (an argument handed back with its keys) and returns = true"
        )
    if kinds == ["returns"]:
        returns = entry["returns"]
        if isinstance(returns, str) and _IDENTIFIER.match(returns):
            return ScanCall(call, returns=True, returns_key=returns, key_prefix=key_prefix)
        if returns is not True:
            raise ValueError(
                f"{call!r}: returns {returns!r} must be true (the returned dict is logged) or "
                "the key under which the returned dict holds the metrics ('metrics')"
            )
        return ScanCall(call, returns=True, key_prefix=key_prefix)
    metrics = _argument(entry["metrics"], "metrics") if "metrics" in entry else None
    key = _argument(entry["key"], "key") if "key" in entry else None
    through = _argument(entry["through"], "through") if "through" in entry else None
    prefix = _argument(entry["prefix"], "prefix") if "prefix" in entry else None
    if dict_only and metrics is None:
        raise ValueError(f"{call!r}: dict-only applies to a metrics argument only")
    return ScanCall(
        call,
        metrics=metrics,
        key=key,
        prefix=prefix,
        key_prefix=key_prefix,
        through=through,
        dict_only=dict_only,
    )


def _field_entry(entry: Mapping[str, object], key_prefix: str) -> ScanCall:
    name = entry["field"]
    if not isinstance(name, str) or not _DOTTED.match(name):
        msg = f"field {name!r} is not a dotted name such as 'info' or 'meta_info.metrics'"
        raise ValueError(msg)
    extra = sorted(set(entry) - {"field", "key-prefix"})
    if extra:
        raise ValueError(f"field {name!r} takes only key-prefix, not {', '.join(extra)}")
    return ScanCall("", field=name, key_prefix=key_prefix)


def _text(entry: Mapping[str, object], name: str) -> str:
    value = entry.get(name, "")
    if not isinstance(value, str):
        raise ValueError(f"{name} {value!r} is not a string such as 'train/'")
    return value


def _flag(entry: Mapping[str, object], name: str) -> bool:
    value = entry.get(name, False)
    if not isinstance(value, bool):
        raise ValueError(f"{name} {value!r} is not true or false")
    return value


def merge_calls(configured: Sequence[ScanCall]) -> tuple[ScanCall, ...]:
    """The defaults with ``configured`` added; a configured ``call`` replaces its default."""
    merged = {spec.slot: spec for spec in DEFAULT_SCAN_CALLS}
    merged.update((spec.slot, spec) for spec in configured)
    return tuple(merged.values())
