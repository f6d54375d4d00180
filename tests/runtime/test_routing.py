"""One routing rule: which row takes a flat logged key, the same in the tee and live-check.

A literal row beats a family; a family takes a key only if every capture fits its
attribute (an enumeration's values, an int, one segment); among the rows that can take
it the most literal text wins, then the longest prefix. The table runs each case
through the real tee (``tee_flat``) and through live-check's matcher; the property
checks they agree on random catalogs and keys.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from metric_catalog import series_rules
from tests.otel_fixtures import caught_warnings, clean_otel
from tests.routing_cases import (
    AttrSpec,
    Route,
    RowSpec,
    Spec,
    check_route,
    registers,
    tee_route,
)

__all__ = ["clean_otel"]  # fixture used by name

CRITIC = Spec(
    attributes={
        "rl.domain": AttrSpec(),
        "rl.advantage_kind": AttrSpec(values=("gae", "grpo")),
        "rl.stat": AttrSpec(values=("mean", "max", "min")),
        "rl.critic_op": AttrSpec(values=("compute_values", "update_critic")),
    },
    rows=(
        RowSpec("rl.critic.advantage", "{rl.domain}", "critic/{rl.advantage_kind}/{rl.stat}"),
        RowSpec("rl.critic.time", "", "time/critic/{rl.critic_op}/total"),
    ),
)
"""Finding 3 of issue 36: an enumeration decides which family takes the key."""

OPEN_CRITIC = Spec(
    attributes={"rl.domain": AttrSpec(), "rl.x": AttrSpec(), "rl.y": AttrSpec()},
    rows=(
        RowSpec("rl.any.critic", "{rl.domain}", "critic/{rl.x}/{rl.y}"),
        RowSpec("rl.time.critic", "", "time/critic/{rl.x}/total"),
    ),
)
"""Two open families both take ``time/critic/a/total``: the more literal one wins."""

LITERAL = Spec(
    attributes={"rl.metric": AttrSpec()},
    rows=(
        RowSpec("rl.loss", "train", "loss"),
        RowSpec("rl.other", "train", "{rl.metric}"),
        RowSpec("rl.bare", "", "train/{rl.metric}"),
    ),
)

SAME_TEXT = Spec(
    attributes={"rl.x": AttrSpec()},
    rows=(RowSpec("rl.under_a", "a", "{rl.x}"), RowSpec("rl.bare_a", "", "a/{rl.x}")),
)
"""Equally literal at two cuts (``a`` + ``/`` + ``{x}`` and ``a/{x}``): the longest prefix."""

TWO_LOOPS = Spec(
    attributes={"rl.env_metric": AttrSpec()},
    rows=(
        RowSpec("rl.async.env", "environment", "{rl.env_metric}", ("ppo_async",)),
        RowSpec("rl.sync.env", "environment", "{rl.env_metric}", ("ppo_sync",)),
    ),
)
"""Finding 10: rows of two loops sharing an open family."""

EVAL = Spec(
    attributes={"rl.dataset": AttrSpec()},
    rows=(RowSpec("rl.eval.score", "eval", "{rl.dataset}"),),
    step_keys=(("ppo", "eval", "eval/step"),),
)
"""Finding 4: a step key a family would take."""

GLUED_INT = Spec(
    attributes={"rl.rank": AttrSpec(type="int"), "rl.split": AttrSpec(values=("val", "test"))},
    rows=(
        RowSpec("rl.eval.loss", "eval_", "loss"),
        RowSpec("rl.rank.loss", "rank/{rl.rank}", "loss"),
        RowSpec("rl.split.acc", "{rl.split}", "acc"),
    ),
)

ROUTES: list[tuple[str, Spec, str, str | None, Route]] = [
    (
        "an enumeration decides: the critic timer",
        CRITIC,
        "time/critic/compute_values/total",
        None,
        (
            "",
            "time/critic/compute_values/total",
            "rl.critic.time",
            (("rl.critic_op", "compute_values"),),
        ),
    ),
    (
        "an enumeration decides: an advantage under any domain",
        CRITIC,
        "time/critic/gae/mean",
        None,
        (
            "time",
            "critic/gae/mean",
            "rl.critic.advantage",
            (("rl.advantage_kind", "gae"), ("rl.domain", "time"), ("rl.stat", "mean")),
        ),
    ),
    (
        "no family's enumeration fits: no row",
        CRITIC,
        "time/critic/other/total",
        None,
        ("", "time/critic/other/total", None, ()),
    ),
    (
        "the most literal of two open families",
        OPEN_CRITIC,
        "time/critic/a/total",
        None,
        ("", "time/critic/a/total", "rl.time.critic", (("rl.x", "a"),)),
    ),
    (
        "the other open family where the literal one cannot take it",
        OPEN_CRITIC,
        "time/critic/a/b",
        None,
        (
            "time",
            "critic/a/b",
            "rl.any.critic",
            (("rl.domain", "time"), ("rl.x", "a"), ("rl.y", "b")),
        ),
    ),
    (
        "a literal row beats every family",
        LITERAL,
        "train/loss",
        None,
        ("train", "loss", "rl.loss", ()),
    ),
    (
        "equally literal: the longest prefix",
        SAME_TEXT,
        "a/b",
        None,
        ("a", "b", "rl.under_a", (("rl.x", "b"),)),
    ),
    (
        "a loop's own family (loop=)",
        TWO_LOOPS,
        "environment/avg_steps",
        "ppo_async",
        ("environment", "avg_steps", "rl.async.env", (("rl.env_metric", "avg_steps"),)),
    ),
    (
        "the other loop's own family (loop=)",
        TWO_LOOPS,
        "environment/avg_steps",
        "ppo_sync",
        ("environment", "avg_steps", "rl.sync.env", (("rl.env_metric", "avg_steps"),)),
    ),
    (
        "no loop named: two loops claim it, no row",
        TWO_LOOPS,
        "environment/avg_steps",
        None,
        ("environment", "avg_steps", None, ()),
    ),
    ("a step key is no metric", EVAL, "eval/step", None, ("", "eval/step", None, ())),
    (
        "a family beside a step key",
        EVAL,
        "eval/aime",
        None,
        ("eval", "aime", "rl.eval.score", (("rl.dataset", "aime"),)),
    ),
    ("a glued prefix", GLUED_INT, "eval_loss", None, ("eval_", "loss", "rl.eval.loss", ())),
    (
        "an int placeholder in a prefix",
        GLUED_INT,
        "rank/3/loss",
        None,
        ("rank/3", "loss", "rl.rank.loss", (("rl.rank", "3"),)),
    ),
    (
        "an int placeholder takes no word",
        GLUED_INT,
        "rank/x/loss",
        None,
        ("", "rank/x/loss", None, ()),
    ),
    (
        "an enumerated prefix",
        GLUED_INT,
        "val/acc",
        None,
        ("val", "acc", "rl.split.acc", (("rl.split", "val"),)),
    ),
    (
        "a value outside the enumerated prefix",
        GLUED_INT,
        "train/acc",
        None,
        ("", "train/acc", None, ()),
    ),
]


@pytest.mark.parametrize(
    ("spec", "logged", "loop", "expected"),
    [case[1:] for case in ROUTES],
    ids=[case[0] for case in ROUTES],
)
def test_the_tee_routes_a_flat_key_by_the_one_rule(
    clean_otel: None, spec: Spec, logged: str, loop: str | None, expected: Route
) -> None:
    with caught_warnings():
        found = tee_route(spec, logged, loop)
    if expected[2] is None:
        assert found[2] is None  # where an unrouted key is cut does not matter
    else:
        assert found == expected


@pytest.mark.parametrize(
    ("spec", "logged", "loop", "expected"),
    [case[1:] for case in ROUTES],
    ids=[case[0] for case in ROUTES],
)
def test_live_check_routes_a_flat_key_by_the_one_rule(
    spec: Spec, logged: str, loop: str | None, expected: Route
) -> None:
    found = check_route(spec, logged, loop)
    if expected[2] is None:
        assert found[2] is None
    else:
        assert found == expected


def test_loop_and_the_environment_variable_route_a_shared_family_alike(
    clean_otel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 10: ``loop=`` and ``METRIC_CATALOG_LOOP`` are the same thing."""
    with caught_warnings() as caught:
        by_argument = tee_route(TWO_LOOPS, "environment/avg_steps", "ppo_async")
    monkeypatch.setenv("METRIC_CATALOG_LOOP", "ppo_async")
    with caught_warnings():
        by_environment = tee_route(TWO_LOOPS, "environment/avg_steps")
    assert by_argument == by_environment
    assert by_argument[2] == "rl.async.env"
    assert not [m for m in caught.messages if "names no loop" in m]


