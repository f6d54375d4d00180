"""The catalog as an OpenTelemetry Weaver registry: :func:`export_registry`.

Built from the resolved catalog (:func:`~codegen.generate.resolve.resolve_catalog`),
so every exported field equals what ``resolve --format json`` shows. The layout::

    manifest.yaml          schema_url <base>/<version>, description, stability
    <module>.yaml          one per catalog file: registry.<module> attributes, then
                           one metric.<name> group per scalar series
    metric-catalog.json    files, loops, bookkeeping and non-scalar rows (Weaver
                           reads only *.yaml, so it ignores this file)

What Weaver does not model (logger keys, prefixes, loops, cadence, ranges, goals,
presence, owner) is kept under ``annotations.metric_catalog`` (:data:`ANNOTATION`)
with the value ``resolve`` shows, which :mod:`codegen.weaver.importer` reads back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import yaml

from ..catalog.annotations import CODE_GENERATION, METRIC_VALUE_TYPE
from ..catalog.model import Catalog, CatalogFile
from ..generate.resolve import resolve_catalog

__all__ = [
    "ANNOTATION",
    "CATALOG_JSON",
    "EXPORT_FORMAT_VERSION",
    "FORMATS",
    "INSTRUMENTS",
    "MANIFEST",
    "OTHER_MEMBER",
    "WRITTEN_BY",
    "WeaverFormat",
    "export_registry",
    "member_id",
    "schema_url",
]

WeaverFormat = Literal["v1", "v2"]
"""``v1``: ``groups:`` (every Weaver reads it); ``v2``: ``file_format: definition/2``."""

FORMATS: Final[tuple[WeaverFormat, ...]] = ("v1", "v2")

ANNOTATION: Final = "metric_catalog"
"""The annotation key holding what only the catalog knows (annotations are opaque to Weaver)."""

OTHER_MEMBER: Final = "_OTHER"
"""The value of semconv's fallback enum member: an enum listing it is open."""

MANIFEST: Final = "manifest.yaml"
"""The registry manifest's name (``registry_manifest.yaml`` is deprecated in Weaver)."""

WRITTEN_BY: Final = "Written by metric-catalog export weaver"
"""How each ``<module>.yaml`` export writes starts (after ``# ``): a later export removes
such a file when its catalog file is gone, and leaves every other file alone."""

CATALOG_JSON: Final = "metric-catalog.json"
"""Catalog-only data beside the registry; not ``*.yaml``, so Weaver's loader skips it."""

EXPORT_FORMAT_VERSION: Final = 1
"""Version of :data:`CATALOG_JSON`'s shape; bumped when a key changes meaning or goes."""

INSTRUMENTS: Final[Mapping[str, str]] = {
    "gauge": "gauge",
    "counter": "counter",
    "histogram": "histogram",
    "up_down_counter": "updowncounter",
}
"""Catalog ``kind`` -> Weaver ``instrument``."""

_VALUE_TYPES: Final[Mapping[str, str]] = {"int": "int", "number": "double"}
"""Catalog ``value_type`` -> ``annotations.code_generation.metric_value_type``."""

_ATTRIBUTE_TYPES: Final[Mapping[str, str]] = {"bool": "boolean"}
"""Catalog attribute types Weaver spells differently (string, int, double are the same)."""

# Row fields resolve shows that Weaver has no field for, carried under ANNOTATION when
# set. Derived ones (registry_key, constant_name, prometheus, python_constant, placeholders,
# source, field_sources, shadowed_by, shares_key_with) follow from the name and are not.
_ROW_ANNOTATIONS: Final = (
    "section",
    "logger_key",
    "prefixes",
    "emitted_by",
    "requirement_level",
    "condition",
    "first_step",
    "first_step_config",
    "every",
    "every_config",
    "step_axis",
    "temporality",
    "cardinality_limit",
    "goal",
    "sum_of",
    "no_lint",
    "owner",
    "module",
)

