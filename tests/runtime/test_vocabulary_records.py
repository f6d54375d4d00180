"""The vocabulary's rows are stdlib ``@dataclass(frozen=True, slots=True)`` classes.

These tests compare each class with a fresh dataclass of the same fields:
constructor signature, repr, equality, hashing, freezing, pickling, the
``dataclasses`` helpers and ``__replace__`` (with the row's checks rerun) must
not tell them apart.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import re
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metric_catalog import vocabulary
from metric_catalog.vocabulary import MetricAttribute, RecordedMetric, TeedMetric

PHASE = MetricAttribute("rl.setup.phase", values=("a", "b"), requirement="required")

ROWS: list[Any] = [
    TeedMetric("reward", "rl.reward.mean", "gauge", "1", "Mean reward."),
    TeedMetric(
        "setup/{rl.setup.phase}_time_s",
        "rl.setup.duration",
        unit="s",
        prefix="timing",
        attributes=(PHASE,),
        other_prefixes=("",),
        cardinality_limit=10,
    ),
    RecordedMetric("rl.vllm.batch.duration", "histogram", "s", "Batch time."),
    PHASE,
]


def _twin(cls: type) -> type:
    """A real ``@dataclass(frozen=True, slots=True)`` with ``cls``'s fields and defaults."""
    fields = dataclasses.fields(cls)
    body: dict[str, Any] = {"__annotations__": {f.name: f.type for f in fields}}
    body.update({f.name: f.default for f in fields if f.default is not dataclasses.MISSING})
    twin: type = dataclasses.dataclass(frozen=True, slots=True)(type(cls.__name__, (), body))
    twin.__qualname__ = cls.__qualname__
    return twin


@pytest.mark.parametrize("cls", [TeedMetric, RecordedMetric, MetricAttribute])
def test_constructor_signature_is_the_dataclass_signature(cls: type) -> None:
    """Parameter names, order, defaults and annotations are those dataclass would generate."""
    assert str(inspect.signature(cls)) == str(inspect.signature(_twin(cls)))
    assert cls.__match_args__ == _twin(cls).__match_args__  # type: ignore[attr-defined]
    assert cls.__slots__ == cls.__match_args__  # type: ignore[attr-defined]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: type(r).__name__)
def test_repr_eq_and_hash_match_a_real_dataclass(row: Any) -> None:
    """repr, == and hash are those of the same values in a real frozen dataclass."""
    values = [getattr(row, name) for name in row.__match_args__]
    twin = _twin(type(row))(*values)
    assert repr(row) == repr(twin)
    assert hash(row) == hash(twin)
    same = type(row)(*values)
    assert same == row
    assert hash(same) == hash(row)
    assert row != twin  # a different class never compares equal, as with dataclass
    assert row.__eq__(object()) is NotImplemented


@pytest.mark.parametrize("row", ROWS, ids=lambda r: type(r).__name__)
def test_rows_cannot_be_changed_or_given_new_attributes(row: Any) -> None:
    """Assigning or deleting a field raises FrozenInstanceError; there is no __dict__."""
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'name'"):
        row.name = "rl.other"
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'name'"):
        del row.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.not_a_field = 1
    assert not hasattr(row, "__dict__")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: type(r).__name__)
def test_rows_pickle_and_copy_to_equal_rows(row: Any) -> None:
    """Rows survive pickling (Ray ships them to workers) and copying, every protocol."""
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(row, protocol)) == row
    assert copy.copy(row) == row
    assert copy.deepcopy(row) == row
    assert row.__getstate__() == [getattr(row, name) for name in row.__match_args__]


def _asdict_value(value: object) -> object:
    if isinstance(value, tuple):
        return tuple(_asdict_value(item) for item in value)
    if isinstance(value, MetricAttribute):
        return {name: _asdict_value(getattr(value, name)) for name in value.__match_args__}
    return value


@pytest.mark.parametrize("row", ROWS, ids=lambda r: type(r).__name__)
def test_dataclasses_helpers_see_a_dataclass(row: Any) -> None:
    """fields, replace, asdict and is_dataclass work as on a real dataclass."""
    assert dataclasses.is_dataclass(type(row))
    assert dataclasses.is_dataclass(row)
    names = [f.name for f in dataclasses.fields(row)]
    assert names == list(row.__match_args__)
    assert dataclasses.asdict(row) == {
        name: _asdict_value(getattr(row, name)) for name in row.__match_args__
    }
    assert dataclasses.astuple(row)[0] == getattr(row, row.__match_args__[0])
    assert type(row).__dataclass_params__.frozen  # type: ignore[attr-defined]
    if isinstance(row, MetricAttribute):
        changed = dataclasses.replace(row, requirement="opt_in")
        assert changed.requirement == "opt_in"
    else:
        changed = dataclasses.replace(row, description="Changed.")
        assert changed.description == "Changed."
    assert type(changed) is type(row)
    bad: dict[str, str] = (
        {"type": "complex"} if isinstance(row, MetricAttribute) else {"kind": "summary"}
    )
    with pytest.raises(ValueError, match="is not one of"):
        dataclasses.replace(row, **bad)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: type(r).__name__)
