"""``infer`` on a prime-rl-shaped run drafts rows that need (almost) no correcting.

The measure the issue asks for: of the rows drafted from 30 steps of 55 keys, how many
would a person change before committing them (a wrong unit, a series per environment, a
numeric or ``_value`` name, the logger's timestamp drafted as a metric, a key left out)?
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from codegen.catalog.model import Catalog
from codegen.infer import infer
from tests.prime_shaped_run import ENVIRONMENTS, EXPECTED, NOT_ROWS, run_lines

_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
MAX_CORRECTIONS = 3


def _corrections(tmp_path: Path) -> tuple[list[str], int]:
    run = tmp_path / "metrics.jsonl"
    run.write_text("\n".join(run_lines()) + "\n", encoding="utf-8")
    draft = infer([[str(run)]], Catalog(()))
    rows = [row for f in draft.files for row in f.rows]
    wrong: list[str] = []
    covered = set()
    for row in rows:
        key = _PLACEHOLDER.sub("{}", row.logger_key)
        covered.add(key)
        if key in NOT_ROWS:
            wrong.append(f"{key}: not a metric, drafted as a row")
        elif key not in EXPECTED:
            wrong.append(f"{key}: not the row a person declares (a series per value?)")
        elif row.unit != EXPECTED[key]:
            wrong.append(f"{key}: unit {row.unit!r}, not {EXPECTED[key]!r}")
        if re.search(r"_\d+$|_value$", row.name) or any(e in row.name for e in ENVIRONMENTS):
            wrong.append(f"{key}: name {row.name}")
    wrong += [f"{key}: no row" for key in sorted(set(EXPECTED) - covered)]
    return wrong, len(rows)


def test_infer_on_a_prime_rl_shaped_run_needs_at_most_three_corrections(tmp_path: Path) -> None:
    keys = {k for line in run_lines() for k in json.loads(line)} - {"step", "time"}
    assert len(keys) == 55
    wrong, drafted = _corrections(tmp_path)
    assert drafted == len(EXPECTED)
    assert len(wrong) <= MAX_CORRECTIONS, wrong


def test_infer_proposes_the_file_loggers_timestamp_as_bookkeeping(tmp_path: Path) -> None:
    run = tmp_path / "metrics.jsonl"
    run.write_text("\n".join(run_lines(steps=3)) + "\n", encoding="utf-8")
    draft = infer([[str(run)]], Catalog(()))
    assert [(b.key, b.role) for b in draft.bookkeeping] == [("time", "bookkeeping")]
    assert any("'time' is a bookkeeping" in note for note in draft.notes())
    assert [b.key for f in draft.files for b in f.bookkeeping] == ["time"]
