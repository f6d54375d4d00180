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

Inside: ``_site`` (fixed names, ``conf.py`` values, reading the resolved
catalog), ``_directives`` (the two directives and their nodes), ``_domain``
(which page shows which file, and which pages are stale), ``_build`` (index
data, YAML source pages, dashboards), ``_data`` and ``_html`` (the catalog
data and the owner pages' HTML), ``_wbr`` (line-break hints).
"""

from __future__ import annotations

from typing import Any, Final

from sphinx.application import Sphinx

from . import _wbr
from ._build import (
    collect_pages,
    copy_dashboards,
    index_data,
    minified_json,
    page_context,
    render_source,
)
from ._data import series_anchor
from ._directives import (
    IndexDirective,
    OwnerDirective,
    catalog_index,
    catalog_owner,
    depart_plain,
    index_intro,
    visit_index,
    visit_owner,
    visit_plain,
)
from ._domain import CatalogDomain, outdated
from ._site import (
    CSS_FILE,
    DATA_FILE,
    ENV_VERSION,
    JS_FILE,
    SOURCE_PAGES_DIR,
    STATIC_DIR,
    add_static,
    catalog_files,
    default_title,
)

__all__ = [
    "CSS_FILE",
    "DATA_FILE",
    "JS_FILE",
    "SOURCE_PAGES_DIR",
    "STATIC_DIR",
    "CatalogDomain",
    "catalog_files",
    "index_data",
    "index_intro",
    "minified_json",
    "render_source",
    "series_anchor",
    "setup",
]

_VERSION: Final = "3"


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the config values, nodes, directives, domain, static files and hooks."""
    app.add_config_value(
        "metric_catalog_data", "metrics/catalog.json", "env", types=frozenset({str})
    )
    app.add_config_value("metric_catalog_root", "..", "env", types=frozenset({str}))
    app.add_config_value(
        "metric_catalog_dashboards_dir", "dashboards", "html", types=frozenset({str})
    )
    plain = (visit_plain, depart_plain)
    for node, visit in ((catalog_owner, visit_owner), (catalog_index, visit_index)):
        app.add_node(
            node, html=(visit, depart_plain), text=plain, latex=plain, man=plain, texinfo=plain
        )
    app.add_directive("metric-catalog-owner", OwnerDirective)
    app.add_directive("metric-catalog-index", IndexDirective)
    app.add_domain(CatalogDomain)
    app.add_post_transform(_wbr.BreakAfterSeparators)
    app.add_css_file(CSS_FILE)
    app.add_js_file(JS_FILE, defer="defer")
    app.connect("config-inited", default_title)
    app.connect("builder-inited", add_static)
    app.connect("env-get-outdated", outdated)
    app.connect("html-collect-pages", collect_pages)
    app.connect("html-page-context", page_context)
    app.connect("build-finished", copy_dashboards)
    return {
        "version": _VERSION,
        "env_version": ENV_VERSION,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
