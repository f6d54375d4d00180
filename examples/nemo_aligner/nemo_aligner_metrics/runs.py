"""NeMo-Aligner-shaped runs: what its PPO actor and critic server log, as they log it.

A NeMo-Aligner PPO job is two processes, each with its own exp_manager loggers: the
actor (``train_gpt_ppo_actor.py``, ``PPOTrainer.fit``) and the critic server
(``serve_ppo_critic.py``, ``CriticServerTrainer.run_training``). Both log through
``CustomLoggerWrapper.log_metrics(metrics, step, prefix)``, which joins
``f"{prefix}{key}"`` (the trainers pass ``prefix="train_rollouts/"``) and hands the flat
dict to every Lightning logger's ``log_metrics(metrics, step)``; both first call
``log_hyperparams`` with the whole Hydra configuration.

:func:`play_actor` and :func:`play_critic` make those calls in the order the trainers
make them (see README.md for the source of every key): per PPO step the rollout
metrics (``critic_warmup_steps`` times at step 0), one ``train_optim/`` call per actor
optimizer step (several at the same step), the step's timers, then the validation
rollouts at the incremented step when ``check_progress`` says so. The critic logs one
``train/`` call per global batch of every rollout batch the actor sends.

The loggers are stand-ins for the ones exp_manager creates, each writing the real
format: :class:`JsonlLogger` (this project's, opened with the configuration),
:class:`TensorBoardLogger` (Lightning's, on tensorboardX: ``add_scalar`` per key, the
``hp_metric`` of ``log_hyperparams`` and the hparams summaries, ``hparams.yaml`` at
``finalize``) and :class:`MLFlowLogger` (Lightning's, on MLflow's client: the flattened
configuration as params, ``log_batch`` of the metrics). The wrapper is teed with
:class:`~metric_catalog.loggers.TeeLogger`, so every key reaches the tee as well.

Values are random but shaped like real ones (seeded, so a run is reproducible).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import random
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metric_catalog.loggers import JsonlLogger, TeeLogger

__all__ = [
    "RUNS",
    "Capture",
    "CustomLoggerWrapper",
    "Logged",
    "MLFlowLogger",
    "RunSpec",
    "TensorBoardLogger",
    "actor_config",
    "critic_config",
    "flatten",
    "main",
    "play",
    "play_actor",
    "play_critic",
    "write_mlflow",
    "write_run",
    "write_tensorboard",
]

Logged = list[tuple[int, dict[str, Any]]]
"""Every ``(step, flat dict)`` the Lightning loggers received, in order."""


def actor_config(**ppo: Any) -> dict[str, Any]:
    """The actor's configuration (``gpt_ppo_actor.yaml``'s shape), ``trainer.ppo`` overridden."""
    trainer_ppo: dict[str, Any] = {
        "max_steps": -1,
        "val_check_interval": 10,
        "save_interval": 10,
        "gradient_clip_val": 1.0,
        "initial_policy_kl_penalty": 0.01,
        "use_absolute_kl": True,
        "discount_factor": 1.0,
        "gae_lambda": 0.95,
        "normalize_advantages": True,
        "critic_warmup_steps": 1,
        "max_epochs": 1,
        "rollout_batch_seq_length": None,
    }
    trainer_ppo.update(ppo)
    return {
        "trainer": {"num_nodes": 1, "devices": 8, "precision": "bf16", "ppo": trainer_ppo},
        "model": {
            "ppo": {
                "rollout_micro_batch_size": 8,
                "num_rollout_samples": 64,
                "num_val_samples": 32,
                "entropy_bonus": 0.0,
                "ratio_eps": 0.2,
            },
            "micro_batch_size": 1,
            "global_batch_size": 16,
            "optim": {"name": "distributed_fused_adam", "lr": 9e-7},
        },
        "exp_manager": {"name": "megatron_gpt_ppo_actor", "create_wandb_logger": False},
    }


def critic_config(**ppo: Any) -> dict[str, Any]:
    """The critic server's configuration (``gpt_ppo_critic.yaml``'s shape)."""
    trainer_ppo: dict[str, Any] = {
        "port": 5556,
        "gradient_clip_val": 1.0,
        "combine_rm_and_critic_server": True,
    }
    trainer_ppo.update(ppo)
    return {
        "trainer": {"num_nodes": 1, "devices": 8, "precision": "bf16", "ppo": trainer_ppo},
        "model": {
            "micro_batch_size": 1,
            "global_batch_size": 32,
            "loss_clip_val": 0.2,
            "optim": {"name": "distributed_fused_adam", "lr": 9e-6},
        },
        "exp_manager": {"name": "megatron_gpt_critic", "create_wandb_logger": False},
    }


@dataclass(frozen=True)
class RunSpec:
    """One run: its name, which process logs it, its configuration and its PPO steps."""

    name: str
    process: str
    """``actor`` or ``critic``."""
    config: dict[str, Any]
    steps: int
    """PPO steps the actor took (the critic trains once per rollout batch of each)."""
    warmup: int = 1
    """The actor's ``critic_warmup_steps`` (rollouts at step 0), for the critic's runs."""


RUNS: tuple[RunSpec, ...] = (
    # KL penalty on (init_logprobs timed), gradient clipping (grad_norm), two critic
    # warm-up rollouts at step 0, validation every 2 steps and at the last one.
    RunSpec(
        "ppo_kl_clipped",
        "actor",
        actor_config(val_check_interval=2, save_interval=2, critic_warmup_steps=2),
        steps=5,
    ),
    # No KL penalty (init_policy_kl logged as 0, no init_logprobs timer), no clipping (no
    # grad_norm), an entropy bonus; validation due every 10 steps, run only at the last
    # step (4), before its first due step.
    RunSpec(
        "ppo_no_kl_unclipped",
        "actor",
        actor_config(
            initial_policy_kl_penalty=0.0,
            gradient_clip_val=0.0,
            val_check_interval=10,
            save_interval=10,
        ),
        steps=4,
    ),
    # The critic server of the first run's job: two batches per rollout batch, clipped.
    RunSpec("critic_server", "critic", critic_config(), steps=5, warmup=2),
)


def flatten(config: Mapping[str, Any], parent: str = "") -> dict[str, Any]:
    """Lightning's ``_flatten_dict`` with its ``/`` delimiter: ``trainer/ppo/gae_lambda``."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{parent}/{key}" if parent else str(key)
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, name))
        else:
            flat[name] = value
    return flat


