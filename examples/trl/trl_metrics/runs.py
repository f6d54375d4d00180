"""TRL-shaped runs: what TRL's trainers log at each logging step and evaluation.

Each logged dict is built the way TRL and transformers assemble it (see README.md
for the source of every key): ``Trainer._maybe_log_save_evaluate`` starts a
training log with ``loss``, ``grad_norm`` (clipped when ``max_grad_norm > 0``, else
the unclipped norm) and ``learning_rate``; ``GRPOTrainer.log`` adds the averages of
``self._metrics[mode]`` (``num_tokens``, ``completions/*``,
``rewards/<reward function>/{mean,std}``, ``None`` for a function that scored no
sample of the window, ``reward``, ``reward_std``, ``frac_reward_zero_std``,
``kl`` when ``beta != 0``,
``entropy``, ``clip_ratio/*``), prefixed ``eval_`` in evaluation;
``Trainer.evaluate`` logs ``eval_loss`` and its speed metrics (``eval_<name>_``
per set when ``eval_dataset`` is a dict; TRL's own keys stay ``eval_``), and
``Trainer.train`` ends with ``train_runtime``, ``train_samples_per_second``,
``train_steps_per_second``, ``total_flos`` and ``train_loss``. ``Trainer.log``
adds ``epoch`` to every dict, appends ``{**logs, "step": global_step}`` to
``state.log_history`` and calls each callback's ``on_log(args, state, control,
logs=logs)``.

Two formats per run, each as the real code writes it:

- :func:`write_trainer_state`: the ``trainer_state.json`` ``TrainerState.save_to_json``
  writes (``json.dumps(..., indent=2, sort_keys=True)``), at the end of the run or,
  for a run that stops early, in its last ``checkpoint-N/`` folder;
- :func:`write_callback_log`: what ``on_log`` receives, through
  :class:`~metric_catalog.adapters.TrainerCallbackTee`, which tees it and hands it
  to a :class:`~metric_catalog.loggers.JsonlLogger` opened with the run's
  configuration (``GRPOConfig.to_dict()``), so live-check judges the conditional rows.

Values are random but shaped like real ones (seeded, so a run is reproducible).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from metric_catalog.adapters import TrainerCallbackTee
from metric_catalog.loggers import JsonlLogger

__all__ = [
    "RUNS",
    "CallbackDispatch",
    "RunSpec",
    "main",
    "run_logs",
    "trainer_state",
    "write_callback_log",
    "write_trainer_state",
]

Logs = dict[str, float | None]


@dataclass(frozen=True)
class RunSpec:
    """One run: its trainer, configuration (the parts that decide what is logged) and shape."""

    name: str
    """Short name, also the stem of its files."""
    config: Mapping[str, Any]
    """The run's configuration, shaped like ``<Trainer>Config.to_dict()`` (what matters)."""
    max_steps: int
    """Optimizer steps the run is configured for."""
    reward_funcs: tuple[str, ...] = ()
    """The reward functions' names (``__name__``, or a reward model's last name part)."""
    eval_datasets: tuple[str, ...] = ()
    """Evaluation sets: none, ``("",)`` for one dataset, or the names of a dict's sets."""
    stop_at: int | None = None
    """The step of the last checkpoint when the run stops early (no end-of-training log)."""
    seed: int = 0
    """Seed of the values."""
    train_samples: int = field(default=256)
    """Prompts in the training set (for the speed metrics)."""
    unscored: frozenset[tuple[str, int]] = frozenset()
    """(reward function, logging step) where the function scored no sample of the window."""
    trainer: str = "grpo"
    """``grpo``, ``rloo``, ``dpo``, ``kto`` or ``online_dpo``: which trainer's keys it logs."""


_TRAINER_ARGS: dict[str, Any] = {
    "learning_rate": 1e-6,
    "lr_scheduler_type": "linear",
    "include_num_input_tokens_seen": "no",
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "report_to": [],
}


def _config(
    *,
    beta: float,
    logging_steps: int,
    eval_steps: int | None = None,
    max_grad_norm: float = 1.0,
    **fields: Any,
) -> dict[str, Any]:
    """A ``GRPOConfig.to_dict()``: the Trainer's arguments and GRPO's, ``fields`` over them."""
    return {
        "output_dir": "Qwen2-0.5B-GRPO",
        **_TRAINER_ARGS,
        "max_grad_norm": max_grad_norm,
        "logging_steps": logging_steps,
        "eval_strategy": "no" if eval_steps is None else "steps",
        "eval_steps": eval_steps,
        "num_generations": 8,
        "max_completion_length": 256,
        "beta": beta,
        "loss_type": "dapo",
        "epsilon": 0.2,
        "scale_rewards": "group",
        "use_vllm": False,
        "vllm_importance_sampling_correction": True,
        "entropy_coef": 0.0,
        "use_adaptive_entropy": False,
        **fields,
    }


