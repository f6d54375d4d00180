"""live-check judges values, not only names: ``out_of_range`` and ``not_integer``.

A row's declared range (or its unit's default) and ``value_type: int`` decide;
a wrong but valid unit shows as values outside the range (``perf/mfu`` logged in
percent under unit ``1``; memory in GiB declared ``By`` that is fine, but a
negative duration is not).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_stream
from tests.catalog_projects import loaded_catalog, write_catalog

CATALOG = """\
owner: myrl.perf
module: perf
description: Throughput and efficiency.
teed:
  - logger_key: perf/mfu
    name: rl.perf.mfu
    kind: gauge
    unit: "1"
    description: Model FLOPs utilization.
    range: {min: "0", max: "1"}
    goal: maximize
  - logger_key: perf/tokens
    name: rl.perf.tokens
    kind: gauge
    unit: "{token}"
    description: Tokens in the step's batch.
    value_type: int
  - logger_key: perf/step_time
    name: rl.perf.step.duration
    kind: gauge
    unit: ms
    description: Wall time of the step.
  - logger_key: perf/gpu_util
    name: rl.perf.gpu.utilization
    kind: gauge
    unit: "%"
    description: GPU utilization.
  - logger_key: perf/drift
    name: rl.perf.drift
    kind: gauge
    unit: s
    description: Clock drift against the driver, which may be negative.
    range: {}
  - logger_key: perf/memory
    name: rl.perf.memory
    kind: gauge
    unit: By
    description: Device memory allocated.
  - logger_key: perf/temperature
    name: rl.perf.temperature
    kind: gauge
    unit: "1"
    description: Sampling temperature, above zero.
    range: {above: "0"}
"""


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return loaded_catalog(tmp_path, CATALOG)


def run(catalog: Catalog, *steps: dict[str, object]) -> LiveCheckReport:
    lines = (
        json.dumps({"step": i, "prefix": "train", "metrics": m}) for i, m in enumerate(steps, 1)
    )
    raw = "\n".join(lines).encode() + b"\n"
    return check_stream(io.BytesIO(raw), catalog, source="mem.jsonl")


@pytest.mark.parametrize(
    ("metrics", "kind"),
    [
        pytest.param({"perf/mfu": 38.2}, "out_of_range", id="percent-under-unit-1"),
        pytest.param({"perf/mfu": -0.1}, "out_of_range", id="below-declared-min"),
        pytest.param({"perf/tokens": 3.5}, "not_integer", id="fraction-of-an-int-row"),
        pytest.param({"perf/tokens": -3}, "out_of_range", id="negative-count"),
        pytest.param({"perf/step_time": -4.0}, "out_of_range", id="negative-duration"),
        pytest.param({"perf/gpu_util": 140.0}, "out_of_range", id="percent-above-100"),
        pytest.param({"perf/temperature": 0.0}, "out_of_range", id="exclusive-bound-reached"),
        pytest.param({"perf/memory": 38.5}, "not_integer", id="gib-declared-in-bytes"),
        pytest.param({"perf/memory": 41_341_669_376}, None, id="bytes-in-bytes"),
        pytest.param({"perf/mfu": 0.382}, None, id="ratio-in-range"),
        pytest.param({"perf/mfu": 1}, None, id="inclusive-bound"),
        pytest.param({"perf/tokens": 4096}, None, id="whole-count"),
        pytest.param({"perf/tokens": 4096.0}, None, id="whole-float-count"),
        pytest.param({"perf/gpu_util": 38.2}, None, id="percent-in-range"),
        pytest.param({"perf/drift": -0.5}, None, id="range-{}-overrides-the-units-default"),
        pytest.param({"perf/temperature": 0.7}, None, id="above-exclusive-bound"),
        pytest.param({"perf/mfu": float("nan")}, "non_finite", id="nan-is-non-finite-only"),
    ],
)
def test_each_value_is_judged_against_its_rows_range(
    catalog: Catalog, metrics: dict[str, object], kind: str | None
) -> None:
    report = run(catalog, metrics)
    assert report.kinds() - {"missing"} == ({kind} if kind else set())


def test_a_finding_counts_every_value_out_of_range_with_its_first_and_last_line(
    catalog: Catalog,
) -> None:
    report = run(
        catalog,
        {"perf/mfu": 0.3},
        {"perf/mfu": 38.2},
        {"perf/mfu": 0.4},
        {"perf/mfu": 41.0},
        {"perf/mfu": 40.5},
    )
    (finding,) = [f for f in report.findings if f.kind == "out_of_range"]
    assert (finding.count, finding.line, finding.step, finding.last_line) == (3, 2, 2, 5)
    message = finding.message()
    assert "train/perf/mfu (rl.perf.mfu) was logged 3 time(s) outside its range" in message
    assert "first 38.2 (the row's range is [0, 1]) at step 2" in message
    (summary,) = [s for s in report.rows if s.row.name == "rl.perf.mfu"]
    assert (summary.logged, summary.out_of_range, summary.last_value) == (5, 3, 40.5)
    assert summary.to_json()["range"] == "[0, 1]"


def test_a_declared_range_is_in_the_unit_the_code_logs(tmp_path: Path) -> None:
    # 1500 ms is fine under {max: "2000"} even though the series is exported in seconds
    text = CATALOG.replace(
        "    description: Wall time of the step.\n",
        '    description: Wall time of the step.\n    range: {max: "2000"}\n',
    )
    catalog = loaded_catalog(tmp_path, text)
    assert run(catalog, {"perf/step_time": 1500.0}).kinds() <= {"missing"}
    assert "out_of_range" in run(catalog, {"perf/step_time": 2500.0}).kinds()


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [([], 0), (["--fail-on", "out_of_range"], 1), (["--fail-on", "not_integer"], 0)],
)
def test_out_of_range_is_a_warning_that_fail_on_can_gate(
    tmp_path: Path, fail_on: list[str], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    write_catalog(tmp_path, CATALOG)
    log = tmp_path / "run.jsonl"
    log.write_text(json.dumps({"step": 1, "prefix": "train", "metrics": {"perf/mfu": 38.2}}))
    assert main(["live-check", str(log), "--root", str(tmp_path), *fail_on]) == code
    out = capsys.readouterr().out
    assert "warning[OUT_OF_RANGE]" in out or "error[OUT_OF_RANGE]" in out


def test_the_json_report_counts_the_new_kinds(catalog: Catalog) -> None:
    report = run(catalog, {"perf/mfu": 38.2, "perf/tokens": 1.5})
    data = json.loads(report.to_json())
    kinds = {f["kind"] for f in data["findings"]}
    assert {"out_of_range", "not_integer"} <= kinds
