"""Grafana dashboards, one per owner (stub: issue 7 fills it)."""

from __future__ import annotations

from codegen.model import Catalog

__all__ = ["render_dashboards"]


def render_dashboards(catalog: Catalog) -> dict[str, str]:
    """Map repo-relative output path (``docs/dashboards/<module>.json``) to JSON text."""
    del catalog
    return {}
