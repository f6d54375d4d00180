"""Benchmark 9: ``generate`` with every template sandboxed vs the same run on plain Jinja.

Issue 18 renders every template, built-in or a project's, in Jinja's
``ImmutableSandboxedEnvironment``; the target is that this costs at most 10% of
a 10,000-row ``generate``. The baseline is the same ``generate`` with
:mod:`codegen.generate.templating`'s environment class swapped for plain
``jinja2.Environment`` in the child process (``python -m bench.unsandboxed``),
measured interleaved with the sandboxed runs. Two roots: the built-in outputs
alone, and the same plus one added output whose template walks every row (an
attribute lookup and a filter call per field, where the sandbox's checks cost).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bench.config import Config, fresh_root
from bench.gen_bench import codegen_argv
from bench.measure import (
    BenchError,
    Sample,
    child_env,
    fmt_ms,
    fmt_ratio,
    median,
    python,
    run_checked,
)
from bench.report import Section, Target

__all__ = ["OUTPUT_TEMPLATE", "bench_sandbox"]

_GOAL = 1.10
_ROWS = 10_000

OUTPUT_TEMPLATE = """\
// {{ header }}
{% for row in file.rows %}
export const {{ row.constant_name }} = {name: {{ row.name | json }}, kind: {{ row.kind | json }}, \
unit: {{ row.unit | json }}, stability: {{ row.stability | json }}, \
description: {{ row.description | json }}};
{% endfor %}
"""
"""An added output as an adopter writes one: TypeScript constants, five fields a row."""

_TABLE = """\
[tool.metric-catalog]
templates-dir = "templates"

[[tool.metric-catalog.outputs]]
template = "rows.ts.j2"
path = "web/{module}.ts"
"""


def _root(cfg: Config, rows: int, name: str, *, outputs: bool) -> Path:
    root = fresh_root(cfg, rows, name)
    if outputs:
        (root / "pyproject.toml").write_text(_TABLE, encoding="utf-8")
        (root / "templates").mkdir()
        (root / "templates" / "rows.ts.j2").write_text(OUTPUT_TEMPLATE, encoding="utf-8")
    return root


def _runner(cfg: Config, rows: int, *, sandboxed: bool, outputs: bool) -> Callable[[], Sample]:
    name = f"sandbox-{'on' if sandboxed else 'off'}-{'out' if outputs else 'builtin'}-{rows}"

    def run() -> Sample:
        root = _root(cfg, rows, name, outputs=outputs)
        argv = codegen_argv("generate", root)
        if not sandboxed:
            argv = [python(), "-m", "bench.unsandboxed", *argv[3:]]
        sample = run_checked(argv, cwd=root, env=child_env())
        if outputs and not any((root / "web").glob("*.ts")):
            msg = f"generate wrote no added output under {root / 'web'}"
            raise BenchError(msg)
        return sample

    return run


def bench_sandbox(cfg: Config) -> Section:
    """Benchmark 9: sandboxed vs plain Jinja templates in a full ``generate``."""
    rows = max(cfg.sizes) if cfg.smoke else _ROWS
    section = Section(
        key="sandbox",
        title="9. Sandboxed templates",
        intro=(
            f"A full `generate` of {rows:,} rows with every template rendered in"
            " `jinja2.sandbox.ImmutableSandboxedEnvironment` (as shipped) vs the same run with"
            " plain `jinja2.Environment` swapped in (`python -m bench.unsandboxed`, bench only),"
            " on the built-in outputs alone and with one added output whose template writes"
            f" five fields of every row. Median of {cfg.runs} interleaved runs after one"
            " untimed warm-up, fresh root per run; the ratio is sandboxed over plain."
        ),
        headers=["outputs", "templates", "wall", "CPU", "ratio (wall)", "ratio (CPU)"],
    )
    measured: list[str] = []
    worst = 0.0
    for outputs, label in ((False, "built-in"), (True, "built-in + 1 added output")):
        runs = {
            sandboxed: _runner(cfg, rows, sandboxed=sandboxed, outputs=outputs)
            for sandboxed in (False, True)
        }
        samples: dict[bool, list[Sample]] = {False: [], True: []}
        for i in range(-1, cfg.runs):
            for sandboxed, run in runs.items():
                sample = run()
                if i >= 0:
                    samples[sandboxed].append(sample)
        wall = {k: median([s.wall_s for s in v]) for k, v in samples.items()}
        cpu = {k: median([s.cpu_s for s in v]) for k, v in samples.items()}
        ratio_wall, ratio_cpu = wall[True] / wall[False], cpu[True] / cpu[False]
        section.rows += [
            [label, "plain Jinja", fmt_ms(wall[False]), fmt_ms(cpu[False]), "1x", "1x"],
            [
                label,
                "sandboxed",
                fmt_ms(wall[True]),
                fmt_ms(cpu[True]),
                fmt_ratio(ratio_wall),
                fmt_ratio(ratio_cpu),
            ],
        ]
        measured.append(f"{label}: {fmt_ratio(ratio_cpu)} CPU ({fmt_ratio(ratio_wall)} wall)")
        worst = max(worst, ratio_cpu)
    section.targets.append(
        Target(
            name=f"generate {rows:,} rows, sandboxed templates vs plain Jinja",
            goal=f"<= {_GOAL:.2f}x (CPU time, steadier than wall on a shared machine)",
            measured="; ".join(measured),
            met=None if cfg.smoke else worst <= _GOAL,
            why="issue 18 item 2",
        )
    )
    return section
