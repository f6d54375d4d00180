"""Names shared between the code that produces metrics and the code that exports them.

Every name here has readers on both sides of that split, so the module imports
only the standard library: an owner is free to be a torch-heavy training module
and the exporter is free to be importable without the training stack.

Owners declare their rows at import (normally by importing their generated
module under :mod:`metric_catalog.generated`). The rows are collected
process-wide, in declaration order, and handed to the OpenTelemetry layer once,
on the first tee, which calls :func:`freeze_metrics`. An owner that is never
imported (PPO in a GRPO run) declares nothing.

Uniqueness is enforced over everything a series is known by, teed and recorded
rows together: the ``(prefix, logger_key)`` pair, the series name compared
case-insensitively (OpenTelemetry folds case), and the registry key (which is
also the Prometheus-sanitised name stem, so ``rl.a.b`` and ``rl.a_b`` clash).
"""

from __future__ import annotations

import functools
import keyword
import numbers
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Optional, cast

__all__ = [
    "DEFAULT_PREFIX",
    "INIT_TOTAL_CATEGORY",
    "METRIC_KINDS",
    "METRIC_NAME_PREFIX",
    "RUN_WINDOW_WALL_CLOCK_CATEGORIES",
    "RecordedMetric",
    "TeedMetric",
    "as_scalar",
    "freeze_metrics",
    "is_frozen",
    "recorded_metrics",
    "register_recorded_metrics",
    "register_teed_metrics",
    "registry_key",
    "teed_metrics",
]

METRIC_NAME_PREFIX: Final = "rl."
"""Every series name starts with this; :func:`registry_key` strips it."""

INIT_TOTAL_CATEGORY: Final = "init/total"
"""Timer category of the one-off wait for the first replay-buffer fill."""

RUN_WINDOW_WALL_CLOCK_CATEGORIES: Final[frozenset[str]] = frozenset({INIT_TOTAL_CATEGORY})
"""Wall-clock categories measured once per run rather than once per step."""

METRIC_KINDS: Final[tuple[str, ...]] = ("gauge", "counter", "histogram", "up_down_counter")
"""The instrument kinds a row may declare."""

DEFAULT_PREFIX: Final = "train"
"""The ``log_metrics`` prefix a teed row is matched under unless it says otherwise."""

# OpenTelemetry rejects longer names and units (see the SDK's instrument.py).
_MAX_NAME_LENGTH: Final = 255
_MAX_UNIT_LENGTH: Final = 63


def registry_key(name: str) -> str:
    """Registry key for a series name (``rl.reward.mean`` -> ``reward_mean``).

    Keys must be Python identifiers (they name generated constants and keyword
    arguments), so the shared prefix goes and the dots become underscores.
    Derived rather than typed out so a row cannot name its series one thing and
    record against another.

    Raises:
        ValueError: ``name`` lacks the ``rl.`` prefix, is not ASCII, is too
            long, or does not map to a non-keyword identifier.
    """
    if not isinstance(name, str):
        msg = f"series name must be a str, got {type(name).__name__} {name!r}"
        raise ValueError(msg)
    return _registry_key(name)


# Every row derives its key at construction and again when registered; caching the
# validated derivation keeps importing thousands of generated rows cheap.
@functools.lru_cache(maxsize=1 << 16)
def _registry_key(name: str) -> str:
    if not name.startswith(METRIC_NAME_PREFIX):
        msg = (
            f"series name {name!r} must start with {METRIC_NAME_PREFIX!r}; "
            f"write it as {METRIC_NAME_PREFIX + name.lstrip('.')!r}"
        )
        raise ValueError(msg)
    if not name.isascii() or len(name) > _MAX_NAME_LENGTH:
        msg = (
            f"series name {name!r} must be ASCII and at most {_MAX_NAME_LENGTH} "
            "characters, as OpenTelemetry requires"
        )
        raise ValueError(msg)
    key = name[len(METRIC_NAME_PREFIX) :].replace(".", "_")
    components = name[len(METRIC_NAME_PREFIX) :].split(".")
    if "" in components or not key.isidentifier() or keyword.iskeyword(key):
        msg = (
            f"series name {name!r} maps to registry key {key!r}, which is not a "
            "valid non-keyword Python identifier; use dot-separated components of "
            "letters, digits and '_' that do not start with a digit, such as "
            "'rl.reward.mean'"
        )
        raise ValueError(msg)
    return key


def _check_text(owner: str, field_name: str, value: object) -> None:
    if not isinstance(value, str):
        msg = f"{owner}: {field_name} must be a str, got {type(value).__name__} {value!r}"
        raise ValueError(msg)


