"""Read a Weaver registry folder into resolved metrics and attributes: :func:`load_registry`.

Both definition formats, mixed in one folder as the semantic conventions do: v1
``groups:`` and v2 ``file_format: definition/2``. References are resolved the way
Weaver resolves them: an attribute ``ref``, a v1 group's ``extends``, a v2
``ref_group``, and ``imports`` of metrics from a dependency whose ``registry_path``
is a local folder (the manifest's ``dependencies``). Every metric comes out with
its attributes flattened into explicit references.

What a catalog cannot hold is reported (``WEAVER_SKIPPED``), never dropped
silently: spans, events, entities, refinements, imports without a local registry.
Every input is hostile: files are read through the catalog's strict loader
(size, depth, tags and anchors bounded), symlinked folders are not followed,
and a reference cycle ends with a diagnostic.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import yaml

from ..catalog.diagnostics import Diagnostic, Position, Severity
from ..catalog.loader import NonString, YMap, YNode, YScalar, YSeq, load_file, to_plain

__all__ = [
    "MANIFEST_NAMES",
    "MAX_FILES",
    "Member",
    "Registry",
    "WeaverAttribute",
    "WeaverMetric",
    "WeaverRef",
    "load_registry",
    "plain",
]

MANIFEST_NAMES: Final = ("manifest.yaml", "registry_manifest.yaml")
"""The manifest's name, then its deprecated one (Weaver still loads it)."""

MAX_FILES: Final = 10_000
"""Most definition files read from one registry folder; more is refused."""

_MAX_DEPENDENCY_DEPTH: Final = 4
_SUFFIXES: Final = (".yaml", ".yml")
_LEVELS: Final = ("required", "conditionally_required", "recommended", "opt_in")


@dataclass(frozen=True, slots=True)
class Member:
    """One member of an enum attribute."""

    id: str
    value: object
    brief: str
    stability: str | None


@dataclass(frozen=True, slots=True)
class WeaverAttribute:
    """An attribute definition: v1 ``id`` / v2 ``key``, with its type and domain."""

    key: str
    type: str
    """``string``, ``int``, ``double``, ``boolean``, an array or template type, or ``enum``."""
    brief: str
    stability: str
    position: Position
    file: str = ""
    """The definition file, relative to the registry folder (POSIX)."""
    note: str = ""
    members: tuple[Member, ...] = ()
    examples: tuple[object, ...] = ()
    annotations: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WeaverRef:
    """An attribute a metric carries, with its requirement level (and a condition's text)."""

    key: str
    requirement_level: str
    position: Position
    condition: str | None = None
    annotations: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WeaverMetric:
    """A metric with its attributes resolved into explicit references."""

    name: str
    instrument: str
    unit: str | None
    """``None`` when the group has no ``unit`` (Weaver's parser refuses it)."""
    brief: str
    stability: str
    position: Position
    file: str = ""
    """The definition file, relative to the registry folder (POSIX)."""
    group_id: str | None = None
    """The v1 group ``id`` (``None`` in v2, where the name is the id)."""
    note: str = ""
    deprecated: Mapping[str, object] | None = None
    attributes: tuple[WeaverRef, ...] = ()
    annotations: Mapping[str, object] = field(default_factory=dict)
    requirement_level: str | None = None
    """A v2 signal's level (``recommended`` or ``opt_in``); ``None`` in v1."""
    imported: bool = False
    """Brought in from a dependency by ``imports``."""


@dataclass(slots=True)
class Registry:
    """A loaded registry: its manifest, attributes and metrics, and what reading it found."""

    root: Path
    manifest: dict[str, object] = field(default_factory=dict)
    attributes: dict[str, WeaverAttribute] = field(default_factory=dict)
    metrics: list[WeaverMetric] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    """Definition files read, relative to ``root`` (POSIX), in the order read."""
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def schema_url(self) -> str | None:
        """The manifest's ``schema_url`` (``None`` when there is none)."""
        found = self.manifest.get("schema_url")
        return found if isinstance(found, str) else None

    @property
    def version(self) -> str | None:
        """The last path segment of ``schema_url``: the registry's version."""
        url = self.schema_url
        return url.rstrip("/").rsplit("/", 1)[-1] if url else None


