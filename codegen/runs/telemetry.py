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

import contextlib
import gzip
import hashlib
import http.client
import socket
import sys
import threading
import time
import urllib.parse
import zlib
from collections.abc import Iterable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from ..safe_text import printable
from .records import Record

__all__ = [
    "CONNECTION_IDLE_S",
    "IDENTITY_LABEL",
    "LISTEN_BACKLOG",
    "LIVE_EXTRA_HINT",
    "MAX_ATTRIBUTE_CHARS",
    "MAX_BODY_BYTES",
    "MAX_REQUEST_POINTS",
    "MAX_SCRAPE_BYTES",
    "MAX_SCRAPE_POINTS",
    "OTLP_INPUT",
    "SCRAPE_DEADLINE_S",
    "OtlpReceiver",
    "ScrapeError",
    "TelemetryPoint",
    "count_points",
    "decode_otlp",
    "decode_request_body",
    "parse_exposition",
    "records_from_points",
    "require_live_extra",
    "scrape",
]

MAX_BODY_BYTES: Final = 20 * 1024 * 1024
"""Largest OTLP request body accepted, sent and inflated (the OpenTelemetry Collector's
own default); larger ones get HTTP 413."""
MAX_REQUEST_POINTS: Final = 200_000
"""Most data points one OTLP request may carry (a gzip body of 100 KB can inflate to
millions); a request with more gets HTTP 413 and is not judged."""
MAX_ATTRIBUTE_CHARS: Final = 1024
"""Longer attribute values (and resource values) are kept cut to this many characters
and a marker: a value that long is never a declared one, and a thousand distinct 1 MiB
values would otherwise be held a megabyte each."""
MAX_SCRAPE_POINTS: Final = 200_000
"""Most points one scrape is judged by; the rest are reported, not judged."""
CONNECTION_IDLE_S: Final = 30.0
"""Seconds the receiver waits on a silent connection before dropping it."""
OTLP_INPUT: Final = "POST /v1/metrics"
"""The input every point the receiver takes belongs to (its workers: the exporters)."""
LISTEN_BACKLOG: Final = 128
"""Connections the OTLP receiver's socket queues while its threads are busy: a job's
exporters (one per rank) all push at the same interval."""
MAX_SCRAPE_BYTES: Final = 16 * 1024 * 1024
"""Largest scrape read; the rest is left unread and the scrape is reported as cut off."""
SCRAPE_DEADLINE_S: Final = 10.0
"""Seconds one scrape may take in all (connecting, headers and body), not per read."""


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
        return bytes(value.bytes_value[:MAX_ATTRIBUTE_CHARS])
    found = getattr(value, which)
    return _cut(found) if which == "string_value" else found


_CUT_MARK: Final = "...(cut)"


def _cut(text: str) -> str:
    """``text``, or its first :data:`MAX_ATTRIBUTE_CHARS` characters and a marker."""
    return text if len(text) <= MAX_ATTRIBUTE_CHARS else text[:MAX_ATTRIBUTE_CHARS] + _CUT_MARK


def _attributes(items: Any) -> Mapping[str, Any]:
    if not items:
        return _NO_ATTRIBUTES
    found = {}
    for kv in items:
        value = kv.value
        key = kv.key
        if len(key) > MAX_ATTRIBUTE_CHARS:
            key = _cut(key)
        if value.WhichOneof("value") == "string_value":
            # The common case, a string, without the generic walk.
            text = value.string_value
            found[key] = text if len(text) <= MAX_ATTRIBUTE_CHARS else _cut(text)
        else:
            found[key] = _any_value(value)
    return found


def _worker_of(resource: Mapping[str, Any]) -> str | None:
    """Which process exported a resource's points: its rank, else its instance id or
    service, else a digest of its attributes (``resource 3f2a...``): the same exporter
    is the same worker across its requests. ``None`` for an empty resource."""
    for name in IDENTITY_LABEL:
        value = resource.get(name)
        if value is not None and value != "":
            return f"rank{value}" if name == "rank" else str(value)
    if not resource:
        return None
    text = repr(sorted((str(k), repr(v)) for k, v in resource.items()))
    return "resource " + hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=6).hexdigest()


