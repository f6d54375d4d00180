"""live-check of rows scoped to loops: a key several loops log goes to its worker's loop's row.

prime-rl-shaped: a trainer process and an orchestrator process both log ``time/step``
and ``step``, with different meanings; OpenRLHF-shaped: three trainer loops share
``train/loss_mean`` and ``train/chosen_reward``. Logs are checked apart and together.
"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.live_check import LiveCheckReport, check_paths, check_stream
from metric_catalog import exporters, vocabulary
from metric_catalog.tee import tee_metrics
from metric_catalog.vocabulary import MetricAttribute, TeedMetric
from tests.catalog_projects import loaded_catalog
from tests.otel_fixtures import clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

CATALOG = """\
owner: prime_rl
module: prime
description: The trainer and the orchestrator of an asynchronous RL job.
prefix: ""
loops:
  - name: trainer
    description: The trainer process.
    signature: [time/forward_backward]
  - name: orchestrator
    description: The orchestrator process.
    signature: [time/generate]
attributes:
  - name: rl.phase
    type: string
    description: A timed phase of the trainer's step.
    max_cardinality: "32"
bookkeeping:
  - key: time
    reason: Wall-clock timestamp the file logger writes on every line.
teed:
  - logger_key: "time/{rl.phase}"
    name: rl.trainer.phase.duration
    kind: gauge
    unit: s
    description: Seconds a phase of the trainer's step took.
    attributes:
      - ref: rl.phase
    emitted_by: [trainer]
  - logger_key: time/step
    name: rl.orchestrator.step.duration
    kind: gauge
    unit: s
    description: Seconds one orchestrator step took, generation included.
    emitted_by: [orchestrator]
  - logger_key: time/generate
    name: rl.orchestrator.generate.duration
    kind: gauge
    unit: s
    description: Seconds the orchestrator spent generating rollouts.
    emitted_by: [orchestrator]
  - logger_key: samples
    name: rl.orchestrator.samples
    kind: gauge
    unit: ""
    description: Prompts, completions and rewards of the step, as a W&B table.
    value_type: table
    emitted_by: [orchestrator]
"""


def _catalog(tmp_path: Path) -> Catalog:
    return loaded_catalog(tmp_path / "project", CATALOG)


def _log(path: Path, loop: str | None, records: list[dict[str, Any]]) -> Path:
    lines = []
    for step, metrics in enumerate(records, start=1):
        line: dict[str, Any] = {"step": step, "prefix": "", "metrics": metrics}
        if loop is not None:
            line["loop"] = loop
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _logged(report: LiveCheckReport) -> dict[str, int]:
    return {s.row.name: s.logged for s in report.rows if s.logged}


def _kinds(report: LiveCheckReport) -> list[tuple[str, str]]:
    return sorted((f.kind, f.key) for f in report.findings)


TRAINER = [{"time/step": 3.0, "time/forward_backward": 2.0, "time": 1.7e9}] * 3
ORCHESTRATOR = [{"time/step": 9.0, "time/generate": 7.0, "time": 1.7e9}] * 2


def test_each_process_s_time_step_goes_to_its_own_loop_s_row_checked_apart(
    tmp_path: Path,
) -> None:
    """The trainer's 3 values feed its family; the orchestrator's 2 its literal row."""
    catalog = _catalog(tmp_path)
    trainer = check_paths([str(_log(tmp_path / "t.jsonl", "trainer", TRAINER))], catalog)
    assert _logged(trainer) == {"rl.trainer.phase.duration": 6}
    assert _kinds(trainer) == []
    orch = check_paths([str(_log(tmp_path / "o.jsonl", "orchestrator", ORCHESTRATOR))], catalog)
    assert _logged(orch) == {
        "rl.orchestrator.step.duration": 2,
        "rl.orchestrator.generate.duration": 2,
    }
    assert _kinds(orch) == []


def test_each_process_s_time_step_goes_to_its_own_loop_s_row_checked_together(
    tmp_path: Path,
) -> None:
    """A job of two loops: per worker, by each worker's loop."""
    catalog = _catalog(tmp_path)
    paths = [
        str(_log(tmp_path / "t.jsonl", "trainer", TRAINER)),
        str(_log(tmp_path / "o.jsonl", "orchestrator", ORCHESTRATOR)),
    ]
    report = check_paths(paths, catalog)
    assert _logged(report) == {
        "rl.trainer.phase.duration": 6,
        "rl.orchestrator.step.duration": 2,
        "rl.orchestrator.generate.duration": 2,
    }
    assert _kinds(report) == []


