"""What the generator may read and where it may write: regular files, inside the project root.

Two guards every command shares:

- :func:`read_regular` reads a file only when it is a regular file, and at most
  a bounded number of bytes. A FIFO is opened non-blocking and refused, so a
  ``catalog/fifo.yaml`` or a hostile manifest never hangs a command; a device
  such as ``/dev/zero`` is refused before a single byte is read.
- :func:`check_output_locations` resolves every configured output folder
  (``package-dir``, ``docs-dir``, ``dashboards-dir``, ``cache-dir`` and each
  ``outputs`` destination), component by component, before anything is
  written or removed; :func:`check_output_path` does the same for one file.
  A symlink that stays inside the project root is fine; one that leads outside
  it, a symlink loop, or a file where a folder must be, is refused with the
  configured key, the link and where it points.

This module imports only the standard library and :mod:`codegen.config`, so
``generate``'s no-op path can use it without loading YAML or Jinja2.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Final

from .config import PYPROJECT, TABLE, Config, ConfigError

__all__ = [
    "NotRegularFileError",
    "OutsideRootError",
    "UnsafeOutputError",
    "check_output_locations",
    "check_output_path",
    "file_kind",
    "inside_root",
    "is_within",
    "open_input",
    "read_head",
    "read_input",
    "read_regular",
]

_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symlink"),
    (stat.S_ISREG, "a regular file"),
)


class NotRegularFileError(OSError):
    """A path the generator would read is not a regular file (a FIFO, a device, a folder)."""


class OutsideRootError(NotRegularFileError):
    """A member of a folder the user named (a store, a tree, the project) resolves outside it."""


class UnsafeOutputError(ConfigError):
    """An output location leaves the project root, loops, or is not the kind of file it must be.

    A :class:`~codegen.config.ConfigError`, so every command exits 2 with the
    message, before anything is written or removed.
    """


def file_kind(mode: int) -> str:
    """What ``st_mode`` describes, for messages: ``"a FIFO (named pipe)"``, ``"a directory"``..."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def _open_regular(
    path: str | os.PathLike[str], *, stream: bool = False, flags: int = 0
) -> BinaryIO:
    """``path`` opened for reading, or an error when it is not a regular file (never blocks).

    ``stream=True`` also takes a FIFO or a character device (stdin-like, asked for by
    name); the descriptor is then set blocking again, so reads wait for a writer.
    """
    flags |= os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)

    def opener(name: str, _flags: int) -> int:
        try:
            fd = os.open(name, flags)
        except IsADirectoryError:
            msg = "is a directory, not a regular file"
            raise NotRegularFileError(errno.EISDIR, msg, name) from None
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            os.close(fd)
            raise
        if stream and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            os.set_blocking(fd, True)
        elif not stat.S_ISREG(mode):
            os.close(fd)
            msg = f"is {file_kind(mode)}, not a regular file"
            raise NotRegularFileError(errno.EINVAL, msg, name)
        return fd

    # open() with an opener keeps the file's name on the handle (os.fdopen would not).
    return open(os.fspath(path), "rb", opener=opener)


def inside_root(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str:
    """``path`` resolved (every symlink followed), which must stay inside the resolved ``root``.

    Raises:
        OutsideRootError: ``path`` resolves outside ``root`` (``strerror`` says where).
        OSError: a symlink loop or a component that cannot be inspected.
    """
    return _kept_inside(path, os.path.realpath(path), os.path.realpath(root))


def _kept_inside(path: str | os.PathLike[str], real: str, root_real: str) -> str:
    """``real`` (``path`` resolved) when inside ``root_real``; :class:`OutsideRootError` if not."""
    if not is_within(real, root_real):
        msg = f"resolves to {real}, outside {root_real} (a symlink out of the folder named)"
        raise OutsideRootError(errno.EXDEV, msg, os.fspath(path))
    return real


def open_input(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    stream: bool = False,
    resolved: tuple[str, str] | None = None,
) -> BinaryIO:
    """The one way a reader opens an input: a regular file, kept inside ``root`` when given.

    Opened with ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor, so
    a FIFO or a device never blocks or feeds an endless read (``stream=True``, for
    a path the user named as a log, takes a FIFO or device as stdin is taken). With
    ``root`` (the store, tree or project the user named), ``path`` is resolved and
    must stay inside it, and the resolved file is opened without following a link
    swapped in since. ``resolved``: ``path``'s and ``root``'s real paths when the caller
    resolved them already (a walk of a tree does), so they are not resolved again.

    Raises:
        OutsideRootError: ``path`` resolves outside ``root``.
        NotRegularFileError: ``path`` is a FIFO, a device, a socket or a folder.
        OSError: it cannot be opened (missing, a symlink loop, denied).
    """
    if root is None:
        return _open_regular(path, stream=stream)
    real = inside_root(path, root) if resolved is None else _kept_inside(path, *resolved)
    return _open_regular(real, flags=getattr(os, "O_NOFOLLOW", 0))


def read_input(
    path: str | os.PathLike[str],
    limit: int,
    *,
    root: str | os.PathLike[str] | None = None,
    resolved: tuple[str, str] | None = None,
) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`open_input`), at most ``limit``.

    The size is checked on the open descriptor before a byte is read.

    Raises:
        NotRegularFileError: ``path`` is not a regular file, leaves ``root`` or holds
            more than ``limit`` bytes (``errno.EFBIG``).
        OSError: it cannot be opened or read.
    """
    with open_input(path, root=root, resolved=resolved) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            msg = f"is larger than {limit} bytes"
            raise NotRegularFileError(errno.EFBIG, msg, os.fspath(path))
        # Read what the descriptor says it holds, not a buffer of ``limit`` bytes (allocating
        # megabytes per small file costs more than reading it); a file grown since is read
        # on up to the limit.
        data = handle.read(size + 1)
        if len(data) > size:
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise NotRegularFileError(errno.EFBIG, f"is larger than {limit} bytes", os.fspath(path))
    return data


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of ``path`` (following symlinks), which must be a regular file.

    Opened with ``O_NONBLOCK``, so a FIFO is never waited on, and checked with
    ``fstat`` on the open descriptor, so a file swapped for a FIFO or a device
    between a check and the open is refused too.

    Raises:
        NotRegularFileError: ``path`` is a FIFO, a device, a socket or a folder
            (``strerror`` says which), or holds more than ``limit`` bytes.
        OSError: It cannot be opened or read (missing, a symlink loop, denied).
    """
    with _open_regular(path) as handle:
        data = handle.read() if limit is None else handle.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise NotRegularFileError(errno.EFBIG, f"is larger than {limit} bytes", str(path))
    return data


def read_head(path: Path, size: int) -> bytes:
    """At most the first ``size`` bytes of the regular file ``path`` (see :func:`read_regular`).

    Raises:
        NotRegularFileError: ``path`` is not a regular file.
        OSError: It cannot be opened or read.
    """
    with _open_regular(path) as handle:
        return handle.read(size)


def is_within(path: str, root: str) -> bool:
    """Whether the absolute, resolved ``path`` is ``root`` or below it."""
    return os.path.commonpath([path, root]) == root


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
