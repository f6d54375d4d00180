"""Style and naming lints over loaded rows, separate from schema errors.

Each rule is a small pure function of one :class:`~codegen.model.MetricRow`
that yields messages (what is wrong, then the fix), registered in :data:`RULES`
under a stable SCREAMING name with a severity and the field it points at. The
rules follow the OpenTelemetry semantic conventions, Prometheus ``promlint``
and Glean's ``glinter`` (see ``anchors-weaver-k8s-prometheus.md``).

A row silences a rule with ``no_lint: [RULE]``. A silenced rule that would not
have fired is reported as ``UNUSED_NO_LINT`` and a name that is no rule as
``UNKNOWN_LINT``, both warnings, so suppressions never go stale.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from .attribute_lints import lint_attributes
from .diagnostics import Diagnostic, Severity
from .model import Catalog, MetricRow

__all__ = [
    "META_RULES",
    "RULES",
    "Rule",
    "lint_catalog",
    "lint_row",
    "rule",
]

Check = Callable[[MetricRow], Iterator[str]]


@dataclass(frozen=True, slots=True)
class Rule:
    """A lint: stable code, severity, the field it reports at, and its check."""

    code: str
    severity: Severity
    field: str
    check: Check

    @property
    def summary(self) -> str:
        """First line of the check's docstring."""
        return (self.check.__doc__ or "").strip().splitlines()[0]


RULES: dict[str, Rule] = {}
"""Every lint rule by code, in registration order."""

META_RULES: Final[dict[str, Severity]] = {
    "UNUSED_NO_LINT": Severity.WARNING,
    "UNKNOWN_LINT": Severity.WARNING,
}
"""Codes about ``no_lint`` itself; they cannot be silenced."""


def rule(code: str, severity: Severity, field: str) -> Callable[[Check], Check]:
    """Register a check in :data:`RULES` under ``code``."""

    def register(check: Check) -> Check:
        if code in RULES or code in META_RULES:
            msg = f"lint rule {code!r} is registered twice"
            raise ValueError(msg)
        RULES[code] = Rule(code, severity, field, check)
        return check

    return register


_TOKEN_SPLIT: Final = re.compile(r"[._]").split
_WORD_FIND: Final = re.compile(r"[a-z0-9]+").findall
_UNIT_SPLIT: Final = re.compile(r"[/.](?![^{]*\})").split
_NAME_RE: Final = re.compile(r"^rl\.[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")
_ANNOTATION_RE: Final = re.compile(r"^\{([^{}]+)\}$")
# Unprefixed UCUM units a metric may use; annotations and "1" are handled apart.
_BASE_UNITS: Final = frozenset({"s", "By", "bit", "Hz", "W", "J", "Cel", "K", "V", "A", "m", "g"})
# Common non-UCUM or prefixed spellings and the base unit to use instead.


def _words(text: str) -> tuple[str, ...]:
    """A table written as one space-separated string (keeps long tables compact)."""
    return tuple(text.split())


_TIME_SPELLINGS: Final = _words(
    "ms us ns msec usec sec secs second seconds min mins minute minutes h hr hrs hour hours "
    "d day days"
)
_BYTE_SPELLINGS: Final = _words(
    "b B byte bytes KB kB KiB MB MiB GB GiB TB TiB KBy kBy MBy GBy TBy KiBy MiBy GiBy TiBy"
)
_UNIT_FIXES: Final[dict[str, str]] = {
    **dict.fromkeys(_TIME_SPELLINGS, "s"),
    **dict.fromkeys(_BYTE_SPELLINGS, "By"),
    **dict.fromkeys(_words("% percent pct ratio ratios fraction"), "1"),
    **dict.fromkeys(_words("bits Kibit Mibit kbit Mbit Gbit"), "bit"),
}
# Name components that spell a unit; the unit belongs in ``unit`` instead. Not
# "min" (minimum) nor single letters other than "s".
_UNIT_WORDS: Final = frozenset(
    _words(
        "ms msec millis millisecond milliseconds s sec secs second seconds us usec "
        "microseconds ns nanoseconds mins minutes hours hrs bytes kb mb gb tb kib mib gib tib "
        "kilobytes megabytes gigabytes mebibytes gibibytes percent pct"
    )
)
_TYPE_WORDS: Final = frozenset({"counter", "gauge", "histogram", "summary"})
_PROMETHEUS_SUFFIXES: Final = ("bucket", "sum", "count", "total")
_DURATION_WORDS: Final = frozenset({"duration", "latency", "elapsed"})
_HISTOGRAM_TIME_WORDS: Final = frozenset({"time", "wait"})
_RATIO_WORDS: Final = frozenset({"ratio", "utilization", "fraction"})
# Words a description may add to the name's words and still say nothing new.
_FILLER: Final = frozenset({"the", "a", "an", "of", "in", "for", "rl", "per", "and", "value"})


