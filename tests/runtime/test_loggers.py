"""TeeLogger (wrap any log_metrics logger) and JsonlLogger (one JSON line per call)."""

from __future__ import annotations

import copy
import json
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog.loggers import JsonlLogger, TeeLogger, to_json_value
from tests.otel_fixtures import caught_warnings, clean_otel, collect, otel_reader

__all__ = ["clean_otel", "otel_reader"]  # fixtures used by name


class RecordingLogger:
    """Mimics nemo_rl.utils.logger.Logger.log_metrics, recording each call."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[dict[str, Any], int, str, dict[str, Any]]] = []
        self.fail = fail

    def log_metrics(
        self,
        metrics: dict[str, Any],
        step: int,
        prefix: str = "",
        step_metric: str | None = None,
        step_finished: bool = False,
    ) -> str:
        self.calls.append(
            (metrics, step, prefix, {"step_metric": step_metric, "step_finished": step_finished})
        )
        if self.fail:
            raise OSError("wandb is down")
        return f"logged {step}"

    def log_hyperparams(self, params: dict[str, Any]) -> str:
        return f"hyperparams {sorted(params)}"


def test_tee_logger_calls_the_wrapped_logger_then_tees(otel_reader: InMemoryMetricReader) -> None:
    inner = RecordingLogger()
    logger = TeeLogger(inner)
    result = logger.log_metrics({"loss": 0.5}, 3, prefix="train", step_finished=True)
    assert result == "logged 3"
    assert inner.calls == [
        ({"loss": 0.5}, 3, "train", {"step_metric": None, "step_finished": True})
    ]
    assert collect(otel_reader)["rl.policy.loss"].value == 0.5


def test_tee_logger_passes_attributes_and_delegates_other_methods(
    otel_reader: InMemoryMetricReader,
) -> None:
    logger = TeeLogger(RecordingLogger(), attributes={"rank": 3})
    logger.log_metrics({"generation": 1.5}, 1, prefix="timing/train")
    assert logger.log_hyperparams({"lr": 1e-5}) == "hyperparams ['lr']"
    (point,) = collect(otel_reader)["rl.generation.duration"].points
    assert (dict(point.attributes), point.sum) == ({"rank": 3}, 1.5)


def test_the_wrapped_loggers_error_propagates_but_the_step_is_still_teed(
    otel_reader: InMemoryMetricReader,
) -> None:
    logger = TeeLogger(RecordingLogger(fail=True))
    with pytest.raises(OSError, match="wandb is down"):
        logger.log_metrics({"loss": 2.0}, 1, prefix="train")
    assert collect(otel_reader)["rl.policy.loss"].value == 2.0


def test_tee_errors_never_reach_the_caller_of_the_logger(
    otel_reader: InMemoryMetricReader,
) -> None:
    logger = TeeLogger(RecordingLogger(), strict=True)
    with caught_warnings() as caught:
        assert logger.log_metrics({"loss": math.nan, "nope": 1, "reward": 4}, 1, "train")
    assert len(caught.messages) == 2
    assert collect(otel_reader)["rl.reward.mean"].value == 4.0


def test_tee_logger_copies_as_a_wrapper_not_as_its_inner_logger() -> None:
    logger = TeeLogger(RecordingLogger(), attributes={"rank": 1})
    clone = copy.deepcopy(logger)
    assert isinstance(clone, TeeLogger)
    assert isinstance(clone.inner, RecordingLogger)
    assert clone.inner is not logger.inner
    assert clone.attributes == {"rank": 1}


def test_tee_logger_rejects_objects_without_log_metrics() -> None:
    with pytest.raises(TypeError, match="log_metrics"):
        TeeLogger(object())


@pytest.mark.parametrize(
    ("value", "expected_json"),
    [
        (0.5, "0.5"),
        (3, "3"),
        (10**20, "100000000000000000000"),
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (True, "true"),
        ("text", '"text"'),
        (None, "null"),
        (np.float32(0.25), "0.25"),
        (np.int64(7), "7.0"),
        (np.array(1.5), "1.5"),
        (np.bool_(False), "false"),
        (np.array([1, 2]), "[1,2]"),
        (np.array([[0.5], [math.nan]]), "[[0.5],[NaN]]"),
        ([1, np.float32(2.0), "a"], '[1,2.0,"a"]'),
        ({"inner": np.float64(1.0)}, '{"inner":1.0}'),
        (1 + 2j, '{"__type__":"complex"}'),
        (object(), '{"__type__":"object"}'),
    ],
    ids=repr,
)
def test_values_are_encoded_as_documented(value: Any, expected_json: str) -> None:
    assert json.dumps(to_json_value(value), separators=(",", ":")) == expected_json


class _TensorStandIn:
    def __init__(self, value: Any, shape: tuple[int, ...] = ()) -> None:
        self.value, self.shape = value, shape

    def item(self) -> Any:
        return self.value

    def tolist(self) -> Any:
        return self.value if self.shape == () else [self.value] * self.shape[0]


@pytest.mark.parametrize(
    ("tensor", "expected"),
    [(_TensorStandIn(2), 2.0), (_TensorStandIn(0.5, (2,)), [0.5, 0.5])],
)
def test_tensor_like_values_become_numbers_or_lists(tensor: Any, expected: Any) -> None:
    assert to_json_value(tensor) == expected


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_jsonl_round_trip_one_line_per_call(tmp_path: Path) -> None:
    path = tmp_path / "run" / "metrics.jsonl"
    with JsonlLogger(path) as logger:
        logger.log_metrics({"loss": 0.5, "reward": math.nan}, 1, prefix="train")
        logger.log_metrics(
            {"generation": np.float32(2.0)},
            np.int64(1),  # type: ignore[arg-type]  # numpy steps happen
            prefix="timing/train",
        )
        logger.log_metrics({"efficiency/total_s": 3}, 2)
        # Each line is on disk before the next call: the run may crash at any step.
        assert len(path.read_text(encoding="utf-8").splitlines()) == 3
    lines = _lines(path)
    assert lines[0]["step"] == 1
    assert lines[0]["prefix"] == "train"
    assert lines[0]["metrics"]["loss"] == 0.5
    assert math.isnan(lines[0]["metrics"]["reward"])
    assert lines[1] == {"step": 1, "prefix": "timing/train", "metrics": {"generation": 2.0}}
    assert lines[2] == {"step": 2, "prefix": "", "metrics": {"efficiency/total_s": 3}}
    assert "NaN" in path.read_text(encoding="utf-8").splitlines()[0]


def test_jsonl_truncates_unless_appending_and_refuses_writes_when_closed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.jsonl"
    for append in (False, False, True):
        with JsonlLogger(path, append=append) as logger:
            logger.log_metrics({"x": 1}, 0)
    assert len(_lines(path)) == 2
    logger.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        logger.log_metrics({"x": 1}, 1)


def test_jsonl_is_thread_safe(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with JsonlLogger(path) as logger:

        def worker(rank: int) -> None:
            for step in range(100):
                logger.log_metrics({"rank": rank, "pad": "x" * 500}, step, prefix="train")

        threads = [threading.Thread(target=worker, args=(r,)) for r in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    lines = _lines(path)
    assert len(lines) == 800
    assert sorted((line["metrics"]["rank"], line["step"]) for line in lines) == [
        (r, s) for r in range(8) for s in range(100)
    ]


def test_tee_logger_over_jsonl_writes_and_tees_every_step(
    otel_reader: InMemoryMetricReader, tmp_path: Path
) -> None:
    path = tmp_path / "m.jsonl"
    with JsonlLogger(path) as backend:
        logger = TeeLogger(backend)
        for step in range(3):
            logger.log_metrics({"loss": 1.0 + step, "global_valid_toks": 10}, step, "train")
    assert [line["metrics"]["loss"] for line in _lines(path)] == [1.0, 2.0, 3.0]
    series = collect(otel_reader)
    assert series["rl.policy.loss"].value == 3.0
    assert series["rl.train.valid_tokens"].value == 30.0


scalars = st.one_of(
    st.floats(allow_nan=False),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.booleans(),
    st.text(max_size=5),
    st.none(),
)


@given(
    metrics=st.dictionaries(st.text(max_size=8), scalars, max_size=6),
    step=st.integers(min_value=0, max_value=10**9),
    prefix=st.sampled_from(["", "train", "timing/train"]),
)
def test_jsonl_round_trips_plain_values_exactly(
    tmp_path_factory: pytest.TempPathFactory, metrics: dict[str, Any], step: int, prefix: str
) -> None:
    path = tmp_path_factory.mktemp("rt") / "m.jsonl"
    with JsonlLogger(path) as logger:
        logger.log_metrics(metrics, step, prefix=prefix)
    assert _lines(path) == [{"step": step, "prefix": prefix, "metrics": metrics}]
