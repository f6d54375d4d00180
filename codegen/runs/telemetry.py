"""What a running job exports, decoded: OTLP/HTTP requests and Prometheus scrapes.

Both transports become :class:`TelemetryPoint` values (one per data point, with
the metric's name, kind, unit and temporality as the wire says them), so the
live-check judges never see a wire format:

- :class:`OtlpReceiver` is an OTLP/HTTP metrics endpoint on loopback (or the
  address given): ``POST /v1/metrics`` with a protobuf
  (``application/x-protobuf``) or JSON (``application/json``) body, optionally
  gzip-encoded, decoded with the ``opentelemetry-proto`` classes. It answers
  each request as a collector does (an empty ``ExportMetricsServiceResponse``),
  so the SDK's exporter counts its exports as sent.
- :func:`scrape` reads a Prometheus/OpenMetrics endpoint once;
  :func:`parse_exposition` parses the text with ``prometheus_client``'s parser.

Hostile input is bounded: a request body over :data:`MAX_BODY_BYTES` is refused
with HTTP 413, an undecodable one with 400 (counted in
:attr:`OtlpReceiver.rejected`), and a scrape over :data:`MAX_SCRAPE_BYTES` is
cut off and reported.
"""

from __future__ import annotations

import gzip
import threading
import urllib.request
import zlib
from collections.abc import Iterable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from .records import Record

__all__ = [
    "IDENTITY_LABEL",
    "LIVE_EXTRA_HINT",
    "MAX_BODY_BYTES",
    "MAX_SCRAPE_BYTES",
    "OtlpReceiver",
    "ScrapeError",
    "TelemetryPoint",
    "decode_otlp",
    "decode_request_body",
    "parse_exposition",
    "records_from_points",
    "require_live_extra",
    "scrape",
]

MAX_BODY_BYTES: Final = 64 * 1024 * 1024
"""Largest OTLP request body accepted (after gzip); larger ones get HTTP 413."""
MAX_SCRAPE_BYTES: Final = 64 * 1024 * 1024
"""Largest scrape read; the rest is left unread and the scrape is reported as cut off."""


LIVE_EXTRA_HINT: Final = "pip install 'metric-catalog[live]'"
"""How to install what the live inputs decode with (opentelemetry-proto, prometheus-client)."""


def require_live_extra(*, otlp: bool, prometheus: bool) -> None:
    """Import what the chosen live inputs need, so a missing extra fails before listening.

    Raises:
        ModuleNotFoundError: the ``live`` extra is not installed; the message
            says what to install.
    """
    modules = []
    if otlp:
        modules += [
            "google.protobuf",
            "opentelemetry.proto.collector.metrics.v1.metrics_service_pb2",
        ]
    if prometheus:
        modules.append("prometheus_client.parser")
    for module in modules:
        try:
            __import__(module)
        except ModuleNotFoundError as exc:
            msg = f"live telemetry needs {exc.name}, which is not installed: {LIVE_EXTRA_HINT}"
            raise ModuleNotFoundError(msg, name=exc.name) from exc


_NO_ATTRIBUTES: Final[Mapping[str, Any]] = MappingProxyType({})
IDENTITY_LABEL: Final = ("rank", "service.instance.id", "service.name")
"""Resource attributes that name an OTLP exporter's process (the first present wins)."""


class ScrapeError(OSError):
    """A scrape endpoint could not be read (refused, timed out, not HTTP 200, too large)."""


class TelemetryPoint(NamedTuple):
    """One exported data point, as the wire says it.

    ``kind`` is the catalog's vocabulary: ``gauge``, ``counter`` (a monotonic
    sum), ``up_down_counter`` (a non-monotonic sum), ``histogram``, or
    ``unknown``/``summary``/``info``/... as Prometheus types it. ``name`` is
    the OTLP metric name, or for a scrape (``transport`` ``prometheus``) the
    family name as exposed (a counter's with its ``_total``). A tuple, so a
    request of thousands of points decodes fast.
    """

    transport: str
    """``otlp`` or ``prometheus``."""
    name: str
    kind: str
    unit: str
    attributes: Mapping[str, Any]
    value: float | None
    """The point's value (a histogram's sum); ``None`` when it has none."""
    temporality: str | None = None
    """``delta`` or ``cumulative`` for OTLP sums and histograms; ``None`` otherwise."""
    resource: Mapping[str, Any] = _NO_ATTRIBUTES
    """The exporting process's resource attributes (OTLP) or target labels."""
    source: str = ""
    """Where it came from: ``POST /v1/metrics #3`` or the scrape URL."""
    observations: int | None = None
    """A histogram's (or summary's) count of observations."""
    worker: str | None = None
    """The exporting process: ``rank3`` (its resource's rank), an instance id or service
    name; for a scrape, the URL."""


