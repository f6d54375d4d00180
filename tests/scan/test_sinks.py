"""What scan knows as logging calls with no configuration: the trackers' own calls, found by
what a name is bound to through imports, and every function that hands a parameter to one
(a wrapper), whatever its name."""

from __future__ import annotations

from pathlib import Path

from codegen.catalog.model import Catalog
from codegen.scan.scanner import ScanReport, scan


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "src"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _scan(tmp_path: Path, catalog: Catalog, files: dict[str, str]) -> ScanReport:
    return scan([_tree(tmp_path, files)], catalog, cwd=tmp_path, unlogged=False)


def _keys(report: ScanReport) -> dict[str, str]:
    """Undeclared key -> where it is reported (``path:line``)."""
    found = {}
    for finding in report.diagnostics:
        if finding.code == "SCAN_UNDECLARED" and finding.position is not None:
            key = finding.message.split("'")[1]
            found[key] = f"{finding.position.path}:{finding.position.line}"
    return found


_LOGGING_UTILS = """\
import wandb


def log(args, metrics, step_key):
    if args.use_wandb:
        wandb.log(metrics)
"""

_TRAINER = """\
from pkg import logging_utils


def train(args, loss):
    log_dict = {"train/zz_gain": loss}
    log_dict["train/step"] = 3
    logging_utils.log(args, log_dict, step_key="train/step")
"""


def test_a_module_function_named_log_that_hands_its_parameter_to_wandb_is_a_wrapper(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    files = {"pkg/__init__.py": "", "pkg/logging_utils.py": _LOGGING_UTILS}
    files["pkg/trainer.py"] = _TRAINER
    report = _scan(tmp_path, repo_catalog, files)

    assert _keys(report) == {
        "train/zz_gain": "src/pkg/trainer.py:5",
        "train/step": "src/pkg/trainer.py:6",
    }
    assert not [d for d in report.diagnostics if d.code == "SCAN_UNRESOLVED"]


def test_a_trainer_log_override_stays_judged_at_its_callers_once(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    source = """\
from transformers import Trainer


class MyTrainer(Trainer):
    def log(self, logs, start_time=None):
        logs["zz_extra"] = 1.0
        super().log(logs, start_time)

    def step(self):
        self.log({"zz_loss": 0.5})
"""
    report = _scan(tmp_path, repo_catalog, {"t.py": source})

    assert _keys(report) == {"zz_extra": "src/t.py:6", "zz_loss": "src/t.py:10"}
    assert report.calls == 2  # the override's super().log and the step's self.log


def test_a_function_named_log_doing_mathematics_is_no_wrapper(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    source = """\
import numpy as np


def log(x, base):
    return np.log(x) / np.log(base)


def run():
    return log({"not_a_key": 1}, 2)
"""
    report = _scan(tmp_path, repo_catalog, {"m.py": source})

    assert report.diagnostics == []
    assert report.calls == 0