def _check_common(row: TeedMetric | RecordedMetric) -> None:
    what = f"{type(row).__name__}({row.name!r})"
    registry_key(row.name)
    if row.kind not in METRIC_KINDS:
        msg = f"{what}: kind {row.kind!r} is not one of {', '.join(METRIC_KINDS)}"
        raise ValueError(msg)
    _check_text(what, "unit", row.unit)
    if not row.unit.isascii() or len(row.unit) > _MAX_UNIT_LENGTH:
        msg = (
            f"{what}: unit {row.unit!r} must be ASCII and at most {_MAX_UNIT_LENGTH} "
            "characters (write 'us' as 'us', or better 's')"
        )
        raise ValueError(msg)
    _check_text(what, "description", row.description)


@dataclass(frozen=True, slots=True)
class RecordedMetric:
    """A series recorded directly, with no ``Logger`` key behind it.

    Declared by its owner for the same reason teed rows are: the module that
    calls ``record_metrics`` for a series is the one that names it.
    """

    name: str
    """OpenTelemetry series name emitted; :func:`registry_key` derives the key."""
    kind: str = "gauge"
    """One of ``gauge``, ``counter``, ``histogram``, ``up_down_counter``."""
    unit: str = ""
    """UCUM-style unit string, or empty when dimensionless."""
    description: str = ""
    """Help text carried to the backend."""

    def __post_init__(self) -> None:
        _check_common(self)

    @property
    def key(self) -> str:
        """Registry key recorded against."""
        return registry_key(self.name)


@dataclass(frozen=True, slots=True)
class TeedMetric:
    """One ``Logger`` key mirrored into OpenTelemetry, and how it is declared.

    The positional order of the first five fields is the reference API's, so
    ``TeedMetric("reward", "rl.reward.mean")`` keeps working; ``prefix`` is an
    extension: the ``prefix`` argument of ``log_metrics`` the key is logged under.
    """

    logger_key: str
    """Key as it appears in the dict handed to ``Logger.log_metrics``."""
    name: str
    """OpenTelemetry series name emitted; :func:`registry_key` derives the key."""
    kind: str = "gauge"
    """One of ``gauge``, ``counter``, ``histogram``, ``up_down_counter``."""
    unit: str = ""
    """UCUM-style unit string, or empty when dimensionless."""
    description: str = ""
    """Help text carried to the backend."""
    prefix: str = field(default=DEFAULT_PREFIX)
    """The ``log_metrics`` prefix the key is logged under (``""`` for none)."""

    def __post_init__(self) -> None:
        _check_common(self)
        what = f"TeedMetric({self.name!r})"
        _check_text(what, "logger_key", self.logger_key)
        _check_text(what, "prefix", self.prefix)
        if not self.logger_key:
            msg = f"{what}: logger_key must not be empty; give the key logged to log_metrics"
            raise ValueError(msg)

    @property
    def key(self) -> str:
        """Registry key recorded against."""
        return registry_key(self.name)


# Registry state. One lock guards all of it: registration is rare (module import)
# and must be atomic per batch, so a coarse lock costs nothing that matters.
_LOCK = threading.Lock()
_REGISTERED: dict[tuple[str, str], TeedMetric] = {}
_RECORDED: dict[str, RecordedMetric] = {}
# Claims shared by teed and recorded rows: folded name -> row, folded key -> row.
_NAMES: dict[str, TeedMetric | RecordedMetric] = {}
_KEYS: dict[str, TeedMetric | RecordedMetric] = {}
_FROZEN = False
# Tuples handed out by teed_metrics()/recorded_metrics(), built on first read after
# a change: rebuilding them per registration would be quadratic over many owners.
_TEED_SNAPSHOT: tuple[TeedMetric, ...] | None = ()
_RECORDED_SNAPSHOT: tuple[RecordedMetric, ...] | None = ()


def _describe(row: TeedMetric | RecordedMetric) -> str:
    if isinstance(row, TeedMetric):
        where = f"{row.prefix}/{row.logger_key}" if row.prefix else row.logger_key
        return f"teed row {row.name!r} (logger key {where!r})"
    return f"recorded row {row.name!r}"


def _check_not_frozen(name: str) -> None:
    if _FROZEN:
        msg = (
            f"cannot register {name!r}: registration closed when the rows were handed "
            "to the OpenTelemetry exporter on the first tee (that happens once per "
            "process). Declare the row at import of its owner module, before "
            "training logs its first metrics."
        )
        raise RuntimeError(msg)


