"""Style and naming lints over the loaded catalog, separate from schema errors.

Every lint has one shape whatever it looks at (glean_parser's ``lint.py`` is
the model): a :class:`Rule` with a stable SCREAMING code, a severity, a
:class:`Scope` saying what its check receives (one row, one attribute, one
catalog file or the whole catalog), the field it reports at, and the check, a
small pure function that yields findings. Every rule is registered in one
table, :data:`LINTS`, by the :func:`rule` decorator; :data:`RULES` is its
row-scope part. A check's docstring says what the rule asks (first line) and
how to fix a finding (its ``Fix:`` line); the diagnostics reference page
(:mod:`codegen.codes`) shows both.

A finding is about one row or one attribute, its *target*, which silences the
rule with ``no_lint: [RULE]``. A row or attribute check yields message strings
about the object it was given; a file or catalog check yields :class:`Nit`
objects naming their target. :func:`lint_catalog` runs every rule and then
judges every ``no_lint`` entry once: a silenced rule that did not fire is
``UNUSED_NO_LINT``, a name that is no rule for that kind of object
``UNKNOWN_LINT`` (both warnings, so suppressions never go stale).

Adding a lint, of any scope, is one decorated function in this module (and a
case in ``tests/catalog/test_lints.py``). The rules follow the OpenTelemetry semantic
conventions, Prometheus ``promlint`` and glean_parser's ``glinter``.
"""

from __future__ import annotations

import contextvars
import enum
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from metric_catalog.series_rules import (
    POWER_OF_TEN_LIMIT,
    UNIT_SCALES,
    parse_pattern,
    placeholders,
    unit_scale,
)
from metric_catalog.vocabulary import METRIC_NAME_PREFIX

from .diagnostics import Diagnostic, Position, Severity
from .model import Attribute, Catalog, MetricRow
from .similar import closest
from .words import (
    CAMEL_BOUNDARY,
    DURATION_WORDS,
    PROMETHEUS_SUFFIXES,
    TYPE_WORDS,
    UNIT_SPELLINGS,
    UNIT_WORDS,
    share_word,
)

__all__ = [
    "LINTS",
    "META_RULES",
    "OTHER_ROW_CODES",
    "RULES",
    "Nit",
    "Rule",
    "Scope",
    "Target",
    "lint_attribute",
    "lint_catalog",
    "lint_row",
    "rule",
]


class Scope(enum.Enum):
    """What a rule's check receives."""

    ROW = "row"
    """One row (:class:`~codegen.catalog.model.MetricRow`); findings are about that row."""
    ATTRIBUTE = "attribute"
    """One declared attribute (:class:`~codegen.catalog.model.Attribute`); findings are about it."""
    FILE = "file"
    """One catalog file (:class:`~codegen.catalog.model.CatalogFile`); findings are
    :class:`Nit` s."""
    CATALOG = "catalog"
    """The whole catalog (:class:`~codegen.catalog.model.Catalog`); findings are :class:`Nit` s."""


Target = MetricRow | Attribute
"""What a finding is about: the object whose ``no_lint`` silences it."""


@dataclass(frozen=True, slots=True)
class Nit:
    """One finding of a file or catalog rule: its target, the message, where it points.

    ``field`` names the target's field to point at (default: the rule's);
    ``position`` overrides it (an enum value, a list item).
    """

    target: Target
    message: str
    field: str | None = None
    position: Position | None = None


Check = Callable[[Any], Iterator["str | Nit"]]
"""A rule's check: the scope's object in, findings out (strings for rows and attributes)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A lint: stable code, severity, what it looks at, the field it reports at, its check."""

    code: str
    severity: Severity
    field: str
    check: Check
    scope: Scope = Scope.ROW
    targets: type[MetricRow] | type[Attribute] = MetricRow
    """The kind of object its findings are about (and whose ``no_lint`` may name it)."""

    @property
    def summary(self) -> str:
        """What the rule asks: the first line of the check's docstring."""
        return (self.check.__doc__ or "").strip().splitlines()[0]

    @property
    def fix(self) -> str:
        """How to fix a finding: the ``Fix:`` paragraph of the check's docstring."""
        doc = " ".join((self.check.__doc__ or "").split())
        return doc.split("Fix: ", 1)[1] if "Fix: " in doc else ""


LINTS: dict[str, Rule] = {}
"""Every lint rule of every scope by code, in registration order."""


class _ScopeView(Mapping[str, Rule]):
    """The rules of :data:`LINTS` of one scope, live (rules register at import)."""

    def __init__(self, scope: Scope) -> None:
        self._scope = scope

    def _codes(self) -> list[str]:
        return [code for code, lint in LINTS.items() if lint.scope is self._scope]

    def __getitem__(self, code: str) -> Rule:
        lint = LINTS[code]
        if lint.scope is not self._scope:
            raise KeyError(code)
        return lint

    def __iter__(self) -> Iterator[str]:
        return iter(self._codes())

    def __len__(self) -> int:
        return len(self._codes())


