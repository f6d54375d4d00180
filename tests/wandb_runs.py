"""Write real W&B offline runs for the tests: ``python tests/wandb_runs.py SPEC.json``.

Run in a child process so that ``wandb.init`` (which starts ``wandb-core`` and
hooks the interpreter) never touches the test process. The spec is a JSON list
of runs, each ``{"dir", "config", "steps": [[step, {key: value}], ...]}`` with
optional ``"config_update"`` (``run.config.update`` after the first step),
``"encoding"`` (``x_history_value_encoding``), ``"define_metric"`` (``[[name,
step_metric or null], ...]``, defined before the first step), ``"catalog_definitions"``
(``[path of a generated wandb_metrics.py, loop]``: its ``define_loop(run, loop)`` is called
before the first step), ``"id"`` and ``"resume"``
(a run resumed with the same id writes a second run folder). A step ``null`` logs
without ``step=`` (W&B counts the call). A value ``"<histogram>"`` or
``"<table>"`` is logged as ``wandb.Histogram`` / ``wandb.Table``. Each run's
folder is printed, one per line. Offline mode: nothing leaves the machine.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import Any


def _value(value: Any, wandb: Any) -> Any:
    if value == "<histogram>":
        return wandb.Histogram([1.0, 2.0, 2.5, 3.0])
    if value == "<table>":
        return wandb.Table(columns=["prompt", "reward"], data=[["a", 1.0], ["b", 0.5]])
    if isinstance(value, dict):
        return {key: _value(inner, wandb) for key, inner in value.items()}
    return value


def main(spec_path: str) -> None:
    """Write every run the spec describes and print its run folder."""
    os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_CONSOLE="off")
    import wandb

    with open(spec_path, encoding="utf-8") as spec_file:
        spec = json.load(spec_file)
    for run_spec in spec:
        settings: dict[str, Any] = {"console": "off", "x_disable_stats": True}
        if "encoding" in run_spec:
            settings["x_history_value_encoding"] = run_spec["encoding"]
        resumed: dict[str, Any] = {}
        if "id" in run_spec:  # a run resumed with the same id: wandb.init(id=..., resume=...)
            resumed = {"id": run_spec["id"], "resume": run_spec.get("resume", "allow")}
        run: Any = wandb.init(
            mode="offline",
            dir=run_spec["dir"],
            project="metric-catalog-tests",
            config=run_spec.get("config") or None,
            settings=wandb.Settings(**settings),
            **resumed,
        )
        for name, step_metric in run_spec.get("define_metric", []):
            run.define_metric(name, step_metric=step_metric, step_sync=bool(step_metric))
        if "catalog_definitions" in run_spec:
            module_path, loop = run_spec["catalog_definitions"]
            found = importlib.util.spec_from_file_location("wandb_metrics", module_path)
            assert found is not None
            assert found.loader is not None
            module = importlib.util.module_from_spec(found)
            found.loader.exec_module(module)
            module.define_loop(run, loop)
        for index, (step, data) in enumerate(run_spec["steps"]):
            if step is None:
                run.log(_value(data, wandb))
            else:
                run.log(_value(data, wandb), step=step)
            if index == 0 and run_spec.get("config_update"):
                run.config.update(run_spec["config_update"])
        run.finish()
        print(os.path.dirname(run.settings.sync_file))


if __name__ == "__main__":
    main(sys.argv[1])
