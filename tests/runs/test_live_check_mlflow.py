"""live-check reads runs the real MLflow wrote: its file store and its SQLite store (mlflow.db).

Each store is written with ``mlflow.log_metrics(..., step=...)`` into ``tmp_path`` (the file
store with ``MLFLOW_ALLOW_FILE_STORE=true``, which MLflow 3 requires for it). The run is the
one the other formats' fixtures hold (``tests/fixtures/live_check_formats/verl_file.jsonl``),
so the findings are the same; a second, clean run has none. Hostile databases are in
``test_live_check_mlflow_sqlite.py``.

Integration: importing MLflow and migrating its database schema take several seconds.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.live_check import LiveCheckReport, Source, check_file, current_limits
from codegen.runs.ingest import read_source
from tests.mlflow_stores import mlflow_template, sqlite_store, write_runs

__all__ = ["mlflow_template"]  # fixture used by name

mlflow = pytest.importorskip("mlflow", reason="the dev extra installs mlflow-skinny")
pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
EVOLUTION = REPO / "tests" / "fixtures" / "evolution"
FORMATS = REPO / "tests" / "fixtures" / "live_check_formats"

EXPECTED = (
    {
        ("undeclared", "train/made_up", 1),
        ("non_finite", "train/reward", 1),
        ("counter_decrease", "train/global_valid_toks", 1),
    },
    {"rl.reward.mean": 3, "rl.policy.loss": 3, "rl.train.valid_tokens": 2, "rl.step.duration": 2},
)
CLEAN: list[tuple[int, dict[str, float]]] = [
    (step, {"train/reward": 0.5 + step, "train/loss": 1.0 / step, "train/global_valid_toks": 8.0})
    for step in (1, 2, 3)
]


def _steps(path: Path) -> list[tuple[int, dict[str, float]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(doc["step"], doc["data"]) for doc in map(json.loads, lines)]


DIRTY = _steps(FORMATS / "verl_file.jsonl")


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, mlflow_template: Path) -> dict[str, Path]:
    """A dirty and a clean store of each backend."""
    root = tmp_path_factory.mktemp("mlflow")
    found: dict[str, Path] = {}
    for kind in ("dirty", "clean"):
        steps = DIRTY if kind == "dirty" else CLEAN
        found[f"file-{kind}"] = root / f"{kind}-mlruns"
        write_runs(found[f"file-{kind}"].as_uri(), {"grpo-run": steps})
        found[f"sqlite-{kind}"] = root / f"{kind}.db"
        write_runs(sqlite_store(mlflow_template, found[f"sqlite-{kind}"]), {"grpo-run": steps})
    return found


def judged(report: LiveCheckReport) -> tuple[set[tuple[str, str, int]], dict[str, int]]:
    """(kind, prefix/key, count) of every finding, and logged values per logged row."""
    findings = {(f.kind, f.qualified_key, f.count) for f in report.findings}
    return findings, {r.row.name: r.logged for r in report.rows if r.logged}


@pytest.mark.parametrize("backend", ["file", "sqlite"])
def test_a_real_mlflow_run_is_judged_like_the_same_run_in_jsonl(
    evolution_catalog: Catalog, stores: dict[str, Path], backend: str
) -> None:
    report = check_file(str(stores[f"{backend}-dirty"]), evolution_catalog)
    assert judged(report) == EXPECTED
    (source,) = report.inputs
    assert source.format == {"file": "mlflow", "sqlite": "mlflow-sqlite"}[backend]
    (run,) = source.runs
    assert (run.name, run.experiment) == ("grpo-run", "grpo")


@pytest.mark.parametrize("backend", ["file", "sqlite"])
def test_a_clean_real_mlflow_run_has_no_finding(
    evolution_catalog: Catalog, stores: dict[str, Path], backend: str
) -> None:
    report = check_file(str(stores[f"{backend}-clean"]), evolution_catalog)
    assert report.findings == []
    logged = {"rl.reward.mean": 3, "rl.policy.loss": 3, "rl.train.valid_tokens": 3}
    assert judged(report)[1] == logged


def test_the_file_store_root_an_experiment_and_a_run_folder_are_each_read(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    """Every active run of the root or an experiment is an input; deleted runs, ``.trash``
    and an experiment holding only its meta.yaml (``0``, Default) are skipped."""
    root = tmp_path / "mlruns"
    kept, deleted, other = write_runs(
        root.as_uri(), {"kept": CLEAN, "deleted": DIRTY, "other": CLEAN[:1]}
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        mlflow.MlflowClient(tracking_uri=root.as_uri()).delete_run(deleted)
    del kept, other
    assert (root / ".trash").is_dir()
    assert (root / "0" / "meta.yaml").is_file()
    (experiment,) = [p for p in root.iterdir() if p.name not in {".trash", "0"}]
    for path in (root, experiment):
        report = check_file(str(path), evolution_catalog)
        assert report.findings == []
        assert sorted(r.name or "" for r in report.inputs[0].runs) == ["kept", "other"]
        assert {r.row.name: r.logged for r in report.rows if r.logged}["rl.policy.loss"] == 4
    report = check_file(str(experiment / deleted), evolution_catalog)  # named directly: read
    assert judged(report) == EXPECTED


def test_the_cli_names_each_run_of_a_store(
    stores: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(stores["sqlite-clean"])
    assert main(["live-check", db, "--root", str(EVOLUTION), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (entry,) = doc["inputs"]
    assert entry["format"] == "mlflow-sqlite"
    assert [(r["run_name"], r["experiment"]) for r in entry["runs"]] == [("grpo-run", "grpo")]
    assert main(["live-check", db, "--root", str(EVOLUTION)]) == 0
    text = capsys.readouterr().out
    assert "runs (1, each an input): 'grpo-run' (" in text


# --- what MLflow writes for odd values and keys -------------------------------------------

ODD_CATALOG = """\
owner: odd
module: odd
description: Keys MLflow allows that a path does not usually hold.
prefix: ""
teed:
  - logger_key: "eval score: top.1"
    name: rl.odd.top1
    kind: gauge
    unit: "1"
    description: A key with a space, a colon and a dot.
  - logger_key: "loss/total"
    name: rl.odd.loss
    kind: gauge
    unit: "1"
    description: A loss that may not be finite.