RULES: Final[Mapping[str, Rule]] = _ScopeView(Scope.ROW)
"""The row-scope rules of :data:`LINTS` by code, in registration order."""

META_RULES: Final[dict[str, Severity]] = {
    "UNUSED_NO_LINT": Severity.WARNING,
    "UNKNOWN_LINT": Severity.WARNING,
}
"""Codes about ``no_lint`` itself; they cannot be silenced."""

_TARGET_OF: Final = {
    Scope.ROW: MetricRow,
    Scope.ATTRIBUTE: Attribute,
}


def rule(
    code: str,
    severity: Severity,
    field: str,
    *,
    scope: Scope = Scope.ROW,
    targets: type[MetricRow] | type[Attribute] | None = None,
) -> Callable[[Check], Check]:
    """Register a check in :data:`LINTS` under ``code``.

    ``targets`` is the kind of object a file or catalog rule's findings are
    about; a row or attribute rule's findings are about the object it gets.

    Raises:
        ValueError: ``code`` is registered already, or a file or catalog rule
            does not say what its findings are about.
    """
    if targets is None:
        if scope not in _TARGET_OF:
            msg = f"lint rule {code!r} of scope {scope.value} must say what it targets"
            raise ValueError(msg)
        targets = _TARGET_OF[scope]

    def register(check: Check) -> Check:
        if code in LINTS or code in META_RULES:
            msg = f"lint rule {code!r} is registered twice"
            raise ValueError(msg)
        LINTS[code] = Rule(code, severity, field, check, scope, targets)
        return check

    return register


_TOKEN_SPLIT: Final = re.compile(r"[._]").split
_WORD_FIND: Final = re.compile(r"[a-z0-9]+").findall
_UNIT_SPLIT: Final = re.compile(r"[/.](?![^{]*\})").split
# What follows the row's namespace (``rl.`` unless its file declares another).
_NAME_BODY_RE: Final = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")
_ANNOTATION_RE: Final = re.compile(r"^\{([^{}]+)\}$")
_LAST_ANNOTATION_RE: Final = re.compile(r"\{([^{}]+)\}$")
# A decimal prefix written before an annotation ('T{FLOP}'), and its power of ten.
_PREFIXED_RE: Final = re.compile(r"^[kMGTP]\{[^{}]+\}$")
_PREFIX_POWERS: Final = {"k": 3, "M": 6, "G": 9, "T": 12, "P": 15}
# Unprefixed UCUM units a metric may use; annotations and "1" are handled apart.
_BASE_UNITS: Final = frozenset({"s", "By", "bit", "Hz", "W", "J", "Cel", "K", "V", "A", "m", "g"})


# Common non-UCUM spellings and the UCUM unit for the same quantity: one table with infer.
_UNIT_FIXES: Final = UNIT_SPELLINGS
# Name components that spell a unit or a type, reserved suffixes: one table with infer.
_UNIT_WORDS: Final = UNIT_WORDS
_TYPE_WORDS: Final = TYPE_WORDS
_PROMETHEUS_SUFFIXES: Final = PROMETHEUS_SUFFIXES
_DURATION_WORDS: Final = DURATION_WORDS
_HISTOGRAM_TIME_WORDS: Final = frozenset({"time", "wait"})
_RATIO_WORDS: Final = frozenset({"ratio", "utilization", "fraction"})
# Words a description may add to the name's words and still say nothing new.
_FILLER: Final = frozenset({"the", "a", "an", "of", "in", "for", "rl", "per", "and", "value"})


# Several rules ask for the same row's words; the rules run one after another over every
# row (rule-major, so findings keep their order), so the cache holds a whole catalog's names.
_WORDS_CACHE_SIZE: Final = 1 << 16


@functools.lru_cache(maxsize=_WORDS_CACHE_SIZE)
def _tokens(name: str, namespace: str = METRIC_NAME_PREFIX) -> tuple[str, ...]:
    """The words of a series name after its namespace: split on ``.`` and ``_``, lowercase."""
    body = name.removeprefix(namespace)
    return tuple(token for token in _TOKEN_SPLIT(body.lower()) if token)


@functools.lru_cache(maxsize=_WORDS_CACHE_SIZE)
def _last_tokens(name: str) -> tuple[str, ...]:
    """The words of the name's last dot component."""
    return tuple(token for token in name.rsplit(".", 1)[-1].lower().split("_") if token)


# Word boundaries inside camelCase: one table with infer's key tokeniser.
_CAMEL_BOUNDARY: Final = CAMEL_BOUNDARY


def _suggest_name(name: str, namespace: str = METRIC_NAME_PREFIX) -> str:
    """The snake_case spelling of a name (``rl.policyEntropy`` -> ``rl.policy_entropy``)."""
    body = _CAMEL_BOUNDARY.sub("_", name.removeprefix(namespace)).lower()
    parts = [re.sub(r"_+", "_", part).strip("_") for part in body.split(".")]
    return namespace + ".".join(part for part in parts if part)


