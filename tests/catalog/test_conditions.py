"""Presence that depends on the run's configuration: the expression language and live-check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.catalog.conditions import (
    ConditionError,
    ConfigPath,
    parse_condition,
    parse_config_path,
    parse_first_step,
)
from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.live_check import check_file
from metric_catalog.loggers import JsonlLogger
from tests.catalog_projects import loaded_catalog

CONFIG = {
    "trainer": {"test_freq": 5, "critic_warmup": 0, "name": "ppo"},
    "algorithm": {"use_kl_in_reward": False, "kl-ctrl": {"type": "fixed"}},
}


LIST_CONFIG = {
    "dataset_mixer_eval_list": [],
    "dataset_mixer_list": ["ai2-adapt-dev/rlvr_gsm8k_zs", "1.0"],
    "num_learners_per_node": [2, 4],
    "stages": [[1, 2], [3]],
}


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("config.dataset_mixer_eval_list != []", False),
        ("config.dataset_mixer_eval_list == []", True),
        ("config.dataset_mixer_list != []", True),
        ("config.dataset_mixer_list == ['ai2-adapt-dev/rlvr_gsm8k_zs', '1.0']", True),
        ("config.num_learners_per_node == (2, 4)", True),
        ("config.num_learners_per_node == [4, 2]", False),
        ("config.stages == [[1, 2], [3]]", True),
        ("config.num_learners_per_node in [[2, 4], [8]]", True),
        ("config.num_learners_per_node < [3]", True),
        ("'1.0' in config.dataset_mixer_list", True),
    ],
)
def test_a_list_the_run_logged_compares_with_a_literal_list(text: str, holds: bool) -> None:
    """A configuration list (JSON, YAML and W&B configurations hold lists) equals the literal
    list or tuple with the same items: ``config.eval_list != []`` holds only when it has some."""
    condition = parse_condition(text)
    assert condition is not None
    assert condition.holds(LIST_CONFIG) is holds


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("config.trainer.test_freq > 0", True),
        ("config.trainer.test_freq > 0 and not config.algorithm.use_kl_in_reward", True),
        ("config.algorithm.use_kl_in_reward", False),
        ("config.algorithm.use_kl_in_reward == false", True),
        ("config.trainer.name in ['ppo', 'grpo']", True),
        ("config.trainer.name not in ('ppo',)", False),
        ('config.algorithm["kl-ctrl"].type == "fixed"', True),
        ("0 < config.trainer.test_freq <= 10", True),
        ("config.trainer.critic_warmup > -1 or config.nothing", True),
        ("config.trainer.missing > 0", None),  # not logged: undecided
        # Three-valued: a false operand decides an and, a true one an or, wherever it is.
        ("config.trainer.missing > 0 and config.algorithm.use_kl_in_reward", False),
        ("config.trainer.missing > 0 or config.trainer.test_freq > 0", True),
        ("config.trainer.missing > 0 and config.trainer.test_freq > 0", None),
        ("config.trainer.missing > 0 or config.algorithm.use_kl_in_reward", None),
        ("not (config.trainer.missing and config.algorithm.use_kl_in_reward)", True),
        ("config.trainer.name > 3", None),  # values that do not compare: undecided
    ],
)
def test_an_expression_over_config_is_evaluated_without_eval(text: str, holds: bool | None) -> None:
    condition = parse_condition(text)
    assert condition is not None
    assert condition.holds(CONFIG) is holds


@pytest.mark.parametrize(
    "text",
    [
        "when validation runs (val_period > 0)",
        "only with use_kl_loss",
        "val_period > 0",  # names no config: prose, as before
        "x" * 600,
        "",
    ],
)
def test_text_that_names_no_config_is_prose(text: str) -> None:
    assert parse_condition(text) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("config.trainer.freq() > 0", "is not allowed"),
        ("config.a + 1 > 2", "is not allowed"),
        ("__import__('os').system('id') or config.a", "__import__ is not a configuration value"),
        ("config.a > val_period", "val_period is not a configuration value"),
        ("config.a @ config.b", "is not allowed"),
        ("[c for c in config.a]", "c is not a configuration value"),
        ("config.a if config.b else config.c", "is not allowed"),
    ],
)
def test_anything_else_over_config_is_refused_naming_it(text: str, message: str) -> None:
    with pytest.raises(ConditionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_condition(text)


@given(st.text(max_size=80))
def test_any_text_is_prose_an_expression_or_refused_never_anything_else(text: str) -> None:
    try:
        condition = parse_condition(text)
    except ConditionError:
        return
    if condition is not None:
        assert condition.holds(CONFIG) in (True, False, None)


def test_config_paths_are_the_whole_paths_in_order() -> None:
    condition = parse_condition("config.trainer.test_freq > 0 and config.algorithm.x")
    assert condition is not None
    assert [str(p) for p in condition.paths] == [
        "config.trainer.test_freq",
        "config.algorithm.x",
    ]
    assert parse_config_path("config.trainer.test_freq") == ConfigPath(("trainer", "test_freq"))
    assert parse_config_path("10") is None


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("config.trainer.test_freq", (("trainer", "test_freq"), 0)),
        ("config.freezing_actor_steps + 1", (("freezing_actor_steps",), 1)),
        ("config.freezing_actor_steps+1", (("freezing_actor_steps",), 1)),
        ("config.trainer.critic_warmup - 2", (("trainer", "critic_warmup"), -2)),
        ("config.a + 1.5", None),
        ("config.a + config.b", None),
        ("config.a * 2", None),
        ("1 + config.a", None),
        ("config.a + -1", None),
        ("config.a + True", None),
        ("10", None),
    ],
)
def test_first_step_is_a_configuration_value_plus_a_whole_number(
    text: str, parsed: tuple[tuple[str, ...], int] | None
) -> None:
    """``config.x + N`` / ``- N``: code that starts the step after a configured one."""
    expected = None if parsed is None else (ConfigPath(parsed[0]), parsed[1])
    assert parse_first_step(text) == expected


# --- live-check judges presence by the logged configuration ------------------------------

CATALOG = """\
owner: verl.trainer.ppo.ray_trainer
module: verl_trainer
description: Metrics logged by verl's PPO trainer.
prefix: ""
teed:
  - logger_key: actor/pg_loss
    name: rl.verl.actor.pg_loss
    kind: gauge
    unit: "1"
    description: Policy-gradient loss of the actor.
    requirement_level: required
  - logger_key: actor/kl_loss
    name: rl.verl.actor.kl_loss
    kind: gauge
    unit: "1"
    description: KL loss against the reference policy.
    requirement_level: conditionally_required
    condition: "config.actor_rollout_ref.actor.use_kl_loss"
  - logger_key: val-core/acc
    name: rl.verl.validation.accuracy
    kind: gauge
    unit: "1"
    description: Validation accuracy.
    requirement_level: conditionally_required
    condition: "config.trainer.test_freq > 0"
    first_step: "config.trainer.test_freq"
  - logger_key: actor/policy_loss
    name: rl.openrlhf.actor.policy_loss
    kind: gauge
    unit: ""
    description: Policy loss, logged once global_step > freezing_actor_steps.
    requirement_level: required
    first_step: "config.freezing_actor_steps + 1"
  - logger_key: critic/vf_loss
    name: rl.verl.critic.vf_loss
    kind: gauge
    unit: "1"
    description: Value-function loss.
    requirement_level: conditionally_required
    condition: "when a critic is trained"
