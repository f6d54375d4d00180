"""The rules ``weaver registry check`` and the semantic conventions' policies apply.

Weaver cannot run everywhere (it ships no Python package), so :func:`check_registry`
applies, to a loaded :class:`~codegen.weaver.registry.Registry`, what its parser
refuses and what semconv's ``make check-policies`` packages enforce:

* the fields a metric group must have (the v1 JSON schema lets a ``type: metric``
  group without ``unit`` through; Weaver's parser does not);
* names match ``^[a-z][a-z0-9]*([._][a-z0-9]+)*$`` and every attribute has a namespace;
* a metric's brief ends with a period;
* no metric name is the namespace of another, and no two share a constant name;
* no metric is more stable than an attribute it carries that is not opt-in;
* every ``renamed_to`` names a metric of the registry;
* a string attribute that is no enum has ``examples`` (a warning, as in Weaver).

:data:`WEAVER_CODES` declares every code the Weaver stage reports (these and the
reader's); :mod:`codegen.codes` lists them in the diagnostics reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from metric_catalog.series_rules import STABILITY_LEVELS

from ..catalog.diagnostics import Diagnostic, Severity
from .export import ANNOTATION
from .registry import Registry, WeaverMetric

__all__ = [
    "INSTRUMENTS",
    "NAME",
    "STABILITY_RANK",
    "WEAVER_CODES",
    "WeaverCode",
    "check_registry",
]

NAME: Final = re.compile(r"[a-z][a-z0-9]*([._][a-z0-9]+)*\Z")
"""Semconv's name rule (``naming_conventions/names.rego``): metrics, attributes, members."""

INSTRUMENTS: Final = ("counter", "gauge", "histogram", "updowncounter")
"""The instruments a metric group may name."""

STABILITY_RANK: Final[dict[str, int]] = {level: i for i, level in enumerate(STABILITY_LEVELS)}
"""Weaver's stability levels (the catalog's), least stable first."""


@dataclass(frozen=True, slots=True)
class WeaverCode:
    """One code of the Weaver stage: its level, what it means and the fix."""

    code: str
    severity: Severity
    meaning: str
    fix: str


WEAVER_CODES: Final[dict[str, WeaverCode]] = {
    code.code: code
    for code in (
        WeaverCode(
            "WEAVER_FILE",
            Severity.ERROR,
            "A registry file Weaver would refuse: not a definition file, or too many files.",
            "Move stray YAML files out of the registry folder; point at the registry itself.",
        ),
        WeaverCode(
            "WEAVER_DUPLICATE",
            Severity.ERROR,
            "An attribute is defined twice in the registry.",
            "Keep one definition and refer to it with `ref`.",
        ),
        WeaverCode(
            "WEAVER_REF_UNKNOWN",
            Severity.ERROR,
            "A `ref`, `extends` or `ref_group` names nothing the registry defines, or loops.",
            "Fix the name, or add the dependency (with a `registry_path`) to the manifest.",
        ),
        WeaverCode(
            "WEAVER_SKIPPED",
            Severity.WARNING,
            "Import skipped definitions a catalog cannot hold (spans, events, refinements, "
            "array or template attributes, imports without a local registry).",
            "Nothing to do for a metrics catalog; declare what you need by hand otherwise.",
        ),
        WeaverCode(
            "WEAVER_FIELD",
            Severity.ERROR,
            "A metric lacks a field Weaver's parser requires, or has a value it refuses "
            "(instrument, unit, stability).",
            "Give the metric its `metric_name`, `instrument`, `unit` and `stability`.",
        ),
        WeaverCode(
            "WEAVER_NAME",
            Severity.ERROR,
            "A metric, attribute or enum member name breaks semconv's name rule, or an "
            "attribute has no namespace.",
            "Use lowercase dot-separated components (`jvm.memory.used`); give attributes a "
            "namespace (`rl.dataset`).",
        ),
        WeaverCode(
            "WEAVER_BRIEF",
            Severity.ERROR,
            "A metric's brief does not end with a period (semconv's `metric_brief_format`).",
            "End the description with a period.",
        ),
        WeaverCode(
            "WEAVER_NAMESPACE_COLLISION",
            Severity.ERROR,
            "A metric name is the namespace of another (`a.b` and `a.b.c`).",
            "Rename one of them (`a.b.total` and `a.b.c`).",
        ),
        WeaverCode(
            "WEAVER_CONSTANT_COLLISION",
            Severity.ERROR,
            "Two metrics (or attributes) get the same generated constant name (`a.b_c`, `a_b.c`).",
            "Rename one of them.",
        ),
        WeaverCode(
            "WEAVER_STABILITY",
            Severity.ERROR,
            "A metric is more stable than an attribute it carries that is not opt-in.",
            "Raise the attribute's stability, make it `opt_in`, or lower the metric's.",
        ),
        WeaverCode(
            "WEAVER_EXAMPLES",
            Severity.WARNING,
            "A string attribute that is no enum has no `examples` (Weaver warns; an error "
            "under `--future`).",
            "Give the catalog attribute `examples: [a, b]`.",
        ),
        WeaverCode(
            "WEAVER_RENAMED_EXTERNAL",
            Severity.WARNING,
            "A deprecation's `renamed_to` names a metric outside the registry, as the catalog "
            "row says (`replaced_by` of a series another catalog or registry declares); "
            "semconv's deprecation policy, if you run it, refuses it.",
            "Nothing, or check the registry together with the one that defines the target.",
        ),
        WeaverCode(
            "WEAVER_RENAMED_TARGET",
            Severity.ERROR,
            "A deprecation's `renamed_to` names no metric of the registry.",
            "Name an existing metric, or deprecate with `reason: obsoleted`.",
        ),
    )
}
"""Every code of the Weaver stage, by code."""


