"""Presence: requirement levels, emitted_by, first_step and loops, from YAML to live-check.

Small catalogs are written to tmp dirs; each rule has a firing and a
non-firing case.
"""

from __future__ import annotations

import functools
import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_stream
from codegen.live_check.statistics import PRESENCE_STATES
from tests.upstream_runs import LOOPS as LOOP_NAMES
from tests.upstream_runs import run_lines

REPO = Path(__file__).resolve().parents[2]


@functools.cache
def _repo_catalog() -> Catalog:
    return load(REPO)


LOOPS = """\
loops:
  - name: grpo_sync
    description: Synchronous GRPO.
    signature: [timing/train/generation, timing/train/reward_calculation]
  - name: ppo
    description: PPO with a critic.
    signature: [timing/train/generation, timing/train/reward_calculation, train/critic/loss]
  - name: sft
    description: Supervised fine-tuning.
    signature: [train/num_unmasked_tokens]
  - name: sft_v2
    description: SFT v2, logging under the empty prefix.
    signature: [total_step_time, policy_time]
"""


def row(key: str, name: str, *extra: str, prefix: str | None = None) -> str:
    """One teed row as YAML; ``extra`` lines are added as they are (``field: value``)."""
    lines = [f"  - logger_key: {key}"]
    if prefix is not None:
        lines.append(f'    prefix: "{prefix}"')
    lines += [
        f"    name: {name}",
        "    kind: gauge",
        '    unit: "1"',
        f"    description: Value of {key} logged this step.",
    ]
    lines += [f"    {line}" for line in extra]
    return "\n".join(lines) + "\n"


def write(root: Path, module: str, body: str, *, head: str = "") -> None:
    """``catalog/<module>.yaml`` under ``root`` (file prefix ``train``)."""
    text = (
        f"owner: nemo_rl.{module}\nmodule: {module}\ndescription: Metrics of {module}.\n"
        f"prefix: train\n{head}{body}"
    )
    (root / "catalog").mkdir(exist_ok=True)
    (root / "catalog" / f"{module}.yaml").write_text(text, encoding="utf-8")


