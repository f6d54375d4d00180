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
def perf_catalog(tmp_path: Path) -> Catalog:
    """The throughput and efficiency rows of :data:`CATALOG`, with their ranges and value types."""
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
    perf_catalog: Catalog, metrics: dict[str, object], kind: str | None
) -> None:
    report = run(perf_catalog, metrics)
    assert report.kinds() - {"missing"} == ({kind} if kind else set())


def test_a_finding_counts_every_value_out_of_range_with_its_first_and_last_line(
    perf_catalog: Catalog,
) -> None:
    report = run(
        perf_catalog,
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


def test_the_json_report_counts_the_new_kinds(perf_catalog: Catalog) -> None:
    report = run(perf_catalog, {"perf/mfu": 38.2, "perf/tokens": 1.5})
    data = json.loads(report.to_json())
    kinds = {f["kind"] for f in data["findings"]}
    assert {"out_of_range", "not_integer"} <= kinds


SHARES = """\
owner: myrl.shares
module: shares
description: Rows in unit '1' with and without a range.
teed:
  - logger_key: perf/mfu
    name: rl.perf.mfu
    kind: gauge
    unit: "1"
    description: Model FLOPs utilization.
  - logger_key: actor/pg_clipfrac
    name: rl.actor.clip_frac
    kind: gauge
    unit: "1"
    description: Share of tokens whose ratio was clipped.
  - logger_key: eval/acc
    name: rl.eval.accuracy
    kind: gauge
    unit: "1"
    description: Share of prompts answered right, in percent by mistake.
    range: {}
  - logger_key: eval/pass
    name: rl.eval.pass_rate
    kind: gauge
    unit: "1"
    description: Share of prompts passed, declared up to 100.
    range: {max: "100"}
  - logger_key: actor/importance_ratio
    name: rl.actor.importance_ratio
    kind: gauge
    unit: "1"
    description: Mean importance ratio, a quotient that may exceed 1.
  - logger_key: optim/lr
    name: rl.optim.learning_rate
    kind: gauge
    unit: "1"
    description: Learning rate.
  - logger_key: optim/loss_scale
    name: rl.optim.loss_scale
    kind: gauge
    unit: "1"
    description: Dynamic loss scale.
  - logger_key: perf/flop_util
    name: rl.perf.flops
    kind: counter
    unit: "1"
    description: A counter is a step's change, never guessed a share.
"""


@pytest.mark.parametrize(
    ("metrics", "kind"),
    [
        pytest.param({"perf/mfu": 38.2}, "unit_suspect", id="mfu-in-percent"),
        pytest.param({"actor/pg_clipfrac": 12.5}, "unit_suspect", id="clip-frac-in-percent"),
        pytest.param({"perf/mfu": 0.382}, None, id="mfu-as-a-ratio"),
        pytest.param({"perf/mfu": 1.0}, None, id="exactly-one"),
        pytest.param({"perf/mfu": 0.0}, None, id="zero"),
        pytest.param({"actor/pg_clipfrac": 0.05}, None, id="clip-frac-as-a-ratio"),
        pytest.param({"eval/acc": 81.0}, None, id="range-{}-overrides-the-guess"),
        pytest.param({"eval/pass": 81.0}, None, id="a-declared-range-overrides-the-guess"),
        pytest.param({"eval/pass": 181.0}, "out_of_range", id="the-declared-range-judges"),
        pytest.param({"actor/importance_ratio": 1.7}, None, id="a-quotient-is-no-share"),
        pytest.param({"optim/lr": 3.0}, None, id="a-learning-rate-is-no-share"),
        pytest.param({"optim/loss_scale": 65536.0}, None, id="no-share-word-stays-silent"),
        pytest.param({"perf/flop_util": 4.0}, None, id="a-counter-is-never-guessed"),
    ],
)
def test_a_share_by_its_name_in_unit_1_is_judged_against_0_to_1(
    tmp_path: Path, metrics: dict[str, object], kind: str | None
) -> None:
    report = run(loaded_catalog(tmp_path, SHARES), metrics)
    assert report.kinds() - {"missing"} == ({kind} if kind else set())


def test_unit_suspect_counts_every_value_above_1_and_keeps_the_largest(tmp_path: Path) -> None:
    report = run(
        loaded_catalog(tmp_path, SHARES),
        {"perf/mfu": 0.4},
        {"perf/mfu": 38.2},
        {"perf/mfu": 41.0},
        {"perf/mfu": 40.5},
    )
    (finding,) = [f for f in report.findings if f.kind == "unit_suspect"]
    assert (finding.count, finding.step, finding.last_line) == (3, 2, 4)
    message = finding.message()
    assert "train/perf/mfu (rl.perf.mfu) is a share by its name" in message
    assert "first 38.2 (a mfu by its name, declared in unit '1') at step 2" in message
    assert "is it logged in percent? declare unit '%'" in message
    (summary,) = [s for s in report.rows if s.row.name == "rl.perf.mfu"]
    row = summary.to_json()
    assert (row["unit_suspect"], row["unit_suspect_max"]) == (3, 41.0)
    assert "range" not in row  # the guess is live-check's, not the row's range


def test_unit_suspect_is_a_warning_that_fail_on_can_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_catalog(tmp_path, SHARES)
    log = tmp_path / "run.jsonl"
    log.write_text(json.dumps({"step": 1, "prefix": "train", "metrics": {"perf/mfu": 38.2}}))
    assert main(["live-check", str(log), "--root", str(tmp_path)]) == 0
    assert "warning[UNIT_SUSPECT]" in capsys.readouterr().out
    assert main(["live-check", str(log), "--root", str(tmp_path), "--fail-on", "unit_suspect"]) == 1


def test_a_fraction_under_bytes_hints_at_the_unit_the_code_logs(perf_catalog: Catalog) -> None:
    report = run(perf_catalog, {"perf/memory": 38.5})
    (finding,) = [f for f in report.findings if f.kind == "not_integer"]
    assert "logged in GiB/MB? declare the unit the code logs (GiBy, MBy)" in finding.message()
    tokens = run(perf_catalog, {"perf/tokens": 1.5}).findings
    assert all("GiB" not in f.message() for f in tokens)  # a declared int row: no size hint
