"""The series rules: placeholder parsing, matching, precedence, the exact overlap decision,
values, budgets, and the vocabularies the JSON schema repeats."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metric_catalog.series_rules import (
    Capture,
    PatternError,
    Placeholder,
    SeriesMatcher,
    adjacent_placeholders,
    compile_pattern,
    overlap,
    parse_pattern,
    placeholders,
)

DOMAINS: dict[str, Capture] = {
    "rl.efficiency.category": Capture(("idle/refit_bubble", "init/total")),
    "rl.setup.phase": Capture(),
    "rl.dataset": Capture(),
    "flag": Capture(("a", "ab")),
}


def _matches(
    pattern: tuple[str | Placeholder, ...], text: str, captures: dict[str, Capture]
) -> bool:
    rebuilt = "".join(
        p.replace("{", "{{").replace("}", "}}") if isinstance(p, str) else "{" + p.name + "}"
        for p in pattern
    )
    return compile_pattern(rebuilt, captures).match(text) is not None


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
        # an open placeholder takes one path segment
        ("{rl.setup.phase}_time_s", "policy/init_time_s", None),
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
        for pattern in (first, second):
            assert compile_pattern(pattern, DOMAINS).match(found) is not None
    assert (overlap(b, a, DOMAINS) is None) is (witness is None)


@pytest.mark.parametrize(
    ("pattern", "text", "captured"),
    [
        ("{rl.dataset}/scheduler/{rl.dataset}/latency", "math/scheduler/math/latency", "math"),
        ("{rl.dataset}/scheduler/{rl.dataset}/latency", "math/scheduler/code/latency", None),
        ("{flag}/x/{flag}", "ab/x/ab", "ab"),
        ("{flag}/x/{flag}", "a/x/ab", None),
        ("{flag}/x/{flag}", "ab/x/a", None),
        ("{n}_{n}", "12_12", 12),
        ("{n}_{n}", "12_13", None),
        ("{n}_{n}", "-1_-1", -1),
        ("{span}/mid/{span}", "a/b/mid/a/b", "a/b"),
        ("{span}/mid/{span}", "a/b/mid/a", None),
    ],
)
def test_a_placeholder_placed_twice_matches_only_the_same_text_twice(
    pattern: str, text: str, captured: object
) -> None:
    """``{domain}/scheduler/{domain}/latency`` captures once; differing places do not match."""
    domains = {**DOMAINS, "n": Capture(integer=True), "span": Capture(spans=True)}
    found = compile_pattern(pattern, domains).match(text)
    name = placeholders(pattern)[0]
    assert found == (None if captured is None else {name: captured})


def test_matcher_captures_each_placeholder() -> None:
    """The compiled matcher captures the attribute values of a logged key."""
    matcher = compile_pattern("efficiency/{rl.efficiency.category}_s", DOMAINS)
    assert matcher.match("efficiency/idle/refit_bubble_s") == {
        "rl.efficiency.category": "idle/refit_bubble"
    }
    assert matcher.match("efficiency/total_waste_s") is None


_ALPHABET = "a1/-"


def _names(pattern: tuple[str | Placeholder, ...]) -> list[str]:
    return [part.name for part in pattern if isinstance(part, Placeholder)]


_part = st.one_of(
    st.text(_ALPHABET, min_size=1, max_size=2),
    st.sampled_from([Placeholder(n) for n in ("open", "enum", "span", "int")]),
)
_pattern = st.lists(_part, max_size=3).map(tuple)


@settings(max_examples=200, deadline=None)
@given(_pattern, _pattern, st.lists(st.text(_ALPHABET, min_size=1, max_size=2), min_size=1))
def test_overlap_agrees_with_brute_force(
    first: tuple[str | Placeholder, ...],
    second: tuple[str | Placeholder, ...],
    enum: list[str],
) -> None:
    """The automaton finds a shared text iff one of length <= 5 exists (over a, 1, /, -, x),
    for enum, one-segment, spanning and int placeholders alike. A pattern placing a name
    twice is over-approximated: a shared text is never missed, one found may not match."""
    domains = {
        "open": Capture(),
        "span": Capture(spans=True),
        "int": Capture(integer=True),
        "enum": Capture(tuple(dict.fromkeys(enum))),
    }
    found = overlap(first, second, domains)
    repeats = any(len(set(names)) < len(names) for names in map(_names, (first, second)))
    if found is not None and repeats:
        return
    if found is not None:
        assert _matches(first, found, domains)
        assert _matches(second, found, domains)
        return
    for length in range(6):
        for chars in itertools.product(_ALPHABET + "x", repeat=length):
            text = "".join(chars)
            assert not (_matches(first, text, domains) and _matches(second, text, domains)), text


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("a{{b}}", ("a{b}",)),
        ("{{{x}}}", ("{", Placeholder("x"), "}")),
        ("k/{x}/{{", ("k/", Placeholder("x"), "/{")),
    ],
)
def test_doubled_braces_are_literal_braces(text: str, parts: tuple[object, ...]) -> None:
    """``{{`` and ``}}`` stand for one literal brace; ``{name}`` stays a placeholder."""
    assert parse_pattern(text) == parts


@pytest.mark.parametrize("text", ["a{b", "a}b", "{a{b}}", "x}"])
def test_an_unmatched_brace_is_refused(text: str) -> None:
    """A single brace that closes or opens nothing is a PatternError (a ValueError)."""
    with pytest.raises(PatternError, match="doubled"):
        parse_pattern(text)
    assert placeholders(text) == ()


@pytest.mark.parametrize(
    ("pattern", "key", "captured"),
    [
        ("timing_s/{stage}", "timing_s/gen", {"stage": "gen"}),
        ("timing_s/{stage}", "timing_s/agent_loop/max", None),
        ("val-core/{source}/{var}/mean", "val-core/openai/gsm8k/acc/mean", {
            "source": "openai/gsm8k", "var": "acc"}),
        ("val-core/{source}/{var}/mean", "val-core/gsm8k/acc/mean", {
            "source": "gsm8k", "var": "acc"}),
        ("step/{n}", "step/-3", {"n": -3}),
        ("step/{n}", "step/x", None),
    ],
)  # fmt: skip
def test_a_placeholder_takes_one_segment_unless_it_spans(
    pattern: str, key: str, captured: dict[str, object] | None
) -> None:
    """Open strings take one segment, a spanning attribute several; ints convert."""
    captures = {
        "stage": Capture(),
        "source": Capture(spans=True),
        "var": Capture(),
        "n": Capture(integer=True),
    }
    assert compile_pattern(pattern, captures).match(key) == captured


@pytest.mark.parametrize(
    ("stronger", "weaker"),
    [
        ("timing_s/agent_loop/generate_sequences/max", "timing_s/{stage}/{stat}/max"),
        ("a/b", "a/{open}"),
        ("a/{open}/c", "a/{span}"),
        ("a/{enum}", "a/{open}"),
        ("a/{int}", "a/{open}"),
        ("a/{open}", "a/{span}"),
        ("a/x{open}", "a/{open}"),
    ],
)
def test_the_more_specific_pattern_ranks_higher(stronger: str, weaker: str) -> None:
    """More literal text wins; then fewer spanning, open, int and enum placeholders."""
    captures = {
        "open": Capture(),
        "stage": Capture(),
        "stat": Capture(),
        "span": Capture(spans=True),
        "enum": Capture(("x", "y")),
        "int": Capture(integer=True),
    }
    assert compile_pattern(stronger, captures).rank > compile_pattern(weaker, captures).rank


def test_the_matcher_routes_a_pair_to_its_most_specific_row() -> None:
    """A literal key beats a family; prefix specificity decides between equal keys."""
    from metric_catalog.series_rules import SeriesMatcher

    captures = {"stage": Capture(), "ds": Capture()}
    matcher = SeriesMatcher()
    matcher.add("", "timing_s/{stage}", captures, "family")
    matcher.add("", "timing_s/gen", captures, "literal")
    matcher.add("validation-{ds}", "loss", captures, "any-dataset")
    matcher.add("validation-main", "loss", captures, "main")
    assert matcher.match("", "timing_s/gen") == [("literal", {})]
    assert matcher.match("", "timing_s/ref") == [("family", {"stage": "ref"})]
    assert matcher.match("validation-main", "loss") == [("main", {})]
    assert matcher.match("validation-math", "loss") == [("any-dataset", {"ds": "math"})]
    assert matcher.match("", "timing_s/a/b") == []


def test_the_schema_enums_are_the_series_rules_tuples() -> None:
    """The JSON schema repeats the vocabularies; each enum is tied to its one tuple."""
    import json
    from pathlib import Path

    from metric_catalog import series_rules

    schema = json.loads(Path("codegen/schema/catalog.schema.json").read_text(encoding="utf-8"))
    defs = schema["$defs"]
    assert tuple(defs["kind"]["enum"]) == series_rules.METRIC_KINDS
    assert tuple(defs["stability"]["enum"]) == series_rules.STABILITY_LEVELS
    assert tuple(defs["attributeDef"]["properties"]["type"]["enum"]) == (
        series_rules.ATTRIBUTE_TYPES
    )
    assert tuple(defs["attributeRef"]["properties"]["requirement_level"]["enum"]) == (
        series_rules.ATTRIBUTE_REQUIREMENT_LEVELS
    )
    assert set(defs["requirementLevel"]["enum"]) == set(series_rules.PRESENCE_LEVELS)
    assert set(series_rules.RUNTIME_REQUIREMENT_LEVELS) == set(series_rules.PRESENCE_LEVELS)


@pytest.mark.parametrize(
    ("kind", "text", "fits"),
    [
        ("int", "-3", True),
        ("int", "3.0", False),
        ("bool", "true", True),
        ("bool", "True", False),
        ("double", "inf", False),
        ("double", "1e3", True),
        ("string", "", True),
    ],
)
def test_a_written_value_parses_by_its_type(kind: str, text: str, fits: bool) -> None:
    """parse_value reads a catalog string as the attribute's type, or INVALID."""
    from metric_catalog.series_rules import INVALID, parse_value

    assert (parse_value(kind, text) is not INVALID) is fits


