"""metric_catalog.testing: a block's exported points judged against the registered rows."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from metric_catalog import exporters, vocabulary
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.testing import CatalogMismatchError, MetricCapture
from metric_catalog.vocabulary import MetricAttribute, RecordedMetric, TeedMetric
from tests.otel_fixtures import clean_otel

__all__ = ["clean_otel"]  # a fixture used by name

REPO = Path(__file__).resolve().parents[2]
PHASE = MetricAttribute("phase", values=("train", "validation"), requirement="required")

ROWS = (
    TeedMetric("perf/mfu", "rl.perf.mfu", "gauge", "1", "MFU.", value_range="[0, 1]"),
    TeedMetric(
        "tokens", "rl.tokens", "gauge", "{token}", "Tokens.", value_range="integers in [0, +inf)"
    ),
    TeedMetric("gpu_util", "rl.gpu.utilization", "gauge", "%", "GPU utilization."),
    TeedMetric("loss", "rl.loss", "gauge", "", "Loss.", attributes=(PHASE,), emitted_by=("sft",)),
    TeedMetric("reward", "rl.reward", "gauge", "1", "Reward.", emitted_by=("grpo",)),
)
RECORDED = (RecordedMetric("rl.step.duration", "histogram", "s", "Step time.", logged_unit="ms"),)


@pytest.fixture
def rows(clean_otel: None) -> None:
    vocabulary.register_teed_metrics(ROWS)
    vocabulary.register_recorded_metrics(RECORDED)


def capture(*calls: tuple[dict[str, object], dict[str, str] | None]) -> MetricCapture:
    block = MetricCapture()
    with block:
        for metrics, attributes in calls:
            tee_metrics(metrics, "train", attributes=attributes)
    return block


def test_a_clean_block_matches_the_catalog_and_covers_its_loop(rows: None) -> None:
    block = capture(
        ({"perf/mfu": 0.38, "tokens": 4096, "gpu_util": 91.0}, None),
        ({"loss": 0.5}, {"phase": "train"}),
    )
    report = block.captured.assert_matches_catalog(loop="sft")
    assert report.ok
    assert report.applicable == ("rl.gpu.utilization", "rl.loss", "rl.perf.mfu", "rl.tokens")
    assert report.exported == report.applicable
    assert "coverage 100.0% (4 of 4 applicable rows exported)" in report.render()


@pytest.mark.parametrize(
    ("metrics", "kind", "example"),
    [
        ({"perf/mfu": 38.2}, "out_of_range", "38.2 (the row's range is [0, 1])"),
        ({"tokens": 3.5}, "not_integer", "3.5 (the row's range is integers in [0, +inf))"),
        ({"gpu_util": 140.0}, "out_of_range", "140 (the row's range is [0, 100])"),
    ],
)
def test_a_value_outside_its_rows_range_fails_with_a_live_check_like_report(
    rows: None, metrics: dict[str, object], kind: str, example: str
) -> None:
    block = capture((metrics, None))
    with pytest.raises(CatalogMismatchError) as raised:
        block.captured.assert_matches_catalog()
    assert isinstance(raised.value, AssertionError)
    message = str(raised.value)
    assert message.startswith("metric-catalog capture: 1 point(s) of 1 series;")
    assert f"warning[{kind.upper()}]" in message
    assert f"first {example}" in message
    assert f"{kind} 1" in message.splitlines()[-2]
    assert message.endswith("FAILED: 1 distinct finding(s)")


def test_a_loop_row_never_exported_is_missing_from_its_coverage(rows: None) -> None:
    block = capture(({"perf/mfu": 0.5}, None))
    report = block.captured.check(loop="grpo")
    assert [(f.kind, f.series) for f in report.findings] == [
        ("missing", "rl.gpu.utilization"),
        ("missing", "rl.reward"),
        ("missing", "rl.tokens"),
    ]
    assert "coverage 25.0% (1 of 4 applicable rows exported)" in report.render()
    assert block.captured.check().ok  # without a loop, nothing is owed


def test_points_recorded_beside_the_tee_are_judged_too(rows: None) -> None:
    """Code that records on the provider directly: an undeclared series, another kind,
    another unit, an undeclared attribute and a missing required one."""
    block = MetricCapture()
    with block:
        provider = exporters.get_meter_provider()
        assert provider is not None
        meter = provider.get_meter("handwritten")
        meter.create_gauge("rl.rogue").set(1.0)
        meter.create_counter("rl.perf.mfu", unit="1").add(1, {"host": "a"})
        meter.create_gauge("rl.loss", unit="s").set(0.3, {"shard": "0"})
    kinds = {(f.kind, f.series, f.attribute) for f in block.captured.check().findings}
    assert kinds == {
        ("undeclared_series", "rl.rogue", ""),
        ("kind_mismatch", "rl.perf.mfu", ""),
        ("undeclared_attribute", "rl.perf.mfu", "host"),
        ("unit_mismatch", "rl.loss", ""),
        ("undeclared_attribute", "rl.loss", "shard"),
        ("missing_attribute", "rl.loss", "phase"),
    }


def test_a_histograms_min_and_max_are_judged_in_the_exported_unit(rows: None) -> None:
    block = MetricCapture()
    with block:
        record_metrics({"step_duration": 1500.0})  # ms, exported as 1.5 s
    ((point),) = block.captured.points
    assert (point.series, point.kind, point.unit, point.values) == (
        "rl.step.duration",
        "histogram",
        "s",
        (1.5, 1.5),
    )
    assert block.captured.check().ok


def _pytest(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_block.py").write_text(textwrap.dedent(source), encoding="utf-8")
    env = {**os.environ, "OTEL_METRICS_EXPORTER": "none"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "metric_catalog.testing", *args, str(tmp_path / "test_block.py")],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


_USER_TEST = """
    from metric_catalog import vocabulary
    from metric_catalog.tee import tee_metrics
    from metric_catalog.vocabulary import TeedMetric

    vocabulary.register_teed_metrics(
        [TeedMetric("perf/mfu", "rl.perf.mfu", "gauge", "1", "MFU.", value_range="[0, 1]")]
    )

    def test_step(metric_capture):
        with metric_capture() as captured:
            tee_metrics({"perf/mfu": VALUE}, "train")
        captured.assert_matches_catalog()
