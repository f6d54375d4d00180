"""The repo's catalog against realistic upstream run logs, one per training loop.

Each log (:mod:`upstream_runs`) carries the keys upstream NeMo-RL really logs
and does not name its loop. For every loop: the loop is inferred, every
upstream-declared series that loop logs is matched, and no row is missing
that the loop does not emit, also for a run stopped before its first
validation.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from codegen.live_check import LiveCheckReport, check_stream
from codegen.model import Catalog
from codegen.pipeline import load_and_check
from tests.upstream_runs import LOOPS, run_lines

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The repo's own catalog."""
    result = load_and_check(root=REPO, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.catalog


def check(catalog: Catalog, lines: list[str], **kwargs: object) -> LiveCheckReport:
    raw = "".join(line + "\n" for line in lines).encode()
    return check_stream(io.BytesIO(raw), catalog, source="run.jsonl", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("loop", LOOPS)
def test_the_loop_of_an_upstream_log_is_inferred(catalog: Catalog, loop: str) -> None:
    report = check(catalog, run_lines(loop))
    assert (report.loop.name, report.loop.source) == (loop, "inferred")


@pytest.mark.parametrize("loop", LOOPS)
def test_a_short_upstream_log_still_infers_its_loop(catalog: Catalog, loop: str) -> None:
    assert check(catalog, run_lines(loop, steps=1)).loop.name == loop


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("steps", [12, 3], ids=["past-validation", "before-validation"])
def test_no_row_is_missing_from_a_complete_upstream_log(
    catalog: Catalog, loop: str, steps: int
) -> None:
    report = check(catalog, run_lines(loop, steps=steps))
    assert [f.message() for f in report.findings if f.kind == "missing"] == []
    assert [n.message for n in report.notices if n.kind == "unexpected_loop"] == []