def test_an_unnamed_loop_is_inferred_from_the_worker_s_signature_keys(tmp_path: Path) -> None:
    """No ``loop`` field: the trainer's ``time/forward_backward`` decides its ``time/step``."""
    catalog = _catalog(tmp_path)
    paths = [
        str(_log(tmp_path / "t.jsonl", None, TRAINER)),
        str(_log(tmp_path / "o.jsonl", None, ORCHESTRATOR)),
    ]
    report = check_paths(paths, catalog)
    assert _logged(report) == {
        "rl.trainer.phase.duration": 6,
        "rl.orchestrator.step.duration": 2,
        "rl.orchestrator.generate.duration": 2,
    }
    assert _kinds(report) == []


def test_a_shared_key_whose_loop_cannot_be_decided_is_ambiguous_and_credited_to_no_row(
    tmp_path: Path,
) -> None:
    """No loop named, no signature key: never silently credited to one row."""
    catalog = _catalog(tmp_path)
    report = check_paths([str(_log(tmp_path / "x.jsonl", None, [{"time/step": 3.0}] * 4))], catalog)
    assert _logged(report) == {}
    assert _kinds(report) == [("ambiguous_key", "time/step")]
    finding = report.findings[0]
    assert finding.count == 4
    message = finding.message(report.hints)
    assert "'rl.orchestrator.step.duration'" in message
    assert "'rl.trainer.phase.duration'" in message


def test_a_bookkeeping_key_is_left_out_and_a_table_row_counts_without_non_scalar(
    tmp_path: Path,
) -> None:
    """``time`` is no metric; a W&B table under its table row is counted, not judged."""
    catalog = _catalog(tmp_path)
    table = {"_type": "table-file", "ncols": 3, "nrows": 12}
    records = [{"time": 1.7e9, "samples": table, "time/generate": 1.0}]
    report = check_paths([str(_log(tmp_path / "o.jsonl", "orchestrator", records))], catalog)
    assert _logged(report) == {
        "rl.orchestrator.samples": 1,
        "rl.orchestrator.generate.duration": 1,
    }
    assert _kinds(report) == []


def test_a_number_row_logged_as_a_table_still_reports_non_scalar(tmp_path: Path) -> None:
    """``non_scalar`` stays the finding of a key declared as a number."""
    catalog = _catalog(tmp_path)
    records = [{"time/generate": {"_type": "table-file"}}]
    report = check_paths([str(_log(tmp_path / "o.jsonl", "orchestrator", records))], catalog)
    assert _kinds(report) == [("non_scalar", "time/generate")]


TRAINERS = """\
owner: openrlhf.trainer
module: trainers
description: The SFT, DPO and reward-model trainers, which share one logging path.
loops:
  - name: sft
    description: Supervised fine-tuning.
    signature: [train/gpt_loss]
  - name: dpo
    description: Direct preference optimisation.
    signature: [train/reject_reward]
  - name: rm
    description: Reward-model training.
    signature: [train/reward_gap]
teed:
  - logger_key: loss_mean
    name: rl.sft.nll.mean
    kind: gauge
    unit: ""
    description: Mean next-token NLL over the accumulation window.
    emitted_by: [sft]
  - logger_key: loss_mean
    name: rl.dpo.preference_loss.mean
    kind: gauge
    unit: ""
    description: Mean preference loss over the accumulation window.
    emitted_by: [dpo]
  - logger_key: loss_mean
    name: rl.rm.ranking_loss.mean
    kind: gauge
    unit: ""
    description: Mean pairwise ranking loss over the accumulation window.
    emitted_by: [rm]
  - logger_key: chosen_reward
    name: rl.dpo.implicit_reward.chosen
    kind: gauge
    unit: ""
    description: Implicit reward of the chosen response, in nats.
    emitted_by: [dpo]
  - logger_key: chosen_reward
    name: rl.rm.score.chosen
    kind: gauge
    unit: "1"
    description: Reward-model score of the chosen response.
    emitted_by: [rm]
"""


