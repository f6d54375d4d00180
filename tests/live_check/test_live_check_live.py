"""live-check over live telemetry: what the wire says about each series, judged against its row.

Points are built as OTLP and Prometheus deliver them (``TelemetryPoint``) and
judged through the same checker as logs; the transports themselves are
exercised in ``test_live_check_live_integration.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from codegen.catalog.model import Catalog
from codegen.live_check import LiveCheckReport, check_file, check_records
from codegen.runs.telemetry import TelemetryPoint, records_from_points

ROOT = Path(__file__).resolve().parents[2]


def _otlp(
    name: str,
    kind: str,
    unit: str,
    attributes: Mapping[str, Any] | None = None,
    *,
    value: float = 1.0,
    resource: Mapping[str, Any] | None = None,
) -> TelemetryPoint:
    return TelemetryPoint(
        "otlp", name, kind, unit, dict(attributes or {}), value, resource=dict(resource or {})
    )


def _prom(name: str, kind: str, labels: Mapping[str, str] | None = None) -> TelemetryPoint:
    return TelemetryPoint("prometheus", name, kind, "", dict(labels or {}), 1.0, source="scrape")


def _check(
    catalog: Catalog, points: list[TelemetryPoint], promoted: tuple[str, ...] = ()
) -> LiveCheckReport:
    return check_records(
        records_from_points(points, 1), catalog, source="live", promoted=promoted, multi=True
    )


def _kinds(report: LiveCheckReport) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for finding in report.findings:
        if finding.kind != "missing":
            found.setdefault(finding.kind, set()).add(finding.series or finding.key)
    return found


def test_points_that_match_their_rows_give_no_finding(repo_catalog: Catalog) -> None:
    report = _check(
        repo_catalog,
        [
            _otlp("rl.entropy", "gauge", ""),
            _otlp("rl.train.valid_tokens", "counter", "{token}", value=9),
            _prom("rl_entropy", "gauge", {"otel_scope_name": "metric_catalog", "job": "j"}),
        ],
    )
    assert _kinds(report) == {}
    logged = {s.row.name: s.logged for s in report.rows if s.logged}
    assert logged == {"rl.entropy": 2, "rl.train.valid_tokens": 1}


@pytest.mark.parametrize(
    ("point", "kind", "series"),
    [
        (_otlp("rl.not.declared", "gauge", ""), "undeclared_series", "rl.not.declared"),
        (_otlp("rl.entropy", "counter", ""), "kind_mismatch", "rl.entropy"),
        (_otlp("rl.entropy", "gauge", "s"), "unit_mismatch", "rl.entropy"),
        (
            _otlp("rl.entropy", "gauge", "", {"rl.bogus": "x"}),
            "undeclared_attribute",
            "rl.entropy",
        ),
        (
            _otlp("rl.entropy", "gauge", "", {"otel.metric.overflow": True}),
            "overflow",
            "rl.entropy",
        ),
        (
            _otlp(
                "rl.efficiency.seconds",
                "gauge",
                "s",
                {
                    "rl.efficiency.category": "not_a_category",
                    "rl.efficiency.measurement": "duration",
                    "rl.efficiency.window": "step",
                    "rl.bucket": "gen",
                },
            ),
            "attribute_value+missing_attribute",
            "rl.efficiency.seconds",
        ),
        (_prom("rl_entropy_ratio", "gauge"), "prometheus_name", "rl.entropy"),
        (_prom("rl_entropy", "counter"), "kind_mismatch", "rl.entropy"),
        (_prom("rl_entropy", "gauge", {"rl_bogus": "x"}), "undeclared_attribute", "rl.entropy"),
        (
            _prom("rl_entropy", "gauge", {"otel_metric_overflow": "true"}),
            "overflow",
            "rl.entropy",
        ),
        (_prom("totally_unknown_metric", "gauge"), "undeclared_series", "totally_unknown_metric"),
    ],
    ids=[
        "otlp-unknown-series",
        "otlp-wrong-kind",
        "otlp-wrong-unit",
        "otlp-undeclared-attribute",
        "otlp-overflow",
        "otlp-enum-value",
        "prometheus-other-name",
        "prometheus-wrong-kind",
        "prometheus-undeclared-label",
        "prometheus-overflow",
        "prometheus-unknown-family",
    ],
)
def test_each_wire_problem_is_its_own_finding(
    repo_catalog: Catalog, point: TelemetryPoint, kind: str, series: str
) -> None:
    # A value outside the enum is dropped, as the tee drops it: a required one is then missing.
    kinds = _kinds(_check(repo_catalog, [point]))
    assert kinds == {each: {series} for each in kind.split("+")}


def test_prometheus_labels_map_back_to_typed_attribute_values(repo_catalog: Catalog) -> None:
    labels = {
        "rl_efficiency_category": "generation",
        "rl_efficiency_measurement": "duration",
        "rl_efficiency_window": "step",
        "rl_bucket": "gen",
    }
    categories = repo_catalog.attributes()["rl.efficiency.category"].typed_values()
    labels["rl_efficiency_category"] = str(categories[0])
    report = _check(repo_catalog, [_prom("rl_efficiency_seconds", "gauge", labels)])
    assert "undeclared_attribute" not in _kinds(report)
    assert "prometheus_name" not in _kinds(report)


def test_a_promoted_identity_attribute_must_be_on_every_point(repo_catalog: Catalog) -> None:
    with_rank = _otlp("rl.entropy", "gauge", "", {"rank": 3})
    without = _otlp("rl.reward.mean", "gauge", "", resource={"rank": 4})
    report = _check(repo_catalog, [with_rank, without], promoted=("rank",))
    assert _kinds(report) == {"missing_identity": {"rl.reward.mean"}}
    (finding,) = [f for f in report.findings if f.kind == "missing_identity"]
    assert finding.attribute == "rank"
    assert "METRIC_CATALOG_PROMOTE" in finding.message()


def test_a_series_stands_for_its_logged_keys_when_the_loop_is_inferred(
    repo_catalog: Catalog,
) -> None:
    loops = {loop.name: loop for loop in repo_catalog.loops()}
    ppo = loops["ppo"]
    by_key = {row.qualified_logger_key: row for _, row in repo_catalog.rows() if row.logger_key}
    points = [
        _otlp(by_key[key].name, by_key[key].kind, by_key[key].unit)
        for key in ppo.signature
        if key in by_key
    ]
    assert points
    report = _check(repo_catalog, points)
    assert report.loop is not None
    assert report.loop.name == "ppo"


def test_otlp_json_file_is_detected_and_judged(repo_catalog: Catalog, tmp_path: Path) -> None:
    request = ExportMetricsServiceRequest()
    metric = request.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name, metric.unit = "rl.entropy", "s"
    metric.gauge.data_points.add().as_double = 0.5
    path = tmp_path / "collector-export.json"
    line = json.dumps(json.loads(json_format.MessageToJson(request)))
    path.write_text(line + "\n" + "{not json\n", encoding="utf-8")
    report = check_file(str(path), repo_catalog)
    kinds = {f.kind: f for f in report.findings if f.kind != "missing"}
    assert set(kinds) == {"unit_mismatch", "malformed"}
    assert kinds["unit_mismatch"].line == 1
    assert "OTLP JSON request" in kinds["malformed"].message()


def test_prometheus_exposition_file_is_detected_and_judged(
    repo_catalog: Catalog, tmp_path: Path
) -> None:
    path = tmp_path / "scrape.prom"
    path.write_text(
        "# HELP rl_entropy Entropy.\n# TYPE rl_entropy gauge\nrl_entropy 2.0\n"
        "# HELP rl_mystery Unknown.\n# TYPE rl_mystery gauge\nrl_mystery 1.0\n",
        encoding="utf-8",
    )
    report = check_file(str(path), repo_catalog)
    assert _kinds(report) == {"undeclared_series": {"rl_mystery"}}


def _live_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", "live-check", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run.jsonl", "--otlp", "127.0.0.1:0"], "either log files"),
        ([], "either log files"),
        (["--scrape", "http://127.0.0.1:9/metrics", "--interval", "1"], "--interval needs"),
        (["run.jsonl", "--duration", "3"], "apply to --otlp-listen and --scrape"),
        (["--otlp", "nohost"], "expected HOST:PORT"),
        (["--scrape", "ftp://x/metrics"], "expected an http(s) URL"),
    ],
)
def test_live_arguments_that_do_not_fit_exit_2(args: list[str], message: str) -> None:
    done = _live_check(*args)
    assert done.returncode == 2
    assert message in done.stderr


def test_a_scrape_that_fails_is_malformed_naming_the_url(repo_catalog: Catalog) -> None:
    done = _live_check("--scrape", "http://127.0.0.1:9/metrics", "--format", "json")
    report = json.loads(done.stdout)
    malformed = [f for f in report["findings"] if f["kind"] == "malformed"]
    assert malformed
    assert "cannot scrape http://127.0.0.1:9/metrics" in malformed[0]["message"]
