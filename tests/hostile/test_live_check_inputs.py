"""live-check against hostile inputs: many files, the same file twice, endless lines, moving logs.

Memory stays a small constant per worker with one file open at a time; an
input reached twice (a symlink, a ``**`` glob through ``..``) is read once
and the report says so; an endless line or a run of overlong lines abandons
the input with an error naming it; a log that grows or shrinks while it is
read is judged as far as it was read.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from codegen import live_check
from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import (
    check_file,
    check_paths,
    check_stream,
    expand_inputs,
    expand_paths,
)
from codegen.live_check.checker import Checker
from codegen.runs import ingest

REPO = Path(__file__).resolve().parents[2]
EVOLUTION = REPO / "tests" / "fixtures" / "evolution"
LINE = json.dumps({"step": 1, "prefix": "train", "metrics": {"reward": 1.0}}) + "\n"


# --- issue 18 item 7: many files, bounded memory, de-duplicated inputs -------------------

_MANY_FILES = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    # The peak is this process's own: ru_maxrss would keep the high-water mark of the
    # forked test runner it started as, so reset VmHWM (Linux) and read it back.
    Path("/proc/self/clear_refs").write_text("5")
    from codegen.live_check import check_paths, expand_paths
    from codegen.catalog.pipeline import load_and_check

    folder, count = Path(sys.argv[1]), int(sys.argv[2])
    for i in range(count):
        metrics = {"reward": 1.0, "loss": 0.5, "global_valid_toks": -1 if i % 2 else 3}
        line = json.dumps({"step": 1, "prefix": "train", "metrics": metrics})
        (folder / f"run-{i:05d}.jsonl").write_text(line + "\\n")
    catalog = load_and_check(root=Path(sys.argv[3]), lint=False).catalog
    report = check_paths(expand_paths([str(folder / "run-*.jsonl")]), catalog)
    assert report.records == count, report.records
    status = Path("/proc/self/status").read_text().splitlines()
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
    """
)


