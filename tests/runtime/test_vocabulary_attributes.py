"""The attribute interface of the registry: MetricAttribute, key families, owners.

Covers what COMMON.md agreed: new optional row fields after the reference
fields, placeholder validation, the ``owner=`` keyword and the upstream error
phrases with our detail (owners, differing fields).
"""

from __future__ import annotations

from typing import Any

import pytest

from metric_catalog import vocabulary
from metric_catalog.vocabulary import (
    MetricAttribute,
    RecordedMetric,
    TeedMetric,
    freeze_metrics,
    owner_of,
    placeholders,
    register_recorded_metrics,
    register_teed_metrics,
    teed_metrics,
)

pytestmark = pytest.mark.usefixtures("registry")

PHASE = MetricAttribute("rl.setup.phase", values=("policy", "vllm", "total"))
DATASET = MetricAttribute("rl.dataset", max_cardinality=16)


def test_attribute_defaults_follow_the_agreed_interface() -> None:
    """A bare attribute is an open, recommended string attribute with no budget."""
    attribute = MetricAttribute("rl.bucket")
    assert (attribute.type, attribute.values, attribute.max_cardinality) == ("string", (), None)
    assert attribute.requirement == "recommended"


@pytest.mark.parametrize(
    ("attribute", "value", "accepted"),
    [
        (PHASE, "policy", True),
        (PHASE, "critic", False),
        (PHASE, 1, False),
        (DATASET, "anything", True),
        (DATASET, 3, False),
        (MetricAttribute("rank", "int"), 3, True),
        (MetricAttribute("rank", "int"), True, False),
        (MetricAttribute("rank", "int"), 3.0, False),
        (MetricAttribute("ratio", "double"), 3, True),
        (MetricAttribute("ratio", "double"), 0.5, True),
        (MetricAttribute("ratio", "double"), "0.5", False),
        (MetricAttribute("flag", "bool"), False, True),
        (MetricAttribute("flag", "bool"), 0, False),
        (MetricAttribute("window", values=("step", "run")), "run", True),
    ],
)
def test_attribute_accepts_values_of_its_type_and_enum(
    attribute: MetricAttribute, value: object, accepted: bool
) -> None:
    """accepts() checks the type first (bool is not an int) and then the enum."""
    assert attribute.accepts(value) is accepted


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"name": ""}, "dot-separated"),
        ({"name": "rl..phase"}, "dot-separated"),
        ({"name": "rl.{phase}"}, "dot-separated"),
        ({"name": "a", "type": "float"}, "not one of string, int, double, bool"),
        ({"name": "a", "values": ["x"]}, "must be a tuple"),
        ({"name": "a", "type": "int", "values": ("1",)}, "not of the attribute's type"),
        ({"name": "a", "values": ("x", "x")}, "repeat a value"),
        ({"name": "a", "max_cardinality": 0}, "positive int"),
        ({"name": "a", "requirement": "must"}, "not one of required"),
    ],
)
def test_malformed_attributes_are_rejected_with_the_reason(
    kwargs: dict[str, Any], words: str
) -> None:
    """Bad attribute declarations fail at construction, saying what to fix."""
    with pytest.raises(ValueError, match=words):
        MetricAttribute(**kwargs)


def test_new_fields_are_optional_and_follow_the_reference_fields() -> None:
    """Reference-style positional rows still build; the extensions come after, by keyword."""
    row = TeedMetric("reward", "rl.reward.mean", "gauge", "1", "Mean reward.", "train")
    assert (row.attributes, row.other_prefixes, row.cardinality_limit, row.replaced_by) == (
        (),
        (),
        None,
        None,
    )
    recorded = RecordedMetric("rl.vllm.batch.duration", "histogram", "s", "Batch time.")
    assert (recorded.attributes, recorded.cardinality_limit) == ((), None)
    family = TeedMetric(
        "setup/{rl.setup.phase}_time_s",
        "rl.setup.duration",
        unit="s",
        prefix="timing",
        attributes=(PHASE,),
        other_prefixes=("",),
        cardinality_limit=10,
    )
    assert family.prefixes == ("timing", "")
    assert family.is_pattern
    assert not row.is_pattern