"""


@pytest.fixture(scope="module")
def verl_conditions_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """verl's PPO trainer rows of :data:`CATALOG`, with their presence conditions."""
    return loaded_catalog(tmp_path_factory.mktemp("conditions"), CATALOG, "verl.yaml")


def _run(path: Path, config: dict[str, Any] | None, steps: int) -> Path:
    with JsonlLogger(path, config=config) as log:
        for step in range(1, steps + 1):
            log.log_metrics({"actor/pg_loss": 0.5}, step)
    return path


def _presence(catalog: Catalog, path: Path) -> tuple[dict[str, str], list[str]]:
    report = check_file(str(path), catalog)
    states = {summary.row.name: summary.presence for summary in report.rows}
    return states, sorted(f"{f.kind}:{f.series}" for f in report.findings)


def _config(use_kl: bool, test_freq: int) -> dict[str, Any]:
    return {
        "actor_rollout_ref": {"actor": {"use_kl_loss": use_kl}},
        "trainer": {"test_freq": test_freq},
    }


def test_the_header_line_carries_the_configuration(tmp_path: Path) -> None:
    path = _run(tmp_path / "run.jsonl", _config(True, 5), 1)
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header == {"config": _config(True, 5)}


def test_a_condition_that_holds_makes_the_row_required(
    verl_conditions_catalog: Catalog, tmp_path: Path
) -> None:
    states, findings = _presence(
        verl_conditions_catalog, _run(tmp_path / "run.jsonl", _config(True, 5), 8)
    )
    assert states["rl.verl.actor.kl_loss"] == "missing"
    assert states["rl.verl.validation.accuracy"] == "missing"
    assert findings == ["missing:rl.verl.actor.kl_loss", "missing:rl.verl.validation.accuracy"]


