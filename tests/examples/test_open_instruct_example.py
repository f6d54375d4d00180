"""examples/open_instruct, end to end: open-instruct's GRPO keys declared, generated, teed, checked.

The example project declares the keys AllenAI open-instruct's GRPO trainer
(``open_instruct/grpo_fast.py``) logs to W&B (README.md there cites the source of every
key), written from this project's docs as an outside adopter would. Its catalog must
validate and lint clean with no rule silenced and generate into a copy that ``check``
finds current; every ``wandb.log`` call of its runs (a run with evaluation, pass@k and
entropy; one without a reference policy or an eval dataset; one resumed from a
checkpoint) must be teed through ``tee_wandb_log`` key by key to the right series with
the right attributes and exported values (running totals as running totals), and the
real offline W&B runs the ``wandb`` library writes from the same calls must live-check
clean at full coverage of what each run's configuration implies. A missing key, a value
of the wrong kind and an undeclared key must each fire, so "clean" is not live-check
seeing nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.live_check import check_file
from metric_catalog import vocabulary
from metric_catalog.adapters import tee_wandb_log
from tests.example_projects import ExampleProject, ImportedExample, Point, recorded_points
from tests.otel_fixtures import caught_warnings, clean_otel, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

wandb = pytest.importorskip("wandb")

OPEN_INSTRUCT = ExampleProject(
    "open_instruct", "open_instruct_metrics", ("common", "evaluation", "loss", "rollout", "trainer")
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/open_instruct with its package generated."""
    return OPEN_INSTRUCT.generated_copy(tmp_path_factory)


@pytest.fixture(scope="module")
def oi(project: Path) -> Iterator[ImportedExample]:
    """The example: the generated modules and ``open_instruct_metrics.runs`` imported from the
    copy."""
    with OPEN_INSTRUCT.imported(project) as example:
        yield example


def test_example_catalog_validates_and_lints_clean() -> None:
    """No error, no warning, and no rule silenced anywhere in the catalog."""
    result = OPEN_INSTRUCT.check()
    assert [str(d) for d in result.diagnostics] == []
    text = OPEN_INSTRUCT.catalog_text()
    assert "no_lint" not in text


def test_generate_into_a_copy_is_current(project: Path, oi: ImportedExample) -> None:
    """``check`` finds the copy's generated files current; the package declares every row."""
    assert main(["check", "--root", str(project)]) == 0
    assert sorted(row.name for row in oi.rows) == sorted(
        row.name for _file, row in oi.catalog.rows() if row.logger_key is not None
    )


RUN_NAMES = OPEN_INSTRUCT.run_names()

# Keys a reader can get wrong, with the series and attributes each must land on: a family
# next to the literal rows of its shape, a verifier name holding '_', prefixes two
# segments deep, the keys of the one flat dict under four namespaces.
TRICKY = [
    ("objective/kl2_avg", "rl.open_instruct.kl", {"open_instruct.kl_estimator": 2}),
    ("objective/verifiable_reward", "rl.open_instruct.reward.verifiable", {}),
    (
        "objective/string_f1_reward",
        "rl.open_instruct.reward.verifier",
        {"open_instruct.verifier": "string_f1"},
    ),
    (
        "objective/gsm8k_correct_rate",
        "rl.open_instruct.reward.verifier_correct_rate",
        {"open_instruct.verifier": "gsm8k"},
    ),
    (
        "eval/objective/verifiable_correct_rate",
        "rl.open_instruct.eval.reward.verifiable_correct_rate",
        {},
    ),
    (
        "eval/objective/math_reward",
        "rl.open_instruct.eval.reward.verifier",
        {"open_instruct.verifier": "math"},
    ),
    ("eval/pass_at_1", "rl.open_instruct.eval.pass_at_1", {}),
    ("eval/pass_at_4", "rl.open_instruct.eval.pass_at_n", {"open_instruct.k": 4}),
    ("eval/pass_at_1_unbiased", "rl.open_instruct.eval.pass_at_k_unbiased", {"open_instruct.k": 1}),
    ("eval/scores", "rl.open_instruct.eval.reward.mean", {}),
    ("scores", "rl.open_instruct.reward.mean", {}),
    ("val/sequence_lengths", "rl.open_instruct.response.length.mean", {}),
    ("val/num_total_tokens", "rl.open_instruct.tokens.consumed", {}),
    ("time/weight_sync", "rl.open_instruct.weight_sync.duration", {}),
    ("lr", "rl.open_instruct.learning_rate", {}),
]


class _Sink:
    """A ``wandb`` stand-in whose ``log`` drops the call (only the tee matters)."""

    def log(self, data: Any, step: int | None = None) -> None:
        """Drop the call."""


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize(("key", "series", "attributes"), TRICKY, ids=[k for k, *_ in TRICKY])
def test_a_tricky_open_instruct_key_is_teed_to_its_series(
    oi: ImportedExample, key: str, series: str, attributes: dict[str, Any]
) -> None:
    """The tee (through tee_wandb_log) and live-check's matcher put it on the expected series."""
    oi.register()
    with installed_reader() as reader:
        tee_wandb_log(_Sink())({key: 0.5}, step=3)
        recorded = recorded_points(reader.get_metrics_data())
    assert recorded == {(series, frozenset(attributes.items())): 0.5}
    row, captured = oi.routed_row(key)
    assert (row.name, captured) == (series, attributes)


def _is_number(value: Any) -> bool:
    return vocabulary.as_scalar(value) is not None


