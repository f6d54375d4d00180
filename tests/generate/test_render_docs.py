"""Docs pages renderer: escaping, anchors, deprecation, index completeness, determinism.

Pages are parsed with MyST's docutils parser (no Sphinx build), so each check
looks at what a reader would get, not at the Markdown source.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
from docutils import nodes  # type: ignore[import-untyped]
from docutils.core import publish_doctree  # type: ignore[import-untyped]
from myst_parser.parsers.docutils_ import Parser

from codegen.catalog.model import Catalog, CatalogFile
from codegen.config import Config
from codegen.generate import docs as render_docs
from codegen.generate.docs import escape_markdown, render_docs_pages, series_anchor
from codegen.generate.resolve import resolve_catalog
from codegen.generate.writer import is_generated
from metric_catalog import sphinx as catalog_sphinx
from metric_catalog import vocabulary
from metric_catalog.sphinx import _data as catalog_data
from tests.docs_fixtures import fixture_catalog, row

ROOT = Path(__file__).resolve().parents[2]
ALPHA = "docs/metrics/fixture_alpha.md"
HOSTILE = "docs/metrics/fixture_hostile.md"
INDEX = "docs/metrics/index.md"
DATA = "docs/metrics/catalog.json"

# The MyST settings docs/conf.py uses, for docutils.
_MYST_SETTINGS = {
    "myst_enable_extensions": ["colon_fence", "deflist", "fieldlist"],
    "myst_heading_anchors": 3,
    "myst_heading_slug_func": "docutils.nodes.make_id",
    # Without Sphinx, links to other pages cannot resolve; keep them as plain URIs.
    "myst_all_links_external": True,
    "report_level": 5,  # Sphinx-only directives (toctree) are not what is under test
    "halt_level": 5,
}


def doctree(markdown: str) -> nodes.document:
    """Parse MyST Markdown the way the docs site does."""
    return publish_doctree(markdown, parser=Parser(), settings_overrides=_MYST_SETTINGS)


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    """The fixture catalog's pages."""
    return render_docs_pages(fixture_catalog())


class TestEscaping:
    """YAML text renders as exactly itself, whatever Markdown, MyST or HTML it holds."""

    @pytest.mark.parametrize(
        ("text", "markdown"),
        [
            ("plain words", "plain words"),
            ("a | b", r"a \| b"),
            ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
            ("`tick`", r"\`tick\`"),
            ("*star* _under_", r"\*star\* \_under\_"),
            ("{{ x }}", r"\{\{ x \}\}"),
            ("[x](y)", r"\[x\](y)"),
            ("two\nlines", "two lines"),
            ("# heading", r"\# heading"),
            ("1. item", r"1\. item"),
            ("12) item", r"12\) item"),
            ("- bullet", r"\- bullet"),
            ("(target)=", r"\(target)="),
            ("% comment", r"\% comment"),
            (":::{note}", r"\:::\{note\}"),
            ("$x$", r"\$x\$"),
            ("a & b", "a &amp; b"),
            ("back\\slash", "back\\\\slash"),
            ("mid-sentence (fine). Ok: yes", "mid-sentence (fine). Ok: yes"),
            # Text with nothing to escape takes a fast path; its edges behave the same.
            ("", ""),
            ("  padded  ", "padded"),
            ("\u00a0no-break spaces\u00a0", "no-break spaces"),
            ("line\u2028separator\r\nand CRLF", "line separator and CRLF"),
            ("  1. indented item", r"1\. indented item"),
            ("2024 was fine", "2024 was fine"),
            ("snake_case", r"snake\_case"),
        ],
    )
    def test_escape_markdown_table(self, text: str, markdown: str) -> None:
        """Each construct is neutralised, and ordinary prose is left readable."""
        assert str(escape_markdown(text)) == markdown

    @pytest.mark.parametrize("page", [ALPHA, HOSTILE, INDEX])
    def test_pages_are_a_title_and_a_directive(self, pages: dict[str, str], page: str) -> None:
        """Each page parses to its title and the extension's directive; no YAML text in it."""
        document = doctree(pages[page])
        # The index is headed by the configured site title (the default one here).
        title = Config().title if page == INDEX else PurePosixPath(page).stem
        assert document["title"] == title
        assert "fixture-hostile" not in pages[page]
        directive = "metric-catalog-index" if page == INDEX else "metric-catalog-owner"
        assert f"```{{{directive}}}" in pages[page]

    def test_owner_directive_names_the_catalog_file(self, pages: dict[str, str]) -> None:
        """The directive argument is the file's path, as in the resolved catalog."""
        assert "```{metric-catalog-owner} catalog/fixture_hostile.yaml\n```" in pages[HOSTILE]


