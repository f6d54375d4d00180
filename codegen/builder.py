"""Turn a loaded, schema-checked node tree into :mod:`codegen.model` objects.

Only what is valid is built: a row with any error under it is left out (its
error is already reported), so renderers never see half-valid data. Each field
keeps the position of its value in ``positions``; nested fields use dotted
keys (``deprecated.since``) and list items an index (``no_lint[0]``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from metric_catalog.vocabulary import DEFAULT_PREFIX, registry_key

from .diagnostics import Diagnostic, Position, Severity
from .loader import YMap, YNode, YScalar, YSeq, subtree_bad
from .model import CatalogFile, Deprecation, MetricRow, Section
from .schema_check import SchemaResult

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
            if not name_ok or not schema.is_clean((section, index)):
                continue
            parts = _row_parts(row)
            if parts is not None:
                sections[section].append(_build_row(row, section, file_prefix, parts))
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


class _Positions(Mapping[str, Position]):
    """A row's field positions, each :class:`Position` built only when looked up.

    Positions are needed for diagnostics and a few reports, not for rendering,
    so the builder keeps the loader's (line, column) pairs.
    """

    __slots__ = ("_marks", "_path")

    def __init__(self, path: str, marks: dict[str, tuple[int, int]]) -> None:
        self._path = path
        self._marks = marks

    def __getitem__(self, key: str) -> Position:
        line, column = self._marks[key]
        return Position(self._path, line, column)

    def __iter__(self) -> Iterator[str]:
        return iter(self._marks)

    def __len__(self) -> int:
        return len(self._marks)

    def __contains__(self, key: object) -> bool:
        return key in self._marks

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self)!r})"


def _row_parts(row: YMap) -> tuple[dict[str, str], dict[str, tuple[int, int]]] | None:
    """A row's string fields and field positions; ``None`` when a load error is under it.

    One pass over the row instead of :func:`subtree_bad`, ``_text`` per field and
    a position per field. Nested fields use dotted keys, list items an index.
    """
    if row.bad:
        return None
    texts: dict[str, str] = {}
    marks: dict[str, tuple[int, int]] = {}
    for name, node in row.values.items():
        if node.bad:
            return None
        marks[name] = (node.line, node.column)
        if type(node) is YScalar:
            if type(node.value) is str:
                texts[name] = node.value
        elif type(node) is YMap:
            for sub, sub_node in node.values.items():
                if subtree_bad(sub_node):
                    return None
                marks[f"{name}.{sub}"] = (sub_node.line, sub_node.column)
                if type(sub_node) is YScalar and type(sub_node.value) is str:
                    texts[f"{name}.{sub}"] = sub_node.value
        elif type(node) is YSeq:
            for index, item in enumerate(node.items):
                if subtree_bad(item):
                    return None
                marks[f"{name}[{index}]"] = (item.line, item.column)
    return texts, marks


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


def _build_row(
    row: YMap,
    section: Section,
    file_prefix: str,
    parts: tuple[dict[str, str], dict[str, tuple[int, int]]],
) -> MetricRow:
    texts, marks = parts
    values = row.values
    deprecated: Deprecation | None = None
    if type(values.get("deprecated")) is YMap:
        deprecated = Deprecation(
            since=texts.get("deprecated.since", ""),
            replaced_by=texts.get("deprecated.replaced_by"),
            note=texts.get("deprecated.note", ""),
        )
    no_lint_node = values.get("no_lint")
    no_lint = (
        tuple(t for item in no_lint_node.items if (t := _text(item)) is not None)
        if isinstance(no_lint_node, YSeq)
        else ()
    )
    teed = section == "teed"
    row_prefix = texts.get("prefix")
    return MetricRow(
        section=section,
        name=texts.get("name", ""),
        kind=texts.get("kind", ""),
        unit=texts.get("unit", ""),
        description=texts.get("description", ""),
        stability=texts.get("stability") or "development",
        position=row.position,
        logger_key=texts.get("logger_key") if teed else None,
        prefix=(row_prefix if row_prefix is not None else file_prefix) if teed else None,
        deprecated=deprecated,
        no_lint=no_lint,
        positions=_Positions(row.path, marks),
    )
