"""Rows sharing a key under exclusive conditions: what validate accepts, and the one rule
(``series_rules.ConfigChoice``) the catalog side and the runtime read it by."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.conditions import choice_of, parse_condition
from codegen.catalog.pipeline import load_and_check
from codegen.generate.python import _choice_kwarg
from metric_catalog.series_rules import ConfigChoice
from tests.catalog_projects import write_catalog

X = ("critic", "clip_value")


@pytest.mark.parametrize(
    ("text", "choice"),
    [
        ("config.critic.clip_value", ConfigChoice(X, "true")),
        ("not config.critic.clip_value", ConfigChoice(X, "false")),
        ('config.critic.clip_value == "on"', ConfigChoice(X, "equals", "on")),
        ("2 == config.critic.clip_value", ConfigChoice(X, "equals", 2)),
        ("config.critic.clip_value == null", ConfigChoice(X, "equals", None)),
        ('config.a["b-c"] == -1.5', ConfigChoice(("a", "b-c"), "equals", -1.5)),
        ("config.critic.clip_value > 1", None),
        ("config.a and config.b", None),
        ("config.a == config.b", None),
        ("config.a == [1, 2]", None),
        ("config.a == 1e999", None),
        ('run.format == "wandb"', None),
        ("not not config.a", None),
    ],
)
def test_a_condition_is_a_choice_only_in_the_forms_a_shared_key_is_routed_by(
    text: str, choice: ConfigChoice | None
) -> None:
    condition = parse_condition(text)
    assert condition is not None
    assert choice_of(condition) == choice


@pytest.mark.parametrize(
    ("first", "second", "excluded"),
    [
        (ConfigChoice(X, "true"), ConfigChoice(X, "false"), True),
        (ConfigChoice(X, "equals", "a"), ConfigChoice(X, "equals", "b"), True),
        (ConfigChoice(X, "equals", 0), ConfigChoice(X, "true"), True),
        (ConfigChoice(X, "equals", "a"), ConfigChoice(X, "false"), True),
        (ConfigChoice(X, "equals", True), ConfigChoice(X, "false"), True),
        (ConfigChoice(X, "true"), ConfigChoice(X, "true"), False),
        (ConfigChoice(X, "equals", 1), ConfigChoice(X, "equals", True), False),  # 1 == True
        (ConfigChoice(X, "equals", 1), ConfigChoice(X, "equals", 1.0), False),
        (ConfigChoice(X, "equals", 0), ConfigChoice(X, "false"), False),
        (ConfigChoice(X, "true"), ConfigChoice(("critic", "other"), "false"), False),
    ],
)
def test_choices_exclude_each_other_only_when_no_configuration_meets_both(
    first: ConfigChoice, second: ConfigChoice, excluded: bool
) -> None:
    assert first.excludes(second) is excluded
    assert second.excludes(first) is excluded


@pytest.mark.parametrize(
    ("path", "test", "value"),
    [
        ((), "true", None),
        (("a", ""), "true", None),
        (X, "maybe", None),
        (X, "true", 1),
        (X, "equals", [1]),
    ],
)
def test_a_malformed_choice_is_refused(path: tuple[str, ...], test: str, value: object) -> None:
    with pytest.raises(ValueError, match="ConfigChoice"):
        ConfigChoice(path, test, value)  # type: ignore[arg-type]


_CHOICE = st.one_of(
    st.builds(ConfigChoice, st.just(X), st.sampled_from(["true", "false"])),
    st.builds(
        ConfigChoice,
        st.just(X),
        st.just("equals"),
        st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "a", 'q"\\'])),
    ),
)
_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2),
    st.sampled_from(["", "a"]),
    st.lists(st.integers(0, 1), max_size=2),
    st.dictionaries(st.just("k"), st.integers(0, 1)),
)
_CONFIG = st.one_of(
    st.just({}),
    st.builds(lambda v: {"critic": v}, _VALUE),
    st.builds(lambda v: {"critic": {"clip_value": v}}, _VALUE),
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(choice=_CHOICE, config=_CONFIG)
def test_a_choice_holds_exactly_when_its_condition_does(
    choice: ConfigChoice, config: dict[str, object]
) -> None:
    """The runtime's rule and the checkers' condition language agree, text and all."""
    condition = parse_condition(choice.text())
    assert condition is not None
    assert choice_of(condition) == choice
    assert choice.holds(config) == condition.holds(config)


CRITIC = """\
owner: myrl.critic
module: critic
description: The critic's update.
teed:
  - logger_key: critic/clipfrac
    name: rl.critic.clip.fraction
    kind: gauge
    unit: "1"
    description: Share of value predictions clipped.
    requirement_level: conditionally_required
    condition: {first}
  - logger_key: critic/clipfrac
    name: rl.critic.value.sq_error
    kind: gauge
    unit: "1"
    description: Squared error of the value predictions.
    requirement_level: conditionally_required
    condition: {second}
