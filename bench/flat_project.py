"""Runs of a small GRPO-style project that logs one flat dict per step, W&B style.

Two loops, each a run of its own (``trainer`` and ``rollout``), written the way W&B's
offline ``wandb-history.jsonl`` holds them: ``_step`` (W&B's count of ``log`` calls),
``_runtime`` and ``_timestamp`` beside the dict the code logged, which carries its own
step axis (``train/step``, ``rollout/step``). They share ``gpu/util``, logged as a
fraction by the trainer and in percent by the rollout workers; ``eval/accuracy`` is
logged every 5 training steps. :data:`EXPECTED` is what a person declaring these keys by
hand writes: per logged key (and loop, for the shared one), its unit, kind, requirement
level, ``every`` and loops. Values invented, seeded. :func:`kept_as_drafted` counts the
drafted rows a person keeps as they are (benchmark 11; ``tests/infer`` asserts all).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from codegen.infer.draft import Draft

__all__ = ["EXPECTED", "STEP_KEYS", "Expected", "kept_as_drafted", "write_runs"]


class Expected(NamedTuple):
    """A row as a person declares it."""

    unit: str
    kind: str
    level: str
    every: int | None
    loops: tuple[str, ...]


_TRAIN: Final = ("train",)
_ROLLOUT: Final = ("rollout",)

EXPECTED: Final[dict[tuple[str, tuple[str, ...]], Expected]] = {
    ("train/loss", _TRAIN): Expected("", "gauge", "required", None, _TRAIN),
    ("train/kl", _TRAIN): Expected("", "gauge", "required", None, _TRAIN),
    ("train/clip_frac", _TRAIN): Expected("1", "gauge", "required", None, _TRAIN),
    ("train/step_time", _TRAIN): Expected("s", "gauge", "required", None, _TRAIN),
    ("perf/tokens_per_sec", _TRAIN): Expected("{token}/s", "gauge", "required", None, _TRAIN),
    ("eval/accuracy", _TRAIN): Expected("1", "gauge", "required", 5, _TRAIN),
    ("gpu/util", _TRAIN): Expected("1", "gauge", "required", None, _TRAIN),
    ("gpu/util", _ROLLOUT): Expected("%", "gauge", "required", None, _ROLLOUT),
    ("rollout/reward_mean", _ROLLOUT): Expected("", "gauge", "required", None, _ROLLOUT),
    ("rollout/response_length", _ROLLOUT): Expected("{token}", "gauge", "required", None, _ROLLOUT),
    ("rollout/gen_time", _ROLLOUT): Expected("s", "gauge", "required", None, _ROLLOUT),
    ("rollout/truncated_frac", _ROLLOUT): Expected("1", "gauge", "required", None, _ROLLOUT),
}
"""(logged key, loops) -> the row a person declares for it."""

STEP_KEYS: Final = {"train": "train/step", "rollout": "rollout/step"}
"""Each loop's step axis: a ``step_keys`` entry, never a row."""

_START: Final = 1.765e9


def _trainer(rng: random.Random, steps: int) -> list[dict[str, object]]:
    lines: list[dict[str, object]] = []
    for step in range(1, steps + 1):
        line: dict[str, object] = {
            "_step": step - 1,
            "_runtime": 1.5 * step,
            "_timestamp": _START + 1.5 * step,
            "train/step": step,
            "train/loss": 2.0 / step + rng.random() / 10,
            "train/kl": rng.random() / 20,
            "train/clip_frac": rng.random() * 0.3,
            "train/step_time": 1.2 + rng.random(),
            "perf/tokens_per_sec": 3000 + rng.random() * 500,
            "gpu/util": 0.5 + rng.random() * 0.4,
        }
        if step % 5 == 0:
            line["eval/accuracy"] = 0.3 + rng.random() * 0.4
        lines.append(line)
    return lines


def _rollout(rng: random.Random, steps: int) -> list[dict[str, object]]:
    return [
        {
            "_step": step - 1,
            "_runtime": 2.0 * step,
            "_timestamp": _START + 2.0 * step,
            "rollout/step": step,
            "rollout/reward_mean": rng.random(),
            "rollout/response_length": 200 + rng.random() * 100,
            "rollout/gen_time": 0.8 + rng.random(),
            "rollout/truncated_frac": rng.random() * 0.2,
            "gpu/util": 50 + rng.random() * 40,
        }
        for step in range(1, steps + 1)
    ]


def write_runs(folder: Path, steps: int = 40) -> list[str]:
    """Write ``trainer.jsonl`` and ``rollout.jsonl`` under ``folder``; return their paths."""
    rng = random.Random(3)
    paths = []
    for name, lines in (("trainer", _trainer(rng, steps)), ("rollout", _rollout(rng, steps))):
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        paths.append(str(path))
    return paths


def kept_as_drafted(draft: Draft) -> tuple[int, int]:
    """``(kept, drafted)``: drafted rows whose unit, kind, requirement level, ``every`` and
    loops are what :data:`EXPECTED` says a person declares for that key."""
    rows = [row for draft_file in draft.files for row in draft_file.rows]
    kept = 0
    for row in rows:
        loops = tuple(row.emitted_by)
        got = (row.unit, row.kind, row.requirement_level, row.every, loops)
        want = EXPECTED.get((row.logger_key, loops))
        kept += want is not None and tuple(want) == got
    return kept, len(rows)