# Several rules ask for the same row's words in turn; a small cache spans one row.
@functools.lru_cache(maxsize=256)
def _tokens(name: str) -> tuple[str, ...]:
    """The words of a series name after ``rl.``: split on ``.`` and ``_``, lowercase."""
    body = name.removeprefix("rl.")
    return tuple(token for token in _TOKEN_SPLIT(body.lower()) if token)


@functools.lru_cache(maxsize=256)
def _last_tokens(name: str) -> tuple[str, ...]:
    """The words of the name's last dot component."""
    return tuple(token for token in name.rsplit(".", 1)[-1].lower().split("_") if token)


# Word boundaries inside camelCase: "policyEntropy", "HTTPServer", "gpu2Util".
_CAMEL_BOUNDARY: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _suggest_name(name: str) -> str:
    """The snake_case spelling of a name (``rl.policyEntropy`` -> ``rl.policy_entropy``)."""
    body = _CAMEL_BOUNDARY.sub("_", name.removeprefix("rl.")).lower()
    parts = [re.sub(r"_+", "_", part).strip("_") for part in body.split(".")]
    return "rl." + ".".join(part for part in parts if part)


@functools.lru_cache(maxsize=1024)
def _unit_terms(unit: str) -> tuple[str, ...]:
    """A unit split into its factors (``{token}/s`` -> ``{token}``, ``s``)."""
    return tuple(term for term in _UNIT_SPLIT(unit) if term)


@rule("NAME_SYNTAX", Severity.ERROR, "name")
def name_syntax(row: MetricRow) -> Iterator[str]:
    """Series names are ``rl.`` then lowercase dot-separated snake_case components."""
    name = row.name
    components = name.removeprefix("rl.").split(".")
    ugly = [c for c in components if c.startswith("_") or c.endswith("_") or "__" in c]
    if not _NAME_RE.match(name) or ugly:
        yield (
            f"series name {name!r} is not lowercase dot-separated snake_case (no leading, "
            f"trailing or doubled '_'); write it as {_suggest_name(name)!r}."
        )


@rule("LOGGER_KEY_REPEATS_PREFIX", Severity.WARNING, "logger_key")
def logger_key_repeats_prefix(row: MetricRow) -> Iterator[str]:
    """The logger key does not start with its own prefix (``train/x`` under ``train``)."""
    key = row.logger_key
    if not key or "/" not in key:
        return
    head, rest = key.split("/", 1)
    for prefix in row.prefixes:
        if not prefix:
            continue
        if key.startswith(f"{prefix}/"):
            fixed = key.removeprefix(f"{prefix}/")
        elif head == prefix.rsplit("/", 1)[-1]:
            fixed = rest
        else:
            continue
        yield (
            f"logger key {key!r} repeats its prefix {prefix!r}, so log_metrics(..., "
            f"prefix={prefix!r}) records it as '{prefix}/{key}'; write "
            f"'logger_key: {fixed}' (the key as the code passes it, without the prefix)."
        )
        return