def plain(node: YNode) -> object:
    """A node as plain data, with YAML's non-string scalars typed (``1`` -> 1, ``true``)."""
    data = to_plain(node)
    return _typed(data)


def _typed(data: object) -> object:
    if isinstance(data, NonString):
        try:
            return yaml.safe_load(data.text)
        except yaml.YAMLError:
            return data.text
    if isinstance(data, list):
        return [_typed(item) for item in data]
    if isinstance(data, dict):
        return {key: _typed(value) for key, value in data.items()}
    return data


def _text(node: YMap, key: str, default: str = "") -> str:
    """A scalar field as text ('' when absent or not a scalar)."""
    found = node.values.get(key)
    if isinstance(found, YScalar):
        value = found.value
        return value if isinstance(value, str) else value.text
    return default


def _where(node: YMap, key: str) -> Position:
    """Where ``key`` is written in ``node``, else where the mapping starts."""
    mark = node.key_marks.get(key)
    return Position(node.path, *mark) if mark else node.position


def _maps(node: YNode | None) -> list[YMap]:
    """The mappings of a sequence node (other items are the schema check's business)."""
    if isinstance(node, YSeq):
        return [item for item in node.items if isinstance(item, YMap)]
    return []


def _mapping(node: YNode | None) -> dict[str, object]:
    """A mapping node as plain data; anything else as ``{}``."""
    data = plain(node) if node is not None else None
    return data if isinstance(data, dict) else {}


@dataclass(slots=True)
class _Group:
    """An attribute group (v1 any group, v2 ``attribute_groups``) before resolution."""

    id: str
    position: Position
    refs: list[tuple[str, YMap]] = field(default_factory=list)
    """``("ref", node)`` or ``("ref_group", node)`` in order; full definitions as refs."""
    extends: str | None = None


