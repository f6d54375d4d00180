"""What a benchmark run does: full (``make bench``) or smoke (``make bench-smoke``)."""

from __future__ import annotations

import hashlib
import io
import os
import pstats
import re
import shutil
import site
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bench.glean import GleanEnv
from bench.measure import REPO
from bench.synthetic import synthesize, write_catalog, write_glean_catalog

__all__ = [
    "WORK",
    "Config",
    "catalog_source",
    "fresh_root",
    "glean_source",
    "profile_text",
    "redact_paths",
    "roots_dir",
]

WORK: Final = Path(
    os.environ.get("BENCH_WORK")
    or Path(tempfile.gettempdir()) / f"metric-catalog-bench-{os.getuid()}"
)
"""Scratch space for synthetic catalogs, generated trees and profiles (``$BENCH_WORK``).

Outside the checkout on purpose: generated trees under ``bench/`` would be
picked up by ``mypy bench`` as duplicate ``metric_catalog.generated`` packages.
"""

_SYNTHETIC_VERSION: Final = hashlib.sha256(
    (REPO / "bench" / "synthetic.py").read_bytes()
).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Config:
    """Sizes, repetitions and the glean baseline for one run."""

    smoke: bool
    runs: int
    """Timed repetitions per command (median reported); at least 5 in full runs."""
    sizes: tuple[int, ...]
    """Catalog sizes for generate vs glean_parser."""
    noop_rows: int
    import_rows: int
    scaling: tuple[int, ...]
    tee_calls: int
    """``log_metrics`` calls per timed repetition of the tee benchmark."""
    glean: GleanEnv | str
    """The glean venv, or why it is missing."""
    work: Path = WORK
    baseline_ref: str | None = None
    """The git ref commands are compared with (``None``: the merge-base with ``main``)."""

    @classmethod
    def full(cls, glean: GleanEnv | str) -> Config:
        """The real run: 1k and 10k rows, scaling to 50k, 5 runs each."""
        return cls(
            smoke=False,
            runs=5,
            sizes=(1_000, 10_000),
            noop_rows=10_000,
            import_rows=10_000,
            scaling=(1_000, 10_000, 50_000),
            tee_calls=1_000,
            glean=glean,
        )

    @classmethod
    def smoke_run(cls, glean: GleanEnv | str) -> Config:
        """About a second per benchmark: tiny catalogs, one run, no timing claims."""
        return cls(
            smoke=True,
            runs=1,
            sizes=(120,),
            noop_rows=120,
            import_rows=120,
            scaling=(60, 120),
            tee_calls=50,
            glean=glean,
        )


def catalog_source(cfg: Config, rows: int) -> Path:
    """A cached root holding the synthetic ``catalog/`` of ``rows`` rows (written once).

    Written into a private folder and renamed into place, so concurrent runs
    never see a half-written cache.
    """
    src = cfg.work / f"source-{rows}-{_SYNTHETIC_VERSION}"
    if src.is_dir():
        return src
    cfg.work.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".source-{rows}-", dir=cfg.work))
    files = synthesize(rows)
    write_catalog(staging, files)
    write_glean_catalog(staging / "glean", files)
    try:
        staging.rename(src)
    except OSError:  # another run won the race; its copy is identical
        shutil.rmtree(staging, ignore_errors=True)
    return src


def glean_source(cfg: Config, rows: int) -> list[Path]:
    """The glean YAML files (metrics then ``pings.yaml``) for ``rows`` rows."""
    glean = catalog_source(cfg, rows) / "glean"
    metrics = sorted(glean.glob("metrics_*.yaml"))
    return [*metrics, glean / "pings.yaml"]


def fresh_root(cfg: Config, rows: int, name: str) -> Path:
    """A new root (``catalog/`` plus the repo's ``generated/__init__.py``) to generate into."""
    src = catalog_source(cfg, rows)
    root = roots_dir(cfg) / name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    shutil.copytree(src / "catalog", root / "catalog")
    generated = root / "src" / "metric_catalog" / "generated"
    generated.mkdir(parents=True)
    shutil.copy2(REPO / "src" / "metric_catalog" / "generated" / "__init__.py", generated)
    return root


