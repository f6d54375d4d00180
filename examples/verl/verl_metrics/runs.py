"""verl-shaped runs: the keys verl's PPO/GRPO trainer logs per step, written as verl writes them.

Each step's flat dict is built the way ``RayPPOTrainer.fit`` assembles it (see
README.md for the source of every key family): ``compute_data_metrics``,
``compute_timing_metrics`` and ``compute_throughout_metrics``, the actor's and
critic's reduced update metrics, the in-reward KL penalty, the agent loop's
timings and, every ``test_freq`` steps and at the last step, ``_validate``'s
``val-core``/``val-aux`` keys. The dict goes to ``Tracking.log(data, step)``;
here a stub :class:`Tracking` hands it to a :class:`~metric_catalog.loggers.JsonlLogger`
(opened with the run's configuration, so live-check can judge conditional rows),
wrapped in :class:`~metric_catalog.adapters.TrackingTee` so every key is teed too.

Five runs (:data:`RUNS`): PPO with a critic and an in-reward KL penalty (critic
warm-up 2 steps), GRPO with a KL loss and no critic, GRPO validating every 5
steps on two data sources (one nested, ``openai/gsm8k``), a multi-turn
agent-loop GRPO run with tools that validates too, and GRPO with rollout
importance sampling (the rollout's log-probabilities, ``mismatch/*``) and no
batch balancing.

Values are random but shaped like real ones (seeded, so a run is reproducible).
"""

from __future__ import annotations

import importlib
import json
import math
import pkgutil
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metric_catalog.adapters import TrackingTee
from metric_catalog.loggers import JsonlLogger

__all__ = ["RUNS", "RunSpec", "Tracking", "main", "step_metrics", "write_file_log", "write_run"]

STATS = ("mean", "max", "min")


@dataclass(frozen=True)
class RunSpec:
    """One verl run: its configuration (the parts that decide what is logged) and length."""

    name: str
    """Short name, also the log's file stem."""
    config: Mapping[str, Any]
    """The run's configuration, shaped like verl's ``ppo_trainer.yaml`` (only what matters)."""
    steps: int
    """Steps the run takes (``trainer.total_training_steps``)."""
    seed: int = 0
    """Seed of the values."""
    data_sources: tuple[str, ...] = field(default=())
    """Validation data sources (``data_source`` of the validation set)."""
    val_variables: tuple[str, ...] = ("reward",)
    """Numeric variables the reward function returns per validation sample."""
    val_pred: bool = False
    """Whether the reward function returns a ``pred`` (enables ``maj@N``)."""


def _config(
    *,
    adv_estimator: str,
    use_kl_loss: bool = False,
    use_kl_in_reward: bool = False,
    test_freq: int = -1,
    critic_warmup: int = 0,
    multi_turn: bool = False,
    val_n: int = 1,
    balance_batch: bool = True,
    rollout_is_threshold: float | None = None,
) -> dict[str, Any]:
    return {
        "algorithm": {
            "adv_estimator": adv_estimator,
            "use_kl_in_reward": use_kl_in_reward,
            "kl_ctrl": {"type": "fixed", "kl_coef": 0.001},
            # Rollout importance sampling: the threshold switches it (and its mismatch/* keys) on.
            "rollout_is_threshold": rollout_is_threshold,
            "rollout_is_threshold_lower": None,
            "rollout_is_level": "token",
            "rollout_is_mode": "mask",
            "rollout_is_veto_threshold": 1e-4,
            "rollout_is": rollout_is_threshold is not None,
        },
        "actor_rollout_ref": {
            "actor": {
                "use_kl_loss": use_kl_loss,
                "kl_loss_coef": 0.001,
                "kl_loss_type": "low_var_kl",
                "entropy_coeff": 0,
            },
            "rollout": {
                "name": "sglang" if multi_turn else "vllm",
                "mode": "async" if multi_turn else "sync",
                "n": 1 if adv_estimator == "gae" else 5,
                # The rollout returns its log-probabilities (debug and mismatch metrics).
                "calculate_log_probs": rollout_is_threshold is not None,
                "multi_turn": {"enable": multi_turn, "max_assistant_turns": 8},
                "val_kwargs": {"n": val_n, "do_sample": val_n > 1},
            },
        },
        "trainer": {
            "project_name": "verl_examples",
            "test_freq": test_freq,
            "critic_warmup": critic_warmup,
            "balance_batch": balance_batch,
            "save_freq": -1,
            "val_before_train": False,
            "n_gpus_per_node": 8,
            "nnodes": 1,
            "logger": ["console", "wandb"],
        },
    }


