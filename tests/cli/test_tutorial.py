"""The tutorials (``docs/tutorial/*.md``) run as written.

Conventions the tutorials follow, so this test can replay them:

- a ```` ```console ```` block holds commands, each on a line starting ``$ ``; the lines
  after a command, up to the next ``$ `` line, are output it must print (each one a
  whole line of its stdout or stderr, in that order; other lines may come between); a
  ``…`` in a shown line stands for any text (a run folder's time-stamped name);
- every command must exit 0 (a command shown failing on purpose ends in
  ``|| echo "exit $?"``, so its exit status is an output line);
- ``$ cd DIR`` changes the folder the next commands run in, and ``$ export NAME=VALUE``
  sets a variable for them, as in the reader's shell;
- a ```` ```{code-block} LANG ```` block (or one fenced with more backticks, to hold a
  fence) with ``:caption: PATH`` is a file the reader saves: it is written to ``PATH``
  (relative to the current folder) at that point.

Commands run with ``bash -c`` in a temporary folder; ``python``, ``metric-catalog``,
``sphinx-build`` and ``pre-commit`` are the ones of the interpreter running the tests (its
venv's entry points), so the page's install line is assumed done; the README's install
section is replayed by ``tests/examples/test_adopter_integration.py`` (a built wheel in a
fresh venv).

``first-catalog.md`` runs in the fast suite. ``flat-dict-wandb.md`` (a newcomer's W&B
project from ``init`` to a pre-commit hook: two jobs sharing a key, the tee, a scrape,
the live-check gate failing on a rename and a wrong unit, ``infer``, a Sphinx build) is
an integration test, skipped without ``wandb``; its built site is shown in Chromium and
screenshot to ``test-artifacts/``. The README's quick start (its ``sh`` lines and its W&B
snippet) runs the same way in a fresh ``myrl`` folder.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from tests.generate.test_docs_site import ARTIFACTS, _open, _QuietHandler, browser

__all__ = ["browser"]  # fixture used by name

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial" / "first-catalog.md"
FLAT_DICT = REPO / "docs" / "tutorial" / "flat-dict-wandb.md"
README = REPO / "README.md"
TOOLS = ("metric-catalog", "sphinx-build", "pre-commit")
"""The venv's entry points a tutorial runs (``python`` is the test interpreter)."""
CLEARED = ("OTEL_", "METRIC_CATALOG_", "WANDB_", "PRE_COMMIT")
"""Variables of the test's own environment a replay starts without: a reader's shell has
none of them (the page exports what it needs)."""
ELIDED = "…"
"""In a shown output line: any text."""

