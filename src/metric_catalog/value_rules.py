"""What a series' values may be, defined once: ranges, integers, goals and unit defaults.

A catalog row may declare the range its values lie in (``range: {min, max}``
inclusive, ``above``/``below`` exclusive, each optional), that its values are
integers (``value_type: int``) and whether bigger or smaller is better
(``goal: maximize|minimize``). A row that declares no range takes the one its
unit implies (:func:`implied_range`): a percentage lies in [0, 100]; durations,
sizes, counts and their rates are at least 0. ``range: {}`` says "unbounded".

``live-check``, ``emit``, the generated alerts and the pytest helper
(:mod:`metric_catalog.testing`) all judge values with :meth:`ValueRange.judge`,
so a value means the same wherever it is judged. Stdlib only, nothing imported
beyond builtins: the generated modules import this and stay cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy: True)
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "GOALS",
    "VALUE_TYPES",
    "ValueRange",
    "implied_range",
    "parse_bound",
    "parse_range",
    "series_range",
]

GOALS: Final[tuple[str, ...]] = ("maximize", "minimize")
"""Whether bigger (``maximize``) or smaller (``minimize``) values of a series are better."""

VALUE_TYPES: Final[tuple[str, ...]] = ("number", "int")
"""What a numeric series' values are: any number (``number``, the default) or whole
numbers (``int``). A row's ``value_type`` may also name a non-scalar kind (``table``...),
which is exported nowhere and has no range."""

# Base units (after unit_scale) whose values cannot be negative: durations, sizes,
# and their rates. Counts are UCUM annotations ({token}), also never negative.
_NON_NEGATIVE_BASES: Final = frozenset({"s", "By", "bit"})
# Units whose logged values are whole numbers (a prefixed size, GiBy, may be fractional).
_WHOLE_UNITS: Final = frozenset({"By", "bit"})


class ValueRange:
    """The range a series' values lie in, and whether they are integers.

    ``low``/``high`` are ``None`` when unbounded; ``low_open``/``high_open`` make
    a bound exclusive. Immutable and hashable; compared by what it declares.
    """

    __slots__ = ("high", "high_open", "integer", "low", "low_open")

    low: float | None
    high: float | None
    low_open: bool
    high_open: bool
    integer: bool

    def __init__(
        self,
        low: float | None = None,
        high: float | None = None,
        *,
        low_open: bool = False,
        high_open: bool = False,
        integer: bool = False,
    ) -> None:
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "low_open", low_open and low is not None)
        object.__setattr__(self, "high_open", high_open and high is not None)
        object.__setattr__(self, "integer", integer)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ValueRange is immutable; {name} cannot be set")

    def _key(self) -> tuple[object, ...]:
        return (self.low, self.high, self.low_open, self.high_open, self.integer)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ValueRange) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ValueRange({self.text()!r})"

    @property
    def bounded(self) -> bool:
        """True when a bound or the integer rule can reject a value."""
        return self.low is not None or self.high is not None or self.integer

    def judge(self, value: float) -> str | None:
        """``out_of_range``, ``not_integer`` or ``None`` (fine) for a finite ``value``."""
        low, high = self.low, self.high
        if low is not None and (value < low or (self.low_open and value == low)):
            return "out_of_range"
        if high is not None and (value > high or (self.high_open and value == high)):
            return "out_of_range"
        if self.integer and value != int(value):
            return "not_integer"
        return None

    def contains(self, value: float) -> bool:
        """True when ``value`` lies in the range (and is whole, when integers are declared)."""
        return self.judge(value) is None

    def covers(self, other: ValueRange) -> bool:
        """True when every value ``other`` allows, this range allows too."""
        if self.integer and not other.integer:
            return False
        if self.low is not None:
            if other.low is None or other.low < self.low:
                return False
            if other.low == self.low and self.low_open and not other.low_open:
                return False
        if self.high is not None:
            if other.high is None or other.high > self.high:
                return False
            if other.high == self.high and self.high_open and not other.high_open:
                return False
        return True

    def scaled(self, factor: float) -> ValueRange:
        """The range in a unit ``factor`` times larger per value (a positive factor)."""
        if factor == 1:
            return self
        return ValueRange(
            None if self.low is None else self.low * factor,
            None if self.high is None else self.high * factor,
            low_open=self.low_open,
            high_open=self.high_open,
            integer=self.integer and float(factor).is_integer(),
        )

    def text(self) -> str:
        """Interval notation: ``[0, 100]``, ``(0, +inf)``; ``integers in [0, +inf)``."""
        low = "-inf" if self.low is None else _number(self.low)
        high = "+inf" if self.high is None else _number(self.high)
        opening = "(" if self.low is None or self.low_open else "["
        closing = ")" if self.high is None or self.high_open else "]"
        interval = f"{opening}{low}, {high}{closing}"
        return f"integers in {interval}" if self.integer else interval

    def sample(self, fraction: float) -> float:
        """A value inside the range, ``fraction`` (0..1) of the way across it.

        An unbounded side is taken as 100 past the other bound (or 0): ``emit``
        plays these, so they stay readable. Integers when declared.
        """
        low = self.low if self.low is not None else (self.high - 100 if self.high else 0.0)
        high = self.high if self.high is not None else low + 100
        if high < low:
            low, high = high, low
        value = low + (high - low) * min(max(fraction, 0.0), 1.0)
        if self.integer:
            value = float(round(value))
        if not self.contains(value):
            value = self._inside(low, high)
        return value

    def _inside(self, low: float, high: float) -> float:
        """Some value inside the range: its middle, or the nearest whole number to it."""
        middle = (low + high) / 2
        if not self.integer:
            return middle
        for candidate in (round(middle), int(middle), int(middle) + 1, low, high):
            if self.contains(float(candidate)):
                return float(candidate)
        return middle


def _number(value: float) -> str:
    """A bound as written: ``0``, ``1.5``, ``1e+20``."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def parse_bound(text: str) -> float | None:
    """A bound as the catalog writes it (``"0"``, ``"-1.5"``, ``"1e-6"``); ``None``: not one.

    ``nan`` and infinities are refused: an infinite bound is no bound (leave it out).
    """
    stripped = text.strip()
    if not stripped or stripped.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return None
    if any(c not in "0123456789+-.eE" for c in stripped):
        return None
    try:
        number = float(stripped)
    except ValueError:
        return None
    return number if number - number == 0.0 else None


