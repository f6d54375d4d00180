"""Log runs through transformers' own logging callbacks: ``python tests/hf_callback_runs.py SPEC``.

A Hugging Face ``Trainer`` hands every ``logs`` dict to each callback's
``on_log(args, state, control, logs=...)``; ``report_to`` picks the callbacks. This
script calls the real ones, as the Trainer does, so the stores hold exactly what they
write: ``WandbCallback`` (a W&B offline run: ``rewrite_logs`` keys, the end-of-training
keys in the summary, ``train/global_step`` as every key's step metric, the run's
``args.to_dict()`` as its configuration), ``TensorBoardCallback`` (``rewrite_logs``
keys through a tensorboardX ``SummaryWriter``, non-numbers dropped) and
``MLflowCallback`` (keys as logged, sanitized, non-numbers dropped, in a file store).

Run in a child process so that ``wandb.init`` and MLflow's active run never touch the
test process. The spec is a JSON object: ``{"dir", "runs": [{"name", "config",
"logs": [[step, {key: value}], ...]}]}``; ``null`` values are logged as ``None`` (what
TRL logs for a metric with no value in the window). Each run's three locations are
printed as one JSON line: ``{"wandb": folder, "tensorboard": folder, "mlflow": run folder}``.
torch is not installed: ``TrainingArguments`` needs it, so ``args`` is a stand-in with
the fields the callbacks read, and ``MLflowCallback``'s ``torch.Tensor`` test (reached
only for a value that is not a number) gets a class nothing is an instance of.
Offline: nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any


class _Args(SimpleNamespace):
    """The ``TrainingArguments`` fields the callbacks read, and ``to_dict``/``to_json_string``."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.config)

    def to_json_string(self) -> str:
        return json.dumps(self.config, indent=2, sort_keys=True)


def _log_run(root: Path, run: dict[str, Any]) -> dict[str, str]:
    import tensorboardX
    import transformers.integrations.integration_utils as integrations
    import wandb

    name = run["name"]
    os.environ["WANDB_DIR"] = str(root / name)
    (root / name).mkdir(parents=True, exist_ok=True)
    os.environ["MLFLOW_TRACKING_URI"] = (root / name / "mlruns").as_uri()
    config = dict(run["config"])
    args = _Args(config=config, run_name=name, output_dir=str(root / name / "out"))
    state = SimpleNamespace(
        is_world_process_zero=True,
        is_hyper_param_search=False,
        trial_name=None,
        global_step=0,
        logging_steps=config.get("logging_steps", 500),
    )
    control = SimpleNamespace()
    tensorboard = str(root / name / "tensorboard")
    callbacks = [
        integrations.WandbCallback(),
        integrations.TensorBoardCallback(tb_writer=tensorboardX.SummaryWriter(tensorboard)),
        integrations.MLflowCallback(),
    ]
    for callback in callbacks:
        callback.on_train_begin(args, state, control, model=None)
    for step, logs in run["logs"]:
        state.global_step = step
        for callback in callbacks:
            callback.on_log(args, state, control, model=None, logs=dict(logs))
    mlflow = callbacks[2]._ml_flow
    mlflow_run = mlflow.active_run()
    artifact_uri = mlflow_run.info.artifact_uri
    # MLflowCallback logs asynchronously (synchronous=False): wait for the queue first.
    mlflow.flush_async_logging()
    for callback in callbacks:
        callback.on_train_end(args, state, control)
    wandb_folder = os.path.dirname(wandb.run.settings.sync_file)
    wandb.finish()
    return {
        "wandb": wandb_folder,
        "tensorboard": tensorboard,
        "mlflow": str(Path(artifact_uri.removeprefix("file://")).parent),
    }


def main(spec_path: str) -> None:
    """Log every run of the spec through the three callbacks and print where each went."""
    os.environ.update(
        WANDB_MODE="offline",
        WANDB_SILENT="true",
        WANDB_CONSOLE="off",
        WANDB_PROJECT="trl-metrics",
        MLFLOW_ALLOW_FILE_STORE="true",
        # MLflowCallback logs asynchronously; MLflow's queue writes metric-only batches from
        # up to 10 threads at once, which on a loaded machine now and then lost a batch of
        # the file store. One worker keeps the callback's own (async) path, in order.
        MLFLOW_ASYNC_LOGGING_THREADPOOL_SIZE="1",
    )
    import transformers.integrations.integration_utils as integrations

    if not hasattr(integrations, "torch"):
        integrations.torch = SimpleNamespace(Tensor=type("Tensor", (), {}))  # type: ignore[attr-defined]
    with open(spec_path, encoding="utf-8") as spec_file:
        spec = json.load(spec_file)
    root = Path(spec["dir"])
    for run in spec["runs"]:
        print(json.dumps(_log_run(root, run)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
