"""torchtitan-shaped runs: the keys torchtitan's trainer logs, written as torchtitan writes them.

Each logged step's dict is built the way ``MetricsProcessor.log`` assembles it
(``torchtitan/components/metrics.py``; see README.md for the source of every key):
the loss, the gradient norm, throughput, TFLOP/s and MFU, the step's wall clock and
data-loading time, the caching allocator's peaks and failure counts, and the trainer's
``extra_metrics`` (``n_tokens_seen``, ``lr``). ``MetricsProcessor.should_log`` logs
step 1 and every ``metrics.log_freq`` steps; with ``validation.enabled`` the validator
calls ``log_validation`` every ``validation.freq`` steps, a second dict of
``validation_metrics/*`` keys at the same step.

torchtitan hands each dict to one backend, ``BaseLogger.log(metrics, step)``
(TensorBoard's ``SummaryWriter.add_scalar(tag, value, step)`` per key, or
``wandb.log(metrics, step=step)``). Here the backend is :class:`JsonlBackend`, a
``BaseLogger`` writing this project's JSONL (the run's configuration in its header),
wrapped in :class:`~metric_catalog.adapters.TrackingTee` so every key is teed too.
:func:`write_flat_log` writes the same runs as one bare JSON object a line
(``{"step": 10, "loss_metrics/global_avg_loss": ...}``), and :func:`write_tensorboard_log`
as TensorBoard event files, one scalar event per key, as torchtitan's
``TensorBoardLogger`` writes them through torch's ``SummaryWriter`` (which keeps
``throughput(tps)`` as given).

Values are random but shaped like a Llama 3 8B run on H100s (seeded, reproducible).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metric_catalog.adapters import TrackingTee
from metric_catalog.loggers import JsonlLogger

__all__ = [
    "RUNS",
    "JsonlBackend",
    "RunSpec",
    "logged_steps",
    "main",
    "run_records",
    "write_flat_log",
    "write_run",
    "write_tensorboard_events",
    "write_tensorboard_log",
]

GIB = 1024**3
DEVICE_CAPACITY_GIB = 79.1  # an H100 80GB as torch reports its total_memory
PEAK_FLOPS = 989e12  # utils.get_peak_flops for an H100 SXM, bf16 dense
FLOPS_PER_TOKEN = 5.2e10  # Llama 3 8B at seq_len 8192: 6 * params + attention


@dataclass(frozen=True)
class RunSpec:
    """One torchtitan run: its configuration (what decides what is logged) and its steps."""

    name: str
    """Short name, also the log's file stem."""
    config: Mapping[str, Any]
    """``JobConfig.to_dict()``, only the parts that matter here."""
    first_step: int = 1
    """First step the run trains (a run resumed from a checkpoint at step N starts at N + 1)."""
    seed: int = 0
    """Seed of the values."""


def _config(
    *, steps: int, log_freq: int, validation: bool = False, validation_freq: int = 10, dp: int = 8
) -> dict[str, Any]:
    return {
        "job": {"description": "Llama 3 8B training", "dump_folder": "./outputs"},
        "metrics": {"log_freq": log_freq, "enable_tensorboard": True, "save_tb_folder": "tb"},
        "model": {"name": "llama3", "flavor": "8B"},
        "optimizer": {"name": "AdamW", "lr": 3e-4},
        "lr_scheduler": {"warmup_steps": 20},
        "training": {"local_batch_size": 1, "seq_len": 8192, "steps": steps},
        "parallelism": {"data_parallel_shard_degree": dp},
        "validation": {"enabled": validation, "freq": validation_freq, "steps": 10},
    }


RUNS: tuple[RunSpec, ...] = (
    RunSpec("llama3_8b_fsdp", _config(steps=50, log_freq=10), seed=1),
    RunSpec(
        "llama3_8b_validation",
        _config(steps=40, log_freq=5, validation=True, validation_freq=20),
        seed=2,
    ),
    # Resumed from the step-30 checkpoint: n_tokens_seen continues from the checkpoint,
    # the allocator's counts start again at 0 in the new process.
    RunSpec("llama3_8b_resumed", _config(steps=60, log_freq=10), first_step=31, seed=3),
)
"""The example runs."""


def logged_steps(spec: RunSpec) -> list[int]:
    """The steps ``MetricsProcessor.should_log`` logs: step 1 and every ``log_freq`` steps."""
    freq = spec.config["metrics"]["log_freq"]
    last = spec.config["training"]["steps"]
    return [s for s in range(spec.first_step, last + 1) if s == 1 or s % freq == 0]


def _memory(rng: random.Random, prefix: str, active: float) -> dict[str, float]:
    reserved = active + rng.uniform(2.0, 6.0)
    return {
        f"{prefix}max_active(GiB)": active,
        f"{prefix}max_active(%)": 100 * active / DEVICE_CAPACITY_GIB,
        f"{prefix}max_reserved(GiB)": reserved,
        f"{prefix}max_reserved(%)": 100 * reserved / DEVICE_CAPACITY_GIB,
    }


