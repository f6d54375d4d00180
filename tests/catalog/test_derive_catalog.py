"""Derived attributes in the catalog: the ``derive`` field from YAML to generated code.

Each check has a firing case here (with its exact position) and a non-firing
neighbour; ``tests/cases/derive_*.yaml`` holds one bad file per rule for the
corpus. The generated module passes the derivation to ``MetricAttribute``.
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog, Derivation
from codegen.catalog.pipeline import load_and_check
from codegen.generate.python import render_python_modules
from metric_catalog import vocabulary
from metric_catalog._attributes import SeriesPoints

HEAD = """\
owner: nemo_rl.telemetry.metrics
module: derived
description: Derived attributes under test.
attributes:
  - name: rl.fixture.category
    type: string
    description: A category captured from the key.
    values:
      - value: init/total
        description: Start-up.
      - value: idle/refit_bubble
        description: Waiting for weights.
  - name: rl.fixture.window
    type: string
    description: A window derived from the category.
    values:
      - value: step
        description: One step.
      - value: run
        description: The whole run.
  - name: rl.fixture.phase
    type: string
    description: An open phase captured from the key.
    max_cardinality: "8"
  - name: rl.fixture.rank
    type: int
    description: A rank captured from the key.
    values:
      - value: "0"
        description: The first.
      - value: "1"
        description: The second.
  - name: rl.fixture.leader
    type: bool
    description: Whether the rank leads.
  - name: rl.fixture.weight
    type: double
    description: A weight derived from the rank.
    max_cardinality: "4"
