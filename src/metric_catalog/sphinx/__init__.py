"""Sphinx extension for a metric catalog's docs site: ``extensions = ["metric_catalog.sphinx"]``.

``generate`` (``metric-catalog generate``; ``python -m codegen generate`` in
this repo) writes the resolved catalog, ``metrics/catalog.json``, and one short
page per owner file holding a ``metric-catalog-owner`` directive, plus an index
page holding ``metric-catalog-index``. This extension turns them into the site:

* each owner page's summary table and series entries, built as nodes straight
  from the resolved catalog (no Markdown tables to parse);
* the index, rendered in the browser from one compressed data file
  (``_static/metric-catalog-data.js``) with filters by owner, kind, stability
  and attribute, and a find box;
* search entries for every series name, logger key (with its prefix) and
  Prometheus name, each linking to the series' entry;
* one page per catalog YAML file, ``catalog-source/<name>.yaml.html``, with one
  ``#L<line>`` anchor per line, where each entry's source link lands;
* the stylesheet and scripts, shipped with the package (nothing to copy into
  ``_static/``), and the Grafana dashboards copied to ``dashboards/``.

Rebuilds are incremental per owner: a page is re-read only when what it shows
changed in the resolved catalog, and the YAML pages only when their file did.

Configuration (``conf.py``), every path relative to the Sphinx source folder:

``metric_catalog_data`` (default ``"metrics/catalog.json"``)
    The resolved catalog ``generate`` writes next to the catalog pages.
``metric_catalog_root`` (default ``".."``)
    The project root the catalog's file paths are relative to.
``metric_catalog_dashboards_dir`` (default ``"dashboards"``)
    Folder of the generated dashboards; skipped when it does not exist.

The site title follows ``title`` of ``[tool.metric-catalog]`` (written into the
resolved catalog): it becomes ``html_title`` (the sidebar brand and every
page's ``<title>``) unless ``conf.py`` or ``-D`` sets ``html_title``.

The runtime (``metric_catalog.vocabulary``, ``tee``, ``otel``) never imports
this package; it needs the ``docs`` extra (Sphinx).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
from collections.abc import Iterator, Set
from html import escape
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Final

from docutils import nodes  # type: ignore[import-untyped]
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.domains import Domain, ObjType
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.writers.html5 import HTML5Translator

from . import _data, _html, _wbr
from ._data import CatalogData, series_anchor

__all__ = [
    "CSS_FILE",
    "DATA_FILE",
    "JS_FILE",
    "SOURCE_PAGES_DIR",
    "STATIC_DIR",
    "CatalogDomain",
    "catalog_files",
    "index_intro",
    "minified_json",
    "render_source",
    "series_anchor",
    "setup",
]

SOURCE_PAGES_DIR: Final = "catalog-source"
"""Site folder of the YAML pages; the owner pages link into it."""

STATIC_DIR: Final = Path(__file__).resolve().parent / "static"
"""The extension's stylesheet and scripts, added to ``html_static_path``."""

CSS_FILE: Final = "metric-catalog.css"
"""Stylesheet of the catalog pages (tables, entries, index, source pages)."""

JS_FILE: Final = "metric-catalog-index.js"
"""Script that renders and filters the index from :data:`DATA_FILE`."""

DATA_FILE: Final = "metric-catalog-data.js"
"""The index data, written into the output's ``_static/`` on every HTML build."""

_VERSION: Final = "3"
_ENV_VERSION: Final = int(
    hashlib.sha256(
        b"".join(
            (Path(__file__).parent / n).read_bytes()
            for n in ("__init__.py", "_data.py", "_html.py", "_wbr.py")
        )
    ).hexdigest()[:8],
    16,
)
"""Changes with the extension's code, so a new version re-reads every catalog page."""
_DOMAIN: Final = "metric-catalog"
_logger = logging.getLogger(__name__)


# --- the resolved catalog -------------------------------------------------------------


def _confpath(app: Sphinx, value: str) -> Path:
    return (Path(app.confdir) / value).resolve()


