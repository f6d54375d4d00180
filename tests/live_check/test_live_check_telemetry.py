"""Decoding what a job exports: the OTLP/HTTP receiver and the Prometheus exposition parser."""

from __future__ import annotations

import gzip
import http.client
from collections.abc import Iterator

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource

from codegen.runs.telemetry import (
    MAX_BODY_BYTES,
    OtlpReceiver,
    TelemetryPoint,
    decode_otlp,
    parse_exposition,
)


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver(("127.0.0.1", 0)) as server:
        yield server


def _export_with_the_sdk(endpoint: str) -> None:
    """Record a gauge, a counter, an up-down counter and a histogram; export once over OTLP."""
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    exporter = OTLPMetricExporter(endpoint=f"{endpoint}/v1/metrics")
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    provider = MeterProvider(
        metric_readers=[reader], resource=Resource.create({"rank": 3, "service.name": "t"})
    )
    meter = provider.get_meter("test")
    meter.create_gauge("rl.entropy", unit="1").set(0.5, {"rl.bucket": "gen"})
    meter.create_counter("rl.tokens", unit="{token}").add(7)
    meter.create_up_down_counter("rl.queue", unit="{item}").add(-2)
    meter.create_histogram("rl.batch.duration", unit="s").record(0.25)
    provider.shutdown()


def _by_name(points: list[TelemetryPoint]) -> dict[str, TelemetryPoint]:
    return {point.name: point for point in points}


def test_receiver_decodes_what_the_sdks_otlp_exporter_sends(receiver: OtlpReceiver) -> None:
    _export_with_the_sdk(receiver.endpoint)
    points = _by_name(receiver.drain())
    assert receiver.requests == 1
    assert receiver.rejected == []
    entropy = points["rl.entropy"]
    assert (entropy.kind, entropy.unit, entropy.value) == ("gauge", "1", 0.5)
    assert entropy.attributes == {"rl.bucket": "gen"}
    assert entropy.resource["rank"] == 3
    assert entropy.resource["service.name"] == "t"
    tokens = points["rl.tokens"]
    assert (tokens.kind, tokens.unit, tokens.value, tokens.temporality) == (
        "counter",
        "{token}",
        7.0,
        "cumulative",
    )
    assert points["rl.queue"].kind == "up_down_counter"
    assert points["rl.queue"].value == -2.0
    histogram = points["rl.batch.duration"]
    assert (histogram.kind, histogram.value, histogram.observations) == ("histogram", 0.25, 1)
    assert receiver.drain() == []


def _post(
    receiver: OtlpReceiver, body: bytes, headers: dict[str, str], path: str = "/v1/metrics"
) -> int:
    host, port = receiver.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=10)
    try:
        connection.request("POST", path, body=body, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def _request() -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    metric = request.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = "rl.entropy"
    metric.unit = "1"
    point = metric.gauge.data_points.add()
    point.as_double = 1.5
    attribute = point.attributes.add()
    attribute.key = "rl.bucket"
    attribute.value.string_value = "gen"
    return request


@pytest.mark.parametrize(
    ("encode", "headers"),
    [
        (lambda r: r.SerializeToString(), {"Content-Type": "application/x-protobuf"}),
        (
            lambda r: gzip.compress(r.SerializeToString()),
            {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
        ),
        (
            lambda r: json_format.MessageToJson(r).encode(),
            {"Content-Type": "application/json"},
        ),
    ],
    ids=["protobuf", "gzip-protobuf", "json"],
)
def test_receiver_accepts_protobuf_gzip_and_json_bodies(
    receiver: OtlpReceiver, encode: object, headers: dict[str, str]
) -> None:
    assert callable(encode)
    assert _post(receiver, encode(_request()), headers) == 200
    (point,) = receiver.drain()
    assert (point.name, point.value, dict(point.attributes)) == (
        "rl.entropy",
        1.5,
        {"rl.bucket": "gen"},
    )


@pytest.mark.parametrize(
    ("body", "headers", "path", "status"),
    [
        (b"\xff\xfe not protobuf", {"Content-Type": "application/x-protobuf"}, "/v1/metrics", 400),
        (b"{not json", {"Content-Type": "application/json"}, "/v1/metrics", 400),
        (b"not gzip", {"Content-Encoding": "gzip"}, "/v1/metrics", 400),
        (
            gzip.compress(b"\0" * (MAX_BODY_BYTES + 10)),
            {"Content-Encoding": "gzip"},
            "/v1/metrics",
            400,
        ),
        (b"", {}, "/v1/traces", 404),
    ],
    ids=["garbage", "bad-json", "bad-gzip", "gzip-bomb", "wrong-path"],
)
def test_receiver_refuses_hostile_requests_and_keeps_serving(
    receiver: OtlpReceiver, body: bytes, headers: dict[str, str], path: str, status: int
) -> None:
    assert _post(receiver, body, headers, path) == status
    assert receiver.drain() == []
    # Still serving after the refusal.
    assert _post(receiver, _request().SerializeToString(), {}) == 200
    assert len(receiver.drain()) == 1


def test_decode_keeps_array_and_map_attribute_values() -> None:
    request = _request()
    point = request.resource_metrics[0].scope_metrics[0].metrics[0].gauge.data_points[0]
    listed = point.attributes.add()
    listed.key = "list"
    listed.value.array_value.values.add().int_value = 4
    (decoded,) = decode_otlp(request)
    assert decoded.attributes["list"] == (4,)


EXPOSITION = """\
# HELP rl_entropy Policy entropy.
# TYPE rl_entropy gauge
rl_entropy{rl_bucket="gen",otel_scope_name="metric_catalog"} 2.5
# HELP rl_train_valid_tokens_total Tokens.
# TYPE rl_train_valid_tokens_total counter
rl_train_valid_tokens_total 772.0
# HELP rl_batch_duration_seconds Batch.
# TYPE rl_batch_duration_seconds histogram
rl_batch_duration_seconds_bucket{le="0.5"} 1.0
rl_batch_duration_seconds_bucket{le="+Inf"} 2.0
rl_batch_duration_seconds_sum 1.25
rl_batch_duration_seconds_count 2.0
"""


def test_exposition_gives_one_point_per_series_with_counter_and_histogram_names() -> None:
    points = _by_name(list(parse_exposition(EXPOSITION, "http://x/metrics")))
    assert set(points) == {
        "rl_entropy",
        "rl_train_valid_tokens_total",
        "rl_batch_duration_seconds",
    }
    assert points["rl_entropy"].attributes == {
        "rl_bucket": "gen",
        "otel_scope_name": "metric_catalog",
    }
    assert points["rl_train_valid_tokens_total"].kind == "counter"
    histogram = points["rl_batch_duration_seconds"]
    assert (histogram.value, histogram.observations, dict(histogram.attributes)) == (1.25, 2, {})


def test_exposition_that_is_not_prometheus_text_raises_value_error() -> None:
    with pytest.raises(ValueError, match="invalid metric name"):
        list(parse_exposition("<html>not metrics</html>\n"))
