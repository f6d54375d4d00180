"""The one door every input goes through, as the generator imports it.

The reads live in the runtime package (:mod:`metric_catalog._safe_fs`), which the
Sphinx extension shares and which ships without the generator; see it for the rules.
"""

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
]