def roots_dir(cfg: Config) -> Path:
    """This run's scratch roots (per process, so concurrent runs do not collide)."""
    return cfg.work / "roots" / str(os.getpid())


# A path starts here: not inside a word, a name or an already-redacted placeholder.
_START: Final = r"(?<![\w.>~/-])"
_END: Final = r"(?:/|(?![\w.-]))"


def _machine_paths() -> list[tuple[re.Pattern[str], str]]:
    """This machine's absolute directories and their placeholders, longest first."""
    tmp = str(Path(tempfile.gettempdir()))
    found = {
        str(REPO): "",
        tmp: "<tmp>",
        str(WORK): f"<tmp>/{WORK.name}" if WORK.is_relative_to(tmp) else "<bench-work>",
        sys.prefix: "<venv>",
        sysconfig.get_paths()["stdlib"]: "<stdlib>",
        str(Path.home()): "~",
    }
    for path in {*site.getsitepackages(), sysconfig.get_paths()["purelib"]}:
        found[path] = "<site-packages>"
    return [
        (re.compile(_START + re.escape(path.rstrip("/")) + _END), short)
        for path, short in sorted(found.items(), key=lambda pair: -len(pair[0]))
        if len(path.rstrip("/")) > 1
    ]


def _substitute(pattern: re.Pattern[str], short: str, text: str) -> str:
    """Replace ``pattern``'s matches by ``short`` (a relative path when ``short`` is empty)."""

    def repl(match: re.Match[str]) -> str:
        if match.group(0).endswith("/"):
            return f"{short}/" if short else ""
        return short or "."

    return pattern.sub(repl, text)


# Paths of another machine (a RESULTS.md written elsewhere), by what they look like.
_PATH_CHARS: Final = r"[^\s`'\"()]"
_OTHER_VENV: Final = re.compile(_START + rf"/{_PATH_CHARS}*?/(?:\.venv|venv|\.tox/[^/\s]+)(?=/)")
_OTHER_SITE: Final = re.compile(
    rf"(?:<venv>|{_START}\.venv|{_START}/{_PATH_CHARS}*?)/lib/python3\.\d+/site-packages(?=/)"
)
_OTHER_STDLIB: Final = re.compile(_START + rf"/{_PATH_CHARS}*?/lib/python3\.\d+(?=/)")
_OTHER_TMP: Final = re.compile(_START + r"/tmp(?=/)")
_OTHER_ABSOLUTE: Final = re.compile(
    _START + rf"/(?:work|root|home|Users)(?:/{_PATH_CHARS}*)?/(?=[^/\s]+)"
)


def redact_paths(text: str) -> str:
    """``text`` with no absolute path of the machine: repo-relative paths or placeholders.

    This machine's checkout becomes a relative path; its virtual environment
    ``<venv>``, site-packages ``<site-packages>``, standard library
    ``<stdlib>``, temporary folder ``<tmp>`` and home ``~``. Paths that look
    like another machine's (inside a ``.venv`` or ``lib/python3.X``, under the
    temporary folder, or under a home or work root) become ``<venv>``,
    ``<site-packages>``, ``<stdlib>``, ``<tmp>`` or ``<path>/``, so redacting
    a file written elsewhere is safe, and redacting twice changes nothing.
    """
    for pattern, short in _machine_paths():
        text = _substitute(pattern, short, text)
    text = _OTHER_VENV.sub("<venv>", text)
    text = _OTHER_SITE.sub("<site-packages>", text)
    text = _OTHER_STDLIB.sub("<stdlib>", text)
    text = _OTHER_TMP.sub("<tmp>", text)
    return _OTHER_ABSOLUTE.sub("<path>/", text)


def profile_text(path: Path, sort: str, limit: int = 18) -> str:
    """Top ``limit`` entries of a cProfile dump, sorted by ``sort``, with short paths."""
    buf = io.StringIO()
    stats = pstats.Stats(str(path), stream=buf)
    stats.sort_stats(sort).print_stats(limit)
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines() if str(path) not in ln]
    # Drop pstats' preamble (file name, "Ordered by", "List reduced") but keep totals.
    keep = [ln for ln in lines if ln and not ln.startswith(("Ordered by", "   List reduced"))]
    return redact_paths("\n".join(keep))