def _load(app: Sphinx) -> CatalogData | None:
    """The resolved catalog, or None after one warning naming the fix."""
    try:
        return _data.load(_confpath(app, app.config.metric_catalog_data))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        if not getattr(app, "_metric_catalog_warned", False):
            app._metric_catalog_warned = True  # type: ignore[attr-defined]
            _logger.warning(
                "metric_catalog: cannot read the resolved catalog %s (%s); run the generator "
                "(metric-catalog generate) or set metric_catalog_data in conf.py",
                app.config.metric_catalog_data,
                exc,
                type="metric_catalog",
                subtype="data",
            )
        return None


def catalog_files(app: Sphinx) -> list[str]:
    """Project-relative paths of the catalog's YAML files (empty, with a warning, if unreadable)."""
    data = _load(app)
    return [] if data is None else sorted(data.files)


# --- nodes ------------------------------------------------------------------------------


class catalog_owner(nodes.General, nodes.Element):  # type: ignore[misc]  # noqa: N801
    """An owner page's body; its children hold the text the search index reads."""


class catalog_index(nodes.General, nodes.Element):  # type: ignore[misc]  # noqa: N801
    """The index placeholder the index script fills from :data:`DATA_FILE`."""


def _href(translator: HTML5Translator) -> _html.Href:
    builder = translator.builder
    current = builder.current_docname
    domain: CatalogDomain = builder.env.domains[_DOMAIN]  # type: ignore[assignment]
    pages = {path: docname for docname, (path, _) in domain.pages.items()}

    def href(target: str) -> str:
        kind, _, path = target.partition(":")
        if kind == "page":
            docname = pages.get(path)
            return "" if docname is None else builder.get_relative_uri(current, docname)
        name = f"{SOURCE_PAGES_DIR}/{PurePosixPath(path).name}"
        return _relative(builder.get_target_uri(current), builder.get_target_uri(name))

    return href


def _relative(base: str, target: str) -> str:
    depth = base.count("/")
    return "../" * depth + target


def _visit_owner(translator: HTML5Translator, node: catalog_owner) -> None:
    data = _load(translator.builder.app)
    path = str(node["path"])
    if data is None or path not in data.files:
        raise nodes.SkipNode
    translator.body.append(_html.owner_page_html(data, path, _href(translator)))
    raise nodes.SkipNode


def _visit_index(translator: HTML5Translator, node: catalog_index) -> None:
    builder = translator.builder
    uri = builder.get_target_uri(builder.current_docname)
    root = _relative(uri, "")
    here = uri.rpartition("/")[0] + "/" if "/" in uri else ""
    src = f"{root}_static/{DATA_FILE}?v={escape(str(node['digest']))}"
    translator.body.append(
        f'<div class="mc-index mc-wide" data-root="{escape(root)}" data-dir="{escape(here)}">'
        '<form class="mc-filters" role="search" onsubmit="return false">'
        '<label>Find <input type="search" name="q" data-filter="q" '
        'placeholder="name, logger key or Prometheus name"></label>'
        '<span class="mc-selects"></span>'
        '<span class="mc-count" aria-live="polite">Loading the index…</span></form>'
        '<table class="mc-table mc-index-table"><colgroup><col class="mc-c-name">'
        '<col class="mc-c-key"><col class="mc-c-owner"><col class="mc-c-kind">'
        '<col class="mc-c-stability"><col></colgroup>'
        "<thead><tr><th>Series <small>(Prometheus name)</small></th><th>Logger key</th>"
        "<th>Owner</th><th>Kind, unit</th><th>Stability</th><th>Description</th></tr>"
        "</thead>"
        "<tbody></tbody></table>"
        '<p class="mc-more" hidden><span class="mc-more-count"></span> '
        '<button type="button" class="mc-more-page"></button> '
        '<button type="button" class="mc-more-all"></button></p>'
        "<noscript><p>The index needs JavaScript; every series is on its owner's page.</p>"
        "</noscript>"
        f'<script src="{src}" defer></script></div>'
    )
    raise nodes.SkipNode


def _visit_plain(translator: Any, node: nodes.Element) -> None:
    """Other builders show the children (the entries' plain text)."""