class TestAnchors:
    """Every series has a section whose id is its anchor, and links point at it."""

    @pytest.mark.parametrize(
        ("name", "anchor"),
        [
            ("rl.reward.mean", "rl-reward-mean"),
            ("rl.sft_v2.valid_tokens_per_second", "rl-sft-v2-valid-tokens-per-second"),
            ("rl.GPU.Util", "rl-gpu-util"),
            ("rl.a__b.c9", "rl-a-b-c9"),
        ],
    )
    def test_series_anchor_matches_docutils(self, name: str, anchor: str) -> None:
        """The anchor is the id docutils would give the name, in codegen and the extension."""
        assert series_anchor(name) == anchor == nodes.make_id(name)
        assert catalog_sphinx.series_anchor(name) == anchor

    def test_source_pages_dir_agrees_with_extension(self) -> None:
        """The renderer links where metric_catalog.sphinx publishes the YAML."""
        assert render_docs.SOURCE_PAGES_DIR == catalog_sphinx.SOURCE_PAGES_DIR

    def test_source_page_has_an_anchor_per_line(self) -> None:
        """Line N of the YAML is element #LN on its page."""
        html = catalog_sphinx.render_source("a: 1\n\nb: <x>\n")
        assert re.findall(r'id="(L\d+)"', html) == ["L1", "L2", "L3"]
        assert "<x>" not in html
        assert "&lt;x&gt;" in html


class TestPages:
    """Which pages exist, their header, and that output depends on content only."""

    def test_one_page_per_owner_plus_index(self, pages: dict[str, str]) -> None:
        """Paths are docs/metrics/<module>.md, the index and the catalog data."""
        assert sorted(pages) == [DATA, ALPHA, HOSTILE, INDEX]

    @pytest.mark.parametrize(
        ("page", "source"),
        [
            (ALPHA, "catalog/fixture_alpha.yaml"),
            (HOSTILE, "catalog/fixture_hostile.yaml"),
            (INDEX, "catalog/*.yaml"),
        ],
    )
    def test_generated_header(self, pages: dict[str, str], page: str, source: str) -> None:
        """The first line names the source and says DO NOT EDIT; pages end with one newline."""
        first = pages[page].splitlines()[0]
        expected = f"<!-- Code generated by metric-catalog generate from {source}. DO NOT EDIT. -->"
        assert first == expected
        assert pages[page].endswith("\n")
        assert not pages[page].endswith("\n\n")

    def test_deterministic_whatever_the_file_order(self) -> None:
        """Same catalog in another file order, or rendered twice, gives identical bytes."""
        files = fixture_catalog().files
        first = render_docs_pages(Catalog(files))
        again = render_docs_pages(Catalog(tuple(reversed(files))))
        assert first == again == render_docs_pages(fixture_catalog())

    @pytest.mark.parametrize(
        ("modules", "message"),
        [
            (("index",), "would overwrite docs/metrics/index.md"),
            (("same", "same"), "both would render docs/metrics/same.md"),
        ],
    )
    def test_refuses_colliding_pages(self, modules: tuple[str, ...], message: str) -> None:
        """A module named index, or two files with one module, is an error, not a lost page."""
        files = tuple(
            CatalogFile(
                path=f"catalog/f{i}.yaml",
                owner=f"pkg.f{i}",
                module=module,
                description="",
                teed=(),
                recorded=(row(f"rl.f{i}.x", line=3, path=f"catalog/f{i}.yaml"),),
            )
            for i, module in enumerate(modules)
        )
        with pytest.raises(ValueError, match=re.escape(message)):
            render_docs_pages(Catalog(files))

    def test_index_toctree_lists_every_owner_page(self, pages: dict[str, str]) -> None:
        """The index page's hidden toctree holds each owner module, sorted."""
        toctree = pages[INDEX].split("```{toctree}")[1]
        assert re.findall(r"^(fixture_\w+)$", toctree, re.M) == ["fixture_alpha", "fixture_hostile"]