def test_a_condition_that_does_not_hold_makes_the_row_not_applicable(
    verl_conditions_catalog: Catalog, tmp_path: Path
) -> None:
    states, findings = _presence(
        verl_conditions_catalog, _run(tmp_path / "run.jsonl", _config(False, -1), 8)
    )
    assert states["rl.verl.actor.kl_loss"] == "not_applicable"
    assert states["rl.verl.validation.accuracy"] == "not_applicable"
    assert findings == []


def test_first_step_read_from_the_configuration(
    verl_conditions_catalog: Catalog, tmp_path: Path
) -> None:
    states, findings = _presence(
        verl_conditions_catalog, _run(tmp_path / "run.jsonl", _config(False, 10), 4)
    )
    assert states["rl.verl.validation.accuracy"] == "not_due"
    assert findings == []


@pytest.mark.parametrize(
    ("freeze", "steps", "presence"),
    [(3, 3, "not_due"), (3, 4, "missing"), (-1, 1, "missing"), (0, 1, "missing")],
)
def test_first_step_adds_its_offset_to_the_configuration_value(
    verl_conditions_catalog: Catalog, tmp_path: Path, freeze: int, steps: int, presence: str
) -> None:
    """``config.freezing_actor_steps + 1``: frozen 3 steps, a run that stops at 3 lacks nothing."""
    config = _config(False, -1) | {"freezing_actor_steps": freeze}
    states, _ = _presence(verl_conditions_catalog, _run(tmp_path / "run.jsonl", config, steps))
    assert states["rl.openrlhf.actor.policy_loss"] == presence


def test_without_a_configuration_conditions_stay_information(
    verl_conditions_catalog: Catalog, tmp_path: Path
) -> None:
    states, findings = _presence(verl_conditions_catalog, _run(tmp_path / "run.jsonl", None, 8))
    assert states["rl.verl.actor.kl_loss"] == "conditional"
    assert states["rl.verl.critic.vf_loss"] == "conditional"
    assert findings == []


@pytest.mark.parametrize(
    ("config", "extra", "expected"),
    [
        # pg_loss and policy_loss (required) apply; kl_loss, validation.accuracy and
        # vf_loss are conditional and undecided (no configuration): not counted.
        pytest.param(None, {}, (2, 2), id="no-config"),
        # A configuration decides kl_loss (required, missing) and validation.accuracy
        # (required every 5 steps: not due at step 1, so not counted); vf_loss's prose
        # condition stays undecided.
        pytest.param(_config(True, 5), {}, (2, 3), id="config-decides"),
        # An undecided row the run logged counts, seen.
        pytest.param(None, {"critic/vf_loss": 0.5}, (3, 3), id="undecided-but-logged"),
    ],
)
def test_coverage_leaves_out_an_undecided_conditional_row_the_run_did_not_log(
    verl_conditions_catalog: Catalog,
    tmp_path: Path,
    config: dict[str, Any] | None,
    extra: dict[str, float],
    expected: tuple[int, int],
) -> None:
    """A row whose condition cannot be decided may rightly be absent: no mark against the run."""
    path = tmp_path / "run.jsonl"
    with JsonlLogger(path, config=config) as log:
        log.log_metrics({"actor/pg_loss": 0.5, "actor/policy_loss": 0.1, **extra}, 1)
    report = check_file(str(path), verl_conditions_catalog)
    assert (report.coverage.seen, report.coverage.applicable) == expected  # (seen, applicable)


