"""What a series is, defined once: the rules the catalog side and the runtime share.

Validation (``codegen``), the docs, ``resolve``, ``live-check`` and the runtime
tee all read these rules from here, so a logged key means the same series with
the same captured attributes wherever it is judged:

* **Vocabularies**: :data:`METRIC_KINDS`, :data:`TEMPORALITIES`, :data:`ATTRIBUTE_TYPES`,
  :data:`STABILITY_LEVELS` and the requirement levels
  (:data:`ATTRIBUTE_REQUIREMENT_LEVELS` for an attribute of a catalog row,
  :data:`RUNTIME_REQUIREMENT_LEVELS` for a runtime ``MetricAttribute``,
  :data:`PRESENCE_LEVELS` for a row's presence in a run, weakest first).
* **Placeholders**: a logger key or prefix is literal text with
  ``{attribute.name}`` placeholders; ``{{`` and ``}}`` stand for literal braces
  (:func:`parse_pattern`). What a placeholder captures depends on its
  attribute (:class:`Capture`): one of an enum's values; an optionally signed
  integer for an open ``int``; for an open ``string`` exactly one path segment
  (non-empty, no ``/``) unless the attribute is declared with
  ``spans_segments`` (a data source such as ``openai/gsm8k``), when it takes
  any non-empty text. Where a key could split several ways, an earlier
  placeholder takes the shortest text that lets the rest match.
* **The matcher**: :func:`compile_pattern` turns a pattern into one anchored
  regular expression; every consumer matches with it.
* **Precedence** (:func:`specificity`): when several rows match one logged
  ``(prefix, key)``, the most specific wins, decided per pattern and
  therefore statically: the key pattern first, then the prefix pattern; a
  pattern with more literal characters wins (so a literal key beats any
  family), then the one with fewer spanning, then open, then int, then enum
  placeholders. Two rows that share a logged pair with equal rank are an
  error of validation (:func:`overlap` finds the shared text exactly).
* **Qualified keys**: :func:`qualified_key` (``prefix/key``, the bare key under
  the empty prefix, ``eval_loss`` for a prefix ending in ``_``) and its inverse for
  a key logged with its prefix inside it, :func:`split_flat_key`: the one routing
  rule for a flat key (a literal row first, else the most literal row that can take
  it, :func:`flat_rank`, then the longest prefix), which the tee, live-check, scan,
  infer and emit all follow.
* **Keys that are no metric**: :data:`BACKEND_KEYS` (W&B's ``_step``...) and
  :func:`bookkeeping_matches`, the rule of a catalog's ``bookkeeping:`` patterns.
* **Rows chosen by configuration**: :class:`ConfigChoice`, a row's condition on one
  configuration value, and when two such rows may share a key (:meth:`ConfigChoice.excludes`).
* **Values**: :func:`type_accepts`/:func:`value_fits` (a value of an
  attribute) and :func:`parse_value` (a value as the catalog writes it).
* **Budgets**: :data:`DEFAULT_CARDINALITY_LIMIT` and :func:`series_limit`.
* **Units**: :data:`UNIT_SCALES` (a prefixed UCUM unit the code logs -> the
  base unit the series is exported in, with the exact factor as a ratio of
  ints), :func:`unit_scale` (the same for a compound unit such as
  ``ms/{token}``) and :func:`scale_value` (a logged value in the exported
  unit, correctly rounded).

Only the standard library, and only ``re`` beyond builtins, imported when a
pattern is first compiled: :mod:`metric_catalog.vocabulary` imports this
module and stays cheap to import.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy: True)
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable, Iterator, Mapping
    from re import Pattern as _Regex
    from typing import Any, Final, TypeAlias

__all__ = [
    "ATTRIBUTE_REQUIREMENT_LEVELS",
    "ATTRIBUTE_TYPES",
    "BACKEND_KEYS",
    "CHOICE_TESTS",
    "DEFAULT_CARDINALITY_LIMIT",
    "INVALID",
    "MAX_PREFIX_CUTS",
    "METRIC_KINDS",
    "OPEN_SEGMENT",
    "PLACEHOLDER_TYPES",
    "POWER_OF_TEN_LIMIT",
    "PREFIX_GLUE",
    "PREFIX_SEPARATOR",
    "PRESENCE_LEVELS",
    "RUNTIME_REQUIREMENT_LEVELS",
    "STABILITY_LEVELS",
    "TEMPORALITIES",
    "UNIT_SCALES",
    "Capture",
    "CompiledPattern",
    "ConfigChoice",
    "MatchBudget",
    "MatchBudgetError",
    "PatternError",
    "Placeholder",
    "SeriesMatcher",
    "address_rank",
    "adjacent_placeholders",
    "attribute_bound",
    "bookkeeping_matches",
    "capture",
    "compile_pattern",
    "flat_rank",
    "is_glued",
    "is_literal",
    "is_scheduled",
    "literal_rank",
    "literal_text",
    "namespace_prefix",
    "next_scheduled",
    "overlap",
    "pair_rank",
    "parse_pattern",
    "parse_value",
    "pattern_problem",
    "placeholders",
    "qualified_key",
    "scale_value",
    "series_limit",
    "specificity",
    "split_flat_key",
    "type_accepts",
    "unit_scale",
    "value_fits",
]

# --- vocabularies -------------------------------------------------------------------

METRIC_KINDS: Final[tuple[str, ...]] = ("gauge", "counter", "histogram", "up_down_counter")
"""The instrument kinds a row may declare (the catalog schema's ``kind`` enum)."""

TEMPORALITIES: Final[tuple[str, ...]] = ("delta", "cumulative")
"""What a counter's logged value is: this step's amount (default) or a running total."""

ATTRIBUTE_TYPES: Final[tuple[str, ...]] = ("string", "int", "double", "bool")
"""The types an attribute may declare (the schema's ``attributeDef.type`` enum)."""

PLACEHOLDER_TYPES: Final[tuple[str, ...]] = ("string", "int")
"""The attribute types a placeholder may capture."""

STABILITY_LEVELS: Final[tuple[str, ...]] = (
    "development",
    "alpha",
    "beta",
    "release_candidate",
    "stable",
)
"""A row's or attribute's stability, least stable first (the schema's ``stability`` enum);
``release_candidate`` is OpenTelemetry's level between beta and stable."""

ATTRIBUTE_REQUIREMENT_LEVELS: Final[tuple[str, ...]] = ("required", "recommended", "opt_in")
"""What a catalog row may say of one of its attributes (``attributeRef.requirement_level``)."""

RUNTIME_REQUIREMENT_LEVELS: Final[tuple[str, ...]] = (
    *ATTRIBUTE_REQUIREMENT_LEVELS,
    "conditionally_required",
)
"""Weaver's four levels, which a runtime ``MetricAttribute.requirement`` accepts."""

PRESENCE_LEVELS: Final[tuple[str, ...]] = (
    "opt_in",
    "recommended",
    "conditionally_required",
    "required",
)
"""A teed row's presence in a run (the schema's ``requirementLevel``), weakest first:
raising a row's level is a stronger promise."""

DEFAULT_CARDINALITY_LIMIT: Final = 2000
"""Attribute sets per series (overflow point included) unless the row says otherwise.

The OpenTelemetry SDK's default, so the SDK never overflows before we do."""


# --- units --------------------------------------------------------------------------


def _prefixed(base: str, prefixes: Mapping[str, int]) -> dict[str, tuple[str, int, int]]:
    return {f"{prefix}{base}": (base, factor, 1) for prefix, factor in prefixes.items()}


_DECIMAL: Final = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_BINARY: Final = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}

