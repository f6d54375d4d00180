"""The resolved catalog: every row with every derived name, as one stable document.

Other tools (dashboards elsewhere, alert linters, data catalogs) read this
instead of re-implementing the loader and the naming rules. Output is sorted
(files by path, rows by series name, keys alphabetically) and carries no
timestamps or absolute paths, so it is byte-identical across runs and across the
order the YAML files were read in.
"""

from __future__ import annotations

import json
from typing import Final

from metric_catalog.series_rules import placeholders
from metric_catalog.value_rules import ValueRange

from ..catalog.builder import FieldPositions
from ..catalog.model import Attribute, Catalog, CatalogFile, Derivation, MetricRow
from ..catalog.precedence import row_choice, shadowed_by, shared_keys
from ..config import Config

__all__ = ["RESOLVED_SCHEMA_VERSION", "histogram_series", "render_resolved", "resolve_catalog"]

_DEFAULT_PACKAGE: Final = Config().package

RESOLVED_SCHEMA_VERSION: Final = 1
"""Version of the resolved document's shape; bumped when a key changes meaning or goes."""


def _choice_json(row: MetricRow) -> dict[str, object] | None:
    """The configuration value a teed row is chosen by (``TeedMetric.choice``): its path,
    test (``true``, ``false``, ``equals``) and value; ``None`` when its condition is none."""
    choice = row_choice(row) if row.section == "teed" else None
    if choice is None:
        return None
    return {"path": list(choice.path), "test": choice.test, "value": choice.value}


def histogram_series(prometheus_name: str) -> tuple[str, ...]:
    """The series a Prometheus histogram family exposes (``_bucket``, ``_count``, ``_sum``)."""
    return tuple(f"{prometheus_name}_{suffix}" for suffix in ("bucket", "count", "sum"))


def _attribute(attribute: Attribute) -> dict[str, object]:
    """A declared attribute with its domain and derived names."""
    return {
        "name": attribute.name,
        "type": attribute.type,
        "description": attribute.description,
        "stability": attribute.stability,
        "values": [{"value": v.value, "description": v.description} for v in attribute.values],
        "max_cardinality": attribute.max_cardinality,
        "open": attribute.open_enum,
        "examples": list(attribute.examples),
        "note": attribute.note or None,
        "annotations": attribute.annotations.data(),
        "spans_segments": attribute.spans_segments,
        "label": attribute.label,
        "constant_name": attribute.constant_name,
        "type_name": attribute.type_name if attribute.values else None,
        "file": attribute.path,
        "source": str(attribute.position),
    }


def _row_attributes(row: MetricRow, attributes: dict[str, Attribute]) -> list[dict[str, object]]:
    """The row's attributes in declaration order, each with its level, label and values.

    Keys in sorted order, as catalog.json's row encoder does not sort them.
    """
    out: list[dict[str, object]] = []
    for ref in row.attributes:
        declared = attributes.get(ref.name)
        declared = None if declared is None else ref.narrow(declared)  # the row's subset
        out.append(
            {
                "derive": _derive(ref.derive),
                "label": declared.label if declared else None,
                "max_cardinality": declared.max_cardinality if declared else None,
                "name": ref.name,
                "open": declared.open_enum if declared else False,
                "requirement_level": ref.requirement_level,
                "type": declared.type if declared else None,
                "values": [v.value for v in declared.values] if declared else [],
            }
        )
    return out


def _derive(derive: Derivation | None) -> dict[str, object] | None:
    """A derivation as ``{"default", "from", "map"}`` (keys and the map sorted), or None."""
    if derive is None:
        return None
    return {
        "default": derive.default,
        "from": derive.source,
        "map": dict(sorted(dict(derive.table).items())),
    }


