"""The mode a Trainer subclass records a per-step key under decides whether its ``log``
override's ``eval_`` copy of the key is logged: a key only ever recorded in training mode
(a local ``mode = "train"``, or a helper every call passes ``mode="train"``) has none."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from tests.scan.test_sinks import _keys, _scan

_TRAINER = """\
from collections import defaultdict

from transformers import Trainer


class ZzTrainer(Trainer):
    def __init__(self):
        self._metrics = {{"train": defaultdict(list), "eval": defaultdict(list)}}

    def compute_loss(self, model, inputs):
        {mode}
        self._metrics[mode]["zz_kl"].append(1.0)

    def _record(self, mode, n):
        self._metrics[mode]["zz_tokens"].append(n)

    def step(self):
        self._record({first}, n=3)
        self._record({second}, n=4)

    def log(self, logs, start_time=None):
        mode = "train" if self.model.training else "eval"
        metrics = {{key: sum(v) / len(v) for key, v in self._metrics[mode].items()}}
        if mode == "eval":
            metrics = {{f"eval_{{key}}": val for key, val in metrics.items()}}
        logs = {{**logs, **metrics}}
        super().log(logs, start_time)
"""


@pytest.mark.parametrize(
    ("mode", "calls", "keys"),
    [
        ('mode = "train"', ('mode="train"', '"train"'), {"zz_kl", "zz_tokens"}),
        (
            'mode = "train" if model.training else "eval"',
            ('mode="train"', '"train"'),
            {"zz_kl", "eval_zz_kl", "zz_tokens"},
        ),
        (
            'mode = "train"',
            ('mode="train"', '"eval"'),
            {"zz_kl", "zz_tokens", "eval_zz_tokens"},
        ),
        (
            'mode = "train"',
            ('mode="train"', "kind"),
            {"zz_kl", "zz_tokens", "eval_zz_tokens"},
        ),
        (
            'mode = "train"\n        mode = self.args.mode',
            ('mode="train"', '"train"'),
            {"zz_kl", "eval_zz_kl", "zz_tokens"},
        ),
    ],
)
def test_a_key_recorded_in_training_mode_only_has_no_eval_copy(
    tmp_path: Path, repo_catalog: Catalog, mode: str, calls: tuple[str, str], keys: set[str]
) -> None:
    source = _TRAINER.format(mode=mode, first=calls[0], second=calls[1])
    report = _scan(tmp_path, repo_catalog, {"t.py": source})

    assert set(_keys(report)) == keys
