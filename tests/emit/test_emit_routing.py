"""``emit`` logs a family's sample key only where the one routing rule sends it back to the
row: never a step key, never a more specific row's key (issue 36, finding 4)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from codegen import emit as emit_module
from codegen.emit import plan_steps
from metric_catalog import vocabulary
from tests.catalog_projects import loaded_catalog
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader
from tests.routing_cases import AttrSpec, RowSpec, Spec, runtime_rows

if TYPE_CHECKING:
    from codegen.config import Config

__all__ = ["clean_otel"]  # fixture used by name

EVAL = """\
owner: trainer.eval
module: evaluation
description: Evaluation scores.
prefix: eval
attributes:
  - name: rl.dataset
    type: string
    description: The evaluation data set (or, in this trainer, the step it ran at).
    values:
      - {value: aime, description: AIME.}
      - {value: step, description: A value that spells the step key.}
      - {value: best, description: A value that spells a literal row's key.}
loops:
  - name: ppo
    description: PPO.
    signature: [eval/aime]
    step_keys:
      - {key: eval/step, prefix: eval}
teed:
  - logger_key: "{rl.dataset}"
    name: rl.eval.score
    kind: gauge
    unit: "1"
    description: Score on one evaluation data set.
    attributes: [{ref: rl.dataset}]
  - logger_key: best
    name: rl.eval.best
    kind: gauge
    unit: "1"
    description: Best score over the data sets.
"""


def test_a_family_sample_that_spells_a_step_key_or_a_literal_row_is_not_logged(
    tmp_path: Path,
) -> None:
    catalog = loaded_catalog(tmp_path, EVAL)
    (step,) = plan_steps(catalog, "ppo", 1)
    (call,) = step.logged
    assert call.prefix == "eval"
    assert sorted(call.metrics) == ["aime", "best"]  # the family's aime, the literal best


TWO_LOOPS = """\
owner: trainer.env
module: environment
description: Environment statistics two loops log under one family.
prefix: environment
attributes:
  - name: rl.env_metric
    type: string
    description: Which environment statistic.
    max_cardinality: "16"
loops:
  - name: ppo_async
    description: Asynchronous PPO.
    signature: [environment/avg_steps]
  - name: ppo_sync
    description: Synchronous PPO.
    signature: [environment/avg_steps]
teed:
  - logger_key: "{rl.env_metric}"
    name: rl.async.env
    kind: gauge
    unit: "1"
    description: An environment statistic of the asynchronous loop.
    attributes: [{ref: rl.env_metric}]
    emitted_by: [ppo_async]
  - logger_key: "{rl.env_metric}"
    name: rl.sync.env
    kind: gauge
    unit: "1"
    description: An environment statistic of the synchronous loop.
    attributes: [{ref: rl.env_metric}]
    emitted_by: [ppo_sync]
"""


def test_emit_through_the_tee_routes_a_shared_family_by_its_loop(
    tmp_path: Path, clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 10 in emit: ``--loop`` reaches the tee as ``loop=`` does, so a family two loops
    share feeds the emitted loop's row (with no transport file, straight into the tee)."""
    catalog = loaded_catalog(tmp_path, TWO_LOOPS)
    spec = Spec(
        attributes={"rl.env_metric": AttrSpec()},
        rows=(
            RowSpec("rl.async.env", "environment", "{rl.env_metric}", ("ppo_async",)),
            RowSpec("rl.sync.env", "environment", "{rl.env_metric}", ("ppo_sync",)),
        ),
    )

    def register(*_args: object) -> list[str]:
        vocabulary.register_teed_metrics(runtime_rows(spec))
        return ["environment"]

    monkeypatch.setattr(emit_module, "import_generated_modules", register)
    with installed_reader() as reader, caught_warnings():
        emit_module.emit(catalog, cast("Config", None), loop="ppo_async", steps=1)
        assert set(collect(reader)) == {"rl.async.env"}