@dataclass(slots=True)
class _Reader:
    """Collects one registry's definitions, then resolves the metrics' references."""

    registry: Registry
    groups: dict[str, _Group] = field(default_factory=dict)
    pending: list[tuple[YMap, str, _Group, str]] = field(default_factory=list)
    """(metric node, format, its attribute group, its file) awaiting resolution."""
    imports: list[tuple[str, Position]] = field(default_factory=list)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    current: str = ""
    """The file being read, relative to the registry folder."""

    def report(self, code: str, severity: Severity, message: str, where: Position) -> None:
        self.registry.diagnostics.append(Diagnostic(code, severity, message, where))

    def skip(self, path: str, what: str) -> None:
        self.skipped.setdefault(path, []).append(what)

    # --- definitions ------------------------------------------------------------

    def define(self, node: YMap, key_field: str) -> None:
        """Record an attribute definition (``id`` in v1, ``key`` in v2)."""
        key = _text(node, key_field)
        type_node = node.values.get("type")
        members: tuple[Member, ...] = ()
        if isinstance(type_node, YMap):
            kind = "enum"
            members = tuple(
                Member(
                    _text(item, "id"),
                    plain(item.values["value"]) if "value" in item.values else _text(item, "id"),
                    _text(item, "brief"),
                    _text(item, "stability") or None,
                )
                for item in _maps(type_node.values.get("members"))
            )
        else:
            kind = _text(node, "type")
        found = plain(node.values["examples"]) if "examples" in node.values else None
        examples = () if found is None else tuple(found) if isinstance(found, list) else (found,)
        attribute = WeaverAttribute(
            key=key,
            type=kind,
            brief=_text(node, "brief"),
            stability=_text(node, "stability") or "development",
            position=node.position,
            file=self.current,
            note=_text(node, "note"),
            members=members,
            examples=examples,
            annotations=_mapping(node.values.get("annotations")),
        )
        if key in self.registry.attributes:
            first = self.registry.attributes[key].position
            self.report(
                "WEAVER_DUPLICATE",
                Severity.ERROR,
                f"attribute '{key}' is defined twice (first at {first}); keep one definition "
                "and refer to it with 'ref'",
                node.position,
            )
            return
        self.registry.attributes[key] = attribute

    def read_v1(self, root: YMap, path: str) -> None:
        """A v1 file: every group is an attribute group for ``extends``; metrics are kept."""
        for group in _maps(root.values.get("groups")):
            group_id = _text(group, "id")
            kind = _text(group, "type")
            entry = _Group(group_id, group.position, extends=_text(group, "extends") or None)
            for attribute in _maps(group.values.get("attributes")):
                if "ref" not in attribute.values and "id" in attribute.values:
                    self.define(attribute, "id")
                entry.refs.append(("ref", attribute))
            self.groups[group_id] = entry
            if kind == "metric":
                self.pending.append((group, "v1", entry, self.current))
            elif kind != "attribute_group":
                self.skip(path, f"{kind or 'untyped'} group '{group_id}'")
        self.read_imports(root)

    def read_v2(self, root: YMap, path: str) -> None:
        """A v2 file: attributes, attribute groups, metrics; other signals are reported."""
        for attribute in _maps(root.values.get("attributes")):
            self.define(attribute, "key")
        for group in _maps(root.values.get("attribute_groups")):
            group_id = _text(group, "id")
            entry = _Group(group_id, group.position)
            for item in _maps(group.values.get("attributes")):
                entry.refs.append(("ref_group" if "ref_group" in item.values else "ref", item))
            self.groups[group_id] = entry
        for metric in _maps(root.values.get("metrics")):
            entry = _Group(f"metric.{_text(metric, 'name')}", metric.position)
            for item in _maps(metric.values.get("attributes")):
                entry.refs.append(("ref_group" if "ref_group" in item.values else "ref", item))
            self.pending.append((metric, "v2", entry, self.current))
        for section in ("spans", "events", "entities"):
            for item in _maps(root.values.get(section)):
                self.skip(
                    path,
                    f"{section[:-1] if section != 'entities' else 'entity'} "
                    f"'{_text(item, 'name') or _text(item, 'id') or _text(item, 'type')}'",
                )
        for section in (
            "metric_refinements",
            "span_refinements",
            "event_refinements",
            "entity_refinements",
        ):
            for item in _maps(root.values.get(section)):
                self.skip(path, f"{section[:-1].replace('_', ' ')} '{_text(item, 'id')}'")
        self.read_imports(root)

    def read_imports(self, root: YMap) -> None:
        """``imports.metrics``: wildcards of metric names from a dependency."""
        imports = root.values.get("imports")
        if not isinstance(imports, YMap):
            return
        for section, node in imports.values.items():
            patterns = plain(node)
            if not isinstance(patterns, list):
                continue
            for pattern in patterns:
                if section == "metrics" and isinstance(pattern, str):
                    self.imports.append((pattern, _where(imports, section)))
                else:
                    self.skip(root.path, f"import of {section} '{pattern}'")

    # --- resolution ---------------------------------------------------------------

    def level(self, node: YMap) -> tuple[str, str | None]:
        """A reference's requirement level and, for conditionally_required, its condition."""
        found = node.values.get("requirement_level")
        if found is None:
            return "recommended", None
        data = plain(found)
        if isinstance(data, str) and data in _LEVELS:
            return data, None
        if isinstance(data, dict) and len(data) == 1:
            ((level, text),) = data.items()
            if level in _LEVELS:
                return str(level), str(text) if level == "conditionally_required" else None
        self.report(
            "WEAVER_SKIPPED",
            Severity.WARNING,
            f"requirement_level {data!r} is not one of {', '.join(_LEVELS)} (or a mapping of "
            "one to its text); read as recommended: fix the level in the registry",
            _where(node, "requirement_level"),
        )
        return "recommended", None

    def group_refs(self, group: _Group, seen: tuple[str, ...]) -> dict[str, WeaverRef]:
        """A group's references, ``extends`` and ``ref_group`` expanded, later ones winning."""
        out: dict[str, WeaverRef] = {}
        if group.extends is not None:
            parent = self.groups.get(group.extends)
            if parent is None:
                self.report(
                    "WEAVER_REF_UNKNOWN",
                    Severity.ERROR,
                    f"group '{group.id}' extends '{group.extends}', which no file of the "
                    "registry defines; fix the id or add the file that defines it",
                    group.position,
                )
            elif parent.id in seen:
                self.report(
                    "WEAVER_REF_UNKNOWN",
                    Severity.ERROR,
                    f"group '{group.id}' extends itself through {' -> '.join(seen)}; break "
                    "the cycle",
                    group.position,
                )
            else:
                out.update(self.group_refs(parent, (*seen, parent.id)))
        for kind, node in group.refs:
            if kind == "ref_group":
                target = _text(node, "ref_group")
                found = self.groups.get(target)
                if found is None or target in seen:
                    why = "no file defines it" if found is None else "it is a cycle"
                    self.report(
                        "WEAVER_REF_UNKNOWN",
                        Severity.ERROR,
                        f"ref_group '{target}' cannot be resolved ({why}); fix the id",
                        node.position,
                    )
                    continue
                out.update(self.group_refs(found, (*seen, target)))
                continue
            key = _text(node, "ref") or _text(node, "id")
            level, condition = self.level(node)
            annotations = _mapping(node.values.get("annotations"))
            out[key] = WeaverRef(key, level, node.position, condition, annotations)
        return out

    def resolve(self) -> None:
        """Turn every pending metric into a :class:`WeaverMetric` with explicit references."""
        for node, fmt, group, path in self.pending:
            refs = self.group_refs(group, (group.id,))
            for ref in refs.values():
                if ref.key not in self.registry.attributes:
                    self.report(
                        "WEAVER_REF_UNKNOWN",
                        Severity.ERROR,
                        f"attribute ref '{ref.key}' names no attribute of the registry or its "
                        "dependencies; fix the name, or add the dependency with a "
                        "registry_path to the manifest",
                        ref.position,
                    )
            name = _text(node, "metric_name" if fmt == "v1" else "name")
            deprecated = node.values.get("deprecated")
            self.registry.metrics.append(
                WeaverMetric(
                    name=name,
                    instrument=_text(node, "instrument"),
                    unit=_text(node, "unit") if "unit" in node.values else None,
                    brief=_text(node, "brief"),
                    stability=_text(node, "stability") or "development",
                    position=node.position,
                    file=path,
                    group_id=_text(node, "id") if fmt == "v1" else None,
                    note=_text(node, "note"),
                    deprecated=_deprecation(deprecated),
                    attributes=tuple(r for r in refs.values() if r.key in self.registry.attributes),
                    annotations=_mapping(node.values.get("annotations")),
                    requirement_level=(_text(node, "requirement_level") or None)
                    if fmt == "v2"
                    else None,
                )
            )

    def finish(self) -> None:
        """Report each file's skipped definitions once, as one warning."""
        for path, what in sorted(self.skipped.items()):
            self.report(
                "WEAVER_SKIPPED",
                Severity.WARNING,
                f"{len(what)} definition(s) a catalog cannot hold were skipped: "
                f"{', '.join(what[:5])}{' ...' if len(what) > 5 else ''}; a catalog holds "
                "metrics only",
                Position(path),
            )


