"""One module per ``metric-catalog`` command; see :mod:`codegen.cli`.

This package holds what several commands share: the ``--root`` and
configuration arguments (overriding ``[tool.metric-catalog]`` in
``pyproject.toml``, see :mod:`codegen.config`), ``--format``, and loading the
catalog with its diagnostics printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..config import (
    CONFIG_KEYS,
    CONFIG_OPTION,
    Config,
    ConfigError,
    apply_overrides,
    load_config,
    parse_config_option,
)

if TYPE_CHECKING:
    from ..catalog.model import Catalog
    from ..generate.plan import Planned

__all__ = [
    "ROOT_HELP",
    "UsageError",
    "add_config_arguments",
    "add_format_argument",
    "add_no_warnings_argument",
    "add_root_argument",
    "add_warnings_as_errors_argument",
    "config_from_args",
    "config_overrides",
    "load_or_report",
    "plan_or_report",
    "refuse_swallowed_paths",
]


class UsageError(ValueError):
    """Flags that do not go together, or a flag's value that cannot be used.

    Commands raise it; :func:`codegen.cli.main` prints ``error: <message>`` to
    stderr and exits 2, so each check is one line where the command reads its flags.
    """


_CONFIG_HELP: Final = (
    "override a [tool.metric-catalog] key for this run (repeatable), e.g. "
    "package-dir=src/gen; VALUE: TOML or plain text"
)


def add_config_arguments(parser: argparse.ArgumentParser, *, catalog: bool = True) -> None:
    """``--config KEY=VALUE`` (and ``--catalog PATH...`` unless ``catalog=False``).

    The older ``--<key>`` flag of each key of :data:`codegen.config.CONFIG_KEYS`
    that declares one (``--package``, ``--docs-dir``, ...) is still accepted,
    hidden from ``--help``: ``--config`` overrides any key with one option.
    ``catalog=False`` leaves out ``--catalog`` (the ``globs`` key): ``init`` writes
    the key. ``validate`` and ``lint`` take both PATHS and ``--catalog``.
    """
    group = _project_group(parser)
    if catalog:
        group.add_argument(
            "--catalog",
            type=Path,
            nargs="+",
            action="extend",
            metavar="PATH",
            help=(
                "catalog files or folders instead of the configured ones (repeatable; takes "
                "every path after it: put other paths first, or write --catalog=PATH)"
            ),
        )
    group.add_argument(
        "--config", action="append", default=None, metavar="KEY=VALUE", help=_CONFIG_HELP
    )
    for key in CONFIG_KEYS:
        if key.flag is None or key.kind == "globs":
            continue
        parser.add_argument(f"--{key.name}", metavar=key.metavar, help=argparse.SUPPRESS)


def _project_group(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The parser's "project" group (made on first use): --root, --catalog, --config."""
    for group in parser._action_groups:
        if group.title == "project":
            return group
    return parser.add_argument_group("project")


ROOT_HELP: Final = (
    "the folder of the pyproject.toml holding [tool.metric-catalog] "
    "(default: the nearest one above the cwd, else the cwd)"
)


def add_root_argument(
    parser: argparse.ArgumentParser, *, catalog: bool = True, help: str = ROOT_HELP
) -> None:
    """``--root`` and :func:`add_config_arguments` (``--catalog``, ``--config``), one group."""
    _project_group(parser).add_argument("--root", type=Path, default=None, metavar="DIR", help=help)
    add_config_arguments(parser, catalog=catalog)


