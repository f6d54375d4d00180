"""The resolved catalog as the extension reads it: loaded once per file version, hashed per owner.

``generate`` writes the resolved catalog (``docs/metrics/catalog.json``); every
owner page, the index data and the search entries are built from it. A page's
*hash* covers exactly what its HTML depends on (its file entry, its rows, the
owner pages its deprecated rows link to and the generated package), so a
change to one owner file makes one page outdated, not fifty.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._safe_fs import read_regular

__all__ = ["CatalogData", "file_digest", "load", "series_anchor", "source_line"]

_NON_ID_CHARS: Final = re.compile(r"[^a-z0-9]+")
_LINE: Final = re.compile(r":(\d+)(?::\d+)?$")
_DEFAULT_PACKAGE: Final = "metric_catalog.generated"


def series_anchor(name: str) -> str:
    """HTML id of a series' entry (``rl.reward.mean`` -> ``rl-reward-mean``).

    The same rule as ``codegen.generate.docs.series_anchor`` and the index script,
    so links built anywhere agree.
    """
    return _NON_ID_CHARS.sub("-", name.lower()).strip("-")


def source_line(source: object) -> int:
    """The line of a ``path:line:col`` source position (0 when there is none)."""
    match = _LINE.search(str(source or ""))
    return int(match.group(1)) if match else 0


def _digest(*parts: object) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


@dataclass(slots=True)
class CatalogData:
    """One version of the resolved catalog, with per-file views built on first use."""

    path: Path
    digest: str
    """Hash of the whole file's bytes."""
    package: str
    """Python package the owner modules are generated into (when rows lack ``python_constant``)."""
    files: dict[str, dict[str, Any]]
    """File entries by project-relative path."""
    rows: list[dict[str, Any]]
    """Every row, sorted by series name."""
    title: str = ""
    """The configured site title (``title`` of ``[tool.metric-catalog]``); "" when absent."""
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Declared attributes by name (the resolved catalog's top-level ``attributes``)."""
    by_name: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_file: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Rows per file path, in declaration (line) order."""
    _page_hashes: dict[str, str] = field(default_factory=dict)

    def page_hash(self, path: str) -> str:
        """What the owner page of file ``path`` depends on, hashed ("" if not in the catalog)."""
        cached = self._page_hashes.get(path)
        if cached is not None:
            return cached
        entry = self.files.get(path)
        if entry is None:
            return ""
        rows = self.by_file.get(path, [])
        targets = {}
        for row in rows:
            deprecated = row.get("deprecated") or {}
            target = deprecated.get("replaced_by")
            # Rows linked to from this page: the replacement and the shadowing rows.
            for linked in [target, *(row.get("shadowed_by") or [])]:
                if linked:
                    found = self.by_name.get(str(linked))
                    targets[str(linked)] = None if found is None else found.get("file")
        declared = [self.attributes.get(str(n)) for n in entry.get("attributes") or []]
        # Series link each attribute to the file declaring it and show its label.
        used = sorted({str(a.get("name")) for row in rows for a in row.get("attributes") or []})
        homes = {n: (self.attributes.get(n) or {}).get("file") for n in used}
        value = _digest(entry, rows, targets, self.package, declared, homes)
        self._page_hashes[path] = value
        return value


MAX_CATALOG_BYTES: Final = 256 * 1024 * 1024
"""Most bytes of a resolved catalog the extension reads (10,000 rows are about 15 MB); a
larger file, a FIFO or a device is refused (:mod:`metric_catalog._safe_fs`)."""

_CACHE: dict[tuple[str, int, int], CatalogData] = {}
_DIGESTS: dict[tuple[str, int, int], str] = {}


def _key(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return (str(path), stat.st_mtime_ns, stat.st_size)


def file_digest(path: Path) -> str:
    """:attr:`CatalogData.digest` of the file at ``path`` without parsing it (cached).

    Raises:
        OSError: The file cannot be read.
    """
    key = _key(path)
    digest = _DIGESTS.get(key)
    if digest is None:
        digest = hashlib.sha256(read_regular(path, MAX_CATALOG_BYTES)).hexdigest()[:20]
        _DIGESTS.clear()
        _DIGESTS[key] = digest
    return digest


def load(path: Path) -> CatalogData:
    """The resolved catalog at ``path``, parsed once per (path, mtime, size).

    Raises:
        OSError: The file cannot be read.
        ValueError: It is not a resolved catalog (JSON object with ``files`` and ``rows``).
    """
    key = _key(path)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    raw = read_regular(path, MAX_CATALOG_BYTES)
    document = json.loads(raw)
    if not isinstance(document, dict) or not isinstance(document.get("rows"), list):
        msg = f"{path}: not a resolved catalog (a JSON object with 'files' and 'rows')"
        raise ValueError(msg)
    files = {str(entry["path"]): entry for entry in document.get("files", [])}
    rows: list[dict[str, Any]] = document["rows"]
    data = CatalogData(
        path=path,
        digest=hashlib.sha256(raw).hexdigest()[:20],
        package=str(document.get("generated_package") or _DEFAULT_PACKAGE),
        files=files,
        rows=rows,
        title=str(document.get("title") or ""),
    )
    for attribute in document.get("attributes") or []:
        if isinstance(attribute, dict) and "name" in attribute:
            data.attributes[str(attribute["name"])] = attribute
    for row in rows:
        data.by_name[str(row["name"])] = row
        data.by_file.setdefault(str(row.get("file", "")), []).append(row)
    for file_rows in data.by_file.values():
        file_rows.sort(key=lambda row: (source_line(row.get("source")), str(row["name"])))
    _CACHE.clear()
    _CACHE[key] = data
    return data