@functools.lru_cache(maxsize=1024)
def _unit_terms(unit: str) -> tuple[str, ...]:
    """A unit split into its factors (``{token}/s`` -> ``{token}``, ``s``)."""
    return tuple(term for term in _UNIT_SPLIT(unit) if term)


@rule("NAME_SYNTAX", Severity.ERROR, "name")
def _name_syntax(row: MetricRow) -> Iterator[str]:
    """Series names are their namespace (``rl.``) then lowercase dot-separated snake_case
    components.

    Fix: Write the name as the message suggests (``rl.policy_entropy``).
    """
    name = row.name
    body = name.removeprefix(row.namespace)
    ugly = [c for c in body.split(".") if c.startswith("_") or c.endswith("_") or "__" in c]
    if not name.startswith(row.namespace) or not _NAME_BODY_RE.match(body) or ugly:
        yield (
            f"series name {name!r} is not lowercase dot-separated snake_case (no leading, "
            f"trailing or doubled '_'); write it as {_suggest_name(name, row.namespace)!r}."
        )


@rule("LOGGER_KEY_REPEATS_PREFIX", Severity.WARNING, "logger_key")
def _logger_key_repeats_prefix(row: MetricRow) -> Iterator[str]:
    """The logger key does not start with its own prefix (``train/x`` under ``train``).

    Fix: Write the key as the code passes it to ``log_metrics``, without the prefix.
    """
    key = row.logger_key
    if not key or "/" not in key:
        return
    head, rest = key.split("/", 1)
    for prefix in row.prefixes:
        if not prefix:
            continue
        if key.startswith(f"{prefix}/"):
            fixed = key.removeprefix(f"{prefix}/")
        elif head == prefix.rsplit("/", 1)[-1]:
            fixed = rest
        else:
            continue
        yield (
            f"logger key {key!r} repeats its prefix {prefix!r}, so log_metrics(..., "
            f"prefix={prefix!r}) records it as '{prefix}/{key}'; write "
            f"'logger_key: {fixed}' (the key as the code passes it, without the prefix)."
        )
        return


# A logger key's characters beyond the classic set ``[A-Za-z0-9_./-]``, judged against each
# logging backend's own rule (each cited in docs/reference/catalog-format.md):
# (backend, what it does with such characters ({chars} names them), the characters it keeps).
_CLASSIC_KEY_CHARACTERS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-"
)
_BACKENDS: Final = (
    # mlflow/utils/validation.py: _VALID_PARAM_AND_METRIC_NAMES, ^[/\w.\- :]*$
    # (':' since MLflow 2.16, and not on Windows); log_metric raises.
    ("MLflow", "rejects {chars}", re.compile(r"[/\w.\- :]")),
    # TensorFlow's summary ops (tensorflow/python/ops/summary_op_util.py) and tensorboardX
    # (tensorboardX/summary.py): _clean_tag replaces [^-/\w\.] with '_'.
    ("TensorBoard (TensorFlow, tensorboardX)", "replaces {chars} with '_'", re.compile(r"[-/\w.]")),
    # W&B docs, metric naming constraints: only [_a-zA-Z0-9] names sort and filter in the UI.
    ("W&B", "cannot sort or filter keys with {chars}", re.compile(r"[_a-zA-Z0-9/.-]")),
    # prometheus/common model/metric.go, the legacy metric name rule [a-zA-Z_:][a-zA-Z0-9_:]*.
    (
        "a Prometheus metric name made from the key",
        "cannot hold {chars}",
        re.compile(r"[a-zA-Z0-9_:]"),
    ),
)


_CATALOG_ATTRIBUTES: Final[contextvars.ContextVar[Mapping[str, Attribute] | None]] = (
    contextvars.ContextVar("catalog_attributes", default=None)
)
"""The attributes of the catalog :func:`lint_catalog` is linting (a row rule judging an
enum placeholder's values reads them); ``None`` for :func:`lint_row` on a lone row."""


def _literal_text(key: str) -> str:
    """``key`` without its placeholders (what they capture is not known here), braces unescaped."""
    try:
        parts = parse_pattern(key)
    except ValueError:  # malformed braces are a validation error already
        return key
    return "".join(part for part in parts if isinstance(part, str))


def _enum_texts(key: str) -> Iterator[tuple[str, str]]:
    """``(placeholder, value)`` for each value an enum placeholder of ``key`` logs.

    Known only while :func:`lint_catalog` runs (the catalog's attributes); an open
    placeholder's text is known at run time only, so it is not judged.
    """
    attributes = _CATALOG_ATTRIBUTES.get() or {}
    for name in dict.fromkeys(placeholders(key)):
        attribute = attributes.get(name)
        domain = attribute.domain if attribute is not None and attribute.values else None
        for value in domain or ():
            yield name, value


