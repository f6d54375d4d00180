"""Catalog evolution: the diff report and every compatibility rule, one catalog pair each."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.catalog.diagnostics import Position
from codegen.catalog.model import (
    Attribute,
    AttributeRef,
    AttributeValue,
    Catalog,
    CatalogFile,
    Deprecation,
    Derivation,
    MetricRow,
)
from codegen.diff import RULES, diff_catalogs
from metric_catalog.series_rules import STABILITY_LEVELS
from metric_catalog.value_rules import ValueRange

REPO = Path(__file__).resolve().parents[2]


def row(
    name: str,
    *,
    kind: str = "gauge",
    unit: str = "1",
    stability: str = "development",
    key: str | None = None,
    prefix: str = "train",
    deprecated: Deprecation | None = None,
    description: str = "A series.",
    line: int = 1,
    attributes: tuple[AttributeRef, ...] = (),
    other_prefixes: tuple[str, ...] = (),
    logged_unit: str = "",
) -> MetricRow:
    """A teed row (recorded when ``key`` is ``""``)."""
    logger_key = name.removeprefix("rl.").replace(".", "_") if key is None else key
    return MetricRow(
        section="teed" if logger_key else "recorded",
        name=name,
        kind=kind,
        unit=unit,
        description=description,
        stability=stability,
        position=Position("catalog/grpo.yaml", line, 5),
        logger_key=logger_key or None,
        prefix=prefix if logger_key else None,
        deprecated=deprecated,
        attributes=attributes,
        other_prefixes=other_prefixes if logger_key else (),
        logged_unit=logged_unit,
    )


def ref(name: str, level: str = "recommended") -> AttributeRef:
    """A row's use of attribute ``name``."""
    return AttributeRef(name, level, Position("catalog/grpo.yaml", 9, 9))


def phase(*values: str, open_enum: bool = False) -> Attribute:
    """Attribute ``rl.phase``: an enum of ``values`` (open, with a budget of 8 others, when
    ``open_enum``), or open (budget 8) without them."""
    where = Position("catalog/grpo.yaml", 2, 5)
    return Attribute(
        name="rl.phase",
        type="string",
        description="Phase.",
        stability="stable",
        position=where,
        path=where.path,
        values=tuple(AttributeValue(v, "A phase.", where) for v in values),
        max_cardinality=8 if open_enum or not values else None,
        open_enum=open_enum,
    )


def catalog(*rows: MetricRow, attributes: tuple[Attribute, ...] = (phase("a", "b"),)) -> Catalog:
    """One-file catalog holding ``rows`` (and attribute ``rl.phase`` with values a, b)."""
    teed = tuple(r for r in rows if r.section == "teed")
    recorded = tuple(r for r in rows if r.section == "recorded")
    return Catalog(
        (
            CatalogFile(
                "catalog/grpo.yaml",
                "grpo",
                "grpo",
                "GRPO.",
                teed,
                recorded,
                attributes=attributes,
            ),
        )
    )


def dep(replaced_by: str | None = None) -> Deprecation:
    """A deprecation since 0.2."""
    return Deprecation(since="0.2", replaced_by=replaced_by, note="moved")


S = "stable"
B = "beta"
A = "alpha"

