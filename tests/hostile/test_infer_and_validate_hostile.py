"""``infer`` and ``validate`` on hostile names and expressions.

What an attacker controls: a run file's name (a line break in it), the keys a run logs
(300 characters, 10,000 ``/`` parts), and a catalog row's ``condition`` (400 unary
minus signs deep). ``infer`` drafts what it can, reports the keys it cannot name and
writes the run names into the draft's header escaped; ``validate`` gives a positioned
error for an expression too deep to walk. Each run is a child bounded by a deadline and
300 MiB of peak RSS.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from codegen.catalog.conditions import MAX_CONDITION_DEPTH
from codegen.infer.observe import MAX_DRAFTED_KEY_CHARS
from tests.catalog_projects import write_catalog
from tests.hostile_runs import REPO, run_cli

EVOLUTION = REPO / "tests" / "fixtures" / "evolution"
MEMORY_MIB = 300


def log_line(key: str) -> str:
    return json.dumps({"step": 1, "prefix": "train", "metrics": {key: 1.0, "fresh_key": 2.0}})


def test_a_run_name_with_a_line_break_cannot_inject_yaml_into_the_draft(tmp_path: Path) -> None:
    run = tmp_path / "run\nowner: injected.module\n#.jsonl"
    run.write_text(log_line("brand_new_key") + "\n", encoding="utf-8")
    out = tmp_path / "draft.yaml"

    done = run_cli("infer", "--root", str(EVOLUTION), "--out", str(out), str(run), tmp=tmp_path)

    assert done.code == 0, done.stderr
    draft = out.read_text(encoding="utf-8")
    assert "\nowner: injected.module" not in draft
    assert "run\\nowner: injected.module\\n#.jsonl" in draft
    assert yaml.safe_load(draft)["owner"] == "TODO.owner"


def test_a_key_too_long_to_name_is_reported_and_the_rest_is_drafted(tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    run.write_text(log_line("k" * 300) + "\n", encoding="utf-8")
    out = tmp_path / "draft.yaml"

    done = run_cli("infer", "--root", str(EVOLUTION), "--out", str(out), str(run), tmp=tmp_path)

    assert done.code == 0, done.stderr
    assert f"over the {MAX_DRAFTED_KEY_CHARS} a series name can be drafted from" in done.stderr
    assert "logger_key: fresh_key" in out.read_text(encoding="utf-8")
    assert done.peak_mib < MEMORY_MIB


def test_a_key_of_10000_parts_is_reported_without_walking_its_parts(tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    run.write_text(log_line("/".join(["s"] * 10_000)) + "\n", encoding="utf-8")
    out = tmp_path / "draft.yaml"

    # The deadline is the bound: the draft took 8 s (14 s on a loaded machine) before.
    done = run_cli(
        "infer", "--root", str(EVOLUTION), "--out", str(out), str(run), tmp=tmp_path, deadline=6
    )

    assert done.code == 0, done.stderr
    assert "not drafted: 'train/s/s/s" in done.stderr
    assert done.peak_mib < MEMORY_MIB


DEEP_ROW = """\
owner: hostile.owner
module: hostile
description: A row whose condition nests 400 levels deep.
prefix: val
teed:
  - logger_key: acc
    name: rl.hostile.val.accuracy
    kind: gauge
    unit: "1"
    description: Validation accuracy.
    requirement_level: conditionally_required
    condition: "{condition}"
"""


def test_a_condition_400_levels_deep_is_a_positioned_error(tmp_path: Path) -> None:
    project = write_catalog(tmp_path, DEEP_ROW.replace("{condition}", "-" * 400 + "config.a == 1"))

    done = run_cli("validate", "--root", str(project), tmp=tmp_path, deadline=60)

    assert done.code == 1
    assert "catalog/catalog.yaml:12:" in done.stdout + done.stderr
    assert f"nests deeper than {MAX_CONDITION_DEPTH} levels" in done.stdout + done.stderr
    assert done.peak_mib < MEMORY_MIB
