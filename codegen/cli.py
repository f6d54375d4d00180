"""``metric-catalog <command>`` (``python -m codegen`` in this repo): one table of commands.

Every module under :mod:`codegen.commands` exposes ``HELP`` (one line),
``configure(parser)`` to add its arguments, and ``run(args) -> int`` returning
the exit code (0 clean, 1 findings, 2 usage). Modules are imported only when
their command runs, so ``--help`` stays fast. A bad ``[tool.metric-catalog]``
table or ``--config`` item exits 2 with the file, the key and the fix; so does a
catalog that matches no file (:class:`~codegen.config.NoCatalogError`) and flags
that do not go together (:class:`~codegen.commands.UsageError`), in every command.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final, NoReturn

from .commands import UsageError
from .config import ConfigError
from .safe_fs import read_regular

__all__ = ["COMMANDS", "DESCRIPTION", "build_parsers", "main"]

DESCRIPTION: Final = (
    "Keep a catalog of the metrics a training stack emits: validate and lint it, generate "
    "code, docs and dashboards from it, check runs, live jobs and source code against it. "
    "Configured by [tool.metric-catalog] in the nearest pyproject.toml."
)
"""The top-level ``--help`` text."""

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
    "export": ".commands.export",
    "import": ".commands.import_",
}
"""Command name -> module implementing it."""

_EXTRA_MODULES: Final = frozenset({"yaml", "jinja2", "jsonschema", "markupsafe", "tomlkit"})
"""What the ``codegen`` extra installs; a command importing one without it says so."""


def _prog() -> str:
    """``python -m codegen`` from this repo's source tree, else the installed command's name."""
    return "python -m codegen" if __package__ == "codegen" else "metric-catalog"


def _version() -> str:
    """The installed distribution's version (``pip install -e`` included)."""
    import importlib.metadata  # noqa: PLC0415 - only --version reads it (~25 ms a run)

    try:
        return importlib.metadata.version("metric-catalog")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed; pip install -e . in the repository)"


class _VersionAction(argparse.Action):
    """``--version``: prints ``prog version`` and exits; the version is looked up only then."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings,
            dest,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show program's version number and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> NoReturn:
        del namespace, values, option_string
        sys.stdout.write(f"{parser.prog} {_version()}\n")
        parser.exit()


def _summary(module_name: str) -> str | None:
    """A command module's ``HELP`` line, read from its source without importing it.

    Importing every command would load YAML, Jinja2 and jsonschema just to
    print ``--help``; each module's one ``HELP = "..."`` literal is all it needs.
    """
    try:
        spec = importlib.util.find_spec(module_name, __package__)
        if spec is None or spec.origin is None:
            return None
        tree = ast.parse(read_regular(Path(spec.origin)).decode("utf-8"))
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


class _Parser(argparse.ArgumentParser):
    """An argument parser whose "required" errors say when ``--catalog`` took the paths."""

    argv: Sequence[str] = ()

    def error(self, message: str) -> NoReturn:
        """Exit 2 with ``message``; a missing positional after ``--catalog`` says why."""
        catalog = any(arg.startswith("--catalog") for arg in self.argv)
        if catalog and "required" in message:
            message += (
                " (--catalog takes every path after it: give the other paths before "
                "--catalog, or write --catalog=PATH once per catalog path)"
            )
        super().error(message)


def _build_parser(argv: Sequence[str], *, every: bool = False) -> argparse.ArgumentParser:
    """The parser; only the command ``argv`` names is configured (all when ``every``)."""
    prog = _prog()
    parser = _Parser(prog=prog, description=DESCRIPTION)
    parser.add_argument("-V", "--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, module_name in COMMANDS.items():
        if wanted == name or every:
            module = importlib.import_module(module_name, __package__)
            command = sub.add_parser(name, help=module.HELP, description=module.HELP)
            command.argv = argv
            module.configure(command)
            command.set_defaults(_run=module.run)
        else:
            # Only the chosen command's module is imported; without one (--help, a
            # typo) the others list their HELP line, read without importing them.
            summary = _summary(module_name) if wanted is None or wanted not in COMMANDS else None
            sub.add_parser(name, help=summary or f"see '{prog} {name} --help'")
    return parser


def build_parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and every command's, all configured (for the CLI reference).

    Imports every command module (and so YAML, Jinja2 and jsonschema), which
    :func:`main` avoids for one command's run.
    """
    parser = _build_parser((), every=True)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, dict(sub.choices)


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
    except (ConfigError, UsageError) as exc:
        # UsageError: flags that do not go together; ConfigError: a bad table or override.
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error of ours. Point stdout
        # at devnull so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code
