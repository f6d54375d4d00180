"""Where the generator may write: every output location kept inside the project root.

:func:`check_output_locations` resolves every configured output folder
(``package-dir``, ``docs-dir``, ``dashboards-dir``, ``cache-dir`` and each
``outputs`` destination), component by component, before anything is written or
removed; :func:`check_output_path` does the same for one file. A symlink that
stays inside the project root is fine; one that leads outside it, a symlink loop,
or a file where a folder must be, is refused with the configured key, the link and
where it points. What may be read is :mod:`codegen.safe_fs`.

This module imports only the standard library, :mod:`codegen.config` and
:mod:`codegen.safe_fs`, so ``generate``'s no-op path can use it without loading
YAML or Jinja2.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

from .config import PYPROJECT, TABLE, Config, ConfigError
from .safe_fs import file_kind, is_within

__all__ = ["UnsafeOutputError", "check_output_locations", "check_output_path"]


class UnsafeOutputError(ConfigError):
    """An output location leaves the project root, loops, or is not the kind of file it must be.

    A :class:`~codegen.config.ConfigError`, so every command exits 2 with the
    message, before anything is written or removed.
    """


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _problem(root: Path, rel: str, *, last_is_file: bool) -> str | None:
    """Why writing at ``root/rel`` could leave the root or fail on its layout; ``None`` if safe.

    Walks the existing components one by one: each symlink must resolve (no
    loop, not dangling) to a place inside the root, and each component but a
    file's last must be a folder. Missing components are fine: they are
    created later as real folders.
    """
    root_real = os.path.realpath(root)
    parts = PurePosixPath(rel).parts
    current = root
    for index, part in enumerate(parts):
        current = current / part
        shown = _shown(current, root)
        last = index == len(parts) - 1
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{shown} cannot be inspected ({exc.strerror or exc})"
        if stat.S_ISLNK(mode):
            link = os.readlink(current)
            try:
                real = os.path.realpath(current, strict=True)
            except OSError as exc:
                reason = "a symlink loop" if exc.errno == errno.ELOOP else "a dangling symlink"
                return f"{shown} is {reason} (it points to {link!r})"
            if not is_within(real, root_real):
                return (
                    f"{shown} is a symlink to {link!r}, which resolves to {real}, outside the "
                    f"project root {root_real}"
                )
            mode = os.stat(current).st_mode
        if last and last_is_file:
            if not stat.S_ISREG(mode):
                return f"{shown} is {file_kind(mode)}, not a regular file"
        elif not stat.S_ISDIR(mode):
            return f"{shown} is {file_kind(mode)}, not a folder"
    return None


def check_output_path(root: Path, rel: str, *, folder: bool = False) -> None:
    """Refuse writing or removing the root-relative file ``rel`` unless it stays inside ``root``.

    ``folder=True`` checks a folder instead: where it exists, it must be one.

    Raises:
        UnsafeOutputError: A component of ``rel`` is a symlink that leads outside
            the root, loops or dangles; a folder on the way is a file; or ``rel``
            itself exists and is not a regular file.
    """
    problem = _problem(root, rel, last_is_file=not folder)
    if problem is not None:
        msg = (
            f"{rel}: {problem}; refusing to write or remove anything; fix: replace it with a "
            "regular file or folder inside the project"
        )
        raise UnsafeOutputError(msg)


def _locations(config: Config) -> list[tuple[str, str, bool]]:
    """(key, root-relative path, whether it is a file) of every configured output location."""
    found = [
        ("package-dir", config.package_dir, False),
        ("docs-dir", config.docs_dir, False),
        ("dashboards-dir", config.dashboards_dir, False),
        ("cache-dir", config.cache_dir, False),
    ]
    for output in config.outputs:
        parts = PurePosixPath(output.path).parts
        # Up to the first component the {module} placeholder makes per-file.
        static = [part for part in parts if "{" not in part]
        if len(static) == len(parts):
            found.append(("outputs", output.path, True))
        else:
            cut = next(i for i, part in enumerate(parts) if "{" in part)
            if cut:
                found.append(("outputs", PurePosixPath(*parts[:cut]).as_posix(), False))
    return found


def check_output_locations(config: Config) -> None:
    """Refuse a run whose configured outputs could land outside the project root.

    Every location, and every parent folder of each, is resolved before
    anything is written or removed (see :func:`check_output_path`).

    Raises:
        UnsafeOutputError: The message names the key, its value, the offending
            link or file and where it points.
    """
    for key, rel, is_file in _locations(config):
        if not rel:
            continue
        problem = _problem(config.root, rel, last_is_file=is_file)
        if problem is None:
            continue
        where = f" in {config.source.name}" if config.source is not None else ""
        msg = (
            f"[{TABLE}] {key} = {rel!r}{where}: {problem}; refusing to write or remove "
            f"anything; fix: make it a real folder inside the project, or point {key} at one "
            f"(paths are relative to the folder of {PYPROJECT})"
        )
        raise UnsafeOutputError(msg)