_TEMPORALITY: Final = {1: "delta", 2: "cumulative"}


def _any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (arrays and maps as tuples and dicts)."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return tuple(_any_value(item) for item in value.array_value.values)
    if which == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return bytes(value.bytes_value)
    return getattr(value, which)


def _attributes(items: Any) -> Mapping[str, Any]:
    if not items:
        return _NO_ATTRIBUTES
    found = {}
    for kv in items:
        value = kv.value
        which = value.WhichOneof("value")
        # The common case, a string, without the generic walk.
        found[kv.key] = value.string_value if which == "string_value" else _any_value(value)
    return found


def _worker_of(resource: Mapping[str, Any]) -> str | None:
    """Which process exported a resource's points: its rank, else its instance id or service."""
    for name in IDENTITY_LABEL:
        value = resource.get(name)
        if value is not None and value != "":
            return f"rank{value}" if name == "rank" else str(value)
    return None


def decode_otlp(request: Any, source: str = "") -> Iterator[TelemetryPoint]:
    """Every data point of an ``ExportMetricsServiceRequest``."""
    point_type = TelemetryPoint
    for resource_metrics in request.resource_metrics:
        resource = _attributes(resource_metrics.resource.attributes)
        worker = _worker_of(resource)
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = metric.WhichOneof("data")
                name, unit = metric.name, metric.unit
                if data in {"gauge", "sum"}:
                    body = metric.gauge if data == "gauge" else metric.sum
                    if data == "gauge":
                        kind, temporality = "gauge", None
                    else:
                        kind = "counter" if body.is_monotonic else "up_down_counter"
                        temporality = _TEMPORALITY.get(body.aggregation_temporality)
                    for point in body.data_points:
                        which = point.WhichOneof("value")
                        value = (
                            point.as_double
                            if which == "as_double"
                            else (float(point.as_int) if which == "as_int" else None)
                        )
                        yield point_type(
                            "otlp",
                            name,
                            kind,
                            unit,
                            _attributes(point.attributes),
                            value,
                            temporality,
                            resource,
                            source,
                            None,
                            worker,
                        )
                elif data in ("histogram", "exponential_histogram"):
                    body = getattr(metric, data)
                    temporality = _TEMPORALITY.get(body.aggregation_temporality)
                    for point in body.data_points:
                        yield point_type(
                            "otlp",
                            name,
                            "histogram",
                            unit,
                            _attributes(point.attributes),
                            point.sum if point.HasField("sum") else None,
                            temporality,
                            resource,
                            source,
                            int(point.count),
                            worker,
                        )
                elif data == "summary":
                    for point in metric.summary.data_points:
                        yield point_type(
                            "otlp",
                            name,
                            "summary",
                            unit,
                            _attributes(point.attributes),
                            float(point.sum),
                            None,
                            resource,
                            source,
                            int(point.count),
                            worker,
                        )


def decode_request_body(body: bytes, content_type: str, source: str = "") -> list[TelemetryPoint]:
    """The points of one OTLP request body (protobuf, or JSON when ``content_type`` says so).

    Raises:
        ValueError: the body is not an ``ExportMetricsServiceRequest``.
    """
    return list(decode_otlp(_decode_body(body, content_type), source))


