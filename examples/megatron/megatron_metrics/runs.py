"""Megatron-LM-shaped runs: the TensorBoard tags ``training_log`` writes, written as it writes them.

Each iteration's ``add_scalar`` calls follow ``training_log``
(``megatron/training/training.py``; see README.md for the source of every tag):
every ``tensorboard_log_interval`` iterations the learning rate, the batch size, each
loss term, the loss scale, the gradient norm (and, with their flags, the zero count,
the parameter norm and the allocator's memory), each tag twice, once at the
iteration and once, ``"<tag> vs samples"``, at the consumed sample count; every
``log_interval`` iterations and at the first, with ``--log-timers-to-tensorboard``,
the iteration time (not at the first), the TFLOP/s per GPU and each step timer
(``Timers.write``, ``<name>-time``), and with ``--log-energy`` the energy and power
per GPU; every ``eval_interval`` iterations ``evaluate_and_print_results``'s validation loss
and perplexity, again twice.

W&B gets its own calls (:func:`wandb_calls`): ``wandb_writer.log({tag: value},
iteration)`` for each tag but the ``vs samples`` copies, the memory tags and the
perplexity, plus ``samples vs steps``.

Megatron-LM hands the tags to a TensorBoard ``SummaryWriter``. Here the writer is
:class:`JsonlSummaryWriter`, whose ``add_scalar(tag, scalar_value, global_step)``
writes one record of this project's JSONL (the run's arguments in its header), made
to tee as well by :func:`~metric_catalog.adapters.tee_summary_writer`.
:func:`write_tensorboard_events` writes the same calls as the event file torch's
``SummaryWriter`` writes (tags kept as given, spaces included).

Values are random but shaped like a GPT pre-training run (seeded, reproducible).
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metric_catalog.adapters import tee_summary_writer
from metric_catalog.loggers import JsonlLogger

__all__ = [
    "RUNS",
    "JsonlSummaryWriter",
    "RunSpec",
    "main",
    "run_calls",
    "run_scalars",
    "wandb_calls",
    "write_run",
    "write_tensorboard_events",
]

LEVEL_2_TIMERS = (
    "batch-generator",
    "forward-compute",
    "backward-compute",
    "forward-recv",
    "forward-send",
    "backward-recv",
    "backward-send",
    "forward-send-forward-recv",
    "forward-send-backward-recv",
    "backward-send-forward-recv",
    "backward-send-backward-recv",
    "forward-backward-send-forward-backward-recv",
)
"""The timers ``--timing-log-level 2`` adds."""

LEVEL_1_TIMERS = (
    "forward-backward",
    "layernorm-grads-all-reduce",
    "embedding-grads-all-reduce",
    "all-grads-sync",
    "params-all-gather",
    "optimizer-copy-to-main-grad",
    "optimizer-unscale-and-check-inf",
    "optimizer-clip-main-grad",
    "optimizer-count-zeros",
    "optimizer-inner-step",
    "optimizer-copy-main-to-model-params",
    "optimizer",
)
"""``training_log``'s timers at ``--timing-log-level 1``."""

Scalar = tuple[str, float, int]
"""One ``add_scalar(tag, value, global_step)`` call."""


@dataclass(frozen=True)
class RunSpec:
    """One Megatron-LM run: its arguments (what decides what is written) and its length."""

    name: str
    """Short name, also the log's file stem."""
    args: Mapping[str, Any]
    """Megatron-LM's parsed arguments, only the ones that matter here."""
    seed: int = 0
    """Seed of the values."""


def _args(
    *, train_iters: int, eval_interval: int, detailed: bool, validation_sets: int = 0
) -> dict[str, Any]:
    return {
        "train_iters": train_iters,
        "global_batch_size": 256,
        "micro_batch_size": 2,
        "data_parallel_size": 8,
        "seq_length": 4096,
        "lr": 3e-4,
        "lr_warmup_iters": 20,
        "bf16": True,
        "log_interval": 10,
        "tensorboard_log_interval": 1,
        "eval_interval": eval_interval,
        # --multiple-validation-sets takes one eval_iters per set.
        "eval_iters": [5] * validation_sets if validation_sets else 10,
        "multiple_validation_sets": bool(validation_sets),
        "timing_log_level": 2 if detailed else 0,
        "log_timers_to_tensorboard": detailed,
        "log_throughput": detailed,
        "log_memory_to_tensorboard": detailed,
        "log_validation_ppl_to_tensorboard": detailed,
        "log_loss_scale_to_tensorboard": True,
        "log_num_zeros_in_grad": False,
        "log_params_norm": detailed,
        "log_world_size_to_tensorboard": detailed,
        "log_max_attention_logit": detailed,
        "log_energy": detailed,
        "perform_rl_step": False,
        "world_size": 64,
        "tensorboard_dir": "tensorboard",
        "wandb_project": "gpt-pretrain" if detailed else "",
    }


