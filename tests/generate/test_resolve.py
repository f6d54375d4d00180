"""resolve: the whole resolved catalog, complete and byte-identical across runs and input order."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.catalog.diagnostics import Position
from codegen.catalog.model import Catalog, CatalogFile, Deprecation, Derivation, MetricRow
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.config import config_for_root
from codegen.generate.resolve import (
    RESOLVED_SCHEMA_VERSION,
    _derive,
    render_resolved,
    resolve_catalog,
)
from tests.catalog_projects import loaded_catalog

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "evolution"


def rows_by_name(catalog: Catalog) -> dict[str, dict[str, object]]:
    """Resolved rows keyed by series name."""
    doc = resolve_catalog(catalog)
    rows = doc["rows"]
    assert isinstance(rows, list)
    return {r["name"]: r for r in rows}


def test_a_resolved_row_carries_what_its_values_may_be(tmp_path: Path) -> None:
    text = (FIXTURES / "catalog" / "grpo.yaml").read_text(encoding="utf-8")
    text = text.replace(
        "    description: Mean rollout reward.\n",
        "    description: Mean rollout reward.\n"
        '    range: {min: "0", below: "1"}\n    goal: maximize\n',
    )
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "grpo.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert result.catalog is not None
    row = rows_by_name(result.catalog)["rl.reward.mean"]
    assert (row["range"], row["range_declared"], row["goal"]) == ("[0, 1)", True, "maximize")
    assert row["range_bounds"] == {
        "low": 0.0,
        "high": 1.0,
        "low_exclusive": False,
        "high_exclusive": True,
    }


def test_resolved_row_carries_every_derived_name_and_its_source(evolution_catalog: Catalog) -> None:
    row = rows_by_name(evolution_catalog)["rl.train.valid_tokens"]
    assert row == {
        "name": "rl.train.valid_tokens",
        "owner": "nemo_rl.algorithms.grpo",
        "module": "grpo",
        "file": "catalog/grpo.yaml",
        "section": "teed",
        "kind": "counter",
        "unit": "{token}",
        "logged_unit": "{token}",
        "description": "Valid (unmasked) tokens trained this step.",
        "stability": "development",
        "deprecated": None,
        "logger_key": "global_valid_toks",
        "prefix": "train",
        "qualified_logger_key": "train/global_valid_toks",
        "registry_key": "train_valid_tokens",
        "constant_name": "TRAIN_VALID_TOKENS",
        "python_constant": "metric_catalog.generated.grpo.TRAIN_VALID_TOKENS",
        "prometheus": {
            "name": "rl_train_valid_tokens_total",
            "series": ["rl_train_valid_tokens_total"],
        },
        "no_lint": [],
        "note": None,
        "annotations": {},
        "prefixes": ["train"],
        "placeholders": [],
        "attributes": [],
        "cardinality_limit": None,
        "temporality": "delta",
        "value_type": "number",
        # a counter's logged value is a step's change: its unit implies no range
        "range": None,
        "range_declared": False,
        "range_bounds": None,
        "goal": None,
        "sum_of": [],
        "shadowed_by": [],
        "shares_key_with": [],
        "source": "catalog/grpo.yaml:18:5",
        "field_sources": {
            "description": "catalog/grpo.yaml:22:18",
            "kind": "catalog/grpo.yaml:20:11",
            "logger_key": "catalog/grpo.yaml:18:17",
            "name": "catalog/grpo.yaml:19:11",
            "unit": "catalog/grpo.yaml:21:11",
        },
        "requirement_level": "recommended",
        "condition": None,
        "config_choice": None,
        "emitted_by": [],
        "first_step": None,
        "first_step_config": None,
        "every": None,
        "every_config": None,
        "phase": 0,
        "at_last_step": False,
        "non_finite": "reported",
        "step_axis": "step",
    }


@pytest.mark.parametrize(
    ("name", "key", "expected"),
    [
        ("rl.vllm.batch.duration", "prometheus", {
            "name": "rl_vllm_batch_duration_seconds",
            "series": [
                "rl_vllm_batch_duration_seconds_bucket",
                "rl_vllm_batch_duration_seconds_count",
                "rl_vllm_batch_duration_seconds_sum",
            ],
        }),
        ("rl.vllm.batch.duration", "prefix", None),
        ("rl.vllm.batch.duration", "qualified_logger_key", None),
        ("rl.step.duration", "prefix", "timing/train"),
        ("rl.sft.validation.loss", "qualified_logger_key", "validation/val_loss"),
        ("rl.reward.mean", "stability", "stable"),
        ("rl.kl.divergence", "deprecated", {
            "since": "0.2.0",
            "replaced_by": "rl.kl.reference",
            "note": "Renamed to say which policy it is measured against.",
        }),
        ("rl.vllm.batch.duration", "requirement_level", None),
        ("rl.vllm.batch.duration", "emitted_by", None),
        ("rl.sft.memory.usage", "prometheus", {
            "name": "rl_sft_memory_usage_bytes",
            "series": ["rl_sft_memory_usage_bytes"],
        }),
    ],
)  # fmt: skip
def test_resolved_fields_per_row(
    evolution_catalog: Catalog, name: str, key: str, expected: object
) -> None:
    assert rows_by_name(evolution_catalog)[name][key] == expected


def test_document_lists_files_and_rows_sorted(evolution_catalog: Catalog) -> None:
    doc = json.loads(render_resolved(evolution_catalog))
    assert doc["schema_version"] == RESOLVED_SCHEMA_VERSION
    assert [f["path"] for f in doc["files"]] == ["catalog/grpo.yaml", "catalog/sft.yaml"]
    names = [r["name"] for r in doc["rows"]]
    assert names == sorted(names)
    assert len(names) == 10
    assert doc["files"][1]["rows"] == [
        "rl.sft.memory.usage",
        "rl.sft.unmasked_tokens",
        "rl.sft.validation.loss",
    ]


def test_cli_output_is_byte_identical_across_runs_and_file_order(tmp_path: Path) -> None:
    # Two copies of the catalog whose files are listed in opposite orders on the command line.
    files = sorted((FIXTURES / "catalog").glob("*.yaml"))
    runs = []
    for ordered in (files, files[::-1], files):
        relative = [str(p.relative_to(FIXTURES)) for p in ordered]
        command = [sys.executable, "-m", "codegen", "resolve", "--format", "json"]
        proc = subprocess.run(
            [*command, "--root", str(FIXTURES), "--catalog", *relative],
            capture_output=True,
            cwd=REPO,
            check=True,
        )
        runs.append(proc.stdout)
    assert runs[0] == runs[1] == runs[2]
    assert json.loads(runs[0])["rows"]


def test_text_format_is_a_table_with_one_line_per_row(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["resolve", "--root", str(FIXTURES)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["series", "kind", "unit", "stability", "prometheus"]
    assert len(lines) == 2 + 10
    assert lines[2].split()[:5] == [
        "rl.kl.divergence",
        "gauge",
        "1",
        "development",
        "(deprecated)",
    ]


def test_invalid_catalog_exits_1_with_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "bad.yaml").write_text("owner: x\nmodule: bad\n")
    assert main(["resolve", "--root", str(tmp_path)]) == 1
    assert "catalog/bad.yaml" in capsys.readouterr().err


def _row(name: str, line: int, kind: str, deprecated: bool) -> MetricRow:
    return MetricRow(
        section="teed",
        name=name,
        kind=kind,
        unit="s",
        description="A series.",
        stability="beta",
        position=Position("catalog/a.yaml", line, 5),
        logger_key=name.replace(".", "_"),
        prefix="train",
        deprecated=Deprecation("0.1.0", None, "old") if deprecated else None,
    )


file_rows = st.lists(
    st.builds(
        _row,
        st.from_regex(r"rl\.m[a-z]{0,7}", fullmatch=True),
        st.integers(1, 500),
        st.sampled_from(["gauge", "counter", "histogram", "up_down_counter"]),
        st.booleans(),
    ),
    max_size=6,
    unique_by=lambda r: r.name,
)


@given(file_rows, file_rows, st.randoms(use_true_random=False))
def test_resolve_does_not_depend_on_file_or_row_order(
    a: list[MetricRow], b: list[MetricRow], rnd: random.Random
) -> None:
    def build(rows_a: list[MetricRow], rows_b: list[MetricRow], flip: bool) -> Catalog:
        fa = CatalogFile("catalog/a.yaml", "pkg.a", "a", "A.", tuple(rows_a), ())
        fb = CatalogFile("catalog/b.yaml", "pkg.b", "b", "B.", tuple(rows_b), ())
        return Catalog((fb, fa) if flip else (fa, fb))

    shuffled_a, shuffled_b = a[:], b[:]
    rnd.shuffle(shuffled_a)
    rnd.shuffle(shuffled_b)
    first = render_resolved(build(a, b, flip=False))
    second = render_resolved(build(shuffled_a, shuffled_b, flip=True))
    assert first == second


def test_resolved_catalog_carries_attributes_families_and_prefixes() -> None:
    """Rows list prefixes, placeholders and their attributes with values; attributes are listed."""
    fixture = Path(__file__).parents[1] / "fixtures" / "attributes" / "gamma.yaml"
    result = load_and_check([fixture], root=Path(__file__).resolve().parents[2])
    assert result.ok
    doc = json.loads(render_resolved(result.catalog))
    rows = {row["name"]: row for row in doc["rows"]}
    family = rows["rl.fixture.efficiency.time"]
    assert family["prefixes"] == ["train", ""]
    assert family["placeholders"] == ["rl.fixture.category"]
    assert family["cardinality_limit"] == 100
    assert family["attributes"][0] == {
        "name": "rl.fixture.category",
        "requirement_level": "required",
        "type": "string",
        "label": "rl_fixture_category",
        "values": [
            "idle/refit_bubble",
            "init/total",
            "a_rather_long_category_name_that_pushes_the_literal_past_the_line_limit",
        ],
        "max_cardinality": None,
        "open": False,
        "derive": None,
    }
    assert rows["rl.fixture.validation.loss"]["placeholders"] == ["rl.fixture.phase"]
    assert rows["rl.fixture.gamma.batch.duration"]["prefixes"] == []
    attributes = {a["name"]: a for a in doc["attributes"]}
    assert list(attributes) == sorted(attributes)
    phase = attributes["rl.fixture.phase"]
    assert (phase["max_cardinality"], phase["values"], phase["type_name"]) == (64, [], None)
    assert attributes["rl.fixture.rank"]["values"][0] == {
        "value": "0",
        "description": "The driver.",
    }
    assert attributes["rl.fixture.rank"]["type_name"] == "RlFixtureRank"
    (gamma,) = doc["files"]
    assert gamma["prefixes"] == ["train", ""]
    assert "rl.fixture.clipped" in gamma["attributes"]


def test_resolved_catalog_carries_derivations() -> None:
    """A derived attribute lists its source, its table and its default."""
    result = load_and_check(root=Path(__file__).resolve().parents[2])
    doc = json.loads(render_resolved(result.catalog))
    rows = {row["name"]: row for row in doc["rows"]}
    attributes = {a["name"]: a for a in rows["rl.efficiency.seconds"]["attributes"]}
    assert attributes["rl.efficiency.category"]["derive"] is None
    bucket = attributes["rl.bucket"]["derive"]
    assert bucket["from"] == "rl.efficiency.category"
    assert bucket["default"] is None
    assert bucket["map"]["init/total"] == "overhead"
    assert bucket["map"]["wasted/failed_trajectory"] == "wasted"
    assert len(bucket["map"]) == 8


SHARED = """\
owner: openrlhf.trainer
module: trainers
description: Trainer metrics.
loops:
  - name: dpo
    description: Direct preference optimisation.
  - name: rm
    description: Reward-model training.
