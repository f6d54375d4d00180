"""Many inputs as one run: several files or globs, merged, judged per worker.

A run with many workers leaves one JSONL file per worker (``run-rank3.jsonl``,
see ``metric_catalog.loggers.JsonlLogger``), or lines carrying a ``"worker"``
field. :func:`check_sources` reads them all, one input at a time through the
ingesters, into one :class:`~codegen.live_check.checker.Checker`:

- the run as a whole decides what was logged: a row is ``missing`` only when
  no worker logged it, ``undeclared`` keys and inactive owners are counted
  over every worker, and the per-row table sums every worker's values;
- the run has one loop: the first declared loop a line names (``"loop"``), and
  a worker naming another (``loop_conflict``) or an undeclared one
  (``unknown_loop``) is reported at its file and line;
- what a single worker's values show (``non_scalar``, ``non_finite``,
  ``counter_decrease``, ``malformed``, and ``attribute_budget``: each process's
  tee has its own budget) is judged on that worker's lines alone, in its own
  order, and reported once per worker at that worker's file and line: a
  counter that goes down in worker 3 is worker 3's finding, and two workers'
  counters are never compared with each other.

Memory stays constant in the length and the number of the logs: inputs are
streamed one line at a time, one after another (one file open at a time);
the run's state is bounded by the catalog, and a worker keeps only its own
findings, its malformed-line count and, once it logs attributes, its budgets.
An input named twice (two spellings, a symlink, a ``**`` glob through a
``..`` link) is read once: inputs are de-duplicated by real path, and the
report says which were skipped.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Unpack

from ..catalog.model import Catalog
from ..runs.ingest import INGESTERS, jsonl, read_source, trainer_state
from ..runs.limits import Limits
from ..runs.records import RunInfo, Source
from ..runs.rewrites import rewrite_prefixes
from .checker import Checker
from .findings import Notice
from .options import CheckKeywords, CheckOptions, resolve_options
from .report import LiveCheckReport

__all__ = [
    "Inputs",
    "LogInputError",
    "check_selection",
    "check_sources",
    "expand_inputs",
    "several_runs_notice",
    "several_states_notice",
    "unique_inputs",
]


class LogInputError(ValueError):
    """A log argument names no readable file (a glob that matches nothing, a folder)."""


@dataclass(slots=True)
class Inputs:
    """The inputs to read, and the ones skipped as the same file as an earlier one."""

    paths: list[str] = field(default_factory=list)
    duplicates: dict[str, str] = field(default_factory=dict)
    """A skipped spelling -> the kept spelling of the same file (by real path)."""


def unique_inputs(paths: Iterable[str]) -> Inputs:
    """``paths`` without the ones naming the same file as an earlier one (by real path)."""
    out = Inputs()
    seen: dict[str, str] = {}
    for path in paths:
        real = os.path.realpath(path)
        kept = seen.get(real)
        if kept is None:
            seen[real] = path
            out.paths.append(path)
        elif kept != path:
            out.duplicates[path] = kept
    return out


def expand_inputs(patterns: Sequence[str], *, folders: bool = False) -> Inputs:
    """The files ``patterns`` name: globs expanded (sorted), plain paths kept, one per file.

    ``folders`` accepts any folder as an input; without it only a folder an
    ingester recognises (an MLflow run folder) is one.

    Raises:
        LogInputError: A glob matches no file, or a path is a folder; the
            message names it and says what to pass.
    """
    found: list[str] = []
    for pattern in patterns:
        if glob.has_magic(pattern):
            matches = sorted(
                m
                for m in glob.iglob(pattern, recursive=True)
                if os.path.isfile(m) or (os.path.isdir(m) and (folders or _run_folder(m)))
            )
            if not matches:
                msg = (
                    f"{pattern!r} matches no file; pass the JSONL files the run's workers "
                    "wrote, e.g. 'logs/run-rank*.jsonl' (quoted, so the shell leaves it alone)"
                )
                raise LogInputError(msg)
            found.extend(matches)
        elif os.path.isdir(pattern) and not (folders or _run_folder(pattern)):
            msg = f"{pattern!r} is a folder; pass its JSONL files, e.g. '{pattern}/*.jsonl'"
            raise LogInputError(msg)
        else:
            found.append(pattern)
    return unique_inputs(found)


def _run_folder(path: str) -> bool:
    """Whether an ingester reads the folder ``path`` as one input (an MLflow run folder)."""
    return any(
        ingester.detect(path, b"")
        for name, ingester in INGESTERS.items()
        if name != jsonl.INGESTER_NAME  # the default: it accepts anything
    )


def _source(paths: Sequence[str], workers: int) -> str:
    if len(paths) == 1:
        return paths[0] if workers <= 1 else f"{paths[0]} ({workers} workers)"
    shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
    return f"{len(paths)} files, {workers} worker(s): {shown}"


def _duplicates_notice(duplicates: dict[str, str]) -> Notice:
    shown = ", ".join(f"{dup} (= {kept})" for dup, kept in list(duplicates.items())[:3])
    more = ", ..." if len(duplicates) > 3 else ""
    return Notice(
        "duplicate_input",
        f"{len(duplicates)} input(s) named a file already read (the same real path) and were "
        f"read once: {shown}{more}; a '**' glob through a symlink such as '..' reaches the "
        "same files again",
    )


_RUNS_SHOWN: Final = 3


def _run_label(run: RunInfo) -> str:
    return f"{run.name!r} ({run.run_id})" if run.name else repr(run.run_id)


def several_runs_notice(inputs: Sequence[Source]) -> Notice | None:
    """Information when the inputs held more than one run (by id): how they were judged,
    and how to judge one alone.

    A W&B run resumed into a second folder keeps its id: it is one run.
    """
    runs: dict[tuple[str | None, str], RunInfo] = {}
    for source in inputs:
        for run in source.runs:
            runs.setdefault((source.format, run.run_id), run)
    if len(runs) < 2:
        return None
    found = list(runs.values())
    shown = ", ".join(_run_label(run) for run in found[:_RUNS_SHOWN])
    more = f", and {len(found) - _RUNS_SHOWN} more" if len(found) > _RUNS_SHOWN else ""
    return Notice(
        "several_runs",
        f"{len(found)} runs were read ({shown}{more}) and judged together as one run: a row "
        "is missing only when none of them logged it, while values and running totals are "
        "judged per run (per folder of event files for TensorBoard: a job's ranks, or its "
        "separate runs). To judge one run alone, pass --run with its id or name "
        f"(--run {found[0].run_id})",
    )


def several_states_notice(inputs: Sequence[Source]) -> Notice | None:
    """Information when several ``trainer_state.json`` of one Trainer output folder were
    read: each holds the history of those before it, so their values are counted again."""
    folders: dict[str, list[str]] = {}
    for source in inputs:
        if source.format == trainer_state.INGESTER_NAME:
            folder = trainer_state.output_folder(source.path)
            if folder is not None:
                folders.setdefault(folder, []).append(source.path)
    repeated = {folder: paths for folder, paths in folders.items() if len(paths) > 1}
    if not repeated:
        return None
    folder, paths = next(iter(repeated.items()))
    return Notice(
        "several_states",
        f"{len(paths)} {trainer_state.FILE_NAME} files of the Trainer output folder {folder} "
        "were read: each checkpoint's holds the log history of those before it, so the "
        "values they share are counted once per file (findings and counts, not presence); "
        f"pass the folder ({folder}), which reads its latest state, or the last one alone",
    )


def check_selection(select: Sequence[str], inputs: Sequence[Source]) -> None:
    """Refuse a ``--run`` that selected no run of the inputs, naming the runs they hold.

    Raises:
        LogInputError: No input read a run ``select`` names.
    """
    if not select or any(source.runs for source in inputs):
        return
    left = [run for source in inputs for run in source.unselected]
    wanted = ", ".join(repr(name) for name in select)
    if not left:
        msg = (
            f"--run {wanted}: the inputs hold no runs to choose from (--run selects runs of "
            "an MLflow store, a W&B folder or a TensorBoard log folder)"
        )
        raise LogInputError(msg)
    shown = ", ".join(_run_label(run) for run in left[:10])
    more = f", and {len(left) - 10} more" if len(left) > 10 else ""
    msg = f"--run {wanted} names none of the runs read: {shown}{more}; pass a run's id or name"
    raise LogInputError(msg)


def check_sources(
    paths: Iterable[str],
    catalog: Catalog,
    options: CheckOptions | None = None,
    *,
    limits: Limits,
    duplicates: dict[str, str] | None = None,
    **keywords: Unpack[CheckKeywords],
) -> LiveCheckReport:
    """Check the inputs at ``paths`` (already expanded) together, per worker.

    ``options`` (:class:`~.options.CheckOptions`, or its fields as keywords):
    ``run_config`` is the run's configuration for inputs that do not log it;
    ``runs`` reads only the runs of store and folder inputs that one of them names;
    ``key_prefix_rewrites`` rewrite each key's prefix as read (see :mod:`codegen.runs.rewrites`).

    Raises:
        OSError: An input cannot be read; ``filename`` names it.
        ValueError: ``input_format`` is not a registered format.
        LogInputError: ``runs`` named no run of the inputs.
        TypeError: Both ``options`` and keywords were given.
    """
    options = resolve_options(options, keywords)
    runs, key_prefix_rewrites = options.runs, options.key_prefix_rewrites
    inputs = unique_inputs(paths)
    skipped = dict(duplicates or {}) | inputs.duplicates
    ordered = inputs.paths
    checker = Checker(catalog, _source(ordered, len(ordered)), options, limits=limits, multi=True)
    checker.run_config = options.run_config
    checker.report.key_prefix_rewrites = key_prefix_rewrites
    lines = 0
    for path in ordered:
        source = Source(path, select=runs)
        items = read_source(source, limits, options.input_format)
        for item in rewrite_prefixes(items, key_prefix_rewrites):
            checker.take(item)
        lines += source.lines
        checker.report.inputs.append(source)
    checker.report.lines = lines
    check_selection(runs, checker.report.inputs)
    checker.report.selected_runs = runs
    for notice in (
        several_runs_notice(checker.report.inputs),
        several_states_notice(checker.report.inputs),
    ):
        if notice is not None:
            checker.report.notices.append(notice)
    report = checker.finish()
    report.source = _source(ordered, checker.worker_count())
    report.skipped_inputs = sorted(skipped)
    if skipped:
        report.notices.append(_duplicates_notice(skipped))
    return report