RUNS: tuple[RunSpec, ...] = (
    # Every flag on; validation at iterations 50 and 100.
    RunSpec("gpt_detailed", _args(train_iters=100, eval_interval=50, detailed=True), seed=1),
    # The defaults; validation every 1000 iterations, never reached in 60. The sample
    # counts (up to 15,360) pass 1000 long before: only the iterations say it is not due.
    RunSpec("gpt_defaults", _args(train_iters=60, eval_interval=1000, detailed=False), seed=2),
    # Two validation sets: each loss written as "lm loss validation-<index>".
    RunSpec(
        "gpt_multi_validation",
        _args(train_iters=40, eval_interval=20, detailed=False, validation_sets=2),
        seed=3,
    ),
)
"""The example runs."""


def run_scalars(spec: RunSpec) -> list[Scalar]:
    """Every ``add_scalar`` call of the run, in order."""
    return run_calls(spec)[0]


def wandb_calls(spec: RunSpec) -> list[Scalar]:
    """Every ``wandb_writer.log({tag: value}, iteration)`` call of the run, in order.

    ``training_log`` hands W&B the iteration's values without the ``vs samples``
    copies, the memory tags and the perplexity, and adds ``samples vs steps``.
    """
    return run_calls(spec)[1]


def run_calls(spec: RunSpec) -> tuple[list[Scalar], list[Scalar]]:
    """The run's ``add_scalar`` calls and its ``wandb_writer.log`` calls, each in order."""
    rng = random.Random(spec.seed)
    args = spec.args
    calls: list[Scalar] = []
    wandb: list[Scalar] = []
    samples = 0
    for iteration in range(1, args["train_iters"] + 1):
        samples += args["global_batch_size"]
        loss = 2.2 + 8.0 * 0.96**iteration + rng.uniform(-0.03, 0.03)
        if iteration % args["tensorboard_log_interval"] == 0:
            wandb.append(("samples vs steps", samples, iteration))
            lr = args["lr"] * min(1.0, iteration / args["lr_warmup_iters"])
            grad_norm = rng.uniform(0.2, 1.5)
            twice: list[tuple[str, float]] = [
                ("learning-rate", lr),
                ("batch-size", args["global_batch_size"]),
                ("lm loss", loss),
            ]
            if args["log_loss_scale_to_tensorboard"]:
                twice.append(("loss-scale", 1.0))
            if args["log_world_size_to_tensorboard"]:
                twice.append(("world-size", args["world_size"]))
            twice.append(("grad-norm", grad_norm))
            if args["log_params_norm"]:
                twice.append(("params-norm", 310.0 + 0.01 * iteration))
            for tag, value in twice:
                calls += [(tag, value, iteration), (f"{tag} vs samples", value, samples)]
                wandb.append((tag, value, iteration))
            if args["log_memory_to_tensorboard"]:
                reserved = rng.randint(60, 64) * 2**30
                calls += [
                    ("mem-reserved-bytes", reserved, iteration),
                    ("mem-allocated-bytes", reserved - rng.randint(4, 8) * 2**30, iteration),
                    ("mem-max-allocated-bytes", reserved - 2**30, iteration),
                    ("mem-allocated-count", rng.randint(9000, 9500), iteration),
                ]
            if args["log_max_attention_logit"]:
                logit = rng.uniform(40.0, 90.0)
                calls.append(("max_attention_logit", logit, iteration))
                wandb.append(("max_attention_logit", logit, iteration))
        # The first training_log call (is_first_iteration) runs the log_interval block
        # too, but writes no iteration-time (it would time the initialisation).
        first = iteration == 1
        if iteration % args["log_interval"] == 0 or first:
            step_time = rng.uniform(3.9, 4.2)
            logged: list[tuple[str, float]] = []
            if args["log_timers_to_tensorboard"] and not first:
                logged.append(("iteration-time", step_time))
                if args["log_throughput"]:
                    logged.append(("throughput", rng.uniform(380.0, 420.0)))
            if args["log_energy"]:
                energy = rng.uniform(2800.0, 3000.0)
                logged += [("iter-energy/gpu", energy), ("power/gpu", energy / step_time)]
            if args["log_timers_to_tensorboard"]:
                timers = LEVEL_1_TIMERS + (LEVEL_2_TIMERS if args["timing_log_level"] >= 2 else ())
                if args["timing_log_level"] >= 1:
                    logged += [
                        (f"{timer}-time", step_time / share)
                        for share, timer in enumerate(timers, start=2)
                    ]
            calls += [(tag, value, iteration) for tag, value in logged]
            wandb += [(tag, value, iteration) for tag, value in logged]
        if args["eval_interval"] and iteration % args["eval_interval"] == 0:
            sets = len(args["eval_iters"]) if args["multiple_validation_sets"] else 1
            for index in range(sets):
                suffix = f"-{index}" if args["multiple_validation_sets"] else ""
                val = loss + rng.uniform(0.01, 0.05)
                calls += [
                    (f"lm loss validation{suffix}", val, iteration),
                    (f"lm loss validation{suffix} vs samples", val, samples),
                ]
                wandb.append((f"lm loss validation{suffix}", val, iteration))
                if args["log_validation_ppl_to_tensorboard"]:
                    ppl = math.exp(min(20.0, val))
                    calls += [
                        (f"lm loss validation{suffix} ppl", ppl, iteration),
                        (f"lm loss validation{suffix} ppl vs samples", ppl, samples),
                    ]
    return calls, wandb


