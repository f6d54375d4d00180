"""``emit`` plays values a run's checker accepts: inside each row's range, whole numbers
where declared, statistics in order, totals the sum of their parts.

For every loop of every example project (and this repository's catalog), the
planned sample run is written as a JSON Lines log and checked by live-check with
the range checks on: it must be clean.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.config import load_config
from codegen.emit import _order_statistics, _statistic_stem, plan_steps
from codegen.live_check import check_file
from metric_catalog.loggers import JsonlLogger
from tests.catalog_projects import loaded_catalog

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = [ROOT, *sorted(p.parent for p in (ROOT / "examples").glob("*/pyproject.toml"))]


def _catalog(project: Path) -> Catalog:
    config = load_config(project)
    result = load_and_check(config.catalog_files(), root=project)
    assert result.catalog is not None, [str(d) for d in result.diagnostics]
    return result.catalog


def _write_run(catalog: Catalog, loop: str | None, path: Path, steps: int = 12) -> None:
    """The planned sample run as the JSON Lines logger writes it (no tee needed)."""
    writer = JsonlLogger(path, loop=loop)
    try:
        for sample in plan_steps(catalog, loop, steps):
            for call in sample.logged:
                writer.log_metrics(call.metrics, sample.step, call.prefix)
    finally:
        writer.close()


def _cases() -> list[tuple[Path, str | None]]:
    found: list[tuple[Path, str | None]] = []
    for project in PROJECTS:
        loops = sorted(loop.name for loop in _catalog(project).loops())
        found.extend((project, loop) for loop in loops or [None])
    return found


@pytest.mark.parametrize(
    ("project", "loop"),
    _cases(),
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_every_loop_of_every_example_emits_values_live_check_accepts(
    project: Path, loop: str | None, tmp_path: Path
) -> None:
    catalog = _catalog(project)
    log = tmp_path / "run.jsonl"
    _write_run(catalog, loop, log)
    report = check_file(str(log), catalog, loop=loop)
    kinds = {f.kind for f in report.findings}
    assert not kinds & {"out_of_range", "not_integer", "non_finite", "counter_decrease"}, [
        f.message() for f in report.findings
    ]
    judged = [s for s in report.rows if s.logged and s.value_range is not None]
    assert all(s.out_of_range == 0 and s.not_integer == 0 for s in judged)


_VALUES_CATALOG = """\
owner: myrl.disk
module: disk
description: Disk and loss statistics.
attributes:
  - name: myrl.stat
    type: string
    description: Statistic of the batch.
    values:
      - {value: min, description: Smallest.}
      - {value: mean, description: Mean.}
      - {value: max, description: Largest.}
teed:
  - logger_key: loss/{myrl.stat}
    name: rl.loss
    kind: gauge
    unit: ""
    description: Loss statistics over the batch.
    attributes:
      - ref: myrl.stat
  - logger_key: reward_min
    name: rl.reward.min
    kind: gauge
    unit: "1"
    description: Smallest reward of the batch.
    range: {min: "0", max: "1"}
  - logger_key: reward_max
    name: rl.reward.max
    kind: gauge
    unit: "1"
    description: Largest reward of the batch.
    range: {min: "0", max: "1"}
  - logger_key: disk/used
    name: rl.disk.used
    kind: gauge
    unit: GiBy
    description: Disk space in use.
  - logger_key: disk/free
    name: rl.disk.free
    kind: gauge
    unit: GiBy
    description: Disk space free.
  - logger_key: disk/total
    name: rl.disk.total
    kind: gauge
    unit: GiBy
    description: Disk space in all.
    sum_of: [rl.disk.used, rl.disk.free]
  - logger_key: batch/tokens
    name: rl.batch.tokens
    kind: gauge
    unit: "{token}"
    description: Tokens in the batch.
    value_type: int
    range: {min: "10", below: "20"}
