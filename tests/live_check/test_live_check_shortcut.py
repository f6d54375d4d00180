"""live-check's record loop counts a plain row's quiet value without judging it: the
shortcut (``KeyPlan.quiet``, ``judges.ranges.quiet_interval``) never changes a report.

Every judgement a value can get (range ends, open ends, whole numbers, a share's
guess, a counter's sign, a running total, NaN and infinities) is checked by running
the same log with and without the shortcut.
"""

from __future__ import annotations

import io
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.live_check import check_stream, routing
from codegen.live_check.judges.ranges import quiet_interval
from codegen.live_check.statistics import RowSummary
from tests.catalog_projects import loaded_catalog

CATALOG = """\
owner: myrl.quiet
module: quiet
description: One row per way a value can be judged.
teed:
  - {logger_key: closed, name: rl.q.closed, kind: gauge, unit: "1", description: A share.,
     range: {min: "0", max: "1"}}
  - {logger_key: open, name: rl.q.open, kind: gauge, unit: "1", description: Above zero.,
     range: {above: "0", below: "2"}}
  - {logger_key: whole, name: rl.q.whole, kind: gauge, unit: "{token}", description: Tokens.,
     value_type: int}
  - {logger_key: actor/clip_frac, name: rl.q.clip, kind: gauge, unit: "1",
     description: Clipped share by its name.}
  - {logger_key: samples, name: rl.q.samples, kind: counter, unit: "{sample}",
     description: Samples this step.}
  - {logger_key: total, name: rl.q.total, kind: counter, unit: "{sample}",
     description: Samples so far., temporality: cumulative}
  - {logger_key: drift, name: rl.q.drift, kind: gauge, unit: s, description: Drift., range: {}}
  - {logger_key: step_time, name: rl.q.time, kind: gauge, unit: ms, description: Step time.}
"""

KEYS = ("closed", "open", "whole", "actor/clip_frac", "samples", "total", "drift", "step_time")
EDGES = (0.0, -0.0, 1.0, 2.0, -1.0, 0.5, 1.5, 3.0, 1e308, -1e308, 5e-324, -5e-324)
VALUES = st.one_of(
    st.sampled_from(EDGES),
    st.sampled_from(EDGES).map(lambda v: math.nextafter(v, math.inf)),
    st.sampled_from(EDGES).map(lambda v: math.nextafter(v, -math.inf)),
    st.sampled_from((math.nan, math.inf, -math.inf, 7, True, None, "x")),
    st.floats(allow_nan=True, allow_infinity=True),
)


@pytest.fixture(scope="module")
def quiet_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """:data:`CATALOG`: a row for each judgement a value can get."""
    return loaded_catalog(tmp_path_factory.mktemp("quiet"), CATALOG)


def _report(catalog: Catalog, steps: list[dict[str, object]]) -> str:
    lines = (json.dumps({"step": i, "prefix": "train", "metrics": m}) for i, m in enumerate(steps))
    raw = ("\n".join(lines) + "\n").encode()
    return check_stream(io.BytesIO(raw), catalog, source="mem.jsonl").to_json()


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8), max_size=10))
def test_the_shortcut_never_changes_a_report(
    quiet_catalog: Catalog, steps: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same log checked with and without the shortcut gives the same report."""
    fast = _report(quiet_catalog, steps)
    with monkeypatch.context() as patched:
        patched.setattr(routing, "_with_quiet", lambda plan: plan)
        slow = _report(quiet_catalog, steps)
    assert fast == slow


@pytest.mark.parametrize(
    ("key", "interval"),
    [
        ("closed", (0.0, 1.0)),
        ("open", (5e-324, math.nextafter(2.0, 0.0))),
        ("whole", None),  # whole numbers are judged
        ("actor/clip_frac", (-1.7976931348623157e308, 1.0)),  # a share by its name: <= 1
        ("samples", (0.0, 1.7976931348623157e308)),  # a counter delta is not negative
        ("total", None),  # a running total is tracked
        ("drift", (-1.7976931348623157e308, 1.7976931348623157e308)),  # finite only
        ("step_time", (0.0, 1.7976931348623157e308)),  # a duration's unit implies >= 0
    ],
)
def test_a_rows_quiet_interval_is_what_its_checks_accept(
    quiet_catalog: Catalog, key: str, interval: tuple[float, float] | None
) -> None:
    """Open ends are left out, whole numbers and running totals take no shortcut."""
    row = next(row for _, row in quiet_catalog.rows() if row.logger_key == key)
    assert quiet_interval(RowSummary(row)) == interval


def test_a_shortcut_value_is_counted_like_any_other(quiet_catalog: Catalog) -> None:
    """Quiet values still count, set the last step and value; a loud one is still found."""
    report = json.loads(_report(quiet_catalog, [{"closed": 0.25}, {"closed": 0.75}]))
    row = next(r for r in report["rows"] if r["logger_key"] == "train/closed")
    assert (row["logged"], row["last_step"], row["last_value"]) == (2, 1, 0.75)
    assert report["summary"]["kinds"].get("out_of_range", 0) == 0
    report = json.loads(_report(quiet_catalog, [{"closed": 0.25}, {"closed": 1.5}]))
    assert report["summary"]["kinds"]["out_of_range"] == 1