def test_a_prose_condition_stays_information_with_a_configuration(
    verl_conditions_catalog: Catalog, tmp_path: Path
) -> None:
    states, _ = _presence(
        verl_conditions_catalog, _run(tmp_path / "run.jsonl", _config(True, 5), 8)
    )
    assert states["rl.verl.critic.vf_loss"] == "conditional"


def test_a_header_whose_config_is_not_an_object_is_malformed(
    verl_conditions_catalog: Catalog, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"config": [1, 2]}\n{"step": 1, "prefix": "", "metrics": {}}\n')
    report = check_file(str(path), verl_conditions_catalog)
    (finding,) = [f for f in report.findings if f.kind == "malformed"]
    assert "configuration header" in finding.message()


# --- a condition the configuration decides outranks the idle-owner rule ------------------

VALIDATION = """\
owner: verl.trainer.ppo.ray_trainer
module: verl_validation
description: Validation metrics, in their own catalog file (an owner of their own).
prefix: val-core
teed:
  - logger_key: acc
    name: rl.verl.val.acc
    kind: gauge
    unit: "1"
    description: Validation accuracy.
    requirement_level: conditionally_required
    condition: "config.trainer.test_freq > 0"
  - logger_key: reward
    name: rl.verl.val.reward
    kind: gauge
    unit: "1"
    description: Validation reward.
    requirement_level: conditionally_required
    condition: "when validation runs"
"""


@pytest.fixture(scope="module")
def two_owners(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    root = tmp_path_factory.mktemp("owners")
    (root / "catalog").mkdir()
    (root / "catalog" / "verl.yaml").write_text(CATALOG, encoding="utf-8")
    (root / "catalog" / "validation.yaml").write_text(VALIDATION, encoding="utf-8")
    result = load_and_check(root=root)
    assert result.catalog is not None, result.diagnostics
    return result.catalog


Judged = tuple[str, list[str], int]
"""A row's presence state, the run's findings and its applicable rows."""


@pytest.mark.parametrize(
    ("test_freq", "judged"),
    [
        pytest.param(-1, ("not_applicable", [], 1), id="condition-false"),
        pytest.param(
            5,
            (
                "missing",
                ["missing:rl.verl.val.acc", "missing:rl.verl.validation.accuracy"],
                3,
            ),
            id="condition-holds",
        ),
    ],
)
def test_a_decided_condition_judges_a_row_whose_file_logged_nothing(
    two_owners: Catalog, tmp_path: Path, test_freq: int, judged: Judged
) -> None:
    """The configuration decides, not which files logged: a row it rules out is not
    applicable (and not counted in the coverage), a row it requires is missing."""
    state, findings, applicable = judged
    path = _run(tmp_path / "run.jsonl", _config(False, test_freq), 8)
    report = check_file(str(path), two_owners)
    states = {summary.row.name: summary.presence for summary in report.rows}
    assert states["rl.verl.val.acc"] == state
    # A prose condition cannot be decided: the idle-owner rule still holds for it.
    assert states["rl.verl.val.reward"] == "inactive_owner"
    assert sorted(f"{f.kind}:{f.series}" for f in report.findings) == findings
    # pg_loss always; neither vf_loss nor val.reward (prose conditions: undecided, and not
    # logged, so not known to apply, even though val.reward's owner logged nothing); both
    # test_freq rows when it holds.
    assert report.coverage.applicable == applicable


@pytest.mark.parametrize(
    ("text", "run", "holds"),
    [
        ("run.format != 'wandb'", {"format": "tensorboard"}, True),
        ("run.format != 'wandb'", {"format": "wandb"}, False),
        ("run.format in ['jsonl', 'tensorboard']", {"format": "jsonl"}, True),
        ("run.format != 'wandb'", {}, None),  # inputs of several formats: undecided
        ("run.format != 'wandb'", None, None),
        ("config.trainer.test_freq > 0 and run.format == 'wandb'", {"format": "wandb"}, True),
        ("config.trainer.test_freq > 0 and run.format == 'wandb'", {"format": "jsonl"}, False),
    ],
)
def test_run_format_names_the_format_the_run_was_read_in(
    text: str, run: dict[str, str] | None, holds: bool | None
) -> None:
    """A key only some logging backends get (Megatron-LM's 'vs samples' tags: TensorBoard)."""
    condition = parse_condition(text)
    assert condition is not None
    assert condition.holds(CONFIG, run) is holds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run.host == 'a'", "run.host is not known of a run: only run.format"),
        ("run['format'] == 'wandb'", "is not allowed"),
        ("run == 'wandb'", "is not allowed"),
        ("run.format.x == 1", "is not allowed"),
    ],
)
def test_anything_else_of_run_is_refused_naming_it(text: str, message: str) -> None:
    with pytest.raises(ConditionError, match=message):
        parse_condition(text)