def run_records(spec: RunSpec) -> list[tuple[int, dict[str, float]]]:
    """Every ``(step, metrics)`` dict the run hands its backend, in order."""
    rng = random.Random(spec.seed)
    config = spec.config
    training = config["training"]
    tokens_per_step = training["local_batch_size"] * training["seq_len"]
    dp = config["parallelism"]["data_parallel_shard_degree"]
    warmup = config["lr_scheduler"]["warmup_steps"]
    peak_lr = config["optimizer"]["lr"]
    validation = config["validation"]
    retries = 0
    records: list[tuple[int, dict[str, float]]] = []
    for step in logged_steps(spec):
        # Step 1 compiles and warms up; later steps run at the steady rate.
        step_time = rng.uniform(14.0, 18.0) if step == 1 else rng.uniform(1.30, 1.45)
        tps = tokens_per_step / step_time
        loss = 3.2 + 8.5 * 0.93**step + rng.uniform(-0.05, 0.05)
        if rng.random() < 0.2:
            retries += 1
        data_loading = rng.uniform(0.002, 0.008)
        metrics: dict[str, float] = {
            "loss_metrics/global_avg_loss": loss,
            "loss_metrics/global_max_loss": loss + rng.uniform(0.01, 0.3),
            "grad_norm": rng.uniform(0.3, 2.5) if step > 1 else rng.uniform(8.0, 12.0),
            "throughput(tps)": tps,
            "tflops": FLOPS_PER_TOKEN * tps / 1e12,
            "mfu(%)": 100 * FLOPS_PER_TOKEN * tps / PEAK_FLOPS,
            "time_metrics/end_to_end(s)": step_time,
            "time_metrics/data_loading(s)": data_loading,
            "time_metrics/data_loading(%)": 100 * data_loading / step_time,
            **_memory(rng, "memory/", rng.uniform(52.0, 58.0)),
            "memory/num_alloc_retries": retries,
            "memory/num_ooms": 0,
            "n_tokens_seen": step * tokens_per_step * dp,
            "lr": peak_lr * min(1.0, step / warmup),
        }
        records.append((step, metrics))
        if validation["enabled"] and step % validation["freq"] == 0:
            val_time = rng.uniform(20.0, 30.0)
            records.append(
                (
                    step,
                    {
                        "validation_metrics/loss": loss + rng.uniform(0.02, 0.1),
                        "validation_metrics/throughput(tps)": tokens_per_step / val_time,
                        **_memory(rng, "validation_metrics/memory/", rng.uniform(30.0, 34.0)),
                    },
                )
            )
    return records


class JsonlBackend:
    """A torchtitan ``BaseLogger`` writing this project's JSONL: ``log(metrics, step)``.

    Each dict goes to :meth:`JsonlLogger.log_metrics` under the empty prefix, as
    torchtitan's backends receive it: flat keys such as ``memory/max_active(GiB)``,
    which the tee and live-check split at the longest declared prefix.
    """

    def __init__(self, writer: JsonlLogger) -> None:
        """Log to ``writer``."""
        self.writer = writer
        """Where each dict goes."""

    def log(self, metrics: Mapping[str, Any], step: int) -> None:
        """Write ``metrics`` as one record of ``step``."""
        self.writer.log_metrics(dict(metrics), step, "")

    def close(self) -> None:
        """Close the writer."""
        self.writer.close()


def write_run(spec: RunSpec, path: Path) -> list[tuple[int, dict[str, float]]]:
    """Write ``spec``'s run to ``path`` through ``TrackingTee(JsonlBackend(...))``; return it."""
    records = run_records(spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    backend = TrackingTee(JsonlBackend(JsonlLogger(path, config=spec.config)))
    try:
        for step, metrics in records:
            backend.log(metrics, step)
    finally:
        backend.close()
    return records


def write_flat_log(spec: RunSpec, path: Path) -> list[tuple[int, dict[str, float]]]:
    """Write ``spec``'s run as flat JSONL: one bare object a logged dict, its ``step`` inside.

    That format carries no configuration: live-check reads it (its flat per-step
    JSONL input) with every key split against the catalog, and judges rows whose
    presence depends on the configuration as conditional information.
    """
    records = run_records(spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for step, metrics in records:
            out.write(json.dumps({"step": step, **metrics}) + "\n")
    return records


def write_tensorboard_log(spec: RunSpec, logdir: Path) -> list[tuple[int, dict[str, float]]]:
    """Write ``spec``'s run as TensorBoard event files in ``logdir``; return its records."""
    records = run_records(spec)
    write_tensorboard_events(records, logdir)
    return records


def write_tensorboard_events(records: list[tuple[int, dict[str, float]]], logdir: Path) -> None:
    """Write ``records`` as the event file torchtitan's ``TensorBoardLogger`` writes in ``logdir``.

    Its ``log`` calls ``SummaryWriter.add_scalar(tag, value, step)`` for each key, with
    torch's ``SummaryWriter``, which writes the tag as given. This writes the same events
    with tensorboardX's file writer (tensorboardX's own ``add_scalar`` would rewrite ``(``,
    ``)`` and ``%`` to ``_``); it needs tensorboardX.
    """
    from tensorboardX import SummaryWriter  # noqa: PLC0415 - optional, only for this format
    from tensorboardX.proto.summary_pb2 import Summary  # noqa: PLC0415

    writer = SummaryWriter(str(logdir))
    file_writer = writer._get_file_writer()
    try:
        for step, metrics in records:
            for tag, value in metrics.items():
                summary = Summary(value=[Summary.Value(tag=tag, simple_value=float(value))])
                file_writer.add_summary(summary, step)
    finally:
        writer.close()


def main(argv: list[str] | None = None) -> int:
    """Write every run of :data:`RUNS` into a folder (default ``runs``), in each format.

    Imports the generated modules first, so the tee and the split know the rows.
    """
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "runs")
    generated = importlib.import_module("titan_metrics.telemetry.generated")
    for module in pkgutil.iter_modules(generated.__path__):
        importlib.import_module(f"{generated.__name__}.{module.name}")
    for spec in RUNS:
        write_run(spec, folder / f"{spec.name}.jsonl")
        write_flat_log(spec, folder / "flat" / f"{spec.name}.jsonl")
        try:
            write_tensorboard_log(spec, folder / "tensorboard" / spec.name)
        except ImportError:
            print("tensorboardX is not installed: no TensorBoard event files written")
        print(folder / f"{spec.name}.jsonl")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
