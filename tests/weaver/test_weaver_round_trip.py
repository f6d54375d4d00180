"""Catalog -> Weaver registry -> catalog keeps every row's resolved fields (a property).

Random valid catalogs are built as data (rows teed and recorded, presence, cadence,
ranges, budgets, schedules with a phase, non-finite settings, deprecations with
replacements inside and outside the catalog, attributes with their levels, per-row
enum subsets and derivations, the team's own annotations of rows and attributes,
loops, bookkeeping, non-scalar rows), exported in both formats, read back, imported,
and compared with ``resolve``'s view of the original.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from codegen.catalog.pipeline import load_and_check
from codegen.weaver.export import FORMATS, export_registry
from codegen.weaver.importer import import_registry
from codegen.weaver.registry import load_registry
from metric_catalog.series_rules import METRIC_KINDS, STABILITY_LEVELS

SETTINGS = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

word = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
sentence = st.from_regex(r"[A-Z][a-z]{0,8}( [a-z]{1,8}){0,4}\.", fullmatch=True)
unit = st.sampled_from(["", "1", "s", "ms", "By", "{token}", "%", "{step}/s"])
note = st.sampled_from(["One line.", "Two lines.\nThe second.\n", "  Spaced  out. "])
# A team's own annotations: any YAML data, with semconv's code_generation among them.
annotations = st.fixed_dictionaries(
    {},
    optional={
        "ui": st.dictionaries(word, st.none() | st.booleans() | st.integers() | word, max_size=3),
        "links": st.lists(word, max_size=3),
        "code_generation": st.fixed_dictionaries({"exclude": st.booleans()}),
    },
).filter(bool)
version = st.from_regex(r"[0-9]\.[0-9]{1,2}(\.[0-9])?", fullmatch=True)
LOOPS = ("loop_a", "loop_b")


@st.composite
def attribute(draw: st.DrawFn, name: str) -> dict[str, Any]:
    """An attribute: a closed or open enum, an open string with a budget, or a boolean."""
    out: dict[str, Any] = {"name": name, "description": draw(sentence)}
    shape = draw(st.sampled_from(["enum", "open enum", "open", "bool"]))
    if shape in ("enum", "open enum"):
        values = draw(
            st.lists(
                st.sampled_from(["a", "b/c", "init/total", "0", "x-y"]),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
        out["type"] = "string"
        out["values"] = [{"value": v, "description": draw(sentence)} for v in values]
        if shape == "open enum":
            out["open"] = "true"
            out["max_cardinality"] = str(draw(st.integers(1, 500)))
    elif shape == "open":
        out["type"] = "string"
        out["max_cardinality"] = str(draw(st.integers(1, 500)))
        if draw(st.booleans()):
            out["examples"] = draw(st.lists(word, min_size=1, max_size=3, unique=True))
        if draw(st.booleans()):
            out["spans_segments"] = "true"
    else:
        out["type"] = "bool"
    if draw(st.booleans()):
        out["stability"] = draw(st.sampled_from(STABILITY_LEVELS))
    if draw(st.booleans()):
        out["note"] = draw(note)
    if draw(st.booleans()):
        out["annotations"] = draw(annotations)
    return out


@st.composite
def attribute_ref(draw: st.DrawFn, declared: dict[str, Any]) -> dict[str, Any]:
    """A row's ref to ``declared``, with its level and, for an enum, maybe a subset."""
    out: dict[str, Any] = {
        "ref": declared["name"],
        "requirement_level": draw(st.sampled_from(["required", "recommended", "opt_in"])),
    }
    values = [item["value"] for item in declared.get("values", [])]
    if values and "open" not in declared and draw(st.booleans()):
        out["values"] = draw(st.lists(st.sampled_from(values), min_size=1, unique=True))
    return out