def load(root: Path) -> Catalog:
    """The catalog under ``root``; asserts it has no errors."""
    result = load_and_check(root=root, lint=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.catalog


def diagnostics(root: Path) -> list[str]:
    """``CODE line:col`` of every diagnostic of the catalog under ``root``."""
    result = load_and_check(root=root, lint=False)
    return [
        f"{d.code} {d.position.line}:{d.position.column}" if d.position else d.code
        for d in result.diagnostics
    ]


def record(step: int, prefix: str = "train", loop: str | None = None, **metrics: object) -> str:
    """One JsonlLogger line (``loop`` adds the optional field naming the loop)."""
    doc: dict[str, object] = {"step": step, "prefix": prefix, "metrics": metrics}
    if loop is not None:
        doc["loop"] = loop
    return json.dumps(doc)


def check(catalog: Catalog, *lines: str, **kwargs: object) -> LiveCheckReport:
    """Check an in-memory log made of ``lines``."""
    raw = "".join(line + "\n" for line in lines).encode()
    return check_stream(io.BytesIO(raw), catalog, source="mem.jsonl", **kwargs)  # type: ignore[arg-type]


def presence(report: LiveCheckReport) -> dict[str, str]:
    """Series name -> presence state."""
    return {r.row.name: r.presence for r in report.rows}


def missing(report: LiveCheckReport) -> set[str]:
    """Series reported missing."""
    return {f.series or "" for f in report.findings if f.kind == "missing"}


# --- the catalog format -------------------------------------------------------


def test_presence_fields_are_built_and_the_file_emitted_by_is_the_default(tmp_path: Path) -> None:
    write(
        tmp_path,
        "grpo",
        "emitted_by: [grpo_sync, ppo]\n"
        + LOOPS
        + "teed:\n"
        + row("reward", "rl.reward.mean", "requirement_level: required")
        + row(
            "accuracy",
            "rl.grpo.validation.accuracy",
            "requirement_level: conditionally_required",
            "condition: when validation runs (val_period > 0)",
            'first_step: "10"',
            "emitted_by: [grpo_sync]",
            prefix="validation",
        )
        + row("loss", "rl.policy.loss"),
    )
    catalog = load(tmp_path)
    rows = {r.name: r for _f, r in catalog.rows()}
    assert rows["rl.reward.mean"].requirement_level == "required"
    assert rows["rl.reward.mean"].emitted_by == ("grpo_sync", "ppo")
    accuracy = rows["rl.grpo.validation.accuracy"]
    assert (accuracy.requirement_level, accuracy.condition, accuracy.first_step) == (
        "conditionally_required",
        "when validation runs (val_period > 0)",
        10,
    )
    assert accuracy.emitted_by == ("grpo_sync",)
    loss = rows["rl.policy.loss"]
    assert (loss.requirement_level, loss.condition, loss.first_step) == ("recommended", None, None)
    assert [loop.name for loop in catalog.loops()] == ["grpo_sync", "ppo", "sft", "sft_v2"]
    assert catalog.loops()[2].signature == ("train/num_unmasked_tokens",)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        pytest.param(["requirement_level: required"], [], id="required-ok"),
        pytest.param(
            ["requirement_level: conditionally_required", "condition: when it runs"],
            [],
            id="conditional-with-condition-ok",
        ),
        pytest.param(
            ["requirement_level: conditionally_required"],
            ["CONDITION_MISSING 11:24"],
            id="conditional-without-condition",
        ),
        pytest.param(
            ["requirement_level: required", "condition: when it runs"],
            ["CONDITION_UNUSED 12:16"],
            id="condition-on-required",
        ),
        pytest.param(
            ["condition: when it runs"], ["CONDITION_UNUSED 11:16"], id="condition-on-default"
        ),
        pytest.param(["requirement_level: mandatory"], ["INVALID_VALUE 11:24"], id="bad-level"),
        pytest.param(['first_step: "0"'], [], id="first-step-zero-ok"),
        pytest.param(['first_step: "010"'], ["INVALID_FORMAT 11:17"], id="first-step-leading-0"),
        pytest.param(["first_step: 10"], ["IMPLICIT_NON_STRING 11:17"], id="first-step-unquoted"),
        pytest.param(["emitted_by: [grpo_sync]"], [], id="known-loop"),
        pytest.param(["emitted_by: [grpo_synk]"], ["UNKNOWN_LOOP 11:18"], id="unknown-loop"),
        pytest.param(["emitted_by: [GRPO]"], ["INVALID_FORMAT 11:18"], id="loop-name-format"),
        pytest.param(["emitted_by: [ppo, ppo]"], ["INVALID_VALUE 11:17"], id="loop-twice"),
    ],
)
def test_row_presence_fields_are_checked_at_their_position(
    tmp_path: Path, extra: list[str], expected: list[str]
) -> None:
    write(tmp_path, "grpo", "teed:\n" + row("reward", "rl.reward.mean", *extra))
    write(tmp_path, "loops", LOOPS)
    assert diagnostics(tmp_path) == expected


def test_unknown_loop_in_the_file_default_is_reported_once_at_the_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        "grpo",
        "teed:\n" + row("reward", "rl.reward.mean") + row("loss", "rl.policy.loss"),
        head="emitted_by: [grpo_sync, reinforce_pp]\n",
    )
    write(tmp_path, "loops", LOOPS)
    result = load_and_check(root=tmp_path, lint=False)
    (only,) = result.diagnostics
    assert only.format() == (
        "catalog/grpo.yaml:5:25: error[UNKNOWN_LOOP]: the file's 'emitted_by' names loop "
        "'reinforce_pp', which no catalog file declares; declared loops: grpo_sync, ppo, "
        "sft, sft_v2."
    )


def test_a_loop_declared_twice_names_the_first_declaration(tmp_path: Path) -> None:
    write(tmp_path, "a", LOOPS)
    write(tmp_path, "b", "loops:\n  - name: sft\n    description: Again.\n")
    result = load_and_check(root=tmp_path, lint=False)
    (only,) = result.diagnostics
    assert only.format() == (
        "catalog/b.yaml:6:5: error[DUPLICATE_LOOP]: loop 'sft' is already declared at "
        "catalog/a.yaml:12:5; keep one declaration (loops are shared by the whole catalog)."
    )


def test_emitted_by_without_any_declared_loop_says_where_to_declare_them(tmp_path: Path) -> None:
    write(tmp_path, "grpo", "teed:\n" + row("reward", "rl.reward.mean", "emitted_by: [sft]"))
    (only,) = load_and_check(root=tmp_path, lint=False).diagnostics
    assert "declare it under 'loops:'" in only.message


