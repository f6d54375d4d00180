"""Sphinx configuration of myrl's docs: the catalog pages come from metric-catalog."""

project = "myrl"
extensions = ["myst_parser", "metric_catalog.sphinx"]
# What the catalog pages use: fields, colon fences, heading ids as generated.
myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3
myst_heading_slug_func = "docutils.nodes.make_id"
exclude_patterns = ["_build", "dashboards/*.json"]
smartquotes = False  # catalog text verbatim

# metric_catalog.sphinx: where generate wrote the resolved catalog, the project root.
# The site title (html_title) comes from `title` in [tool.metric-catalog]: not repeated here.
metric_catalog_data = "metrics/catalog.json"
metric_catalog_root = ".."
metric_catalog_dashboards_dir = "dashboards"
