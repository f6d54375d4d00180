"""Tee from loggers of other shapes: flat keys split against the catalog.

NeMo-RL logs ``log_metrics(metrics, step, prefix)``; most other stacks log one
flat dict whose keys carry the prefix inside them (``actor/pg_loss``,
``timing_s/gen``, ``train/loss``). :func:`tee_flat` splits each flat key
against the declared rows by the one routing rule live-check, scan, infer and
emit use (:func:`metric_catalog.series_rules.split_flat_key`): a literal row's
pair first, else the most literal row that can take the key (every captured
value within its attribute), then the longest prefix
(``val-core/openai/gsm8k/acc/mean@4`` under a row declared with prefix
``val-core`` and a family key); a key no split routes is teed bare under the
empty prefix. The process's loop (``loop=``, else ``METRIC_CATALOG_LOOP``)
splits by that loop's rows first, as the tee then routes. A loop's step key and
a backend's own key (W&B's ``_step``) are no metric and are left out. Splits
are cached per key, bounded.

Adapters for the common logging calls, each a thin wrapper that calls the
wrapped logger first (its exceptions are the caller's) and then tees, never
raising:

- :class:`TrackingTee`: verl's ``Tracking.log(data, step, backend=None)``;
- :func:`tee_wandb_log`: a ``wandb.log(data, step=None, commit=None, ...)``
  replacement around a run (or the ``wandb`` module); a nested dict is teed
  under its dotted path (``{"eval": {"acc": x}}`` is ``eval.acc``), the key
  live-check reads from the run's ``.wandb`` file;
- :class:`TrainerCallbackTee`: a Hugging Face ``TrainerCallback`` whose
  ``on_log(args, state, control, logs=None, **kwargs)`` tees ``logs``;
- :class:`LightningTeeMixin`: put it before a Lightning logger class
  (``class TeedCSV(LightningTeeMixin, CSVLogger)``) so every
  ``log_metrics(metrics, step)`` (what ``self.log_dict`` reaches) is teed;
- :func:`tee_summary_writer`: a TensorBoard ``SummaryWriter`` (torch's or
  tensorboardX's) whose ``add_scalar(tag, scalar_value, global_step=None, ...)``
  then tees ``{tag: scalar_value}`` too (Megatron-LM's ``training_log``,
  torchtitan's ``TensorBoardLogger``);
  :func:`metric_catalog.tensorboard_setup.describe_summary_writer` adds each scalar's
  catalog description and a custom-scalars layout to the same writer.

Like the tee, nothing here imports those libraries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

from metric_catalog import otel
from metric_catalog._attributes import captures, compile_template
from metric_catalog._warn import warn_once
from metric_catalog.loggers import JsonlLogger
from metric_catalog.series_rules import (
    SeriesMatcher,
    bookkeeping_matches,
    is_glued,
    is_literal,
    literal_text,
    pair_rank,
    split_flat_key,
)
from metric_catalog.tee import tee_metrics

if TYPE_CHECKING:
    from opentelemetry.util.types import Attributes

    from metric_catalog.series_rules import Specificity
    from metric_catalog.vocabulary import TeedMetric

__all__ = [
    "MEDIA_TYPE_KEY",
    "SPLIT_CACHE_LIMIT",
    "LightningTeeMixin",
    "TrackingTee",
    "TrainerCallbackTee",
    "flatten_nested",
    "split_flat",
    "split_key",
    "tee_flat",
    "tee_summary_writer",
    "tee_wandb_log",
]

MEDIA_TYPE_KEY: Final = "_type"
"""The key W&B writes in a media value's dict (``{"_type": "table-file", ...}``)."""

SPLIT_CACHE_LIMIT: Final = 4096
"""Flat keys whose split is remembered (per registry); later keys are split each time."""

_LOCK = threading.Lock()
_CACHE: dict[str | tuple[str, str], tuple[str, str, bool]] = {}
_CACHE_GROUP: list[object] = [None]
_ROWS: list[_Rows | None] = [None]
_TEED_MARK: Final = "__metric_catalog_teed__"
_W = TypeVar("_W")


