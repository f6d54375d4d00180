"""A Weaver registry as catalog files: :func:`import_registry`.

Two kinds of metric come in:

* metrics :mod:`codegen.weaver.export` wrote carry ``annotations.metric_catalog``,
  and ``metric-catalog.json`` beside them holds their files, loops and bookkeeping:
  they become the rows they were (teed or recorded), in the file they came from;
* any other metric (the semantic conventions') becomes a recorded row, in one
  catalog file per registry file, its attributes in the file that defines them.

What the catalog cannot hold is reported (``WEAVER_SKIPPED`` and friends), never
dropped silently: array and template attributes (and the refs to them), a
``conditionally_required`` ref's condition, annotations on attribute refs (a
metric's and an attribute's own are kept as its ``annotations``). A rename target
the registry lacks is kept as a series outside the catalog, and reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

import yaml

from metric_catalog.series_rules import STABILITY_LEVELS
from metric_catalog.vocabulary import METRIC_NAME_PREFIX, check_namespace

from ..catalog.annotations import CODE_GENERATION, METRIC_VALUE_TYPE, annotation_problem
from ..catalog.diagnostics import Diagnostic, Position, Severity
from ..safe_fs import read_regular
from .export import ANNOTATION, CATALOG_JSON, INSTRUMENTS, OTHER_MEMBER
from .registry import Registry, WeaverAttribute, WeaverMetric, WeaverRef

__all__ = ["DEFAULT_BUDGET", "ImportResult", "import_registry"]

DEFAULT_BUDGET: Final = 64
"""``max_cardinality`` given to an open string attribute (the catalog requires a budget)."""

_KINDS: Final = {instrument: kind for kind, instrument in INSTRUMENTS.items()}
_TYPES: Final = {"string": "string", "int": "int", "double": "double", "boolean": "bool"}
_LEVELS: Final = ("required", "recommended", "opt_in")
_MAX_JSON_BYTES: Final = 16 * 1024 * 1024
_SLUG: Final = re.compile(r"[^a-z0-9]+")
_SPACE: Final = re.compile(r"\s+")


@dataclass(slots=True)
class ImportResult:
    """Catalog files by name (``<module>.yaml``) as text, and what the import reported."""

    files: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


@dataclass(slots=True)
class _File:
    """One catalog file being built."""

    module: str
    owner: str
    description: str
    header: dict[str, object] = field(default_factory=dict)
    teed: list[dict[str, object]] = field(default_factory=list)
    recorded: list[dict[str, object]] = field(default_factory=list)
    attributes: list[dict[str, object]] = field(default_factory=list)
    tail: dict[str, object] = field(default_factory=dict)
    dropped: dict[str, list[str]] = field(default_factory=dict)
    budgeted: list[str] = field(default_factory=list)
    """Open attributes (strings and enums) given :data:`DEFAULT_BUDGET` (the catalog needs one)."""

    def document(self) -> dict[str, object]:
        out: dict[str, object] = {
            "owner": self.owner,
            "module": self.module,
            "description": self.description,
            **self.header,
        }
        for key, value in (
            ("teed", self.teed),
            ("recorded", self.recorded),
            ("attributes", self.attributes),
        ):
            if value:
                out[key] = value
        out.update({key: value for key, value in self.tail.items() if value})
        return out


def _fold(text: str) -> str:
    """Whitespace folded to single spaces (semconv briefs are often folded YAML)."""
    return _SPACE.sub(" ", text).strip()


def _slug(text: str, fallback: str) -> str:
    """A lowercase identifier made of ``text`` (module names, owner components)."""
    slug = _SLUG.sub("_", text.lower()).strip("_")
    return slug if slug[:1].isalpha() else f"{fallback}_{slug}".rstrip("_")


def _number(value: object) -> str:
    """A bound as the catalog writes it: quoted, whole numbers without ``.0``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _range(bounds: object) -> dict[str, str]:
    """``resolve``'s range bounds back to ``range: {min|above, max|below}``."""
    if not isinstance(bounds, Mapping):
        return {}
    out: dict[str, str] = {}
    if bounds.get("low") is not None:
        out["above" if bounds.get("low_exclusive") else "min"] = _number(bounds["low"])
    if bounds.get("high") is not None:
        out["below" if bounds.get("high_exclusive") else "max"] = _number(bounds["high"])
    return out


