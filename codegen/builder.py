"""Turn a loaded, schema-checked node tree into :mod:`codegen.model` objects.

Only what is valid is built: a row with any error under it is left out (its
error is already reported), so renderers never see half-valid data. Each field
keeps the position of its value in ``positions``; nested fields use dotted
keys (``deprecated.since``) and list items an index (``no_lint[0]``).
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.diagnostics import Diagnostic, Position, Severity
from codegen.loader import YMap, YNode, YScalar, YSeq, subtree_bad
from codegen.model import CatalogFile, Deprecation, MetricRow, Section
from codegen.schema_check import SchemaResult
from metric_catalog.vocabulary import DEFAULT_PREFIX, registry_key

__all__ = ["BuiltFile", "build_file", "declared_names"]

_FILE_FIELDS = ("owner", "module", "description", "prefix")


@dataclass(frozen=True, slots=True)
class BuiltFile:
    """The model of one file (``None`` when its header is unusable) and new findings."""

    catalog_file: CatalogFile | None
    diagnostics: tuple[Diagnostic, ...]


def _text(node: YNode | None) -> str | None:
    if isinstance(node, YScalar) and isinstance(node.value, str) and not node.bad:
        return node.value
    return None


def declared_names(root: YMap) -> set[str]:
    """Every string ``name`` a row of this file declares, valid or not.

    Used so ``replaced_by`` pointing at a row that failed for another reason is
    not reported a second time as unknown.
    """
    names: set[str] = set()
    for section in ("teed", "recorded"):
        rows = root.values.get(section)
        if not isinstance(rows, YSeq):
            continue
        for row in rows.items:
            if isinstance(row, YMap):
                name = _text(row.values.get("name"))
                if name is not None:
                    names.add(name)
    return names


def build_file(root: YMap, display: str, schema: SchemaResult) -> BuiltFile:
    """Build the :class:`CatalogFile` for ``root`` from its valid parts."""
    header: dict[str, str] = {}
    for name in _FILE_FIELDS:
        node = root.values.get(name)
        value = _text(node)
        if value is not None and schema.is_clean((name,)):
            header[name] = value
    # A broken prefix would put every teed row under the wrong key: build nothing.
    if any(name in root.values and name not in header for name in _FILE_FIELDS):
        return BuiltFile(None, ())
    if not all(name in header for name in ("owner", "module", "description")):
        return BuiltFile(None, ())
    file_prefix = header.get("prefix", DEFAULT_PREFIX)
    diagnostics: list[Diagnostic] = []
    sections: dict[Section, list[MetricRow]] = {"teed": [], "recorded": []}
    for section in ("teed", "recorded"):
        rows = root.values.get(section)
        if not isinstance(rows, YSeq) or rows.bad:
            continue
        for index, row in enumerate(rows.items):
            if not isinstance(row, YMap):
                continue
            name_ok = _check_name(row, schema.is_clean((section, index, "name")), diagnostics)
            if name_ok and not subtree_bad(row) and schema.is_clean((section, index)):
                sections[section].append(_build_row(row, section, file_prefix))
    catalog_file = CatalogFile(
        path=display,
        owner=header["owner"],
        module=header["module"],
        description=header["description"],
        teed=tuple(sections["teed"]),
        recorded=tuple(sections["recorded"]),
        prefix=file_prefix,
        positions={
            name: node.position
            for name, node in root.values.items()
            if name in (*_FILE_FIELDS, "teed", "recorded")
        },
    )
    return BuiltFile(catalog_file, tuple(diagnostics))


def _positions(row: YMap) -> dict[str, Position]:
    positions: dict[str, Position] = {}
    for name, node in row.values.items():
        positions[name] = node.position
        if isinstance(node, YMap):
            for sub, sub_node in node.values.items():
                positions[f"{name}.{sub}"] = sub_node.position
        elif isinstance(node, YSeq):
            for index, item in enumerate(node.items):
                positions[f"{name}[{index}]"] = item.position
    return positions


def _check_name(row: YMap, schema_clean: bool, diagnostics: list[Diagnostic]) -> bool:
    """True when the row's name maps to a registry key; otherwise report why."""
    node = row.values.get("name")
    name = _text(node)
    if name is None or node is None or not schema_clean:
        return False
    try:
        registry_key(name)
    except ValueError as exc:
        diagnostics.append(Diagnostic("INVALID_NAME", Severity.ERROR, f"{exc}.", node.position))
        return False
    return True


def _build_row(row: YMap, section: Section, file_prefix: str) -> MetricRow:
    values = row.values
    name = _text(values.get("name")) or ""
    positions = _positions(row)
    deprecated: Deprecation | None = None
    deprecated_node = values.get("deprecated")
    if isinstance(deprecated_node, YMap):
        dep = deprecated_node.values
        deprecated = Deprecation(
            since=_text(dep.get("since")) or "",
            replaced_by=_text(dep.get("replaced_by")),
            note=_text(dep.get("note")) or "",
        )
    no_lint_node = values.get("no_lint")
    no_lint = (
        tuple(t for item in no_lint_node.items if (t := _text(item)) is not None)
        if isinstance(no_lint_node, YSeq)
        else ()
    )
    teed = section == "teed"
    row_prefix = _text(values.get("prefix"))
    return MetricRow(
        section=section,
        name=name,
        kind=_text(values.get("kind")) or "",
        unit=_text(values.get("unit")) or "",
        description=_text(values.get("description")) or "",
        stability=_text(values.get("stability")) or "development",
        position=row.position,
        logger_key=_text(values.get("logger_key")) if teed else None,
        prefix=(row_prefix if row_prefix is not None else file_prefix) if teed else None,
        deprecated=deprecated,
        no_lint=no_lint,
        positions=positions,
    )