class JsonlSummaryWriter:
    """A ``SummaryWriter`` stand-in: each ``add_scalar`` is one record of this project's JSONL."""

    def __init__(self, writer: JsonlLogger) -> None:
        """Write to ``writer``."""
        self.writer = writer
        """Where each scalar goes."""

    def add_scalar(
        self, tag: str, scalar_value: float, global_step: int | None = None, walltime: Any = None
    ) -> None:
        """``SummaryWriter.add_scalar``: the tag under the empty prefix, at ``global_step``."""
        self.writer.log_metrics({tag: scalar_value}, global_step or 0, "")

    def close(self) -> None:
        """Close the writer."""
        self.writer.close()


def write_run(spec: RunSpec, path: Path) -> list[Scalar]:
    """Write ``spec``'s run to ``path`` through a teed :class:`JsonlSummaryWriter`; return it."""
    calls = run_scalars(spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = tee_summary_writer(JsonlSummaryWriter(JsonlLogger(path, config=spec.args)))
    try:
        for tag, value, step in calls:
            writer.add_scalar(tag, value, step)
    finally:
        writer.close()
    return calls


def write_tensorboard_events(
    calls: list[Scalar], logdir: Path, args: Mapping[str, Any] | None = None
) -> None:
    """Write ``calls`` into ``logdir`` as the event file Megatron-LM's writer would.

    Megatron-LM writes with torch's ``SummaryWriter``, which keeps each tag as given
    (``lm loss vs samples``); this writes the same scalar events with tensorboardX's
    file writer (its own ``add_scalar`` would rewrite the spaces to ``_``). With
    ``args``, each argument is first written as text at step 0, as
    ``write_args_to_tensorboard`` does (``add_text(arg, str(value), args.iteration)``).
    It needs tensorboardX.
    """
    from tensorboardX import SummaryWriter  # noqa: PLC0415 - optional, only for this format
    from tensorboardX.proto.summary_pb2 import Summary  # noqa: PLC0415

    writer = SummaryWriter(str(logdir))
    file_writer = writer._get_file_writer()
    try:
        for arg, value in (args or {}).items():
            writer.add_text(arg, str(value), 0)
        for tag, value, step in calls:
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=float(value))])
            file_writer.add_summary(summary, step)
    finally:
        writer.close()


def main(argv: list[str] | None = None) -> int:
    """Write every run of :data:`RUNS` as ``<name>.jsonl`` into a folder (default ``runs``).

    Imports the generated modules first, so the tee and the split know the rows.
    """
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "runs")
    generated = importlib.import_module("megatron_metrics.telemetry.generated")
    for module in pkgutil.iter_modules(generated.__path__):
        importlib.import_module(f"{generated.__name__}.{module.name}")
    for spec in RUNS:
        calls = write_run(spec, folder / f"{spec.name}.jsonl")
        print(folder / f"{spec.name}.jsonl")
        try:
            write_tensorboard_events(calls, folder / "tensorboard" / spec.name, spec.args)
        except ImportError:
            print("tensorboardX is not installed: no TensorBoard event files written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