def _diagnostic(code: str, message: str, metric: WeaverMetric | None = None) -> Diagnostic:
    rule = WEAVER_CODES[code]
    return Diagnostic(code, rule.severity, message, metric.position if metric else None)


def _fields(metric: WeaverMetric) -> Iterable[Diagnostic]:
    """What Weaver's parser requires of a metric group (``group.rs``)."""
    label = f"metric '{metric.name or metric.group_id}'"
    if not metric.name:
        yield _diagnostic("WEAVER_FIELD", f"{label} has no metric_name; add it", metric)
    if metric.unit is None:
        yield _diagnostic(
            "WEAVER_FIELD",
            f'{label} has no unit; add it ("1" for a ratio, {{x}} for a count)',
            metric,
        )
    if metric.instrument not in INSTRUMENTS:
        yield _diagnostic(
            "WEAVER_FIELD",
            f"{label}: instrument {metric.instrument!r} is not one of {', '.join(INSTRUMENTS)}; "
            "fix the instrument",
            metric,
        )
    if metric.stability not in STABILITY_RANK:
        yield _diagnostic(
            "WEAVER_FIELD",
            f"{label}: stability {metric.stability!r} is not one of "
            f"{', '.join(STABILITY_RANK)}; use one of them (deprecation is the 'deprecated' "
            "field, 'experimental' is now 'development')",
            metric,
        )


def _names(registry: Registry) -> Iterable[Diagnostic]:
    for metric in registry.metrics:
        if not NAME.match(metric.name):
            yield _diagnostic(
                "WEAVER_NAME",
                f"metric name {metric.name!r} breaks the name rule "
                f"{NAME.pattern.removesuffix(chr(92) + 'Z')}; use lowercase dot-separated "
                "components",
                metric,
            )
    for attribute in registry.attributes.values():
        if not NAME.match(attribute.key) or "." not in attribute.key:
            yield Diagnostic(
                "WEAVER_NAME",
                Severity.ERROR,
                f"attribute {attribute.key!r} breaks the name rule or has no namespace; "
                "name it as namespace.name in lowercase (rl.dataset)",
                attribute.position,
            )
        if attribute.type == "string" and not attribute.examples:
            yield Diagnostic(
                "WEAVER_EXAMPLES",
                Severity.WARNING,
                f"string attribute {attribute.key!r} has no examples, which Weaver warns "
                "about; give the catalog attribute examples: [a, b]",
                attribute.position,
            )
        for member in attribute.members:
            if not NAME.match(member.id):
                yield Diagnostic(
                    "WEAVER_NAME",
                    Severity.ERROR,
                    f"attribute {attribute.key!r}: enum member id {member.id!r} breaks the "
                    "name rule; use a lowercase slug of the value",
                    attribute.position,
                )


