"""Report renderings for CI: SARIF 2.1.0 (code scanning) and GitHub workflow commands.

Both list a summary first, then each finding once (deduplicated: its count,
first and last position), at most ``max_reported_findings`` of them so a
report over millions of points stays small; what is left out is counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final
from urllib.parse import quote

from ..catalog.diagnostics import Position
from ..safe_text import printable
from .findings import FINDING_KIND_TABLE, FINDING_KINDS, Finding

if TYPE_CHECKING:
    from .report import LiveCheckReport

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "github_escape", "render_github", "render_sarif"]

SARIF_VERSION: Final = "2.1.0"
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
_TOOL: Final = "metric-catalog live-check"
_VERDICT_RULES: Final = {
    "saw_nothing": "The input showed nothing the catalog declares.",
    "min_coverage": "Coverage of the applicable rows is below --min-coverage.",
    "nothing_judged": "A gate read records but could judge no row (undecided loop, only "
    "bookkeeping or undeclared keys).",
}


def _uri(path: str) -> str:
    """A path as a SARIF ``uri-reference`` (relative paths stay relative)."""
    return quote(path, safe="/:._-~")


def _location(position: Position) -> dict[str, object]:
    physical: dict[str, object] = {"artifactLocation": {"uri": _uri(position.path)}}
    if position.line > 0:
        physical["region"] = {"startLine": position.line}
    return {"physicalLocation": physical}


def _last(report: LiveCheckReport, finding: Finding) -> Position | None:
    """Where the last occurrence was, when it is not the first."""
    if finding.count <= 1 or not finding.last_line:
        return None
    path = finding.last_path or report.source
    last = Position(path, finding.last_line, 1)
    return None if last == report.where(finding) else last


def render_sarif(report: LiveCheckReport, fail_on: Iterable[str] = ()) -> str:
    """The report as one SARIF 2.1.0 run: a rule per finding kind, a result per finding."""
    wanted = set(fail_on)
    rule_ids = [*FINDING_KINDS, *_VERDICT_RULES]
    rules: list[dict[str, object]] = [
        {
            "id": kind,
            "shortDescription": {"text": FINDING_KIND_TABLE[kind].summary},
            "defaultConfiguration": {"level": "error" if kind in wanted else "warning"},
        }
        for kind in FINDING_KINDS
    ]
    rules += [
        {"id": rule, "shortDescription": {"text": text}, "defaultConfiguration": {"level": "error"}}
        for rule, text in _VERDICT_RULES.items()
    ]
    results: list[dict[str, object]] = []
    for reason, rule in report.verdict_reasons(wanted):
        results.append(
            {
                "ruleId": rule,
                "ruleIndex": rule_ids.index(rule),
                "level": "error",
                "message": {"text": reason},
                "locations": [_location(Position(report.source))],
            }
        )
    listed = report.listed_findings()
    for finding in listed:
        result: dict[str, object] = {
            "ruleId": finding.kind,
            "ruleIndex": rule_ids.index(finding.kind),
            "level": "error" if finding.kind in wanted else "warning",
            "message": {"text": finding.message(report.hints)},
            "locations": [_location(report.where(finding))],
            "occurrenceCount": finding.count,
            "properties": {
                "prefix": finding.prefix,
                "key": finding.key,
                "series": finding.series,
                "attribute": finding.attribute,
                "firstStep": finding.step,
            },
        }
        last = _last(report, finding)
        if last is not None:
            related = _location(last) | {"id": 1, "message": {"text": "last occurrence"}}
            result["relatedLocations"] = [related]
        results.append(result)
    notes = [note for _, note in report.cap_notes()]
    unlisted = report.unlisted_note()
    if unlisted is not None:
        notes.append(unlisted)
    run: dict[str, object] = {
        "tool": {"driver": {"name": _TOOL, "rules": rules}},
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "note", "message": {"text": note}} for note in notes
                ],
            }
        ],
        "results": results,
        "properties": {"summary": report.summary(wanted), "coverage": report.coverage.to_json()},
    }
    doc = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(doc, indent=2)


def github_escape(text: str, *, prop: bool = False) -> str:
    """Text as a workflow command's message (``prop``: a property value) carries it.

    Other unprintable characters (an escape sequence in a logged key) are shown
    escaped, so an annotation cannot colour or redraw the job's log.
    """
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    text = printable(text)
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render_github(report: LiveCheckReport, fail_on: Iterable[str] = ()) -> str:
    """GitHub workflow commands: a summary notice, then one annotation per finding."""
    wanted = set(fail_on)
    lines = [f"::notice title=live-check::{github_escape(report.summary_text(wanted))}"]
    for reason, rule in report.verdict_reasons(wanted):
        where = github_escape(report.source, prop=True)
        lines.append(f"::error file={where},title={rule}::{github_escape(reason)}")
    listed = report.listed_findings()
    for finding in listed:
        level = "error" if finding.kind in wanted else "warning"
        position = report.where(finding)
        props = [f"file={github_escape(position.path, prop=True)}"]
        if position.line > 0:
            props.append(f"line={position.line}")
        props.append(f"title={finding.kind.upper()}")
        message = finding.message(report.hints)
        last = _last(report, finding)
        if last is not None:
            message += f" (last at {last})"
        lines.append(f"::{level} {','.join(props)}::{github_escape(message)}")
    notes = [note for _, note in report.cap_notes()]
    unlisted = report.unlisted_note()
    if unlisted is not None:
        notes.append(unlisted)
    lines.extend(f"::notice title=live-check::{github_escape(note)}" for note in notes)
    return "\n".join(lines)