@rule("LOGGER_KEY_BACKEND_UNSAFE", Severity.WARNING, "logger_key")
def _logger_key_backend_unsafe(row: MetricRow) -> Iterator[str]:
    """A logger key holds only characters every logging backend keeps (``[A-Za-z0-9_./-]``).

    Judged on the key's literal text and on every value of its enum placeholders
    (``{megatron.loss}`` with the value ``lm loss`` logs a space).

    Fix: The warning names each backend that would reject or rewrite the key
    (MLflow, TensorBoard, W&B, a Prometheus name made from it). Log a key without
    those characters if the run uses one of them; else keep the key as the code
    logs it and add ``no_lint: [LOGGER_KEY_BACKEND_UNSAFE]`` to the row.
    """
    key = row.logger_key
    if not key:
        return
    found = {ch for ch in _literal_text(key) if ch not in _CLASSIC_KEY_CHARACTERS}
    carriers: dict[str, list[str]] = {}  # placeholder -> its values holding such characters
    for name, value in _enum_texts(key):
        unsafe = {ch for ch in value if ch not in _CLASSIC_KEY_CHARACTERS}
        if unsafe:
            found |= unsafe
            carriers.setdefault(name, []).append(value)
    extra = sorted(found)
    if not extra:
        return
    verdicts = []
    for backend, effect, keeps in _BACKENDS:
        bad = [ch for ch in extra if not keeps.fullmatch(ch)]
        if bad:
            shown = " ".join(repr(ch) for ch in bad)
            verdicts.append(f"{backend} {effect.format(chars=shown)}")
    if not verdicts:
        return
    where = "".join(
        f" (through {{{name}}}'s values {', '.join(repr(v) for v in values[:3])}"
        f"{', ...' if len(values) > 3 else ''})"
        for name, values in carriers.items()
    )
    yield (
        f"logger key {key!r} holds {' '.join(repr(ch) for ch in extra)}{where}: "
        f"{'; '.join(verdicts)}; if the run logs to one of them, log a key without them, "
        "else add 'no_lint: [LOGGER_KEY_BACKEND_UNSAFE]' to the row."
    )


@rule("UNIT_NOT_UCUM", Severity.ERROR, "unit")
def _unit_not_ucum(row: MetricRow) -> Iterator[str]:
    """Units are UCUM (``s``, ``ms``, ``By``, ``GiBy``, ``1``, ``%``, ``{token}``, ...) or ``""``.

    A prefixed unit (``ms``, ``us``, ``min``, ``h``, ``KiBy``, ``GBy``, ``kbit``)
    states what the code logs; the series is exported in the base unit (``s``,
    ``By``, ``bit``) and the tee scales each value exactly.

    Fix: Write the UCUM spelling the message names (``ms`` for ``msec``, ``s``
    for ``sec``, ``GiBy`` for ``GiB``) or a braced count such as ``{token}``.
    """
    unit = row.declared_unit
    for term in _unit_terms(unit):
        if term in ("1", "%") or term in _BASE_UNITS or term in UNIT_SCALES:
            continue
        if unit_scale(term)[0] != term:  # a UCUM power of ten: 10*12{FLOP}
            continue
        if _ANNOTATION_RE.match(term):
            continue
        fix = _UNIT_FIXES.get(term)
        if term.startswith(("10*", "10^")):
            yield (
                f"unit {unit!r} uses {term!r}, a power of ten outside what the tee scales "
                f"exactly; write a power from 10*-{POWER_OF_TEN_LIMIT} to "
                f"10*{POWER_OF_TEN_LIMIT} (not 0), followed by at most one annotation "
                "('10*12{FLOP}')."
            )
        elif fix is not None:
            yield (
                f"unit {unit!r} uses {term!r}, which is not a UCUM unit; write {fix!r} "
                "(the code may log a prefixed unit such as 'ms' or 'GiBy': the series is "
                "exported in 's' or 'By' and the tee scales the values)."
            )
        else:
            # Braces inside the suggestion would nest ('T{FLOP}' -> '{t{flop}}', not UCUM):
            # the count is the term's text without them, a prefix kept inside ('{tflop}').
            count = term.replace("{", "").replace("}", "").lower().rstrip("s") or "count"
            # A decimal prefix on an annotation (torchtitan's 'T{FLOP}'): UCUM says it with
            # a power of ten, which the tee scales away ('10*12{FLOP}' is exported as '{FLOP}').
            power = _PREFIX_POWERS.get(term.partition("{")[0]) if _PREFIXED_RE.match(term) else None
            scaled = (
                f"'10*{power}{term[term.index('{') :]}' (a power of ten before the annotation; "
                "the series is exported in the count and the tee scales the values), "
                if power
                else ""
            )
            yield (
                f"unit {unit!r} uses {term!r}, which is not a UCUM unit; use 's', 'ms', "
                f"'By', '1', {scaled}or a braced count such as '{{{count}}}'."
            )
        return