"""


@pytest.fixture
def values_catalog(tmp_path: Path) -> Catalog:
    return loaded_catalog(tmp_path, _VALUES_CATALOG)


def test_a_family_of_statistics_and_sibling_keys_play_min_below_mean_below_max(
    values_catalog: Catalog,
) -> None:
    for sample in plan_steps(values_catalog, None, 20, seed=3):
        (call,) = sample.logged
        metrics = call.metrics
        assert metrics["loss/min"] <= metrics["loss/mean"] <= metrics["loss/max"]
        assert metrics["reward_min"] <= metrics["reward_max"]


def test_a_total_is_played_as_the_sum_of_its_parts(values_catalog: Catalog) -> None:
    for sample in plan_steps(values_catalog, None, 10, seed=1):
        (call,) = sample.logged
        metrics = call.metrics
        assert metrics["disk/total"] == pytest.approx(metrics["disk/used"] + metrics["disk/free"])


def test_integer_rows_play_whole_numbers_inside_an_exclusive_bound(
    values_catalog: Catalog,
) -> None:
    seen = set()
    for sample in plan_steps(values_catalog, None, 40, seed=5):
        value = sample.logged[0].metrics["batch/tokens"]
        assert value.is_integer()
        assert 10 <= value < 20
        seen.add(value)
    assert len(seen) > 1


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("loss/min", ("loss/*", 0)),
        ("reward_max", ("reward_*", 7)),
        ("val/acc/mean@4", ("val/acc/*@4", 3)),
        ("loss", None),
        ("minimum/loss", None),
    ],
)
def test_a_statistic_is_found_in_any_segment_of_a_key(
    key: str, expected: tuple[str, int] | None
) -> None:
    assert _statistic_stem(key) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=3))
def test_statistics_are_reordered_whatever_the_drawn_values(values: list[float]) -> None:
    metrics = dict(zip(("x/max", "x/min", "x/mean"), values, strict=True))
    _order_statistics(metrics)
    assert metrics["x/min"] <= metrics["x/mean"] <= metrics["x/max"]
    assert sorted(metrics.values()) == sorted(values)


def _row(name: str, parts: str = "") -> str:
    total = f"    sum_of: [{parts}]\n" if parts else ""
    return (
        f'  - logger_key: {name}\n    name: rl.chain.{name}\n    kind: gauge\n    unit: "1"\n'
        f"    description: Link {name}.\n{total}"
    )


def _chain(count: int, *, reverse: bool = False) -> str:
    """Links ``r0..r{count-1}``: each the total of the next link and a leaf ``s<i>``
    (declared totals first, or parts first)."""
    rows = [_row(f"r{count - 1}")]
    for i in range(count - 1):
        rows += [_row(f"r{i}", f"rl.chain.r{i + 1}, rl.chain.s{i + 1}"), _row(f"s{i + 1}")]
    if not reverse:
        rows.reverse()
    return "owner: chain\nmodule: chain\ndescription: A chain.\nprefix: t\nteed:\n" + "".join(rows)


@pytest.mark.parametrize("reverse", [False, True], ids=["parts-first", "totals-first"])
def test_a_chain_of_totals_adds_up_at_every_link(reverse: bool, tmp_path: Path) -> None:
    """Before, a total declared above its part summed the part's value before the part
    was itself made a total."""
    catalog = loaded_catalog(tmp_path, _chain(12, reverse=reverse))
    for sample in plan_steps(catalog, None, 3, seed=2):
        (call,) = sample.logged
        metrics = call.metrics
        for i in range(11):
            assert metrics[f"r{i}"] == pytest.approx(metrics[f"r{i + 1}"] + metrics[f"s{i + 1}"])


def test_a_chain_thousands_long_is_planned_without_recursion(tmp_path: Path) -> None:
    catalog = loaded_catalog(tmp_path, _chain(1500))
    (sample,) = plan_steps(catalog, None, 1)
    metrics = sample.logged[0].metrics
    assert metrics["r0"] == pytest.approx(metrics["r1"] + metrics["s1"])
