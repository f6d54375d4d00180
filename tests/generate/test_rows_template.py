"""The row layout lives in ``templates/python/_rows.j2`` only; every field of every row class
reaches the generated module through it.

A generated module's blocks (attribute constants, teed and recorded rows) are the
macros of ``python/_rows.j2``. The built-in layout renders them in an environment
of its own (the shipped file is trusted); a project that replaces ``_rows.j2`` gets
its own layout, rendered in the sandbox. Both ways render the one template, so
these tests render every block both ways and check the text against what each row
declares: the keyword arguments of each ``TeedMetric``/``RecordedMetric`` call (and
of each ``MetricAttribute``) must be exactly the row's fields, and a row with every
optional field set must name every field of its class, so a field added to a row
class cannot be left out of the layout.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.diagnostics import Position
from codegen.catalog.model import (
    Attribute,
    AttributeRef,
    AttributeValue,
    Catalog,
    CatalogFile,
    Deprecation,
    Derivation,
    MetricRow,
)
from codegen.catalog.pipeline import load_and_check
from codegen.catalog.precedence import row_choice
from codegen.cli import main
from codegen.config import Config
from codegen.generate.python import render_rows
from metric_catalog.value_rules import ValueRange
from metric_catalog.vocabulary import MetricAttribute, RecordedMetric, TeedMetric
from tests.adopter_project import ROW as ADOPTER_ROW
from tests.docs_fixtures import HOSTILE_DESCRIPTIONS, fixture_catalog, row

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "codegen" / "generate" / "templates" / "python" / "_rows.j2"
CONFIG = Config(root=REPO)
PATH = "catalog/fixture_rows.yaml"
AT = Position(PATH, 1, 1)
ROW_CLASSES = {"TeedMetric": TeedMetric, "RecordedMetric": RecordedMetric}


def both_ways(catalog: Catalog) -> list[tuple[str, str, str]]:
    """(file, built-in text, sandboxed text) for every file of ``catalog``."""
    attributes = catalog.attributes()
    return [
        (
            f.path,
            render_rows(f, attributes, CONFIG, template=False),
            render_rows(f, attributes, CONFIG, template=True),
        )
        for f in catalog.files
    ]


# --- what a row declares, and what a rendered module says ----------------------------------


def _typed(attribute: Attribute, text: str) -> object:
    """A value as written in the catalog, as the attribute's type reads it."""
    if attribute.type == "bool":
        return text == "true"
    if attribute.type == "double":
        return float(text)
    return int(text) if attribute.type == "int" else text


def _expected_attribute(ref: AttributeRef, attributes: dict[str, Attribute]) -> dict[str, Any]:
    """The ``MetricAttribute`` keyword arguments a row's attribute reference declares."""
    attribute = attributes[ref.name]
    out: dict[str, Any] = {"name": ref.name, "requirement": ref.requirement_level}
    if attribute.type != "string":
        out["type"] = attribute.type
    if attribute.values:
        out["values"] = tuple(_typed(attribute, v.value) for v in attribute.values)
    if attribute.max_cardinality is not None:
        out["max_cardinality"] = attribute.max_cardinality
    if attribute.spans_segments:
        out["spans_segments"] = True
    if attribute.open_enum:
        out["open_enum"] = True
    if ref.derive is not None:
        source = attributes[ref.derive.source]
        out["derived_from"] = ref.derive.source
        out["derive_map"] = tuple(
            (_typed(source, key), _typed(attribute, value)) for key, value in ref.derive.table
        )
        if ref.derive.default is not None:
            out["derive_default"] = _typed(attribute, ref.derive.default)
    return out


