"""Held-out (issue 29): on a real codebase's run with one unit declared wrong, live-check
names the row.

The catalog is the one ``infer`` drafts from a prime-rl-shaped run (its units are right,
so live-check is clean); then one row's unit is declared wrong, as a person might:
``perf/mfu`` (logged in percent) as ``"1"``, ``perf/peak_memory`` (GiB) as ``By``.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.infer import infer
from codegen.infer.draft import iter_texts
from codegen.live_check import LiveCheckReport, check_stream
from tests.catalog_projects import loaded_catalog, write_catalog
from tests.prime_shaped_run import run_lines

VALUE_KINDS = frozenset({"out_of_range", "not_integer", "unit_suspect"})


def _check_with(tmp_path: Path, wrong: tuple[str, str] | None) -> LiveCheckReport:
    """live-check of the prime-rl-shaped run against infer's draft, ``wrong`` = (the
    drafted unit line to replace, its replacement) applied to the perf owner's file."""
    run = tmp_path / "metrics.jsonl"
    run.write_text("\n".join(run_lines()) + "\n", encoding="utf-8")
    draft = infer([[str(run)]], Catalog(()))
    root = tmp_path / "project"
    for draft_file, drafted in iter_texts(draft):
        text = drafted.replace("owner: TODO.owner", f"owner: prime.{draft_file.module}")
        if wrong is not None and draft_file.module == "perf":
            assert wrong[0] in text
            text = text.replace(wrong[0], wrong[1], 1)
        write_catalog(root, text, draft_file.file_name)
    catalog = loaded_catalog(root)
    return check_stream(
        io.BytesIO(run.read_bytes()), catalog, source="metrics.jsonl", input_format="flat-jsonl"
    )


def test_the_drafted_catalog_with_its_right_units_is_clean(tmp_path: Path) -> None:
    assert _check_with(tmp_path, None).kinds() == set()


@pytest.mark.parametrize(
    ("wrong", "kind", "series", "says"),
    [
        pytest.param(
            ('unit: "%"', 'unit: "1"'),
            "unit_suspect",
            "rl.perf.mfu",
            "is it logged in percent? declare unit '%'",
            id="mfu-in-percent-declared-1",
        ),
        pytest.param(
            ('unit: "GiBy"', 'unit: "By"'),
            "not_integer",
            "rl.perf.peak_memory",
            "logged in GiB/MB? declare the unit the code logs (GiBy, MBy)",
            id="gib-declared-bytes",
        ),
    ],
)
def test_one_unit_declared_wrong_is_named_by_its_row(
    tmp_path: Path, wrong: tuple[str, str], kind: str, series: str, says: str
) -> None:
    report = _check_with(tmp_path, wrong)
    named = [f for f in report.findings if f.kind in VALUE_KINDS]
    assert [(f.kind, f.series, f.count) for f in named] == [(kind, series, 30)]
    assert says in named[0].message()
