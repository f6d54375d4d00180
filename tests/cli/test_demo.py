"""The demo run (``make demo``): logs every step, scrapes its own endpoint, prints both."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
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
    every = [json.loads(line) for line in result.jsonl_path.read_text().splitlines()]
    lines = [line for line in every if "metrics" in line]
    points = [line for line in every if "series" in line]
    assert {line["step"] for line in lines} == set(range(12))
    # The recorded series is in the log too, one point line per recorded value.
    assert len(points) == 4 * 12
    assert {p["series"] for p in points} == {"rl.vllm.batch.duration"}
    assert {p["step"] for p in points} == set(range(12))
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
    argv = ["--steps", "3", "--jsonl", str(path), "--seed", "7", "--port", "0"]
    assert demo.main(argv, out=out) == 0
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
        # A free port: 9464 may be taken by another run on this machine.
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "src:.", "METRIC_CATALOG_PROMETHEUS_PORT": "0"},
    )
    assert result.returncode == 0, result.stderr
    assert "rl_reward_mean" in result.stdout
    assert "rl_step_duration_seconds" in result.stdout
    assert len(path.read_text().splitlines()) >= 50 * 3


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("environ", "port"),
    [
        ({}, 9464),
        ({"METRIC_CATALOG_PROMETHEUS_PORT": "9999"}, 9999),
        ({"METRIC_CATALOG_PROMETHEUS_PORT": "0"}, 0),
        ({"OTEL_EXPORTER_PROMETHEUS_PORT": "9100"}, 9100),
        ({"METRIC_CATALOG_PROMETHEUS_PORT": "9200", "OTEL_EXPORTER_PROMETHEUS_PORT": "9100"}, 9200),
        ({"OTEL_METRICS_EXPORTER": "bogus"}, 9464),  # only the port variables are read
    ],
)
def test_default_port_is_the_documented_one(environ: dict[str, str], port: int) -> None:
    """9464 unless METRIC_CATALOG_PROMETHEUS_PORT (or the OTel variable) says otherwise."""
    assert demo.default_port(environ) == port


def test_malformed_port_variable_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_PORT", "http")
    assert demo.main(["--steps", "1"]) == 2
    assert "METRIC_CATALOG_PROMETHEUS_PORT" in capsys.readouterr().err


def test_main_serves_on_the_port_the_environment_names(
    clean_otel: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --port the demo listens where METRIC_CATALOG_PROMETHEUS_PORT says."""
    port = _free_port()
    monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_PORT", str(port))
    out = io.StringIO()
    assert demo.main(["--steps", "2", "--jsonl", str(tmp_path / "r.jsonl")], out=out) == 0
    assert f"Series scraped from http://127.0.0.1:{port}/metrics:" in out.getvalue()


def test_serve_keeps_the_endpoint_up_until_stopped(clean_otel: None, tmp_path: Path) -> None:
    """In-process: the endpoint answers while serving and is shut down after the stop."""
    result = demo.run(2, jsonl_path=tmp_path / "r.jsonl", keep_serving=True)
    stop = threading.Event()
    out = io.StringIO()
    server = threading.Thread(target=demo.serve, args=(result, out, stop))
    server.start()
    try:
        time.sleep(0.3)
        assert "rl_reward_mean" in demo.scrape(*result.address)
    finally:
        stop.set()
        server.join(timeout=10)
    assert not server.is_alive()
    assert exporters.prometheus_address() is None
    assert "until Ctrl-C" in out.getvalue()
    assert out.getvalue().endswith("demo: stopped serving.\n")


def _read_until(process: subprocess.Popen[str], marker: str, deadline: float) -> str:
    """stdout lines of ``process`` up to the one holding ``marker`` (fails past ``deadline``)."""
    assert process.stdout is not None
    seen: list[str] = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            return "".join(seen)
    pytest.fail(f"no {marker!r} in the demo's output: {''.join(seen)!r}")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_serve_mode_serves_until_sigint(tmp_path: Path) -> None:
    """``python -m examples.demo --serve``: scrapeable after the run, exits 0 on Ctrl-C."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": "src:.", "METRIC_CATALOG_PROMETHEUS_PORT": str(port)}
    process = subprocess.Popen(
        [sys.executable, "-m", "examples.demo", "--steps", "3", "--serve"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A suite run as a background job (`make test &`, CI under nohup) inherits SIGINT
        # ignored, and Python then keeps it ignored: give the demo the terminal's Ctrl-C.
        preexec_fn=_default_sigint,  # noqa: PLW1509 - only resets a signal disposition
    )
    try:
        deadline = time.monotonic() + 60
        text = _read_until(process, "until Ctrl-C", deadline)
        assert f"http://127.0.0.1:{port}/metrics" in text
        first = demo.scrape("127.0.0.1", port)
        time.sleep(1.0)
        # Still serving a second later: the run is over, the endpoint is not.
        assert process.poll() is None
        assert demo.scrape("127.0.0.1", port) == first
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=10)
    assert process.returncode == 0, stderr
    assert "demo: stopped serving." in stdout
    assert "Traceback" not in stderr
    with pytest.raises(urllib.error.URLError):
        demo.scrape("127.0.0.1", port, timeout=2)