def test_placeholders_lists_the_captured_attributes_in_order() -> None:
    """placeholders() names each {attribute} of a template."""
    assert placeholders("setup/{rl.setup.phase}_time_s") == ("rl.setup.phase",)
    assert placeholders("{a}/x/{b}") == ("a", "b")
    assert placeholders("plain/key") == ()


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"logger_key": "setup/{rl.phase}_s"}, "declares no attribute 'rl.phase'"),
        ({"prefix": "validation-{rl.dataset}"}, "declares no attribute 'rl.dataset'"),
        ({"other_prefixes": ("v-{x}",)}, "declares no attribute 'x'"),
        ({"logger_key": "setup/{rl.setup.phase_s"}, "unmatched brace"),
        ({"logger_key": "setup/rl.setup.phase}_s"}, "unmatched brace"),
        ({"logger_key": "{rl.setup.phase}{rl.dataset}"}, "nothing between"),
        (
            {"logger_key": "{rl.setup.phase}", "prefix": "p-{rl.setup.phase}"},
            "captured twice",
        ),
        ({"logger_key": "x/{flag}"}, "only a string or int attribute"),
        ({"other_prefixes": ("train",)}, "repeat a prefix"),
        ({"other_prefixes": ["x"]}, "other_prefixes must be a tuple"),
        ({"replaced_by": "reward"}, "must start with 'rl.'"),
        ({"replaced_by": "rl.k"}, "names the row itself"),
        ({"cardinality_limit": 1}, "at least 2"),
        ({"cardinality_limit": 2.5}, "at least 2"),
        ({"attributes": (PHASE, PHASE)}, "declared twice"),
        ({"attributes": [PHASE]}, "tuple of MetricAttribute"),
        ({"attributes": (MetricAttribute("otel.metric.overflow"),)}, "reserved"),
    ],
)
def test_placeholders_and_new_fields_are_validated(kwargs: dict[str, Any], words: str) -> None:
    """Every {placeholder} names a declared attribute; a bad template is a readable ValueError."""
    fields: dict[str, Any] = {
        "logger_key": "k",
        "name": "rl.k",
        "attributes": (PHASE, MetricAttribute("flag", "bool")),
        **kwargs,
    }
    with pytest.raises(ValueError, match=words):
        TeedMetric(**fields)


def test_a_placeholder_naming_a_declared_attribute_builds() -> None:
    """Placeholders in the key and the prefix bound to declared attributes are accepted."""
    row = TeedMetric(
        "{rl.setup.phase}_time_s",
        "rl.setup.duration",
        prefix="validation-{rl.dataset}",
        attributes=(PHASE, DATASET),
    )
    assert placeholders(row.prefix) == ("rl.dataset",)


def test_a_key_placing_one_placeholder_twice_builds() -> None:
    """``{rl.dataset}/scheduler/{rl.dataset}/latency`` (real code logs it) is a valid row:
    its places must hold the same text when matched (the series rules), not refused here."""
    row = TeedMetric(
        "{rl.dataset}/scheduler/{rl.dataset}/latency",
        "rl.scheduler.latency",
        attributes=(DATASET,),
    )
    assert placeholders(row.logger_key) == ("rl.dataset", "rl.dataset")
    register_teed_metrics([row])
    assert teed_metrics() == (row,)


def test_recorded_rows_validate_their_attributes_too() -> None:
    """A recorded row's attributes and budget are checked like a teed row's."""
    with pytest.raises(ValueError, match="declared twice"):
        RecordedMetric("rl.x", attributes=(PHASE, PHASE))
    with pytest.raises(ValueError, match="at least 2"):
        RecordedMetric("rl.x", cardinality_limit=0)


def test_owner_keyword_is_recorded_and_named_in_clashes() -> None:
    """owner= is kept per row, and a clash names the owner module of both rows."""
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")], owner="pkg.grpo")
    assert owner_of("rl.reward.mean") == "pkg.grpo"
    with pytest.raises(ValueError, match="already teed") as info:
        register_teed_metrics([TeedMetric("reward", "rl.reward.other")], owner="pkg.sft")
    message = str(info.value)
    assert "from pkg.sft" in message
    assert "from pkg.grpo" in message


def test_without_owner_the_calling_module_is_named() -> None:
    """A hand-written registration names the module that called it."""
    register_recorded_metrics([RecordedMetric("rl.x")])
    assert owner_of("rl.x") == __name__