def expected_fields(one: MetricRow, attributes: dict[str, Attribute]) -> dict[str, Any]:
    """The keyword arguments a row's generated constant must be built with."""
    out: dict[str, Any] = {}
    if one.logger_key is not None:
        out["logger_key"] = one.logger_key
    out.update(name=one.name, kind=one.kind, unit=one.unit, description=one.description)
    if one.logger_key is not None:
        out["prefix"] = one.prefix
    if one.attributes:
        out["attributes"] = tuple(_expected_attribute(r, attributes) for r in one.attributes)
    if one.other_prefixes:
        out["other_prefixes"] = one.other_prefixes
    if one.cardinality_limit is not None:
        out["cardinality_limit"] = one.cardinality_limit
    if one.logger_key is not None and one.deprecated is not None and one.deprecated.replaced_by:
        # A recorded row's replacement is documentation only: RecordedMetric has no field.
        out["replaced_by"] = one.deprecated.replaced_by
    if one.temporality != "delta":
        out["temporality"] = one.temporality
    if one.logged_unit:
        out["logged_unit"] = one.logged_unit
    if one.logger_key is not None and not one.is_scalar:  # int is a number: its range says so
        out["value_type"] = one.value_type
    if one.logger_key is not None and one.emitted_by:
        out["emitted_by"] = one.emitted_by
    if one.declared_range is not None or one.value_type == "int":
        # In the exported unit: a range of a row logged in ms is written in seconds.
        found = one.exported_range if one.is_scalar else one.declared_range
        out["value_range"] = (found or ValueRange()).text()
    if one.goal:
        out["goal"] = one.goal
    if one.logger_key is not None:  # the schedule, as the catalog writes it
        for name, number, config in (
            ("every", one.every, one.every_config),
            ("first_step", one.first_step, one.first_step_config),
        ):
            text = str(number) if number is not None else config
            if text:
                out[name] = text
    if one.logger_key is not None and one.phase:
        out["phase"] = one.phase
    if one.logger_key is not None and one.non_finite != "reported":
        out["non_finite"] = one.non_finite
    choice = row_choice(one)
    if one.logger_key is not None and choice is not None:
        value = (choice.value,) if choice.test == "equals" else ()
        out["choice"] = ("ConfigChoice", choice.path, choice.test, *value)
    if one.namespace != "rl.":  # the default namespace is not written
        out["namespace"] = one.namespace
    return out


def _value(node: ast.expr) -> Any:
    """A keyword's value: a literal, or a ``MetricAttribute(...)`` call as its keywords."""
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name), ast.dump(node)
        if node.func.id == "ConfigChoice":  # positional: (path, test[, value])
            return ("ConfigChoice", *(_value(arg) for arg in node.args))
        assert node.func.id == "MetricAttribute", node.func.id
        return _keywords(node)
    if isinstance(node, ast.Tuple):
        return tuple(_value(item) for item in node.elts)
    return ast.literal_eval(node)


def _keywords(call: ast.Call) -> dict[str, Any]:
    assert not call.args, "rows and attributes are built from keyword arguments only"
    names = [k.arg for k in call.keywords]
    assert len(names) == len(set(names)), names
    return {str(k.arg): _value(k.value) for k in call.keywords}


