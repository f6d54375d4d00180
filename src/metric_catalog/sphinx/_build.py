"""What the HTML build writes besides the pages: index data, YAML source pages, dashboards.

Each step is incremental: the index data and the source pages carry a stamp of
what they were built from and are rewritten only when it changed; a dashboard
is copied only when its modification time did.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
from collections.abc import Iterator
from html import escape
from pathlib import Path, PurePosixPath
from typing import Any

from sphinx.application import Sphinx

from .._safe_fs import MAX_CATALOG_FILE_BYTES, read_head, read_input, read_regular
from . import _data, _html
from ._data import CatalogData
from ._domain import CatalogDomain
from ._site import (
    DATA_FILE,
    DOMAIN,
    ENV_VERSION,
    SOURCE_PAGES_DIR,
    confpath,
    load_catalog,
    logger,
)

__all__ = [
    "collect_pages",
    "copy_dashboards",
    "index_data",
    "minified_json",
    "page_context",
    "render_source",
    "write_index_data",
]


def index_data(data: CatalogData, page_uri: dict[str, str]) -> dict[str, Any]:
    """What the index script needs, columnar: value tables, then one short list per row.

    ``page_uri`` maps a catalog file path to its owner page's URI from the site root.
    Row: ``[name, file, kind, unit, stability, prometheus, logger keys, deprecated,
    description, [attribute indexes]]`` where file, kind, unit, stability and
    attributes index the tables and logger keys are newline-separated (one per
    prefix, prefix included; empty for a recorded row).
    """
    tables: dict[str, dict[str, int]] = {
        "kinds": {},
        "units": {},
        "stabilities": {},
        "attributes": {},
    }

    def index(table: str, value: str) -> int:
        values = tables[table]
        return values.setdefault(value, len(values))

    files = sorted(data.files)
    file_index = {path: i for i, path in enumerate(files)}
    rows = []
    for row in data.rows:
        attributes = [
            index("attributes", str(a.get("name", "")))
            for a in row.get("attributes") or []
            if isinstance(a, dict)
        ]
        rows.append(
            [
                row["name"],
                file_index.get(str(row.get("file", "")), -1),
                index("kinds", str(row.get("kind", ""))),
                index("units", str(row.get("unit") or "")),
                index("stabilities", str(row.get("stability", ""))),
                (row.get("prometheus") or {}).get("name", ""),
                "\n".join(_html.logger_keys(row)),
                1 if row.get("deprecated") else 0,
                " ".join(str(row.get("description", "")).split()),
                attributes,
            ]
        )
    return {
        "version": 1,
        "files": [
            {
                "owner": data.files[p].get("owner", ""),
                "module": data.files[p].get("module", ""),
                "page": page_uri.get(p, ""),
            }
            for p in files
        ],
        **{name: list(values) for name, values in tables.items()},
        "rows": rows,
    }


def write_index_data(app: Sphinx) -> None:
    """Write ``_static/`` :data:`DATA_FILE` unless it already holds this catalog."""
    domain: CatalogDomain = app.env.domains[DOMAIN]  # type: ignore[assignment]
    if not domain.index_pages:
        return
    try:
        digest = _data.file_digest(confpath(app, app.config.metric_catalog_data))
    except OSError:
        return
    target = Path(app.outdir) / "_static" / DATA_FILE
    stamp = f"// metric-catalog index data {ENV_VERSION} {digest}\n"
    pages = {path: docname for docname, (path, _) in domain.pages.items()}
    page_uri = {path: app.builder.get_target_uri(doc) for path, doc in pages.items()}
    stamp += f"// {hashlib.sha256(json.dumps(page_uri, sort_keys=True).encode()).hexdigest()}\n"
    try:
        head = read_head(target, len(stamp.encode()) + 1).decode("utf-8", errors="replace")
        if head.startswith(stamp):
            return
    except OSError:
        pass
    data = load_catalog(app)
    if data is None:
        return
    payload = json.dumps(
        index_data(data, page_uri), ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")
    packed = base64.b64encode(gzip.compress(payload, compresslevel=6, mtime=0)).decode("ascii")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(stamp + f'window.metricCatalogIndexData = "{packed}";\n', encoding="utf-8")


def _yaml_line(line: str) -> str:
    # Comments muted, the rest plain: at 10,000 rows every tag per line is 70,000 tags.
    if line.lstrip().startswith("#"):
        return f"<i>{escape(line, quote=False)}</i>"
    return escape(line, quote=False)


def render_source(text: str) -> str:
    """YAML ``text`` as a ``<pre>`` with one ``<span id="L<n>">`` per line, comments muted."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    body = "\n".join(
        f'<span id="L{number}">{_yaml_line(line)}</span>'
        for number, line in enumerate(lines, start=1)
    )
    return f'<div class="mc-yaml"><pre>{body}\n</pre></div>'


