"""The built docs site in headless Chromium: index, filters, search, escaping, anchors.

One session-scoped Sphinx build of a temporary copy of ``docs/`` whose catalog
pages are rendered from the repo's catalog plus the fixture owners (one of them
full of injection attempts), served on 127.0.0.1, and one browser for every
test. Screenshots go to ``test-artifacts/``. Without chromium and chromedriver
the browser tests skip, except under ``CI`` where they fail.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codegen.model import Catalog, MetricRow
from codegen.pipeline import load_and_check
from codegen.render_docs import DOCS_HEADER_PREFIX, render_docs_pages, series_anchor
from tests.docs_fixtures import (
    HOSTILE_DESCRIPTIONS,
    SCRIPT_DESCRIPTION,
    SEARCH_WORD,
    merged_catalog,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
WAIT_S = 15.0
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


@dataclass(frozen=True)
class Site:
    """A built site being served: its catalog, the real catalog, and its base URL."""

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
    for page in (target / "docs" / "metrics").glob("*.md"):
        if page.read_text(encoding="utf-8").startswith(DOCS_HEADER_PREFIX):
            page.unlink()
    shutil.copytree(ROOT / "catalog", target / "catalog")
    shutil.copytree(
        ROOT / "examples", target / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """Build the fixture site with -W (zero warnings) and serve it on a free loopback port."""
    result = load_and_check(root=ROOT)
    assert result.ok, [str(d) for d in result.diagnostics]
    catalog = merged_catalog(result.catalog)
    tree = tmp_path_factory.mktemp("docs-site")
    _copy_docs_tree(tree)
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
        timeout=300,
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
        yield Site(catalog, result.catalog, f"http://127.0.0.1:{server.server_address[1]}", html)
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
    driver.set_page_load_timeout(30)
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


def _shot(browser: Any, name: str) -> None:
    browser.save_screenshot(str(ARTIFACTS / f"docs-{name}.png"))


def _index_rows(browser: Any) -> list[dict[str, Any]]:
    """Every body row of the index table: series, owner, visibility, filter attributes."""
    rows: list[dict[str, Any]] = browser.execute_script(
        """
        const table = document.querySelector("table.catalog-index");
        return Array.from(table.tBodies[0].rows, (row) => ({
          series: row.cells[0].textContent.trim(),
          owner: row.cells[1].textContent.trim(),
          kind: row.cells[2].textContent.trim(),
          stability: row.cells[4].textContent.trim(),
          description: row.cells[6].textContent.trim(),
          visible: row.offsetParent !== null,
          dataOwner: row.dataset.owner,
        }));
        """
    )
    return rows


def _name(cell: str) -> str:
    return cell.removesuffix(" (deprecated)")


def _wait_in_view(browser: Any, element_id: str) -> None:
    """Wait until the element's top is inside the viewport of a scrolled page.

    Waiting rather than checking once: the theme scrolls smoothly to a target.
    """
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
    for catalog_file in site.real.files:
        name = Path(catalog_file.path).name
        assert (site.html / "catalog-source" / f"{name}.html").is_file()
    assert (site.html / "api" / "vocabulary.html").is_file()


def test_catalog_pages_have_unique_ids(site: Site) -> None:
    """No id repeats on a catalog page, so every #anchor has one target."""
    for page in sorted((site.html / "metrics").glob("*.html")):
        ids = re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8"))
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        assert repeated == [], page.name


def test_index_lists_every_catalog_series(site: Site, browser: Any) -> None:
    """The index table has one row per series: the repo's catalog and the fixture owners."""
    _open(browser, f"{site.url}/metrics/index.html")
    _wait(browser, "return document.querySelector('.catalog-filter-count').textContent")
    rows = _index_rows(browser)
    names = [_name(r["series"]) for r in rows]
    assert names == sorted(row.name for _, row in site.catalog.rows())
    assert {row.name for _, row in site.real.rows()} <= set(names)
    assert all(r["visible"] for r in rows)
    total = len(rows)
    count = browser.find_element("css selector", ".catalog-filter-count").text
    assert count == f"{total} of {total} series"
    _shot(browser, "index")


