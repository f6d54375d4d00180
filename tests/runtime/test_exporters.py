"""Exporter configuration, the per-process provider, bounded shutdown and fork safety."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData

from metric_catalog import exporters, otel
from metric_catalog.exporters import ExporterConfig, ExporterConfigError
from metric_catalog.tee import tee_metrics
from tests.otel_fixtures import caught_warnings, clean_otel, register_samples

__all__ = ["clean_otel"]  # fixture used by name


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, ExporterConfig()),
        ({"OTEL_METRICS_EXPORTER": "none"}, ExporterConfig()),
        ({"OTEL_METRICS_EXPORTER": " Prometheus "}, ExporterConfig(exporters=("prometheus",))),
        (
            {"OTEL_METRICS_EXPORTER": "otlp,console,otlp"},
            ExporterConfig(exporters=("otlp", "console")),
        ),
        (
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"},
            ExporterConfig(otlp_endpoint="http://127.0.0.1:4318/v1/metrics"),
        ),
        (
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://ignored:1",
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:9/custom",
            },
            ExporterConfig(otlp_endpoint="http://127.0.0.1:9/custom"),
        ),
        ({"METRIC_CATALOG_PROMETHEUS_PORT": "0"}, ExporterConfig(prometheus_port=0)),
        ({"OTEL_EXPORTER_PROMETHEUS_PORT": "9999"}, ExporterConfig(prometheus_port=9999)),
        (
            {"METRIC_CATALOG_PROMETHEUS_PORT": "1234", "OTEL_EXPORTER_PROMETHEUS_PORT": "9999"},
            ExporterConfig(prometheus_port=1234),
        ),
        ({"METRIC_CATALOG_PROMETHEUS_HOST": "::1"}, ExporterConfig(prometheus_host="::1")),
        ({"OTEL_METRIC_EXPORT_INTERVAL": "500"}, ExporterConfig(export_interval_millis=500.0)),
        ({"METRIC_CATALOG_SHUTDOWN_TIMEOUT": "0.5"}, ExporterConfig(shutdown_timeout=0.5)),
    ],
)
def test_config_is_read_from_the_opentelemetry_environment(
    env: dict[str, str], expected: ExporterConfig
) -> None:
    assert ExporterConfig.from_env(env) == expected


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"OTEL_METRICS_EXPORTER": "jaeger"}, "'jaeger'"),
        ({"OTEL_METRICS_EXPORTER": "none,otlp"}, "'none' cannot be combined"),
        ({"METRIC_CATALOG_PROMETHEUS_PORT": "http"}, "METRIC_CATALOG_PROMETHEUS_PORT"),
        ({"METRIC_CATALOG_PROMETHEUS_PORT": "70000"}, "0-65535"),
        ({"METRIC_CATALOG_PROMETHEUS_PORT": "80.5"}, "0-65535"),
        ({"OTEL_METRIC_EXPORT_INTERVAL": "0"}, "OTEL_METRIC_EXPORT_INTERVAL"),
        ({"METRIC_CATALOG_SHUTDOWN_TIMEOUT": "nan"}, "METRIC_CATALOG_SHUTDOWN_TIMEOUT"),
        ({"METRIC_CATALOG_SHUTDOWN_TIMEOUT": "-1"}, "METRIC_CATALOG_SHUTDOWN_TIMEOUT"),
    ],
)
def test_invalid_settings_raise_a_value_error_naming_the_variable(
    env: dict[str, str], names: str
) -> None:
    with pytest.raises(ExporterConfigError, match=names) as info:
        ExporterConfig.from_env(env)
    assert isinstance(info.value, ValueError)


def test_export_is_disabled_by_default(clean_otel: None) -> None:
    assert exporters.get_meter_provider() is None
    assert exporters.prometheus_address() is None


def test_an_invalid_environment_disables_export_with_one_warning(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_samples()
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "statsd")
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({"loss": 1.0}, "train")
    assert exporters.get_meter_provider() is None
    assert len(caught.messages) == 1
    assert "'statsd'" in caught.messages[0]


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return str(response.read().decode())


def test_prometheus_exporter_serves_translated_names_on_loopback(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_samples()
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "prometheus")
    monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_PORT", "0")
    tee_metrics({"loss": 0.5, "global_valid_toks": 64}, "train")
    tee_metrics({"generation": 2.0}, "timing/train")
    address = exporters.prometheus_address()
    assert address is not None
    assert address[0] == "127.0.0.1"
    text = _scrape(address[1])
    assert "rl_policy_loss 0.5" in text
    assert "rl_train_valid_tokens_total 64.0" in text
    assert 'rl_generation_duration_seconds_bucket{le="2.5"} 1.0' in text
    assert "otel_scope_name" not in text


def _reader_threads() -> int:
    return sum(t.name == "OtelPeriodicExportingMetricReader" for t in threading.enumerate())


@pytest.mark.parametrize("names", ["prometheus", "otlp,prometheus"])
def test_a_taken_prometheus_port_disables_export_with_one_warning_naming_the_fix(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch, names: str
) -> None:
    register_samples()
    threads_before = _reader_threads()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        monkeypatch.setenv("OTEL_METRICS_EXPORTER", names)
        monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_PORT", str(busy.getsockname()[1]))
        monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_PORT_SPAN", "1")  # no other port to try
        with caught_warnings() as caught:
            tee_metrics({"loss": 1.0}, "train")
            tee_metrics({"loss": 1.0}, "train")
    assert exporters.get_meter_provider() is None
    assert len(caught.messages) == 1
    assert f"could not start exporter(s) {names.replace(',', ', ')}" in caught.messages[0]
    assert "Address already in use" in caught.messages[0]
    assert "METRIC_CATALOG_PROMETHEUS_SD_DIR" in caught.messages[0]  # the fix is named
    assert _reader_threads() == threads_before  # a half-built setup is torn down


def test_console_exporter_prints_the_series_at_shutdown(
    clean_otel: None, capsys: pytest.CaptureFixture[str]
) -> None:
    register_samples()
    exporters.configure(config=ExporterConfig(exporters=("console",)))
    tee_metrics({"loss": 0.125}, "train")
    assert exporters.shutdown(timeout=5) is True
    out = capsys.readouterr().out
    assert '"name": "rl.policy.loss"' in out
    assert '"value": 0.125' in out


def test_shutdown_stops_export_until_configure_is_called_again(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_samples()
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "prometheus")
    monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_PORT", "0")
    tee_metrics({"loss": 1.0}, "train")
    first = exporters.prometheus_address()
    assert first is not None
    assert exporters.shutdown() is True
    assert exporters.get_meter_provider() is None
    tee_metrics({"loss": 2.0}, "train")  # a no-op now; must not raise
    with pytest.raises(OSError, match="refused"):  # the endpoint is gone
        _scrape(first[1])
    exporters.configure()
    tee_metrics({"loss": 3.0}, "train")
    second = exporters.prometheus_address()
    assert second is not None
    assert "rl_policy_loss 3.0" in _scrape(second[1])


@pytest.fixture
def blackhole() -> Iterator[socket.socket]:
    """A loopback socket that accepts connections (via the backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield sock


def _connections(sock: socket.socket) -> int:
    """How many connections wait in the backlog (each one an export attempt)."""
    sock.setblocking(False)
    accepted = []
    while True:
        try:
            accepted.append(sock.accept()[0])
        except BlockingIOError:
            break
    for conn in accepted:
        conn.close()
    return len(accepted)


def test_shutdown_with_a_dead_collector_returns_within_the_bound(
    clean_otel: None, blackhole: socket.socket
) -> None:
    register_samples()
    config = ExporterConfig(
        exporters=("otlp",),
        otlp_endpoint=f"http://127.0.0.1:{blackhole.getsockname()[1]}/v1/metrics",
        shutdown_timeout=1.0,
    )
    exporters.configure(config=config)
    tee_metrics({"loss": 1.0}, "train")
    start = time.monotonic()
    with caught_warnings() as caught:
        finished = exporters.shutdown()
        elapsed = time.monotonic() - start
        # Hang up on the abandoned export (and its immediate reconnect), so it ends
        # here and its failure is not reported in a later test.
        attempts = _connections(blackhole)
        deadline = time.monotonic() + 5.0
        while exporters._PROCESS.in_flight and time.monotonic() < deadline:
            time.sleep(0.02)
            attempts += _connections(blackhole)
    assert attempts >= 1  # the teed point was really being sent
    assert exporters._PROCESS.in_flight == 0
    assert elapsed < 2.0
    assert finished is False
    assert any("did not finish within 1 s" in m for m in caught.messages)
    assert exporters.get_meter_provider() is None


def _run_teeing_script(
    exporter: str, endpoint: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run a process that tees one value and exits; its result and wall time."""
    script = """
        # Paid by both runs, so the difference is what exiting costs.
        from opentelemetry.exporter.otlp.proto.http import metric_exporter
        from metric_catalog import vocabulary
        from metric_catalog.tee import tee_metrics
        vocabulary.register_teed_metrics([vocabulary.TeedMetric("loss", "rl.policy.loss")])
        tee_metrics({"loss": 1.0}, "train")
        print("exiting", flush=True)
    """
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": "src:.",
        "OTEL_METRICS_EXPORTER": exporter,
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "METRIC_CATALOG_SHUTDOWN_TIMEOUT": "1",
    }
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    return result, time.monotonic() - start


def test_exit_with_a_dead_collector_is_bounded(blackhole: socket.socket) -> None:
    endpoint = f"http://127.0.0.1:{blackhole.getsockname()[1]}"
    # The same process with export off, measured now: a loaded machine slows both alike.
    baseline, baseline_elapsed = _run_teeing_script("none", endpoint)
    assert baseline.returncode == 0, baseline.stderr
    result, elapsed = _run_teeing_script("otlp", endpoint)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "exiting"
    assert "did not finish within 1 s" in result.stderr  # the atexit flush ran, and gave up
    assert _connections(blackhole) >= 1
    # The 1 s bound plus slack; unbounded, the SDK's 10 s export timeout and retries would show.
    assert elapsed - baseline_elapsed < 5.0, (elapsed, baseline_elapsed)


class _Recording(MetricExporter):
    def __init__(self) -> None:
        super().__init__()
        self.exports = 0

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        self.exports += 1
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_forgets_the_parents_provider_and_exports_nothing_for_it(
    clean_otel: None,
) -> None:
    register_samples()
    exporters.configure(config=ExporterConfig(exporters=("prometheus",), prometheus_port=0))
    tee_metrics({"loss": 1.0}, "train")
    assert otel._GROUP is not None
    inner = _Recording()
    bound = exporters._process_bound(inner, "parent")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report, then leave without running the parent's atexit hooks
        try:
            forgotten = [exporters._PROCESS.state, otel._GROUP, exporters.prometheus_address()]
            bound.export(None)  # type: ignore[arg-type]
            report = f"{forgotten == [None, None, None]} {inner.exports}"
        except BaseException as exc:
            report = repr(exc)
        os.write(write_fd, report.encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        report = pipe.read()
    os.waitpid(pid, 0)
    assert report == "True 0"
    address = exporters.prometheus_address()
    assert address is not None  # the parent keeps serving
    assert "rl_policy_loss 1.0" in _scrape(address[1])
    bound.export(None)  # type: ignore[arg-type]
    assert inner.exports == 1
