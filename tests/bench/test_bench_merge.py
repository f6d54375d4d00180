"""bench: a partial run merged into RESULTS.md, and the docs benchmark's site weight."""

from __future__ import annotations

from pathlib import Path

from bench.docs_bench import site_bytes
from bench.report import Section, Target, merge_results, render_results

MACHINE = ["Date: 2026-12-03 09:00 UTC; checkout: `abc`", "Load average: 1 / 2"]


def _section(key: str, title: str, figure: str, target: str, met: bool) -> Section:
    section = Section(key=key, title=title, intro=f"intro {key}")
    section.rows = [[figure]]
    section.headers = ["figure"]
    section.targets = [Target(target, "<= 1x", figure, met, "why")]
    return section


def test_merge_replaces_only_the_named_section_and_its_targets() -> None:
    """Other sections and target rows keep their figures; the merged ones are replaced."""
    old = render_results(
        [
            _section("gen", "1. Generate", "10 ms", "generate target", True),
            _section("docs", "7. Docs", "99 s", "docs target", False),
        ],
        ["Date: before"],
        "## Analysis: why\n\ntext",
        "make bench",
    )
    merged = merge_results(old, [_section("docs", "7. Docs", "2 s", "docs target", True)], MACHINE)
    assert "| 10 ms |" in merged
    assert "| 2 s |" in merged
    assert "99 s" not in merged
    summary = merged.split("## Targets")[1].split("\n\n")[1]
    assert summary.count("| docs target |") == 1
    assert "| docs target | <= 1x | 2 s | **met** | why |" in summary
    assert merged.index("## 7. Docs") < merged.index("## Analysis")
    assert "partial run (`--only docs`): Date: 2026-12-03 09:00 UTC" in merged


def test_merge_adds_a_new_section_before_the_analysis() -> None:
    """A section the page does not have yet goes before the analysis, its targets appended."""
    old = render_results(
        [_section("gen", "1. Generate", "10 ms", "generate target", True)],
        ["Date: before"],
        "## Analysis: why\n\ntext",
        "make bench",
    )
    merged = merge_results(old, [_section("docs", "7. Docs", "2 s", "docs target", False)], MACHINE)
    assert merged.index("## 1. Generate") < merged.index("## 7. Docs") < merged.index("## Analysis")
    table = merged.split("## Targets")[1].split("\n\n")[1]
    assert [line.split("|")[1].strip() for line in table.splitlines()[2:]] == [
        "generate target",
        "docs target",
    ]


def test_site_weight_leaves_out_sphinx_build_state(tmp_path: Path) -> None:
    """.doctrees and .buildinfo are not part of the site; everything else is."""
    (tmp_path / ".doctrees").mkdir()
    (tmp_path / ".doctrees" / "env.pickle").write_bytes(b"x" * 100)
    (tmp_path / ".buildinfo").write_bytes(b"y" * 10)
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "a.html").write_bytes(b"z" * 7)
    (tmp_path / "index.html").write_bytes(b"w" * 3)
    assert site_bytes(tmp_path) == 10