"""


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("config.critic.clip_value", "not config.critic.clip_value"),
        ("config.algo.adv == 'gae'", "config.algo.adv == 'grpo'"),
        ("config.critic.clip_value == true", "not config.critic.clip_value"),
    ],
)
def test_rows_of_one_key_under_exclusive_conditions_validate(
    tmp_path: Path, first: str, second: str
) -> None:
    write_catalog(tmp_path, CRITIC.format(first=first, second=second))
    result = load_and_check(root=tmp_path, lint=True)
    assert result.ok, [d.format() for d in result.diagnostics]


@pytest.mark.parametrize(
    ("first", "second", "fix"),
    [
        ("config.critic.clip_value", "config.critic.other", "can hold together"),
        ("config.critic.clip_value", "config.critic.clip_value == 1", "can hold together"),
        ("config.critic.clip_value", "config.critic.clip_value > 0", "cannot hold together"),
        ("when values are clipped", "not config.critic.clip_value", "cannot hold together"),
    ],
)
def test_rows_of_one_key_whose_conditions_can_meet_are_a_duplicate_key_naming_the_fix(
    tmp_path: Path, first: str, second: str, fix: str
) -> None:
    write_catalog(tmp_path, CRITIC.format(first=first, second=second))
    result = load_and_check(root=tmp_path, lint=False)
    errors = [d for d in result.diagnostics if d.code == "DUPLICATE_LOGGER_KEY"]
    assert len(errors) == 1
    assert errors[0].position is not None
    assert errors[0].position.line == 12
    assert fix in errors[0].message
    assert "'config.x' and 'not config.x'" in errors[0].message


@pytest.mark.parametrize(
    "choice",
    [
        ConfigChoice(X, "true"),
        ConfigChoice(("a" * 30, "b" * 30), "equals", "c" * 20),
        ConfigChoice(tuple(f"k{i:02d}_long_segment_name" for i in range(6)), "false"),
        ConfigChoice(("x" * 120,), "true"),
        ConfigChoice(("a",), "equals", 'q"\\\u00e9'),
        ConfigChoice(("y" * 70, "z" * 20), "equals", -1.5),
        ConfigChoice(("a-b", "c d"), "equals", None),
    ],
)
def test_a_generated_choice_is_laid_out_as_ruff_formats_it_and_reads_back(
    choice: ConfigChoice, tmp_path: Path
) -> None:
    """The generated module stays byte-stable under ruff and builds the same choice."""
    body = f'X = TeedMetric(\n    logger_key="k",\n{_choice_kwarg(choice, 4)}\n)\n'
    path = tmp_path / "row.py"
    path.write_text(body, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--line-length", "100", "--diff", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    namespace: dict[str, object] = {"TeedMetric": dict, "ConfigChoice": ConfigChoice}
    exec(compile(body, str(path), "exec"), namespace)
    row = namespace["X"]
    assert isinstance(row, dict)
    assert row["choice"] == choice