def _deprecation(node: YNode | None) -> Mapping[str, object] | None:
    """``deprecated`` as a mapping; the legacy string form as an uncategorized note."""
    if node is None:
        return None
    data = plain(node)
    if isinstance(data, str):
        return {"reason": "uncategorized", "note": data}
    return data if isinstance(data, dict) else None


def _definition_files(root: Path, registry: Registry) -> list[Path]:
    """``*.yaml``/``*.yml`` below ``root`` as Weaver loads them: hidden entries skipped."""
    found: list[Path] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith(".") or not name.endswith(_SUFFIXES):
                continue
            path = Path(folder) / name
            if path.parent == root and name in MANIFEST_NAMES:
                continue
            found.append(path)
            if len(found) > MAX_FILES:
                registry.diagnostics.append(
                    Diagnostic(
                        "WEAVER_FILE",
                        Severity.ERROR,
                        f"the registry holds more than {MAX_FILES} definition files; point "
                        "at the registry's own folder, not a tree above it",
                        Position(root.as_posix()),
                    )
                )
                return []
    return found


def _read_manifest(root: Path, registry: Registry, display: str) -> None:
    for name in MANIFEST_NAMES:
        path = root / name
        if not path.is_file():
            continue
        loaded = load_file(path, f"{display}/{name}")
        registry.diagnostics.extend(loaded.diagnostics)
        if isinstance(loaded.root, YMap):
            data = plain(loaded.root)
            registry.manifest = data if isinstance(data, dict) else {}
        if name != MANIFEST_NAMES[0]:
            registry.diagnostics.append(
                Diagnostic(
                    "WEAVER_FILE",
                    Severity.WARNING,
                    f"{name} is the manifest's deprecated name; rename it to {MANIFEST_NAMES[0]}",
                    Position(f"{display}/{name}"),
                )
            )
        return


