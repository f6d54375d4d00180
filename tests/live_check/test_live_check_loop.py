"""The run's loop on JSONL lines: JsonlLogger(loop=...) / METRIC_CATALOG_LOOP, read by live-check.

Every log here is written by a real :class:`~metric_catalog.loggers.JsonlLogger`
replaying the realistic upstream runs of :mod:`tests.upstream_runs`, and read
back by live-check against the repo's own catalog (whose loops are declared in
``catalog/common.yaml``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_file, check_paths
from metric_catalog import identity
from metric_catalog.loggers import ENV_LOOP, JsonlLogger
from tests.upstream_runs import LOOPS, run_lines

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def plain_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """No launcher rank and no loop variable, unless a test sets them."""
    for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "OTEL_RESOURCE_ATTRIBUTES", ENV_LOOP):
        monkeypatch.delenv(var, raising=False)
    identity._reset_for_tests()


def replay(logger: JsonlLogger, loop: str, steps: int = 12) -> None:
    """Log an upstream run of ``loop`` through ``logger``, as its training code would."""
    for line in run_lines(loop, steps=steps):
        doc = json.loads(line)
        logger.log_metrics(doc["metrics"], doc["step"], prefix=doc["prefix"])


def loop_findings(report: LiveCheckReport) -> list[tuple[str, str, int, str]]:
    """(kind, loop, count, where) of every loop finding."""
    return [
        (f.kind, f.key, f.count, str(report._where(f)))
        for f in report.findings
        if f.kind in ("unknown_loop", "loop_conflict")
    ]


# --- JsonlLogger writes the loop ----------------------------------------------------------


def test_the_loop_argument_names_the_loop_on_every_line(tmp_path: Path) -> None:
    with JsonlLogger(tmp_path / "run.jsonl", loop="grpo_sync") as logger:
        logger.log_metrics({"loss": 0.5}, 1, prefix="train")
        logger.log_metrics({"loss": 0.4}, 2, prefix="train")
    lines = logger.path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == '{"step":1,"prefix":"train","loop":"grpo_sync","metrics":{"loss":0.5}}'
    assert [json.loads(line)["loop"] for line in lines] == ["grpo_sync", "grpo_sync"]


@pytest.mark.parametrize(
    ("env", "argument", "expected"),
    [
        pytest.param(None, None, None, id="neither-no-field"),
        pytest.param("dpo", None, "dpo", id="variable"),
        pytest.param(" dpo ", None, "dpo", id="variable-stripped"),
        pytest.param("", None, None, id="empty-variable"),
        pytest.param("dpo", "sft", "sft", id="argument-wins"),
        pytest.param("dpo", "", None, id="empty-argument-writes-none"),
    ],
)
def test_the_loop_variable_is_the_default_and_the_argument_overrides_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: str | None,
    argument: str | None,
    expected: str | None,
) -> None:
    if env is not None:
        monkeypatch.setenv(ENV_LOOP, env)
    with JsonlLogger(tmp_path / "run.jsonl", loop=argument) as logger:
        logger.log_metrics({"loss": 0.5}, 1)
    assert logger.loop == expected
    assert json.loads(logger.path.read_text(encoding="utf-8")).get("loop") == expected


def test_a_non_string_loop_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="loop must be a str such as 'grpo_sync', got int"):
        JsonlLogger(tmp_path / "run.jsonl", loop=3)  # type: ignore[arg-type]


# --- live-check reads it ------------------------------------------------------------------


@pytest.mark.parametrize("loop", LOOPS)
def test_a_run_naming_its_loop_is_judged_as_that_loop_and_stays_clean(
    repo_catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loop: str
) -> None:
    monkeypatch.setenv(ENV_LOOP, loop)
    with JsonlLogger(tmp_path / "run.jsonl") as logger:
        replay(logger, loop)
    report = check_file(str(logger.path), repo_catalog)
    assert (report.loop.name, report.loop.source) == (loop, "log")
    assert report.failed(["missing", "unknown_loop", "loop_conflict", "malformed"]) == []
    assert f"loop: {loop} (named by the log)" in report.to_text()


def test_the_logged_loop_wins_over_inference_and_the_flag_over_both(
    repo_catalog: Catalog, tmp_path: Path
) -> None:
    # An SFT run whose logger says dpo: judged as dpo, so DPO's required loss terms
    # are missing (the keys alone would say sft).
    with JsonlLogger(tmp_path / "run.jsonl", loop="dpo") as logger:
        replay(logger, "sft")
    named = check_file(str(logger.path), repo_catalog)
    assert (named.loop.name, named.loop.source) == ("dpo", "log")
    assert "missing" in named.kinds()
    flagged = check_file(str(logger.path), repo_catalog, loop="sft")
    assert (flagged.loop.name, flagged.loop.source) == ("sft", "flag")
    assert "missing" not in flagged.kinds()


def test_a_logged_loop_the_catalog_does_not_declare_is_a_finding_and_the_loop_is_inferred(
    repo_catalog: Catalog, tmp_path: Path
) -> None:
    with JsonlLogger(tmp_path / "run.jsonl", loop="grpo_turbo") as logger:
        replay(logger, "grpo_async", steps=2)
    report = check_file(str(logger.path), repo_catalog)
    assert (report.loop.name, report.loop.source) == ("grpo_async", "inferred")
    lines = len(run_lines("grpo_async", steps=2))
    assert loop_findings(report) == [
        ("unknown_loop", "grpo_turbo", lines, f"{logger.path}:1:1"),
    ]
    (finding,) = [f for f in report.findings if f.kind == "unknown_loop"]
    assert "declared loops: dpo, grpo_async, grpo_sync, ppo, sft, sft_v2" in finding.message()


# --- several workers ----------------------------------------------------------------------


def write_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loops: list[str], run: str = "grpo_sync"
) -> list[str]:
    """One file per rank, each rank's logger naming ``loops[rank]`` through the variable."""
    paths = []
    for rank, loop in enumerate(loops):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv(ENV_LOOP, loop)
        identity._reset_for_tests()
        with JsonlLogger(tmp_path / "run-{worker}.jsonl") as logger:
            replay(logger, run, steps=3)
        paths.append(str(logger.path))
    identity._reset_for_tests()
    return paths