bookkeeping:
  - key: train/global_step
    reason: The step W&B plots against (define_metric step_metric), not a metric.
teed:
  - logger_key: chosen_reward
    name: rl.dpo.implicit_reward.chosen
    kind: gauge
    unit: ""
    description: Implicit reward of the chosen response, in nats.
    emitted_by: [dpo]
  - logger_key: chosen_reward
    name: rl.rm.score.chosen
    kind: gauge
    unit: "1"
    description: Reward-model score of the chosen response.
    emitted_by: [rm]
  - logger_key: generated_samples
    name: rl.dpo.generated_samples
    kind: gauge
    unit: ""
    description: Samples of the step, as a W&B table.
    value_type: table
    emitted_by: [dpo]
"""


def test_resolve_shows_each_row_s_scope_the_rows_sharing_its_key_and_the_bookkeeping_keys(
    tmp_path: Path,
) -> None:
    """What the docs pages render: loops, the other loops' rows of a key, value types."""
    catalog = loaded_catalog(tmp_path, SHARED)
    rows = rows_by_name(catalog)
    dpo = rows["rl.dpo.implicit_reward.chosen"]
    assert (dpo["emitted_by"], dpo["shares_key_with"]) == (["dpo"], ["rl.rm.score.chosen"])
    assert rows["rl.dpo.generated_samples"]["value_type"] == "table"
    assert rows["rl.dpo.generated_samples"]["shares_key_with"] == []
    entries = resolve_catalog(catalog)["bookkeeping"]
    assert isinstance(entries, list)
    assert [entry["key"] for entry in entries] == ["train/global_step", "_*"]