UNIT_SCALES: Final[Mapping[str, tuple[str, int, int]]] = {
    "ms": ("s", 1, 10**3),
    "us": ("s", 1, 10**6),
    "ns": ("s", 1, 10**9),
    "min": ("s", 60, 1),
    "h": ("s", 3600, 1),
    "d": ("s", 86400, 1),
    **_prefixed("By", {**_DECIMAL, **_BINARY}),
    **_prefixed("bit", {**_DECIMAL, **_BINARY}),
}
"""A prefixed UCUM unit code may log -> ``(base unit, numerator, denominator)``.

One logged unit is ``numerator / denominator`` of the base unit the series is
exported in (``ms`` -> ``("s", 1, 1000)``, ``GiBy`` -> ``("By", 2**30, 1)``).
Units not listed (``s``, ``By``, ``1``, ``{token}``) are exported as logged; a
power-of-ten term is scaled too (:data:`POWER_OF_TEN_LIMIT`)."""

POWER_OF_TEN_LIMIT: Final = 18
"""Largest exponent of a UCUM power-of-ten term a unit may use (``10*12{FLOP}/s``).

UCUM prefixes no annotation (``T{FLOP}`` reads as tesla), so code that logs a count
in thousands or trillions (torchtitan's and Megatron-LM's TFLOP/s) states it with the
power-of-ten unit ``10*N`` (or ``10^N``) before the annotation: ``10*12{FLOP}/s`` is
exported in ``{FLOP}/s`` with the factor 10^12 (a bare ``10*3`` in ``1``). Exponents
from ``-POWER_OF_TEN_LIMIT`` to ``POWER_OF_TEN_LIMIT`` (not 0) are exact as floats."""


def _power_of_ten(term: str) -> tuple[str, int, int] | None:
    """``10*N{annotation}`` -> ``(annotation or "1", num, den)``; ``None`` for any other term."""
    if not term.startswith(("10*", "10^")):
        return None
    digits, brace, rest = term[3:].partition("{")
    if brace and (not rest.endswith("}") or "{" in rest[:-1] or "}" in rest[:-1]):
        return None
    sign, digits = (-1, digits[1:]) if digits[:1] == "-" else (1, digits.removeprefix("+"))
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 2:
        return None
    exponent = sign * int(digits)
    if exponent == 0 or abs(exponent) > POWER_OF_TEN_LIMIT:
        return None
    base = "{" + rest if brace else "1"
    return (base, 10**exponent, 1) if exponent > 0 else (base, 1, 10**-exponent)


def _unit_terms(unit: str) -> list[str]:
    """``unit`` split into terms and the ``/`` and ``.`` between them (not inside braces)."""
    parts: list[str] = []
    start = depth = 0
    for index, char in enumerate(unit):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif char in "/." and depth == 0:
            parts += (unit[start:index], char)
            start = index + 1
    parts.append(unit[start:])
    return parts


def _gcd(first: int, second: int) -> int:
    while second:
        first, second = second, first % second
    return first