@st.composite
def row(draw: st.DrawFn, tag: str, teed: bool, attributes: list[dict[str, Any]]) -> dict[str, Any]:
    """A valid row whose name and key are unique thanks to ``tag``."""
    out: dict[str, Any] = {}
    if teed:
        out["logger_key"] = f"{tag}/{draw(word)}"
        if draw(st.booleans()):
            out["prefixes"] = draw(
                st.lists(st.sampled_from(["train", "", "val"]), min_size=1, max_size=2, unique=True)
            )
    out["name"] = f"rl.{tag}.{draw(word)}"
    non_scalar = teed and draw(st.integers(0, 9)) == 0
    if not non_scalar:
        out["kind"] = draw(st.sampled_from(METRIC_KINDS))
        out["unit"] = draw(unit)
    out["description"] = draw(sentence)
    if draw(st.booleans()):
        out["note"] = draw(note)
    out["stability"] = draw(st.sampled_from(STABILITY_LEVELS))
    if draw(st.booleans()):
        out["annotations"] = draw(annotations)
    if non_scalar:
        out["value_type"] = draw(st.sampled_from(["table", "text", "image"]))
    elif draw(st.booleans()):
        out["value_type"] = "int"
    if teed:
        level = draw(
            st.sampled_from(["required", "recommended", "opt_in", "conditionally_required"])
        )
        out["requirement_level"] = level
        if level == "conditionally_required":
            out["condition"] = "when validation runs"
        if draw(st.booleans()):
            out["emitted_by"] = draw(st.lists(st.sampled_from(LOOPS), min_size=1, unique=True))
        if draw(st.booleans()):
            out["first_step"] = draw(st.sampled_from(["0", "10", "config.trainer.val_period"]))
        if draw(st.booleans()):
            out["every"] = draw(st.sampled_from(["5", "config.trainer.val_period"]))
            if draw(st.booleans()):
                out["phase"] = draw(st.sampled_from(["-1", "1", "3"]))
            if draw(st.booleans()):
                out["at_last_step"] = "true"
        if not non_scalar and draw(st.booleans()):
            out["non_finite"] = draw(st.sampled_from(["allowed", "reported"]))
        if out.get("kind") == "counter" and draw(st.booleans()):
            out["temporality"] = "cumulative"
    if not non_scalar:
        if draw(st.booleans()):
            out["cardinality_limit"] = str(draw(st.integers(2, 5000)))
        if draw(st.booleans()):
            bounds = draw(
                st.sampled_from(
                    [{}, {"min": "0"}, {"min": "0", "max": "1"}, {"above": "0"}, {"below": "2.5"}]
                )
            )
            out["range"] = bounds
        if draw(st.booleans()):
            out["goal"] = draw(st.sampled_from(["maximize", "minimize"]))
    if attributes and draw(st.booleans()):
        chosen = draw(
            st.lists(st.sampled_from(attributes), min_size=1, unique_by=lambda a: a["name"])
        )
        out["attributes"] = [draw(attribute_ref(declared)) for declared in chosen]
    if draw(st.booleans()):
        out["deprecated"] = {"since": draw(version)} if draw(st.booleans()) else {}
        if draw(st.booleans()):
            out["deprecated"]["note"] = draw(sentence)
    return out


@st.composite
def catalog(draw: st.DrawFn) -> list[dict[str, Any]]:
    """One to three owner files; the first declares the loops, attributes and bookkeeping."""
    names = [f"rl.a{i}.{draw(word)}" for i in range(draw(st.integers(0, 3)))]
    declared = [draw(attribute(name)) for name in names]
    files: list[dict[str, Any]] = []
    for index in range(draw(st.integers(1, 3))):
        data: dict[str, Any] = {
            "owner": f"pkg.m{index}",
            "module": f"m{index}_{draw(word)}",
            "description": draw(sentence),
        }
        if draw(st.booleans()):
            data["prefix"] = draw(st.sampled_from(["train", "", "timing/train"]))
        teed = [
            draw(row(f"f{index}t{i}", teed=True, attributes=declared))
            for i in range(draw(st.integers(0, 4)))
        ]
        recorded = [
            draw(row(f"f{index}r{i}", teed=False, attributes=declared))
            for i in range(draw(st.integers(0, 2)))
        ]
        if teed:
            data["teed"] = teed
        if recorded:
            data["recorded"] = recorded
        if index == 0:
            if names:
                data["attributes"] = declared
            data["loops"] = [
                {"name": loop, "description": draw(sentence), "signature": [f"train/{loop}_key"]}
                for loop in LOOPS
            ]
            if draw(st.booleans()):
                data["bookkeeping"] = [{"key": "time", "reason": draw(sentence)}]
        files.append(data)
    every = [r for f in files for section in ("teed", "recorded") for r in f.get(section, [])]
    for item in every:
        if "deprecated" in item and draw(st.booleans()):
            # A series of another catalog is a replacement too (REPLACED_BY_EXTERNAL).
            others = [r["name"] for r in every if r is not item] + ["rl.elsewhere.series"]
            if others:
                item["deprecated"]["replaced_by"] = draw(st.sampled_from(others))
    return files


def _load(folder: Path, files: dict[str, str]) -> Any:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return load_and_check(sorted(folder.glob("*.yaml")), root=folder, lint=False)


@SETTINGS
@given(files=catalog(), fmt=st.sampled_from(FORMATS))
def test_export_then_import_keeps_every_rows_resolved_fields(
    resolved_view: Callable[[Any], dict[str, Any]], files: list[dict[str, Any]], fmt: Any
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        texts = {f"{data['module']}.yaml": yaml.safe_dump(data, sort_keys=False) for data in files}
        original = _load(root / "catalog", texts)
        assume(original.ok)  # a draw the catalog's own cross-row rules refuse
        exported = export_registry(
            original.catalog, version="1.0.0", base_url="https://e.com/s", description="d.", fmt=fmt
        )
        for name, text in exported.items():
            (root / "registry").mkdir(exist_ok=True)
            (root / "registry" / name).write_text(text, encoding="utf-8")
        registry = load_registry(root / "registry")
        assert registry.diagnostics == []
        imported = import_registry(registry)
        back = _load(root / "back", imported.files)
    assert back.ok, [d.format() for d in back.diagnostics]
    assert resolved_view(back.catalog) == resolved_view(original.catalog)