class CustomLoggerWrapper:
    """NeMo-Aligner's ``train_script_utils.CustomLoggerWrapper``: one call, every logger."""

    def __init__(self, loggers: list[Any]) -> None:
        self.loggers = loggers

    def _apply(self, name: str, *args: Any, **kwargs: Any) -> None:
        for logger in self.loggers:
            if hasattr(logger, name):
                getattr(logger, name)(*args, **kwargs)

    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        """``log_hyperparams`` on every logger that has it."""
        self._apply("log_hyperparams", params)

    def log_table(self, *args: Any, **kwargs: Any) -> None:
        """Only W&B's logger has ``log_table``; the others skip the call."""
        self._apply("log_table", *args, **kwargs)

    def log_metrics(
        self, metrics: Mapping[str, Any], step: int | None = None, prefix: str = ""
    ) -> None:
        """The prefix joined to each key as written, then every logger's ``log_metrics``."""
        joined = {f"{prefix}{key}": value for key, value in metrics.items()}
        self._apply("log_metrics", joined, step)

    def finalize(self) -> None:
        """``finalize("success")`` on every logger."""
        self._apply("finalize", "success")


class Capture:
    """A logger keeping what it is handed, for the tests' expectations."""

    def __init__(self) -> None:
        self.logged: Logged = []

    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Keep a copy of the call."""
        self.logged.append((step or 0, dict(metrics)))


class TensorBoardLogger:
    """Lightning's ``TensorBoardLogger`` as exp_manager creates it, on tensorboardX.

    ``log_metrics`` writes ``add_scalar(key, value, step)`` per key; ``log_hyperparams``
    logs ``hp_metric = -1`` at step 0 (``default_hp_metric``) and the hparams plugin's
    summaries; ``finalize`` closes the writer and saves ``hparams.yaml`` beside the
    event file.
    """

    def __init__(self, log_dir: Path) -> None:
        from tensorboardX import SummaryWriter  # noqa: PLC0415 - optional, only for this format

        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir = log_dir
        self.hparams: dict[str, Any] = {}
        self.experiment = SummaryWriter(logdir=str(log_dir))

    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        """Keep the configuration for ``hparams.yaml``; log ``hp_metric`` and the summaries."""
        from tensorboardX.summary import hparams  # noqa: PLC0415

        self.hparams.update(params)
        flat = {
            key: value if isinstance(value, (bool, int, float, str)) else str(value)
            for key, value in flatten(params).items()
        }
        metrics = {"hp_metric": -1}
        self.log_metrics(metrics, 0)
        writer = self.experiment._get_file_writer()
        for summary in hparams(flat, metrics):
            writer.add_summary(summary)

    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """``add_scalar`` per key."""
        for key, value in metrics.items():
            self.experiment.add_scalar(key, value, step)

    def finalize(self, status: str) -> None:
        """Flush and close the writer, then save ``hparams.yaml``."""
        del status
        import yaml  # noqa: PLC0415

        self.experiment.flush()
        self.experiment.close()
        text = yaml.safe_dump(self.hparams, sort_keys=False)
        (self.log_dir / "hparams.yaml").write_text(text, encoding="utf-8")


_MLFLOW_KEY = re.compile(r"[^a-zA-Z0-9_/. -]+")


class MLFlowLogger:
    """Lightning's ``MLFlowLogger`` on MLflow's client, as exp_manager's ``create_mlflow_logger``.

    ``log_hyperparams`` logs the configuration flattened with ``/`` as params (values of
    over 250 characters dropped, 100 a batch); ``log_metrics`` drops string values,
    removes characters outside ``[a-zA-Z0-9_/. -]`` from keys, and logs one ``log_batch``
    of ``Metric(key, value, timestamp, step)`` a call.
    """

    def __init__(self, tracking_uri: str, experiment: str, run_name: str) -> None:
        from mlflow.tracking import MlflowClient  # noqa: PLC0415 - optional, only for this format

        self.client = MlflowClient(tracking_uri=tracking_uri)
        found = self.client.get_experiment_by_name(experiment)
        experiment_id = (
            found.experiment_id if found is not None else self.client.create_experiment(experiment)
        )
        run = self.client.create_run(experiment_id, run_name=run_name)
        self.run_id: str = run.info.run_id

    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        """The flattened configuration as params, 100 a batch."""
        from mlflow.entities import Param  # noqa: PLC0415

        found = [Param(k, str(v)) for k, v in flatten(params).items() if len(str(v)) <= 250]
        for start in range(0, len(found), 100):
            self.client.log_batch(self.run_id, params=found[start : start + 100])

    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """One ``log_batch`` of the call's numeric values."""
        from mlflow.entities import Metric  # noqa: PLC0415

        stamp = int(time.time() * 1000)
        batch = [
            Metric(_MLFLOW_KEY.sub("", key), float(value), stamp, step or 0)
            for key, value in metrics.items()
            if not isinstance(value, str)
        ]
        self.client.log_batch(self.run_id, metrics=batch)

    def finalize(self, status: str) -> None:
        """End the run: ``FINISHED`` for ``success``."""
        self.client.set_terminated(self.run_id, "FINISHED" if status == "success" else "FAILED")


