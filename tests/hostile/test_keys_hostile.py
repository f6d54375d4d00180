"""Keys and lines as an attacker logs them: thousands of ``/`` parts, a megabyte-long family
key, a 100 MB line, a CSV log of overlong lines.

What an attacker controls: every logged key (its length and how many ``/`` it holds),
every line's length, and a registry row's ``logger_key`` (a generated module is code,
but a hostile catalog makes it). Splitting a key must be linear in its length; the
registry refuses a key over its cap; an overlong line of a file is skipped to its end
and the good lines after it are read; the message abandoning a CSV log names CSV.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.live_check import check_file
from metric_catalog import vocabulary
from metric_catalog.series_rules import MAX_PREFIX_CUTS, split_flat_key
from tests.hostile_runs import REPO, run_cli, run_snippet

EVOLUTION = REPO / "tests" / "fixtures" / "evolution"


def test_a_key_of_40000_parts_is_split_trying_a_bounded_number_of_cuts() -> None:
    tried: list[str] = []

    def routes(prefix: str, rest: str) -> bool:
        tried.append(prefix)
        return False

    key = "/".join(["a"] * 40_000)
    assert split_flat_key(key, routes) == ("", key)
    assert len(tried) == MAX_PREFIX_CUTS + 1  # the cuts, then the whole key under ""


def test_a_key_with_a_declared_prefix_is_still_split_at_it() -> None:
    assert split_flat_key("actor/pg_loss", lambda p, r: p == "actor") == ("actor", "pg_loss")
    glued = split_flat_key("eval_loss", lambda p, r: p == "eval_", None, lambda p: p == "eval_")
    assert glued == ("eval_", "loss")


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("flat-jsonl", json.dumps({"step": 1, "data": {"/".join(["s"] * 40_000): 1.0}})),
        ("jsonl", json.dumps({"step": 1, "prefix": "", "metrics": {"/".join(["s"] * 40_000): 1}})),
    ],
    ids=["flat-jsonl-40k-parts", "jsonl-40k-parts"],
)
def test_a_log_of_one_40000_part_key_is_read_in_bounded_memory(
    tmp_path: Path, name: str, line: str
) -> None:
    log = tmp_path / "run.jsonl"
    log.write_text(line + "\n", encoding="utf-8")

    done = run_cli(
        "live-check",
        "--root",
        str(EVOLUTION),
        "--input-format",
        name,
        str(log),
        tmp=tmp_path,
        deadline=60,
    )

    assert done.code in (0, 1), done.stderr
    assert done.peak_mib < 200  # bound: 200 MiB (3.1 GB, then MemoryError, before)


def test_the_registry_refuses_a_family_key_of_a_million_characters(tmp_path: Path) -> None:
    code = """
        from metric_catalog.vocabulary import MetricAttribute, TeedMetric
        try:
            TeedMetric(
                logger_key="{rl.setup.phase}_" + "x" * 1_000_000, name="rl.hostile.big",
                kind="gauge", unit="s", description="d", prefix="timing/setup",
                attributes=(MetricAttribute(name="rl.setup.phase", max_cardinality=64),),
            )
        except ValueError as exc:
            print(str(exc)[:300])
    """
    done = run_snippet(code, tmp=tmp_path, deadline=60)
    assert f"characters long, over {vocabulary.MAX_KEY_LENGTH}" in done.stdout
    assert done.peak_mib < 200


def test_a_literal_key_at_the_cap_is_accepted() -> None:
    row = vocabulary.TeedMetric(
        logger_key="k" * vocabulary.MAX_KEY_LENGTH,
        name="rl.hostile.long",
        kind="gauge",
        unit="1",
        description="d",
    )
    assert len(row.logger_key) == vocabulary.MAX_KEY_LENGTH


GOOD = '{"step": 2, "prefix": "train", "metrics": {"reward": 0.5}}\n'


def test_the_good_line_after_an_overlong_line_of_a_file_is_read(
    evolution_catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The caps scaled down 1000x: a 100 KB line past a 64 KB skip bound stands for a 100 MB
    # line past the 64 MiB one.
    from codegen import live_check

    monkeypatch.setattr(live_check, "MAX_LINE_BYTES", 1024)
    monkeypatch.setattr(live_check, "MAX_SKIPPED_BYTES", 64 * 1024)
    log = tmp_path / "run.jsonl"
    junk = '{"step": 1, "prefix": "train", "metrics": {"junk": "' + "x" * 100_000 + '"}}\n'
    log.write_text(junk + GOOD, encoding="utf-8")

    report = check_file(str(log), evolution_catalog)

    assert report.abandoned == []
    assert report.records == 1
    assert [f.kind for f in report.findings if f.kind == "malformed"] == ["malformed"]


def test_a_csv_log_abandoned_for_overlong_lines_is_told_it_is_not_csv(
    evolution_catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codegen import live_check

    monkeypatch.setattr(live_check, "MAX_LINE_BYTES", 1024)
    folder = tmp_path / "version_0"
    folder.mkdir()
    overlong = "1," + "9" * 2000 + "\n"
    (folder / "metrics.csv").write_text("step,loss\n" + overlong * 3, encoding="utf-8")

    report = check_file(str(folder), evolution_catalog)

    assert len(report.abandoned) == 1
    assert "this is not a CSV log: pass the metrics.csv a CSVLogger wrote" in report.abandoned[0]
    assert "JSONL" not in report.abandoned[0]