def test_replace_copies_with_changes_and_checks_them(row: Any) -> None:
    """__replace__ (copy.replace on 3.13+) is dataclasses.replace: changed copy, checks rerun."""
    field = "requirement" if isinstance(row, MetricAttribute) else "description"
    value = "opt_in" if isinstance(row, MetricAttribute) else "Changed."
    changed = row.__replace__(**{field: value})
    assert changed == dataclasses.replace(row, **{field: value})
    assert getattr(changed, field) == value
    if sys.version_info >= (3, 13):
        assert copy.replace(row, **{field: value}) == changed  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="is not one of"):
        row.__replace__(**({"type": "complex"} if field == "requirement" else {"kind": "x"}))


def test_importing_vocabulary_imports_only_the_standard_library() -> None:
    """The vocabulary (and a registered row) pulls in no third-party or codegen module."""
    code = (
        "import sys; before = set(sys.modules); import metric_catalog.vocabulary as v; "
        "v.register_teed_metrics([v.TeedMetric('k', 'rl.k')]); "
        "new = {m.partition('.')[0] for m in set(sys.modules) - before}; "
        "print(' '.join(sorted(m for m in new if m not in sys.stdlib_module_names)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["metric_catalog"]


_ATTRIBUTE_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*")


@pytest.mark.parametrize(
    "name",
    [
        "rl.setup.phase",
        "a",
        "a.b_c.9",
        "A_.x",
        "",
        ".a",
        "a.",
        "a..b",
        "9a",
        "_a",
        "a-b",
        "é",
        "a.é",
        "a b",
        "a\n",
        "rl.setup.phase\n",
        "a._",
        "a.__",
    ],
)
def test_attribute_name_check_matches_the_regex(name: str) -> None:
    """The regex-free attribute name check accepts exactly what the pattern fullmatches."""
    assert vocabulary._is_attribute_name(name) == bool(_ATTRIBUTE_NAME_RE.fullmatch(name))


@given(st.text(alphabet=st.sampled_from("aZ09_.-é \n"), max_size=12))
def test_attribute_name_check_matches_the_regex_on_any_text(name: str) -> None:
    """Property: the check and the pattern agree on arbitrary short texts."""
    assert vocabulary._is_attribute_name(name) == bool(_ATTRIBUTE_NAME_RE.fullmatch(name))


_TEXTS = st.one_of(
    st.sampled_from(["", "s", "1", "{token}/s", "µs", "x" * 64, "rl.a", "rl.", "rl.class", "a"]),
    st.integers(),
    st.none(),
)


@given(
    name=st.one_of(
        st.sampled_from(["rl.a", "rl.a.b", "rl.", "rl.1x", "a.b", "rl.class", "jvm.a"]), _TEXTS
    ),
    kind=st.sampled_from(["gauge", "counter", "summary", ""]),
    unit=_TEXTS,
    description=_TEXTS,
    attributes=st.sampled_from([(), (PHASE,), ("x",)]),
    limit=st.sampled_from([None, 1, 2, 10, "3"]),
    logged_unit=st.sampled_from(["", "ms", "s", "GiBy", "msec", 3]),
    namespace=st.sampled_from([vocabulary.METRIC_NAME_PREFIX, "rl.", "jvm.", "JVM.", "", 3]),
)
def test_fast_path_accepts_only_rows_the_full_checks_accept(  # noqa: PLR0917 - hypothesis
    name: object,
    kind: str,
    unit: object,
    description: object,
    attributes: object,
    limit: object,
    logged_unit: object,
    namespace: object,
) -> None:
    """Property: whenever the import fast path passes a row, the full checks pass it too."""
    row: Any = SimpleNamespace(
        name=name,
        kind=kind,
        unit=unit,
        description=description,
        attributes=attributes,
        cardinality_limit=limit,
        logged_unit=logged_unit,
        value_range="",
        goal="",
        namespace=namespace,
    )
    try:
        plain = vocabulary._common_fields_plain(row)
    except ValueError as raised:
        with pytest.raises(ValueError, match=re.escape(str(raised))):
            vocabulary._check_common(row)
        return
    if plain:
        vocabulary._check_common(row)  # must not raise
