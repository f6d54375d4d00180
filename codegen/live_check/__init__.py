"""Check a run's logs against the catalog: did the run log what it declares?

live-check is a pipeline of small parts, each behind one seam:

- **ingesters** (:mod:`.ingest`, one module per input format) turn an input
  into :class:`~.records.Record` items (a logging call or a point, with its
  step, prefix, values, attributes, loop, worker and source position) and
  :class:`~.records.Malformed` items (and :class:`~.records.Note` items: information
  such as values of a kind live-check does not judge, which become notices);
- **matching** (:mod:`.matching`) says which teed rows a logged
  ``(prefix, key)`` belongs to and what a key family captured;
- **judges** (:mod:`.judges`, one module per finding family: values,
  counters, attributes and budgets, loops, presence) decide the findings;
- the **checker** (:mod:`.checker`) routes each record to them and keeps
  the statistics (:mod:`.statistics`);
- the **report** (:mod:`.report`, rendered by :mod:`.render`) is text or JSON.

:func:`check_records` is the one entry point over records;
:func:`check_stream`, :func:`check_file` and :func:`check_paths` (many
workers' files, see :mod:`.workers`) read inputs through the ingesters and
call the same checker.

Adding an input format: write one module under ``codegen/runs/ingest/``
with ``detect(path, head)`` and ``read(source, stream, limits)`` (see
:mod:`.ingest.jsonl`), and add it to ``_BUILTIN`` in
``codegen/runs/ingest/__init__.py``. ``--input-format`` lists it, and
detection tries it, with no other change.

Finding kinds (:data:`FINDING_KINDS`; the table :data:`~.findings.FINDING_KIND_TABLE` holds
each one's severity and message):

``undeclared``
    a logged ``(prefix, key)`` that no teed row declares.
``missing``
    a ``required`` teed row that applies to the run and was never logged (see
    :mod:`.judges.presence`).
``non_scalar``
    a teed key logged with a value the tee cannot export (bool, string, list,
    null, object): :func:`metric_catalog.vocabulary.as_scalar` would drop it.
``non_finite``
    a teed key logged as NaN or an infinity.
``counter_decrease``
    a teed counter logged with a negative value (:mod:`.judges.counters`).
``out_of_range``, ``not_integer``
    a finite teed value outside its row's range (declared, or its unit's default),
    or with a fraction where the row declares ``value_type: int`` (:mod:`.judges.ranges`).
``unit_suspect``
    a value above 1 of a row in unit ``1`` with no range whose name says it is a share
    (percent logged under ``1``; :mod:`.judges.shares`).
``attribute_value``, ``attribute_budget``, ``undeclared_attribute``, ``missing_attribute``
    what the tee would drop or fold of a point's attributes
    (:mod:`.judges.attributes`).
``undeclared_series``
    a point line names a series no teed or recorded row declares (by name or
    registry key).
``malformed``
    a line that is not a well-formed record (bad JSON, wrong field types, or
    longer than :data:`MAX_LINE_BYTES`); an input that holds an endless line or
    too many overlong ones is abandoned, and the report names it.
``unknown_loop``, ``loop_conflict``
    a line names an undeclared loop, or another loop than its worker's first
    (:mod:`.judges.loops`; workers running different loops are a job of several).

Presence: which unlogged rows are "missing" is :mod:`.judges.presence`'s
business; the run's loop is :mod:`.judges.loops`'.

Memory is bounded whatever the log holds: one line is held at a time, per-row
state is bounded by the catalog, findings are aggregated per key (count,
first and last occurrence), and the caps of :mod:`.limits` bound the rest
(:data:`MAX_UNDECLARED_KEYS` distinct undeclared pairs, attribute sets per
series up to the series' budget).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import BinaryIO, Unpack

from ..catalog.model import Catalog
from ..runs.ingest import read_source
from ..runs.limits import (
    MAX_FAMILY_KEYS,
    MAX_LINE_BYTES,
    MAX_LOOP_NAMES,
    MAX_MALFORMED_REPORTED,
    MAX_OVERLONG_LINES,
    MAX_REPORTED_FINDINGS,
    MAX_SKIPPED_BYTES,
    MAX_TRACKED_VALUES,
    MAX_UNDECLARED_KEYS,
    MAX_UNINDEXED_ATTEMPTS,
    MAX_WORKERS,
    Limits,
)
from ..runs.records import Malformed, Note, Record, RunConfig, Source
from ..runs.rewrites import rewrite_prefixes
from .checker import Checker
from .findings import FINDING_KINDS, KINDS
from .options import CheckKeywords, CheckOptions, resolve_options
from .report import LiveCheckReport
from .workers import (
    LogInputError,
    check_selection,
    check_sources,
    expand_inputs,
    several_runs_notice,
)

__all__ = [
    "FINDING_KINDS",
    "KINDS",
    "CheckOptions",
    "Limits",
    "LiveCheckReport",
    "LogInputError",
    "Source",
    "check_file",
    "check_paths",
    "check_records",
    "check_stream",
    "current_limits",
    "expand_paths",
]


def current_limits() -> Limits:
    """The caps as this package's constants say now (a test may lower one)."""
    return Limits(
        max_line_bytes=MAX_LINE_BYTES,
        max_overlong_lines=MAX_OVERLONG_LINES,
        max_skipped_bytes=MAX_SKIPPED_BYTES,
        max_undeclared_keys=MAX_UNDECLARED_KEYS,
        max_malformed_reported=MAX_MALFORMED_REPORTED,
        max_loop_names=MAX_LOOP_NAMES,
        max_family_keys=MAX_FAMILY_KEYS,
        max_tracked_values=MAX_TRACKED_VALUES,
        max_reported_findings=MAX_REPORTED_FINDINGS,
        max_workers=MAX_WORKERS,
        max_unindexed_attempts=MAX_UNINDEXED_ATTEMPTS,
    )