def test_a_shared_family_with_no_loop_named_is_warned_as_ambiguous(clean_otel: None) -> None:
    """The split still finds the family's prefix, so the warning names the shared key."""
    with caught_warnings() as caught:
        found = tee_route(TWO_LOOPS, "environment/avg_steps")
    assert found[2] is None
    assert any("'environment/avg_steps'" in m and "different loops" in m for m in caught.messages)


def test_the_tee_exports_no_step_key_a_family_would_take(clean_otel: None) -> None:
    """Finding 4: ``eval/step`` is the step of ``eval/*``, not ``dataset="step"``."""
    with caught_warnings() as caught:
        assert tee_route(EVAL, "eval/step")[2] is None
        assert tee_route(EVAL, "eval/aime")[2] == "rl.eval.score"
    assert caught.messages == []


def test_a_backends_own_key_is_no_metric(clean_otel: None) -> None:
    """W&B's ``_step`` is left out by the tee as by live-check (``BACKEND_KEYS``)."""
    spec = Spec(attributes={"rl.k": AttrSpec()}, rows=(RowSpec("rl.any", "", "{rl.k}"),))
    assert series_rules.bookkeeping_matches(series_rules.BACKEND_KEYS, "_step")
    with caught_warnings():
        assert tee_route(spec, "_step")[2] is None
        assert tee_route(spec, "reward")[2] == "rl.any"


