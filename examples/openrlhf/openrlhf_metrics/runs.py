"""OpenRLHF-shaped runs: the keys OpenRLHF's Ray PPO trainer logs per step, as it logs them.

Each step's status dict is built the way the trainer assembles it (see README.md for
the source of every key): the critic's ``training_step_critic`` status when a critic
is trained (GAE), the actor's ``training_step`` status once ``global_step >
freezing_actor_steps`` (its own loss keys plus every ``Experience.info`` entry the
experience maker filled), the dynamic-filtering pass rate, and the
``generated_samples`` preview. :class:`WandbLogger` then logs it as OpenRLHF's
``WandbLogger.log_train`` does: the preview as a table of its own, ``None`` values
dropped, every key under ``train/`` plus ``train/global_step``; every
``eval_steps`` steps ``aggregate_eval_metrics``' dict goes through ``log_eval``
under ``eval/`` (plus ``eval/global_step``).

The W&B handle here is :class:`OfflineWandb`, a stand-in whose ``log(data)``
writes each call to a :class:`~metric_catalog.loggers.JsonlLogger` opened with the
run's configuration (OpenRLHF passes ``args.__dict__`` to ``wandb.init``), and the
logger calls it through :func:`~metric_catalog.adapters.tee_wandb_log`, so every
key is teed too. :func:`write_flat_log` writes the same calls as flat per-step
JSONL (``{"step": N, "data": {...}}``, what a W&B history row holds), and
:func:`write_tensorboard` as TensorBoard event files through tensorboardX, as
OpenRLHF's ``TensorboardLogger`` writes them.

Values are random but shaped like real ones (seeded, so a run is reproducible).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import pkgutil
import random
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from metric_catalog.adapters import tee_wandb_log
from metric_catalog.loggers import JsonlLogger

__all__ = [
    "DEFINE_METRIC",
    "RUNS",
    "OfflineWandb",
    "RunSpec",
    "SamplesTable",
    "TensorboardLogger",
    "WandbLogger",
    "eval_metrics",
    "main",
    "status_metrics",
    "write_flat_log",
    "write_run",
    "write_tensorboard",
]


def _config(**overrides: Any) -> dict[str, Any]:
    """The run's arguments that decide what is logged, with OpenRLHF's defaults."""
    config: dict[str, Any] = {
        "advantage_estimator": "gae",
        "n_samples_per_prompt": 1,
        "freezing_actor_steps": -1,
        "use_kl_loss": False,
        "init_kl_coef": 0.01,
        "entropy_loss_coef": None,
        "enable_vllm_is_correction": False,
        "remote_rm_url": None,
        "dynamic_filtering": False,
        "dynamic_filtering_reward_range": [0.0, 1.0],
        "rollout_batch_size": 128,
        "generate_max_len": 1024,
        "eval_steps": -1,
        "eval_dataset": None,
        "eval_n_samples_per_prompt": 1,
        "logging_steps": 1,
        "use_wandb": "offline",
        "use_tensorboard": None,
        "wandb_project": "openrlhf_train_ppo",
    }
    unknown = overrides.keys() - config.keys()
    if unknown:
        msg = f"not an argument the runs model: {sorted(unknown)}"
        raise ValueError(msg)
    return config | overrides


@dataclass(frozen=True)
class RunSpec:
    """One OpenRLHF run: its arguments (the parts that decide what is logged) and length."""

    name: str
    """Short name, also the log's file stem."""
    config: Mapping[str, Any]
    """The run's arguments (``args.__dict__``), only what matters here."""
    steps: int
    """Global steps the run takes."""
    seed: int = 0
    """Seed of the values."""
    datasources: tuple[str, ...] = field(default=())
    """The eval dataset's ``datasource`` values."""
    truncated_flag: bool = False
    """Whether eval samples carry a ``truncated`` flag (else its rates are ``None``, dropped)."""
    extra_logs: tuple[str, ...] = field(default=())
    """Keys of the ``extra_logs`` the run's custom reward function returns beside its
    rewards and scores: ``Experience.info`` entries, so logged as ``train/<key>``."""


