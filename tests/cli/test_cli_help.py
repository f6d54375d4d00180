"""A CLI that fits in a head: each command's ``--help`` is short and shows only its options.

The numbers are read from the rendered help (COLUMNS=100), as a newcomer sees it:
``live-check --help`` at most 60 lines, every other command's at most 40, and all
of them together (the top-level help included) at most 111 flag slots (an option
line such as ``  --root DIR``, ``-h, --help`` counted).
"""

from __future__ import annotations

import re

import pytest

from codegen.cli import COMMANDS, DESCRIPTION, build_parsers

MAX_LINES = {"live-check": 60}
"""Help lines a command may take; the others take at most :data:`DEFAULT_MAX_LINES`."""
DEFAULT_MAX_LINES = 40
MAX_FLAG_SLOTS = 111
"""100, plus the 11 slots ``export`` and ``import`` (Weaver interop, issue #39) take: 6 of
them the -h, --root and --config every command shows."""
_SLOT = re.compile(r"^  -")


@pytest.fixture
def helps(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("COLUMNS", "100")
    top, commands = build_parsers()
    return {"": top.format_help()} | {name: p.format_help() for name, p in commands.items()}


def _slots(text: str) -> int:
    return sum(1 for line in text.splitlines() if _SLOT.match(line))


@pytest.mark.parametrize("command", COMMANDS)
def test_each_commands_help_fits_its_line_budget(helps: dict[str, str], command: str) -> None:
    lines = helps[command].splitlines()
    assert len(lines) <= MAX_LINES.get(command, DEFAULT_MAX_LINES), helps[command]


def test_all_commands_help_together_shows_at_most_111_flag_slots(helps: dict[str, str]) -> None:
    slots = {name: _slots(text) for name, text in helps.items()}
    assert sum(slots.values()) <= MAX_FLAG_SLOTS, slots
    # Every command shows -h and the project's --root and --config, and nothing twice.
    for name in COMMANDS:
        shown = [
            line.split()[0].rstrip(",") for line in helps[name].splitlines() if _SLOT.match(line)
        ]
        assert len(shown) == len(set(shown))
        assert {"-h", "--root", "--config"} <= set(shown)


@pytest.mark.parametrize(
    "flag",
    [
        "--package",
        "--package-dir",
        "--docs-dir",
        "--dashboards-dir",
        "--title",
        "--cache-dir",
        "--templates-dir",
        "--schema-file",
        "--otlp ",
        "--no-warnings",
    ],
)
def test_no_command_shows_a_hidden_old_spelling(helps: dict[str, str], flag: str) -> None:
    assert not [name for name, text in helps.items() if flag in text]


def test_the_top_level_help_says_what_the_tool_does_today(helps: dict[str, str]) -> None:
    assert "Validate, lint and render" not in helps[""]
    for word in ("generate", "runs", "live jobs", "source code"):
        assert word in DESCRIPTION
    assert "JSONL metrics log" not in helps["live-check"]
    assert "OTLP" in helps["live-check"]
    assert "TensorBoard" in helps["live-check"]