@pytest.mark.parametrize("which", ["first", "last", "hostile"])
def test_filter_by_owner_leaves_only_that_owners_rows(site: Site, browser: Any, which: str) -> None:
    """Choosing an owner hides every other owner's rows and updates the count and URL."""
    from selenium.webdriver.support.ui import Select

    owners = sorted({f.owner for f in site.catalog.files})
    owner = {"first": owners[0], "last": owners[-1], "hostile": "fixture-hostile <i>"}[which]
    expected = sorted(r.name for f, r in site.catalog.rows() if f.owner == owner)
    _open(browser, f"{site.url}/metrics/index.html")
    Select(
        browser.find_element("css selector", 'select[data-filter-column="owner"]')
    ).select_by_value(owner)
    rows = _index_rows(browser)
    shown = [r for r in rows if r["visible"]]
    assert sorted(_name(r["series"]) for r in shown) == expected
    assert {r["owner"] for r in shown} == {owner}
    assert {r["dataOwner"] for r in rows if not r["visible"]}.isdisjoint({owner})
    count = browser.find_element("css selector", ".catalog-filter-count").text
    assert count == f"{len(expected)} of {len(rows)} series"
    assert "owner=" in browser.current_url
    _shot(browser, f"index-owner-{which}")


def test_filters_combine_and_survive_in_the_url(site: Site, browser: Any) -> None:
    """?owner=&kind= preselects both filters; only rows matching both stay."""
    owner_file = max(site.real.files, key=lambda f: len(f.rows))
    kind = owner_file.rows[0].kind
    expected = sorted(r.name for r in owner_file.rows if r.kind == kind)
    _open(browser, f"{site.url}/metrics/index.html?owner={owner_file.owner}&kind={kind}")
    _wait(browser, "return document.querySelector('.catalog-filter-count').textContent")
    shown = [_name(r["series"]) for r in _index_rows(browser) if r["visible"]]
    assert sorted(shown) == expected


def _search(browser: Any, site: Site, query: str) -> list[str]:
    """Result links of Sphinx search for ``query``, page paths without the anchor."""
    _open(browser, f"{site.url}/search.html?q={query}")
    # searchtools.js creates an empty summary paragraph and fills it when the search is done.
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


def _unique_description_word(catalog: Catalog) -> tuple[str, str]:
    """A long word of one real owner's descriptions that no other owner uses: (word, module)."""
    words: dict[str, set[str]] = {}
    for catalog_file, row in catalog.rows():
        for word in re.findall(r"[a-z]{9,}", row.description.lower()):
            words.setdefault(word, set()).add(catalog_file.module)
    word = min(w for w, modules in words.items() if len(modules) == 1)
    return word, next(iter(words[word]))


def test_search_finds_series_page_by_description_word(site: Site, browser: Any) -> None:
    """Searching a word that only one owner's descriptions hold returns that owner's page."""
    # The owner page, and the index that repeats every description; nothing else.
    results = _search(browser, site, SEARCH_WORD)
    assert sorted(results) == ["metrics/fixture_alpha.html", "metrics/index.html"]
    _shot(browser, "search")
    word, module = _unique_description_word(site.real)
    assert f"metrics/{module}.html" in _search(browser, site, word)


def test_search_finds_series_by_name(site: Site, browser: Any) -> None:
    """Searching a series name returns its owner's page."""
    assert "metrics/fixture_alpha.html" in _search(browser, site, "rl.fixture.batch.duration")


@pytest.mark.parametrize("page", ["metrics/fixture_hostile.html", "metrics/index.html"])
def test_script_in_description_renders_as_text(site: Site, browser: Any, page: str) -> None:
    """<script>alert(1)</script> from YAML shows as text and no dialog opens."""
    from selenium.common.exceptions import NoAlertPresentException

    _open(browser, f"{site.url}/{page}")
    _wait(browser, "return document.readyState === 'complete'")
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 - reading it is the check
    assert SCRIPT_DESCRIPTION in browser.find_element("tag name", "article").text
    injected = browser.execute_script(
        "return Array.from(document.scripts).filter((s) => s.text.includes('alert(')).length;"
    )
    assert injected == 0
    _shot(browser, "hostile" if "hostile" in page else "index-hostile")


