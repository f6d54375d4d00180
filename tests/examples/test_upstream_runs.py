"""The repo's catalog against realistic upstream run logs, one per training loop.

Each log (:mod:`upstream_runs`) carries the keys upstream NeMo-RL really logs
and does not name its loop. For every loop: the loop is inferred, every
upstream-declared series that loop logs is matched, and no row is missing
that the loop does not emit, also for a run stopped before its first
validation.
"""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.live_check import LiveCheckReport, check_stream
from tests.upstream_runs import LOOPS, UPSTREAM_SERIES, run_lines


def check(catalog: Catalog, lines: list[str], **kwargs: object) -> LiveCheckReport:
    raw = "".join(line + "\n" for line in lines).encode()
    return check_stream(io.BytesIO(raw), catalog, source="run.jsonl", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("loop", LOOPS)
def test_the_loop_of_an_upstream_log_is_inferred(repo_catalog: Catalog, loop: str) -> None:
    report = check(repo_catalog, run_lines(loop))
    assert (report.loop.name, report.loop.source) == (loop, "inferred")


@pytest.mark.parametrize("loop", LOOPS)
def test_a_short_upstream_log_still_infers_its_loop(repo_catalog: Catalog, loop: str) -> None:
    assert check(repo_catalog, run_lines(loop, steps=1)).loop.name == loop


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("steps", [12, 3], ids=["past-validation", "before-validation"])
def test_no_row_is_missing_from_a_complete_upstream_log(
    repo_catalog: Catalog, loop: str, steps: int
) -> None:
    report = check(repo_catalog, run_lines(loop, steps=steps))
    assert [f.message() for f in report.findings if f.kind == "missing"] == []
    assert [n.message for n in report.notices if n.kind == "unexpected_loop"] == []


@pytest.mark.parametrize("loop", LOOPS)
def test_every_upstream_series_the_loop_logs_is_matched(repo_catalog: Catalog, loop: str) -> None:
    report = check(repo_catalog, run_lines(loop))
    logged = {r.row.name for r in report.rows if r.logged}
    expected = {name for name, loops in UPSTREAM_SERIES.items() if loop in loops}
    assert expected - logged == set()


@pytest.mark.parametrize(
    ("loop", "dropped", "series"),
    [
        ("grpo_sync", ("train", "reward"), "rl.reward.mean"),
        ("grpo_async", ("train", "buffer_size"), "rl.grpo.replay_buffer.size"),
        ("ppo", ("train", "critic/loss"), "rl.value.loss"),
        ("sft", ("train", "global_valid_toks"), "rl.train.valid_tokens"),
        ("sft_v2", ("", "policy_time"), "rl.sft_v2.policy.duration"),
        ("dpo", ("train", "preference_loss"), "rl.dpo.preference_loss"),
    ],
)
def test_a_required_key_dropped_from_an_upstream_log_is_missing(
    repo_catalog: Catalog, loop: str, dropped: tuple[str, str], series: str
) -> None:
    prefix, key = dropped
    lines = []
    for line in run_lines(loop):
        doc = json.loads(line)
        if doc["prefix"] == prefix:
            doc["metrics"].pop(key, None)
        lines.append(json.dumps(doc))
    report = check(repo_catalog, lines)
    assert report.loop.name == loop
    assert [f.series for f in report.findings if f.kind == "missing"] == [series]


@settings(max_examples=30, deadline=None)
@given(
    loop=st.sampled_from(LOOPS),
    steps=st.integers(min_value=1, max_value=15),
    val_period=st.integers(min_value=1, max_value=20),
)
def test_no_upstream_run_of_any_length_or_validation_period_misses_a_row(
    repo_catalog: Catalog, loop: str, steps: int, val_period: int
) -> None:
    report = check(repo_catalog, run_lines(loop, steps=steps, val_period=val_period))
    assert report.loop.name == loop
    assert [f.series for f in report.findings if f.kind == "missing"] == []


@pytest.mark.parametrize("loop", ["grpo_sync", "grpo_async", "ppo"])
def test_every_efficiency_seconds_key_of_an_upstream_log_is_declared(
    repo_catalog: Catalog, loop: str
) -> None:
    """The aggregates (efficiency/total_waste_s, ...) share the category family's shape; each
    is its own row, so no run reports them as a bad category value or as undeclared."""
    report = check(repo_catalog, run_lines(loop))
    efficiency = [
        f.message()
        for f in report.findings
        if "efficiency/" in f.message() and f.kind in ("attribute_value", "undeclared")
    ]
    assert efficiency == []
    logged = {r.row.name for r in report.rows if r.logged}
    assert {"rl.efficiency.waste", "rl.efficiency.thread_time"} <= logged
