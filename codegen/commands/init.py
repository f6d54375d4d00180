"""``metric-catalog init``: set up the project you are in.

Walking up from the current folder (or ``--root``):

* a ``pyproject.toml`` that already holds ``[tool.metric-catalog]`` is the
  project: ``init`` says so and leaves the file alone; it only starts the
  catalog (example file, schema copy, package ``__init__.py``) when the table's
  ``catalog`` matches no file yet, so the next step, ``generate``, works;
* otherwise the nearest ``pyproject.toml`` gets the table appended: every byte
  already in the file stays as it was (comments, spacing, CRLF line ends, a
  missing final newline), and the result is parsed back to prove the rest of
  the document is unchanged;
* with no ``pyproject.toml`` at all, one holding the table is written in the
  start folder.

It never overwrites a file: an existing catalog, example, schema copy or
``__init__.py`` is kept and named. ``--dry-run`` prints every change as a
unified diff and writes nothing. The locations come from the flags
(``--package``, ``--package-dir``, ...) or the project's name:
``<name>/telemetry/catalog/`` and the package ``<name>.telemetry.generated``.
A ``pyproject.toml`` that is not valid TOML stops it with ``file:line:col``
before anything is written.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from ..config import (
    PYPROJECT,
    TABLE,
    Config,
    ConfigError,
    parse_table,
    read_config,
    table_lines,
)
from ..generate.schema_file import SCHEMA_SOURCE, catalog_folder, schema_file_path, schema_file_text
from ..safe_fs import read_input
from ..safe_outputs import UnsafeOutputError, check_output_path
from . import add_root_argument, config_overrides

__all__ = [
    "HELP",
    "PyprojectError",
    "add_table",
    "configure",
    "example_catalog",
    "run",
    "table_text",
]

HELP: Final = "Set up this project: [tool.metric-catalog] in pyproject.toml, an example catalog."

SCHEMA_PATH: Final = SCHEMA_SOURCE
"""The JSON schema shipped with the generator; the project gets a copy beside its catalog."""

_EXAMPLE_NAME: Final = "example.yaml"
_IDENTIFIER: Final = re.compile(r"[^a-z0-9_]+")
_POSITION: Final = re.compile(r"\s*\(?\bat line \d+,? col(?:umn)? \d+\)?\s*$")


class PyprojectError(ConfigError):
    """A ``pyproject.toml`` that ``init`` cannot add the table to (bad TOML, an inline ``tool``)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--root`` (where to start), ``--dry-run`` and the configuration flags."""
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the changes as a unified diff and write nothing",
    )
    add_root_argument(
        parser,
        catalog=False,
        help=(
            "folder to start in (default: the cwd); the nearest pyproject.toml at or above "
            "it is the project"
        ),
    )


def _shown(path: Path) -> str:
    """``path`` as the user can click it: relative to the cwd (``../`` when above it).

    Absolute when the two share no folder but the file system's root.
    """
    here = Path.cwd().resolve()
    try:
        common = Path(os.path.commonpath([path, here]))
        if common == Path(common.anchor):
            return path.as_posix()
        return Path(os.path.relpath(path, here)).as_posix()
    except ValueError:  # another drive on Windows
        return path.as_posix()


def _project_name(root: Path, project: Mapping[str, object]) -> str:
    """The project's import name: ``[project] name``, else the folder's name."""
    name = project.get("name")
    text = name if isinstance(name, str) else root.name
    ident = _IDENTIFIER.sub("_", text.lower()).strip("_") or "project"
    return f"_{ident}" if ident[0].isdigit() else ident


def _layout(
    root: Path, project: Mapping[str, object], given: Mapping[str, object]
) -> dict[str, object]:
    """The table's keys for a new project: the keys given on the command line, the rest
    from the project's name."""
    name = _project_name(root, project)
    package = str(given.get("package") or f"{name}.telemetry.generated")
    base = "src/" if (root / "src" / package.split(".", 1)[0]).is_dir() else ""
    package_dir = str(given.get("package-dir") or f"{base}{package.replace('.', '/')}")
    catalog_dir = PurePosixPath(package_dir).parent / "catalog"
    layout: dict[str, object] = {
        # Recursive: a drafted/ folder of infer's (infer --out-dir <catalog>/drafted) is read.
        "catalog": f"{catalog_dir.as_posix()}/**/*.yaml",
        "package": package,
        "package-dir": package_dir,
        "docs-dir": "docs/metrics",
        "dashboards-dir": "docs/dashboards",
        "title": f"{name} metrics",
        "cache-dir": ".cache/metric-catalog",
    }
    # Every key given (--config KEY=VALUE or an old --KEY flag) is written as given;
    # schema-file only when asked: its default (beside the catalog) needs no line.
    return layout | dict(given)


