"""``live-check --run-config FILE``: the configuration of a run whose log format holds none.

Flat JSONL, TensorBoard event files, MLflow runs and ``trainer_state.json`` carry no
configuration, so rows whose ``condition`` or ``first_step`` names ``config.<path>``
could only be conditional information there. torchtitan saves its job config as JSON
and Hydra writes ``.hydra/config.yaml``: given either, live-check judges those rows as
it does for a JSONL run that logged its configuration in a header.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from codegen.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "torchtitan"


@pytest.fixture(scope="module")
def runs() -> object:
    """The example's runs module (it imports nothing the tee needs to declare)."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import titan_metrics.runs as module

        yield module
    finally:
        sys.path.remove(str(EXAMPLE))
        for name in [name for name in sys.modules if name.split(".")[0] == "titan_metrics"]:
            del sys.modules[name]


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main(["live-check", *args, "--root", str(EXAMPLE), "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip().startswith("{") else {}


def test_a_flat_run_with_its_config_is_judged_at_full_coverage(
    runs: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Validation disabled in the config: its rows are not applicable, not unseen. Without
    the config its conditional rows are not known to apply, so they are not unseen either."""
    spec = runs.RUNS[0]  # type: ignore[attr-defined]
    log = tmp_path / "run.jsonl"
    runs.write_flat_log(spec, log)  # type: ignore[attr-defined]
    code, report = _check(capsys, str(log))
    assert code == 0
    assert report["coverage"]["overall"] == 1.0  # type: ignore[index]
    assert report["presence"]["not_applicable"] == 0  # type: ignore[index]
    config = tmp_path / "job_config.json"
    config.write_text(json.dumps(spec.config), encoding="utf-8")
    code, report = _check(capsys, str(log), "--run-config", str(config))
    assert code == 0
    assert report["coverage"]["overall"] == 1.0  # type: ignore[index]
    assert report["presence"]["not_applicable"] == 4  # type: ignore[index]


def test_a_flat_run_missing_what_its_yaml_config_requires_fails(
    runs: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Validation enabled in a YAML config and never logged: its rows are missing."""
    spec = next(s for s in runs.RUNS if s.name == "llama3_8b_validation")  # type: ignore[attr-defined]
    log = tmp_path / "run.jsonl"
    with log.open("w", encoding="utf-8") as out:
        for step, metrics in runs.run_records(spec):  # type: ignore[attr-defined]
            if "validation_metrics/loss" not in metrics:
                out.write(json.dumps({"step": step, **metrics}) + "\n")
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(dict(spec.config)), encoding="utf-8")
    code, report = _check(capsys, str(log), "--run-config", str(config), "--fail-on", "missing")
    assert code == 1
    assert report["summary"]["kinds"] == {"missing": 4}  # type: ignore[index]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "holds a list, not a mapping"),
        ("a: [", "neither JSON nor YAML"),
        (None, "cannot read"),
    ],
)
def test_a_bad_run_config_exits_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    log = tmp_path / "run.jsonl"
    log.write_text('{"step": 1, "grad_norm": 1.0}\n', encoding="utf-8")
    config = tmp_path / "config.yaml"
    if content is not None:
        config.write_text(content, encoding="utf-8")
    code = main(["live-check", str(log), "--root", str(EXAMPLE), "--run-config", str(config)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--run-config" in err
    assert message in err
    assert str(config) in err