def _other_config(trainer: str, *, logging_steps: int, eval_steps: int | None) -> dict[str, Any]:
    """An ``RLOOConfig``, ``DPOConfig``, ``KTOConfig`` or ``OnlineDPOConfig`` ``to_dict()``."""
    own: dict[str, dict[str, Any]] = {
        # RLOOConfig has no loss_type, entropy_coef or vllm_importance_sampling_correction.
        "rloo": {"num_generations": 4, "beta": 0.05, "epsilon": 0.2, "use_vllm": False},
        "dpo": {"beta": 0.1, "loss_type": ["sigmoid"], "max_length": 1024},
        "kto": {"beta": 0.1, "loss_type": "kto", "desirable_weight": 1.0},
        "online_dpo": {"beta": [0.1], "loss_type": "sigmoid", "use_vllm": False},
    }
    return {
        "output_dir": f"Qwen2-0.5B-{trainer.upper()}",
        **_TRAINER_ARGS,
        "max_grad_norm": 1.0,
        "logging_steps": logging_steps,
        "eval_strategy": "no" if eval_steps is None else "steps",
        "eval_steps": eval_steps,
        **own[trainer],
    }


RUNS: tuple[RunSpec, ...] = (
    RunSpec(
        "grpo_two_rewards",
        _config(beta=0.0, logging_steps=1),
        max_steps=12,
        reward_funcs=("accuracy_reward", "format_reward"),
        seed=1,
        unscored=frozenset({("format_reward", 5), ("format_reward", 6)}),
    ),
    RunSpec(
        "grpo_kl_eval",
        _config(beta=0.04, logging_steps=2, eval_steps=4),
        max_steps=12,
        reward_funcs=("Qwen2.5-0.5B-Reward",),
        eval_datasets=("",),
        seed=2,
    ),
    RunSpec(
        "grpo_eval_sets_no_clip",
        _config(beta=0.04, logging_steps=1, eval_steps=5, max_grad_norm=0.0),
        max_steps=10,
        reward_funcs=("think_format_reward", "accuracy_reward"),
        eval_datasets=("gsm8k", "math_500"),
        seed=3,
    ),
    RunSpec(
        "grpo_checkpoint",
        _config(beta=0.0, logging_steps=2, eval_steps=4),
        max_steps=20,
        reward_funcs=("accuracy_reward",),
        eval_datasets=("",),
        stop_at=8,
        seed=4,
    ),
    RunSpec(
        "grpo_cispo_vllm_entropy",
        _config(
            beta=0.0,
            logging_steps=2,
            eval_steps=4,
            loss_type="cispo",
            use_vllm=True,
            entropy_coef=0.01,
            use_adaptive_entropy=True,
        ),
        max_steps=8,
        reward_funcs=("accuracy_reward",),
        eval_datasets=("",),
        seed=5,
    ),
    RunSpec(
        "rloo_kl",
        _other_config("rloo", logging_steps=2, eval_steps=None),
        max_steps=8,
        reward_funcs=("accuracy_reward", "format_reward"),
        seed=6,
        trainer="rloo",
    ),
    RunSpec(
        "dpo_eval",
        _other_config("dpo", logging_steps=2, eval_steps=4),
        max_steps=8,
        eval_datasets=("",),
        seed=7,
        trainer="dpo",
    ),
    RunSpec(
        "kto_eval",
        _other_config("kto", logging_steps=2, eval_steps=4),
        max_steps=8,
        eval_datasets=("",),
        seed=8,
        trainer="kto",
    ),
    RunSpec(
        "online_dpo_reward_funcs",
        _other_config("online_dpo", logging_steps=1, eval_steps=None),
        max_steps=6,
        reward_funcs=("Skywork-Reward-V2-Qwen3-0.6B",),
        seed=9,
        trainer="online_dpo",
    ),
)
"""The runs the example writes and its tests check."""


