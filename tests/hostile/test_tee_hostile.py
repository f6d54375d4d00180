"""The tee and ``record_metrics`` never raise into training, whatever a caller hands them.

Issue 18 items 9 and 10, and the registry/tee cases past them: values, keys,
prefixes, attributes and metrics arguments whose dunders raise (even the
exception they raise cannot be printed), non-dict arguments, a dict another
thread mutates during the tee, and a property test over nested hostile objects.
Export is on throughout (an in-memory reader), since that is where the
failures hid.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from metric_catalog import _warn, vocabulary
from metric_catalog._warn import FAMILY_LIMIT
from metric_catalog.loggers import TeeLogger
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.vocabulary import MetricAttribute, RecordedMetric, TeedMetric, as_scalar
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
from tests.otel_fixtures import caught_warnings, clean_otel, collect, installed_reader

__all__ = ["clean_otel"]  # fixture used by name

PHASE = MetricAttribute("rl.setup.phase", values=("policy", "vllm"))
DATASET = MetricAttribute("rl.dataset")
RANK = MetricAttribute("rank", "int")
ROWS = (
    TeedMetric("loss", "rl.policy.loss", attributes=(RANK,)),
    TeedMetric("reward", "rl.reward.mean"),
    TeedMetric("tokens", "rl.train.tokens", "counter"),
    TeedMetric("setup/{rl.setup.phase}_time_s", "rl.setup.duration", unit="s", attributes=(PHASE,)),
    TeedMetric(
        "accuracy", "rl.val.accuracy", prefix="validation-{rl.dataset}", attributes=(DATASET,)
    ),
)
RECORDED = (RecordedMetric("rl.queue.depth"), RecordedMetric("rl.batch.size", "counter"))

UNFIT_VALUES = [
    pytest.param(FloatRaises(1.0), id="float-whose-float-and-repr-raise"),
    pytest.param(IndexRaises(3), id="int-whose-index-float-and-repr-raise"),
    pytest.param(ItemRaises(), id="tensor-whose-item-raises"),
    pytest.param(ClassRaises(), id="object-whose-class-lookup-raises"),
    pytest.param(EqRaises(), id="object-whose-hash-eq-str-raise"),
    pytest.param(ReprRaises(), id="object-whose-repr-raises"),
]


@pytest.fixture
def reader(clean_otel: None) -> Iterator[InMemoryMetricReader]:
    """The rows above registered; a provider with an in-memory reader installed (export on)."""
    vocabulary.register_teed_metrics(ROWS)
    vocabulary.register_recorded_metrics(RECORDED)
    with installed_reader() as memory:
        yield memory


def _value(reader: InMemoryMetricReader, name: str) -> float | None:
    series = collect(reader).get(name)
    return None if series is None else series.value


@pytest.mark.parametrize("value", UNFIT_VALUES)
def test_as_scalar_turns_any_failing_conversion_into_none(value: Any) -> None:
    """Whatever a value's conversion raises, even unprintably, it is "not a scalar"."""
    assert as_scalar(value) is None


@pytest.mark.parametrize("value", UNFIT_VALUES)
@pytest.mark.parametrize("key", ["loss", "setup/policy_time_s"])
def test_a_value_whose_conversion_raises_unprintably_is_skipped_with_one_warning(
    reader: InMemoryMetricReader, value: Any, key: str
) -> None:
    """Issue 18 item 9: the warning names the type; the other keys of the call are teed."""
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({key: value, "reward": 2.0}, "train")
    assert _value(reader, "rl.reward.mean") == 2.0
    assert "rl.policy.loss" not in collect(reader)
    named = [m for m in caught.messages if type(value).__qualname__ in m]
    assert len(named) == 1, caught.messages


@pytest.mark.parametrize("value", UNFIT_VALUES)
def test_record_metrics_skips_a_value_whose_conversion_raises_unprintably(
    reader: InMemoryMetricReader, value: Any
) -> None:
    """Issue 18 item 9 for ``record_metrics``: one warning naming the type, the rest recorded."""
    with caught_warnings() as caught:
        for _ in range(3):
            record_metrics({"queue_depth": value, "batch_size": 4})
    assert _value(reader, "rl.batch.size") == 12.0
    named = [m for m in caught.messages if type(value).__qualname__ in m]
    assert len(named) == 1, caught.messages


def test_an_error_that_cannot_be_printed_while_recording_is_contained(
    reader: InMemoryMetricReader,
) -> None:
    """Recording raising an exception whose ``__str__`` raises costs one warning, not the step."""
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({"reward": 1.0}, "train", attributes=MappingRaises())
            record_metrics({"queue_depth": 1.0}, MappingRaises())
    assert len(caught.messages) == 2, caught.messages
    assert all("Unprintable" in m for m in caught.messages)


class _Hashable(EqRaises):
    """Hashable (so it can be a key) but its eq and str raise."""

    def __hash__(self) -> int:
        return 7


