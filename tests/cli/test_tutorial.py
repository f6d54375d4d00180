"""The tutorial (``docs/tutorial/first-catalog.md``) runs as written.

Conventions the tutorial follows, so this test can replay it:

- a ```` ```console ```` block holds commands, each on a line starting ``$ ``; the lines
  after a command, up to the next ``$ `` line, are output it must print (each one a
  whole line of its stdout or stderr, in that order; other lines may come between);
- every command must exit 0 (a command shown failing on purpose ends in
  ``|| echo "exit $?"``, so its exit status is an output line);
- ``$ cd DIR`` changes the folder the next commands run in;
- a ```` ```{code-block} LANG ```` block with ``:caption: PATH`` is a file the reader
  saves: it is written to ``PATH`` (relative to the current folder) at that point.

Commands run with ``bash -c`` in a temporary folder; ``metric-catalog`` and ``python`` are
the ones of the interpreter running the tests (its venv's entry point).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial" / "first-catalog.md"

_BLOCK = re.compile(
    r"^```console\n(?P<console>.*?)^```$"
    r"|^```\{code-block\} \w+\n:caption: (?P<path>\S+)\n\n(?P<file>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Command:
    """A ``$ `` line of the tutorial and the output lines shown under it."""

    line: str
    output: tuple[str, ...]


@dataclass(frozen=True)
class SavedFile:
    """A file the tutorial asks the reader to save."""

    path: str
    text: str


def tutorial_steps(text: str) -> list[Command | SavedFile]:
    """The commands and files of a tutorial, in the order the reader meets them."""
    steps: list[Command | SavedFile] = []
    for block in _BLOCK.finditer(text):
        if block["path"] is not None:
            steps.append(SavedFile(block["path"], block["file"]))
            continue
        for chunk in re.split(r"^(?=\$ )", block["console"], flags=re.MULTILINE):
            if chunk.startswith("$ "):
                first, *shown = chunk.rstrip("\n").split("\n")
                steps.append(Command(first[2:], tuple(line for line in shown if line.strip())))
    return steps


def _bin_dir(tmp_path: Path) -> Path:
    """A folder whose ``python`` and ``metric-catalog`` are the test interpreter's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A script, not a link: a link to a venv's python outside the venv's bin/ finds no
    # pyvenv.cfg beside it, so it would run the base interpreter without the venv's packages.
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    entry = Path(sys.executable).parent / "metric-catalog"
    if entry.exists():
        (bin_dir / "metric-catalog").symlink_to(entry)
    else:  # an interpreter without the installed entry point: the same main
        shim = bin_dir / "metric-catalog"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m codegen "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    return bin_dir


def _run(step: Command, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one ``$ `` line with bash in ``cwd``; it must exit 0."""
    bash = shutil.which("bash") or "/bin/bash"
    argv = [bash, "-c", step.line]
    result = subprocess.run(argv, check=False, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"$ {step.line}: exit {result.returncode}\n{result.stderr}"
    return result


def _assert_shows(command: Command, result: subprocess.CompletedProcess[str]) -> None:
    printed = [line.rstrip() for line in (result.stdout + result.stderr).splitlines()]
    where = 0
    for expected in command.output:
        assert expected in printed[where:], (
            f"$ {command.line}\nexpected the line {expected!r} (in order); printed:\n"
            + "\n".join(printed)
        )
        where = printed.index(expected, where) + 1


def test_the_tutorial_shows_the_whole_path_from_init_to_a_checked_run() -> None:
    """The extraction finds the steps the tutorial promises (so the replay is not empty)."""
    steps = tutorial_steps(TUTORIAL.read_text(encoding="utf-8"))
    commands = [step.line for step in steps if isinstance(step, Command)]
    files = [step.path for step in steps if isinstance(step, SavedFile)]
    for needed in ("metric-catalog init", "metric-catalog generate", "python train.py"):
        assert needed in commands
    assert any(line.startswith("metric-catalog live-check run.jsonl") for line in commands)
    assert files == ["myrl/telemetry/catalog/example.yaml", "train.py"]
    shown = {step.line.split()[1] for step in steps if isinstance(step, Command) and step.output}
    assert {"init", "validate", "generate", "train.py", "live-check", "check"} <= shown


def test_every_command_of_the_tutorial_runs_as_written_and_prints_what_it_shows(
    tmp_path: Path,
) -> None:
    """Replays the tutorial in an empty folder: exit codes and shown output lines hold."""
    env = {**os.environ, "PATH": f"{_bin_dir(tmp_path)}{os.pathsep}{os.environ['PATH']}"}
    for name in ("OTEL_METRICS_EXPORTER", "METRIC_CATALOG_LOOP", "METRIC_CATALOG_STRICT"):
        env.pop(name, None)
    cwd = tmp_path / "work"
    cwd.mkdir()
    for step in tutorial_steps(TUTORIAL.read_text(encoding="utf-8")):
        if isinstance(step, SavedFile):
            (cwd / step.path).write_text(step.text, encoding="utf-8")
        elif step.line.startswith("cd "):
            cwd = cwd / step.line[3:].strip()
            assert cwd.is_dir(), f"$ {step.line}: no such folder"
        else:
            _assert_shows(step, _run(step, cwd, env))
