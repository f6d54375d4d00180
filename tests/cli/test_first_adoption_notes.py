"""What a newcomer adopting metric-catalog on an existing trainer is told when a check
cannot do what its exit status seems to promise: a scan that recognised no logging call,
a ``--fail-on missing`` no row can trigger, and the example row ``init`` writes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from codegen.cli import main
from codegen.commands.live_check import NOTHING_REQUIRED_NOTE
from codegen.commands.scan import NO_CALLS_NOTE

ROWS = """\
owner: app.trainer
module: trainer
description: Rows the trainer logs once per step.
prefix: ""
teed:
  - logger_key: trainer/epoch
    name: rl.trainer.epoch
    kind: gauge
    unit: "{epoch}"
    description: Epoch of the training data the step belongs to.
  - logger_key: policy/loss
    name: rl.policy.loss
    kind: gauge
    unit: ""
    description: Policy-gradient loss of the step.
"""

# A trainer that logs through a tracker handed to its constructor, as many RL stacks do.
TRAINER = textwrap.dedent(
    """\
    class Trainer:
        def __init__(self, tracker: "Tracker") -> None:
            self.tracker = tracker

        def step(self) -> None:
            self.tracker.log({"trainer/epoch": 0, "policy/los": 0.1}, step=1)
    """
)


def _project(root: Path, rows: str = ROWS, table: str = "") -> Path:
    """``root`` as a project holding ``catalog/trainer.yaml`` and ``src/trainer.py``."""
    (root / "catalog").mkdir()
    (root / "catalog" / "trainer.yaml").write_text(rows, encoding="utf-8")
    (root / "pyproject.toml").write_text(f"[tool.metric-catalog]\n{table}", encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "trainer.py").write_text(TRAINER, encoding="utf-8")
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_scan_that_recognised_no_logging_call_says_how_to_declare_the_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path))
    code, _out, err = _run(capsys, "scan", "src", "--no-unlogged")
    assert code == 0
    assert "1 file(s), 0 logging call(s)" in err
    assert NO_CALLS_NOTE.format(files=1) in err
    assert 'scan-calls = [{call = "tracker.log", metrics = 0}]' in err


def test_a_scan_that_recognised_no_logging_call_names_the_call_handed_the_dict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path))
    _code, _out, err = _run(capsys, "scan", "src", "--no-unlogged")
    assert (
        "  `self.tracker.log` (2 key(s), first at src/trainer.py:6): "
        '{call = "tracker.log", metrics = 0}'
    ) in err


def test_a_scan_that_recognised_enough_calls_names_no_candidate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = 'scan-calls = [{call = "tracker.log", metrics = 0}]\n'
    trainer = "".join(f"    self.tracker.log({{'k{i}': 1}})\n" for i in range(3))
    monkeypatch.chdir(_project(tmp_path, table=table))
    (tmp_path / "src" / "trainer.py").write_text(
        "class T:\n  def step(self):\n" + trainer.replace("    ", "    "), encoding="utf-8"
    )
    _code, _out, err = _run(capsys, "scan", "src", "--no-unlogged")
    assert "3 logging call(s)" in err
    assert "may be how the code logs" not in err


def test_the_scan_calls_entry_the_note_suggests_finds_the_trainers_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = 'scan-calls = [{call = "tracker.log", metrics = 0}]\n'
    monkeypatch.chdir(_project(tmp_path, table=table))
    code, out, err = _run(capsys, "scan", "src", "--no-unlogged")
    assert code == 1
    assert "key 'policy/los'" in out
    assert "key 'trainer/epoch'" not in out
    assert "no logging call was recognised" not in err


def test_a_json_scan_stays_one_json_document_without_the_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path))
    code, out, err = _run(capsys, "scan", "src", "--no-unlogged", "--format", "json")
    assert code == 0
    assert json.loads(out)["calls"] == 0
    assert "no logging call was recognised" not in err


def _run_log(root: Path, metrics: dict[str, float]) -> Path:
    """A JSONL run of two steps logging ``metrics`` bare."""
    lines = [{"step": step, "prefix": "", "metrics": metrics} for step in (1, 2)]
    path = root / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("level", "fail_on", "noted"),
    [
        (None, ["undeclared,missing"], True),
        (None, ["undeclared", "--fail-on", "missing"], True),
        (None, [" Missing "], False),  # not a kind: refused before the catalog is read
        (None, ["undeclared"], False),
        ("recommended", ["missing"], True),
        ("required", ["missing"], False),
        ("conditionally_required", ["missing"], False),
    ],
)
def test_fail_on_missing_says_when_no_row_of_the_catalog_can_be_missing(
    level: str | None,
    fail_on: list[str],
    noted: bool,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = ROWS
    if level is not None:
        condition = "\n    condition: when a policy is trained" if level.startswith("cond") else ""
        rows += f"    requirement_level: {level}{condition}\n"
    monkeypatch.chdir(_project(tmp_path, rows=rows))
    _run_log(tmp_path, {"trainer/epoch": 0.0})
    main(["live-check", "run.jsonl", "--fail-on", *fail_on])
    err = capsys.readouterr().err
    assert (NOTHING_REQUIRED_NOTE in err) is noted


def test_the_example_row_init_writes_is_required_so_fail_on_missing_can_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rl"\n', encoding="utf-8")
    assert main(["init", "--root", str(tmp_path)]) == 0
    monkeypatch.chdir(tmp_path)
    logged = {"step": 1, "prefix": "train", "metrics": {"loss": 0.4}}
    (tmp_path / "run.jsonl").write_text(json.dumps(logged) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["live-check", "run.jsonl", "--fail-on", "undeclared,missing"]) == 0
    assert NOTHING_REQUIRED_NOTE not in capsys.readouterr().err
    assert main(["resolve", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    levels = {row["name"]: row.get("requirement_level") for row in rows}
    assert levels["rl.example.loss"] == "required"
