"""Open enumerations: live-check, the generated row the tee runs and routing agree.

An open enum lists the values it knows and takes others too, up to ``max_cardinality``
distinct others per series: a key family captures an unlisted value (no
``attribute_value``), and the budget finding comes exactly where the tee folds.
"""

from __future__ import annotations

import io
import json
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.catalog.precedence import row_captures
from codegen.generate.python import render_python_modules
from codegen.live_check import LiveCheckReport, check_stream
from codegen.live_check.judges.attributes import series_budget
from metric_catalog import vocabulary
from metric_catalog._attributes import SeriesPoints, series_limit
from metric_catalog.vocabulary import OVERFLOW_ATTRIBUTE
from tests.catalog_projects import loaded_catalog

CATALOG = """\
owner: nemo_rl.errors
module: errors
description: Errors of the generation workers.
prefix: train
attributes:
  - name: rl.error.type
    type: string
    description: What went wrong.
    values:
      - {value: timeout, description: A request timed out.}
      - {value: oom, description: Out of memory.}
    open: "true"
    max_cardinality: "2"
  - name: rl.worker
    type: int
    description: Worker index.
    max_cardinality: "1000"
teed:
  - logger_key: errors/{rl.error.type}
    name: rl.gen.errors
    kind: counter
    unit: "{error}"
    description: Errors of the step, by type.
    attributes: [{ref: rl.error.type}]
recorded:
  - name: rl.gen.failures
    kind: counter
    unit: "{error}"
    description: Failed requests, by type and worker.
    attributes: [{ref: rl.error.type}, {ref: rl.worker}]
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return loaded_catalog(tmp_path_factory.mktemp("open"), CATALOG, "errors.yaml")


def check(catalog: Catalog, *docs: dict[str, Any]) -> LiveCheckReport:
    raw = "".join(json.dumps(doc) + "\n" for doc in docs).encode()
    return check_stream(io.BytesIO(raw), catalog, source="mem.jsonl")


def kinds(report: LiveCheckReport) -> list[tuple[str, int]]:
    return sorted((f.kind, f.line) for f in report.findings)


def test_a_key_family_captures_an_unlisted_value_of_an_open_enum(catalog: Catalog) -> None:
    (row,) = [r for _f, r in catalog.rows() if r.name == "rl.gen.errors"]
    assert row_captures(row, catalog.attributes())["rl.error.type"].values is None  # any value
    report = check(catalog, {"step": 1, "prefix": "train", "metrics": {"errors/disk_full": 1}})
    assert kinds(report) == []


def test_a_third_unlisted_value_is_over_the_budget_and_listed_values_are_free(
    catalog: Catalog,
) -> None:
    values = ["timeout", "eof", "oom", "reset", "timeout", "disk_full"]
    docs = [
        {"step": i, "prefix": "train", "metrics": {f"errors/{value}": 1}}
        for i, value in enumerate(values, start=1)
    ]
    report = check(catalog, *docs)
    assert kinds(report) == [("attribute_budget", 6)]
    assert "more than 2 distinct values of rl.error.type" in report.findings[0].message()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    sets=st.lists(
        st.tuples(
            st.sampled_from(["timeout", "oom", "eof", "reset", "disk_full"]),
            st.integers(0, 3),
        ),
        max_size=25,
    )
)
def test_live_check_finds_an_open_enums_overflow_exactly_where_the_runtime_folds(
    catalog: Catalog, sets: list[tuple[str, int]]
) -> None:
    module = next(
        text for path, text in render_python_modules(catalog).items() if path.endswith("errors.py")
    )
    namespace: dict[str, Any] = {}
    vocabulary._reset_for_tests()
    try:
        exec(compile(module, "errors.py", "exec"), namespace)
        runtime_row = namespace["GEN_FAILURES"]
        (row,) = [r for _f, r in catalog.rows() if r.name == "rl.gen.failures"]
        assert series_budget(row, catalog.attributes()) == series_limit(runtime_row)
        points = SeriesPoints(runtime_row, {})
        folded = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, (kind, worker) in enumerate(sets, start=1):
                got = points.attributes({"rl.error.type": kind, "rl.worker": worker}) or {}
                if got.get(OVERFLOW_ATTRIBUTE) == "true":
                    folded.append(i)
        report = check(
            catalog,
            *(
                {
                    "step": i,
                    "series": "rl.gen.failures",
                    "value": 1,
                    "attributes": {"rl.error.type": kind, "rl.worker": worker},
                }
                for i, (kind, worker) in enumerate(sets, start=1)
            ),
        )
        assert [f.line for f in report.findings if f.kind == "attribute_budget"] == folded[:1]
        assert [f for f in report.findings if f.kind == "attribute_value"] == []
    finally:
        vocabulary._reset_for_tests()


def test_the_generated_row_says_the_enum_is_open(catalog: Catalog) -> None:
    module = next(
        text for path, text in render_python_modules(catalog).items() if path.endswith("errors.py")
    )
    assert "open_enum=True," in module
    assert "Values: timeout, oom, and at most 2 others" in module
