"""Generated modules expose each loop's step keys, for W&B's ``define_metric(step_metric=)``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from codegen.generate.python import render_python_module
from metric_catalog import vocabulary
from tests.catalog_projects import loaded_catalog

CATALOG = """\
owner: openrlhf.trainer
module: openrlhf_loops
description: The loops of the OpenRLHF trainers.
loops:
  - name: sft
    description: Supervised fine-tuning.
    step_keys:
      - key: train/global_step
        prefix: train
      - key: eval/global_step
        prefix: eval
  - name: orchestrator
    description: prime-rl's orchestrator, which logs its step inside every dict.
    step_keys:
      - key: step
teed: []
"""


def test_the_module_of_the_loops_file_registers_its_step_keys(tmp_path: Path) -> None:
    """``STEP_KEYS`` is a constant of the module, registered at import, ruff-stable."""
    catalog = loaded_catalog(tmp_path / "project", CATALOG)
    text = render_python_module(catalog.files[0])
    namespace: dict[str, object] = {"__name__": "generated_loops"}
    exec(compile(text, "openrlhf_loops.py", "exec"), namespace)
    assert namespace["STEP_KEYS"] == {
        "sft": (("train", "train/global_step"), ("eval", "eval/global_step")),
        "orchestrator": (("", "step"),),
    }
    assert "STEP_KEYS" in namespace["__all__"]  # type: ignore[operator]
    assert vocabulary.step_metric("train/loss", "sft") == "train/global_step"
    assert vocabulary.step_metric("eval/acc_mean", "sft") == "eval/global_step"
    assert vocabulary.step_metric("time/step", "orchestrator") == "step"
    assert vocabulary.step_metric("other/key", "sft") is None
    assert vocabulary.step_metric("train/loss") is None  # sft and orchestrator disagree
    module = tmp_path / "openrlhf_loops.py"
    module.write_text(text, encoding="utf-8")
    ruff = Path(sys.executable).with_name("ruff")
    checked = subprocess.run([str(ruff), "format", "--check", "--quiet", str(module)], check=False)
    assert checked.returncode == 0
