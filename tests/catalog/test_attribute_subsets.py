"""Per-row enumeration subsets: a ref's ``values`` narrow a shared enum for one row.

From YAML to the generated row, the tee, live-check (findings and coverage), emit,
resolve and diff; each with a firing and a non-firing case.
"""

from __future__ import annotations

import json
import types
from dataclasses import replace
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.diff import diff_catalogs
from codegen.emit import plan_steps
from codegen.generate.python import render_python_modules
from codegen.generate.resolve import resolve_catalog
from codegen.live_check import check_file
from metric_catalog import vocabulary
from metric_catalog.loggers import JsonlLogger
from metric_catalog.tee import tee_metrics
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

CATALOG = """\
owner: verl.trainer.ppo
module: stats
description: Statistics of the PPO loop.
prefix: ""
attributes:
  - name: rl.stat
    type: string
    description: Which statistic of the batch.
    values:
      - {value: mean, description: Mean over the batch.}
      - {value: max, description: Largest value of the batch.}
      - {value: min, description: Smallest value of the batch.}
      - {value: std, description: Standard deviation over the batch.}
  - name: rl.domain
    type: string
    description: Where the value comes from.
    max_cardinality: "8"
teed:
  - logger_key: critic/score/{rl.stat}
    name: rl.critic.score
    kind: gauge
    unit: "1"
    description: Sequence score statistics.
    attributes:
      - ref: rl.stat
        values: {subset}
  - logger_key: critic/advantages/{rl.stat}
    name: rl.critic.advantages
    kind: gauge
    unit: "1"
    description: Advantage statistics, std included.
    attributes:
      - ref: rl.stat
"""

SUBSET = "[mean, max, min]"


def _write(root: Path, subset: str = SUBSET) -> None:
    (root / "catalog").mkdir(exist_ok=True)
    (root / "catalog" / "stats.yaml").write_text(
        CATALOG.replace("{subset}", subset), encoding="utf-8"
    )


def _catalog(root: Path, subset: str = SUBSET) -> Catalog:
    _write(root, subset)
    result = load_and_check(root=root, lint=False)
    assert result.catalog is not None, [d.format() for d in result.diagnostics]
    return result.catalog


@pytest.mark.parametrize(
    ("subset", "expected"),
    [
        pytest.param(SUBSET, [], id="subset-ok"),
        pytest.param("[std]", [], id="one-value-ok"),
        pytest.param("[mean, p99]", ["ATTRIBUTE_SUBSET 26:24"], id="value-not-in-enum"),
        pytest.param("[mean, mean]", ["INVALID_VALUE 26:17"], id="twice"),
        pytest.param("[]", ["INVALID_VALUE 26:17"], id="empty"),
        pytest.param('["1"]', ["ATTRIBUTE_SUBSET 26:18"], id="not-one-of-them"),
    ],
)
def test_a_subset_is_checked_at_its_position(
    tmp_path: Path, subset: str, expected: list[str]
) -> None:
    _write(tmp_path, subset)
    result = load_and_check(root=tmp_path, lint=False)
    got = [f"{d.code} {d.position.line}:{d.position.column}" for d in result.diagnostics]
    assert got == expected


def test_an_open_attribute_has_no_enum_to_narrow(tmp_path: Path) -> None:
    text = CATALOG.replace("{subset}", SUBSET).replace(
        "      - ref: rl.stat\n        values:", "      - ref: rl.domain\n        values:", 1
    )
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "stats.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    codes = [d.code for d in result.diagnostics]
    assert "ATTRIBUTE_SUBSET" in codes
    (subset,) = [d for d in result.diagnostics if d.code == "ATTRIBUTE_SUBSET"]
    assert "lists no values" in subset.message


def _run(catalog: Catalog, path: Path, stats: dict[str, list[str]]) -> tuple[list[str], dict]:
    with JsonlLogger(path) as log:
        for step in (1, 2):
            metrics = {f"critic/{what}/{s}": 0.5 for what, names in stats.items() for s in names}
            log.log_metrics(metrics, step, "")
    report = check_file(str(path), catalog)
    found = sorted(f"{f.kind} {f.key}" for f in report.findings)
    return found, report.coverage.families


def test_live_check_refuses_a_value_outside_the_rows_subset(tmp_path: Path) -> None:
    found, _values = _run(
        _catalog(tmp_path),
        tmp_path / "run.jsonl",
        {"score": ["mean", "max", "min", "std"], "advantages": ["mean", "std"]},
    )
    assert found == ["attribute_value critic/score/std"]


def test_coverage_counts_a_missing_value_against_the_rows_own_subset(tmp_path: Path) -> None:
    found, values = _run(
        _catalog(tmp_path),
        tmp_path / "run.jsonl",
        {"score": ["mean", "max", "min"], "advantages": ["mean", "max", "min"]},
    )
    assert found == []
    score = values["rl.critic.score"]["attributes"]["rl.stat"]
    advantages = values["rl.critic.advantages"]["attributes"]["rl.stat"]
    assert (score["unseen"], score["overall"]) == ([], 1.0)  # std is not the row's
    assert advantages["unseen"] == ["std"]  # noticed