@rule("UNIT_ANNOTATION_PLURAL", Severity.WARNING, "unit")
def _unit_annotation_plural(row: MetricRow) -> Iterator[str]:
    """Count annotations are singular: ``{token}``, not ``{tokens}``.

    Fix: Write the annotation singular: ``{token}``.
    """
    for term in _unit_terms(row.declared_unit):
        match = _LAST_ANNOTATION_RE.search(term)  # alone ({token}) or after a power of ten
        word = match.group(1) if match else ""
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            yield f"unit annotation {term!r} is plural; write it singular: '{{{word[:-1]}}}'."
            return


@rule("UNIT_IN_NAME", Severity.ERROR, "name")
def _unit_in_name(row: MetricRow) -> Iterator[str]:
    """The name does not spell a unit (``_ms``, ``_seconds``, ``_bytes``); ``unit`` does.

    Fix: Drop the unit word from the name; ``unit`` carries it.
    """
    tokens = _tokens(row.name, row.namespace)
    for index, token in enumerate(tokens):
        # "second" is also an ordinal (rl.second_stage.loss): a unit only last or after "per".
        ordinal = (
            token == "second" and index < len(tokens) - 1 and tokens[index - 1 : index] != ("per",)
        )
        if token in _UNIT_WORDS and not ordinal:
            yield (
                f"series name {row.name!r} spells the unit {token!r}; drop it from the name "
                f"and keep the unit in 'unit' (now {row.declared_unit!r})."
            )
            return


@rule("COUNTER_SUFFIX", Severity.ERROR, "name")
def _counter_suffix(row: MetricRow) -> Iterator[str]:
    """Counter names do not end in ``total`` or ``count``; the exporter appends ``_total``.

    Fix: Drop ``total``/``count`` from the counter's name; the exporter appends ``_total``.
    """
    last = _last_tokens(row.name)
    if row.kind == "counter" and last and last[-1] in ("total", "count"):
        stem = re.sub(r"[._](total|count)$", "", row.name)
        yield (
            f"counter {row.name!r} ends in {last[-1]!r}; Prometheus adds '_total' to "
            f"counters, so drop it (e.g. {stem!r})."
        )


@rule("RESERVED_SUFFIX", Severity.WARNING, "name")
def _reserved_suffix(row: MetricRow) -> Iterator[str]:
    """Only counters end in ``_total`` and only histograms in ``_bucket/_count/_sum``.

    Fix: Rename the series, e.g. ending in ``.active``, ``.size`` or ``.value``.
    """
    last = _last_tokens(row.name)
    if row.kind != "counter" and last and last[-1] in _PROMETHEUS_SUFFIXES:
        owner = "counters" if last[-1] == "total" else "histogram series"
        yield (
            f"{row.kind} {row.name!r} ends in {last[-1]!r}, a suffix Prometheus reserves for "
            f"{owner}; rename it (e.g. '.active', '.size' or '.value')."
        )


@rule("TYPE_IN_NAME", Severity.ERROR, "name")
def _type_in_name(row: MetricRow) -> Iterator[str]:
    """The name does not repeat an instrument type (counter, gauge, histogram, summary).

    Fix: Drop the type word from the name; ``kind`` says it.
    """
    for token in _tokens(row.name, row.namespace):
        if token in _TYPE_WORDS:
            yield (
                f"series name {row.name!r} contains the type word {token!r}; drop it, "
                f"'kind: {row.kind}' already says it."
            )
            return


@rule("DESCRIPTION_MISSING", Severity.ERROR, "description")
def _description_missing(row: MetricRow) -> Iterator[str]:
    """Every row says what its value means.

    Fix: Say in one sentence what the value measures.
    """
    if not row.description.strip():
        yield "description is empty; say in one sentence what the value measures."


def _sentence_problems(text: str, *, show: bool = False) -> list[str]:
    """What keeps a non-empty ``text`` from reading as a sentence (a capital, a period)."""
    problems = []
    if text[0].islower():
        shown = f" ({text[0].upper() + text[1:20]!r}...)" if show else ""
        problems.append(f"start it with a capital{shown}")
    if not text.endswith("."):
        problems.append("end it with a period")
    return problems


_TODO_RE: Final = re.compile(r"\s*TODO\b")


@rule("DESCRIPTION_TODO", Severity.ERROR, "description")
def _description_todo(row: MetricRow) -> Iterator[str]:
    """A description is not a draft's ``TODO`` (``metric-catalog infer`` writes them).

    Fix: Replace the TODO with one sentence saying what the value measures.
    """
    if _TODO_RE.match(row.description):
        yield (
            f"description of {row.name!r} is a draft's TODO ({row.description.strip()!r}); "
            "say in one sentence what the value measures before committing the row."
        )


