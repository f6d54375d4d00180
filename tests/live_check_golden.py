"""Golden JSON reports of live-check: the report's fields are a public interface.

Each case checks a log (the evolution fixture, realistic upstream runs of every
training loop, a many-worker run, a run with attributes and point lines)
against a catalog and stores the JSON report under
``tests/fixtures/live_check_golden/``. The catalog the upstream cases read is
a snapshot of the repository's catalog at the time the goldens were written
(``tests/fixtures/live_check_golden/catalog/``), so an edit of ``catalog/``
does not move them.

``python -m tests.live_check_golden`` rewrites every golden file: do it only
when a change of a report is intended, and say why in the commit.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Final

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.live_check import FINDING_KINDS, LiveCheckReport, check_file, check_paths, check_stream
from tests.upstream_runs import LOOPS, run_lines

__all__ = ["CASES", "GOLDEN", "contains", "render", "write_all"]

REPO: Final = Path(__file__).resolve().parents[1]
GOLDEN: Final = REPO / "tests" / "fixtures" / "live_check_golden"
EVOLUTION: Final = REPO / "tests" / "fixtures" / "evolution"
FAIL_ON: Final = ("missing", "non_finite", "malformed", "undeclared", "attribute_value")


def _catalog(root: Path) -> Catalog:
    result = load_and_check(root=root, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.catalog


def _stream(catalog: Catalog, lines: list[str], **kwargs: object) -> LiveCheckReport:
    raw = "".join(line + "\n" for line in lines).encode()
    return check_stream(io.BytesIO(raw), catalog, source="run.jsonl", **kwargs)  # type: ignore[arg-type]


def _evolution(tmp: Path) -> LiveCheckReport:
    del tmp
    # A relative source keeps machine paths out of the golden file.
    return check_file("tests/fixtures/evolution/run.jsonl", _catalog(EVOLUTION))


def _upstream(loop: str, steps: int) -> Callable[[Path], LiveCheckReport]:
    def case(tmp: Path) -> LiveCheckReport:
        del tmp
        return _stream(_catalog(GOLDEN), run_lines(loop, steps=steps))

    return case


def _attributes_run() -> list[str]:
    """Point lines, attributes, families, loops and bad values against the snapshot catalog."""
    docs: list[dict[str, object]] = [
        {"step": 1, "prefix": "timing/setup", "metrics": {"policy_init_time_s": 1.0}},
        {"step": 1, "prefix": "timing/setup", "metrics": {"warmup_time_s": 2.0}},
        {"step": 1, "prefix": "", "metrics": {"efficiency/bogus_s": 1.0}},
        {"step": 2, "prefix": "train", "metrics": {"reward": float("nan")}, "loop": "grpo_sync"},
        {"step": 2, "prefix": "train", "metrics": {"loss": "high"}, "loop": "ppo"},
        {"step": 3, "prefix": "train", "metrics": {"loss": 1}, "loop": "grpo_v9"},
        {"step": 3, "prefix": "train", "metrics": {"global_valid_toks": -4}},
        {"step": 3, "series": "rl.no.such.series", "value": 1.0},
        {"step": 4, "series": "rl.reward.mean", "value": 0.5, "attributes": {"gpu": 0}},
        {"step": 4, "prefix": "validation-helpsteer", "metrics": {"loss": 0.1}},
        {"step": 4, "prefix": "validation-nope", "metrics": {"loss": 0.1}},
        {"step": 5, "prefix": "train", "metrics": {"made_up": 1.0, "lr": [1, 2]}},
    ]
    return [json.dumps(doc) for doc in docs] + ["{not json", '"a string"']


def _attributes(tmp: Path) -> LiveCheckReport:
    del tmp
    return _stream(_catalog(GOLDEN), _attributes_run())


def _workers(tmp: Path) -> LiveCheckReport:
    lines = run_lines("grpo_sync", steps=4)
    bad = json.dumps({"step": 9, "prefix": "train", "metrics": {"global_valid_toks": -1}})
    conflicting = json.dumps({"step": 9, "prefix": "train", "metrics": {"loss": 1}, "loop": "ppo"})
    named = json.dumps({"step": 1, "prefix": "train", "metrics": {"loss": 1}, "loop": "grpo_sync"})
    paths = []
    for rank in range(3):
        path = tmp / f"run-rank{rank}.jsonl"
        body = [named, *lines[rank::3]]
        if rank == 1:
            body += [bad, "garbage", conflicting]
        if rank == 2:
            body += [json.dumps({"step": 5, "prefix": "train", "metrics": {"x": 1}, "worker": 7})]
        path.write_text("".join(line + "\n" for line in body))
        paths.append(path)
    return check_paths([str(p) for p in paths], _catalog(GOLDEN))


CASES: Final[dict[str, Callable[[Path], LiveCheckReport]]] = {
    "evolution": _evolution,
    **{f"upstream-{loop}": _upstream(loop, 12) for loop in LOOPS},
    **{f"upstream-{loop}-short": _upstream(loop, 3) for loop in ("grpo_sync", "sft")},
    "attributes": _attributes,
    "workers": _workers,
}
"""Case name -> how to produce its report (given a scratch folder)."""


def render(name: str, tmp: Path) -> dict[str, object]:
    """The case's JSON report (machine paths removed) and its verdict with ``--fail-on``."""
    report = CASES[name](tmp)
    out: dict[str, object] = {"plain": json.loads(report.to_json().replace(str(tmp), "<tmp>"))}
    # With --fail-on only the verdict and the severities change.
    gated = json.loads(report.to_json(FAIL_ON))
    out["fail_on"] = {key: gated[key] for key in ("fail_on", "failed", "ok")} | {
        "severities": [f["severity"] for f in gated["findings"]]
    }
    out["kinds"] = sorted(report.kinds())
    out["failed_all"] = report.failed(FINDING_KINDS)
    return out


def contains(actual: object, golden: object, where: str = "$") -> list[str]:
    """Where ``actual`` differs from ``golden``; fields only ``actual`` has are fine.

    Objects may gain keys; lists must keep their length and order; values must be equal.
    """
    if isinstance(golden, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        problems = []
        for key, value in golden.items():
            if key not in actual:
                problems.append(f"{where}.{key}: missing")
            else:
                problems.extend(contains(actual[key], value, f"{where}.{key}"))
        return problems
    if isinstance(golden, list):
        if not isinstance(actual, list) or len(actual) != len(golden):
            return [f"{where}: expected {golden!r}, got {actual!r}"]
        problems = []
        for i, (a, g) in enumerate(zip(actual, golden, strict=True)):
            problems.extend(contains(a, g, f"{where}[{i}]"))
        return problems
    return [] if actual == golden else [f"{where}: expected {golden!r}, got {actual!r}"]


def write_all(tmp: Path) -> None:
    """Rewrite every golden file from the current code."""
    for name in CASES:
        scratch = tmp / name
        scratch.mkdir(parents=True, exist_ok=True)
        doc = render(name, scratch)
        path = GOLDEN / f"{name}.json"
        path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import os
    import tempfile

    os.chdir(REPO)
    with tempfile.TemporaryDirectory() as scratch_dir:
        write_all(Path(scratch_dir))
