"""The built docs site in headless Chromium: index, filters, search, escaping, layout, anchors.

Two sites, each one Sphinx build (``-W``) of a temporary copy of ``docs/`` whose
catalog pages are rendered from the repo's catalog plus the fixture owners (one
of them full of injection attempts): ``catalog`` (46 real rows) and ``10k`` (the
same plus a 10,000-row synthetic catalog, ``bench.synthetic``). Each is served
on 127.0.0.1 and every test runs against both, in one browser. Screenshots and
the index's load-and-filter timing go to ``test-artifacts/``. Without chromium
and chromedriver the browser tests skip, except under ``CI`` where they fail.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from bench.synthetic import synthesize, write_catalog
from codegen.catalog.model import Catalog, MetricRow
from codegen.catalog.pipeline import load_and_check
from codegen.generate.docs import DOCS_HEADER_PREFIX, render_docs_pages, series_anchor
from tests.docs_fixtures import (
    HOSTILE_DESCRIPTIONS,
    SCRIPT_DESCRIPTION,
    SEARCH_WORD,
    merged_catalog,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
WAIT_S = 30.0
SYNTHETIC_ROWS = 10_000
PAGE = 500
"""Rows the index shows at once (metric-catalog-index.js)."""
SPHINX_BUILD = (sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html")
"""The ``make docs`` command line, warnings as errors."""
_CHROME_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)
# The series every search test looks for: a real row with a prefixed logger key.
KL = ("rl.kl.divergence", "grpo", "kl_penalty", "train/kl_penalty", "rl_kl_divergence")


@dataclass(frozen=True)
class Site:
    """A built site being served: its name, catalog, the real catalog, and its base URL."""

    name: str
    catalog: Catalog
    real: Catalog
    url: str
    html: Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Keep request lines out of the test output."""


def _copy_docs_tree(target: Path) -> None:
    """``docs/`` (minus build output and generated pages), ``catalog/`` and ``examples/``.

    The guides include code from ``examples/`` (literalinclude).
    """
    shutil.copytree(ROOT / "docs", target / "docs", ignore=shutil.ignore_patterns("_build"))
    for page in (target / "docs" / "metrics").glob("*"):
        if page.read_text(encoding="utf-8").startswith((DOCS_HEADER_PREFIX, '{"__generated__"')):
            page.unlink()
    shutil.copytree(ROOT / "catalog", target / "catalog")
    shutil.copytree(
        ROOT / "examples", target / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )


def _synthetic(tree: Path) -> Catalog:
    """The 10,000-row synthetic catalog, its YAML written under ``tree/catalog``."""
    source = tree / "synthetic"
    write_catalog(source, synthesize(SYNTHETIC_ROWS))
    result = load_and_check(root=source, lint=False)
    assert result.ok, [str(d) for d in result.diagnostics][:5]
    for path in (source / "catalog").glob("*.yaml"):
        shutil.copy2(path, tree / "catalog" / path.name)
    return result.catalog