def _keys_in_sorted_order(value: object) -> bool:
    """Whether every dict in ``value``, however nested, lists its keys sorted."""
    if isinstance(value, dict):
        keys = list(value)
        return keys == sorted(keys) and all(_keys_in_sorted_order(v) for v in value.values())
    if isinstance(value, list):
        return all(_keys_in_sorted_order(item) for item in value)
    return True


@pytest.mark.parametrize(
    "root",
    [REPO, FIXTURES, *sorted(p.parent for p in (REPO / "examples").glob("*/pyproject.toml"))],
    ids=lambda root: root.name,
)
def test_resolved_rows_come_with_every_key_sorted_so_catalog_json_need_not_sort_them(
    root: Path,
) -> None:
    """catalog.json encodes rows without ``sort_keys``: the bytes match a sorting encoder."""
    config = config_for_root(root)
    result = load_and_check(config.catalog_files(), root=root, lint=False)
    assert result.catalog is not None
    rows = resolve_catalog(result.catalog, config.package)["rows"]
    assert isinstance(rows, list)
    assert rows
    assert all(_keys_in_sorted_order(row) for row in rows)
    derived = [a["derive"] for row in rows for a in row["attributes"] if a["derive"]]
    assert root != REPO or derived  # the repository's catalog declares a derivation
    for row in rows:
        assert json.dumps(row) == json.dumps(row, sort_keys=True)


