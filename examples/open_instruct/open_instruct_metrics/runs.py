"""open-instruct-shaped runs: every ``wandb.log`` call ``grpo_fast.py`` makes, step by step.

``open_instruct/grpo_fast.py`` logs to W&B only (and prints the scalars): after each
training step ``one_training_step`` builds one dict (its own progress and timing keys, the
weight sync thread's timings, the learners' averaged loss statistics, the data preparation
actor's batch metrics, the utilization metrics), turns every non-empty list or array into
a ``wandb.Histogram`` and calls ``wandb.log(metrics, step=training_step)``; ``maybe_evaluate``
logs the in-loop evaluation the same way, at the same step, with a ``wandb.Table`` of sample
completions. The run's configuration is the flat merge of its argument dataclasses
(``wandb.init(config=all_configs)``), and ``training_step`` is the x axis
(``wandb.define_metric("*", step_metric="training_step")``).

:func:`calls` yields those calls for a :class:`RunSpec` with the value types the code
produces (Python floats from the learners' averages, numpy scalars and arrays from the
evaluation and the batch statistics); :func:`to_wandb` applies the code's histogram
conversion; :func:`write_wandb` writes a real offline W&B run with them
(``python -m open_instruct_metrics.runs OUT_DIR`` writes every run, one per line).
"""

from __future__ import annotations

import math
import os
import random
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RUNS", "RunSpec", "calls", "config", "to_wandb", "write_wandb"]


@dataclass(frozen=True)
class RunSpec:
    """One run: its name, steps and the configuration values that change what it logs."""

    name: str
    steps: int
    overrides: Mapping[str, Any] = field(default_factory=dict)
    first_step: int = 1
    """1, or the step after the checkpoint a resumed run restarts from."""
    verifiers: tuple[str, ...] = ("gsm8k",)
    all_solved_at: tuple[int, ...] = ()
    """Steps whose every response reaches the maximum score (no unsolved lengths)."""


RUNS: tuple[RunSpec, ...] = (
    RunSpec(
        "grpo_eval_entropy",
        steps=9,
        overrides={
            "record_entropy": True,
            "local_eval_every": 4,
            "eval_pass_at_k": 4,
            "dataset_mixer_eval_list": ["ai2-adapt-dev/rlvr_gsm8k_zs", "32"],
        },
        verifiers=("gsm8k", "math", "string_f1"),
    ),
    RunSpec(
        "grpo_no_reference_no_eval",
        steps=6,
        overrides={
            "load_ref_policy": False,
            "beta": 0.0,
            "truncated_importance_sampling_ratio_cap": 0.0,
            "local_eval_every": 5,  # no eval dataset: maybe_evaluate logs nothing
        },
        all_solved_at=(3,),
    ),
    RunSpec(
        "grpo_resumed",
        steps=3,
        first_step=9,
        overrides={
            "local_eval_every": 4,  # evaluated at 4 and 8 before the resume, next at 12
            "dataset_mixer_eval_list": ["ai2-adapt-dev/rlvr_gsm8k_zs", "16"],
            "checkpoint_state_dir": "checkpoints/grpo_resumed",
        },
    ),
)
"""The runs the example writes."""

_BASE_CONFIG: Mapping[str, Any] = {
    # GRPOExperimentConfig (open_instruct/grpo_utils.py) and the experiment/logging bases
    "exp_name": "grpo",
    "seed": 1,
    "learning_rate": 1e-6,
    "lr_scheduler_type": "constant",
    "total_episodes": 100000,
    "num_training_steps": 12,
    "local_eval_every": -1,
    "save_freq": 200,
    "num_mini_batches": 1,
    "num_epochs": 1,
    "beta": 0.05,
    "clip_lower": 0.2,
    "clip_higher": 0.272,
    "truncated_importance_sampling_ratio_cap": 2.0,
    "kl_estimator": 2,
    "loss_denominator": "token",
    "load_ref_policy": True,
    "record_entropy": False,
    "use_vllm_logprobs": False,
    "num_learners_per_node": [2],
    "deepspeed_stage": 2,
    "with_tracking": True,
    "wandb_project": "open_instruct_internal",
    "wandb_entity": None,
    "checkpoint_state_freq": 200,
    "checkpoint_state_dir": None,
    "eval_on_step_0": False,
    "eval_pass_at_k": 1,
    # StreamingDataLoaderConfig (open_instruct/data_loader.py)
    "dataset_mixer_list": ["ai2-adapt-dev/rlvr_gsm8k_zs", "1.0"],
    "dataset_mixer_eval_list": [],
    "num_unique_prompts_rollout": 8,
    "num_samples_per_prompt_rollout": 4,
    "response_length": 512,
    "async_steps": 1,
    "apply_verifiable_reward": True,
    "verification_reward": 10.0,
    "max_possible_score": 10.0,
    "advantage_normalization_type": "standard",
    "active_sampling": False,
    "filter_zero_std_samples": True,
    # VLLMConfig, ModelConfig, TokenizerConfig
    "vllm_num_engines": 2,
    "vllm_tensor_parallel_size": 1,
    "model_name_or_path": "Qwen/Qwen2.5-0.5B",
    "chat_template_name": "tulu_thinker",
}


