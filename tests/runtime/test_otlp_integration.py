"""OTLP/HTTP export against a loopback receiver that decodes the protobuf request."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

from metric_catalog import exporters
from metric_catalog.otel import histogram_boundaries
from metric_catalog.tee import record_metrics, tee_metrics
from tests.otel_fixtures import clean_otel, register_samples

__all__ = ["clean_otel"]  # fixture used by name

pytestmark = pytest.mark.integration


class Receiver(ThreadingHTTPServer):
    """Collects every decoded ``ExportMetricsServiceRequest`` POSTed to it."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[tuple[str, dict[str, str], ExportMetricsServiceRequest]] = []

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportMetricsServiceRequest()
        request.ParseFromString(body)
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.requests.append((self.path, headers, request))
        payload = ExportMetricsServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """An OTLP/HTTP receiver on a loopback port, serving from a thread."""
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def _metrics(request: ExportMetricsServiceRequest) -> dict[str, Any]:
    return {
        metric.name: metric
        for resource in request.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }


def test_otlp_export_carries_names_values_units_and_descriptions(
    receiver: Receiver, clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_samples()
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base_url)
    for step in range(3):
        tee_metrics({"loss": 0.5 - step / 10, "global_valid_toks": 100, "kl": -0.25}, "train")
        tee_metrics({"generation": 1.5}, "timing/train", attributes={"rank": 0})
    record_metrics({"vllm_queue_depth": 7})
    assert exporters.shutdown(timeout=5) is True  # the final flush is the export under test

    assert len(receiver.requests) == 1
    path, headers, request = receiver.requests[0]
    assert path == "/v1/metrics"  # appended to OTEL_EXPORTER_OTLP_ENDPOINT
    assert headers["content-type"] == "application/x-protobuf"
    resource = {
        a.key: a.value.string_value for a in request.resource_metrics[0].resource.attributes
    }
    assert resource["service.name"] == "metric-catalog"
    metrics = _metrics(request)
    assert set(metrics) == {
        "rl.policy.loss",
        "rl.train.valid_tokens",
        "rl.kl.divergence",
        "rl.generation.duration",
        "rl.vllm.queue.depth",
    }

    loss = metrics["rl.policy.loss"]
    assert (loss.unit, loss.description) == ("", "Training loss")
    assert [p.as_double for p in loss.gauge.data_points] == [pytest.approx(0.3)]

    tokens = metrics["rl.train.valid_tokens"]
    assert (tokens.unit, tokens.description) == ("{token}", "Valid tokens")
    assert tokens.sum.is_monotonic
    assert [p.as_double for p in tokens.sum.data_points] == [300.0]

    kl = metrics["rl.kl.divergence"]
    assert not kl.sum.is_monotonic
    assert [p.as_double for p in kl.sum.data_points] == [-0.75]

    generation = metrics["rl.generation.duration"]
    (point,) = generation.histogram.data_points
    assert generation.unit == "s"
    assert (point.count, point.sum) == (3, 4.5)
    assert tuple(point.explicit_bounds) == histogram_boundaries("s")
    assert [(a.key, a.value.int_value) for a in point.attributes] == [("rank", 0)]

    depth = metrics["rl.vllm.queue.depth"]
    assert (depth.unit, [p.as_double for p in depth.gauge.data_points]) == ("{request}", [7.0])


def test_periodic_export_reaches_the_receiver_without_shutdown(
    receiver: Receiver, clean_otel: None
) -> None:
    register_samples()
    exporters.configure(
        config=exporters.ExporterConfig(
            exporters=("otlp",),
            otlp_endpoint=f"{receiver.base_url}/v1/metrics",
            export_interval_millis=100,
        )
    )
    tee_metrics({"reward": 0.75}, "train")
    provider = exporters.get_meter_provider()
    assert provider is not None
    assert provider.force_flush(timeout_millis=5000)
    latest = _metrics(receiver.requests[-1][2])["rl.reward.mean"]
    assert latest.gauge.data_points[0].as_double == 0.75
    assert exporters.shutdown(timeout=5) is True  # while the receiver still listens