def count_points(request: Any) -> int:
    """Data points an ``ExportMetricsServiceRequest`` carries (counted, not decoded)."""
    total = 0
    for resource_metrics in request.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = metric.WhichOneof("data")
                if data is not None:
                    total += len(getattr(metric, data).data_points)
    return total


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
    # A connection silent this long is dropped: idle or half-open connections (a
    # slowloris) cannot hold the receiver's threads while real exporters wait.
    timeout = CONNECTION_IDLE_S

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
        if len(body) < length:
            self.server.note_rejected(f"a request cut short ({len(body)} of {length} bytes)")
            self.close_connection = True
            return
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
        del body
        points = count_points(request)
        if points > MAX_REQUEST_POINTS:
            self.server.note_rejected(f"a request of {points} points (over {MAX_REQUEST_POINTS})")
            self._answer(413, b"too many data points in one request\n", "text/plain")
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
    request_queue_size = LISTEN_BACKLOG

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line on stderr per connection that broke (reset mid-body, a timeout), never
        a traceback; the receiver keeps serving."""
        exc = sys.exc_info()[1]
        what = f"{type(exc).__name__}: {exc}" if exc is not None else "an unknown error"
        sys.stderr.write(
            f"live-check: otlp receiver: a connection from {printable(str(client_address))} "
            f"broke ({printable(what)[:200]}); it was not judged\n"
        )
        self.note_rejected(f"a broken connection ({type(exc).__name__})")

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


def scrape(url: str, *, timeout: float = SCRAPE_DEADLINE_S) -> str:
    """The exposition text served at ``url`` (one GET, redirects not followed).

    ``timeout`` bounds the whole scrape (connecting, the headers and the body),
    not each read: a server that trickles a byte at a time is cut off when it
    passes. A redirect is refused (it may lead to another host or port: scrape
    its target yourself), and a reply that is not HTTP, has a header line over
    64 KiB or more than 100 headers, or a body shorter than its
    ``Content-Length`` is reported as such.

    Raises:
        ScrapeError: the endpoint refused, did not answer in time, answered
            other than 200, broke HTTP, or served more than :data:`MAX_SCRAPE_BYTES`.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        msg = f"cannot scrape {url}: not an http:// or https:// URL"
        raise ScrapeError(msg)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    try:
        connection = kind(parts.hostname, parts.port, timeout=timeout)
    except ValueError as exc:  # a port that is not a number
        msg = f"cannot scrape {url}: {exc}"
        raise ScrapeError(msg) from None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    expired = time.monotonic() + timeout
    deadline: threading.Timer | None = None
    try:
        connection.connect()
        # The socket itself: the connection lets go of it once the response is read.
        deadline = threading.Timer(
            max(0.0, expired - time.monotonic()), _cut_off, (connection.sock,)
        )
        deadline.daemon = True
        deadline.start()
        connection.request("GET", target, headers={"Accept": _ACCEPT})
        body = _body(connection.getresponse(), url)
    except ScrapeError:
        raise
    except http.client.HTTPException as exc:
        what = printable(str(exc))[:200] or type(exc).__name__
        msg = (
            f"cannot scrape {url}: the reply is not well-formed HTTP ({type(exc).__name__}: {what})"
        )
        raise ScrapeError(msg) from None
    except OSError as exc:
        if time.monotonic() >= expired:
            msg = f"cannot scrape {url}: no complete answer within {timeout:g} s (the whole scrape)"
        else:
            msg = f"cannot scrape {url}: {exc.strerror or exc}"
        raise ScrapeError(msg) from None
    finally:
        if deadline is not None:
            deadline.cancel()
        connection.close()
    if time.monotonic() >= expired:
        msg = f"cannot scrape {url}: no complete answer within {timeout:g} s (the whole scrape)"
        raise ScrapeError(msg)
    return body.decode("utf-8", errors="replace")


_ACCEPT: Final = "text/plain;version=0.0.4;q=0.9,*/*;q=0.1"


def _cut_off(sock: socket.socket | None) -> None:
    """The scrape's deadline passed: end its socket, so a blocked read returns at once."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _body(response: http.client.HTTPResponse, url: str) -> bytes:
    """The body of a 200 answer, whole (never a short one), at most :data:`MAX_SCRAPE_BYTES`."""
    status = response.status
    if 300 <= status < 400:
        where = printable(response.getheader("Location", "") or "")[:200]
        msg = (
            f"cannot scrape {url}: HTTP {status}, a redirect to {where!r}; redirects are not "
            "followed (they may lead to another host or port): scrape that URL itself"
        )
        raise ScrapeError(msg)
    if status != 200:
        msg = f"cannot scrape {url}: HTTP {status}"
        raise ScrapeError(msg)
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read1(_SCRAPE_CHUNK):
        size += len(chunk)
        if size > MAX_SCRAPE_BYTES:
            msg = f"cannot scrape {url}: the exposition is over {MAX_SCRAPE_BYTES} bytes"
            raise ScrapeError(msg)
        chunks.append(chunk)
    if response.length:  # Content-Length promised more than arrived
        msg = (
            f"cannot scrape {url}: the body ended after {size} bytes, {response.length} short "
            "of its Content-Length (the server closed the connection early); not judged"
        )
        raise ScrapeError(msg)
    return b"".join(chunks)


_SCRAPE_CHUNK: Final = 256 * 1024


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
    received = OTLP_INPUT if path is None else None
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
            False,
            # Received points are one input whatever request carried them: the exporter's
            # resource identity (the point's worker) tells the workers apart, not the request.
            None if prometheus else received,
        )
