"""``python -m codegen <command>``: one table of commands, each in its own module.

Every module under :mod:`codegen.commands` exposes ``HELP`` (one line),
``configure(parser)`` to add its arguments, and ``run(args) -> int`` returning
the exit code (0 clean, 1 findings, 2 usage). Modules are imported only when
their command runs, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Final

__all__ = ["COMMANDS", "main"]

COMMANDS: Final[dict[str, str]] = {
    "validate": ".commands.validate",
    "lint": ".commands.lint",
    "generate": ".commands.generate",
    "check": ".commands.check",
    "diff": ".commands.diff",
    "live-check": ".commands.live_check",
    "resolve": ".commands.resolve",
    "dashboards": ".commands.dashboards",
}
"""Command name -> module implementing it."""


def _build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m codegen",
        description="Validate, lint and render the metric catalog (catalog/*.yaml).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, module_name in COMMANDS.items():
        if wanted == name:
            module = importlib.import_module(module_name, __package__)
            command = sub.add_parser(name, help=module.HELP, description=module.HELP)
            module.configure(command)
            command.set_defaults(_run=module.run)
        else:
            # Only the chosen command's module is imported; the rest list their names.
            sub.add_parser(name, help=f"see 'python -m codegen {name} --help'")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the command, return its exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser(args_list)
    args = parser.parse_args(args_list)
    run = args._run
    try:
        code: int = run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error of ours. Point stdout
        # at devnull so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code
