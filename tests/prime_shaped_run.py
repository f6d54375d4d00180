"""A run in the shape of prime-rl's RL trainer file logger, generated (values invented).

prime-rl's file monitor writes one JSON line per ``monitors.log`` call:
``{"step": N, "time": <unix seconds>, **metrics}`` (the dict's own ``step`` wins); a step
is five lines (perf, optim, tensor statistics, time, disk). :func:`run_lines` writes 30
steps of 55 keys besides ``time``; :data:`EXPECTED` is what a person writing the catalog
by hand would declare for them (units by family, ``{}`` for each placeholder).
"""

from __future__ import annotations

import json
import random
from typing import Final

__all__ = ["ENVIRONMENTS", "EXPECTED", "NOT_ROWS", "run_lines"]

ENVIRONMENTS: Final = ("gsm8k", "math")

EXPECTED: Final[dict[str, str]] = {
    "perf/throughput": "{token}/s",
    "perf/throughput_per_gpu": "{token}/s",
    "perf/mfu": "%",
    "perf/peak_memory": "GiBy",
    "optim/lr": "",
    "optim/grad_norm": "",
    "loss/{}": "",
    "nll/{}": "",
    "entropy/{}/{}": "",
    "mismatch_kl/{}/{}": "",
    "is_masked/{}": "1",
    "is_masked_low/{}": "1",
    "is_masked_high/{}": "1",
    "masked_mismatch_kl/{}": "",
    "kl_ent_ratio/mean": "1",
    "ref_kl/{}": "",
    "time/{}": "s",
    "system/ckpt_disk_free_gib": "GiBy",
    "system/ckpt_disk_used_gib": "GiBy",
    "system/ckpt_disk_total_gib": "GiBy",
    "system/ckpt_disk_free_ratio": "1",
}
"""Drafted logger key (placeholders as ``{}``) -> the unit a person would declare."""

NOT_ROWS: Final = frozenset({"time"})
"""Keys that are no metric: the file logger's timestamp."""

_FIVE: Final = ("mean", "median", "std", "min", "max")


def _tensor_stats(step: int, rng: random.Random) -> dict[str, float]:
    stats: dict[str, float] = {}
    for stat in _FIVE:
        stats[f"loss/{stat}"] = 0.01 + rng.random() / 100
        stats[f"nll/{stat}"] = 1.0 + rng.random()
    for name, scale in (("entropy", 7.0), ("mismatch_kl", 0.3)):
        for env in ("all", *ENVIRONMENTS):
            for stat in ("mean", "std", "max"):
                stats[f"{name}/{env}/{stat}"] = rng.random() * scale
    for name in ("is_masked", "is_masked_low", "is_masked_high", "masked_mismatch_kl"):
        stats[f"{name}/mean"] = rng.random() / 100
        stats[f"{name}/max"] = rng.random() / 10
    stats["kl_ent_ratio/mean"] = 0.001 + rng.random() / 1000
    stats["ref_kl/mean"] = rng.random() / 100
    stats["ref_kl/max"] = rng.random() / 10
    stats["step"] = step
    return stats


def run_lines(steps: int = 30, seed: int = 7) -> list[str]:
    """The run's JSONL lines: five per step, each with ``step`` and ``time``."""
    rng = random.Random(seed)
    lines: list[str] = []
    start = 1_760_000_000.0
    for step in range(1, steps + 1):
        now = start + 42.0 * step
        records: list[dict[str, object]] = [
            {
                "perf/throughput": 51_000 + rng.random() * 900,
                "perf/throughput_per_gpu": 6_400 + rng.random() * 100,
                "perf/mfu": 31.5 + rng.random(),
                "perf/peak_memory": 61.2 + rng.random(),
            },
            {"optim/lr": 1e-6, "optim/grad_norm": 0.4 + rng.random() / 10},
            _tensor_stats(step, rng),
            {
                "time/step": 42.0 + rng.random(),
                "time/wait_for_batch": 3.1,
                "time/load_data": 0.2,
                "time/broadcast_weights": 1.9,
                "time/save_ckpt": 0,
                "time/forward_backward": 35.4,
            },
            {
                "system/ckpt_disk_free_gib": 812.4 - step,
                "system/ckpt_disk_used_gib": 211.6 + step,
                "system/ckpt_disk_total_gib": 1024.0,
                "system/ckpt_disk_free_ratio": 0.79,
                "step": step,
            },
        ]
        for index, metrics in enumerate(records):
            lines.append(json.dumps({"step": step, "time": now + index / 100, **metrics}))
    return lines