class _View:
    """The rows a process of one loop may log (or every row), indexed for a flat split."""

    __slots__ = ("families", "literal")

    def __init__(self, rows: list[TeedMetric]) -> None:
        literal: set[tuple[str, str]] = set()
        self.families = SeriesMatcher(SPLIT_CACHE_LIMIT)
        for row in rows:
            domain = captures({a.name: a for a in row.attributes})
            for prefix in row.prefixes:
                if is_literal(prefix) and is_literal(row.logger_key):
                    literal.add((literal_text(prefix), literal_text(row.logger_key)))
                else:
                    self.families.add(prefix, row.logger_key, domain, row)
        self.literal = frozenset(literal)

    def rank(self, prefix: str, key: str) -> Specificity | None:
        """The :func:`~metric_catalog.series_rules.flat_rank` of the rows taking the pair."""
        return pair_rank(self.literal, self.families, prefix, key)

    def is_literal(self, prefix: str, key: str) -> bool:
        """Whether ``(prefix, key)`` is a literal row's pair."""
        return (prefix, key) in self.literal


class _Rows:
    """What a flat split asks of one registry: its rows by loop, and its glued prefixes."""

    def __init__(self, group: otel.MetricGroup) -> None:
        rows = {id(row): row for rows in group.rows_by_prefix.values() for row in rows}
        rows.update((id(row), row) for _compiled, row in group.prefix_patterns)
        self.rows = tuple(rows.values())
        self.scoped = any(row.emitted_by for row in self.rows)
        self.views: dict[str | None, _View] = {}
        self.glued = frozenset(prefix for prefix in group.rows_by_prefix if is_glued(prefix))
        self.glued_patterns = tuple(
            compile_template(prefix, {a.name: a for a in row.attributes})
            for row in {id(row): row for _compiled, row in group.prefix_patterns}.values()
            for prefix in row.prefixes
            if is_glued(prefix) and not is_literal(prefix)
        )

    def view(self, loop: str | None) -> _View:
        """The rows a process of ``loop`` may log (``None``: every row), built once."""
        found = self.views.get(loop)
        if found is None:
            chosen = [
                r for r in self.rows if loop is None or not r.emitted_by or loop in r.emitted_by
            ]
            found = self.views[loop] = _View(chosen)
        return found

    def split(self, key: str, loop: str | None) -> tuple[str, str]:
        """The one flat-split rule (:func:`~metric_catalog.series_rules.split_flat_key`):
        by the loop's rows first, then by every row, as live-check splits a run's keys."""
        if loop is not None and self.scoped:
            found = self._strict(self.view(loop), key)
            if found is not None:
                return found
        return self._strict(self.view(None), key) or ("", key)

    def _strict(self, view: _View, key: str) -> tuple[str, str] | None:
        found = split_flat_key(key, view.rank, view.is_literal, self.is_glued)
        if found == ("", key) and not view.rank("", key):
            return None
        return found

    def is_glued(self, prefix: str) -> bool:
        """Whether a declared prefix ending in ``_`` takes ``prefix`` (``eval_``)."""
        if prefix in self.glued:
            return True
        return any(pattern.match(prefix) is not None for pattern in self.glued_patterns)


def split_key(key: str, loop: str | None = None) -> tuple[str, str]:
    """``(prefix, logger key)`` of a flat key, by the routing rule every reader shares.

    ``"actor/pg_loss"`` -> ``("actor", "pg_loss")`` when a row declares
    ``pg_loss`` under prefix ``actor``; ``"eval_loss"`` -> ``("eval_", "loss")``
    under a declared prefix ending in ``_``; a literal row's pair beats a family,
    and among the rows that can take the key (every capture within its attribute)
    the most literal one wins, then the longest prefix
    (:func:`metric_catalog.series_rules.split_flat_key`); ``("", key)`` when no
    split routes (the key is then teed bare, as logged). ``loop`` (else
    ``METRIC_CATALOG_LOOP``) splits by that loop's rows first, as the tee routes.
    """
    prefix, rest, _aside = _planned(key, loop)
    return prefix, rest


