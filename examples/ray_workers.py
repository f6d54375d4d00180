"""Running with many workers: Ray actors teeing their metrics, each in its own process.

Each :class:`TrainingWorker` is what a NeMo-RL policy or generation worker
does: it learns its rank in its constructor, tells metric-catalog with
:func:`~metric_catalog.identity.set_worker_identity`, imports the generated
modules of the owners it runs (every process has its own registry: a module
imported here, even one the driver never imported, declares its rows in this
process before its first tee), and logs through ``TeeLogger(JsonlLogger(...))``.

Exporting is configured by environment variables handed to every actor
through Ray's ``runtime_env`` (:func:`start_workers`):

- Prometheus pull: ``OTEL_METRICS_EXPORTER=prometheus`` with
  ``METRIC_CATALOG_PROMETHEUS_SD_DIR`` (each actor binds a free port and
  announces it in a target file) and ``METRIC_CATALOG_PROMOTE=rank`` (every
  series carries ``rank``);
- OTLP push: ``OTEL_METRICS_EXPORTER=otlp`` with
  ``OTEL_EXPORTER_OTLP_ENDPOINT`` (each actor's points carry its identity as
  resource attributes).

``python -m examples.ray_workers --workers 4 --steps 3`` starts a local Ray
cluster, runs the workers and prints each one's endpoint and values. The Ray
integration tests drive the same functions.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from metric_catalog import exporters, identity
from metric_catalog.generated import grpo
from metric_catalog.loggers import JsonlLogger, TeeLogger
from metric_catalog.vocabulary import TeedMetric

__all__ = [
    "LATE_OWNER",
    "LATE_ROW",
    "WORKER_ROWS",
    "TrainingWorker",
    "main",
    "start_workers",
    "worker_values",
]

WORKER_ROWS: Final[tuple[TeedMetric, ...]] = (grpo.ENTROPY, grpo.RESPONSE_LENGTH_MEAN)
"""The rows every worker logs each step."""

LATE_OWNER: Final = "metric_catalog.generated.dpo"
"""A generated module only some workers import, inside the actor (the driver never does)."""

LATE_ROW: Final = "DPO_SFT_LOSS"
"""The row of :data:`LATE_OWNER` such a worker logs."""

_REPO: Final = Path(__file__).resolve().parents[1]


def worker_values(rank: int, step: int) -> dict[str, float]:
    """What worker ``rank`` logs at ``step``, by series name: distinct for every rank."""
    return {
        grpo.ENTROPY.name: 1.0 + rank + step / 100.0,
        grpo.RESPONSE_LENGTH_MEAN.name: 100.0 * (rank + 1) + step,
    }


def _late_value(rank: int, step: int) -> float:
    return 0.5 + rank / 10.0 + step / 1000.0


class TrainingWorker:
    """One worker process: a Ray actor (``ray.remote(TrainingWorker)``) or a torchrun rank."""

    def __init__(
        self,
        rank: int | None,
        local_rank: int | None,
        world_size: int | None,
        *,
        jsonl_dir: str | None = None,
        late_owner: bool = False,
        value_offset: int = 0,
    ) -> None:
        """Set the identity, import the owners this worker runs, open its JSONL log.

        A ``None`` rank is left to the launcher (torchrun's ``RANK``, ...; 0
        without one). ``late_owner`` imports :data:`LATE_OWNER` here, in the
        worker process. ``value_offset`` shifts the logged values, so plain
        processes without ranks log distinct ones.
        """
        explicit = {"rank": rank, "local_rank": local_rank, "world_size": world_size}
        identity.set_worker_identity(**{k: v for k, v in explicit.items() if v is not None})
        detected = identity.resource_attributes().get("rank", 0)
        self.rank = int(detected) if isinstance(detected, int) else 0
        """This worker's global rank."""
        self._value_rank = self.rank + value_offset
        self._late: TeedMetric | None = None
        if late_owner:
            self._late = getattr(importlib.import_module(LATE_OWNER), LATE_ROW)
        backend: Any = _Discard()
        if jsonl_dir is not None:
            backend = JsonlLogger(Path(jsonl_dir) / "run-{worker}.jsonl")
        self._backend = backend
        self._logger = TeeLogger(backend)

    def step(self, step: int) -> dict[str, float]:
        """Log one step's metrics; returns what was logged, by series name."""
        values = worker_values(self._value_rank, step)
        by_name = {row.name: row for row in WORKER_ROWS}
        metrics = {by_name[name].logger_key: value for name, value in values.items()}
        if self._late is not None:
            late = _late_value(self._value_rank, step)
            values[self._late.name] = metrics[self._late.logger_key] = late
        self._logger.log_metrics(metrics, step, prefix=grpo.ENTROPY.prefix)
        return values

    def endpoint(self) -> tuple[str, int] | None:
        """Where this worker's Prometheus endpoint listens, if it runs one."""
        return exporters.prometheus_address()

    def target_file(self) -> str | None:
        """The Prometheus target file this worker announced its endpoint in."""
        return exporters.prometheus_sd_file()

    def flush(self, timeout_s: float = 5.0) -> bool:
        """Export now (OTLP) instead of waiting for the interval; whether it finished."""
        provider = exporters.get_meter_provider()
        return True if provider is None else bool(provider.force_flush(int(timeout_s * 1000)))

    def pid(self) -> int:
        """This worker's process id."""
        return os.getpid()

    def close(self) -> bool:
        """Flush and stop exporting, close the JSONL log (also runs at process exit)."""
        self._backend.close()
        return exporters.shutdown()