def check_records(
    records: Iterable[Record | RunConfig | Malformed | Note],
    catalog: Catalog,
    options: CheckOptions | None = None,
    *,
    source: str = "<records>",
    multi: bool = False,
    **keywords: Unpack[CheckKeywords],
) -> LiveCheckReport:
    """Judge ``records`` (from any ingester) against ``catalog``'s rows as one input.

    ``options`` (:class:`CheckOptions`; or its fields as keywords, as before):
    ``loop`` judges the run as that declared loop instead of the one the
    records name or their keys suggest; ``all_owners`` judges unlogged rows
    of owners that logged nothing too, instead of listing those owners as
    inactive; ``promoted`` names the identity attributes every live point must
    carry; ``key_rewrites`` are ``(from, to)`` literal substring replacements
    applied, in order, to every logged key before it is matched (``("_at_",
    "@")`` undoes verl's MLflow spelling of ``mean@4``); a key only its
    spelling as read matches keeps it. ``lines`` in the report is the last
    line a record came from. ``multi`` positions findings by the record's
    source (many inputs, such as live telemetry from several processes).

    Raises:
        TypeError: Both ``options`` and keywords were given.
    """
    checker = Checker(
        catalog,
        source,
        resolve_options(options, keywords),
        limits=current_limits(),
        multi=multi,
    )
    last = 0
    for item in records:
        checker.take(item)
        last = max(last, item.line)
    checker.report.lines = last
    return checker.finish()


def check_stream(
    stream: BinaryIO,
    catalog: Catalog,
    options: CheckOptions | None = None,
    *,
    source: str = "<stream>",
    **keywords: Unpack[CheckKeywords],
) -> LiveCheckReport:
    """Check a stream (JSONL unless ``input_format`` or its first bytes say otherwise).

    ``options`` (:class:`CheckOptions`; or its fields as keywords, as before):
    ``loop`` judges the run as that declared loop instead of the one the log
    names or its keys suggest. ``all_owners`` judges unlogged rows of owners
    that logged nothing too, instead of listing those owners as inactive.
    ``run_config`` is the run's configuration for an input that does not log
    it (flat JSONL, TensorBoard, MLflow); it wins over a header the log holds.
    ``key_prefix_rewrites`` are ``(from, to)`` rules applied to each key that starts
    with ``from``, before ``key_rewrites`` (see :mod:`codegen.runs.rewrites`).

    Raises:
        ValueError: ``input_format`` is not a registered format.
        TypeError: Both ``options`` and keywords were given.
    """
    options = resolve_options(options, keywords)
    limits = current_limits()
    checker = Checker(catalog, source, options, limits=limits)
    checker.run_config = options.run_config
    read = Source(source, stream)
    prefixes = options.key_prefix_rewrites
    checker.report.key_prefix_rewrites = prefixes
    for item in rewrite_prefixes(read_source(read, limits, options.input_format), prefixes):
        checker.take(item)
    checker.report.lines = read.lines
    checker.report.inputs.append(read)
    return checker.finish()


def check_file(
    path: str,
    catalog: Catalog,
    options: CheckOptions | None = None,
    **keywords: Unpack[CheckKeywords],
) -> LiveCheckReport:
    """Check the log at ``path``; raises :class:`OSError` when it cannot be read.

    ``options``: as for :func:`check_stream`. ``runs`` reads only the runs of
    a store or folder input (MLflow, W&B, TensorBoard) that one of them names
    (an id, a name or a folder); a selection that names none of its runs raises
    :class:`LogInputError` (a :class:`ValueError`) naming the runs it holds.
    """
    options = resolve_options(options, keywords)
    limits = current_limits()
    checker = Checker(catalog, path, options, limits=limits)
    checker.run_config = options.run_config
    read = Source(path, select=options.runs)
    prefixes = options.key_prefix_rewrites
    checker.report.key_prefix_rewrites = prefixes
    for item in rewrite_prefixes(read_source(read, limits, options.input_format), prefixes):
        checker.take(item)
    checker.report.lines = read.lines
    checker.report.inputs.append(read)
    check_selection(options.runs, checker.report.inputs)
    checker.report.selected_runs = options.runs
    several = several_runs_notice(checker.report.inputs)
    if several is not None:
        checker.report.notices.append(several)
    return checker.finish()


def expand_paths(patterns: list[str] | tuple[str, ...]) -> list[str]:
    """The files ``patterns`` name: globs expanded (sorted), plain paths kept, one per file.

    Raises:
        LogInputError: A glob matches no file, or a path is a folder.
    """
    return expand_inputs(patterns).paths


def check_paths(
    paths: Iterable[str],
    catalog: Catalog,
    options: CheckOptions | None = None,
    *,
    duplicates: dict[str, str] | None = None,
    **keywords: Unpack[CheckKeywords],
) -> LiveCheckReport:
    """Check the logs at ``paths`` (already expanded) together, per worker.

    ``options``: as for :func:`check_file`, over all the inputs. A worker is a
    file, or within a file a ``"worker"`` field value; see :mod:`.workers` for
    what is judged per worker and what over the run. ``duplicates`` (skipped
    spelling -> kept one) is named in the report.

    Raises:
        OSError: A file cannot be read; ``filename`` names it.
    """
    return check_sources(
        paths,
        catalog,
        resolve_options(options, keywords),
        limits=current_limits(),
        duplicates=duplicates,
    )
