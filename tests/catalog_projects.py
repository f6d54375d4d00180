"""A catalog given as YAML text, written into a project folder and loaded, as tests need it."""

from __future__ import annotations

from pathlib import Path

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check

__all__ = ["loaded_catalog", "write_catalog"]


def write_catalog(root: Path, text: str, name: str = "catalog.yaml") -> Path:
    """``root`` as a project whose ``catalog/<name>`` holds ``text``; returns ``root``."""
    (root / "catalog").mkdir(parents=True, exist_ok=True)
    (root / "catalog" / name).write_text(text, encoding="utf-8")
    return root


def loaded_catalog(root: Path, text: str | None = None, name: str = "catalog.yaml") -> Catalog:
    """The valid catalog of the project at ``root`` (``text`` written in first, if given),
    loaded without the lint; the test fails with the diagnostics when it is not valid."""
    if text is not None:
        write_catalog(root, text, name)
    result = load_and_check(root=root, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.catalog is not None
    return result.catalog
