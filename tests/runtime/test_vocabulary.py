"""Behaviour of the stdlib-only registry in metric_catalog.vocabulary."""

from __future__ import annotations

import dataclasses
import fractions
import keyword
import math
import subprocess
import sys
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metric_catalog import vocabulary
from metric_catalog.vocabulary import (
    INIT_TOTAL_CATEGORY,
    METRIC_NAME_PREFIX,
    RUN_WINDOW_WALL_CLOCK_CATEGORIES,
    RecordedMetric,
    TeedMetric,
    as_scalar,
    check_namespace,
    freeze_metrics,
    recorded_metrics,
    register_recorded_metrics,
    register_teed_metrics,
    registry_key,
    teed_metrics,
)

pytestmark = pytest.mark.usefixtures("registry")


def test_reference_constants_keep_their_values() -> None:
    """The constants of the reference API keep their reference values."""
    assert METRIC_NAME_PREFIX == "rl."
    assert INIT_TOTAL_CATEGORY == "init/total"
    assert frozenset({"init/total"}) == RUN_WINDOW_WALL_CLOCK_CATEGORIES
    assert isinstance(RUN_WINDOW_WALL_CLOCK_CATEGORIES, frozenset)


# --- registry_key -------------------------------------------------------------

REGISTRY_KEYS = [
    # (series name, registry key)
    ("rl.reward.mean", "reward_mean"),
    ("rl.grad_norm", "grad_norm"),
    ("rl.vllm.batch.duration", "vllm_batch_duration"),
    ("rl.a", "a"),
    ("rl._private", "_private"),
    ("rl.x1.y2", "x1_y2"),
    ("rl.a.1b", "a_1b"),  # only the first component must not start with a digit
    ("rl.Reward.Mean", "Reward_Mean"),
]


@pytest.mark.parametrize(("name", "key"), REGISTRY_KEYS)
def test_registry_key_strips_prefix_and_joins_with_underscores(name: str, key: str) -> None:
    """registry_key drops 'rl.' and turns dots into underscores."""
    assert registry_key(name) == key


INVALID_NAMES = [
    # (name, words the error must contain)
    ("rl.1x", "identifier"),
    ("rl.class", "identifier"),
    ("rl.a-b", "identifier"),
    ("reward.mean", "must start with 'rl.'"),
    ("rl.", "identifier"),
    ("rl.a..b", "identifier"),
    ("rl.a.", "identifier"),
    ("rl.a b", "identifier"),
    ("rl.a/b", "identifier"),
    ("rl.r\u00e9ward", "ASCII"),
    ("rl." + "a" * 300, "at most 255"),
    ("RL.reward", "must start with 'rl.'"),
]


@pytest.mark.parametrize(("name", "words"), INVALID_NAMES)
def test_registry_key_rejects_names_that_cannot_be_keys(name: str, words: str) -> None:
    """A name that cannot yield a non-keyword identifier is rejected, saying why."""
    with pytest.raises(ValueError, match="rl\\.") as info:
        registry_key(name)
    assert words in str(info.value)


@pytest.mark.parametrize("name", ["rl.1x", "rl.class", "rl.a-b", "reward"])
@pytest.mark.parametrize("cls", [TeedMetric, RecordedMetric])
def test_rows_with_invalid_names_are_rejected_at_construction(name: str, cls: type) -> None:
    """Both row types reject an invalid name when they are built, not when registered."""
    args: tuple[str, ...] = ("key", name) if cls is TeedMetric else (name,)
    with pytest.raises(ValueError, match="rl\\."):
        cls(*args)


@given(st.from_regex(r"rl\.[a-z_][a-z0-9_]{0,8}(\.[a-z0-9_]{1,8}){0,3}", fullmatch=True))
@settings(max_examples=200)
def test_registry_key_of_a_valid_name_is_an_identifier(name: str) -> None:
    """For any name of the documented shape, the key is an identifier or the name is refused."""
    try:
        key = registry_key(name)
    except ValueError:
        assert keyword.iskeyword(name[3:].replace(".", "_"))
        return
    assert key.isidentifier()
    assert not keyword.iskeyword(key)


