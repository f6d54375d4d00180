"""Benchmark 12: ``emit``'s plan over ``sum_of`` shapes at growing sizes.

Issue 37 measured ``emit`` growing with rows times keys matched: a chain of 400
``sum_of`` rows (each the total of the next link and a leaf) took 19-38 s, every
total rescanning every logged key and recompiling its pattern. The plan now matches
each key to the rows involved once, so the time per row must stay flat as the
catalog grows. Two shapes: the *chain* (totals of totals) and a *fan* (one total
over every other row). CPU time of :func:`codegen.emit.plan_steps` over a few steps,
median of interleaved runs; the ratio is the per-row time against the smallest size
in the same run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from bench.config import Config, roots_dir
from bench.measure import fmt_ms, fmt_ratio, median
from bench.report import Section, Target

if TYPE_CHECKING:
    from codegen.catalog.model import Catalog

__all__ = ["bench_emit", "chain_catalog", "fan_catalog"]

_GOAL: Final = 2.0
"""Largest per-row time at the biggest size over the smallest's (n log n stays under it)."""
_STEPS: Final = 3


def _row(name: str, parts: str = "") -> str:
    total = f"    sum_of: [{parts}]\n" if parts else ""
    return (
        f'  - logger_key: {name}\n    name: rl.bench.{name}\n    kind: gauge\n    unit: "1"\n'
        f"    description: Row {name}.\n{total}"
    )


def _document(rows: list[str]) -> str:
    return "owner: bench\nmodule: bench\ndescription: sum_of shapes.\nprefix: t\nteed:\n" + (
        "".join(rows)
    )


def chain_catalog(links: int) -> str:
    """``links`` totals, each of the next link and a leaf, declared totals first."""
    rows = [_row(f"r{i}", f"rl.bench.r{i + 1}, rl.bench.s{i + 1}") for i in range(links - 1)]
    rows += [_row(f"s{i + 1}") for i in range(links - 1)] + [_row(f"r{links - 1}")]
    return _document(rows)


def fan_catalog(parts: int) -> str:
    """One total over ``parts`` leaves."""
    names = ", ".join(f"rl.bench.p{i}" for i in range(parts))
    return _document([_row("total", names), *(_row(f"p{i}") for i in range(parts))])


def _load(root: Path, text: str) -> Catalog:
    from codegen.catalog.pipeline import load_and_check

    (root / "catalog").mkdir(parents=True, exist_ok=True)
    (root / "catalog" / "bench.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=root, lint=False)
    if result.catalog is None or not result.ok:
        problems = "; ".join(d.format() for d in result.diagnostics[:3])
        raise RuntimeError(f"the emit bench catalog is not valid: {problems}")
    return result.catalog


def _plan_time(catalog: Catalog) -> float:
    from codegen.emit import plan_steps

    start = time.process_time()
    for _step in plan_steps(catalog, None, _STEPS):
        pass
    return time.process_time() - start


def _sizes(cfg: Config) -> tuple[int, ...]:
    return (25, 50) if cfg.smoke else (250, 1_000, 4_000)


def bench_emit(cfg: Config) -> Section:
    """Benchmark 12: per-row plan time of ``emit`` over sum_of chains and fans by size."""
    section = Section(
        key="emit",
        title="13. emit over sum_of shapes",
        intro=__doc__.split("\n\n", 1)[1].replace("\n", " ").strip() if __doc__ else "",
        headers=["shape", "links or parts", "plan (median)", "per link or part", "ratio"],
    )
    shapes: dict[str, Callable[[int], str]] = {"chain": chain_catalog, "fan": fan_catalog}
    runs = 1 if cfg.smoke else cfg.runs
    worst = 0.0
    for shape, build in shapes.items():
        catalogs = {n: _load(roots_dir(cfg) / f"emit-{shape}-{n}", build(n)) for n in _sizes(cfg)}
        timings: dict[int, list[float]] = {n: [] for n in catalogs}
        for _ in range(runs):  # interleaved, so a slow moment of the machine hits every size
            for n, catalog in catalogs.items():
                timings[n].append(_plan_time(catalog))
        base: float | None = None
        for n, times in timings.items():
            per_row = median(times) / n
            base = per_row if base is None else base
            ratio = per_row / base if base else 0.0
            worst = max(worst, ratio)
            section.rows.append(
                [
                    shape,
                    f"{n:,}",
                    fmt_ms(median(times)),
                    f"{per_row * 1e6:.1f} µs",
                    fmt_ratio(ratio),
                ]
            )
    section.targets.append(
        Target(
            name="emit grows linearly over sum_of shapes",
            goal=f"per-row plan time at the largest size <= {_GOAL}x the smallest's",
            measured=fmt_ratio(worst),
            met=None if cfg.smoke else worst <= _GOAL,
            why="issue 37: a 400-row chain took 19-38 s",
        )
    )
    return section