def test_workers_naming_one_loop_are_judged_as_it(
    repo_catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_workers(tmp_path, monkeypatch, ["grpo_sync"] * 3)
    report = check_paths(paths, repo_catalog)
    assert (report.loop.name, report.loop.source) == ("grpo_sync", "log")
    assert loop_findings(report) == []
    assert report.failed(["missing"]) == []


def test_workers_naming_different_loops_are_a_job_of_several_with_no_conflict(
    repo_catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker is judged as the loop it names: the rank that says ppo and logged no
    critic key lacks them (judged as ppo), and nothing is a loop conflict."""
    first, second, third = write_workers(tmp_path, monkeypatch, ["grpo_sync", "ppo", "grpo_sync"])
    report = check_paths([first, second, third], repo_catalog)
    assert loop_findings(report) == []
    job = {loop.name: loop.inputs for loop in report.job_loops}
    assert job == {"grpo_sync": (first, third), "ppo": (second,)}
    assert [n.kind for n in report.notices if n.kind == "several_loops"] == ["several_loops"]
    missing = {f.qualified_key: f.example for f in report.findings if f.kind == "missing"}
    assert missing
    assert set(missing.values()) == {"ppo"}  # the critic's keys, as ppo's


def test_one_worker_naming_two_loops_is_a_conflict_at_its_file_and_line(
    repo_catalog: Catalog, tmp_path: Path
) -> None:
    lines = [json.loads(line) for line in run_lines("grpo_sync", steps=3)]
    named = [dict(doc, loop="grpo_sync") for doc in lines]
    named[-1]["loop"] = "ppo"
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(doc) + "\n" for doc in named), encoding="utf-8")
    report = check_file(str(path), repo_catalog)
    assert (report.loop.name, report.loop.source) == ("grpo_sync", "log")
    assert loop_findings(report) == [("loop_conflict", "ppo", 1, f"{path}:{len(named)}:1")]
    (conflict,) = [f for f in report.findings if f.kind == "loop_conflict"]
    assert "line 1 named 'grpo_sync' first, the loop that worker is judged as" in (
        conflict.message()
    )
    assert report.job_loops == ()


def test_the_cli_reports_a_loop_conflict_over_a_glob_and_fails_on_it(
    repo_catalog: Catalog,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_workers(tmp_path, monkeypatch, ["grpo_sync", "grpo_sync_v9"])
    pattern = str(tmp_path / "run-*.jsonl")
    assert main(["live-check", pattern, "--root", str(REPO), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    kinds = [(f["kind"], f["key"]) for f in doc["findings"] if f["kind"].endswith("loop")]
    assert kinds == [("unknown_loop", "grpo_sync_v9")]
    assert doc["loop"]["name"] == "grpo_sync"
    assert main(["live-check", pattern, "--root", str(REPO), "--fail-on", "unknown_loop"]) == 1
    out = capsys.readouterr().out
    assert "error[UNKNOWN_LOOP]" in out
    assert "FAILED: --fail-on unknown_loop" in out