# (id, baseline rows, new rows, expected codes, breaking)
RULE_CASES: list[tuple[str, list[MetricRow], list[MetricRow], list[str], bool]] = [
    ("stable removed", [row("rl.a", stability=S)], [], ["STABLE_REMOVED"], True),
    (
        "stable removed after baseline deprecation is allowed",
        [row("rl.a", stability=S, deprecated=dep())],
        [],
        [],
        False,
    ),
    ("beta removed is allowed", [row("rl.a", stability=B)], [], [], False),
    (
        "stable renamed by taking its logger key",
        [row("rl.a", stability=S, key="k")],
        [row("rl.b", stability=S, key="k")],
        ["STABLE_RENAMED"],
        True,
    ),
    (
        "stable rename completed after baseline deprecation is allowed",
        [row("rl.a", stability=S, deprecated=dep("rl.b")), row("rl.b", stability=S)],
        [row("rl.b", stability=S)],
        [],
        False,
    ),
    (
        "stable rename started by deprecating with replaced_by is allowed",
        [row("rl.a", stability=S)],
        [row("rl.a", stability=S, deprecated=dep("rl.b")), row("rl.b")],
        [],
        False,
    ),
    (
        "stable kind changed",
        [row("rl.a", stability=S)],
        [row("rl.a", stability=S, kind="counter")],
        ["STABLE_KIND_CHANGED"],
        True,
    ),
    (
        "stable unit changed",
        [row("rl.a", stability=S, unit="s")],
        [row("rl.a", stability=S, unit="ms")],
        ["STABLE_UNIT_CHANGED"],
        True,
    ),
    (
        "stable unit changed even when deprecated in the same change",
        [row("rl.a", stability=S, unit="s")],
        [row("rl.a", stability=S, unit="ms", deprecated=dep())],
        ["STABLE_UNIT_CHANGED"],
        True,
    ),
    (
        "stable logged unit changed",
        [row("rl.a", stability=S, unit="s", logged_unit="ms")],
        [row("rl.a", stability=S, unit="s", logged_unit="us")],
        ["STABLE_LOGGED_UNIT_CHANGED"],
        True,
    ),
    (
        "stable row starting to log another unit",
        [row("rl.a", stability=S, unit="s")],
        [row("rl.a", stability=S, unit="s", logged_unit="ms")],
        ["STABLE_LOGGED_UNIT_CHANGED"],
        True,
    ),
    (
        "beta logged unit changed without a deprecation",
        [row("rl.a", stability=B, unit="By", logged_unit="GiBy")],
        [row("rl.a", stability=B, unit="By")],
        ["BETA_LOGGED_UNIT_CHANGED"],
        True,
    ),
    (
        "beta logged unit changed while deprecated is allowed",
        [row("rl.a", stability=B, unit="By", logged_unit="GiBy")],
        [row("rl.a", stability=B, unit="By", deprecated=dep())],
        [],
        False,
    ),
    (
        "alpha logged unit changed is allowed",
        [row("rl.a", stability=A, unit="s", logged_unit="ms")],
        [row("rl.a", stability=A, unit="s")],
        [],
        False,
    ),
    (
        "stable unit changed with its logged unit reports the unit only",
        [row("rl.a", stability=S, unit="s", logged_unit="ms")],
        [row("rl.a", stability=S, unit="By", logged_unit="GiBy")],
        ["STABLE_UNIT_CHANGED"],
        True,
    ),
    (
        "stable downgraded to beta",
        [row("rl.a", stability=S)],
        [row("rl.a", stability=B)],
        ["STABILITY_DOWNGRADED"],
        True,
    ),
    (
        "beta lowered to alpha warns only",
        [row("rl.a", stability=B)],
        [row("rl.a", stability=A)],
        ["STABILITY_LOWERED"],
        False,
    ),
    (
        "beta unit changed without deprecation",
        [row("rl.a", stability=B, unit="s")],
        [row("rl.a", stability=B, unit="ms")],
        ["BETA_UNIT_CHANGED"],
        True,
    ),
    (
        "stable temporality changed",
        [row("rl.a", stability=S, kind="counter")],
        [replace(row("rl.a", stability=S, kind="counter"), temporality="cumulative")],
        ["STABLE_TEMPORALITY_CHANGED"],
        True,
    ),
    (
        "beta temporality changed without deprecation",
        [replace(row("rl.a", stability=B, kind="counter"), temporality="cumulative")],
        [row("rl.a", stability=B, kind="counter")],
        ["BETA_TEMPORALITY_CHANGED"],
        True,
    ),
    (
        "stable row's emitted_by changed on a key another loop's row shares",
        [
            replace(row("rl.sft.loss", stability=S, key="loss"), emitted_by=("sft",)),
            replace(row("rl.dpo.loss", key="loss"), emitted_by=("dpo",)),
        ],
        [
            replace(row("rl.sft.loss", stability=S, key="loss"), emitted_by=("sft", "rm")),
            replace(row("rl.dpo.loss", key="loss"), emitted_by=("dpo",)),
        ],
        ["STABLE_SHARED_KEY_SCOPE_CHANGED"],
        True,
    ),
    (
        "beta row's emitted_by changed on a key another loop's row shares",
        [
            replace(row("rl.sft.loss", stability=B, key="loss"), emitted_by=("sft", "rm")),
            replace(row("rl.dpo.loss", key="loss"), emitted_by=("dpo",)),
        ],
        [
            replace(row("rl.sft.loss", stability=B, key="loss"), emitted_by=("sft",)),
            replace(row("rl.dpo.loss", key="loss"), emitted_by=("dpo",)),
        ],
        ["BETA_SHARED_KEY_SCOPE_CHANGED"],
        False,
    ),
    (
        "stable row's condition changed on a key rows of exclusive conditions share",
        [
            replace(
                row("rl.clip", stability=S, key="clipfrac"),
                requirement_level="conditionally_required",
                condition="config.critic.clip_value",
            ),
            replace(
                row("rl.sq_error", key="clipfrac"),
                requirement_level="conditionally_required",
                condition="not config.critic.clip_value",
            ),
        ],
        [
            replace(
                row("rl.clip", stability=S, key="clipfrac"),
                requirement_level="conditionally_required",
                condition="not config.critic.clip_value",
            ),
            replace(
                row("rl.sq_error", key="clipfrac"),
                requirement_level="conditionally_required",
                condition="config.critic.clip_value",
            ),
        ],
        ["STABLE_SHARED_KEY_SCOPE_CHANGED"],
        True,
    ),
    (
        "stable row's condition rewritten to the same choice on a shared key is no change",
        [
            replace(
                row("rl.clip", stability=S, key="clipfrac"),
                requirement_level="conditionally_required",
                condition="config.critic.clip_value",
            ),
            replace(
                row("rl.sq_error", key="clipfrac"),
                requirement_level="conditionally_required",
                condition="not config.critic.clip_value",
            ),
        ],
        [
            replace(
                row("rl.clip", stability=S, key="clipfrac"),
                requirement_level="conditionally_required",
                condition="config['critic'].clip_value",
            ),
            replace(
                row("rl.sq_error", key="clipfrac"),
                requirement_level="conditionally_required",
                condition="not config.critic.clip_value",
            ),
        ],
        [],
        False,
    ),
    (
        "stable row's emitted_by changed on a key no other row shares is no scope change",
        [replace(row("rl.sft.loss", stability=S, key="loss"), emitted_by=("sft",))],
        [replace(row("rl.sft.loss", stability=S, key="loss"), emitted_by=("sft", "dpo"))],
        [],
        False,
    ),
    (
        "beta temporality changed with a deprecation is allowed",
        [row("rl.a", stability=B, kind="counter")],
        [
            replace(
                row("rl.a", stability=B, kind="counter", deprecated=dep()),
                temporality="cumulative",
            )
        ],
        [],
        False,
    ),
    (
        "beta unit changed with a deprecation is allowed",
        [row("rl.a", stability=B, unit="s")],
        [row("rl.a", stability=B, unit="ms", deprecated=dep())],
        [],
        False,
    ),
    (
        "beta kind changed without deprecation",
        [row("rl.a", stability=B)],
        [row("rl.a", stability=B, kind="up_down_counter")],
        ["BETA_KIND_CHANGED"],
        True,
    ),
    (
        "alpha unit change is allowed",
        [row("rl.a", stability=A, unit="s")],
        [row("rl.a", stability=A, unit="ms")],
        [],
        False,
    ),
    (
        "renamed deprecation changes unit",
        [row("rl.a", unit="s")],
        [row("rl.a", unit="s", deprecated=dep("rl.b")), row("rl.b", unit="ms")],
        ["RENAME_UNIT_CHANGED"],
        True,
    ),
    (
        "renamed deprecation changes kind",
        [row("rl.a")],
        [row("rl.a", deprecated=dep("rl.b")), row("rl.b", kind="counter")],
        ["RENAME_KIND_CHANGED"],
        True,
    ),
    (
        "completed rename compares the removed row's last shape",
        [row("rl.a", unit="s", deprecated=dep("rl.b")), row("rl.b", unit="s")],
        [row("rl.b", unit="ms")],
        ["RENAME_UNIT_CHANGED"],
        True,
    ),
    (
        "removing a row whose replacement was never declared warns",
        [row("rl.a", stability=S, deprecated=dep("rl.nowhere"))],
        [],
        ["REPLACEMENT_MISSING"],
        False,
    ),
    (
        "replacement that is not declared warns",
        [row("rl.a")],
        [row("rl.a", deprecated=dep("rl.nowhere"))],
        ["REPLACEMENT_MISSING"],
        False,
    ),
    (
        "stable logger key change breaks code logging the old key",
        [row("rl.a", stability=S, key="k")],
        [row("rl.a", stability=S, key="k2", description="Better.")],
        ["STABLE_LOGGER_KEY_CHANGED"],
        True,
    ),
    (
        "stable prefix change breaks code logging the old key",
        [row("rl.a", stability=S, key="k")],
        [row("rl.a", stability=S, key="k", prefix="validation")],
        ["STABLE_LOGGER_KEY_CHANGED"],
        True,
    ),
    (
        "stable teed row becoming recorded breaks code logging its key",
        [row("rl.a", stability=S, key="k")],
        [row("rl.a", stability=S, key="")],
        ["STABLE_LOGGER_KEY_CHANGED"],
        True,
    ),
    (
        "beta logger key change warns",
        [row("rl.a", stability=B, key="k")],
        [row("rl.a", stability=B, key="k2")],
        ["BETA_LOGGER_KEY_CHANGED"],
        False,
    ),
    (
        "alpha logger key change is allowed",
        [row("rl.a", stability=A, key="k")],
        [row("rl.a", stability=A, key="k2")],
        [],
        False,
    ),
    (
        "logger key change of a row the baseline deprecated is allowed",
        [row("rl.a", stability=S, key="k", deprecated=dep())],
        [row("rl.a", stability=S, key="k2", deprecated=dep())],
        [],
        False,
    ),
    (
        "recorded row becoming teed is allowed",
        [row("rl.a", stability=S, key="")],
        [row("rl.a", stability=S, key="k")],
        [],
        False,
    ),
    (
        "stable row dropping one of its prefixes breaks code logging under it",
        [replace(row("rl.a", stability=S, key="k"), other_prefixes=("",))],
        [row("rl.a", stability=S, key="k")],
        ["STABLE_LOGGER_KEY_CHANGED"],
        True,
    ),
    (
        "stable row teed under one more prefix is allowed",
        [row("rl.a", stability=S, key="k")],
        [replace(row("rl.a", stability=S, key="k"), other_prefixes=("",))],
        [],
        False,
    ),
    (
        "stable description change is not breaking",
        [row("rl.a", stability=S, key="k")],
        [row("rl.a", stability=S, key="k", description="Better.")],
        [],
        False,
    ),
    (
        "promotion to stable is allowed",
        [row("rl.a", stability=B)],
        [row("rl.a", stability=S)],
        [],
        False,
    ),
    ("adding a stable row is allowed", [], [row("rl.a", stability=S)], [], False),
    (
        "stable attribute removed",
        [row("rl.a", stability=S, attributes=(ref("rl.phase"),))],
        [row("rl.a", stability=S)],
        ["STABLE_ATTRIBUTE_REMOVED"],
        True,
    ),
    (
        "beta attribute removed warns",
        [row("rl.a", stability=B, attributes=(ref("rl.phase"),))],
        [row("rl.a", stability=B)],
        ["BETA_ATTRIBUTE_REMOVED"],
        False,
    ),
    (
        "alpha attribute removed is allowed",
        [row("rl.a", stability=A, attributes=(ref("rl.phase"),))],
        [row("rl.a", stability=A)],
        [],
        False,
    ),
    (
        "stable attribute added as recommended is allowed",
        [row("rl.a", stability=S)],
        [row("rl.a", stability=S, attributes=(ref("rl.phase"),))],
        [],
        False,
    ),
    (
        "stable attribute added as required breaks producers",
        [row("rl.a", stability=S)],
        [row("rl.a", stability=S, attributes=(ref("rl.phase", "required"),))],
        ["STABLE_ATTRIBUTE_REQUIREMENT_RAISED"],
        True,
    ),
    (
        "stable attribute requirement raised",
        [row("rl.a", stability=S, attributes=(ref("rl.phase", "opt_in"),))],
        [row("rl.a", stability=S, attributes=(ref("rl.phase", "recommended"),))],
        ["STABLE_ATTRIBUTE_REQUIREMENT_RAISED"],
        True,
    ),
    (
        "beta attribute requirement raised warns",
        [row("rl.a", stability=B, attributes=(ref("rl.phase", "opt_in"),))],
        [row("rl.a", stability=B, attributes=(ref("rl.phase", "required"),))],
        ["BETA_ATTRIBUTE_REQUIREMENT_RAISED"],
        False,
    ),
    (
        "stable attribute requirement lowered is allowed",
        [row("rl.a", stability=S, attributes=(ref("rl.phase", "required"),))],
        [row("rl.a", stability=S, attributes=(ref("rl.phase", "opt_in"),))],
        [],
        False,
    ),
    (
        "stable key family changed",
        [row("rl.a", stability=S, key="t/{rl.phase}_s", attributes=(ref("rl.phase"),))],
        [row("rl.a", stability=S, key="t/{rl.phase}_time", attributes=(ref("rl.phase"),))],
        ["STABLE_PATTERN_CHANGED"],
        True,
    ),
    (
        "beta key family changed warns",
        [row("rl.a", stability=B, key="t/{rl.phase}_s", attributes=(ref("rl.phase"),))],
        [row("rl.a", stability=B, key="{rl.phase}_s", attributes=(ref("rl.phase"),))],
        ["BETA_PATTERN_CHANGED"],
        False,
    ),
    (
        "stable family dropping one of several prefixes",
        [
            row(
                "rl.a",
                stability=S,
                key="t/{rl.phase}",
                other_prefixes=("",),
                attributes=(ref("rl.phase"),),
            )
        ],
        [row("rl.a", stability=S, key="t/{rl.phase}", attributes=(ref("rl.phase"),))],
        ["STABLE_PATTERN_CHANGED"],
        True,
    ),
    (
        "stable family becoming a recorded row breaks code logging its keys",
        [row("rl.a", stability=S, key="t/{rl.phase}", attributes=(ref("rl.phase"),))],
        [row("rl.a", stability=S, key="", attributes=(ref("rl.phase"),))],
        ["STABLE_LOGGER_KEY_CHANGED"],
        True,
    ),
    (
        "stable prefix added to several is allowed",
        [row("rl.a", stability=S, key="k")],
        [row("rl.a", stability=S, key="k", other_prefixes=("",))],
        [],
        False,
    ),
    (
        "stable plain key becoming a family on the same key text is a pattern change",
        [row("rl.a", stability=S, key="k")],
        [row("rl.a", stability=S, key="k/{rl.phase}", attributes=(ref("rl.phase"),))],
        ["STABLE_PATTERN_CHANGED"],
        True,
    ),
]

