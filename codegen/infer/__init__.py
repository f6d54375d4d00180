"""Draft catalog rows from what a team already logs: the engine behind ``metric-catalog infer``.

Runs are read through live-check's ingesters (:func:`codegen.runs.ingest.read_source`),
so every format live-check reads works here too. Keys a teed row already
declares (matched with live-check's :class:`~codegen.catalog.matching.KeyMatcher`)
are left alone; for the rest :func:`infer` proposes rows:

* **families**: keys of one shape whose segments (split on ``/``) differ in one
  place become a key family with a placeholder bound to a new attribute: an enum
  of the seen values (at most :data:`MAX_ENUM_VALUES`), else ``max_cardinality``.
  A segment becomes a placeholder only where it looks like a label and not like
  the name of another metric: statistics (``mean``, ``max``...), a context that
  fixes the unit (``timing_s/{stage}``), more than :data:`MAX_ENUM_VALUES`
  values, or values holding digits. Keys that stand alone stay literal rows.
* **units** from the whole key and its values together (:mod:`.units`): the key's
  words (``/``, ``_``, ``-``, camelCase), its subject read from the last word back, then
  its context, a unit written out after the name (``(s)``, ``(%)``) first; the values
  confirm, veto or decide (a share lies in [0, 1], a percentage in [0, 100], a
  duration is never negative; a ``pct`` or ``mfu`` in [0, 1] is a share, past 1 a
  percentage; siblings summing to 1 in every record are shares of one whole).
  **Kinds** from the values: a running total (non-decreasing in every stream) is a
  cumulative counter when the schema has ``temporality``, else a gauge with a comment;
  per-step integer counts are counters; the rest gauges. A family only over keys
  whose units and values agree;
* **step axes and loops** (:mod:`.loops`): a key whose last segment is a step
  (``train/step``, ``global_step``), or the run's own step metric (W&B's
  ``define_metric(step_metric=...)``), with whole, growing values is its loop's
  ``step_keys`` entry, never a row; a run whose records name no loop is of the loop
  its step axes make it;
* **presence** over the runs of the key's loops, each step read on its step axis:
  ``required`` when every step of its axis has it, ``every`` when it comes every N
  steps (or a configuration value that says so), ``conditionally_required`` otherwise;
  the loops become ``emitted_by`` (and are declared under ``loops:`` when new). A key
  whose values give it another unit in another run is a **scale clash**: a finding of
  its own, and one row per loop where the loops tell the runs apart;
* **names** ``rl.<prefix>.<key>`` cleaned to pass the naming lints (no unit or
  type words, no reserved suffixes), unique against the catalog;
* **owners**: one file per prefix (per first key segment for keys logged without one).

Descriptions are ``TODO: ...``: ``validate`` accepts them and ``lint`` refuses
them (``DESCRIPTION_TODO``), so a draft cannot be committed half-written.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..catalog.model import Catalog

# Importable from here as before the split; each name's home (its ``__all__``) is the
# module that defines it.
from .draft import TODO as TODO
from .draft import Draft as Draft
from .draft import DraftAttribute as DraftAttribute
from .draft import DraftFile as DraftFile
from .draft import DraftRow as DraftRow
from .draft import iter_texts as iter_texts
from .draft import render as render
from .observe import MAX_KEYS as MAX_KEYS
from .observe import Observations as Observations
from .observe import observe as observe
from .propose import MAX_ENUM_VALUES as MAX_ENUM_VALUES
from .propose import propose as propose
from .propose import single_file as single_file

__all__ = ["infer"]


def infer(
    runs: Sequence[Sequence[str]], catalog: Catalog, *, input_format: str | None = None
) -> Draft:
    """Read ``runs`` and propose rows for every key ``catalog`` does not declare.

    Raises:
        OSError: An input cannot be read.
        ValueError: ``input_format`` is not a registered format.
    """
    return propose(observe(runs, catalog, input_format=input_format), catalog)
