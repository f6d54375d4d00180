"""Runs written by the real MLflow, for the live-check tests of its stores.

MLflow 3 creates a SQLite store by running its schema migrations, several seconds on a
loaded machine; :func:`mlflow_template` does that once per session and every store a test
needs is a copy of that empty, current database (MLflow sees its schema is current and
writes into it at once). The file store needs ``MLFLOW_ALLOW_FILE_STORE=true`` in MLflow 3.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

__all__ = ["mlflow_template", "sqlite_store", "write_runs"]

Steps = Sequence[tuple[int, Mapping[str, float]]]


@pytest.fixture(scope="session")
def mlflow_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty ``mlflow.db`` with MLflow's current schema (migrated once per session)."""
    mlflow = pytest.importorskip("mlflow", reason="the dev extra installs mlflow-skinny")
    path = tmp_path_factory.mktemp("mlflow-template") / "mlflow.db"
    with pytest.MonkeyPatch.context():
        previous = mlflow.get_tracking_uri()
        try:
            mlflow.MlflowClient(tracking_uri=f"sqlite:///{path}").search_experiments()
        finally:
            mlflow.set_tracking_uri(previous)
    return path


def sqlite_store(template: Path, path: Path) -> str:
    """A fresh SQLite store at ``path`` (a copy of ``template``); its tracking URI."""
    shutil.copyfile(template, path)
    return f"sqlite:///{path}"


def write_runs(
    uri: str,
    runs: Mapping[str, Steps],
    *,
    experiment: str = "grpo",
    keys: Callable[[str], str] | None = None,
) -> list[str]:
    """Log each named run's steps with ``mlflow.log_metrics(..., step=...)``; the run ids.

    ``keys``, when given, is a callable applied to each key before logging (a logging
    adapter's sanitizer, such as verl's).
    """
    import mlflow  # only where the dev extra is installed

    ids = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        previous = mlflow.get_tracking_uri()
        mlflow.set_tracking_uri(uri)
        try:
            created = mlflow.set_experiment(experiment)
            for name, steps in runs.items():
                with mlflow.start_run(experiment_id=created.experiment_id, run_name=name) as run:
                    for step, metrics in steps:
                        named = keys or str
                        mlflow.log_metrics({named(k): v for k, v in metrics.items()}, step=step)
                    ids.append(run.info.run_id)
        finally:
            mlflow.set_tracking_uri(previous)
    return ids