def unit_scale(unit: str) -> tuple[str, int, int]:
    """The base unit ``unit`` is exported in and the exact factor, as ``(base, num, den)``.

    Each term of a compound unit is replaced by its base unit (``ms/{token}``
    -> ``s/{token}``, factor 1/1000; a term after ``/`` divides, after ``.``
    multiplies, as UCUM reads them left to right). A unit with no prefixed term
    is its own base, factor ``1/1``. The factor is reduced.
    """
    cached = _SCALE_CACHE.get(unit)
    if cached is not None:
        return cached
    parts = _unit_terms(unit)
    numerator = denominator = 1
    divide = False
    for index, part in enumerate(parts):
        if index % 2:
            divide = part == "/"
            continue
        base, num, den = UNIT_SCALES.get(part) or _power_of_ten(part) or (part, 1, 1)
        parts[index] = base
        if divide:
            num, den = den, num
        numerator *= num
        denominator *= den
    common = _gcd(numerator, denominator)
    result = ("".join(parts), numerator // common, denominator // common)
    if len(_SCALE_CACHE) < _SCALE_CACHE_SIZE:
        _SCALE_CACHE[unit] = result
    return result


_SCALE_CACHE: dict[str, tuple[str, int, int]] = {}
_SCALE_CACHE_SIZE: Final = 4096


def scale_value(value: float, numerator: int, denominator: int) -> float:
    """``value * numerator / denominator``, correctly rounded (one rounding, not two).

    A factor ``n/1`` or ``1/d`` is one IEEE multiplication or division by an
    exactly representable int (factors here are far below 2**53); any other
    ratio divides exact integers (``int / int`` rounds correctly). A result
    beyond the float range is an infinity, as a float operation gives.
    """
    if denominator == 1:
        return value * numerator
    if numerator == 1:
        return value / denominator
    top, bottom = value.as_integer_ratio()
    try:
        return (top * numerator) / (bottom * denominator)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


# --- keys ---------------------------------------------------------------------------


PREFIX_GLUE: Final = "_"
"""A prefix that ends in this character is joined to its key as written, without ``/``:
``eval_`` and ``loss`` are logged as ``eval_loss`` (Hugging Face's ``eval_``/``train_``,
Keras's ``val_``)."""


def is_glued(prefix: str) -> bool:
    """Whether ``prefix`` (a declared prefix or pattern) joins its key without ``/``."""
    return prefix.endswith(PREFIX_GLUE)


MAX_PREFIX_CUTS: Final = 64
"""Most ``/`` (and, for glued prefixes, ``_``) a flat key is cut at, from its start: a
declared prefix has a handful of parts, and a hostile key of 20,000 parts is then split
in time and memory linear in its length (it stays whole: ``("", key)``)."""


def _cut_points(logged: str, separator: str) -> list[int]:
    """Where ``separator`` occurs in ``logged`` (not first or last), the first
    :data:`MAX_PREFIX_CUTS` only."""
    found: list[int] = []
    index = logged.find(separator, 1, len(logged) - 1)
    while index != -1 and len(found) < MAX_PREFIX_CUTS:
        found.append(index)
        index = logged.find(separator, index + 1, len(logged) - 1)
    return found


def _cuts(logged: str, glued: Callable[[str], bool] | None) -> Iterator[tuple[str, str]]:
    """Every ``(prefix, rest)`` a flat key may be cut into, the longest prefix first."""
    points = _cut_points(logged, "/")
    if glued is not None:
        points = sorted(points + _cut_points(logged, PREFIX_GLUE))
    for index in reversed(points):
        if logged[index] == "/":
            prefix = logged[:index]
            if glued is None or not glued(prefix):
                yield prefix, logged[index + 1 :]
        else:
            prefix = logged[: index + 1]
            if glued is not None and glued(prefix):
                yield prefix, logged[index + 1 :]


def split_flat_key(
    logged: str,
    routes: Callable[[str, str], object],
    literal: Callable[[str, str], bool] | None = None,
    glued: Callable[[str], bool] | None = None,
) -> tuple[str, str]:
    """``(prefix, key)`` of a key logged with its prefix inside it (``actor/pg_loss``).

    The one routing rule for a flat key, used by the tee's adapters, live-check,
    scan and infer alike. A cut is made at a ``/`` (the prefix before it), or
    after a ``_`` when ``glued(prefix)`` says a declared prefix ending in ``_``
    takes that text (``eval_loss`` -> ``("eval_", "loss")``; a ``/`` cut is
    skipped where the prefix is such a glued one); the whole key under ``""`` is
    a cut too. Among the cuts:

    1. a cut whose pair is a literal row (``literal(prefix, rest)``; the whole key
       under ``""`` first) beats every family, as a literal key beats a family;
    2. else, among the cuts under which a row *can* take the rest (``routes``
       gives the :func:`flat_rank` of the best row taking it, or ``None``; a
       family takes a key only when every capture fits its attribute), the most
       literal text wins (so ``time/critic/compute_values/total`` goes to
       ``time/critic/{critic_op}/total``, not to ``{domain}`` +
       ``critic/{advantage_kind}/{stat}``), then the longest prefix;
    3. ``("", logged)`` when no cut routes.

    ``routes`` may also answer a plain truth value (every cut then ranks alike and
    the longest prefix wins). The inverse of :func:`qualified_key`.
    """
    cuts = list(_cuts(logged, glued))
    if literal is not None:
        if literal("", logged):
            return "", logged
        for prefix, rest in cuts:
            if literal(prefix, rest):
                return prefix, rest
    best: tuple[str, str] = ("", logged)
    best_rank: Any = None
    for prefix, rest in (*cuts, ("", logged)):
        found = routes(prefix, rest)
        if not found:
            continue
        rank: Any = found if _is_rank(found) else _ANY_RANK
        glue = len(logged) - len(prefix) - len(rest)  # the cut's '/' is literal text too
        rank = (rank[0] + glue, *rank[1:])
        if best_rank is None or rank > best_rank:  # cuts come longest prefix first
            best, best_rank = (prefix, rest), rank
    return best


def flat_rank(key_rank: Specificity, prefix_rank: Specificity) -> Specificity:
    """The rank of a row taking a flat key at one cut: its key's and its prefix's
    :func:`specificity` added up (literal characters first), so cuts compare."""
    return (
        key_rank[0] + prefix_rank[0],
        key_rank[1] + prefix_rank[1],
        key_rank[2] + prefix_rank[2],
        key_rank[3] + prefix_rank[3],
        key_rank[4] + prefix_rank[4],
    )


def literal_rank(prefix: str, key: str) -> Specificity:
    """The :func:`flat_rank` of a literal row's ``(prefix, key)`` pair: all literal text."""
    return (len(prefix) + len(key), 0, 0, 0, 0)


def pair_rank(
    literal: Container[tuple[str, str]], families: SeriesMatcher, prefix: str, key: str
) -> Specificity | None:
    """The :func:`flat_rank` of the rows taking ``(prefix, key)``: a literal row's pair (in
    ``literal``), else the families' winners; ``None`` when no row takes it. What
    :func:`split_flat_key`'s ``routes`` answers, for the tee and the checkers alike."""
    if (prefix, key) in literal:
        return literal_rank(prefix, key)
    return families.rank(prefix, key) if len(families) else None


_ANY_RANK: Final = (0, 0, 0, 0, 0)


def _is_rank(found: object) -> bool:
    """Whether ``routes`` answered a :func:`flat_rank` (five ints), not a plain truth value."""
    return type(found) is tuple and len(found) == 5 and all(type(n) is int for n in found)


BACKEND_KEYS: Final = "_*"
"""Keys a tracking backend writes itself (W&B's ``_step``, ``_runtime``, ``_timestamp``):
no metric of the code's, left out by the tee, live-check, scan and infer alike."""


def bookkeeping_matches(pattern: str, logged: str) -> bool:
    """Whether ``logged`` is ``pattern``, where each ``*`` stands for any text (none too).

    The rule of a ``bookkeeping:`` entry (and of :data:`BACKEND_KEYS`), in linear time.
    """
    if "*" not in pattern:
        return pattern == logged
    parts = pattern.split("*")
    if not logged.startswith(parts[0]) or not logged.endswith(parts[-1]):
        return False
    if len(parts[0]) + len(parts[-1]) > len(logged):
        return False
    at = len(parts[0])
    end = len(logged) - len(parts[-1])
    for middle in parts[1:-1]:
        found = logged.find(middle, at, end)
        if found < 0:
            return False
        at = found + len(middle)
    return True


PREFIX_SEPARATOR: Final = "/"


def namespace_prefix(prefix: str) -> str:
    """The namespace a ``log_metrics`` prefix names: ``train/`` is ``train``.

    Some stacks pass the prefix with its separator and join it to each key as written
    (NeMo-Aligner's ``CustomLoggerWrapper``: ``f"{prefix}{key}"`` with
    ``prefix="train_rollouts/"``), so ``train/`` and ``loss`` are the key ``train/loss``,
    the key :func:`qualified_key` makes of the declared prefix ``train``. One trailing
    ``/`` is dropped; ``/`` alone, and a prefix whose rest is glued (``eval_/``, which
    is not ``eval_``), stay as given.
    """
    if len(prefix) > 1 and prefix[-1] == PREFIX_SEPARATOR:
        rest = prefix[:-1]
        if not is_glued(rest) and rest[-1] != PREFIX_SEPARATOR:
            return rest
    return prefix


def next_scheduled(every: int, phase: int, start: int) -> int | None:
    """The first step at or after ``start`` of a row logged every ``every`` steps at
    ``phase`` (the steps equal to ``phase`` modulo ``every``: ``-1`` is a 0-based loop's
    ``n-1, 2n-1, ...``); ``None`` when ``every`` is not positive (never due by step).

    The one schedule rule: live-check, emit, ``diff`` and ``metric_catalog.testing``."""
    if every <= 0:
        return None
    # Python's % is never negative for a positive divisor: a negative phase works as is.
    return start + (phase - start) % every


def is_scheduled(step: int, every: int, phase: int) -> bool:
    """Whether ``step`` is a step of the schedule ``every``/``phase`` (see above)."""
    return every > 0 and (step - phase) % every == 0


# --- rows chosen by the run's configuration ------------------------------------------


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


CHOICE_TESTS: Final = ("true", "false", "equals")
"""What a :class:`ConfigChoice` asks of its configuration value: that it is true
(``config.x``), false (``not config.x``) or equal to a literal (``config.x == "gae"``)."""


class ConfigChoice:
    """A row chosen by one value of the run's configuration: several rows may share a
    logged key when their choices exclude each other (:meth:`excludes`); the run's
    configuration then says which row the key feeds (:meth:`holds`).

    The catalog writes it as the row's ``condition`` (``config.critic.clip_value``,
    ``not config.critic.clip_value``, ``config.algorithm.adv == "gae"``);
    ``path`` holds the configuration keys (``("critic", "clip_value")``).
    """

    __slots__ = ("path", "test", "value")

    path: tuple[str, ...]
    test: str
    value: str | int | float | bool | None

    def __init__(
        self,
        path: tuple[str, ...],
        test: str,
        value: str | int | float | bool | None = None,
    ) -> None:
        if type(path) is not tuple or not path or not all(type(key) is str and key for key in path):
            msg = f"ConfigChoice path must be a non-empty tuple of keys, got {path!r}"
            raise ValueError(msg)
        if test not in CHOICE_TESTS:
            msg = f"ConfigChoice test {test!r} is not one of {', '.join(CHOICE_TESTS)}"
            raise ValueError(msg)
        if not isinstance(value, str | int | float | bool | type(None)) or (
            test != "equals" and value is not None
        ):
            msg = f"ConfigChoice value {value!r}: a str, number, bool or None, for 'equals' only"
            raise ValueError(msg)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "test", test)
        object.__setattr__(self, "value", value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ConfigChoice is immutable; {name} cannot be set")

    def _key(self) -> tuple[object, ...]:
        return (self.path, self.test, type(self.value).__name__, self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConfigChoice) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if self.test == "equals":
            return f"ConfigChoice({self.path!r}, {self.test!r}, {self.value!r})"
        return f"ConfigChoice({self.path!r}, {self.test!r})"

    def text(self) -> str:
        """The condition as the catalog writes it (``not config.critic.clip_value``)."""
        path = "config" + "".join(
            f".{key}" if key.isidentifier() else f'["{_quoted(key)}"]' for key in self.path
        )
        if self.test != "equals":
            return path if self.test == "true" else f"not {path}"
        value = self.value
        if isinstance(value, str):
            shown = f'"{_quoted(value)}"'
        elif value is None or isinstance(value, bool):
            shown = {None: "null", True: "true", False: "false"}[value]
        else:
            shown = repr(value)
        return f"{path} == {shown}"

    def holds(self, config: Mapping[str, Any] | None) -> bool | None:
        """Whether the row is chosen by ``config``; ``None`` (undecided) when there is no
        configuration or it lacks the path, as a condition over it is undecided."""
        value: Any = config
        try:
            for key in self.path:
                if not hasattr(value, "keys") or key not in value:
                    return None
                value = value[key]
            if self.test != "equals":
                return bool(value) is (self.test == "true")
            if isinstance(value, list | tuple | dict):
                return False  # a literal is a scalar: a container equals none
            return bool(value == self.value)
        except Exception:  # noqa: BLE001 - a hostile mapping or value decides nothing
            return None

    def excludes(self, other: ConfigChoice) -> bool:
        """Whether no configuration chooses both rows: the same path, tested ``true``
        against ``false``, or equal to two different literals, or to a literal whose truth
        is the opposite of the other's test."""
        if self.path != other.path:
            return False
        tests = {self.test, other.test}
        if tests == {"true", "false"}:
            return True
        if tests == {"equals"}:
            return bool(self.value != other.value)
        if "equals" in tests and len(tests) == 2:
            equal, truth = (self, other) if self.test == "equals" else (other, self)
            return bool(equal.value) is not (truth.test == "true")
        return False


def qualified_key(prefix: str, key: str) -> str:
    """The key as logging backends show it: ``prefix/key``, the bare key under ``""``.

    A prefix ending in ``_`` is joined as written (``eval_`` + ``loss`` = ``eval_loss``).
    """
    if not prefix:
        return key
    return prefix + key if is_glued(prefix) else f"{prefix}/{key}"


# --- values -------------------------------------------------------------------------


def type_accepts(kind: str, value: object) -> bool:
    """Whether ``value`` is of attribute type ``kind`` (a bool is no int or double)."""
    if kind == "string":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, int)
    return isinstance(value, (int, float))  # double


