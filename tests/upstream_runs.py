"""Realistic run logs of upstream NeMo-RL's six training loops, as ``JsonlLogger`` lines.

Keys are the ones upstream really logs (``shared/reference/upstream-series.md``,
sections 1 to 3: NVIDIA-NeMo/RL ``grpo.py``, ``sft.py``, ``dpo.py``,
``loss_functions.py``, ``rollouts.py``, Timer labels, plus the nathan-az fork's
vLLM engine, PPO critic, SFT v2 and fixed ``efficiency``/``timing/setup``
series), per prefix and per step, including the keys no catalog row declares.
No line names its loop, like every log written before loops were named.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Final

__all__ = ["EFFICIENCY_AGGREGATES", "LOOPS", "UPSTREAM_SERIES", "run_lines"]

LOOPS: Final = ("grpo_sync", "grpo_async", "ppo", "sft", "sft_v2", "dpo")

# Policy worker metrics every policy-training loop (not SFT v2) logs under train.
_POLICY = ("loss", "grad_norm", "lr", "wd", "global_valid_seqs", "global_valid_toks")

# ClippedPGLossFn and the GRPO step's own train metrics.
_PG_LOSS = (
    "kl_penalty",
    "approx_entropy",
    "token_mult_prob_error",
    "gen_kl_error",
    "sampling_importance_ratio",
    "probs_ratio",
    "probs_ratio_clamped",
    "probs_ratio_min",
    "probs_ratio_max",
    "probs_ratio_clamped_min",
    "probs_ratio_clamped_max",
    "policy_kl_error",
    "js_divergence_error",
    "num_valid_samples",
    "max_seq_mult_prob_error",
    "mean_seq_mult_prob_error",
    "min_seq_mult_prob_error",
    "num_masked_seqs",
    "masked_correct_pct",
)
_GRPO_TRAIN = (
    "reward",
    "mean_prompt_length",
    "mean_gen_tokens_per_sample",
    "max_gen_tokens_per_sample",
    "mean_total_tokens_per_sample",
    "mean_env_tokens_per_sample",
    "total_num_tokens",
    "advantages/mean",
    "advantages/max",
    "advantages/min",
    # rollouts.py
    "truncation_rate",
    "natural_termination_rate",
    "avg_turns_per_sample",
    "total_turns",
    "max_turns_per_sample",
    "max_turns_reached_rate",
)
_VLLM = (
    "vllm/prompt_tokens",
    "vllm/generation_tokens",
    "vllm/generations_ok",
    "vllm/generations_failed",
    "vllm/prompt_length_mean",
    "vllm/generation_length_mean",
)
_PERFORMANCE = (
    "tokens_per_sec",
    "samples_per_sec",
    "tokens_per_sec_per_gpu",
    "samples_per_sec_per_gpu",
    "train_flops_per_gpu",
    "train_fp_utilization",
)
_GRPO_TIMING = (
    "total_step_time",
    "data_processing",
    "advantage_calculation",
    "policy_and_reference_logprobs",
    "logprob_inference_prep",
    "training_prep",
    "policy_training",
    "valid_tokens_per_sec_per_gpu",
    "get_logprobs/total",
    "policy_training/total",
)
_SYNC_TIMING = (
    "generation",
    "reward_calculation",
    "prepare_for_generation/total",
    "prepare_for_generation/transfer_and_update_weights",
)
_ASYNC_TIMING = ("exposed_generation", "weight_sync", "idle/buffer_starvation")
_PPO_TIMING = ("value_inference", "value_training", "value_training_prep")
_CRITIC = (
    "critic/loss",
    "critic/grad_norm",
    "critic/lr",
    "critic/vf_clipfrac",
    "critic/returns_mean",
    "critic/values_mean",
    "critic/explained_var",
)
_EFFICIENCY_CATEGORIES = (  # the fork's Timer categories (telemetry/metrics.py)
    "init/total",
    "idle/buffer_starvation",
    "idle/refit_bubble",
    "idle/validation",
    "idle/buffer_full_backoff",
    "idle/generation_limit_pause",
    "idle/refit_event_wait",
    "wasted/failed_trajectory",
)
_SETUP_PHASES = ("cluster_init", "policy_init", "generation_init", "data_init", "total")
_SFT_V2 = (
    "loss",
    "grad_norm",
    "lr",
    "loader_latency_max",
    "policy_time",
    "total_step_time",
    "valid_tokens_per_second",
    "loader_latency_mean",
    "num_tokens",
    "num_valid_tokens",
    "num_sequences",
    "tokens_per_second",
    "mfu",
    "memory_allocated_gb",
    "memory_reserved_gb",
    "step",
    "epoch",
)
_DPO_LOSS = (
    "preference_loss",
    "sft_loss",
    "accuracy",
    "rewards_chosen_mean",
    "rewards_rejected_mean",
    "num_valid_samples",
)

UPSTREAM_SERIES: Final[dict[str, tuple[str, ...]]] = {
    # The 22 series upstream declares -> the loops whose logs carry their key.
    "rl.reward.mean": ("grpo_sync", "grpo_async", "ppo"),
    "rl.policy.loss": LOOPS,
    "rl.grad_norm": LOOPS,
    "rl.learning_rate": LOOPS,
    "rl.response.length.mean": ("grpo_sync", "grpo_async", "ppo"),
    "rl.kl.divergence": ("grpo_sync", "grpo_async", "ppo"),
    "rl.entropy": ("grpo_sync", "grpo_async", "ppo"),
    "rl.value.loss": ("ppo",),
    "rl.vllm.prompt_tokens": ("grpo_sync", "grpo_async", "ppo"),
    "rl.vllm.generation_tokens": ("grpo_sync", "grpo_async", "ppo"),
    "rl.vllm.prompt_length.mean": ("grpo_sync", "grpo_async", "ppo"),
    "rl.vllm.generation_length.mean": ("grpo_sync", "grpo_async", "ppo"),
    "rl.vllm.generations.ok": ("grpo_sync", "grpo_async", "ppo"),
    "rl.vllm.generations.failed": ("grpo_sync", "grpo_async", "ppo"),
    "rl.sft_v2.loader.latency.max": ("sft_v2",),
    "rl.sft_v2.policy.duration": ("sft_v2",),
    "rl.sft_v2.step.duration": ("sft_v2",),
    "rl.sft_v2.valid_tokens_per_second": ("sft_v2",),
    "rl.efficiency.seconds": ("grpo_sync", "grpo_async", "ppo"),
    "rl.efficiency.pct": ("grpo_sync", "grpo_async", "ppo"),
    "rl.setup.duration": ("grpo_sync", "grpo_async", "ppo"),
}
"""Upstream's declared series (``rl.vllm.batch.duration`` is recorded, never logged)."""


