"""Key-family patterns: parsing, matching and the exact overlap decision."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.patterns import (
    Domain,
    Placeholder,
    adjacent_placeholders,
    compile_matcher,
    overlap,
    parse_pattern,
    placeholders,
)

DOMAINS: dict[str, Domain] = {
    "rl.efficiency.category": ("idle/refit_bubble", "init/total"),
    "rl.setup.phase": None,
    "rl.dataset": None,
    "flag": ("a", "ab"),
}


def test_parse_pattern_splits_literals_and_placeholders() -> None:
    """Literal runs and placeholders come back in order; plain text is one literal."""
    assert parse_pattern("setup/{rl.setup.phase}_time_s") == (
        "setup/",
        Placeholder("rl.setup.phase"),
        "_time_s",
    )
    assert parse_pattern("reward") == ("reward",)
    assert parse_pattern("") == ()
    assert placeholders("validation-{rl.dataset}/{x}") == ("rl.dataset", "x")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("{a}{b}_s", ("a", "b")), ("{a}/{b}", None), ("plain", None), ("x{a}{b}", ("a", "b"))],
)
def test_adjacent_placeholders_are_found(text: str, expected: tuple[str, str] | None) -> None:
    """Two placeholders with nothing between them are reported; separated ones are not."""
    assert adjacent_placeholders(text) == expected


@pytest.mark.parametrize(
    ("first", "second", "witness"),
    [
        # an enum family and a plain key it does not contain
        ("efficiency/{rl.efficiency.category}_s", "efficiency/efficiency_pct", None),
        ("efficiency/{rl.efficiency.category}_s", "efficiency/total_waste_s", None),
        (
            "efficiency/{rl.efficiency.category}_s",
            "efficiency/init/total_s",
            "efficiency/init/total_s",
        ),
        # an open family swallows any plain key of its shape
        ("{rl.setup.phase}_time_s", "policy_init_time_s", "policy_init_time_s"),
        ("{rl.setup.phase}_time_s", "parallel_init_enabled", None),
        ("{rl.setup.phase}_time_s", "_time_s", None),  # a placeholder is never empty
        # two open families
        ("a/{rl.dataset}", "{rl.setup.phase}/b", "a/b"),
        ("a/{rl.dataset}", "b/{rl.setup.phase}", None),
        ("validation-{rl.dataset}", "validation-main", "validation-main"),
        ("validation-{rl.dataset}", "validation", None),
        # enum values that are prefixes of each other
        ("{flag}b", "ab", "ab"),
        ("{flag}c", "abc", "abc"),
        ("{flag}", "b", None),
        ("", "", ""),
    ],
)
def test_overlap_decides_exactly(first: str, second: str, witness: str | None) -> None:
    """A shared text is found (shortest first) exactly when one exists, in both orders."""
    a, b = parse_pattern(first), parse_pattern(second)
    found = overlap(a, b, DOMAINS)
    assert (found is None) is (witness is None)
    if witness is not None:
        assert found is not None
        assert len(found) == len(witness)
        for pattern in (a, b):
            assert compile_matcher(pattern, DOMAINS).fullmatch(found)
    assert (overlap(b, a, DOMAINS) is None) is (witness is None)


def test_matcher_captures_each_placeholder() -> None:
    """The compiled matcher captures the attribute values of a logged key."""
    matcher = compile_matcher(parse_pattern("efficiency/{rl.efficiency.category}_s"), DOMAINS)
    found = matcher.fullmatch("efficiency/idle/refit_bubble_s")
    assert found is not None
    assert found.group(1) == "idle/refit_bubble"
    assert matcher.fullmatch("efficiency/total_waste_s") is None


_ALPHABET = "ab/"
_part = st.one_of(
    st.text(_ALPHABET, min_size=1, max_size=2),
    st.sampled_from([Placeholder("open"), Placeholder("enum")]),
)
_pattern = st.lists(_part, max_size=3).map(tuple)


@settings(max_examples=200, deadline=None)
@given(_pattern, _pattern, st.lists(st.text(_ALPHABET, min_size=1, max_size=2), min_size=1))
def test_overlap_agrees_with_brute_force(
    first: tuple[str | Placeholder, ...],
    second: tuple[str | Placeholder, ...],
    enum: list[str],
) -> None:
    """The automaton finds a shared text iff one of length <= 6 exists (over a, b, /, x)."""
    domains: dict[str, Domain] = {"open": None, "enum": tuple(dict.fromkeys(enum))}
    match_a = compile_matcher(first, domains)
    match_b = compile_matcher(second, domains)
    found = overlap(first, second, domains)
    if found is not None:
        assert match_a.fullmatch(found)
        assert match_b.fullmatch(found)
        return
    for length in range(7):
        for chars in itertools.product(_ALPHABET + "x", repeat=length):
            text = "".join(chars)
            assert not (match_a.fullmatch(text) and match_b.fullmatch(text)), text
