"""Benchmark 4: import cost of the runtime plus generated modules, against the OTel SDK.

The target: importing ``metric_catalog.vocabulary`` plus every generated module
of this repository's own catalog (``src/metric_catalog/generated/``) costs at
most 1.0x importing ``opentelemetry.sdk.metrics`` (CPU above start-up, both
measured in one run). A training process imports torch; the runtime may cost
what the SDK it exports through costs, not a multiple of it. A 10,000-row
synthetic catalog's modules are measured beside it, without a target, to show
how the cost grows with rows.

The synthetic catalog is generated into a temp root whose
``src/metric_catalog/generated/`` then holds its modules; the runtime files of
this checkout (``__init__.py``, ``vocabulary.py``, ... everything but
``generated/``) are copied next to them, so ``ROOT/src`` is a complete
``metric_catalog`` package. Children run with ``PYTHONPATH=ROOT/src`` first,
which shadows the editable install (a plain ``.pth`` path entry comes after
``PYTHONPATH``), so the modules import under their real names
(``metric_catalog.generated.<module>``) exactly as in production. An untimed
run first compiles the bytecode; the timed runs are warm, as a training job's
imports are.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bench.config import Config, fresh_root, profile_text
from bench.gen_bench import generate_into
from bench.measure import (
    REPO,
    BenchError,
    child_env,
    fmt_ms,
    fmt_ratio,
    median,
    python,
    run_checked,
)
from bench.report import Section, Target

__all__ = ["bench_import", "import_tree"]

_GOAL = 1.0


def import_tree(cfg: Config, rows: int) -> tuple[Path, list[str]]:
    """Generate ``rows`` rows and make ``ROOT/src`` a full package; return it and the modules."""
    root = fresh_root(cfg, rows, f"import-{rows}")
    generate_into(root)
    pkg = root / "src" / "metric_catalog"
    runtime = REPO / "src" / "metric_catalog"
    for item in runtime.iterdir():
        if item.name in {"generated", "__pycache__"}:
            continue
        if item.is_dir():
            shutil.copytree(item, pkg / item.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(item, pkg / item.name)
    modules = sorted(p.stem for p in (pkg / "generated").glob("*.py") if p.name != "__init__.py")
    return root / "src", modules


def _repo_modules() -> list[str]:
    """The generated modules of this checkout's own catalog."""
    generated = REPO / "src" / "metric_catalog" / "generated"
    return sorted(p.stem for p in generated.glob("*.py") if p.name != "__init__.py")


def _import_script(modules: list[str]) -> str:
    lines = ["import metric_catalog.vocabulary"]
    lines += [f"import metric_catalog.generated.{m}" for m in modules]
    return "\n".join(lines) + "\n"