@rule("UNIT_NOT_UCUM", Severity.ERROR, "unit")
def unit_not_ucum(row: MetricRow) -> Iterator[str]:
    """Units are unprefixed UCUM (``s``, ``By``, ``1``, ``%``, ``{thing}``, quotients) or ``""``."""
    for term in _unit_terms(row.unit):
        if term in ("1", "%") or term in _BASE_UNITS or _ANNOTATION_RE.match(term):
            continue
        fix = _UNIT_FIXES.get(term)
        if fix is not None:
            yield (
                f"unit {row.unit!r} uses {term!r}, which is not an unprefixed UCUM unit; "
                f"use {fix!r} and convert the values to it."
            )
        else:
            yield (
                f"unit {row.unit!r} uses {term!r}, which is not a UCUM unit; use 's', 'By', "
                f"'1' or a braced count such as '{{{term.lower().rstrip('s')}}}'."
            )
        return


@rule("UNIT_ANNOTATION_PLURAL", Severity.WARNING, "unit")
def unit_annotation_plural(row: MetricRow) -> Iterator[str]:
    """Count annotations are singular: ``{token}``, not ``{tokens}``."""
    for term in _unit_terms(row.unit):
        match = _ANNOTATION_RE.match(term)
        word = match.group(1) if match else ""
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            yield f"unit annotation {term!r} is plural; write it singular: '{{{word[:-1]}}}'."
            return


@rule("UNIT_IN_NAME", Severity.ERROR, "name")
def unit_in_name(row: MetricRow) -> Iterator[str]:
    """The name does not spell a unit (``_ms``, ``_seconds``, ``_bytes``); ``unit`` does."""
    tokens = _tokens(row.name)
    for index, token in enumerate(tokens):
        # "second" is also an ordinal (rl.second_stage.loss): a unit only last or after "per".
        ordinal = (
            token == "second" and index < len(tokens) - 1 and tokens[index - 1 : index] != ("per",)
        )
        if token in _UNIT_WORDS and not ordinal:
            yield (
                f"series name {row.name!r} spells the unit {token!r}; drop it from the name "
                f"and keep the unit in 'unit' (now {row.unit!r})."
            )
            return


@rule("COUNTER_SUFFIX", Severity.ERROR, "name")
def counter_suffix(row: MetricRow) -> Iterator[str]:
    """Counter names do not end in ``total`` or ``count``; the exporter appends ``_total``."""
    last = _last_tokens(row.name)
    if row.kind == "counter" and last and last[-1] in ("total", "count"):
        stem = re.sub(r"[._](total|count)$", "", row.name)
        yield (
            f"counter {row.name!r} ends in {last[-1]!r}; Prometheus adds '_total' to "
            f"counters, so drop it (e.g. {stem!r})."
        )


@rule("RESERVED_SUFFIX", Severity.WARNING, "name")
def reserved_suffix(row: MetricRow) -> Iterator[str]:
    """Only counters end in ``_total`` and only histograms in ``_bucket/_count/_sum``."""
    last = _last_tokens(row.name)
    if row.kind != "counter" and last and last[-1] in _PROMETHEUS_SUFFIXES:
        owner = "counters" if last[-1] == "total" else "histogram series"
        yield (
            f"{row.kind} {row.name!r} ends in {last[-1]!r}, a suffix Prometheus reserves for "
            f"{owner}; rename it (e.g. '.active', '.size' or '.value')."
        )


@rule("TYPE_IN_NAME", Severity.ERROR, "name")
def type_in_name(row: MetricRow) -> Iterator[str]:
    """The name does not repeat an instrument type (counter, gauge, histogram, summary)."""
    for token in _tokens(row.name):
        if token in _TYPE_WORDS:
            yield (
                f"series name {row.name!r} contains the type word {token!r}; drop it, "
                f"'kind: {row.kind}' already says it."
            )
            return


