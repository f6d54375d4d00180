"""Many workers' logs: JsonlLogger per worker, and live-check over several files and globs."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import LogInputError, check_file, check_paths, expand_paths
from metric_catalog import identity
from metric_catalog.loggers import JsonlLogger, worker_path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "evolution"


@pytest.fixture
def no_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """No launcher variables and no explicit identity."""
    for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "OTEL_RESOURCE_ATTRIBUTES"):
        monkeypatch.delenv(var, raising=False)
    identity._reset_for_tests()


def write(path: Path, *records: dict[str, object]) -> str:
    """A JSONL file of ``records``; returns its path."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def rec(
    step: int, worker: str | None = None, prefix: str = "train", **metrics: object
) -> dict[str, object]:
    """One JsonlLogger record."""
    out: dict[str, object] = {"step": step, "prefix": prefix}
    if worker is not None:
        out["worker"] = worker
    out["metrics"] = metrics
    return out


def summary(report: object) -> list[tuple[str, str, int, str]]:
    """(kind, key, count, where) per finding."""
    return sorted(
        (f.kind, f.qualified_key, f.count, str(report._where(f)))  # type: ignore[attr-defined]
        for f in report.findings  # type: ignore[attr-defined]
    )


# --- JsonlLogger per worker ---------------------------------------------------------------


def test_each_worker_writes_its_own_file_with_a_worker_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_identity: None
) -> None:
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    with JsonlLogger(tmp_path / "run-{worker}.jsonl") as logger:
        logger.log_metrics({"loss": 0.5}, 7, prefix="train")
    assert logger.path == tmp_path / "run-rank3.jsonl"
    (line,) = logger.path.read_text(encoding="utf-8").splitlines()
    assert line == '{"step":7,"prefix":"train","worker":"rank3","metrics":{"loss":0.5}}'


def test_set_worker_identity_names_a_ray_actors_file(tmp_path: Path, no_identity: None) -> None:
    identity.set_worker_identity(rank=2, local_rank=0)
    try:
        path = worker_path(tmp_path / "r{rank}-l{local_rank}.jsonl")
    finally:
        identity._reset_for_tests()
    assert path == tmp_path / "r2-l0.jsonl"


def test_a_single_process_keeps_the_plain_format(tmp_path: Path, no_identity: None) -> None:
    with JsonlLogger(tmp_path / "run-{rank}-{pid}.jsonl") as logger:
        logger.log_metrics({"loss": 0.5}, 1)
    assert logger.path == tmp_path / f"run-0-{os.getpid()}.jsonl"
    assert json.loads(logger.path.read_text(encoding="utf-8")) == {
        "step": 1,
        "prefix": "",
        "metrics": {"loss": 0.5},
    }


@pytest.mark.parametrize("path", ["run-{node}.jsonl", "run-{0}.jsonl", "run-}.jsonl"])
def test_an_unknown_path_placeholder_is_a_value_error_listing_the_known_ones(
    tmp_path: Path, path: str, no_identity: None
) -> None:
    with pytest.raises(ValueError, match=r"may hold \{worker\}, \{rank\}"):
        JsonlLogger(tmp_path / path)


# --- live-check over many workers ---------------------------------------------------------


def test_a_counter_going_negative_is_reported_for_its_worker_at_its_line(
    evolution_catalog_all_required: Catalog, tmp_path: Path
) -> None:
    a = write(tmp_path / "run-rank0.jsonl", rec(1, reward=0.5, global_valid_toks=100))
    b = write(
        tmp_path / "run-rank1.jsonl",
        rec(1, reward=0.5, global_valid_toks=100),
        rec(2, reward=0.6, global_valid_toks=-5),
    )
    report = check_paths([a, b], evolution_catalog_all_required)
    decreases = [f for f in report.findings if f.kind == "counter_decrease"]
    assert [(str(report._where(f)), f.count) for f in decreases] == [(f"{b}:2:1", 1)]
    assert report.records == 3
    assert report.source == f"2 files, 2 worker(s): {a}, {b}"


def test_each_worker_gets_its_own_finding_for_the_same_bad_key(
    evolution_catalog_all_required: Catalog, tmp_path: Path
) -> None:
    paths = [
        write(
            tmp_path / f"run-rank{r}.jsonl",
            rec(1, reward=float("nan")),
            rec(2, reward=float("nan")),
        )
        for r in range(3)
    ]
    report = check_paths(paths, evolution_catalog_all_required)
    assert [
        (f.kind, f.count, str(report._where(f))) for f in report.findings if f.kind == "non_finite"
    ] == [("non_finite", 2, f"{p}:1:1") for p in paths]


def test_a_row_logged_by_any_worker_is_not_missing(
    evolution_catalog_all_required: Catalog, tmp_path: Path
) -> None:
    # The loss is logged only by rank 0 (say, the last pipeline stage): not missing.
    a = write(tmp_path / "a.jsonl", rec(1, reward=0.5, loss=0.9))
    b = write(tmp_path / "b.jsonl", rec(1, reward=0.5))
    together = {
        f.qualified_key
        for f in check_paths([a, b], evolution_catalog_all_required).findings
        if f.kind == "missing"
    }
    alone = {
        f.qualified_key
        for f in check_file(b, evolution_catalog_all_required).findings
        if f.kind == "missing"
    }
    assert "train/loss" in alone
    assert "train/loss" not in together


