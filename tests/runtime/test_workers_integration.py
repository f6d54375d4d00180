"""Many workers for real: a local Ray cluster, a real Prometheus, OTLP, several processes.

The Ray tests share one local cluster (``ray.init(num_cpus=4)``, no dashboard)
and drive the actors of :mod:`examples.ray_workers`, the code the guide
"Running with many workers" shows. Each actor is its own process with its own
registry and exporter. Skipped locally when Ray or Prometheus is missing;
failing under ``CI``, whose ``.ci/run`` installs both. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from codegen.catalog.model import Catalog
from codegen.live_check import check_paths, expand_paths
from examples import ray_workers
from examples.demo import parse_exposition
from metric_catalog.generated import dpo, grpo
from metric_catalog.tee import tee_metrics
from tests.otel_fixtures import clean_otel, prometheus_name
from tests.runtime.test_otlp_integration import Receiver
from tests.runtime.test_prometheus_integration import PrometheusServer, prometheus_binary

__all__ = ["clean_otel", "prometheus_binary"]  # fixtures used by name

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
_WAIT_SECONDS = 45.0
_WORKERS = 4
T = TypeVar("T")


def _wait_for(what: str, probe: Callable[[], T | None], seconds: float = _WAIT_SECONDS) -> T:
    """Poll ``probe`` until it returns something truthy; fail naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.5)
    pytest.fail(f"{what}: not within {seconds} s (last seen: {last!r})")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A local Ray cluster on this machine; skipped without Ray, failing under CI."""
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("ray is not installed, but CI must install it (the 'ray' extra)")
        pytest.skip("ray not installed (pip install -e '.[ray]')")
    ray.init(
        num_cpus=4,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": {"RAY_DEDUP_LOGS": "0"}},
    )
    yield ray
    ray.shutdown()


def _stop(ray: Any, workers: list[Any]) -> None:
    for worker in workers:
        with contextlib.suppress(Exception):
            ray.get(worker.close.remote(), timeout=15)
        ray.kill(worker)


# --- Prometheus discovers every actor through the target files ---------------------------


def _discovering_prometheus(binary: str, targets: Path, workdir: Path) -> PrometheusServer:
    """A Prometheus configured with the guide's file-discovery job, pointed at ``targets``.

    The job is the first of ``examples/prometheus/many-workers.yml``, the
    snippet the guide ships, with its folder and refresh interval swapped for
    the test's.
    """
    shipped = (REPO / "examples" / "prometheus" / "many-workers.yml").read_text(encoding="utf-8")
    job = shipped.split("scrape_configs:\n", 1)[1].split("\n\n  # Per-rank ports", 1)[0]
    job = "\n".join(line for line in job.splitlines() if not line.lstrip().startswith("#"))
    assert "/var/run/metric-catalog/targets/*.json" in job
    job = job.replace("/var/run/metric-catalog/targets", str(targets))
    job = job.replace("refresh_interval: 30s", "refresh_interval: 1s")
    workdir.mkdir()
    return PrometheusServer(binary, 0, workdir, scrape_configs=job + "\n")


def _by_rank(server: PrometheusServer, promql: str) -> dict[str, float]:
    return {s["metric"].get("rank", "?"): float(s["value"][1]) for s in server.query(promql)}


def test_prometheus_discovers_four_ray_actors_and_keeps_three_when_one_dies(
    ray_cluster: Any,
    prometheus_binary: str,
    clean_otel: None,
    repo_catalog: Catalog,
    tmp_path: Path,
) -> None:
    ray = ray_cluster
    # The driver tees first, so its registry is frozen: an owner imported late
    # inside an actor still works, because every actor has its own registry.
    tee_metrics({grpo.ENTROPY.logger_key: 0.0}, grpo.ENTROPY.prefix)
    targets, logs = tmp_path / "targets", tmp_path / "logs"
    env = {
        "OTEL_METRICS_EXPORTER": "prometheus",
        "METRIC_CATALOG_PROMETHEUS_SD_DIR": str(targets),
        "METRIC_CATALOG_PROMOTE": "rank",
    }
    server = _discovering_prometheus(prometheus_binary, targets, tmp_path / "prometheus")
    workers = ray_workers.start_workers(_WORKERS, env, jsonl_dir=str(logs), late_owner_ranks=(2,))
    try:
        for step in range(3):
            logged = ray.get([w.step.remote(step) for w in workers], timeout=30)
        assert len(list(targets.glob("*.json"))) == _WORKERS
        entropy = prometheus_name(grpo.ENTROPY)
        length = prometheus_name(grpo.RESPONSE_LENGTH_MEAN)
        expected = {str(rank): logged[rank][grpo.ENTROPY.name] for rank in range(_WORKERS)}
        seen = _wait_for(
            "4 rl_entropy series, one per rank",
            lambda: (got := _by_rank(server, entropy)) == expected and got,
        )
        assert seen == {"0": 1.02, "1": 2.02, "2": 3.02, "3": 4.02}
        lengths = _by_rank(server, length)
        assert lengths == {str(r): logged[r][grpo.RESPONSE_LENGTH_MEAN.name] for r in range(4)}
        late = prometheus_name(dpo.DPO_SFT_LOSS)
        assert _by_rank(server, late) == {"2": logged[2][dpo.DPO_SFT_LOSS.name]}
        (series,) = server.query(f'{entropy}{{rank="3"}}')
        assert series["metric"]["job"] == "rl-workers"
        assert series["metric"]["local_rank"] == "3"  # a target label from the target file
        assert "ray_actor_id" in series["metric"]

        ray.kill(workers[3])  # no exit handler runs: its target file stays, the target goes down
        survivors = workers[:3]
        last = ray.get([w.step.remote(10) for w in survivors], timeout=30)
        after = {str(rank): last[rank][grpo.ENTROPY.name] for rank in range(3)}
        _wait_for(
            "the 3 surviving actors' new values",
            lambda: all(_by_rank(server, entropy).get(r) == v for r, v in after.items()),
        )
        up = _wait_for(
            "the killed actor's target down",
            lambda: (
                (u := {s["metric"]["local_rank"]: s["value"][1] for s in server.query("up")}).get(
                    "3"
                )
                == "0"
                and u
            ),
        )
        assert up == {"0": "1", "1": "1", "2": "1", "3": "0"}
    finally:
        _stop(ray, workers)
        server.stop()
    # Closed actors removed their target files; the killed one could not.
    assert len(list(targets.glob("*.json"))) == 1
    # Their JSONL logs, one per worker, check clean together.
    report = check_paths(expand_paths([str(logs / "run-rank*.jsonl")]), repo_catalog)
    assert report.records == 4 * 3 + 3
    assert report.kinds() <= {"missing"}, report.to_text()


# --- OTLP: every actor's points arrive, told apart by identity ----------------------------


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """An OTLP/HTTP receiver on a loopback port, serving from a thread."""
    import threading

    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def _attributes(resource: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for attribute in resource.attributes:
        value = attribute.value
        out[attribute.key] = getattr(value, value.WhichOneof("value"))
    return out


def test_four_ray_actors_push_otlp_told_apart_by_their_identity(
    ray_cluster: Any, receiver: Receiver, clean_otel: None
) -> None:
    ray = ray_cluster
    env = {
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.base_url,
        "OTEL_SERVICE_NAME": "grpo-policy",
    }
    workers = ray_workers.start_workers(_WORKERS, env)
    try:
        logged = ray.get([w.step.remote(0) for w in workers], timeout=30)
        assert all(ray.get([w.flush.remote() for w in workers], timeout=30))
    finally:
        _stop(ray, workers)
    by_rank: dict[int, tuple[dict[str, Any], float]] = {}
    for _path, _headers, request in receiver.requests:
        for resource_metrics in request.resource_metrics:
            resource = _attributes(resource_metrics.resource)
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == grpo.ENTROPY.name:
                        by_rank[resource["rank"]] = (
                            resource,
                            metric.gauge.data_points[0].as_double,
                        )
    assert sorted(by_rank) == [0, 1, 2, 3]
    for rank, (resource, value) in by_rank.items():
        assert value == logged[rank][grpo.ENTROPY.name]
        assert resource["local_rank"] == rank
        assert resource["world_size"] == _WORKERS
        assert resource["service.name"] == "grpo-policy"
        assert resource["ray.actor.class"] == "TrainingWorker"
    assert len({r["ray.actor.id"] for r, _ in by_rank.values()}) == _WORKERS
    assert len({r["ray.node.id"] for r, _ in by_rank.values()}) == 1


# --- plain processes on one node, default settings ----------------------------------------


def _scrape(endpoint: list[Any]) -> dict[str, float]:
    host, port = endpoint
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=5) as response:
        return parse_exposition(response.read().decode("utf-8"))


def test_three_plain_processes_with_default_settings_each_keep_their_metrics(
    clean_otel: None,
) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "src")]),
        "OTEL_METRICS_EXPORTER": "prometheus",  # and nothing else: the default port
    }
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "examples.torchrun_worker",
                "--steps",
                "2",
                "--serve",
                "60",
                "--value-offset",
                str(i),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )
        for i in range(3)
    ]
    try:
        reports = []
        for process in processes:
            assert process.stdout is not None
            line = process.stdout.readline()  # printed once its steps ran and it serves
            assert line, process.stderr.read() if process.stderr else ""
            reports.append(json.loads(line))
        ports = sorted(r["endpoint"][1] for r in reports)
        assert len(set(ports)) == 3
        assert all(9464 <= p < 9464 + 32 for p in ports)
        for report in reports:
            scraped = _scrape(report["endpoint"])
            for name, value in report["values"].items():
                row = grpo.ENTROPY if name == grpo.ENTROPY.name else grpo.RESPONSE_LENGTH_MEAN
                assert scraped[prometheus_name(row)] == value
    finally:
        errors = []
        for process in processes:
            try:
                _out, err = process.communicate(input="", timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                _out, err = process.communicate(timeout=10)
            errors.append(err)
    assert [p.returncode for p in processes] == [0, 0, 0]
    assert not any("MetricCatalogWarning" in e for e in errors), errors
