"""``emit --otlp`` against collectors that do not accept: HTTP 500, a hung endpoint, a
closed port.

What an attacker (or a broken collector) controls: the status it answers, whether it
answers at all. ``emit`` must exit non-zero naming the endpoint and why, never say
``pushed`` for an export that was not accepted. Each run is a child bounded by a
deadline (the exporter's own shutdown deadline is 5 s) and 300 MiB of peak RSS.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.hostile_runs import REPO, run_cli

MEMORY_MIB = 300


class _Answers(BaseHTTPRequestHandler):
    status = 500
    hang = False

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.hang:
            time.sleep(30)
        self.send_response(self.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


def collector(status: int, *, hang: bool = False) -> Iterator[str]:
    handler = type("Handler", (_Answers,), {"status": status, "hang": hang})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.integration
@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (500, ("code: 500",)),
        ("hang", ("no answer within the deadline",)),
        # A loaded machine may reach the shutdown deadline before the first refusal is logged.
        ("closed", ("refused", "no answer within the deadline")),
    ],
    ids=["http-500", "hung", "closed-port"],
)
def test_an_export_not_accepted_fails_emit_naming_the_endpoint(
    tmp_path: Path, answer: object, why: tuple[str, ...]
) -> None:
    if answer == "closed":
        urls: Iterator[str] = iter([closed_port()])
    else:
        urls = collector(500 if answer == 500 else 200, hang=answer == "hang")
    for url in urls:
        done = run_cli(
            "emit", "--root", str(REPO), "--steps", "1", "--otlp", url, tmp=tmp_path, deadline=60
        )
        assert done.code == 2
        assert f"error: otlp: the export to {url}/v1/metrics was not accepted" in done.stderr
        assert any(reason in done.stderr.lower() for reason in why), done.stderr
        assert "pushed to" not in done.stdout
        assert done.peak_mib < MEMORY_MIB


def test_a_jsonl_path_that_is_a_dangling_link_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    link = tmp_path / "run.jsonl"
    link.symlink_to(outside / "emitted.jsonl")

    done = run_cli("emit", "--root", str(REPO), "--steps", "1", "--jsonl", str(link), tmp=tmp_path)

    assert done.code == 2
    assert f"--jsonl {link}: is a symlink" in done.stderr
    assert list(outside.iterdir()) == []
    assert done.peak_mib < MEMORY_MIB