def _depart_plain(translator: Any, node: nodes.Element) -> None:
    """Nothing to close."""


# --- directives --------------------------------------------------------------------------


class OwnerDirective(SphinxDirective):
    """``metric-catalog-owner <catalog file path>``: that file's summary table and entries."""

    required_arguments = 1
    # A catalog file's path may hold spaces: the whole argument is the one path.
    final_argument_whitespace = True
    has_content = False

    def run(self) -> list[nodes.Node]:
        """Record the page's dependencies and search entries; return its body node."""
        path = self.arguments[0]
        data = _load(self.env.app)
        if data is None:
            return []
        if path not in data.files:
            msg = (
                f"metric-catalog-owner: {path!r} is not a file of the resolved catalog "
                f"{self.config.metric_catalog_data}; run the generator again"
            )
            raise self.error(msg)
        domain: CatalogDomain = self.env.domains[_DOMAIN]  # type: ignore[assignment]
        rows = data.by_file.get(path, [])
        domain.note_page(self.env.docname, path, data.page_hash(path), data.digest)
        node = catalog_owner(path=path)
        entry = data.files[path]
        words = [str(entry.get("owner", "")), str(entry.get("description", ""))]
        names = []
        for row in rows:
            words.append(str(row.get("description", "")))
            names += [
                str(row["name"]),
                " ".join(_html.logger_keys(row)),
                str((row.get("prometheus") or {}).get("name", "")),
            ]
        # The HTML builders show the body from the resolved catalog and index these words:
        # the owner and the descriptions. Series names, logger keys and Prometheus names
        # are found by the search page's catalog results (from the index data), so they
        # stay out of Sphinx's search index ("no-search"); other builders show both.
        node += nodes.paragraph("", "", nodes.Text("\n".join(w for w in words if w)))
        node += nodes.paragraph(
            "", "", nodes.Text("\n".join(n for n in names if n)), classes=["no-search"]
        )
        return [node]


class IndexDirective(SphinxDirective):
    """``metric-catalog-index``: the index of every series, rendered in the browser."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        """Note the page as an index page and return the placeholder."""
        data = _load(self.env.app)
        digest = "" if data is None else data.digest
        domain: CatalogDomain = self.env.domains[_DOMAIN]  # type: ignore[assignment]
        domain.index_pages[self.env.docname] = digest
        count = 0 if data is None else len(data.rows)
        files = 0 if data is None else len(data.files)
        intro = nodes.paragraph("", index_intro(count, files))
        return [intro, catalog_index(digest=digest)]


def index_intro(series: int, files: int) -> str:
    """The index page's first paragraph: how many series from how many files, and how to narrow."""
    return (
        f"Every series in the catalog, sorted by name: {series} series from {files} catalog "
        f"{'file' if files == 1 else 'files'}. The series name links to its entry on its "
        "owner's page; narrow the table by owner, kind, stability or attribute, or find a "
        "series by its name, logger key or Prometheus name."
    )


# --- search entries and per-page dependencies ----------------------------------------