def _ref_fields(ours: Mapping[str, object]) -> dict[str, object]:
    """A ref's catalog-only fields from its annotation: derivation and enum subset."""
    out: dict[str, object] = {}
    derive = _derive(ours.get("derive"))
    if derive is not None:
        out["derive"] = derive
    values = ours.get("values")
    if isinstance(values, list) and values:
        out["values"] = [_value_text(value) for value in values]
    return out


def _derive(found: object) -> dict[str, object] | None:
    """``resolve``'s derivation (``from``, ``map``, ``default``) as the catalog writes it."""
    if not isinstance(found, Mapping) or not isinstance(found.get("map"), Mapping):
        return None
    out: dict[str, object] = {"from": found.get("from"), "map": dict(found["map"])}
    if found.get("default") is not None:
        out["default"] = found["default"]
    return out


@dataclass(slots=True)
class _Importer:
    registry: Registry
    prefix: str
    result: ImportResult = field(default_factory=ImportResult)
    files: dict[str, _File] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    """Registry metric name -> catalog series name (``prefix`` applied)."""
    refused: set[str] = field(default_factory=set)
    """Attributes the catalog cannot hold (arrays, templates, any)."""

    def report(self, code: str, severity: Severity, message: str, where: Position | None) -> None:
        self.result.diagnostics.append(Diagnostic(code, severity, message, where))

    def name(self, metric_name: str) -> str:
        """The series name: ``prefix`` put before a name that lacks it."""
        if self.prefix and not metric_name.startswith(self.prefix):
            return self.prefix + metric_name
        return metric_name

    def file_for(self, module: str, owner: str, description: str) -> _File:
        found = self.files.get(module)
        if found is None:
            found = self.files[module] = _File(module, owner, description)
        return found

    def foreign_file(self, rel: str, namespace: str = "") -> _File:
        """The catalog file of a registry file (``jvm/metrics.yaml`` -> ``jvm_metrics``).

        With ``namespace`` (a metric's), the file holding that namespace's metrics: the
        registry file's own, unless its rows are in another namespace already, then one
        more file (``..._hw``), since a catalog file has one namespace.
        """
        stem = rel.rsplit(".", 1)[0]
        module = _slug(stem, "registry")
        found = self.files.get(module)
        if found is not None and (found.teed or found.recorded):
            held = str(found.header.get("namespace", METRIC_NAME_PREFIX))
        else:
            held = namespace  # no row yet: the file takes this one
        if namespace and held != namespace:
            module = _slug(f"{stem}_{namespace}", "registry")
        owner = ".".join(_slug(part, "m") for part in stem.split("/"))
        source = self.registry.schema_url or self.registry.root.name
        description = f"Imported from {rel} of the Weaver registry {source}."
        built = self.file_for(module, owner, description)
        if namespace and namespace != METRIC_NAME_PREFIX and not (built.teed or built.recorded):
            built.header["namespace"] = namespace
        return built

    def namespace_of(self, series: str) -> str:
        """The namespace a foreign series is imported in: its first component (``jvm.``
        for ``jvm.memory.used``), so its name is kept as the registry spells it; ``rl.``
        for a name that has none (validate then says what to write)."""
        head = series.split(".", 1)[0] + "."
        if "." not in series:
            return METRIC_NAME_PREFIX
        try:
            return check_namespace(head)
        except ValueError:
            return METRIC_NAME_PREFIX

    # --- attributes ---------------------------------------------------------------

    def attribute(
        self, attribute: WeaverAttribute, ours: Mapping[str, object], *, native: bool
    ) -> None:
        """A catalog attribute from a definition; arrays, templates and any are refused.

        A ``native`` one (exported from a catalog) keeps its texts as they are; a
        foreign one gets whitespace folded and a description where it has none.
        """
        target = self.files.get(str(ours.get("module"))) if ours.get("module") else None
        if target is None:
            target = self.foreign_file(attribute.file)
        kind = _TYPES.get(attribute.type)
        if attribute.type == "enum":
            kind = str(ours.get("type") or _member_type(attribute))
        if kind is None:
            self.refused.add(attribute.key)
            self.report(
                "WEAVER_SKIPPED",
                Severity.WARNING,
                f"attribute '{attribute.key}' has type {attribute.type}, which a catalog "
                "attribute cannot be (string, int, double or boolean); it and the refs to it "
                "are left out",
                attribute.position,
            )
            return
        out: dict[str, object] = {
            "name": attribute.key,
            "type": kind,
            "description": attribute.brief
            if native
            else _fold(attribute.brief) or f"The {attribute.key} attribute.",
            "stability": self.stability(attribute.stability, attribute.key, attribute.position),
        }
        members = [m for m in attribute.members if m.value != OTHER_MEMBER]
        # Open: semconv's fallback member, or the catalog's own mark (an int enum has no
        # string member to fall back to).
        is_open = len(members) < len(attribute.members) or ours.get("open") is True
        if attribute.type == "enum" and members:
            out["values"] = [
                {
                    "value": _value_text(m.value),
                    "description": m.brief if native else _fold(m.brief) or _value_text(m.value),
                }
                for m in members
            ]
            if is_open:
                out["open"] = "true"
                out["max_cardinality"] = str(ours.get("max_cardinality") or DEFAULT_BUDGET)
                if "max_cardinality" not in ours:
                    target.budgeted.append(attribute.key)
        elif kind == "string":
            budget = ours.get("max_cardinality") or DEFAULT_BUDGET
            out["max_cardinality"] = str(budget)
            if attribute.type == "enum":
                self.report(
                    "WEAVER_SKIPPED",
                    Severity.WARNING,
                    f"attribute '{attribute.key}' is an open enum that lists no value but "
                    f"{OTHER_MEMBER}; it is imported as an open string with max_cardinality "
                    f"{budget}",
                    attribute.position,
                )
            elif "max_cardinality" not in ours:
                target.budgeted.append(attribute.key)
        if ours.get("spans_segments"):
            out["spans_segments"] = "true"
        self.note_and_examples(attribute, out, native=native)
        own = self.own_annotations(attribute.annotations, attribute.key, attribute.position)
        if own:
            out["annotations"] = own
        target.attributes.append(out)

    def note_and_examples(
        self, attribute: WeaverAttribute, out: dict[str, object], *, native: bool
    ) -> None:
        """The attribute's note, and its examples where the catalog takes them (open strings)."""
        if attribute.note.strip():
            out["note"] = attribute.note if native else attribute.note.strip()
        examples = [_value_text(e) for e in attribute.examples if not isinstance(e, list | dict)]
        if examples and out.get("type") == "string" and "values" not in out:
            out["examples"] = list(dict.fromkeys(e for e in examples if e))
        elif attribute.examples:
            self.report(
                "WEAVER_SKIPPED",
                Severity.WARNING,
                f"attribute '{attribute.key}': its examples are not kept; only an open string "
                "catalog attribute takes examples",
                attribute.position,
            )

    def stability(self, stability: str, what: str, where: Position) -> str:
        if stability in STABILITY_LEVELS:
            return stability
        read = "development"
        self.report(
            "WEAVER_SKIPPED",
            Severity.WARNING,
            f"'{what}' is {stability}, which the catalog has no level for; imported as {read}",
            where,
        )
        return read

    # --- metrics -------------------------------------------------------------------

    def refs(self, metric: WeaverMetric, target: _File) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for ref in metric.attributes:
            if ref.key in self.refused:
                continue
            out.append(self.ref(metric, ref, target))
        return out

    def ref(self, metric: WeaverMetric, ref: WeaverRef, target: _File) -> dict[str, object]:
        ours = _ours(ref.annotations)
        level = ref.requirement_level
        if level not in _LEVELS:
            self.report(
                "WEAVER_SKIPPED",
                Severity.WARNING,
                f"metric '{metric.name}': attribute '{ref.key}' is {level}"
                f"{f' ({ref.condition})' if ref.condition else ''}, which a row's attribute "
                "cannot be; imported as recommended",
                ref.position,
            )
            level = "recommended"
        out: dict[str, object] = {"ref": ref.key, "requirement_level": level}
        out.update(_ref_fields(ours))
        if set(ref.annotations) - {ANNOTATION}:
            target.dropped.setdefault("attribute ref annotations", []).append(
                f"{metric.name}/{ref.key}"
            )
        return out

    def ref_entry(self, ref: Mapping[str, object]) -> dict[str, object]:
        """An exported ref mapping (``ref``, ``requirement_level``, annotations) as a row's."""
        out: dict[str, object] = {
            "ref": ref.get("ref"),
            "requirement_level": ref.get("requirement_level"),
        }
        annotations = ref.get("annotations")
        out.update(_ref_fields(_ours(annotations) if isinstance(annotations, Mapping) else {}))
        return out

    def deprecated(
        self, metric: WeaverMetric, ours: Mapping[str, object]
    ) -> dict[str, object] | None:
        """The row's ``deprecated``; a rename target the registry lacks is reported and left out."""
        found = metric.deprecated
        if found is None:
            return None
        # An exported row says its own (or no) release; a foreign one, the registry's version.
        since = ours.get("deprecated_since") if ours else self.registry.version
        out: dict[str, object] = {"since": str(since)} if since else {}
        target = found.get("renamed_to") or ours.get("replaced_by")
        if isinstance(target, str) and target in self.names:
            out["replaced_by"] = self.names[target]
        elif isinstance(target, str) and target:
            # A series outside the catalog is a replacement it may name (validate warns
            # REPLACED_BY_EXTERNAL); one the exported row did not say was outside is news.
            out["replaced_by"] = self.name(target)
            if ours.get("replaced_by_external") is not True:
                self.report(
                    "WEAVER_RENAMED_TARGET",
                    Severity.WARNING,
                    f"metric '{metric.name}' is renamed to '{target}', which the registry "
                    f"does not define; the row's replaced_by names {self.name(target)!r}, a "
                    "series outside the catalog (import the registry that defines it too "
                    "to have it here)",
                    metric.position,
                )
        note = found.get("note")
        if isinstance(note, str) and note.strip():
            out["note"] = note if ours else _fold(note)
        return out

    def metric(self, metric: WeaverMetric) -> None:
        ours = _ours(metric.annotations)
        kind = _KINDS.get(metric.instrument)
        if kind is None:
            self.report(
                "WEAVER_FIELD",
                Severity.ERROR,
                f"metric '{metric.name}': instrument {metric.instrument!r} is none of "
                f"{', '.join(_KINDS)}; it is left out",
                metric.position,
            )
            return
        if ours.get("module") and str(ours["module"]) in self.files:
            target = self.files[str(ours["module"])]
        else:
            target = self.foreign_file(metric.file, self.namespace_of(self.names[metric.name]))
        row = _row_fields(ours, target)
        unit = ours.get("logged_unit", metric.unit)
        row.update(
            name=self.names[metric.name],
            kind=kind,
            unit=unit if isinstance(unit, str) else "",
            description=metric.brief if ours else _fold(metric.brief),
            stability=self.stability(metric.stability, metric.name, metric.position),
        )
        if metric.note.strip():
            row["note"] = metric.note if ours else metric.note.strip()
        deprecated = self.deprecated(metric, ours)
        if deprecated is not None:
            row["deprecated"] = deprecated
        value_type = _value_type(metric.annotations)
        if value_type == "int":
            row["value_type"] = "int"
        row.update(_tail_fields(ours))
        own = self.own_annotations(metric.annotations, metric.name, metric.position)
        if own:
            row["annotations"] = own
        refs = self.refs(metric, target)
        if refs:
            row["attributes"] = refs
        self.dropped(metric, target)
        (target.teed if ours.get("section") == "teed" else target.recorded).append(row)

    def own_annotations(
        self, annotations: Mapping[str, object], what: str, where: Position
    ) -> dict[str, object]:
        """A definition's annotations but the catalog's own and the value type export
        writes: the row's or attribute's ``annotations``, or ``{}`` (reported) when
        the catalog would refuse them (too big or deep)."""
        own = {key: value for key, value in annotations.items() if key != ANNOTATION}
        generation = own.get(CODE_GENERATION)
        if isinstance(generation, Mapping):
            rest = {k: v for k, v in generation.items() if k != METRIC_VALUE_TYPE}
            if rest:
                own[CODE_GENERATION] = rest
            else:
                del own[CODE_GENERATION]
        problem = annotation_problem(own)
        if problem is None:
            return own
        self.report(
            "WEAVER_SKIPPED",
            Severity.WARNING,
            f"'{what}': its annotations are not kept: a catalog's {problem}",
            where,
        )
        return {}

    def dropped(self, metric: WeaverMetric, target: _File) -> None:
        """Note what of ``metric`` no catalog field holds."""
        if metric.requirement_level == "opt_in" and not _ours(metric.annotations):
            target.dropped.setdefault("opt_in signal levels", []).append(metric.name)

    def finish(self) -> None:
        for module, built in sorted(self.files.items()):
            text = yaml.safe_dump(built.document(), sort_keys=False, allow_unicode=True, width=100)
            source = self.registry.schema_url or self.registry.root.as_posix()
            self.result.files[f"{module}.yaml"] = (
                f"# Imported by metric-catalog import weaver from {source}.\n{text}"
            )
            for what, names in sorted(built.dropped.items()):
                self.report(
                    "WEAVER_SKIPPED",
                    Severity.WARNING,
                    f"{module}.yaml: {len(names)} {what} not kept, the catalog has no field "
                    f"for them ({_shown(names)})",
                    None,
                )
            if built.budgeted:
                self.report(
                    "WEAVER_SKIPPED",
                    Severity.WARNING,
                    f"{module}.yaml: {len(built.budgeted)} open attribute(s) given "
                    f"max_cardinality {DEFAULT_BUDGET}, which the registry does not say "
                    f"({_shown(built.budgeted)}); set each to the most (other) values it may take",
                    None,
                )


