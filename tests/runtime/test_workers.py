"""Many workers in one run: identity, promoted labels, Prometheus ports and target files, OTLP.

Everything here runs in this process on loopback; the real Ray cluster, the
real Prometheus and several processes are in ``test_workers_integration.py``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import exporters, identity
from metric_catalog.exporters import ExporterConfig, ExporterConfigError
from metric_catalog.tee import record_metrics, tee_metrics
from tests.otel_fixtures import caught_warnings, clean_otel, collect, register_samples

__all__ = ["clean_otel"]  # fixture used by name


# --- identity -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, {}),
        (
            {"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "8"},
            {"rank": 3, "local_rank": 1, "world_size": 8},
        ),
        ({"RANK": " 0 "}, {"rank": 0}),
        ({"LOCAL_RANK": ""}, {}),
        ({"OTEL_SERVICE_NAME": "policy"}, {"service.name": "policy"}),
        (
            {"OTEL_RESOURCE_ATTRIBUTES": "rl.role=policy, host.name=n%2C1,bad,=x"},
            {"rl.role": "policy", "host.name": "n,1"},
        ),
        # OTEL_* settings are explicit, so they win over what the launcher set.
        ({"RANK": "3", "OTEL_RESOURCE_ATTRIBUTES": "rank=7"}, {"rank": "7"}),
        (
            {"OTEL_RESOURCE_ATTRIBUTES": "service.name=a", "OTEL_SERVICE_NAME": "b"},
            {"service.name": "b"},
        ),
    ],
)
def test_identity_is_read_from_the_launcher_and_the_opentelemetry_variables(
    clean_otel: None, env: dict[str, str], expected: dict[str, object]
) -> None:
    assert identity.resource_attributes(env) == expected


@pytest.mark.parametrize(
    ("var", "raw"), [("RANK", "three"), ("LOCAL_RANK", "-1"), ("WORLD_SIZE", "2.0")]
)
def test_a_malformed_launcher_variable_is_left_out_with_one_warning(
    clean_otel: None, var: str, raw: str
) -> None:
    with caught_warnings() as caught:
        assert identity.resource_attributes({var: raw}) == {}
        assert identity.resource_attributes({var: raw}) == {}
    assert len(caught.messages) == 1
    assert f"{var}={raw!r}" in caught.messages[0]


def test_set_worker_identity_wins_over_the_environment_and_none_removes_it(
    clean_otel: None,
) -> None:
    identity.set_worker_identity(rank=5, **{"rl.worker.role": "generation"})
    env = {"RANK": "1", "OTEL_RESOURCE_ATTRIBUTES": "rank=2"}
    assert identity.resource_attributes(env) == {"rank": 5, "rl.worker.role": "generation"}
    identity.set_worker_identity(rank=None)
    assert identity.resource_attributes(env) == {"rank": "2", "rl.worker.role": "generation"}
    with pytest.raises(TypeError, match=r"rank=\.\.\.\): expected str, int, float or bool"):
        identity.set_worker_identity(rank=[1])  # type: ignore[arg-type]


def test_set_worker_identity_after_the_first_tee_is_warned_once_and_changes_nothing(
    promoted_reader: InMemoryMetricReader,
) -> None:
    tee_metrics({"loss": 0.5}, "train")
    with caught_warnings() as caught:
        identity.set_worker_identity(rank=9)
        identity.set_worker_identity(rank=9)
    tee_metrics({"loss": 0.75}, "train")
    assert len(caught.messages) == 1
    assert "call it before the first tee" in caught.messages[0]
    (point,) = collect(promoted_reader)["rl.policy.loss"].points
    assert dict(point.attributes or {}) == {"rank": 3, "local_rank": 1}


def test_ray_is_never_imported_for_identity(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "ray", raising=False)
    assert identity.ray_attributes() == {}
    assert "ray" not in sys.modules


def test_a_process_that_tees_and_exports_never_imports_ray() -> None:
    script = (
        "import sys\n"
        "from metric_catalog import vocabulary\n"
        "from metric_catalog.tee import tee_metrics\n"
        "vocabulary.register_teed_metrics([vocabulary.TeedMetric('loss', 'rl.policy.loss')])\n"
        "tee_metrics({'loss': 1.0}, 'train')\n"
        "from metric_catalog import exporters\n"
        "assert exporters.prometheus_address() is not None\n"
        "print('ray' in sys.modules)\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": "src:.",
        "OTEL_METRICS_EXPORTER": "prometheus",
        "METRIC_CATALOG_PROMETHEUS_PORT": "0",
        "METRIC_CATALOG_PROMOTE": "rank",
        "RANK": "1",
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


class _FakeContext:
    def __init__(self, actor_id: str | None) -> None:
        self._actor_id = actor_id
        descriptor = types.SimpleNamespace(class_name="examples.ray_workers.PolicyWorker")
        self.current_actor = types.SimpleNamespace(
            _ray_actor_creation_function_descriptor=descriptor
        )

    def get_node_id(self) -> str:
        return "node-1"

    def get_job_id(self) -> str:
        return "01000000"

    def get_actor_id(self) -> str | None:
        return self._actor_id


@pytest.mark.parametrize(
    ("initialized", "actor_id", "expected"),
    [
        (False, "a1", {}),
        (True, None, {"ray.node.id": "node-1", "ray.job.id": "01000000"}),
        (
            True,
            "a1",
            {
                "ray.node.id": "node-1",
                "ray.job.id": "01000000",
                "ray.actor.id": "a1",
                "ray.actor.class": "PolicyWorker",
            },
        ),
    ],
)
def test_ray_ids_and_the_actor_class_are_read_when_ray_runs(
    clean_otel: None,
    monkeypatch: pytest.MonkeyPatch,
    initialized: bool,
    actor_id: str | None,
    expected: dict[str, str],
) -> None:
    fake = types.SimpleNamespace(
        is_initialized=lambda: initialized, get_runtime_context=lambda: _FakeContext(actor_id)
    )
    monkeypatch.setitem(sys.modules, "ray", fake)
    assert identity.ray_attributes() == expected


def test_a_broken_ray_leaves_the_ray_attributes_out_with_one_warning(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> object:
        raise RuntimeError("no worker")

    fake = types.SimpleNamespace(is_initialized=lambda: True, get_runtime_context=broken)
    monkeypatch.setitem(sys.modules, "ray", fake)
    with caught_warnings() as caught:
        assert identity.resource_attributes({"RANK": "2"}) == {"rank": 2}
    assert len(caught.messages) == 1
    assert "RuntimeError: no worker" in caught.messages[0]


@pytest.mark.parametrize(
    ("promote", "expected", "warned"),
    [
        ("", {}, ""),
        ("rank", {"rank": 3}, ""),
        ("rank, local_rank,rank", {"rank": 3, "local_rank": 1}, ""),
        ("rank,world_size", {"rank": 3}, "the launcher sets WORLD_SIZE"),
        ("rl.worker.role", {}, "OTEL_RESOURCE_ATTRIBUTES"),
    ],
)
def test_promote_picks_identity_attributes_and_names_a_missing_one(
    clean_otel: None, promote: str, expected: dict[str, object], warned: str
) -> None:
    env = {"RANK": "3", "LOCAL_RANK": "1", "METRIC_CATALOG_PROMOTE": promote}
    with caught_warnings() as caught:
        assert identity.promoted_attributes(environ=env) == expected
    assert len(caught.messages) == (1 if warned else 0)
    if warned:
        assert warned in caught.messages[0]


@pytest.mark.parametrize(
    ("attribute", "label"),
    [("rank", "rank"), ("ray.node.id", "ray_node_id"), ("k8s-pod", "k8s_pod"), ("1x", "_1x")],
)
def test_attribute_names_become_prometheus_label_names(attribute: str, label: str) -> None:
    assert identity.label_name(attribute) == label


def test_worker_label_names_the_rank_or_else_host_and_pid() -> None:
    assert identity.worker_label({"rank": 3}) == "rank3"
    assert identity.worker_label({}).endswith(f"-{__import__('os').getpid()}")


# --- promoted identity on every point -----------------------------------------------------


@pytest.fixture
def promoted_reader(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InMemoryMetricReader]:
    """A caller's provider, with RANK=3 and LOCAL_RANK=1 promoted."""
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("METRIC_CATALOG_PROMOTE", "rank,local_rank")
    register_samples()
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)
    yield reader
    exporters.reset_for_tests()
    provider.shutdown()