def _decode_body(body: bytes, content_type: str) -> Any:
    """The request body as an ``ExportMetricsServiceRequest``; ``ValueError`` when it is not one."""
    from google.protobuf import json_format  # noqa: PLC0415 - the live extra, loaded on use
    from google.protobuf.message import DecodeError  # noqa: PLC0415
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (  # noqa: PLC0415
        ExportMetricsServiceRequest,
    )

    request = ExportMetricsServiceRequest()
    try:
        if "json" in content_type:
            json_format.Parse(body.decode("utf-8"), request, ignore_unknown_fields=True)
        else:
            request.ParseFromString(body)
    except (DecodeError, json_format.ParseError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(str(exc) or type(exc).__name__) from exc
    return request


class _Handler(BaseHTTPRequestHandler):
    server: OtlpReceiver

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0].rstrip("/") != "/v1/metrics":
            self._answer(404, b"only /v1/metrics is served\n", "text/plain")
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.server.note_rejected("a request without a Content-Length")
            self._answer(411, b"Content-Length required\n", "text/plain")
            return
        if length < 0 or length > MAX_BODY_BYTES:
            self.server.note_rejected(f"a {length}-byte request (over {MAX_BODY_BYTES})")
            self._answer(413, b"request too large\n", "text/plain")
            return
        body = self.rfile.read(length)
        content_type = self.headers.get("Content-Type", "application/x-protobuf").lower()
        try:
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                body = inflater.decompress(body, MAX_BODY_BYTES + 1)
                if len(body) > MAX_BODY_BYTES or inflater.unconsumed_tail:
                    raise ValueError(f"the body inflates past {MAX_BODY_BYTES} bytes")
            request = _decode_body(body, content_type)
        except (ValueError, zlib.error, gzip.BadGzipFile, EOFError) as exc:
            self.server.note_rejected(f"an undecodable request ({exc})")
            self._answer(400, b"not an ExportMetricsServiceRequest\n", "text/plain")
            return
        self.server.accept(request)
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (  # noqa: PLC0415
            ExportMetricsServiceResponse,
        )

        if "json" in content_type:
            self._answer(200, b"{}", "application/json")
        else:
            payload = ExportMetricsServiceResponse().SerializeToString()
            self._answer(200, payload, "application/x-protobuf")

    def log_message(self, format: str, *args: Any) -> None:
        return  # the report says what arrived; no access log on stderr


class OtlpReceiver(ThreadingHTTPServer):
    """An OTLP/HTTP metrics endpoint that keeps every decoded point until :meth:`drain`.

    ``with OtlpReceiver(("127.0.0.1", 4318)) as receiver:`` serves on a
    background thread until the block ends.
    """

    daemon_threads = True

    def __init__(self, address: tuple[str, int] = ("127.0.0.1", 4318)) -> None:
        """Bind ``address`` (port 0 picks a free one); raises :class:`OSError` when taken."""
        super().__init__(address, _Handler)
        self._lock = threading.Lock()
        self._batches: list[tuple[int, list[TelemetryPoint]]] = []
        self._thread: threading.Thread | None = None
        self.requests = 0
        """Requests accepted so far."""
        self.rejected: list[str] = []
        """Why each refused request was refused (at most 100 kept)."""

    @property
    def endpoint(self) -> str:
        """The base URL exporters are pointed at: ``http://HOST:PORT``."""
        host, port = self.server_address[:2]
        host_text = host.decode() if isinstance(host, bytes) else str(host)
        if ":" in host_text:
            host_text = f"[{host_text}]"
        return f"http://{host_text}:{port}"

    def accept(self, request: Any) -> None:
        """Keep the points of one decoded request."""
        with self._lock:
            self.requests += 1
            source = f"POST /v1/metrics #{self.requests}"
            self._batches.append((self.requests, list(decode_otlp(request, source))))

    def note_rejected(self, why: str) -> None:
        """Remember why a request was refused."""
        with self._lock:
            if len(self.rejected) < 100:
                self.rejected.append(why)

    def drain_requests(self) -> list[tuple[int, list[TelemetryPoint]]]:
        """``(request number, points)`` of each request received since the last drain."""
        with self._lock:
            batches, self._batches = self._batches, []
        return batches

    def drain(self) -> list[TelemetryPoint]:
        """The points received since the last drain, in arrival order."""
        return [point for _, points in self.drain_requests() for point in points]

    def __enter__(self) -> OtlpReceiver:
        self._thread = threading.Thread(target=self.serve_forever, name="otlp-receiver")
        self._thread.daemon = True
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