def _shown(names: list[str]) -> str:
    """The first five names, then an ellipsis."""
    return ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")


def _ours(annotations: Mapping[str, object]) -> Mapping[str, object]:
    found = annotations.get(ANNOTATION)
    return found if isinstance(found, Mapping) else {}


def _value_type(annotations: Mapping[str, object]) -> str:
    found = annotations.get("code_generation")
    kind = found.get("metric_value_type") if isinstance(found, Mapping) else None
    return "int" if kind == "int" else "number"


def _value_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return _number(value)


def _member_type(attribute: WeaverAttribute) -> str:
    """An enum's catalog type from its members' values (semconv enums are mostly strings)."""
    values = [m.value for m in attribute.members if m.value != OTHER_MEMBER]
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int"
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "double"
    return "string"


def _row_fields(ours: Mapping[str, object], target: _File) -> dict[str, object]:
    """A teed row's key fields, in the order the catalog writes them."""
    out: dict[str, object] = {}
    if ours.get("section") != "teed":
        return out
    out["logger_key"] = ours.get("logger_key")
    prefixes = ours.get("prefixes")
    if isinstance(prefixes, list) and prefixes != target.header.get("prefixes"):
        out["prefixes"] = prefixes
    return out


def _config_or_number(ours: Mapping[str, object], key: str) -> str | None:
    found = ours.get(f"{key}_config") or ours.get(key)
    return None if found is None else str(found)


