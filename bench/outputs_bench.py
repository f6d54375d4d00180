"""Benchmark 12: each generated output's size per catalog row, at 1k and 10k rows.

An output whose size grows faster than the catalog is a slow ``generate``, a large
commit and, for the Prometheus rules, a slow rule load (#37: every absent alert once
listed every other series of its owner, 24 MB at 1,200 required rows). Two shapes are
rendered in-process (:func:`codegen.generate.plan.render_all`, nothing written):

- **synthetic**: the benchmarks' synthetic catalog (:mod:`bench.synthetic`);
- **required**: one owner whose teed rows are all ``required`` gauges and no loop, the
  shape that made the rules quadratic.

Each output kind's bytes per row at the larger size over the smaller is the *size
ratio*: near 1 when the output is linear in the catalog. Sizes, not times: the
numbers are the same on any machine.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Final

from bench.config import Config, catalog_source
from bench.report import Section, Target
from codegen.catalog.pipeline import load_and_check
from codegen.config import Config as CodegenConfig
from codegen.generate.plan import render_all

__all__ = ["bench_outputs", "output_kind", "output_sizes", "required_catalog"]

_RATIO_GOAL: Final = 1.25
"""A linear output's bytes per row barely move from 1k to 10k rows (names grow a digit)."""
_FULL_SIZES: Final = (1_000, 10_000)
_SMOKE_SIZES: Final = (60, 120)


def output_kind(path: str) -> str:
    """Which output a generated path belongs to (its kind in the table)."""
    if path.endswith(".rules.yaml"):
        return "Prometheus rules"
    if path.endswith("wandb_metrics.py"):
        return "W&B definitions"
    if path.endswith(".py"):
        return "Python modules"
    if path.endswith(".json") and "/dashboards/" in f"/{path}":
        return "Grafana dashboards"
    if path.endswith(".json"):
        return "catalog.json"
    if path.endswith(".md"):
        return "docs pages"
    return "other"


def required_catalog(root: Path, rows: int) -> Path:
    """``root`` holding one owner with ``rows`` required teed gauges and no loop."""
    body = "".join(
        f"  - logger_key: value_{index}\n"
        f"    name: rl.bench.value_{index}\n"
        "    kind: gauge\n"
        '    unit: "1"\n'
        f"    description: Value {index} of the step, required from the first step.\n"
        "    requirement_level: required\n"
        for index in range(rows)
    )
    text = (
        "owner: bench.required\nmodule: required\n"
        "description: Every row required, no loop.\nprefix: train\nteed:\n" + body
    )
    (root / "catalog").mkdir(parents=True, exist_ok=True)
    (root / "catalog" / "required.yaml").write_text(text, encoding="utf-8")
    return root


def output_sizes(root: Path) -> dict[str, int]:
    """Bytes (UTF-8) of each output kind ``generate`` renders for the catalog at ``root``.

    Raises:
        ValueError: The catalog does not validate.
    """
    result = load_and_check(root=root, lint=False)
    if not result.ok:
        msg = f"the catalog under {root} does not validate: {result.diagnostics[:3]}"
        raise ValueError(msg)
    sizes: dict[str, int] = defaultdict(int)
    for path, text in render_all(result.catalog, CodegenConfig(root=root)).items():
        sizes[output_kind(path)] += len(text.encode("utf-8"))
    return dict(sizes)


def _shapes(cfg: Config, work: Path) -> dict[str, Callable[[int], Path]]:
    return {
        "synthetic": lambda rows: catalog_source(cfg, rows),
        "required": lambda rows: required_catalog(work / f"required-{rows}", rows),
    }


def bench_outputs(cfg: Config) -> Section:
    """Benchmark 12: bytes per row of every output at two sizes, and their ratio."""
    small, large = _SMOKE_SIZES if cfg.smoke else _FULL_SIZES
    section = Section(
        key="outputs",
        title="12. Generated output size per row",
        intro=(
            f"Every output `generate` renders, in bytes per catalog row at {small:,} and "
            f"{large:,} rows, for the synthetic catalog and for one owner whose rows are all "
            "required with no loop (the shape that made the Prometheus rules quadratic). "
            "*Size ratio* is bytes per row at the larger size over the smaller: near 1 for "
            "an output linear in the catalog."
        ),
        headers=["shape", "output", f"bytes/row at {small:,}", f"at {large:,}", "size ratio"],
    )
    worst = 0.0
    worst_name = ""
    with tempfile.TemporaryDirectory(prefix="bench-outputs-") as folder:
        for shape, make in _shapes(cfg, Path(folder)).items():
            first = output_sizes(make(small))
            second = output_sizes(make(large))
            for kind in sorted(set(first) | set(second)):
                before = first.get(kind, 0) / small
                after = second.get(kind, 0) / large
                ratio = after / before if before else 0.0
                if ratio > worst:
                    worst, worst_name = ratio, f"{shape} {kind}"
                section.rows.append(
                    [shape, kind, f"{before:,.0f}", f"{after:,.0f}", f"{ratio:.2f}x"]
                )
    section.targets.append(
        Target(
            name="every output linear in the catalog",
            goal=f"size ratio <= {_RATIO_GOAL}x for every output and shape",
            measured=f"{worst:.2f}x ({worst_name})",
            met=None if cfg.smoke else worst <= _RATIO_GOAL,
            why="issue #37 item 2",
        )
    )
    return section