# (id, baseline enum values of rl.phase, new ones, stability, expected codes)
ENUM_CASES: list[tuple[str, tuple[str, ...], tuple[str, ...], str, list[str]]] = [
    ("stable enum value removed", ("a", "b"), ("a",), S, ["STABLE_ENUM_VALUE_REMOVED"]),
    ("beta enum value removed warns", ("a", "b"), ("a",), B, ["BETA_ENUM_VALUE_REMOVED"]),
    ("alpha enum value removed is allowed", ("a", "b"), ("a",), A, []),
    ("stable enum value added is allowed", ("a",), ("a", "b"), S, []),
    ("stable enum opened to a budget is allowed", ("a", "b"), (), S, []),
]


@pytest.mark.parametrize(
    ("before", "after", "stability", "codes"),
    [pytest.param(b, a, s, c, id=i) for i, b, a, s, c in ENUM_CASES],
)
def test_enum_value_rules(
    before: tuple[str, ...], after: tuple[str, ...], stability: str, codes: list[str]
) -> None:
    """A value the baseline's enum allowed and the new one does not breaks stable rows."""
    used = row("rl.a", stability=stability, attributes=(ref("rl.phase"),))
    report = diff_catalogs(
        catalog(used, attributes=(phase(*before),)), catalog(used, attributes=(phase(*after),))
    )
    assert [d.code for d in report.diagnostics] == codes
    for diagnostic in report.diagnostics:
        assert "lost the value(s) b" in diagnostic.message
        assert diagnostic.position == Position("catalog/grpo.yaml", 9, 9)


