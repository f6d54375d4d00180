"""Sphinx extension: publish the catalog YAML and the dashboards next to the docs.

Every ``catalog/*.yaml`` becomes ``catalog-source/<name>.yaml.html``, a themed
page of the file with one ``#L<line>`` anchor per line, so the catalog pages'
``catalog/x.yaml:12`` links land on the row even without a code host.
``docs/dashboards/*.json`` (not Sphinx sources) are copied to ``dashboards/``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from markupsafe import escape
from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexers import YamlLexer  # type: ignore[import-untyped]
from sphinx.application import Sphinx

__all__ = ["SOURCE_PAGES_DIR", "render_source", "setup"]

SOURCE_PAGES_DIR = "catalog-source"
"""Site folder of the YAML pages; ``codegen.render_docs`` links into it."""


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


def _catalog_dir(app: Sphinx) -> Path:
    configured: str = app.config.catalog_source_dir
    return (Path(app.confdir) / configured).resolve()


def _collect_pages(app: Sphinx) -> Iterator[tuple[str, dict[str, Any], str]]:
    catalog = _catalog_dir(app)
    if not catalog.is_dir():
        return
    for path in sorted(catalog.glob("*.yaml")):
        title = f"catalog/{path.name}"
        body = (
            f"<h1>{escape(title)}</h1>\n"
            "<p>The catalog file as committed; each line number is a link anchor.</p>\n"
            + render_source(path.read_text(encoding="utf-8"))
        )
        yield f"{SOURCE_PAGES_DIR}/{path.name}", {"title": title, "body": body}, "page.html"


def _copy_dashboards(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    dashboards: str = app.config.catalog_dashboards_dir
    source = Path(app.confdir) / dashboards
    if not source.is_dir():
        return
    target = Path(app.outdir) / "dashboards"
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.json")):
        shutil.copyfile(path, target / path.name)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the config values and the page and copy hooks."""
    app.add_config_value("catalog_source_dir", "../catalog", "html", types=frozenset({str}))
    app.add_config_value("catalog_dashboards_dir", "dashboards", "html", types=frozenset({str}))
    app.connect("html-collect-pages", _collect_pages)
    app.connect("build-finished", _copy_dashboards)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
