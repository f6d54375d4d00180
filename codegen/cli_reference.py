"""The CLI reference page, rendered from the real argument parsers.

``docs/reference/cli.md`` lists every command of :mod:`codegen.cli` with its
usage, each visible argument with its help, and the older spellings each still
accepts (hidden from ``--help``). It is rendered from the parsers themselves
(``python -m codegen.cli_reference --write``, run by ``make generate``;
``--check`` fails when the page is stale), so a flag cannot exist without its
entry, nor an entry outlive its flag.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from .cli import DESCRIPTION, build_parsers
from .config import CONFIG_KEYS
from .safe_fs import read_regular

__all__ = ["PROG", "REFERENCE_PAGE", "hidden_flags", "main", "reference_page", "visible_flags"]

REFERENCE_PAGE: Final = Path("docs") / "reference" / "cli.md"
"""Where this repository's docs site keeps the page (root-relative)."""

PROG: Final = "metric-catalog"
"""The command name the page shows (``python -m codegen`` runs the same parser)."""

_WIDTH: Final = "100"
"""Columns the usage lines are wrapped at, whatever the terminal that renders the page."""


@contextmanager
def _columns(width: str) -> Iterator[None]:
    """argparse wraps at ``$COLUMNS``: fix it so the page is the same on every machine."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def _parsers() -> dict[str, argparse.ArgumentParser]:
    parsers = build_parsers()[1]
    for name, parser in parsers.items():
        parser.prog = f"{PROG} {name}"
    return parsers


def visible_flags(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string ``--help`` shows for ``parser`` (``-h`` and ``--help`` too)."""
    return [
        flag
        for action in parser._actions
        if action.help != argparse.SUPPRESS
        for flag in action.option_strings
    ]


def hidden_flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option ``parser`` accepts but hides, with what to write instead (Markdown)."""
    shown = {a.dest: a for a in parser._actions if a.help != argparse.SUPPRESS and a.option_strings}
    keys = {key.attr: key.name for key in CONFIG_KEYS}
    hidden: dict[str, str] = {}
    for action in parser._actions:
        if action.help != argparse.SUPPRESS:
            continue
        for flag in action.option_strings:
            if action.dest in shown:
                hidden[flag] = f"`{shown[action.dest].option_strings[-1]}`"
            elif action.dest in keys:
                hidden[flag] = f"`--config {keys[action.dest]}=VALUE`"
    return hidden


def _md(text: str) -> str:
    """Help text in a Markdown table cell: pipes, brackets, stars and underscores kept literal."""
    for char in ("\\", "|", "<", "*", "_", "`"):
        text = text.replace(char, f"\\{char}")
    return " ".join(text.split())


def _invocation(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    if not action.option_strings:
        return formatter._metavar_formatter(action, action.dest)(1)[0]
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = formatter._format_args(action, action.dest.upper())
    return ", ".join(f"{flag} {metavar}" for flag in action.option_strings)


def _command(name: str, parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    lines = [f"## `{name}`", "", _md(parser.description or ""), ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    lines += ["| argument | what it does |", "|---|---|"]
    for action in parser._actions:
        if action.help == argparse.SUPPRESS:
            continue
        invocation = _invocation(action, formatter).replace("|", "\\|")
        lines.append(f"| `{invocation}` | {_md(formatter._expand_help(action))} |")
    # The per-key flags every command keeps are listed once, at the top of the page.
    hidden = {
        f: instead for f, instead in hidden_flags(parser).items() if "--config" not in instead
    }
    if hidden:
        shown = ", ".join(f"`{flag}` ({instead})" for flag, instead in hidden.items())
        lines += ["", f"Hidden, still accepted: {shown}."]
    return [*lines, ""]


def reference_page() -> str:
    """The "CLI reference" page (MyST Markdown): every command, its usage and arguments."""
    keys = ", ".join(f"`{key.name}`" for key in CONFIG_KEYS)
    per_key = ", ".join(
        f"`--{key.name}`" for key in CONFIG_KEYS if key.flag and key.kind != "globs"
    )
    lines = [
        "<!-- Generated from the argument parsers by `python -m codegen.cli_reference --write`"
        " (make generate). Do not edit. -->",
        "",
        "# CLI reference",
        "",
        _md(DESCRIPTION),
        "",
        f"`{PROG} COMMAND --help` prints a command's options; `python -m codegen` in a clone",
        "runs the same commands. Exit status: 0 clean, 1 findings, 2 bad usage or input.",
        "",
        "Every command reads `[tool.metric-catalog]` from the nearest `pyproject.toml` (or",
        "`--root`); `--config KEY=VALUE` (repeatable) overrides one of its keys for a run:",
        f"{keys}.",
        "",
        "Older spellings still work where they did, hidden from `--help`: on every command",
        f"the per-key flags {per_key} (each is `--config KEY=VALUE`); a command's own",
        "older spellings are listed in its section with what to write instead.",
        "",
    ]
    with _columns(_WIDTH):
        for name, parser in _parsers().items():
            lines += _command(name, parser)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m codegen.cli_reference [--write | --check] [PATH]``: print, write or check."""
    parser = argparse.ArgumentParser(prog="python -m codegen.cli_reference", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the page to PATH")
    mode.add_argument("--check", action="store_true", help="exit 1 when PATH is not current")
    parser.add_argument("path", nargs="?", type=Path, default=REFERENCE_PAGE)
    args = parser.parse_args(argv)
    page = reference_page()
    path: Path = args.path
    current = path.is_file() and read_regular(path).decode("utf-8") == page
    if args.write:
        if not current:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page, encoding="utf-8")
        return 0
    if args.check:
        if not current:
            print(
                f"{path} is stale; run `python -m codegen.cli_reference --write`", file=sys.stderr
            )
        return 0 if current else 1
    sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
