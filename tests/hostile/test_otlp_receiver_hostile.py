"""The OTLP receiver (``live-check --otlp``) against hostile exporters.

What an attacker controls: each request's headers (Content-Length, Content-Encoding),
its body (protobuf or JSON, gzip that inflates a thousandfold), the resource and point
attributes (values of a megabyte), how many requests and connections it opens and when it
drops them. The receiver keys workers by the exporter's resource (not per request), so
an attribute's budget is judged across one exporter's requests; it refuses a request of
too many points however small its gzip body; it queues a job's worth of simultaneous
connections; and a connection dropped mid-body is one line on stderr, not a traceback.
"""

from __future__ import annotations

import gzip
import http.client
import socket
import struct
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from codegen.catalog.model import Catalog
from codegen.live_check import check_records
from codegen.runs.telemetry import (
    LISTEN_BACKLOG,
    MAX_ATTRIBUTE_CHARS,
    MAX_REQUEST_POINTS,
    OtlpReceiver,
    records_from_points,
)
from tests.hostile_runs import run_snippet


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    """A receiver on a free loopback port, serving for the test."""
    with OtlpReceiver(("127.0.0.1", 0)) as running:
        yield running


def request(phases: list[str], service: str = "svc") -> bytes:
    """One gauge point of ``rl.setup.duration`` per phase, from the exporter ``service``."""
    body = ExportMetricsServiceRequest()
    resource = body.resource_metrics.add()
    name = resource.resource.attributes.add()
    name.key, name.value.string_value = "service.name", service
    metric = resource.scope_metrics.add().metrics.add()
    metric.name, metric.unit = "rl.setup.duration", "s"
    for phase in phases:
        point = metric.gauge.data_points.add()
        point.as_double = 1.0
        attribute = point.attributes.add()
        attribute.key, attribute.value.string_value = "rl.setup.phase", phase
    return bytes(body.SerializeToString())


def post(receiver: OtlpReceiver, body: bytes, headers: dict[str, str] | None = None) -> int:
    host, port = receiver.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=60)
    connection.request(
        "POST", "/v1/metrics", body, {"Content-Type": "application/x-protobuf", **(headers or {})}
    )
    status = connection.getresponse().status
    connection.close()
    return status


def test_one_exporters_requests_are_one_worker_whose_budget_is_judged_across_them(
    receiver: OtlpReceiver, repo_catalog: Catalog
) -> None:
    for i in range(100):  # a 64-value attribute given 100 values, one per request
        assert post(receiver, request([f"phase_{i}"], service="one-exporter")) == 200
    records = [
        record
        for sequence, points in receiver.drain_requests()
        for record in records_from_points(points, sequence)
    ]
    report = check_records(records, repo_catalog, source="otlp", multi=True)
    kinds = {finding.kind for finding in report.findings}
    assert "attribute_budget" in kinds
    assert len({(r.input, r.worker) for r in records}) == 1


def test_an_exporter_without_an_identity_is_still_one_worker_across_requests(
    receiver: OtlpReceiver,
) -> None:
    body = ExportMetricsServiceRequest()
    resource = body.resource_metrics.add()
    host = resource.resource.attributes.add()
    host.key, host.value.string_value = "host.name", "node-7"
    metric = resource.scope_metrics.add().metrics.add()
    metric.name = "rl.setup.duration"
    metric.gauge.data_points.add().as_double = 1.0
    for _ in range(3):
        assert post(receiver, body.SerializeToString()) == 200
    workers = {
        (r.input, r.worker)
        for sequence, points in receiver.drain_requests()
        for r in records_from_points(points, sequence)
    }
    assert len(workers) == 1
    ((_, worker),) = workers
    assert worker is not None
    assert worker.startswith("resource ")


def test_a_megabyte_attribute_value_is_kept_cut(receiver: OtlpReceiver) -> None:
    assert post(receiver, request(["v" * (1 << 20)])) == 200
    ((_, (point,)),) = receiver.drain_requests()
    value = point.attributes["rl.setup.phase"]
    assert len(value) < MAX_ATTRIBUTE_CHARS + 20
    assert value.endswith("...(cut)")


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""

    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            low, n = n & 0x7F, n >> 7
            out.append(low | (0x80 if n else 0))
            if not n:
                return bytes(out)

    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_a_small_gzip_body_of_a_million_points_is_refused(receiver: OtlpReceiver) -> None:
    point = field(1, b"\x21" + struct.pack("<d", 1.0))  # a gauge point: as_double 1.0
    metric = field(1, b"rl.setup.duration") + field(5, point * (MAX_REQUEST_POINTS + 1))
    body = gzip.compress(field(1, field(2, field(2, metric))), 9)
    assert len(body) < 100_000

    assert post(receiver, body, {"Content-Encoding": "gzip"}) == 413

    assert receiver.drain_requests() == []
    assert any("points (over" in why for why in receiver.rejected)


def test_the_listen_backlog_holds_a_jobs_exporters(receiver: OtlpReceiver) -> None:
    assert receiver.request_queue_size >= 128
    assert LISTEN_BACKLOG >= 128


_RESETS = textwrap.dedent(
    """
    import socket, struct, sys, time
    from codegen.runs.telemetry import OtlpReceiver
    with OtlpReceiver(("127.0.0.1", 0)) as receiver:
        port = receiver.server_address[1]
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /v1/metrics HTTP/1.1\\r\\nHost: x\\r\\n"
                      b"Content-Length: 100000\\r\\n\\r\\n" + b"\\x0a" * 10)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        time.sleep(1)
        print(len(receiver.rejected))
    """
)


def test_a_connection_reset_mid_body_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    done = run_snippet(_RESETS, tmp=tmp_path, deadline=60)  # bound: 200 MiB, 60 s
    lines = [line for line in done.stderr.splitlines() if line]
    assert len(lines) == 3, done.stderr
    assert all("otlp receiver: a connection from" in line for line in lines)
    assert done.stdout.split() == ["3"]
    assert done.peak_mib < 200


@pytest.mark.integration
def test_32_exporters_pushing_at_once_lose_no_export(receiver: OtlpReceiver) -> None:
    bodies = [request(["policy_init"] * 20_000, service=f"exp{i}") for i in range(32)]
    host, port = receiver.server_address[:2]
    sockets = [socket.create_connection((str(host), int(port)), timeout=30) for _ in bodies]
    for sock, body in zip(sockets, bodies, strict=True):
        head = (
            "POST /v1/metrics HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        sock.sendall(head + body)
    statuses = []
    for sock in sockets:
        with sock:
            statuses.append(sock.recv(64).split(b" ", 2)[1])
    assert statuses == [b"200"] * 32
    assert len(receiver.drain_requests()) == 32