@rule("ATTRIBUTE_DESCRIPTION_TODO", Severity.ERROR, "description", scope=Scope.ATTRIBUTE)
def _attribute_description_todo(attribute: Attribute) -> Iterator[str | Nit]:
    """An attribute's or enum value's description is not a draft's ``TODO``.

    Fix: Replace the TODO with one sentence saying what the attribute or value means.
    """
    if _TODO_RE.match(attribute.description):
        yield f"description of attribute {attribute.name!r} is a draft's TODO; say what it means."
    for value in attribute.values:
        if _TODO_RE.match(value.description):
            yield Nit(
                attribute,
                f"description of value {value.value!r} of attribute {attribute.name!r} is a "
                "draft's TODO; say what the value means.",
                position=value.position,
            )


@rule("DESCRIPTION_FORMAT", Severity.WARNING, "description")
def _description_format(row: MetricRow) -> Iterator[str]:
    """Descriptions are sentences: they start upper-case and end with a period.

    Fix: Start the description with a capital letter and end it with a period.
    """
    text = row.description.strip()
    problems = _sentence_problems(text, show=True) if text else []
    if problems:
        yield f"description is not a sentence; {' and '.join(problems)}."


@rule("DESCRIPTION_REPEATS_NAME", Severity.WARNING, "description")
def _description_repeats_name(row: MetricRow) -> Iterator[str]:
    """The description tells more than the name does.

    Fix: Say what is measured, over what, and when it is recorded.
    """
    words = set(_WORD_FIND(row.description.lower())) - _FILLER
    if words and words <= set(_tokens(row.name, row.namespace)):
        yield (
            f"description {row.description!r} only repeats the name {row.name!r}; say what "
            "is measured, over what, and when it is recorded."
        )


@rule("DURATION_UNIT", Severity.ERROR, "unit")
def _duration_unit(row: MetricRow) -> Iterator[str]:
    """Durations (``.duration``, ``.latency``, histograms of ``time``) are exported in ``s``.

    A time unit the code logs (``ms``, ``us``, ``min``) is fine: it is exported in ``s``.

    Fix: Use a time unit: ``s``, or the one the code logs (``ms``, ``us``, ``min``).
    """
    last = _last_tokens(row.name)
    word = last[-1] if last else ""
    is_duration = word in _DURATION_WORDS or (
        row.kind == "histogram" and word in _HISTOGRAM_TIME_WORDS
    )
    if is_duration and row.unit != "s":
        yield (
            f"{row.name!r} is a duration but its unit is {row.declared_unit!r}; use unit "
            "'s', or the time unit the code logs ('ms', 'us', 'min')."
        )


@rule("RATIO_UNIT", Severity.WARNING, "unit")
def _ratio_unit(row: MetricRow) -> Iterator[str]:
    """Ratios and utilizations are dimensionless: unit ``1`` (``%`` when the code logs percent).

    Fix: Use unit ``"1"`` for a fraction between 0 and 1, or ``"%"`` if the code logs percent.
    """
    last = _last_tokens(row.name)
    # `unit` states what the code logs: a utilization logged in percent is still a ratio.
    if last and last[-1] in _RATIO_WORDS and row.unit not in ("1", "%"):
        yield (
            f'{row.name!r} is a {last[-1]} but its unit is {row.unit!r}; use unit "1" for a '
            'fraction between 0 and 1, or "%" if the code logs percent.'
        )


@rule("RANGE_SUGGESTED", Severity.WARNING, "unit")
def _range_suggested(row: MetricRow) -> Iterator[str]:
    """A ratio, fraction or rate in unit ``1`` declares the range its values lie in.

    A value logged in percent under unit ``1`` (38.2 for 38.2 %) then shows in
    live-check as ``out_of_range`` (without one, live-check guesses [0, 1] from the name:
    ``unit_suspect``). A learning rate is no share: it is left alone. The words are
    :data:`~codegen.catalog.words.SHARE_WORDS`.

    Fix: Add ``range: {min: "0", max: "1"}`` (or the row's real range), or ``range: {}``
    when it is unbounded.
    """
    if row.declared_unit != "1" or row.declared_range is not None:
        return
    hit = share_word(_tokens(row.name, row.namespace))
    if hit is not None:
        yield (
            f"{row.name!r} is a share by its name ({hit!r}) in unit '1' but declares no "
            "range, so live-check can only guess one from its name (a count there passes); add "
            'range: {min: "0", '
            'max: "1"} for a share, range: {min: "0"} for a quotient such as an importance '
            "ratio, or range: {} when unbounded."
        )


# --- rules about one declared attribute ------------------------------------------------------
#
# Attribute names follow the OpenTelemetry semantic-convention syntax, must not
# take a label Prometheus reserves or the SDK's ``otel.`` namespace, and every
# attribute and enum value says what it means in a sentence.

_ATTRIBUTE_NAME_RE: Final = re.compile(r"^[a-z][a-z0-9]*([._][a-z0-9]+)*$")
_RESERVED_LABELS: Final = frozenset({"le", "quantile", "job", "instance"})