FORMAT_CATALOG = """\
owner: megatron.training.training
module: megatron_training
description: Tags Megatron-LM writes to TensorBoard and not to W&B.
prefix: ""
teed:
  - logger_key: lm-loss
    name: rl.megatron.loss
    kind: gauge
    unit: ""
    description: Language-model loss.
    requirement_level: required
  - logger_key: lm-loss vs samples
    name: rl.megatron.loss_vs_samples
    kind: gauge
    unit: ""
    description: Language-model loss at the consumed sample count (TensorBoard only).
    requirement_level: conditionally_required
    condition: "run.format != 'flat-jsonl'"
    step_axis: samples
    no_lint: [LOGGER_KEY_BACKEND_UNSAFE]
"""


@pytest.mark.parametrize(
    ("fmt", "presence", "finding"),
    [
        ("jsonl", "missing", ["missing:rl.megatron.loss_vs_samples"]),
        ("flat-jsonl", "not_applicable", []),
    ],
)
def test_a_row_a_backend_never_gets_is_not_applicable_in_its_format(
    tmp_path: Path, fmt: str, presence: str, finding: list[str]
) -> None:
    """Decided by the input's format, with or without a configuration."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "megatron.yaml").write_text(FORMAT_CATALOG, encoding="utf-8")
    result = load_and_check(root=tmp_path)
    assert result.catalog is not None, result.diagnostics
    path = tmp_path / "run.jsonl"
    if fmt == "jsonl":
        with JsonlLogger(path) as log:
            log.log_metrics({"lm-loss": 2.5}, 1, "")
    else:
        path.write_text(json.dumps({"step": 1, "data": {"lm-loss": 2.5}}) + "\n", encoding="utf-8")
    states, findings = _presence(result.catalog, path)
    assert states["rl.megatron.loss_vs_samples"] == presence
    assert findings == finding


PERIODIC = """\
owner: open_instruct.grpo_fast
module: periodic
description: Keys logged every so many steps.
prefix: ""
teed:
  - logger_key: loss
    name: rl.periodic.loss
    kind: gauge
    unit: ""
    description: Logged every step.
    requirement_level: required
  - logger_key: eval/scores
    name: rl.periodic.eval_scores
    kind: gauge
    unit: ""
    description: Logged every local_eval_every steps.
    requirement_level: required
    every: "config.local_eval_every"
  - logger_key: eval/late
    name: rl.periodic.eval_late
    kind: gauge
    unit: ""
    description: Logged every 3 steps from step 6.
    requirement_level: required
    first_step: "6"
    every: "3"