RUNS: tuple[RunSpec, ...] = (
    RunSpec(
        "ppo_gae_critic",
        _config(adv_estimator="gae", use_kl_in_reward=True, critic_warmup=2),
        steps=12,
        seed=1,
    ),
    RunSpec("grpo_kl_loss", _config(adv_estimator="grpo", use_kl_loss=True), steps=10, seed=2),
    RunSpec(
        "grpo_validation",
        _config(adv_estimator="grpo", use_kl_loss=True, test_freq=5, val_n=4),
        steps=12,
        seed=3,
        data_sources=("openai/gsm8k", "lighteval/MATH"),
        val_variables=("reward", "acc"),
        val_pred=True,
    ),
    RunSpec(
        "grpo_multiturn",
        _config(adv_estimator="grpo", use_kl_loss=True, test_freq=4, multi_turn=True, val_n=2),
        steps=8,
        seed=4,
        data_sources=("searchR1_nq",),
    ),
    RunSpec(
        "grpo_rollout_is",
        _config(adv_estimator="grpo", rollout_is_threshold=2.0, balance_batch=False),
        steps=6,
        seed=5,
    ),
)
"""The runs the example writes and its tests check."""


def _stats(rng: random.Random, low: float, high: float) -> dict[str, float]:
    """``mean``/``max``/``min`` of a batch whose values lie in ``[low, high]``."""
    a, b = sorted((rng.uniform(low, high), rng.uniform(low, high)))
    return {"min": a, "max": b, "mean": rng.uniform(a, b)}


def _family(prefix: str, values: Mapping[str, float]) -> dict[str, float]:
    return {f"{prefix}/{name}": value for name, value in values.items()}


def _validation(rng: random.Random, spec: RunSpec) -> dict[str, float]:
    """``_validate``'s keys: each data source's variables reduced as process_validation_metrics."""
    n = int(spec.config["actor_rollout_ref"]["rollout"]["val_kwargs"]["n"])
    sizes = [2**k for k in range(1, n.bit_length()) if 2**k < n] + [n] if n > 1 else []
    core = "acc" if "acc" in spec.val_variables else "reward"
    metrics: dict[str, float] = {}
    for source in spec.data_sources:
        for var in spec.val_variables:
            names = [f"mean@{n}"]
            if n > 1:
                names.append(f"std@{n}")
                for size in sizes:
                    for kind in ("best", "worst") + (("maj",) if spec.val_pred else ()):
                        names += [f"{kind}@{size}/mean", f"{kind}@{size}/std"]
            for name in names:
                headline = name.startswith(("mean", "maj", "best")) and f"@{n}" in name
                section = "val-core" if var == core and headline else "val-aux"
                metrics[f"{section}/{source}/{var}/{name}"] = rng.random()
    rollout = spec.config["actor_rollout_ref"]["rollout"]
    if rollout["mode"] == "async" or rollout["multi_turn"]["enable"]:
        metrics |= _family("val-aux/num_turns", _stats(rng, 2, 8))
    return metrics


