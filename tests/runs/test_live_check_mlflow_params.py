"""An MLflow run's params are its configuration: conditions over ``config.<path>`` are judged.

Lightning's ``MLFlowLogger.log_hyperparams`` (which NeMo and NeMo-Aligner call with the
whole Hydra configuration) logs it as params, flattened with ``/`` and written as
``str(value)``: ``trainer/ppo/gradient_clip_val = "0.0"``. live-check reads them back
into the nested configuration a condition names, from the file store and from the
SQLite store, so a row its condition rules out is ``not_applicable`` and one it requires
is ``missing``; before, both were ``conditional`` information on every MLflow run.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.live_check import check_file
from codegen.runs.ingest._params import configuration, param_value
from tests.mlflow_stores import mlflow_template, sqlite_store

__all__ = ["mlflow_template"]  # fixture used by name

CATALOG = """\
owner: nemo_aligner.algorithms.ppo
module: ppo
description: Rows of an actor's optimizer step, one of them logged only with clipping.
prefix: train_optim
teed:
  - logger_key: loss
    name: rl.na.actor.loss
    kind: gauge
    unit: ""
    description: Loss of the optimizer step.
    requirement_level: required
  - logger_key: grad_norm
    name: rl.na.actor.grad_norm
    kind: gauge
    unit: ""
    description: Gradient norm before clipping.
    requirement_level: conditionally_required
    condition: "config.trainer.ppo.gradient_clip_val > 0"
  - logger_key: init_kl
    name: rl.na.actor.init_kl
    kind: gauge
    unit: ""
    description: KL from the initial policy, logged when the run uses a KL penalty.
    requirement_level: conditionally_required
    condition: "config.trainer.ppo.use_kl and config.model.name == 'gpt'"
"""


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("True", True),
        ("true", True),
        ("False", False),
        ("None", None),
        ("null", None),
        ("16", 16),
        ("-3", -3),
        ("0.01", 0.01),
        ("9e-07", 9e-07),
        ("1.", 1.0),
        (".5", 0.5),
        ("inf", math.inf),
        ("bf16", "bf16"),
        ("[0.9, 0.98]", "[0.9, 0.98]"),
        ("1_000", "1_000"),
        ("", ""),
    ],
)
def test_a_param_reads_back_as_the_value_str_wrote(text: str, value: object) -> None:
    """``str(True)``, ``str(None)``, ``str(0.01)`` are a bool, null and number again."""
    assert param_value(text) == value
    assert type(param_value(text)) is type(value)


def test_params_flattened_with_slashes_are_nested_again() -> None:
    """Lightning's ``/``-flattened keys nest; a clash or an empty part keeps the key whole."""
    found = configuration(
        [
            ("trainer/ppo/gradient_clip_val", "1.0"),
            ("trainer/ppo/rollout_batch_seq_length", "None"),
            ("model/optim/lr", "9e-07"),
            ("learning_rate", "0.001"),
            ("a", "1"),
            ("a/b", "2"),
            ("x//y", "3"),
        ]
    )
    assert found == {
        "trainer": {"ppo": {"gradient_clip_val": 1.0, "rollout_batch_seq_length": None}},
        "model": {"optim": {"lr": 9e-07}},
        "learning_rate": 0.001,
        "a": 1,
        "a/b": 2,
        "x//y": 3,
    }


def test_a_key_of_too_many_parts_stays_whole() -> None:
    """A hostile ``a/a/a/...`` key is not nested thousands of levels deep."""
    deep = "/".join(["a"] * 5000)
    found = configuration([(deep, "1"), ("b/c", "2")])
    assert found == {deep: 1, "b": {"c": 2}}
    assert configuration([("/".join(["a"] * 32), "1")]) != {"/".join(["a"] * 32): 1}


@pytest.fixture(scope="module")
def clipping_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The catalog of :data:`CATALOG`."""
    folder = tmp_path_factory.mktemp("catalog")
    (folder / "ppo.yaml").write_text(CATALOG, encoding="utf-8")
    result = load_and_check([folder / "ppo.yaml"], root=folder)
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.catalog is not None
    return result.catalog


def _flatten(config: dict[str, Any], parent: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{parent}/{key}" if parent else key
        flat.update(_flatten(value, name) if isinstance(value, dict) else {name: value})
    return flat


def _log_run(uri: str, name: str, clip: float) -> str:
    """A run as Lightning's MLFlowLogger logs it: params (``str`` of each flattened value)
    in one ``log_batch``, then one ``log_batch`` of metrics per call; no grad_norm logged."""
    mlflow = pytest.importorskip("mlflow", reason="the dev extra installs mlflow-skinny")
    from mlflow.entities import Metric, Param

    config = {
        "trainer": {"ppo": {"gradient_clip_val": clip, "use_kl": False, "max_steps": -1}},
        "model": {"name": "gpt", "optim": {"lr": 9e-7}},
    }
    client = mlflow.MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name("ppo")
    experiment = found.experiment_id if found else client.create_experiment("ppo")
    run_id: str = client.create_run(experiment, run_name=name).info.run_id
    params = [Param(k, str(v)) for k, v in _flatten(config).items()]
    client.log_batch(run_id, params=params)
    for step in range(3):
        client.log_batch(run_id, metrics=[Metric("train_optim/loss", 0.5, 1000 + step, step)])
    client.set_terminated(run_id)
    return run_id


@pytest.fixture
def file_store_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow 3 writes its file store only with ``MLFLOW_ALLOW_FILE_STORE=true``."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")


@pytest.mark.integration
@pytest.mark.usefixtures("file_store_allowed")
@pytest.mark.parametrize("backend", ["file", "sqlite"])
@pytest.mark.parametrize("clip", [0.0, 1.0], ids=["clipping-off", "clipping-on"])
def test_a_condition_over_an_mlflow_runs_params_is_judged(
    clipping_catalog: Catalog, tmp_path: Path, mlflow_template: Path, backend: str, clip: float
) -> None:
    """Clipping off: grad_norm is not applicable (out of the coverage); on and never
    logged: missing. ``use_kl`` is ``"False"`` in the params, so init_kl is ruled out."""
    grad_norm = "missing" if clip > 0 else "not_applicable"
    if backend == "file":
        uri = (tmp_path / "mlruns").as_uri()
    else:
        uri = sqlite_store(mlflow_template, tmp_path / "mlflow.db")
    run_id = _log_run(uri, "actor", clip)
    if backend == "file":
        (path,) = (tmp_path / "mlruns").glob(f"*/{run_id}")
        target = str(path)
    else:
        target = str(tmp_path / "mlflow.db")
    report = check_file(target, clipping_catalog)
    states = {s.row.name: s.presence for s in report.rows if not s.logged}
    assert states == {"rl.na.actor.grad_norm": grad_norm, "rl.na.actor.init_kl": "not_applicable"}
    found = [(f.kind, f.qualified_key) for f in report.findings]
    assert found == ([("missing", "train_optim/grad_norm")] if grad_norm == "missing" else [])
    assert report.coverage.overall == (1.0 if grad_norm == "not_applicable" else 0.5)
