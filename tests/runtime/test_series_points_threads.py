"""The cardinality budget of a series holds exactly when threads add attribute sets at once."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metric_catalog import _warn
from metric_catalog._attributes import SeriesPoints, series_limit
from metric_catalog.vocabulary import OVERFLOW_ATTRIBUTE, MetricAttribute, RecordedMetric
from tests.otel_fixtures import caught_warnings

THREADS = 16
OVERFLOW = {OVERFLOW_ATTRIBUTE: "true"}
ID = MetricAttribute("id", "int")


@pytest.fixture(autouse=True)
def busy_switching() -> Iterator[None]:
    """Switch threads as often as the interpreter allows, so a race window is hit."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    _warn._reset_for_tests()
    yield
    sys.setswitchinterval(before)
    _warn._reset_for_tests()


def _race(
    points: SeriesPoints, attrs_of: Callable[[int, int], dict[str, Any]], per_thread: int
) -> list[dict[str, Any] | None]:
    """``THREADS`` threads released at once, each asking for ``per_thread`` distinct sets."""
    barrier = threading.Barrier(THREADS)
    results: list[list[dict[str, Any] | None]] = [[] for _ in range(THREADS)]

    def work(thread: int) -> None:
        barrier.wait()
        for i in range(per_thread):
            results[thread].append(points.attributes(attrs_of(thread, i)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    return [result for per in results for result in per]


@pytest.mark.parametrize("limit", [3, 5, 17])
def test_racing_threads_admit_exactly_the_budget_and_overflow_the_rest(limit: int) -> None:
    """16 threads adding distinct sets at once: exactly ``limit - 2`` sets get a point.

    The budget counts the attribute-less point and the overflow point, so a
    series of budget ``limit`` admits ``limit - 2`` attribute sets; every other
    call lands on the one overflow point. Repeated, since a lost race needs luck.
    """
    row = RecordedMetric("rl.race", attributes=(ID,), cardinality_limit=limit)
    for _ in range(60):
        points = SeriesPoints(row, {})
        with caught_warnings():
            got = _race(points, lambda t, i: {"id": t * 1000 + i}, per_thread=4)
        admitted = [r for r in got if r != OVERFLOW]
        assert len(admitted) == limit - 2
        assert len(got) - len(admitted) == THREADS * 4 - (limit - 2)
        assert points.attribute_sets == limit - 1  # the admitted sets + the attribute-less one


def test_racing_threads_keep_an_open_attribute_within_its_max_cardinality() -> None:
    """New values of a budgeted open attribute from many threads: at most its budget admitted."""
    engine = MetricAttribute("engine", max_cardinality=3)
    row = RecordedMetric("rl.engines", attributes=(engine,))
    for _ in range(60):
        points = SeriesPoints(row, {})
        with caught_warnings():
            got = _race(points, lambda t, i: {"engine": f"e{t}-{i}"}, per_thread=2)
        admitted = {r["engine"] for r in got if r is not None and r != OVERFLOW}
        assert len(admitted) == 3
        assert sum(r == OVERFLOW for r in got) == THREADS * 2 - 3


def test_racing_threads_asking_for_one_set_all_get_the_same_dict() -> None:
    """The double check under the lock: a set admitted by one thread is reused by the others."""
    row = RecordedMetric("rl.same", attributes=(ID,), cardinality_limit=3)
    for _ in range(30):
        points = SeriesPoints(row, {})
        got = _race(points, lambda t, i: {"id": 7}, per_thread=3)
        assert all(r is got[0] for r in got)
        assert got[0] == {"id": 7}
        assert points.attribute_sets == 2


@given(
    limit=st.integers(min_value=2, max_value=12),
    calls=st.lists(st.integers(min_value=0, max_value=20), max_size=60),
)
def test_admitted_sets_never_exceed_the_budget_and_overflow_takes_the_rest(
    limit: int, calls: list[int]
) -> None:
    """Any call sequence: the first ``limit - 2`` distinct sets keep their own point, in order,
    a repeated admitted set gets its point again, every other set gets the overflow point."""
    row = RecordedMetric("rl.prop", attributes=(ID,), cardinality_limit=limit)
    points = SeriesPoints(row, {})
    admitted: list[int] = []
    with caught_warnings():
        for value in calls:
            got = points.attributes({"id": value})
            if value in admitted or len(admitted) < limit - 2:
                if value not in admitted:
                    admitted.append(value)
                assert got == {"id": value}
            else:
                assert got == OVERFLOW
            assert points.attribute_sets <= limit - 1
    assert points.attribute_sets == len(admitted) + 1
    assert series_limit(row) == limit
