"""Sphinx extension for a metric catalog's docs site: ``extensions = ["metric_catalog.sphinx"]``.

What it adds to a Sphinx project whose catalog pages come from
``metric-catalog generate`` (``python -m codegen generate`` in this repo):

* the catalog pages' stylesheet and filter script (shipped with the package,
  registered on every HTML page; nothing to copy into ``_static/``);
* one page per catalog YAML file, ``catalog-source/<name>.yaml.html``: the file
  as committed with one ``#L<line>`` anchor per line, so the pages'
  ``catalog/x.yaml:12`` links land on the row even without a code host;
* the Grafana dashboards copied to ``dashboards/`` in the HTML output.

Configuration (``conf.py``), every path relative to the Sphinx source folder:

``metric_catalog_data`` (default ``"metrics/catalog.json"``)
    The resolved catalog ``generate`` writes next to the catalog pages; its
    ``files`` list names the YAML files to publish.
``metric_catalog_root`` (default ``".."``)
    The project root the catalog's file paths are relative to.
``metric_catalog_dashboards_dir`` (default ``"dashboards"``)
    Folder of the generated dashboards; skipped when it does not exist.

The runtime (``metric_catalog.vocabulary``, ``tee``, ``otel``) never imports
this package; it needs the ``docs`` extra (Sphinx, Pygments, MarkupSafe).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, Final

from markupsafe import escape
from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexers import YamlLexer  # type: ignore[import-untyped]
from sphinx.application import Sphinx
from sphinx.util import logging

__all__ = [
    "CSS_FILE",
    "JS_FILE",
    "SOURCE_PAGES_DIR",
    "STATIC_DIR",
    "catalog_files",
    "render_source",
    "setup",
]

SOURCE_PAGES_DIR: Final = "catalog-source"
"""Site folder of the YAML pages; ``codegen.render_docs`` links into it."""

STATIC_DIR: Final = Path(__file__).resolve().parent / "static"
"""The extension's stylesheet and scripts, added to ``html_static_path``."""

CSS_FILE: Final = "metric-catalog.css"
"""Stylesheet of the catalog pages (tables, filter panel, source pages)."""

JS_FILE: Final = "metric-catalog-filter.js"
"""Script of the index filters."""

_VERSION: Final = "2"
_logger = logging.getLogger(__name__)


def render_source(text: str) -> str:
    """YAML ``text`` highlighted, one ``<span id="L<n>">`` per line with a self link."""
    # nowrap gives one output line per input line, spans closed at each line end.
    highlighted = highlight(text, YamlLexer(), HtmlFormatter(nowrap=True))
    lines = []
    for number, line in enumerate(highlighted.splitlines(), start=1):
        lines.append(
            f'<span class="catalog-line" id="L{number}">'
            f'<a class="catalog-lineno" href="#L{number}">{number}</a>{line}</span>'
        )
    # Lines are display:block spans, so no newline between them (it would double-space).
    return '<div class="highlight catalog-yaml"><pre>' + "".join(lines) + "</pre></div>"


def _confpath(app: Sphinx, value: str) -> Path:
    return (Path(app.confdir) / value).resolve()


def catalog_files(app: Sphinx) -> list[str]:
    """Project-relative paths of the catalog's YAML files, from the resolved catalog.

    Empty (with a warning) when ``metric_catalog_data`` is missing or unreadable,
    so a site whose catalog was never generated still builds its other pages.
    """
    data_path = _confpath(app, app.config.metric_catalog_data)
    try:
        data = json.loads(data_path.read_text(encoding="utf-8"))
        return [str(entry["path"]) for entry in data["files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        _logger.warning(
            "metric_catalog: cannot read the resolved catalog %s (%s); run the generator "
            "(metric-catalog generate) or set metric_catalog_data in conf.py",
            app.config.metric_catalog_data,
            exc,
            type="metric_catalog",
            subtype="data",
        )
        return []


def _collect_pages(app: Sphinx) -> Iterator[tuple[str, dict[str, Any], str]]:
    root = _confpath(app, app.config.metric_catalog_root)
    for relative in catalog_files(app):
        path = root / relative
        title = relative
        body = (
            f"<h1>{escape(title)}</h1>\n"
            "<p>The catalog file as committed; each line number is a link anchor.</p>\n"
            + render_source(path.read_text(encoding="utf-8"))
        )
        name = PurePosixPath(relative).name
        yield f"{SOURCE_PAGES_DIR}/{name}", {"title": title, "body": body}, "page.html"


def _copy_dashboards(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source = _confpath(app, app.config.metric_catalog_dashboards_dir)
    if not source.is_dir():
        return
    target = Path(app.outdir) / "dashboards"
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.json")):
        shutil.copyfile(path, target / path.name)


def _add_static(app: Sphinx) -> None:
    static = str(STATIC_DIR)
    if static not in app.config.html_static_path:
        app.config.html_static_path.append(static)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the config values, the static files and the page and copy hooks."""
    app.add_config_value(
        "metric_catalog_data", "metrics/catalog.json", "html", types=frozenset({str})
    )
    app.add_config_value("metric_catalog_root", "..", "html", types=frozenset({str}))
    app.add_config_value(
        "metric_catalog_dashboards_dir", "dashboards", "html", types=frozenset({str})
    )
    app.add_css_file(CSS_FILE)
    app.add_js_file(JS_FILE, defer="defer")
    app.connect("builder-inited", _add_static)
    app.connect("html-collect-pages", _collect_pages)
    app.connect("build-finished", _copy_dashboards)
    return {"version": _VERSION, "parallel_read_safe": True, "parallel_write_safe": True}