@pytest.mark.parametrize(
    ("before", "after", "stability", "codes"),
    [
        pytest.param(
            phase("a", "b", open_enum=True),
            phase("a", "b"),
            S,
            ["STABLE_ENUM_VALUE_REMOVED"],
            id="stable open enum closed",
        ),
        pytest.param(
            phase("a", "b", open_enum=True),
            phase("a", "b"),
            B,
            ["BETA_ENUM_VALUE_REMOVED"],
            id="beta open enum closed warns",
        ),
        pytest.param(
            phase("a", "b"), phase("a", "b", open_enum=True), S, [], id="stable enum opened"
        ),
        pytest.param(
            phase("a", "b", open_enum=True),
            phase("a", open_enum=True),
            S,
            [],
            id="open enum unlisting a value",
        ),
    ],
)
def test_closing_an_open_enum_drops_the_values_it_did_not_list(
    before: Attribute, after: Attribute, stability: str, codes: list[str]
) -> None:
    """The tee took any value of an open enum; closed, it drops those the enum does not list
    (an open enum that stops listing a value still takes it)."""
    used = row("rl.a", stability=stability, attributes=(ref("rl.phase"),))
    report = diff_catalogs(catalog(used, attributes=(before,)), catalog(used, attributes=(after,)))
    assert [d.code for d in report.diagnostics] == codes
    for diagnostic in report.diagnostics:
        assert "every value it does not list (it was an open enum)" in diagnostic.message


def test_attribute_and_prefix_changes_are_listed_as_field_changes() -> None:
    """The report lists other_prefixes and attributes changes like any field."""
    report = diff_catalogs(
        catalog(row("rl.a", key="k")),
        catalog(row("rl.a", key="k", other_prefixes=("",), attributes=(ref("rl.phase"),))),
    )
    fields = {(c.field, c.old, c.new) for c in report.changed}
    assert fields == {
        ("other_prefixes", None, "''"),
        ("attributes", None, "rl.phase (recommended)"),
    }


def presence(
    base: MetricRow, level: str = "recommended", emitted_by: tuple[str, ...] = ()
) -> MetricRow:
    """``base`` with a requirement level and ``emitted_by``."""
    return replace(base, requirement_level=level, emitted_by=emitted_by)