@rule("ATTRIBUTE_NAME_SYNTAX", Severity.ERROR, "name", scope=Scope.ATTRIBUTE)
def _attribute_name_syntax(attribute: Attribute) -> Iterator[str]:
    """Attribute names are lowercase dot-separated snake_case, no doubled separators.

    Fix: Write the name as the message suggests (``rl.setup.phase``).
    """
    if not _ATTRIBUTE_NAME_RE.match(attribute.name):
        fixed = re.sub(r"[._]{2,}", "_", attribute.name).strip("._")
        yield (
            f"attribute name {attribute.name!r} is not lowercase dot-separated snake_case "
            f"(no doubled, leading or trailing '_' or '.'); write it as {fixed!r}."
        )


@rule("ATTRIBUTE_RESERVED", Severity.ERROR, "name", scope=Scope.ATTRIBUTE)
def _attribute_reserved(attribute: Attribute) -> Iterator[str]:
    """Names Prometheus or the SDK own: ``le``, ``quantile``, ``job``, ``instance``, ``otel.*``.

    Fix: Namespace the attribute, e.g. ``rl.instance``.
    """
    if attribute.label in _RESERVED_LABELS or attribute.name.startswith("otel."):
        yield (
            f"attribute {attribute.name!r} takes a name Prometheus or the OpenTelemetry SDK "
            "reserves; namespace it (e.g. 'rl." + attribute.name.removeprefix("otel.") + "')."
        )


def _sentence(text: str) -> str | None:
    """Why ``text`` is not a one-sentence description, or ``None``."""
    text = text.strip()
    if not text:
        return "it is empty; say in one sentence what it means"
    return " and ".join(_sentence_problems(text)) or None


@rule("ATTRIBUTE_DESCRIPTION_FORMAT", Severity.WARNING, "description", scope=Scope.ATTRIBUTE)
def _attribute_description_format(attribute: Attribute) -> Iterator[str | Nit]:
    """Attribute and enum-value descriptions are sentences (capital, period).

    Fix: Start the description with a capital letter and end it with a period.
    """
    problem = _sentence(attribute.description)
    if problem:
        yield f"description of attribute {attribute.name!r} is not a sentence; {problem}."
    for value in attribute.values:
        problem = _sentence(value.description)
        if problem:
            yield Nit(
                attribute,
                f"description of value {value.value!r} of attribute {attribute.name!r} is "
                f"not a sentence; {problem}.",
                position=value.position,
            )


# --- rules about the whole catalog --------------------------------------------------------


_SEPARATORS: Final = re.compile(r"[._\-]+")


def _similarity_key(name: str) -> str:
    """A name without case, separators or plural ``s``: ``rl.Rewards_Mean`` -> ``rlrewardmean``."""
    words = _SEPARATORS.split(name.lower())
    return "".join(
        word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
        for word in words
    )


def _clash(one: MetricRow, other: MetricRow) -> bool:
    """Whether two rows' names already clash as an error (see :mod:`codegen.catalog.crossfile`)."""
    return (
        one.name.lower() == other.name.lower()
        or one.registry_key == other.registry_key
        or one.constant_name == other.constant_name
    )


@rule("NAME_TOO_SIMILAR", Severity.WARNING, "name", scope=Scope.CATALOG, targets=MetricRow)
def _name_too_similar(catalog: Catalog) -> Iterator[Nit]:
    """Series names differ by more than case, separators or a plural ``s``.

    Fix: Rename one of the two series so the difference is in a word, or add
    ``no_lint: [NAME_TOO_SIMILAR]`` to the later row when both names are meant.
    """
    first: dict[str, MetricRow] = {}
    for _file, row in catalog.rows():
        key = _similarity_key(row.name)
        earlier = first.setdefault(key, row)
        # Names equal but for case, or for '.' against '_', are errors already
        # (DUPLICATE_NAME, DUPLICATE_REGISTRY_KEY, DUPLICATE_CONSTANT).
        if earlier is row or _clash(earlier, row):
            continue
        yield Nit(
            row,
            f"series name {row.name!r} differs from {earlier.name!r} (at "
            f"{earlier.where('name')}) only in separators, a plural 's' or case, so the two "
            "are easy to mix up in queries; rename one, or add 'no_lint: [NAME_TOO_SIMILAR]' "
            "if both are meant.",
        )


OTHER_ROW_CODES: Final = frozenset({"SCAN_UNLOGGED", "SCAN_UNRESOLVED"})
"""Codes of other commands a row's ``no_lint`` may silence (``scan`` honours them there).

``SCAN_UNLOGGED``: no scanned code logs the row (it is logged by code not scanned);
``SCAN_UNRESOLVED``: a key with unknown parts that may stand for the row. Lint never
fires them, so it does not call such an entry unused.
"""


# --- running the rules and judging no_lint, once for every scope ---------------------------