def test_promoted_identity_is_on_every_teed_and_recorded_point(
    promoted_reader: InMemoryMetricReader,
) -> None:
    tee_metrics({"loss": 0.5, "global_valid_toks": 10}, "train")
    tee_metrics({"generation": 1.0}, "timing/train", attributes={"phase": "rollout"})
    record_metrics({"vllm_queue_depth": 2})
    series = collect(promoted_reader)
    assert {name: [dict(p.attributes) for p in s.points] for name, s in series.items()} == {
        "rl.policy.loss": [{"rank": 3, "local_rank": 1}],
        "rl.train.valid_tokens": [{"rank": 3, "local_rank": 1}],
        "rl.generation.duration": [{"phase": "rollout", "rank": 3, "local_rank": 1}],
        "rl.vllm.queue.depth": [{"rank": 3, "local_rank": 1}],
    }


def test_promoted_identity_adds_no_attribute_set_to_a_series(
    promoted_reader: InMemoryMetricReader,
) -> None:
    for step in range(5):
        tee_metrics({"loss": float(step)}, "train")
    (point,) = collect(promoted_reader)["rl.policy.loss"].points  # one set, not one per step
    assert point.value == 4.0


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return str(response.read().decode())


def test_prometheus_shows_promoted_labels_and_the_identity_on_target_info(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_samples()
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "grpo-policy")
    monkeypatch.setenv("METRIC_CATALOG_PROMOTE", "rank")
    exporters.configure(config=ExporterConfig(exporters=("prometheus",), prometheus_port=0))
    tee_metrics({"loss": 0.5}, "train")
    address = exporters.prometheus_address()
    assert address is not None
    text = _scrape(address[1])
    assert 'rl_policy_loss{rank="3"} 0.5' in text
    (target_info,) = [line for line in text.splitlines() if line.startswith("target_info{")]
    assert 'rank="3"' in target_info
    assert 'service_name="grpo-policy"' in target_info


