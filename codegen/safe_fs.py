"""The one door every input goes through, as the generator imports it, and its atomic write.

The reads live in the runtime package (:mod:`metric_catalog._safe_fs`), which the
Sphinx extension shares and which ships without the generator; see it for the rules.
:func:`write_atomic` is how any stage replaces one file (``generate``'s manifest, ``scan``'s
cache, an exported file); :mod:`codegen.generate.writer` builds its transactions on the
same primitives.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from metric_catalog._safe_fs import (
    MAX_CATALOG_FILE_BYTES,
    NotRegularFileError,
    OutsideRootError,
    file_kind,
    inside_root,
    is_within,
    open_input,
    read_head,
    read_input,
    read_regular,
)

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
    "rename",
    "scratch_path",
    "write_atomic",
    "write_new",
]


def scratch_path(target: Path, kind: Literal["tmp", "bak"]) -> Path:
    """A fresh name beside ``target`` for its new text or its backup:
    ``.<name>.<pid>.<8 hex>.<kind>`` (what a killed run may leave, and cleanup recognises)."""
    return target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.{kind}")


def write_new(path: Path, data: bytes) -> None:
    """Create ``path``, which must not exist, holding ``data`` (mode 0o666 minus the umask)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def rename(source: Path, target: Path) -> None:
    """Atomically rename ``source`` to ``target``, replacing it."""
    os.replace(source, target)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` via a temp file and ``os.replace``.

    Readers see the old file or the new one, never a partial write. The temp
    file sits in the same folder (a rename across file systems is not atomic)
    and is created with mode 0o666 so the umask applies, as for any new file.
    There is no ``fsync``: the rename alone gives readers old-or-new content,
    and a file lost in a crash is simply written again.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = scratch_path(path, "tmp")
    data = text.encode("utf-8", errors="surrogateescape")
    try:
        write_new(temp, data)
        rename(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