"""


@pytest.fixture(scope="module")
def periodic(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    root = tmp_path_factory.mktemp("periodic")
    (root / "catalog").mkdir()
    (root / "catalog" / "periodic.yaml").write_text(PERIODIC, encoding="utf-8")
    result = load_and_check(root=root)
    assert result.catalog is not None, result.diagnostics
    return result.catalog


@pytest.mark.parametrize(
    ("config", "first", "last", "series", "presence"),
    [
        ({"local_eval_every": 4}, 1, 3, "rl.periodic.eval_scores", "not_due"),
        ({"local_eval_every": 4}, 1, 4, "rl.periodic.eval_scores", "missing"),
        # resumed between two evaluations: step 8's was logged by the run before
        ({"local_eval_every": 4}, 9, 11, "rl.periodic.eval_scores", "not_due"),
        ({"local_eval_every": 4}, 9, 12, "rl.periodic.eval_scores", "missing"),
        ({"local_eval_every": 0}, 1, 50, "rl.periodic.eval_scores", "not_due"),
        ({"local_eval_every": -1}, 1, 50, "rl.periodic.eval_scores", "not_due"),
        ({}, 1, 50, "rl.periodic.eval_scores", "undecided"),
        ({"local_eval_every": "4"}, 1, 50, "rl.periodic.eval_scores", "undecided"),
        ({}, 1, 5, "rl.periodic.eval_late", "not_due"),
        ({}, 1, 6, "rl.periodic.eval_late", "missing"),
        ({}, 7, 8, "rl.periodic.eval_late", "not_due"),
        ({}, 7, 9, "rl.periodic.eval_late", "missing"),
    ],
)
def test_a_periodic_row_is_due_only_when_the_logged_steps_reach_a_multiple(
    periodic: Catalog,
    tmp_path: Path,
    *,
    config: dict[str, Any],
    first: int,
    last: int,
    series: str,
    presence: str,
) -> None:
    """``every``: a run (or a resumed run's segment) whose steps hold no multiple of the
    period at or after ``first_step`` lacks nothing; one that reached one is missing it."""
    path = tmp_path / "run.jsonl"
    with JsonlLogger(path, config=config) as log:
        for step in range(first, last + 1):
            log.log_metrics({"loss": 0.5}, step)
    report = check_file(str(path), periodic)
    states = {summary.row.name: summary.presence for summary in report.rows}
    assert states[series] == presence
    missing = [f.series for f in report.findings if f.kind == "missing" and f.series == series]
    assert missing == ([series] if presence == "missing" else [])


def test_a_periodic_rows_not_due_notice_names_its_next_step(
    periodic: Catalog, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    with JsonlLogger(path, config={"local_eval_every": 4}) as log:
        for step in range(9, 12):
            log.log_metrics({"loss": 0.5}, step)
    report = check_file(str(path), periodic)
    text = [n.message for n in report.notices if n.series == "rl.periodic.eval_scores"]
    assert text == [
        "eval/scores (rl.periodic.eval_scores) was not logged; it is logged every 4 steps, "
        "next at step 12, and the run logged steps 9 to 11"
    ]


@pytest.mark.parametrize(
    ("first", "last", "coverage"),
    # eval/scores is due at multiples of 4, eval/late at 6, 9, 12, 15, ...
    [(13, 14, (1, 1, 1.0)), (13, 16, (1, 3, 0.3333)), (1, 5, (1, 2, 0.5))],
    ids=["resumed-between-evaluations", "reached-both", "reached-one-not-the-other"],
)
def test_a_row_not_due_is_left_out_of_the_coverage_unless_logged(
    periodic: Catalog, tmp_path: Path, first: int, last: int, coverage: tuple[int, int, float]
) -> None:
    """A run is not marked down for a row its steps did not reach (a --min-coverage gate
    would fail a healthy run resumed between two evaluations)."""
    path = tmp_path / "run.jsonl"
    with JsonlLogger(path, config={"local_eval_every": 4}) as log:
        for step in range(first, last + 1):
            log.log_metrics({"loss": 0.5}, step)
    report = check_file(str(path), periodic)
    got = (report.coverage.seen, report.coverage.applicable, report.coverage.overall)
    assert got == coverage