def _stamps_path(app: Sphinx) -> Path:
    return Path(app.outdir) / SOURCE_PAGES_DIR / ".stamps.json"


def collect_pages(app: Sphinx) -> Iterator[tuple[str, dict[str, Any], str]]:
    """The YAML pages whose file changed since they were last written (all, the first time).

    Also writes the index data first, so the search page (written after these
    pages) can load it.
    """
    write_index_data(app)
    root = confpath(app, app.config.metric_catalog_root)
    stamps_path = _stamps_path(app)
    try:
        saved = json.loads(read_regular(stamps_path, _data.MAX_CATALOG_BYTES))
        stamps: dict[str, str] = dict(saved["pages"])
        known: list[str] = list(saved["files"])
        known_digest = str(saved["digest"])
    except (OSError, ValueError, KeyError, TypeError):
        stamps, known, known_digest = {}, [], ""
    try:
        digest = _data.file_digest(confpath(app, app.config.metric_catalog_data))
    except OSError:
        digest = ""
    if digest and digest == known_digest:
        files = known  # the same resolved catalog as last time: no need to parse it
    else:
        data = load_catalog(app)
        files = [] if data is None else sorted(data.files)
    fresh: dict[str, str] = {}
    for relative in files:
        path = root / relative
        try:
            # A catalog file is shown as the generator read it: inside the project, regular,
            # bounded as the loader bounds it (a link out or a FIFO is refused, not read).
            raw = read_input(path, MAX_CATALOG_FILE_BYTES, root=root)
        except OSError as exc:
            logger.warning(
                "metric_catalog: cannot read catalog file %s for its source page (%s)",
                relative,
                exc,
                type="metric_catalog",
                subtype="source",
            )
            continue
        name = f"{SOURCE_PAGES_DIR}/{PurePosixPath(relative).name}"
        stamp = hashlib.sha256(raw + f"\0{ENV_VERSION}\0{relative}".encode()).hexdigest()
        fresh[name] = stamp
        output = Path(app.outdir) / (app.builder.get_target_uri(name) or name)
        if stamps.get(name) == stamp and output.is_file():
            continue
        body = (
            f'<div class="mc-wide"><h1>{escape(relative)}</h1>\n'
            "<p>The catalog file as committed; each line is a link anchor "
            "(<code>#L&lt;line&gt;</code>).</p>\n"
            + render_source(raw.decode("utf-8", errors="replace"))
            + "</div>"
        )
        yield name, {"title": relative, "body": body}, "page.html"
    stamps_path.parent.mkdir(parents=True, exist_ok=True)
    saved = {"digest": digest, "files": files, "pages": fresh}
    stamps_path.write_text(json.dumps(saved, sort_keys=True), encoding="utf-8")


def page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """The search page loads the index data too: it lists the catalog's matching series."""
    if pagename != "search" or app.builder.format != "html":
        return
    domain: CatalogDomain = app.env.domains[DOMAIN]  # type: ignore[assignment]
    if domain.index_pages:
        app.add_js_file(DATA_FILE, defer="defer")


def copy_dashboards(app: Sphinx, exception: Exception | None) -> None:
    """Copy the generated dashboards into the site's ``dashboards/``, minified."""
    if exception is not None or app.builder.format != "html":
        return
    source = confpath(app, app.config.metric_catalog_dashboards_dir)
    if not source.is_dir():
        return
    target = Path(app.outdir) / "dashboards"
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.json")):
        destination = target / path.name
        stat = path.stat()
        try:
            current = destination.stat().st_mtime_ns
        except OSError:
            current = None
        if current != stat.st_mtime_ns:
            # The copy carries the source's mtime, so an unchanged dashboard is not rewritten.
            destination.write_bytes(minified_json(read_regular(path, _data.MAX_CATALOG_BYTES)))
            os.utime(destination, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def minified_json(raw: bytes) -> bytes:
    """``raw`` JSON without insignificant whitespace (the same document); else ``raw`` as is.

    The generated dashboards keep one panel per line for readable diffs; the site
    serves them minified (about a tenth smaller). A file that is not JSON is copied as is.
    """
    try:
        document = json.loads(raw)
    except ValueError:
        return raw
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return (text + "\n").encode("utf-8")