@pytest.fixture(scope="session", params=["catalog", "10k"])
def site(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    repo_catalog: Catalog,
) -> Iterator[Site]:
    """Build a fixture site with -W (zero warnings) and serve it on a free loopback port."""
    tree = tmp_path_factory.mktemp(f"docs-site-{request.param}")
    _copy_docs_tree(tree)
    catalog = merged_catalog(repo_catalog)
    if request.param == "10k":
        catalog = Catalog((*catalog.files, *_synthetic(tree).files))
    for path, text in render_docs_pages(catalog).items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text, encoding="utf-8")
    for catalog_file in catalog.files:
        # The fixture owners have no YAML; the source pages need a file with their lines.
        yaml = tree / catalog_file.path
        if not yaml.exists():
            lines = max((r.position.line for r in catalog_file.rows), default=0) + 5
            yaml.write_text("# fixture owner\n" * lines, encoding="utf-8")
    html = tree / "html"
    build = subprocess.run(
        [*SPHINX_BUILD, str(tree / "docs"), str(html)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tree,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    assert build.stderr.strip() == ""
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        yield Site(request.param, catalog, repo_catalog, url, html)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found is None and Path(f"/usr/bin/{name}").is_file():
        found = f"/usr/bin/{name}"
    return found


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the session, driven through the Debian chromedriver."""
    chromium, chromedriver = _tool("chromium"), _tool("chromedriver")
    if chromium is None or chromedriver is None:
        msg = "chromium and chromedriver are needed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in _CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    # Leave any dialog open, so a test can see it instead of it being dismissed.
    options.unhandled_prompt_behavior = "ignore"
    # An explicit driver path: Selenium Manager never runs (and never downloads).
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def _open(browser: Any, url: str) -> None:
    """Load ``url`` as a new document (a hash-only change would not reload)."""
    browser.get("about:blank")
    browser.get(url)


def _wait(browser: Any, script: str, *args: Any) -> Any:
    """Wait until ``script`` (a JS expression body) returns something truthy; return it."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, WAIT_S).until(lambda d: d.execute_script(script, *args))


def _shot(browser: Any, site: Site, name: str) -> None:
    browser.save_screenshot(str(ARTIFACTS / f"docs-{site.name}-{name}.png"))


def _open_index(browser: Any, site: Site, query: str = "") -> None:
    _open(browser, f"{site.url}/metrics/index.html{query}")
    _wait_complete(browser)


def _wait_complete(browser: Any) -> None:
    """Wait until the index table holds every matching row (it renders them in chunks)."""
    _wait(browser, "return document.querySelector('.mc-index.mc-complete') !== null")


def _index_rows(browser: Any) -> list[dict[str, Any]]:
    """The rows the index table shows (only matching rows are rendered), cell by cell."""
    rows: list[dict[str, Any]] = browser.execute_script(
        """
        const table = document.querySelector("table.mc-index-table");
        return Array.from(table.tBodies[0].rows, (row) => ({
          series: row.cells[0].querySelector("a").textContent,
          href: row.cells[0].querySelector("a").getAttribute("href"),
          logger: row.cells[1].textContent,
          module: row.cells[2].textContent,
          owner: row.cells[2].querySelector("a").title,
          kind: row.cells[3].querySelector(".mc-kind").textContent,
          stability: row.cells[4].textContent,
          description: row.cells[5].textContent,
        }));
        """
    )
    return rows


def _tbody(browser: Any) -> Any:
    return browser.find_element("css selector", "table.mc-index-table tbody")


def _keys(row: MetricRow) -> list[str]:
    """Every key the row is logged under, prefix included."""
    return [f"{p}/{row.logger_key}" if p else str(row.logger_key) for p in row.prefixes]


def _count(browser: Any) -> str:
    return str(browser.find_element("css selector", ".mc-count").text)


def _in_view(browser: Any, element_id: str) -> None:
    """Wait until the element's top is inside the viewport of a scrolled page."""
    _wait(
        browser,
        "const el = document.getElementById(arguments[0]);"
        " if (el === null) { return false; }"
        " const box = el.getBoundingClientRect();"
        " return box.top >= -1 && box.top < window.innerHeight && window.scrollY > 0;",
        element_id,
    )


def test_site_builds_with_zero_warnings(site: Site) -> None:
    """The docs tree with generated pages builds under -W; every owner and YAML page exists."""
    for catalog_file in site.catalog.files:
        assert (site.html / "metrics" / f"{catalog_file.module}.html").is_file()
        name = Path(catalog_file.path).name
        assert (site.html / "catalog-source" / f"{name}.html").is_file()
    assert (site.html / "api" / "vocabulary.html").is_file()


def test_catalog_pages_have_unique_ids(site: Site) -> None:
    """No id repeats on a catalog page, so every #anchor has one target."""
    for page in sorted((site.html / "metrics").glob("*.html")):
        ids = re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8"))
        assert len(ids) == len(set(ids)), page.name


def test_index_lists_every_catalog_series(site: Site, browser: Any) -> None:
    """Index rows are every series, sorted, 500 at a time, each with its logger key and owner."""
    _open_index(browser, site)
    rows = _index_rows(browser)
    names = [r["series"] for r in rows]
    every = sorted(row.name for _, row in site.catalog.rows())
    assert names == every[:PAGE]
    more = browser.find_element("css selector", ".mc-more")
    if len(every) > PAGE:
        assert more.text.startswith(f"Showing {PAGE} of {len(every)} matching series.")
        button = browser.find_element("css selector", ".mc-more-page")
        browser.execute_script("arguments[0].click();", button)
        _wait(browser, "return arguments[0].rows.length > arguments[1]", _tbody(browser), PAGE)
        assert [r["series"] for r in _index_rows(browser)] == every[: 2 * PAGE]
    else:
        assert not more.is_displayed()
    expected = {row.name: (f, row) for f, row in site.catalog.rows()}
    for r in rows[:: max(1, len(rows) // 200)]:
        catalog_file, row = expected[r["series"]]
        assert r["module"] == catalog_file.module
        assert r["owner"] == catalog_file.owner
        assert r["logger"] == ("".join(_keys(row)) if row.logger_key else "recorded")
        assert r["href"] == f"{catalog_file.module}.html#{series_anchor(row.name)}"
    assert _count(browser) == f"{len(every)} of {len(every)} series"
    _shot(browser, site, "index")


@pytest.mark.parametrize("which", ["first", "last", "hostile"])
def test_filter_by_owner_leaves_only_that_owners_rows(site: Site, browser: Any, which: str) -> None:
    """Choosing an owner hides every other owner's rows and updates the count and URL."""
    from selenium.webdriver.support.ui import Select

    owners = sorted({f.owner for f in site.catalog.files})
    owner = {"first": owners[0], "last": owners[-1], "hostile": "fixture-hostile <i>"}[which]
    expected = sorted(r.name for f, r in site.catalog.rows() if f.owner == owner)
    total = len(list(site.catalog.rows()))
    _open_index(browser, site)
    Select(browser.find_element("css selector", 'select[name="owner"]')).select_by_value(owner)
    _wait_complete(browser)
    shown = _index_rows(browser)
    assert [r["series"] for r in shown] == expected
    assert {r["owner"] for r in shown} == {owner}
    assert _count(browser) == f"{len(expected)} of {total} series"
    assert "owner=" in browser.current_url
    _shot(browser, site, f"index-owner-{which}")


def test_filters_combine_and_survive_in_the_url(site: Site, browser: Any) -> None:
    """?owner=&kind= preselects both filters; only rows matching both stay."""
    owner_file = max(site.real.files, key=lambda f: len(f.rows))
    kind = owner_file.rows[0].kind
    expected = sorted(r.name for r in owner_file.rows if r.kind == kind)
    _open_index(browser, site, f"?owner={owner_file.owner}&kind={kind}")
    shown = [r["series"] for r in _index_rows(browser)]
    assert shown == expected


@pytest.mark.parametrize("query", KL[2:])
def test_find_box_narrows_to_the_series(site: Site, browser: Any, query: str) -> None:
    """Typing a logger key or Prometheus name in the find box leaves the series shown."""
    _open_index(browser, site)
    box = browser.find_element("css selector", '.mc-index input[name="q"]')
    if site.name == "10k":  # one input event, not one filter pass per typed character
        browser.execute_script(
            "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));",
            box,
            query,
        )
    else:
        box.send_keys(query)
    _wait(browser, "return document.querySelector('.mc-count').textContent.startsWith('1 of')")
    _wait_complete(browser)
    assert [r["series"] for r in _index_rows(browser)] == [KL[0]]
    assert "q=" in browser.current_url


def test_index_loads_and_filters_within_the_figure_reported(site: Site, browser: Any) -> None:
    """The index loads with a filter in the URL and applies it; the timing is recorded.

    The figure (navigation start to the filtered table, from the page's own
    performance clock) goes to test-artifacts/ for bench/RESULTS.md; the
    assertion is only that the filter applied.
    """
    kinds = {r.kind for _, r in site.catalog.rows()}
    kind = "counter" if "counter" in kinds else sorted(kinds)[0]
    expected = sum(1 for _, r in site.catalog.rows() if r.kind == kind)
    _open_index(browser, site, f"?kind={kind}")
    assert _count(browser).startswith(f"{expected} of ")
    timing = browser.execute_script(
        "const nav = performance.getEntriesByType('navigation')[0];"
        " return {ready: window.metricCatalogIndexTiming.ready,"
        " decoded: window.metricCatalogIndexTiming.decoded,"
        " domContentLoaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd};"
    )
    assert timing["ready"] > 0
    (ARTIFACTS / f"docs-{site.name}-index-timing.json").write_text(
        json.dumps({"rows": len(list(site.catalog.rows())), "filter": kind, **timing}, indent=2),
        encoding="utf-8",
    )


def _catalog_hits(browser: Any, site: Site, query: str) -> list[str]:
    """Catalog series listed on the search page for ``query``: their links."""
    _open(browser, f"{site.url}/search.html?q={query}")
    _wait(browser, "return document.querySelector('section.mc-search') !== null")
    hrefs: list[str] = browser.execute_script(
        "return Array.from(document.querySelectorAll('section.mc-search li > a'),"
        " (a) => a.getAttribute('href'));"
    )
    return hrefs


@pytest.mark.parametrize("query", KL[:1] + KL[2:])
def test_search_finds_series_by_name_logger_key_and_prometheus_name(
    site: Site, browser: Any, query: str
) -> None:
    """The first catalog hit is the series, and following it lands on its entry."""
    hits = _catalog_hits(browser, site, query)
    anchor = series_anchor(KL[0])
    assert hits[0] == f"metrics/{KL[1]}.html#{anchor}"
    _shot(browser, site, "search")
    link = browser.find_element("css selector", "section.mc-search li > a")
    browser.execute_script("arguments[0].click();", link)
    _wait(browser, "return location.hash === arguments[0]", f"#{anchor}")
    _in_view(browser, anchor)
    assert browser.execute_script(f"return document.querySelector('#{anchor}:target') !== null")


def _search_pages(browser: Any, site: Site, query: str) -> list[str]:
    """Sphinx full-text search result pages for ``query``, without anchors."""
    _open(browser, f"{site.url}/search.html?q={query}")
    _wait(
        browser,
        "const s = document.querySelector('#search-results .search-summary');"
        " return s !== null && s.textContent.trim() !== '';",
    )
    hrefs: list[str] = browser.execute_script(
        "return Array.from(document.querySelectorAll('#search-results ul.search li a'),"
        " (a) => a.getAttribute('href'));"
    )
    return [href.split("#")[0].split("?")[0] for href in hrefs]


def test_search_finds_owner_page_by_description_word(site: Site, browser: Any) -> None:
    """Full-text search still finds the owner page holding a description word."""
    assert _search_pages(browser, site, SEARCH_WORD) == ["metrics/fixture_alpha.html"]


def test_search_summary_under_catalog_hits_does_not_say_nothing_matched(
    site: Site, browser: Any
) -> None:
    """A Prometheus name is in no page's full text: Sphinx's 'did not match' is explained."""
    assert _catalog_hits(browser, site, KL[4])
    summary = "document.querySelector('#search-results .search-summary')"
    # Written by Sphinx when its search ends, then explained by the extension.
    _wait(browser, f"return {summary} !== null && {summary}.textContent.trim() !== '';")
    _wait(browser, f"return !{summary}.textContent.includes('did not match');")
    summary = browser.execute_script(f"return {summary}.textContent;")
    assert summary.startswith("No page's text matches this search; the catalog series above")
    assert "did not match any documents" not in summary


@pytest.mark.parametrize("page", ["metrics/fixture_hostile.html", "metrics/index.html", "search"])
def test_script_in_description_renders_as_text(site: Site, browser: Any, page: str) -> None:
    """<script>alert(1)</script> from YAML shows as text and no dialog opens."""
    from selenium.common.exceptions import NoAlertPresentException

    if page == "search":
        _open(browser, f"{site.url}/search.html?q=rl.fixture.hostile.script")
        _wait(browser, "return document.querySelector('section.mc-search li') !== null")
    elif page.endswith("index.html"):
        _open_index(browser, site, "?owner=fixture-hostile+%3Ci%3E")
    else:
        _open(browser, f"{site.url}/{page}")
        _wait(browser, "return document.readyState === 'complete'")
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 - reading it is the check
    assert SCRIPT_DESCRIPTION in browser.find_element("tag name", "article").text
    injected = browser.execute_script(
        "return Array.from(document.scripts).filter((s) => s.text.includes('alert(')).length"
        " + document.querySelectorAll('article i, article b').length;"
    )
    assert injected == 0
    _shot(browser, site, f"hostile-{page.rsplit('/', maxsplit=1)[-1]}")


def test_hostile_descriptions_render_verbatim(site: Site, browser: Any) -> None:
    """Every injection attempt shows as its own text on the owner page and in the index."""
    _open(browser, f"{site.url}/metrics/fixture_hostile.html")
    owner_page: dict[str, str] = browser.execute_script(
        """
        const out = {};
        for (const row of document.querySelector("table.mc-series-table").tBodies[0].rows) {
          out[row.cells[0].querySelector("a").textContent] =
            row.cells[4].querySelector("p").textContent;
        }
        return out;
        """
    )
    _open_index(browser, site, "?owner=fixture-hostile+%3Ci%3E")
    index = {r["series"]: r["description"] for r in _index_rows(browser)}
    for key, text in HOSTILE_DESCRIPTIONS.items():
        flat = " ".join(line.strip() for line in text.splitlines() if line.strip())
        name = f"rl.fixture.hostile.{key}"
        assert (owner_page[name], index[name]) == (flat, flat), key


def _deepest(site: Site) -> tuple[str, MetricRow]:
    """The last row of the real catalog's longest page: its anchor needs a real scroll."""
    catalog_file = max(site.real.files, key=lambda f: len(f.rows))
    return catalog_file.module, catalog_file.rows[-1]


def test_series_anchor_scrolls_to_the_row(site: Site, browser: Any) -> None:
    """Loading page.html#rl-... brings that series' row into view, highlighted."""
    module, row = _deepest(site)
    anchor = series_anchor(row.name)
    _open(browser, f"{site.url}/metrics/{module}.html#{anchor}")
    _in_view(browser, anchor)
    cell = browser.find_element("css selector", f"tr#{anchor} td a").text
    assert cell == row.name
    _shot(browser, site, "anchor")


def test_index_link_lands_on_the_series(site: Site, browser: Any) -> None:
    """Clicking a series in the index opens its owner page scrolled to its row."""
    module, row = _deepest(site)
    anchor = series_anchor(row.name)
    owner = next(f.owner for f in site.real.files if f.module == module)
    _open_index(browser, site, f"?owner={owner}")
    link = browser.find_element(
        "css selector", f'table.mc-index-table a[href="{module}.html#{anchor}"]'
    )
    browser.execute_script("arguments[0].click();", link)
    _wait(browser, "return location.hash === arguments[0]", f"#{anchor}")
    _in_view(browser, anchor)


def test_deprecated_series_links_its_replacement(site: Site, browser: Any) -> None:
    """A deprecated series shows a visible notice whose link reaches the replacement."""
    found = [(f, r) for f, r in site.catalog.rows() if r.deprecated and r.deprecated.replaced_by]
    assert found
    catalog_file, row = found[0]
    assert row.deprecated is not None
    anchor = series_anchor(row.name)
    _open(browser, f"{site.url}/metrics/{catalog_file.module}.html#{anchor}")
    _in_view(browser, anchor)
    notice = browser.find_element("css selector", f"tr#{anchor} .admonition.deprecated")
    assert notice.is_displayed()
    assert f"Deprecated since {row.deprecated.since}" in notice.text
    link = notice.find_element("css selector", "a")
    replacement = row.deprecated.replaced_by
    assert replacement is not None
    assert link.get_attribute("href").endswith(f"#{series_anchor(replacement)}")
    _shot(browser, site, "deprecated")


def test_source_link_lands_on_the_yaml_line(site: Site, browser: Any) -> None:
    """The catalog/x.yaml:line link opens the YAML copy at the line where the row starts."""
    catalog_file = next(f for f in site.real.files if f.rows)  # attributes.yaml has none
    row = catalog_file.rows[-1]
    anchor = series_anchor(row.name)
    _open(browser, f"{site.url}/metrics/{catalog_file.module}.html#{anchor}")
    # The YAML line is plumbing, folded under the description: unfold it as a reader does.
    folded = browser.find_element("css selector", f"tr#{anchor} details.mc-plumbing")
    browser.execute_script("arguments[0].open = true;", folded)
    link = browser.find_element("css selector", f"tr#{anchor} a.mc-src")
    assert link.text == f"{catalog_file.path}:{row.position.line}"
    browser.execute_script("arguments[0].click();", link)
    _wait(browser, "return location.hash === arguments[0]", f"#L{row.position.line}")
    _in_view(browser, f"L{row.position.line}")
    lines = browser.execute_script(
        "const first = Number(arguments[0]);"
        " return Array.from({length: 8}, (_, i) => document.getElementById('L' + (first + i)))"
        ".filter(Boolean).map((el) => el.textContent);",
        row.position.line,
    )
    assert any(f"name: {row.name}" in line for line in lines)
    _shot(browser, site, "source")


def _catalog_pages(site: Site) -> list[str]:
    owner = max(site.real.files, key=lambda f: len(f.rows)).module
    return ["metrics/index.html", f"metrics/{owner}.html"]


@pytest.mark.parametrize("which", [0, 1])
def test_catalog_tables_use_the_full_width(site: Site, browser: Any, which: int) -> None:
    """The table spans the content column, which is wider than furo's 46em text column."""
    page = _catalog_pages(site)[which]
    if page.endswith("index.html"):
        _open_index(browser, site)
    else:
        _open(browser, f"{site.url}/{page}")
    box = browser.execute_script(
        "const t = document.querySelector('table.mc-table').getBoundingClientRect();"
        " const a = document.querySelector('article').getBoundingClientRect();"
        " const em = parseFloat(getComputedStyle(document.documentElement).fontSize);"
        " return {table: t.width, right: t.right, article: a.width, em: em,"
        " viewport: document.documentElement.clientWidth};"
    )
    assert box["table"] >= 0.99 * box["article"]
    assert box["table"] > 52 * box["em"]
    assert box["right"] <= box["viewport"]


# Walks each sampled code element's characters and reports any line break that does
# not follow ".", "_" or "/" (where the pages put <wbr>) or another allowed character
# (arguments[2]), or a code wider than its container (arguments[3], default its cell).
_BREAK_CHECK = """
const bad = [];
const allowed = arguments[2] || "._/";
const container = arguments[3] || "td";
const codes = Array.from(document.querySelectorAll(arguments[0])).slice(0, arguments[1]);
for (const code of codes) {
  const chars = [];
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i += 1) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getBoundingClientRect();
      chars.push([node.data[i], rect.top, rect.right]);
    }
  }
  for (let i = 1; i < chars.length; i += 1) {
    if (chars[i][1] > chars[i - 1][1] + 2 && !allowed.includes(chars[i - 1][0])) {
      bad.push(code.textContent + " breaks after " + chars[i - 1][0]);
    }
  }
  const cell = code.closest(container);
  if (cell && code.getBoundingClientRect().right > cell.getBoundingClientRect().right + 1) {
    bad.push(code.textContent + " overflows its " + cell.tagName.toLowerCase());
  }
}
return [codes.length, bad];
"""


@pytest.mark.parametrize("which", [0, 1])
def test_identifiers_never_break_mid_word(site: Site, browser: Any, which: int) -> None:
    """In the tables, identifiers wrap only after ".", "_" or "/" and stay inside their cell."""
    page = _catalog_pages(site)[which]
    if page.endswith("index.html"):
        _open_index(browser, site)
    else:
        _open(browser, f"{site.url}/{page}")
    browser.set_window_size(1000, 900)  # narrower: more identifiers must wrap
    try:
        checked, bad = browser.execute_script(
            _BREAK_CHECK, "table.mc-table td code, table.mc-table td a.mc-src", 600
        )
        wrapped = browser.execute_script(
            "return Array.from(document.querySelectorAll('table.mc-table td code'))"
            ".slice(0, 600).filter((c) => c.getClientRects().length > 1).length;"
        )
    finally:
        browser.set_window_size(1280, 900)
    assert checked > 0
    assert bad == []
    if site.name == "10k" or which == 1:
        assert wrapped > 0  # the check saw real wrapping, not only one-line identifiers


GUIDES = (
    "guide/adopt",
    "guide/live-check",
    "guide/evolution",
    "guide/many-workers",
    "reference/catalog-format",
    "reference/live-check",
)
"""The hand-written guide pages: prose full of inline identifiers and flags."""
PHONE = (400, 900)
"""A phone-wide window: most inline identifiers in prose must wrap somewhere."""


def _prose_pages(site: Site, which: str) -> list[str]:
    if which == "guides":
        return [f"{page}.html" for page in GUIDES]
    if which == "index":
        return ["metrics/index.html"]
    # The largest real owner (descriptions, presence, a deprecation notice), the owner with
    # attribute lists and key families, and the page declaring the attributes.
    return [_catalog_pages(site)[1], "metrics/telemetry.html", "metrics/attributes.html"]


@pytest.mark.parametrize("which", ["guides", "owners", "index"])
def test_inline_code_in_prose_never_breaks_mid_word(site: Site, browser: Any, which: str) -> None:
    """On a phone-wide window, inline code anywhere in the article (guides, owner intros,
    descriptions, deprecation notices, attribute lists) wraps only at a space or after ".",
    "_" and "/", never after a hyphen or inside a word, and stays inside its block."""
    checked = wrapped = 0
    bad: list[str] = []
    browser.set_window_size(*PHONE)
    try:
        for page in _prose_pages(site, which):
            if page.endswith("index.html"):
                _open_index(browser, site)
            else:
                _open(browser, f"{site.url}/{page}")
            count, found = browser.execute_script(
                _BREAK_CHECK, "article code", 1500, "._/ ", "p, li, td, th, dd, dt, h1, h2, h3"
            )
            checked += count
            bad += [f"{page}: {problem}" for problem in found]
            wrapped += browser.execute_script(
                "return Array.from(document.querySelectorAll('article code'))"
                ".slice(0, 1500).filter((c) => c.getClientRects().length > 1).length;"
            )
            _shot(browser, site, f"phone-{PurePosixPath(page).stem}")
    finally:
        browser.set_window_size(1280, 900)
    assert checked > 0
    assert bad == []
    assert wrapped > 0  # the check saw real wrapping, not only one-line identifiers


def test_logger_key_column_on_owner_pages(site: Site, browser: Any) -> None:
    """The owner page's Logged key column shows each teed key with its prefix."""
    _open(browser, f"{site.url}/metrics/{KL[1]}.html")
    headers = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.mc-series-table th'),"
        " (th) => th.textContent);"
    )
    assert headers[1] == "Logged key"
    cell = browser.find_element("css selector", f"tr#{series_anchor(KL[0])} td:nth-child(2)").text
    assert cell.splitlines()[0] == KL[3]
    row = next(r for _, r in site.real.rows() if r.name == KL[0])
    assert cell.splitlines() == [k if "/" in k else f"{k} (no prefix)" for k in _keys(row)]
    _shot(browser, site, "owner")