def table_text(keys: Mapping[str, object]) -> str:
    """The ``[tool.metric-catalog]`` table for ``keys``, with a comment per line."""
    lines = [
        "# metric-catalog: every path is relative to this file. Keys: metric-catalog --help;",
        "# setting it up: the adopt guide (docs/guide/adopt.md).",
        f"[{TABLE}]",
        *table_lines(keys),
    ]
    return "\n".join(lines) + "\n"


def example_catalog(schema_ref: str, package: str, owner: str) -> str:
    """An example catalog file: one teed and one recorded row, passing every lint."""
    return f"""\
# yaml-language-server: $schema={schema_ref}
# An example catalog file: one per owner (the module that logs the keys).
# `metric-catalog generate` turns it into {package}.example.
owner: {owner}
module: example                     # -> {package}.example
description: Example metrics of the training loop; rename and edit me.
prefix: train                       # default log_metrics prefix of the teed rows
teed:
  - logger_key: loss                # key in the dict handed to log_metrics
    name: rl.example.loss           # OpenTelemetry series name, rl.<...>
    kind: gauge                     # gauge | counter | histogram | up_down_counter
    unit: ""                        # dimensionless; "1" for a ratio; s, By, {{token}}, {{token}}/s
    description: Training loss of the example loop for the step.
    stability: development          # development | alpha | beta | stable
    requirement_level: required     # every run logs it (live-check: missing); default recommended
recorded:
  - name: rl.example.step.duration
    kind: histogram
    unit: s
    description: Wall clock of one example training step.
"""


_INIT_PY: Final = '''"""Generated metric modules, one per catalog file (metric-catalog generate).

Import the module of the code that logs the keys; this package imports none of
them, so an owner that never runs declares nothing.
"""

__all__: list[str] = []
'''


def _newline(text: str) -> str:
    """The file's line end: CRLF when its first line ends so, else LF."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _parse(text: str, path: Path) -> dict[str, object]:
    """``text`` parsed by tomlkit (format-preserving), or a positioned :class:`PyprojectError`."""
    import tomlkit  # noqa: PLC0415 - only init edits TOML
    from tomlkit.exceptions import ParseError  # noqa: PLC0415

    try:
        document: dict[str, object] = tomlkit.parse(text).unwrap()
    except ParseError as exc:
        problem = _POSITION.sub("", str(exc))  # tomlkit counts columns from 0
        msg = (
            f"{_shown(path)}:{exc.line}:{exc.col + 1}: not valid TOML: {problem}; fix the file "
            "and run init again (nothing was written)"
        )
        raise PyprojectError(msg) from None
    return document


_PYPROJECT_BYTES: Final = 16 * 1024 * 1024
"""Largest pyproject.toml init reads (a real one is a few KiB)."""


def _read_bytes(path: Path) -> bytes:
    """A pyproject.toml's bytes: a regular file (never a FIFO or a device), size capped."""
    try:
        return read_input(path, _PYPROJECT_BYTES)
    except OSError as exc:
        msg = (
            f"{_shown(path)}: {exc.strerror or exc}; init reads and writes a regular "
            f"{PYPROJECT} only: replace it with one, or run init in another folder "
            "(nothing was written)"
        )
        raise PyprojectError(msg) from None


def _read_text(path: Path) -> str:
    """The file's text, every byte kept (no newline translation), or a PyprojectError."""
    data = _read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        msg = (
            f"{_shown(path)}:{line}:{column}: not UTF-8 (byte {data[exc.start]:#04x}); TOML "
            "files are UTF-8: re-save it as UTF-8 and run init again (nothing was written)"
        )
        raise PyprojectError(msg) from None


