"""metric_catalog.sphinx in a bare Sphinx project, as an adopter would use it.

Each test builds a tiny project (reStructuredText, the basic theme, the
extension and a resolved catalog naming one YAML file) with ``-W`` in a child
process, and looks at the HTML output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from metric_catalog import sphinx as catalog_sphinx

_CONF = """\
extensions = ["metric_catalog.sphinx"]
html_theme = "basic"
{extra}
"""


def _project(tmp_path: Path, *, extra: str = "", data: bool = True) -> Path:
    """``tmp_path/proj``: catalog/owner.yaml, dashboards, docs/{conf.py,index.rst,metrics/}."""
    root = tmp_path / "proj"
    (root / "catalog").mkdir(parents=True)
    (root / "catalog" / "owner.yaml").write_text(
        "owner: pkg.owner\nmodule: owner\nrecorded:\n  - name: rl.x  # <b>bold</b>\n",
        encoding="utf-8",
    )
    docs = root / "docs"
    (docs / "metrics").mkdir(parents=True)
    (docs / "dashboards").mkdir()
    (docs / "dashboards" / "owner.json").write_text('{"__generated__": "x"}', encoding="utf-8")
    (docs / "conf.py").write_text(_CONF.format(extra=extra), encoding="utf-8")
    (docs / "index.rst").write_text("Catalog\n=======\n\nA page.\n", encoding="utf-8")
    if data:
        resolved = {"schema_version": 1, "files": [{"path": "catalog/owner.yaml"}], "rows": []}
        (docs / "metrics" / "catalog.json").write_text(json.dumps(resolved), encoding="utf-8")
    return root


def _build(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "docs", "docs/_build"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_one_extensions_line_publishes_sources_styles_and_dashboards(tmp_path: Path) -> None:
    """No _static or _ext copies: the YAML page, CSS, JS and dashboards all appear."""
    root = _project(tmp_path)
    done = _build(root)
    assert done.returncode == 0, done.stderr
    out = root / "docs" / "_build"
    page = (out / "catalog-source" / "owner.yaml.html").read_text(encoding="utf-8")
    assert 'id="L4"' in page
    assert "<b>bold</b>" not in page
    assert "&lt;b&gt;" in page
    for static in (catalog_sphinx.CSS_FILE, catalog_sphinx.JS_FILE):
        assert (out / "_static" / static).is_file()
        assert (catalog_sphinx.STATIC_DIR / static).is_file()
        assert f"_static/{static}" in (out / "index.html").read_text(encoding="utf-8")
    assert (out / "dashboards" / "owner.json").is_file()


def test_paths_follow_the_configuration(tmp_path: Path) -> None:
    """metric_catalog_data / _root / _dashboards_dir move every input."""
    root = _project(tmp_path, data=False)
    docs = root / "docs"
    (docs / "dashboards").rename(docs / "boards")
    (root / "catalog").rename(root / "telemetry")
    resolved = {"files": [{"path": "telemetry/owner.yaml"}], "rows": []}
    (docs / "resolved.json").write_text(json.dumps(resolved), encoding="utf-8")
    (docs / "conf.py").write_text(
        _CONF.format(
            extra='metric_catalog_data = "resolved.json"\n'
            'metric_catalog_root = ".."\n'
            'metric_catalog_dashboards_dir = "boards"\n'
        ),
        encoding="utf-8",
    )
    done = _build(root)
    assert done.returncode == 0, done.stderr
    assert (docs / "_build" / "catalog-source" / "owner.yaml.html").is_file()
    assert (docs / "_build" / "dashboards" / "owner.json").is_file()


def test_missing_catalog_data_is_a_warning_naming_the_fix(tmp_path: Path) -> None:
    """Without the resolved catalog the build warns (an error under -W) and says what to run."""
    done = _build(_project(tmp_path, data=False))
    assert done.returncode != 0
    assert "metrics/catalog.json" in done.stderr
    assert "metric-catalog generate" in done.stderr
