"""Every diagnostic code metric-catalog reports, in one table: :data:`CODES`.

A code is stable: CI, editors and scripts may match on it. Each :class:`Code`
says where it comes from (the stage), its level, what it means and the fix.
The codes of the lint rules (:data:`codegen.catalog.lints.LINTS`), the diff rules
(:data:`codegen.diff.RULES`), live-check's finding kinds
(:data:`codegen.live_check.findings.FINDING_KIND_TABLE`, upper-cased) and the Weaver
stage (:data:`codegen.weaver.rules.WEAVER_CODES`) are declared once,
next to their logic, and read from there (live-check's fixes are kept here);
every other code is declared below. ``tests/catalog/test_codes.py`` scans the code
base and checks that every code it can emit is in the table and that the
table holds no code nothing emits.

:func:`reference_page` renders the table as the docs site's "Diagnostics
reference" page (``python -m codegen.codes --write``, run by ``make generate``;
``--check`` fails when the page is stale).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .catalog.annotations import MAX_DEPTH, MAX_NODES, MAX_TEXT
from .catalog.diagnostics import Severity
from .safe_fs import read_regular

__all__ = [
    "CODES",
    "LIVE_CHECK_LEVEL",
    "REFERENCE_PAGE",
    "STAGES",
    "Code",
    "main",
    "reference_page",
]

LIVE_CHECK_LEVEL: Final = "warning; error when named by --fail-on"
"""The level of a live-check finding."""


@dataclass(frozen=True, slots=True)
class Code:
    """One diagnostic code: where it comes from, its level, what it means and the fix."""

    code: str
    stage: str
    """Which step reports it (a key of :data:`STAGES`)."""
    level: str
    """``error`` (the command fails), ``warning``, or :data:`LIVE_CHECK_LEVEL`."""
    meaning: str
    fix: str


STAGES: Final[dict[str, str]] = {
    "load": "reading a catalog file (every command that reads the catalog)",
    "schema": "checking a file against the catalog schema",
    "build": "building the rows of one file",
    "catalog": "checks across rows and files",
    "lint": "style and naming lints (`lint`, `check`, `generate`; silence with `no_lint`)",
    "generate": "rendering the outputs (`generate`, `check`)",
    "diff": "breaking changes against a baseline (`diff`)",
    "live-check": "comparing a run's log with the catalog (`live-check`)",
    "scan": "comparing what the source code logs with the catalog, statically (`scan`)",
    "weaver": (
        "reading, checking and writing OpenTelemetry Weaver registries (`export weaver`, "
        "`import weaver`, `diff --against` a registry)"
    ),
}
"""Every stage, in pipeline order, and what it is."""

_E: Final = Severity.ERROR.value
_W: Final = Severity.WARNING.value

# (code, stage, level, meaning, fix) of every code not declared by a rule table.
_DECLARED: Final[tuple[tuple[str, str, str, str, str], ...]] = (
    # --- load ---
    (
        "FILE_NAME",
        "load",
        _E,
        "The file's path holds a control character (a line break, a C0/C1 or bidi control).",
        "Rename the file (and its folders) without it; the message shows it as an escape.",
    ),
    (
        "FILE_UNREADABLE",
        "load",
        _E,
        "The file cannot be read.",
        "Check the path and its permissions.",
    ),
    (
        "FILE_TOO_LARGE",
        "load",
        _E,
        "The file is larger than a catalog file may be.",
        "Split it into files per owner.",
    ),
    (
        "BYTE_ORDER_MARK",
        "load",
        _E,
        "The file starts with a byte-order mark.",
        "Save it as UTF-8 without BOM.",
    ),
    ("NOT_UTF8", "load", _E, "The file is not valid UTF-8.", "Save it as UTF-8."),
    (
        "EMPTY_FILE",
        "load",
        _E,
        "The file holds no YAML document (only comments, blank lines or `---`).",
        "Write the file's header and rows, or remove it.",
    ),
    (
        "YAML_SYNTAX",
        "load",
        _E,
        "The file is not valid YAML.",
        "Fix the syntax at the position shown (the message names the likely cause).",
    ),
    (
        "MULTIPLE_DOCUMENTS",
        "load",
        _E,
        "The file holds more than one YAML document (`---`).",
        "Keep one document per catalog file.",
    ),
    (
        "TOP_LEVEL_NOT_MAPPING",
        "load",
        _E,
        "The file's top level is not a mapping.",
        "Start the file with `owner:`, `module:` and the other header fields.",
    ),
    ("TOO_DEEP", "load", _E, "Nesting is deeper than a catalog needs.", "Keep rows flat mappings."),
    (
        "FORBIDDEN_TAG",
        "load",
        _E,
        "A YAML tag (`!!python/...`, `!custom`) is used.",
        "Remove it; values are plain strings, lists and mappings.",
    ),
    (
        "YAML_ANCHOR",
        "load",
        _E,
        "A YAML anchor (`&name`) is used.",
        "Write the values out in full.",
    ),
    ("YAML_ALIAS", "load", _E, "A YAML alias (`*name`) is used.", "Write the value out in full."),
    ("YAML_MERGE_KEY", "load", _E, "A merge key (`<<`) is used.", "Write the fields out in full."),
    ("DUPLICATE_KEY", "load", _E, "A mapping has the same key twice.", "Keep one of them."),
    (
        "NON_STRING_KEY",
        "load",
        _E,
        "A mapping key is not a string (a list or mapping).",
        "Use a plain field name.",
    ),
    (
        "IMPLICIT_NON_STRING",
        "schema",
        _E,
        "YAML reads an unquoted value (or key) as a number, boolean, null or date, not a string.",
        'Quote it, e.g. `unit: "1"`.',
    ),
    # --- schema ---
    ("MISSING_FIELD", "schema", _E, "A required field is missing.", "Add it."),
    (
        "UNKNOWN_FIELD",
        "schema",
        _E,
        "A field the schema does not know (often a typo).",
        "Rename it as suggested or remove it.",
    ),
    (
        "WRONG_TYPE",
        "schema",
        _E,
        "A value has the wrong type (a list where a string goes).",
        "Write a value of the type named.",
    ),
    (
        "INVALID_VALUE",
        "schema",
        _E,
        "A value is not one of the allowed ones, is empty, too long or repeated.",
        "Write one of the values listed.",
    ),
    (
        "INVALID_FORMAT",
        "schema",
        _E,
        "A value does not have the required form (a name, a unit, a version).",
        "Write it in the form the message shows.",
    ),
    ("SCHEMA_VIOLATION", "schema", _E, "Any other schema rule is broken.", "Follow the message."),
    # --- build ---
    (
        "INVALID_NAME",
        "build",
        _E,
        "A name cannot be used (it would not make a valid identifier).",
        "Rename it as the message says.",
    ),
    (
        "PREFIX_AND_PREFIXES",
        "build",
        _E,
        "Both `prefix` and `prefixes` are set.",
        "Keep one; `prefixes` lists every prefix, the first included.",
    ),
    (
        "PLACEHOLDER_ADJACENT",
        "build",
        _E,
        "Two placeholders touch, so a logged key cannot say where one value ends.",
        "Separate them with literal text, e.g. `/`.",
    ),
    (
        "PLACEHOLDER_IN_PREFIX_AND_KEY",
        "build",
        _E,
        "A prefix and the logger key capture the same attribute, which could get two values.",
        "Keep the placeholder in one of them (a key may repeat it: both places must match).",
    ),
    (
        "PLACEHOLDER_NOT_REQUIRED",
        "build",
        _E,
        "A placeholder's attribute is not `required`, though every key carries it.",
        "Write `requirement_level: required` or leave it out.",
    ),
    ("DUPLICATE_ATTRIBUTE_REF", "build", _E, "A row lists an attribute twice.", "Keep one entry."),
    ("DUPLICATE_ATTRIBUTE_VALUE", "build", _E, "An enum lists a value twice.", "Keep one entry."),
    (
        "ATTRIBUTE_VALUE_TYPE",
        "build",
        _E,
        "An enum value does not fit the attribute's type.",
        "Write a value of that type, or change the type.",
    ),
    (
        "ATTRIBUTE_DOMAIN",
        "build",
        _E,
        'An attribute has both `values` and `max_cardinality` (without `open: "true"`), or '
        "neither; `open` without both; or `spans_segments` or `examples` on an attribute "
        "that is not an open string.",
        "List its values (an enum) or bound an open set with `max_cardinality`; drop the "
        "field an enum or a non-string attribute does not take.",
    ),
    (
        "CONDITION_MISSING",
        "build",
        _E,
        "A `conditionally_required` row has no `condition`.",
        "Say when it is logged, or use `required` or `recommended`.",
    ),
    (
        "CONDITION_INVALID",
        "build",
        _E,
        "A `condition` over `config.<path>` uses something the expression language forbids.",
        "Use config.<path>, literals, comparisons and and/or/not only, or write prose.",
    ),
    (
        "CONDITION_UNUSED",
        "build",
        _E,
        "A row has a `condition` but is not `conditionally_required`.",
        "Set `requirement_level: conditionally_required` or drop the condition.",
    ),
    (
        "SCHEDULE_WITHOUT_EVERY",
        "build",
        _E,
        "A row has `phase` or `at_last_step` but no `every` (they shape a periodic schedule).",
        "Add the period (`every`), or drop the field.",
    ),
    (
        "TEMPORALITY_NOT_COUNTER",
        "build",
        _E,
        "A row that is not a counter says `temporality: cumulative` (a running total).",
        "Declare `kind: counter`, or drop `temporality` (a gauge shows the total as logged).",
    ),
    (
        "INVALID_RANGE",
        "build",
        _E,
        "A row's `range` is not a range: a bound that is no finite number (or is none once "
        "scaled to the exported unit), two bounds on one side (`min` and `above`), bounds no "
        "value fits between, or a fractional bound on integer values.",
        'Quote numbers (`min: "0"`), keep one bound per side, and order them.',
    ),
    # --- catalog ---
    (
        "SUM_OF_UNKNOWN",
        "catalog",
        _E,
        "A row's `sum_of` names a series no row declares, or the row itself.",
        "List the declared series whose values add up to the row's.",
    ),
    (
        "DUPLICATE_NAME",
        "catalog",
        _E,
        "Two rows declare the same series name (ignoring case).",
        "Rename one, or remove the copy.",
    ),
    (
        "DUPLICATE_REGISTRY_KEY",
        "catalog",
        _E,
        "Two rows get the same runtime registry key.",
        "Rename one of them.",
    ),
    (
        "DUPLICATE_CONSTANT",
        "catalog",
        _E,
        "Two rows of one module would generate the same Python constant.",
        "Rename one of them.",
    ),
    (
        "DUPLICATE_PROMETHEUS_NAME",
        "catalog",
        _E,
        "Two rows export the same Prometheus name.",
        "Rename one of them.",
    ),
    (
        "DUPLICATE_LOGGER_KEY",
        "catalog",
        _E,
        "Two teed rows claim the same logger key under the same prefix.",
        "Give one another key or prefix.",
    ),
    (
        "DUPLICATE_MODULE",
        "catalog",
        _E,
        "Two files generate the same module.",
        "Give one file another `module` name.",
    ),
    (
        "DUPLICATE_ATTRIBUTE",
        "catalog",
        _E,
        "An attribute is declared twice.",
        "Declare it once (common attributes belong in `catalog/attributes.yaml`).",
    ),
    (
        "DUPLICATE_ATTRIBUTE_LABEL",
        "catalog",
        _E,
        "Two attributes become the same Prometheus label.",
        "Rename one of them.",
    ),
    ("DUPLICATE_LOOP", "catalog", _E, "A loop is declared twice.", "Keep one declaration."),
    (
        "DUPLICATE_BOOKKEEPING_KEY",
        "catalog",
        _E,
        "A bookkeeping key (or pattern) is declared twice.",
        "Keep one declaration with its reason.",
    ),
    (
        "STEP_KEY_DECLARED",
        "catalog",
        _E,
        "A loop's step key (step_keys) is also a teed row's logged key.",
        "Drop the row: the loop declares the key as its step.",
    ),
    (
        "BOOKKEEPING_KEY_DECLARED",
        "catalog",
        _E,
        "A key declared as bookkeeping (no metric) is also a teed row's logged key.",
        "Drop the bookkeeping entry, or the row: a key is a metric or bookkeeping, not both.",
    ),
    (
        "KEY_PATTERN_OVERLAP",
        "catalog",
        _E,
        "Two rows' logger keys could match the same logged key.",
        "Make the patterns disjoint (a literal part, a narrower attribute).",
    ),
    (
        "NAME_IS_NAMESPACE",
        "catalog",
        _W,
        "A series name is also the namespace of another series.",
        "Rename it (e.g. add `.value`) so names form a tree.",
    ),
    (
        "UNKNOWN_ATTRIBUTE",
        "catalog",
        _E,
        "A row lists an attribute no file declares.",
        "Declare it, or fix the name as suggested.",
    ),
    (
        "UNKNOWN_LOOP",
        "catalog",
        _E,
        "`emitted_by` names a loop no file declares.",
        "Declare it under `loops:`, or fix the name.",
    ),
    (
        "PLACEHOLDER_UNBOUND",
        "catalog",
        _E,
        "A placeholder names an attribute the row does not list.",
        "List the attribute in the row's `attributes`.",
    ),
    (
        "PLACEHOLDER_TYPE",
        "catalog",
        _E,
        "A placeholder captures a `double` or `bool` attribute.",
        "Use a string or int attribute, or drop the placeholder.",
    ),
    (
        "ANNOTATIONS_INVALID",
        "catalog",
        _E,
        "A row's or attribute's `annotations` is no mapping, uses the key `metric_catalog`, "
        f"nests deeper than {MAX_DEPTH} levels, holds over {MAX_NODES} nodes or a string over "
        f"{MAX_TEXT} characters, or a NaN, or sets `code_generation.metric_value_type`.",
        "Make it a small mapping of YAML data; leave those two keys to export.",
    ),
    (
        "REPLACED_BY_SELF",
        "catalog",
        _E,
        "A row names itself in `replaced_by`.",
        "Name the series that replaces it.",
    ),
    (
        "REPLACED_BY_UNKNOWN",
        "catalog",
        _E,
        "`replaced_by` names a series no row declares, close to the name of one that does.",
        "Fix the name (the message names the close one) or add the series.",
    ),
    (
        "REPLACED_BY_EXTERNAL",
        "catalog",
        _W,
        "`replaced_by` names a series outside the catalog (no declared name is close to it).",
        "Nothing, when the replacement lives in another catalog or registry; else declare it.",
    ),
    (
        "DERIVE_CAPTURED",
        "catalog",
        _E,
        "An attribute is both captured by a placeholder and derived.",
        "Drop the placeholder or the `derive`.",
    ),
    (
        "DERIVE_SOURCE_UNKNOWN",
        "catalog",
        _E,
        "A derivation's source is not an attribute of the row.",
        "Derive from an attribute the row lists.",
    ),
    (
        "DERIVE_SOURCE_NOT_CAPTURED",
        "catalog",
        _E,
        "A derivation's source is never captured, so the tee has nothing to derive from.",
        "Derive from an attribute a placeholder captures.",
    ),
    (
        "DERIVE_CYCLE",
        "catalog",
        _E,
        "Derivations form a loop.",
        "Derive from an attribute a placeholder captures.",
    ),
    (
        "CONDITION_ATTRIBUTE",
        "catalog",
        _E,
        "A `condition` names an attribute (`{rl.role}`) the row's key does not capture, one "
        "without an enum, several, or one for whose values the condition is no expression.",
        "Name the one enum attribute a placeholder of the row captures, in an expression "
        "that holds for each value.",
    ),
    (
        "ATTRIBUTE_SUBSET",
        "catalog",
        _E,
        "A row's attribute `values` name a value the attribute's enum does not list, or "
        "narrow an attribute with no enum or an open one.",
        "Write values of the attribute's enum, or declare the values on the attribute.",
    ),
    (
        "DERIVE_MAP_KEY",
        "catalog",
        _E,
        "A derivation table maps a value its source never takes.",
        "Fix or drop the entry.",
    ),
    (
        "DERIVE_MAP_VALUE",
        "catalog",
        _E,
        "A derivation table maps to a value the attribute does not take.",
        "Write one of the attribute's values.",
    ),
    (
        "DERIVE_NOT_TOTAL",
        "catalog",
        _E,
        "A required derived attribute can be left unset.",
        "Map every source value, add a `default`, or make the attribute recommended.",
    ),
    # --- generate ---
    (
        "GENERATED_NAME_CLASH",
        "generate",
        _E,
        "A module, series or attribute would generate a Python name already taken.",
        "Rename it as the message says.",
    ),
    (
        "TEMPLATE",
        "generate",
        _E,
        "A template failed to render or rendered an unusable file.",
        "Fix the template named in the message.",
    ),
    # --- scan ---
    (
        "SCAN_UNDECLARED",
        "scan",
        _E,
        "The code logs a key no teed row declares (a step-axis or bookkeeping key the "
        "catalog declares is not one).",
        "Add a row (or a key family) for it, or draft rows with `metric-catalog infer`. A key "
        "whose value is a tracker's object (`wandb.Table(...)`, `.Image`, `.Histogram`, "
        "`.Video`...) is told the `value_type` its row needs (`table`, `image`, `histogram`, "
        "`media`).",
    ),
    (
        "SCAN_UNRESOLVED",
        "scan",
        _W,
        "What a logging call logs there cannot be resolved statically: a dict the scanner "
        "cannot follow, reported once where it enters, or a key with a part known only at "
        "run time (`train/{k}`), which credits no row, open families included.",
        "Build the dict from literal keys or constants, declare what crosses a process "
        "boundary in `scan-calls` (`returns`, `field`), mark the line "
        "`# metric-catalog: ignore`, or add `no_lint: [SCAN_UNRESOLVED]` to the rows the key "
        "may stand for.",
    ),
    (
        "SCAN_UNLOGGED",
        "scan",
        _W,
        "No scanned code logs a teed row's key.",
        "Scan the code that logs it (`--no-unlogged` when scanning part of it), add "
        "`no_lint: [SCAN_UNLOGGED]` to a row code outside the scan logs, or remove the row.",
    ),
    (
        "SCAN_SYNTAX",
        "scan",
        _E,
        "A source file does not parse as Python; the other files are still scanned.",
        "Fix the file, or leave it out of the scanned paths.",
    ),
    (
        "SCAN_UNREADABLE",
        "scan",
        _W,
        "A source file cannot be read, or is larger than a source file is scanned.",
        "Check its permissions, or leave it out of the scanned paths.",
    ),
)


# How to fix each live-check finding; what it means is its summary in
# codegen.live_check.findings.FINDING_KIND_TABLE.
_LIVE_CHECK_FIXES: Final[dict[str, str]] = {
    "undeclared": "Declare it in the catalog, or stop logging it.",
    "missing": "Log it, or lower its `requirement_level` or `emitted_by`.",
    "non_scalar": "Log an int or a float.",
    "non_finite": "Log finite values (or skip the step).",
    "counter_decrease": "Log per-step increments, or make the row an up_down_counter or gauge.",
    "out_of_range": "Fix the row's `unit` or `range`, or the value the code logs.",
    "not_integer": (
        "Log whole numbers, or drop `value_type: int`; under `By`, declare the unit the "
        "code logs (`GiBy`, `MBy`)."
    ),
    "unit_suspect": (
        "Declare the unit the code logs (`%` for percent), or the row's `range` "
        "(`range: {}` when it may exceed 1)."
    ),
    "malformed": "Fix the writer of the log.",
    "attribute_value": "Log an allowed value, or add it to the attribute.",
    "attribute_budget": "Bound the attribute, or raise `max_cardinality`/`cardinality_limit`.",
    "unknown_loop": "Declare the loop under `loops:`, or fix the name the run logs.",
    "ambiguous_key": (
        "Name the input's loop (`JsonlLogger(loop=...)`, `METRIC_CATALOG_LOOP` or `--loop`), "
        "or log a signature key of its loop."
    ),
    "ambiguous_rewrite": (
        "Rename the key or a row so only one `--key-rewrite` reading routes, or narrow the rewrite."
    ),
    "new_open_value": (
        "Fix the key the code logs, or refresh the `--baseline-values` report if the value "
        "is right."
    ),
    "loop_conflict": (
        "Name one loop per worker (processes running different loops are a job of "
        "several), check each run on its own, or pass `--loop`."
    ),
    "undeclared_series": "Declare a recorded row for it, or fix the name.",
    "undeclared_attribute": "List the attribute in the row, or stop sending it.",
    "missing_attribute": "Send it, or lower its requirement level.",
    "kind_mismatch": "Export the series with its row's kind, or fix the row's `kind`.",
    "unit_mismatch": "Export the series in its row's unit, or fix the row's `unit`.",
    "prometheus_name": "Export through metric-catalog's OpenTelemetry setup, or fix the name.",
    "overflow": "Bound the attributes, or raise the row's `cardinality_limit`.",
    "missing_identity": "Set the identity attributes (run, worker) before exporting.",
}


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _from_rules() -> list[Code]:
    """The codes the lint, diff, live-check and Weaver tables declare."""
    # Imported here: the table of the other codes needs neither module.
    from . import diff  # noqa: PLC0415
    from .catalog import lints  # noqa: PLC0415
    from .live_check import findings as live_findings  # noqa: PLC0415
    from .weaver.rules import WEAVER_CODES  # noqa: PLC0415

    found = [
        Code(lint.code, "lint", lint.severity.value, lint.summary, lint.fix)
        for lint in lints.LINTS.values()
    ]
    found += [
        Code(
            "UNUSED_NO_LINT",
            "lint",
            lints.META_RULES["UNUSED_NO_LINT"].value,
            "`no_lint` silences a rule that does not fire for that row or attribute.",
            "Remove the entry.",
        ),
        Code(
            "UNKNOWN_LINT",
            "lint",
            lints.META_RULES["UNKNOWN_LINT"].value,
            "`no_lint` names no lint rule for that kind of object.",
            "Fix the name as suggested, or remove the entry.",
        ),
    ]
    found += [
        Code(
            name.upper(),
            "live-check",
            LIVE_CHECK_LEVEL,
            kind.summary,
            _LIVE_CHECK_FIXES.get(name, ""),
        )
        for name, kind in live_findings.FINDING_KIND_TABLE.items()
    ]
    for rule in diff.RULES.values():
        meaning, _, fix = rule.text.partition("; ")
        found.append(
            Code(rule.code, "diff", rule.severity.value, _sentence(meaning), _sentence(fix))
        )
    found += [
        Code(code.code, "weaver", code.severity.value, code.meaning, code.fix)
        for code in WEAVER_CODES.values()
    ]
    return found


def _table() -> tuple[Code, ...]:
    declared = [Code(*row) for row in _DECLARED]
    order = list(STAGES)
    every = sorted([*declared, *_from_rules()], key=lambda c: (order.index(c.stage), c.code))
    return tuple(every)


CODES: Final = _table()
"""Every code, sorted by stage (pipeline order) then code; ``(code, stage)`` is unique."""

REFERENCE_PAGE: Final = Path("docs") / "reference" / "diagnostics.md"
"""Where this repository's docs site keeps the rendered table (root-relative)."""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def reference_page() -> str:
    """The "Diagnostics reference" page (MyST Markdown): one table per stage."""
    lines = [
        "<!-- Generated from codegen/codes.py by `python -m codegen.codes --write`"
        " (make generate). Do not edit. -->",
        "",
        "# Diagnostics reference",
        "",
        "Every code `validate`, `lint`, `check`, `generate`, `diff` and `live-check` report,",
        "by the step that reports it. Codes are stable: scripts and CI may match on them.",
        "An error fails the command; a warning is printed and does not. A lint finding is",
        "silenced on its row or attribute with `no_lint: [CODE]`.",
    ]
    for stage, about in STAGES.items():
        rows = [code for code in CODES if code.stage == stage]
        lines += ["", f"## {stage}", "", f"{_sentence(about)}", ""]
        lines += ["| code | level | what it means | the fix |", "|---|---|---|---|"]
        lines += [f"| `{c.code}` | {c.level} | {_cell(c.meaning)} | {_cell(c.fix)} |" for c in rows]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m codegen.codes [--write | --check] [PATH]``: print, write or check the page."""
    parser = argparse.ArgumentParser(prog="python -m codegen.codes", description=main.__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the page to PATH")
    mode.add_argument("--check", action="store_true", help="exit 1 when PATH is not current")
    parser.add_argument("path", nargs="?", type=Path, default=REFERENCE_PAGE)
    args = parser.parse_args(argv)
    page = reference_page()
    path: Path = args.path
    if args.write:
        if not path.is_file() or read_regular(path).decode("utf-8") != page:
            path.write_text(page, encoding="utf-8")
        return 0
    if args.check:
        current = path.is_file() and read_regular(path).decode("utf-8") == page
        if not current:
            print(f"{path} is stale; run `python -m codegen.codes --write`", file=sys.stderr)
        return 0 if current else 1
    sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