def add_table(text: str, table: str, path: Path) -> str:
    """``text`` (a pyproject.toml) with ``table`` appended; every byte of ``text`` kept.

    The table takes the file's line ends; a file without a final newline gets
    one before the table. The result is parsed back (tomlkit, then tomllib,
    which every command reads it with) and must equal the original document
    plus the table.

    Raises:
        PyprojectError: ``text`` is not valid TOML (``file:line:col``), or the
            table cannot be appended (``tool`` is an inline table); nothing is written.
    """
    _parse(text, path)
    newline = _newline(text)
    body = table.replace("\n", newline)
    separator = "" if not text else (newline if text.endswith("\n") else newline * 2)
    result = f"{text}{separator}{body}"
    try:
        before = tomllib.loads(text)
        after = tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:
        msg = (
            f"{_shown(path)}: cannot append [{TABLE}] ({exc}); `tool` is probably an "
            f"inline table: write it as [tool.*] tables, or add the table below by hand:\n{table}"
        )
        raise PyprojectError(msg) from None
    tool = after.get("tool")
    if isinstance(tool, dict):
        tool.pop("metric-catalog", None)
        if not tool and "tool" not in before:
            del after["tool"]
    if after != before:
        msg = f"{_shown(path)}: appending [{TABLE}] would change the rest of the file"
        raise PyprojectError(msg)
    return result


@dataclass(frozen=True, slots=True)
class _Write:
    """One file init writes: a new one (``old is None``) or pyproject.toml with the table."""

    path: Path
    old: str | None
    new: str


def _find_projects(start: Path) -> tuple[Path | None, Path | None]:
    """(the nearest pyproject.toml holding the table, the nearest pyproject.toml) from ``start``.

    The table's file is looked for above the nearest one too: commands run here
    read the nearest table, so giving a nested pyproject its own table would
    silently take over from the configured project.
    """
    nearest: Path | None = None
    for folder in (start, *start.parents):
        candidate = folder / PYPROJECT
        if not os.path.lexists(candidate):
            continue
        nearest = nearest or candidate
        text = _read_bytes(candidate).decode("utf-8", errors="replace")
        if re.search(rf"^\s*\[\s*{re.escape(TABLE)}\s*[\].]", text, re.MULTILINE):
            return candidate, nearest
    return None, nearest


def _catalog_files(config: Config) -> list[Path]:
    return [path for path in config.catalog_paths() if path.is_file()]


def _new_file(path: Path, text: str, writes: list[_Write]) -> None:
    if path.exists():
        print(f"kept {_shown(path)} (exists; init never overwrites)")
    else:
        writes.append(_Write(path, None, text))


