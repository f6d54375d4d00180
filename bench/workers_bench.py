"""Benchmark 6: many workers: the tee with promoted identity, and a dead OTLP collector.

Both run in :mod:`bench.workers_worker`, one fresh process per mode, since
the promoted identity and the provider are process-wide. Ratios are medians
of per-repetition ratios (tee and floor timed back to back in every
repetition), like benchmark 3.
"""

from __future__ import annotations

import json
from typing import Any

from bench.config import Config
from bench.measure import BenchError, child_env, fmt_ratio, median, python, run_checked
from bench.report import Section, Target
from bench.tee_worker import DECLARED, UNDECLARED

__all__ = ["bench_workers"]

_PROMOTED_GOAL = 1.15
_DEAD_GOAL = 1.15


def _worker(cfg: Config, mode: str) -> dict[str, Any]:
    argv = [
        python(),
        "-m",
        "bench.workers_worker",
        "--mode",
        mode,
        "--calls",
        str(cfg.tee_calls),
        "--repeats",
        str(15 if not cfg.smoke else 1),
    ]
    sample = run_checked(argv, env=child_env(), timeout_s=300.0)
    try:
        result: dict[str, Any] = json.loads(sample.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        tail = sample.stdout[-2000:] + sample.stderr[-2000:]
        msg = f"workers worker ({mode}) printed no JSON: {tail}"
        raise BenchError(msg) from exc
    return result


def _us(ns: float) -> str:
    return f"{ns / 1000:.1f} µs" if ns >= 10_000 else f"{ns / 1000:.2f} µs"


def _paired(ns: dict[str, list[float]]) -> float:
    return median([t / f for t, f in zip(ns["tee"], ns["floor"], strict=True)])


def bench_workers(cfg: Config) -> Section:
    """Tee with ``rank``/``local_rank`` promoted vs the floor with those labels; dead collector."""
    section = Section(
        key="workers",
        title="6. Many workers",
        intro=(
            f"The logged dict of benchmark 3 ({DECLARED + UNDECLARED} keys, {DECLARED} declared)."
            " *Promoted*: the process is rank 3, local rank 1, with"
            " `METRIC_CATALOG_PROMOTE=rank,local_rank`; the floor calls the same instruments"
            " directly with those two labels. *Dead collector*: OTLP export to a loopback"
            " socket that never answers, so an export hangs throughout (30 s timeout); the floor"
            " calls the instruments directly on the same provider."
        ),
        headers=["variant", "per call", "per declared key", "ratio to floor"],
    )
    promoted = _worker(cfg, "promoted")
    dead = _worker(cfg, "dead-collector")
    p_ns, d_ns = promoted["ns_per_call"], dead["ns_per_call"]
    p_ratio, d_ratio = _paired(p_ns), _paired(d_ns)
    for label, ns, ratio in (
        ("tee_metrics, rank and local_rank promoted", p_ns["tee"], p_ratio),
        ("floor: 80 instrument calls with the same 2 labels", p_ns["floor"], 1.0),
        ("tee_metrics while an OTLP export hangs", d_ns["tee"], d_ratio),
        ("floor while that export hangs", d_ns["floor"], 1.0),
    ):
        med = median(ns)
        section.rows.append([label, _us(med), _us(med / DECLARED), fmt_ratio(ratio)])
    slowest_ms = dead["slowest_tee_ns"] / 1e6
    section.notes.append(
        f"Slowest single tee call of {cfg.tee_calls} while the export hung: {slowest_ms:.2f} ms;"
        f" the export was still hanging at the end: {dead['export_hanging_throughout']}."
        f" `exporters.shutdown()` with the export hanging returned after"
        f" {dead['shutdown_s']:.2f} s (bound `METRIC_CATALOG_SHUTDOWN_TIMEOUT`, 0.5 s here)."
    )
    section.targets += [
        Target(
            name="tee with promoted identity vs floor with the same labels",
            goal=f"<= {_PROMOTED_GOAL}x",
            measured=(
                f"{fmt_ratio(p_ratio)} ({_us(median(p_ns['tee']))} vs {_us(median(p_ns['floor']))})"
            ),
            met=None if cfg.smoke else p_ratio <= _PROMOTED_GOAL,
            why="issue 14: promoted identity costs no more than passing the labels",
        ),
        Target(
            name="tee while the OTLP collector is dead vs floor",
            goal=f"<= {_DEAD_GOAL}x",
            measured=f"{fmt_ratio(d_ratio)} (slowest call {slowest_ms:.2f} ms)",
            met=None if cfg.smoke else d_ratio <= _DEAD_GOAL,
            why="issue 14: a dead collector never stalls training",
        ),
        Target(
            name="shutdown with the export hanging",
            goal="<= 0.75 s (bound 0.5 s + 0.25 s hard stop)",
            measured=f"{dead['shutdown_s']:.2f} s",
            met=None if cfg.smoke else dead["shutdown_s"] <= 0.75,
            why="the final flush is bounded",
        ),
    ]
    return section
