"""Attributes on JSONL lines: JsonlLogger writes them, live-check judges keys, values, budgets.

The catalog here is a small YAML catalog; the runtime rows are its generated
module, executed against the real registry, so the JSONL a real
:class:`~metric_catalog.loggers.JsonlLogger` writes and the points the real tee
records come from the same declaration live-check reads.
"""

from __future__ import annotations

import io
import json
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.generate.python import render_python_modules
from codegen.live_check import (
    FINDING_KINDS,
    MAX_UNDECLARED_KEYS,
    LiveCheckReport,
    check_file,
    check_paths,
    check_stream,
)
from codegen.live_check.checker import Checker as _Checker
from codegen.live_check.judges.attributes import series_budget
from metric_catalog import exporters, identity, vocabulary
from metric_catalog._attributes import SeriesPoints, series_limit
from metric_catalog._warn import MetricCatalogWarning
from metric_catalog.loggers import ENV_LOOP, JsonlLogger, TeeLogger
from metric_catalog.vocabulary import OVERFLOW_ATTRIBUTE
from tests.catalog_projects import loaded_catalog
from tests.otel_fixtures import caught_warnings, clean_otel, collect

__all__ = ["clean_otel"]  # fixture used by name

ATTRIBUTES = """\
owner: nemo_rl.attrs
module: attrs
description: Attributes of the test catalog.
attributes:
  - name: rl.engine
    type: string
    description: Generation engine that served the batch.
    max_cardinality: "3"
  - name: rl.phase
    type: string
    description: Phase of the step.
    values:
      - value: train
        description: Training.
      - value: validation
        description: Validation.
  - name: rl.replica
    type: int
    description: Replica index.
    max_cardinality: "100"
  - name: rl.setup.phase
    type: string
    description: Startup phase that was timed.
    max_cardinality: "8"
  - name: rl.setup.kind
    type: string
    description: What a startup phase does.
    values:
      - value: init
        description: Builds a worker.
      - value: load
        description: Loads data or weights.
"""

GEN = """\
owner: nemo_rl.gen
module: gen
description: Metrics of the generation workers.
prefix: train
teed:
  - logger_key: loss
    name: rl.policy.loss
    kind: gauge
    unit: "1"
    description: Policy loss of the step.
    attributes: [{ref: rl.phase}]
  - logger_key: "{rl.setup.phase}_time_s"
    prefix: timing/setup
    name: rl.setup.duration
    kind: gauge
    unit: s
    description: Duration of one startup phase.
    cardinality_limit: "6"
    attributes:
      - ref: rl.setup.phase
      - ref: rl.phase
      - ref: rl.setup.kind
        derive:
          from: rl.setup.phase
          map: {policy_init: init, data_load: load, weights_load: load}
  - logger_key: step_tokens
    name: rl.gen.step_tokens
    kind: gauge
    unit: "{token}"
    description: Tokens generated in the step.
    attributes: [{ref: rl.phase, requirement_level: required}]
recorded:
  - name: rl.gen.batch.duration
    kind: histogram
    unit: s
    description: Wall clock of one batched generate call.
    attributes: [{ref: rl.engine}, {ref: rl.phase}]
  - name: rl.gen.queue.depth
    kind: gauge
    unit: "{request}"
    description: Requests waiting in the queue.
    attributes: [{ref: rl.replica}]
    cardinality_limit: "4"
  - name: rl.gen.prompt_tokens
    kind: counter
    unit: "{token}"
    description: Prompt tokens of one batch.
    attributes: [{ref: rl.phase, requirement_level: required}, {ref: rl.engine}]
  - name: rl.gen.waiting
    kind: counter
    unit: "{request}"
    description: Requests that had to wait.
"""

