"""``describe_summary_writer`` never raises into training code (issue 37 build-item 4), and
names the catalog's owner, not the generated module (issue 40, bugs met on the way).

A tag that is not a string raised ``AttributeError`` from the wrapper where the wrapped
writer took it; a writer without ``add_scalar`` raised ``TypeError``. Each is warned
once and the writer keeps working as it would undescribed. No TensorBoard needed: the
writers are fakes recording what reaches them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from metric_catalog import _warn, vocabulary
from metric_catalog._warn import MetricCatalogWarning
from metric_catalog.tensorboard_setup import describe_summary_writer, row_description
from metric_catalog.vocabulary import TeedMetric

LOSS = TeedMetric("loss", "rl.loss", "gauge", "", "Training loss of the step.", prefix="train")


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    _warn._reset_for_tests()
    vocabulary._reset_for_tests()
    vocabulary.register_teed_metrics((LOSS,), owner="myrl.trainer")
    yield
    vocabulary._reset_for_tests()
    _warn._reset_for_tests()


class Recording:
    """Takes any tag, as TensorBoard's writers do (they str() or hash what they get)."""

    def __init__(self) -> None:
        self.points: list[tuple[object, object, dict[str, Any]]] = []

    def add_scalar(self, tag: object, value: object, *args: Any, **kwargs: Any) -> None:
        self.points.append((tag, value, kwargs))


class _StrWithBadHash(str):
    __hash__ = None  # type: ignore[assignment]


HOSTILE_TAGS = {
    "int": 7,
    "none": None,
    "bytes": b"train/loss",
    "list": ["train", "loss"],
    "tuple": ("train", "loss"),
    "object": object(),
}


@pytest.mark.parametrize("tag", HOSTILE_TAGS.values(), ids=HOSTILE_TAGS.keys())
def test_a_tag_that_is_not_a_string_reaches_the_writer_as_it_would_undescribed(
    tag: object,
) -> None:
    writer = describe_summary_writer(Recording(), layout=False)
    writer.add_scalar(tag, 1.0, 3)
    assert writer.points == [(tag, 1.0, {})]


def test_a_str_subclass_tag_is_described_by_its_characters() -> None:
    writer = describe_summary_writer(Recording(), layout=False)
    writer.add_scalar(_StrWithBadHash("train/loss"), 1.0, 3)
    ((tag, _value, kwargs),) = writer.points
    assert tag == "train/loss"
    assert "summary_description" not in kwargs  # Recording's signature takes no description


class Described(Recording):
    def add_scalar(  # type: ignore[override]
        self, tag: object, value: object, global_step: int | None = None,
        walltime: float | None = None, summary_description: str = "",
    ) -> None:  # fmt: skip
        self.points.append((tag, value, {"summary_description": summary_description}))


def test_a_declared_tag_is_still_described_after_a_hostile_one() -> None:
    writer = describe_summary_writer(Described(), layout=False)
    writer.add_scalar(["not", "a", "tag"], 0.0, 1)
    writer.add_scalar("train/loss", 0.5, 1)
    assert writer.points[1][2]["summary_description"].startswith("Training loss of the step.")


class _NoAddScalar:
    pass


class _RaisingAttribute:
    @property
    def add_scalar(self) -> Any:
        raise RuntimeError("the writer was closed")


class _Frozen:
    """``add_scalar`` cannot be replaced on the instance (slots, no __dict__)."""

    __slots__ = ()

    def add_scalar(self, tag: object, value: object, *args: Any) -> None:
        pass


HOSTILE_WRITERS = {
    "none": None,
    "object": _NoAddScalar(),
    "raising-property": _RaisingAttribute(),
    "frozen": _Frozen(),
}


@pytest.mark.parametrize("writer", HOSTILE_WRITERS.values(), ids=HOSTILE_WRITERS.keys())
def test_a_writer_that_cannot_be_described_is_warned_once_and_returned(writer: object) -> None:
    with pytest.warns(MetricCatalogWarning, match="cannot be described"):
        assert describe_summary_writer(writer) is writer


class _RaisingLayout(Recording):
    def add_custom_scalars(self, layout: object) -> None:
        raise OSError("disk full")


def test_a_layout_the_writer_refuses_is_warned_and_the_writer_still_works() -> None:
    with pytest.warns(MetricCatalogWarning, match="layout was not written"):
        writer = describe_summary_writer(_RaisingLayout())
    writer.add_scalar("train/loss", 0.5, 1)
    assert len(writer.points) == 1


def test_the_owner_shown_is_the_catalogs_not_the_generated_module() -> None:
    """A generated module registers with ``owner=__name__`` and names the catalog's owner."""
    vocabulary._reset_for_tests()
    module = ModuleType("tinyrl.telemetry.generated.train")
    module.__catalog_owner__ = "tinyrl.trainer"  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    try:
        vocabulary.register_teed_metrics((LOSS,), owner=module.__name__)
        text = row_description(LOSS)
    finally:
        del sys.modules[module.__name__]
    assert "Owner: tinyrl.trainer." in text
    assert "generated" not in text


def test_a_hand_registered_owner_is_shown_as_given() -> None:
    assert "Owner: myrl.trainer." in row_description(LOSS)


def test_the_generated_modules_name_their_catalog_owner() -> None:
    from metric_catalog.generated import grpo

    vocabulary._reset_for_tests()  # registered as the import registers it, whenever that was
    vocabulary.register_teed_metrics(grpo.TEED, owner=grpo.__name__)
    assert grpo.__catalog_owner__ == "nemo_rl.algorithms.grpo"
    assert "Owner: nemo_rl.algorithms.grpo." in row_description(grpo.ENTROPY)