def _debug_and_mismatch(rng: random.Random, config: Mapping[str, Any]) -> dict[str, float]:
    """The keys of a step whose rollout returned its log-probabilities.

    ``calculate_debug_metrics`` compares the rollout's and the actor's token
    probabilities; with ``algorithm.rollout_is_threshold`` set the trainer adds
    the importance-sampling and mismatch metrics (``mismatch/*``), the two
    masked fractions only in ``rollout_is_mode: mask``.
    """
    metrics: dict[str, float] = {
        "training/rollout_probs_diff_valid": 1,
        "training/rollout_probs_diff_max": rng.uniform(0.2, 0.6),
        "training/rollout_probs_diff_mean": rng.uniform(1e-3, 5e-3),
        "training/rollout_probs_diff_std": rng.uniform(5e-3, 2e-2),
        "training/rollout_actor_probs_pearson_corr": rng.uniform(0.98, 0.999),
    }
    algorithm = config["algorithm"]
    if algorithm["rollout_is_threshold"] is None:
        return metrics
    weights = {"min": rng.uniform(0.05, 0.5), "max": rng.uniform(2, 6)}
    weights["mean"] = rng.uniform(0.98, 1.02)
    seq = {"min": rng.uniform(0.7, 0.95), "max": rng.uniform(1.05, 1.4)}
    seq["mean"] = rng.uniform(0.99, 1.01)
    training_log_ppl, rollout_log_ppl = rng.uniform(0.3, 0.6), rng.uniform(0.3, 0.6)
    diff = rollout_log_ppl - training_log_ppl
    mismatch = {
        "rollout_is_veto_fraction": rng.uniform(0, 0.01),
        "rollout_is_catastrophic_token_fraction": rng.uniform(0, 1e-4),
        **{f"rollout_is_{stat}": value for stat, value in weights.items()},
        "rollout_is_ratio_fraction_high": rng.uniform(0, 0.01),
        "rollout_is_ratio_fraction_low": rng.uniform(0, 0.01),
        "rollout_is_std": rng.uniform(0.02, 0.1),
        "rollout_is_eff_sample_size": rng.uniform(0.9, 0.999),
        **{f"rollout_is_seq_{stat}": value for stat, value in seq.items()},
        "rollout_is_seq_std": rng.uniform(0.01, 0.05),
        "rollout_is_seq_max_deviation": max(seq["max"] - 1, 1 - seq["min"]),
        "rollout_is_seq_fraction_high": 0.0,
        "rollout_is_seq_fraction_low": 0.0,
        "mismatch_training_ppl": math.exp(training_log_ppl),
        "mismatch_training_log_ppl": training_log_ppl,
        "mismatch_kl": rng.uniform(-1e-3, 1e-3),
        "mismatch_k3_kl": rng.uniform(0, 1e-3),
        "mismatch_rollout_ppl": math.exp(rollout_log_ppl),
        "mismatch_rollout_log_ppl": rollout_log_ppl,
        "mismatch_log_ppl_diff": diff,
        "mismatch_log_ppl_abs_diff": abs(diff),
        "mismatch_log_ppl_diff_max": abs(diff) + rng.uniform(0.01, 0.1),
        "mismatch_log_ppl_diff_min": -abs(diff) - rng.uniform(0.01, 0.1),
        "mismatch_ppl_ratio": math.exp(diff),
    }
    if algorithm["rollout_is_mode"] == "mask":
        mismatch["rollout_is_masked_fraction"] = rng.uniform(0, 0.02)
        mismatch["rollout_is_seq_masked_fraction"] = rng.uniform(0, 0.1)
    return metrics | _family("mismatch", mismatch)