def _tail_fields(ours: Mapping[str, object]) -> dict[str, object]:
    """The catalog-only fields after a row's description, from ``annotations.metric_catalog``."""
    out: dict[str, object] = {}
    teed = ours.get("section") == "teed"
    if teed:
        level = ours.get("requirement_level")
        if level not in (None, "recommended"):
            out["requirement_level"] = level
        if ours.get("condition"):
            out["condition"] = ours["condition"]
        if ours.get("emitted_by"):
            out["emitted_by"] = ours["emitted_by"]
        for key in ("first_step", "every"):
            found = _config_or_number(ours, key)
            if found is not None:
                out[key] = found
        if ours.get("step_axis"):
            out["step_axis"] = ours["step_axis"]
        if ours.get("phase"):
            out["phase"] = _number(ours["phase"])
        if ours.get("at_last_step") is True:
            out["at_last_step"] = "true"
        if ours.get("temporality") == "cumulative":
            out["temporality"] = "cumulative"
        if ours.get("non_finite") == "allowed":
            out["non_finite"] = "allowed"
    if ours.get("cardinality_limit") is not None:
        out["cardinality_limit"] = str(ours["cardinality_limit"])
    if "range" in ours:
        out["range"] = _range(ours["range"])
    for key in ("goal", "sum_of", "no_lint"):
        if ours.get(key):
            out[key] = ours[key]
    return out


