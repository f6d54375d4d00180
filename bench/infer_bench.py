"""Benchmark 11: ``infer`` over a run's log against ``live-check`` over the same log.

The log (about 30 MB in a full run) is written the way ``JsonlLogger`` writes
it: every step logs the literal teed keys of this repo's catalog under their
prefixes, plus as many keys the catalog does not declare, in the shapes real
trainers log (per-stage timings ``timing_s/<stage>``, statistics
``critic/score/<stat>``, per-dataset validation keys every tenth step, counts
and a running total), so ``infer`` has families, units, kinds and presence to
work out. CPU time (``time.process_time``) in this process, median of
interleaved runs: ``check_file`` against ``infer`` (reading, drafting and
rendering the YAML).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bench.config import Config, roots_dir
from bench.flat_project import EXPECTED, kept_as_drafted, write_runs
from bench.measure import REPO, fmt_ms, fmt_ratio, median
from bench.report import Section, Target

if TYPE_CHECKING:
    from codegen.catalog.model import Catalog

__all__ = ["bench_infer", "write_log"]

_GOAL = 1.5
_STAGES = ("gen", "ref", "old_log_prob", "values", "adv", "update_critic", "update_actor", "step")
_STATS = ("mean", "max", "min")
_DATASETS = ("gsm8k", "math", "aime", "mbpp")


def _catalog() -> Catalog:
    from codegen.catalog.pipeline import load_and_check

    result = load_and_check(root=REPO)
    assert result.catalog is not None
    return result.catalog


def _empty() -> Catalog:
    from codegen.catalog.model import Catalog

    return Catalog(())


def _declared(catalog: Catalog) -> dict[str, list[str]]:
    """The literal teed keys of the catalog by prefix."""
    found: dict[str, list[str]] = {}
    for _, row in catalog.rows():
        key = row.logger_key
        if key is None or "{" in key or row.prefix is None or "{" in row.prefix:
            continue
        found.setdefault(row.prefix, []).append(key)
    return found


def write_log(path: Path, catalog: Catalog, target_bytes: int) -> int:
    """Write steps until ``target_bytes``; return the number of lines."""
    rng = random.Random(7)
    declared = _declared(catalog)
    lines = 0
    size = 0
    step = 0
    with path.open("w", encoding="utf-8") as out:
        while size < target_bytes:
            step += 1
            records: list[tuple[str, dict[str, object]]] = []
            for prefix, keys in sorted(declared.items()):
                records.append((prefix, {key: round(rng.random(), 6) for key in keys}))
            extra: dict[str, object] = {
                f"timing_s/{s}": round(rng.random() * 9, 4) for s in _STAGES
            }
            extra |= {f"critic/score/{s}": round(rng.random(), 6) for s in _STATS}
            extra |= {f"actor/metric_{i}": round(rng.random(), 6) for i in range(12)}
            extra |= {"num_samples": 256, "consumed_tokens": 4096 * step, "mfu_pct": 41.5}
            records.append(("", extra))
            if step % 10 == 0:
                records.append(("validation", {f"{d}/accuracy": rng.random() for d in _DATASETS}))
            for prefix, metrics in records:
                line = json.dumps({"step": step, "prefix": prefix, "metrics": metrics}) + "\n"
                out.write(line)
                size += len(line)
                lines += 1
    return lines


def _cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def bench_infer(cfg: Config) -> Section:
    """Time live-check and infer over the same log, interleaved; one target (<= 1.5x)."""
    from codegen.infer import infer, iter_texts
    from codegen.live_check import check_file

    catalog = _catalog()
    folder = roots_dir(cfg) / "infer"
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "run.jsonl"
    target = 200_000 if cfg.smoke else 30_000_000
    lines = write_log(log, catalog, target)
    size = log.stat().st_size

    def drafted() -> int:
        draft = infer([[str(log)]], catalog)
        return sum(len(text) for _, text in iter_texts(draft))

    checks: list[float] = []
    infers: list[float] = []
    for _ in range(cfg.runs):
        checks.append(_cpu(lambda: check_file(str(log), catalog)))
        infers.append(_cpu(drafted))
    check_cpu, infer_cpu = median(checks), median(infers)
    ratio = infer_cpu / check_cpu
    rows = len([row for f in infer([[str(log)]], catalog).files for row in f.rows])
    section = Section(
        key="infer",
        title="11. infer vs live-check over the same log",
        intro=(
            f"A {size / 1_000_000:.1f} MB JsonlLogger-shaped log ({lines:,} lines): this repo's "
            "literal teed keys plus as many undeclared ones in real trainers' shapes. "
            "`codegen.live_check.check_file` vs `codegen.infer.infer` plus rendering its YAML "
            f"({rows} drafted rows), CPU time in-process, median of {cfg.runs} interleaved runs."
        ),
        headers=["command", "CPU", "ratio to live-check"],
        rows=[
            ["live-check (check_file)", fmt_ms(check_cpu), "-"],
            ["infer (read, draft, render)", fmt_ms(infer_cpu), fmt_ratio(ratio)],
        ],
    )
    project = folder / "flat_project"
    project.mkdir(exist_ok=True)
    draft = infer([[run] for run in write_runs(project)], _empty())
    kept, drafted_rows = kept_as_drafted(draft)
    section.targets.append(
        Target(
            name="infer on a small flat-dict W&B project (two loops): rows kept as drafted",
            goal=f"{len(EXPECTED)} of {len(EXPECTED)}",
            measured=f"{kept} of {drafted_rows} drafted rows",
            met=kept == drafted_rows == len(EXPECTED),
            why=(
                "issue 40: a reused key's scale clash, loop-aware presence, every; "
                "bench/flat_project.py holds the runs and the rows a person writes"
            ),
        )
    )
    section.targets.append(
        Target(
            name="infer vs live-check over a 30 MB log",
            goal=f"<= {_GOAL:g}x",
            measured=f"{fmt_ratio(ratio)} ({fmt_ms(infer_cpu)} vs {fmt_ms(check_cpu)} CPU)",
            met=None if cfg.smoke else ratio <= _GOAL,
            why="issue 21: infer reads through live-check's ingesters and skips declared keys",
        )
    )
    return section