# Presence: a requirement level raised (or a required row applying to more loops).
RULE_CASES += [
    (
        "stable requirement raised to required",
        [presence(row("rl.a", stability=S))],
        [presence(row("rl.a", stability=S), "required")],
        ["STABLE_REQUIREMENT_RAISED"],
        True,
    ),
    (
        "stable requirement raised to conditionally_required",
        [presence(row("rl.a", stability=S), "opt_in")],
        [presence(row("rl.a", stability=S), "conditionally_required")],
        ["STABLE_REQUIREMENT_RAISED"],
        True,
    ),
    (
        "beta requirement raised warns only",
        [presence(row("rl.a", stability=B))],
        [presence(row("rl.a", stability=B), "required")],
        ["BETA_REQUIREMENT_RAISED"],
        False,
    ),
    (
        "stable required row gaining a loop",
        [presence(row("rl.a", stability=S), "required", ("grpo_sync",))],
        [presence(row("rl.a", stability=S), "required", ("grpo_sync", "ppo"))],
        ["STABLE_REQUIREMENT_RAISED"],
        True,
    ),
    (
        "stable required row dropping emitted_by applies to every loop",
        [presence(row("rl.a", stability=S), "required", ("grpo_sync",))],
        [presence(row("rl.a", stability=S), "required")],
        ["STABLE_REQUIREMENT_RAISED"],
        True,
    ),
    (
        "stable requirement lowered or narrowed is allowed",
        [presence(row("rl.a", stability=S), "required", ("grpo_sync", "ppo"))],
        [presence(row("rl.a", stability=S), "recommended", ("grpo_sync",))],
        [],
        False,
    ),
    (
        "stable opt_in to recommended asks nothing of a run",
        [presence(row("rl.a", stability=S), "opt_in")],
        [presence(row("rl.a", stability=S), "recommended")],
        [],
        False,
    ),
    (
        "alpha requirement raised is allowed",
        [presence(row("rl.a", stability=A))],
        [presence(row("rl.a", stability=A), "required")],
        [],
        False,
    ),
    (
        "requirement raised while deprecating is allowed",
        [presence(row("rl.a", stability=S))],
        [presence(row("rl.a", stability=S, deprecated=dep()), "required")],
        [],
        False,
    ),
]


def scheduled(
    stability: str, every: int | None, phase: int = 0, first: int | None = None
) -> MetricRow:
    """Required row rl.a logged every ``every`` steps at ``phase``, from ``first``."""
    base = presence(row("rl.a", stability=stability), "required")
    return replace(base, every=every, phase=phase, first_step=first)


# Schedules: a required row due earlier asks more of a run that stops in between.
RULE_CASES += [
    ("stable periodic row gaining phase -1 is due at 9, not 10", [scheduled(S, 10)],
     [scheduled(S, 10, -1)], ["STABLE_REQUIREMENT_RAISED"], True),
    ("stable periodic row losing its period is due from step 1", [scheduled(S, 10)],
     [scheduled(S, None)], ["STABLE_REQUIREMENT_RAISED"], True),
    ("beta periodic row due earlier warns", [scheduled(B, 10, 0, 20)],
     [scheduled(B, 10, 0, 5)], ["BETA_REQUIREMENT_RAISED"], False),
    ("stable periodic row due later is allowed", [scheduled(S, 10, -1)],
     [scheduled(S, 10, 0)], [], False),
    ("stable periodic row due at the same step is allowed", [scheduled(S, 10, 1, 11)],
     [scheduled(S, 10, 1, 2)], [], False),
    ("stable row gaining a period is allowed", [scheduled(S, None)],
     [scheduled(S, 10, -1)], [], False),
]  # fmt: skip


def test_a_schedule_change_is_listed_as_one_field() -> None:
    report = diff_catalogs(
        catalog(scheduled(A, 10, 0, 5)),
        catalog(replace(scheduled(A, 10, -1, 5), at_last_step=True)),
    )
    fields = {(c.field, c.old, c.new) for c in report.changed}
    assert fields == {
        (
            "schedule",
            "from step 5, every 10 steps",
            "from step 5, every 10 steps (phase -1) and at the last step",
        )
    }


def derived(
    stability: str,
    table: tuple[tuple[str, str], ...] | None,
    default: str | None = None,
    source: str = "rl.phase",
) -> MetricRow:
    """A family row capturing rl.phase, with rl.kind derived from ``source`` by ``table``."""
    derive = None if table is None else Derivation(source, table, default)
    kind = replace(ref("rl.kind"), derive=derive)
    return row(
        "rl.a",
        stability=stability,
        key="k/{rl.phase}",
        attributes=(ref("rl.phase", "required"), ref("rl.other"), kind),
    )


AB = (("a", "x"), ("b", "y"))

# Derivations: a source value that got a derived value gets another one, or none.
RULE_CASES += [
    ("stable derivation removed", [derived(S, AB)], [derived(S, None)],
     ["STABLE_DERIVATION_CHANGED"], True),
    ("stable derivation value changed", [derived(S, AB)], [derived(S, (("a", "x"), ("b", "z")))],
     ["STABLE_DERIVATION_CHANGED"], True),
    ("stable derivation entry dropped", [derived(S, AB)], [derived(S, (("a", "x"),))],
     ["STABLE_DERIVATION_CHANGED"], True),
    ("stable derivation source changed", [derived(S, AB)],
     [derived(S, AB, source="rl.other")], ["STABLE_DERIVATION_CHANGED"], True),
    ("stable derivation default changed", [derived(S, AB, "d")], [derived(S, AB, "e")],
     ["STABLE_DERIVATION_CHANGED"], True),
    ("stable entry overriding the old default", [derived(S, AB, "d")],
     [derived(S, (*AB, ("c", "q")), "d")], ["STABLE_DERIVATION_CHANGED"], True),
    ("beta derivation changed warns", [derived(B, AB)], [derived(B, None)],
     ["BETA_DERIVATION_CHANGED"], False),
    ("alpha derivation changed is allowed", [derived(A, AB)], [derived(A, None)], [], False),
    ("stable derivation gaining an entry for an unmapped value is allowed", [derived(S, AB)],
     [derived(S, (*AB, ("c", "z")))], [], False),
    ("stable derivation reordered is allowed", [derived(S, AB)],
     [derived(S, (AB[1], AB[0]))], [], False),
    ("stable derivation added is allowed", [derived(S, None)], [derived(S, AB)], [], False),
]  # fmt: skip


