"""Attributes, several prefixes and key families in the loaded model (builder, crossfile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import MetricRow
from codegen.catalog.pipeline import load_and_check
from codegen.catalog.precedence import shadowed_by
from codegen.generate.resolve import resolve_catalog

ATTRIBUTES = """\
owner: nemo_rl.telemetry
module: attributes
description: Attributes shared by every owner.
attributes:
  - name: rl.efficiency.category
    type: string
    description: Efficiency category the time is attributed to.
    stability: beta
    values:
      - value: idle/refit_bubble
        description: Waiting for a weight refit.
      - value: init/total
        description: Start-up before the first step.
  - name: rl.setup.phase
    type: string
    description: Startup phase that was timed.
    max_cardinality: "64"
  - name: rl.worker.rank
    type: int
    description: Rank of the worker that logged the value.
    values:
      - value: "0"
        description: The driver.
      - value: "1"
        description: The first worker.
  - name: rl.overflowed
    type: bool
    description: Whether the value was clipped.
"""

OWNER = """\
owner: nemo_rl.telemetry.metrics
module: efficiency
description: Efficiency and setup series.
prefixes: [train, ""]
teed:
  - logger_key: efficiency/{rl.efficiency.category}_s
    name: rl.efficiency.seconds
    kind: gauge
    unit: s
    description: Time attributed to one efficiency category.
    no_lint: [UNIT_IN_NAME]
    cardinality_limit: "100"
    attributes:
      - ref: rl.efficiency.category
      - ref: rl.worker.rank
        requirement_level: opt_in
  - logger_key: efficiency/efficiency_pct
    name: rl.efficiency.pct
    kind: gauge
    unit: "%"
    description: Productive share of the driver's wall clock.
    no_lint: [UNIT_IN_NAME]
  - logger_key: efficiency/total_waste_s
    prefix: ""
    name: rl.efficiency.waste
    kind: gauge
    unit: s
    description: Time spent on no category of productive work.
  - logger_key: "{rl.setup.phase}_time_s"
    prefix: timing/setup
    name: rl.setup.duration
    kind: gauge
    unit: s
    description: Wall clock spent in one startup phase.
    attributes:
      - ref: rl.setup.phase
  - logger_key: parallel_init_enabled
    prefix: timing/setup
    name: rl.setup.parallel_init
    kind: gauge
    unit: ""
    description: Whether the workers were started in parallel (1) or not (0).
recorded:
  - name: rl.vllm.batch.duration
    kind: histogram
    unit: s
    description: Wall clock of one batched generate() call.
    attributes:
      - ref: rl.overflowed
"""


def write(root: Path, name: str, text: str) -> None:
    """``catalog/<name>.yaml`` under ``root``."""
    (root / "catalog").mkdir(exist_ok=True)
    (root / "catalog" / f"{name}.yaml").write_text(text, encoding="utf-8")


def rows_by_name(root: Path) -> dict[str, MetricRow]:
    """Load the catalog under ``root``; it must be clean."""
    result = load_and_check(root=root)
    assert [d.format() for d in result.diagnostics] == []
    return {row.name: row for _f, row in result.catalog.rows()}


def test_shared_attributes_families_and_prefixes_load_clean(tmp_path: Path) -> None:
    """A family beside plain keys outside its enum, open families, several prefixes: no finding."""
    write(tmp_path, "attributes", ATTRIBUTES)
    write(tmp_path, "efficiency", OWNER)
    rows = rows_by_name(tmp_path)
    seconds = rows["rl.efficiency.seconds"]
    assert seconds.prefixes == ("train", "")
    assert seconds.prefix == "train"
    assert seconds.other_prefixes == ("",)
    assert seconds.is_family
    assert seconds.cardinality_limit == 100
    assert [(r.name, r.requirement_level) for r in seconds.attributes] == [
        ("rl.efficiency.category", "required"),  # a placeholder defaults to required
        ("rl.worker.rank", "opt_in"),
    ]
    assert rows["rl.efficiency.waste"].prefixes == ("",)
    assert not rows["rl.efficiency.pct"].is_family
    assert rows["rl.setup.duration"].prefixes == ("timing/setup",)
    recorded = rows["rl.vllm.batch.duration"]
    assert recorded.prefixes == ()
    assert [(r.name, r.requirement_level) for r in recorded.attributes] == [
        ("rl.overflowed", "recommended")
    ]


def test_attribute_model_derives_label_constant_type_and_values(tmp_path: Path) -> None:
    """Label, constant, type alias, domain and typed values come from the declaration."""
    write(tmp_path, "attributes", ATTRIBUTES)
    result = load_and_check(root=tmp_path)
    assert result.ok
    attributes = result.catalog.attributes()
    category = attributes["rl.efficiency.category"]
    assert category.label == "rl_efficiency_category"
    assert category.constant_name == "RL_EFFICIENCY_CATEGORY"
    assert category.type_name == "RlEfficiencyCategory"
    assert category.domain == ("idle/refit_bubble", "init/total")
    assert category.stability == "beta"
    assert attributes["rl.setup.phase"].domain is None
    assert attributes["rl.setup.phase"].max_cardinality == 64
    assert attributes["rl.setup.phase"].stability == "development"
    assert attributes["rl.worker.rank"].typed_values() == (0, 1)
    assert attributes["rl.overflowed"].domain == ("true", "false")


def test_file_sets_prefix_and_prefixes_is_an_error(tmp_path: Path) -> None:
    """Both file-level forms at once build nothing from the file and say which to keep."""
    write(tmp_path, "attributes", ATTRIBUTES)
    write(
        tmp_path,
        "efficiency",
        OWNER.replace('prefixes: [train, ""]', 'prefix: train\nprefixes: [""]'),
    )
    result = load_and_check(root=tmp_path)
    assert [(d.code, d.position.line if d.position else 0) for d in result.diagnostics] == [
        ("PREFIX_AND_PREFIXES", 5)
    ]
    assert [f.module for f in result.catalog.files] == ["attributes"]


def test_unknown_attribute_in_another_file_is_suggested(tmp_path: Path) -> None:
    """A reference is resolved across files, with a did-you-mean from every file's names."""
    write(tmp_path, "attributes", ATTRIBUTES)
    write(tmp_path, "efficiency", OWNER.replace("- ref: rl.worker.rank", "- ref: rl.worker.rnk"))
    result = load_and_check(root=tmp_path)
    (finding,) = result.diagnostics
    assert finding.code == "UNKNOWN_ATTRIBUTE"
    assert "did you mean 'rl.worker.rank'?" in finding.message