_PROMETHEUS_KINDS: Final = {
    "gauge": "gauge",
    "counter": "counter",
    "histogram": "histogram",
    "gaugehistogram": "histogram",
    "summary": "summary",
    "info": "info",
    "stateset": "stateset",
    "unknown": "unknown",
}


def parse_exposition(text: str, source: str = "") -> Iterator[TelemetryPoint]:
    """Every sample family of a Prometheus text exposition as points.

    A counter's point is its ``_total`` sample; a histogram's is its ``_sum``
    with ``observations`` from ``_count`` (per label set, ``le`` left out); other
    families give one point per sample. ``name`` is the family name as
    exposed (``rl_entropy``; ``rl_train_valid_tokens_total`` for a counter).

    Raises:
        ValueError: the text is not a Prometheus exposition.
    """
    from prometheus_client.parser import text_string_to_metric_families  # noqa: PLC0415

    for family in text_string_to_metric_families(text):
        kind = _PROMETHEUS_KINDS.get(family.type, family.type)
        unit = getattr(family, "unit", "") or ""
        if kind == "histogram":
            sums: dict[tuple[tuple[str, str], ...], float] = {}
            counts: dict[tuple[tuple[str, str], ...], int] = {}
            for sample in family.samples:
                labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "le"))
                if sample.name.endswith("_sum"):
                    sums[labels] = float(sample.value)
                elif sample.name.endswith("_count"):
                    counts[labels] = int(sample.value)
            for labels in dict.fromkeys([*sums, *counts]):
                yield TelemetryPoint(
                    transport="prometheus",
                    name=family.name,
                    kind=kind,
                    unit=unit,
                    attributes=dict(labels),
                    value=sums.get(labels),
                    observations=counts.get(labels),
                    source=source,
                    worker=source or None,
                )
            continue
        for sample in family.samples:
            if kind == "counter" and not sample.name.endswith("_total"):
                continue  # _created samples: not a value
            yield TelemetryPoint(
                transport="prometheus",
                # A counter is exposed (and named in the catalog) with its _total sample name.
                name=sample.name if kind == "counter" else family.name,
                kind=kind,
                unit=unit,
                attributes=dict(sample.labels),
                value=float(sample.value),
                source=source,
                worker=source or None,
            )


def scrape(url: str, *, timeout: float = 10.0) -> str:
    """The exposition text served at ``url`` (one GET).

    Raises:
        ScrapeError: the endpoint refused, timed out, answered other than 200,
            or served more than :data:`MAX_SCRAPE_BYTES`.
    """
    request = urllib.request.Request(
        url, headers={"Accept": "text/plain;version=0.0.4;q=0.9,*/*;q=0.1"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body: bytes = response.read(MAX_SCRAPE_BYTES + 1)
            status = int(response.status)
    except OSError as exc:
        reason = getattr(exc, "reason", None) or exc
        msg = f"cannot scrape {url}: {reason}"
        raise ScrapeError(msg) from exc
    if status != 200:
        msg = f"cannot scrape {url}: HTTP {status}"
        raise ScrapeError(msg)
    if len(body) > MAX_SCRAPE_BYTES:
        msg = f"cannot scrape {url}: the exposition is over {MAX_SCRAPE_BYTES} bytes"
        raise ScrapeError(msg)
    return body.decode("utf-8", errors="replace")


def records_from_points(
    points: Iterable[TelemetryPoint], sequence: int, *, path: str | None = None
) -> Iterator[Record]:
    """Live points as live-check records: ``sequence`` (the request or scrape number) is the step.

    A point's ``path`` is ``path`` when given (a file), else its source
    (``POST /v1/metrics #3``, the scrape URL), and its ``line`` the sequence
    number, so findings name where they arrived. The ``target_info`` family of
    a scrape (the resource) is not a series and is skipped.
    """
    record = Record
    no_metrics: Mapping[str, object] = _NO_ATTRIBUTES
    for point in points:
        transport = point.transport
        prometheus = transport == "prometheus"
        if prometheus and point.name == "target_info":
            continue
        yield record(
            sequence,
            "",
            no_metrics,
            path or point.source or transport,
            sequence,
            None,
            point.attributes,
            point.name,
            point.value,
            point.worker,
            point.kind,
            None if prometheus else point.unit,
            transport,
            point.name if prometheus else None,
        )
