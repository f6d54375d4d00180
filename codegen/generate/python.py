"""Typed registration modules, one per catalog file: ``src/metric_catalog/generated/<module>.py``.

Each module holds one ``Final`` :class:`~metric_catalog.vocabulary.TeedMetric` or
:class:`~metric_catalog.vocabulary.RecordedMetric` constant per row, a ``*_KEY``
constant per teed row (so owners build their metrics dicts from names mypy can
check), ``TEED``/``RECORDED`` tuples in declaration order, and the registration
calls, which run when the owner imports its module.

The output is meant to be byte-stable under ``ruff format``: the template lays
code out the way ruff would, and :func:`py_str` and :func:`py_kwarg` pick
quotes, escapes and line splits the way ruff does. Text from YAML only ever
reaches the module through those helpers, never pasted raw.
"""

from __future__ import annotations

import functools
import json
import keyword
import re
import types
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

import jinja2
import jinja2.runtime

from metric_catalog.series_rules import ConfigChoice
from metric_catalog.value_rules import ValueRange
from metric_catalog.vocabulary import METRIC_NAME_PREFIX

from ..catalog.diagnostics import Diagnostic, Severity
from ..catalog.model import (
    Attribute,
    AttributeRef,
    Catalog,
    CatalogFile,
    Derivation,
    MetricRow,
)
from ..catalog.precedence import row_choice
from ..config import Config
from .names import PACKAGE, Claim, name_clashes, own_names
from .templating import render, sandboxed_environment
from .writer import marker_line

__all__ = [
    "LINE_LENGTH",
    "generated_names",
    "make_environment",
    "module_name_diagnostics",
    "module_names",
    "py_assign",
    "py_docstring",
    "py_kwarg",
    "py_str",
    "py_tuple",
    "python_name_diagnostics",
    "render_python_module",
    "render_python_modules",
    "render_rows",
    "value_range_text",
]


LINE_LENGTH: Final = 100
"""ruff's ``line-length`` in pyproject.toml; layout decisions are made against it."""

_INDENT: Final = 4
# Docstrings are wrapped well inside the limit: ruff never reflows them, and the
# width estimate for non-ASCII text is only an estimate.
_DOC_WIDTH: Final = 88
_MODULE_NAME: Final = re.compile(r"[a-z][a-z0-9_]*\Z")
_SIMPLE_ESCAPES: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(char: str, quote: str) -> str:
    """One character as it may appear inside an ASCII-only Python string literal."""
    if char in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[char]
    if char == quote:
        return "\\" + char
    code = ord(char)
    if 0x20 <= code < 0x7F:
        return char
    # Lower-case hex, as repr() writes it and ruff leaves it.
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _quote_for(text: str) -> str:
    """The quote ruff prefers: double, unless the text holds more double quotes than single."""
    return "'" if text.count('"') > text.count("'") else '"'


def _escape(text: str, quote: str) -> str:
    if text.isascii() and text.isprintable() and "\\" not in text and quote not in text:
        return text  # the common case, and the hot path at 10k rows
    return "".join(_escape_char(char, quote) for char in text)


def py_str(text: str) -> str:
    """A Python string literal whose value is ``text``, in the form ``ruff format`` keeps.

    The literal is ASCII-only (other characters become ``\\x``/``\\u``/``\\U``
    escapes), so its width is its length and no layout decision can disagree
    with ruff's Unicode width tables.
    """
    if '"' not in text and "\\" not in text and text.isascii() and text.isprintable():
        return f'"{text}"'  # the common case: double quotes, nothing to escape
    quote = _quote_for(text)
    return f"{quote}{_escape(text, quote)}{quote}"


def _worst_len(char: str) -> int:
    """Escaped length of ``char`` whichever quote its piece ends up using."""
    return 2 if char in "'\"" else len(_escape_char(char, '"'))


def _chunks(text: str, budget: int) -> list[str]:
    """Split ``text`` into literals of at most ``budget`` characters inside the quotes.

    Breaks after whitespace when it can (each word keeps its trailing space, so
    the pieces join back to the text), otherwise mid-word, never inside an
    escape. ruff picks quotes per piece, so each piece gets its own.
    """
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for word in re.findall(r"\S*\s*", text):
        size = sum(_worst_len(char) for char in word)
        if current and used + size > budget:
            pieces.append("".join(current))
            current, used = [], 0
        if size <= budget:
            current.append(word)
            used += size
            continue
        for char in word:  # a word longer than a line: cut it
            step = _worst_len(char)
            if used + step > budget:
                pieces.append("".join(current))
                current, used = [], 0
            current.append(char)
            used += step
    if current or not pieces:
        pieces.append("".join(current))
    return [py_str(piece) for piece in pieces]