_MEMBER_ID: Final = re.compile(r"[^a-z0-9]+")


def schema_url(base: str, version: str) -> str:
    """``base/version``: Weaver reads the registry's version from the URL's last segment."""
    return f"{base.rstrip('/')}/{version}"


def member_id(value: str, taken: set[str]) -> str:
    """An enum member id for ``value`` that Weaver's name rule accepts and ``taken`` lacks.

    Member ids must match ``^[a-z][a-z0-9]*([._][a-z0-9]+)*$``, so ``init/total``
    becomes ``init_total``; a value with no letter first gets ``value_`` before it.
    """
    slug = _MEMBER_ID.sub("_", value.lower()).strip("_")
    if not slug or not slug[0].isalpha():
        slug = f"value_{slug}".rstrip("_")
    chosen, index = slug, 2
    while chosen in taken:
        chosen, index = f"{slug}_{index}", index + 1
    taken.add(chosen)
    return chosen


def _dump(document: object, header: str) -> str:
    """YAML text with a header comment; keys in the order built, long lines kept whole."""
    body = yaml.safe_dump(
        document, sort_keys=False, allow_unicode=True, width=1_000_000, default_flow_style=False
    )
    return f"# {header}\n{body}"


@dataclass(frozen=True, slots=True)
class _Exported:
    """What a metric's export looks up: the names of the metric groups, and each
    attribute's enum values (a ref listing fewer narrows it)."""

    metrics: frozenset[str]
    values: Mapping[str, list[object]]
    rows: frozenset[str]
    """Every row's name, scalar or not."""

    def __contains__(self, name: object) -> bool:
        return name in self.metrics

    def outside(self, name: str) -> bool:
        """Whether ``name`` is a series outside the catalog (``REPLACED_BY_EXTERNAL``)."""
        return name not in self.rows


def _deprecated(found: object, exported: _Exported) -> dict[str, object] | None:
    """Weaver's ``deprecated``: renamed to an ``exported`` metric or to a series outside
    the catalog, else obsoleted.

    A replacement with no metric group (a non-scalar row) would break Weaver's
    "renamed_to exists" rule: it stays in ``annotations.metric_catalog.replaced_by``.
    An obsoleted deprecation always carries its note (v2 requires one, v1 takes it).
    """
    if not isinstance(found, Mapping):
        return None
    note = str(found.get("note") or "")
    target = found.get("replaced_by")
    if isinstance(target, str) and (target in exported or exported.outside(target)):
        out: dict[str, object] = {"reason": "renamed", "renamed_to": target}
        if note:
            out["note"] = note
        return out
    return {"reason": "obsoleted", "note": note}


def _row_annotation(row: Mapping[str, object], exported: _Exported) -> dict[str, object]:
    """What only the catalog knows of a row, as ``resolve`` shows it (unset fields left out)."""
    out: dict[str, object] = {}
    for key in _ROW_ANNOTATIONS:
        value = row.get(key)
        if value is None or value in ([], ""):
            continue
        if key == "step_axis" and value == "step":
            continue
        out[key] = value
    # Schedule and value fields resolve shows at their defaults (phase 0, not at the last
    # step, non-finite values reported) are left out, as unset fields are.
    if row.get("phase"):
        out["phase"] = row["phase"]
    if row.get("at_last_step"):
        out["at_last_step"] = True
    if row.get("non_finite") == "allowed":
        out["non_finite"] = "allowed"
    if row.get("logged_unit") != row.get("unit"):
        out["logged_unit"] = row.get("logged_unit")
    if row.get("range_declared"):
        out["range"] = row.get("range_bounds") or {}
    deprecated = row.get("deprecated")
    if isinstance(deprecated, Mapping):
        if deprecated.get("since"):
            out["deprecated_since"] = deprecated["since"]
        target = deprecated.get("replaced_by")
        if isinstance(target, str) and exported.outside(target):
            # Said, so a check tells it from a renamed_to that names nothing by mistake.
            out["replaced_by_external"] = True
        elif target and target not in exported:
            out["replaced_by"] = target
    return out


