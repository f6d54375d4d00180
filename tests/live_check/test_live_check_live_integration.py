"""live-check against real transports: the SDK's OTLP exporter, a scrape, a real Prometheus.

``emit`` and the demo (a real teeing process) export; ``live-check --otlp``
and ``--scrape`` receive and judge; a real Prometheus server scraping the same
endpoint must see exactly the series live-check saw.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.model import Catalog
from codegen.emit import applies_to_loop
from codegen.runs.telemetry import parse_exposition, scrape
from tests.runtime.test_prometheus_integration import PrometheusServer, prometheus_binary

__all__ = ["prometheus_binary"]  # fixture used by name

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LOOP = "grpo_sync"
STEPS = 3


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _python(*args: str) -> list[str]:
    return [sys.executable, "-m", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "OTEL_METRICS_EXPORTER": "none", "METRIC_CATALOG_PROMOTE": ""}


def _report(*args: str) -> dict[str, Any]:
    """``live-check ARGS --format json`` run as a user runs it; its JSON report."""
    done = subprocess.run(
        _python("codegen", "live-check", *args, "--format", "json"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
        check=False,
    )
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _applicable(catalog: Catalog) -> set[str]:
    """The teed rows a sample run of LOOP logs (the report's rows are the teed ones)."""
    return {
        row.name
        for _, row in catalog.rows()
        if row.logger_key is not None
        and applies_to_loop(row, LOOP)
        and (row.first_step or 0) <= STEPS
    }


def _logged(report: dict[str, Any]) -> set[str]:
    return {row["series"] for row in report["rows"] if row["logged"]}


def _problems(report: dict[str, Any]) -> list[str]:
    return [f["message"] for f in report["findings"] if f["kind"] != "missing"]


@pytest.fixture
def emitting_endpoint() -> Iterator[str]:
    """``emit --prometheus`` serving a sample run of LOOP; yields the scrape URL."""
    process = subprocess.Popen(
        [
            *_python("codegen", "emit", "--loop", LOOP, "--steps", str(STEPS)),
            *("--prometheus", "127.0.0.1:0", "--duration", "60"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert process.stdout is not None
        url = ""
        for line in process.stdout:
            if line.startswith("prometheus: "):
                url = line.split()[1]
                break
        assert url, process.stderr.read() if process.stderr else ""
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_emit_over_otlp_is_clean_in_live_check_otlp(repo_catalog: Catalog) -> None:
    port = _free_port()
    checker = subprocess.Popen(
        [
            *_python("codegen", "live-check", "--otlp", f"127.0.0.1:{port}"),
            *("--loop", LOOP, "--format", "json"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert checker.stderr is not None
    assert "receiving OTLP" in checker.stderr.readline()
    emitted = subprocess.run(
        [
            *_python("codegen", "emit", "--loop", LOOP, "--steps", str(STEPS)),
            *("--otlp", f"http://127.0.0.1:{port}"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        check=False,
    )
    assert emitted.returncode == 0, emitted.stderr
    # emit's exporter flushed before it exited (the receiver answered): Ctrl-C ends the check.
    checker.send_signal(signal.SIGINT)
    out, err = checker.communicate(timeout=60)
    report = json.loads(out)
    assert _problems(report) == [], err
    assert _applicable(repo_catalog) <= _logged(report)
    assert report["coverage"]["overall"] == 1.0, report["coverage"]


def test_emit_over_prometheus_is_clean_in_live_check_scrape(
    repo_catalog: Catalog, emitting_endpoint: str
) -> None:
    report = _report("--scrape", emitting_endpoint, "--loop", LOOP)
    assert _problems(report) == []
    assert _applicable(repo_catalog) <= _logged(report)
    assert report["coverage"]["overall"] == 1.0, report["coverage"]


def _series_names(server: PrometheusServer, deadline: float) -> set[str]:
    query = urllib.parse.urlencode({"match[]": '{__name__=~"rl_.+"}'})
    url = f"http://127.0.0.1:{server.port}/api/v1/series?{query}"
    names: set[str] = set()
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                body = json.loads(response.read())
            names = {
                s["__name__"].removesuffix("_bucket").removesuffix("_sum").removesuffix("_count")
                for s in body["data"]
            }
        except OSError:
            names = set()
        if names:
            return names
        time.sleep(0.5)
    return names


def test_a_real_prometheus_sees_exactly_the_series_live_check_saw(
    repo_catalog: Catalog, emitting_endpoint: str, prometheus_binary: str, tmp_path: Path
) -> None:
    target = urllib.parse.urlsplit(emitting_endpoint).netloc
    workdir = tmp_path / "prometheus"
    workdir.mkdir()
    server = PrometheusServer(prometheus_binary, int(target.rsplit(":", 1)[1]), workdir)
    try:
        report = _report("--scrape", emitting_endpoint, "--loop", LOOP)
        # What live-check judged: every family of the same endpoint, through its parser.
        seen = {
            point.name
            for point in parse_exposition(scrape(emitting_endpoint))
            if point.name.startswith("rl_")
        }
        in_prometheus = _series_names(server, time.monotonic() + 30)
    finally:
        server.stop()
    assert _problems(report) == []
    assert {
        row.prometheus_name for _, row in repo_catalog.rows() if row.name in _logged(report)
    } <= seen
    # Histograms are stored as _bucket/_sum/_count; both sides name the family.
    assert in_prometheus == seen


def test_the_demo_a_real_teeing_process_is_clean_over_otlp_and_over_a_scrape(
    tmp_path: Path,
) -> None:
    otlp_port, prometheus_port = _free_port(), _free_port()
    receiver = subprocess.Popen(
        [
            *_python("codegen", "live-check", "--otlp", f"127.0.0.1:{otlp_port}"),
            "--loop",
            LOOP,
            "--format",
            "json",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert receiver.stderr is not None
    assert "receiving OTLP" in receiver.stderr.readline()
    demo = subprocess.Popen(
        [
            *_python("examples.demo", "--steps", "5", "--port", str(prometheus_port), "--serve"),
            "--otlp",
            f"http://127.0.0.1:{otlp_port}/v1/metrics",
            "--jsonl",
            str(tmp_path / "demo.jsonl"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert demo.stdout is not None
        for line in demo.stdout:
            if "Ctrl-C" in line or "serving" in line.lower():
                break
        over_scrape = _report("--scrape", f"http://127.0.0.1:{prometheus_port}", "--loop", LOOP)
    finally:
        demo.terminate()  # SIGTERM: the demo stops serving and flushes its OTLP export
        demo.wait(timeout=30)
    receiver.send_signal(signal.SIGINT)
    out, _ = receiver.communicate(timeout=60)
    over_otlp = json.loads(out)
    assert _problems(over_otlp) == []
    assert _problems(over_scrape) == []
    logged = _logged(_report(str(tmp_path / "demo.jsonl")))
    assert logged
    assert _logged(over_otlp) == _logged(over_scrape) == logged
