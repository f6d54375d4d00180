"""``--baseline-values``: an open placeholder value the baseline's run did not take is a
``new_open_value`` finding, so ``--fail-on new_open_value`` gates a misspelling an open
family swallowed."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_stream
from codegen.live_check.baseline import (
    BaselineError,
    load_baseline_values,
    new_open_value_findings,
)
from tests.catalog_projects import POLICY_LOSS_FAMILY as OPEN
from tests.catalog_projects import loaded_catalog


def _lines(keys: list[str]) -> bytes:
    metrics = dict.fromkeys(keys, 0.1)
    lines = [{"step": s, "prefix": "", "metrics": metrics} for s in (1, 2)]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _check(tmp_path: Path, keys: list[str]) -> LiveCheckReport:
    catalog = loaded_catalog(tmp_path / "project", OPEN)
    return check_stream(io.BytesIO(_lines(keys)), catalog)


def _baseline(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_value_the_baseline_did_not_take_is_a_new_open_value(tmp_path: Path) -> None:
    """The baseline's run logged ``kl`` and ``entropy``; this one ``entropy_los`` too."""
    old = _check(tmp_path, ["policy/kl", "policy/entropy"])
    path = _baseline(tmp_path, json.loads(old.to_json()))
    report = _check(tmp_path, ["policy/kl", "policy/entropy_los"])
    found = new_open_value_findings(report, load_baseline_values(path))
    assert [(f.kind, f.series, f.count, f.example) for f in found] == [
        ("new_open_value", "rl.policy.loss_term", 1, "rl.loss_name took 'entropy_los'")
    ]
    assert found[0].position is not None  # placed at the row in the catalog
    assert "entropy_los" in found[0].message()


@pytest.mark.parametrize(
    "slot",
    [
        pytest.param({"seen": ["entropy_los", "kl"], "capped": False}, id="all-known"),
        pytest.param({"seen": ["kl"], "capped": True}, id="baseline-capped"),
    ],
)
def test_no_new_open_value_when_the_baseline_knew_them_or_kept_part(
    tmp_path: Path, slot: dict[str, object]
) -> None:
    """Every value known, or a capped baseline slot (a value may have been left out)."""
    path = _baseline(tmp_path, {"rl.policy.loss_term": {"rl.loss_name": slot}})
    report = _check(tmp_path, ["policy/kl", "policy/entropy_los"])
    assert new_open_value_findings(report, load_baseline_values(path)) == []


@pytest.mark.parametrize(
    ("text", "says"),
    [
        pytest.param("{not json", "is not JSON", id="not-json"),
        pytest.param("[]", "is not a JSON object", id="not-object"),
        pytest.param('{"findings": [], "coverage": {}}', "coverage.open_values", id="no-values"),
        pytest.param('{"r": {"a": {"seen": [1]}}}', "open_values['r']['a']", id="bad-seen"),
        pytest.param('{"r": []}', "open_values['r']", id="bad-row"),
    ],
)
def test_a_bad_baseline_is_refused_naming_the_file_and_field(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BaselineError, match=r"baseline\.json") as caught:
        load_baseline_values(path)
    assert says in str(caught.value)


def test_a_missing_baseline_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="cannot read the baseline"):
        load_baseline_values(tmp_path / "absent.json")


def _project(root: Path) -> Path:
    (root / "catalog").mkdir(parents=True)
    (root / "catalog" / "policy.yaml").write_text(OPEN, encoding="utf-8")
    (root / "pyproject.toml").write_text("[tool.metric-catalog]\n", encoding="utf-8")
    (root / "run.jsonl").write_bytes(_lines(["policy/kl", "policy/entropy_los"]))
    return root


@pytest.mark.parametrize(
    ("known", "fail_on", "code"),
    [
        pytest.param(["kl"], ["--fail-on", "new_open_value"], 1, id="gated-new-value"),
        pytest.param(["kl"], [], 0, id="reported-not-gated"),
        pytest.param(["kl", "entropy_los"], ["--fail-on", "new_open_value"], 0, id="all-known"),
    ],
)
def test_fail_on_new_open_value_gates_a_value_not_in_the_baseline(
    known: list[str],
    fail_on: list[str],
    code: int,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(_project(tmp_path))
    values = {"rl.policy.loss_term": {"rl.loss_name": {"seen": known, "capped": False}}}
    _baseline(tmp_path, {"findings": [], "coverage": {"open_values": values}})
    argv = ["live-check", "run.jsonl", "--baseline-values", "baseline.json", *fail_on]
    assert main([*argv, "--format", "json"]) == code
    document = json.loads(capsys.readouterr().out)
    kinds = [f["kind"] for f in document["findings"]]
    assert kinds == ([] if len(known) == 2 else ["new_open_value"])


def test_an_unreadable_baseline_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path))
    assert main(["live-check", "run.jsonl", "--baseline-values", "absent.json"]) == 2
    assert "absent.json" in capsys.readouterr().err