def _attribute_ref(ref: Mapping[str, object], exported: _Exported) -> dict[str, object]:
    """A row's attribute as a Weaver ref with its level, its derivation and its subset.

    Weaver has no per-ref enum subset, so the values a row narrows a shared enum to
    go under the ref's annotation (only when they are fewer than the attribute's).
    """
    out: dict[str, object] = {"ref": ref["name"], "requirement_level": ref["requirement_level"]}
    ours: dict[str, object] = {}
    if ref.get("derive") is not None:
        ours["derive"] = ref["derive"]
    subset = ref.get("values")
    if isinstance(subset, list) and subset and subset != exported.values.get(str(ref["name"])):
        ours["values"] = list(subset)
    if ours:
        out["annotations"] = {ANNOTATION: ours}
    return out


def _annotations(
    row: Mapping[str, object], value_type: str, exported: _Exported
) -> dict[str, object]:
    """A metric group's annotations: semconv's value type key (beside the row's own keys of
    ``code_generation``), the row's own ``annotations``, then the catalog's fields."""
    own = _own(row)
    generation = own.pop(CODE_GENERATION, None)
    return {
        CODE_GENERATION: {
            **(generation if isinstance(generation, Mapping) else {}),
            METRIC_VALUE_TYPE: _VALUE_TYPES[value_type],
        },
        **own,
        ANNOTATION: _row_annotation(row, exported),
    }


def _own(item: Mapping[str, object]) -> dict[str, object]:
    """A resolved row's or attribute's own ``annotations`` (a copy; ``{}`` without)."""
    found = item.get("annotations")
    return dict(found) if isinstance(found, Mapping) else {}


def _signal(row: Mapping[str, object]) -> dict[str, object]:
    """What both formats say of a metric first: instrument, unit, stability, brief."""
    return {
        "instrument": INSTRUMENTS[str(row["kind"])],
        "unit": row["unit"],
        "stability": row["stability"],
        "brief": row["description"],
    }


def _described(
    row: Mapping[str, object], value_type: str, exported: _Exported
) -> dict[str, object]:
    """What both formats say of a metric last: note, deprecation, attributes, annotations."""
    out: dict[str, object] = {}
    if row.get("note"):
        out["note"] = row["note"]
    deprecated = _deprecated(row.get("deprecated"), exported)
    if deprecated is not None:
        out["deprecated"] = deprecated
    attributes = row.get("attributes")
    if isinstance(attributes, list) and attributes:
        out["attributes"] = [_attribute_ref(ref, exported) for ref in attributes]
    out["annotations"] = _annotations(row, value_type, exported)
    return out


def _metric_v1(
    row: Mapping[str, object], value_type: str, exported: _Exported
) -> dict[str, object]:
    """One ``type: metric`` group (v1)."""
    name = str(row["name"])
    head = {"id": f"metric.{name}", "type": "metric", "metric_name": name}
    return {**head, **_signal(row), **_described(row, value_type, exported)}


def _metric_v2(
    row: Mapping[str, object], value_type: str, exported: _Exported
) -> dict[str, object]:
    """One ``metrics:`` entry (v2): only recommended/opt_in fit a signal's level."""
    # required and conditionally_required have no v2 signal level: the real one is kept in
    # the annotation (as in v1), and Weaver sees recommended.
    level = "opt_in" if row.get("requirement_level") == "opt_in" else "recommended"
    return {
        "name": row["name"],
        **_signal(row),
        "requirement_level": level,
        **_described(row, value_type, exported),
    }


