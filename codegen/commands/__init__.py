"""One module per ``metric-catalog`` command; see :mod:`codegen.cli`.

This package holds what several commands share: the ``--root`` and
configuration arguments (overriding ``[tool.metric-catalog]`` in
``pyproject.toml``, see :mod:`codegen.config`), ``--format``, and loading the
catalog with its diagnostics printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import CONFIG_KEYS, Config, ConfigError, apply_overrides, load_config

if TYPE_CHECKING:
    from ..catalog.model import Catalog
    from ..generate.plan import Planned

__all__ = [
    "add_config_arguments",
    "add_format_argument",
    "add_no_warnings_argument",
    "add_root_argument",
    "config_from_args",
    "load_or_report",
    "plan_or_report",
]


def add_config_arguments(parser: argparse.ArgumentParser, *, catalog: bool = True) -> None:
    """Flags overriding single ``[tool.metric-catalog]`` keys (paths relative to the root).

    One ``--<key>`` per key of :data:`codegen.config.CONFIG_KEYS` that declares
    a flag; ``catalog=False`` leaves out ``--catalog`` (the ``globs`` key).
    """
    group = parser.add_argument_group(
        "configuration",
        "override [tool.metric-catalog] in pyproject.toml; paths are relative to the project root",
    )
    for key in CONFIG_KEYS:
        if key.flag is None or (key.kind == "globs" and not catalog):
            continue
        if key.kind == "globs":
            # Shell-expanded paths, read as given (config_from_args).
            group.add_argument(
                f"--{key.name}", type=Path, nargs="+", metavar=key.metavar, help=key.flag
            )
        else:
            group.add_argument(f"--{key.name}", metavar=key.metavar, help=key.flag)


def add_root_argument(parser: argparse.ArgumentParser) -> None:
    """``--root`` and the configuration flags."""
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help=(
            "project root: the folder of the pyproject.toml holding [tool.metric-catalog] "
            "(default: the nearest one above the cwd, else the cwd)"
        ),
    )
    add_config_arguments(parser)


def config_from_args(args: argparse.Namespace) -> Config:
    """The configuration for this run: ``--root`` or discovery, then the flags on top.

    Raises:
        ConfigError: The table or a flag has a bad value (:mod:`codegen.cli`
            prints it and exits 2).
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
    overrides: dict[str, object | None] = {
        key.name: getattr(args, key.attr, None)
        for key in CONFIG_KEYS
        if key.flag is not None and key.kind != "globs"
    }
    config = apply_overrides(config, overrides)
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
    """``--no-warnings``: print the catalog's errors only (``make check`` lints first)."""
    parser.add_argument(
        "--no-warnings",
        action="store_true",
        help="do not repeat the catalog's warnings (errors are still printed); "
        "make check uses it after `lint` has shown them once",
    )


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
