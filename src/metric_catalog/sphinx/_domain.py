"""The extension's domain: which page shows which catalog file, and when it is stale."""

from __future__ import annotations

from collections.abc import Iterator, Set
from typing import Any, ClassVar

from docutils import nodes  # type: ignore[import-untyped]
from sphinx.application import Sphinx
from sphinx.domains import Domain, ObjType
from sphinx.environment import BuildEnvironment

from . import _data
from ._site import DOMAIN, confpath, load_catalog

__all__ = ["CatalogDomain", "outdated"]


class CatalogDomain(Domain):
    """Which page shows which catalog file, and what each page was built from.

    Kept in the environment between builds, so :func:`outdated` can tell which
    pages a new resolved catalog changes. Series are found by the index's find
    box and by the search page's catalog results (both read the index data), so
    10,000 series add nothing to Sphinx's search index.
    """

    name = DOMAIN
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


def outdated(
    app: Sphinx, env: BuildEnvironment, added: Set[str], changed: Set[str], removed: Set[str]
) -> list[str]:
    """Pages whose slice of the resolved catalog changed since they were read.

    When the file's bytes hash to the digest every page was read with, nothing
    changed and the file is not even parsed.
    """
    domain: CatalogDomain = env.domains[DOMAIN]  # type: ignore[assignment]
    try:
        digest = _data.file_digest(confpath(app, app.config.metric_catalog_data))
    except OSError:
        digest = None
    digests = {*domain.index_pages.values(), *domain.page_digests.values()}
    if digest is not None and digests <= {digest}:
        return []
    data = load_catalog(app)
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