def rendered_rows(text: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each row constant of a rendered module: its class and its keyword arguments."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for node in ast.parse(text).body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.value, ast.Call):
            continue
        func = node.value.func
        if isinstance(func, ast.Name) and func.id in ROW_CLASSES:
            assert isinstance(node.target, ast.Name)
            out[node.target.id] = (func.id, _keywords(node.value))
    return out


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def assert_every_row_renders_its_fields(catalog_file: CatalogFile) -> None:
    """Both ways, each row's constant holds exactly the fields the row declares."""
    attributes = {a.name: a for a in catalog_file.attributes}
    for way in (False, True):
        text = render_rows(catalog_file, attributes, CONFIG, template=way)
        found = rendered_rows(text)
        for one in catalog_file.rows:
            cls, keywords = found[one.constant_name]
            assert cls == ("TeedMetric" if one.logger_key is not None else "RecordedMetric")
            assert keywords == expected_fields(one, attributes), (way, one.name)
            assert set(keywords) <= _fields(ROW_CLASSES[cls])
            for attribute in keywords.get("attributes", ()):
                assert set(attribute) <= _fields(MetricAttribute)


# --- rows with every optional field ---------------------------------------------------------


def _attribute(name: str, kind: str, values: tuple[str, ...] = (), **more: Any) -> Attribute:
    return Attribute(
        name=name,
        type=kind,
        description=f"The {name} attribute.",
        stability="beta",
        position=AT,
        path=PATH,
        values=tuple(AttributeValue(v, f"value {v}", AT) for v in values),
        **more,
    )


ATTRIBUTES = (
    _attribute("rl.fixture.phase", "string", ("train", "eval")),
    _attribute("rl.fixture.rank", "int", ("0", "1", "2")),
    _attribute("rl.fixture.dataset", "string", max_cardinality=8, spans_segments=True),
    _attribute("rl.fixture.sampled", "bool"),
    _attribute("rl.fixture.temperature", "double", max_cardinality=4),
    _attribute("rl.fixture.split", "string", ("train", "test")),
    _attribute("rl.fixture.error", "string", ("timeout",), max_cardinality=4, open_enum=True),
)
"""One attribute of each shape: string and int enums, an open string spanning segments,
a bool, a double, an enum the others derive into, and an open enum."""

DERIVATIONS = {
    "rl.fixture.split": Derivation("rl.fixture.phase", (("train", "train"), ("eval", "test"))),
    "rl.fixture.sampled": Derivation("rl.fixture.rank", (("0", "true"),), default="false"),
}

UNITS = st.sampled_from([("", ""), ("s", ""), ("s", "ms"), ("By", "KiBy"), ("{token}", "")])


@st.composite
def attribute_refs(draw: st.DrawFn) -> tuple[AttributeRef, ...]:
    """Some of the attributes, each at some requirement level, derived or not."""
    names = draw(st.lists(st.sampled_from([a.name for a in ATTRIBUTES]), unique=True))
    refs = []
    for name in names:
        level = draw(st.sampled_from(["required", "recommended", "opt_in"]))
        derive = DERIVATIONS.get(name) if draw(st.booleans()) else None
        refs.append(AttributeRef(name, level, AT, derive=derive))
    return tuple(refs)


@st.composite
def rows(draw: st.DrawFn, *, teed: bool) -> MetricRow:
    """A teed or recorded row, each optional field set or not (a recorded row's
    ``emitted_by`` is presence only: its class has no such field)."""
    unit, logged_unit = draw(UNITS)
    kind = draw(st.sampled_from(["gauge", "counter", "histogram", "up_down_counter"]))
    replaced_by = draw(st.one_of(st.none(), st.text(min_size=1, max_size=60)))
    deprecated = None
    if draw(st.booleans()):
        deprecated = Deprecation("0.1.0", replaced_by if teed else None, "")
    return MetricRow(
        section="teed" if teed else "recorded",
        name="rl.fixture.any",
        kind=kind,
        unit=unit,
        description=draw(st.text(min_size=1, max_size=200)),
        stability="beta",
        position=AT,
        logger_key="any/{rl.fixture.phase}" if teed and draw(st.booleans()) else None,
        prefix=draw(st.sampled_from(["train", "", "eval"])) if teed else None,
        deprecated=deprecated,
        attributes=draw(attribute_refs()),
        other_prefixes=tuple(draw(st.lists(st.sampled_from(["val", "x/y"]), unique=True)))
        if teed
        else (),
        cardinality_limit=draw(st.one_of(st.none(), st.integers(1, 10_000))),
        temporality="cumulative" if teed and kind == "counter" and draw(st.booleans()) else "delta",
        logged_unit=logged_unit,
        emitted_by=tuple(draw(st.lists(st.sampled_from(["sft", "grpo_sync"]), unique=True))),
        value_type=draw(st.sampled_from(["number", "table", "text"])) if teed else "number",
    )


def _file(*one: MetricRow) -> CatalogFile:
    return CatalogFile(
        path=PATH,
        owner="fixture-rows",
        module="fixture_rows",
        description="Rows with every optional field.",
        teed=tuple(r for r in one if r.logger_key is not None),
        recorded=tuple(r for r in one if r.logger_key is None),
        attributes=ATTRIBUTES,
    )


def _teed(one: MetricRow) -> MetricRow:
    return one if one.logger_key is not None else replace(one, logger_key="any", section="teed")


@settings(max_examples=60, deadline=None)
@given(one=st.one_of(rows(teed=True).map(_teed), rows(teed=False)))
def test_any_row_renders_exactly_its_fields_both_ways(one: MetricRow) -> None:
    assert_every_row_renders_its_fields(_file(one))


def _fullest(teed: bool) -> MetricRow:
    """A row with every optional field of its class set."""
    refs = tuple(
        AttributeRef(a.name, "required", AT, derive=DERIVATIONS.get(a.name)) for a in ATTRIBUTES
    )
    return MetricRow(
        section="teed" if teed else "recorded",
        name="rl.fixture.fullest." + ("teed" if teed else "recorded"),
        kind="counter",
        unit="s",
        description="Every field set.",
        stability="beta",
        position=AT,
        logger_key="fullest/{rl.fixture.phase}" if teed else None,
        prefix="train" if teed else None,
        deprecated=Deprecation("0.1.0", "rl.fixture.other" if teed else None, "Gone."),
        attributes=refs,
        other_prefixes=("val",) if teed else (),
        cardinality_limit=100,
        temporality="cumulative" if teed else "delta",
        logged_unit="ms",
        emitted_by=("sft", "grpo_sync"),
        value_type="table" if teed else "number",
        declared_range=ValueRange(0.0, 5000.0),
        goal="minimize",
        every=5 if teed else None,
        first_step_config="config.trainer.warmup" if teed else None,
        phase=-1 if teed else 0,
        non_finite="allowed" if teed else "reported",
        namespace="rl.fixture.",  # a namespace other than the default is written out
        requirement_level="conditionally_required" if teed else "recommended",
        condition='config.algorithm["adv-estimator"] == "gae"' if teed else None,
    )


@pytest.mark.parametrize("cls", [TeedMetric, RecordedMetric], ids=lambda c: c.__name__)
@pytest.mark.parametrize("template", [False, True], ids=["built-in", "sandboxed"])
def test_a_row_with_every_optional_field_names_every_field_of_its_class(
    cls: type, template: bool
) -> None:
    one = _fullest(cls is TeedMetric)
    catalog_file = _file(one)
    attributes = {a.name: a for a in ATTRIBUTES}
    text = render_rows(catalog_file, attributes, CONFIG, template=template)
    name, keywords = rendered_rows(text)[one.constant_name]
    assert name == cls.__name__
    assert set(keywords) == _fields(cls)
    assert set().union(*keywords["attributes"]) == _fields(MetricAttribute)
    assert keywords == expected_fields(one, attributes)


def test_a_row_logged_in_milliseconds_is_exported_in_seconds_both_ways() -> None:
    one = replace(_fullest(True), attributes=(), logged_unit="ms", unit="s")
    for _path, builtin, sandboxed in both_ways(Catalog((_file(one),))):
        assert '    logged_unit="ms",\n' in builtin
        assert builtin == sandboxed


# --- the repository's catalog and hostile text -----------------------------------------------


def test_every_block_of_this_repos_catalog_renders_the_same_both_ways() -> None:
    catalog = load_and_check(CONFIG.catalog_files(), root=REPO).catalog
    rendered = both_ways(catalog)
    assert sum(len(builtin) for _, builtin, _ in rendered) > 10_000
    for path, builtin, sandboxed in rendered:
        assert sandboxed == builtin, path
    attributes = catalog.attributes()
    for catalog_file in catalog.files:
        known = replace(catalog_file, attributes=tuple(attributes.values()))
        assert_every_row_renders_its_fields(known)


def test_hostile_and_deprecated_rows_render_the_same_both_ways() -> None:
    for _path, builtin, sandboxed in both_ways(fixture_catalog()):
        assert sandboxed == builtin
    for catalog_file in fixture_catalog().files:
        assert_every_row_renders_its_fields(catalog_file)


@pytest.mark.parametrize("key", sorted(HOSTILE_DESCRIPTIONS))
def test_hostile_descriptions_stay_strings_in_the_template_layout(key: str) -> None:
    hostile = row(
        "rl.fixture.hostile",
        line=1,
        path="catalog/fixture_h.yaml",
        description=HOSTILE_DESCRIPTIONS[key],
        logger_key="hostile",
    )
    first = fixture_catalog().files[0]
    text = render_rows(replace(first, teed=(hostile,), recorded=()), {}, CONFIG, template=True)
    assert HOSTILE_DESCRIPTIONS[key] in [
        node.value.value
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.keyword) and isinstance(node.value, ast.Constant)
    ]