class _Custom:
    def __str__(self) -> str:
        return "train"


class _SubStr(str):
    pass


@pytest.mark.parametrize(
    "prefix",
    [
        pytest.param(["train"], id="list"),
        pytest.param({"train": 1}, id="dict"),
        pytest.param(None, id="None"),
        pytest.param(3, id="int"),
        pytest.param(b"train", id="bytes"),
        pytest.param(EqRaises(), id="hash-eq-str-raise"),
        pytest.param(ReprRaises(), id="repr-raises"),
        pytest.param(ClassRaises(), id="class-lookup-raises"),
        pytest.param(_Custom(), id="str-able-object"),
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_a_prefix_that_is_not_a_string_is_dropped_with_one_warning(
    reader: InMemoryMetricReader, prefix: Any, strict: bool
) -> None:
    """Issue 18 item 10: no exception with export on; one warning per cause; nothing recorded."""
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics({"reward": 1.0}, prefix, strict=strict)
    assert collect(reader) == {}
    about_prefix = [m for m in caught.messages if "prefix" in m]
    assert len(about_prefix) == 1, caught.messages
    assert type(prefix).__qualname__ in about_prefix[0]


def test_a_str_subclass_prefix_is_teed_as_its_text(reader: InMemoryMetricReader) -> None:
    """A ``str`` subclass (an enum member, say) is the prefix its text spells."""
    armed = ArmedKey("train")
    armed.armed = True  # its own hash, eq and str raise: only its characters are used
    with caught_warnings() as caught:
        tee_metrics({"reward": 1.0}, _SubStr("train"))
        tee_metrics({"reward": 2.0}, armed)
    assert _value(reader, "rl.reward.mean") == 2.0
    assert caught.messages == []


def test_bad_prefix_warnings_stay_bounded(reader: InMemoryMetricReader) -> None:
    """Many distinct bad prefix types never make more than one family's worth of warnings."""
    kinds = [type(f"Prefix{i}", (), {}) for i in range(FAMILY_LIMIT + 50)]
    with caught_warnings() as caught:
        for kind in kinds:
            tee_metrics({"reward": 1.0}, kind())
    assert len(caught.messages) <= FAMILY_LIMIT + 1


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("prefix", ["train", "validation-gsm8k"])
def test_keys_whose_hash_and_eq_raise_cost_only_themselves(
    reader: InMemoryMetricReader, strict: bool, prefix: str
) -> None:
    """A key that raises from ``__hash__``/``__eq__``/``__str__`` is skipped; the rest is teed."""
    metrics = armed_dict(
        [
            (ArmedKey("loss"), 5.0),
            (ArmedKey("setup/vllm_time_s"), 5.0),
            ("reward", 1.0),
            ("accuracy", 0.5),
            ("setup/policy_time_s", 3.0),
            (_Hashable(), 1.0),
        ]
    )
    with caught_warnings() as caught:
        tee_metrics(metrics, prefix, strict=strict)
    if prefix == "train":
        assert _value(reader, "rl.reward.mean") == 1.0
        assert _value(reader, "rl.policy.loss") == 5.0  # a str subclass counts by its characters
        assert len(collect(reader)["rl.setup.duration"].points) == 2
    else:
        assert _value(reader, "rl.val.accuracy") == 0.5
    assert not [m for m in caught.messages if "failed" in m], caught.messages


@pytest.mark.parametrize(
    "metrics",
    [
        pytest.param([("reward", 1.0)], id="list"),
        pytest.param(None, id="None"),
        pytest.param(5, id="int"),
        pytest.param("reward", id="str"),
        pytest.param(MappingRaises(), id="mapping-whose-methods-raise"),
        pytest.param(ClassRaises(), id="class-lookup-raises"),
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_a_metrics_argument_that_is_not_a_dict_is_one_warning(
    reader: InMemoryMetricReader, metrics: Any, strict: bool
) -> None:
    """A list, ``None`` or a mapping whose methods raise: one warning per cause, no exception."""
    with caught_warnings() as caught:
        for _ in range(3):
            tee_metrics(metrics, "train", strict=strict)
            record_metrics(metrics)
    assert len(caught.messages) == 2, caught.messages  # one for the tee, one for record_metrics


@pytest.mark.parametrize(
    "attributes",
    [
        pytest.param({"rank": ReprRaises()}, id="value-repr-raises"),
        pytest.param({"rank": FloatRaises(1.0)}, id="value-float-raises"),
        pytest.param(armed_dict([(ArmedKey("rank"), 1)]), id="key-hash-raises"),
        pytest.param({_Hashable(): 1}, id="key-eq-str-raise"),
        pytest.param(ItemsRaises(rank=1), id="mapping-whose-items-raise"),
        pytest.param(["rank"], id="list"),
    ],
)
def test_hostile_attributes_never_raise(reader: InMemoryMetricReader, attributes: Any) -> None:
    """Attributes whose keys or values raise when looked at never raise into the caller."""
    with caught_warnings():
        tee_metrics({"loss": 1.0, "reward": 2.0}, "train", attributes=attributes)
        record_metrics({"queue_depth": 1.0}, attributes)


def test_a_step_that_is_not_an_int_does_not_stop_the_tee(reader: InMemoryMetricReader) -> None:
    """``TeeLogger`` hands any step to its logger and tees regardless."""
    seen: list[Any] = []

    class Inner:
        def log_metrics(self, metrics: Any, step: Any, prefix: str = "") -> None:
            seen.append(step)

    logger = TeeLogger(Inner())
    for step in ("x", None, FloatRaises(1.0), IndexRaises(2), ReprRaises()):
        logger.log_metrics({"reward": 1.0}, step, prefix="train")
    assert len(seen) == 5
    assert _value(reader, "rl.reward.mean") == 1.0


def test_a_dict_mutated_by_another_thread_during_the_tee_is_teed_without_failure(
    reader: InMemoryMetricReader,
) -> None:
    """The tee reads a snapshot: a concurrent writer never makes it fail."""
    metrics: dict[str, Any] = {f"setup/{i}": 1.0 for i in range(200)}
    metrics["reward"] = 1.0
    stop = threading.Event()

    def mutate() -> None:
        i = 0
        while not stop.is_set():
            metrics[f"extra{i % 50}"] = 1.0
            metrics.pop(f"extra{(i + 25) % 50}", None)
            i += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    writer = threading.Thread(target=mutate)
    writer.start()
    try:
        with caught_warnings() as caught:
            for _ in range(300):
                tee_metrics(metrics, "train", strict=True)
    finally:
        stop.set()
        writer.join()
        sys.setswitchinterval(interval)
    assert not [m for m in caught.messages if "failed" in m], caught.messages


def test_a_huge_dict_is_teed_with_bounded_warnings(reader: InMemoryMetricReader) -> None:
    """100,000 undeclared keys under strict mode: the declared one lands, warnings stay bounded."""
    metrics: dict[Any, Any] = {f"k{i}": float(i) for i in range(100_000)}
    metrics["reward"] = 1.0
    with caught_warnings() as caught:
        tee_metrics(metrics, "train", strict=True)
    assert _value(reader, "rl.reward.mean") == 1.0
    assert len(caught.messages) <= FAMILY_LIMIT + 1


_PREFIXES = st.one_of(
    st.sampled_from(["train", "", "validation-x", "timing/train"]),
    st.builds(list, st.lists(st.text(max_size=3), max_size=2)),
    st.none(),
    st.builds(EqRaises),
    st.builds(ReprRaises),
    st.builds(ClassRaises),
    hostile_values,
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(metrics=hostile_metrics, prefix=_PREFIXES, attributes=st.one_of(st.none(), hostile_values))
def test_nothing_nested_and_hostile_makes_the_tee_raise(
    reader: InMemoryMetricReader, metrics: Any, prefix: Any, attributes: Any
) -> None:
    """For arbitrary nested hostile objects the tee calls never raise; the logger gets the call."""
    calls: list[Any] = []

    class Inner:
        def log_metrics(self, metrics: Any, step: Any, prefix: str = "") -> None:
            calls.append(metrics)

    with caught_warnings():
        tee_metrics(metrics, prefix, attributes=attributes, strict=True)
        tee_metrics(metrics, prefix)
        record_metrics(metrics, attributes)
        record_metrics({"queue_depth": metrics, "batch_size": attributes})
        TeeLogger(Inner(), attributes=attributes, strict=True).log_metrics(
            metrics, prefix, prefix=prefix
        )
    assert len(calls) == 1
    assert calls[0] is metrics


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(ReprRaises(), id="repr-raises"),
        pytest.param(ClassRaises(), id="class-lookup-raises"),
        pytest.param(FloatRaises(1.0), id="float-raises"),
        pytest.param(IndexRaises(1), id="index-raises"),
        pytest.param(10**5000, id="huge-int"),
        pytest.param([ReprRaises()], id="list-of-repr-raises"),
        pytest.param(list(range(10_000)), id="long-list"),
        pytest.param("x" * 10_000, id="long-str"),
        pytest.param(ArmedKey("k"), id="str-whose-hash-raises"),
    ],
)
def test_the_warning_helpers_never_raise_and_stay_short(value: Any) -> None:
    """``safe_repr``, ``describe_error`` and ``warn_once`` are total over untrusted objects."""
    if type(value) is ArmedKey:
        value.armed = True
    shown = _warn.safe_repr(value)
    assert type(shown) is str
    assert len(shown) <= _warn.REPR_LIMIT
    error = Exception(value)
    assert type(_warn.describe_error(error)) is str
    with caught_warnings():
        _warn.warn_once(("hostile", value), f"cause {shown}")