def test_three_trainer_loops_sharing_keys_each_feed_their_own_rows(tmp_path: Path) -> None:
    """Each trainer's log, its loop named, credits its own rows only."""
    catalog = loaded_catalog(tmp_path / "project", TRAINERS)
    expected = {
        "sft": {"rl.sft.nll.mean": 1},
        "dpo": {"rl.dpo.preference_loss.mean": 1, "rl.dpo.implicit_reward.chosen": 1},
        "rm": {"rl.rm.ranking_loss.mean": 1, "rl.rm.score.chosen": 1},
    }
    for loop, rows in expected.items():
        metrics: dict[str, float] = {"loss_mean": 0.5}
        if loop != "sft":
            metrics["chosen_reward"] = 0.25
        line = {"step": 1, "prefix": "train", "loop": loop, "metrics": metrics}
        stream = io.BytesIO(json.dumps(line).encode() + b"\n")
        report = check_stream(stream, catalog)
        assert _logged(report) == rows, loop
        assert _kinds(report) == [], loop


# --- the tee and live-check agree, for any catalog of rows with disjoint loops -------------

LOOP_NAMES = ("l0", "l1", "l2")
KEYS = ("loss", "reward", "time/step")


@st.composite
def scoped_rows(draw: st.DrawFn) -> list[tuple[str, str, tuple[str, ...]]]:
    """Rows ``(key, name, emitted_by)``: for each key, the loops split among disjoint rows
    (a row of no loop is every loop's, so it stands alone), plus maybe an open family."""
    rows: list[tuple[str, str, tuple[str, ...]]] = []
    for index, key in enumerate(KEYS):
        owners = draw(st.lists(st.sampled_from([-1, 0, 1, 2]), min_size=3, max_size=3))
        if draw(st.booleans()) and all(owner == -1 for owner in owners):
            rows.append((key, f"rl.k{index}.any", ()))
            continue
        for owner in sorted(set(owners) - {-1}):
            loops = tuple(LOOP_NAMES[i] for i, o in enumerate(owners) if o == owner)
            rows.append((key, f"rl.k{index}.r{owner}", loops))
    family = draw(st.sampled_from([None, (), ("l0",), ("l1", "l2")]))
    if family is not None:
        rows.append(("{rl.extra}", "rl.family", family))
    return rows


def _yaml(rows: list[tuple[str, str, tuple[str, ...]]]) -> str:
    head = (
        "owner: m\nmodule: m\ndescription: Rows of disjoint loops.\nloops:\n"
        + "".join(f"  - name: {n}\n    description: Loop {n}.\n" for n in LOOP_NAMES)
        + "attributes:\n  - name: rl.extra\n    type: string\n    description: Any key.\n"
        + '    max_cardinality: "64"\n    spans_segments: "true"\nteed:\n'
    )
    body = ""
    for key, name, loops in rows:
        body += (
            f'  - logger_key: "{key}"\n    name: {name}\n    kind: gauge\n    unit: ""\n'
            f"    description: Row {name}.\n"
        )
        if loops:
            body += f"    emitted_by: [{', '.join(loops)}]\n"
        if "{" in key:
            body += "    attributes:\n      - ref: rl.extra\n"
    return head + (body or "    []\n").replace("teed:\n    []", "teed: []")


def _teed(rows: list[tuple[str, str, tuple[str, ...]]]) -> list[TeedMetric]:
    extra = MetricAttribute("rl.extra", max_cardinality=64, spans_segments=True)
    return [
        TeedMetric(key, name, unit="", emitted_by=loops, attributes=(extra,) if "{" in key else ())
        for key, name, loops in rows
    ]


def _teed_to(rows: list[TeedMetric], key: str, loop: str | None) -> set[str]:
    vocabulary._reset_for_tests()
    exporters.reset_for_tests()
    vocabulary.register_teed_metrics(rows)
    with installed_reader() as reader, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tee_metrics({key: 1.0}, "train", loop=loop)
        return set(collect(reader))


def _checked_to(catalog: Catalog, key: str, loop: str | None) -> set[str]:
    line: dict[str, Any] = {"step": 1, "prefix": "train", "metrics": {key: 1.0}}
    if loop is not None:
        line["loop"] = loop
    report = check_stream(io.BytesIO(json.dumps(line).encode() + b"\n"), catalog)
    return set(_logged(report))