def py_kwarg(name: str, value: str, indent: int = _INDENT) -> str:
    """A ``name=value,`` keyword argument line (or lines) for a string value, laid out as ruff does.

    ruff never splits a string, but it joins an implicit concatenation whenever
    the joined string fits, so: one line if it fits, else the string alone in
    parentheses if that fits, else pieces that each fit and together do not.
    """
    pad = " " * indent
    literal = py_str(value)
    flat = f"{pad}{name}={literal},"
    if len(flat) <= LINE_LENGTH:
        return flat
    inner = " " * (indent + _INDENT)
    if len(inner) + len(literal) <= LINE_LENGTH:
        return f"{pad}{name}=(\n{inner}{literal}\n{pad}),"
    pieces = _chunks(value, LINE_LENGTH - len(inner) - 2)
    body = "\n".join(f"{inner}{piece}" for piece in pieces)
    return f"{pad}{name}=(\n{body}\n{pad}),"


def py_assign(target: str, value: str) -> str:
    """``target: Final = "value"``, parenthesized when that is what makes it fit, as ruff does."""
    literal = py_str(value)
    flat = f"{target}: Final = {literal}"
    head = f"{target}: Final = ("
    inner = " " * _INDENT + literal
    if len(flat) > LINE_LENGTH and len(head) <= LINE_LENGTH and len(inner) <= LINE_LENGTH:
        return f"{head}\n{inner}\n)"
    if _display_width(flat) > LINE_LENGTH:
        # A string no layout fits (a long key under its prefix): ruff format keeps it flat,
        # so the generated module says the long line is meant.
        return f"{flat}  # noqa: E501"
    return flat


def py_tuple(target: str, item_type: str, names: Sequence[str]) -> str:
    """``target: Final[tuple[item_type, ...]] = (...)``, one name a line, as ruff lays it out.

    Two or more items end in a trailing comma, which ruff treats as "keep
    expanded"; a lone item's comma is part of the tuple syntax, so ruff
    collapses it onto one line when it fits.
    """
    head = f"{target}: Final[tuple[{item_type}, ...]] = "
    if not names:
        return head + "()"
    if len(names) == 1 and len(f"{head}({names[0]},)") <= LINE_LENGTH:
        return f"{head}({names[0]},)"
    body = "".join(f"{' ' * _INDENT}{name},\n" for name in names)
    return f"{head}(\n{body})"


def _display_width(text: str) -> int:
    """Approximate terminal width, as ruff measures line length (wide CJK counts 2)."""
    if text.isascii():
        return len(text)
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in "WF" else 1
    return width


def _escape_doc(text: str) -> str:
    """Text made safe inside a triple-double-quoted docstring, whitespace already collapsed."""
    if text.isascii() and text.isprintable() and "\\" not in text and '"' not in text:
        return text
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == '"':
            # Escaping every quote rules out both an early ``"""`` and a closing ``""""``.
            out.append('\\"')
        elif char.isprintable():
            out.append(char)
        else:
            out.append(_escape_char(char, '"'))
    return "".join(out)