RUNS: tuple[RunSpec, ...] = (
    RunSpec(
        "ppo_gae_frozen_actor",
        _config(advantage_estimator="gae", freezing_actor_steps=2),
        steps=8,
        seed=1,
    ),
    RunSpec(
        "grpo_eval",
        _config(
            advantage_estimator="group_norm",
            n_samples_per_prompt=8,
            use_kl_loss=True,
            entropy_loss_coef=0.0,
            remote_rm_url=["http://127.0.0.1:5000/get_reward"],
            eval_steps=4,
            eval_dataset="math500,aime24,gsm8k",
            eval_n_samples_per_prompt=4,
        ),
        steps=10,
        seed=2,
        datasources=("math500", "aime24", "openai/gsm8k"),
    ),
    RunSpec(
        "reinforce_dynamic_filtering",
        _config(
            advantage_estimator="reinforce_baseline",
            n_samples_per_prompt=4,
            enable_vllm_is_correction=True,
            remote_rm_url=["http://127.0.0.1:5000/get_reward"],
            dynamic_filtering=True,
            dynamic_filtering_reward_range=[0.01, 0.99],
            eval_steps=5,
            eval_dataset="math_500",
            eval_n_samples_per_prompt=1,
            use_tensorboard="logs/tensorboard",
        ),
        steps=10,
        seed=3,
        datasources=("math_500",),
        truncated_flag=True,
        # reward_func.py (reward_func.yaml) returns extra_logs={"format_reward", "answer_reward"}.
        extra_logs=("format_reward", "answer_reward"),
    ),
)
"""The runs the example writes and its tests check."""


def status_metrics(rng: random.Random, spec: RunSpec, step: int) -> dict[str, Any]:
    """The status dict ``PPOTrainer.fit`` hands to ``save_logs_and_checkpoints`` at ``step``."""
    config = spec.config
    status: dict[str, Any] = {}
    if config["advantage_estimator"] == "gae":
        status |= {
            "critic_loss": rng.uniform(0.01, 0.5),
            "values": rng.uniform(-1, 1),
            "critic_lr": 9e-6,
        }
    if step > config["freezing_actor_steps"]:
        status |= {"policy_loss": rng.uniform(-0.3, 0.3), "actor_lr": 5e-7}
        if config["entropy_loss_coef"] is not None:
            status["entropy_loss"] = rng.uniform(0.2, 1.5)
        status |= {"ppo_clip_ratio": rng.uniform(0, 0.1), "ppo_kl": rng.uniform(-0.01, 0.01)}
        if config["enable_vllm_is_correction"]:
            status["vllm_kl"] = rng.uniform(0, 0.005)
        # Experience.info, averaged by the actor's training_step.
        response = rng.uniform(100, config["generate_max_len"])
        status |= {
            "response_length": response,
            "total_length": response + rng.uniform(50, 300),
            "response_clip_ratio": rng.uniform(0, 0.1),
            "reward": rng.uniform(0, 1),
        }
        if config["remote_rm_url"] is not None:
            status["score"] = rng.uniform(0, 1)
        for key in spec.extra_logs:  # update_samples_with_rewards: into Experience.info
            status[key] = rng.uniform(0, 1)
        status["kl"] = rng.uniform(0, 0.02)
        status["return"] = rng.uniform(-0.1, 1)
        if config["n_samples_per_prompt"] > 1:
            status["group_reward_std"] = rng.uniform(0, 0.5)
    if config["dynamic_filtering"]:
        status["dynamic_filtering_pass_rate"] = rng.uniform(20, 90)
    status["generated_samples"] = ["Question: 1+1? Answer: 2", rng.uniform(0, 1)]
    return status


def eval_metrics(rng: random.Random, spec: RunSpec) -> dict[str, float | None]:
    """``aggregate_eval_metrics``' dict: overall and per data source (``None`` when unknown)."""
    n = int(spec.config["eval_n_samples_per_prompt"])

    def truncated() -> float | None:
        return rng.uniform(0, 0.1) if spec.truncated_flag else None

    logs: dict[str, float | None] = {
        "reward_mean": rng.uniform(0, 1),
        "reward_max": 1.0,
        "response_length_mean": rng.uniform(200, 900),
        "response_length_max": float(spec.config["generate_max_len"]),
        "truncated_rate": truncated(),
        "num_eval_samples": float(500 * n),
    }
    logs["pass1"] = rng.uniform(0, 1)
    logs[f"pass{n}"] = rng.uniform(0.3, 1) if n > 1 else logs["pass1"]
    for source in spec.datasources:
        logs[f"{source}_reward_mean"] = rng.uniform(0, 1)
        logs[f"{source}_response_length_mean"] = rng.uniform(200, 900)
        logs[f"{source}_truncated_rate"] = truncated()
        logs[f"{source}_pass1"] = rng.uniform(0, 1)
        logs[f"{source}_pass{n}"] = rng.uniform(0.3, 1) if n > 1 else logs[f"{source}_pass1"]
    return logs