def _is_count(term: str) -> bool:
    return term.startswith("{") and term.endswith("}")


def implied_range(unit: str, kind: str = "gauge") -> ValueRange | None:
    """The range a unit implies when the row declares none (``None``: no default).

    ``%`` lies in [0, 100]; a duration (``s``, ``ms``, ``h``...), a size (``By``,
    ``GiBy``, ``bit``), a count (``{token}``) and a rate of them (``{token}/s``,
    ``By/s``) is at least 0, and a size in ``By`` or ``bit`` is a whole number (a
    fraction there is a prefixed size, GiB, declared in bytes). Only a ``gauge`` or
    ``histogram`` takes a default: a
    counter's or up-down counter's logged value is a step's change (a counter's
    negative one is ``counter_decrease`` already; an up-down counter's may be
    negative whatever its unit). A ratio
    (``1``) implies nothing: ``lint`` suggests one where the name says so. ``unit``
    is the unit as the catalog writes it or its base: the defaults do not depend
    on the scale.
    """
    if unit == "%":
        return ValueRange(0.0, 100.0)
    terms = unit.replace(".", "/").split("/")
    base = _base_of(terms[0])
    if kind in ("counter", "up_down_counter"):
        return None
    if unit in _WHOLE_UNITS:
        # A size in bytes (or bits) is a whole number: 38.5 declared By is GiB logged.
        return ValueRange(0.0, integer=True)
    if base in _NON_NEGATIVE_BASES or _is_count(base):
        return ValueRange(0.0)
    return None


def _base_of(term: str) -> str:
    """A term's base unit: ``ms`` -> ``s``, ``GiBy`` -> ``By``, ``10*12{FLOP}`` -> ``{FLOP}``."""
    if "{" in term:
        return term[term.index("{") :]
    for base in ("By", "bit"):
        if term.endswith(base):
            return base
    if term in ("s", "ms", "us", "ns", "min", "h", "d"):
        return "s"
    return term


def parse_range(text: str) -> ValueRange:
    """The range :meth:`ValueRange.text` wrote (``[0, 1]``, ``integers in (0, +inf)``).

    Generated row declarations carry their range this way (``value_range="[0, 1]"``).

    Raises:
        ValueError: ``text`` is not interval notation with finite or infinite bounds.
    """
    body = text.strip()
    integer = body.startswith("integers in ")
    body = body.removeprefix("integers in ").strip()
    if len(body) < 5 or body[0] not in "[(" or body[-1] not in "])" or "," not in body:
        msg = f"value range {text!r} is not interval notation such as '[0, 1]' or '(0, +inf)'"
        raise ValueError(msg)
    low_text, _, high_text = body[1:-1].partition(",")
    low = None if low_text.strip() == "-inf" else parse_bound(low_text)
    high = None if high_text.strip() == "+inf" else parse_bound(high_text)
    if (low is None and low_text.strip() != "-inf") or (
        high is None and high_text.strip() != "+inf"
    ):
        msg = f"value range {text!r} has a bound that is not a number (or -inf/+inf)"
        raise ValueError(msg)
    return ValueRange(
        low, high, low_open=body[0] == "(", high_open=body[-1] == ")", integer=integer
    )


def series_range(value_range: str, unit: str, kind: str) -> ValueRange | None:
    """The range a registered row's exported values are judged against.

    ``value_range`` is the row's declaration (``TeedMetric.value_range``, written by the
    generator in the exported unit); ``""`` takes the unit's default
    (:func:`implied_range`). ``None``: any finite number is fine.
    """
    found = parse_range(value_range) if value_range else implied_range(unit, kind)
    return found if found is not None and found.bounded else None