def _claims(
    row: TeedMetric | RecordedMetric,
) -> list[tuple[dict[Any, Any], Any, str]]:
    """The (table, key, label) slots a row occupies; the first is its home."""
    shared: list[tuple[dict[Any, Any], Any, str]] = [
        (_NAMES, row.name.casefold(), "series name"),
        (_KEYS, row.key.casefold(), "registry key"),
    ]
    if isinstance(row, TeedMetric):
        return [(_REGISTERED, (row.prefix, row.logger_key), "logger key"), *shared]
    return [(_RECORDED, row.name, "series name"), *shared]


def _label_value(label: str, row: TeedMetric | RecordedMetric) -> str:
    if label == "logger key" and isinstance(row, TeedMetric):
        return f"{row.prefix}/{row.logger_key}" if row.prefix else row.logger_key
    return row.key if label == "registry key" else row.name


def _register(rows: Iterable[TeedMetric | RecordedMetric], expected: type) -> None:
    global _TEED_SNAPSHOT, _RECORDED_SNAPSHOT  # noqa: PLW0603 - process-wide registry
    batch = list(rows)
    for row in batch:
        if not isinstance(row, expected):
            msg = f"expected {expected.__name__} rows, got {type(row).__name__} {row!r}"
            raise ValueError(msg)
    with _LOCK:
        if _FROZEN:
            _check_not_frozen(batch[0].name if batch else "<empty batch>")
        if batch and _register_fresh_batch(batch):
            return
        # Validate the whole batch against the registry and itself before touching
        # anything, so a rejected call registers none of its rows.
        staged: dict[int, dict[Any, TeedMetric | RecordedMetric]] = {}
        # Row -> its claims, insertion-ordered: rows are hashable, and list membership
        # would be quadratic.
        fresh: dict[TeedMetric | RecordedMetric, list[tuple[dict[Any, Any], Any, str]]] = {}
        for row in batch:
            claims = _claims(row)
            home, home_key, _ = claims[0]
            if home.get(home_key) == row:
                continue  # identical re-registration (module re-import): a no-op
            for table, k, label in claims:
                pending = staged.setdefault(id(table), {})
                other = table.get(k, pending.get(k))
                if other is not None and other != row:
                    msg = (
                        f"{_describe(row)} claims {label} {_label_value(label, row)!r}, "
                        f"already claimed by {_describe(other)}; rename one of them "
                        "or move the row to a single owner"
                    )
                    raise ValueError(msg)
                pending[k] = row
            fresh[row] = claims
        for row, claims in fresh.items():
            for table, k, _ in claims:
                table[k] = row
        if fresh:
            _TEED_SNAPSHOT = None
            _RECORDED_SNAPSHOT = None


def _register_fresh_batch(batch: list[TeedMetric | RecordedMetric]) -> bool:
    """Register ``batch`` at once when none of its claims is taken or repeated.

    The common case (an owner module imported once) then costs three
    ``dict.update`` calls. Anything else (a clash, a duplicate inside the
    batch, an identical re-registration) changes nothing and returns False,
    so the row-by-row path finds it and words the error. Caller holds _LOCK.
    """
    global _TEED_SNAPSHOT, _RECORDED_SNAPSHOT  # noqa: PLW0603 - process-wide registry
    names = [row.name.casefold() for row in batch]
    keys = [row.key.casefold() for row in batch]
    homes: list[Any]
    if isinstance(batch[0], TeedMetric):
        home = cast("dict[Any, Any]", _REGISTERED)
        homes = [(row.prefix, row.logger_key) for row in batch]  # type: ignore[union-attr]
    else:
        home, homes = cast("dict[Any, Any]", _RECORDED), [row.name for row in batch]
    for table, claimed in ((home, homes), (_NAMES, names), (_KEYS, keys)):
        if len(set(claimed)) != len(claimed) or not table.keys().isdisjoint(claimed):
            return False
    home.update(zip(homes, batch, strict=True))
    _NAMES.update(zip(names, batch, strict=True))
    _KEYS.update(zip(keys, batch, strict=True))
    _TEED_SNAPSHOT = None
    _RECORDED_SNAPSHOT = None
    return True


def register_teed_metrics(rows: Iterable[TeedMetric]) -> None:
    """Declare rows for teeing, from the module that logs their keys.

    Registering a row identical to one already declared is a no-op. A call is
    all-or-nothing: when any row is rejected, none of the call's rows is kept.

    Raises:
        ValueError: Two rows claim the same ``(prefix, logger_key)``, the same
            series name (case-insensitively), or the same registry key; the
            message names both rows. Both would be silent otherwise: the first
            makes one row unreachable, the second makes two rows record against
            one instrument.
        RuntimeError: Registration is already closed; see :func:`freeze_metrics`.
    """
    _register(rows, TeedMetric)


