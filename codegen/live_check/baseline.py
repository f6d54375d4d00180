"""``--baseline-values``: the values open placeholders took in a baseline run.

An open family (``policy/{rl.loss_name}``, no enum) takes any value, so a misspelt
key it swallows is no finding; the report lists the values each open placeholder
took (``coverage.open_values``). Given a baseline, a previous ``--format json``
report (or its ``coverage.open_values`` alone), each value this run took that the
baseline's run did not is a ``new_open_value`` finding, which ``--fail-on
new_open_value`` gates in CI. A slot the baseline listed as ``capped`` (more values
than it kept) is not judged: a value missing from its list may have been seen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ..safe_fs import read_input
from .findings import Finding
from .report import LiveCheckReport

__all__ = [
    "BASELINE_BYTES",
    "BaselineError",
    "BaselineValues",
    "load_baseline_values",
    "new_open_value_findings",
]

BASELINE_BYTES: Final = 64 * 1024 * 1024
"""Largest baseline file read (a report lists at most 32 values per placeholder)."""

MAX_SHOWN_VALUES: Final = 8
"""New values a finding names; its count has them all."""

BaselineValues = Mapping[tuple[str, str], tuple[frozenset[str], bool]]
"""``(row, attribute) -> (values seen, capped)``: what the baseline's run showed."""


class BaselineError(ValueError):
    """A baseline file that cannot be read or is not a report's ``open_values``."""


def load_baseline_values(
    path: str | Path, *, root: str | Path | None = None
) -> dict[tuple[str, str], tuple[frozenset[str], bool]]:
    """The open placeholder values of the baseline at ``path``: a ``--format json``
    report of live-check, or the ``coverage.open_values`` mapping of one.

    Read through :func:`codegen.safe_fs.read_input`: a regular file only (a FIFO or a
    device is refused, never waited on) and, with ``root`` (the project, for the
    table's ``baseline-values`` key), one that resolves inside it, refused before a
    byte of it is read, so a symlink out of the project never has its content shown.

    Raises:
        BaselineError: The file is unreadable, not a regular file, outside ``root``,
            too large, not JSON, or not of that shape (the message names the file and
            the field).
    """
    where = str(path)
    try:
        data = read_input(path, BASELINE_BYTES, root=root)
    except OSError as exc:
        msg = f"{where}: cannot read the baseline ({exc.strerror or exc}); give a report file"
        raise BaselineError(msg) from None
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as exc:
        msg = f"{where}: the baseline is not JSON ({exc}); give a --format json report"
        raise BaselineError(msg) from None
    values = _open_values(document, where)
    return _slots(values, where)


def _open_values(document: object, where: str) -> Mapping[str, object]:
    """The ``open_values`` mapping of a report, or the document when it is that mapping."""
    if not isinstance(document, dict):
        msg = f"{where}: the baseline is not a JSON object; give a --format json report"
        raise BaselineError(msg)
    coverage = document.get("coverage")
    if coverage is None and "findings" not in document:
        return document  # coverage.open_values alone
    found = coverage.get("open_values") if isinstance(coverage, dict) else None
    if not isinstance(found, dict):
        msg = (
            f"{where}: coverage.open_values is missing or not an object; give a report of "
            "a live-check that lists it (--format json)"
        )
        raise BaselineError(msg)
    return found


def _slots(
    values: Mapping[str, object], where: str
) -> dict[tuple[str, str], tuple[frozenset[str], bool]]:
    """``(row, attribute) -> (seen, capped)`` of an ``open_values`` mapping."""
    out: dict[tuple[str, str], tuple[frozenset[str], bool]] = {}
    for row, attributes in values.items():
        if not isinstance(attributes, dict):
            msg = f"{where}: open_values[{row!r}] must map attributes to their values"
            raise BaselineError(msg)
        for name, slot in attributes.items():
            field_name = f"open_values[{row!r}][{name!r}]"
            seen = slot.get("seen") if isinstance(slot, dict) else None
            if not isinstance(seen, list) or not all(isinstance(v, str) for v in seen):
                msg = f'{where}: {field_name} must be {{"seen": [strings], "capped": bool}}'
                raise BaselineError(msg)
            out[(row, name)] = (frozenset(seen), slot.get("capped") is True)
    return out


def new_open_value_findings(report: LiveCheckReport, baseline: BaselineValues) -> list[Finding]:
    """One ``new_open_value`` finding per row and open attribute that took values the
    baseline's run did not (placed at the row in the catalog, credited to it)."""
    rows = {summary.row.name: summary.row for summary in report.rows}
    findings: list[Finding] = []
    for row_name, attributes in sorted(report.coverage.open_values.items()):
        row = rows.get(row_name)
        if row is None:
            continue
        for name, slot in sorted(attributes.items()):
            known, capped = baseline.get((row_name, name), (frozenset(), False))
            seen = slot.get("seen") if isinstance(slot, dict) else None
            if capped or not isinstance(seen, list):
                continue  # the baseline kept part of its values: a new one cannot be told
            new = [str(v) for v in seen if str(v) not in known]
            if not new:
                continue
            shown = ", ".join(repr(v) for v in new[:MAX_SHOWN_VALUES])
            more = f" and {len(new) - MAX_SHOWN_VALUES} more" if len(new) > MAX_SHOWN_VALUES else ""
            example = f"{name} took {shown}{more}"
            prefix, key = row.prefix or "", row.logger_key or ""
            findings.append(
                Finding(
                    "new_open_value",
                    prefix,
                    key,
                    row_name,
                    0,
                    None,
                    example,
                    count=len(new),
                    position=row.position,
                )
            )
    return findings