def _planned(key: str, loop: str | None) -> tuple[str, str, bool]:
    """:func:`split_key`'s answer and whether the key is no metric, cached per key."""
    group = otel.ensure_metric_group_registered()
    if loop is None or type(loop) is not str:
        loop = group.loop
    slot = key if loop is None else (loop, key)
    with _LOCK:
        if _CACHE_GROUP[0] is not group:
            _CACHE.clear()
            _CACHE_GROUP[0] = group
            _ROWS[0] = None
        cached = _CACHE.get(slot)
        rows = _ROWS[0]
    if cached is not None:
        return cached
    if rows is None:
        rows = _Rows(group)
        with _LOCK:
            if _CACHE_GROUP[0] is group:
                _ROWS[0] = rows
    aside = key in group.step_keys or any(bookkeeping_matches(p, key) for p in group.bookkeeping)
    with _LOCK:  # the views are built lazily and shared across threads
        found = (*rows.split(key, loop), aside)
        if len(_CACHE) < SPLIT_CACHE_LIMIT:
            _CACHE[slot] = found
    return found


def split_flat(metrics: Mapping[str, Any], loop: str | None = None) -> dict[str, dict[str, Any]]:
    """Flat ``metrics`` grouped by the prefix each key splits into (see :func:`split_key`).

    Keys that are not strings are kept under the empty prefix, as logged. A key that is
    no metric (a loop's step key, a ``bookkeeping:`` key, a backend's own ``_step``) is
    left out.
    """
    grouped: dict[str, dict[str, Any]] = {}
    for key, value in metrics.items():
        if type(key) is str:
            prefix, rest, aside = _planned(key, loop)
            if aside:
                continue  # the step, a bookkeeping key, the backend's own key: no metric
        else:
            prefix, rest = "", key
        bucket = grouped.get(prefix)
        if bucket is None:
            bucket = grouped[prefix] = {}
        bucket[rest] = value
    return grouped


def tee_flat(
    metrics: Mapping[str, Any],
    *,
    attributes: Attributes = None,
    strict: bool | None = None,
    loop: str | None = None,
) -> None:
    """Tee a flat dict: each key under the prefix it splits into. Never raises.

    ``loop`` names the training loop the dict comes from (else ``METRIC_CATALOG_LOOP``),
    so a key rows of several loops share feeds this loop's row (see :func:`tee_metrics`).
    """
    try:
        grouped = split_flat(metrics, loop)
    except Exception as exc:  # noqa: BLE001 - telemetry never crashes a training loop
        warn_once(
            ("tee-flat", type(exc).__name__),
            f"tee: splitting flat keys failed: {type(exc).__name__}; nothing was teed "
            "(warned once per error type)",
            family="tee-error",
        )
        return
    for prefix, sub in grouped.items():
        tee_metrics(sub, prefix, attributes=attributes, strict=strict, loop=loop)
    bare = grouped.get("")
    if bare and (strict or (strict is None and otel.current_group().strict)):
        _report_unsplit(bare)


def _report_unsplit(bare: Mapping[Any, Any]) -> None:
    """Strict mode for flat keys: one no row took, under a declared prefix, is warned once.

    ``tee_metrics`` is silent for the empty prefix when no row is declared there (a bare
    key is no omission); a flat ``train/typo`` is one, as :class:`TeeLogger` says for
    ``log_metrics({"typo": ...}, prefix="train")``.
    """
    declared = otel.current_group().rows_by_prefix
    for key in list(bare):
        if type(key) is not str or "/" not in key:
            continue
        head = key.rsplit("/", 1)[0]
        while head and head not in declared:
            head = head.rpartition("/")[0]
        if not head:
            continue
        warn_once(
            ("undeclared", head, key[len(head) + 1 :]),
            f"tee (strict): {key!r} is logged under the teed prefix {head!r} but no row "
            "declares it (nor matches it with a key pattern), so it is not exported; "
            "declare a TeedMetric for it in its owner's catalog, or log it under another "
            "prefix (warned once per key)",
            family="undeclared-key",
        )