def valued(
    stability: str,
    bounds: ValueRange | None = None,
    goal: str = "",
    value_type: str = "number",
    unit: str = "1",
) -> MetricRow:
    """Row rl.a with a declared range, goal and value type."""
    return replace(
        row("rl.a", stability=stability, unit=unit),
        declared_range=bounds,
        goal=goal,
        value_type=value_type,
    )


UNIT = ValueRange(0.0, 1.0)
# What a value may be: a stable row's range never narrows and its goal never changes.
RULE_CASES += [
    ("stable range narrowed", [valued(S, ValueRange(0.0, 100.0))], [valued(S, UNIT)],
     ["STABLE_RANGE_NARROWED"], True),
    ("stable range declared where any number was fine", [valued(S)], [valued(S, UNIT)],
     ["STABLE_RANGE_NARROWED"], True),
    ("stable bound made exclusive", [valued(S, UNIT)],
     [valued(S, ValueRange(0.0, 1.0, high_open=True))], ["STABLE_RANGE_NARROWED"], True),
    ("stable row starts asking for integers", [valued(S, UNIT)],
     [valued(S, UNIT, value_type="int")], ["STABLE_RANGE_NARROWED"], True),
    ("stable percentage given a narrower range than its unit's", [valued(S, unit="%")],
     [valued(S, ValueRange(0.0, 50.0), unit="%")], ["STABLE_RANGE_NARROWED"], True),
    ("stable goal flipped", [valued(S, goal="maximize")], [valued(S, goal="minimize")],
     ["STABLE_GOAL_CHANGED"], True),
    ("stable goal dropped", [valued(S, goal="maximize")], [valued(S)],
     ["STABLE_GOAL_CHANGED"], True),
    ("stable range widened is allowed", [valued(S, UNIT)], [valued(S, ValueRange(0.0))], [],
     False),
    ("stable range dropped is allowed", [valued(S, UNIT)], [valued(S, ValueRange())], [], False),
    ("stable goal declared is allowed", [valued(S)], [valued(S, goal="maximize")], [], False),
    ("beta range narrowed is allowed", [valued(B)], [valued(B, UNIT)], [], False),
]  # fmt: skip


def test_range_and_goal_changes_are_listed_as_field_changes() -> None:
    report = diff_catalogs(
        catalog(valued(B, ValueRange(0.0, 100.0))), catalog(valued(B, UNIT, goal="maximize"))
    )
    changes = {(c.field, c.old, c.new) for c in report.changed}
    assert ("range", "[0, 100]", "[0, 1]") in changes
    assert ("goal", None, "maximize") in changes


@pytest.mark.parametrize(
    ("baseline", "new", "codes", "breaking"),
    [pytest.param(b, n, c, k, id=i) for i, b, n, c, k in RULE_CASES],
)
def test_each_rule_fires_exactly_on_its_catalog_pair(
    baseline: list[MetricRow], new: list[MetricRow], codes: list[str], breaking: bool
) -> None:
    report = diff_catalogs(catalog(*baseline), catalog(*new))
    assert sorted(d.code for d in report.diagnostics) == sorted(codes)
    assert report.breaking is breaking
    for diagnostic in report.diagnostics:
        rule = RULES[diagnostic.code]
        assert diagnostic.severity is rule.severity
        assert rule.text in diagnostic.message


def test_every_rule_code_has_a_catalog_pair() -> None:
    covered = {code for case in RULE_CASES for code in case[3]}
    covered |= {code for case in ENUM_CASES for code in case[4]}
    assert covered == set(RULES)


def test_report_classifies_added_removed_renamed_and_changed_rows() -> None:
    baseline = catalog(
        row("rl.gone"),
        row("rl.old", key="k"),
        row("rl.kept", unit="s", stability=B),
        row("rl.moving", deprecated=dep("rl.moved")),
        row("rl.moved"),
    )
    new = catalog(
        row("rl.fresh"),
        row("rl.heir", key="k"),
        row("rl.kept", unit="s", stability=S, description="Changed."),
        row("rl.moved"),
    )
    report = diff_catalogs(baseline, new)
    assert [r.name for r in report.added] == ["rl.fresh"]
    assert [r.name for r in report.removed] == ["rl.gone"]
    assert [(r.old_name, r.new_name, r.via, r.completed) for r in report.renamed] == [
        ("rl.moving", "rl.moved", "replaced_by", True),
        ("rl.old", "rl.heir", "logger_key", True),
    ]
    assert [(c.name, c.field, c.old, c.new) for c in report.changed] == [
        ("rl.kept", "stability", "beta", "stable"),
        ("rl.kept", "description", "A series.", "Changed."),
    ]
    assert not report.breaking


def test_rename_in_progress_lists_the_pair_and_the_deprecation_change() -> None:
    report = diff_catalogs(
        catalog(row("rl.a", stability=S)),
        catalog(row("rl.a", stability=S, deprecated=dep("rl.b")), row("rl.b")),
    )
    assert [(r.old_name, r.new_name, r.completed) for r in report.renamed] == [
        ("rl.a", "rl.b", False)
    ]
    assert report.added == ()
    assert [(c.field, c.new) for c in report.changed] == [
        ("deprecated", "since 0.2, replaced by rl.b: moved")
    ]


def test_removed_rows_are_reported_at_their_baseline_position() -> None:
    report = diff_catalogs(
        catalog(row("rl.a", stability=S, line=7)),
        catalog(),
        against="HEAD~1",
        baseline_position=lambda p: replace(p, path=f"HEAD~1:{p.path}"),
    )
    (finding,) = report.diagnostics
    assert finding.format().startswith("HEAD~1:catalog/grpo.yaml:7:5: error[STABLE_REMOVED]")
    removed = json.loads(report.to_json())["removed"]
    assert removed[0]["source"] == "HEAD~1:catalog/grpo.yaml:7:5"