def _start_catalog(config: Config, writes: list[_Write]) -> None:
    """The example catalog file, its schema copy and the package's ``__init__.py``."""
    found = _catalog_files(config)
    schema = schema_file_path(config)
    if found:
        names = ", ".join(_shown(path) for path in found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        print(f"kept the catalog: {names}{more}")
    else:
        folder = config.root / catalog_folder(config.catalog[0])
        # Relative to the example file, so it resolves in every checkout of the project.
        schema_ref = (
            Path(os.path.relpath(config.root / schema, folder)).as_posix()
            if schema
            else SCHEMA_SOURCE.as_uri()
        )
        owner = config.package.split(".")[0] + ".train"
        example = example_catalog(schema_ref, config.package, owner)
        _new_file(folder / _EXAMPLE_NAME, example, writes)
    if schema is not None:
        _new_file(config.root / schema, schema_file_text(config.generate_command), writes)
    _new_file(config.root / config.package_dir / "__init__.py", _INIT_PY, writes)


_GITIGNORE: Final = ".gitignore"


def _ignore_cache(config: Config, writes: list[_Write]) -> None:
    """Add the cache dir to the project's ``.gitignore`` (created, or appended to once)."""
    entry = "/" + PurePosixPath(config.cache_dir).as_posix().strip("/") + "/"
    path = config.root / _GITIGNORE
    # A .gitignore that is a link out of the project, or not a file, is never read or written.
    check_output_path(config.root, _GITIGNORE)
    old = _read_text(path) if path.is_file() else None
    present = {line.strip() for line in (old or "").splitlines()}
    if {entry, entry.lstrip("/"), entry.rstrip("/"), entry.strip("/")} & present:
        return
    head = "" if not old else old if old.endswith(("\n", "\r")) else f"{old}\n"
    comment = "# metric-catalog's cache (generate's no-op manifest): not source\n"
    writes.append(_Write(path, old, f"{head}{comment}{entry}\n"))


def _diff(write: _Write) -> str:
    shown = _shown(write.path)
    old = [] if write.old is None else write.old.splitlines(keepends=True)
    lines = difflib.unified_diff(
        old,
        write.new.splitlines(keepends=True),
        "/dev/null" if write.old is None else f"a/{shown}",
        f"b/{shown}",
    )
    return "".join(line if line.endswith("\n") else f"{line}\n" for line in lines)


def _check_inside(root: Path, write: _Write) -> None:
    """Refuse a write that would follow a symlink out of the project (or onto a FIFO).

    Raises:
        UnsafeOutputError: a folder on the way, or the file, is a link leading
            outside ``root``, a loop, or not a regular file; nothing is written.
    """
    try:
        rel = write.path.relative_to(root).as_posix()
    except ValueError:
        msg = f"{_shown(write.path)} is outside the project root {root}; nothing was written"
        raise UnsafeOutputError(msg) from None
    check_output_path(root, rel)


def _write(write: _Write) -> None:
    """Create a new file (never over one), or replace pyproject.toml atomically, mode kept.

    A pyproject.toml that is a link (inside the project: :func:`_check_inside`) is
    replaced where it points, so the link stays a link.
    """
    write.path.parent.mkdir(parents=True, exist_ok=True)
    data = write.new.encode("utf-8")
    if write.old is None:
        with write.path.open("xb") as handle:
            handle.write(data)
        return
    if _read_bytes(write.path).decode("utf-8") != write.old:
        msg = f"{_shown(write.path)} changed while init ran; run init again"
        raise PyprojectError(msg)
    target = Path(os.path.realpath(write.path))
    temp = target.with_name(f".{target.name}.{os.getpid()}.init.tmp")
    try:
        with temp.open("xb") as handle:
            handle.write(data)
        os.chmod(temp, target.stat().st_mode & 0o7777)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    """Set the project up (or say it is); 0 when it is ready for ``generate``.

    Raises:
        ConfigError: ``--root`` is not a folder, a ``pyproject.toml`` is not
            valid TOML or its table is not usable, or the flags make a bad
            table (the command line prints it and exits 2); nothing is written.
    """
    start: Path = (args.root if args.root is not None else Path.cwd()).resolve()
    if not start.is_dir():
        msg = f"--root {args.root}: no such folder; pass the folder of your project"
        raise ConfigError(msg)
    given = config_overrides(args)  # a --config typo stops init even in a set-up project
    configured, nearest = _find_projects(start)
    writes: list[_Write] = []
    # The cheap look may have matched a comment or a string: parse the file properly.
    config = read_config(configured) if configured is not None else None
    if configured is not None and config is not None:
        print(f"{_shown(configured)} already has [{TABLE}]; init leaves it as it is")
    else:
        pyproject = nearest or start / PYPROJECT
        # A pyproject.toml that is a link out of its folder is never read or replaced.
        check_output_path(pyproject.parent, PYPROJECT)
        old = _read_text(pyproject) if nearest is not None else None
        project = _parse(old, pyproject).get("project", {}) if old is not None else {}
        keys = _layout(pyproject.parent, project if isinstance(project, dict) else {}, given)
        table = table_text(keys)
        # The table must read back, with the same checks as every command (before any write).
        config = parse_table(tomllib.loads(table)["tool"]["metric-catalog"], pyproject)
        new = table if old is None else add_table(old, table, pyproject)
        writes.append(_Write(pyproject, old, new))
    _start_catalog(config, writes)
    _ignore_cache(config, writes)
    for write in writes:
        if write.old is None:  # pyproject.toml itself was checked in its own folder
            _check_inside(config.root, write)
    if args.dry_run:
        for write in writes:
            sys.stdout.write(_diff(write))
        print(f"init: dry run, {len(writes)} file(s) would change; nothing written")
        return 0
    for write in writes:
        _write(write)
        verb = "added" if write.old is not None else "wrote"
        what = f" [{TABLE}] to" if write.old is not None else ""
        if write.path.name == _GITIGNORE:
            verb, what = ("added the cache dir to", "") if write.old is not None else (verb, "")
        print(f"{verb}{what} {_shown(write.path)}")
    # Commands find the table walking up from the cwd: from elsewhere, go there first.
    here = Path.cwd().resolve()
    cd = "" if here.is_relative_to(config.root) else f"  cd {_shown(config.root)}\n"
    print(
        "\nnext:\n"
        f"{cd}"
        "  metric-catalog generate   # render the modules, docs pages and dashboards\n"
        "  metric-catalog check      # in CI or pre-commit: generated files match the catalog"
    )
    return 0