def value_fits(kind: str, values: tuple[object, ...], value: object) -> bool:
    """Whether ``value`` fits an attribute of type ``kind`` whose enum is ``values``.

    ``values`` holds the enum's values typed (``()``: an open attribute).
    """
    if not type_accepts(kind, value):
        return False
    return not values or value in values


class _Invalid:
    """The result of :func:`parse_value` for text that is no value of the type."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = _Invalid()


def parse_value(kind: str, text: str) -> object:
    """A value as the catalog writes it (a string) converted to attribute type ``kind``.

    ``"true"``/``"false"`` for a bool, an optionally signed integer for an int,
    a finite number for a double, any text for a string; :data:`INVALID` when
    ``text`` is none of those.
    """
    if kind == "string":
        return text
    if kind == "bool":
        return {"true": True, "false": False}.get(text, INVALID)
    if kind == "int":
        body = text[1:] if text[:1] == "-" else text
        return int(text) if body.isascii() and body.isdigit() else INVALID
    try:
        number = float(text)
    except ValueError:
        return INVALID
    return number if number - number == 0.0 else INVALID  # finite


# --- budgets ------------------------------------------------------------------------


def attribute_bound(
    values: int, max_cardinality: int | None, *, open_enum: bool = False
) -> int | None:
    """How many values an attribute can take, for :func:`series_limit`.

    An enum's size (``values``); an open attribute's ``max_cardinality``; an open
    enum's size plus its ``max_cardinality``, its budget of values it does not list.
    ``None``: unbounded.
    """
    if values and not open_enum:
        return values
    return None if max_cardinality is None else values + max_cardinality


def series_limit(cardinality_limit: int | None, bounds: Iterable[int | None]) -> int:
    """A series' budget of attribute sets, overflow point included.

    ``cardinality_limit`` is the row's (``None``: :data:`DEFAULT_CARDINALITY_LIMIT`);
    ``bounds`` has one entry per attribute of the row: how many values it can
    take (:func:`attribute_bound`), or ``None`` when unbounded. Each bounded
    attribute can be absent or one of its values, so the declaration bounds the
    sets to the product of
    ``bound + 1``, plus one for the overflow point; an unbounded attribute
    leaves the row's limit. The attribute-less set always holds one slot.
    """
    limit = cardinality_limit or DEFAULT_CARDINALITY_LIMIT
    product = 1
    for bound in bounds:
        if bound is None:
            return limit
        product *= bound + 1
        if product >= limit:
            return limit
    return min(limit, product + 1)


# --- patterns -----------------------------------------------------------------------


class PatternError(ValueError):
    """A logger key or prefix whose braces do not form placeholders."""


class Placeholder:
    """A ``{name}`` in a pattern: captures the value of attribute ``name``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Placeholder) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Placeholder", self.name))

    def __repr__(self) -> str:
        return f"Placeholder({self.name!r})"


