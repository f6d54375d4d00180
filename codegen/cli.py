"""``metric-catalog <command>`` (``python -m codegen`` in this repo): one table of commands.

Every module under :mod:`codegen.commands` exposes ``HELP`` (one line),
``configure(parser)`` to add its arguments, and ``run(args) -> int`` returning
the exit code (0 clean, 1 findings, 2 usage). Modules are imported only when
their command runs, so ``--help`` stays fast. A bad ``[tool.metric-catalog]``
table exits 2 with the file, the key and the fix; so does a catalog that
matches no file (:class:`~codegen.config.NoCatalogError`), in every command.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Final

from .config import ConfigError

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
    "init": ".commands.init",
    "emit": ".commands.emit",
    "scan": ".commands.scan",
    "infer": ".commands.infer",
}
"""Command name -> module implementing it."""

_EXTRA_MODULES: Final = frozenset({"yaml", "jinja2", "jsonschema", "markupsafe", "tomlkit"})
"""What the ``codegen`` extra installs; a command importing one without it says so."""


def _prog() -> str:
    """``python -m codegen`` from this repo's source tree, else the installed command's name."""
    return "python -m codegen" if __package__ == "codegen" else "metric-catalog"


def _version() -> str:
    """The installed distribution's version (``pip install -e`` included)."""
    try:
        return importlib.metadata.version("metric-catalog")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed; pip install -e . in the repository)"


def _summary(module_name: str) -> str | None:
    """A command module's ``HELP`` line, read from its source without importing it.

    Importing every command would load YAML, Jinja2 and jsonschema just to
    print ``--help``; each module's one ``HELP = "..."`` literal is all it needs.
    """
    try:
        spec = importlib.util.find_spec(module_name, __package__)
        if spec is None or spec.origin is None:
            return None
        with open(spec.origin, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (ImportError, OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        value = getattr(node, "value", None)
        if (
            isinstance(target, ast.Name)
            and target.id == "HELP"
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
        ):
            return value.value
    return None


def _build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    prog = _prog()
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Validate, lint and render a metric catalog; configured by [tool.metric-catalog] "
            "in the nearest pyproject.toml."
        ),
    )
    parser.add_argument("-V", "--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, module_name in COMMANDS.items():
        if wanted == name:
            module = importlib.import_module(module_name, __package__)
            command = sub.add_parser(name, help=module.HELP, description=module.HELP)
            module.configure(command)
            command.set_defaults(_run=module.run)
        else:
            # Only the chosen command's module is imported; without one (--help, a
            # typo) the others list their HELP line, read without importing them.
            summary = _summary(module_name) if wanted is None or wanted not in COMMANDS else None
            sub.add_parser(name, help=summary or f"see '{prog} {name} --help'")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the command, return its exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = _build_parser(args_list)
    except ModuleNotFoundError as exc:
        if exc.name not in _EXTRA_MODULES:
            raise
        print(
            f"error: {_prog()} needs {exc.name}, from the codegen extra: "
            "pip install 'metric-catalog[codegen]'",
            file=sys.stderr,
        )
        return 2
    args = parser.parse_args(args_list)
    run = args._run
    try:
        code: int = run(args)
        sys.stdout.flush()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error of ours. Point stdout
        # at devnull so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code