def test_text_report_names_each_break_and_its_rule() -> None:
    report = diff_catalogs(
        catalog(row("rl.a", stability=S, unit="s"), row("rl.b")),
        catalog(row("rl.a", stability=S, unit="ms"), row("rl.c")),
        against="main",
    )
    text = report.to_text()
    assert text.splitlines()[0] == (
        "catalog diff against main: 1 added, 1 removed, 0 renamed, 1 changed"
    )
    assert "  + rl.c (gauge, 1, development)" in text
    assert "  - rl.b (gauge, 1, development)" in text
    assert "  ~ rl.a: unit 's' -> 'ms'" in text
    assert "error[STABLE_UNIT_CHANGED]: stable series rl.a changed unit 's' -> 'ms'" in text
    assert RULES["STABLE_UNIT_CHANGED"].text in text


def test_json_report_has_summary_and_findings() -> None:
    report = diff_catalogs(catalog(row("rl.a", stability=S)), catalog(), against="v1")
    doc = json.loads(report.to_json())
    assert doc["summary"] == {
        "added": 0,
        "removed": 1,
        "renamed": 0,
        "changed": 0,
        "errors": 1,
        "warnings": 0,
    }
    assert doc["ok"] is False
    assert [f["code"] for f in doc["findings"]] == ["STABLE_REMOVED"]


names = st.from_regex(r"rl\.m[a-z]{0,5}", fullmatch=True)
rows_strategy = st.lists(
    st.builds(
        row,
        names,
        kind=st.sampled_from(["gauge", "counter", "histogram", "up_down_counter"]),
        unit=st.sampled_from(["1", "s", "By", "{token}"]),
        stability=st.sampled_from(STABILITY_LEVELS),
        deprecated=st.none() | st.builds(dep, st.none() | names),
    ),
    max_size=8,
    unique_by=lambda r: r.name,
)


@given(rows_strategy)
def test_a_catalog_diffed_against_itself_has_no_changes_and_never_breaks(
    rows: list[MetricRow],
) -> None:
    same = catalog(*rows)
    report = diff_catalogs(same, same)
    assert report.empty
    assert not report.breaking
    assert report.to_text().endswith("no compatibility findings")


@given(rows_strategy, rows_strategy)
def test_every_baseline_row_is_kept_removed_or_renamed_exactly_once(
    old: list[MetricRow], new: list[MetricRow]
) -> None:
    report = diff_catalogs(catalog(*old), catalog(*new))
    old_names, new_names = {r.name for r in old}, {r.name for r in new}
    removed = {r.name for r in report.removed}
    completed = {r.old_name for r in report.renamed if r.completed}
    assert removed | completed == old_names - new_names
    assert not removed & completed
    targets = {r.new_name for r in report.renamed}
    assert {r.name for r in report.added} == new_names - old_names - targets
    assert all(d.code in RULES for d in report.diagnostics)
    assert report.breaking == any(
        RULES[d.code].severity.value == "error" for d in report.diagnostics
    )


# --- the command: git refs and directories as baselines -------------------------------

HEADER = """\
owner: nemo_rl.algorithms.grpo
module: grpo
description: GRPO metrics.
teed:
"""
REWARD = """\
  - logger_key: reward
    name: rl.reward.mean
    kind: gauge
    unit: "1"
    description: Mean rollout reward.
    stability: stable
"""
LOSS = """\
  - logger_key: loss
    name: rl.policy.loss
    kind: gauge
    unit: "1"
    description: Training loss.
"""
GRPO_V1 = HEADER + REWARD + LOSS


def write_catalog(root: Path, text: str) -> None:
    """Write ``catalog/grpo.yaml`` under ``root``."""
    (root / "catalog").mkdir(parents=True, exist_ok=True)
    (root / "catalog" / "grpo.yaml").write_text(text)