NEW_KINDS = (
    "undeclared_series",
    "undeclared_attribute",
    "attribute_value",
    "attribute_budget",
    "missing_attribute",
)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder holding the test catalog."""
    folder = tmp_path_factory.mktemp("attributes")
    (folder / "catalog").mkdir()
    (folder / "catalog" / "attrs.yaml").write_text(ATTRIBUTES, encoding="utf-8")
    (folder / "catalog" / "gen.yaml").write_text(GEN, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def attributes_catalog(root: Path) -> Catalog:
    """The catalog of :data:`ATTRIBUTES` and :data:`GEN` (the rows carrying them), loaded clean."""
    return loaded_catalog(root)


@pytest.fixture
def runtime(attributes_catalog: Catalog, clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """The catalog's generated module registered for real, and a reader on the tee's provider."""
    for path, text in render_python_modules(attributes_catalog).items():
        if path.endswith("/gen.py"):
            module = types.ModuleType("gen_under_test")
            exec(compile(text, path, "exec"), module.__dict__)
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    exporters.configure(meter_provider=provider)
    yield reader
    exporters.reset_for_tests()
    provider.shutdown()


def check(catalog: Catalog, *docs: dict[str, Any]) -> LiveCheckReport:
    """live-check of an in-memory log of ``docs`` (unit tests of one rule each)."""
    raw = "".join(json.dumps(doc) + "\n" for doc in docs).encode()
    return check_stream(io.BytesIO(raw), catalog, source="mem.jsonl")


def point(series: str, value: object = 1.0, step: int = 1, **attributes: object) -> dict[str, Any]:
    """A point line."""
    doc: dict[str, Any] = {"step": step, "series": series, "value": value}
    if attributes:
        doc["attributes"] = attributes
    return doc


def kinds(report: LiveCheckReport) -> list[tuple[str, str, int]]:
    """(kind, key, count) of every finding."""
    return sorted((f.kind, f.qualified_key, f.count) for f in report.findings)


# --- JsonlLogger writes attributes --------------------------------------------------------


def test_log_metrics_writes_its_attributes_on_the_line_and_none_without(tmp_path: Path) -> None:
    with JsonlLogger(tmp_path / "run.jsonl", loop="") as logger:
        logger.log_metrics({"loss": 0.5}, 1, prefix="train", attributes={"rl.phase": "train"})
        logger.log_metrics({"loss": 0.4}, 2, prefix="train", attributes={})
    first, second = logger.path.read_text(encoding="utf-8").splitlines()
    assert first == (
        '{"step":1,"prefix":"train","metrics":{"loss":0.5},"attributes":{"rl.phase":"train"}}'
    )
    assert "attributes" not in json.loads(second)


def test_a_tee_logger_hands_its_attributes_to_a_wrapped_jsonl_logger_only(
    tmp_path: Path, runtime: InMemoryMetricReader
) -> None:
    with JsonlLogger(tmp_path / "run.jsonl") as backend:
        TeeLogger(backend, attributes={"rl.phase": "validation"}).log_metrics(
            {"loss": 0.5}, 3, prefix="train"
        )
    assert json.loads(backend.path.read_text(encoding="utf-8"))["attributes"] == {
        "rl.phase": "validation"
    }
    seen: list[dict[str, Any]] = []

    class Plain:
        def log_metrics(self, metrics: dict[str, Any], step: int, prefix: str = "") -> None:
            seen.append(metrics)

    TeeLogger(Plain(), attributes={"rl.phase": "train"}).log_metrics({"loss": 0.1}, 1, "train")
    assert seen == [{"loss": 0.1}]  # no attributes keyword for a logger that takes none


def test_record_metrics_records_and_writes_one_point_line_per_value(
    tmp_path: Path, runtime: InMemoryMetricReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_LOOP, "grpo_sync")
    with JsonlLogger(tmp_path / "run.jsonl") as logger:
        logger.log_metrics({"loss": 0.5}, 7, prefix="train")
        with pytest.warns(MetricCatalogWarning, match="no recorded row has registry key"):
            logger.record_metrics(
                {"gen_batch_duration": 0.25, "gen_waiting": None, "no_such_key": 1.0},
                attributes={"rl.engine": "vllm"},
            )
        logger.record_metrics({"gen_queue_depth": 4}, {"rl.replica": 1}, step=9)
    lines = [json.loads(line) for line in logger.path.read_text(encoding="utf-8").splitlines()]
    assert lines[1:] == [
        {
            "step": 7,
            "loop": "grpo_sync",
            "series": "rl.gen.batch.duration",
            "value": 0.25,
            "attributes": {"rl.engine": "vllm"},
        },
        {
            "step": 7,
            "loop": "grpo_sync",
            "series": "no_such_key",
            "value": 1.0,
            "attributes": {"rl.engine": "vllm"},
        },
        {
            "step": 9,
            "loop": "grpo_sync",
            "series": "rl.gen.queue.depth",
            "value": 4,
            "attributes": {"rl.replica": 1},
        },
    ]
    series = collect(runtime)
    assert series["rl.gen.batch.duration"].points[0].attributes == {"rl.engine": "vllm"}
    assert series["rl.gen.queue.depth"].value == 4.0


def test_record_metrics_on_a_closed_logger_warns_once_and_still_records(
    tmp_path: Path, runtime: InMemoryMetricReader
) -> None:
    logger = JsonlLogger(tmp_path / "run.jsonl")
    logger.close()
    with caught_warnings() as caught:
        logger.record_metrics({"gen_queue_depth": 2})
        logger.record_metrics({"gen_queue_depth": 3})
    assert len([m for m in caught.messages if "could not write its point lines" in m]) == 1
    assert collect(runtime)["rl.gen.queue.depth"].value == 3.0
    with pytest.raises(ValueError, match="is closed"):
        logger.log_point("rl.gen.queue.depth", 1.0)


# --- live-check: each rule, firing and not --------------------------------------------------


def test_a_point_of_a_declared_series_by_name_or_registry_key_is_clean(
    attributes_catalog: Catalog,
) -> None:
    report = check(
        attributes_catalog,
        point("rl.gen.batch.duration", 0.2, **{"rl.engine": "vllm", "rl.phase": "train"}),
        point("gen_waiting", 3),
        point("rl.policy.loss", 0.4, **{"rl.phase": "validation"}),
    )
    assert kinds(report) == []
    assert report.failed(NEW_KINDS) == []


def test_a_point_of_an_undeclared_series_is_reported_at_its_line(
    attributes_catalog: Catalog,
) -> None:
    report = check(
        attributes_catalog,
        point("rl.gen.batch.duration"),
        point("rl.gen.typo"),
        point("rl.gen.typo"),
    )
    assert kinds(report) == [("undeclared_series", "rl.gen.typo", 2)]
    (finding,) = report.findings
    assert str(report._where(finding)) == "mem.jsonl:2:1"
    assert "no teed or recorded row declares it" in finding.message()
    assert report.failed(["undeclared_series"]) == ["undeclared_series"]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        pytest.param(
            point("rl.gen.queue.depth", 1, **{"rl.engine": "vllm"}),
            [("undeclared_attribute", "rl.gen.queue.depth", 1)],
            id="point-undeclared-key",
        ),
        pytest.param(
            point("rl.gen.waiting", 1, **{"rl.phase": "train"}),
            [("undeclared_attribute", "rl.gen.waiting", 1)],
            id="row-without-attributes",
        ),
        pytest.param(
            point("rl.gen.batch.duration", 1, **{"rl.phase": "rollout"}),
            [("attribute_value", "rl.gen.batch.duration", 1)],
            id="outside-the-enum",
        ),
        pytest.param(
            point("rl.gen.queue.depth", 1, **{"rl.replica": "1"}),
            [("attribute_value", "rl.gen.queue.depth", 1)],
            id="string-for-an-int",
        ),
        pytest.param(
            point("rl.gen.queue.depth", 1, **{"rl.replica": True}),
            [("attribute_value", "rl.gen.queue.depth", 1)],
            id="bool-for-an-int",
        ),
        pytest.param(
            point("rl.gen.batch.duration", 1, **{"rl.engine": 3}),
            [("attribute_value", "rl.gen.batch.duration", 1)],
            id="int-for-a-string",
        ),
        pytest.param(
            {"step": 1, "prefix": "train", "metrics": {"loss": 1}, "attributes": {"rank": 3}},
            [("undeclared_attribute", "train/loss", 1)],
            id="metrics-line-undeclared-key",
        ),
        pytest.param(
            {"step": 1, "prefix": "train", "metrics": {"loss": 1}, "attributes": {"rl.phase": 1}},
            [("attribute_value", "train/loss", 1)],
            id="metrics-line-bad-value",
        ),
        pytest.param(
            {
                "step": 1,
                "prefix": "timing/setup",
                "metrics": {"policy_time_s": 1},
                "attributes": {"rl.phase": "x"},
            },
            [("attribute_value", "timing/setup/policy_time_s", 1)],
            id="family-key-with-bad-line-attribute",
        ),
        pytest.param(
            {
                "step": 1,
                "prefix": "timing/setup",
                "metrics": {"policy_time_s": 1},
                "attributes": {"rl.phase": "train", "rl.setup.phase": "ignored-capture-wins"},
            },
            [],
            id="family-capture-wins-over-the-line",
        ),
        pytest.param(
            {
                "step": 1,
                "prefix": "train",
                "metrics": {"loss": 1},
                "attributes": {"rl.phase": "train"},
            },
            [],
            id="metrics-line-declared",
        ),
        pytest.param(
            point("rl.gen.queue.depth", 1, **{"rl.replica": 2}),
            [],
            id="int-attribute-int-value",
        ),
    ],
)
def test_attribute_keys_values_and_types_are_judged_per_row(
    attributes_catalog: Catalog, doc: dict[str, Any], expected: list[tuple[str, str, int]]
) -> None:
    assert kinds(check(attributes_catalog, doc)) == expected


def test_an_undeclared_attribute_finding_names_the_attribute_and_the_rows_declared_ones(
    attributes_catalog: Catalog,
) -> None:
    report = check(
        attributes_catalog,
        point("rl.gen.batch.duration", **{"rank": 1, "host": "a"}),
        point("rl.gen.batch.duration", **{"rank": 2}),
    )
    found = sorted((f.count, f.message()) for f in report.findings)
    assert found == [
        (
            1,
            "rl.gen.batch.duration carries attribute 'host', which its row does not declare "
            "(declared: rl.engine, rl.phase); the tee drops it from the point: declare it in "
            "the row's attributes, or stop passing it",
        ),
        (
            2,
            "rl.gen.batch.duration carries attribute 'rank', which its row does not declare "
            "(declared: rl.engine, rl.phase); the tee drops it from the point: declare it in "
            "the row's attributes, or stop passing it",
        ),
    ]


def test_a_point_without_a_required_attribute_is_reported_per_series_and_attribute(
    attributes_catalog: Catalog,
) -> None:
    report = check(
        attributes_catalog,
        point("rl.gen.prompt_tokens", 10, **{"rl.engine": "vllm"}),
        point("rl.gen.prompt_tokens", 10),
        {"step": 1, "prefix": "train", "metrics": {"step_tokens": 5}},
        {"step": 2, "prefix": "train", "metrics": {"step_tokens": 5}, "attributes": {"x": 1}},
    )
    assert kinds(report) == [
        ("missing_attribute", "rl.gen.prompt_tokens", 2),
        ("missing_attribute", "train/step_tokens", 2),
        ("undeclared_attribute", "train/step_tokens", 1),
    ]
    missing = [f for f in report.findings if f.kind == "missing_attribute"]
    assert {f.attribute for f in missing} == {"rl.phase"}
    assert "has no value for its required attribute 'rl.phase'" in missing[0].message()
    assert report.failed(["missing_attribute"]) == ["missing_attribute"]


def test_a_required_attribute_passed_or_derived_is_not_missing(attributes_catalog: Catalog) -> None:
    report = check(
        attributes_catalog,
        point("rl.gen.prompt_tokens", 10, **{"rl.phase": "train"}),
        {
            "step": 1,
            "prefix": "train",
            "metrics": {"step_tokens": 5},
            "attributes": {"rl.phase": "validation"},
        },
    )
    assert kinds(report) == []
    # The repo's efficiency series requires measurement, window and bucket, all derived
    # from the captured category: a line carrying none of them is complete.
    repo = load_and_check(root=Path(__file__).resolve().parents[2], lint=False).catalog
    efficiency = check(
        repo, {"step": 1, "prefix": "", "metrics": {"efficiency/idle/refit_bubble_s": 1.5}}
    )
    assert [f.kind for f in efficiency.findings if f.kind in NEW_KINDS] == []
    (row,) = [r for r in efficiency.rows if r.row.name == "rl.efficiency.seconds"]
    assert row.logged == 1


def test_a_series_over_its_set_budget_is_reported_once_at_the_first_set_over_it(
    attributes_catalog: Catalog,
) -> None:
    # cardinality_limit "4": the attribute-less set, replicas 0 and 1, the overflow point.
    within = [point("rl.gen.queue.depth", **{"rl.replica": r}) for r in (0, 1, 0, 1)]
    assert kinds(check(attributes_catalog, *within)) == []
    report = check(
        attributes_catalog,
        *within,
        *(point("rl.gen.queue.depth", **{"rl.replica": r}) for r in (2, 3)),
    )
    assert kinds(report) == [("attribute_budget", "rl.gen.queue.depth", 1)]
    (finding,) = report.findings
    assert (finding.line, str(report._where(finding))) == (5, "mem.jsonl:5:1")
    assert "more distinct attribute sets than its budget of 4" in finding.message()


def test_an_open_attribute_over_its_max_cardinality_is_reported(
    attributes_catalog: Catalog,
) -> None:
    engines = [point("rl.gen.batch.duration", **{"rl.engine": e}) for e in ("a", "b", "c", "a")]
    assert kinds(check(attributes_catalog, *engines)) == []
    report = check(
        attributes_catalog, *engines, point("rl.gen.batch.duration", **{"rl.engine": "d"})
    )
    assert kinds(report) == [("attribute_budget", "rl.gen.batch.duration", 1)]
    assert "more than 3 distinct values of rl.engine (its max_cardinality)" in (
        report.findings[0].message()
    )


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ({"step": 1, "series": "x", "value": 1, "metrics": {}}, "not both"),
        ({"step": 1, "series": "", "value": 1}, '"series" must be a non-empty string'),
        ({"step": 1, "series": 3, "value": 1}, '"series" must be a non-empty string'),
        ({"step": 1, "series": "rl.gen.waiting"}, 'needs a "value"'),
        ({"step": 1, "series": "rl.gen.waiting", "value": 1, "attributes": [1]}, '"attributes"'),
        ({"step": 1, "prefix": "", "metrics": {}, "attributes": "x"}, '"attributes" must be'),
    ],
)
def test_a_malformed_point_or_attributes_field_is_reported_and_skipped(
    attributes_catalog: Catalog, line: dict[str, Any], why: str
) -> None:
    report = check(attributes_catalog, line)
    (finding,) = report.findings
    assert finding.kind == "malformed"
    assert why in finding.message()


def test_point_values_are_judged_like_logged_values(attributes_catalog: Catalog) -> None:
    report = check(
        attributes_catalog,
        point("rl.gen.waiting", -1),
        point("rl.gen.queue.depth", "busy"),
        point("rl.gen.batch.duration", float("nan")),
    )
    assert kinds(report) == [
        ("counter_decrease", "rl.gen.waiting", 1),
        ("non_finite", "rl.gen.batch.duration", 1),
        ("non_scalar", "rl.gen.queue.depth", 1),
    ]


# --- the same budget as the runtime -------------------------------------------------------


@settings(max_examples=60)
@given(
    replicas=st.lists(st.one_of(st.none(), st.integers(0, 6)), max_size=30),
    engines=st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=30),
)
def test_live_check_finds_the_budget_overflow_exactly_where_the_runtime_folds(
    attributes_catalog: Catalog, replicas: list[int | None], engines: list[str]
) -> None:
    """Same rows, same points: live-check's first over-budget line is the tee's first overflow."""
    by_name = {row.name: row for _, row in attributes_catalog.rows()}
    module = next(
        text
        for path, text in render_python_modules(attributes_catalog).items()
        if path.endswith("/gen.py")
    )
    namespace: dict[str, Any] = {}
    vocabulary._reset_for_tests()
    try:
        exec(compile(module, "gen.py", "exec"), namespace)
        cases = [
            (
                "rl.gen.queue.depth",
                "GEN_QUEUE_DEPTH",
                [{"rl.replica": r} if r is not None else {} for r in replicas],
            ),
            ("rl.gen.batch.duration", "GEN_BATCH_DURATION", [{"rl.engine": e} for e in engines]),
        ]
        for name, constant, sets in cases:
            runtime_row = namespace[constant]
            assert series_budget(by_name[name], attributes_catalog.attributes()) == series_limit(
                runtime_row
            )
            points = SeriesPoints(runtime_row, {})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                folded = [
                    i + 1
                    for i, attrs in enumerate(sets)
                    if (points.attributes(attrs) or {}).get(OVERFLOW_ATTRIBUTE) == "true"
                ]
            report = check(
                attributes_catalog,
                *(point(name, 1.0, i + 1, **attrs) for i, attrs in enumerate(sets)),
            )
            over = [f.line for f in report.findings if f.kind == "attribute_budget"]
            assert over == folded[:1]
    finally:
        vocabulary._reset_for_tests()


@settings(max_examples=60)
@given(
    points=st.lists(
        st.tuples(
            st.sampled_from(["policy_init", "data_load", "weights_load", "other"]),
            st.sampled_from([None, "train", "validation", "rollout"]),
            st.sampled_from([None, "init", "load", "bogus"]),
        ),
        max_size=25,
    )
)
def test_a_family_with_a_derived_attribute_overflows_where_the_runtime_does(
    attributes_catalog: Catalog, points: list[tuple[str, str | None, str | None]]
) -> None:
    """Captured phase, passed rl.phase and rl.setup.kind (which the derivation replaces)."""
    module = next(
        text
        for path, text in render_python_modules(attributes_catalog).items()
        if path.endswith("/gen.py")
    )
    namespace: dict[str, Any] = {}
    vocabulary._reset_for_tests()
    try:
        exec(compile(module, "gen.py", "exec"), namespace)
        series = SeriesPoints(namespace["SETUP_DURATION"], {})
        folded = []
        docs = []
        for i, (phase, step_phase, kind) in enumerate(points, start=1):
            given = {"rl.phase": step_phase, "rl.setup.kind": kind}
            given = {k: v for k, v in given.items() if v is not None}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                final = series.attributes({"rl.setup.phase": phase, **given}) or {}
            if final.get(OVERFLOW_ATTRIBUTE) == "true":
                folded.append(i)
            doc: dict[str, Any] = {
                "step": i,
                "prefix": "timing/setup",
                "metrics": {f"{phase}_time_s": 1.0},
            }
            if given:
                doc["attributes"] = given
            docs.append(doc)
        report = check(attributes_catalog, *docs)
        assert [f.line for f in report.findings if f.kind == "attribute_budget"] == folded[:1]
    finally:
        vocabulary._reset_for_tests()


def test_set_counting_stops_at_the_budget_whatever_the_log_holds(
    attributes_catalog: Catalog,
) -> None:
    checker = _Checker(attributes_catalog, "mem.jsonl")
    rows = {row.name: row for _, row in attributes_catalog.rows()}
    queue, duration = rows["rl.gen.queue.depth"], rows["rl.gen.batch.duration"]
    for i in range(20_000):
        checker.budgets.check(queue, {"rl.replica": i}, {})
        checker.budgets.check(duration, {"rl.engine": f"e{i}"}, {})
    assert len(checker.budgets.sets["rl.gen.queue.depth"]) == 3  # limit 4 minus the overflow
    assert len(checker.budgets.values[("rl.gen.batch.duration", "rl.engine")]) == 3


def test_undeclared_attributes_are_tracked_up_to_the_cap_then_counted(
    attributes_catalog: Catalog,
) -> None:
    extra = 5
    docs = (point("rl.gen.waiting", 1, **{f"k{i}": 1}) for i in range(MAX_UNDECLARED_KEYS + extra))
    report = check(attributes_catalog, *docs)
    assert len(report.findings) == MAX_UNDECLARED_KEYS
    assert report.untracked == {"undeclared_attribute": extra}
    assert "undeclared_attribute" in report.kinds()
    doc = json.loads(report.to_json())
    assert doc["counts"]["undeclared_attribute"] == MAX_UNDECLARED_KEYS + extra


# --- end to end: a real JsonlLogger, real tee, live-check (file, workers, CLI) -------------


def test_a_real_run_with_attributes_is_judged_as_the_tee_recorded_it(
    attributes_catalog: Catalog, root: Path, tmp_path: Path, runtime: InMemoryMetricReader
) -> None:
    with JsonlLogger(tmp_path / "run.jsonl", loop="") as backend:
        logger = TeeLogger(backend, attributes={"rl.phase": "train"})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for step in range(1, 4):
                logger.log_metrics({"loss": 0.5 / step}, step, prefix="train")
                backend.record_metrics(
                    {"gen_batch_duration": 0.1 * step},
                    {"rl.engine": ("a", "b", "c", "d")[step], "rl.phase": "train", "gpu": 0},
                )
                backend.record_metrics({"gen_queue_depth": step}, {"rl.replica": step})
        backend.log_point("rl.gen.latency", 1.0)
    # The runtime warned of the same two causes live-check finds, once each.
    runtime_warned = sorted(
        str(w.message).split(";")[0] for w in caught if w.category is MetricCatalogWarning
    )
    assert [m[:40] for m in runtime_warned] == [
        "attribute 'gpu' on rl.gen.batch.duration",
        "rl.gen.queue.depth reached its budget of",
    ]
    report = check_file(str(backend.path), attributes_catalog)
    found = {(f.kind, f.qualified_key, f.count) for f in report.findings}
    assert found == {
        ("undeclared_attribute", "rl.gen.batch.duration", 3),  # gpu, every call
        ("attribute_budget", "rl.gen.queue.depth", 1),  # replicas 1, 2 fit; 3 overflows
        ("undeclared_series", "rl.gen.latency", 1),
    }
    # The tee folded the third replica into the overflow point, as live-check said.
    queue = collect(runtime)["rl.gen.queue.depth"]
    assert sorted(
        str(dict(p.attributes).get("rl.replica", dict(p.attributes).get(OVERFLOW_ATTRIBUTE)))
        for p in queue.points
    ) == ["1", "2", "true"]
    assert report.failed(FINDING_KINDS) == [
        "attribute_budget",
        "undeclared_series",
        "undeclared_attribute",
    ]


def test_the_budget_is_judged_per_worker(
    attributes_catalog: Catalog,
    tmp_path: Path,
    runtime: InMemoryMetricReader,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths = []
    for rank, replicas in enumerate(((0, 1), (2, 3), (4, 5, 6))):
        monkeypatch.setenv("RANK", str(rank))
        identity._reset_for_tests()
        with JsonlLogger(tmp_path / "run-{worker}.jsonl") as logger:
            for step, replica in enumerate(replicas, start=1):
                logger.log_point("rl.gen.queue.depth", 1.0, step, {"rl.replica": replica})
        paths.append(str(logger.path))
    identity._reset_for_tests()
    report = check_paths(paths, attributes_catalog)
    # Six replicas over the run, but only rank 2 gave more than two in its own process.
    budget = [(f.kind, str(report._where(f))) for f in report.findings]
    assert budget == [("attribute_budget", f"{paths[2]}[worker rank2]:3:1")]


def test_the_cli_gates_on_attribute_findings_in_text_and_json(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], clean_otel: None
) -> None:
    with JsonlLogger(tmp_path / "run.jsonl") as logger:
        logger.log_point("rl.gen.batch.duration", 0.3, 1, {"rl.phase": "rollout"})
    args = ["live-check", str(logger.path), "--root", str(root)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert f"{logger.path}:1:1: warning[ATTRIBUTE_VALUE]: rl.gen.batch.duration carries " in text
    assert main([*args, "--fail-on", "attribute_value", "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    (finding,) = doc["findings"]
    assert (
        finding["kind"],
        finding["key"],
        finding["attribute"],
        finding["severity"],
        finding["source"],
    ) == ("attribute_value", "rl.gen.batch.duration", "rl.phase", "error", f"{logger.path}:1:1")
    assert doc["failed"] == ["attribute_value"]