def config(spec: RunSpec) -> dict[str, Any]:
    """The flat configuration ``wandb.init(config=all_configs)`` logs for the run."""
    merged = dict(_BASE_CONFIG)
    merged.update(spec.overrides)
    merged["run_name"] = f"{merged['exp_name']}__{merged['seed']}__1764820000"
    merged["world_size"] = sum(merged["num_learners_per_node"])
    return merged


def _eval_due(cfg: Mapping[str, Any], step: int) -> bool:
    """Whether maybe_evaluate logs at ``step`` (eval submitted at a due step, collected then)."""
    every = int(cfg["local_eval_every"])
    if every <= 0 or not cfg["dataset_mixer_eval_list"]:
        return False
    return step % every == 0 and step > 1


def _train_call(
    spec: RunSpec, cfg: Mapping[str, Any], step: int, rng: random.Random
) -> dict[str, Any]:
    """The dict ``one_training_step`` builds at ``step``, before the histogram conversion."""
    prompts = int(cfg["num_unique_prompts_rollout"])
    samples = int(cfg["num_samples_per_prompt_rollout"])
    top = float(cfg["max_possible_score"])
    responses = prompts * samples
    all_solved = step in spec.all_solved_at
    scores = np.array(
        [top if all_solved or rng.random() < 0.45 else 0.0 for _ in range(responses)], dtype=float
    )
    lengths = np.array([rng.randint(40, int(cfg["response_length"])) for _ in range(responses)])
    prompt_lengths = [rng.randint(60, 220) for _ in range(prompts)]
    grouped = scores.reshape(-1, samples)
    advantages = (scores - np.repeat(grouped.mean(axis=-1), samples)) / (
        np.repeat(grouped.std(axis=-1), samples) + 1e-8
    )
    solved = lengths[scores == top]
    unsolved = np.array([]) if np.all(scores == top) else lengths[scores == 0]
    episode = step * prompts * samples
    num_step_tokens = sum(prompt_lengths) + int(lengths.sum())
    num_total_tokens = (step - 1) * 9000
    generation_s = rng.uniform(20.0, 40.0)
    training_s = rng.uniform(8.0, 14.0)
    step_s = generation_s * 0.1 + training_s + rng.uniform(0.5, 1.5)
    with_ref = bool(cfg["load_ref_policy"])
    kls = [rng.uniform(0.0, 0.02) if with_ref else 0.0 for _ in range(4)]
    tis_on = float(cfg["truncated_importance_sampling_ratio_cap"]) > 0
    # Learner metrics reach the main process as Python floats (MetricsTracker), averaged.
    learner: dict[str, Any] = {
        "loss/kl_avg": kls[int(cfg["kl_estimator"])] * float(cfg["beta"]),
        "loss/policy_avg": rng.uniform(-0.05, 0.05),
        "loss/total_avg": rng.uniform(-0.05, 0.05),
        **{f"objective/kl{j}_avg": kls[j] for j in range(4)},
        "policy/clipfrac_avg": rng.uniform(0.0, 0.08),
        "val/ratio": rng.uniform(0.98, 1.02),
        "val/tis_clipfrac": rng.uniform(0.0, 0.01) if tis_on else 0.0,
        "val/tis_ratio": rng.uniform(0.95, 1.0) if tis_on else 0.0,
    }
    if cfg["record_entropy"]:
        learner["policy/entropy_avg"] = rng.uniform(0.3, 0.9)
    learner["val/ratio_var"] = rng.uniform(0.0, 1e-3)
    learner.update(
        {
            "lr": float(cfg["learning_rate"]),
            "debug/vllm_vs_local_logprob_diff_mean": rng.uniform(0.0, 0.02),
            "debug/vllm_vs_local_logprob_diff_max": rng.uniform(0.5, 3.0),
            "debug/vllm_vs_local_logprob_diff_std": rng.uniform(0.0, 0.05),
            "debug/vllm_local_reverse_kl": rng.uniform(0.0, 0.01),
            "optim/grad_norm": rng.uniform(0.05, 0.6),
        }
    )
    # The data preparation actor's scalars, averaged by the learners (floats).
    batch: dict[str, Any] = {
        "scores": float(scores.mean()),
        "real_batch_size_ratio": 1.0,
        "unsolved_batch_size_ratio": float((scores < top).sum() / responses),
        "packed_ratio": rng.uniform(0.2, 0.5),
        "val/total_reward_groups": float(responses / samples),
        "val/sequence_lengths": float(lengths.mean()),
        "val/sequence_lengths_min": float(lengths.min()),
        "val/sequence_lengths_max": float(lengths.max()),
        "val/sequence_lengths_unsolved": 0.0 if len(unsolved) == 0 else float(unsolved.mean()),
        "val/sequence_lengths_solved": 0.0 if len(solved) == 0 else float(solved.mean()),
        "val/stop_rate": rng.uniform(0.8, 1.0),
        "val/advantages_mean": float(advantages.mean()),
        "val/advantages_min": float(advantages.min()),
        "val/advantages_max": float(advantages.max()),
        "val/num_calls_rate": 0.0,
        "val/timeouts_rate": 0.0,
        "val/tool_errors_rate": 0.0,
        "val/good_outputs_rate": 0.0,
        "val/tool_runtimes_rate": 0.0,
        "val/tool_calleds_rate": 0.0,
        "time/getting_response": generation_s,
        "objective/verifiable_reward": float(scores.mean()),
        "objective/verifiable_correct_rate": float((scores > 0).mean()),
    }
    for verifier in spec.verifiers:
        batch[f"objective/{verifier}_reward"] = rng.uniform(0.0, top)
        batch[f"objective/{verifier}_correct_rate"] = rng.uniform(0.0, 1.0)
    batch.update(
        {
            "batch/filtered_prompts": 0.0,
            "batch/filtered_prompts_zero": 0.0,
            "batch/filtered_prompts_solved": 0.0,
            "batch/filtered_prompts_nonzero": 0.0,
            "batch/filtered_prompts_pct": 0.0,
            "batch/percent_solved_mean": float(grouped.mean() / top),
            "batch/no_resampled_prompts": 0.0,
            "batch/total_prompts": float(prompts),
            "val/actor_tokens_per_second": num_step_tokens / generation_s,
        }
    )
    # Arrays pass through from the first learner as the actor made them.
    arrays: dict[str, Any] = {
        "val/sequence_lengths_unsolved_hist": unsolved,
        "val/sequence_lengths_solved_hist": solved,
        "val/advantages_hist": advantages,
        "batch/prompt_lengths": prompt_lengths,
        "batch/response_lengths": [int(n) for n in lengths],
        "batch/percent_solved_hist": grouped.mean(axis=-1) / top,
    }
    data_thread: dict[str, Any] = {}
    if step > spec.first_step:  # the weight sync thread starts after the first step
        times = np.array([rng.uniform(2.0, 4.0) for _ in range(int(cfg["world_size"]))])
        data_thread.update(
            {
                "time/weight_sync": float(times.max()) + 0.3,
                "time/weight_sync_mean": np.mean(times),
                "time/weight_sync_min": np.min(times),
                "time/weight_sync_max": np.max(times),
                "time/weight_sync_median": np.median(times),
            }
        )
    data_thread["time/health_check"] = rng.uniform(0.001, 0.2)
    saved = int(cfg["save_freq"]) > 0 and step % int(cfg["save_freq"]) == 0 and step > 1
    return {
        "episode": episode,
        "global_step": episode,
        "training_step": step,
        "val/num_total_tokens": num_total_tokens,
        "val/num_step_tokens": num_step_tokens,
        "epoch": episode / samples / 7473,
        "learner_tokens_per_second_overall": num_total_tokens / (step * 45.0),
        "learner_tokens_per_second_step": num_step_tokens / step_s,
        "time/total": step_s,
        "time/training": training_s,
        "time/saving": rng.uniform(30.0, 60.0) if saved else 0,
        **data_thread,
        **learner,
        **batch,
        **arrays,
        "actor_mfu": rng.uniform(5.0, 25.0),
        "actor_mbu": rng.uniform(20.0, 60.0),
        "learner_mfu": rng.uniform(10.0, 40.0),
    }


