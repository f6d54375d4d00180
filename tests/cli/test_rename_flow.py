"""Renaming a series while the code keeps its logger key, from YAML to exported series.

The guide's flow: add the new row, deprecate the old one with ``replaced_by``,
both under the code's unchanged ``(prefix, logger_key)``. The catalog accepts
that pair (and only it), the generated constant of the old row names its
replacement, the registry takes both, and one logged value lands in both series.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from codegen.catalog.pipeline import load_and_check
from codegen.generate.python import render_python_module
from metric_catalog import exporters, vocabulary
from metric_catalog.exporters import ExporterConfig
from metric_catalog.tee import tee_metrics
from tests.otel_fixtures import clean_otel, collect, free_port
from tests.runtime.test_prometheus_integration import PrometheusServer, prometheus_binary

__all__ = ["clean_otel", "prometheus_binary"]  # fixtures used by name

CATALOG = """\
owner: nemo_rl.algorithms.loss
module: renamed
description: Loss metrics mid-rename.
teed:
  - logger_key: kl_penalty
    name: rl.kl.divergence
    kind: gauge
    unit: "1"
    description: KL divergence to the reference policy.
    stability: stable
    deprecated: {since: "0.3.0", replaced_by: rl.kl.reference}
  - logger_key: kl_penalty
    name: rl.kl.reference
    kind: gauge
    unit: "1"
    description: KL divergence to the reference policy.
    stability: stable
"""


@pytest.fixture
def generated(tmp_path: Path, clean_otel: None) -> Iterator[ModuleType]:
    """The generated module of :data:`CATALOG`, imported (its rows declared)."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "renamed.yaml").write_text(CATALOG, encoding="utf-8")
    loaded = load_and_check(root=tmp_path)
    assert loaded.diagnostics == ()
    (catalog_file,) = loaded.catalog.files
    path = tmp_path / "renamed.py"
    path.write_text(render_python_module(catalog_file), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("rename_flow_generated", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def test_old_row_constant_names_its_replacement(generated: ModuleType) -> None:
    """``KL_DIVERGENCE.replaced_by == "rl.kl.reference"``; both share the logger key."""
    old, new = generated.KL_DIVERGENCE, generated.KL_REFERENCE
    assert isinstance(old, vocabulary.TeedMetric)
    assert old.replaced_by == "rl.kl.reference"
    assert new.replaced_by is None
    assert (old.prefix, old.logger_key) == (new.prefix, new.logger_key) == ("train", "kl_penalty")


def test_one_logged_value_is_exported_under_both_names(generated: ModuleType) -> None:
    """The tee records the shared key into the deprecated series and its replacement."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)
    try:
        tee_metrics({"kl_penalty": 0.25}, prefix="train")
        series = collect(reader)
    finally:
        exporters.reset_for_tests()
        provider.shutdown()
    assert series["rl.kl.divergence"].value == pytest.approx(0.25)
    assert series["rl.kl.reference"].value == pytest.approx(0.25)


@pytest.mark.integration
def test_real_prometheus_shows_both_series_of_the_rename(
    generated: ModuleType, prometheus_binary: str, tmp_path: Path
) -> None:
    """A real Prometheus scraping the tee's endpoint has the old and the new series."""
    port = free_port()
    exporters.configure(
        config=ExporterConfig(
            exporters=("prometheus",),
            prometheus_host="127.0.0.1",
            prometheus_port=port,
            prometheus_port_span=1,
        )
    )
    workdir = tmp_path / "prometheus"
    workdir.mkdir()
    server = PrometheusServer(prometheus_binary, port, workdir)
    try:
        tee_metrics({"kl_penalty": 0.25}, prefix="train")
        found: dict[str, float] = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(found) < 2:  # both series
            assert server.process.poll() is None, server.log_path.read_text()
            for series in server.query('{__name__=~"rl_kl_.+"}'):
                found[series["metric"]["__name__"]] = float(series["value"][1])
            time.sleep(0.5)
    finally:
        server.stop()
        exporters.shutdown()
    assert found == {"rl_kl_divergence": 0.25, "rl_kl_reference": 0.25}
