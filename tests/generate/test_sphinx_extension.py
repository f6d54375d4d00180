"""metric_catalog.sphinx in a bare Sphinx project, as an adopter would use it.

Each test builds a tiny project (reStructuredText, the basic theme, the
extension and a resolved catalog naming one YAML file) with ``-W`` in a child
process, and looks at the HTML output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.generate.docs import render_catalog_data
from metric_catalog import sphinx as catalog_sphinx
from metric_catalog.sphinx._wbr import split_points
from tests.docs_fixtures import fixture_catalog

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


def _build(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", *options, "docs", "docs/_build"],
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


def _owner_project(tmp_path: Path, catalog: Catalog) -> Path:
    """A project whose pages are the owner pages and index of ``catalog`` (rst stubs)."""
    root = _project(tmp_path)
    docs = root / "docs"
    (docs / "metrics" / "catalog.json").write_text(render_catalog_data(catalog), encoding="utf-8")
    for catalog_file in catalog.files:
        (root / catalog_file.path).write_text("# fixture\n" * 210, encoding="utf-8")
        (docs / "metrics" / f"{catalog_file.module}.rst").write_text(
            f"{catalog_file.module}\n{'=' * len(catalog_file.module)}\n\n"
            f".. metric-catalog-owner:: {catalog_file.path}\n",
            encoding="utf-8",
        )
    modules = "\n".join(f"   {f.module}" for f in catalog.files)
    (docs / "metrics" / "index.rst").write_text(
        f"Metric index\n============\n\n.. metric-catalog-index::\n\n.. toctree::\n\n{modules}\n",
        encoding="utf-8",
    )
    (docs / "index.rst").write_text(
        "Catalog\n=======\n\n.. toctree::\n\n   metrics/index\n", encoding="utf-8"
    )
    return root


def _mtimes(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in sorted((out / "metrics").glob("*.html"))}


def test_one_changed_owner_rewrites_only_its_page(tmp_path: Path) -> None:
    """No change: no page is written. One row changed: its owner page and the index data only."""
    catalog = fixture_catalog()
    root = _owner_project(tmp_path, catalog)
    out = root / "docs" / "_build"
    assert _build(root).returncode == 0
    data_file = out / "_static" / catalog_sphinx.DATA_FILE
    first, first_data = _mtimes(out), data_file.read_bytes()
    assert set(first) == {"fixture_alpha.html", "fixture_hostile.html", "index.html"}
    assert 'id="rl-fixture-tokens"' in (out / "metrics" / "fixture_alpha.html").read_text("utf-8")

    assert _build(root).returncode == 0
    assert _mtimes(out) == first
    assert data_file.read_bytes() == first_data

    files = {f.path: f for f in catalog.files}
    alpha = files["catalog/fixture_alpha.yaml"]
    edited = replace(
        alpha, teed=(replace(alpha.teed[0], description="Now edited."), *alpha.teed[1:])
    )
    changed = Catalog((edited, files["catalog/fixture_hostile.yaml"]))
    (root / "docs" / "metrics" / "catalog.json").write_text(
        render_catalog_data(changed), encoding="utf-8"
    )
    assert _build(root).returncode == 0
    after = _mtimes(out)
    assert after["fixture_hostile.html"] == first["fixture_hostile.html"]
    assert after["fixture_alpha.html"] != first["fixture_alpha.html"]
    assert "Now edited." in (out / "metrics" / "fixture_alpha.html").read_text("utf-8")
    assert data_file.read_bytes() != first_data


def test_stale_owner_page_is_an_error_naming_the_fix(tmp_path: Path) -> None:
    """A page naming a file the resolved catalog lacks fails the build and says to regenerate."""
    root = _owner_project(tmp_path, fixture_catalog())
    (root / "docs" / "metrics" / "fixture_alpha.rst").write_text(
        "gone\n====\n\n.. metric-catalog-owner:: catalog/gone.yaml\n", encoding="utf-8"
    )
    done = _build(root)
    assert done.returncode != 0
    assert "catalog/gone.yaml" in done.stderr
    assert "run the generator again" in done.stderr


def _titled(tmp_path: Path, title: str | None, extra: str = "") -> Path:
    root = _project(tmp_path, extra=extra)
    resolved: dict[str, object] = {"files": [{"path": "catalog/owner.yaml"}], "rows": []}
    if title is not None:
        resolved["title"] = title
    (root / "docs" / "metrics" / "catalog.json").write_text(json.dumps(resolved), encoding="utf-8")
    return root


def _html_title(root: Path) -> str:
    page = (root / "docs" / "_build" / "index.html").read_text(encoding="utf-8")
    start = page.index("<title>") + len("<title>")
    return page[start : page.index("</title>")]


@pytest.mark.parametrize(
    ("title", "extra", "expected"),
    [
        # conf.py says nothing: the catalog's configured title is the site's.
        ("myrl metrics", "", "Catalog &#8212; myrl metrics"),
        # conf.py's html_title wins over the catalog's.
        ("myrl metrics", 'html_title = "Our handbook"', "Catalog &#8212; Our handbook"),
        # No title in the resolved catalog (an older generate): Sphinx's default stays.
        (None, 'project = "proj"', "Catalog &#8212; proj  documentation"),
    ],
    ids=["from-the-catalog", "conf-py-wins", "sphinx-default"],
)
def test_the_site_title_follows_the_catalog_unless_conf_py_sets_it(
    tmp_path: Path, title: str | None, extra: str, expected: str
) -> None:
    """``title`` of [tool.metric-catalog] reaches html_title without repeating it in conf.py."""
    root = _titled(tmp_path, title, extra)
    done = _build(root)
    assert done.returncode == 0, done.stderr
    assert _html_title(root) == expected


def test_a_command_line_html_title_wins_over_the_catalog(tmp_path: Path) -> None:
    """``-D html_title=...`` is the user's choice too."""
    root = _titled(tmp_path, "myrl metrics")
    done = _build(root, "-D", "html_title=CLI")
    assert done.returncode == 0, done.stderr
    assert _html_title(root) == "Catalog &#8212; CLI"


