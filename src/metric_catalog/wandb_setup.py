"""Declare a loop's metrics to a W&B run, from the catalog: ``run.define_metric`` per row.

The generator writes ``<package>/wandb_metrics.py`` with one tuple of
:class:`WandbMetric` per training loop and a ``define_<loop>(run)`` function each
(``define_loop(run, "grpo_sync")`` by name). Call it once, after ``wandb.init``::

    from myrl.telemetry.generated import wandb_metrics

    run = wandb.init(project="myrl")
    wandb_metrics.define_grpo_sync(run)

Each row becomes ``run.define_metric(key, step_metric=..., summary=..., goal=...)``
(``goal`` only where the installed wandb takes it; newer ones read it from the summary):
its logged key (a key family as a glob, ``timing/setup/*``), the loop's step axis as
the x axis, the run summary and goal from the row's ``goal`` (``maximize``: ``max``;
``minimize``: ``min``), and deprecated rows hidden. Nothing here imports ``wandb``:
``run`` is whatever has ``define_metric`` (a run, or the ``wandb`` module). A call W&B
refuses, or a ``run`` without a usable ``define_metric`` (``None``), is warned once and
skipped; it never raises into training code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from metric_catalog._warn import describe_error, safe_repr, type_name, warn_once

__all__ = ["WandbMetric", "define_metrics"]


@dataclass(frozen=True, slots=True)
class WandbMetric:
    """One ``define_metric`` call: a logged key or glob and how W&B should treat it."""

    name: str
    """The key as the run logs it (``train/reward``), or a glob ending in ``*``."""
    step_metric: str | None = None
    """The x axis key; ``None``: the loop's training-step axis (see :func:`define_metrics`)."""
    summary: str | None = None
    """``min`` or ``max`` (from the row's goal); ``None``: W&B's default (the last value)."""
    goal: str | None = None
    """``minimize`` or ``maximize``; ``None``: not declared."""
    hidden: bool = False
    """A deprecated row: defined, but hidden from the run's default charts."""


def define_metrics(run: Any, metrics: Iterable[WandbMetric], *, step_metric: str | None) -> int:
    """``run.define_metric`` for each of ``metrics``; returns how many W&B accepted.

    ``step_metric`` is the key of the loop's training-step axis: a row on that axis
    (``WandbMetric.step_metric`` ``None``) is charted against it; ``None`` keeps W&B's
    own step (``_step``, the ``step=`` the code passes to ``log``). Never raises: a
    ``run`` without a usable ``define_metric`` (``None``, a run already finished), a
    call W&B refuses or an ``metrics`` that fails midway is warned once and skipped.
    """
    define = _define_metric_of(run)
    if define is None:
        return 0
    defined = 0
    try:
        if step_metric:
            # The axis itself is a metric of the run: define it first, so W&B charts against it.
            defined += _define(define, type(run), step_metric, {})
        for metric in metrics:
            options: dict[str, Any] = {}
            axis = metric.step_metric if metric.step_metric is not None else step_metric
            if axis:
                options["step_metric"] = axis
            if metric.summary:
                options["summary"] = metric.summary
            if metric.goal:
                options["goal"] = metric.goal
            if metric.hidden:
                options["hidden"] = True
            defined += _define(define, type(run), metric.name, options)
    except Exception as exc:  # noqa: BLE001 - a caller's metrics or step_metric; never raise
        warn_once(
            ("wandb-define-metrics", type_name(exc)),
            f"W&B metric definitions stopped after {defined}: {describe_error(exc)}; the rest "
            "are charted with W&B's defaults",
        )
    return defined


def _define_metric_of(run: object) -> Callable[..., object] | None:
    """``run.define_metric`` when it is callable; ``None`` (warned once) when it is not."""
    try:
        define: object = getattr(run, "define_metric", None)
    except Exception as exc:  # noqa: BLE001 - a property of the caller's object may raise
        problem = f"reading define_metric raised {describe_error(exc)}"
    else:
        if callable(define):
            return define
        problem = "it has no callable define_metric"
    warn_once(
        ("wandb-no-define-metric", type_name(run)),
        f"W&B metric definitions skipped: the run given is {safe_repr(run)} and {problem}; "
        "pass the run wandb.init returned (or the wandb module)",
    )
    return None


_NO_GOAL: set[int] = set()
"""``id`` of the run types whose ``define_metric`` takes no ``goal`` (wandb >= 0.2x
dropped it; the summary still says which extreme is best)."""


def _define(define: Callable[..., object], kind: type, name: str, options: dict[str, Any]) -> int:
    """One ``define_metric`` call: 1 when W&B took it, 0 (warned once) when it refused."""
    try:
        if "goal" in options and id(kind) in _NO_GOAL:
            options = {k: v for k, v in options.items() if k != "goal"}
        try:
            define(name, **options)
        except TypeError as exc:
            if "goal" not in options or "goal" not in describe_error(exc):
                raise
            # This wandb takes no goal: the summary (min or max) carries it.
            _NO_GOAL.add(id(kind))
            define(name, **{k: v for k, v in options.items() if k != "goal"})
    except Exception as exc:  # noqa: BLE001 - W&B's errors vary by version; never raise
        warn_once(
            ("wandb-define-metric", type_name(exc)),
            f"W&B refused define_metric({safe_repr(name)}): {describe_error(exc)}; "
            "the run charts it with W&B's defaults",
        )
        return 0
    return 1