# --- a project's own _rows.j2 ----------------------------------------------------------------

ROW = ADOPTER_ROW

TABLE = """\
[tool.metric-catalog]
catalog = ["catalog/*.yaml"]
package = "gen"
package-dir = "gen"
templates-dir = "templates"
"""

MILLISECONDS_ROW = """\
owner: myrl.algorithms.ppo
module: ppo
description: Metrics logged by the PPO loop.
prefix: train
teed:
  - logger_key: step_time
    name: rl.step.duration
    kind: gauge
    unit: ms
    description: Wall clock of one training step.
"""


def _project(tmp_path: Path, catalog: str, own_rows: str) -> None:
    (tmp_path / "pyproject.toml").write_text(TABLE, encoding="utf-8")
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "ppo.yaml").write_text(catalog, encoding="utf-8")
    (tmp_path / "templates" / "python").mkdir(parents=True)
    (tmp_path / "templates" / "python" / "_rows.j2").write_text(own_rows, encoding="utf-8")


def test_a_project_restyles_its_rows_by_replacing_rows_j2(tmp_path: Path) -> None:
    own = TEMPLATE.read_text(encoding="utf-8").replace(
        "{{ row.constant_name }}: Final = TeedMetric(",
        "# {{ row.name }} ({{ row.kind }}, {{ row.description | wordcount }} words)\n"
        "{{ row.constant_name }}: Final = TeedMetric(",
    )
    _project(tmp_path, ROW, own)
    assert main(["generate", "--root", str(tmp_path)]) == 0
    text = (tmp_path / "gen" / "ppo.py").read_text(encoding="utf-8")
    assert "\n# rl.value.loss (gauge, 6 words)\nVALUE_LOSS: Final = TeedMetric(\n" in text
    ast.parse(text)
    assert main(["check", "--root", str(tmp_path)]) == 0