def test_presence_fields_on_a_recorded_row_are_unknown(tmp_path: Path) -> None:
    write(
        tmp_path,
        "vllm",
        "recorded:\n  - name: rl.vllm.batch.duration\n    kind: histogram\n    unit: s\n"
        "    description: Wall clock of one batched generate call.\n"
        "    requirement_level: required\n",
    )
    assert diagnostics(tmp_path) == ["UNKNOWN_FIELD 10:5"]


# --- live-check: which loop ---------------------------------------------------


@pytest.fixture
def loops_catalog(tmp_path: Path) -> Catalog:
    """Rows emitted by some loops only, at every requirement level."""
    write(tmp_path, "loops", LOOPS)
    write(
        tmp_path,
        "common",
        "teed:\n"
        + row("loss", "rl.policy.loss", "requirement_level: required")
        + row("lr", "rl.learning_rate", "requirement_level: opt_in")
        + row(
            "loss",
            "rl.sft_v2.loss",
            "requirement_level: required",
            "emitted_by: [sft_v2]",
            prefix="",
        ),
    )
    write(
        tmp_path,
        "grpo",
        "emitted_by: [grpo_sync, ppo]\n"
        "teed:\n"
        + row("reward", "rl.reward.mean", "requirement_level: required")
        + row("critic/loss", "rl.value.loss", "requirement_level: required", "emitted_by: [ppo]")
        + row(
            "accuracy",
            "rl.grpo.validation.accuracy",
            "requirement_level: conditionally_required",
            "condition: when validation runs (val_period > 0)",
            prefix="validation",
        )
        + row(
            "total_validation_time",
            "rl.validation.duration",
            "requirement_level: required",
            'first_step: "10"',
            prefix="timing/validation",
        )
        + row("generation", "rl.generation.duration", prefix="timing/train"),
    )
    write(
        tmp_path,
        "sft",
        "emitted_by: [sft]\n"
        "teed:\n"
        + row("num_unmasked_tokens", "rl.sft.unmasked_tokens", "requirement_level: required"),
    )
    return load(tmp_path)


GRPO_STEP = (record(1, loss=0.5, reward=1.0), record(1, "timing/train", generation=2.0))


def test_the_loop_is_inferred_from_its_signature_keys(loops_catalog: Catalog) -> None:
    report = check(loops_catalog, *GRPO_STEP)
    assert (report.loop.name, report.loop.source) == ("grpo_sync", "inferred")
    assert report.loop.evidence == ("timing/train/generation",)
    assert "loop: grpo_sync (inferred from timing/train/generation)" in report.to_text()


def test_a_loop_whose_signature_extends_another_wins_when_its_extra_keys_are_logged(
    loops_catalog: Catalog,
) -> None:
    ppo = check(
        loops_catalog,
        *GRPO_STEP,
        json.dumps({"step": 1, "prefix": "train", "metrics": {"critic/loss": 0.1}}),
    )
    assert ppo.loop.name == "ppo"
    # Without the critic key, the smaller signature is fully matched and wins.
    assert check(loops_catalog, *GRPO_STEP).loop.name == "grpo_sync"


def test_a_signature_key_under_the_empty_prefix_matches_the_bare_key(
    loops_catalog: Catalog,
) -> None:
    report = check(loops_catalog, record(1, "", total_step_time=1.0, policy_time=0.5, loss=0.2))
    assert (report.loop.name, report.loop.evidence) == (
        "sft_v2",
        ("total_step_time", "policy_time"),
    )
    # timing/train/total_step_time is another key: no sft_v2 evidence.
    assert check(loops_catalog, record(1, "timing/train", total_step_time=1.0)).loop.name is None


def test_no_signature_key_or_a_tie_leaves_the_loop_unknown(loops_catalog: Catalog) -> None:
    assert check(loops_catalog, record(1, loss=0.5)).loop.name is None
    # grpo_sync 2 of 2 and sft_v2 2 of 2 (ppo 2 of 3): a tie, so no loop is assumed.
    tie = check(
        loops_catalog,
        *GRPO_STEP,
        record(1, "timing/train", reward_calculation=1.0),
        record(1, "", total_step_time=1.0, policy_time=0.5),
    )
    assert (tie.loop.name, tie.loop.source) == (None, "unknown")
    assert tie.loop.evidence == ("grpo_sync", "sft_v2")
    assert "loop: unknown (the signature keys of grpo_sync and sft_v2 tie; pass --loop)" in (
        tie.to_text()
    )
    # More evidence wins over a larger share: sft_v2 2 of 2 against sft 1 of 1.
    more = check(
        loops_catalog,
        record(1, num_unmasked_tokens=3),
        record(1, "", total_step_time=1.0, policy_time=0.5),
    )
    assert more.loop.name == "sft_v2"
    # Equal evidence: the larger share wins, sft 1 of 1 against sft_v2 1 of 2.
    share = check(loops_catalog, record(1, num_unmasked_tokens=3), record(1, "", policy_time=0.5))
    assert share.loop.name == "sft"