def _rollout(rng: random.Random, consumed: int, kl: bool) -> dict[str, Any]:
    """``compute_rollout_metrics`` | ``generate_ppo_data``'s metrics, consumed as a total."""
    prompt = rng.uniform(80, 200)
    generated = rng.uniform(60, 400)
    rewards = rng.uniform(-1.5, 2.5)
    init_kl = rng.uniform(0.0, 0.05) if kl else 0.0
    return {
        "consumed_samples": consumed,
        "response_lengths": prompt + generated,
        "prompt_lengths": prompt,
        "generation_length": generated,
        "rewards": rewards,
        "init_policy_kl": init_kl,
        "rewards_with_kl": rewards - 0.01 * init_kl * generated,
        "advantages_mean": rng.uniform(-0.2, 0.2),
        "advantages_std": rng.uniform(0.5, 1.5),
        "returns_mean": rng.uniform(-1.0, 2.0),
        "returns_std": rng.uniform(0.3, 1.2),
        "values_mean": rng.uniform(-1.0, 2.0),
        "values_std": rng.uniform(0.3, 1.2),
    }


def _optim(rng: random.Random, ppo: Mapping[str, Any], entropy: float, k: int) -> dict[str, Any]:
    """``run_training``'s dict: the actor's metrics, grad_norm, lr, loss, optim_step, time."""
    loss = rng.uniform(-0.1, 0.1)
    metrics: dict[str, Any] = {
        "loss": loss,
        "ppo_ratio": rng.uniform(0.97, 1.03),
        "ppo_ratio_clamped": rng.uniform(0.98, 1.02),
        "scaled_entropy": rng.uniform(0.5, 2.0) * entropy,
    }
    clip = ppo.get("gradient_clip_val")
    if clip is not None and float(clip) > 0:
        metrics["grad_norm"] = rng.uniform(0.1, 3.0)
    metrics.update({"lr": 9e-7 * min(1.0, (k + 1) / 10), "loss": loss, "optim_step": k})
    metrics["train_step_time"] = rng.uniform(2.0, 6.0)
    return metrics