def _group_metrics(rng: random.Random, spec: RunSpec, tokens: int, step: int) -> Logs:
    """``GRPOTrainer``'s (or ``RLOOTrainer``'s) ``self._metrics[mode]`` over one window.

    ``step`` is the logging step, negative in an evaluation (``step_time`` is training's).
    """
    config = spec.config
    lengths = sorted(rng.uniform(20, 256) for _ in range(3))
    terminated = sorted(rng.uniform(20, 250) for _ in range(3))
    metrics: Logs = {"step_time": rng.uniform(5, 40)} if step > 0 else {}
    metrics |= {
        "num_tokens": float(tokens),
        "completions/mean_length": lengths[1],
        "completions/min_length": lengths[0],
        "completions/max_length": lengths[2],
        "completions/clipped_ratio": rng.uniform(0, 0.3),
        "completions/mean_terminated_length": terminated[1],
        "completions/min_terminated_length": terminated[0],
        "completions/max_terminated_length": terminated[2],
    }
    total = 0.0
    for name in spec.reward_funcs:
        if (name, step) in spec.unscored:
            # The function returned None for every sample of the window: TRL's log()
            # averages no value and logs None for its mean and std.
            metrics[f"rewards/{name}/mean"] = None
            metrics[f"rewards/{name}/std"] = None
            continue
        mean = rng.uniform(0, 1)
        metrics[f"rewards/{name}/mean"] = mean
        metrics[f"rewards/{name}/std"] = rng.uniform(0, 0.5)
        total += mean
    metrics |= {
        "reward": total,
        "reward_std": rng.uniform(0, 0.5),
        "frac_reward_zero_std": rng.choice([0.0, 0.125, 0.25, 0.5]),
    }
    if config.get("use_vllm") and config.get("vllm_importance_sampling_correction"):
        ratios = sorted(rng.uniform(0.8, 1.2) for _ in range(3))
        metrics |= {
            "sampling/sampling_logp_difference/mean": rng.uniform(0, 0.01),
            "sampling/sampling_logp_difference/max": rng.uniform(0.01, 0.3),
            "sampling/importance_sampling_ratio/min": ratios[0],
            "sampling/importance_sampling_ratio/mean": ratios[1],
            "sampling/importance_sampling_ratio/max": ratios[2],
        }
    if config.get("entropy_coef") or config.get("use_adaptive_entropy"):
        metrics["policy_loss"] = rng.uniform(-0.05, 0.05)
        if step > 0:
            metrics["entropy_coef"] = config["entropy_coef"] + 0.001 * rng.randint(0, 3)
    if config["beta"] != 0.0:
        metrics["kl"] = rng.uniform(0, 0.02)
    metrics["entropy"] = rng.uniform(0.2, 1.2)
    # RLOO clips always; GRPO with a clipped loss_type, CISPO and VESPO log their own.
    loss_type = config.get("loss_type", "rloo")
    if loss_type == "cispo":
        metrics["cispo_clip_ratio"] = rng.uniform(0, 0.01)
    elif loss_type == "vespo":
        metrics["vespo/phi_seq_mean"] = rng.uniform(0.5, 1.0)
    else:
        low, high = rng.uniform(0, 0.01), rng.uniform(0, 0.01)
        metrics |= {
            "clip_ratio/low_mean": low,
            "clip_ratio/low_min": low * 0.5,
            "clip_ratio/high_mean": high,
            "clip_ratio/high_max": high * 1.5,
            "clip_ratio/region_mean": low + high,
        }
    return metrics


def _preference_metrics(rng: random.Random, spec: RunSpec, tokens: int, step: int) -> Logs:
    """``DPOTrainer``'s or ``KTOTrainer``'s ``self._metrics[mode]`` over one window."""
    chosen, rejected = rng.uniform(-0.5, 1.0), rng.uniform(-1.0, 0.5)
    metrics: Logs = {}
    if spec.trainer == "kto":
        metrics["kl"] = rng.uniform(0, 0.5)  # KTO's batch KL estimate, logged first
    metrics |= {"entropy": rng.uniform(0.5, 2.0), "num_tokens": float(tokens)}
    metrics |= {"logits/chosen": rng.uniform(-3, 1), "logits/rejected": rng.uniform(-3, 1)}
    if spec.trainer == "dpo":
        metrics |= {
            "mean_token_accuracy": rng.uniform(0.4, 0.7),
            "rewards/chosen": chosen,
            "rewards/rejected": rejected,
            "rewards/accuracies": rng.uniform(0.5, 1.0),
            "rewards/margins": chosen - rejected,
            "logps/chosen": rng.uniform(-2.0, -0.5),
            "logps/rejected": rng.uniform(-2.5, -0.5),
        }
    else:  # KTO's order: each kind's reward and log-probability, then the margin
        metrics |= {
            "rewards/chosen": chosen,
            "logps/chosen": rng.uniform(-2.0, -0.5),
            "rewards/rejected": rejected,
            "logps/rejected": rng.uniform(-2.5, -0.5),
            "rewards/margins": chosen - rejected,
        }
    return metrics