def _known_only_kl(root: Path, name: str) -> None:
    values = {"rl.policy.loss_term": {"rl.loss_name": {"seen": ["kl"], "capped": False}}}
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(json.dumps(values), encoding="utf-8")


@pytest.mark.parametrize(
    ("table", "flags"),
    [
        pytest.param('baseline-values = "ci/baseline.json"\n', [], id="table-key"),
        pytest.param("", ["--config", "baseline-values=ci/baseline.json"], id="config-option"),
    ],
)
def test_the_baseline_can_be_the_tables_key_or_a_config_option(
    table: str,
    flags: list[str],
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Root-relative, read from the project's folder though the command runs below it."""
    root = _project(tmp_path)
    (root / "pyproject.toml").write_text(f"[tool.metric-catalog]\n{table}", encoding="utf-8")
    _known_only_kl(root, "ci/baseline.json")
    (root / "sub").mkdir()
    monkeypatch.chdir(root / "sub")
    argv = ["live-check", "../run.jsonl", *flags, "--fail-on", "new_open_value"]
    assert main([*argv, "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [f["kind"] for f in document["findings"]] == ["new_open_value"]


def test_the_flag_wins_over_the_tables_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table's baseline knows only ``kl``; the flag's knows both values: no finding."""
    root = _project(tmp_path)
    text = '[tool.metric-catalog]\nbaseline-values = "ci/baseline.json"\n'
    (root / "pyproject.toml").write_text(text, encoding="utf-8")
    _known_only_kl(root, "ci/baseline.json")
    both = {"seen": ["kl", "entropy_los"], "capped": False}
    _baseline(root, {"rl.policy.loss_term": {"rl.loss_name": both}})
    monkeypatch.chdir(root)
    argv = ["live-check", "run.jsonl", "--baseline-values", "baseline.json"]
    assert main([*argv, "--fail-on", "new_open_value"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    ("value", "says"),
    [
        pytest.param("/abs/baseline.json", "is absolute", id="absolute"),
        pytest.param("../baseline.json", "leaves the project root", id="outside"),
    ],
)
def test_a_config_baseline_outside_the_project_is_refused_naming_the_key(
    value: str,
    says: str,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(_project(tmp_path))
    assert main(["live-check", "run.jsonl", "--config", f"baseline-values={value}"]) == 2
    err = capsys.readouterr().err
    assert "baseline-values" in err
    assert says in err


def test_a_missing_baseline_named_by_the_table_is_a_usage_error_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path)
    text = '[tool.metric-catalog]\nbaseline-values = "ci/absent.json"\n'
    (root / "pyproject.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(root)
    assert main(["live-check", "run.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "baseline-values:" in err
    assert "absent.json" in err


def test_a_config_baseline_symlinked_out_of_the_project_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link's target holds keys that must never reach the error message."""
    root = _project(tmp_path / "project")
    secret = tmp_path / "secret.json"
    secret.write_text('{"SECRET_TOKEN_NAME": []}', encoding="utf-8")
    (root / "ci").mkdir()
    (root / "ci" / "baseline.json").symlink_to(secret)
    monkeypatch.chdir(root)
    argv = ["live-check", "run.jsonl", "--config", "baseline-values=ci/baseline.json"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "baseline-values" in err
    assert "outside" in err
    assert "SECRET_TOKEN_NAME" not in err


def test_a_config_baseline_symlinked_inside_the_project_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path)
    _known_only_kl(root, "reports/baseline.json")
    (root / "ci").mkdir()
    (root / "ci" / "baseline.json").symlink_to(root / "reports" / "baseline.json")
    monkeypatch.chdir(root)
    argv = ["live-check", "run.jsonl", "--config", "baseline-values=ci/baseline.json"]
    assert main([*argv, "--fail-on", "new_open_value"]) == 1
    capsys.readouterr()


@pytest.mark.parametrize("origin", ["flag", "config"])
def test_a_fifo_baseline_is_refused_without_blocking(
    origin: str,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No writer ever opens the FIFO: a blocking open would hang the test."""
    root = _project(tmp_path)
    os.mkfifo(root / "baseline.json")
    monkeypatch.chdir(root)
    flags = (
        ["--baseline-values", "baseline.json"]
        if origin == "flag"
        else ["--config", "baseline-values=baseline.json"]
    )
    assert main(["live-check", "run.jsonl", *flags]) == 2
    assert "FIFO" in capsys.readouterr().err
