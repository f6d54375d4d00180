"""``JsonlLogger`` writes a valid line for anything it is handed and never raises.

Issue 18 items 11 and 12: values whose ``__float__``, ``__index__`` or
``__repr__`` raise become a marker (and one warning); a dict holding itself,
or a structure sharing references 2^30 times, is written in bounded work; keys
that are not strings, NaN, huge ints, bytes, steps and prefixes that are not
what they should be all give a line ``json.loads`` reads back.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metric_catalog import vocabulary
from metric_catalog.loggers import MAX_LINE_VALUES, JsonlLogger, TeeLogger, to_json_value
from metric_catalog.vocabulary import TeedMetric
from tests.hostile.objects import (
    ArmedKey,
    ClassRaises,
    EqRaises,
    FloatRaises,
    IndexRaises,
    ItemRaises,
    ItemsRaises,
    MappingRaises,
    ReprRaises,
    armed_dict,
    hostile_metrics,
    hostile_values,
)
from tests.otel_fixtures import caught_warnings, clean_otel, installed_reader

__all__ = ["clean_otel"]  # fixture used by name


@pytest.fixture
def export_on(clean_otel: None) -> Iterator[None]:
    """A teed row registered and export on (an in-memory reader)."""
    vocabulary.register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])
    with installed_reader():
        yield


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


class _HashableEqRaises(EqRaises):
    """Hashable, so it can be a key; its eq, str and repr raise."""

    def __hash__(self) -> int:
        return 11


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        pytest.param(FloatRaises(1.0), "FloatRaises", id="float-raises"),
        pytest.param(IndexRaises(2), "IndexRaises", id="index-raises"),
        pytest.param(ItemRaises(), "ItemRaises", id="item-tolist-raise"),
        pytest.param(ClassRaises(), "ClassRaises", id="class-lookup-raises"),
        pytest.param(MappingRaises(), "MappingRaises", id="mapping-whose-items-raise"),
    ],
)
def test_a_value_that_cannot_be_written_becomes_a_marker_and_one_warning(
    tmp_path: Path, export_on: None, value: Any, type_name: str
) -> None:
    """Issue 18 item 11: ``TeeLogger(JsonlLogger(...))`` never raises; the line holds a marker."""
    path = tmp_path / "run.jsonl"
    with caught_warnings() as caught, JsonlLogger(path) as inner:
        logger = TeeLogger(inner)
        for step in range(3):
            logger.log_metrics({"bad": value, "reward": 1.0}, step, prefix="train")
    lines = _lines(path)
    assert len(lines) == 3
    for line in lines:
        assert line["metrics"]["reward"] == 1.0
        assert line["metrics"]["bad"]["__type__"] == type_name
        assert line["metrics"]["bad"]["__unserializable__"] == "error"
    assert len([m for m in caught.messages if type_name in m]) == 1, caught.messages


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(float("nan"), "NaN", id="nan"),
        pytest.param(float("inf"), "Infinity", id="inf"),
        pytest.param(b"abc", '{"__type__":"bytes"}', id="bytes"),
        pytest.param(
            10**5000, '{"__type__":"int","__unserializable__":"too large"}', id="huge-int"
        ),
        pytest.param(2**80, str(2**80), id="big-int-within-bounds"),
        pytest.param({"a": [1, (2.5, None)]}, '{"a":[1,[2.5,null]]}', id="nested"),
        pytest.param({1: 2, None: 3}, '{"1":2,"None":3}', id="non-str-keys"),
        pytest.param(ReprRaises(), '{"__type__":"ReprRaises"}', id="no-json-form-repr-raises"),
        pytest.param(ItemsRaises(a=1), '{"a":1}', id="dict-subclass-read-as-a-dict"),
    ],
)
def test_odd_values_have_a_documented_form(value: Any, expected: str) -> None:
    """NaN and infinities as tokens, bytes and huge ints as markers, containers walked."""
    written = json.dumps(to_json_value(value), allow_nan=True, separators=(",", ":"))
    assert written == expected


def test_keys_that_cannot_be_written_become_marker_keys(tmp_path: Path) -> None:
    """A key whose ``__str__``, hash or eq raise is written as a marker key, once warned."""
    metrics = armed_dict(
        [(ArmedKey("loss"), 1.0), (_HashableEqRaises(), 2.0), (("a", 1), 3.0), ("ok", 4.0)]
    )
    path = tmp_path / "run.jsonl"
    with caught_warnings() as caught, JsonlLogger(path) as logger:
        logger.log_metrics(metrics, 1)
    (line,) = _lines(path)
    assert line["metrics"]["ok"] == 4.0
    assert line["metrics"]["('a', 1)"] == 3.0
    assert line["metrics"]["loss"] == 1.0  # its characters, not its raising __str__
    assert line["metrics"]["<unserializable _HashableEqRaises>"] == 2.0
    assert len(caught.messages) == 1, caught.messages


def _finishes(work: Any) -> Any:
    """Run ``work`` in a thread; fail (instead of hanging the suite) if it never returns."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(work()), daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the walk did not end"
    return result[0]