class CatalogDomain(Domain):
    """Which page shows which catalog file, and what each page was built from.

    Kept in the environment between builds, so :func:`_outdated` can tell which
    pages a new resolved catalog changes. Series are found by the index's find
    box and by the search page's catalog results (both read the index data), so
    10,000 series add nothing to Sphinx's search index.
    """

    name = _DOMAIN
    label = "Metric catalog"
    object_types: ClassVar[dict[str, ObjType]] = {}
    initial_data: ClassVar[dict[str, Any]] = {"pages": {}, "index_pages": {}, "page_digests": {}}

    @property
    def pages(self) -> dict[str, tuple[str, str]]:
        """docname -> (catalog file path, page hash when it was read)."""
        pages: dict[str, tuple[str, str]] = self.data.setdefault("pages", {})
        return pages

    @property
    def page_digests(self) -> dict[str, str]:
        """docname -> digest of the resolved catalog when the owner page was read."""
        digests: dict[str, str] = self.data.setdefault("page_digests", {})
        return digests

    @property
    def index_pages(self) -> dict[str, str]:
        """docname -> digest of the resolved catalog when the index page was read."""
        index_pages: dict[str, str] = self.data.setdefault("index_pages", {})
        return index_pages

    def note_page(self, docname: str, path: str, page_hash: str, digest: str) -> None:
        """Record that ``docname`` shows catalog file ``path``, as hashed now."""
        self.pages[docname] = (path, page_hash)
        self.page_digests[docname] = digest

    def clear_doc(self, docname: str) -> None:
        """Forget a page that is about to be re-read or was removed."""
        self.pages.pop(docname, None)
        self.page_digests.pop(docname, None)
        self.index_pages.pop(docname, None)

    def merge_domaindata(self, docnames: Set[str], otherdata: dict[str, Any]) -> None:
        """Take over the pages a parallel reader read."""
        for key in ("pages", "page_digests", "index_pages"):
            mine = self.data.setdefault(key, {})
            for docname, value in otherdata.get(key, {}).items():
                if docname in docnames:
                    mine[docname] = value

    def resolve_any_xref(self, *args: Any, **kwargs: Any) -> list[tuple[str, nodes.Element]]:
        """The domain has no roles: nothing to resolve."""
        return []

    def get_objects(self) -> Iterator[tuple[str, str, str, str, str, int]]:
        """No Sphinx search objects (see the class docstring)."""
        return iter(())


def _outdated(
    app: Sphinx, env: BuildEnvironment, added: Set[str], changed: Set[str], removed: Set[str]
) -> list[str]:
    """Pages whose slice of the resolved catalog changed since they were read.

    When the file's bytes hash to the digest every page was read with, nothing
    changed and the file is not even parsed.
    """
    domain: CatalogDomain = env.domains[_DOMAIN]  # type: ignore[assignment]
    try:
        digest = _data.file_digest(_confpath(app, app.config.metric_catalog_data))
    except OSError:
        digest = None
    digests = {*domain.index_pages.values(), *domain.page_digests.values()}
    if digest is not None and digests <= {digest}:
        return []
    data = _load(app)
    if data is None:
        return []
    skip = added | changed | removed
    outdated = []
    for docname, (path, page_hash) in domain.pages.items():
        if docname in skip:
            continue
        if data.page_hash(path) != page_hash:
            outdated.append(docname)
        else:  # read from an older catalog, still current: no need to parse next time
            domain.page_digests[docname] = data.digest
    outdated += [
        docname
        for docname, index_digest in domain.index_pages.items()
        if docname not in skip and index_digest != data.digest
    ]
    return outdated


# --- the index data -------------------------------------------------------------------


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