@given(
    st.lists(
        st.from_regex(r"rl\.[a-z][a-z0-9_]{0,5}(\.[a-z0-9_]{1,5}){0,2}", fullmatch=True),
        min_size=1,
        max_size=12,
    )
)
@settings(max_examples=100)
def test_registered_keys_are_injective_or_the_batch_is_rejected(names: list[str]) -> None:
    """Registering any set of names leaves keys unique, or rejects the whole batch."""
    vocabulary._reset_for_tests()
    rows = []
    for name in names:
        try:
            rows.append(RecordedMetric(name))
        except ValueError:
            continue
    try:
        register_recorded_metrics(rows)
    except ValueError:
        assert recorded_metrics() == ()
        keys = [r.key.casefold() for r in rows]
        assert len(set(keys)) < len(set(rows))
        return
    keys = [r.key for r in recorded_metrics()]
    assert len(keys) == len(set(keys))
    assert set(recorded_metrics()) == set(rows)


# --- rows ------------------------------------------------------------------------


def test_teed_metric_defaults_and_reference_positional_order() -> None:
    """Reference-style positional construction works and the defaults match the reference."""
    row = TeedMetric("reward", "rl.reward.mean", "gauge", "1", "Mean reward.")
    assert (row.logger_key, row.name, row.kind, row.unit, row.description) == (
        "reward",
        "rl.reward.mean",
        "gauge",
        "1",
        "Mean reward.",
    )
    bare = TeedMetric("reward", "rl.reward.mean")
    assert (bare.kind, bare.unit, bare.description, bare.prefix) == ("gauge", "", "", "train")
    assert bare.key == "reward_mean"
    recorded = RecordedMetric("rl.vllm.batch.duration")
    assert (recorded.kind, recorded.unit, recorded.description) == ("gauge", "", "")
    assert recorded.key == "vllm_batch_duration"