if TYPE_CHECKING:
    KeyPattern: TypeAlias = tuple[str | Placeholder, ...]
"""A pattern as literal text runs (braces unescaped) and placeholders, in order."""

_PARSED: dict[str, tuple[str | Placeholder, ...] | str] = {}
_PARSED_LIMIT: Final = 1 << 14


def _parse(text: str) -> tuple[str | Placeholder, ...] | str:
    """The parts of ``text``, or the reason it is malformed."""
    if "{" not in text and "}" not in text:
        return (text,) if text else ()  # most keys: one literal run (the loop costs ~5 us)
    parts: list[str | Placeholder] = []
    literal: list[str] = []
    index, end = 0, len(text)
    while index < end:
        char = text[index]
        if char == "{":
            if text.startswith("{{", index):
                literal.append("{")
                index += 2
                continue
            close = text.find("}", index + 1)
            opener = text.find("{", index + 1)
            if close < 0 or 0 <= opener < close:
                return f"the '{{' at offset {index} has no matching '}}'"
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(Placeholder(text[index + 1 : close]))
            index = close + 1
            continue
        if char == "}":
            if text.startswith("}}", index):
                literal.append("}")
                index += 2
                continue
            return f"the '}}' at offset {index} closes no placeholder"
        literal.append(char)
        index += 1
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


def _parsed(text: str) -> tuple[str | Placeholder, ...] | str:
    found = _PARSED.get(text)
    if found is None:
        found = _parse(text)
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.clear()
        _PARSED[text] = found
    return found


def parse_pattern(text: str) -> KeyPattern:
    """``"a/{x}_s"`` -> ``("a/", Placeholder("x"), "_s")``; ``{{``/``}}`` are literal braces.

    Raises:
        PatternError: A brace that is neither doubled nor part of a ``{name}``.
    """
    found = _parsed(text)
    if isinstance(found, str):
        msg = (
            f"{text!r}: {found}; a placeholder is written {{attribute.name}}, and a "
            "literal brace is doubled ({{ or }})"
        )
        raise PatternError(msg)
    return found


def pattern_problem(text: str) -> str | None:
    """Why ``text`` is no valid pattern (unmatched braces), or ``None``."""
    found = _parsed(text)
    return found if isinstance(found, str) else None


def is_literal(text: str) -> bool:
    """Whether ``text`` holds no placeholder (a plain key or prefix)."""
    if "{" not in text and "}" not in text:
        return True
    found = _parsed(text)
    return not isinstance(found, str) and not any(isinstance(p, Placeholder) for p in found)


def literal_text(text: str) -> str:
    """The text a literal pattern matches (``{{`` and ``}}`` unescaped)."""
    if "{" not in text and "}" not in text:
        return text
    return "".join(p for p in parse_pattern(text) if isinstance(p, str))


def placeholders(text: str) -> tuple[str, ...]:
    """Attribute names of the placeholders in ``text``, in order (``()`` when malformed)."""
    if "{" not in text:
        return ()
    found = _parsed(text)
    if isinstance(found, str):
        return ()
    return tuple(p.name for p in found if isinstance(p, Placeholder))