def _search_terms(out: Path) -> set[str]:
    text = (out / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    return set(index["terms"])


def test_series_identifiers_stay_out_of_sphinx_search_index_descriptions_stay_in(
    tmp_path: Path,
) -> None:
    """Names, logger keys and Prometheus names are found by the catalog results of the search
    page (the index data), so Sphinx's own index holds only the owner and the descriptions."""
    root = _owner_project(tmp_path, fixture_catalog())
    done = _build(root)
    assert done.returncode == 0, done.stderr
    terms = _search_terms(root / "docs" / "_build")
    assert any(term.startswith("quokkaboost") for term in terms)  # a description word
    assert "rollout" in terms
    for identifier in ("num_tokens", "old_reward", "rl_fixture_tokens_total"):
        assert identifier not in terms
    # The index data the search page reads still has every series, key and Prometheus name.
    data = (root / "docs" / "_build" / "_static" / catalog_sphinx.DATA_FILE).read_text("utf-8")
    assert "metricCatalogIndexData" in data


def test_other_builders_still_show_every_series_name_and_key(tmp_path: Path) -> None:
    """The text builder has no HTML body: its page lists the names and keys as plain text."""
    root = _owner_project(tmp_path, fixture_catalog())
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "text", "docs", "docs/_text"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    page = (root / "docs" / "_text" / "metrics" / "fixture_alpha.txt").read_text("utf-8")
    shown = ("rl.fixture.tokens", "train/num_tokens", "rl_fixture_tokens_total", "quokkaboost")
    for text in shown:
        assert text in page


def test_the_site_serves_dashboards_minified_and_rewrites_only_changed_ones(
    tmp_path: Path,
) -> None:
    """The same JSON document, without the generated file's indentation; no copy per build."""
    root = _project(tmp_path)
    board = root / "docs" / "dashboards" / "owner.json"
    document = {"__generated__": "x", "panels": [{"id": n, "title": f"rl.x{n}"} for n in range(9)]}
    board.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    (root / "docs" / "dashboards" / "broken.json").write_text("{not json\n", encoding="utf-8")
    assert _build(root).returncode == 0
    served = root / "docs" / "_build" / "dashboards" / "owner.json"
    assert json.loads(served.read_text(encoding="utf-8")) == document
    assert served.stat().st_size < board.stat().st_size
    assert "\n" not in served.read_text(encoding="utf-8").rstrip("\n")
    broken = root / "docs" / "_build" / "dashboards" / "broken.json"
    assert broken.read_text(encoding="utf-8") == "{not json\n"  # not JSON: copied as is
    first = served.stat().st_mtime_ns
    served_bytes = served.read_bytes()
    assert _build(root).returncode == 0
    assert served.read_bytes() == served_bytes
    assert served.stat().st_mtime_ns == first  # unchanged source: not rewritten
    document["panels"] = document["panels"][:3]
    board.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    assert _build(root).returncode == 0
    assert json.loads(served.read_text(encoding="utf-8")) == document


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{\n  "a": [1, 2],\n  "b": "x y"\n}\n', b'{"a":[1,2],"b":"x y"}\n'),
        ('{"t": "caf\u00e9 \u2014 ok"}'.encode(), '{"t":"caf\u00e9 \u2014 ok"}\n'.encode()),
        (b"not json", b"not json"),
    ],
)
def test_minified_json_keeps_the_document(raw: bytes, expected: bytes) -> None:
    """Only insignificant whitespace goes; text that is not JSON is kept byte for byte."""
    assert catalog_sphinx.minified_json(raw) == expected


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("metric_catalog.codegen", ["metric_", "catalog.", "codegen"]),
        ("myrl/telemetry/catalog/", ["myrl/", "telemetry/", "catalog/"]),
        ("--dashboards-dir", ["--dashboards-dir"]),  # no break after a hyphen
        ("validation-{rl.dataset}", ["validation-{rl.", "dataset}"]),
        ("__init__.py", ["__init__.", "py"]),  # a run of separators stays together
        ("a. b", ["a. b"]),  # before a space: the space is the break
        ("../x", ["../x"]),
        ("a__b", ["a__", "b"]),
        ("", [""]),
    ],
)
def test_inline_code_breaks_only_after_dots_underscores_and_slashes(
    text: str, parts: list[str]
) -> None:
    """Where the post-transform puts <wbr> in inline code; the parts join back to the text."""
    assert split_points(text) == parts
    assert "".join(parts) == text
