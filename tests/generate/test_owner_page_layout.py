"""An owner page reads well at 1280 px and on a phone, in the theme an adopter gets by
following the adopt guide (Sphinx's default, alabaster) and in furo: the series' key, kind,
unit, cadence and presence at a glance, the plumbing folded, nothing scrolling sideways.

The site is built from the adopt guide's own ``conf.py`` and ``index.md`` (so the guide is
what is tested), served on loopback and measured in headless Chromium; screenshots go to
``test-artifacts/``.
"""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from codegen.cli import main
from tests.generate.test_docs_site import ARTIFACTS, _open, _QuietHandler, browser

__all__ = ["browser"]  # fixture used by name

pytestmark = pytest.mark.integration

ROOT: Final = Path(__file__).resolve().parents[2]
ADOPT: Final = ROOT / "docs" / "guide" / "adopt.md"
FIELDS: Final = ROOT / "tests" / "fixtures" / "docs" / "every_field.yaml"
LONG: Final = """\
owner: demo.long
module: long
description: A row whose description is a paragraph, as real ones are.
prefix: actor
teed:
  - logger_key: pg_clipfrac
    name: rl.demo.actor.policy_gradient.clip_fraction
    kind: gauge
    unit: "1"
    description: >-
      Share of the tokens of the step whose importance ratio was clipped by the PPO
      objective, averaged over the micro-batches of every data-parallel rank; a value that
      grows over training says the policy moves faster than the clip range allows.
    every: "5"
    range: {min: "0", max: "1"}
"""
WIDE: Final = (1280, 900)
PHONE: Final = (390, 844)


def _guide_blocks() -> tuple[str, str]:
    """The adopt guide's ``conf.py`` and ``index.md``, as a reader copies them."""
    text = ADOPT.read_text(encoding="utf-8")
    section = text[text.index("## Docs\n") :]
    conf = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    index = re.search(r"````markdown\n(.*?)````", section, re.DOTALL)
    assert conf is not None, "the adopt guide lost its conf.py block"
    assert index is not None, "the adopt guide lost its index.md block"
    return conf.group(1), index.group(1)


@pytest.fixture(scope="module", params=["alabaster", "furo"])
def site(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """``(theme, url)`` of an adopter's docs site, built as the adopt guide says, served on
    loopback."""
    root = tmp_path_factory.mktemp(f"adopter-site-{request.param}")
    catalog = root / "myrl" / "telemetry" / "catalog"
    catalog.mkdir(parents=True)
    (catalog / "fields.yaml").write_text(FIELDS.read_text(encoding="utf-8"), encoding="utf-8")
    (catalog / "long.yaml").write_text(LONG, encoding="utf-8")
    (root / "pyproject.toml").write_text(
        '[tool.metric-catalog]\ncatalog = ["myrl/telemetry/catalog/*.yaml"]\n'
        'package = "myrl.telemetry.generated"\npackage-dir = "myrl/telemetry/generated"\n'
        'title = "myrl metrics"\n',
        encoding="utf-8",
    )
    assert main(["generate", "--root", str(root)]) == 0
    conf, index = _guide_blocks()
    if request.param != "alabaster":  # the guide names no theme: alabaster is Sphinx's own
        conf += f'\nhtml_theme = "{request.param}"\n'
    (root / "docs" / "conf.py").write_text(conf, encoding="utf-8")
    (root / "docs" / "index.md").write_text(index, encoding="utf-8")
    html = root / "docs" / "_build" / "html"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "docs", str(html)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=root,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield request.param, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


_MEASURE: Final = """
const row = document.getElementById(arguments[0]);
const cells = Array.from(row.cells, (c) => c.getBoundingClientRect());
const plumbing = row.querySelector("details.mc-plumbing");
return {
  overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  display: getComputedStyle(row).display,
  table: row.closest("table").getBoundingClientRect().width,
  description: cells[cells.length - 1].width,
  right: Math.max(...cells.map((c) => c.right)),
  viewport: document.documentElement.clientWidth,
  folded: plumbing !== null && !plumbing.open,
  constantShown: plumbing !== null && plumbing.querySelector("p").checkVisibility(),
  text: row.innerText,
};
"""


def _measure(browser: Any, site: tuple[str, str], size: tuple[int, int]) -> dict[str, Any]:
    theme, url = site
    browser.set_window_size(*size)
    try:
        _open(browser, f"{url}/metrics/long.html")
        found: dict[str, Any] = browser.execute_script(
            _MEASURE, "rl-demo-actor-policy-gradient-clip-fraction"
        )
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / f"owner-page-{theme}-{size[0]}px.png"))
    finally:
        browser.set_window_size(*WIDE)
    return found


def test_at_1280_px_the_owner_page_is_a_table_whose_description_has_room(
    site: tuple[str, str], browser: Any
) -> None:
    found = _measure(browser, site, WIDE)
    assert found["display"] == "table-row"
    assert found["overflow"] <= 0
    assert found["description"] >= 300, found  # px: a line holds a sentence, not 3 words
    assert found["folded"]
    assert not found["constantShown"]
    for glance in ("actor/pg_clipfrac", "gauge", "every 5 steps", "recommended"):
        assert glance in found["text"]


def test_on_a_phone_each_series_is_a_card_and_nothing_scrolls_sideways(
    site: tuple[str, str], browser: Any
) -> None:
    found = _measure(browser, site, PHONE)
    assert found["display"] == "grid"
    assert found["overflow"] <= 0
    assert found["right"] <= found["viewport"] + 1
    assert found["folded"]
    assert not found["constantShown"]
    for glance in ("actor/pg_clipfrac", "gauge", "every 5 steps", "recommended"):
        assert glance in found["text"]
