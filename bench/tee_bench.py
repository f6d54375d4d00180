"""Benchmark 3: the tee per ``log_metrics`` call vs calling the instruments directly.

The measuring itself happens in :mod:`bench.tee_worker`, one fresh process per
mode (enabled, disabled), since the tee's provider and registry are
process-wide. Ratios are medians of per-repetition ratios: tee and floor run
back to back in every repetition, so machine load hits both alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.config import Config, profile_text
from bench.measure import BenchError, child_env, fmt_ratio, median, python, run_checked
from bench.report import Section, Target
from bench.tee_worker import (
    DECLARED,
    FAMILIES,
    REGISTRY_BATCHES,
    REGISTRY_ROWS,
    SLOTS,
    UNDECLARED,
)

__all__ = ["bench_tee"]

_TEE_GOAL = 1.15
_PATTERN_GOAL = 3.0
_MISS_GOAL = 2.0
_REGISTRY_GOAL_MS = 100
_DISABLED_GOAL_NS = 1000.0


def _worker(cfg: Config, mode: str, profile: str | None = None) -> dict[str, Any]:
    argv = [
        python(),
        "-m",
        "bench.tee_worker",
        "--mode",
        mode,
        "--calls",
        str(cfg.tee_calls if mode == "enabled" else cfg.tee_calls * 50),
        "--repeats",
        str(15 if not cfg.smoke else 1),
    ]
    if profile:
        argv += ["--profile", profile]
    sample = run_checked(argv, env=child_env())
    try:
        result: dict[str, Any] = json.loads(sample.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        msg = f"tee worker ({mode}) printed no JSON: {sample.stdout[-2000:]}{sample.stderr[-2000:]}"
        raise BenchError(msg) from exc
    return result


def _us(ns: float) -> str:
    return f"{ns / 1000:.1f} µs" if ns >= 10_000 else f"{ns / 1000:.2f} µs"


def _families_and_identity(
    section: Section,
    cfg: Config,
    ns: dict[str, list[float]],
    paired: Callable[[str, str], float],
) -> None:
    """Rows and targets for key families, undeclared keys and identity labels."""
    per_key = {
        "plain hit": DECLARED,
        "pattern hit": FAMILIES * len(SLOTS),
        "pattern hit, derived": FAMILIES * len(SLOTS),
        "floor, derived": FAMILIES * len(SLOTS),
        "miss strict, no patterns": 100,
        "miss strict, patterns": 100,
        "miss, no patterns": 100,
        "miss, patterns": 100,
    }
    key_ns = {name: [v / n for v in ns[name]] for name, n in per_key.items()}

    def key_ratio(a: str, b: str) -> float:
        return median([x / y for x, y in zip(key_ns[a], key_ns[b], strict=True)])

    pattern = key_ratio("pattern hit", "plain hit")
    miss = key_ratio("miss strict, patterns", "miss strict, no patterns")
    derived = key_ratio("pattern hit, derived", "floor, derived")
    identity = paired("tee+identity", "floor+identity")
    for name, base in (
        ("plain hit", None),
        ("pattern hit", "plain hit"),
        ("pattern hit, derived", "floor, derived"),
        ("floor, derived", None),
        ("miss strict, no patterns", None),
        ("miss strict, patterns", "miss strict, no patterns"),
        ("miss, no patterns", None),
        ("miss, patterns", None),
    ):
        value = median(key_ns[name])
        ratio = "" if base is None else f"{fmt_ratio(key_ratio(name, base))} (vs {base})"
        section.rows.append([f"per key: {name}", _us(value * per_key[name]), _us(value), ratio])
    for name in ("tee+identity", "floor+identity"):
        value = median(ns[name])
        ratio = fmt_ratio(identity) + " (vs floor+identity)" if name == "tee+identity" else "1.00x"
        section.rows.append([name, _us(value), _us(value / DECLARED), ratio])
    section.notes.append(
        "Per-key rows: *plain hit* tees the 80 declared keys alone; *pattern hit* tees 80"
        f" keys matching {FAMILIES} `fam{{j}}/{{bench.slot}}` patterns (10 enum values each,"
        " so each point also carries that attribute); *miss* tees 100 undeclared keys under"
        " a prefix without patterns (`train`, the pre-pattern code path) and one with"
        " patterns (`fam`), strict (every key looked at) and not. *tee+identity* is the"
        " 100-key tee with 2 identity labels set, against the floor passing the same labels."
        " *pattern hit, derived* tees the same 80 family keys under `famd`, whose rows derive"
        " 3 more attributes from the captured slot (like the efficiency series' measurement,"
        " window and bucket); *floor, derived* calls their instruments directly with the same"
        " 4-attribute dicts, precomputed."
    )
    section.targets += [
        Target(
            name="pattern key vs plain declared key, per key",
            goal=f"<= {_PATTERN_GOAL}x",
            measured=fmt_ratio(pattern),
            met=None if cfg.smoke else pattern <= _PATTERN_GOAL,
            why="issue 12",
        ),
        Target(
            name="pattern key with 3 derived attributes vs direct calls with the same 4",
            goal=f"<= {_TEE_GOAL}x",
            measured=fmt_ratio(derived),
            met=None if cfg.smoke else derived <= _TEE_GOAL,
            why="issue 12: derived attributes",
        ),
        Target(
            name="undeclared key with patterns vs without (strict), per key",
            goal=f"<= {_MISS_GOAL}x",
            measured=fmt_ratio(miss),
            met=None if cfg.smoke else miss <= _MISS_GOAL,
            why="issue 12",
        ),
        Target(
            name="tee with identity labels vs floor with the same labels",
            goal=f"<= {_TEE_GOAL}x",
            measured=fmt_ratio(identity),
            met=None if cfg.smoke else identity <= _TEE_GOAL,
            why="issue 14 hook",
        ),
    ]


def _registry(section: Section, cfg: Config) -> None:
    result = _worker(cfg, "registry")
    value = median(result["ns"])
    section.rows.append(
        [
            f"register {REGISTRY_ROWS:,} rows in {REGISTRY_BATCHES} calls (fresh globals)",
            f"{value / 1e6:.1f} ms",
            _us(value / REGISTRY_ROWS),
            "",
        ]
    )
    section.targets.append(
        Target(
            name=f"registering {REGISTRY_ROWS:,} rows",
            goal=f"<= {_REGISTRY_GOAL_MS} ms",
            measured=f"{value / 1e6:.1f} ms",
            met=None if cfg.smoke else value / 1e6 <= _REGISTRY_GOAL_MS,
            why="issue 11 (linear registration after a globals swap)",
        )
    )


def bench_tee(cfg: Config) -> Section:
    """Tee vs direct instruments (floor) vs telemetry disabled, with and without attributes."""
    section = Section(
        key="tee",
        title="3. Tee per log_metrics call",
        intro=(
            f"One call logs {DECLARED + UNDECLARED} keys, {DECLARED} of them declared (mixed"
            " kinds) under prefix `train`. *floor* calls the same 80 instruments' bound"
            " `set`/`add`/`record` directly with values from the same dict; *lookup* is that"
            " loop without the instrument call. Both sides use one MeterProvider with an"
            " InMemoryMetricReader. Per-call medians; ratios are medians of per-repetition"
            " ratios (tee and floor timed back to back)."
        ),
        headers=["variant", "per call", "per declared key", "ratio to floor"],
    )
    profile = None
    if not cfg.smoke:
        (cfg.work / "profiles").mkdir(parents=True, exist_ok=True)
        profile = str(cfg.work / "profiles" / "tee.prof")
    enabled = _worker(cfg, "enabled", profile)
    disabled = _worker(cfg, "disabled")
    ns: dict[str, list[float]] = enabled["ns_per_call"]
    med = {name: median(v) for name, v in ns.items()}

    def paired(a: str, b: str) -> float:
        return median([x / y for x, y in zip(ns[a], ns[b], strict=True)])

    ratios = {
        "tee": paired("tee", "floor"),
        "floor": 1.0,
        "tee+attrs": paired("tee+attrs", "floor+attrs"),
        "floor+attrs": 1.0,
        "lookup": paired("lookup", "floor"),
    }
    labels = {
        "tee": "tee_metrics(metrics, prefix='train')",
        "floor": "floor: 80 instrument calls",
        "tee+attrs": "tee_metrics(..., attributes=2 attrs)",
        "floor+attrs": "floor + 2 attrs",
        "lookup": "lookup only (dict get + float, no SDK)",
    }
    for name in ("tee", "floor", "tee+attrs", "floor+attrs", "lookup"):
        base = "floor+attrs" if "attrs" in name else "floor"
        section.rows.append(
            [
                labels[name],
                _us(med[name]),
                _us(med[name] / DECLARED),
                fmt_ratio(ratios[name]) + ("" if name == base else f" (vs {base})"),
            ]
        )
    off = median(disabled["ns_per_call"]["tee"])
    section.rows.append(
        [
            "telemetry disabled: tee_metrics",
            _us(off),
            _us(off / DECLARED),
            fmt_ratio(off / med["floor"]),
        ]
    )
    section.notes.append(
        "Disabled means no exporter configured (`OTEL_METRICS_EXPORTER=none`, the default),"
        " in its own process: the first tee still builds the metric group and freezes"
        " registration, later calls return early."
    )
    section.targets += [
        Target(
            name="tee vs direct-instrument floor",
            goal=f"<= {_TEE_GOAL}x",
            measured=f"{fmt_ratio(ratios['tee'])} ({_us(med['tee'])} vs {_us(med['floor'])})",
            met=None if cfg.smoke else ratios["tee"] <= _TEE_GOAL,
            why="analysis section 3",
        ),
        Target(
            name="tee with 2 attributes vs floor with 2 attributes",
            goal=f"<= {_TEE_GOAL}x",
            measured=(
                f"{fmt_ratio(ratios['tee+attrs'])} ({_us(med['tee+attrs'])} vs"
                f" {_us(med['floor+attrs'])})"
            ),
            met=None if cfg.smoke else ratios["tee+attrs"] <= _TEE_GOAL,
            why="analysis section 3",
        ),
        Target(
            name="disabled tee per call",
            goal="<= 1 µs",
            measured=_us(off),
            met=None if cfg.smoke else off <= _DISABLED_GOAL_NS,
            why="analysis section 3",
        ),
    ]
    _families_and_identity(section, cfg, ns, paired)
    _registry(section, cfg)
    if profile:
        section.profiles += [
            (
                f"cProfile of {cfg.tee_calls} tee calls, by tottime",
                profile_text(Path(profile), "tottime"),
            ),
        ]
    return section
