"""``live-check --scrape`` against hostile endpoints: redirects, trickles, broken HTTP.

What an attacker controls: everything a scrape endpoint sends (status line, headers,
body, timing) and where it redirects to. The scraper must not follow a redirect (to
another host or port), must bound the whole scrape by one deadline (not each read),
and must report a reply that is not HTTP, has a header over 64 KiB or more than 100
headers, or a body shorter than its Content-Length, as a malformed scrape. Each server
is a loopback socket on a thread; each scrape is bounded by the deadline it is given.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from codegen.runs.live import gather
from codegen.runs.records import Malformed
from codegen.runs.telemetry import ScrapeError, scrape

OK_BODY = b"# TYPE rl_entropy gauge\nrl_entropy 1.0\n"


def serve(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    """A loopback server answering every connection with ``answer``; yields its base URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    hits: list[int] = []
    stop = threading.Event()

    def loop() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            hits.append(1)
            with conn:
                conn.recv(65536)
                with contextlib.suppress(OSError):
                    answer(conn)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.fixture
def target() -> Iterator[tuple[str, list[int]]]:
    """A good endpoint, counting the scrapes it gets."""
    seen: list[int] = []

    def answer(conn: socket.socket) -> None:
        seen.append(1)
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(OK_BODY)}\r\n\r\n".encode()
        conn.sendall(head + OK_BODY)

    yield from ((url, seen) for url in serve(answer))


def test_a_redirect_to_another_port_is_not_followed(target: tuple[str, list[int]]) -> None:
    elsewhere, hits = target

    def redirect(conn: socket.socket) -> None:
        location = f"Location: {elsewhere}/metrics\r\n"
        conn.sendall(f"HTTP/1.1 302 Found\r\n{location}Content-Length: 0\r\n\r\n".encode())

    for url in serve(redirect):
        with pytest.raises(ScrapeError, match=r"HTTP 302, a redirect to .*not followed"):
            scrape(url + "/metrics", timeout=5)
    assert hits == []


def trickle(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
    for _ in range(40):
        conn.sendall(b"#")
        time.sleep(0.25)


def header_over_64_kib(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n" + OK_BODY)


def many_headers(conn: socket.socket) -> None:
    headers = b"".join(b"X-H%d: v\r\n" % i for i in range(150))
    conn.sendall(b"HTTP/1.1 200 OK\r\n" + headers + b"\r\n" + OK_BODY)


def not_http(conn: socket.socket) -> None:
    conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")


def short_body(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + OK_BODY)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (trickle, r"no complete answer within 1 s \(the whole scrape\)"),
        (header_over_64_kib, r"not well-formed HTTP \(LineTooLong"),
        (many_headers, r"not well-formed HTTP \(HTTPException: got more than 100 headers"),
        (not_http, r"not well-formed HTTP \(BadStatusLine"),
        (short_body, r"the body ended after \d+ bytes, \d+ short of its Content-Length"),
    ],
    ids=["trickle", "header-over-64KiB", "over-100-headers", "not-http", "short-body"],
)
def test_a_broken_endpoint_is_a_scrape_error(
    answer: Callable[[socket.socket], None], message: str
) -> None:
    for url in serve(answer):
        with pytest.raises(ScrapeError, match=message):
            scrape(url + "/metrics", timeout=1)


def test_a_short_body_is_a_malformed_scrape_not_a_complete_one() -> None:
    for url in serve(short_body):
        items = list(gather(urls=[url + "/metrics"]))
    assert len(items) == 1
    assert isinstance(items[0], Malformed)
    assert "short of its Content-Length" in items[0].why