def _collisions(registry: Registry) -> Iterable[Diagnostic]:
    names = sorted({metric.name for metric in registry.metrics})
    by_name = {metric.name: metric for metric in registry.metrics}
    for index, name in enumerate(names):
        # Sorted: every name under ``name.`` follows it directly.
        for other in names[index + 1 :]:
            if not other.startswith(name):
                break
            if other.startswith(name + "."):
                yield _diagnostic(
                    "WEAVER_NAMESPACE_COLLISION",
                    f"metric '{name}' is the namespace of metric '{other}'; rename one of them",
                    by_name[name],
                )
    for kind, keys in (
        ("metric", [m.name for m in registry.metrics]),
        ("attribute", list(registry.attributes)),
    ):
        seen: dict[str, str] = {}
        for key in sorted(set(keys)):
            constant = key.replace(".", "_")
            if constant in seen:
                yield Diagnostic(
                    "WEAVER_CONSTANT_COLLISION",
                    Severity.ERROR,
                    f"{kind}s '{seen[constant]}' and '{key}' share the constant name "
                    f"{constant.upper()}; rename one of them",
                    by_name[key].position if kind == "metric" else None,
                )
            seen[constant] = key


def _stability(registry: Registry) -> Iterable[Diagnostic]:
    for metric in registry.metrics:
        rank = STABILITY_RANK.get(metric.stability)
        if rank is None:
            continue
        for ref in metric.attributes:
            attribute = registry.attributes.get(ref.key)
            if attribute is None or ref.requirement_level == "opt_in":
                continue
            if STABILITY_RANK.get(attribute.stability, 0) < rank:
                yield _diagnostic(
                    "WEAVER_STABILITY",
                    f"metric '{metric.name}' is {metric.stability} but carries "
                    f"{ref.requirement_level} attribute '{ref.key}', which is "
                    f"{attribute.stability}; raise the attribute's stability, make it opt_in, "
                    "or lower the metric's",
                    metric,
                )


def _renames(registry: Registry) -> Iterable[Diagnostic]:
    names = {metric.name for metric in registry.metrics}
    for metric in registry.metrics:
        deprecated = metric.deprecated or {}
        target = deprecated.get("renamed_to")
        if deprecated.get("reason") != "renamed" or target in names:
            continue
        ours = metric.annotations.get(ANNOTATION)
        if isinstance(ours, Mapping) and ours.get("replaced_by_external") is True:
            yield _diagnostic(
                "WEAVER_RENAMED_EXTERNAL",
                f"metric '{metric.name}' is renamed to {target!r}, a series outside this "
                "registry (the catalog row says so); check it with the registry defining it "
                "to hold it to semconv's deprecation policy",
                metric,
            )
        else:
            yield _diagnostic(
                "WEAVER_RENAMED_TARGET",
                f"metric '{metric.name}' is renamed to {target!r}, which no metric of the "
                "registry is; name an existing metric or deprecate it as obsoleted",
                metric,
            )


def check_registry(registry: Registry) -> list[Diagnostic]:
    """Every finding of the rules above on ``registry`` (what reading it found not included)."""
    found: list[Diagnostic] = []
    for metric in registry.metrics:
        found.extend(_fields(metric))
        if not metric.brief.rstrip().endswith("."):
            found.append(
                _diagnostic(
                    "WEAVER_BRIEF",
                    f"metric '{metric.name}': the brief {metric.brief!r} does not end with a "
                    "period; end it with one",
                    metric,
                )
            )
    found.extend(_names(registry))
    found.extend(_collisions(registry))
    found.extend(_stability(registry))
    found.extend(_renames(registry))
    return sorted(set(found), key=Diagnostic.sort_key)