def config_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The keys this run overrides, by key name: the old per-key flags, then ``--config``.

    ``--config`` comes last, so it wins over a per-key flag for the same key;
    ``--catalog`` is not included (its paths are read as given, not root-relative).

    Raises:
        ConfigError: A ``--config`` item is not ``KEY=VALUE`` with a known key.
    """
    given: dict[str, object] = {
        key.name: getattr(args, key.attr)
        for key in CONFIG_KEYS
        if key.flag is not None and key.kind != "globs" and getattr(args, key.attr, None)
    }
    for item in getattr(args, "config", None) or ():
        name, value = parse_config_option(item)
        given[name] = value
    return given


_CATALOG_SUFFIXES: Final = (".yaml", ".yml")


def refuse_swallowed_paths(args: argparse.Namespace, positional: str) -> None:
    """Refuse a ``--catalog`` path that is no catalog: ``--catalog`` took a ``positional``.

    ``--catalog PATH...`` reads every path after it, so ``scan --catalog c.yaml
    src/`` would read ``src/`` as a catalog folder and scan the whole root.

    Raises:
        UsageError: A ``--catalog`` path is neither a ``.yaml`` file, a glob,
            nor a folder holding ``*.yaml`` files.
    """
    for path in getattr(args, "catalog", None) or ():
        text = str(path)
        if glob.has_magic(text) or path.suffix in _CATALOG_SUFFIXES:
            continue
        if path.is_dir() and any(path.glob("*.yaml")):
            continue
        msg = (
            f"--catalog {text}: not a catalog file (*.yaml) nor a folder holding them; "
            f"--catalog takes every path after it, so give {positional} before --catalog, "
            "or write --catalog=PATH once per catalog path"
        )
        raise UsageError(msg)


def config_from_args(args: argparse.Namespace) -> Config:
    """The configuration for this run: ``--root`` or discovery, then the overrides on top.

    The old per-key flags, then ``--config KEY=VALUE`` items, then ``--catalog``.

    Raises:
        ConfigError: The table, a flag or a ``--config`` item has a bad value
            (:mod:`codegen.cli` prints it and exits 2).
    """
    root: Path | None = getattr(args, "root", None)
    if root is not None and not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        msg = (
            f"--root {root.as_posix()} {what}; pass the folder of your project's "
            "pyproject.toml, or leave --root out to use the nearest one above the cwd"
        )
        raise ConfigError(msg)
    config = load_config(root)
    flags: dict[str, object | None] = {
        key.name: getattr(args, key.attr, None)
        for key in CONFIG_KEYS
        if key.flag is not None and key.kind != "globs"
    }
    config = apply_overrides(config, flags)
    options = dict(parse_config_option(item) for item in getattr(args, "config", None) or ())
    config = apply_overrides(config, options, where=CONFIG_OPTION)
    if "catalog" in options:
        config = dataclasses.replace(config, catalog_flag=True)
    catalog: Sequence[Path] | None = getattr(args, "catalog", None)
    if catalog:
        # Shell-expanded paths: absolute ones may lie outside the root.
        config = config.with_catalog(tuple(str(path) for path in catalog))
    return config


def add_format_argument(
    parser: argparse.ArgumentParser, help_text: str = "report format (default: text)"
) -> None:
    """``--format text|json``, text by default."""
    parser.add_argument("--format", choices=("text", "json"), default="text", help=help_text)


def add_no_warnings_argument(parser: argparse.ArgumentParser) -> None:
    """``--hide-warnings``: print the catalog's errors only (``make check`` lints first).

    ``--no-warnings``, its older spelling, is still accepted (hidden from ``--help``):
    it read as "fail on no warning", which is ``--warnings-as-errors``' business.
    """
    parser.add_argument(
        "--hide-warnings",
        dest="no_warnings",
        action="store_true",
        help="print the catalog's errors only, not its warnings (make check: lint showed them)",
    )
    parser.add_argument(
        "--no-warnings", dest="no_warnings", action="store_true", help=argparse.SUPPRESS
    )


def add_warnings_as_errors_argument(
    parser: argparse.ArgumentParser, what: str = "the catalog's warnings"
) -> None:
    """``--warnings-as-errors``: exit 1 on ``what`` too (the one spelling of "warnings fail")."""
    parser.add_argument("--warnings-as-errors", action="store_true", help=f"exit 1 on {what} too")


def load_or_report(config: Config, *, warnings: bool = True) -> Catalog | None:
    """Load and validate the configured catalog; print its diagnostics, None when it has errors.

    Warnings go to stderr too (unless ``warnings`` is false), but do not stop
    the command.

    Raises:
        NoCatalogError: The configured catalog matches no file (the command
            line exits 2 with where it looked and the fix).
    """
    # Imported here so ``--help`` (and generate's no-op path) do not pay for YAML and jsonschema.
    from ..catalog.diagnostics import Severity, format_diagnostics  # noqa: PLC0415
    from ..catalog.pipeline import load_and_check  # noqa: PLC0415

    result = load_and_check(config.catalog_files(), root=config.root, lint=False)
    shown = [d for d in result.diagnostics if warnings or d.severity is Severity.ERROR]
    if shown:
        print(format_diagnostics(shown, root=config.root), file=sys.stderr)
    return result.catalog if result.ok else None


def plan_or_report(
    config: Config, command: str, refusal: str, *, warnings: bool = True
) -> Planned | None:
    """Plan the project (:func:`~codegen.generate.plan.plan_project`), diagnostics to stderr.

    Returns the plan, or ``None`` after printing ``"<command>: <refusal>"`` and
    why when the catalog has errors or the plan cannot be applied.
    ``warnings=False`` prints errors only (``make check`` has shown the
    warnings once already, through ``lint``).
    """
    # Imported here so ``--help`` and generate's no-op path do not load the renderers.
    from ..catalog.diagnostics import Severity, format_diagnostics  # noqa: PLC0415
    from ..generate.plan import plan_project  # noqa: PLC0415

    result = plan_project(config)
    shown = [d for d in result.diagnostics if warnings or d.severity is Severity.ERROR]
    if shown:
        print(format_diagnostics(shown, root=config.root), file=sys.stderr)
    if result.error is not None:
        print(f"{command}: {refusal}: {result.error}", file=sys.stderr)
        return None
    if result.planned is None:
        print(f"{command}: {refusal}; fix the errors above first", file=sys.stderr)
    return result.planned