@pytest.mark.integration
def test_ten_thousand_one_line_files_peak_under_150_mb(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _MANY_FILES, str(tmp_path), "10000", str(EVOLUTION)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    peak_kb = int(result.stdout.split()[-1])  # VmHWM in KiB
    assert peak_kb <= 150 * 1024, f"peak RSS {peak_kb / 1024:.0f} MiB"


def test_workers_keep_no_per_row_state(evolution_catalog: Catalog, tmp_path: Path) -> None:
    paths = []
    for i in range(50):
        path = tmp_path / f"run-{i}.jsonl"
        path.write_text(LINE)
        paths.append(str(path))
    checker = Checker(evolution_catalog, "run", multi=True)
    for path in paths:
        for item in ingest.read_source(live_check.Source(path), live_check.current_limits()):
            checker.take(item)
    # A clean worker holds its label only: no findings table, no budgets, no row summaries.
    assert len(checker.workers) == 50
    assert all(w.findings is None and w.budgets is None for w in checker.workers.values())


def test_at_most_one_input_is_open_at_a_time(
    evolution_catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = []
    for i in range(20):
        path = tmp_path / f"run-{i}.jsonl"
        path.write_text(LINE * 3)
        paths.append(str(path))
    open_now, most = 0, 0
    real_open = builtins.open

    class Counted(io.BufferedReader):
        def close(self) -> None:
            nonlocal open_now
            if not self.closed:
                open_now -= 1
            super().close()

    def counting_open(path: str, *args: Any, **kwargs: Any) -> BinaryIO:
        nonlocal open_now, most
        raw = real_open(path, "rb", buffering=0)
        open_now += 1
        most = max(most, open_now)
        return Counted(raw)

    monkeypatch.setattr(ingest, "open_input", counting_open)
    report = check_paths(paths, evolution_catalog)
    assert report.records == 60
    assert most == 1
    assert open_now == 0


def test_a_recursive_glob_through_a_parent_symlink_reads_each_file_once(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "run.jsonl").write_text(LINE)
    os.symlink("..", logs / "sub" / "up")  # logs/sub/up/sub/up/... is logs again
    pattern = str(logs / "**" / "*.jsonl")
    inputs = expand_inputs([pattern])
    assert inputs.paths == [str(logs / "run.jsonl")]
    assert len(inputs.duplicates) > 1
    assert expand_paths([pattern]) == inputs.paths
    report = check_paths(inputs.paths, evolution_catalog, duplicates=inputs.duplicates)
    assert report.records == 1
    assert report.skipped_inputs == sorted(inputs.duplicates)
    (notice,) = [n for n in report.notices if n.kind == "duplicate_input"]
    assert f"{len(inputs.duplicates)} input(s) named a file already read" in notice.message


def test_two_spellings_of_one_file_are_one_worker(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(LINE)
    os.symlink(path, tmp_path / "alias.jsonl")
    report = check_paths([str(path), str(tmp_path / "alias.jsonl")], evolution_catalog)
    assert report.records == 1
    assert report.source == str(path)
    doc = json.loads(report.to_json())
    assert [n["kind"] for n in doc["information"]] == ["duplicate_input"]


# --- issue 18 item 8: endless lines, overlong lines --------------------------------------


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_dev_zero_ends_with_an_error_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["live-check", "/dev/zero", "--root", str(EVOLUTION)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: /dev/zero: line 1 runs on past")
    assert "without a line break" in err


class Endless(io.RawIOBase):
    """A stream of one byte for ever, counting what was read."""

    def __init__(self, byte: bytes) -> None:
        self.byte = byte
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        view[:] = self.byte * len(view)
        self.read_bytes += len(view)
        return len(view)


@pytest.mark.parametrize("byte", [b"\0", b"x", b"{"], ids=["nul", "text", "brace"])
def test_an_endless_line_is_abandoned_past_the_size_bound(
    evolution_catalog: Catalog, monkeypatch: pytest.MonkeyPatch, byte: bytes
) -> None:
    monkeypatch.setattr(live_check, "MAX_LINE_BYTES", 1024)
    monkeypatch.setattr(live_check, "MAX_SKIPPED_BYTES", 8192)
    raw = Endless(byte)
    report = check_stream(io.BufferedReader(raw), evolution_catalog, source="endless")
    assert raw.read_bytes < 64 * 1024
    assert report.abandoned == [
        "endless: line 1 runs on past 8192 bytes without a line break; this is not a JSONL "
        "log (an endless stream such as /dev/zero?): pass the file JsonlLogger wrote"
    ]
    kinds = [f.kind for f in report.findings if f.kind == "malformed"]
    assert kinds == ["malformed", "malformed"]  # the overlong line, then the abandonment


def test_an_input_of_overlong_lines_is_abandoned_after_a_few(
    evolution_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_check, "MAX_LINE_BYTES", 64)
    long_line = b"x" * 200 + b"\n"
    raw = long_line * 10 + LINE.encode()
    report = check_stream(io.BytesIO(raw), evolution_catalog, source="long.jsonl")
    assert report.lines == live_check.MAX_OVERLONG_LINES
    assert report.records == 0
    (why,) = report.abandoned
    assert why.startswith("long.jsonl: 3 lines longer than 64 bytes (the last at line 3)")


def test_fewer_overlong_lines_than_the_cap_are_skipped_and_reading_goes_on(
    evolution_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_check, "MAX_LINE_BYTES", 64)
    raw = b"x" * 200 + b"\n" + LINE.encode() + b"y" * 300 + b"\n" + LINE.encode()
    report = check_stream(io.BytesIO(raw), evolution_catalog, source="long.jsonl")
    assert (report.lines, report.records, report.abandoned) == (4, 2, [])


# --- issue 18, beyond the list: a log that moves while it is read ------------------------


class Moving(io.RawIOBase):
    """A file read through a hook that runs after every read (to grow or truncate it)."""

    def __init__(self, path: Path, hook: Any) -> None:
        self.file = builtins.open(path, "rb", buffering=0)  # noqa: SIM115 - closed in close()
        self.hook = hook
        self.reads = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        got = self.file.readinto(buffer) or 0
        self.reads += 1
        self.hook(self.reads)
        return got

    def close(self) -> None:
        self.file.close()
        super().close()


def _reads(path: Path, hook: Any) -> Iterator[BinaryIO]:
    with io.BufferedReader(Moving(path, hook), buffer_size=64) as stream:
        yield stream


@pytest.mark.parametrize("cut", [0, 1, 37, 200])
def test_a_log_truncated_while_read_is_judged_as_far_as_it_was_read(
    evolution_catalog: Catalog, tmp_path: Path, cut: int
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(LINE.encode() * 50)

    def truncate(reads: int) -> None:
        if reads == 2:
            os.truncate(path, cut)

    for stream in _reads(path, truncate):
        report = check_stream(stream, evolution_catalog, source="run.jsonl")
    assert report.records < 50
    assert all(f.kind in {"malformed", "missing"} for f in report.findings)


def test_a_log_that_grows_while_read_is_read_to_its_end(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(LINE.encode() * 5)

    def grow(reads: int) -> None:
        if reads <= 20:
            with builtins.open(path, "ab") as log:
                log.write(LINE.encode()[:30])  # half a line at a time
                log.flush()
                log.write(LINE.encode()[30:])

    for stream in _reads(path, grow):
        report = check_stream(stream, evolution_catalog, source="run.jsonl")
    assert report.records >= 5
    assert report.abandoned == []


def test_a_file_removed_before_it_is_read_is_an_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["live-check", str(tmp_path / "gone.jsonl"), "--root", str(EVOLUTION)])
    assert code == 2
    assert "gone.jsonl" in capsys.readouterr().err


def test_a_folder_given_as_a_log_is_an_error_naming_it(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    with pytest.raises(OSError, match="is not a file"):
        check_file(str(tmp_path), evolution_catalog)


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_logged_key_cannot_redraw_the_terminal_or_the_job_log(
    evolution_catalog: Catalog, tmp_path: Path, fmt: str
) -> None:
    """Keys come from the log (or the network): the text and GitHub reports escape what is
    not printable, so a key holding \\r or an ANSI escape shows as text."""
    from codegen.live_check.render import render_text
    from codegen.live_check.render_ci import render_github

    path = tmp_path / "evil.jsonl"
    key = "evil\r\x1b[2J\u202ekey"
    path.write_text(json.dumps({"step": 1, "prefix": "train", "metrics": {key: 1.0}}) + "\n")
    report = check_file(str(path), evolution_catalog)
    out = render_text(report) if fmt == "text" else render_github(report)
    assert "\x1b" not in out
    assert "\u202e" not in out
    assert "\r" not in out
    assert "evil" in out
    assert "\\x1b[2J" in out
