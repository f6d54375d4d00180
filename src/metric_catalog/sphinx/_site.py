"""What the extension's modules share: fixed names, ``conf.py`` values, the resolved catalog."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

from . import _data
from ._data import CatalogData

__all__ = [
    "CSS_FILE",
    "DATA_FILE",
    "DOMAIN",
    "ENV_VERSION",
    "JS_FILE",
    "SOURCE_PAGES_DIR",
    "STATIC_DIR",
    "add_static",
    "catalog_files",
    "confpath",
    "default_title",
    "load_catalog",
    "logger",
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

ENV_VERSION: Final = int(
    hashlib.sha256(
        b"".join(path.read_bytes() for path in sorted(Path(__file__).parent.glob("*.py")))
    ).hexdigest()[:8],
    16,
)
"""Changes with the extension's code, so a new version re-reads every catalog page."""

DOMAIN: Final = "metric-catalog"
"""The name of :class:`~metric_catalog.sphinx.CatalogDomain`."""

logger = logging.getLogger("metric_catalog.sphinx")


def confpath(app: Sphinx, value: str) -> Path:
    """A ``conf.py`` path value, absolute (relative to the Sphinx source folder)."""
    return (Path(app.confdir) / value).resolve()


def load_catalog(app: Sphinx) -> CatalogData | None:
    """The resolved catalog, or None after one warning naming the fix."""
    try:
        return _data.load(confpath(app, app.config.metric_catalog_data))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        if not getattr(app, "_metric_catalog_warned", False):
            app._metric_catalog_warned = True  # type: ignore[attr-defined]
            logger.warning(
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
    data = load_catalog(app)
    return [] if data is None else sorted(data.files)


def _set_by_user(config: Config, name: str) -> bool:
    """Whether ``conf.py`` or a ``-D`` override gives ``name`` (rather than its default)."""
    raw = getattr(config, "_raw_config", None)
    if isinstance(raw, dict):
        return name in raw or name in config.overrides
    return bool(config[name] != config.values[name].default(config))  # pragma: no cover


def default_title(app: Sphinx, config: Config) -> None:
    """``html_title`` from the catalog's configured title, unless ``conf.py`` sets it."""
    if _set_by_user(config, "html_title"):
        return
    data = load_catalog(app)
    if data is not None and data.title:
        config.html_title = data.title


def add_static(app: Sphinx) -> None:
    """Add :data:`STATIC_DIR` to ``html_static_path`` (once)."""
    static = str(STATIC_DIR)
    if static not in app.config.html_static_path:
        app.config.html_static_path.append(static)