def test_hostile_descriptions_render_verbatim(site: Site, browser: Any) -> None:
    """Every injection attempt shows as its own text in the built table and section."""
    _open(browser, f"{site.url}/metrics/fixture_hostile.html")
    shown: dict[str, list[str]] = browser.execute_script(
        """
        const out = {};
        for (const row of document.querySelector("table.catalog-summary").tBodies[0].rows) {
          const link = row.cells[0].querySelector("a");
          const name = link.textContent.trim();
          const section = document.getElementById(link.getAttribute("href").slice(1));
          out[name] = [row.cells[5].textContent, section.querySelector("h3 + p").textContent];
        }
        return out;
        """
    )
    for key, text in HOSTILE_DESCRIPTIONS.items():
        flat = " ".join(line.strip() for line in text.splitlines() if line.strip())
        assert shown[f"rl.fixture.hostile.{key}"] == [flat, flat], key


def _deepest(site: Site) -> tuple[str, MetricRow]:
    """The last row of the real catalog's longest page: its anchor needs a real scroll."""
    catalog_file = max(site.real.files, key=lambda f: len(f.rows))
    return catalog_file.module, catalog_file.rows[-1]


def test_series_anchor_scrolls_to_the_row(site: Site, browser: Any) -> None:
    """Loading page.html#rl-... brings that series' section into the viewport."""
    module, row = _deepest(site)
    anchor = series_anchor(row.name)
    _open(browser, f"{site.url}/metrics/{module}.html#{anchor}")
    _wait_in_view(browser, anchor)
    heading = browser.find_element("css selector", f"section#{anchor} h3").text
    assert heading.startswith(row.name)
    _shot(browser, "anchor")


def test_index_link_lands_on_the_series(site: Site, browser: Any) -> None:
    """Clicking a series in the index opens its owner page scrolled to its section."""
    module, row = _deepest(site)
    anchor = series_anchor(row.name)
    _open(browser, f"{site.url}/metrics/index.html")
    link = browser.find_element(
        "css selector", f'table.catalog-index a[href="{module}.html#{anchor}"]'
    )
    browser.execute_script("arguments[0].click();", link)
    _wait(browser, "return location.hash === arguments[0]", f"#{anchor}")
    _wait_in_view(browser, anchor)


def test_deprecated_series_links_its_replacement(site: Site, browser: Any) -> None:
    """A deprecated series shows a visible notice whose link reaches the replacement."""
    found = [(f, r) for f, r in site.catalog.rows() if r.deprecated and r.deprecated.replaced_by]
    assert found
    catalog_file, row = found[0]
    assert row.deprecated is not None
    since = row.deprecated.since
    _open(browser, f"{site.url}/metrics/{catalog_file.module}.html#{series_anchor(row.name)}")
    _wait_in_view(browser, series_anchor(row.name))
    notice = browser.find_element(
        "css selector", f"section#{series_anchor(row.name)} .admonition.deprecated"
    )
    assert notice.is_displayed()
    assert f"Deprecated since {since}" in notice.text
    link = notice.find_element("css selector", "a")
    replacement = row.deprecated.replaced_by
    assert replacement is not None
    assert link.get_attribute("href").endswith(f"#{series_anchor(replacement)}")
    _shot(browser, "deprecated")


def test_source_link_lands_on_the_yaml_line(site: Site, browser: Any) -> None:
    """The catalog/x.yaml:line link opens the YAML copy at the line where the row starts."""
    catalog_file = next(f for f in site.real.files if f.rows)  # attributes.yaml has none
    row = catalog_file.rows[-1]
    _open(browser, f"{site.url}/metrics/{catalog_file.module}.html#{series_anchor(row.name)}")
    link = browser.find_element(
        "css selector", f"section#{series_anchor(row.name)} a.catalog-source"
    )
    assert link.text == f"{catalog_file.path}:{row.position.line}"
    browser.execute_script("arguments[0].click();", link)
    _wait(browser, "return location.hash === arguments[0]", f"#L{row.position.line}")
    _wait_in_view(browser, f"L{row.position.line}")
    lines = browser.execute_script(
        "const first = Number(arguments[0]);"
        " return Array.from({length: 8}, (_, i) => document.getElementById('L' + (first + i)))"
        ".filter(Boolean).map((el) => el.textContent);",
        row.position.line,
    )
    assert any(f"name: {row.name}" in line for line in lines)
    _shot(browser, "source")