def _eval_call(spec: RunSpec, cfg: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The dict ``maybe_evaluate`` logs (without its ``sample_completions`` table)."""
    k = int(cfg["eval_pass_at_k"])
    top = float(cfg["max_possible_score"])
    scores = np.array([top if rng.random() < 0.4 else 0.0 for _ in range(16 * k)])
    lengths = np.array([rng.randint(30, 900) for _ in range(16 * k)])
    correct = (scores >= top - 1e-8).reshape(-1, k)
    counts = correct.sum(axis=1)
    pass_at: dict[str, float] = {"eval/pass_at_1": float((counts / k).mean())}
    if k > 1:
        pass_at[f"eval/pass_at_{k}"] = float((counts > 0).mean())
    power = 1
    while power <= k:
        estimates = [
            1.0 - math.comb(k - int(c), power) / math.comb(k, power) if k - int(c) >= power else 1.0
            for c in counts
        ]
        pass_at[f"eval/pass_at_{power}_unbiased"] = float(np.mean(estimates))
        power *= 2
    rewards: dict[str, Any] = {
        "eval/objective/verifiable_reward": float(scores.mean()),
        "eval/objective/verifiable_correct_rate": float((scores > 0).mean()),
    }
    for verifier in spec.verifiers:
        rewards[f"eval/objective/{verifier}_reward"] = rng.uniform(0.0, top)
        rewards[f"eval/objective/{verifier}_correct_rate"] = rng.uniform(0.0, 1.0)
    return {
        "eval/scores": scores.mean(),  # numpy scalars, as the code computes them
        "eval/sequence_lengths": lengths.mean(),
        "eval/sequence_lengths_min": lengths.min(),
        "eval/sequence_lengths_max": lengths.max(),
        "eval/stop_rate": rng.uniform(0.8, 1.0),
        **rewards,
        **pass_at,
        "eval/actor_tokens_per_second": rng.uniform(2000.0, 9000.0),
    }


def calls(spec: RunSpec) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(step, metrics)`` of every ``wandb.log`` call the run makes, in order."""
    cfg = config(spec)
    rng = random.Random(spec.name)
    for step in range(spec.first_step, spec.first_step + spec.steps):
        yield step, _train_call(spec, cfg, step, rng)
        if _eval_due(cfg, step):
            yield step, _eval_call(spec, cfg, rng)


def to_wandb(metrics: Mapping[str, Any], wandb: Any, *, eval_call: bool = False) -> dict[str, Any]:
    """The dict handed to ``wandb.log``: non-empty lists and arrays as ``wandb.Histogram``.

    An evaluation call gets its ``sample_completions`` table, as ``maybe_evaluate`` adds it.
    """
    logged: dict[str, Any] = {}
    for key, value in metrics.items():
        if isinstance(value, np.ndarray | list) and len(value) > 0:
            logged[key] = wandb.Histogram(value)
        else:
            logged[key] = value
    if eval_call:
        logged["sample_completions"] = wandb.Table(
            columns=["prompt", "response", "scores", "ground_truth"],
            data=[["What is 2+2?", "4", 10.0, "4"]],
        )
    return logged


def write_wandb(spec: RunSpec, out_dir: str) -> str:
    """Write ``spec`` as a real offline W&B run under ``out_dir``; return the run's folder.

    Calls ``wandb.init``, ``define_metric`` and ``wandb.log`` as ``grpo_fast.py`` does,
    in offline mode (nothing leaves the machine). Run it in a child process: ``wandb.init``
    starts ``wandb-core`` and hooks the interpreter.
    """
    os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_CONSOLE="off")
    import wandb  # noqa: PLC0415 - only the writer needs it

    run: Any = wandb.init(
        mode="offline",
        dir=out_dir,
        project="open_instruct_internal",
        name=config(spec)["run_name"],
        config=config(spec),
        settings=wandb.Settings(console="off", x_disable_stats=True),
    )
    run.define_metric("training_step")
    run.define_metric("*", step_metric="training_step")
    for step, metrics in calls(spec):
        run.log(to_wandb(metrics, wandb, eval_call="eval/scores" in metrics), step=step)
    run.finish()
    return str(os.path.dirname(run.settings.sync_file))


if __name__ == "__main__":
    for run_spec in RUNS:
        print(write_wandb(run_spec, sys.argv[1]))
