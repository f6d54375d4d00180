"""Benchmark 13: ``live-check`` over many key families at growing sizes.

Issue 37 asked whether live-check stays linear on adversarial shapes. It did not: each
logged key was tried against every family of the catalog (``SeriesMatcher`` scanned
its rows), so a log whose keys grow with the families grew with their product (1,000
families: 5.3 s, 4,000: 67 s). Rows are now indexed by the literal head, else tail, else
whole segment their keys must have. Shapes: *heads* (``fam<i>/{x}/v``), *tails*
(``{x}/v<i>``) and *segments* (``{x}/m<i>/{y}``); the log has ten steps of as many keys
as families (half of them undeclared). CPU time of ``check_stream``, median of interleaved runs;
the ratio is the time per logged key against the smallest size in the same run.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from bench.config import Config, roots_dir
from bench.measure import fmt_ms, fmt_ratio, median
from bench.report import Section, Target

if TYPE_CHECKING:
    from codegen.catalog.model import Catalog

__all__ = ["bench_families"]

_GOAL: Final = 2.0
"""Largest per-key time at the biggest size over the smallest's."""
_STEPS: Final = 10

_HEADER: Final = (
    "owner: fam\nmodule: fam\ndescription: Families.\nprefix: t\nattributes:\n"
    "  - name: rl.x\n    type: string\n    description: X.\n"
    '    max_cardinality: "1000000"\n  - name: rl.y\n    type: string\n    description: Y.\n'
    '    max_cardinality: "1000000"\nteed:\n'
)


def _heads(index: int) -> str:
    return f"fam{index}/{{rl.x}}/v"


def _tails(index: int) -> str:
    return f'"{{rl.x}}/v{index}"'


def _segments(index: int) -> str:
    return f'"{{rl.x}}/m{index}/{{rl.y}}"'


def _catalog(families: int, key: Callable[[int], str]) -> str:
    rows = "".join(
        f"  - logger_key: {key(i)}\n    name: rl.fam.r{i}\n    kind: gauge\n"
        f'    unit: "1"\n    description: Row {i}.\n    attributes:\n      - ref: rl.x\n'
        "      - ref: rl.y\n"
        for i in range(families)
    )
    return _HEADER + rows


def _log(families: int, key: Callable[[int], str]) -> bytes:
    lines = []
    per_step = max(families // _STEPS, 1)
    for step in range(_STEPS):
        metrics: dict[str, float] = {}
        for j in range(per_step):
            index = step * per_step + j
            logged = key(index).strip('"').replace("{rl.x}", f"a{j}").replace("{rl.y}", "b")
            metrics[logged] = 0.5
            metrics[f"undeclared{j}/x{index}"] = 0.1
        lines.append(json.dumps({"step": step, "prefix": "t", "metrics": metrics}))
    return ("\n".join(lines) + "\n").encode()


def _load(root: Path, text: str) -> Catalog:
    from codegen.catalog.pipeline import load_and_check

    (root / "catalog").mkdir(parents=True, exist_ok=True)
    (root / "catalog" / "fam.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=root, lint=False)
    if result.catalog is None or not result.ok:
        problems = "; ".join(d.format() for d in result.diagnostics[:3])
        raise RuntimeError(f"the families bench catalog is not valid: {problems}")
    return result.catalog


def _check_time(catalog: Catalog, log: bytes) -> float:
    from codegen.live_check import check_stream

    start = time.process_time()
    check_stream(io.BytesIO(log), catalog)
    return time.process_time() - start


def bench_families(cfg: Config) -> Section:
    """Benchmark 13: per-key time of live-check over many families, by size."""
    section = Section(
        key="families",
        title="14. live-check over many key families",
        intro=__doc__.split("\n\n", 1)[1].replace("\n", " ").strip() if __doc__ else "",
        headers=["shape", "families", "check (median)", "per logged key", "ratio"],
    )
    # 2,000 at most: loading (validating) thousands of families costs minutes of its own.
    sizes = (50, 100) if cfg.smoke else (250, 1_000, 2_000)
    runs = 1 if cfg.smoke else cfg.runs
    worst = 0.0
    for shape, key in {"heads": _heads, "tails": _tails, "segments": _segments}.items():
        cases = {
            n: (_load(roots_dir(cfg) / f"families-{shape}-{n}", _catalog(n, key)), _log(n, key))
            for n in sizes
        }
        timings: dict[int, list[float]] = {n: [] for n in cases}
        for _ in range(runs):  # interleaved, so a slow moment of the machine hits every size
            for n, (catalog, log) in cases.items():
                timings[n].append(_check_time(catalog, log))
        base: float | None = None
        for n, times in timings.items():
            per_key = median(times) / (2 * max(n // _STEPS, 1) * _STEPS)
            base = per_key if base is None else base
            ratio = per_key / base if base else 0.0
            worst = max(worst, ratio)
            shown = [fmt_ms(median(times)), f"{per_key * 1e6:.1f} µs", fmt_ratio(ratio)]
            section.rows.append([shape, f"{n:,}", *shown])
    section.targets.append(
        Target(
            name="live-check grows linearly with key families",
            goal=f"per-key time at the largest size <= {_GOAL}x the smallest's",
            measured=fmt_ratio(worst),
            met=None if cfg.smoke else worst <= _GOAL,
            why="issue 37: every key was tried against every family",
        )
    )
    return section