@pytest.mark.parametrize("row", [TeedMetric("k", "rl.k"), RecordedMetric("rl.k")])
def test_rows_are_frozen_and_slotted(row: Any) -> None:
    """Rows cannot be mutated after declaration and carry no per-instance dict."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.name = "rl.other"
    assert not hasattr(row, "__dict__")


@pytest.mark.parametrize("kind", ["gauge", "counter", "histogram", "up_down_counter"])
def test_every_documented_kind_is_accepted(kind: str) -> None:
    """The four instrument kinds build."""
    assert TeedMetric("k", "rl.k", kind).kind == kind
    assert RecordedMetric("rl.k", kind).kind == kind


@pytest.mark.parametrize("kind", ["Gauge", "summary", "", "observable_gauge", "counter "])
def test_unknown_kinds_are_rejected_at_construction(kind: str) -> None:
    """Any other kind is a ValueError naming the valid ones."""
    with pytest.raises(ValueError, match="up_down_counter"):
        TeedMetric("k", "rl.k", kind)
    with pytest.raises(ValueError, match="up_down_counter"):
        RecordedMetric("rl.k", kind)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"unit": "\u00b5s"}, "ASCII"),
        ({"unit": "x" * 64}, "at most 63"),
        ({"logger_key": ""}, "must not be empty"),
        ({"description": 3}, "description must be a str"),
        ({"prefix": None}, "prefix must be a str"),
    ],
)
def test_malformed_fields_are_rejected_at_construction(kwargs: dict[str, Any], words: str) -> None:
    """Units OpenTelemetry would refuse and non-string fields fail early with a reason."""
    fields: dict[str, Any] = {"logger_key": "k", "name": "rl.k", **kwargs}
    with pytest.raises(ValueError, match=words):
        TeedMetric(**fields)


# --- registration ----------------------------------------------------------------


def test_declaration_order_is_kept_across_calls() -> None:
    """teed_metrics() and recorded_metrics() return tuples in declaration order."""
    first = [TeedMetric("b", "rl.b"), TeedMetric("a", "rl.a")]
    second = [TeedMetric("c", "rl.c")]
    register_teed_metrics(first)
    register_teed_metrics(second)
    register_recorded_metrics([RecordedMetric("rl.z"), RecordedMetric("rl.y")])
    assert teed_metrics() == (*first, *second)
    assert isinstance(teed_metrics(), tuple)
    assert [r.name for r in recorded_metrics()] == ["rl.z", "rl.y"]


def test_identical_reregistration_is_a_no_op() -> None:
    """Re-importing an owner (same rows again) neither fails nor duplicates."""
    rows = [TeedMetric("reward", "rl.reward.mean", unit="1"), TeedMetric("loss", "rl.loss")]
    register_teed_metrics(rows)
    register_teed_metrics(rows)
    register_teed_metrics([rows[0], rows[0]])
    assert teed_metrics() == tuple(rows)


CLASHES = [
    # (id, first batch, second batch, words in the error)
    (
        "same logger key",
        [TeedMetric("reward", "rl.reward.mean")],
        [TeedMetric("reward", "rl.reward.avg")],
        "logger key 'train/reward'",
    ),
    (
        "same series name",
        [TeedMetric("reward", "rl.reward.mean")],
        [TeedMetric("reward_mean", "rl.reward.mean")],
        "series name 'rl.reward.mean'",
    ),
    (
        "same name other case",
        [TeedMetric("reward", "rl.reward.mean")],
        [TeedMetric("r2", "rl.Reward.Mean")],
        "series name",
    ),
    (
        "same registry key",
        [TeedMetric("a", "rl.a.b")],
        [TeedMetric("b", "rl.a_b")],
        "registry key 'a_b'",
    ),
    (
        "teed vs recorded name",
        [TeedMetric("reward", "rl.reward.mean")],
        [RecordedMetric("rl.reward.mean", "histogram")],
        "already declared by teed row 'rl.reward.mean'",
    ),
    (
        "recorded vs teed key",
        [RecordedMetric("rl.batch.duration")],
        [TeedMetric("batch", "rl.batch_duration")],
        "registry key 'batch_duration'",
    ),
    (
        "same recorded name, other kind",
        [RecordedMetric("rl.x", "gauge")],
        [RecordedMetric("rl.x", "counter")],
        "series name 'rl.x'",
    ),
]


def _register_any(rows: list[Any]) -> None:
    if isinstance(rows[0], TeedMetric):
        register_teed_metrics(rows)
    else:
        register_recorded_metrics(rows)


@pytest.mark.parametrize(
    ("first", "second", "words"), [c[1:] for c in CLASHES], ids=[c[0] for c in CLASHES]
)
def test_clashes_across_calls_name_both_rows(
    first: list[Any], second: list[Any], words: str
) -> None:
    """A second row claiming a taken identity is refused, and the error names both rows."""
    _register_any(first)
    with pytest.raises(ValueError, match=r"already (teed|declared) by") as info:
        _register_any(second)
    message = str(info.value)
    assert words in message
    assert repr(first[0].name) in message
    assert repr(second[0].name) in message
    assert "rename one of them" in message


@pytest.mark.parametrize(
    ("first", "second", "words"),
    [c[1:] for c in CLASHES if type(c[1][0]) is type(c[2][0])],
    ids=[c[0] for c in CLASHES if type(c[1][0]) is type(c[2][0])],
)
def test_clashes_within_one_call_are_refused(
    first: list[Any], second: list[Any], words: str
) -> None:
    """The same clash inside a single call is refused too, registering nothing."""
    with pytest.raises(ValueError, match=r"already (teed|declared) by") as info:
        _register_any([*first, *second])
    assert words in str(info.value)
    assert teed_metrics() == ()
    assert recorded_metrics() == ()


def test_a_rejected_batch_registers_none_of_its_rows() -> None:
    """All-or-nothing: the valid rows of a rejected call are not kept."""
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])
    batch = [TeedMetric("loss", "rl.loss"), TeedMetric("reward", "rl.reward.other")]
    with pytest.raises(ValueError, match="logger key"):
        register_teed_metrics(batch)
    assert [r.name for r in teed_metrics()] == ["rl.reward.mean"]
    register_teed_metrics([TeedMetric("loss", "rl.loss")])  # the good row is still free


def test_same_logger_key_under_other_prefixes_is_allowed() -> None:
    """Uniqueness of logger keys is per (prefix, key): 'loss' in train and validation coexist."""
    rows = [
        TeedMetric("loss", "rl.policy.loss", prefix="train"),
        TeedMetric("loss", "rl.validation.loss", prefix="validation"),
        TeedMetric("loss", "rl.unprefixed.loss", prefix=""),
    ]
    register_teed_metrics(rows)
    assert teed_metrics() == tuple(rows)


def test_wrong_row_type_is_refused() -> None:
    """Passing a recorded row to the teed registration (or a dict) is a clear ValueError."""
    with pytest.raises(ValueError, match="expected TeedMetric"):
        register_teed_metrics([RecordedMetric("rl.x")])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="expected RecordedMetric"):
        register_recorded_metrics([{"name": "rl.x"}])  # type: ignore[list-item]


@pytest.mark.parametrize(
    "register",
    [
        lambda: register_teed_metrics([TeedMetric("late", "rl.late")]),
        lambda: register_recorded_metrics([RecordedMetric("rl.late")]),
    ],
    ids=["teed", "recorded"],
)
def test_registration_after_freeze_raises_runtime_error_naming_the_row(register: Any) -> None:
    """After the first tee, a new row is refused with the reason and the fix."""
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])
    freeze_metrics()
    assert vocabulary.is_frozen()
    with pytest.raises(RuntimeError, match=r"'rl\.late'") as info:
        register()
    message = str(info.value)
    assert "once per process" in message
    assert "at import of its owner" in message
    assert [r.name for r in teed_metrics()] == ["rl.reward.mean"]


def test_reset_for_tests_reopens_and_empties_the_registry() -> None:
    """The test helper forgets every row and the freeze."""
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])
    freeze_metrics()
    vocabulary._reset_for_tests()
    assert teed_metrics() == ()
    assert not vocabulary.is_frozen()
    register_teed_metrics([TeedMetric("reward", "rl.reward.mean")])


def test_concurrent_disjoint_registrations_lose_no_row() -> None:
    """Eight threads registering disjoint rows at once keep every row."""
    per_thread = 200
    barrier = threading.Barrier(8)

    def work(t: int) -> None:
        barrier.wait()
        for i in range(per_thread):
            register_teed_metrics([TeedMetric(f"k{t}_{i}", f"rl.t{t}.m{i}")])
            register_recorded_metrics([RecordedMetric(f"rl.r{t}.m{i}")])

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(teed_metrics()) == 8 * per_thread
    assert len(recorded_metrics()) == 8 * per_thread
    for t in range(8):  # each thread's own rows stay in its declaration order
        mine = [r.logger_key for r in teed_metrics() if r.logger_key.startswith(f"k{t}_")]
        assert mine == [f"k{t}_{i}" for i in range(per_thread)]


def _race_registrations_against_freeze(attempt: int) -> dict[int, str]:
    outcomes: dict[int, str] = {}
    barrier = threading.Barrier(5)

    def register(i: int) -> None:
        barrier.wait()
        try:
            register_teed_metrics([TeedMetric(f"k{i}", f"rl.race{attempt}.m{i}")])
            outcomes[i] = "registered"
        except RuntimeError:
            outcomes[i] = "refused"

    def freeze() -> None:
        barrier.wait()
        freeze_metrics()

    threads = [threading.Thread(target=register, args=(i,)) for i in range(4)]
    threads.append(threading.Thread(target=freeze))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_registration_racing_a_freeze_lands_before_it_or_raises() -> None:
    """A registration concurrent with freeze_metrics is either kept or refused, never lost."""
    for attempt in range(20):
        vocabulary._reset_for_tests()
        outcomes = _race_registrations_against_freeze(attempt)
        kept = {r.logger_key for r in teed_metrics()}
        assert kept == {f"k{i}" for i, o in outcomes.items() if o == "registered"}
        assert len(outcomes) == 4
        assert vocabulary.is_frozen()


def test_importing_vocabulary_pulls_in_no_third_party_module() -> None:
    """vocabulary imports only the standard library (checked in a fresh interpreter)."""
    code = (
        "import sys; before = set(sys.modules); import metric_catalog.vocabulary; "
        "new = sorted(set(sys.modules) - before); "
        "std = sys.stdlib_module_names; "
        "print('\\n'.join(m for m in new if m.split('.')[0] not in std "
        "and m.split('.')[0] != 'metric_catalog'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""


# --- as_scalar -------------------------------------------------------------------


class _Tensor0d:
    """A 0-d torch tensor stand-in: .item() and an empty .shape."""

    def __init__(self, value: object, shape: tuple[int, ...] = ()) -> None:
        self._value = value
        self.shape = shape

    def item(self) -> object:
        return self._value


class _Exploding:
    shape = ()

    def item(self) -> object:
        raise RuntimeError("device lost")


class _BadShape:
    @property
    def shape(self) -> tuple[int, ...]:
        raise TypeError("no shape")

    def item(self) -> object:
        return 1.0


class _FloatLike:
    def __float__(self) -> float:
        return 1.0


SCALARS: list[tuple[str, Any, float | None]] = [
    ("int", 3, 3.0),
    ("negative int", -7, -7.0),
    ("float", 2.5, 2.5),
    ("zero", 0, 0.0),
    ("inf", math.inf, math.inf),
    ("-inf", -math.inf, -math.inf),
    ("fraction", fractions.Fraction(1, 4), 0.25),
    ("0-d tensor stand-in", _Tensor0d(1.5), 1.5),
    ("0-d int tensor stand-in", _Tensor0d(4), 4.0),
    ("True", True, None),
    ("False", False, None),
    ("None", None, None),
    ("str number", "3", None),
    ("bytes", b"3", None),
    ("complex", 1 + 2j, None),
    ("list", [1.0], None),
    ("tuple", (1.0,), None),
    ("dict", {"a": 1}, None),
    ("huge int", 10**400, None),
    ("bool tensor stand-in", _Tensor0d(True), None),
    ("complex tensor stand-in", _Tensor0d(1j), None),
    ("1-d tensor stand-in", _Tensor0d(1.0, shape=(1,)), None),
    ("multi tensor stand-in", _Tensor0d(1.0, shape=(2, 2)), None),
    ("item raises", _Exploding(), None),
    ("shape raises", _BadShape(), None),
    ("only __float__", _FloatLike(), None),
    ("object", object(), None),
]


@pytest.mark.parametrize(
    ("value", "expected"), [s[1:] for s in SCALARS], ids=[s[0] for s in SCALARS]
)
def test_as_scalar_accepts_numbers_and_rejects_everything_else(
    value: Any, expected: float | None
) -> None:
    """as_scalar returns a float for real numbers and 0-d scalars, None otherwise."""
    result = as_scalar(value)
    assert result == expected
    if expected is not None:
        assert type(result) is float


def test_as_scalar_passes_nan_through() -> None:
    """A NaN loss is a signal: it comes back as a NaN float."""
    result = as_scalar(float("nan"))
    assert result is not None
    assert math.isnan(result)


NUMPY_CASES: list[tuple[str, str, float | None]] = [
    ("float32", "np.float32(1.5)", 1.5),
    ("float16", "np.float16(0.5)", 0.5),
    ("float64", "np.float64(2.25)", 2.25),
    ("int64", "np.int64(7)", 7.0),
    ("uint8", "np.uint8(255)", 255.0),
    ("0-d float array", "np.array(3.5)", 3.5),
    ("0-d int array", "np.array(4, dtype=np.int32)", 4.0),
    ("nan float32", "np.float32('nan')", math.nan),
    ("bool_", "np.bool_(True)", None),
    ("0-d bool array", "np.array(False)", None),
    ("complex64", "np.complex64(1+1j)", None),
    ("1-element array", "np.array([1.0])", None),
    ("matrix", "np.ones((2, 2))", None),
    ("str_", "np.str_('3')", None),
    ("datetime64", "np.datetime64('2026-01-01')", None),
]


@pytest.mark.parametrize(
    ("expr", "expected"), [c[1:] for c in NUMPY_CASES], ids=[c[0] for c in NUMPY_CASES]
)
def test_as_scalar_handles_numpy_values(expr: str, expected: float | None) -> None:
    """numpy scalars and 0-d arrays convert (the reference dropped float32 and int64)."""
    np = pytest.importorskip("numpy")
    result = as_scalar(eval(expr, {"np": np}))
    if expected is None:
        assert result is None
    elif math.isnan(expected):
        assert result is not None
        assert math.isnan(result)
    else:
        assert result == expected
        assert type(result) is float


TORCH_CASES: list[tuple[str, str, float | None]] = [
    ("0-d float tensor", "torch.tensor(1.5)", 1.5),
    ("0-d int tensor", "torch.tensor(3)", 3.0),
    ("0-d bool tensor", "torch.tensor(True)", None),
    ("1-element tensor", "torch.tensor([1.0])", None),
]


@pytest.mark.parametrize(
    ("expr", "expected"), [c[1:] for c in TORCH_CASES], ids=[c[0] for c in TORCH_CASES]
)
def test_as_scalar_handles_torch_tensors_when_installed(expr: str, expected: float | None) -> None:
    """Real torch tensors behave like the stand-in (skipped where torch is absent)."""
    torch = pytest.importorskip("torch")
    assert as_scalar(eval(expr, {"torch": torch})) == expected


@pytest.mark.parametrize(
    ("prefix", "other_prefixes", "logged_key", "logged_keys"),
    [
        ("train", (), "train/loss", ("train/loss",)),
        ("", (), "loss", ("loss",)),
        ("eval_", (), "eval_loss", ("eval_loss",)),
        ("train", ("", "val"), "train/loss", ("train/loss", "loss", "val/loss")),
    ],
)
def test_logged_key_is_the_whole_key_a_flat_dict_logger_writes(
    prefix: str, other_prefixes: tuple[str, ...], logged_key: str, logged_keys: tuple[str, ...]
) -> None:
    row = TeedMetric("loss", "rl.loss", prefix=prefix, other_prefixes=other_prefixes)
    assert row.logged_key == logged_key
    assert row.logged_keys == logged_keys


# --- series namespace -------------------------------------------------------------

NAMESPACED = [
    # (namespace, name, key)
    ("jvm.", "jvm.memory.used", "memory_used"),
    ("gen_ai.", "gen_ai.client.token.usage", "client_token_usage"),
    ("hw.gpu.", "hw.gpu.power", "power"),
    ("rl.", "rl.reward.mean", "reward_mean"),
]


@pytest.mark.parametrize(("namespace", "name", "key"), NAMESPACED)
def test_registry_key_strips_a_declared_namespace(namespace: str, name: str, key: str) -> None:
    """A row in another namespace gets its key with that namespace stripped."""
    assert registry_key(name, namespace) == key
    assert RecordedMetric(name, namespace=namespace).key == key
    assert TeedMetric("k", name, namespace=namespace).key == key


def test_the_default_namespace_is_the_reference_prefix() -> None:
    """Without a namespace a name still needs 'rl.', as documented."""
    assert RecordedMetric("rl.x").namespace == METRIC_NAME_PREFIX == "rl."
    with pytest.raises(ValueError, match=r"must start with 'rl\.'"):
        registry_key("jvm.memory.used")


@pytest.mark.parametrize("namespace", ["JVM.", "jvm", "", ".", "1a.", "a..", "é.", "a-b.", 3])
def test_malformed_namespaces_are_rejected_at_construction(namespace: Any) -> None:
    """A namespace that is not a lowercase dotted prefix ending in '.' builds no row."""
    with pytest.raises(ValueError, match="series namespace"):
        RecordedMetric("jvm.x", namespace=namespace)
    with pytest.raises(ValueError, match="series namespace"):
        check_namespace(namespace)


def test_a_name_outside_its_rows_namespace_is_rejected() -> None:
    """The name must start with the row's own namespace, not just any one."""
    with pytest.raises(ValueError, match=r"must start with 'jvm\.'"):
        RecordedMetric("rl.memory.used", namespace="jvm.")


def test_the_key_cache_tells_namespaces_apart() -> None:
    """A name cached as valid under one namespace is still refused under another."""
    assert registry_key("rl.jvm.x") == "jvm_x"
    with pytest.raises(ValueError, match=r"must start with 'jvm\.'"):
        registry_key("rl.jvm.x", "jvm.")
    assert registry_key("jvm.x", "jvm.") == "x"


def test_rows_of_two_namespaces_register_side_by_side() -> None:
    """Rows in different namespaces register together when their keys differ."""
    rows = [RecordedMetric("rl.reward.mean"), RecordedMetric("jvm.heap.used", namespace="jvm.")]
    register_recorded_metrics(rows)
    assert [row.key for row in recorded_metrics()] == ["reward_mean", "heap_used"]


def test_a_replacement_may_live_in_another_namespace() -> None:
    """A rename into another namespace (rl. -> jvm.) builds; a malformed target does not."""
    row = TeedMetric("heap", "rl.heap", replaced_by="jvm.memory.used")
    assert row.replaced_by == "jvm.memory.used"
    with pytest.raises(ValueError, match="series namespace"):
        TeedMetric("heap", "rl.heap", replaced_by="JVM.memory.used")