def test_workers_sharing_one_file_are_told_apart_by_their_worker_field(
    evolution_catalog_all_required: Catalog, tmp_path: Path
) -> None:
    path = write(
        tmp_path / "all.jsonl",
        rec(1, "rank0", global_valid_toks=10),
        rec(1, "rank1", global_valid_toks=-1),
        rec(2, "rank0", global_valid_toks=-2),
        rec(2, "rank1", reward=0.5, extra_key=1.0),
    )
    report = check_paths(expand_paths([str(tmp_path / "*.jsonl")]), evolution_catalog_all_required)
    assert (
        "counter_decrease",
        "train/global_valid_toks",
        1,
        f"{path}[worker rank0]:3:1",
    ) in summary(report)
    assert (
        "counter_decrease",
        "train/global_valid_toks",
        1,
        f"{path}[worker rank1]:2:1",
    ) in summary(report)
    # Whole-run findings point at the file and line, once.
    assert ("undeclared", "train/extra_key", 1, f"{path}:4:1") in summary(report)
    assert report.source == f"{path} (2 workers)"


def test_malformed_lines_and_undeclared_keys_point_at_their_own_file(
    evolution_catalog_all_required: Catalog, tmp_path: Path
) -> None:
    a = write(tmp_path / "a.jsonl", rec(1, reward=0.5), rec(2, reward=0.5))
    b = tmp_path / "b.jsonl"
    b.write_text(
        json.dumps(rec(1, reward=0.5)) + "\n{not json\n" + json.dumps(rec(3, bogus=1)) + "\n"
    )
    report = check_paths([a, str(b)], evolution_catalog_all_required)
    assert ("malformed", "#2", 1, f"{b}:2:1") in summary(report)
    assert ("undeclared", "train/bogus", 1, f"{b}:3:1") in summary(report)
    assert report.lines == 5


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.sampled_from(["reward", "global_valid_toks", "loss", "unknown"]),
            st.sampled_from([1.0, -1.0, float("nan"), 0.0]),
        ),
        max_size=30,
    )
)
def test_splitting_a_log_across_workers_keeps_what_the_run_logged(
    evolution_catalog_all_required: Catalog,
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[tuple[int, str, float]],
) -> None:
    folder = tmp_path_factory.mktemp("split")
    per_worker: dict[int, list[dict[str, object]]] = {r: [] for r in range(4)}
    everything = []
    for step, (worker, key, value) in enumerate(lines):
        record = rec(step, **{key: value})
        per_worker[worker].append(record)
        everything.append(record)
    paths = [write(folder / f"run-rank{r}.jsonl", *records) for r, records in per_worker.items()]
    split = check_paths(paths, evolution_catalog_all_required)
    whole = check_file(write(folder / "whole.jsonl", *everything), evolution_catalog_all_required)
    assert [(r.row.name, r.logged, r.non_finite, r.negative) for r in split.rows] == [
        (r.row.name, r.logged, r.non_finite, r.negative) for r in whole.rows
    ]
    assert split.kinds() == whole.kinds()
    for kind in ("missing", "undeclared"):
        assert sorted(f.qualified_key for f in split.findings if f.kind == kind) == sorted(
            f.qualified_key for f in whole.findings if f.kind == kind
        )
    for kind in ("non_finite", "counter_decrease"):  # per worker: counts add up
        assert sum(f.count for f in split.findings if f.kind == kind) == sum(
            f.count for f in whole.findings if f.kind == kind
        )


def _peak(catalog: Catalog, paths: list[str]) -> int:
    tracemalloc.start()
    try:
        check_paths(paths, catalog)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_length_of_the_logs(
    evolution_catalog_all_required: Catalog, tmp_path: Path
) -> None:
    def logs(name: str, steps: int) -> list[str]:
        return [
            write(
                tmp_path / f"{name}-{r}.jsonl",
                *(rec(s, reward=0.5, global_valid_toks=1, loss=float("nan")) for s in range(steps)),
            )
            for r in range(4)
        ]

    short, long = logs("short", 200), logs("long", 4000)
    _peak(evolution_catalog_all_required, short)  # warm caches (imports, interned strings)
    assert (
        _peak(evolution_catalog_all_required, long)
        < 1.5 * _peak(evolution_catalog_all_required, short) + 64 * 1024
    )


# --- the command --------------------------------------------------------------------------


def test_the_command_takes_a_glob_and_gates_on_a_workers_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "run-rank0.jsonl", rec(1, global_valid_toks=3))
    bad = write(tmp_path / "run-rank1.jsonl", rec(1, global_valid_toks=-3))
    args = ["live-check", str(tmp_path / "run-rank*.jsonl"), "--root", str(FIXTURES)]
    assert main([*args, "--fail-on", "counter_decrease"]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:1:1: error[COUNTER_DECREASE]" in out
    assert "2 files, 2 worker(s)" in out


@pytest.mark.parametrize(
    ("logs", "error"),
    [
        (["nothing-here-*.jsonl"], "matches no file"),
        (["-", "x.jsonl"], "cannot be combined"),
        ([".", "a.jsonl"], "is a folder"),
        (["a.jsonl", "missing.jsonl"], "cannot read missing.jsonl"),
    ],
)
def test_the_command_explains_bad_log_arguments(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    logs: list[str],
    error: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.jsonl", rec(1, reward=0.5))
    assert main(["live-check", *logs, "--root", str(FIXTURES)]) == 2
    assert error in capsys.readouterr().err


def test_expand_paths_sorts_globs_and_drops_duplicates(tmp_path: Path) -> None:
    for name in ("b.jsonl", "a.jsonl"):
        write(tmp_path / name, rec(1))
    a, b = str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")
    assert expand_paths([b, str(tmp_path / "*.jsonl")]) == [b, a]
    with pytest.raises(LogInputError, match="matches no file"):
        expand_paths([str(tmp_path / "*.txt")])
