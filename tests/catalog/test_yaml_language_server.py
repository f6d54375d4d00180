"""The schema line of an ``init``-ed project works in a real editor's YAML language server.

Starts ``yaml-language-server`` (the npm package editors embed; ``.ci/run``
installs it into ``.cache/npm``) over stdio, speaks LSP JSON-RPC to it as an
editor does (initialize, the ``yaml`` settings with validation on, didOpen),
and opens a catalog file of a freshly ``init``-ed project with a misspelled
field. The diagnostic must come from the project's own schema copy, named by
the file's ``# yaml-language-server: $schema=catalog.schema.json`` line: no
virtual environment, no network (the schema store is switched off).

Skipped locally when node or the server is missing; fails under ``CI``.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from codegen.cli import main

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / ".cache" / "npm" / "node_modules" / "yaml-language-server" / "bin"
WAIT = 60.0
"""Seconds to wait for one server message: a hang guard, not a timing claim."""


def _server_command() -> list[str]:
    node = shutil.which("node")
    script = SERVER / "yaml-language-server"
    if node is None or not script.is_file():
        what = "node" if node is None else f"{script.relative_to(REPO)}"
        if os.environ.get("CI"):
            pytest.fail(f"{what} is missing, but CI must have it (.ci/run installs it)")
        pytest.skip(f"{what} is missing (npm install --prefix .cache/npm yaml-language-server@1)")
    return [node, str(script), "--stdio"]


class Client:
    """A minimal LSP client: framed JSON-RPC over the server's stdin and stdout."""

    def __init__(self, process: subprocess.Popen[bytes], root: Path) -> None:
        self.process = process
        self.root = root
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.next_id = 1
        assert process.stdout is not None
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = 0
            while (line := stream.readline()) not in {b"\r\n", b""}:
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if line == b"":
                return
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        ident = self.next_id
        self.next_id += 1
        self.send({"id": ident, "method": method, "params": params})
        for message in self._incoming():
            if message.get("id") == ident and "method" not in message:
                return message
        raise AssertionError("unreachable")

    def _settings(self) -> dict[str, Any]:
        return {
            "validate": True,
            "completion": True,
            "hover": True,
            "schemaStore": {"enable": False},
            "schemas": {},
        }

    def _incoming(self) -> Iterator[dict[str, Any]]:
        """Messages as they come; the server's own requests are answered on the way."""
        while True:
            try:
                message = self.messages.get(timeout=WAIT)
            except queue.Empty:
                pytest.fail(f"yaml-language-server sent nothing for {WAIT:.0f} s")
            if "method" in message and "id" in message:
                result: Any = None
                if message["method"] == "workspace/configuration":
                    items = message["params"]["items"]
                    result = [
                        self._settings() if item.get("section") == "yaml" else None
                        for item in items
                    ]
                self.send({"id": message["id"], "result": result})
                continue
            yield message

    def diagnostics(self, uri: str) -> list[dict[str, Any]]:
        """The first non-empty diagnostics the server publishes for ``uri``."""
        for message in self._incoming():
            if message.get("method") != "textDocument/publishDiagnostics":
                continue
            params = message["params"]
            if params["uri"] == uri and params["diagnostics"]:
                found: list[dict[str, Any]] = params["diagnostics"]
                return found
        raise AssertionError("unreachable")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    command = _server_command()
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield Client(process, tmp_path)
    finally:
        process.kill()
        process.wait()


def test_a_misspelled_field_gets_the_schema_copys_diagnostic(
    tmp_path: Path, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "rl"\n')
    assert main(["init", "--root", str(project)]) == 0
    capsys.readouterr()
    example = project / "rl" / "telemetry" / "catalog" / "example.yaml"
    text = example.read_text().replace("\ndescription: Example", "\ndescripton: Example", 1)
    assert "descripton:" in text
    uri = example.as_uri()
    reply = client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": project.as_uri(),
            "capabilities": {
                "workspace": {"configuration": True, "didChangeConfiguration": {}},
                "textDocument": {"publishDiagnostics": {"relatedInformation": True}},
            },
            "workspaceFolders": [{"uri": project.as_uri(), "name": "project"}],
        },
    )
    assert "result" in reply, reply
    client.notify("initialized", {})
    client.notify("workspace/didChangeConfiguration", {"settings": {"yaml": client._settings()}})
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
    )
    diagnostics = client.diagnostics(uri)
    messages = {d["message"] for d in diagnostics}
    assert "Property descripton is not allowed." in messages, diagnostics
    assert 'Missing property "description".' in messages, diagnostics
    typo = next(d for d in diagnostics if "descripton" in d["message"])
    lines = text.splitlines()
    assert typo["range"]["start"]["line"] == lines.index(
        next(line for line in lines if line.startswith("descripton:"))
    )
    assert typo["source"] == "yaml-schema: metric-catalog owner file"  # the schema's title
    # From the project's copy of the schema, which the file's first line names.
    assert typo["data"]["schemaUri"] == [(example.parent / "catalog.schema.json").as_uri()]
    assert "description" in typo["data"]["properties"]  # what the server offers instead