def _wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap by display width; words never break (ruff ignores one-word lines)."""
    if _display_width(text) <= width:
        # The whole text fits (its width counts every gap as at least one column),
        # so the loop below would put every word on one line.
        words = text.split()
        return [" ".join(words)] if words else []
    lines: list[str] = []
    current: list[str] = []
    used = 0
    for word in text.split():
        size = _display_width(word)
        if current and used + 1 + size > width:
            lines.append(" ".join(current))
            current, used = [], 0
        used += size + (1 if current else 0)
        current.append(word)
    if current:
        lines.append(" ".join(current))
    return lines


def py_docstring(paragraphs: Iterable[str], indent: int = 0) -> str:
    """A complete ``\"\"\"...\"\"\"`` docstring from plain-text paragraphs.

    Whitespace in each paragraph collapses to single spaces and lines wrap at
    ~88 columns; backslashes, quotes and unprintable characters are escaped, so
    the docstring's value reads as the text and nothing in the text can end it.
    A paragraph holding newlines already (``"Kind: gauge\\nUnit: s"``) keeps them.
    """
    pad = " " * indent
    width = _DOC_WIDTH - indent
    blocks: list[list[str]] = []
    for paragraph in paragraphs:
        lines: list[str] = []
        for raw_line in paragraph.split("\n"):
            # Prose: any run of whitespace (tabs, \r, U+2028) reads as one space.
            text = _escape_doc(" ".join(raw_line.split()))
            if len(text) <= width and text.isascii():
                lines.append(text)  # fits (ASCII: a character a column): _wrap's own answer
            else:
                lines.extend(_wrap(text, width) or [""])
        while lines and not lines[-1]:
            lines.pop()
        while lines and not lines[0]:
            lines.pop(0)
        if lines:
            blocks.append(lines)
    if not blocks:
        return f'{pad}"""."""'
    flat = [line for block in blocks for line in [*block, ""]][:-1]
    if len(flat) == 1:
        single = f'{pad}"""{flat[0]}"""'
        if _display_width(single) <= LINE_LENGTH:
            return single
    body = "\n".join(f"{pad}{line}" if line else "" for line in flat[1:])
    return f'{pad}"""{flat[0]}\n{body}\n{pad}"""' if body else f'{pad}"""{flat[0]}\n{pad}"""'


def _row_doc(row: MetricRow) -> list[str]:
    unit = row.unit or "(dimensionless)"
    if row.logged_unit:
        unit = f"{unit} (logged in {row.logged_unit}, scaled by the tee)"
    facts = [f"Kind: {row.kind}", f"Unit: {unit}"]
    if row.logger_key is not None:
        # The whole key first (what a flat-dict logger writes, <CONSTANT>_LOGGED_KEY), then
        # the parts log_metrics takes, so neither reads as the other (<CONSTANT>_KEY).
        facts.append(f"Logged key: {row.qualified_logger_key}")
        if row.prefix:
            facts.append(f"Logger key: {row.logger_key} (under prefix {row.prefix})")
    if row.other_prefixes:
        facts.append("Also under prefixes: " + ", ".join(map(_prefix_text, row.other_prefixes)))
    if row.attributes:
        facts.append("Attributes: " + ", ".join(_attribute_note(a) for a in row.attributes))
    facts.append(f"Stability: {row.stability}")
    paragraphs = [row.description, "\n".join(facts)]
    if row.deprecated is not None:
        dep = row.deprecated
        head = f"Deprecated: use {dep.replaced_by}" if dep.replaced_by else "Deprecated"
        tail = [f"(since {dep.since})." if dep.since else "", dep.note]
        paragraphs.append(" ".join(part for part in [head, *tail] if part))
    return paragraphs


_DIGIT_RUN: Final = re.compile(r"[0-9]+")


def _encode_run(match: re.Match[str]) -> str:
    run = match.group()
    # A lead byte below every identifier character puts runs first; a trailing
    # \x01 (below every digit) makes a run that ends sort before one that goes on.
    if run.startswith("0"):
        return f"0{run}\x01"  # left-aligned: plain digit order
    return f"1{chr(0x100 + len(run))}{run}\x01"  # right-aligned: length, then digits


def _all_order(name: str) -> tuple[int, str]:
    """Sort key for ``__all__`` giving exactly ruff's RUF022 order.

    ruff sorts constants, then classes (a one-letter ``X`` counts as one), then
    the rest, each by the ``natord`` crate (Martin Pool's strnatcmp): digit
    runs compare as numbers (``N2 < N10``), but a run starting with ``0``
    compares left-aligned, digit by digit (``N015 < N12``). The key rewrites
    each digit run so plain string order is that order.
    """
    if len(name) > 1 and name.upper() == name and name.lower() != name:
        category = 0
    elif name[:1].isupper():
        category = 1
    else:
        category = 2
    return category, _DIGIT_RUN.sub(_encode_run, name)


def _key_constant(row: MetricRow) -> str:
    return f"{row.constant_name}_KEY"


def _logged_key_constant(row: MetricRow) -> str:
    return f"{row.constant_name}_LOGGED_KEY"


def _logged_key_doc(row: MetricRow) -> str:
    """The docstring text of a teed row's ``<CONSTANT>_LOGGED_KEY``."""
    return (
        f"Whole logged key of {row.constant_name} (prefix and logger key joined): the key of "
        "its value in a flat dict handed to wandb.log, tee_flat or TrackingTee."
    )


def _key_doc(row: MetricRow) -> str:
    """The docstring text of a teed row's ``<CONSTANT>_KEY``."""
    if row.prefix:
        return f"Logger key of {row.constant_name}; log its value under prefix {row.prefix}."
    # "under prefix the empty prefix" read as garbled English in every bare row's docstring.
    return f"Logger key of {row.constant_name}; log its value bare, under the empty prefix."


# --- the pieces templates/python/_rows.j2 lays rows out from ---------------------------------
# The row layout is the macros of python/_rows.j2 and nothing else (a project may replace that
# file to restyle rows); these helpers format one field each, the template orders them.


# --- attributes -----------------------------------------------------------------------


def _py_value(attribute: Attribute, text: str) -> str:
    """An enum value as a Python literal of the attribute's type."""
    return str(int(text)) if attribute.type == "int" else py_str(text)


def _prefix_text(prefix: str) -> str:
    """A prefix as a docstring names it: the empty prefix is logged bare, not absent."""
    return prefix or "the empty prefix (the key is logged bare)"


def _attribute_note(ref: AttributeRef) -> str:
    """``name (level)``, or ``name (level, derived from source)`` for a derived attribute."""
    if ref.derive is None:
        return f"{ref.name} ({ref.requirement_level})"
    return f"{ref.name} ({ref.requirement_level}, derived from {ref.derive.source})"


def _py_typed(attribute: Attribute, text: str) -> str:
    """A value as written in the catalog, as a Python literal of the attribute's type."""
    if attribute.type == "bool":
        return "True" if text == "true" else "False"
    if attribute.type == "double":
        return repr(float(text))
    return _py_value(attribute, text)


def _py_items(items: Sequence[str], indent: int) -> str:
    """``(a, b, ...)`` as ruff lays it out at ``indent``: one item flat, more one per line.

    Two or more items end in a magic trailing comma, which ruff keeps expanded.
    """
    pad = " " * indent
    if len(items) == 1:
        return f"({items[0]},)"
    body = "".join(f"{pad}{' ' * _INDENT}{item},\n" for item in items)
    return f"(\n{body}{pad})"


def _tuple_kwarg(name: str, items: Sequence[str], indent: int) -> str:
    pad = " " * indent
    flat = f"{pad}{name}={_py_items(items, indent)},"
    if len(items) == 1 and len(flat) > LINE_LENGTH:
        inner = " " * (indent + _INDENT)
        return f"{pad}{name}=(\n{inner}{items[0]},\n{pad}),"
    return flat


def _attribute_call(ref: AttributeRef, attributes: Mapping[str, Attribute], indent: int) -> str:
    """One ``MetricAttribute(...)`` argument, every field on its own line (an enum cut to
    the row's ``values``: the tee then drops a value outside them)."""
    attribute = attributes.get(ref.name)
    if attribute is not None:
        attribute = ref.narrow(attribute)
    pad = " " * indent
    inner = indent + _INDENT
    lines = [f"{pad}MetricAttribute(", py_kwarg("name", ref.name, inner)]
    if attribute is not None:
        if attribute.type != "string":
            lines.append(py_kwarg("type", attribute.type, inner))
        if attribute.values:
            values = [_py_value(attribute, v.value) for v in attribute.values]
            lines.append(_tuple_kwarg("values", values, inner))
        if attribute.max_cardinality is not None:
            lines.append(f"{' ' * inner}max_cardinality={attribute.max_cardinality},")
        if attribute.spans_segments:
            lines.append(f"{' ' * inner}spans_segments=True,")
        if attribute.open_enum:
            lines.append(f"{' ' * inner}open_enum=True,")
    lines.append(py_kwarg("requirement", ref.requirement_level, inner))
    source = attributes.get(ref.derive.source) if ref.derive is not None else None
    if ref.derive is not None and attribute is not None and source is not None:
        lines.extend(_derivation_kwargs(ref.derive, source, attribute, inner))
    lines.append(f"{pad}),")
    return "\n".join(lines)


def _derivation_kwargs(
    derive: Derivation, source: Attribute, target: Attribute, indent: int
) -> list[str]:
    """``derived_from=``, ``derive_map=`` (one pair per line) and ``derive_default=``."""
    item_indent = indent + _INDENT
    pairs: list[str] = []
    for key, value in derive.table:
        parts = [_py_typed(source, key), _py_typed(target, value)]
        flat = f"({parts[0]}, {parts[1]})"
        fits = item_indent + len(flat) + 1 <= LINE_LENGTH
        pairs.append(flat if fits else _py_items(parts, item_indent))
    lines = [
        py_kwarg("derived_from", derive.source, indent),
        _tuple_kwarg("derive_map", pairs, indent),
    ]
    if derive.default is not None:
        default = _py_typed(target, derive.default)
        lines.append(f"{' ' * indent}derive_default={default},")
    return lines


def _extras(row: MetricRow, attributes: Mapping[str, Attribute]) -> str:
    """The optional keyword arguments after the reference fields ("" when there are none)."""
    lines: list[str] = []
    if row.attributes:
        calls = "\n".join(_attribute_call(ref, attributes, 2 * _INDENT) for ref in row.attributes)
        lines.append(f"{' ' * _INDENT}attributes=(\n{calls}\n{' ' * _INDENT}),")
    if row.other_prefixes:
        prefixes = [py_str(prefix) for prefix in row.other_prefixes]
        lines.append(_tuple_kwarg("other_prefixes", prefixes, _INDENT))
    if row.cardinality_limit is not None:
        lines.append(f"{' ' * _INDENT}cardinality_limit={row.cardinality_limit},")
    if row.temporality != "delta":  # the default is not written: existing modules stay as they are
        lines.append(py_kwarg("temporality", row.temporality, _INDENT))
    if row.section == "teed" and not row.is_scalar:  # no instrument for a table, an image...
        lines.append(py_kwarg("value_type", row.value_type, _INDENT))
    if row.section == "teed" and row.emitted_by:  # the tee routes a shared key by its loops
        lines.append(_tuple_kwarg("emitted_by", [py_str(loop) for loop in row.emitted_by], _INDENT))
    # What a value may be, only when declared: the runtime knows the unit's default.
    value_range = value_range_text(row)
    if value_range is not None:
        lines.append(py_kwarg("value_range", value_range, _INDENT))
    if row.goal:
        lines.append(py_kwarg("goal", row.goal, _INDENT))
    # The schedule as the catalog writes it, for checkers (a one-step test block is not
    # missing a row logged every 5 steps); the tee ignores it.
    for name, number, config in (
        ("every", row.every, row.every_config),
        ("first_step", row.first_step, row.first_step_config),
    ):
        text = str(number) if number is not None else config
        if row.section == "teed" and text:
            lines.append(py_kwarg(name, text, _INDENT))
    if row.section == "teed" and row.phase:
        lines.append(f"{' ' * _INDENT}phase={row.phase},")
    if row.section == "teed" and row.non_finite != "reported":  # the tee exports NaN quietly
        lines.append(py_kwarg("non_finite", row.non_finite, _INDENT))
    choice = row_choice(row) if row.section == "teed" else None
    if choice is not None:  # the tee routes a key rows of exclusive conditions share
        lines.append(_choice_kwarg(choice, _INDENT))
    if row.namespace != METRIC_NAME_PREFIX:  # rl. rows stay as they are: it is the default
        lines.append(py_kwarg("namespace", row.namespace, _INDENT))
    return "".join(f"{line}\n" for line in lines)


def _choice_kwarg(choice: ConfigChoice, indent: int) -> str:
    """``choice=ConfigChoice(("critic", "clip_value"), "true"),`` as ruff lays it out: flat
    when it fits, else one argument per line (the path's keys too when they do not fit)."""
    pad, inner = " " * indent, indent + _INDENT
    keys = [py_str(key) for key in choice.path]
    path = f"({keys[0]},)" if len(keys) == 1 else f"({', '.join(keys)})"
    parts = [path, py_str(choice.test)]
    if choice.test == "equals":
        value = choice.value
        parts.append(py_str(value) if isinstance(value, str) else repr(value))
    flat = f"{pad}choice=ConfigChoice({', '.join(parts)}),"
    if len(flat) <= LINE_LENGTH:
        return flat
    if inner + len(path) + 1 > LINE_LENGTH:  # one key per line, a lone one too (ruff's way)
        item_pad = " " * (inner + _INDENT)
        parts[0] = "(\n" + "".join(f"{item_pad}{key},\n" for key in keys) + " " * inner + ")"
    body = "".join(f"{' ' * inner}{part},\n" for part in parts)
    return f"{pad}choice=ConfigChoice(\n{body}{pad}),"


def value_range_text(row: MetricRow) -> str | None:
    """A row's ``value_range=`` (its range in the exported unit, interval notation) when it
    declares a range or integers; ``None`` otherwise (the runtime knows the unit's default).
    ``range: {}`` is written as unbounded, so the unit's default is dropped there too."""
    if row.declared_range is None and row.value_type != "int":
        return None
    found = row.exported_range if row.is_scalar else row.declared_range
    return (found or ValueRange()).text()


def _literal_alias(attribute: Attribute) -> str:
    """``Name: TypeAlias = Literal[...]`` for an enumerated attribute, laid out as ruff does."""
    values = [_py_value(attribute, v.value) for v in attribute.values]
    head = f"{attribute.type_name}: TypeAlias = Literal["
    flat = f"{head}{', '.join(values)}]"
    if len(flat) <= LINE_LENGTH:
        return flat
    if len(values) == 1:
        return f"{head}\n{' ' * _INDENT}{values[0]}\n]"
    body = "".join(f"{' ' * _INDENT}{value},\n" for value in values)
    return f"{head}\n{body}]"


def _attribute_doc(attribute: Attribute) -> list[str]:
    if attribute.open_enum:
        domain = (
            f"Values: {', '.join(v.value for v in attribute.values)}, and at most "
            f"{attribute.max_cardinality} others"
        )
    elif attribute.values:
        domain = f"Values: {', '.join(v.value for v in attribute.values)}"
    elif attribute.max_cardinality is not None:
        domain = f"Values: open, at most {attribute.max_cardinality} distinct"
        if attribute.spans_segments:
            domain += " (a placeholder spans path segments)"
    else:
        domain = "Values: true, false"
    facts = [
        f"Type: {attribute.type}",
        domain,
        f"Prometheus label: {attribute.label}",
        f"Stability: {attribute.stability}",
    ]
    return [attribute.description, "\n".join(facts)]


def _values_doc(attribute: Attribute) -> str:
    """One ``value: description`` line per enum value."""
    return "\n".join(f"{v.value}: {v.description}" for v in attribute.values)


def _py_values(attribute: Attribute) -> list[str]:
    """The enum values as Python literals of the attribute's type."""
    return [_py_value(attribute, v.value) for v in attribute.values]


# --- modules -------------------------------------------------------------------------------


def _attribute_names(attribute: Attribute) -> list[str]:
    """The module-level names an attribute generates."""
    if attribute.values and attribute.type in ("string", "int"):
        return [attribute.constant_name, attribute.type_name, f"{attribute.constant_name}_VALUES"]
    return [attribute.constant_name]


_IMPORTED: Final = (
    ("Final", "an import from typing"),
    ("Literal", "an import from typing"),
    ("TypeAlias", "an import from typing"),
    ("ConfigChoice", "an import from metric_catalog.vocabulary"),
    ("MetricAttribute", "an import from metric_catalog.vocabulary"),
    ("RecordedMetric", "an import from metric_catalog.vocabulary"),
    ("TeedMetric", "an import from metric_catalog.vocabulary"),
    ("register_bookkeeping", "an import from metric_catalog.vocabulary"),
    ("register_recorded_metrics", "an import from metric_catalog.vocabulary"),
    ("register_step_keys", "an import from metric_catalog.vocabulary"),
    ("register_teed_metrics", "an import from metric_catalog.vocabulary"),
)
"""What ``python/module.py.j2`` imports (claimed whether or not a module needs each)."""
_TABLES: Final = (("TEED", "its tuple of teed rows"), ("RECORDED", "its tuple of recorded rows"))


def module_names(catalog_file: CatalogFile) -> list[Claim]:
    """Every name the file's generated module binds, its own first (:mod:`.names`).

    The module's ``__all__`` is the exported ones; ``validate`` checks them all against
    each other (:func:`.names.name_clashes`), so the render never meets a clash.
    """
    module = catalog_file.module
    claims = own_names(module, _IMPORTED, exported=False)
    claims += own_names(module, _TABLES, exported=True)
    for row in catalog_file.rows:
        claims.append(Claim(module, row.constant_name, f"series {row.name!r}", row.where("name")))
    for row in catalog_file.teed:
        origin = f"series {row.name!r} (a teed row's <CONSTANT>_KEY)"
        claims.append(Claim(module, _key_constant(row), origin, row.where("name")))
    for row in catalog_file.teed:
        origin = f"series {row.name!r} (a teed row's <CONSTANT>_LOGGED_KEY)"
        claims.append(Claim(module, _logged_key_constant(row), origin, row.where("name")))
    for attribute in catalog_file.attributes:
        origin = f"attribute {attribute.name!r}"
        where = attribute.where("name")
        claims += [Claim(module, name, origin, where) for name in _attribute_names(attribute)]
    step_loops = [loop for loop in catalog_file.loops if loop.step_keys]
    if step_loops:
        origin = f"the step keys of loop {step_loops[0].name!r}"
        claims.append(Claim(module, "STEP_KEYS", origin, step_loops[0].position))
    if catalog_file.bookkeeping:
        first = catalog_file.bookkeeping[0]
        origin = f"the bookkeeping keys of {catalog_file.path}"
        claims.append(Claim(module, "BOOKKEEPING", origin, first.position))
    return claims


def generated_names(catalog: Catalog) -> list[Claim]:
    """The names of every owner module, and each module's file in the package.

    A file repeating an earlier file's ``module`` claims nothing: validate reports it as
    ``DUPLICATE_MODULE`` once, not again per name the two modules share.
    """
    first: dict[str, CatalogFile] = {}
    for catalog_file in catalog.files:
        first.setdefault(catalog_file.module, catalog_file)
    files = list(first.values())
    claims: list[Claim] = []
    for catalog_file in files:
        origin = f"module {catalog_file.module!r} of {catalog_file.path}"
        claims.append(Claim(PACKAGE, catalog_file.module, origin, catalog_file.where("module")))
    for catalog_file in files:
        claims += module_names(catalog_file)
    return claims


def python_name_diagnostics(catalog: Catalog) -> list[Diagnostic]:
    """Problems that would make a generated owner module invalid or ambiguous.

    A module name that is not a plain identifier (:func:`module_name_diagnostics`), and
    any name the modules would bind twice (:func:`module_names`): a row constant equal to
    ``TEED``, a ``<ROW>_KEY`` or ``<ROW>_LOGGED_KEY`` constant equal to another row's
    constant (``rl.foo`` with a teed row, and ``rl.foo.key``), an attribute's ``Literal``
    alias named like an import.
    """
    return [*module_name_diagnostics(catalog), *name_clashes(generated_names(catalog))]


def module_name_diagnostics(catalog: Catalog) -> list[Diagnostic]:
    """A finding per catalog file whose ``module`` cannot name a Python module."""
    found: list[Diagnostic] = []
    for catalog_file in catalog.files:
        module = catalog_file.module
        if not _MODULE_NAME.match(module) or keyword.iskeyword(module):
            found.append(
                Diagnostic(
                    "GENERATED_NAME_CLASH",
                    Severity.ERROR,
                    f"module {module!r} cannot name a generated Python module; use lower-case "
                    "letters, digits and '_', starting with a letter (e.g. 'grpo').",
                    catalog_file.where("module"),
                )
            )
    return found


def _module_doc(catalog_file: CatalogFile, generate_command: str) -> str:
    edit = f"Edit {catalog_file.path} and run {generate_command} to change it."
    if not catalog_file.rows:
        # Attributes only: nothing to register, so no "0 rows by importing" sentence.
        return py_docstring(
            [
                f"Attributes declared by {catalog_file.owner}, and no metric rows.",
                catalog_file.description,
                "This module holds a constant per attribute name and a Literal type per "
                f"enum, for code that records or checks these attributes. {edit}",
            ]
        )
    counts = f"{len(catalog_file.teed)} teed and {len(catalog_file.recorded)} recorded"
    return py_docstring(
        [
            f"Metric rows owned by {catalog_file.owner}.",
            catalog_file.description,
            f"Importing this module declares its {counts} rows with the process-wide "
            "registry in metric_catalog.vocabulary; an owner that is never imported "
            f"declares nothing. {edit}",
        ]
    )


_TEMPLATES: Final = Path(__file__).parent / "templates"


def _json_literal(value: object) -> str:
    """``value`` as a JSON literal (also a valid JavaScript/TypeScript literal)."""
    return json.dumps(value, ensure_ascii=False)


def _autoescape(template_name: str | None) -> bool:
    # Python output must never be HTML-escaped; markup targets always are.
    name = (template_name or "").removesuffix(".j2")
    return name.endswith((".html", ".htm", ".md", ".xml"))


def _helpers(generate_command: str) -> dict[str, object]:
    """The names every template sees: the layout helpers and the command that regenerates."""
    return {
        "py_kwarg": py_kwarg,
        "py_docstring": py_docstring,
        "py_assign": py_assign,
        "py_tuple": py_tuple,
        "marker_line": marker_line,
        "generate_command": generate_command,
        # The pieces the row macros of python/_rows.j2 are laid out from.
        "py_extras": _extras,
        "row_doc": _row_doc,
        "key_doc": _key_doc,
        "logged_key_doc": _logged_key_doc,
        "attribute_doc": _attribute_doc,
        "literal_alias": _literal_alias,
        "values_doc": _values_doc,
        "py_values": _py_values,
    }


_FILTERS: Final = {"pystr": py_str, "json": _json_literal}
_PLAIN_HELPERS: Final[frozenset[object]] = frozenset(
    helper for helper in _helpers("").values() if callable(helper)
)
"""The helpers :class:`_ShippedContext` calls directly (plain functions of this package)."""


@functools.lru_cache(maxsize=8)
def make_environment(
    overrides: Path | None, generate_command: str, root: Path | None = None
) -> jinja2.Environment:
    """The templates, sandboxed, with a project's template folder (``overrides``) searched first.

    One environment serves the built-in outputs and a project's added outputs, so
    both see the same filters and helpers. A template of the project's must
    resolve inside ``root`` (default: inside ``overrides``), links followed.
    """
    folders = [_TEMPLATES] if overrides is None else [overrides, _TEMPLATES]
    project = root if root is not None else overrides
    return sandboxed_environment(
        folders,
        within=[_TEMPLATES] if project is None else [_TEMPLATES, project],
        autoescape=_autoescape,
        filters=_FILTERS,
        globals_=_helpers(generate_command),
    )


class _ShippedContext(jinja2.runtime.Context):
    """A context that calls the layout helpers (:func:`_helpers`) directly.

    Jinja routes every call through :meth:`jinja2.runtime.Context.call`, which
    looks for ``pass_context``-style markers on each callee; the helpers carry
    none and never raise ``StopIteration`` (which that method turns into an
    undefined value), so the shipped layout calls them as Python does: about a
    sixth of module rendering at 10k rows.
    """

    def call(
        __self,  # noqa: N805 - Jinja's own spelling: callees may take ``self``
        __obj: Callable[..., object],
        *args: object,
        **kwargs: object,
    ) -> object:
        """``__obj(*args, **kwargs)`` for a layout helper, else Jinja's own call."""
        if type(__obj) is types.FunctionType and __obj in _PLAIN_HELPERS and not kwargs:
            return __obj(*args)
        return super().call(__obj, *args, **kwargs)


@functools.lru_cache(maxsize=8)
def _shipped_rows_environment(generate_command: str) -> jinja2.Environment:
    """The shipped ``python/_rows.j2`` alone, outside the sandbox (same helpers, same layout).

    The sandbox guards against a project's templates; the shipped file is this
    package's own code. Its attribute and call checks cost more than the rest of
    module rendering at 10k rows, so the built-in layout skips them; a project's
    replaced ``_rows.j2`` always renders in :func:`make_environment`'s sandbox.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.context_class = _ShippedContext
    env.filters.update(_FILTERS)
    env.globals.update(_helpers(generate_command))
    return env


def render_python_module(
    catalog_file: CatalogFile,
    attributes: Mapping[str, Attribute] | None = None,
    config: Config | None = None,
) -> str:
    """The full text of one owner's generated module.

    ``attributes`` are the catalog's declared attributes by name, which the
    rows' ``MetricAttribute`` arguments spell out (default: the file's own).

    Raises:
        ValueError: The file's names would clash in Python; see
            :func:`python_name_diagnostics`.
    """
    problems = python_name_diagnostics(Catalog((catalog_file,)))
    if problems:
        msg = "; ".join(d.format() for d in problems)
        raise ValueError(msg)
    known = {a.name: a for a in catalog_file.attributes} if attributes is None else attributes
    # Listed here, not by the template's map(attribute=...): the sandbox checks every access.
    teed_names = [row.constant_name for row in catalog_file.teed]
    recorded_names = [row.constant_name for row in catalog_file.recorded]
    all_names = [claim.name for claim in module_names(catalog_file) if claim.exported]
    step_keys = _step_keys_block(catalog_file)
    bookkeeping = _bookkeeping_block(catalog_file)
    typing_names = ["Final"]
    if any(a.values and a.type in ("string", "int") for a in catalog_file.attributes):
        typing_names += ["Literal", "TypeAlias"]
    config = config or Config()  # the working directory now, not at import
    env = make_environment(config.templates_path, config.generate_command, config.root)
    values = {
        "header": marker_line(config.generate_command, catalog_file.path),
        "file": catalog_file,
        "package": config.package,
        "module_doc": _module_doc(catalog_file, config.generate_command),
        "rows": render_rows(catalog_file, known, config, env=env),
        "all_names": sorted(all_names, key=_all_order),
        "typing_names": ", ".join(typing_names),
        "uses_attributes": any(row.attributes for row in catalog_file.rows),
        "uses_choices": any(row_choice(row) is not None for row in catalog_file.teed),
        "teed_names": teed_names,
        "recorded_names": recorded_names,
        "step_keys": step_keys,
        "bookkeeping": bookkeeping,
    }
    return render(env, "python/module.py.j2", values, root=config.root, variables=values)


def _bookkeeping_block(catalog_file: CatalogFile) -> str:
    """``BOOKKEEPING: Final[tuple[str, ...]] = (...)`` of the file's ``bookkeeping:`` keys
    ("" if none): registered, so the tee leaves them out as live-check does."""
    keys = [py_str(entry.key) for entry in catalog_file.bookkeeping]
    if not keys:
        return ""
    items = f"{keys[0]}," if len(keys) == 1 else ", ".join(keys)  # as ruff writes them
    flat = f"BOOKKEEPING: Final[tuple[str, ...]] = ({items})"
    if len(flat) <= LINE_LENGTH:
        return flat
    pad = " " * _INDENT
    return "\n".join(
        ["BOOKKEEPING: Final[tuple[str, ...]] = (", *(f"{pad}{key}," for key in keys), ")"]
    )


def _step_keys_block(catalog_file: CatalogFile) -> str:
    """``STEP_KEYS: Final[...] = {...}`` of the file's loops with step keys ("" if none)."""
    loops = [loop for loop in catalog_file.loops if loop.step_keys]
    if not loops:
        return ""
    pad, inner = " " * _INDENT, " " * (2 * _INDENT)
    lines = ["STEP_KEYS: Final[dict[str, tuple[tuple[str, str], ...]]] = {"]
    for loop in loops:
        pairs = [f"({py_str(step.prefix)}, {py_str(step.key)})" for step in loop.step_keys]
        flat = f"{pad}{py_str(loop.name)}: ({pairs[0]},),"
        if len(pairs) == 1 and len(flat) <= LINE_LENGTH:
            lines.append(flat)  # as ruff writes a one-item tuple that fits
            continue
        lines.append(f"{pad}{py_str(loop.name)}: (")
        lines.extend(f"{inner}{pair}," for pair in pairs)
        lines.append(f"{pad}),")
    lines.append("}")
    return "\n".join(lines)


