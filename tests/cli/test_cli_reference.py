"""The CLI reference (docs/reference/cli.md) is rendered from the real parsers and kept current.

A flag that ``--help`` shows and the page does not name fails here, and so does
a page older than the parsers (``make generate`` rewrites it).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from codegen.cli import COMMANDS, build_parsers
from codegen.cli_reference import REFERENCE_PAGE, hidden_flags, main, reference_page, visible_flags

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / REFERENCE_PAGE
PARSERS = build_parsers()[1]


def _section(page: str, command: str) -> str:
    sections = re.split(r"^## ", page, flags=re.MULTILINE)
    found = [s for s in sections if s.startswith(f"`{command}`")]
    assert len(found) == 1, f"no section for {command}"
    return found[0]


def test_the_committed_page_is_current() -> None:
    assert PAGE.read_text(encoding="utf-8") == reference_page(), (
        "run `python -m codegen.cli_reference --write` (make generate)"
    )


@pytest.mark.parametrize(
    ("command", "flag"),
    [(command, flag) for command in COMMANDS for flag in visible_flags(PARSERS[command])],
)
def test_every_visible_flag_of_every_command_is_in_its_section(command: str, flag: str) -> None:
    section = _section(PAGE.read_text(encoding="utf-8"), command)
    assert re.search(rf"\| `(?:[^`]*, )?{re.escape(flag)}[ ,`]", section), flag


@pytest.mark.parametrize("command", COMMANDS)
def test_every_positional_and_its_help_is_in_the_section(command: str) -> None:
    section = _section(reference_page(), command)
    for action in PARSERS[command]._actions:
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
            assert f"| `{action.metavar or action.dest}` |" in section


@pytest.mark.parametrize(
    ("command", "flag", "instead"),
    [
        ("emit", "--otlp", "--otlp-endpoint"),
        ("live-check", "--otlp", "--otlp-listen"),
        ("check", "--no-warnings", "--hide-warnings"),
        ("diff", "--no-warnings", "--hide-warnings"),
    ],
)
def test_a_commands_hidden_old_spelling_is_listed_with_its_new_name(
    command: str, flag: str, instead: str
) -> None:
    assert hidden_flags(PARSERS[command])[flag] == f"`{instead}`"
    assert f"`{flag}` (`{instead}`)" in _section(reference_page(), command)


def test_the_per_key_flags_are_listed_once_as_config_spellings() -> None:
    page = reference_page()
    for flag in ("--package", "--docs-dir", "--templates-dir"):
        assert hidden_flags(PARSERS["generate"])[flag].startswith("`--config ")
        assert page.count(f"`{flag}`") == 1


def test_check_fails_on_a_stale_page_and_write_fixes_it(tmp_path: Path) -> None:
    page = tmp_path / "cli.md"
    assert main(["--check", str(page)]) == 1
    assert main(["--write", str(page)]) == 0
    assert main(["--check", str(page)]) == 0
    page.write_text(page.read_text(encoding="utf-8").replace("--otlp-listen", "--otlp-lisen"))
    assert main(["--check", str(page)]) == 1


def test_the_page_is_in_the_docs_toctree() -> None:
    assert "reference/cli" in (REPO / "docs" / "index.md").read_text(encoding="utf-8")
