"""Dicts held inside a followed dict under literal keys, read back by a loop over
``d["a"]`` in the same function or in a method ``d`` is handed to."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.scanner import scan
from codegen.scan.values import DictVal, Key, Where

_TRAINER = """\
from collections import defaultdict

from transformers import Trainer


class Custom(Trainer):
    def __init__(self):
        self._metrics = {{"train": defaultdict(list), "eval": defaultdict(list)}}

    def _stats(self, x):
        out = {{}}
        out["alpha"] = x.mean()
        out["beta"] = x.max()
        return out

{body}

    def log(self, logs, start_time=None):
        metrics = {{key: sum(v) / len(v) for key, v in self._metrics["train"].items()}}
        super().log({{**logs, **metrics}}, start_time)
"""

_LITERAL = """\
    def compute_loss(self, model, inputs):
        data = {"kl": 1.0}
        data["clip"] = {"low_mean": 0.1, "high_mean": 0.2}
        for key, value in data["clip"].items():
            self._metrics["train"][f"clip/{key}"].append(value)
        return 0.0
"""
_VARIABLE = """\
    def compute_loss(self, model, inputs):
        data = {}
        data["clip"] = dict(low_mean=0.1, high_mean=0.2)
        clip = data["clip"]
        for key in clip:
            self._metrics["train"][f"clip/{key}"].append(clip[key])
        return 0.0
"""
_SETDEFAULT = """\
    def compute_loss(self, model, inputs):
        data = {}
        data.setdefault("clip", {})["low_mean"] = 0.1
        data.setdefault("clip", {})["high_mean"] = 0.2
        for key, value in data["clip"].items():
            self._metrics["train"][f"clip/{key}"].append(value)
        return 0.0
"""
_TWO_LEVELS = """\
    def compute_loss(self, model, inputs):
        data = {"clip": {}}
        data["clip"]["low_mean"] = 0.1
        data["clip"]["high_mean"] = 0.2
        for key in data["clip"].keys():
            self._metrics["train"][f"clip/{key}"].append(data["clip"][key])
        return 0.0
"""
_CALLED = """\
    def compute_loss(self, model, inputs):
        data = {}
        data["clip"] = self._stats(inputs)
        for key, value in data["clip"].items():
            self._metrics["train"][f"clip/{key}"].append(value)
        return 0.0
"""
_HANDED = """\
    def _loss_and_metrics(self, inputs):
        data = {"mode": "train"}
        data["clip"] = {"low_mean": 0.1, "high_mean": 0.2}
        return 0.0, data

    def _update(self, data):
        mode = data["mode"]
        for key, value in data["clip"].items():
            self._metrics[mode][f"clip/{key}"].append(value)

    def compute_loss(self, model, inputs):
        loss, data = self._loss_and_metrics(inputs)
        self._update(data)
        return loss
"""
_HANDED_RETURNED = """\
    def _update(self, data):
        extra = data["clip"]
        for key, value in extra.items():
            self._metrics["train"][f"clip/{key}"].append(value)

    def compute_loss(self, model, inputs):
        data = {}
        stats = self._stats(inputs)
        data["clip"] = stats
        self._update(data)
        return 0.0
"""

_CLIP = {"clip/low_mean", "clip/high_mean"}
_STATS = {"clip/alpha", "clip/beta"}


def _report(tmp_path: Path, catalog: Catalog, body: str) -> tuple[set[str], set[str]]:
    """The keys scan finds (undeclared) and the keys it reports unresolved."""
    root = tmp_path / "src" / "pkg"
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "trainer.py").write_text(_TRAINER.format(body=body), encoding="utf-8")
    report = scan([tmp_path / "src"], catalog, cwd=tmp_path, unlogged=False)

    def keys(code: str) -> set[str]:
        return {d.message.split("'")[1] for d in report.diagnostics if d.code == code}

    return keys("SCAN_UNDECLARED"), keys("SCAN_UNRESOLVED")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (_LITERAL, _CLIP),
        (_VARIABLE, _CLIP),
        (_SETDEFAULT, _CLIP),
        (_TWO_LEVELS, _CLIP),
        (_CALLED, _STATS),
        (_HANDED, _CLIP),
        (_HANDED_RETURNED, _STATS),
    ],
    ids=["literal", "variable", "setdefault", "two-levels", "called", "handed", "handed-call"],
)
def test_a_loop_over_an_inner_dict_logs_its_known_keys(
    tmp_path: Path, repo_catalog: Catalog, body: str, expected: set[str]
) -> None:
    found, unresolved = _report(tmp_path, repo_catalog, body)

    assert expected <= found
    assert not {key for key in unresolved if key.startswith("clip/")}


_RUN_TIME_KEY = """\
    def compute_loss(self, model, inputs):
        data = {}
        for group in inputs.groups:
            data[group] = {"low_mean": 0.1}
        for key, value in data["clip"].items():
            self._metrics["train"][f"clip/{key}"].append(value)
        return 0.0
"""
_NUMBER = """\
    def compute_loss(self, model, inputs):
        data = {}
        data["clip"] = inputs.clip_ratio
        for key, value in data["clip"].items():
            self._metrics["train"][f"clip/{key}"].append(value)
        return 0.0
"""
_OTHER_KEY = """\
    def _update(self, data):
        for key, value in data["clip"].items():
            self._metrics["train"][f"clip/{key}"].append(value)

    def compute_loss(self, model, inputs):
        data = {}
        data["entropy"] = {"mean": 0.1}
        self._update(data)
        return 0.0
"""
_UNKNOWN_CALLER = """\
    def _update(self, data):
        for key, value in data["clip"].items():
            self._metrics["train"][f"clip/{key}"].append(value)

    def compute_loss(self, model, inputs):
        data = {}
        data["clip"] = {"low_mean": 0.1}
        self._update(data)
        self._update(inputs.metrics)
        return 0.0
"""


@pytest.mark.parametrize(
    ("body", "found_keys"),
    [
        (_RUN_TIME_KEY, set()),
        (_NUMBER, set()),
        (_OTHER_KEY, set()),
        (_UNKNOWN_CALLER, {"clip/low_mean"}),
    ],
    ids=["run-time-key", "number", "other-key", "unknown-caller"],
)
def test_an_inner_dict_not_known_under_that_key_stays_unresolved(
    tmp_path: Path, repo_catalog: Catalog, body: str, found_keys: set[str]
) -> None:
    found, unresolved = _report(tmp_path, repo_catalog, body)

    assert {key for key in found if key.startswith("clip/")} == found_keys
    assert "clip/{key}" in unresolved  # never a guess: the unknown reading is reported


def _dict(*names: str) -> DictVal:
    return DictVal(tuple(Key((name,), Where("f.py", 1, 1)) for name in names))


def test_merging_dicts_merges_their_inner_dicts_by_key() -> None:
    left = _dict("clip").holding("clip", _dict("low"))
    right = _dict("clip", "kl").holding("clip", _dict("high"))

    merged = left.merge(right)
    inner = merged.nested("clip")

    assert inner is not None
    assert {key.shape for key in inner.keys} == {("low",), ("high",)}
    assert merged.nested("kl") is None


def test_a_later_write_under_a_key_replaces_the_earlier_inner_dict() -> None:
    held = _dict("clip").holding("clip", _dict("low")).holding("clip", _dict("high"))

    inner = held.nested("clip")

    assert inner is not None
    assert [key.shape for key in inner.keys] == [("high",)]