def _row(
    catalog_file: CatalogFile,
    row: MetricRow,
    package: str,
    attributes: dict[str, Attribute] | None = None,
    shadowed: dict[str, tuple[str, ...]] | None = None,
    *,
    shared: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, object]:
    """One resolved row, every key (nested ones too) in sorted order.

    Built sorted so catalog.json's encoder can skip sorting 10,000 rows' keys;
    ``tests/generate`` checks the order against ``json.dumps(sort_keys=True)``.
    """
    prom = row.prometheus_name
    dep = row.deprecated
    teed = row.section == "teed"
    found = row.value_range
    return {
        "annotations": row.annotations.data(),
        "at_last_step": row.at_last_step if teed else None,
        "attributes": _row_attributes(row, attributes or {}),
        "cardinality_limit": row.cardinality_limit,
        "condition": row.condition,
        "config_choice": _choice_json(row),
        "constant_name": row.constant_name,
        "deprecated": None
        if dep is None
        else {"note": dep.note, "replaced_by": dep.replaced_by, "since": dep.since or None},
        "description": row.description,
        "emitted_by": list(row.emitted_by) if teed else None,
        "every": row.every,
        "every_config": row.every_config,
        "field_sources": _field_sources(row),
        "file": catalog_file.path,
        "first_step": row.first_step,
        "first_step_config": row.first_step_config,
        "goal": row.goal or None,
        "kind": row.kind,
        "logged_unit": row.declared_unit,
        "logger_key": row.logger_key,
        "module": catalog_file.module,
        "name": row.name,
        "no_lint": sorted(row.no_lint),
        "non_finite": row.non_finite if teed else None,
        "note": row.note or None,
        "owner": catalog_file.owner,
        "phase": row.phase if teed else None,
        "placeholders": sorted(
            {name for text in (row.logger_key or "", *row.prefixes) for name in placeholders(text)}
        ),
        "prefix": row.prefix if teed else None,
        "prefixes": list(row.prefixes),
        "prometheus": {
            "name": prom,
            "series": list(histogram_series(prom)) if row.kind == "histogram" else [prom],
        },
        "python_constant": f"{package}.{catalog_file.module}.{row.constant_name}",
        "qualified_logger_key": row.qualified_logger_key or None,
        # What the values may be: the range they are judged against (declared or
        # the unit's default, in the unit the code logs) and its bounds.
        "range": None if found is None else found.text(),
        "range_bounds": _range_bounds(found),
        "range_declared": row.declared_range is not None,
        "registry_key": row.registry_key,
        # Presence fields are None for recorded rows, which a log never shows.
        "requirement_level": row.requirement_level if teed else None,
        "section": row.section,
        "shadowed_by": list((shadowed or {}).get(row.name, ())),
        "shares_key_with": list((shared or {}).get(row.name, ())),
        "source": str(row.position),
        "stability": row.stability,
        "step_axis": (row.step_axis or "step") if teed else None,
        "sum_of": list(row.sum_of),
        "temporality": row.temporality if teed else None,
        "unit": row.unit,
        "value_type": row.value_type if teed else None,
    }


def _range_bounds(found: ValueRange | None) -> dict[str, object] | None:
    """A range's bounds, keys in sorted order (``None`` without a range)."""
    if found is None:
        return None
    return {
        "high": found.high,
        "high_exclusive": found.high_open,
        "low": found.low,
        "low_exclusive": found.low_open,
    }


def _field_sources(row: MetricRow) -> dict[str, str]:
    """Where each of the row's fields is, as text, by field name in sorted order."""
    positions = row.positions
    if type(positions) is FieldPositions:  # a built row's: text without a Position apiece
        return positions.texts()
    return {name: str(pos) for name, pos in sorted(positions.items())}


def resolve_catalog(catalog: Catalog, package: str = _DEFAULT_PACKAGE) -> dict[str, object]:
    """The resolved catalog as plain JSON-ready data (see :func:`render_resolved`).

    ``package`` is the generated package's import path (``package`` in
    ``[tool.metric-catalog]``): each file's ``python_module`` and each row's
    ``python_constant`` are under it.
    """
    files = sorted(catalog.files, key=lambda f: f.path)
    rows = sorted(((f, r) for f in files for r in f.rows), key=lambda fr: fr[1].name)
    attributes = catalog.attributes()
    shadowed = shadowed_by(catalog)
    shared = shared_keys(catalog)
    return {
        "schema_version": RESOLVED_SCHEMA_VERSION,
        "files": [
            {
                "path": f.path,
                "owner": f.owner,
                "module": f.module,
                "python_module": f"{package}.{f.module}",
                "description": f.description,
                "prefix": f.prefix,
                "prefixes": [f.prefix, *f.other_prefixes],
                "rows": sorted(r.name for r in f.rows),
                "attributes": sorted(a.name for a in f.attributes),
            }
            for f in files
        ],
        "rows": [_row(f, r, package, attributes, shadowed, shared=shared) for f, r in rows],
        "bookkeeping": [
            {
                "key": entry.key,
                "reason": entry.reason,
                "source": str(entry.position) if entry.path else None,
            }
            for entry in catalog.bookkeeping()
        ],
        "loops": [
            {
                "name": loop.name,
                "description": loop.description,
                "signature": list(loop.signature),
                # Each step axis in declaration order; prefix "" covers every other key.
                "step_keys": [{"key": step.key, "prefix": step.prefix} for step in loop.step_keys],
                "source": str(loop.position),
            }
            for loop in sorted(catalog.loops(), key=lambda loop: loop.name)
        ],
        "attributes": [_attribute(attributes[name]) for name in sorted(attributes)],
    }


def render_resolved(catalog: Catalog, fmt: str = "json", *, package: str = _DEFAULT_PACKAGE) -> str:
    """The resolved catalog as ``json`` (sorted keys, two-space indent) or a ``text`` table."""
    if fmt == "json":
        doc = resolve_catalog(catalog, package)
        return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    header = ("series", "kind", "unit", "stability", "prometheus", "logged as", "source")
    table = [header]
    for catalog_file, row in sorted(catalog.rows(), key=lambda fr: fr[1].name):
        del catalog_file
        stability = row.stability + (" (deprecated)" if row.deprecated else "")
        table.append(
            (
                row.name,
                row.kind,
                (row.unit or "-") + (f" (logged {row.logged_unit})" if row.logged_unit else ""),
                stability,
                row.prometheus_name,
                row.qualified_logger_key or "-",
                str(row.position),
            )
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
        for cells in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