def test_the_loop_flag_overrides_the_log(loops_catalog: Catalog) -> None:
    report = check(loops_catalog, *GRPO_STEP, loop="sft")
    assert (report.loop.name, report.loop.source) == ("sft", "flag")
    assert missing(report) == {"rl.sft.unmasked_tokens"}


def test_a_log_that_names_its_loop_is_judged_as_that_loop(loops_catalog: Catalog) -> None:
    report = check(loops_catalog, record(1, loop="ppo", loss=0.5, reward=1.0))
    assert (report.loop.name, report.loop.source) == ("ppo", "log")
    assert "rl.value.loss" in missing(report)


def test_a_log_naming_an_undeclared_loop_is_an_unknown_loop_finding_listing_the_known_loops(
    loops_catalog: Catalog,
) -> None:
    report = check(
        loops_catalog,
        *GRPO_STEP,
        record(2, loop="grpo_turbo", loss=0.1),
        record(3, loop="grpo_turbo", loss=0.1),
    )
    assert (report.loop.name, report.loop.source) == ("grpo_sync", "inferred")
    (found,) = [f for f in report.findings if f.kind == "unknown_loop"]
    assert (found.key, found.count, found.line, found.step) == ("grpo_turbo", 2, 3, 2)
    assert "declared loops: grpo_sync, ppo, sft, sft_v2" in found.message()
    assert "mem.jsonl:3:1: warning[UNKNOWN_LOOP]: 2 line(s) name loop 'grpo_turbo'" in (
        report.to_text()
    )
    assert report.failed(["unknown_loop"]) == ["unknown_loop"]


def test_a_log_naming_declared_loops_only_has_no_loop_finding(loops_catalog: Catalog) -> None:
    report = check(loops_catalog, record(1, loop="ppo", loss=0.1), record(2, loop="ppo", loss=0.1))
    assert report.kinds() & {"unknown_loop", "loop_conflict"} == set()
    assert report.failed(["unknown_loop", "loop_conflict"]) == []


def test_records_naming_two_loops_keep_the_first_and_report_a_conflict(
    loops_catalog: Catalog,
) -> None:
    report = check(
        loops_catalog,
        record(1, loop="ppo", loss=0.1),
        record(2, loop="sft", loss=0.1),
        record(3, loop="ppo", loss=0.1),
    )
    assert (report.loop.name, report.loop.source) == ("ppo", "log")
    (conflict,) = [f for f in report.findings if f.kind == "loop_conflict"]
    assert (conflict.key, conflict.line, conflict.count) == ("sft", 2, 1)
    assert "line 1 named 'ppo' first, the loop that worker is judged as" in conflict.message()
    doc = json.loads(report.to_json(["loop_conflict"]))
    (entry,) = [f for f in doc["findings"] if f["kind"] == "loop_conflict"]
    assert (entry["key"], entry["prefix"], entry["severity"], entry["source"]) == (
        "sft",
        None,
        "error",
        "mem.jsonl:2:1",
    )
    assert doc["failed"] == ["loop_conflict"]


def test_the_loop_flag_overrides_a_logged_loop(loops_catalog: Catalog) -> None:
    report = check(loops_catalog, record(1, loop="ppo", loss=0.1), loop="sft")
    assert (report.loop.name, report.loop.source) == ("sft", "flag")
    assert report.kinds() & {"unknown_loop", "loop_conflict"} == set()


def test_a_non_string_loop_field_is_malformed(loops_catalog: Catalog) -> None:
    report = check(loops_catalog, json.dumps({"step": 1, "prefix": "", "metrics": {}, "loop": 3}))
    (bad,) = report.findings
    assert bad.kind == "malformed"
    assert '"loop" must be a string' in bad.message()


# --- live-check: what is missing ----------------------------------------------


