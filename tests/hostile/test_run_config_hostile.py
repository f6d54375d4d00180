"""A run's configuration and values as an attacker writes them: YAML alias bombs, numbers
past Python's integer-digits limit, NaN and infinities where a step is expected.

What an attacker controls: ``hparams.yaml`` beside a Lightning ``metrics.csv`` and the
``--run-config`` file (any YAML: anchors, aliases, tags, nesting), every cell of a CSV
log, every value of a ``trainer_state.json`` or a JSONL line, and the configuration values
a row's ``first_step``/``every`` name. None of it may print a traceback, and a 500-byte
YAML document may not cost hundreds of megabytes. Each CLI run is a child bounded by a
deadline and 300 MiB of peak RSS.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.safe_yaml import MAX_NODES, YamlBombError, load_bounded
from tests.catalog_projects import write_catalog
from tests.hostile_runs import REPO, run_cli

EVOLUTION = REPO / "tests" / "fixtures" / "evolution"
MEMORY_MIB = 300


def alias_bomb(levels: int) -> str:
    """A document of ``levels`` levels of nine aliases each: 9**levels values once expanded."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        aliases = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_it_is_built() -> None:
    with pytest.raises(YamlBombError, match=f"over {MAX_NODES} values"):
        load_bounded(alias_bomb(9))


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(YamlBombError, match="recursive"):
        load_bounded("a: &a [*a]\n")


def test_a_document_of_shared_values_within_the_bound_loads() -> None:
    assert load_bounded("base: &b {lr: 0.1}\nrun: *b\n") == {
        "base": {"lr": 0.1},
        "run": {"lr": 0.1},
    }


def csv_run(folder: Path, cell: str = "1.0") -> Path:
    """A Lightning version folder: ``metrics.csv`` with one row (its ``loss`` cell given)."""
    folder.mkdir(parents=True)
    (folder / "metrics.csv").write_text(f"step,loss\n1,{cell}\n", encoding="utf-8")
    return folder


def test_an_hparams_alias_bomb_is_a_notice_in_bounded_memory(tmp_path: Path) -> None:
    run = csv_run(tmp_path / "version_0")
    (run / "hparams.yaml").write_text(alias_bomb(10), encoding="utf-8")

    done = run_cli(
        "live-check", "--root", str(EVOLUTION), "--format", "json", str(run), tmp=tmp_path
    )

    report = json.loads(done.stdout)
    notices = [n["message"] for n in report["information"] if n["kind"] == "unread_config"]
    assert len(notices) == 1
    assert "aliases are expanded" in notices[0]
    assert done.peak_mib < MEMORY_MIB  # it took 2.7 GB before


def test_a_run_config_alias_bomb_is_an_error_naming_the_file(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(alias_bomb(10), encoding="utf-8")
    log = tmp_path / "run.jsonl"
    log.write_text('{"step": 1, "prefix": "train", "metrics": {"reward": 1.0}}\n')

    done = run_cli(
        "live-check",
        "--root",
        str(EVOLUTION),
        "--run-config",
        str(config),
        str(log),
        tmp=tmp_path,
    )

    assert done.code == 2
    assert f"{config}: refused (it stands for over {MAX_NODES} values" in done.stderr
    assert done.peak_mib < MEMORY_MIB


DIGITS = "9" * 5000


def trainer_state(folder: Path) -> Path:
    path = folder / "trainer_state.json"
    history = f'[{{"loss": {DIGITS}, "step": 1}}, {{"loss": 0.5, "step": 2}}]'
    path.write_text(f'{{"global_step": 2, "log_history": {history}}}', encoding="utf-8")
    return path


def jsonl(folder: Path) -> Path:
    path = folder / "run.jsonl"
    path.write_text(
        f'{{"step": 1, "prefix": "train", "metrics": {{"loss": {DIGITS}}}}}\n'
        '{"step": 2, "prefix": "train", "metrics": {"loss": 0.5}}\n',
        encoding="utf-8",
    )
    return path


def csv_cell(folder: Path) -> Path:
    return csv_run(folder / "version_0", DIGITS)


def hparams_value(folder: Path) -> Path:
    run = csv_run(folder / "version_0")
    (run / "hparams.yaml").write_text(f"lr: {DIGITS}\n", encoding="utf-8")
    return run


@pytest.mark.parametrize(
    "make", [trainer_state, jsonl, csv_cell, hparams_value], ids=lambda f: f.__name__
)
def test_a_number_of_5000_digits_is_read_without_a_traceback(tmp_path: Path, make: object) -> None:
    run = make(tmp_path)  # type: ignore[operator]

    done = run_cli(
        "live-check", "--root", str(EVOLUTION), "--format", "json", str(run), tmp=tmp_path
    )

    assert done.code in (0, 1), done.stderr
    assert json.loads(done.stdout)["records"] >= 1
    assert done.peak_mib < MEMORY_MIB


CONFIG_ROW = """\
owner: hostile.owner
module: hostile
description: A row due every val_check_interval steps.
prefix: val
teed:
  - logger_key: acc
    name: rl.hostile.val.accuracy
    kind: gauge
    unit: "1"
    description: Validation accuracy, logged every val_check_interval steps.
    requirement_level: conditionally_required
    condition: "config.trainer.val_check_interval > 0"
    first_step: "config.trainer.val_check_interval"
    every: "config.trainer.val_check_interval"
"""


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400", "1.5", "true"])
def test_a_non_finite_step_in_the_configuration_leaves_the_row_undecided(
    tmp_path: Path, value: str
) -> None:
    project = write_catalog(tmp_path / "project", CONFIG_ROW)
    log = tmp_path / "run.jsonl"
    log.write_text(
        f'{{"config": {{"trainer": {{"val_check_interval": {value}}}}}}}\n'
        '{"step": 1, "prefix": "train", "metrics": {"loss": 1.0}}\n'
        '{"step": 9, "prefix": "train", "metrics": {"loss": 1.0}}\n',
        encoding="utf-8",
    )

    done = run_cli("live-check", "--root", str(project), "--format", "json", str(log), tmp=tmp_path)

    assert done.code in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert not [f for f in report["findings"] if f["series"] == "rl.hostile.val.accuracy"]