_BLOCK = re.compile(
    r"^```console\n(?P<console>.*?)^```$"
    r"|^(?P<fence>`{3,})\{code-block\} \w+\n:caption: (?P<path>\S+)\n\n(?P<file>.*?)"
    r"^(?P=fence)$",
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
    """A folder whose ``python`` and :data:`TOOLS` are the test interpreter's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A script, not a link: a link to a venv's python outside the venv's bin/ finds no
    # pyvenv.cfg beside it, so it would run the base interpreter without the venv's packages.
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    modules = {"metric-catalog": "codegen", "sphinx-build": "sphinx", "pre-commit": "pre_commit"}
    for tool in TOOLS:
        entry = Path(sys.executable).parent / tool
        if entry.exists():
            (bin_dir / tool).symlink_to(entry)
        else:  # an interpreter without the installed entry point: the same main
            shim = bin_dir / tool
            shim.write_text(
                f'#!/bin/sh\nexec "{sys.executable}" -m {modules[tool]} "$@"\n', encoding="utf-8"
            )
            shim.chmod(0o755)
    return bin_dir


def _run(step: Command, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one ``$ `` line with bash in ``cwd``; it must exit 0."""
    bash = shutil.which("bash") or "/bin/bash"
    argv = [bash, "-c", step.line]
    result = subprocess.run(argv, check=False, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"$ {step.line}: exit {result.returncode}\n{result.stderr}"
    return result


def _shown(expected: str) -> Callable[[str], bool]:
    """Whether a printed line is the shown line ``expected`` (:data:`ELIDED`: any text)."""
    if ELIDED not in expected:
        return expected.__eq__
    pattern = re.compile(".*".join(map(re.escape, expected.split(ELIDED))), re.DOTALL)
    return lambda line: pattern.fullmatch(line) is not None


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
"""A terminal colour or cursor code: tools colour their output when the environment says
the terminal can show it (``TERM``, ``FORCE_COLOR``); the page shows the text."""


def _assert_shows(command: Command, result: subprocess.CompletedProcess[str]) -> None:
    output = _ANSI.sub("", result.stdout + result.stderr)
    printed = [line.rstrip() for line in output.splitlines()]
    where = 0
    for expected in command.output:
        matches = _shown(expected)
        found = next((i for i in range(where, len(printed)) if matches(printed[i])), None)
        assert found is not None, (
            f"$ {command.line}\nexpected the line {expected!r} (in order); printed:\n"
            + "\n".join(printed)
        )
        where = found + 1


def _environment(tmp_path: Path) -> dict[str, str]:
    """A reader's shell: the test's tools first on ``PATH``, caches in ``tmp_path``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(CLEARED) and "proxy" not in name.lower()
    }
    env["PATH"] = f"{_bin_dir(tmp_path)}{os.pathsep}{os.environ['PATH']}"
    home = tmp_path / "home"
    env["PRE_COMMIT_HOME"] = str(home / "pre-commit")
    for what in ("CONFIG", "CACHE", "DATA"):
        env[f"WANDB_{what}_DIR"] = str(home / f"wandb-{what.lower()}")
    return env


def replay(page: Path, tmp_path: Path) -> Path:
    """Run ``page``'s steps in an empty folder under ``tmp_path``; the last folder ``cd``'d to.

    Every command must exit 0 and print the lines the page shows under it.
    """
    env = _environment(tmp_path)
    cwd = tmp_path / "work"
    cwd.mkdir()
    for step in tutorial_steps(page.read_text(encoding="utf-8")):
        if isinstance(step, SavedFile):
            (cwd / step.path).write_text(step.text, encoding="utf-8")
        elif step.line.startswith("cd "):
            cwd = cwd / step.line[3:].strip()
            assert cwd.is_dir(), f"$ {step.line}: no such folder"
        elif step.line.startswith("export "):
            name, sep, value = shlex.split(step.line[len("export ") :])[0].partition("=")
            assert sep, f"$ {step.line}: not NAME=VALUE"
            env[name] = value
        else:
            _assert_shows(step, _run(step, cwd, env))
    return cwd


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


def test_the_flat_dict_tutorial_goes_from_init_to_a_pre_commit_hook() -> None:
    """The W&B tutorial's extraction holds every step of a newcomer's trial, in order."""
    steps = tutorial_steps(FLAT_DICT.read_text(encoding="utf-8"))
    commands = [step.line for step in steps if isinstance(step, Command)]
    order = [
        "metric-catalog init",
        "metric-catalog generate",
        "python train.py",
        "metric-catalog live-check runs/train/wandb runs/eval/wandb"
        " --fail-on undeclared,missing,out_of_range",
        "metric-catalog infer broken/*/wandb/latest-run",
        "sphinx-build -W -b html docs docs/_build/html",
        "pre-commit run --all-files",
    ]
    where = [commands.index(line) for line in order]
    assert where == sorted(where)
    failing = [line for line in commands if line.endswith('|| echo "exit $?"')]
    assert failing
    assert failing[0].startswith("metric-catalog live-check broken/train/wandb")
    files = [step.path for step in steps if isinstance(step, SavedFile)]
    assert files == [
        "myrl/telemetry/catalog/train.yaml",
        "train.py",
        "docs/conf.py",
        "docs/index.md",
        ".pre-commit-config.yaml",
    ]
    index = next(s for s in steps if isinstance(s, SavedFile) and s.path == "docs/index.md")
    assert "```{toctree}" in index.text  # a longer fence keeps the inner one in the file


@pytest.mark.parametrize(
    ("line", "printed", "shown"),
    [
        ("a b", "a b", True),
        ("a b", "a bc", False),
        ("run/…: error", "run/offline-run-1/run-1.wandb:3:1: error", True),
        ("run/…: error", "other/x: error", False),
        ("… (x)", "anything (x)", True),
        ("a.b", "axb", False),  # only the ellipsis is a wildcard
    ],
)
def test_a_shown_line_matches_whole_with_an_ellipsis_for_any_text(
    line: str, printed: str, shown: bool
) -> None:
    assert _shown(line)(printed) is shown


_TEXT = st.text(st.characters(blacklist_characters=ELIDED, blacklist_categories=["Cs"]))


@seed(40)
@settings(max_examples=100)
@given(parts=st.lists(_TEXT, min_size=1, max_size=4), fillers=st.lists(_TEXT, max_size=4))
def test_an_elided_line_matches_every_filling_of_its_gaps(
    parts: list[str], fillers: list[str]
) -> None:
    """Whatever text stands in each ``…``, the printed line is the shown one."""
    gaps = len(parts) - 1
    filled = (fillers + [""] * gaps)[:gaps]
    printed = parts[0] + "".join(fill + part for fill, part in zip(filled, parts[1:], strict=True))
    assert _shown(ELIDED.join(parts))(printed)


def _require_wandb() -> None:
    if importlib.util.find_spec("wandb") is None:
        reason = "wandb is not installed (the dev extra installs it): the W&B tutorial needs it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Path]:
    """:func:`replay` of a page, once a module (the site test reuses the W&B page's)."""
    done: dict[Path, Path] = {}

    def run(page: Path) -> Path:
        if page not in done:
            if page == FLAT_DICT:
                _require_wandb()
            done[page] = replay(page, tmp_path_factory.mktemp(page.stem))
        return done[page]

    return run


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(TUTORIAL, id="first-catalog"),
        pytest.param(FLAT_DICT, id="flat-dict-wandb", marks=pytest.mark.integration),
    ],
)
def test_every_command_of_the_tutorial_runs_as_written_and_prints_what_it_shows(
    page: Path, replayed: Callable[[Path], Path]
) -> None:
    """Replays a tutorial in an empty folder: exit codes and shown output lines hold."""
    assert replayed(page).is_dir()


def _quick_start() -> list[tuple[str, str]]:
    """``(language, text)`` of each code block of the README's quick start, in order."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```(\w+)\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)


@pytest.mark.integration
def test_the_readme_quick_start_runs_as_written_in_a_fresh_project(tmp_path: Path) -> None:
    """The quick start's commands and W&B snippet, in a folder named as the README says.

    W&B runs offline (``WANDB_MODE``), as a reader without an account would run it.
    """
    _require_wandb()
    blocks = _quick_start()
    assert [language for language, _ in blocks] == ["sh", "python", "sh"]
    env = {**_environment(tmp_path), "WANDB_MODE": "offline"}
    cwd = tmp_path / "myrl"  # the folder the README's snippet imports from
    cwd.mkdir()
    for language, text in blocks:
        if language == "python":
            (cwd / "quick_start.py").write_text(text, encoding="utf-8")
            lines = ["python quick_start.py"]
        else:
            lines = [line for line in text.splitlines() if line.strip()]
        for line in lines:
            _run(Command(line, ()), cwd, env)


@pytest.mark.integration
def test_the_flat_dict_tutorials_site_shows_each_series_cadence_in_chromium(
    replayed: Callable[[Path], Path], browser: Any
) -> None:
    """The site the W&B tutorial builds, served on loopback, shows its owner page."""
    html = replayed(FLAT_DICT) / "docs" / "_build" / "html"
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        browser.set_window_size(1280, 900)
        _open(browser, f"http://127.0.0.1:{server.server_address[1]}/metrics/train.html")
        text: str = browser.execute_script("return document.body.innerText")
        overflow: int = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        browser.save_screenshot(str(ARTIFACTS / "tutorial-flat-dict-wandb-owner-page.png"))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    for shown in ("rl.train.loss", "rl.eval.loss", "train/clip_frac", "eval/accuracy"):
        assert shown in text
    assert text.count("every 5 steps") == 2  # eval's loss and accuracy
    assert overflow <= 0
