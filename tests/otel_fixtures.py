"""Fixtures and helpers for the OpenTelemetry tee tests (imported by those test modules).

Every fixture here isolates the three pieces of process state the tee touches:
the row registry, the exporter/provider state and the warn-once memory.
"""

from __future__ import annotations

import json
import os
import re
import socket
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import exporters, identity, otel, vocabulary
from metric_catalog._warn import MetricCatalogWarning
from metric_catalog.vocabulary import MetricAttribute, RecordedMetric, TeedMetric

__all__ = [
    "PHASE",
    "RANK",
    "SAMPLE_RECORDED",
    "SAMPLE_TEED",
    "Series",
    "caught_warnings",
    "clean_otel",
    "collect",
    "expected_from_jsonl",
    "free_port",
    "otel_reader",
    "prometheus_name",
    "register_samples",
]

_ENV_PREFIXES = ("OTEL_", "METRIC_CATALOG_")
_LAUNCHER_ENV = ("RANK", "LOCAL_RANK", "WORLD_SIZE")

RANK = MetricAttribute("rank", "int", requirement="opt_in")
"""An open int attribute the sample rows declare (tests pass it as an attribute)."""
PHASE = MetricAttribute("phase", values=("train", "validation"))
"""An enum attribute the sample rows declare."""

SAMPLE_TEED = (
    TeedMetric("loss", "rl.policy.loss", "gauge", "", "Training loss", attributes=(RANK, PHASE)),
    TeedMetric("reward", "rl.reward.mean", "gauge", "", "Mean rollout reward"),
    TeedMetric("global_valid_toks", "rl.train.valid_tokens", "counter", "{token}", "Valid tokens"),
    TeedMetric("kl", "rl.kl.divergence", "up_down_counter", "1", "KL drift"),
    TeedMetric(
        "generation",
        "rl.generation.duration",
        "histogram",
        "s",
        "Rollout generation time",
        prefix="timing/train",
        attributes=(RANK, MetricAttribute("phase")),
    ),
    TeedMetric("accuracy", "rl.validation.accuracy", "gauge", "1", "Val acc", prefix="validation"),
    TeedMetric("efficiency/total_s", "rl.efficiency.total", "gauge", "s", "Run total", prefix=""),
)
"""One row per kind, across several prefixes (including ``""`` and a ``/`` in a key)."""

SAMPLE_RECORDED = (
    RecordedMetric("rl.vllm.batch.duration", "histogram", "s", "Batched generate() wall clock"),
    RecordedMetric(
        "rl.vllm.queue.depth",
        "gauge",
        "{request}",
        "Requests waiting",
        attributes=(MetricAttribute("engine"),),
    ),
)
"""Directly recorded rows."""


def register_samples() -> None:
    """Register :data:`SAMPLE_TEED` and :data:`SAMPLE_RECORDED`."""
    vocabulary.register_teed_metrics(SAMPLE_TEED)
    vocabulary.register_recorded_metrics(SAMPLE_RECORDED)


@pytest.fixture
def clean_otel(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Empty registry, no exporter state, no OTEL_*/METRIC_CATALOG_*/launcher env, no identity.

    Also a fresh warn-once memory.
    """
    for name in list(os.environ):
        if name.startswith(_ENV_PREFIXES) or name in _LAUNCHER_ENV:
            monkeypatch.delenv(name)
    vocabulary._reset_for_tests()
    identity._reset_for_tests()
    exporters.reset_for_tests()
    otel.set_run_config(None)
    yield
    otel.set_run_config(None)
    exporters.reset_for_tests()
    identity._reset_for_tests()
    vocabulary._reset_for_tests()


@pytest.fixture
def otel_reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """An InMemoryMetricReader on a provider the tee records into; sample rows registered."""
    register_samples()
    with installed_reader() as reader:
        yield reader


@contextmanager
def installed_reader() -> Iterator[InMemoryMetricReader]:
    """An in-memory reader on a provider the tee records into; torn down (identity too) after."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)
    try:
        yield reader
    finally:
        otel.set_identity({})
        exporters.reset_for_tests()
        provider.shutdown()


@dataclass(frozen=True)
class Series:
    """One collected metric stream, flattened for assertions."""

    name: str
    unit: str
    description: str
    points: tuple[Any, ...]

    @property
    def value(self) -> float:
        """Value of the single point: gauge/sum value, or histogram sum."""
        (point,) = self.points
        return float(point.value if hasattr(point, "value") else point.sum)


def collect(reader: InMemoryMetricReader) -> dict[str, Series]:
    """Every metric the reader sees now, by name (``{}`` when nothing was recorded)."""
    data = reader.get_metrics_data()
    found: dict[str, Series] = {}
    if data is None:
        return found
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found[metric.name] = Series(
                    metric.name,
                    metric.unit or "",
                    metric.description or "",
                    tuple(metric.data.data_points),
                )
    return found


class caught_warnings:  # noqa: N801 - used like warnings.catch_warnings
    """Record :class:`MetricCatalogWarning` messages (all of them, no dedup by location)."""

    def __init__(self) -> None:
        self._cm = warnings.catch_warnings(record=True)
        self._log: list[warnings.WarningMessage] = []

    def __enter__(self) -> caught_warnings:
        self._log = self._cm.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._cm.__exit__(exc_type, exc, tb)

    @property
    def messages(self) -> list[str]:
        """The metric-catalog warnings seen so far, in order."""
        return [str(w.message) for w in self._log if issubclass(w.category, MetricCatalogWarning)]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prometheus_name(row: TeedMetric | RecordedMetric) -> str:
    """The name Prometheus shows for ``row``, by the exporter's documented translation.

    Written out from the rules (non-alphanumerics -> ``_``; unit ``s`` ->
    ``_seconds``, ``By`` -> ``_bytes``, ``{x}/s`` -> ``_per_second``, ``1`` and
    ``{x}`` -> nothing; counters get ``_total``) rather than by calling the
    exporter, so a change in the exporter's mapping shows up as a failure.
    """
    suffixes = {"s": "_seconds", "By": "_bytes", "ms": "_milliseconds"}
    name = re.sub(r"[^a-zA-Z0-9:]+", "_", row.name)
    unit = row.unit
    if unit in suffixes:
        name += suffixes[unit]
    elif unit.startswith("{") and unit.endswith("}/s"):
        name += "_per_second"
    if row.kind == "counter":
        name += "_total"
    return name


def expected_from_jsonl(path: Path) -> dict[str, float]:
    """What each teed series should read after the run logged in ``path``, by Prometheus name.

    Gauges keep the last value logged, counters the sum of their per-step deltas.
    """
    rows = {(row.prefix, row.logger_key): row for row in vocabulary.teed_metrics()}
    expected: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "metrics" not in record:
            continue  # a recorded point's line (checked through the series' count)
        for key, value in record["metrics"].items():
            row = rows.get((record["prefix"], key))
            if row is None or row.kind == "histogram":
                continue  # histograms are checked through their _count/_sum
            name = prometheus_name(row)
            if row.kind in ("counter", "up_down_counter"):
                expected[name] = expected.get(name, 0.0) + float(value)
            else:
                expected[name] = float(value)
    return expected
