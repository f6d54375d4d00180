"""Benchmark 7: the docs site at 10,000 rows against a full ``generate`` of the same catalog.

Each run makes a fresh root (the synthetic catalog plus a copy of this repo's
``docs/`` sources), then times, in this order: a full ``generate`` (the
baseline), a cold Sphinx build (``make docs``' command line, ``-W``), a
rebuild with nothing changed, and a rebuild after one owner file changed
(one row's description edited, ``generate`` run untimed, then Sphinx). Ratios
compare medians of the same run. Then the site is weighed (``.doctrees`` and
``.buildinfo`` are build state, not site) and, when headless Chromium is
available, the index page is loaded with a filter in its URL and the page's
own performance clock gives the time from navigation start to the filtered
table.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.config import Config, fresh_root
from bench.gen_bench import codegen_argv
from bench.measure import REPO, BenchError, Sample, child_env, fmt_ms, median, python, run_checked
from bench.report import Section, Target

__all__ = ["bench_docs", "build_argv", "site_bytes"]

_COLD_GOAL = 10.0
_NOOP_GOAL = 1.0
_CHANGE_GOAL = 2.0
_SITE_GOAL_MB = 25.0
_INDEX_GOAL_MB = 1.5
_BROWSER_GOAL_MS = 1000.0
_DOCS_SOURCES = ("conf.py", "index.md", "tutorial", "guide", "reference", "explanation", "api")
_MB = 1_000_000


def build_argv(root: Path) -> list[str]:
    """``make docs``' Sphinx command line for the docs tree under ``root``."""
    docs = root / "docs"
    sphinx = [python(), "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    return [*sphinx, str(docs), str(docs / "_build" / "html")]


def site_bytes(html: Path) -> int:
    """Bytes of the built site, without Sphinx's build state (``.doctrees``, ``.buildinfo``)."""
    total = 0
    for path in html.rglob("*"):
        relative = path.relative_to(html).parts
        if path.is_file() and relative[0] not in (".doctrees", ".buildinfo"):
            total += path.stat().st_size
    return total


def _root(cfg: Config, rows: int) -> Path:
    root = fresh_root(cfg, rows, f"docs-{rows}")
    docs = root / "docs"
    docs.mkdir()
    for name in _DOCS_SOURCES:
        source = REPO / "docs" / name
        if source.is_dir():
            shutil.copytree(source, docs / name)
        else:
            shutil.copy2(source, docs / name)
    # The guides include example files by path.
    shutil.copytree(
        REPO / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )
    return root


def _edit_one_owner(root: Path, version: int) -> Path:
    """Change the first description of the first catalog file; return the file."""
    path = sorted((root / "catalog").glob("*.yaml"))[0]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.lstrip().startswith("description:") and line.startswith("    "):
            indent = line[: len(line) - len(line.lstrip())]
            lines[i] = f'{indent}description: "Edited for the docs benchmark, version {version}."\n'
            break
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _pages_written(html: Path, before: dict[str, int]) -> int:
    return sum(
        1
        for page in (html / "metrics").glob("*.html")
        if page.name != "index.html" and before.get(page.name) != page.stat().st_mtime_ns
    )


def _mtimes(html: Path) -> dict[str, int]:
    return {page.name: page.stat().st_mtime_ns for page in (html / "metrics").glob("*.html")}


def _browser_timing(html: Path, runs: int) -> tuple[float | None, str]:
    """Median ms from navigation start to the filtered index table, or None and why."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        return None, "chromium or chromedriver not installed"
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        return None, "selenium not installed"

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            del format, args

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(html))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/metrics/index.html?kind=counter"
        figures = []
        for _ in range(runs):
            driver.get("about:blank")
            driver.get(url)
            WebDriverWait(driver, 60).until(
                lambda d: d.execute_script(
                    "const t = window.metricCatalogIndexTiming; return t && t.ready"
                )
            )
            figures.append(float(driver.execute_script("return metricCatalogIndexTiming.ready")))
        return median(figures), f"median of {runs} loads of `metrics/index.html?kind=counter`"
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()


def bench_docs(cfg: Config) -> Section:
    """Cold, no-change and one-owner-change Sphinx builds vs a full generate; site weight."""
    rows = 120 if cfg.smoke else 10_000
    runs = 1 if cfg.smoke else min(cfg.runs, 3)
    samples: dict[str, list[Sample]] = {"gen": [], "cold": [], "noop": [], "change": []}
    written: list[int] = []
    html = Path()
    env = child_env()

    def timed(key: str, argv: list[str], root: Path) -> None:
        samples[key].append(run_checked(argv, cwd=root, env=env, timeout_s=1800))

    for i in range(runs):
        root = _root(cfg, rows)
        timed("gen", codegen_argv("generate", root), root)
        html = root / "docs" / "_build" / "html"
        timed("cold", build_argv(root), root)
        timed("noop", build_argv(root), root)
        before = _mtimes(html)
        _edit_one_owner(root, i)
        run_checked(codegen_argv("generate", root), cwd=root, env=env)
        timed("change", build_argv(root), root)
        written.append(_pages_written(html, before))

    def med(key: str, field: Callable[[Sample], float]) -> float:
        return median([field(s) for s in samples[key]])

    def wall(s: Sample) -> float:
        return s.wall_s

    def cpu(s: Sample) -> float:
        return s.cpu_s

    base_wall, base_cpu = med("gen", wall), med("gen", cpu)
    labels = {
        "gen": "full `generate` (baseline)",
        "cold": "cold Sphinx build",
        "noop": "rebuild, nothing changed",
        "change": "rebuild, one owner file changed",
    }
    table = [
        [
            labels[key],
            fmt_ms(med(key, wall)),
            fmt_ms(med(key, cpu)),
            f"{med(key, wall) / base_wall:.2f}x",
            f"{med(key, cpu) / base_cpu:.2f}x",
            f"{median([s.max_rss_mib for s in samples[key]]):.0f} MiB",
        ]
        for key in samples
    ]
    if not html.is_dir():
        msg = "the docs build wrote no HTML"
        raise BenchError(msg)
    total = site_bytes(html)
    index_html = (html / "metrics" / "index.html").stat().st_size
    data_path = html / "_static" / "metric-catalog-data.js"
    data = data_path.stat().st_size if data_path.is_file() else 0
    index_gzip = len(gzip.compress((html / "metrics" / "index.html").read_bytes())) + (
        len(gzip.compress(data_path.read_bytes())) if data else 0
    )
    largest = sorted(
        (
            (p.stat().st_size, p.relative_to(html).as_posix())
            for p in html.rglob("*")
            if p.is_file() and p.relative_to(html).parts[0] not in (".doctrees", ".buildinfo")
        ),
        reverse=True,
    )[:1]
    by_folder: dict[str, int] = {}
    for path in html.rglob("*"):
        parts = path.relative_to(html).parts
        if path.is_file() and parts[0] not in (".doctrees", ".buildinfo"):
            key = parts[0] if len(parts) > 1 else "(top-level files)"
            by_folder[key] = by_folder.get(key, 0) + path.stat().st_size
    browser_ms, browser_note = (None, "smoke run") if cfg.smoke else _browser_timing(html, 3)

    files = len(list((html.parent.parent.parent / "catalog").glob("*.yaml")))
    section = Section(
        key="docs",
        title="7. Docs site at 10,000 rows",
        intro=(
            f"{rows:,} synthetic rows in {files} files (`bench.synthetic`) plus a copy of this"
            " repo's `docs/` sources; each run a"
            " fresh root: full `generate` (baseline), cold `sphinx-build -W --keep-going -b html`"
            " (the `make docs` command line), the same again with nothing changed, and again"
            " after one owner file's row changed and `generate` ran (untimed). Median of"
            f" {runs} run(s); ratios are to the baseline of the same runs."
        ),
        headers=["command", "wall", "CPU", "ratio (wall)", "ratio (CPU)", "peak RSS"],
        rows=table,
    )
    section.extra_tables.append(
        (
            "Site weight (without `.doctrees` and `.buildinfo`, Sphinx's build state):",
            ["part", "bytes"],
            [[k, f"{v / _MB:.2f} MB"] for k, v in sorted(by_folder.items(), key=lambda kv: -kv[1])]
            + [["whole site", f"{total / _MB:.2f} MB"]],
        )
    )
    section.notes.append(
        f"Owner pages rewritten by the one-owner rebuild: {', '.join(map(str, written))}"
        f" (of {files}); the index data file is rewritten too."
    )
    section.notes.append(
        f"Index page: {index_html / 1000:.0f} kB HTML + {data / 1000:.0f} kB index data"
        f" (`_static/metric-catalog-data.js`, gzip inside); {index_gzip / 1000:.0f} kB"
        f" gzip-transferred. Largest file: {largest[0][1]} ({largest[0][0] / _MB:.2f} MB)."
    )
    section.notes.append(
        "Before this design (issue 15, same catalog): cold 318 s, no change 59 s, one owner"
        " 93 s, site 179 MB, index page 7.9 MB."
    )
    if browser_ms is not None:
        section.notes.append(
            f"Index load + filter in headless Chromium: {browser_ms:.0f} ms ({browser_note})."
        )
    if cfg.smoke:
        return section

    def ratio_target(name: str, key: str, goal: float) -> Target:
        value = med(key, wall) / base_wall
        cpu_value = med(key, cpu) / base_cpu
        return Target(
            name,
            f"<= {goal:g}x full generate",
            f"{value:.2f}x wall ({fmt_ms(med(key, wall))} vs {fmt_ms(base_wall)});"
            f" {cpu_value:.2f}x CPU",
            value <= goal,
            "section 7",
        )

    section.targets += [
        ratio_target("cold docs build, 10,000 rows", "cold", _COLD_GOAL),
        ratio_target("docs rebuild, nothing changed", "noop", _NOOP_GOAL),
        ratio_target("docs rebuild, one owner file changed", "change", _CHANGE_GOAL),
        Target(
            "whole docs site",
            f"<= {_SITE_GOAL_MB:g} MB",
            f"{total / _MB:.1f} MB",
            total / _MB <= _SITE_GOAL_MB,
            "section 7",
        ),
        Target(
            "index page (HTML + its data)",
            f"<= {_INDEX_GOAL_MB:g} MB",
            f"{(index_html + data) / _MB:.2f} MB",
            (index_html + data) / _MB <= _INDEX_GOAL_MB,
            "section 7",
        ),
        Target(
            "index loads and applies a filter (headless Chromium)",
            f"<= {_BROWSER_GOAL_MS:g} ms (reported figure)",
            "not measured: " + browser_note if browser_ms is None else f"{browser_ms:.0f} ms",
            None if browser_ms is None else browser_ms <= _BROWSER_GOAL_MS,
            "section 7",
        ),
    ]
    return section