class TestApiReference:
    """The hand-written API pages keep up with the package."""

    def test_vocabulary_page_documents_every_public_name(self) -> None:
        """Every name in vocabulary.__all__ has an autodoc entry and a summary row."""
        page = (ROOT / "docs/api/vocabulary.md").read_text(encoding="utf-8")
        documented = set(re.findall(r"^\.\. auto(?:data|function|class):: (\w+)$", page, re.M))
        summarised = set(re.findall(r"^   (\w+)$", page, re.M))
        assert documented == set(vocabulary.__all__)
        assert summarised == set(vocabulary.__all__)

    def test_every_public_module_has_a_page(self) -> None:
        """Each public module of metric_catalog is in the API toctree."""
        package = ROOT / "src/metric_catalog"
        modules = {p.stem for p in package.glob("*.py") if not p.stem.startswith("_")}
        toctree = (ROOT / "docs/api/index.md").read_text(encoding="utf-8")
        assert {m for m in modules if re.search(rf"^{m}$", toctree, re.M)} == modules
        for module in modules:
            assert (ROOT / f"docs/api/{module}.md").is_file()


class TestCatalogData:
    """docs/metrics/catalog.json: the resolved catalog the Sphinx extension reads."""

    def test_is_the_resolved_catalog_with_the_marker(self, pages: dict[str, str]) -> None:
        """Same content as ``resolve``, plus the generated marker and the site title."""
        data = json.loads(pages[DATA])
        marker = data.pop("__generated__")
        assert marker.startswith("Code generated by metric-catalog generate")
        assert data.pop("title") == Config().title
        assert data == resolve_catalog(fixture_catalog())
        assert is_generated(pages[DATA])

    def test_one_line_per_file_and_row(self, pages: dict[str, str]) -> None:
        """A changed row is a one-line diff: every file and row is a line of its own."""
        lines = pages[DATA].splitlines()
        files, rows = lines.index('"files":['), lines.index('"rows":[')
        catalog = fixture_catalog()
        assert [json.loads(line.rstrip(","))["path"] for line in lines[files + 1 : rows - 1]] == [
            "catalog/fixture_alpha.yaml",
            "catalog/fixture_hostile.yaml",
        ]
        names = [json.loads(line.rstrip(","))["name"] for line in lines[rows + 1 : -1]]
        assert names == sorted(r.name for _, r in catalog.rows())
        assert pages[DATA].endswith("]}\n")

    def test_empty_catalog_is_valid_json(self) -> None:
        """No files and no rows still give a readable document."""
        text = render_docs.render_catalog_data(Catalog(()))
        assert json.loads(text)["rows"] == []


def test_runtime_never_imports_the_sphinx_extension() -> None:
    """vocabulary, tee, otel and loggers load without metric_catalog.sphinx or Sphinx."""
    code = (
        "import sys\n"
        "import metric_catalog.vocabulary, metric_catalog.tee, metric_catalog.otel\n"
        "import metric_catalog.loggers, metric_catalog.exporters\n"
        "bad = sorted(m for m in sys.modules if m == 'sphinx' or m.startswith("
        "('sphinx.', 'metric_catalog.sphinx', 'docutils', 'pygments')))\n"
        "print(','.join(bad))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == ""


@pytest.mark.parametrize("title", ["myrl metrics", "NeMo-RL metrics", "a *bold* <b>title</b>"])
def test_the_configured_title_heads_the_index_and_reaches_the_site_data(
    tmp_path: Path, title: str
) -> None:
    """``title`` of [tool.metric-catalog] heads the index page (Markdown-escaped, so it reads
    verbatim) and is ``title`` in catalog.json, which the Sphinx extension reads."""
    pages = render_docs_pages(fixture_catalog(), Config(title=title))
    index = pages["docs/metrics/index.md"]
    assert index.splitlines()[1].startswith("# ")
    assert doctree(index)["title"] == title
    data = tmp_path / "catalog.json"
    data.write_text(pages["docs/metrics/catalog.json"], encoding="utf-8")
    assert json.loads(data.read_text(encoding="utf-8"))["title"] == title
    assert catalog_data.load(data).title == title