"""


@pytest.fixture(scope="module")
def odd(
    tmp_path_factory: pytest.TempPathFactory, mlflow_template: Path
) -> tuple[Catalog, dict[str, Path]]:
    root = tmp_path_factory.mktemp("odd")
    (root / "catalog").mkdir()
    (root / "catalog" / "odd.yaml").write_text(ODD_CATALOG, encoding="utf-8")
    result = load_and_check(root=root, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    steps = [
        (0, {"eval score: top.1": 0.5, "loss/total": 1.0}),
        (1, {"eval score: top.1": 0.75, "loss/total": math.nan}),
        (2, {"loss/total": math.inf}),
        (3, {"loss/total": -math.inf}),
    ]
    paths = {"file": root / "mlruns", "sqlite": root / "mlflow.db"}
    write_runs(paths["file"].as_uri(), {"odd": steps})
    write_runs(sqlite_store(mlflow_template, paths["sqlite"]), {"odd": steps})
    return result.catalog, paths


@pytest.mark.parametrize("backend", ["file", "sqlite"])
def test_nan_and_the_infinities_read_back_as_logged_in_both_stores(
    odd: tuple[Catalog, dict[str, Path]], backend: str
) -> None:
    """The file store writes nan/inf/-inf; the SQLite store is_nan and the largest double."""
    catalog, paths = odd
    source = Source(str(paths[backend]))
    values = [
        value
        for item in read_source(source, current_limits())
        for key, value in getattr(item, "metrics", {}).items()
        if key == "loss/total"
    ]
    assert values[0] == 1.0
    assert math.isnan(values[1])
    assert values[2:] == [math.inf, -math.inf]
    report = check_file(str(paths[backend]), catalog)
    assert judged(report) == (
        {("non_finite", "loss/total", 3)},
        {"rl.odd.top1": 2, "rl.odd.loss": 4},
    )


def test_mlflow_keeps_spaces_colons_and_dots_and_makes_slashes_folders(
    odd: tuple[Catalog, dict[str, Path]],
) -> None:
    files = {p.name for p in odd[1]["file"].rglob("*") if p.parent.name == "metrics"}
    assert {"eval score: top.1", "loss"} <= files


def test_reading_a_database_writes_nothing_and_creates_no_journal(
    evolution_catalog: Catalog, stores: dict[str, Path]
) -> None:
    db = stores["sqlite-dirty"]
    before = (db.read_bytes(), db.stat().st_mtime_ns, sorted(os.listdir(db.parent)))
    check_file(str(db), evolution_catalog)
    assert (db.read_bytes(), db.stat().st_mtime_ns, sorted(os.listdir(db.parent))) == before