class TrackingTee:
    """verl's ``Tracking`` (or anything with ``log(data, step, ...)``), teed.

    ``TrackingTee(Tracking(...)).log(data=metrics, step=step)`` calls the
    wrapped ``log`` first, then tees ``data`` with :func:`tee_flat`. Other
    attributes are the wrapped object's.
    """

    def __init__(
        self, inner: Any, *, attributes: Attributes = None, loop: str | None = None
    ) -> None:
        """Wrap ``inner``; ``attributes`` go on every teed point, ``loop`` routes shared keys."""
        if not callable(getattr(inner, "log", None)):
            msg = f"TrackingTee needs an object with a log method, got {type(inner).__name__}"
            raise TypeError(msg)
        self.inner = inner
        """The wrapped tracker."""
        self.attributes = attributes
        """OpenTelemetry attributes put on every teed point."""
        self.loop = loop
        """The training loop shared keys are routed by (``None``: ``METRIC_CATALOG_LOOP``)."""

    def log(self, data: Mapping[str, Any], step: int, *args: Any, **kwargs: Any) -> Any:
        """``Tracking.log(data, step, backend=None)``, then the tee."""
        try:
            return self.inner.log(data, step, *args, **kwargs)
        finally:
            tee_flat(data, attributes=self.attributes, loop=self.loop)

    def __getattr__(self, name: str) -> Any:
        if name in {"inner", "loop"} or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return getattr(self.inner, name)


_MAX_NESTING: Final = 32
"""Nested dicts deeper than this (a cycle) are not flattened further."""