def adjacent_placeholders(text: str) -> tuple[str, str] | None:
    """The first two placeholders with no literal text between them, if any.

    ``{a}{b}`` cannot say where ``a``'s value ends, so a pattern must separate them.
    """
    if "{" not in text:
        return None
    found = _parsed(text)
    if isinstance(found, str):
        return None
    for index in range(len(found) - 1):
        left, right = found[index], found[index + 1]
        if isinstance(left, Placeholder) and isinstance(right, Placeholder):
            return left.name, right.name
    return None


class Capture:
    """What one placeholder's attribute lets it capture.

    ``values``: an enum's values as logged text (``None``: open); ``integer``:
    an int attribute (open: an optionally signed integer; its captured text
    becomes an int); ``spans``: an open string declared to span path
    segments (else it takes exactly one segment).
    """

    __slots__ = ("integer", "spans", "values")

    def __init__(
        self,
        values: tuple[str, ...] | None = None,
        *,
        integer: bool = False,
        spans: bool = False,
    ) -> None:
        self.values = values
        self.integer = integer
        self.spans = spans

    @property
    def width(self) -> int:
        """How wide a placeholder is, narrowest first: enum 0, int 1, segment 2, spanning 3."""
        if self.values is not None:
            return 0
        if self.integer:
            return 1  # open int
        return 3 if self.spans else 2

    def __repr__(self) -> str:
        return f"Capture({self.values!r}, integer={self.integer}, spans={self.spans})"


OPEN_SEGMENT: Final = Capture()
"""An open string placeholder (one path segment); what an unknown attribute captures."""


if TYPE_CHECKING:
    Specificity: TypeAlias = tuple[int, int, int, int, int]
"""How specific a pattern is; a larger tuple wins (see :func:`specificity`)."""


def specificity(pattern: KeyPattern, captures: Mapping[str, Capture]) -> Specificity:
    """``(literal characters, -spanning, -open, -int, -enum placeholders)``: larger wins.

    A literal pattern always outranks a family matching the same text, since a
    placeholder captures at least one character.
    """
    literal = 0
    widths = [0, 0, 0, 0]
    for part in pattern:
        if isinstance(part, str):
            literal += len(part)
        else:
            widths[captures.get(part.name, OPEN_SEGMENT).width] += 1
    return (literal, -widths[3], -widths[2], -widths[1], -widths[0])


def address_rank(
    prefix: KeyPattern, key: KeyPattern, captures: Mapping[str, Capture]
) -> tuple[Specificity, Specificity]:
    """The rank of a row's ``(prefix, key)`` address: the key's specificity, then the prefix's."""
    return specificity(key, captures), specificity(prefix, captures)


class CompiledPattern:
    """A pattern compiled once: an anchored regex, its literal head and its converters.

    :meth:`match` returns the captured values (ints for an int attribute) or
    ``None``; :attr:`rank` is the pattern's :func:`specificity`.
    """

    __slots__ = ("converters", "head", "names", "rank", "regex", "template")

    def __init__(  # noqa: PLR0917 - built only by compile_pattern
        self,
        template: str,
        regex: _Regex[str],
        head: str,
        names: tuple[str, ...],
        converters: tuple[Callable[[str], Any], ...],
        rank: Specificity,
    ) -> None:
        self.template = template
        self.regex = regex
        self.head = head
        self.names = names
        self.converters = converters
        self.rank = rank

    def match(self, text: str) -> dict[str, Any] | None:
        """The captured attribute values when ``text`` matches, else ``None``."""
        found = self.regex.fullmatch(text)
        if found is None:
            return None
        try:
            return {
                name: convert(part)
                for name, convert, part in zip(
                    self.names, self.converters, found.groups(), strict=True
                )
            }
        except ValueError:  # pragma: no cover - the regex admits only what converts
            return None


def _str(text: str) -> str:
    return text


def compile_pattern(text: str, captures: Mapping[str, Capture]) -> CompiledPattern:
    """Compile ``text`` with each placeholder capturing what its :class:`Capture` allows.

    A name missing from ``captures`` captures one open segment. An enum tries
    its longer values first; open placeholders are lazy, so where a key could
    split several ways an earlier placeholder takes the shortest text. A name
    placed twice (``{domain}/scheduler/{domain}/latency``, as real code logs)
    captures once: its later places must hold the same text, else no match.

    Raises:
        PatternError: ``text`` has an unmatched brace.
    """
    import re  # noqa: PLC0415 - keeps importing vocabulary free of re

    pattern = parse_pattern(text)
    pieces: list[str] = []
    names: list[str] = []
    converters: list[Callable[[str], Any]] = []
    for part in pattern:
        if isinstance(part, str):
            pieces.append(re.escape(part))
            continue
        if part.name in names:
            # A backreference to the first place: one value, whatever the attribute.
            pieces.append(f"(?:\\{names.index(part.name) + 1})")
            continue
        capture = captures.get(part.name, OPEN_SEGMENT)
        if capture.values is not None:
            choices = sorted(capture.values, key=lambda value: (-len(value), value))
            pieces.append("(" + "|".join(re.escape(value) for value in choices) + ")")
        elif capture.integer:
            pieces.append("(-?[0-9]+)")
        elif capture.spans:
            pieces.append("(.+?)")
        else:
            pieces.append("([^/]+?)")
        names.append(part.name)
        converters.append(int if capture.integer else _str)
    head = "" if not pattern or isinstance(pattern[0], Placeholder) else pattern[0]
    regex = re.compile("".join(pieces), re.DOTALL)
    rank = specificity(pattern, captures)
    return CompiledPattern(text, regex, head, tuple(names), tuple(converters), rank)


# --- overlap: is there a text two patterns both match? ------------------------------

# A character class on an automaton edge: (chars, negated). (frozenset("a"), False)
# is the one character "a"; (frozenset("/"), True) any character but "/".
_CharClass: TypeAlias = "tuple[frozenset[str], bool]"
_ANY: Final[_CharClass] = (frozenset(), True)
_SEGMENT: Final = (frozenset("/"), True)
_DIGIT: Final = (frozenset("0123456789"), False)
_MINUS: Final = (frozenset("-"), False)
_SAMPLES: Final = "x0a_-."


