"""What metric-catalog may read: regular files, bounded, inside the folder the user named.

The one door every input goes through (the catalog, ``pyproject.toml`` and the
files its keys name, baseline reports, run logs, templates, the schema, source
trees, and what the Sphinx extension reads at a docs build;
``tests/layout/test_one_door.py`` keeps it so). It lives in the runtime package,
which ships without the generator, so the extension reads through it too; the
generator imports it as :mod:`codegen.safe_fs`.

- :func:`read_regular`, :func:`read_input` and :func:`open_input` read a file only
  when it is a regular file, and at most a bounded number of bytes. A FIFO is
  opened non-blocking and refused, so a ``catalog/fifo.yaml`` or a hostile
  manifest never hangs a command; a device such as ``/dev/zero`` is refused
  before a single byte is read.
- With a ``root``, the file must resolve inside it: a symlink out of the store,
  tree or project named is refused before a byte of it is read.

Where outputs may be written is :mod:`codegen.safe_outputs`. This module imports
only the standard library, so :mod:`codegen.config` reads ``pyproject.toml``
through it and ``generate``'s no-op path can use it without loading YAML or Jinja2.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Final

__all__ = [
    "MAX_CATALOG_FILE_BYTES",
    "NotRegularFileError",
    "OutsideRootError",
    "file_kind",
    "inside_root",
    "is_within",
    "open_input",
    "read_head",
    "read_input",
    "read_regular",
]

MAX_CATALOG_FILE_BYTES: Final = 4 * 1024 * 1024
"""Catalog files larger than this (4 MiB) are refused unread: by the loader, and by the docs
extension showing a catalog file's source page."""

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
