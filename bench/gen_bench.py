"""Benchmarks 1, 2 and 5: ``generate`` vs glean_parser, no-op regenerate, scaling.

Our side runs ``python -m codegen generate --root ROOT`` (and ``validate``) as
a child process of the project's interpreter; glean's runs its
``glean_parser`` script from its own venv. Each timed run gets a fresh root
(copied outside the timing), commands alternate run by run so machine load
hits both sides alike, and one untimed warm-up run of each fills the bytecode
caches first.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.config import Config, fresh_root, glean_source, profile_text, roots_dir
from bench.glean import GleanEnv
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
from bench.phases import PHASES
from bench.report import Section, Target
from codegen.generate.wandb import MODULE as WANDB_MODULE

__all__ = [
    "bench_generate",
    "bench_noop",
    "bench_scaling",
    "codegen_argv",
    "generate_into",
    "generated_outputs",
]

_GEN_SPEEDUP_GOAL = 20.0
_NOOP_GOAL = 0.10


def codegen_argv(command: str, root: Path) -> list[str]:
    """Our CLI for ``command`` run against the catalog under ``root``."""
    return [python(), "-m", "codegen", command, "--root", str(root)]


def generate_into(root: Path) -> Sample:
    """Run our full ``generate`` on ``root`` once (checked)."""
    return run_checked(codegen_argv("generate", root), cwd=root, env=child_env())


def generated_outputs(root: Path) -> list[Path]:
    """Every file under ``root`` that generate wrote (all but ``catalog/``)."""
    return sorted(
        p for p in root.rglob("*") if p.is_file() and p.relative_to(root).parts[0] != "catalog"
    )


def _check_generated(root: Path, rows: int) -> str:
    # One module per owner; the loops' W&B definitions sit beside them.
    modules = [
        p
        for p in (root / "src" / "metric_catalog" / "generated").glob("*.py")
        if p.name not in ("__init__.py", f"{WANDB_MODULE}.py")
    ]
    files = len(list((root / "catalog").glob("*.yaml")))
    if len(modules) != files:
        msg = f"generate wrote {len(modules)} modules for {files} catalog files under {root}"
        raise BenchError(msg)
    pages = list((root / "docs").rglob("*.md")) if (root / "docs").is_dir() else []
    note = f"{rows} rows: {len(modules)} modules, {len(pages)} docs pages"
    if not pages:
        note += " (no docs pages written: the docs renderer is still a stub)"
    return note


@dataclass(slots=True)
class _Series:
    """Samples of one command across the interleaved runs."""

    label: str
    samples: list[Sample]

    @property
    def wall(self) -> float:
        return median([s.wall_s for s in self.samples])

    @property
    def cpu(self) -> float:
        return median([s.cpu_s for s in self.samples])

    @property
    def rss(self) -> float:
        return median([s.max_rss_mib for s in self.samples])


def _interleave(
    cfg: Config, runners: list[tuple[str, Callable[[int], Sample]]], *, warm_up: bool = True
) -> list[_Series]:
    series = [_Series(label, []) for label, _ in runners]
    for i in range(-1 if warm_up else 0, cfg.runs):
        for s, (_, run) in zip(series, runners, strict=True):
            sample = run(i)
            if i >= 0:  # i == -1 is the untimed warm-up
                s.samples.append(sample)
    return series


def _ours(cfg: Config, rows: int, command: str) -> Callable[[int], Sample]:
    def run(i: int) -> Sample:
        root = fresh_root(cfg, rows, f"{command}-{rows}")
        sample = run_checked(codegen_argv(command, root), cwd=root, env=child_env())
        if i == -1 and command == "generate":
            _check_generated(root, rows)
        return sample

    return run


def _glean(cfg: Config, env: GleanEnv, rows: int, command: str) -> Callable[[int], Sample]:
    files = [str(p) for p in glean_source(cfg, rows)]

    def run(i: int) -> Sample:
        del i
        out = roots_dir(cfg) / f"glean-{command}-{rows}"
        shutil.rmtree(out, ignore_errors=True)
        if command == "translate":
            argv = [str(env.script), "translate", "-f", "markdown", "-o", str(out), *files]
        else:
            argv = [str(env.script), "glinter", *files]
        sample = run_checked(argv, env=child_env())
        if command == "translate" and not (out / "metrics.md").is_file():
            msg = f"glean_parser translate wrote no metrics.md into {out}"
            raise BenchError(msg)
        return sample

    return run


def _row(rows: int, s: _Series, base: _Series | None) -> list[str]:
    ratio = fmt_ratio(s.wall / base.wall) if base is not None else "-"
    per_row = s.wall / rows * 1e6
    cpu_ratio = fmt_ratio(s.cpu / base.cpu) if base is not None else "-"
    return [
        f"{rows:,}",
        s.label,
        fmt_ms(s.wall),
        fmt_ms(s.cpu),
        f"{per_row:.1f} µs",
        f"{s.rss:.0f} MiB",
        ratio,
        cpu_ratio,
    ]


def bench_generate(cfg: Config) -> Section:
    """Benchmark 1: full generate vs glean translate -f markdown; validate vs glinter."""
    section = Section(
        key="generate",
        title="1. Full generate vs glean_parser",
        intro=(
            "`python -m codegen generate --root TMP` (validate + lint + modules + docs pages)"
            " vs `glean_parser translate -f markdown -o OUT` on the same rows in glean's"
            " format, and `python -m codegen validate` (and `lint`, which adds the lint"
            " rules as glinter does) vs `glean_parser glinter`."
            f" Median of {cfg.runs} interleaved runs each, fresh output tree per run;"
            " the ratio column is our time over glean's."
        ),
        headers=[
            "rows",
            "command",
            "wall",
            "CPU",
            "wall per row",
            "peak RSS",
            "ratio to glean (wall)",
            "ratio to glean (CPU)",
        ],
    )
    glean = cfg.glean if isinstance(cfg.glean, GleanEnv) else None
    if glean is None:
        section.notes.append(f"glean_parser rows skipped: {cfg.glean}")
    for rows in cfg.sizes:
        runners: list[tuple[str, Callable[[int], Sample]]] = [
            ("ours: generate", _ours(cfg, rows, "generate")),
            ("ours: validate", _ours(cfg, rows, "validate")),
            ("ours: lint (validate + lints)", _ours(cfg, rows, "lint")),
        ]
        if glean is not None:
            runners += [
                ("glean: translate -f markdown", _glean(cfg, glean, rows, "translate")),
                ("glean: glinter", _glean(cfg, glean, rows, "glinter")),
            ]
        series = _interleave(cfg, runners)
        gen, val, lint = series[0], series[1], series[2]
        tr, gl = (series[3], series[4]) if glean is not None else (None, None)
        section.rows += [_row(rows, gen, tr), _row(rows, val, gl), _row(rows, lint, gl)]
        if tr is not None and gl is not None:
            section.rows += [_row(rows, tr, None), _row(rows, gl, None)]
        if rows == 10_000 or cfg.smoke:
            speedup = tr.wall / gen.wall if tr is not None else None
            section.targets.append(
                Target(
                    name=f"generate {rows:,} rows vs glean translate",
                    goal=f">= {_GEN_SPEEDUP_GOAL:.0f}x faster",
                    measured=(
                        f"{speedup:.1f}x faster ({fmt_ms(gen.wall)} vs {fmt_ms(tr.wall)} wall;"
                        f" {tr.cpu / gen.cpu:.1f}x in CPU time)"
                        if speedup is not None and tr is not None
                        else "glean not available"
                    ),
                    met=None if cfg.smoke or speedup is None else speedup >= _GEN_SPEEDUP_GOAL,
                    why="phase table in 1; analysis section 1",
                )
            )
    section.extra_tables.append(_phase_table(cfg, max(cfg.sizes)))
    return section


def _phase_table(cfg: Config, rows: int) -> tuple[str, list[str], list[list[str]]]:
    """Median time per generate phase (``bench.phases``, no profiler) at ``rows`` rows."""
    runs: list[dict[str, float]] = []
    for _ in range(cfg.runs):
        root = fresh_root(cfg, rows, f"phases-{rows}")
        sample = run_checked([python(), "-m", "bench.phases", str(root)], env=child_env())
        runs.append(json.loads(sample.stdout.strip().splitlines()[-1]))
    med = {phase: median([r.get(phase, 0.0) for r in runs]) for phase in PHASES}
    total = sum(med.values())
    table = [
        [phase, fmt_ms(t), f"{t / total * 100:.0f}%", f"{t / rows * 1e6:.1f} µs"]
        for phase, t in med.items()
    ]
    table.append(
        [
            "total (excluding interpreter start-up)",
            fmt_ms(total),
            "100%",
            f"{total / rows * 1e6:.1f} µs",
        ]
    )
    caption = (
        f"Where a full generate of {rows:,} rows spends its time (`python -m bench.phases`:"
        f" each phase timed in-process with perf_counter, median of {cfg.runs} fresh"
        " processes; no profiler overhead):"
    )
    return caption, ["phase", "time", "share", "per row"], table


def _snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    return {
        str(p.relative_to(root)): (st.st_mtime_ns, st.st_size, st.st_ino)
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
        for st in (p.stat(),)
    }


def _age(root: Path) -> None:
    """Backdate every file (catalog a second older than outputs) so any write shows."""
    base = 1_600_000_000 * 10**9
    for p in root.rglob("*"):
        if p.is_file():
            t = base if p.relative_to(root).parts[0] == "catalog" else base + 10**9
            os.utime(p, ns=(t, t))


def bench_noop(cfg: Config) -> Section:
    """Benchmark 2: regenerate with nothing changed vs full generate; zero files written."""
    rows = cfg.noop_rows
    section = Section(
        key="noop",
        title="2. No-op regenerate vs full generate",
        intro=(
            f"`generate` on a {rows:,}-row root that is already up to date, vs a full"
            " `generate` into a fresh root. Before each no-op run every file is backdated;"
            " afterwards the run must have left every file's mtime, size and inode as they"
            f" were and added none. Median of {cfg.runs} interleaved runs."
        ),
        headers=["rows", "command", "wall", "peak RSS", "ratio to full", "files written"],
    )
    noop_root = fresh_root(cfg, rows, f"noop-{rows}")
    generate_into(noop_root)
    outputs = len(generated_outputs(noop_root))
    written: list[int] = []

    def noop(i: int) -> Sample:
        del i
        _age(noop_root)
        before = _snapshot(noop_root)
        sample = generate_into(noop_root)
        after = _snapshot(noop_root)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        written.append(len(changed))
        if changed:
            msg = f"no-op generate wrote {len(changed)} of {len(after)} files, e.g. " + ", ".join(
                changed[:5]
            )
            raise BenchError(msg)
        return sample

    full, nop = _interleave(cfg, [("full generate", _ours(cfg, rows, "generate")), ("no-op", noop)])
    ratio = nop.wall / full.wall
    section.rows += [
        [
            f"{rows:,}",
            "full generate (fresh root)",
            fmt_ms(full.wall),
            f"{full.rss:.0f} MiB",
            "1x",
            f"{outputs}",
        ],
        [
            f"{rows:,}",
            "no-op regenerate",
            fmt_ms(nop.wall),
            f"{nop.rss:.0f} MiB",
            fmt_ratio(ratio),
            f"{max(written)}",
        ],
    ]
    section.targets.append(
        Target(
            name=f"no-op regenerate ({rows:,} rows)",
            goal="<= 10% of full generate, zero files written",
            measured=f"{ratio * 100:.0f}% ({fmt_ms(nop.wall)} vs {fmt_ms(full.wall)}), "
            f"{max(written)} files written",
            met=None if cfg.smoke else ratio <= _NOOP_GOAL and max(written) == 0,
            why="analysis section 2",
        )
    )
    if not cfg.smoke:
        section.profiles += _profile_generate(cfg, noop_root, full_rows=rows)
    return section


def _profile_generate(cfg: Config, noop_root: Path, full_rows: int) -> list[tuple[str, str]]:
    prof_dir = cfg.work / "profiles"
    prof_dir.mkdir(parents=True, exist_ok=True)
    out: list[tuple[str, str]] = []
    full_root = fresh_root(cfg, full_rows, f"profile-full-{full_rows}")
    for label, root in (("full generate", full_root), ("no-op regenerate", noop_root)):
        dump = prof_dir / f"generate-{label.split()[0]}-{full_rows}.prof"
        argv = [python(), "-m", "cProfile", "-o", str(dump), "-m", "codegen", "generate"]
        run_checked([*argv, "--root", str(root)], cwd=root, env=child_env())
        for sort in ("tottime", "cumulative"):
            out.append(
                (f"cProfile of {label}, {full_rows:,} rows, by {sort}", profile_text(dump, sort))
            )
    return out


def bench_scaling(cfg: Config) -> Section:
    """Benchmark 5: generate at growing sizes; per-row cost must stay flat (linear growth)."""
    section = Section(
        key="scaling",
        title="5. Scaling of generate",
        intro=(
            "Full `generate` into a fresh root at each size, median of"
            f" {cfg.runs} runs. *Marginal* per-row cost is (t(N) - t(previous N)) /"
            " (N - previous N), which removes the fixed start-up cost; growth is linear when"
            " the marginal cost stays flat (ratio near 1)."
        ),
        headers=[
            "rows",
            "wall",
            "peak RSS",
            "per row",
            "marginal per row",
            "marginal ratio",
            "RSS per 1k rows",
        ],
    )
    # No warm-up: the earlier benchmarks compiled the bytecode, and a 50k warm-up costs ~25 s.
    series = _interleave(
        cfg, [(f"{n}", _ours(cfg, n, "generate")) for n in cfg.scaling], warm_up=cfg.smoke
    )
    prev: tuple[int, float] | None = None
    first_marginal: float | None = None
    worst = 0.0
    for n, s in zip(cfg.scaling, series, strict=True):
        marginal = "-"
        ratio = "-"
        if prev is not None:
            m = (s.wall - prev[1]) / (n - prev[0])
            marginal = f"{m * 1e6:.1f} µs"
            if first_marginal is None:
                first_marginal = m
                ratio = "1x"
            else:
                r = m / first_marginal
                worst = max(worst, r)
                ratio = fmt_ratio(r)
        section.rows.append(
            [
                f"{n:,}",
                fmt_ms(s.wall),
                f"{s.rss:.0f} MiB",
                f"{s.wall / n * 1e6:.1f} µs",
                marginal,
                ratio,
                f"{s.rss / n * 1000:.2f} MiB",
            ]
        )
        prev = (n, s.wall)
    if worst:
        section.targets.append(
            Target(
                name="generate grows linearly",
                goal="marginal per-row cost flat (ratio <= 1.5x) from 1k->10k to 10k->50k",
                measured=f"{fmt_ratio(worst)}",
                met=None if cfg.smoke else worst <= 1.5,
                why="analysis section 5",
            )
        )
    return section