def _catalog_json(registry: Registry, importer: _Importer) -> list[Mapping[str, object]]:
    """The files of ``metric-catalog.json`` beside the registry (``[]`` without one)."""
    path = registry.root / CATALOG_JSON
    if not path.is_file():
        return []
    try:
        document = json.loads(read_regular(path, _MAX_JSON_BYTES))
    except (OSError, ValueError) as exc:
        importer.report(
            "WEAVER_FILE",
            Severity.ERROR,
            f"cannot read it ({exc}); re-export the registry, or delete the file to import "
            "the metrics without their loops and bookkeeping",
            Position(path.as_posix()),
        )
        return []
    files = document.get("files") if isinstance(document, dict) else None
    return [f for f in files if isinstance(f, Mapping)] if isinstance(files, list) else []


def _restore_files(importer: _Importer, entries: Iterable[Mapping[str, object]]) -> None:
    """Recreate the exported catalog files: headers, loops, bookkeeping, non-scalar rows."""
    for entry in entries:
        module = str(entry.get("module") or "")
        if not module:
            continue
        built = importer.file_for(module, str(entry.get("owner")), str(entry.get("description")))
        prefixes = entry.get("prefixes")
        if isinstance(prefixes, list) and prefixes:
            built.header["prefixes"] = prefixes
        namespace = entry.get("namespace")
        if isinstance(namespace, str) and namespace != METRIC_NAME_PREFIX:
            built.header["namespace"] = namespace
        if entry.get("emitted_by"):
            built.header["emitted_by"] = entry["emitted_by"]
        built.tail["loops"] = [_loop(loop) for loop in _list(entry.get("loops"))]
        built.tail["bookkeeping"] = _list(entry.get("bookkeeping"))