EFFICIENCY_AGGREGATES = (
    "thread_seconds_total",
    "total_waste",
    "productive_time",
    "total_wall_time",
)
"""Stems of the ``efficiency/<stem>_s`` aggregates upstream logs beside the categories."""


def _value(key: str, step: int) -> float:
    """A plausible non-negative value (counters are per-step deltas)."""
    return round(0.5 + sum(map(ord, key)) % 97 / 10 + step * 0.01, 4)


def _metrics(keys: tuple[str, ...], step: int) -> dict[str, object]:
    return {key: _value(key, step) for key in keys}


def _records(loop: str, step: int, val_period: int) -> Iterator[tuple[str, dict[str, object]]]:
    """(prefix, metrics) of one step of ``loop``, in upstream's logging order."""
    rl = loop in ("grpo_sync", "grpo_async", "ppo")
    if rl and step == 1:
        setup = {f"{phase}_time_s": 3.0 + i for i, phase in enumerate(_SETUP_PHASES)}
        yield "timing/setup", setup | {"parallel_init_enabled": True}
    if loop == "sft_v2":
        yield "", _metrics(_SFT_V2, step)
        return
    if rl:
        train = _metrics(_POLICY + _PG_LOSS + _GRPO_TRAIN + _VLLM, step)
        train["generation_logger_metrics"] = {"vllm": {"num_requests": 8}}
        if loop == "grpo_async":
            train |= {"buffer_size": 64, "avg_trajectory_age": 1.5}
        if loop == "ppo":
            train |= _metrics(_CRITIC, step)
        if loop == "grpo_sync":
            # rollouts.py's metrics are logged a second time within the step.
            yield "train", _metrics(("truncation_rate", "natural_termination_rate"), step)
        yield "train", train
        yield "performance", _metrics(_PERFORMANCE, step)
        timing = _GRPO_TIMING
        if loop in ("grpo_sync", "ppo"):
            timing += _SYNC_TIMING
        if loop == "grpo_async":
            timing += _ASYNC_TIMING
        if loop == "ppo":
            timing += _PPO_TIMING
        yield "timing/train", _metrics(timing, step)
        efficiency = {f"efficiency/{c}_s": _value(c, step) for c in _EFFICIENCY_CATEGORIES}
        # print_efficiency_summary's aggregates: the family's shape, not categories.
        aggregates = {f"efficiency/{a}_s": _value(a, step) for a in EFFICIENCY_AGGREGATES}
        yield "", efficiency | aggregates | {"efficiency/efficiency_pct": 71.5}
        if step % val_period == 0:
            yield "validation", {"accuracy": 0.61, "avg_length": 212.0}
            yield "timing/validation", {"total_validation_time": 42.0}
        return
    if loop == "sft":
        yield "train", _metrics((*_POLICY, "num_unmasked_tokens"), step)
        yield "timing/train", _metrics(("total_step_time", "data_processing"), step)
        if step % val_period == 0:
            yield "validation", {"val_loss": 0.83}
            yield "timing/validation", {"total_validation_time": 12.0}
        return
    if loop == "dpo":
        yield "train", _metrics(_POLICY + _DPO_LOSS, step)
        yield "timing/train", _metrics(("total_step_time", "data_processing"), step)
        if step % val_period == 0:
            for dataset in ("helpsteer", "ultrafeedback"):
                yield f"validation-{dataset}", _metrics(("loss", *_DPO_LOSS), step)
                yield f"timing/validation-{dataset}", {"total_validation_time": 9.0}
        return
    msg = f"unknown loop {loop!r}"
    raise ValueError(msg)


def run_lines(loop: str, steps: int = 12, val_period: int = 10) -> list[str]:
    """``steps`` steps of ``loop`` as JSONL lines (steps 1..steps)."""
    return [
        json.dumps({"step": step, "prefix": prefix, "metrics": metrics})
        for step in range(1, steps + 1)
        for prefix, metrics in _records(loop, step, val_period)
    ]