def _expected(oi: ImportedExample, calls: list[tuple[int, dict[str, Any]]]) -> dict[Point, Any]:
    """What the tee must export: a gauge's last value, a delta counter's sum, a running
    total's last value (one process), each in its exported unit."""
    expected: dict[Point, Any] = {}
    for _step, data in calls:
        for key, value in data.items():
            if not _is_number(value):
                continue
            row, captured = oi.routed_row(key)
            point = (row.name, frozenset(captured.items()))
            number = float(value)
            if row.kind == "counter" and row.temporality != "cumulative":
                number += expected.get(point, 0.0)
            expected[point] = number
    return {point: pytest.approx(value) for point, value in expected.items()}


@pytest.mark.usefixtures("clean_otel")
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_key_of_an_open_instruct_run_is_teed_to_its_series(
    oi: ImportedExample, name: str
) -> None:
    """Each scalar of every ``wandb.log`` call (histograms and tables skipped) lands on the
    series live-check counts it under, with the same attributes and value, and no warning."""
    oi.register()
    spec = oi.spec(name)
    calls = list(oi.runs.calls(spec))
    log = tee_wandb_log(_Sink())
    with caught_warnings() as warned, installed_reader() as reader:
        for step, data in calls:
            log(oi.runs.to_wandb(data, wandb, eval_call="eval/scores" in data), step=step)
        recorded = recorded_points(reader.get_metrics_data())
    assert recorded == _expected(oi, calls)
    assert warned.messages == []
    assert len(recorded) >= 60


@pytest.fixture(scope="module")
def wandb_runs(
    oi: ImportedExample, project: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """The example's runs as real offline W&B runs, written by ``wandb`` in a child process."""
    out = tmp_path_factory.mktemp("open_instruct_wandb")
    env = {**os.environ, "PYTHONPATH": str(project), "WANDB_MODE": "offline"}
    done = subprocess.run(
        [sys.executable, "-m", f"{OPEN_INSTRUCT.package}.runs", str(out)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    folders = [Path(line) for line in done.stdout.split() if line.strip()]
    return dict(zip(RUN_NAMES, folders, strict=True))


def _counts(oi: ImportedExample, calls: list[tuple[int, dict[str, Any]]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _step, data in calls:
        for key, value in data.items():
            if _is_number(value):
                name = oi.routed_row(key)[0].name
                counts[name] = counts.get(name, 0) + 1
    return counts


@pytest.mark.parametrize("name", RUN_NAMES)
def test_live_check_is_clean_at_full_coverage_on_an_open_instruct_wandb_run(
    oi: ImportedExample, wandb_runs: dict[str, Path], name: str
) -> None:
    """No finding; every row the W&B run's configuration implies is seen, as often as logged."""
    report = check_file(str(wandb_runs[name]), oi.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    calls = list(oi.runs.calls(oi.spec(name)))
    assert {s.row.name: s.logged for s in report.rows if s.logged} == _counts(oi, calls)
    applicable_unseen = {
        s.row.name
        for s in report.rows
        if not s.logged and s.presence not in {"not_applicable", "not_due"}
    }
    assert applicable_unseen == set()


def _json_value(value: Any) -> Any:
    """A value as ``tests/wandb_runs.py`` takes it: numbers, or a histogram marker."""
    if isinstance(value, list) or hasattr(value, "tolist"):
        items = value if isinstance(value, list) else value.tolist()
        return "<histogram>" if isinstance(items, list) and items else items
    return value


def _spoiled(data: dict[str, Any], case: str) -> dict[str, Any]:
    """One call's data with the case's fault: a key dropped, a string value, a key added."""
    spoiled = {key: _json_value(value) for key, value in data.items()}
    if "loss/policy_avg" in spoiled:
        if case == "missing":
            del spoiled["loss/policy_avg"]
        elif case == "non_scalar":
            spoiled["loss/policy_avg"] = "0.25"
        elif case == "undeclared":
            spoiled["loss/ppo_avg"] = 0.25
    return spoiled


CASES = [
    ("missing", ("missing", "loss/policy_avg")),
    ("non_scalar", ("non_scalar", "loss/policy_avg")),
    ("undeclared", ("undeclared", "loss/ppo_avg")),
]


@pytest.fixture(scope="module")
def spoiled_runs(oi: ImportedExample, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The evaluation run with one fault each, written as real W&B runs (tests/wandb_runs.py)."""
    out = tmp_path_factory.mktemp("open_instruct_spoiled")
    spec = oi.spec("grpo_eval_entropy")
    runs = [
        {
            "dir": str(out / case),
            "config": oi.runs.config(spec),
            "steps": [[step, _spoiled(data, case)] for step, data in oi.runs.calls(spec)],
        }
        for case, _finding in CASES
    ]
    for run in runs:
        Path(str(run["dir"])).mkdir()
    spec_path = out / "spec.json"
    spec_path.write_text(json.dumps(runs), encoding="utf-8")
    writer = Path(__file__).resolve().parents[1] / "wandb_runs.py"
    done = subprocess.run(
        [sys.executable, str(writer), str(spec_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    folders = [Path(line) for line in done.stdout.split() if line.strip()]
    return {case: folder for (case, _finding), folder in zip(CASES, folders, strict=True)}


@pytest.mark.parametrize(("case", "finding"), CASES, ids=[case for case, _ in CASES])
def test_a_fault_in_an_open_instruct_wandb_run_is_the_one_finding(
    oi: ImportedExample, spoiled_runs: dict[str, Path], case: str, finding: tuple[str, str]
) -> None:
    """A required key dropped, logged as text, or a key no row declares: exactly that fires."""
    report = check_file(str(spoiled_runs[case]), oi.catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == [finding]