def _non_scalar(
    row: Mapping[str, object], value_type: str, exported: _Exported
) -> dict[str, object]:
    """A row with no instrument, for :data:`CATALOG_JSON`: the metric group's fields."""
    attributes = row.get("attributes")
    return {
        "name": row["name"],
        "kind": row["kind"],
        "unit": row["logged_unit"],
        "description": row["description"],
        "note": row.get("note"),
        "stability": row["stability"],
        "value_type": value_type,
        "annotations": _own(row),
        "deprecated": row.get("deprecated"),
        "attributes": [_attribute_ref(ref, exported) for ref in attributes]
        if isinstance(attributes, list)
        else [],
        ANNOTATION: _row_annotation(row, exported),
    }


def _attribute(attribute: Mapping[str, object], fmt: WeaverFormat) -> dict[str, object]:
    """A declared attribute: v1 ``id`` / v2 ``key``, its type (an enum's members) and budget."""
    stability = attribute["stability"]
    values = attribute.get("values")
    kind: object
    if isinstance(values, list) and values:
        taken: set[str] = set()
        members = []
        for item in values:
            member: dict[str, object] = {
                "id": member_id(str(item["value"]), taken),
                "value": _typed(str(item["value"]), str(attribute["type"])),
                "brief": item["description"],
                "stability": stability,
            }
            members.append(member)
        if attribute.get("open") and attribute["type"] == "string":
            # Semconv's fallback member of an open enum: any other value may occur.
            members.append(
                {
                    "id": member_id("other", taken),
                    "value": OTHER_MEMBER,
                    "brief": "Any other value (a budget of "
                    f"{attribute.get('max_cardinality')} distinct others per series).",
                    "stability": stability,
                }
            )
        kind = {"members": members}
    else:
        kind = _ATTRIBUTE_TYPES.get(str(attribute["type"]), attribute["type"])
    out: dict[str, object] = {
        "id" if fmt == "v1" else "key": attribute["name"],
        "type": kind,
        "brief": attribute["description"],
        "stability": stability,
    }
    if attribute.get("note"):
        out["note"] = attribute["note"]
    examples = attribute.get("examples")
    if isinstance(examples, list) and examples:
        out["examples"] = list(examples)
    extra: dict[str, object] = {}
    if attribute.get("max_cardinality") is not None:
        extra["max_cardinality"] = attribute["max_cardinality"]
    if attribute.get("spans_segments"):
        extra["spans_segments"] = True
    if attribute.get("type") in ("int", "double") and isinstance(values, list) and values:
        extra["type"] = attribute["type"]
    if attribute.get("open"):
        extra["open"] = True
    own = _own(attribute)
    if extra:
        own[ANNOTATION] = extra
    if own:
        out["annotations"] = own
    return out


def _typed(value: str, kind: str) -> str | int | float:
    """An enum value in the attribute's type (Weaver compares typed values)."""
    if kind == "int":
        return int(value)
    if kind == "double":
        return float(value)
    return value


def _file_document(
    catalog_file: Mapping[str, object],
    rows: Sequence[tuple[Mapping[str, object], str]],
    attributes: Sequence[Mapping[str, object]],
    fmt: WeaverFormat,
    exported: _Exported,
) -> dict[str, object]:
    """One catalog file's registry file in format ``fmt``."""
    module = str(catalog_file["module"])
    declared = [_attribute(a, fmt) for a in attributes]
    if fmt == "v1":
        groups: list[dict[str, object]] = [
            {
                "id": f"registry.{module}",
                "type": "attribute_group",
                "brief": catalog_file["description"],
                "attributes": declared,
            }
        ]
        groups.extend(_metric_v1(row, value_type, exported) for row, value_type in rows)
        return {"groups": groups}
    document: dict[str, object] = {"file_format": "definition/2"}
    if declared:
        document["attributes"] = declared
    if rows:
        document["metrics"] = [_metric_v2(row, value_type, exported) for row, value_type in rows]
    return document