@rule("DESCRIPTION_MISSING", Severity.ERROR, "description")
def description_missing(row: MetricRow) -> Iterator[str]:
    """Every row says what its value means."""
    if not row.description.strip():
        yield "description is empty; say in one sentence what the value measures."


@rule("DESCRIPTION_FORMAT", Severity.WARNING, "description")
def description_format(row: MetricRow) -> Iterator[str]:
    """Descriptions are sentences: they start upper-case and end with a period."""
    text = row.description.strip()
    if not text:
        return
    problems = []
    if text[0].islower():
        problems.append(f"start it with a capital ({text[0].upper() + text[1:20]!r}...)")
    if not text.endswith("."):
        problems.append("end it with a period")
    if problems:
        yield f"description is not a sentence; {' and '.join(problems)}."


@rule("DESCRIPTION_REPEATS_NAME", Severity.WARNING, "description")
def description_repeats_name(row: MetricRow) -> Iterator[str]:
    """The description tells more than the name does."""
    words = set(_WORD_FIND(row.description.lower())) - _FILLER
    if words and words <= set(_tokens(row.name)):
        yield (
            f"description {row.description!r} only repeats the name {row.name!r}; say what "
            "is measured, over what, and when it is recorded."
        )


@rule("DURATION_UNIT", Severity.ERROR, "unit")
def duration_unit(row: MetricRow) -> Iterator[str]:
    """Durations (``.duration``, ``.latency``, histograms of ``time``) are in ``s``."""
    last = _last_tokens(row.name)
    word = last[-1] if last else ""
    is_duration = word in _DURATION_WORDS or (
        row.kind == "histogram" and word in _HISTOGRAM_TIME_WORDS
    )
    if is_duration and row.unit != "s":
        yield (
            f"{row.name!r} is a duration but its unit is {row.unit!r}; use unit 's' and "
            "record seconds."
        )


@rule("RATIO_UNIT", Severity.WARNING, "unit")
def ratio_unit(row: MetricRow) -> Iterator[str]:
    """Ratios and utilizations are dimensionless: unit ``1``."""
    last = _last_tokens(row.name)
    if last and last[-1] in _RATIO_WORDS and row.unit != "1":
        yield (
            f'{row.name!r} is a {last[-1]} but its unit is {row.unit!r}; use unit "1" and '
            "record a fraction between 0 and 1."
        )


def lint_row(row: MetricRow) -> list[Diagnostic]:
    """Every lint finding for one row, honouring and checking its ``no_lint``."""
    found: list[Diagnostic] = []
    fired: set[str] = set()
    for code, lint in RULES.items():
        messages = list(lint.check(row))
        if not messages:
            continue
        fired.add(code)
        if code in row.no_lint:
            continue
        found.extend(
            Diagnostic(code, lint.severity, message, row.where(lint.field)) for message in messages
        )
    for index, code in enumerate(row.no_lint):
        where = row.positions.get(f"no_lint[{index}]", row.where("no_lint"))
        if code not in RULES:
            close = difflib.get_close_matches(code, list(RULES), n=1, cutoff=0.6)
            fix = f"did you mean {close[0]!r}?" if close else "remove it."
            found.append(
                Diagnostic(
                    "UNKNOWN_LINT",
                    META_RULES["UNKNOWN_LINT"],
                    f"no_lint names {code!r}, which is not a lint rule; {fix}",
                    where,
                )
            )
        elif code not in fired:
            found.append(
                Diagnostic(
                    "UNUSED_NO_LINT",
                    META_RULES["UNUSED_NO_LINT"],
                    f"no_lint silences {code!r}, but {row.name!r} does not trigger it; "
                    "remove the entry.",
                    where,
                )
            )
    return found


def lint_catalog(catalog: Catalog) -> list[Diagnostic]:
    """Lint every loaded row of the catalog."""
    found: list[Diagnostic] = []
    for _file, row in catalog.rows():
        found.extend(lint_row(row))
    found.extend(lint_attributes(catalog))
    return found