def test_only_required_rows_the_loop_emits_are_missing(loops_catalog: Catalog) -> None:
    report = check(loops_catalog, *GRPO_STEP, record(12, loss=0.1))
    states = presence(report)
    assert missing(report) == {"rl.validation.duration"}
    assert states == {
        "rl.policy.loss": "logged",
        "rl.reward.mean": "logged",
        "rl.generation.duration": "logged",
        "rl.learning_rate": "not_logged",  # opt_in
        "rl.sft_v2.loss": "not_emitted",
        "rl.value.loss": "not_emitted",  # ppo only
        "rl.sft.unmasked_tokens": "not_emitted",
        "rl.grpo.validation.accuracy": "conditional",
        "rl.validation.duration": "missing",  # required, the run reached step 10
    }
    assert set(states.values()) <= set(PRESENCE_STATES)


def test_a_run_that_stopped_before_a_rows_first_step_is_not_missing_it(
    loops_catalog: Catalog,
) -> None:
    report = check(loops_catalog, *GRPO_STEP)
    assert missing(report) == set()
    assert presence(report)["rl.validation.duration"] == "not_due"
    (note,) = [n for n in report.notices if n.kind == "not_due"]
    assert "first logged at step 10 and the run's last step is 1" in note.message
    assert str(note.position).endswith("catalog/grpo.yaml:35:17")


def test_a_conditionally_required_row_is_information_with_its_condition(
    loops_catalog: Catalog,
) -> None:
    report = check(loops_catalog, *GRPO_STEP)
    (note,) = [n for n in report.notices if n.kind == "conditional"]
    assert note.message == (
        "validation/accuracy (rl.grpo.validation.accuracy) was not logged; it is logged only "
        "when validation runs (val_period > 0)"
    )
    assert "info[CONDITIONAL]: validation/accuracy" in report.to_text()
    doc = json.loads(report.to_json(["missing"]))
    assert doc["ok"] is True
    assert [i["kind"] for i in doc["information"]] == ["conditional", "not_due"]
    assert doc["loop"] == {
        "name": "grpo_sync",
        "source": "inferred",
        "evidence": ["timing/train/generation"],
    }
    assert doc["presence"]["not_emitted"] == 3


def test_a_ppo_run_misses_the_critic_row_and_a_sft_run_misses_nothing_of_grpo(
    loops_catalog: Catalog,
) -> None:
    ppo = check(loops_catalog, *GRPO_STEP, record(1, loop="ppo"))
    assert missing(ppo) == {"rl.value.loss"}
    sft = check(loops_catalog, record(1, loss=0.3, num_unmasked_tokens=9))
    assert sft.loop.name == "sft"
    assert missing(sft) == set()
    assert presence(sft)["rl.reward.mean"] == "not_emitted"


def test_a_logged_row_the_loop_does_not_emit_is_noted(loops_catalog: Catalog) -> None:
    report = check(loops_catalog, record(1, loss=0.3, num_unmasked_tokens=9, reward=1.0))
    (note,) = [n for n in report.notices if n.kind == "unexpected_loop"]
    assert note.series == "rl.reward.mean"
    assert "does not list loop sft" in note.message


def test_without_a_known_loop_rows_some_possible_loops_emit_are_undecided(
    loops_catalog: Catalog,
) -> None:
    report = check(loops_catalog, record(1, loss=0.3))
    assert report.loop.name is None
    states = presence(report)
    # Any loop may have written this log: no row listing loops is judged.
    assert states["rl.sft_v2.loss"] == "undecided"
    assert states["rl.reward.mean"] == "undecided"
    assert missing(report) == set()
    assert report.inactive_owners == {}
    assert json.loads(report.to_json())["presence"]["undecided"] == 7


def test_without_a_known_loop_the_logged_rows_narrow_the_possible_loops(
    loops_catalog: Catalog,
) -> None:
    # reward is emitted by grpo_sync and ppo only: those rows both emit are judged.
    report = check(loops_catalog, record(1, reward=0.3))
    assert report.loop.name is None
    states = presence(report)
    assert states["rl.validation.duration"] == "not_due"  # required by grpo_sync and ppo
    assert states["rl.value.loss"] == "undecided"  # ppo only
    assert states["rl.sft.unmasked_tokens"] == "not_emitted"
    # Rows that list no loop keep the owner rule: common logged nothing.
    assert states["rl.policy.loss"] == "inactive_owner"
    assert report.inactive_owners == {"catalog/common.yaml": 2}