def _online_dpo_stats(rng: random.Random, spec: RunSpec) -> Logs:
    """``OnlineDPOTrainer``'s ``self.stats`` averaged over one window (training only)."""
    chosen, rejected = rng.uniform(0, 1.0), rng.uniform(-1.0, 0.5)
    kl = rng.uniform(0, 20)
    beta = spec.config["beta"][0]
    return {
        "objective/kl": kl,
        "objective/entropy": rng.uniform(50, 200),
        "objective/non_score_reward": -beta * kl,
        "rewards/chosen": chosen,
        "rewards/rejected": rejected,
        "rewards/accuracies": rng.uniform(0.5, 1.0),
        "rewards/margins": chosen - rejected,
        "logps/chosen": rng.uniform(-120, -40),
        "logps/rejected": rng.uniform(-140, -40),
        "val/contain_eos_token": rng.uniform(0.6, 1.0),
        "beta": beta,
        "objective/rlhf_reward": rng.uniform(-1, 1),
        "objective/scores_margin": rng.uniform(0, 2),
        "objective/scores": rng.uniform(-1, 1),
    }


def _metrics(rng: random.Random, spec: RunSpec, tokens: int, step: int) -> Logs:
    """What the run's trainer adds to a log (``step`` negative in an evaluation)."""
    if spec.trainer in {"grpo", "rloo"}:
        return _group_metrics(rng, spec, tokens, step)
    if spec.trainer in {"dpo", "kto"}:
        return _preference_metrics(rng, spec, tokens, step)
    return {}


def run_logs(spec: RunSpec) -> list[tuple[int, Logs]]:
    """Every ``logs`` dict ``Trainer.log`` gets in the run, with the global step, in order.

    The dicts are what ``on_log`` receives (``epoch`` included, ``step`` not);
    ``state.log_history`` holds each with its ``step`` added.
    """
    rng = random.Random(spec.seed)
    config = spec.config
    steps_per_epoch = spec.train_samples // config["per_device_train_batch_size"]
    last = spec.stop_at or spec.max_steps
    tokens = 0
    losses: list[float] = []
    logged: list[tuple[int, Logs]] = []
    for step in range(1, last + 1):
        tokens += rng.randint(9_000, 15_000)
        losses.append(rng.uniform(-0.05, 0.05))
        epoch = step / steps_per_epoch
        if step % config["logging_steps"] == 0:
            window = losses[-config["logging_steps"] :]
            # transformers 5 logs the gradient norm at every step: clipped when
            # max_grad_norm > 0, else computed unclipped (Trainer._get_grad_norm).
            logs: Logs = {"loss": sum(window) / len(window), "grad_norm": rng.uniform(0.05, 2.0)}
            logs["learning_rate"] = config["learning_rate"] * (1 - (step - 1) / spec.max_steps)
            if spec.trainer == "online_dpo":
                # Its own _maybe_log_save_evaluate: the loss rounded to 4 places, then stats.
                logs["loss"] = round(float(logs["loss"] or 0.0), 4)
                logs |= _online_dpo_stats(rng, spec)
            else:
                logs |= _metrics(rng, spec, tokens, step)
            logs["epoch"] = epoch
            logged.append((step, logs))
        eval_steps = config["eval_steps"]
        if config["eval_strategy"] == "steps" and eval_steps and step % eval_steps == 0:
            for name in spec.eval_datasets:
                key = f"eval_{name}_" if name else "eval_"
                runtime = rng.uniform(20, 60)
                logs = {
                    f"{key}loss": rng.uniform(-0.05, 0.05),
                    f"{key}runtime": round(runtime, 4),
                    f"{key}samples_per_second": round(64 / runtime, 3),
                    f"{key}steps_per_second": round(8 / runtime, 3),
                }
                # TRL's log() prefixes its own metrics with "eval_" whatever the set.
                metrics = _metrics(rng, spec, tokens, -step)
                logs |= {f"eval_{metric}": value for metric, value in metrics.items()}
                logs["epoch"] = epoch
                logged.append((step, logs))
    if spec.stop_at is None:
        runtime = rng.uniform(600, 1800)
        logged.append(
            (
                last,
                {
                    "train_runtime": round(runtime, 4),
                    "train_samples_per_second": round(last * 8 / runtime, 3),
                    "train_steps_per_second": round(last / runtime, 3),
                    "total_flos": 0.0,
                    "train_loss": sum(losses) / len(losses),
                    "epoch": last / steps_per_epoch,
                },
            )
        )
    return logged