class SamplesTable:
    """A stand-in for ``wandb.Table``: a media value, not a number."""

    def __init__(self, columns: list[str], data: list[list[Any]] | None = None) -> None:
        """A table of ``columns`` holding ``data``."""
        self.columns = columns
        """Column names."""
        self.data: list[list[Any]] = [list(row) for row in data or []]
        """Rows so far."""

    def add_data(self, *row: Any) -> None:
        """Append one row."""
        self.data.append(list(row))

    def reference(self, key: str, step: int) -> dict[str, Any]:
        """What a W&B run's history holds for the table: a reference to its media file."""
        name = key.rsplit("/", 1)[-1]
        return {
            "_type": "table-file",
            "path": f"media/table/{key.rsplit('/', 1)[0]}/{name}_{step}.table.json",
            "ncols": len(self.columns),
            "nrows": len(self.data),
        }


class OfflineWandb:
    """A stand-in for the ``wandb`` module in offline mode: ``log(data)`` to a JSONL file.

    OpenRLHF calls ``wandb.log(data)`` without a step: ``define_metric`` makes
    ``train/global_step`` (``eval/global_step``) the x axis. This handle writes each
    call as one record at that step into ``writer`` (flat keys under the empty
    prefix, split by live-check against the catalog), a table as the reference to
    its media file that W&B's history holds; ``on_log`` sees every call.
    """

    Table = SamplesTable

    def __init__(self, writer: JsonlLogger, on_log: Callable[[int, dict[str, Any]], None]) -> None:
        """Write to ``writer``; ``on_log(step, data)`` sees each call too."""
        self.writer = writer
        """Where each call goes."""
        self.on_log = on_log
        """Called with each call's step and data."""
        self.step = 0
        """The step of the last call."""

    def log(self, data: Mapping[str, Any], step: int | None = None) -> None:
        """One ``wandb.log`` call."""
        for key in ("train/global_step", "eval/global_step"):
            if isinstance(data.get(key), int):
                self.step = data[key]
        self.step = self.step if step is None else step
        row = {
            k: v.reference(k, self.step) if isinstance(v, SamplesTable) else v
            for k, v in data.items()
        }
        self.writer.log_metrics(row, self.step, "")
        self.on_log(self.step, dict(data))


DEFINE_METRIC: tuple[tuple[str, str | None], ...] = (
    ("train/global_step", None),
    ("train/*", "train/global_step"),
    ("eval/epoch", None),
    ("eval/*", "eval/epoch"),
)
"""``WandbLogger.__init__``'s ``wandb.define_metric(name, step_metric=...)`` calls
(``step_sync=True`` on the two globs). ``eval/epoch`` is never logged: W&B writes its
default, 0, into each ``eval/*`` record."""


class WandbLogger:
    """OpenRLHF's ``WandbLogger`` (``log_train``/``log_eval``) over a handle, teed."""

    def __init__(self, handle: Any) -> None:
        """Log through ``handle.log``, wrapped by :func:`tee_wandb_log`."""
        self.handle = handle
        """The ``wandb`` module (or a stand-in)."""
        self.log = tee_wandb_log(handle)
        """``wandb.log`` that tees too."""
        self.samples_table = handle.Table(columns=["global_step", "text", "reward"])
        """The generated-samples table, rebuilt at each step as OpenRLHF does."""

    def log_train(self, global_step: int, logs_dict: Mapping[str, Any]) -> None:
        """``train/<key>`` for every non-``None`` value, plus ``train/global_step``."""
        logs = dict(logs_dict)
        samples = logs.pop("generated_samples", None)
        if samples:
            columns, rows = self.samples_table.columns, self.samples_table.data
            table = self.handle.Table(columns=columns, data=rows)
            table.add_data(global_step, *samples)
            self.samples_table = table
            self.log({"train/generated_samples": table})
        metrics = {k: v for k, v in logs.items() if v is not None}
        self.log({f"train/{k}": v for k, v in {**metrics, "global_step": global_step}.items()})

    def log_eval(self, global_step: int, logs_dict: Mapping[str, Any]) -> None:
        """``eval/<key>`` for every non-``None`` value, plus ``eval/global_step``."""
        metrics = {k: v for k, v in logs_dict.items() if v is not None}
        self.log({f"eval/{k}": v for k, v in {**metrics, "global_step": global_step}.items()})


class _Logger(Protocol):
    """What the trainer's loop calls: OpenRLHF's ``log_train`` and ``log_eval``."""

    def log_train(self, global_step: int, logs_dict: Mapping[str, Any]) -> None: ...

    def log_eval(self, global_step: int, logs_dict: Mapping[str, Any]) -> None: ...


def _play(spec: RunSpec, logger: _Logger) -> None:
    """The trainer's loop: a train record every step, an eval record every ``eval_steps``."""
    rng = random.Random(spec.seed)
    eval_steps = int(spec.config["eval_steps"])
    evaluates = eval_steps > 0 and spec.config["eval_dataset"] is not None
    for step in range(1, spec.steps + 1):
        logger.log_train(step, status_metrics(rng, spec, step))
        if evaluates and step % eval_steps == 0:
            logger.log_eval(step, eval_metrics(rng, spec))


