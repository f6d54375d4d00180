"""Result tables, targets and ``bench/RESULTS.md``.

Every benchmark returns a :class:`Section`: a Markdown table of medians and
ratios, notes, the targets it checks and, in full runs, the profile that
explains the numbers. :func:`render_results` turns a run into the Markdown
page, headed by a description of the machine.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Final

from bench.config import redact_paths
from bench.measure import REPO

__all__ = [
    "Section",
    "Target",
    "machine_description",
    "merge_results",
    "render_results",
    "render_section",
    "render_table",
]

_PACKAGES: Final[tuple[str, ...]] = (
    "PyYAML",
    "Jinja2",
    "jsonschema",
    "opentelemetry-api",
    "opentelemetry-sdk",
    "numpy",
)


@dataclass(frozen=True, slots=True)
class Target:
    """One target (issues 8 and 15): what is required, what was measured, and whether it holds.

    ``met`` is ``None`` when the run could not tell (smoke mode, or a missing
    baseline such as glean_parser offline).
    """

    name: str
    goal: str
    measured: str
    met: bool | None
    why: str = ""


@dataclass(slots=True)
class Section:
    """One benchmark's result: a table plus notes, targets and an optional profile."""

    key: str
    title: str
    intro: str
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    profiles: list[tuple[str, str]] = field(default_factory=list)
    """(caption, preformatted text) pairs."""
    extra_tables: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)
    """(caption, headers, rows) tables shown after the main one."""
    failed: str | None = None
    """Traceback or error text when the benchmark could not run."""


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out.extend("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows)
    return "\n".join(out)


def _status(target: Target) -> str:
    if target.met is None:
        return "not measured"
    return "**met**" if target.met else "**NOT met**"


def render_section(section: Section, *, profiles: bool = True) -> str:
    """One section as Markdown (also what the console shows)."""
    parts = [f"## {section.title}", "", section.intro, ""]
    if section.failed is not None:
        parts += ["**Did not run:**", "", "```", section.failed.rstrip(), "```", ""]
    if section.rows:
        parts += [render_table(section.headers, section.rows), ""]
    for caption, headers, rows in section.extra_tables:
        parts += [caption, "", render_table(headers, rows), ""]
    parts += [f"- {note}" for note in section.notes]
    if section.notes:
        parts.append("")
    if section.targets:
        parts += [
            render_table(
                ["target", "goal", "measured", "status"],
                [[t.name, t.goal, t.measured, _status(t)] for t in section.targets],
            ),
            "",
        ]
    if profiles:
        for caption, text in section.profiles:
            parts += [
                "<details>",
                f"<summary>{caption}</summary>",
                "",
                "```",
                text.rstrip(),
                "```",
                "",
                "</details>",
                "",
            ]
    return "\n".join(parts)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError):
        pass
    return "unknown"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git_head() -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "log", "-1", "--format=%h %s"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head


def _libyaml() -> str:
    try:
        import yaml

        return "yes" if getattr(yaml, "__with_libyaml__", False) else "no"
    except ImportError:
        return "PyYAML missing"


def machine_description(glean_version: str | None, load_before: str, load_after: str) -> list[str]:
    """Bullet lines describing the machine, software and run."""
    cores = os.cpu_count() or 0
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = cores
    versions = ", ".join(f"{d} {_version(d)}" for d in _PACKAGES)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"Date: {now}; checkout: `{_git_head()}`",
        f"CPU: {_cpu_model()}, {cores} logical cores ({usable} usable), {_mem_total()} RAM;"
        f" {platform.system()} {platform.release()}",
        f"Python {platform.python_version()} ({redact_paths(sys.executable)}); "
        f"libyaml in PyYAML: {_libyaml()}",
        f"Packages: {versions}",
        f"glean-parser: {glean_version or 'not available'} (its own venv, bench/out/venv-glean)",
        f"Load average (1/5/15 min) before / after: {load_before} / {load_after}"
        " (the machine is shared; compare ratios, which are measured interleaved in one run)",
    ]


def render_results(
    sections: Sequence[Section],
    machine: Sequence[str],
    analysis: str | None,
    command: str,
) -> str:
    """The whole ``bench/RESULTS.md`` page."""
    targets = [t for s in sections for t in s.targets]
    parts = [
        "# Benchmark results",
        "",
        f"Written by `{command}` (do not edit by hand; the analysis below comes from"
        " `bench/ANALYSIS.md`). Every figure is a median over the runs shown; every ratio"
        " compares two commands measured interleaved in the same run.",
        "",
        *(f"- {line}" for line in machine),
        "",
        "## Targets (issues 8 and 15)",
        "",
        render_table(
            ["target", "goal", "measured", "status", "why / lever"],
            [[t.name, t.goal, t.measured, _status(t), t.why] for t in targets],
        ),
        "",
    ]
    parts += [render_section(s) for s in sections]
    if analysis:
        parts += ["", analysis.strip(), ""]
    # No absolute path of this machine in a committed file (profiles, header, notes).
    return redact_paths("\n".join(parts).rstrip() + "\n")


def merge_results(existing: str, sections: Sequence[Section], machine: Sequence[str]) -> str:
    """``existing`` RESULTS.md with ``sections`` (and their target rows) replaced or added.

    For a partial run (``--only NAME --merge``): every other section and target keeps
    the figures of the run that wrote it; the merged sections say when and where
    they ran, since the page header describes that other run.
    """
    text = existing
    for section in sections:
        when = "; ".join(line for line in machine if line.startswith(("Date", "Load")))
        section.notes.append(f"Measured in a partial run (`--only {section.key}`): {when}.")
        block = render_section(section).rstrip() + "\n\n"
        heading = f"## {section.title}\n"
        start = text.find(heading)
        if start >= 0:
            end = text.find("\n## ", start + len(heading))
            text = text[:start] + block + (text[end + 1 :] if end >= 0 else "")
        else:
            analysis = text.find("\n## Analysis")
            at = analysis + 1 if analysis >= 0 else len(text)
            text = text[:at] + block + text[at:]
        names = {t.name for t in section.targets}
        lines = text.split("\n")
        head = next(i for i, line in enumerate(lines) if line.startswith("## Targets"))
        first = head + 1
        while not lines[first].startswith("|"):
            first += 1
        last = first
        while last < len(lines) and lines[last].startswith("|"):
            last += 1
        kept = [line for line in lines[first + 2 : last] if line.split("|")[1].strip() not in names]
        new = render_table(
            ["target", "goal", "measured", "status", "why / lever"],
            [[t.name, t.goal, t.measured, _status(t), t.why] for t in section.targets],
        ).split("\n")[2:]
        lines[first + 2 : last] = kept + new
        text = "\n".join(lines)
    return redact_paths(text.rstrip() + "\n")