class _Discard:
    def log_metrics(self, metrics: Mapping[str, Any], step: int, prefix: str = "") -> None:
        return None

    def close(self) -> None:
        return None


def _ray() -> Any:
    # Typed as Any: Ray is an optional extra (pip install 'metric-catalog[ray]').
    return importlib.import_module("ray")


def start_workers(
    count: int,
    env: Mapping[str, str],
    *,
    jsonl_dir: str | None = None,
    late_owner_ranks: Sequence[int] = (),
    num_cpus: float = 0.5,
) -> list[Any]:
    """Start ``count`` :class:`TrainingWorker` actors (ranks 0..count-1) on the running Ray.

    ``env`` is every actor's exporter configuration, passed through
    ``runtime_env={"env_vars": ...}``; this repo is put on the actors'
    ``PYTHONPATH`` so they can import ``examples``. Returns the actor handles,
    each constructed (its ``__init__`` finished) before returning.
    """
    ray = _ray()
    python_path = os.pathsep.join(p for p in (str(_REPO), os.environ.get("PYTHONPATH")) if p)
    actor = ray.remote(TrainingWorker)
    workers = [
        actor.options(
            num_cpus=num_cpus,
            runtime_env={"env_vars": {**env, "PYTHONPATH": python_path}},
        ).remote(
            rank,
            rank,  # one node: the local rank is the rank
            count,
            jsonl_dir=jsonl_dir,
            late_owner=rank in late_owner_ranks,
        )
        for rank in range(count)
    ]
    ray.get([w.pid.remote() for w in workers])
    return workers


def main(argv: Sequence[str] | None = None) -> int:
    """Start a local Ray, run the workers, print each one's endpoint and last values."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--sd-dir", help="Prometheus target folder (default: a temp folder)")
    args = parser.parse_args(argv)
    ray = _ray()
    sd_dir = args.sd_dir or tempfile.mkdtemp(prefix="metric-catalog-targets-")
    env = {
        "OTEL_METRICS_EXPORTER": "prometheus",
        "METRIC_CATALOG_PROMETHEUS_SD_DIR": sd_dir,
        "METRIC_CATALOG_PROMOTE": "rank",
    }
    ray.init(num_cpus=max(2, args.workers), include_dashboard=False)
    try:
        workers = start_workers(args.workers, env)
        values: list[dict[str, float]] = []
        for step in range(args.steps):
            values = ray.get([w.step.remote(step) for w in workers])
        endpoints = ray.get([w.endpoint.remote() for w in workers])
        for rank, (endpoint, last) in enumerate(zip(endpoints, values, strict=True)):
            print(json.dumps({"rank": rank, "endpoint": endpoint, "values": last}))
        print(f"Prometheus target files in {sd_dir}", file=sys.stderr)
        ray.get([w.close.remote() for w in workers])
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