"""


@pytest.mark.integration
@pytest.mark.parametrize(("value", "passes"), [("0.38", True), ("38.2", False)])
def test_the_fixture_works_in_a_users_test_session(
    tmp_path: Path, value: str, passes: bool
) -> None:
    done = _pytest(tmp_path, _USER_TEST.replace("VALUE", value))
    assert (done.returncode == 0) is passes, done.stdout + done.stderr
    if not passes:
        assert "CatalogMismatchError: metric-catalog capture: 1 point(s) of 1 series" in done.stdout
        assert "warning[OUT_OF_RANGE]: rl.perf.mfu was exported 1 time(s) outside" in done.stdout


@pytest.mark.integration
def test_without_the_otel_extra_a_capture_skips_and_pytest_still_runs(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "import sys\nfor name in ('opentelemetry', 'opentelemetry.sdk', "
        "'opentelemetry.sdk.metrics'):\n    sys.modules[name] = None\n",
        encoding="utf-8",
    )
    source = textwrap.dedent(_USER_TEST).replace("VALUE", "0.5")
    source += "\n\ndef test_other():\n    assert True\n"
    done = _pytest(tmp_path, source, "-rs")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 skipped" in done.stdout
    assert "pip install 'metric-catalog[otel]'" in done.stdout


def test_importing_the_plugin_imports_no_opentelemetry() -> None:
    code = (
        "import sys, metric_catalog.testing; "
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry', 'codegen'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_the_package_registers_the_plugin_with_pytest() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {
        "metric_catalog.testing": "metric_catalog.testing"
    }


def test_the_outer_capture_keeps_capturing_after_a_nested_block_ends(rows: None) -> None:
    """Before, leaving the inner block reset the exporters: the outer lost what came after."""
    outer = MetricCapture()
    with outer:
        tee_metrics({"perf/mfu": 0.3}, "train")
        inner = MetricCapture()
        with inner:
            tee_metrics({"tokens": 4096}, "train")
        tee_metrics({"gpu_util": 90.0}, "train")
    assert inner.captured.series() == {"rl.tokens"}
    assert outer.captured.series() == {"rl.perf.mfu", "rl.tokens", "rl.gpu.utilization"}


def test_three_nested_captures_each_see_their_own_block(rows: None) -> None:
    blocks = [MetricCapture() for _ in range(3)]
    with blocks[0]:
        with blocks[1]:
            with blocks[2]:
                tee_metrics({"tokens": 1}, "train")
            tee_metrics({"perf/mfu": 0.1}, "train")
        tee_metrics({"gpu_util": 1.0}, "train")
    assert [b.captured.series() for b in blocks] == [
        {"rl.tokens", "rl.perf.mfu", "rl.gpu.utilization"},
        {"rl.tokens", "rl.perf.mfu"},
        {"rl.tokens"},
    ]


def test_after_the_outermost_capture_the_exporters_are_the_environments_again(
    rows: None,
) -> None:
    with MetricCapture(), MetricCapture():
        tee_metrics({"tokens": 1}, "train")
    with MetricCapture() as later:
        tee_metrics({"tokens": 2}, "train")
    assert later.series() == {"rl.tokens"}


EVERY_5 = TeedMetric("val/acc", "rl.val.acc", "gauge", "1", "Accuracy.", every="5")
LATE = TeedMetric("ckpt_s", "rl.ckpt.duration", "gauge", "s", "Save.", first_step="10")
FROM_CONFIG = TeedMetric(
    "eval/acc", "rl.eval.acc", "gauge", "1", "Eval.", every="config.trainer.test_freq"
)


@pytest.mark.parametrize(
    ("steps", "missing"),
    [
        pytest.param(None, [], id="steps-unknown"),
        pytest.param([1], [], id="one-step-block"),
        pytest.param([1, 2, 3, 4], [], id="before-the-period"),
        pytest.param([4, 5], ["rl.val.acc"], id="period-came-due"),
        pytest.param([10], ["rl.ckpt.duration", "rl.val.acc"], id="first-step-reached"),
    ],
)
def test_a_scheduled_row_is_missing_only_when_its_schedule_came_due(
    steps: list[int] | None, missing: list[str], rows: None
) -> None:
    """Before, an ``every: "5"`` row was MISSING from a one-step block."""
    vocabulary.register_teed_metrics((EVERY_5, LATE, FROM_CONFIG))
    block = capture(({"perf/mfu": 0.38, "tokens": 4096, "gpu_util": 91.0}, None))
    report = block.captured.check(loop="grpo", steps=steps)
    found = sorted(f.series for f in report.findings if f.kind == "missing")
    assert found == sorted(["rl.reward", *missing])
    assert "rl.eval.acc" not in report.applicable  # its period is the run's configuration


ZERO_BASED = TeedMetric("val/f1", "rl.val.f1", "gauge", "1", "F1.", every="5", phase=-1)


@pytest.mark.parametrize(
    ("steps", "missing"),
    [
        pytest.param([0, 1, 2, 3], [], id="before-step-4"),
        pytest.param([3, 4], ["rl.val.f1"], id="step-4-came-due"),
        pytest.param([5, 6, 7, 8], [], id="between-4-and-9"),
    ],
)
def test_a_phased_row_is_due_at_the_steps_of_its_phase(
    steps: list[int], missing: list[str], rows: None
) -> None:
    """``(step + 1) % 5 == 0``: due at 4, 9, ...; the multiples of 5 are not its steps."""
    vocabulary.register_teed_metrics((ZERO_BASED,))
    block = capture(({"perf/mfu": 0.38, "tokens": 4096, "gpu_util": 91.0}, None))
    report = block.captured.check(loop="grpo", steps=steps)
    found = sorted(f.series for f in report.findings if f.kind == "missing")
    assert found == sorted(["rl.reward", *missing])


def test_a_phase_that_is_no_int_is_refused_at_declaration() -> None:
    with pytest.raises(ValueError, match="phase must be an int"):
        TeedMetric("val/f1", "rl.val.f1", every="5", phase="-1")  # type: ignore[arg-type]


def test_a_one_step_block_passes_with_a_periodic_row_it_did_not_log(rows: None) -> None:
    vocabulary.register_teed_metrics((EVERY_5,))
    block = capture(
        ({"perf/mfu": 0.38, "tokens": 4096, "gpu_util": 91.0}, None),
        ({"loss": 0.5}, {"phase": "train"}),
    )
    assert block.captured.assert_matches_catalog(loop="sft", steps=[1]).ok


@pytest.mark.parametrize("field", ["every", "first_step"])
def test_a_schedule_that_is_not_text_is_refused_by_the_row(field: str) -> None:
    with pytest.raises(ValueError, match=f"{field} must be a str"):
        TeedMetric("x", "rl.x", "gauge", "1", "X.", **{field: 5})  # type: ignore[arg-type]