def _meet(first: _CharClass, second: _CharClass) -> str | None:
    """A character both classes admit, or ``None``."""
    chars_a, negated_a = first
    chars_b, negated_b = second
    if not negated_a and not negated_b:
        common = chars_a & chars_b
    elif not negated_a:
        common = chars_a - chars_b
    elif not negated_b:
        common = chars_b - chars_a
    else:
        excluded = chars_a | chars_b
        return next((c for c in _SAMPLES if c not in excluded), None)
    return min(common) if common else None


_Automaton: TypeAlias = "tuple[list[list[tuple[_CharClass, int]]], int]"


def _automaton(pattern: KeyPattern, captures: Mapping[str, Capture]) -> _Automaton:
    states: list[list[tuple[_CharClass, int]]] = [[]]
    current = 0

    def new_state() -> int:
        states.append([])
        return len(states) - 1

    for part in pattern:
        if isinstance(part, str):
            for char in part:
                target = new_state()
                states[current].append(((frozenset(char), False), target))
                current = target
            continue
        end = new_state()
        capture = captures.get(part.name, OPEN_SEGMENT)
        if capture.values is not None:
            for value in capture.values:
                source = current
                for index, char in enumerate(value):
                    target = end if index == len(value) - 1 else new_state()
                    states[source].append(((frozenset(char), False), target))
                    source = target
        elif capture.integer:
            signed = new_state()
            states[current].append((_MINUS, signed))
            states[current].append((_DIGIT, end))
            states[signed].append((_DIGIT, end))
            states[end].append((_DIGIT, end))
        else:
            label = _ANY if capture.spans else _SEGMENT
            states[current].append((label, end))
            states[end].append((label, end))
        current = end
    return states, current


def overlap(first: KeyPattern, second: KeyPattern, captures: Mapping[str, Capture]) -> str | None:
    """A text both patterns match, or ``None`` when none does; exact, shortest first.

    Decided on the product of two small automata (one state per literal
    character, an enum value a chain of states, an open placeholder a
    looping state), so it never guesses. A name placed twice in one pattern
    is read as two independent placeholders (an automaton cannot say "the
    same text again"): then ``None`` is still exact, but a text found may be
    one the pattern refuses because its places differ, so validation errs on
    the side of reporting an overlap.
    """
    from collections import deque  # noqa: PLC0415 - codegen-only path

    states_a, final_a = _automaton(first, captures)
    states_b, final_b = _automaton(second, captures)
    start = (0, 0)
    parents: dict[tuple[int, int], tuple[tuple[int, int], str] | None] = {start: None}
    queue: deque[tuple[int, int]] = deque([start])
    while queue:
        pair = queue.popleft()
        a, b = pair
        if a == final_a and b == final_b:
            chars: list[str] = []
            step = parents[pair]
            while step is not None:
                previous, char = step
                chars.append(char)
                step = parents[previous]
            return "".join(reversed(chars))
        for label_a, target_a in states_a[a]:
            for label_b, target_b in states_b[b]:
                following = (target_a, target_b)
                if following in parents:
                    continue
                met = _meet(label_a, label_b)
                if met is None:
                    continue
                parents[following] = (pair, met)
                queue.append(following)
    return None


def capture(kind: str, values: Iterable[object] = (), *, spans: bool = False) -> Capture:
    """The :class:`Capture` of an attribute of type ``kind`` with enum ``values`` (typed or
    as written; ``()`` for an open attribute) and its ``spans_segments`` declaration."""
    texts = tuple(_as_text(value) for value in values)
    if not texts and kind == "bool":
        texts = ("true", "false")
    return Capture(texts or None, integer=kind == "int", spans=spans and not texts)


