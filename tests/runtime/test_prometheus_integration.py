"""End to end against a real Prometheus server: the demo owner's series arrive, translated.

Starts the Debian ``prometheus`` binary with a generated config (1 s scrape
interval, loopback only, free ports, storage in tmp), runs a few demo steps
with the Prometheus exporter on a loopback port, and polls Prometheus's HTTP
API until every teed series exists with its translated name and last value.
Skipped locally when the binary is missing; fails under ``CI``, which installs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from examples import demo
from metric_catalog import exporters, vocabulary
from metric_catalog.generated import vllm
from metric_catalog.tee import tee_metrics
from metric_catalog.vocabulary import MetricAttribute, TeedMetric
from tests.otel_fixtures import clean_otel, expected_from_jsonl, free_port, prometheus_name

__all__ = ["clean_otel"]  # fixture used by name

pytestmark = pytest.mark.integration

_WAIT_SECONDS = 30.0


@pytest.fixture
def prometheus_binary() -> str:
    """Path of the ``prometheus`` binary; a missing one skips locally and fails in CI."""
    path = shutil.which("prometheus")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("prometheus binary not found, but CI must install it (.ci/run)")
        pytest.skip("prometheus binary not installed (apt-get install prometheus)")
    return path


class PrometheusServer:
    """A Prometheus process scraping one loopback target (or ``scrape_configs`` given as YAML)."""

    def __init__(
        self, binary: str, target_port: int, workdir: Path, scrape_configs: str | None = None
    ) -> None:
        self.port = free_port()
        config = workdir / "prometheus.yml"
        if scrape_configs is None:
            scrape_configs = (
                "  - job_name: metric-catalog-demo\n"
                "    static_configs:\n"
                f"      - targets: ['127.0.0.1:{target_port}']\n"
            )
        config.write_text(
            "global:\n"
            "  scrape_interval: 1s\n"
            "  scrape_timeout: 1s\n"
            "scrape_configs:\n" + scrape_configs,
            encoding="utf-8",
        )
        self.log_path = workdir / "prometheus.log"
        self._log = self.log_path.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )

    def query(self, promql: str) -> list[dict[str, Any]]:
        """Result vector of an instant query; ``[]`` while the server is not up yet."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode(
            {"query": promql}
        )
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                body = json.loads(response.read())
        except OSError:
            return []
        assert body["status"] == "success", body
        return list(body["data"]["result"])

    def stop(self) -> None:
        """Terminate the process (kill after 10 s) and close its log."""
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self._log.close()


@pytest.fixture
def demo_endpoint(clean_otel: None, tmp_path: Path) -> Iterator[demo.DemoResult]:
    """Five demo steps, with the endpoint left serving for Prometheus to scrape."""
    result = demo.run(5, jsonl_path=tmp_path / "run.jsonl", keep_serving=True)
    yield result
    exporters.shutdown()


@pytest.fixture
def prometheus(
    prometheus_binary: str, demo_endpoint: demo.DemoResult, tmp_path: Path
) -> Iterator[PrometheusServer]:
    """A real Prometheus scraping the demo endpoint every second."""
    workdir = tmp_path / "prometheus"
    workdir.mkdir()
    server = PrometheusServer(prometheus_binary, demo_endpoint.address[1], workdir)
    yield server
    server.stop()


def _scraped(server: PrometheusServer) -> dict[str, float]:
    values: dict[str, float] = {}
    for series in server.query('{__name__=~"rl_.+", le=""}'):
        values[series["metric"]["__name__"]] = float(series["value"][1])
    return values


def test_prometheus_scrapes_every_teed_series_with_its_translated_name_and_last_value(
    prometheus: PrometheusServer, demo_endpoint: demo.DemoResult
) -> None:
    expected = expected_from_jsonl(demo_endpoint.jsonl_path)
    batch = prometheus_name(vllm.VLLM_BATCH_DURATION)
    assert len(expected) >= 20  # the whole GRPO owner, not a handful of rows
    deadline = time.monotonic() + _WAIT_SECONDS
    scraped: dict[str, float] = {}
    while time.monotonic() < deadline:
        scraped = _scraped(prometheus)
        if set(expected) <= set(scraped) and f"{batch}_count" in scraped:
            break
        assert prometheus.process.poll() is None, prometheus.log_path.read_text()
        time.sleep(0.5)
    missing = sorted(set(expected) - set(scraped))
    assert not missing, f"not in Prometheus after {_WAIT_SECONDS} s: {missing}"
    for name, value in expected.items():
        assert scraped[name] == pytest.approx(value, rel=1e-9), name
    assert scraped[f"{batch}_count"] == 4 * 5  # four recorded batches per step
    (series,) = prometheus.query("rl_reward_mean")
    assert series["metric"]["job"] == "metric-catalog-demo"
    assert series["metric"]["instance"] == f"127.0.0.1:{demo_endpoint.address[1]}"
    assert "otel_scope_name" not in series["metric"]


@pytest.fixture
def renamed_endpoint(clean_otel: None) -> Iterator[tuple[int, dict[str, float]]]:
    """A series renamed while the code keeps its key: old (deprecated) and new row, teed."""
    vocabulary.register_teed_metrics(
        [
            TeedMetric("reward", "rl.reward.avg", replaced_by="rl.reward.mean"),
            TeedMetric("reward", "rl.reward.mean"),
            TeedMetric(
                "setup/{rl.setup.phase}_time_s",
                "rl.setup.duration",
                unit="s",
                prefix="timing/setup",
                attributes=(MetricAttribute("rl.setup.phase", values=("policy", "vllm")),),
            ),
        ],
        owner=__name__,
    )
    exporters.configure(
        config=exporters.ExporterConfig(
            exporters=("prometheus",), prometheus_host="127.0.0.1", prometheus_port=free_port()
        )
    )
    address = exporters.prometheus_address()
    assert address is not None
    for step in range(3):
        tee_metrics({"reward": 0.25 * step}, "train")
    tee_metrics({"setup/policy_time_s": 4.0, "setup/vllm_time_s": 7.5}, "timing/setup")
    yield address[1], {"rl_reward_avg": 0.5, "rl_reward_mean": 0.5}
    exporters.shutdown()


def test_prometheus_shows_both_series_of_a_renamed_key_and_family_labels(
    prometheus_binary: str, renamed_endpoint: tuple[int, dict[str, float]], tmp_path: Path
) -> None:
    """A deprecated row and its replacement share the logged key; both series arrive."""
    port, expected = renamed_endpoint
    workdir = tmp_path / "prometheus"
    workdir.mkdir()
    server = PrometheusServer(prometheus_binary, port, workdir)
    try:
        deadline = time.monotonic() + _WAIT_SECONDS
        scraped: dict[str, float] = {}
        phases: dict[str, float] = {}
        while time.monotonic() < deadline:
            scraped = _scraped(server)
            phases = {
                s["metric"].get("rl_setup_phase", ""): float(s["value"][1])
                for s in server.query("rl_setup_duration_seconds")
            }
            if set(expected) <= set(scraped) and len(phases) == 2:
                break
            assert server.process.poll() is None, server.log_path.read_text()
            time.sleep(0.5)
        assert {name: scraped.get(name) for name in expected} == expected
        assert phases == {"policy": 4.0, "vllm": 7.5}
    finally:
        server.stop()