def test_rows_that_list_no_loop_keep_the_owner_rule_and_all_owners(
    tmp_path: Path,
) -> None:
    write(
        tmp_path, "grpo", "teed:\n" + row("reward", "rl.reward.mean", "requirement_level: required")
    )
    write(
        tmp_path, "sft", "teed:\n" + row("val_loss", "rl.sft.loss", "requirement_level: required")
    )
    catalog = load(tmp_path)
    report = check(catalog, record(1, reward=0.5))
    assert presence(report)["rl.sft.loss"] == "inactive_owner"
    assert report.inactive_owners == {"catalog/sft.yaml": 1}
    strict = check(catalog, record(1, reward=0.5), all_owners=True)
    assert missing(strict) == {"rl.sft.loss"}
    assert strict.inactive_owners == {}


def test_rows_without_emitted_by_keep_the_owner_rule_when_the_loop_is_known(
    loops_catalog: Catalog,
) -> None:
    # sft run: common rows list no loop; common logged nothing -> inactive, not missing.
    report = check(loops_catalog, record(1, num_unmasked_tokens=9))
    assert report.loop.name == "sft"
    assert presence(report)["rl.policy.loss"] == "inactive_owner"
    assert missing(report) == set()


# --- the command ------------------------------------------------------------------


def test_cli_loop_flag_judges_the_run_as_that_loop(
    loops_catalog: Catalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "run.jsonl"
    log.write_text("\n".join(GRPO_STEP) + "\n")
    args = ["live-check", str(log), "--root", str(tmp_path), "--fail-on", "missing"]
    assert main(args) == 0
    capsys.readouterr()
    assert main([*args, "--loop", "ppo", "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["loop"]["source"] == "flag"
    assert [f["series"] for f in doc["findings"] if f["kind"] == "missing"] == ["rl.value.loss"]


def test_cli_unknown_loop_is_a_usage_error(
    loops_catalog: Catalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "run.jsonl"
    log.write_text(GRPO_STEP[0] + "\n")
    assert main(["live-check", str(log), "--root", str(tmp_path), "--loop", "grpo"]) == 2
    err = capsys.readouterr().err
    assert "unknown loop 'grpo'; declared loops: grpo_sync, ppo, sft, sft_v2" in err


# --- resolve, docs and diff carry the fields ---------------------------------------


def test_resolve_carries_presence_fields_and_the_loops(loops_catalog: Catalog) -> None:
    from codegen.generate.resolve import resolve_catalog

    doc = resolve_catalog(loops_catalog)
    rows = {r["name"]: r for r in doc["rows"]}  # type: ignore[attr-defined]
    accuracy = rows["rl.grpo.validation.accuracy"]
    assert {k: accuracy[k] for k in ("requirement_level", "condition", "emitted_by")} == {
        "requirement_level": "conditionally_required",
        "condition": "when validation runs (val_period > 0)",
        "emitted_by": ["grpo_sync", "ppo"],
    }
    assert rows["rl.validation.duration"]["first_step"] == 10
    loops = doc["loops"]
    assert [loop["name"] for loop in loops] == ["grpo_sync", "ppo", "sft", "sft_v2"]  # type: ignore[attr-defined]
    assert loops[1]["signature"][-1] == "train/critic/loss"  # type: ignore[index]


def test_docs_pages_show_each_teed_rows_presence(loops_catalog: Catalog, tmp_path: Path) -> None:
    from codegen.generate.docs import render_catalog_data
    from metric_catalog.sphinx import _data, _html

    data_path = tmp_path / "catalog.json"
    data_path.write_text(render_catalog_data(loops_catalog), encoding="utf-8")
    data = _data.load(data_path)
    paths = {entry["module"]: path for path, entry in data.files.items()}

    def page(module: str) -> str:
        return _html.owner_page_html(data, paths[module], lambda target: target)

    grpo = page("grpo")
    assert (
        '<p class="mc-presence">conditionally required (when validation runs (val_period &gt; 0));'
        " logged by <code>grpo_<wbr>sync</code>, <code>ppo</code>" in grpo
    )
    assert (
        '<p class="mc-presence">required; logged by <code>grpo_<wbr>sync</code>, <code>ppo</code>'
        in grpo
    )
    assert '<p class="mc-cadence">from step 10</p>' in grpo
    assert '<p class="mc-presence">opt in; logged by any loop' in page("common")


def test_diff_lists_a_changed_requirement_level_at_its_position(tmp_path: Path) -> None:
    from codegen.diff import diff_catalogs

    write(tmp_path, "loops", LOOPS)
    write(tmp_path, "grpo", "teed:\n" + row("reward", "rl.reward.mean", "stability: stable"))
    baseline = load(tmp_path)
    write(
        tmp_path,
        "grpo",
        "teed:\n"
        + row(
            "reward",
            "rl.reward.mean",
            "stability: stable",
            "requirement_level: required",
            "emitted_by: [grpo_sync]",
        ),
    )
    report = diff_catalogs(baseline, load(tmp_path))
    changes = {(c.field, c.old, c.new, str(c.position)) for c in report.changed}
    assert changes == {
        ("requirement_level", "recommended", "required", "catalog/grpo.yaml:12:24"),
        ("emitted_by", None, "grpo_sync", "catalog/grpo.yaml:13:17"),
    }
    (finding,) = report.diagnostics
    assert finding.code == "STABLE_REQUIREMENT_RAISED"
    assert finding.format().startswith(
        "catalog/grpo.yaml:12:24: error[STABLE_REQUIREMENT_RAISED]: stable series "
        "rl.reward.mean: requirement level raised recommended -> required: "
    )


# --- live-check: several prefixes, key families and their attributes ---------------

ATTRIBUTES = """\
attributes:
  - name: rl.setup.phase
    type: string
    description: Startup phase that was timed.
    max_cardinality: "3"
  - name: rl.efficiency.window
    type: string
    description: Period one value covers.
    values:
      - value: step
        description: A per-step delta.
      - value: run
        description: Cumulative since the process started.
  - name: rl.dataset
    type: string
    description: Validation dataset name.
    max_cardinality: "100"
  - name: rl.bucket
    type: int
    description: Bucket index.
    max_cardinality: "100"
"""


@pytest.fixture
def family_catalog(tmp_path: Path) -> Catalog:
    """Rows under two prefixes, and families in the key and in the prefix."""
    write(tmp_path, "attributes", ATTRIBUTES)
    write(
        tmp_path,
        "fam",
        "teed:\n"
        + row("loss", "rl.policy.loss", 'prefixes: [train, ""]')
        + row(
            '"{rl.setup.phase}_time_s"',
            "rl.setup.duration",
            "attributes: [{ref: rl.setup.phase}]",
            prefix="timing/setup",
        )
        + row(
            '"efficiency/{rl.efficiency.window}_s"',
            "rl.efficiency.seconds",
            "attributes: [{ref: rl.efficiency.window}]",
            prefix="",
        )
        + row(
            "preference_loss",
            "rl.dpo.validation.preference_loss",
            "attributes: [{ref: rl.dataset}]",
            # The attribute-less set and the overflow point count: room for 2 datasets.
            'cardinality_limit: "4"',
            prefix="validation-{rl.dataset}",
        )
        + row(
            '"bucket_{rl.bucket}"',
            "rl.bucket.value",
            "attributes: [{ref: rl.bucket}]",
        ),
    )
    return load(tmp_path)


def kinds(report: LiveCheckReport) -> list[tuple[str, str, int]]:
    """(kind, prefix/key, count) of every finding but missing, sorted."""
    return sorted((f.kind, f.qualified_key, f.count) for f in report.findings)


def test_a_row_under_several_prefixes_matches_each(family_catalog: Catalog) -> None:
    report = check(family_catalog, record(1, loss=0.5), record(1, "", loss=0.4))
    assert kinds(report) == []
    (loss,) = [r for r in report.rows if r.row.name == "rl.policy.loss"]
    assert loss.logged == 2


def test_family_keys_count_as_their_row_with_allowed_values(family_catalog: Catalog) -> None:
    report = check(
        family_catalog,
        record(0, "timing/setup", policy_init_time_s=3.0, vllm_init_time_s=9.0),
        record(1, "", **{"efficiency/step_s": 1.0, "efficiency/run_s": 10.0}),
        record(2, "validation-gsm8k", preference_loss=0.3),
        record(2, "train", bucket_3=1.0),
    )
    assert kinds(report) == []
    logged = {r.row.name: r.logged for r in report.rows}
    assert logged == {
        "rl.policy.loss": 0,
        "rl.setup.duration": 2,
        "rl.efficiency.seconds": 2,
        "rl.dpo.validation.preference_loss": 1,
        "rl.bucket.value": 1,
    }


def test_a_family_key_outside_the_enum_is_an_attribute_value_finding(
    family_catalog: Catalog,
) -> None:
    report = check(
        family_catalog,
        record(1, "", **{"efficiency/hour_s": 1.0}),
        record(2, "", **{"efficiency/hour_s": 2.0}),
    )
    (finding,) = report.findings
    assert (finding.kind, finding.qualified_key, finding.count) == (
        "attribute_value",
        "efficiency/hour_s",
        2,
    )
    assert finding.message() == (
        "efficiency/hour_s (rl.efficiency.seconds) captures rl.efficiency.window='hour', "
        "which is not one of its values (step, run); the tee drops it: log one of them, or "
        "add the value to the attribute"
    )
    assert report.failed(["attribute_value"]) == ["attribute_value"]


def test_an_int_attribute_capturing_text_is_an_attribute_value_finding(
    family_catalog: Catalog,
) -> None:
    report = check(family_catalog, record(1, bucket_x=1.0), record(1, bucket_12=1.0))
    assert kinds(report) == [("attribute_value", "train/bucket_x", 1)]


def test_an_open_attribute_over_its_max_cardinality_is_reported_once(
    family_catalog: Catalog,
) -> None:
    within = check(
        family_catalog, record(0, "timing/setup", a_time_s=1.0, b_time_s=1.0, c_time_s=1.0)
    )
    assert kinds(within) == []
    over = check(
        family_catalog,
        record(0, "timing/setup", a_time_s=1.0, b_time_s=1.0, c_time_s=1.0),
        record(1, "timing/setup", a_time_s=1.0, d_time_s=1.0, e_time_s=1.0),
    )
    (finding,) = over.findings
    assert (finding.kind, finding.qualified_key) == ("attribute_budget", "timing/setup/d_time_s")
    assert "more than 3 distinct values of rl.setup.phase (its max_cardinality)" in (
        finding.message()
    )


def test_a_row_over_its_cardinality_limit_is_reported(family_catalog: Catalog) -> None:
    lines = [record(1, f"validation-{name}", preference_loss=0.1) for name in ("a", "b", "a")]
    assert kinds(check(family_catalog, *lines)) == []
    report = check(family_catalog, *lines, record(2, "validation-c", preference_loss=0.1))
    assert kinds(report) == [("attribute_budget", "validation-c/preference_loss", 1)]
    assert "more distinct attribute sets than its budget of 4" in report.findings[0].message()


def test_a_key_of_no_family_shape_is_still_undeclared(family_catalog: Catalog) -> None:
    report = check(family_catalog, record(0, "timing/setup", parallel_init_enabled=1))
    assert kinds(report) == [("undeclared", "timing/setup/parallel_init_enabled", 1)]


def test_several_worker_files_are_judged_as_one_run_of_the_flagged_loop(
    loops_catalog: Catalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "run-rank0.jsonl").write_text(GRPO_STEP[0] + "\n")
    (tmp_path / "run-rank1.jsonl").write_text(GRPO_STEP[1] + "\n")
    pattern = str(tmp_path / "run-rank*.jsonl")
    args = ["live-check", pattern, "--root", str(tmp_path), "--format", "json"]
    assert main(args) == 0
    inferred = json.loads(capsys.readouterr().out)
    assert inferred["loop"]["name"] == "grpo_sync"  # the signature key is in rank 1's file
    assert main([*args, "--loop", "ppo", "--fail-on", "missing"]) == 1
    flagged = json.loads(capsys.readouterr().out)
    assert flagged["loop"]["source"] == "flag"
    assert [f["series"] for f in flagged["findings"] if f["kind"] == "missing"] == ["rl.value.loss"]


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(LOOP_NAMES))
def test_the_judgement_does_not_depend_on_the_order_of_the_lines(
    rnd: random.Random, loop: str
) -> None:
    catalog = _repo_catalog()
    lines = run_lines(loop, steps=11)
    shuffled = lines[:]
    rnd.shuffle(shuffled)
    first, second = check(catalog, *lines), check(catalog, *shuffled)
    assert first.loop == second.loop
    assert presence(first) == presence(second)
    assert missing(first) == missing(second)


def test_a_missing_row_says_which_loop_requires_it(loops_catalog: Catalog) -> None:
    ppo = check(loops_catalog, *GRPO_STEP, loop="ppo")
    (finding,) = [f for f in ppo.findings if f.kind == "missing"]
    assert finding.message() == (
        "train/critic/loss (rl.value.loss) is required of ppo runs but was never logged; log "
        "it, or fix the row's requirement_level or emitted_by"
    )
    unknown = check(loops_catalog, record(1, "", loss=0.3))
    assert [f.message() for f in unknown.findings if f.kind == "missing"] == [
        "train/loss (rl.policy.loss) is required but was never logged; log it or lower its "
        "requirement_level"
    ]