@pytest.mark.parametrize(
    ("limit", "bounds", "expected"),
    [(None, [], 2), (None, [None], 2000), (None, [2, 3], 13), (5, [2, 3], 5)],
)
def test_series_limit_is_bounded_by_the_declaration(
    limit: int | None, bounds: list[int | None], expected: int
) -> None:
    """(bound + 1) per attribute, plus the overflow point, within the row's limit."""
    from metric_catalog.series_rules import series_limit

    assert series_limit(limit, bounds) == expected


def _scanned(
    rows: list[tuple[str, str]], prefix: str, key: str
) -> list[tuple[int, dict[str, object]]]:
    """What SeriesMatcher answers, by scanning every row (most specific first): the
    reference its index must agree with."""
    entries = []
    for index, (row_prefix, row_key) in enumerate(rows):
        compiled_prefix, compiled_key = (
            compile_pattern(row_prefix, {}),
            compile_pattern(row_key, {}),
        )
        entries.append(
            ((compiled_key.rank, compiled_prefix.rank), compiled_prefix, compiled_key, index)
        )
    entries.sort(key=lambda entry: entry[0], reverse=True)
    found: list[tuple[int, dict[str, object]]] = []
    best = None
    for rank, compiled_prefix, compiled_key, index in entries:
        if best is not None and rank < best:
            break
        on_prefix, on_key = compiled_prefix.match(prefix), compiled_key.match(key)
        if on_prefix is not None and on_key is not None:
            best = rank
            found.append((index, {**on_prefix, **on_key}))
    return found