def _snapshot() -> tuple[tuple[TeedMetric, ...], tuple[RecordedMetric, ...]]:
    global _TEED_SNAPSHOT, _RECORDED_SNAPSHOT  # noqa: PLW0603 - process-wide registry
    teed, recorded = _TEED_SNAPSHOT, _RECORDED_SNAPSHOT
    if teed is None or recorded is None:
        with _LOCK:
            teed = _TEED_SNAPSHOT = tuple(_REGISTERED.values())
            recorded = _RECORDED_SNAPSHOT = tuple(_RECORDED.values())
    return teed, recorded


def teed_metrics() -> tuple[TeedMetric, ...]:
    """Every teed row declared so far, in declaration order."""
    return _snapshot()[0]


def register_recorded_metrics(rows: Iterable[RecordedMetric]) -> None:
    """Declare rows from the module that records them.

    Same rules as :func:`register_teed_metrics`: identical re-registration is a
    no-op, a call is all-or-nothing, and names and registry keys are unique
    across teed and recorded rows.

    Raises:
        ValueError: The name or registry key is already claimed by another row.
        RuntimeError: Registration is already closed; see :func:`freeze_metrics`.
    """
    _register(rows, RecordedMetric)


def recorded_metrics() -> tuple[RecordedMetric, ...]:
    """Every directly-recorded row declared so far, in declaration order."""
    return _snapshot()[1]


def freeze_metrics() -> None:
    """Close registration, once the rows have been handed to the exporter.

    Called by the OpenTelemetry layer when it creates the instruments, on the
    first tee. A row declared after that would never get an instrument, so
    registering one raises ``RuntimeError`` instead of being dropped silently.
    """
    global _FROZEN  # noqa: PLW0603 - process-wide registry
    with _LOCK:
        _FROZEN = True


def is_frozen() -> bool:
    """Whether :func:`freeze_metrics` has closed registration in this process."""
    return _FROZEN


def _reset_for_tests() -> None:
    """Forget every row and reopen registration. For test isolation only."""
    global _FROZEN, _TEED_SNAPSHOT, _RECORDED_SNAPSHOT  # noqa: PLW0603
    with _LOCK:
        _REGISTERED.clear()
        _RECORDED.clear()
        _NAMES.clear()
        _KEYS.clear()
        _FROZEN = False
        _TEED_SNAPSHOT = ()
        _RECORDED_SNAPSHOT = ()


def as_scalar(value: Any) -> Optional[float]:  # noqa: UP045 - the reference signature
    """Coerce a logged value to float, or ``None`` when it is not a usable scalar.

    Shared by everything that reads a raw ``Logger`` dict, so they agree on what
    counts as a number. Accepts ``int``, ``float``, numpy integer and floating
    scalars, and 0-d numpy arrays or torch tensors (duck-typed through
    ``.item()``, without importing either library). Returns ``None`` for bools
    (numpy's too), ``None``, strings, bytes, complex numbers, sequences,
    multi-element arrays, and anything whose conversion raises. NaN and
    infinities come back as floats: a NaN loss is a signal, and the exporter
    layer decides what to do with it.
    """
    kind = type(value)
    if kind is float:
        return value  # type: ignore[no-any-return]
    if kind is int:
        return _int_to_float(value)
    if value is None or isinstance(value, (bool, str, bytes, bytearray, complex)):
        return None
    if isinstance(value, (int, float)):  # subclasses, e.g. np.float64
        return _int_to_float(value) if isinstance(value, int) else float(value)
    item = getattr(value, "item", None)
    if item is not None and callable(item):
        try:
            if tuple(getattr(value, "shape", ())) != ():
                return None  # multi-element (or 1-element, 1-d) arrays are not scalars
            inner = item()
        except Exception:  # noqa: BLE001 - any failing conversion means "not a scalar"
            return None
        if inner is value or isinstance(inner, (bool, complex)):
            return None
        if isinstance(inner, (int, float)):
            return _int_to_float(inner) if isinstance(inner, int) else float(inner)
        return None
    if isinstance(value, numbers.Real):  # Fraction and other registered reals
        try:
            return float(value)
        except Exception:  # noqa: BLE001
            return None
    return None


def _int_to_float(value: int) -> float | None:
    try:
        return float(value)
    except OverflowError:
        return None
