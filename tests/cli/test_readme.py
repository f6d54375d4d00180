"""The README stays a short front door: a word budget, every command named, live links.

The word count is ``len(text.split())`` over the whole file, prose and code blocks alike
(a Markdown link counts as the words of its text and target), so the budget cannot be
dodged by moving text into a code block.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from codegen.cli import COMMANDS

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
WORD_BUDGET = 1200
"""Most words the README may have (issue 27: 3,706 before the docs split)."""


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def test_the_readme_fits_its_word_budget() -> None:
    words = len(_readme().split())
    assert words <= WORD_BUDGET, f"README.md has {words} words; the budget is {WORD_BUDGET}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_of_the_cli_is_listed_with_a_link_to_its_reference(command: str) -> None:
    """Each command has one line in the commands list, linking to its CLI reference section."""
    entry = f"- [`{command}`](docs/reference/cli.md#{command}): "
    lines = [line for line in _readme().splitlines() if line.startswith(entry)]
    assert len(lines) == 1, f"README.md lists `{command}` on {len(lines)} lines, not one"
    reference = (REPO / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert f"\n## `{command}`\n" in reference, f"docs/reference/cli.md has no `{command}` section"


def test_every_relative_link_of_the_readme_names_a_file_that_exists() -> None:
    targets = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", _readme())
    assert targets
    missing = [target for target in targets if not (REPO / target).exists()]
    assert missing == []


def test_the_install_lines_work_without_pypi() -> None:
    """Every ``pip install`` of the package names a clone, a wheel or a git URL, with otel."""
    installs = re.findall(r"^pip install (.+?)(?:\s+#.*)?$", _readme(), re.MULTILINE)
    assert len(installs) >= 3, installs
    for line in installs:
        assert "otel" in line, line
        assert line.startswith(("-e '.[", "'dist/", "'metric-catalog[codegen,otel] @ git+")), line


def test_the_readme_does_not_call_the_unexported_tee_a_no_op() -> None:
    """With no exporter the first tee still freezes the registry (a late import raises)."""
    text = " ".join(_readme().split())
    assert "no-op" not in text
    assert "the first tee still freezes the registry" in text


def test_the_readme_says_the_two_commands_set_up_a_fresh_machine() -> None:
    text = " ".join(_readme().split())
    assert "make generate" in text
    assert "make test" in text
    assert "On a fresh machine these two commands do all the set-up" in text


@pytest.mark.parametrize("page", ["README.md", "docs/guide/adopt.md"])
def test_no_page_pins_a_release_tag_that_does_not_exist(page: str) -> None:
    """A ``vX.Y.Z`` a user copies into ``rev:`` or ``@`` must be a tag of this repository."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: its tags cannot be listed")
    listed = subprocess.run(
        ["git", "-C", str(REPO), "tag", "--list", "v*"],
        capture_output=True,
        text=True,
        check=True,
    )
    tags = set(listed.stdout.split())
    text = (REPO / page).read_text(encoding="utf-8")
    pinned = {f"v{v}" for v in re.findall(r"(?:@|rev: )v(\d+\.\d+\.\d+)", text)}
    assert pinned <= tags, f"{page} pins {sorted(pinned - tags)}, which no tag names"


def test_the_readme_states_the_python_the_package_requires() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    required = re.search(r'^requires-python = ">=(\d+\.\d+)"', pyproject, re.MULTILINE)
    assert required is not None
    assert f"Python {required.group(1)}" in _readme()