@pytest.mark.parametrize(
    ("first", "second", "differ"),
    [
        (
            TeedMetric("reward", "rl.reward.mean", unit="1"),
            TeedMetric("reward_mean", "rl.reward.mean", unit=""),
            ["logger_key 'reward' vs 'reward_mean'", "unit '1' vs ''"],
        ),
        (
            RecordedMetric("rl.x", "gauge"),
            RecordedMetric("rl.x", "counter", description="Other."),
            ["kind 'gauge' vs 'counter'", "description '' vs 'Other.'"],
        ),
        (
            TeedMetric("x", "rl.x"),
            RecordedMetric("rl.x"),
            ["one is a TeedMetric, the other a RecordedMetric"],
        ),
    ],
    ids=["teed", "recorded", "teed vs recorded"],
)
def test_two_versions_of_one_series_list_the_fields_that_differ(
    first: Any, second: Any, differ: list[str]
) -> None:
    """When two rows share a name but differ, the message says how."""
    for row, owner in ((first, "pkg.a"), (second, "pkg.b")):
        register = (
            register_teed_metrics if isinstance(row, TeedMetric) else register_recorded_metrics
        )
        if row is second:
            with pytest.raises(ValueError, match="already declared") as info:
                register([row], owner=owner)
        else:
            register([row], owner=owner)
    message = str(info.value)
    for words in differ:
        assert words in message
    assert "from pkg.a" in message
    assert "from pkg.b" in message


def test_a_logger_key_clash_between_different_series_lists_no_field_diff() -> None:
    """Two different series on one key: both are named, no 'differ in' noise."""
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")], owner="pkg.a")
    with pytest.raises(ValueError, match="already teed") as info:
        register_teed_metrics([TeedMetric("reward", "rl.reward.other")], owner="pkg.b")
    assert "differ" not in str(info.value)


def test_other_prefixes_claim_their_logger_keys_too() -> None:
    """A row teed under 'train' and '' owns both pairs; another row on either is refused."""
    register_teed_metrics([TeedMetric("loss", "rl.policy.loss", other_prefixes=("",))])
    with pytest.raises(ValueError, match="logger key 'loss', already teed"):
        register_teed_metrics([TeedMetric("loss", "rl.other.loss", prefix="")])
    register_teed_metrics([TeedMetric("loss", "rl.val.loss", prefix="validation")])


def test_a_deprecated_row_and_its_replacement_may_share_a_logger_key() -> None:
    """Only the replaced_by pair may share (prefix, logger_key); both rows are kept."""
    old = TeedMetric("reward", "rl.reward.avg", replaced_by="rl.reward.mean")
    new = TeedMetric("reward", "rl.reward.mean")
    register_teed_metrics([old])
    register_teed_metrics([new])
    assert teed_metrics() == (old, new)
    third = TeedMetric("reward", "rl.reward.third", replaced_by="rl.reward.mean")
    with pytest.raises(ValueError, match="already teed"):
        register_teed_metrics([third])


def test_a_replacement_pair_in_one_batch_registers() -> None:
    """The pair declared in one call (one owner) is accepted too, in either order."""
    new = TeedMetric("reward", "rl.reward.mean")
    old = TeedMetric("reward", "rl.reward.avg", replaced_by="rl.reward.mean")
    register_teed_metrics([new, old])
    assert teed_metrics() == (new, old)


def test_rows_not_paired_by_replaced_by_may_not_share_a_logger_key() -> None:
    """replaced_by naming some third row does not open the key to anyone."""
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])
    with pytest.raises(ValueError, match="already teed"):
        register_teed_metrics([TeedMetric("reward", "rl.reward.avg", replaced_by="rl.reward.x")])


def test_late_registration_names_the_owner_module() -> None:
    """The RuntimeError after freezing carries upstream's phrase and the owner module."""
    freeze_metrics()
    with pytest.raises(RuntimeError, match="after the metric group was registered") as info:
        register_teed_metrics([TeedMetric("late", "rl.late")], owner="pkg.late_owner")
    assert "from pkg.late_owner" in str(info.value)
    assert "import pkg.late_owner at startup" in str(info.value)


@pytest.mark.parametrize("register", [register_teed_metrics, register_recorded_metrics])
def test_an_empty_batch_after_freeze_is_a_no_op(register: Any) -> None:
    """Upstream checks row by row, so an empty batch never raises."""
    freeze_metrics()
    register([])
    register(iter(()))
    assert vocabulary.is_frozen()


def test_owner_must_be_a_module_name() -> None:
    """A non-str owner is a ValueError, not a corrupted owner table."""
    with pytest.raises(ValueError, match="owner must be a module name"):
        register_teed_metrics([TeedMetric("k", "rl.k")], owner=3)  # type: ignore[arg-type]


def test_the_concepts_page_says_exactly_when_registration_raises() -> None:
    """The docs no longer read as 'nothing can raise': they say a late row raises at import."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    concepts = (repo / "docs" / "explanation" / "concepts.md").read_text(encoding="utf-8")
    text = " ".join(concepts.split())
    assert "the tee is a no-op" not in text
    assert "raises `RuntimeError` at that import" in text
    assert "with export on *and* off" in text
    assert "upstream NeMo-RL freezes only while exporting" in text
    assert "import the generated modules of every owner" in text