def _timers(rng: random.Random, kl: bool) -> dict[str, float]:
    """The step's SyncTimer sections, in the order ``fit`` gathers them."""
    timing = {"rollout_time": rng.uniform(40, 90)}
    timing["prepare_for_inference"] = rng.uniform(1, 4)
    timing["finish_inference"] = rng.uniform(1, 4)
    timing["batch_iterator_init"] = rng.uniform(0.01, 0.2)
    timing["generate"] = rng.uniform(30, 70)
    timing["logprobs"] = rng.uniform(2, 8)
    if kl:
        timing["init_logprobs"] = rng.uniform(2, 8)
    timing["critic_wait"] = rng.uniform(0.1, 5)
    timing["train_time"] = rng.uniform(20, 60)
    return timing


def play_actor(spec: RunSpec, logger: Any) -> None:
    """``PPOTrainer.fit``'s calls on ``logger`` (a ``CustomLoggerWrapper``, maybe teed)."""
    rng = random.Random(spec.name)
    config = spec.config
    ppo, model = config["trainer"]["ppo"], config["model"]
    kl = float(ppo["initial_policy_kl_penalty"]) > 0
    samples = int(model["ppo"]["num_rollout_samples"])
    optim_steps = samples // int(model["global_batch_size"])
    interval = int(ppo["val_check_interval"])
    entropy = float(model["ppo"]["entropy_bonus"])
    # max_steps -1 runs the whole dataset (here: spec.steps); a larger one, a job stopped early.
    last = int(ppo["max_steps"]) if int(ppo["max_steps"]) >= 0 else spec.steps
    logger.log_hyperparams(config)
    consumed, optimized, step = 0, 0, 0
    while step < spec.steps:
        for _ in range(int(ppo["critic_warmup_steps"]) if step == 0 else 1):
            consumed += samples
            metrics = _rollout(rng, consumed, kl)
            metrics["epoch"] = 1
            logger.log_metrics(metrics, step=step, prefix="train_rollouts/")
            logger.log_table(key="table/train_rollouts", dataframe=None, step=step)
        for _ in range(optim_steps):
            optim = _optim(rng, ppo, entropy, optimized)
            logger.log_metrics(optim, step=step, prefix="train_optim/")
            optimized += 1
        logger.log_metrics(_timers(rng, kl), step=step, prefix="timers/")
        step += 1
        if interval > 0 and (step % interval == 0 or step == last):
            validation = _rollout(rng, int(model["ppo"]["num_val_samples"]), False)
            shown = ("consumed_samples", "response_lengths", "prompt_lengths", "generation_length")
            metrics = {key: validation[key] for key in shown}
            metrics["rewards"] = validation["rewards"]
            logger.log_metrics(metrics, step=step, prefix="val_rollouts/")
            logger.log_table("table/val_rollouts", dataframe=None, step=step)
    logger.finalize()


