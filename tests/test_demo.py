"""The demo run (``make demo``): logs every step, scrapes its own endpoint, prints both."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from examples import demo
from examples.grpo_owner import VALIDATION_EVERY
from metric_catalog import exporters
from metric_catalog._warn import MetricCatalogWarning
from tests.otel_fixtures import clean_otel, expected_from_jsonl

__all__ = ["clean_otel"]  # fixture used by name


def test_run_scrapes_every_logged_series_with_its_last_value(
    clean_otel: None, tmp_path: Path
) -> None:
    result = demo.run(12, jsonl_path=tmp_path / "run.jsonl")
    lines = [json.loads(line) for line in result.jsonl_path.read_text().splitlines()]
    assert {line["step"] for line in lines} == set(range(12))
    assert {line["prefix"] for line in lines} >= {"train", "timing/train", "validation"}
    assert sum(line["prefix"] == "validation" for line in lines) == len(
        range(0, 12, VALIDATION_EVERY)
    )
    expected = expected_from_jsonl(result.jsonl_path)
    assert expected  # the owner's rows were declared and logged
    for name, value in expected.items():
        assert result.samples[name] == pytest.approx(value, rel=1e-9), name
    assert result.samples["rl_vllm_batch_duration_seconds_count"] == 4 * 12
    assert exporters.prometheus_address() is None  # shut down after the run


def test_main_prints_the_scraped_table_and_the_jsonl_path(clean_otel: None, tmp_path: Path) -> None:
    out = io.StringIO()
    path = tmp_path / "demo.jsonl"
    assert demo.main(["--steps", "3", "--jsonl", str(path), "--seed", "7"], out=out) == 0
    text = out.getvalue()
    assert "Series scraped from http://127.0.0.1:" in text
    assert f"JSONL log: {path}" in text
    reward = json.loads(path.read_text().splitlines()[0])["metrics"]["reward"]
    assert reward is not None
    rows = dict(line.split() for line in text.splitlines() if line.startswith("  rl_"))
    assert float(rows["rl_train_valid_sequences_total"]) == 3 * 256


def test_main_reports_a_taken_port_instead_of_crashing(
    clean_otel: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with pytest.warns(MetricCatalogWarning, match="Address already in use"):
            status = demo.main(["--steps", "1", "--port", str(port), "--jsonl", str(tmp_path)])
    assert status == 1
    assert f"127.0.0.1:{port}" in capsys.readouterr().err


def test_parse_exposition_keeps_rl_samples_and_drops_buckets() -> None:
    text = (
        "# TYPE rl_step_duration_seconds histogram\n"
        'rl_step_duration_seconds_bucket{le="1.0"} 2.0\n'
        "rl_step_duration_seconds_count 2.0\n"
        "rl_step_duration_seconds_sum 1.5\n"
        "# TYPE rl_reward_mean gauge\n"
        'rl_reward_mean{rank="0"} 0.5\n'
        "# TYPE target_info gauge\n"
        'target_info{service_name="x"} 1.0\n'
    )
    assert demo.parse_exposition(text) == {
        "rl_step_duration_seconds_count": 2.0,
        "rl_step_duration_seconds_sum": 1.5,
        'rl_reward_mean{rank="0"}': 0.5,
    }


@pytest.mark.integration
def test_make_demo_entry_point_runs_in_a_fresh_process(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "examples.demo", "--steps", "50", "--jsonl", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "src:."},
    )
    assert result.returncode == 0, result.stderr
    assert "rl_reward_mean" in result.stdout
    assert "rl_step_duration_seconds" in result.stdout
    assert len(path.read_text().splitlines()) >= 50 * 3