def flatten_nested(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data`` with each nested dict's leaves under their dotted path, as W&B stores them.

    ``{"eval": {"acc": 0.9}, "loss": 0.1}`` is ``{"eval.acc": 0.9, "loss": 0.1}``;
    ``data`` itself comes back when nothing is nested. A W&B media dict (any dict
    holding ``_type``: a table, an image, a histogram, as stored in a run) is one
    value of its key, never sub-keys.
    """
    if not any(_is_nested(value) for value in data.values()):
        return data
    flat: dict[str, Any] = {}

    def walk(path: str, value: Any, depth: int) -> None:
        if _is_nested(value) and depth < _MAX_NESTING:
            for name, inner in value.items():
                walk(f"{path}.{name}" if path else str(name), inner, depth + 1)
        else:
            flat[path] = value

    for key, value in data.items():
        walk(str(key), value, 0)
    return flat


def _is_nested(value: object) -> bool:
    """Whether ``value`` is a non-empty dict of sub-keys (not a W&B media dict)."""
    return isinstance(value, Mapping) and bool(value) and MEDIA_TYPE_KEY not in value


def tee_wandb_log(
    run: Any, *, attributes: Attributes = None, loop: str | None = None
) -> Callable[..., Any]:
    """A ``log(data, step=None, commit=None, ...)`` that calls ``run.log`` and then tees.

    ``run`` is a ``wandb`` run or the ``wandb`` module: ``log = tee_wandb_log(wandb)``,
    then ``log({"train/loss": 0.4}, step=3)`` wherever ``wandb.log`` was called. A
    nested dict is teed under its dotted path (:func:`flatten_nested`).
    """
    inner = run.log

    def log(data: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return inner(data, *args, **kwargs)
        finally:
            try:
                flat = flatten_nested(data)
            except Exception:  # noqa: BLE001 - telemetry never crashes a training loop
                flat = data
            tee_flat(flat, attributes=attributes, loop=loop)

    return log


class TrainerCallbackTee:
    """A Hugging Face ``TrainerCallback`` that tees every ``logs`` dict the Trainer logs.

    ``trainer.add_callback(TrainerCallbackTee())``: the Trainer calls each
    callback's ``on_log(args, state, control, logs=...)``; the other events
    are no-ops, as on ``transformers.TrainerCallback``. With ``logger`` (a
    :class:`~metric_catalog.loggers.JsonlLogger`, or anything with
    ``log_metrics(metrics, step, prefix="")``), each dict is also written there
    first, at ``state.global_step``, as the Trainer logged it: a log live-check
    reads, splitting its flat keys as the tee does.
    """

    def __init__(
        self, *, attributes: Attributes = None, logger: Any = None, loop: str | None = None
    ) -> None:
        """``attributes`` are put on every teed point; ``logger`` also gets each dict.

        ``loop`` routes keys rows of several loops share (else ``METRIC_CATALOG_LOOP``).

        Raises:
            TypeError: ``logger`` has no ``log_metrics`` method.
        """
        if logger is not None and not callable(getattr(logger, "log_metrics", None)):
            msg = (
                "TrainerCallbackTee(logger=...) needs an object with a log_metrics method "
                f"(a JsonlLogger), got {type(logger).__name__}"
            )
            raise TypeError(msg)
        self.attributes = attributes
        """OpenTelemetry attributes put on every teed point."""
        self.logger = logger
        """Where each ``logs`` dict is also written (``None``: nowhere)."""
        self.loop = loop
        """The training loop shared keys are routed by (``None``: ``METRIC_CATALOG_LOOP``)."""

    def on_log(
        self,
        args: Any,
        state: Any,
        control: Any,
        logs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Tee ``logs`` (flat keys: ``loss``, ``learning_rate``, ``eval_loss`` ...).

        The ``logger``, when given, writes them first (its exceptions are the caller's).
        """
        if not logs:
            return
        try:
            if self.logger is not None:
                self._write(state, logs)
        finally:
            tee_flat(logs, attributes=self.attributes, loop=self.loop)

    def _write(self, state: Any, logs: Mapping[str, Any]) -> None:
        step = getattr(state, "global_step", None)
        extra: dict[str, Any] = {}
        if self.attributes is not None and isinstance(self.logger, JsonlLogger):
            extra["attributes"] = self.attributes  # the lines carry what the points carry
        self.logger.log_metrics(dict(logs), step if isinstance(step, int) else 0, **extra)

    def __getattr__(self, name: str) -> Callable[..., None]:
        # Every other TrainerCallback event (on_step_end, on_train_begin, ...) does nothing.
        if name.startswith("on_"):
            return _no_event
        raise AttributeError(name)


def _no_event(*args: Any, **kwargs: Any) -> None:
    return None


class LightningTeeMixin:
    """Put before a Lightning logger class so its ``log_metrics`` calls are teed.

    ``class TeedTensorBoard(LightningTeeMixin, TensorBoardLogger): pass``; what a
    ``LightningModule`` logs with ``self.log``/``self.log_dict`` reaches the
    logger's ``log_metrics(metrics, step=None)``, which then also tees.
    """

    tee_attributes: Attributes = None
    """OpenTelemetry attributes put on every teed point (set on the class or instance)."""
    tee_loop: str | None = None
    """The training loop shared keys are routed by (``None``: ``METRIC_CATALOG_LOOP``)."""

    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> Any:
        """The logger's own ``log_metrics``, then the tee."""
        try:
            parent: Any = super()
            return parent.log_metrics(metrics, step)
        finally:
            tee_flat(metrics, attributes=self.tee_attributes, loop=self.tee_loop)


def tee_summary_writer(writer: _W, *, attributes: Attributes = None, loop: str | None = None) -> _W:
    """Make a TensorBoard ``SummaryWriter``'s ``add_scalar`` tee too; return the same writer.

    ``tee_summary_writer(get_tensorboard_writer())``: from then on each
    ``add_scalar(tag, scalar_value, global_step=None, walltime=None, ...)`` calls
    the writer's own method first, then tees ``{tag: scalar_value}`` as a flat
    key (:func:`tee_flat`: ``timers/forward-backward-time`` splits at the longest
    declared prefix, ``lm loss`` is teed bare). The method is replaced on the
    instance, not wrapped in another object, so code that checks
    ``isinstance(writer, SummaryWriter)`` (Megatron-LM's ``Timers.write``) or holds
    the writer in a global keeps working. The tag is teed as given, which is what
    torch's ``SummaryWriter`` writes (tensorboardX rewrites characters outside
    ``[-/\\w.]`` in its file, not in the tee). Teeing a writer twice tees once.
    """
    inner = getattr(writer, "add_scalar", None)
    if not callable(inner):
        msg = (
            "tee_summary_writer needs a writer with an add_scalar method, "
            f"got {type(writer).__name__}"
        )
        raise TypeError(msg)
    if getattr(inner, _TEED_MARK, False):
        return writer

    def add_scalar(tag: str, scalar_value: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return inner(tag, scalar_value, *args, **kwargs)
        finally:
            tee_flat({tag: scalar_value}, attributes=attributes, loop=loop)

    setattr(add_scalar, _TEED_MARK, True)
    writer.add_scalar = add_scalar  # type: ignore[attr-defined]
    return writer