def _dependencies(root: Path, manifest: Mapping[str, object]) -> list[Path]:
    """Local folders of the manifest's dependencies (``registry_path``), relative to ``root``."""
    found: list[Path] = []
    dependencies = manifest.get("dependencies")
    for item in dependencies if isinstance(dependencies, list) else ():
        path = item.get("registry_path") if isinstance(item, dict) else None
        if isinstance(path, str) and path:
            candidate = root / path
            if candidate.is_dir():
                found.append(candidate)
    return found


def load_registry(root: Path, *, display: str | None = None, _depth: int = 0) -> Registry:
    """Read the registry folder ``root`` (both formats) and resolve its metrics' references.

    ``display`` is how diagnostics name the folder (default: ``root`` as given).
    Never raises for bad input: every problem is a diagnostic.
    """
    shown = display if display is not None else root.as_posix()
    registry = Registry(root)
    if not root.is_dir():
        registry.diagnostics.append(
            Diagnostic(
                "WEAVER_FILE",
                Severity.ERROR,
                "is not a folder; pass the folder holding the registry's manifest.yaml",
                Position(shown),
            )
        )
        return registry
    _read_manifest(root, registry, shown)
    reader = _Reader(registry)
    dependencies: list[Registry] = []
    if _depth < _MAX_DEPENDENCY_DEPTH:
        for folder in _dependencies(root, registry.manifest):
            dependency = load_registry(folder, display=f"{shown}/{folder.name}", _depth=_depth + 1)
            dependencies.append(dependency)
            registry.diagnostics.extend(dependency.diagnostics)
            for key, attribute in dependency.attributes.items():
                registry.attributes.setdefault(key, attribute)
    for path in _definition_files(root, registry):
        rel = path.relative_to(root).as_posix()
        loaded = load_file(path, f"{shown}/{rel}")
        registry.diagnostics.extend(loaded.diagnostics)
        if not isinstance(loaded.root, YMap):
            continue
        registry.files.append(rel)
        reader.current = rel
        if _text(loaded.root, "file_format") == "definition/2":
            reader.read_v2(loaded.root, loaded.path)
        elif "groups" in loaded.root.values:
            reader.read_v1(loaded.root, loaded.path)
        else:
            reader.report(
                "WEAVER_FILE",
                Severity.ERROR,
                "is neither a v1 definition file (groups:) nor a v2 one (file_format: "
                "definition/2); Weaver refuses a stray YAML file in a registry: move it out",
                Position(loaded.path),
            )
    reader.resolve()
    _import(reader, dependencies)
    reader.finish()
    return registry


def _import(reader: _Reader, dependencies: list[Registry]) -> None:
    """Bring in the dependencies' metrics the ``imports`` wildcards name."""
    for pattern, where in reader.imports:
        matched = [
            metric
            for dependency in dependencies
            for metric in dependency.metrics
            if fnmatch.fnmatchcase(metric.name, pattern)
        ]
        if not matched:
            reader.report(
                "WEAVER_SKIPPED",
                Severity.WARNING,
                f"imports.metrics '{pattern}' matches no metric of a local dependency; give "
                "the dependency a registry_path in the manifest to import it",
                where,
            )
        known = {metric.name for metric in reader.registry.metrics}
        for metric in matched:
            if metric.name not in known:
                reader.registry.metrics.append(dataclasses.replace(metric, imported=True))
                known.add(metric.name)