def bench_import(cfg: Config) -> Section:
    """Import vocabulary + all generated modules in a fresh interpreter vs baselines."""
    rows = cfg.import_rows
    src, modules = import_tree(cfg, rows)
    script = src.parent / "import_all.py"
    script.write_text(_import_script(modules), encoding="utf-8")
    check = src.parent / "import_check.py"
    check.write_text(
        _import_script(modules)
        + "from metric_catalog import vocabulary as v\n"
        + "assert v.__file__.startswith("
        + repr(str(src))
        + "), v.__file__\n"
        + "print(len(v.teed_metrics()) + len(v.recorded_metrics()))\n",
        encoding="utf-8",
    )
    env = child_env(pythonpath=[src])
    declared = int(run_checked([python(), str(check)], env=env).stdout.strip() or 0)
    if declared != rows:
        msg = f"importing the generated modules declared {declared} rows, expected {rows}"
        raise BenchError(msg)
    own = _repo_modules()
    own_script = src.parent / "import_own.py"
    own_script.write_text(_import_script(own), encoding="utf-8")
    own_env = child_env(pythonpath=[REPO / "src"])  # this checkout's package, its catalog
    own_label = f"vocabulary + this catalog's {len(own)} generated modules"
    commands = [
        ("python -c pass", [python(), "-c", "pass"], env),
        (
            "import opentelemetry.sdk.metrics",
            [python(), "-c", "import opentelemetry.sdk.metrics"],
            env,
        ),
        (
            "import metric_catalog.vocabulary",
            [python(), "-c", "import metric_catalog.vocabulary"],
            env,
        ),
        (own_label, [python(), str(own_script)], own_env),
        (
            f"vocabulary + {len(modules)} generated modules ({rows:,} rows)",
            [python(), str(script)],
            env,
        ),
    ]
    runs = max(cfg.runs, 21) if not cfg.smoke else 1
    walls: dict[str, list[float]] = {label: [] for label, _, _ in commands}
    cpus: dict[str, list[float]] = {label: [] for label, _, _ in commands}
    rss: dict[str, list[float]] = {label: [] for label, _, _ in commands}
    for i in range(-1, runs):
        for label, argv, command_env in commands:
            sample = run_checked(argv, env=command_env)
            if i >= 0:
                walls[label].append(sample.wall_s)
                cpus[label].append(sample.cpu_s)
                rss[label].append(sample.max_rss_mib)
    wall = {label: median(w) for label, w in walls.items()}
    cpu = {label: median(c) for label, c in cpus.items()}
    base, otel_label, ours_label = commands[0][0], commands[1][0], own_label
    synthetic_label = commands[-1][0]

    def above(table: dict[str, float], label: str) -> float:
        return table[label] - table[base]

    section = Section(
        key="import",
        title="4. Import cost",
        intro=(
            "Fresh interpreter per run, warm bytecode caches, median of"
            f" {runs} interleaved runs. *Above start-up* subtracts `python -c pass`."
            " The target compares CPU time (user + system) above start-up, which a busy"
            " shared machine disturbs much less than wall time; the wall ratio is shown too."
        ),
        headers=[
            "command",
            "wall",
            "wall above start-up",
            "CPU above start-up",
            "peak RSS",
            "ratio to OTel (wall)",
            "ratio to OTel (CPU)",
        ],
    )
    for label, _, _ in commands:
        is_base = label == base
        section.rows.append(
            [
                label,
                fmt_ms(wall[label]),
                "-" if is_base else fmt_ms(above(wall, label)),
                "-" if is_base else fmt_ms(above(cpu, label)),
                f"{median(rss[label]):.0f} MiB",
                "-" if is_base else fmt_ratio(above(wall, label) / above(wall, otel_label)),
                "-" if is_base else fmt_ratio(above(cpu, label) / above(cpu, otel_label)),
            ]
        )
    ratio = above(cpu, ours_label) / above(cpu, otel_label)
    wall_ratio = above(wall, ours_label) / above(wall, otel_label)
    section.notes.append(
        f"How the {rows:,} rows are imported: the synthetic catalog is generated into a temp"
        " root, this checkout's runtime files are copied next to its"
        " `src/metric_catalog/generated/`, and the children run with `PYTHONPATH=<root>/src`,"
        " which shadows the editable install; so the modules import under their real names"
        " (`metric_catalog.generated.<module>`). A check run first asserts that all"
        f" {rows:,} rows got registered."
    )
    section.notes.append(
        f"*{own_label}* imports this checkout's package with its own catalog's modules"
        " (`PYTHONPATH=<checkout>/src`), the modules a training job imports; the target is"
        f" set on it. The {rows:,}-row row shows how the cost grows with rows"
        f" ({fmt_ratio(above(cpu, synthetic_label) / above(cpu, otel_label))} of the SDK"
        " import, CPU); it has no target (the old 0.3x target on it is retired: a training"
        " process imports torch, and the rows are plain stdlib dataclasses)."
    )
    section.notes.append(
        "Including interpreter start-up on both sides the wall ratio is"
        f" {fmt_ratio(wall[ours_label] / wall[otel_label])}."
    )
    section.targets.append(
        Target(
            name=f"import vocabulary + this catalog's {len(own)} generated modules",
            goal=f"<= {_GOAL}x the OTel SDK import (CPU above start-up, one run)",
            measured=(
                f"{fmt_ratio(ratio)} CPU ({fmt_ms(above(cpu, ours_label))} vs"
                f" {fmt_ms(above(cpu, otel_label))}); {fmt_ratio(wall_ratio)} wall"
            ),
            met=None if cfg.smoke else ratio <= _GOAL,
            why="profiles in 4; analysis section 4",
        )
    )
    if not cfg.smoke:
        dump = cfg.work / "profiles" / f"import-{rows}.prof"
        dump.parent.mkdir(parents=True, exist_ok=True)
        run_checked([python(), "-m", "cProfile", "-o", str(dump), str(script)], env=env)
        section.profiles.append(
            (f"cProfile of the import of {rows:,} rows, by tottime", profile_text(dump, "tottime"))
        )
        imp = run_checked([python(), "-X", "importtime", str(script)], env=env)
        section.profiles.append(
            (
                "`-X importtime`, 15 slowest modules (self us, cumulative us)",
                _importtime_top(imp.stderr, 15),
            )
        )
    return section


def _importtime_top(stderr: str, limit: int) -> str:
    entries: list[tuple[int, int, str]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        try:
            _, rest = line.split(":", 1)
            self_us, cum_us, name = (part.strip() for part in rest.split("|", 2))
            entries.append((int(self_us), int(cum_us), name.strip()))
        except ValueError:
            continue
    entries.sort(reverse=True)
    total = sum(e[0] for e in entries)
    lines = [f"total self time {total / 1000:.1f} ms over {len(entries)} modules"]
    lines += [f"{s:>8} {c:>9}  {n}" for s, c, n in entries[:limit]]
    return "\n".join(lines)