@pytest.mark.usefixtures("clean_otel")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=scoped_rows())
def test_the_tee_and_live_check_route_every_key_of_every_loop_to_the_same_row(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    """Routing is one rule: a loop's row, else the one row every loop agrees on, else none."""
    catalog = loaded_catalog(tmp_path_factory.mktemp("project"), _yaml(rows))
    teed = _teed(rows)
    for loop in (*LOOP_NAMES, None):
        for key in (*KEYS, "other/key"):
            assert _teed_to(teed, key, loop) == _checked_to(catalog, key, loop), (key, loop)


PRESENCE = """\
owner: openrlhf.trainer
module: trainers
description: Trainer metrics.
loops:
  - name: sft
    description: Supervised fine-tuning.
  - name: dpo
    description: Direct preference optimisation.
teed:
  - logger_key: loss_mean
    name: rl.train.loss_mean
    kind: gauge
    unit: ""
    description: Mean loss over the accumulation window.
    requirement_level: required
  - logger_key: reject_reward
    name: rl.dpo.implicit_reward.rejected
    kind: gauge
    unit: ""
    description: Implicit reward of the rejected response, in nats.
    requirement_level: conditionally_required
    condition: "run.loop == 'dpo'"
  - logger_key: tokens_per_second
    name: rl.train.throughput
    kind: gauge
    unit: "{token}/s"
    description: Tokens trained on per second.
    requirement_level: opt_in
"""


def _loop_run(loop: str) -> io.BytesIO:
    line = {"step": 1, "prefix": "train", "loop": loop, "metrics": {"loss_mean": 0.5}}
    return io.BytesIO(json.dumps(line).encode() + b"\n")


def test_a_condition_on_run_loop_is_decided_by_the_run_s_loop(tmp_path: Path) -> None:
    """``run.loop == 'dpo'``: missing in a DPO run, not applicable in an SFT run."""
    catalog = loaded_catalog(tmp_path / "project", PRESENCE)
    dpo = check_stream(_loop_run("dpo"), catalog)
    assert _kinds(dpo) == [("missing", "reject_reward")]
    sft = check_stream(_loop_run("sft"), catalog)
    assert _kinds(sft) == []
    states = {s.row.name: s.presence for s in sft.rows}
    assert states["rl.dpo.implicit_reward.rejected"] == "not_applicable"


def test_an_opt_in_row_counts_in_coverage_only_when_logged(tmp_path: Path) -> None:
    """A clean SFT run that logged everything asked of it reads 100%, not 50%."""
    catalog = loaded_catalog(tmp_path / "project", PRESENCE)
    report = check_stream(_loop_run("sft"), catalog)
    assert (report.coverage.seen, report.coverage.applicable) == (1, 1)


UNDECIDED = [{"time/step": 3.0}] * 4


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_gate_over_an_input_whose_loop_cannot_be_decided_fails_naming_the_fix(
    tmp_path: Path, fmt: str
) -> None:
    """Records read, no row judged: a gate fails, never a vacuous 100% coverage."""
    report = check_paths([str(_log(tmp_path / "x.jsonl", None, UNDECIDED))], _catalog(tmp_path))
    assert report.coverage.applicable == 0
    assert report.coverage.overall == 0.0
    assert "coverage: 0 rows judged" in report.summary_text()
    assert not report.ok(["undeclared", "missing"])
    rendered = report.render(fmt, ["undeclared", "missing"])
    assert "--loop" in rendered
    assert "nothing_judged" in rendered or "no row was judged" in rendered


def test_without_a_gate_an_unjudged_input_passes_but_says_nothing_was_judged(
    tmp_path: Path,
) -> None:
    report = check_paths([str(_log(tmp_path / "x.jsonl", None, UNDECIDED))], _catalog(tmp_path))
    assert report.ok()
    assert "0 rows judged" in report.summary_text()


def test_a_gate_over_an_input_whose_loop_is_named_judges_rows_and_passes(tmp_path: Path) -> None:
    report = check_paths([str(_log(tmp_path / "t.jsonl", "trainer", TRAINER))], _catalog(tmp_path))
    assert report.coverage.applicable > 0
    assert report.nothing_judged() is None
    assert report.ok(["undeclared", "missing"])