def export_registry(
    catalog: Catalog,
    *,
    version: str,
    base_url: str,
    description: str,
    fmt: WeaverFormat = "v1",
) -> dict[str, str]:
    """The registry's files, by path relative to the output folder, as text.

    Scalar series (``value_type`` ``number`` or ``int``) become metric groups;
    a non-scalar row has no instrument, so it goes to :data:`CATALOG_JSON` whole.
    """
    resolved = resolve_catalog(catalog)
    value_types = {row.name: row.value_type for _file, row in catalog.rows()}
    by_file: dict[str, list[tuple[Mapping[str, object], str]]] = {}
    others: dict[str, list[tuple[Mapping[str, object], str]]] = {}
    for row in _items(resolved, "rows"):
        name = str(row["name"])
        value_type = value_types.get(name, "number")
        if value_type in _VALUE_TYPES:
            by_file.setdefault(str(row["file"]), []).append((row, value_type))
        else:
            others.setdefault(str(row["file"]), []).append((row, value_type))
    attributes = {str(a["name"]): a for a in _items(resolved, "attributes")}
    exported = _Exported(
        frozenset(str(row["name"]) for rows in by_file.values() for row, _kind in rows),
        {
            name: [item["value"] for item in _items(attribute, "values")]
            for name, attribute in attributes.items()
        },
        frozenset(str(row["name"]) for row in _items(resolved, "rows")),
    )
    model_files = {f.path: f for f in catalog.files}
    out: dict[str, str] = {
        MANIFEST: _dump(
            {
                "schema_url": schema_url(base_url, version),
                "description": description,
                "stability": "development",
            },
            "Weaver registry manifest written by metric-catalog export weaver.",
        )
    }
    files_json: list[dict[str, object]] = []
    for catalog_file in _items(resolved, "files"):
        path = str(catalog_file["path"])
        module = str(catalog_file["module"])
        declared = [attributes[str(name)] for name in _names(catalog_file.get("attributes"))]
        document = _file_document(catalog_file, by_file.get(path, []), declared, fmt, exported)
        out[f"{module}.yaml"] = _dump(document, f"{WRITTEN_BY} from {path}; do not edit.")
        kept = [_non_scalar(row, kind, exported) for row, kind in others.get(path, [])]
        files_json.append(_file_json(catalog_file, model_files[path], kept))
    out[CATALOG_JSON] = (
        json.dumps(
            {"export_format_version": EXPORT_FORMAT_VERSION, "format": fmt, "files": files_json},
            indent=2,
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n"
    )
    return out


def _file_json(
    catalog_file: Mapping[str, object],
    model: CatalogFile,
    others: Sequence[Mapping[str, object]],
) -> dict[str, object]:
    """A file's entry in :data:`CATALOG_JSON`: what no metric group holds."""
    return {
        "path": catalog_file["path"],
        "module": catalog_file["module"],
        "owner": catalog_file["owner"],
        "description": catalog_file["description"],
        "prefixes": catalog_file["prefixes"],
        "namespace": model.namespace,
        "emitted_by": list(model.emitted_by),
        "attributes": _names(catalog_file.get("attributes")),
        "loops": [
            {
                "name": loop.name,
                "description": loop.description,
                "signature": list(loop.signature),
                "step_keys": [{"key": step.key, "prefix": step.prefix} for step in loop.step_keys],
            }
            for loop in model.loops
        ],
        "bookkeeping": [{"key": entry.key, "reason": entry.reason} for entry in model.bookkeeping],
        "rows_without_instrument": list(others),
    }


def _items(document: Mapping[str, object], key: str) -> list[Mapping[str, object]]:
    """The mappings listed under ``key`` of a resolved document."""
    found = document.get(key)
    return [item for item in found if isinstance(item, Mapping)] if isinstance(found, list) else []


def _names(found: object) -> list[str]:
    """The strings of a resolved list (attribute names of a file)."""
    return [str(item) for item in found] if isinstance(found, list) else []