# --- Prometheus ports per local rank ------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "span", "local_rank", "expected"),
    [
        (9464, 1, 0, [9464]),
        (9464, 1, 3, [9464]),
        (9464, 4, 0, [9464, 9465, 9466, 9467]),
        (9464, 4, 2, [9466, 9467, 9464, 9465]),
        (9464, 4, 6, [9466, 9467, 9464, 9465]),
        (65534, 4, 1, [65535, 65534]),
        (0, 8, 5, [0]),
    ],
)
def test_each_local_rank_tries_its_own_port_first_then_the_rest_of_the_range(
    base: int, span: int, local_rank: int, expected: list[int]
) -> None:
    config = ExporterConfig(prometheus_port=base, prometheus_port_span=span)
    assert exporters.prometheus_ports(config, local_rank) == expected


def _free_range(size: int) -> int:
    """A base port with ``size`` consecutive loopback ports free right now."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = int(probe.getsockname()[1])
        if base + size > 65535:
            continue
        try:
            socks = []
            for port in range(base, base + size):
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
        return base
    pytest.skip("no free range of loopback ports")


@pytest.mark.parametrize(
    ("env", "offset"),
    [
        ({"LOCAL_RANK": "2"}, 2),
        ({"OTEL_RESOURCE_ATTRIBUTES": "local_rank=1"}, 1),
        ({"LOCAL_RANK": "x"}, 0),
    ],
)
def test_the_local_rank_picks_the_port_of_the_range(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], offset: int
) -> None:
    register_samples()
    base = _free_range(3)
    for name, value in {
        "OTEL_METRICS_EXPORTER": "prometheus",
        "METRIC_CATALOG_PROMETHEUS_PORT": str(base),
        "METRIC_CATALOG_PROMETHEUS_PORT_SPAN": "3",
        **env,
    }.items():
        monkeypatch.setenv(name, value)
    with caught_warnings():
        tee_metrics({"loss": 2.0}, "train")
    assert exporters.prometheus_address() == ("127.0.0.1", base + offset)


def test_a_taken_port_moves_the_process_to_the_next_free_one_of_the_range(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_samples()
    base = _free_range(3)
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "prometheus")
    monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_PORT", str(base))
    monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_PORT_SPAN", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    with socket.socket() as busy, caught_warnings() as caught:
        busy.bind(("127.0.0.1", base + 1))  # LOCAL_RANK 1's own port
        busy.listen(1)
        tee_metrics({"loss": 2.0}, "train")
        assert exporters.prometheus_address() == ("127.0.0.1", base + 2)
    assert "rl_policy_loss 2.0" in _scrape(base + 2)
    assert caught.messages == []  # nothing is lost, so nothing to warn about


# --- Prometheus file-based service discovery ----------------------------------------------


def test_the_target_file_announces_a_free_port_with_the_identity_and_goes_at_exit(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    register_samples()
    folder = tmp_path / "targets"
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "prometheus")
    monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_SD_DIR", str(folder))
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("METRIC_CATALOG_PROMOTE", "rank")
    tee_metrics({"loss": 0.25}, "train")
    address = exporters.prometheus_address()
    path = exporters.prometheus_sd_file()
    assert address is not None
    assert path is not None
    assert [p.name for p in folder.iterdir()] == [Path(path).name]  # no temporary file left
    assert Path(path).suffix == ".json"
    (group,) = json.loads(Path(path).read_text(encoding="utf-8"))
    assert group == {
        "targets": [f"127.0.0.1:{address[1]}"],
        # rank is promoted, so every series carries it; as a target label it would clash
        "labels": {"local_rank": "1"},
    }
    assert 'rl_policy_loss{rank="3"} 0.25' in _scrape(address[1])
    assert exporters.shutdown() is True
    assert list(folder.iterdir()) == []


def test_an_unwritable_target_folder_keeps_the_endpoint_and_warns_once(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    register_samples()
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "prometheus")
    monkeypatch.setenv("METRIC_CATALOG_PROMETHEUS_SD_DIR", str(blocker / "targets"))
    with caught_warnings() as caught:
        tee_metrics({"loss": 1.0}, "train")
    address = exporters.prometheus_address()
    assert address is not None
    assert exporters.prometheus_sd_file() is None
    assert len(caught.messages) == 1
    assert "METRIC_CATALOG_PROMETHEUS_SD_DIR" in caught.messages[0]
    assert "rl_policy_loss 1.0" in _scrape(address[1])


def _drain(blackhole: socket.socket) -> None:
    """Hang up on exports abandoned on ``blackhole`` and wait (bounded) until they end."""
    blackhole.close()
    deadline = time.monotonic() + 10.0
    while exporters._PROCESS.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)
    assert exporters._PROCESS.in_flight == 0


# --- settings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"METRIC_CATALOG_PROMETHEUS_PORT_SPAN": "8"}, ExporterConfig(prometheus_port_span=8)),
        (
            {"METRIC_CATALOG_PROMETHEUS_SD_DIR": "/tmp/sd"},
            ExporterConfig(prometheus_port=0, prometheus_sd_dir="/tmp/sd"),
        ),
        (
            {"METRIC_CATALOG_PROMETHEUS_SD_DIR": "sd", "METRIC_CATALOG_PROMETHEUS_PORT": "9500"},
            ExporterConfig(prometheus_port=9500, prometheus_sd_dir="sd"),
        ),
        (
            {"METRIC_CATALOG_PROMETHEUS_SD_HOST": "node-3"},
            ExporterConfig(prometheus_sd_host="node-3"),
        ),
        ({"OTEL_METRIC_EXPORT_TIMEOUT": "2500"}, ExporterConfig(export_timeout_millis=2500.0)),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "2"}, ExporterConfig(otlp_timeout=2.0)),
        (
            {"OTEL_EXPORTER_OTLP_TIMEOUT": "2", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "0.5"},
            ExporterConfig(otlp_timeout=0.5),
        ),
    ],
)
def test_many_worker_settings_are_read_from_the_environment(
    env: dict[str, str], expected: ExporterConfig
) -> None:
    assert ExporterConfig.from_env(env) == expected


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"METRIC_CATALOG_PROMETHEUS_PORT_SPAN": "0"}, "METRIC_CATALOG_PROMETHEUS_PORT_SPAN"),
        ({"METRIC_CATALOG_PROMETHEUS_PORT_SPAN": "2.5"}, "whole number"),
        ({"OTEL_METRIC_EXPORT_TIMEOUT": "soon"}, "OTEL_METRIC_EXPORT_TIMEOUT"),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "0"}, "OTEL_EXPORTER_OTLP_TIMEOUT"),
        ({"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "inf"}, "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT"),
    ],
)
def test_invalid_many_worker_settings_raise_naming_the_variable(
    env: dict[str, str], names: str
) -> None:
    with pytest.raises(ExporterConfigError, match=names):
        ExporterConfig.from_env(env)


def test_the_otlp_timeouts_bound_an_export_to_a_dead_collector(clean_otel: None) -> None:
    register_samples()
    with socket.socket() as blackhole:  # accepts (via the backlog), never answers
        blackhole.bind(("127.0.0.1", 0))
        blackhole.listen(64)
        config = ExporterConfig(
            exporters=("otlp",),
            otlp_endpoint=f"http://127.0.0.1:{blackhole.getsockname()[1]}/v1/metrics",
            export_interval_millis=60_000,
            export_timeout_millis=1234.0,
            otlp_timeout=0.3,  # the default, 10 s, would still be waiting below
        )
        provider = exporters.configure(config=config)
        assert provider is not None
        (reader,) = provider._metric_readers
        assert reader._export_timeout_millis == 1234.0
        tee_metrics({"loss": 1.0}, "train")
        failures = exporters._PROCESS.failures
        with caught_warnings() as caught:
            flusher = threading.Thread(target=provider.force_flush, daemon=True)
            flusher.start()
            flusher.join(timeout=5.0)
            assert not flusher.is_alive()
            assert exporters._PROCESS.failures - failures == 1
            exporters.shutdown(timeout=0.1)
            _drain(blackhole)
        assert any("failed; training continues" in m for m in caught.messages)


# --- a dead collector never stalls training -----------------------------------------------


def test_tee_calls_finish_while_an_export_hangs_on_a_dead_collector(clean_otel: None) -> None:
    register_samples()
    done = threading.Event()

    def training() -> None:
        for step in range(200):
            tee_metrics({"loss": float(step), "global_valid_toks": 1}, "train")
        done.set()

    with socket.socket() as blackhole, caught_warnings():  # accepts, never answers
        blackhole.bind(("127.0.0.1", 0))
        blackhole.listen(64)
        config = ExporterConfig(
            exporters=("otlp",),
            otlp_endpoint=f"http://127.0.0.1:{blackhole.getsockname()[1]}/v1/metrics",
            export_interval_millis=20,
            otlp_timeout=2.0,
            shutdown_timeout=0.2,
        )
        exporters.configure(config=config)
        tee_metrics({"loss": 1.0}, "train")
        deadline = time.monotonic() + 5.0
        while exporters._PROCESS.in_flight == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        stuck_before = exporters._PROCESS.in_flight == 1  # an export hangs on the collector
        thread = threading.Thread(target=training, daemon=True)
        thread.start()
        thread.join(timeout=10.0)
        stuck_after = exporters._PROCESS.in_flight == 1
        exporters.shutdown()
        _drain(blackhole)
    assert stuck_before
    assert done.is_set()
    assert stuck_after  # the 200 steps ran while the export still hung