def _subjects(scope: Scope, catalog: Catalog, rows: list[MetricRow]) -> Iterable[object]:
    """The objects a rule of ``scope`` is run on (``rows``: the catalog's, listed once)."""
    match scope:
        case Scope.ROW:
            return rows
        case Scope.ATTRIBUTE:
            return (attribute for file in catalog.files for attribute in file.attributes)
        case Scope.FILE:
            return catalog.files
        case Scope.CATALOG:
            return (catalog,)


def _run(
    lint: Rule, subject: object, findings: Iterable[str | Nit]
) -> Iterator[tuple[Target, str, Position]]:
    """``(target, message, position)`` of each of ``findings`` of ``lint`` on ``subject``."""
    for found in findings:
        if isinstance(found, str):
            if not isinstance(subject, MetricRow | Attribute):
                msg = f"lint rule {lint.code!r} must yield Nit findings, not strings"
                raise TypeError(msg)
            yield subject, found, subject.where(lint.field)
        else:
            where = found.position or found.target.where(found.field or lint.field)
            yield found.target, found.message, where


def _lint(
    rules: Iterable[Rule], subjects: Callable[[Scope], Iterable[object]], targets: Iterable[Target]
) -> list[Diagnostic]:
    """Run ``rules`` on their subjects, honour each target's ``no_lint``, then judge it."""
    found: list[Diagnostic] = []
    ran: set[str] = set()
    fired: dict[int, set[str]] = {}
    for lint in rules:
        ran.add(lint.code)
        check = lint.check
        for subject in subjects(lint.scope):
            # Most checks find nothing: peek at the first finding before building _run's
            # generator (160,000 of them at 10,000 rows otherwise).
            findings = check(subject)
            first = next(findings, None)
            if first is None:
                continue
            for target, message, where in _run(lint, subject, itertools.chain((first,), findings)):
                fired.setdefault(id(target), set()).add(lint.code)
                if lint.code not in target.no_lint:
                    found.append(Diagnostic(lint.code, lint.severity, message, where))
    for target in targets:
        if target.no_lint:
            found.extend(_judge_no_lint(target, fired.get(id(target), set()), ran))
    return found


def _judge_no_lint(target: Target, fired: set[str], ran: set[str]) -> Iterator[Diagnostic]:
    """``UNKNOWN_LINT`` and ``UNUSED_NO_LINT`` for the ``no_lint`` entries of ``target``."""
    kind = type(target)
    what = "attribute" if kind is Attribute else "series"
    known = [code for code, lint in LINTS.items() if lint.targets is kind]
    if kind is MetricRow:
        known += sorted(OTHER_ROW_CODES)
    for index, code in enumerate(target.no_lint):
        where = target.positions.get(f"no_lint[{index}]", target.where("no_lint"))
        if code not in known:
            close = closest(code, known)
            fix = f"did you mean {close!r}?" if close else "remove it."
            rules_of = "an attribute lint rule" if kind is Attribute else "a lint rule"
            message = f"no_lint names {code!r}, which is not {rules_of}; {fix}"
            yield Diagnostic("UNKNOWN_LINT", META_RULES["UNKNOWN_LINT"], message, where)
        elif code in ran and code not in fired:
            message = (
                f"no_lint silences {code!r}, but {what} {target.name!r} does not trigger it; "
                "remove the entry."
            )
            yield Diagnostic("UNUSED_NO_LINT", META_RULES["UNUSED_NO_LINT"], message, where)


def lint_row(row: MetricRow) -> list[Diagnostic]:
    """The row-scope findings for one row, honouring and checking its ``no_lint``.

    Entries naming a catalog-scope rule are left to :func:`lint_catalog`, which
    knows whether that rule fired.
    """
    return _lint(RULES.values(), lambda _scope: (row,), (row,))


def lint_attribute(attribute: Attribute) -> list[Diagnostic]:
    """The attribute-scope findings for one attribute, honouring and checking its ``no_lint``."""
    rules = [lint for lint in LINTS.values() if lint.scope is Scope.ATTRIBUTE]
    return _lint(rules, lambda _scope: (attribute,), (attribute,))


def lint_catalog(catalog: Catalog) -> list[Diagnostic]:
    """Every rule of every scope over the catalog, and every ``no_lint`` entry judged once.

    Row rules may read the catalog's declared attributes meanwhile (an enum
    placeholder's values, :data:`_CATALOG_ATTRIBUTES`); :func:`lint_row` alone has none.
    """
    rows = [row for _file, row in catalog.rows()]
    targets: list[Target] = [*rows]
    targets += [attribute for file in catalog.files for attribute in file.attributes]
    token = _CATALOG_ATTRIBUTES.set(catalog.attributes())
    try:
        return _lint(LINTS.values(), lambda scope: _subjects(scope, catalog, rows), targets)
    finally:
        _CATALOG_ATTRIBUTES.reset(token)
