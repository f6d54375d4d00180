"""Markdown pages for the docs site, one per owner plus the index (stub: issue 5 fills it)."""

from __future__ import annotations

from codegen.model import Catalog

__all__ = ["render_docs_pages"]


def render_docs_pages(catalog: Catalog) -> dict[str, str]:
    """Map repo-relative output path (``docs/metrics/<module>.md``) to page text."""
    del catalog
    return {}