# --- agreement: random catalogs and keys ---------------------------------------------

_SEGMENTS = ("a", "b", "time", "critic", "x1", "3")
_ENUMS = {"rl.e1": ("a", "b"), "rl.e2": ("critic", "x1"), "rl.n": ()}
_SPEC_ATTRIBUTES = {
    "rl.o1": AttrSpec(),
    "rl.o2": AttrSpec(),
    "rl.e1": AttrSpec(values=_ENUMS["rl.e1"]),
    "rl.e2": AttrSpec(values=_ENUMS["rl.e2"]),
    "rl.n": AttrSpec(type="int"),
}
_PARTS = st.sampled_from([*_SEGMENTS, *("{" + name + "}" for name in _SPEC_ATTRIBUTES)])


@st.composite
def _patterns(draw: st.DrawFn, least: int) -> str:
    parts = draw(st.lists(_PARTS, min_size=least, max_size=3))
    names = [p for p in parts if p.startswith("{")]
    if len(names) != len(set(names)):  # one placeholder per attribute
        parts = [p for i, p in enumerate(parts) if not p.startswith("{") or p not in parts[:i]]
    return "/".join(parts)


@st.composite
def _specs(draw: st.DrawFn) -> Spec:
    rows = []
    for index in range(draw(st.integers(1, 4))):
        prefix = draw(_patterns(0))
        key = draw(_patterns(1))
        joined = prefix + "/" + key
        names = [p for p in joined.split("/") if p.startswith("{")]
        if len(names) != len(set(names)):
            continue
        loops = draw(st.sampled_from([(), ("l1",), ("l2",)]))
        rows.append(RowSpec(f"rl.row{index}", prefix, key, loops))
    return Spec(attributes=dict(_SPEC_ATTRIBUTES), rows=tuple(rows))


@st.composite
def _keys(draw: st.DrawFn, spec: Spec) -> str:
    """A key made of the catalog's words, or a row's key with its placeholders filled."""
    if not spec.rows or draw(st.booleans()):
        return "/".join(draw(st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=4)))
    row = draw(st.sampled_from(spec.rows))
    text = f"{row.prefix}/{row.key}" if row.prefix else row.key
    for name in spec.used(row):
        text = text.replace("{" + name + "}", draw(st.sampled_from(_SEGMENTS)))
    return text


@settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
@given(spec=_specs(), data=st.data(), loop=st.sampled_from([None, "l1", "l2"]))
def test_the_tee_and_live_check_route_every_flat_key_alike(
    clean_otel: None, spec: Spec, data: st.DataObject, loop: str | None
) -> None:
    """Random catalogs of literal rows and families (open, enumerated, int placeholders, in
    prefixes and keys, of two loops) and keys made of their words: the tee and live-check
    pick the same row with the same captures, or both none."""
    logged = data.draw(_keys(spec))
    assume(registers(spec))  # a catalog validation accepts
    with caught_warnings():
        teed = tee_route(spec, logged, loop)
    checked = check_route(spec, logged, loop)
    event("routed" if teed[2] is not None else "no row")
    assert teed[2:] == checked[2:]
    if teed[2] is not None:
        assert teed[:2] == checked[:2]