teed:
  - logger_key: "efficiency/{rl.fixture.category}_s"
    name: rl.fixture.seconds
    kind: gauge
    unit: s
    description: Time of one category.
    no_lint: [UNIT_IN_NAME]
    attributes:
      - ref: rl.fixture.category
{refs}
"""

REF: int = HEAD.count("\n", 0, HEAD.index("{refs}")) + 1
"""Line of the first ref appended to HEAD (the category's ref is the line before)."""

WINDOW_FULL = """\
      - ref: rl.fixture.window
        requirement_level: required
        derive:
          from: rl.fixture.category
          map: {init/total: run, idle/refit_bubble: step}"""


def check(tmp_path: Path, refs: str, logger_key: str | None = None) -> list[tuple[str, int, int]]:
    """Load a file of HEAD with ``refs`` appended; its diagnostics as (code, line, column)."""
    text = HEAD.replace("{refs}", refs)
    if logger_key is not None:
        text = text.replace('"efficiency/{rl.fixture.category}_s"', logger_key)
    path = tmp_path / "derived.yaml"
    path.write_text(text, encoding="utf-8")
    result = load_and_check([path], root=tmp_path, lint=True)
    return [(d.code, d.position.line, d.position.column) for d in result.diagnostics if d.position]


def test_a_full_table_from_a_captured_attribute_is_clean(tmp_path: Path) -> None:
    """Non-firing baseline of every rule: a required derivation covering every value."""
    assert check(tmp_path, WINDOW_FULL) == []


@pytest.mark.parametrize(
    ("refs", "expected"),
    [
        # DERIVE_SOURCE_UNKNOWN: fires on a name not on the row, not on one that is.
        (WINDOW_FULL.replace("from: rl.fixture.category", "from: rl.fixture.phase"),
         [("DERIVE_SOURCE_UNKNOWN", REF + 3, 17)]),
        # DERIVE_MAP_KEY / DERIVE_MAP_VALUE, each at the offending key or value.
        (WINDOW_FULL.replace("idle/refit_bubble: step", "idle/refit: step"),
         [("DERIVE_NOT_TOTAL", REF + 1, 28), ("DERIVE_MAP_KEY", REF + 4, 34)]),
        (WINDOW_FULL.replace("idle/refit_bubble: step", "idle/refit_bubble: steps"),
         [("DERIVE_MAP_VALUE", REF + 4, 53)]),
        # DERIVE_NOT_TOTAL: a partial table may be recommended, not required ...
        (WINDOW_FULL.replace(", idle/refit_bubble: step", ""), [("DERIVE_NOT_TOTAL", REF + 1, 28)]),
        (WINDOW_FULL.replace(", idle/refit_bubble: step", "").replace(
            "        requirement_level: required\n", ""), []),
        # ... or required with a default covering the rest.
        (WINDOW_FULL.replace(", idle/refit_bubble: step", "") + "\n          default: step", []),
    ],
)  # fmt: skip
def test_derivation_rules_fire_at_the_offending_node(
    tmp_path: Path, refs: str, expected: list[tuple[str, int, int]]
) -> None:
    """Each rule fires once at its node, and its neighbour without the defect is clean."""
    assert check(tmp_path, refs) == expected


def test_a_chain_of_derivations_from_a_captured_attribute_is_clean(tmp_path: Path) -> None:
    """A derived attribute may be the source of another (DERIVE_SOURCE_NOT_CAPTURED silent)."""
    refs = (
        WINDOW_FULL
        + """
      - ref: rl.fixture.leader
        requirement_level: required
        derive:
          from: rl.fixture.window
          map: {run: "true", step: "false"}"""
    )
    assert check(tmp_path, refs) == []


def test_a_required_attribute_derived_from_a_recommended_one_is_not_total(
    tmp_path: Path,
) -> None:
    """The chain is only as total as its weakest link: a partial source leaves points bare."""
    refs = (
        WINDOW_FULL.replace("        requirement_level: required\n", "").replace(
            ", idle/refit_bubble: step", ""
        )
        + """
      - ref: rl.fixture.leader
        requirement_level: required
        derive:
          from: rl.fixture.window
          map: {run: "true", step: "false"}"""
    )
    assert check(tmp_path, refs) == [("DERIVE_NOT_TOTAL", REF + 5, 28)]


def test_a_source_no_placeholder_captures_is_reported(tmp_path: Path) -> None:
    """DERIVE_SOURCE_NOT_CAPTURED fires for a row whose key captures nothing."""
    found = check(tmp_path, WINDOW_FULL, logger_key="efficiency/total_s")
    assert found == [("DERIVE_SOURCE_NOT_CAPTURED", REF + 3, 17)]


def test_a_derivation_of_a_captured_attribute_is_reported(tmp_path: Path) -> None:
    """DERIVE_CAPTURED fires when a placeholder also captures the derived attribute."""
    key = '"efficiency/{rl.fixture.category}/{rl.fixture.window}_s"'
    assert check(tmp_path, WINDOW_FULL, logger_key=key) == [("DERIVE_CAPTURED", REF + 2, 9)]


def test_a_self_derivation_is_a_cycle(tmp_path: Path) -> None:
    """DERIVE_CYCLE fires for an attribute derived from itself; once, at ``from``."""
    refs = WINDOW_FULL.replace("from: rl.fixture.category", "from: rl.fixture.window")
    assert check(tmp_path, refs) == [("DERIVE_CYCLE", REF + 3, 17)]


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('{"0": "true", "1": "false"}', []),
        ('{"0": "yes"}', [("DERIVE_MAP_VALUE", REF + 4, 22)]),
        ('{"2": "true"}', [("DERIVE_MAP_KEY", REF + 4, 17)]),
        ('{zero: "true"}', [("DERIVE_MAP_KEY", REF + 4, 17)]),
    ],
)
def test_typed_keys_and_values_are_checked_by_type(
    tmp_path: Path, table: str, expected: list[tuple[str, int, int]]
) -> None:
    """An int source takes keys of its enum; a bool target takes only "true"/"false"."""
    refs = f"""\
      - ref: rl.fixture.rank
      - ref: rl.fixture.leader
        derive:
          from: rl.fixture.rank
          map: {table}"""
    key = '"efficiency/{rl.fixture.category}/{rl.fixture.rank}_s"'
    assert check(tmp_path, refs, logger_key=key) == expected


def test_an_open_source_needs_a_default_to_be_required(tmp_path: Path) -> None:
    """Any value of an open attribute may come, so only a default makes the table total."""
    refs = """\
      - ref: rl.fixture.phase
      - ref: rl.fixture.window
        requirement_level: required
        derive:
          from: rl.fixture.phase
          map: {policy_init: run}"""
    key = '"efficiency/{rl.fixture.category}/{rl.fixture.phase}_s"'
    assert check(tmp_path, refs, logger_key=key) == [("DERIVE_NOT_TOTAL", REF + 2, 28)]
    assert check(tmp_path, refs + "\n          default: step", logger_key=key) == []


