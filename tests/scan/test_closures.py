"""A nested function that writes keys into a dict of the enclosing one from its own string
parameter (``out[f"{tag}tokens_per_s"] = ...``): each call with a literal (or the
parameter's default) gives one key, reported where the key is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.scanner import ScanReport, scan

_PERF = """\
import wandb


def perf_metrics(lengths, elapsed, suffix):
    out = {"elapsed": elapsed}

    def rate(values, tag="plain_"):
        out[f"{tag}tokens_per_s"] = sum(values) / elapsed
        if not values:
            return
        out[f"longest_{tag}sample"] = max(values)

    rate(lengths, tag="kept_")
    rate(lengths, "all_")
    rate(lengths)
    CALLS
    return out


def log_perf(lengths, elapsed):
    wandb.log({f"zz_perf/{k}": v for k, v in perf_metrics(lengths, elapsed, "x").items()})
"""


def _scan(tmp_path: Path, catalog: Catalog, source: str) -> ScanReport:
    path = tmp_path / "src" / "perf.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return scan([path.parent], catalog, cwd=tmp_path, unlogged=False)


def _found(report: ScanReport, code: str) -> set[tuple[str, int]]:
    return {
        (d.message.split("'")[1], d.position.line)
        for d in report.diagnostics
        if d.code == code and d.position is not None
    }


def test_a_closures_string_parameter_takes_each_calls_literal_or_its_default(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, _PERF.replace("CALLS", "pass"))

    assert _found(report, "SCAN_UNDECLARED") == {
        ("zz_perf/elapsed", 5),
        *((f"zz_perf/{tag}tokens_per_s", 8) for tag in ("kept_", "all_", "plain_")),
        *((f"zz_perf/longest_{tag}sample", 11) for tag in ("kept_", "all_", "plain_")),
    }
    assert _found(report, "SCAN_UNRESOLVED") == set()


@pytest.mark.parametrize(
    ("calls", "shown"),
    [
        ("rate(lengths, tag=lengths[0])", "lengths[0]"),  # not a string scan can know
        ("pool.map(rate, lengths)", "tag"),  # passed on: its calls are not seen
    ],
)
def test_a_closures_parameter_not_given_a_known_string_stays_a_hole_where_it_is_written(
    tmp_path: Path, repo_catalog: Catalog, calls: str, shown: str
) -> None:
    report = _scan(tmp_path, repo_catalog, _PERF.replace("CALLS", calls))

    holes = {key for key, line in _found(report, "SCAN_UNRESOLVED") if line in (8, 11)}
    assert f"zz_perf/{{{shown}}}tokens_per_s" in holes
    assert not any(key.startswith("zz_perf/{") for key, _ in _found(report, "SCAN_UNDECLARED"))
