"""Live inputs: an OTLP/HTTP receiver and Prometheus scrapes, read while a job runs.

``live-check --otlp HOST:PORT`` listens (until Ctrl-C or ``--duration``) for
what the job's OTLP exporters push; ``--scrape URL`` reads a Prometheus
endpoint once, or every ``--interval`` seconds for ``--duration``. Both give
point records (see :mod:`.telemetry`) to the same checker as a log's records,
with the judges of :mod:`.judges.telemetry` on top. Each request or scrape is
one "step" of the report, so findings say where they first arrived.
"""

from __future__ import annotations

import argparse
import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from urllib.parse import urlsplit

from .records import Malformed, Record
from .telemetry import (
    MAX_SCRAPE_POINTS,
    OtlpReceiver,
    ScrapeError,
    parse_exposition,
    records_from_points,
    scrape,
)

__all__ = [
    "add_live_arguments",
    "gather",
    "parse_host_port",
    "parse_otlp_url",
    "parse_scrape_url",
]

_POLL_SECONDS = 0.2
"""How often received OTLP requests are handed to the checker."""


def parse_host_port(text: str) -> tuple[str, int]:
    """``127.0.0.1:4318`` -> ``("127.0.0.1", 4318)``; ``[::1]:4318`` for IPv6.

    Raises:
        argparse.ArgumentTypeError: not ``HOST:PORT`` with a port 0-65535.
    """
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        msg = f"{text!r}: expected HOST:PORT with a port 0-65535, e.g. 127.0.0.1:4318"
        raise argparse.ArgumentTypeError(msg)
    return host, int(port)


def _http_url(text: str, default_path: str, example: str) -> str:
    """An http(s) URL, with ``default_path`` added when it has no path."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        msg = f"{text!r}: expected an http(s) URL, e.g. {example}"
        raise argparse.ArgumentTypeError(msg)
    return text if parts.path not in ("", "/") else text.rstrip("/") + default_path


def parse_scrape_url(text: str) -> str:
    """An http(s) URL of a scrape endpoint (``/metrics`` added when it has no path).

    Raises:
        argparse.ArgumentTypeError: not an http(s) URL.
    """
    return _http_url(text, "/metrics", "http://127.0.0.1:9464/metrics")


def parse_otlp_url(text: str) -> str:
    """An OTLP/HTTP metrics URL (``/v1/metrics`` added when it has no path).

    Raises:
        argparse.ArgumentTypeError: not an http(s) URL.
    """
    return _http_url(text, "/v1/metrics", "http://127.0.0.1:4318")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        msg = f"{text!r}: expected a number of seconds > 0"
        raise argparse.ArgumentTypeError(msg)
    return value


def add_live_arguments(parser: argparse.ArgumentParser) -> None:
    """``--otlp-listen`` (formerly ``--otlp``), ``--scrape``, ``--interval``, ``--duration``
    and ``--promoted``."""
    group = parser.add_argument_group("live telemetry (instead of RUN)")
    group.add_argument(
        "--otlp-listen",
        dest="otlp",
        type=parse_host_port,
        metavar="HOST:PORT",
        help=(
            "receive OTLP/HTTP metrics on HOST:PORT (the job's OTEL_EXPORTER_OTLP_ENDPOINT) "
            "until Ctrl-C or --duration"
        ),
    )
    # The older spelling, which emit's --otlp (send to) made ambiguous.
    group.add_argument("--otlp", dest="otlp", type=parse_host_port, help=argparse.SUPPRESS)
    group.add_argument(
        "--scrape",
        type=parse_scrape_url,
        action="append",
        metavar="URL",
        help="read a Prometheus/OpenMetrics endpoint (repeatable); once unless --interval",
    )
    group.add_argument(
        "--interval",
        type=_seconds,
        metavar="SECONDS",
        help="scrape every SECONDS for --duration (default: scrape once)",
    )
    group.add_argument(
        "--duration",
        type=_seconds,
        metavar="SECONDS",
        help="how long to receive or scrape (default: until Ctrl-C for --otlp-listen)",
    )
    group.add_argument(
        "--promoted",
        metavar="NAMES",
        help="identity attributes every point must carry (default: $METRIC_CATALOG_PROMOTE)",
    )


def _scrape_records(url: str, sequence: int) -> Iterator[Record | Malformed]:
    """The points of one scrape as records: at most :data:`MAX_SCRAPE_POINTS` (then a
    malformed record says the rest were not judged), none when it breaks."""
    expected = "a Prometheus exposition"
    try:
        points = list(itertools.islice(parse_exposition(scrape(url), url), MAX_SCRAPE_POINTS + 1))
    except (ScrapeError, ValueError) as exc:
        yield Malformed(url, sequence, str(exc), expected=expected)
        return
    yield from records_from_points(points[:MAX_SCRAPE_POINTS], sequence)
    if len(points) > MAX_SCRAPE_POINTS:
        why = f"the scrape holds over {MAX_SCRAPE_POINTS} points; the first ones were judged"
        yield Malformed(url, sequence, why, expected=expected)


def gather(
    *,
    otlp: tuple[str, int] | None = None,
    urls: Sequence[str] = (),
    interval: float | None = None,
    duration: float | None = None,
    stop: threading.Event | None = None,
    on_listening: Callable[[str], None] | None = None,
) -> Iterator[Record | Malformed]:
    """Records of live telemetry until ``duration`` passes or ``stop`` is set.

    Without ``otlp`` and ``interval``, each of ``urls`` is scraped once and
    the iteration ends. ``on_listening`` is told the receiver's base URL once
    it accepts requests.

    Raises:
        OSError: the OTLP address cannot be bound.
    """
    stop = stop or threading.Event()
    deadline = None if duration is None else time.monotonic() + duration
    receiver = OtlpReceiver(otlp) if otlp is not None else None
    scrapes = 0
    next_scrape = time.monotonic()

    def expired() -> bool:
        return stop.is_set() or (deadline is not None and time.monotonic() >= deadline)

    def received() -> Iterator[Record]:
        assert receiver is not None
        for sequence, points in receiver.drain_requests():
            yield from records_from_points(points, sequence)

    if receiver is None:
        while True:
            scrapes += 1
            for url in urls:
                yield from _scrape_records(url, scrapes)
            if interval is None or expired():
                return
            next_scrape += interval
            stop.wait(max(0.0, next_scrape - time.monotonic()))
            if expired():
                return
    with receiver:
        if on_listening is not None:
            on_listening(receiver.endpoint)
        while True:
            now = time.monotonic()
            if urls and now >= next_scrape and (interval is not None or scrapes == 0):
                scrapes += 1
                for url in urls:
                    yield from _scrape_records(url, scrapes)
                next_scrape = now + (interval or 0.0)
            yield from received()
            if expired():
                break
            stop.wait(_POLL_SECONDS)
    yield from received()  # what arrived while shutting down