def step_metrics(rng: random.Random, spec: RunSpec, step: int) -> dict[str, float]:
    """The flat dict ``RayPPOTrainer.fit`` hands to ``Tracking.log`` at ``step``."""
    config = spec.config
    actor = config["actor_rollout_ref"]["actor"]
    rollout = config["actor_rollout_ref"]["rollout"]
    trainer = config["trainer"]
    use_critic = config["algorithm"]["adv_estimator"] == "gae"
    use_ref = actor["use_kl_loss"] or config["algorithm"]["use_kl_in_reward"]
    update_actor = trainer["critic_warmup"] <= step
    validate = trainer["test_freq"] > 0 and (step % trainer["test_freq"] == 0 or step == spec.steps)

    timing = {"start_profile": rng.uniform(1e-5, 1e-4), "gen": rng.uniform(20, 90)}
    timing |= {"reward": rng.uniform(0.1, 2), "adv": rng.uniform(0.1, 1)}
    # The sync rollout worker's own timing, merged into timing_raw inside gen.
    rollout_timing: dict[str, float] = {}
    if rollout["mode"] != "async":
        generate = timing["gen"] * rng.uniform(0.85, 0.97)
        rollout_timing = {
            "generate_sequences": generate,
            "reshard": rng.uniform(0.1, 0.5),
            "generation_timing/max": generate,
            "generation_timing/min": generate * rng.uniform(0.7, 1.0),
            "generation_timing/topk_ratio": rng.choice((0.0, 0.125, 0.25)),
        }
    timing["old_log_prob"] = rng.uniform(3, 12)
    if use_ref:
        timing["ref"] = rng.uniform(3, 12)
    if use_critic:
        timing["values"] = rng.uniform(3, 12)
        timing["update_critic"] = rng.uniform(10, 40)
    if update_actor:
        timing["update_actor"] = rng.uniform(10, 40)
    if validate:
        timing["testing"] = rng.uniform(30, 120)
    timing["step"] = sum(timing.values()) + rng.uniform(0.5, 2)
    timing["stop_profile"] = rng.uniform(1e-5, 1e-4)
    timing |= rollout_timing

    tokens = rng.randint(200_000, 900_000)
    gpus = trainer["n_gpus_per_node"] * trainer["nnodes"]
    metrics: dict[str, float] = {}
    if trainer["balance_batch"]:
        # _balance_batch: tokens per data-parallel rank before and after balancing.
        ranks = sorted(rng.uniform(0.8, 1.2) for _ in range(gpus))
        before = [tokens * share / sum(ranks) for share in ranks]
        after = [tokens / gpus * rng.uniform(0.995, 1.005) for _ in range(gpus)]
        metrics |= {
            "global_seqlen/min": min(before),
            "global_seqlen/max": max(before),
            "global_seqlen/minmax_diff": max(before) - min(before),
            "global_seqlen/balanced_min": min(after),
            "global_seqlen/balanced_max": max(after),
            "global_seqlen/mean": tokens / gpus,
        }
    if validate:
        metrics |= _validation(rng, spec)
    metrics["actor/entropy"] = rng.uniform(0.2, 1.5)
    if rollout["calculate_log_probs"]:
        metrics |= _debug_and_mismatch(rng, config)
    if config["algorithm"]["use_kl_in_reward"]:
        metrics["actor/reward_kl_penalty"] = rng.uniform(0, 0.05)
        metrics["actor/reward_kl_penalty_coeff"] = config["algorithm"]["kl_ctrl"]["kl_coef"]
    if use_critic:
        metrics |= {
            "critic/vf_loss": rng.uniform(0.01, 0.5),
            "critic/vf_clipfrac": rng.uniform(0, 0.2),
            "critic/vpred_mean": rng.uniform(-1, 1),
            "critic/grad_norm": rng.uniform(0.1, 5),
            "critic/lr": 1e-5,
            "perf/mfu/critic": rng.uniform(0.2, 0.5),
        }
    if update_actor:
        metrics |= {
            "actor/pg_loss": rng.uniform(-0.5, 0.5),
            "actor/pg_clipfrac": rng.uniform(0, 0.1),
            "actor/ppo_kl": rng.uniform(-0.01, 0.01),
            "actor/pg_clipfrac_lower": rng.uniform(0, 0.01),
            "actor/grad_norm": rng.uniform(0.1, 3),
            "perf/mfu/actor": rng.uniform(0.2, 0.5),
            "perf/max_memory_allocated_gb": rng.uniform(30, 70),
            "perf/max_memory_reserved_gb": rng.uniform(70, 78),
            "perf/cpu_memory_used_gb": rng.uniform(100, 400),
            "actor/lr": 1e-6,
        }
        if actor["use_kl_loss"]:
            metrics["actor/kl_loss"] = rng.uniform(0, 0.01)
            metrics["actor/kl_coef"] = actor["kl_loss_coef"]
    if rollout["mode"] == "async":
        for phase in ("generate_sequences", "tool_calls"):
            metrics |= _family(f"timing_s/agent_loop/{phase}", _stats(rng, 0.5, 60))
            metrics[f"timing_s/agent_loop/slowest/{phase}"] = rng.uniform(60, 90)
        metrics["timing_s/agent_loop/slowest/prompt_length"] = float(rng.randint(100, 600))
        metrics["timing_s/agent_loop/slowest/response_length"] = float(rng.randint(600, 4096))
    metrics |= {"training/global_step": step, "training/epoch": (step - 1) // 20}

    # compute_data_metrics
    for name, (low, high) in {"score": (0, 1), "rewards": (-0.1, 1)}.items():
        metrics |= _family(f"critic/{name}", _stats(rng, low, high))
    metrics |= _family("critic/advantages", _stats(rng, -3, 3))
    metrics |= _family("critic/returns", _stats(rng, -1, 1))
    if use_critic:
        metrics |= _family("critic/values", _stats(rng, -1, 1))
        metrics["critic/vf_explained_var"] = rng.uniform(-0.5, 0.9)
    lengths = _stats(rng, 0, 4096)
    metrics |= _family("response_length", lengths) | {"response_length/clip_ratio": rng.random()}
    metrics |= _family("response_length_non_aborted", _stats(rng, 1, 4096))
    metrics["response_length_non_aborted/clip_ratio"] = rng.random()
    metrics["response/aborted_ratio"] = rng.uniform(0, 0.05)
    metrics |= _family("prompt_length", _stats(rng, 20, 1024))
    metrics["prompt_length/clip_ratio"] = rng.uniform(0, 0.01)
    if rollout["mode"] == "async" or rollout["multi_turn"]["enable"]:
        metrics |= _family("num_turns", _stats(rng, 2, 8))
    if rollout["mode"] == "async" and rollout["multi_turn"]["enable"]:
        metrics |= _family("tool_call_counts", _stats(rng, 0, 6))

    # compute_timing_metrics, then compute_throughout_metrics
    metrics |= _family("timing_s", timing)
    per_token = ("gen", "ref", "values", "adv", "update_critic", "update_actor")
    metrics |= {
        f"timing_per_token_ms/{name}": timing[name] * 1000 / tokens
        for name in per_token
        if name in timing
    }
    metrics |= {
        "perf/total_num_tokens": tokens,
        "perf/time_per_step": timing["step"],
        "perf/throughput": tokens / (timing["step"] * gpus),
    }
    return metrics


class Tracking:
    """A stub of verl's ``verl.utils.tracking.Tracking``: ``log(data, step)`` to a JSONL file.

    verl's own ``Tracking.log(data, step, backend=None)`` hands the flat dict to
    each backend; this one hands it whole to a :class:`JsonlLogger`, one record
    under the empty prefix: live-check splits each key at the longest declared
    prefix, as the tee does.
    """

    def __init__(self, writer: JsonlLogger) -> None:
        """Log to ``writer``."""
        self.writer = writer
        """Where each step's dict goes."""

    def log(self, data: Mapping[str, Any], step: int, backend: Any = None) -> None:
        """Write ``data`` as one record of ``step``."""
        self.writer.log_metrics(dict(data), step)


def write_run(spec: RunSpec, path: Path) -> list[tuple[int, dict[str, float]]]:
    """Write ``spec``'s run to ``path`` through ``TrackingTee(Tracking(...))``; return its steps."""
    rng = random.Random(spec.seed)
    logged = []
    with JsonlLogger(path, config=spec.config) as writer:
        logger = TrackingTee(Tracking(writer))
        for step in range(1, spec.steps + 1):
            metrics = step_metrics(rng, spec, step)
            logger.log(data=metrics, step=step)
            logged.append((step, metrics))
    return logged


def write_file_log(spec: RunSpec, path: Path) -> list[tuple[int, dict[str, float]]]:
    """Write ``spec``'s run in verl's own file-logger format, ``{"step": N, "data": {...}}`` a line.

    That format carries no configuration: live-check reads it (its flat per-step
    JSONL input) with every key split against the catalog, and judges rows whose
    presence depends on the configuration as conditional information.
    """
    rng = random.Random(spec.seed)
    logged = []
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for step in range(1, spec.steps + 1):
            metrics = step_metrics(rng, spec, step)
            out.write(json.dumps({"step": step, "data": metrics}) + "\n")
            logged.append((step, metrics))
    return logged


def main(argv: list[str] | None = None) -> int:
    """Write every run of :data:`RUNS` as ``<name>.jsonl`` into a folder (default ``runs``).

    Imports the generated modules first, so the tee and the split know the rows.
    """
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "runs")
    generated = importlib.import_module("verl_metrics.telemetry.generated")
    for module in pkgutil.iter_modules(generated.__path__):
        importlib.import_module(f"{generated.__name__}.{module.name}")
    for spec in RUNS:
        write_run(spec, folder / f"{spec.name}.jsonl")
        write_file_log(spec, folder / "verl_file_logger" / f"{spec.name}.jsonl")
        print(folder / f"{spec.name}.jsonl")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
