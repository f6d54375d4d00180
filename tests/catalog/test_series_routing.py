"""One meaning of a series: validate, the tee and live-check route every key alike.

Hypothesis writes small catalogs (literal rows and key families of overlapping
shapes, one-segment, spanning, enum and int placeholders, literal prefixes and
prefix patterns), loads them through the real loader and validation, registers
the same rows with the runtime, and logs keys instantiated from every row (plus
the shared keys validation reports). For every key:

* the real ``tee_metrics`` (an in-memory OpenTelemetry reader) records it on
  exactly the series, with exactly the attributes, that live-check counts it
  under (its ``KeyMatcher.route``, which the checker counts by);
* a key reaching two series exists exactly when validation reports
  ``KEY_PATTERN_OVERLAP``, and where two rows meet with a winner the key goes to
  the winner only.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from codegen.catalog.diagnostics import Severity
from codegen.catalog.matching import KeyMatcher
from codegen.catalog.model import Attribute, Catalog, MetricRow
from codegen.catalog.pipeline import load_and_check
from codegen.catalog.precedence import meetings
from metric_catalog import exporters, vocabulary
from metric_catalog.series_rules import literal_text
from metric_catalog.tee import tee_metrics
from metric_catalog.vocabulary import MetricAttribute, TeedMetric
from tests.otel_fixtures import caught_warnings, clean_otel, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

ATTRIBUTES = """\
attributes:
  - name: seg
    type: string
    description: One path segment.
    max_cardinality: "64"
  - name: span
    type: string
    description: Several path segments.
    max_cardinality: "64"
    spans_segments: "true"
  - name: enum
    type: string
    description: An enum with a value holding a slash.
    values:
      - value: a
        description: A.
      - value: b
        description: B.
      - value: c/d
        description: C over d.
  - name: num
    type: int
    description: An integer.
    max_cardinality: "64"
  - name: ds
    type: string
    description: The prefix's data set.
    max_cardinality: "64"
