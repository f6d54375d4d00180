"""The nodes and directives of the catalog pages: ``metric-catalog-owner`` and ``-index``."""

from __future__ import annotations

from html import escape
from pathlib import PurePosixPath
from typing import Any

from docutils import nodes  # type: ignore[import-untyped]
from sphinx.util.docutils import SphinxDirective
from sphinx.writers.html5 import HTML5Translator

from . import _html
from ._domain import CatalogDomain
from ._site import DATA_FILE, DOMAIN, SOURCE_PAGES_DIR, load_catalog

__all__ = [
    "IndexDirective",
    "OwnerDirective",
    "catalog_index",
    "catalog_owner",
    "depart_plain",
    "index_intro",
    "visit_index",
    "visit_owner",
    "visit_plain",
]


class catalog_owner(nodes.General, nodes.Element):  # type: ignore[misc]  # noqa: N801
    """An owner page's body; its children hold the text the search index reads."""


class catalog_index(nodes.General, nodes.Element):  # type: ignore[misc]  # noqa: N801
    """The index placeholder the index script fills from :data:`DATA_FILE`."""


def _href(translator: HTML5Translator) -> _html.Href:
    builder = translator.builder
    current = builder.current_docname
    domain: CatalogDomain = builder.env.domains[DOMAIN]  # type: ignore[assignment]
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


def visit_owner(translator: HTML5Translator, node: catalog_owner) -> None:
    """HTML of an owner page's body, straight from the resolved catalog."""
    data = load_catalog(translator.builder.app)
    path = str(node["path"])
    if data is None or path not in data.files:
        raise nodes.SkipNode
    translator.body.append(_html.owner_page_html(data, path, _href(translator)))
    raise nodes.SkipNode


def visit_index(translator: HTML5Translator, node: catalog_index) -> None:
    """The index placeholder: filters, an empty table, and the data script."""
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


def visit_plain(translator: Any, node: nodes.Element) -> None:
    """Other builders show the children (the entries' plain text)."""


def depart_plain(translator: Any, node: nodes.Element) -> None:
    """Nothing to close."""


class OwnerDirective(SphinxDirective):
    """``metric-catalog-owner <catalog file path>``: that file's summary table and entries."""

    required_arguments = 1
    # A catalog file's path may hold spaces: the whole argument is the one path.
    final_argument_whitespace = True
    has_content = False

    def run(self) -> list[nodes.Node]:
        """Record the page's dependencies and search entries; return its body node."""
        path = self.arguments[0]
        data = load_catalog(self.env.app)
        if data is None:
            return []
        if path not in data.files:
            msg = (
                f"metric-catalog-owner: {path!r} is not a file of the resolved catalog "
                f"{self.config.metric_catalog_data}; run the generator again"
            )
            raise self.error(msg)
        domain: CatalogDomain = self.env.domains[DOMAIN]  # type: ignore[assignment]
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
        data = load_catalog(self.env.app)
        digest = "" if data is None else data.digest
        domain: CatalogDomain = self.env.domains[DOMAIN]  # type: ignore[assignment]
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