def play_critic(spec: RunSpec, logger: Any) -> None:
    """``CriticServerTrainer.run_training``'s calls for each rollout batch the actor sends.

    The server runs until the job is stopped: ``finalize`` is never called.
    """
    rng = random.Random(spec.name)
    config = spec.config
    ppo = config["trainer"]["ppo"]
    batches = 64 // int(config["model"]["global_batch_size"])
    logger.log_hyperparams(config)
    step = 0
    for _rollout_batch in range(spec.warmup + spec.steps - 1):
        for _ in range(batches):
            loss = rng.uniform(0.05, 0.8)
            metrics: dict[str, Any] = {"loss": loss}
            metrics["step_time"] = rng.uniform(1.0, 4.0)
            clip = ppo.get("gradient_clip_val")
            if clip is not None and float(clip) > 0:
                metrics["grad_norm"] = rng.uniform(0.5, 8.0)
            metrics.update({"lr": 9e-6, "loss": loss})
            logger.log_metrics(metrics, step=step, prefix="train/")
            step += 1


def play(spec: RunSpec, loggers: list[Any]) -> Logged:
    """Play ``spec`` on a teed ``CustomLoggerWrapper`` of ``loggers``; what they received."""
    capture = Capture()
    logger = TeeLogger(CustomLoggerWrapper([*loggers, capture]))
    (play_actor if spec.process == "actor" else play_critic)(spec, logger)
    return capture.logged


def write_run(spec: RunSpec, path: Path) -> Logged:
    """The run in this project's JSONL (a ``JsonlLogger`` among the Lightning loggers)."""
    loop = "ppo_actor" if spec.process == "actor" else "ppo_critic"
    with JsonlLogger(path, config=spec.config, loop=loop) as jsonl:
        return play(spec, [jsonl])


def write_tensorboard(spec: RunSpec, folder: Path) -> Logged:
    """The run as Lightning's TensorBoard logger writes it, under ``folder/<name>/version_0``."""
    tensorboard = TensorBoardLogger(folder / spec.name / "version_0")
    logged = play(spec, [tensorboard])
    if spec.process == "critic":  # never finalized: close the writer, no hparams.yaml
        tensorboard.experiment.close()
    return logged


def write_mlflow(spec: RunSpec, tracking_uri: str) -> tuple[str, Logged]:
    """The run as Lightning's MLflow logger logs it; its run id and what was logged."""
    mlflow = MLFlowLogger(tracking_uri, "nemo_aligner_ppo", spec.name)
    return mlflow.run_id, play(spec, [mlflow])


def _generated_modules() -> list[str]:
    """Import every generated module, so the rows are declared before the first tee."""
    package = importlib.import_module("nemo_aligner_metrics.telemetry.generated")
    names = [info.name for info in pkgutil.iter_modules(package.__path__)]
    for name in names:
        importlib.import_module(f"{package.__name__}.{name}")
    return names


def main(argv: list[str] | None = None) -> int:
    """``python -m nemo_aligner_metrics.runs OUT``: every run as JSONL and TensorBoard files."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "runs")
    if not _generated_modules():
        print("run `metric-catalog generate` first", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for spec in RUNS:
        write_run(spec, out / f"{spec.name}.jsonl")
        write_tensorboard(spec, out / "tensorboard")
        print(f"{spec.name}: {out / spec.name}.jsonl, {out / 'tensorboard' / spec.name}")
    if importlib.util.find_spec("mlflow") is not None:
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3's file store
        root = (out / "mlruns").resolve()
        for spec in RUNS:
            run_id, _ = write_mlflow(spec, root.as_uri())
            print(f"{spec.name}: mlruns run {run_id}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