def run_module(text: str, name: str) -> types.ModuleType:
    """Execute a generated module against a fresh, swapped-in registry (restored after)."""
    module = types.ModuleType(name)
    saved = (vocabulary._REGISTERED, vocabulary._RECORDED, vocabulary._FROZEN)
    vocabulary._REGISTERED, vocabulary._RECORDED, vocabulary._FROZEN = {}, {}, False
    try:
        exec(compile(text, f"{name}.py", "exec"), module.__dict__)
    finally:
        vocabulary._REGISTERED, vocabulary._RECORDED, vocabulary._FROZEN = saved
    return module


def load(tmp_path: Path, refs: str, logger_key: str | None = None) -> Catalog:
    """The file of HEAD with ``refs``, loaded clean."""
    text = HEAD.replace("{refs}", refs)
    if logger_key is not None:
        text = text.replace('"efficiency/{rl.fixture.category}_s"', logger_key)
    path = tmp_path / "derived.yaml"
    path.write_text(text, encoding="utf-8")
    result = load_and_check([path], root=tmp_path)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.catalog


def test_the_model_holds_the_derivation_with_positions(tmp_path: Path) -> None:
    """The ref keeps source, table (in order), default, and compares without positions."""
    catalog = load(tmp_path, WINDOW_FULL)
    (_file, row), *_ = catalog.rows()
    window = row.attributes[1]
    assert window.derive == Derivation(
        "rl.fixture.category", (("init/total", "run"), ("idle/refit_bubble", "step"))
    )
    assert window.derive is not None
    assert window.derive.lookup("init/total") == "run"
    assert window.requirement_level == "required"
    assert [p.line for p in window.derive.key_positions] == [REF + 4, REF + 4]


def test_the_generated_module_passes_typed_derivations(tmp_path: Path) -> None:
    """derived_from, derive_map and derive_default reach MetricAttribute, typed; ruff-clean."""
    refs = (
        """\
      - ref: rl.fixture.rank
      - ref: rl.fixture.leader
        derive:
          from: rl.fixture.rank
          map: {"0": "true"}
          default: "false"
      - ref: rl.fixture.weight
        derive:
          from: rl.fixture.rank
          map: {"0": "1.5", "1": "0.25"}
"""
        + WINDOW_FULL
    )
    key = '"efficiency/{rl.fixture.category}/{rl.fixture.rank}_s"'
    text = render_python_modules(load(tmp_path, refs, logger_key=key))[
        "src/metric_catalog/generated/derived.py"
    ]
    module = run_module(text, "derived_under_test")
    _category, _rank, leader, weight, window = module.FIXTURE_SECONDS.attributes
    assert (leader.derived_from, leader.derive_map, leader.derive_default) == (
        "rl.fixture.rank",
        ((0, True),),
        False,
    )
    assert weight.derive_map == ((0, 1.5), (1, 0.25))
    assert window.derive_map == (("init/total", "run"), ("idle/refit_bubble", "step"))
    assert "(required, derived from rl.fixture.category)" in " ".join(text.split())
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--diff", "--stdin-filename", "derived.py", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert formatted.returncode == 0, formatted.stdout


CATEGORIES = ("init/total", "idle/refit_bubble")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    table=st.dictionaries(
        st.sampled_from(CATEGORIES), st.sampled_from(["step", "run"]), min_size=1, max_size=2
    ),
    default=st.none() | st.sampled_from(["step", "run"]),
)
def test_the_tee_derives_what_the_catalog_declares(
    tmp_path: Path, table: dict[str, str], default: str | None
) -> None:
    """For any valid table, the generated row's tee fills exactly Derivation.lookup's value."""
    entries = ", ".join(f"{key}: {value}" for key, value in table.items())
    refs = f"""\
      - ref: rl.fixture.window
        derive:
          from: rl.fixture.category
          map: {{{entries}}}"""
    if default is not None:
        refs += f"\n          default: {default}"
    catalog = load(tmp_path, refs)
    (_file, row), *_ = catalog.rows()
    derive = row.attributes[1].derive
    assert derive is not None
    text = render_python_modules(catalog)["src/metric_catalog/generated/derived.py"]
    module = run_module(text, "derived_property")
    points = SeriesPoints(module.FIXTURE_SECONDS, {})
    for category in CATEGORIES:
        got = points.attributes({"rl.fixture.category": category}) or {}
        assert got.get("rl.fixture.window") == derive.lookup(category)