def trainer_state(spec: RunSpec) -> dict[str, Any]:
    """The run's ``TrainerState`` as ``dataclasses.asdict`` gives it (transformers 5)."""
    config = spec.config
    steps_per_epoch = spec.train_samples // config["per_device_train_batch_size"]
    last = spec.stop_at or spec.max_steps
    return {
        "best_global_step": None,
        "best_metric": None,
        "best_model_checkpoint": None,
        "epoch": last / steps_per_epoch,
        "eval_steps": config["eval_steps"] or 500,
        "global_step": last,
        "is_hyper_param_search": False,
        "is_local_process_zero": True,
        "is_world_process_zero": True,
        "log_history": [{**logs, "step": step} for step, logs in run_logs(spec)],
        "logging_steps": config["logging_steps"],
        "max_steps": spec.max_steps,
        "num_input_tokens_seen": 0,
        "num_train_epochs": 1,
        "save_steps": spec.stop_at or 500,
        "stateful_callbacks": {
            "TrainerControl": {
                "args": {
                    "should_epoch_stop": False,
                    "should_evaluate": False,
                    "should_log": False,
                    "should_save": True,
                    "should_training_stop": spec.stop_at is None,
                },
                "attributes": {},
            }
        },
        "total_flos": 0.0,
        "train_batch_size": config["per_device_train_batch_size"],
        "trial_name": None,
        "trial_params": None,
    }


def write_trainer_state(spec: RunSpec, folder: Path) -> Path:
    """Write the run's ``trainer_state.json`` as ``TrainerState.save_to_json`` does; its path.

    A finished run's state goes in ``folder`` (``trainer.save_state()``); a run that
    stops early leaves it in its last checkpoint, ``folder/checkpoint-N/``.
    """
    if spec.stop_at is not None:
        folder = folder / f"checkpoint-{spec.stop_at}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "trainer_state.json"
    text = json.dumps(trainer_state(spec), indent=2, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


class CallbackDispatch:
    """The part of transformers' ``CallbackHandler`` a log goes through: ``on_log`` to each.

    ``CallbackHandler.on_log(args, state, control, logs)`` calls every callback's
    ``on_log(args, state, control, model=..., ..., logs=logs)``; the tests use the
    real handler when transformers is installed.
    """

    def __init__(self, callbacks: Sequence[Any]) -> None:
        """Dispatch to ``callbacks`` in order."""
        self.callbacks = list(callbacks)
        """The callbacks, in the order the Trainer added them."""

    def on_log(self, args: Any, state: Any, control: Any, logs: Logs) -> Any:
        """Hand ``logs`` to each callback's ``on_log``; return ``control``."""
        for callback in self.callbacks:
            callback.on_log(args, state, control, model=None, logs=logs)
        return control


def write_callback_log(
    spec: RunSpec,
    path: Path,
    dispatch: Callable[[Sequence[Any]], Any] = CallbackDispatch,
    *,
    state: Any = None,
    args: Any = None,
    control: Any = None,
) -> list[tuple[int, Logs]]:
    """Log the run through ``TrainerCallbackTee(logger=JsonlLogger(path, config=...))``.

    Each dict goes where ``Trainer.log`` sends it: ``state.log_history`` (with its
    step) and every callback's ``on_log``. ``dispatch`` builds the callback handler
    (transformers' ``CallbackHandler`` in the tests); ``state``, ``args`` and
    ``control`` default to stand-ins with the fields a callback reads.
    """
    state = state if state is not None else SimpleNamespace(global_step=0, log_history=[])
    args = args if args is not None else SimpleNamespace(**spec.config)
    control = control if control is not None else SimpleNamespace(should_log=False)
    logged = run_logs(spec)
    with JsonlLogger(path, config=dict(spec.config)) as writer:
        handler = dispatch([TrainerCallbackTee(logger=writer)])
        for step, logs in logged:
            state.global_step = step
            state.log_history.append({**logs, "step": step})
            handler.on_log(args, state, control, dict(logs))
    return logged


def main(argv: list[str] | None = None) -> int:
    """Write every run of :data:`RUNS` into a folder (default ``runs``): both formats.

    ``runs/<name>/trainer_state.json`` (or ``checkpoint-N/``) and ``runs/<name>.jsonl``.
    Imports the generated modules first, so the tee and the split know the rows.
    """
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "runs")
    generated = importlib.import_module("trl_metrics.telemetry.generated")
    for module in pkgutil.iter_modules(generated.__path__):
        importlib.import_module(f"{generated.__name__}.{module.name}")
    for spec in RUNS:
        print(write_trainer_state(spec, folder / spec.name))
        write_callback_log(spec, folder / f"{spec.name}.jsonl")
        print(folder / f"{spec.name}.jsonl")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
