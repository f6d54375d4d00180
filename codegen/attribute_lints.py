"""Naming and description lints for declared attributes.

Attribute names follow the OpenTelemetry semantic-convention syntax
(``^[a-z][a-z0-9]*([._][a-z0-9]+)*$``), must not take a label Prometheus
reserves (``le``, ``quantile``) or the SDK's ``otel.`` namespace, and every
attribute and enum value says what it means in a sentence. An attribute
silences a rule with ``no_lint: [RULE]`` like a row does.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from typing import Final

from .diagnostics import Diagnostic, Position, Severity
from .model import Attribute, Catalog

__all__ = ["ATTRIBUTE_RULES", "lint_attribute", "lint_attributes"]

_NAME_RE: Final = re.compile(r"^[a-z][a-z0-9]*([._][a-z0-9]+)*$")
_RESERVED_LABELS: Final = frozenset({"le", "quantile", "job", "instance"})

AttributeCheck = Callable[[Attribute], Iterator[tuple[str, Position]]]

ATTRIBUTE_RULES: dict[str, tuple[Severity, AttributeCheck]] = {}
"""Every attribute lint by code: its severity and its check."""


def _rule(code: str, severity: Severity) -> Callable[[AttributeCheck], AttributeCheck]:
    def register(check: AttributeCheck) -> AttributeCheck:
        ATTRIBUTE_RULES[code] = (severity, check)
        return check

    return register


@_rule("ATTRIBUTE_NAME_SYNTAX", Severity.ERROR)
def _name_syntax(attribute: Attribute) -> Iterator[tuple[str, Position]]:
    """Attribute names are lowercase dot-separated snake_case, no doubled separators."""
    if not _NAME_RE.match(attribute.name):
        fixed = re.sub(r"[._]{2,}", "_", attribute.name).strip("._")
        yield (
            f"attribute name {attribute.name!r} is not lowercase dot-separated snake_case "
            f"(no doubled, leading or trailing '_' or '.'); write it as {fixed!r}.",
            attribute.where("name"),
        )


@_rule("ATTRIBUTE_RESERVED", Severity.ERROR)
def _reserved(attribute: Attribute) -> Iterator[tuple[str, Position]]:
    """Names Prometheus or the SDK own: ``le``, ``quantile``, ``job``, ``instance``, ``otel.*``."""
    if attribute.label in _RESERVED_LABELS or attribute.name.startswith("otel."):
        yield (
            f"attribute {attribute.name!r} takes a name Prometheus or the OpenTelemetry SDK "
            "reserves; namespace it (e.g. 'rl." + attribute.name.removeprefix("otel.") + "').",
            attribute.where("name"),
        )


def _sentence_problems(text: str) -> str | None:
    text = text.strip()
    if not text:
        return "it is empty; say in one sentence what it means"
    problems = []
    if text[0].islower():
        problems.append("start it with a capital")
    if not text.endswith("."):
        problems.append("end it with a period")
    return " and ".join(problems) or None


@_rule("ATTRIBUTE_DESCRIPTION_FORMAT", Severity.WARNING)
def _description(attribute: Attribute) -> Iterator[tuple[str, Position]]:
    """Attribute and enum-value descriptions are sentences (capital, period)."""
    problem = _sentence_problems(attribute.description)
    if problem:
        yield (
            f"description of attribute {attribute.name!r} is not a sentence; {problem}.",
            attribute.where("description"),
        )
    for value in attribute.values:
        problem = _sentence_problems(value.description)
        if problem:
            yield (
                f"description of value {value.value!r} of attribute {attribute.name!r} is "
                f"not a sentence; {problem}.",
                value.position,
            )


def lint_attribute(attribute: Attribute) -> list[Diagnostic]:
    """Every lint finding for one attribute, honouring and checking its ``no_lint``."""
    found: list[Diagnostic] = []
    fired: set[str] = set()
    for code, (severity, check) in ATTRIBUTE_RULES.items():
        findings = list(check(attribute))
        if findings:
            fired.add(code)
        if code in attribute.no_lint:
            continue
        found.extend(Diagnostic(code, severity, text, where) for text, where in findings)
    where = attribute.where("no_lint")
    for code in attribute.no_lint:
        if code not in ATTRIBUTE_RULES:
            close = difflib.get_close_matches(code, list(ATTRIBUTE_RULES), n=1, cutoff=0.6)
            fix = f"did you mean {close[0]!r}?" if close else "remove it."
            message = f"no_lint names {code!r}, which is not an attribute lint rule; {fix}"
            found.append(Diagnostic("UNKNOWN_LINT", Severity.WARNING, message, where))
        elif code not in fired:
            message = (
                f"no_lint silences {code!r}, but attribute {attribute.name!r} does not "
                "trigger it; remove the entry."
            )
            found.append(Diagnostic("UNUSED_NO_LINT", Severity.WARNING, message, where))
    return found


def lint_attributes(catalog: Catalog) -> list[Diagnostic]:
    """Lint every declared attribute of the catalog."""
    return [d for f in catalog.files for a in f.attributes for d in lint_attribute(a)]
