"""A simulated GRPO step that logs its metrics through the generated catalog constants.

This is what an owner looks like: it imports its generated modules (which
declares their rows with the registry) and builds the dicts it hands to
``Logger.log_metrics`` from the generated rows, never from string literals. A
row renamed or removed in ``catalog/*.yaml`` then breaks this file under mypy
instead of silently logging a key nothing tees; a changed logger key or prefix
follows automatically.

Run ``python -m examples.grpo_owner`` to print one step.
"""

from __future__ import annotations

import json
import math
import random
from typing import Final

from metric_catalog.generated import common, grpo, timing, vllm
from metric_catalog.vocabulary import TeedMetric

__all__ = ["VALIDATION_EVERY", "grpo_step_metrics"]

VALIDATION_EVERY: Final = 10
"""A validation pass runs on every step divisible by this (as ``val_period`` does)."""

# Shape of the simulated run: batch of prompts x generations per prompt.
_PROMPTS = 32
_GENERATIONS_PER_PROMPT = 8
_GPUS = 8


def _log(metrics: dict[str, dict[str, float]], row: TeedMetric, value: float) -> None:
    """Put ``value`` where ``log_metrics`` expects it: under the row's prefix and logger key."""
    metrics.setdefault(row.prefix, {})[row.logger_key] = float(value)


def _timings(step: int, rng: random.Random, valid_tokens: float) -> dict[TeedMetric, float]:
    phases = {
        timing.GENERATION_DURATION: rng.uniform(25.0, 40.0),
        timing.DATA_PROCESSING_DURATION: rng.uniform(0.5, 1.5),
        timing.REWARD_CALCULATION_DURATION: rng.uniform(1.0, 4.0),
        timing.ADVANTAGE_CALCULATION_DURATION: rng.uniform(0.1, 0.3),
        timing.LOGPROB_DURATION: rng.uniform(6.0, 10.0),
        timing.POLICY_TRAINING_DURATION: rng.uniform(15.0, 25.0),
        # The first refit also loads the engine, so it is slower.
        timing.REFIT_DURATION: rng.uniform(8.0, 12.0) if step == 0 else rng.uniform(2.0, 4.0),
        # Logged every step, zero when the step saves no checkpoint.
        timing.CHECKPOINT_DURATION: rng.uniform(20.0, 30.0) if step % 50 == 49 else 0.0,
    }
    total = sum(phases.values()) + rng.uniform(0.2, 1.0)
    phases[timing.STEP_DURATION] = total
    phases[timing.THROUGHPUT_VALID_TOKENS_PER_GPU] = valid_tokens / total / _GPUS
    return phases


def grpo_step_metrics(step: int, rng: random.Random) -> dict[str, dict[str, float]]:
    """Metrics of one simulated GRPO step, as ``log_metrics`` prefix -> metrics dict.

    Values are random but plausible for ``step``: reward climbs and KL grows as
    the policy moves away from the reference, counters carry per-step deltas,
    and timings add up to the step time. Every ``VALIDATION_EVERY`` steps the
    ``validation`` and ``timing/validation`` prefixes appear too. The same
    ``rng`` state gives the same metrics.
    """
    if step < 0:
        msg = f"step must be >= 0, got {step}; steps count from 0"
        raise ValueError(msg)
    progress = 1.0 - math.exp(-step / 60.0)
    samples = _PROMPTS * _GENERATIONS_PER_PROMPT
    mean_response = rng.gauss(350.0 + 250.0 * progress, 20.0)
    mean_prompt = rng.gauss(180.0, 5.0)
    valid_tokens = samples * (mean_response + mean_prompt) * rng.uniform(0.97, 1.0)
    failed = rng.choices((0, 1, 2), weights=(90, 8, 2))[0]
    truncated = min(max(rng.gauss(0.08 * (1 - progress) + 0.02, 0.01), 0.0), 1.0)

    metrics: dict[str, dict[str, float]] = {}
    _log(metrics, common.REWARD_MEAN, 0.15 + 0.6 * progress + rng.gauss(0.0, 0.03))
    _log(metrics, common.POLICY_LOSS, rng.gauss(0.0, 0.02) - 0.01 * progress)
    _log(metrics, common.GRAD_NORM, abs(rng.gauss(0.8, 0.2)))
    _log(metrics, common.LEARNING_RATE, 1e-6 * min(1.0, (step + 1) / 10))
    _log(metrics, common.TRAIN_VALID_TOKENS, round(valid_tokens))
    _log(metrics, common.TRAIN_VALID_SEQUENCES, samples)

    _log(metrics, grpo.RESPONSE_LENGTH_MEAN, mean_response)
    _log(metrics, grpo.PROMPT_LENGTH_MEAN, mean_prompt)
    _log(metrics, grpo.KL_DIVERGENCE, 0.002 + 0.03 * progress * rng.uniform(0.8, 1.2))
    _log(metrics, grpo.ENTROPY, max(0.05, 0.9 - 0.4 * progress + rng.gauss(0.0, 0.02)))
    _log(metrics, grpo.LOGPROB_MULT_ERROR, 1.0 + abs(rng.gauss(0.0, 0.01)))
    _log(metrics, grpo.LOGPROB_GEN_KL_ERROR, abs(rng.gauss(0.0005, 0.0002)))
    _log(metrics, grpo.POLICY_IMPORTANCE_RATIO, rng.gauss(1.0, 0.01))
    _log(metrics, grpo.POLICY_PROBS_RATIO, rng.gauss(1.0, 0.02))
    _log(metrics, grpo.GRPO_VALID_SAMPLES, samples)
    _log(metrics, grpo.ADVANTAGE_MEAN, rng.gauss(0.0, 0.01))
    _log(metrics, grpo.ROLLOUT_TRUNCATED, truncated)
    _log(metrics, grpo.ROLLOUT_TERMINATED, 1.0 - truncated)
    _log(metrics, grpo.ROLLOUT_TURNS_MEAN, 1.0)

    _log(metrics, vllm.VLLM_PROMPT_TOKENS, round(samples * mean_prompt))
    _log(metrics, vllm.VLLM_GENERATION_TOKENS, round(samples * mean_response))
    _log(metrics, vllm.VLLM_PROMPT_LENGTH_MEAN, mean_prompt)
    _log(metrics, vllm.VLLM_GENERATION_LENGTH_MEAN, mean_response)
    _log(metrics, vllm.VLLM_GENERATIONS_OK, samples - failed)
    _log(metrics, vllm.VLLM_GENERATIONS_FAILED, failed)

    phases = _timings(step, rng, valid_tokens)
    for row, seconds in phases.items():
        _log(metrics, row, seconds)
    _log(metrics, grpo.THROUGHPUT_JOB, valid_tokens / phases[timing.STEP_DURATION])
    _log(metrics, grpo.THROUGHPUT_SAMPLES, samples / phases[timing.STEP_DURATION])

    if step % VALIDATION_EVERY == 0:
        _log(metrics, grpo.GRPO_VALIDATION_ACCURACY, min(1.0, 0.2 + 0.6 * progress))
        _log(metrics, grpo.GRPO_VALIDATION_RESPONSE_LENGTH_MEAN, mean_response * 1.05)
        _log(metrics, timing.VALIDATION_DURATION, rng.uniform(40.0, 60.0))
    return metrics


if __name__ == "__main__":
    print(json.dumps(grpo_step_metrics(0, random.Random(0)), indent=2, sort_keys=True))
