"""``emit``: a sample run of one loop, planned from the catalog, through the real tee."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.emit import EmitError, applies_to_loop, plan_steps
from codegen.live_check import check_file

ROOT = Path(__file__).resolve().parents[2]


def _loops(catalog: Catalog) -> list[str]:
    return sorted(loop.name for loop in catalog.loops())


def _emit(*args: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", "emit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "OTEL_METRICS_EXPORTER": "none"},
        check=False,
    )


def test_plan_logs_every_row_of_the_loop_once_due(repo_catalog: Catalog) -> None:
    loop = "grpo_sync"
    steps = list(plan_steps(repo_catalog, loop, 12))
    logged = {(call.prefix, key) for step in steps for call in step.logged for key in call.metrics}
    for _, row in repo_catalog.rows():
        if row.logger_key is None or "{" in row.logger_key or "{" in (row.prefix or ""):
            continue
        expected = applies_to_loop(row, loop) and (row.first_step or 0) <= 12
        for prefix in row.prefixes:
            assert ((prefix, row.logger_key) in logged) is expected, row.name


def test_plan_fills_every_enum_value_of_a_family_at_each_step(repo_catalog: Catalog) -> None:
    categories = repo_catalog.attributes()["rl.efficiency.category"].typed_values()
    assert categories
    for step in plan_steps(repo_catalog, "grpo_sync", 2):
        for prefix in ("train", ""):
            keys = {key for call in step.logged if call.prefix == prefix for key in call.metrics}
            assert {f"efficiency/{category}_s" for category in categories} <= keys


def test_plan_gives_an_open_attribute_sample_values_of_one_segment(repo_catalog: Catalog) -> None:
    step = next(iter(plan_steps(repo_catalog, "grpo_sync", 1)))
    keys = {key for call in step.logged if call.prefix == "timing/setup" for key in call.metrics}
    assert keys == {"sample0_time_s", "sample1_time_s"}


def test_plan_is_deterministic_for_a_seed(repo_catalog: Catalog) -> None:
    first = list(plan_steps(repo_catalog, "ppo", 3, seed=7))
    again = list(plan_steps(repo_catalog, "ppo", 3, seed=7))
    other = list(plan_steps(repo_catalog, "ppo", 3, seed=8))
    assert first == again
    assert first != other


@pytest.mark.parametrize(
    ("loop", "steps", "message"),
    [
        ("no_such_loop", 3, "unknown loop 'no_such_loop'; declared loops: "),
        ("grpo_sync", 0, "at least one step"),
    ],
)
def test_plan_refuses_an_unknown_loop_or_no_steps(
    repo_catalog: Catalog, loop: str, steps: int, message: str
) -> None:
    with pytest.raises(EmitError, match=re.escape(message)):
        list(plan_steps(repo_catalog, loop, steps))


def test_counter_values_are_positive_and_ratios_within_one(repo_catalog: Catalog) -> None:
    rows = {row.qualified_logger_key: row for _, row in repo_catalog.rows() if row.logger_key}
    for step in plan_steps(repo_catalog, "grpo_sync", 5):
        for call in step.logged:
            for key, value in call.metrics.items():
                row = rows.get(f"{call.prefix}/{key}" if call.prefix else key)
                if row is None:
                    continue  # a family key
                if row.kind == "counter":
                    assert value > 0, key
                if row.unit == "1":
                    assert 0 <= value <= 1, key


def test_emit_without_a_transport_is_refused() -> None:
    done = _emit("--loop", "grpo_sync")
    assert done.returncode == 2
    assert "--jsonl FILE, --otlp-endpoint URL and/or --prometheus HOST:PORT" in done.stderr


def test_emit_of_an_unknown_loop_exits_2_naming_the_declared_ones(tmp_path: Path) -> None:
    done = _emit("--loop", "nope", "--jsonl", str(tmp_path / "run.jsonl"))
    assert done.returncode == 2
    assert "unknown loop 'nope'; declared loops: " in done.stderr
    assert not (tmp_path / "run.jsonl").exists()


@pytest.mark.parametrize("loop", ["grpo_sync", "grpo_async", "ppo", "sft", "sft_v2", "dpo"])
def test_emit_jsonl_round_trip_is_clean_in_live_check(
    repo_catalog: Catalog, tmp_path: Path, loop: str
) -> None:
    if loop not in _loops(repo_catalog):
        pytest.skip(f"{loop} is not declared")
    log = tmp_path / f"{loop}.jsonl"
    done = _emit("--loop", loop, "--steps", "12", "--jsonl", str(log))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no warning from the tee: every value and attribute fits
    report = check_file(str(log), repo_catalog)
    assert report.findings == [], [f.kind for f in report.findings]
    applicable = {
        row.name
        for _, row in repo_catalog.rows()
        if row.logger_key is not None and applies_to_loop(row, loop) and (row.first_step or 0) <= 12
    }
    logged = {summary.row.name for summary in report.rows if summary.logged}
    assert applicable <= logged
    assert report.coverage.overall == 1.0, report.coverage.to_json()


# --- transports ----------------------------------------------------------------------


@pytest.fixture
def receiver() -> Iterator[object]:
    from tests.runtime.test_otlp_integration import Receiver

    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.integration
def test_emit_otlp_pushes_every_series_of_the_loop(repo_catalog: Catalog, receiver: object) -> None:
    from tests.runtime.test_otlp_integration import Receiver

    assert isinstance(receiver, Receiver)
    done = _emit("--loop", "grpo_sync", "--steps", "3", "--otlp", receiver.base_url)
    assert done.returncode == 0, done.stderr
    assert receiver.requests, "the collector received nothing"
    assert {path for path, _, _ in receiver.requests} == {"/v1/metrics"}
    seen: dict[str, set[tuple[tuple[str, str], ...]]] = {}
    for _, _, request in receiver.requests:
        for resource in request.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    points = (
                        metric.gauge.data_points
                        or metric.sum.data_points
                        or metric.histogram.data_points
                    )
                    sets = seen.setdefault(metric.name, set())
                    for point in points:
                        sets.add(
                            tuple(sorted((a.key, a.value.string_value) for a in point.attributes))
                        )
    expected = {
        row.name
        for _, row in repo_catalog.rows()
        if row.logger_key is None or applies_to_loop(row, "grpo_sync")
    } - {row.name for _, row in repo_catalog.rows() if (row.first_step or 0) > 3}
    assert expected <= set(seen)
    categories = {
        str(v) for v in repo_catalog.attributes()["rl.efficiency.category"].typed_values()
    }
    assert {dict(s)["rl.efficiency.category"] for s in seen["rl.efficiency.seconds"]} == categories
    # Derived attributes arrive filled by the tee, consistent with their source.
    assert all(
        {"rl.efficiency.measurement", "rl.efficiency.window", "rl.bucket"} <= dict(s).keys()
        for s in seen["rl.efficiency.seconds"]
    )


def _scrape(url: str, deadline: float) -> str:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return str(response.read().decode())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.integration
def test_emit_prometheus_serves_the_catalogs_prometheus_names(repo_catalog: Catalog) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "codegen",
            "emit",
            "--loop",
            "grpo_sync",
            "--steps",
            "2",
            "--prometheus",
            "127.0.0.1:0",
            "--duration",
            "30",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = ""
        for line in process.stdout:
            if line.startswith("prometheus: "):
                url = line.split()[1]
                break
        assert url.startswith("http://127.0.0.1:"), process.stderr
        text = _scrape(url, time.monotonic() + 10)
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert process.returncode == 0
    families = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}
    expected = {
        row.prometheus_name
        for _, row in repo_catalog.rows()
        if (row.logger_key is None or applies_to_loop(row, "grpo_sync"))
        and (row.first_step or 0) <= 2
    }
    assert expected <= families


UNIT_CATALOG = """\
owner: timing
module: timing
description: Durations and sizes in the units the code logs.
prefix: perf
teed:
  - logger_key: step_ms
    name: rl.perf.step_ms
    kind: gauge
    unit: ms
    description: Step time, logged in milliseconds.
  - logger_key: step_s
    name: rl.perf.step_s
    kind: gauge
    unit: s
    description: Step time, logged in seconds.
  - logger_key: step_min
    name: rl.perf.step_min
    kind: gauge
    unit: min
    description: Step time, logged in minutes.
  - logger_key: peak_gb
    name: rl.perf.peak_gb
    kind: gauge
    unit: GiBy
    description: Peak memory, logged in GiB.
  - logger_key: peak_bytes
    name: rl.perf.peak_bytes
    kind: gauge
    unit: By
    description: Peak memory, logged in bytes.
"""


@pytest.mark.parametrize(
    ("key", "low", "high"),
    [
        ("step_ms", 50.0, 5000.0),  # 0.05 s to 5 s, in ms
        ("step_s", 0.05, 5.0),
        ("step_min", 0.05 / 60, 5.0 / 60),
        ("peak_gb", 1 / 1024, 1.0),  # 1 MiB to 1 GiB, in GiB
        ("peak_bytes", float(1 << 20), float(1 << 30)),
    ],
)
def test_emitted_values_are_sized_for_the_unit_the_code_logs(
    tmp_path: Path, key: str, low: float, high: float
) -> None:
    """A row logged in ms gets millisecond-sized values: the base-unit size, in that unit."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "timing.yaml").write_text(UNIT_CATALOG, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert result.catalog is not None, result.diagnostics
    values = [
        call.metrics[key]
        for step in plan_steps(result.catalog, None, 20, seed=3)
        for call in step.logged
        if key in call.metrics
    ]
    assert len(values) == 20
    assert all(low <= value <= high for value in values), (min(values), max(values))