def git(root: Path, *args: str) -> None:
    """Run git quietly in ``root`` with a fixed identity."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo whose first commit (tag v1) holds GRPO_V1."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git(tmp_path, "init", "-q")
    write_catalog(tmp_path, GRPO_V1)
    git(tmp_path, "add", "catalog")
    git(tmp_path, "commit", "-qm", "v1")
    git(tmp_path, "tag", "v1")
    return tmp_path


def run_diff(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m codegen diff`` in a subprocess, as make runs it."""
    return subprocess.run(
        [sys.executable, "-m", "codegen", "diff", "--root", str(root), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )


def test_git_ref_baseline_with_a_breaking_change_exits_1_naming_the_rule(repo: Path) -> None:
    write_catalog(repo, HEADER + REWARD.replace('unit: "1"', 'unit: "%"') + LOSS)
    proc = run_diff(repo, "--against", "v1")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[0] == (
        "catalog diff against v1: 0 added, 0 removed, 0 renamed, 1 changed"
    )
    expected = "catalog/grpo.yaml:8:11: error[STABLE_UNIT_CHANGED]: stable series rl.reward.mean"
    assert expected in proc.stdout


def test_git_ref_baseline_reports_removed_rows_at_the_ref(repo: Path) -> None:
    write_catalog(repo, HEADER + LOSS)
    proc = run_diff(repo, "--against", "HEAD", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert [r["name"] for r in doc["removed"]] == ["rl.reward.mean"]
    assert [(f["code"], f["path"], f["line"]) for f in doc["findings"]] == [
        ("STABLE_REMOVED", "HEAD:catalog/grpo.yaml", 5)
    ]


def test_removal_after_a_committed_deprecation_passes(repo: Path) -> None:
    deprecated = REWARD + '    deprecated: {since: "0.2.0", note: Use the eval reward.}\n'
    write_catalog(repo, HEADER + deprecated + LOSS)
    git(repo, "commit", "-qam", "deprecate reward")
    write_catalog(repo, HEADER + LOSS)
    proc = run_diff(repo, "--against", "HEAD")
    assert proc.returncode == 0, proc.stdout
    assert "  - rl.reward.mean (gauge, 1, stable)" in proc.stdout


def test_unchanged_catalog_exits_0_and_still_prints_the_report(repo: Path) -> None:
    proc = run_diff(repo, "--against", "v1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "catalog diff against v1: 0 added, 0 removed, 0 renamed, 0 changed",
        "no compatibility findings",
    ]


def test_non_breaking_change_against_a_ref_exits_0(repo: Path) -> None:
    write_catalog(repo, GRPO_V1.replace("Training loss.", "Training loss, token mean."))
    proc = run_diff(repo, "--against", "v1")
    assert proc.returncode == 0, proc.stderr
    assert "  ~ rl.policy.loss: description 'Training loss.' -> 'Training loss, token mean.'" in (
        proc.stdout
    )


def test_ref_without_a_catalog_is_a_usage_error(repo: Path) -> None:
    """A ref holding no catalog/*.yaml exits 2 with the reason, not "2 added, no findings"."""
    (repo / "README").write_text("x")
    git(repo, "rm", "-rq", "--cached", "catalog")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "no catalog")
    proc = run_diff(repo, "--against", "HEAD")
    assert proc.returncode == 2, proc.stdout
    assert "has no catalog/*.yaml" in proc.stderr
    assert proc.stdout == ""


def test_wrong_root_for_a_ref_is_a_usage_error(repo: Path) -> None:
    """--root pointing below the checkout finds no catalog at the ref: exit 2, not all added."""
    sub = repo / "sub"
    sub.mkdir()
    write_catalog(sub, GRPO_V1)
    proc = run_diff(sub, "--against", "v1")
    assert proc.returncode == 2, proc.stdout
    assert "check the ref and --root" in proc.stderr


def test_merge_base_spec_diffs_against_the_fork_point(repo: Path) -> None:
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "feature")
    write_catalog(repo, HEADER + LOSS)
    git(repo, "commit", "-qam", "drop reward")
    git(repo, "checkout", "-q", "-")
    write_catalog(repo, HEADER + REWARD + LOSS + LOSS.replace("loss", "entropy"))
    git(repo, "commit", "-qam", "main moves on")
    git(repo, "checkout", "-q", "feature")
    # Against main's tip the row added there would look removed; the fork point is v1.
    proc = run_diff(repo, "--against", "main...", "--format", "json")
    doc = json.loads(proc.stdout)
    assert [r["name"] for r in doc["removed"]] == ["rl.reward.mean"]
    assert doc["summary"]["added"] == 0
    assert proc.returncode == 1


@pytest.mark.parametrize("layout", ["checkout", "catalog-dir"])
def test_directory_baseline_works_as_checkout_or_catalog_dir(tmp_path: Path, layout: str) -> None:
    base, work = tmp_path / "base", tmp_path / "work"
    write_catalog(base, GRPO_V1)
    write_catalog(work, GRPO_V1.replace("kind: gauge", "kind: counter", 1))
    against = base if layout == "checkout" else base / "catalog"
    proc = run_diff(work, "--against", str(against))
    assert proc.returncode == 1, proc.stderr
    assert "error[STABLE_KIND_CHANGED]" in proc.stdout


@pytest.mark.parametrize(
    ("against", "message"),
    [
        ("no-such-ref", "is neither a directory nor a git commit"),
        ("<empty>", "holds neither catalog/ nor *.yaml files"),
        ("<empty-catalog>", "holds a catalog/ directory without *.yaml files"),
    ],
)
def test_unreadable_baseline_is_a_usage_error(
    repo: Path, tmp_path: Path, against: str, message: str
) -> None:
    empty = tmp_path / "empty"
    (empty / "catalog").mkdir(parents=True)
    paths = {"<empty>": str(empty / "catalog"), "<empty-catalog>": str(empty)}
    proc = run_diff(repo, "--against", paths.get(against, against))
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stdout == ""


def test_logger_key_change_of_a_stable_row_fails_at_the_key(repo: Path) -> None:
    """Code that logs the old literal key stops exporting: the diff names the key change."""
    write_catalog(repo, GRPO_V1.replace("logger_key: reward", "logger_key: reward_mean"))
    proc = run_diff(repo, "--against", "v1")
    assert proc.returncode == 1, proc.stderr
    assert (
        "catalog/grpo.yaml:5:17: error[STABLE_LOGGER_KEY_CHANGED]: stable series "
        "rl.reward.mean was logged as 'train/reward', now 'train/reward_mean'"
    ) in proc.stdout


def test_baseline_that_does_not_load_is_a_usage_error(tmp_path: Path) -> None:
    base, work = tmp_path / "base", tmp_path / "work"
    write_catalog(base, "owner: x\n")
    write_catalog(work, GRPO_V1)
    proc = run_diff(work, "--against", str(base))
    assert proc.returncode == 2
    assert "does not load with this schema" in proc.stderr
    # Its diagnostics name the baseline's own files, not the temporary copy.
    assert f"{base.as_posix()}/catalog/grpo.yaml" in proc.stderr


def test_invalid_working_catalog_exits_1(tmp_path: Path) -> None:
    base, work = tmp_path / "base", tmp_path / "work"
    write_catalog(base, GRPO_V1)
    write_catalog(work, "owner: x\n")
    proc = run_diff(work, "--against", str(base))
    assert proc.returncode == 1
    assert "fix them before diffing" in proc.stderr


def test_working_root_without_a_catalog_is_a_usage_error(tmp_path: Path) -> None:
    """A wrong --root holds no catalog: exit 2 with the reason, not "every row removed"."""
    base, work = tmp_path / "base", tmp_path / "work"
    write_catalog(base, GRPO_V1)
    work.mkdir()
    proc = run_diff(work, "--against", str(base))
    assert proc.returncode == 2, proc.stdout
    assert "no catalog files" in proc.stderr
    assert "'catalog/*.yaml'" in proc.stderr
    assert proc.stdout == ""