def test_a_derivation_s_map_is_resolved_in_key_order_whatever_the_declared_order() -> None:
    """A table declared out of order resolves sorted; a key declared twice keeps its last value."""
    table = (("z", "last"), ("a", "first"), ("m", "x"), ("m", "y"))
    resolved = _derive(Derivation(source="rl.src", table=table, default=None))
    assert resolved == {
        "default": None,
        "from": "rl.src",
        "map": {"a": "first", "m": "y", "z": "last"},
    }
    assert resolved is not None
    assert isinstance(resolved["map"], dict)
    assert list(resolved["map"]) == ["a", "m", "z"]


def test_resolve_json_gives_each_loop_its_step_keys_in_declared_order(tmp_path: Path) -> None:
    """Tools reading ``resolve --format json`` learn every step axis of a loop (#36 item 9)."""
    catalog = loaded_catalog(
        tmp_path,
        """\
owner: myrl.rollout
module: rollout
description: A job whose prefixes share step keys.
loops:
  - name: ppo
    description: PPO.
    step_keys:
      - {key: rollout/step, prefix: rollout}
      - {key: rollout/step, prefix: actor}
      - {key: step}
  - name: sft
    description: SFT, with no step key.
teed: []
""",
    )
    loops = json.loads(render_resolved(catalog, "json"))["loops"]
    assert [(loop["name"], loop["step_keys"]) for loop in loops] == [
        (
            "ppo",
            [
                {"key": "rollout/step", "prefix": "rollout"},
                {"key": "rollout/step", "prefix": "actor"},
                {"key": "step", "prefix": ""},
            ],
        ),
        ("sft", []),
    ]