def test_a_project_copying_rows_j2_still_exports_milliseconds_as_seconds(
    tmp_path: Path,
) -> None:
    _project(tmp_path, MILLISECONDS_ROW, TEMPLATE.read_text(encoding="utf-8"))
    assert main(["generate", "--root", str(tmp_path)]) == 0
    copied = (tmp_path / "gen" / "ppo.py").read_text(encoding="utf-8")
    (tmp_path / "templates" / "python" / "_rows.j2").unlink()
    assert main(["generate", "--root", str(tmp_path)]) == 0
    shipped = (tmp_path / "gen" / "ppo.py").read_text(encoding="utf-8")
    assert copied == shipped
    ((_cls, keywords),) = rendered_rows(shipped).values()
    assert (keywords["unit"], keywords["logged_unit"]) == ("s", "ms")


def test_a_replaced_rows_j2_is_sandboxed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(
        tmp_path,
        ROW,
        "{% macro teed_row(row, attributes) %}\n{{ row.__class__ }}\n{% endmacro %}\n"
        "{% macro recorded_row(row, attributes) %}{% endmacro %}\n"
        "{% macro attribute_block(attribute) %}{% endmacro %}\n",
    )
    assert main(["generate", "--root", str(tmp_path)]) == 2
    assert "templates/python/_rows.j2:2: access to attribute '__class__'" in capsys.readouterr().err
    assert not (tmp_path / "gen").exists()