Logged = list[tuple[int, dict[str, Any]]]


def write_run(spec: RunSpec, path: Path) -> Logged:
    """Write ``spec``'s run to ``path`` through the teed W&B logger; return each ``log`` call."""
    logged: Logged = []
    with JsonlLogger(path, config=spec.config) as writer:
        handle = OfflineWandb(writer, lambda step, data: logged.append((step, data)))
        _play(spec, WandbLogger(handle))
    return logged


class TensorboardLogger:
    """OpenRLHF's ``TensorboardLogger`` (``log_train``/``log_eval``) over a ``SummaryWriter``."""

    def __init__(self, writer: Any, on_log: Callable[[int, dict[str, Any]], None]) -> None:
        """Write through ``writer``; ``on_log(step, scalars)`` sees the scalars of each call."""
        self.writer = writer
        """A ``SummaryWriter`` (tensorboardX or ``torch.utils.tensorboard``)."""
        self.on_log = on_log
        """Called with each call's step and the scalars it wrote, by tag."""

    def log_train(self, global_step: int, logs_dict: Mapping[str, Any]) -> None:
        """``add_scalar(f"train/{k}", v, global_step)``; the samples preview as text."""
        scalars: dict[str, Any] = {}
        for key, value in logs_dict.items():
            if key == "generated_samples" and value is not None:
                text, reward = value
                self.writer.add_text(
                    "train/generated_samples",
                    f"Sample:\n{text}\n\nReward: {reward:.4f}",
                    global_step,
                )
            elif value is not None:
                self.writer.add_scalar(f"train/{key}", value, global_step)
                scalars[f"train/{key}"] = value
        self.on_log(global_step, scalars)

    def log_eval(self, global_step: int, logs_dict: Mapping[str, Any]) -> None:
        """``add_scalar(f"eval/{k}", v, global_step)`` for every non-``None`` value."""
        scalars = {f"eval/{k}": v for k, v in logs_dict.items() if v is not None}
        for tag, value in scalars.items():
            self.writer.add_scalar(tag, value, global_step)
        self.on_log(global_step, scalars)


def write_tensorboard(spec: RunSpec, folder: Path) -> Logged:
    """Write ``spec``'s run as TensorBoard event files under ``folder`` (tensorboardX).

    OpenRLHF writes to ``<use_tensorboard>/<wandb_run_name>``; the scalars' tags are
    the logged keys (``train/policy_loss``), the event's step the global step. Event
    files carry no configuration, like flat JSONL.
    """
    from tensorboardX import SummaryWriter  # noqa: PLC0415 - optional, only for this format

    logged: Logged = []
    writer = SummaryWriter(logdir=str(folder / spec.name))
    try:
        _play(spec, TensorboardLogger(writer, lambda step, data: logged.append((step, data))))
    finally:
        writer.close()
    return logged


class _FlatWriter:
    """A ``log_metrics`` sink writing ``{"step": N, "data": {...}}`` lines."""

    def __init__(self, out: Any) -> None:
        self.out = out

    def log_metrics(self, metrics: Mapping[str, Any], step: int, prefix: str = "") -> None:
        del prefix
        self.out.write(json.dumps({"step": step, "data": dict(metrics)}) + "\n")


def write_flat_log(spec: RunSpec, path: Path) -> Logged:
    """Write ``spec``'s run as flat per-step JSONL, one ``wandb.log`` call a line (not teed).

    That format carries no configuration: live-check splits each key against the
    catalog and judges rows whose presence depends on the configuration as
    conditional information.
    """
    logged: Logged = []
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        handle = OfflineWandb(_FlatWriter(out), lambda step, data: logged.append((step, data)))  # type: ignore[arg-type]
        logger = WandbLogger(handle)
        logger.log = handle.log
        _play(spec, logger)
    return logged


def main(argv: list[str] | None = None) -> int:
    """Write every run of :data:`RUNS` as ``<name>.jsonl`` into a folder (default ``runs``).

    Also as flat JSONL (``flat/``) and, with tensorboardX installed, as event files
    (``tensorboard/<name>/``).

    Imports the generated modules first, so the tee and the split know the rows.
    """
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "runs")
    generated = importlib.import_module("openrlhf_metrics.telemetry.generated")
    for module in pkgutil.iter_modules(generated.__path__):
        importlib.import_module(f"{generated.__name__}.{module.name}")
    for spec in RUNS:
        write_run(spec, folder / f"{spec.name}.jsonl")
        write_flat_log(spec, folder / "flat" / f"{spec.name}.jsonl")
        if importlib.util.find_spec("tensorboardX") is not None:
            write_tensorboard(spec, folder / "tensorboard")
        print(folder / f"{spec.name}.jsonl")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
