"""live-check and a logging backend's media values (a W&B table, image or histogram).

OpenRLHF logs its generated samples as ``wandb.log({"train/generated_samples": table})``;
a W&B history row holds such a value as a reference object with a ``_type``. It is no
metric, so no teed row can declare it: live-check must not report it undeclared, while a
declared row logged with one is still a non-scalar value. The same holds for an array:
open-instruct hands ``wandb.log`` a ``wandb.Histogram`` of each non-empty array and the
array itself when it is empty, which W&B stores as ``[]``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.model import Catalog
from codegen.live_check import check_file
from tests.catalog_projects import loaded_catalog

CATALOG = """\
owner: openrlhf.trainer.ppo_trainer
module: trainer
description: Metrics OpenRLHF's PPO trainer logs to W&B.
prefix: train
teed:
  - logger_key: policy_loss
    name: rl.openrlhf.actor.policy_loss
    kind: gauge
    unit: ""
    description: Policy loss of the actor update.
"""

TABLE = {"_type": "table-file", "path": "media/table/t.table.json", "ncols": 3, "nrows": 1}
IMAGE = {"_type": "image-file", "path": "media/images/i.png", "width": 8, "height": 8}
HISTOGRAM = {"_type": "histogram", "values": [1, 2], "bins": [0.0, 0.5, 1.0]}


@pytest.fixture(scope="module")
def media_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """OpenRLHF's PPO trainer rows of :data:`CATALOG`, scalars beside media."""
    return loaded_catalog(tmp_path_factory.mktemp("media"), CATALOG, "trainer.yaml")


def _findings(catalog: Catalog, path: Path, data: dict[str, Any]) -> list[tuple[str, str]]:
    lines = [
        {"step": 1, "data": data},
        {"step": 1, "data": {"train/policy_loss": 0.25}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    report = check_file(str(path), catalog)
    return [(f.kind, f.qualified_key) for f in report.findings]


@pytest.mark.parametrize("value", [TABLE, IMAGE, HISTOGRAM], ids=["table", "image", "histogram"])
def test_an_undeclared_media_value_is_not_reported(
    media_catalog: Catalog, tmp_path: Path, value: dict[str, Any]
) -> None:
    """A W&B media reference under a key no row declares is not a metric: no finding."""
    assert (
        _findings(media_catalog, tmp_path / "run.jsonl", {"train/generated_samples": value}) == []
    )


@pytest.mark.parametrize(
    "value",
    [{"path": "media/table/t.table.json"}, {"_type": 3}, "a sample text", 0.5],
    ids=["object-without-type", "type-not-text", "text", "number"],
)
def test_an_undeclared_value_that_is_no_media_object_is_still_undeclared(
    media_catalog: Catalog, tmp_path: Path, value: object
) -> None:
    """Only a ``_type``-tagged object is media; anything else stays undeclared."""
    found = _findings(media_catalog, tmp_path / "run.jsonl", {"train/generated_samples": value})
    assert found == [("undeclared", "train/generated_samples")]


@pytest.mark.parametrize(
    "value", [[], [112, 240, 97], [[1, 2], [3]]], ids=["empty", "numbers", "nested"]
)
def test_an_undeclared_array_is_not_reported(
    media_catalog: Catalog, tmp_path: Path, value: list[Any]
) -> None:
    """An array is no metric a teed row could declare (the tee takes scalars): no finding."""
    data = {"val/sequence_lengths_solved_hist": value}
    assert _findings(media_catalog, tmp_path / "run.jsonl", data) == []


@pytest.mark.parametrize("value", [TABLE, [], [0.25, 0.5]], ids=["table", "empty", "array"])
def test_a_declared_row_logged_with_a_media_value_or_an_array_is_non_scalar(
    media_catalog: Catalog, tmp_path: Path, value: object
) -> None:
    """A row the catalog declares as a metric still gets judged: a table or a list is no number."""
    found = _findings(media_catalog, tmp_path / "run.jsonl", {"train/policy_loss": value})
    assert found == [("non_scalar", "train/policy_loss")]


def test_a_declared_row_logged_with_a_media_value_is_non_scalar(
    media_catalog: Catalog, tmp_path: Path
) -> None:
    """A row the catalog declares as a metric still gets judged: a table is no number."""
    found = _findings(media_catalog, tmp_path / "run.jsonl", {"train/policy_loss": TABLE})
    assert found == [("non_scalar", "train/policy_loss")]