def render_rows(
    catalog_file: CatalogFile,
    attributes: Mapping[str, Attribute],
    config: Config,
    *,
    env: jinja2.Environment | None = None,
    template: bool | None = None,
) -> str:
    """Every block of a module (attributes, teed rows, recorded rows) laid out by ``_rows.j2``.

    The macros of ``python/_rows.j2`` are the only layout. ``template=None``
    renders the project's own ``_rows.j2`` in the sandbox when it replaces that
    file, else the shipped one in an environment of its own (the same text,
    without the sandbox's checks); ``True`` forces the sandboxed environment
    ``env`` and ``False`` the shipped file's (the tests compare both).

    Raises:
        TemplateOutputError: The project's ``_rows.j2`` failed (file and line named).
    """
    if template is None:
        folder = config.templates_path
        template = folder is not None and (folder / "python" / "_rows.j2").is_file()
    if not template:
        env = _shipped_rows_environment(config.generate_command)
    elif env is None:
        env = make_environment(config.templates_path, config.generate_command, config.root)
    values = {"file": catalog_file, "attributes": attributes}
    return render(env, "python/_module_rows.j2", values, root=config.root, variables=values)


def render_python_modules(catalog: Catalog, config: Config | None = None) -> dict[str, str]:
    """Root-relative path (``<package-dir>/<module>.py``) -> module text."""
    config = config or Config()
    attributes = catalog.attributes()
    return {
        f"{config.package_dir}/{f.module}.py": render_python_module(f, attributes, config)
        for f in catalog.files
    }