def test_plain_key_inside_an_enum_family_is_taken_by_the_literal_row(tmp_path: Path) -> None:
    """``efficiency/init/total_s`` is one of the family's keys; the literal row is more
    specific, so it takes the key (no overlap) and the family lists it as shadowing."""
    write(tmp_path, "attributes", ATTRIBUTES)
    write(
        tmp_path,
        "efficiency",
        OWNER.replace("efficiency/total_waste_s", "efficiency/init/total_s"),
    )
    result = load_and_check(root=tmp_path)
    assert list(result.diagnostics) == []
    shadowed = shadowed_by(result.catalog)
    assert list(shadowed.values()) == [("rl.efficiency.waste",)]
    (family,) = shadowed
    rows = resolve_catalog(result.catalog)["rows"]
    assert isinstance(rows, list)
    by_name = {row["name"]: row for row in rows}
    assert by_name[family]["shadowed_by"] == ["rl.efficiency.waste"]
    assert by_name["rl.efficiency.waste"]["shadowed_by"] == []


@pytest.mark.parametrize(
    ("second_prefix", "shadows"),
    [("timing/setup", True), ("timing/train", False), ('""', False)],
)
def test_a_plain_key_shadows_an_open_family_only_under_a_shared_prefix(
    tmp_path: Path, second_prefix: str, shadows: bool
) -> None:
    """``{rl.setup.phase}_time_s`` would take any ``*_time_s`` key of its own prefix; a
    literal row there is more specific, which is no error."""
    write(tmp_path, "attributes", ATTRIBUTES)
    extra = (
        "  - logger_key: policy_init_time_s\n"
        f"    prefix: {second_prefix}\n"
        "    name: rl.setup.policy_init\n    kind: gauge\n    unit: s\n"
        "    description: Wall clock spent building the policy workers.\n"
    )
    write(tmp_path, "efficiency", OWNER.replace("recorded:\n", extra + "recorded:\n"))
    result = load_and_check(root=tmp_path)
    assert [d.code for d in result.diagnostics] == []
    found = list(shadowed_by(result.catalog).values())
    assert found == ([("rl.setup.policy_init",)] if shadows else [])


def test_two_families_of_equal_rank_sharing_a_key_are_an_overlap(tmp_path: Path) -> None:
    """Neither ``{phase}_time_s`` nor ``init_{phase}_s`` is more specific (the same literal
    length, one open placeholder each), and ``init_x_time_s`` matches both."""
    write(tmp_path, "attributes", ATTRIBUTES)
    extra = (
        '  - logger_key: "init_{rl.setup.phase}_s"\n'
        "    prefix: timing/setup\n"
        "    name: rl.setup.init\n    kind: gauge\n    unit: s\n"
        "    description: Wall clock spent initialising one phase.\n"
        "    attributes:\n      - ref: rl.setup.phase\n"
    )
    write(tmp_path, "efficiency", OWNER.replace("recorded:\n", extra + "recorded:\n"))
    (finding,) = load_and_check(root=tmp_path).diagnostics
    assert finding.code == "KEY_PATTERN_OVERLAP"
    assert "neither is more specific" in finding.message


@pytest.mark.parametrize(
    ("key", "prefix", "others", "family"),
    [
        ("k", "train", (), False),
        ("k", "train", ("",), False),
        ("{a}_s", "train", (), True),
        ("k", "validation-{a}", (), True),
        ("k", "train", ("", "validation-{a}"), True),
    ],
)
def test_a_row_is_a_family_when_its_key_or_any_prefix_has_a_placeholder(
    key: str, prefix: str, others: tuple[str, ...], family: bool
) -> None:
    """is_family looks at the logger key, the prefix and every other prefix."""
    from codegen.catalog.diagnostics import Position

    row = MetricRow(
        section="teed",
        name="rl.x",
        kind="gauge",
        unit="",
        description="X.",
        stability="development",
        position=Position("catalog/x.yaml", 1, 1),
        logger_key=key,
        prefix=prefix,
        other_prefixes=others,
    )
    assert row.is_family is family