_PIECES = st.sampled_from(["a", "b", "/", "_", "x/", "/y", "/m/", "{p}", "{q}", "ab"])
_PATTERNS = (
    st.lists(_PIECES, min_size=1, max_size=4)
    .map("".join)
    .filter(lambda text: "{p}{p}" not in text and "{q}{q}" not in text and text.count("{p}") < 2)
)
_KEYS = st.lists(st.sampled_from(["a", "b", "/", "_", "x", "y", "m", "ab"]), min_size=1, max_size=6)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    rows=st.lists(st.tuples(st.sampled_from(["", "t", "{q}"]), _PATTERNS), max_size=12),
    keys=st.lists(st.tuples(st.sampled_from(["", "t", "u"]), _KEYS.map("".join)), max_size=8),
)
def test_the_indexed_matcher_answers_as_a_scan_of_every_row(
    rows: list[tuple[str, str]], keys: list[tuple[str, str]]
) -> None:
    """Indexing rows by the literal head, tail or segment of their keys changes no answer."""
    rows = [(prefix, key) for prefix, key in rows if "{q}" not in prefix or "{q}" not in key]
    matcher = SeriesMatcher()
    for index, (prefix, key) in enumerate(rows):
        matcher.add(prefix, key, {}, index)
    for prefix, key in keys:
        assert matcher.match(prefix, key) == _scanned(rows, prefix, key)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    rows=st.lists(st.tuples(st.sampled_from(["", "t", "{q}"]), _PATTERNS), max_size=12),
    keys=st.lists(st.tuples(st.sampled_from(["", "t", "u"]), _KEYS.map("".join)), max_size=8),
    limit=st.integers(min_value=0, max_value=6),
)
def test_a_budgeted_matcher_answers_as_a_scan_or_says_it_cannot(
    rows: list[tuple[str, str]], keys: list[tuple[str, str]], limit: int
) -> None:
    """A spent budget never changes an answer: the pair raises instead, and the tries of
    rows no literal head, tail or segment indexes never exceed the limit."""
    from metric_catalog.series_rules import MatchBudget, MatchBudgetError

    rows = [(prefix, key) for prefix, key in rows if "{q}" not in prefix or "{q}" not in key]
    matcher = SeriesMatcher()
    matcher.budget = budget = MatchBudget(limit)
    for index, (prefix, key) in enumerate(rows):
        matcher.add(prefix, key, {}, index)
    for prefix, key in keys:
        try:
            found = matcher.match(prefix, key)
        except MatchBudgetError:
            assert budget.exhausted
            continue
        assert found == _scanned(rows, prefix, key)
    assert budget.spent <= limit


def test_a_family_of_placeholders_and_separators_is_tried_only_on_keys_holding_them() -> None:
    from metric_catalog.series_rules import MatchBudget

    matcher = SeriesMatcher()
    matcher.budget = budget = MatchBudget(100)
    matcher.add("", "{a}_{b}", {}, "underscore")
    matcher.add("", "{a}-{b}", {}, "dash")
    assert matcher.match("", "x_y") == [("underscore", {"a": "x", "b": "y"})]
    assert matcher.match("", "plain") == []
    assert budget.spent == 1  # only '{a}_{b}' was tried, and only on 'x_y'