"""

# What a placeholder of each attribute is instantiated with in logged keys: values it
# takes, and for the enum and int one a value it does not.
SAMPLES: dict[str, tuple[str, ...]] = {
    "seg": ("a", "zz"),
    "span": ("a", "a/b", "zz/c/d"),
    "enum": ("a", "c/d", "e"),
    "num": ("1", "-2"),
    "ds": ("a", "x"),
}

_word = st.sampled_from(["a", "b", "zz", "c"])
_placeholder = st.sampled_from(["{seg}", "{span}", "{enum}", "{num}"])
_segment = st.one_of(
    _word,
    _placeholder,
    st.tuples(_word, _placeholder).map(lambda pair: f"{pair[0]}_{pair[1]}"),
)


@st.composite
def _key(draw: st.DrawFn) -> str:
    parts = draw(st.lists(_segment, min_size=1, max_size=3))
    key = "/".join(parts)
    names = [p for p in ("{seg}", "{span}", "{enum}", "{num}") if p in key]
    assume(all(key.count(name) == 1 for name in names))
    return key


_prefix = st.sampled_from(["", "p", "p/q", "v-{ds}", "v-a"])


@st.composite
def _catalog_rows(draw: st.DrawFn) -> list[tuple[str, tuple[str, ...]]]:
    rows = draw(
        st.lists(
            st.tuples(_key(), st.lists(_prefix, min_size=1, max_size=2, unique=True).map(tuple)),
            min_size=1,
            max_size=5,
        )
    )
    # Two rows with the same key and prefix text are a duplicate key (also at registration).
    written = [(prefix, key) for key, prefixes in rows for prefix in prefixes]
    assume(len(written) == len(set(written)))
    return rows


def _yaml(rows: list[tuple[str, tuple[str, ...]]]) -> str:
    lines = [
        "owner: tests.routing",
        "module: routing",
        "description: Rows of a generated catalog.",
        ATTRIBUTES.rstrip("\n"),
        "teed:",
    ]
    for index, (key, prefixes) in enumerate(rows):
        captured = sorted({n for n in SAMPLES if "{" + n + "}" in key + "".join(prefixes)})
        lines += [
            f'  - logger_key: "{key}"',
            f"    prefixes: [{', '.join(repr(p).replace(chr(39), chr(34)) for p in prefixes)}]",
            f"    name: rl.routing.row{index}",
            "    kind: gauge",
            '    unit: "1"',
            f"    description: Row {index} of the generated catalog.",
            "    no_lint: [DESCRIPTION_FORMAT]",
        ]
        if captured:
            lines.append("    attributes:")
            lines += [f"      - ref: {name}" for name in captured]
    return "\n".join(lines) + "\n"


def _runtime_rows(catalog: Catalog) -> list[TeedMetric]:
    """The rows as the generated module would declare them."""
    known = catalog.attributes()
    rows = []
    for _file, row in catalog.rows():
        attributes = tuple(_runtime_attribute(known[ref.name]) for ref in row.attributes)
        rows.append(
            TeedMetric(
                row.logger_key or "",
                row.name,
                prefix=row.prefixes[0],
                other_prefixes=row.prefixes[1:],
                attributes=attributes,
            )
        )
    return rows


def _runtime_attribute(attribute: Attribute) -> MetricAttribute:
    return MetricAttribute(
        attribute.name,
        attribute.type,
        values=attribute.typed_values(),
        max_cardinality=attribute.max_cardinality,
        requirement="required",
        spans_segments=attribute.spans_segments,
    )


def _instances(text: str) -> Iterator[str]:
    """``text`` with each placeholder replaced by each of its sample values."""
    names = [n for n in SAMPLES if "{" + n + "}" in text]
    for values in itertools.product(*(SAMPLES[n] for n in names)):
        out = text
        for name, value in zip(names, values, strict=True):
            out = out.replace("{" + name + "}", value)
        yield out


Route = frozenset[tuple[str, frozenset[tuple[str, Any]]]]


def _tee_route(reader: Any, prefix: str, key: str, value: float) -> Route:
    """The (series, attributes) points the real tee records ``key`` on."""
    tee_metrics({key: value}, prefix)
    data = reader.get_metrics_data()
    found: set[tuple[str, frozenset[tuple[str, Any]]]] = set()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    if point.value == value:
                        found.add((metric.name, frozenset((point.attributes or {}).items())))
    return frozenset(found)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(rows=_catalog_rows())
def test_validate_the_tee_and_live_check_route_every_key_alike(
    clean_otel: None, tmp_path_factory: pytest.TempPathFactory, rows: list[Any]
) -> None:
    """Same series, same captured attributes, for every key; two series only where validate
    reports KEY_PATTERN_OVERLAP."""
    root = tmp_path_factory.mktemp("routing")
    (root / "catalog").mkdir()
    (root / "catalog" / "routing.yaml").write_text(_yaml(rows), encoding="utf-8")
    result = load_and_check(root=root)
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    assume(all(d.code == "KEY_PATTERN_OVERLAP" for d in errors))
    catalog = result.catalog
    known = catalog.attributes()
    teed: list[MetricRow] = [row for _f, row in catalog.rows()]
    met = list(meetings(teed, known))
    assert bool(errors) == any(m.winner is None for m in met)

    pairs: dict[tuple[str, str], None] = {}
    for row in teed:
        for prefix in row.prefixes:
            for logged_prefix in _instances(prefix):
                for key in _instances(row.logger_key or ""):
                    pairs[(literal_text(logged_prefix), literal_text(key))] = None
    for meeting in met:
        pairs[(meeting.prefix, meeting.key)] = None
    pairs[("p", "unknown/key")] = None

    vocabulary._reset_for_tests()
    exporters.reset_for_tests()
    vocabulary.register_teed_metrics(_runtime_rows(catalog))
    checker = KeyMatcher(teed, 1000, known)
    tee: dict[tuple[str, str], Route] = {}
    with installed_reader() as reader, caught_warnings():
        for index, (prefix, key) in enumerate(pairs):
            tee[(prefix, key)] = _tee_route(reader, prefix, key, 1000.0 + index)
    for pair, teed_to in tee.items():
        checked = frozenset(
            (row.name, frozenset(captured.items())) for row, captured in checker.route(*pair)
        )
        assert teed_to == checked, pair
        if not errors:
            assert len(teed_to) <= 1, pair
    for meeting in met:
        names = {name for name, _attrs in tee[(meeting.prefix, meeting.key)]}
        both = {meeting.first.name, meeting.second.name}
        if len(names) == 1 and names.isdisjoint(both):
            # A third row, more specific than both, takes this key (a meeting is pairwise):
            # it must be one that matches the key, which the tee == live-check check above
            # and the single-route check already hold it to.
            continue
        if meeting.winner is None:
            assert names == both
        else:
            assert names == {meeting.winner.name}


def test_the_generated_catalogs_cover_the_interesting_shapes(tmp_path: Path) -> None:
    """A fixed example of the generator's output loads cleanly: a literal row beside an
    open family, a spanning family and a prefix pattern (the property test's baseline)."""
    rows = [
        ("zz/a", ("p",)),
        ("zz/{seg}", ("p",)),
        ("a/{span}/b", ("v-{ds}",)),
        ("c_{enum}/{num}", ("",)),
    ]
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "routing.yaml").write_text(_yaml(rows), encoding="utf-8")
    result = load_and_check(root=tmp_path)
    assert [d.code for d in result.diagnostics if d.severity is Severity.ERROR] == []
    met = list(meetings([row for _f, row in result.catalog.rows()], result.catalog.attributes()))
    assert [(m.first.name, m.second.name, m.winner and m.winner.name) for m in met] == [
        ("rl.routing.row0", "rl.routing.row1", "rl.routing.row0")
    ]