def test_the_generated_row_carries_the_subset_and_the_tee_refuses_the_rest(
    tmp_path: Path, clean_otel: None
) -> None:
    text = render_python_modules(_catalog(tmp_path))["src/metric_catalog/generated/stats.py"]
    module = types.ModuleType("stats_under_test")
    exec(compile(text, "stats.py", "exec"), module.__dict__)
    (score_stat,) = module.CRITIC_SCORE.attributes
    (advantages_stat,) = module.CRITIC_ADVANTAGES.attributes
    assert score_stat.values == ("mean", "max", "min")
    assert advantages_stat.values == ("mean", "max", "min", "std")
    vocabulary.register_teed_metrics([module.CRITIC_SCORE, module.CRITIC_ADVANTAGES])
    with installed_reader() as reader, caught_warnings():
        tee_metrics({"critic/score/std": 1.0, "critic/score/mean": 0.5}, "")
        tee_metrics({"critic/advantages/std": 2.0}, "")
        series = collect(reader)
    score = {dict(p.attributes)["rl.stat"] for p in series["rl.critic.score"].points}
    advantages = {dict(p.attributes)["rl.stat"] for p in series["rl.critic.advantages"].points}
    assert (score, advantages) == ({"mean"}, {"std"})


def test_emit_plays_only_the_rows_values_and_live_check_finds_it_clean(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    keys = {key for step in plan_steps(catalog, None, 2) for c in step.logged for key in c.metrics}
    assert {k for k in keys if k.startswith("critic/score/")} == {
        "critic/score/mean",
        "critic/score/max",
        "critic/score/min",
    }
    assert "critic/advantages/std" in keys


def test_resolve_lists_the_rows_own_values(tmp_path: Path) -> None:
    doc = resolve_catalog(_catalog(tmp_path))
    rows = {row["name"]: row for row in doc["rows"]}  # type: ignore[attr-defined]
    (score,) = rows["rl.critic.score"]["attributes"]
    (advantages,) = rows["rl.critic.advantages"]["attributes"]
    assert score["values"] == ["mean", "max", "min"]
    assert advantages["values"] == ["mean", "max", "min", "std"]
    json.dumps(doc)


@pytest.mark.parametrize(
    ("before", "after", "codes"),
    [
        ("[mean, max, min, std]", SUBSET, ["STABLE_ENUM_VALUE_REMOVED"]),
        (SUBSET, "[mean, max, min, std]", []),
        (SUBSET, SUBSET, []),
    ],
)
def test_a_stable_row_never_drops_a_value_of_its_subset(
    tmp_path: Path, before: str, after: str, codes: list[str]
) -> None:
    def stable(subset: str, where: str) -> Catalog:
        catalog = _catalog(tmp_path / where, subset)
        (file,) = catalog.files
        teed = tuple(replace(row, stability="stable") for row in file.teed)
        return Catalog((replace(file, teed=teed),))

    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    report = diff_catalogs(stable(before, "old"), stable(after, "new"))
    assert [d.code for d in report.diagnostics] == codes


DERIVED = """\
  - logger_key: actor/{rl.stat}
    name: rl.actor.stat
    kind: gauge
    unit: "1"
    description: Actor statistics.
    attributes:
      - ref: rl.stat
        values: [mean, max, min]
      - ref: rl.spread
        derive: {from: rl.stat, map: {table}}
"""

SPREAD = """\
  - name: rl.spread
    type: string
    description: Whether the statistic is a centre or a spread.
    values:
      - {value: centre, description: A central value.}
      - {value: spread, description: A spread.}
      - {value: bound, description: A bound.}
"""


@pytest.mark.parametrize(
    ("table", "codes"),
    [
        ("{mean: centre, max: bound, min: bound}", []),
        ("{mean: centre, max: bound, min: bound, std: spread}", ["DERIVE_MAP_KEY"]),
    ],
    ids=["within-the-subset", "a-key-outside-the-subset"],
)
def test_a_derivation_reads_the_rows_subset_of_its_source(
    tmp_path: Path, table: str, codes: list[str]
) -> None:
    """A table key outside the row's subset would make the generated module refuse to
    import (MetricAttribute checks its table against the source's values): validate says so."""
    text = CATALOG.replace("{subset}", SUBSET).replace("teed:\n", SPREAD + "teed:\n", 1)
    text += DERIVED.replace("{table}", table)
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "stats.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert [d.code for d in result.diagnostics] == codes
    if not codes:
        assert result.catalog is not None
        generated = render_python_modules(result.catalog)["src/metric_catalog/generated/stats.py"]
        module = types.ModuleType("stats_derived_under_test")
        exec(compile(generated, "stats.py", "exec"), module.__dict__)  # imports: no ValueError
        assert module.ACTOR_STAT.attributes[0].values == ("mean", "max", "min")
