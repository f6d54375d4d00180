"""CHANGELOG.md keeps the Keep a Changelog form: versions, change groups, a line per change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHANGELOG = REPO / "CHANGELOG.md"
GROUPS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
"""The change groups Keep a Changelog 1.1.0 names."""
VERSION = re.compile(r"## \[(Unreleased|\d+\.\d+\.\d+)\](?: - \d{4}-\d{2}-\d{2})?")


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading, lines) of each ``##`` section, in order."""
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line, []))
        elif sections:
            sections[-1][1].append(line)
    return sections


def test_unreleased_comes_first_and_every_section_is_a_version() -> None:
    sections = _sections(CHANGELOG.read_text(encoding="utf-8"))
    assert sections[0][0] == "## [Unreleased]"
    for heading, _ in sections:
        assert VERSION.fullmatch(heading), f"{heading!r} is not '## [X.Y.Z] - YYYY-MM-DD'"


@pytest.mark.parametrize(
    "heading", [h for h, _ in _sections(CHANGELOG.read_text(encoding="utf-8"))]
)
def test_each_change_is_one_line_under_a_change_group(heading: str) -> None:
    lines = dict(_sections(CHANGELOG.read_text(encoding="utf-8")))[heading]
    group = None
    for number, line in enumerate(lines, 1):
        if line.startswith("### "):
            group = line[4:]
            assert group in GROUPS, f"{heading}: {line!r} is not one of {GROUPS}"
        elif line.startswith("- "):
            assert group is not None, f"{heading}, line {number}: a change outside a group"
        else:
            # A change wrapped onto a second line reads as two; prose may sit above the groups.
            assert not line.startswith(" "), (
                f"{heading}, line {number}: {line!r} continues a change"
            )