def _as_text(value: object) -> str:
    """A value as it appears inside a logged key (``true``, ``3``, ``gen``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _index_slot(key: str) -> tuple[str, str]:
    """Where a row's key pattern is indexed: ``("head", text)`` when every key it matches
    starts with that literal text, else ``("tail", text)`` when every such key ends with
    it, else ``("segment", text)`` when every such key has that whole ``/``-segment (a
    literal ``/m12/`` between placeholders), else ``("contains", text)`` when every such
    key holds that literal text somewhere (the ``_`` of ``{x}_{y}``: its longest literal
    piece), else ``("open", "")`` (only placeholders)."""
    pattern = parse_pattern(key)
    if pattern and isinstance(pattern[0], str) and pattern[0]:
        return ("head", pattern[0])
    if pattern and isinstance(pattern[-1], str) and pattern[-1]:
        return ("tail", pattern[-1])
    for part in pattern:
        if isinstance(part, str):
            inner = [segment for segment in part.split("/")[1:-1] if segment]
            if inner:
                return ("segment", max(inner, key=len))
    pieces = [part for part in pattern if isinstance(part, str) and part]
    if pieces:
        return ("contains", max(pieces, key=len))
    return ("open", "")


class MatchBudgetError(RuntimeError):
    """A :class:`MatchBudget` ran out before a logged pair was matched against every row
    that might take it: which row takes the pair is not known (never guessed)."""


class MatchBudget:
    """How many times :class:`SeriesMatcher` may try a row indexed by no literal head, tail
    or segment (a ``{x}_{y}`` family, tried against every key that holds a ``_``), shared by
    the matchers of one check: a hostile log of many distinct keys against many such
    families costs at most ``limit`` regex attempts, not their product.
    """

    __slots__ = ("limit", "spent")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """Attempts allowed in all."""
        self.spent = 0
        """Attempts made so far."""

    @property
    def exhausted(self) -> bool:
        """Whether no attempt is left."""
        return self.spent >= self.limit


class SeriesMatcher:
    """Rows addressed by a ``(prefix, key)`` pattern pair; a logged pair finds the most specific.

    :meth:`match` returns every row of the highest :func:`address_rank` whose
    prefix and key patterns both match, with the values their placeholders
    captured (prefix first). Normally one row: rows of equal rank that share a
    logged pair are a validation error, except a deprecated row and its
    replacement, which both get the key. :meth:`rank` is the winners'
    :func:`flat_rank`, what :func:`split_flat_key` compares cuts by. Results are
    cached per pair (bounded). This is the whole-catalog view of what the tee's
    per-prefix tables compute.

    A logged key is tried only against the rows that can match it: rows are indexed
    by the literal text their keys must start with (``fam12/`` of ``fam12/{x}/v``), else
    end with (``/v`` of ``{x}/v``), else hold as a whole segment (``m12`` of
    ``{x}/m12/{y}``); a key looks up each of its own heads and tails of an indexed length
    and each of its segments, so thousands of families cost lookups bounded by the key's
    length, not a scan of every row. A row with none of those is indexed by a literal text
    its keys must hold anywhere (tried only on keys that hold it), else tried on every key;
    with a :attr:`budget`, such tries are counted and, once it is spent, a pair that still
    needs one raises :class:`MatchBudgetError` instead of being matched. The rows are
    sorted once, when first matched.
    """

    __slots__ = (
        "_cache",
        "_contains",
        "_entries",
        "_head_lengths",
        "_heads",
        "_open",
        "_segments",
        "_sorted",
        "_tail_lengths",
        "_tails",
        "_unindexed",
        "budget",
        "cache_limit",
    )

    def __init__(self, cache_limit: int = 50_000) -> None:
        self._entries: list[tuple[Any, CompiledPattern, CompiledPattern, Any, tuple[str, str]]] = []
        self._cache: dict[tuple[str, str], tuple[Any, list[tuple[Any, dict[str, Any]]]]] = {}
        self._heads: dict[str, list[int]] = {}
        self._tails: dict[str, list[int]] = {}
        self._segments: dict[str, list[int]] = {}
        self._head_lengths: list[int] = []
        self._tail_lengths: list[int] = []
        self._open: list[int] = []
        self._contains: dict[str, list[int]] = {}
        self._unindexed: list[bool] = []
        self._sorted = True
        self.cache_limit = cache_limit
        """How many logged pairs are remembered at most."""
        self.budget: MatchBudget | None = None
        """Counts the tries of rows no literal head, tail or segment indexes (``None``: no
        limit, as the tee routes: its catalog is the code's own, not a hostile input)."""

    def add(self, prefix: str, key: str, captures: Mapping[str, Capture], target: Any) -> None:
        """Add the row ``target`` under the prefix pattern ``prefix`` and key pattern ``key``."""
        compiled_prefix = compile_pattern(prefix, captures)
        compiled_key = compile_pattern(key, captures)
        rank = (compiled_key.rank, compiled_prefix.rank)
        self._entries.append((rank, compiled_prefix, compiled_key, target, _index_slot(key)))
        self._sorted = False  # sorted (and indexed) once, on the next match
        self._cache.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def _index(self) -> None:
        """Sort the rows most specific first (stable: equal ranks keep their order) and
        index their positions by the literal text each key must start or end with.

        Built aside and published at once: two threads matching for the first time (a
        described TensorBoard writer used from several) build the same index, and neither
        sees a list another is sorting in place.
        """
        entries = sorted(self._entries, key=_by_rank, reverse=True)
        indexes: dict[str, dict[str, list[int]]] = {
            "head": {},
            "tail": {},
            "segment": {},
            "contains": {},
        }
        unanchored: list[int] = []
        for position, entry in enumerate(entries):
            where, text = entry[4]
            if where in indexes:
                indexes[where].setdefault(text, []).append(position)
            else:
                unanchored.append(position)
        heads, tails = indexes["head"], indexes["tail"]
        self._entries, self._heads, self._tails, self._open = entries, heads, tails, unanchored
        self._segments, self._contains = indexes["segment"], indexes["contains"]
        self._unindexed = [entry[4][0] in {"contains", "open"} for entry in entries]
        self._head_lengths = sorted({len(text) for text in heads})
        self._tail_lengths = sorted({len(text) for text in tails})
        self._sorted = True

    def match(self, prefix: str, key: str) -> list[tuple[Any, dict[str, Any]]]:
        """The most specific rows for the logged ``(prefix, key)`` and what each captured."""
        return self._found(prefix, key)[1]

    def rank(self, prefix: str, key: str) -> Specificity | None:
        """The :func:`flat_rank` of the rows :meth:`match` finds (``None``: no row takes it)."""
        return self._found(prefix, key)[0]  # type: ignore[no-any-return]

    def _found(self, prefix: str, key: str) -> tuple[Any, list[tuple[Any, dict[str, Any]]]]:
        slot = (prefix, key)
        cached = self._cache.get(slot)
        if cached is not None:
            return cached
        from heapq import merge  # noqa: PLC0415 - importing this module imports nothing

        if not self._sorted:
            self._index()
        size = len(key)
        heads = (self._heads.get(key[:n], ()) for n in self._head_lengths if n <= size)
        tails = (self._tails.get(key[size - n :], ()) for n in self._tail_lengths if n <= size)
        segments = (self._segments.get(part, ()) for part in set(key.split("/")))
        held = (rows for text, rows in self._contains.items() if text in key)
        candidates = merge(*heads, *tails, *segments, *held, self._open)
        found: list[tuple[Any, dict[str, Any]]] = []
        best: Any = None
        unindexed, budget = self._unindexed, self.budget
        for position in candidates:
            rank, compiled_prefix, compiled_key, target, _slot = self._entries[position]
            if best is not None and rank < best:
                break  # sorted by rank: nothing further can win
            if budget is not None and unindexed[position]:
                if budget.spent >= budget.limit:
                    # Skipping the row could change the winner: say so, never guess.
                    raise MatchBudgetError(f"{budget.limit} attempts spent")
                budget.spent += 1
            on_prefix = compiled_prefix.match(prefix)
            if on_prefix is None:
                continue
            on_key = compiled_key.match(key)
            if on_key is None:
                continue
            best = rank
            found.append((target, {**on_prefix, **on_key}))
        result = (None if best is None else flat_rank(*best), found)
        if len(self._cache) < self.cache_limit and len(prefix) + len(key) <= _CACHED_CHARS:
            self._cache[slot] = result
        return result


_CACHED_CHARS: Final = 4096
"""Longest logged pair :class:`SeriesMatcher` remembers: a flat key is tried at up to
:data:`MAX_PREFIX_CUTS` cuts, and a hostile key of megabytes must not be kept 64 times."""


def _by_rank(entry: tuple[Any, ...]) -> Any:
    return entry[0]
