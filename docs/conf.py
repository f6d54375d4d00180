"""Sphinx configuration for the metric-catalog docs site (``make docs``).

MyST Markdown pages, the furo theme, autodoc for the ``metric_catalog`` API and
the package's own extension, ``metric_catalog.sphinx``, for the catalog pages'
styles and scripts, the YAML source pages they link to and the dashboards.
Generated pages under ``metrics/`` come from ``make generate``, as an adopter's
come from ``metric-catalog generate``.
"""

from __future__ import annotations

# The package and its extension come from the environment (`make setup` installs it
# editable), so a copy of docs/ elsewhere (the benchmarks) documents the same package.

project = "metric-catalog"
author = "metric-catalog contributors"
project_copyright = "metric-catalog contributors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "metric_catalog.sphinx",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "dashboards/*.json", "Thumbs.db", ".DS_Store"]

# Heading slugs are docutils section ids ("rl.reward.mean" -> "rl-reward-mean"),
# so `page.md#rl-reward-mean` links and the HTML ids are the same string.
myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3
myst_heading_slug_func = "docutils.nodes.make_id"
# Catalog text is shown verbatim: no curly quotes or dashes made from "--".
smartquotes = False

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autosummary_generate = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = "metric-catalog"
html_copy_source = False
html_show_sourcelink = False
# No general or module index pages: the theme links neither, and Sphinx rewrites them on
# every build, even when nothing changed (the catalog has its own index, metrics/index).
html_use_index = False
html_domain_indices = False

# metric_catalog.sphinx: the resolved catalog `make generate` writes, the project root its
# file paths are relative to, and the generated dashboards (these are the defaults).
metric_catalog_data = "metrics/catalog.json"
metric_catalog_root = ".."
metric_catalog_dashboards_dir = "dashboards"