def _loop(loop: Mapping[str, object]) -> dict[str, object]:
    out: dict[str, object] = {"name": loop.get("name"), "description": loop.get("description")}
    if loop.get("signature"):
        out["signature"] = loop["signature"]
    steps = [
        {"key": s.get("key"), **({"prefix": s["prefix"]} if s.get("prefix") else {})}
        for s in _list(loop.get("step_keys"))
    ]
    if steps:
        out["step_keys"] = steps
    return out


def _list(found: object) -> list[Mapping[str, object]]:
    return [item for item in found if isinstance(item, Mapping)] if isinstance(found, list) else []


def import_registry(registry: Registry, *, prefix: str = "") -> ImportResult:
    """Catalog files for ``registry``'s metrics and attributes, and what was not kept.

    ``prefix`` (e.g. ``rl.``) is put before every metric name that lacks it; without
    one, each metric keeps its name and is imported in its namespace (``jvm.memory.used``
    into a file declaring ``namespace: jvm.``).
    """
    importer = _Importer(registry, prefix)
    entries = _catalog_json(registry, importer)
    _restore_files(importer, entries)
    importer.names = {metric.name: importer.name(metric.name) for metric in registry.metrics}
    # A row with no instrument may replace a metric: its name is known too.
    importer.names.update(
        (str(row.get("name")), str(row.get("name")))
        for entry in entries
        for row in _list(entry.get("rows_without_instrument"))
    )
    owners = {str(a): str(e.get("module")) for e in entries for a in _names(e.get("attributes"))}
    for attribute in sorted(registry.attributes.values(), key=lambda a: (a.file, a.key)):
        ours = dict(_ours(attribute.annotations))
        if attribute.key in owners:
            ours.setdefault("module", owners[attribute.key])
        importer.attribute(attribute, ours, native=attribute.key in owners)
    for metric in registry.metrics:
        importer.metric(metric)
    for entry in entries:
        _restore_non_scalar(importer, entry)
    importer.finish()
    return importer.result


def _names(found: object) -> list[str]:
    return [str(item) for item in found] if isinstance(found, list) else []


def _restore_non_scalar(importer: _Importer, entry: Mapping[str, object]) -> None:
    """The rows with no instrument ``metric-catalog.json`` kept, back in their file."""
    built = importer.files.get(str(entry.get("module")))
    if built is None:
        return
    for row in _list(entry.get("rows_without_instrument")):
        ours = _ours(row)
        out = _row_fields(ours, built)
        out["name"] = row.get("name")
        for key in ("kind", "unit"):
            if row.get(key):
                out[key] = row[key]
        out["description"] = row.get("description")
        if row.get("note"):
            out["note"] = row["note"]
        out["stability"] = row.get("stability")
        deprecated = row.get("deprecated")
        if isinstance(deprecated, Mapping):
            out["deprecated"] = {k: v for k, v in deprecated.items() if v}
        out["value_type"] = row.get("value_type")
        out.update(_tail_fields(ours))
        if isinstance(row.get("annotations"), Mapping) and row["annotations"]:
            out["annotations"] = row["annotations"]
        refs = [importer.ref_entry(ref) for ref in _list(row.get("attributes"))]
        if refs:
            out["attributes"] = refs
        (built.teed if ours.get("section") == "teed" else built.recorded).append(out)