def _write_index_data(app: Sphinx) -> None:
    """Write ``_static/`` :data:`DATA_FILE` unless it already holds this catalog."""
    domain: CatalogDomain = app.env.domains[_DOMAIN]  # type: ignore[assignment]
    if not domain.index_pages:
        return
    try:
        digest = _data.file_digest(_confpath(app, app.config.metric_catalog_data))
    except OSError:
        return
    target = Path(app.outdir) / "_static" / DATA_FILE
    stamp = f"// metric-catalog index data {_ENV_VERSION} {digest}\n"
    pages = {path: docname for docname, (path, _) in domain.pages.items()}
    page_uri = {path: app.builder.get_target_uri(doc) for path, doc in pages.items()}
    stamp += f"// {hashlib.sha256(json.dumps(page_uri, sort_keys=True).encode()).hexdigest()}\n"
    try:
        with target.open(encoding="utf-8") as handle:
            if handle.readline() + handle.readline() == stamp:
                return
    except OSError:
        pass
    data = _load(app)
    if data is None:
        return
    payload = json.dumps(
        index_data(data, page_uri), ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")
    packed = base64.b64encode(gzip.compress(payload, compresslevel=6, mtime=0)).decode("ascii")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(stamp + f'window.metricCatalogIndexData = "{packed}";\n', encoding="utf-8")


# --- YAML source pages ------------------------------------------------------------------


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


def _collect_pages(app: Sphinx) -> Iterator[tuple[str, dict[str, Any], str]]:
    """The YAML pages whose file changed since they were last written (all, the first time).

    Also writes the index data first, so the search page (written after these
    pages) can load it.
    """
    _write_index_data(app)
    root = _confpath(app, app.config.metric_catalog_root)
    stamps_path = _stamps_path(app)
    try:
        saved = json.loads(stamps_path.read_text(encoding="utf-8"))
        stamps: dict[str, str] = dict(saved["pages"])
        known: list[str] = list(saved["files"])
        known_digest = str(saved["digest"])
    except (OSError, ValueError, KeyError, TypeError):
        stamps, known, known_digest = {}, [], ""
    try:
        digest = _data.file_digest(_confpath(app, app.config.metric_catalog_data))
    except OSError:
        digest = ""
    if digest and digest == known_digest:
        files = known  # the same resolved catalog as last time: no need to parse it
    else:
        data = _load(app)
        files = [] if data is None else sorted(data.files)
    fresh: dict[str, str] = {}
    for relative in files:
        path = root / relative
        try:
            raw = path.read_bytes()
        except OSError as exc:
            _logger.warning(
                "metric_catalog: cannot read catalog file %s for its source page (%s)",
                relative,
                exc,
                type="metric_catalog",
                subtype="source",
            )
            continue
        name = f"{SOURCE_PAGES_DIR}/{PurePosixPath(relative).name}"
        stamp = hashlib.sha256(raw + f"\0{_ENV_VERSION}\0{relative}".encode()).hexdigest()
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


def _page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """The search page loads the index data too: it lists the catalog's matching series."""
    if pagename != "search" or app.builder.format != "html":
        return
    domain: CatalogDomain = app.env.domains[_DOMAIN]  # type: ignore[assignment]
    if domain.index_pages:
        app.add_js_file(DATA_FILE, defer="defer")


def _copy_dashboards(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source = _confpath(app, app.config.metric_catalog_dashboards_dir)
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
            destination.write_bytes(minified_json(path.read_bytes()))
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


def _set_by_user(config: Config, name: str) -> bool:
    """Whether ``conf.py`` or a ``-D`` override gives ``name`` (rather than its default)."""
    raw = getattr(config, "_raw_config", None)
    if isinstance(raw, dict):
        return name in raw or name in config.overrides
    return bool(config[name] != config.values[name].default(config))  # pragma: no cover


def _default_title(app: Sphinx, config: Config) -> None:
    """``html_title`` from the catalog's configured title, unless ``conf.py`` sets it."""
    if _set_by_user(config, "html_title"):
        return
    data = _load(app)
    if data is not None and data.title:
        config.html_title = data.title


def _add_static(app: Sphinx) -> None:
    static = str(STATIC_DIR)
    if static not in app.config.html_static_path:
        app.config.html_static_path.append(static)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the config values, nodes, directives, domain, static files and hooks."""
    app.add_config_value(
        "metric_catalog_data", "metrics/catalog.json", "env", types=frozenset({str})
    )
    app.add_config_value("metric_catalog_root", "..", "env", types=frozenset({str}))
    app.add_config_value(
        "metric_catalog_dashboards_dir", "dashboards", "html", types=frozenset({str})
    )
    plain = (_visit_plain, _depart_plain)
    for node in (catalog_owner, catalog_index):
        visit = _visit_owner if node is catalog_owner else _visit_index
        app.add_node(
            node, html=(visit, _depart_plain), text=plain, latex=plain, man=plain, texinfo=plain
        )
    app.add_directive("metric-catalog-owner", OwnerDirective)
    app.add_directive("metric-catalog-index", IndexDirective)
    app.add_domain(CatalogDomain)
    app.add_post_transform(_wbr.BreakAfterSeparators)
    app.add_css_file(CSS_FILE)
    app.add_js_file(JS_FILE, defer="defer")
    app.connect("config-inited", _default_title)
    app.connect("builder-inited", _add_static)
    app.connect("env-get-outdated", _outdated)
    app.connect("html-collect-pages", _collect_pages)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy_dashboards)
    return {
        "version": _VERSION,
        "env_version": _ENV_VERSION,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