def test_a_dict_holding_itself_twice_is_written_with_cycle_markers(tmp_path: Path) -> None:
    """Issue 18 item 12: ``d["a"] = d["b"] = d`` ends at once; each repeat is a cycle marker."""
    d: dict[str, Any] = {"x": 1.0}
    d["a"] = d["b"] = d
    path = tmp_path / "run.jsonl"
    with caught_warnings() as caught, JsonlLogger(path) as logger:
        _finishes(lambda: logger.log_metrics({"d": d, "l": [d, d]}, 1))
    (line,) = _lines(path)
    cycle = {"__type__": "dict", "__unserializable__": "cycle"}
    assert line["metrics"]["d"] == {"x": 1.0, "a": cycle, "b": cycle}
    assert line["metrics"]["l"][0]["a"] == cycle
    assert len([m for m in caught.messages if "cycle" in m]) == 1


def test_shared_references_are_bounded_by_values_visited(tmp_path: Path) -> None:
    """A DAG of 2^30 paths (no cycle, depth 30) is cut at :data:`MAX_LINE_VALUES` values."""
    shared: Any = 1.0
    for _ in range(30):
        shared = [shared, shared]
    path = tmp_path / "run.jsonl"
    with caught_warnings() as caught, JsonlLogger(path) as logger:
        _finishes(lambda: logger.log_metrics({"dag": shared, "after": 2.0}, 1))
    (line,) = _lines(path)
    assert "after" not in line["metrics"]
    assert line["metrics"]["__truncated__"] == 1
    text = path.read_text(encoding="utf-8")
    assert text.count("1.0") <= MAX_LINE_VALUES
    assert len([m for m in caught.messages if str(MAX_LINE_VALUES) in m]) == 1, caught.messages


@pytest.mark.parametrize(
    ("step", "written"),
    [
        pytest.param(3, 3, id="int"),
        pytest.param(True, 1, id="bool"),
        pytest.param(IndexRaises(4), 4, id="int-subclass-whose-index-raises"),
        pytest.param(5.0, 5, id="integral-float"),
        pytest.param("x", None, id="str"),
        pytest.param(None, None, id="None"),
        pytest.param(FloatRaises(1.5), 1, id="float-whose-float-raises"),
        pytest.param(ReprRaises(), None, id="repr-raises"),
        pytest.param(10**5000, None, id="huge-int"),
    ],
)
def test_a_step_that_is_not_an_int_is_written_as_null_with_one_warning(
    tmp_path: Path, step: Any, written: int | None
) -> None:
    """A step that is no integer is ``null`` on the line (live-check reports it), never a raise."""
    path = tmp_path / "run.jsonl"
    with caught_warnings() as caught, JsonlLogger(path) as logger:
        logger.log_metrics({"a": 1.0}, step)
        logger.log_metrics({"a": 1.0}, step)
    lines = _lines(path)
    assert [line["step"] for line in lines] == [written, written]
    assert len(caught.messages) == (0 if written is not None else 1), caught.messages


@pytest.mark.parametrize(
    ("prefix", "written"),
    [
        pytest.param("train", "train", id="str"),
        pytest.param(["train"], "['train']", id="list"),
        pytest.param(None, "None", id="None"),
        pytest.param(ReprRaises(), "<unserializable ReprRaises>", id="str-raises"),
    ],
)
def test_a_prefix_is_written_as_text(tmp_path: Path, prefix: Any, written: str) -> None:
    """The prefix field is always a string; one whose ``__str__`` raises is a marker string."""
    path = tmp_path / "run.jsonl"
    with caught_warnings(), JsonlLogger(path) as logger:
        logger.log_metrics({"a": 1.0}, 1, prefix)
    assert _lines(path)[0]["prefix"] == written


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    metrics=hostile_metrics,
    step=st.one_of(st.integers(), hostile_values),
    prefix=st.one_of(st.text(max_size=5), hostile_values),
    attributes=st.one_of(st.none(), hostile_values),
)
def test_nothing_nested_and_hostile_makes_the_jsonl_logger_raise(  # noqa: PLR0917 - given
    tmp_path: Path, export_on: None, metrics: Any, step: Any, prefix: Any, attributes: Any
) -> None:
    """Through ``TeeLogger`` or alone, every call writes one line ``json.loads`` reads back."""
    path = tmp_path / "run.jsonl"
    with caught_warnings(), JsonlLogger(path) as inner:
        TeeLogger(inner, attributes=attributes).log_metrics(metrics, step, prefix=prefix)
        inner.log_metrics(metrics, step, prefix, attributes=attributes)
        inner.log_point("rl.reward.mean", metrics, step, attributes)
        inner.record_metrics({"reward_mean": metrics}, attributes, step=step)
        json.dumps(to_json_value(metrics), allow_nan=True)
    lines = _lines(path)
    assert len(lines) == 4
    assert all(isinstance(line["metrics"], dict) for line in lines[:2])
