"""YAML syntax errors said in plain words: what is wrong, where, and the likely fix.

PyYAML (libyaml or its pure-Python parser) reports what the *parser* expected
("did not find expected '-' indicator while parsing a block collection"). A
person editing a catalog made one of a few mistakes: a line indented to no
level above it, a tab, a value holding ``: `` or starting with ``{``, a key
without ``:``, a quote never closed. :func:`explain_syntax_error` recognises
those from the parser's problem, its context and the text around the marks,
and says which line is wrong and what to write instead, at the line and column
where the fix goes. Anything else keeps the parser's words with a generic hint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

import yaml

from .diagnostics import Position

__all__ = ["explain_syntax_error"]


class _Mark(Protocol):
    """What a PyYAML or libyaml mark offers: 0-based line and column."""

    line: int
    column: int


@dataclass(frozen=True, slots=True)
class _Error:
    """The parser's report, with the text split into lines (0-based marks)."""

    problem: str
    context: str
    problem_mark: _Mark | None
    context_mark: _Mark | None
    lines: Sequence[str]

    def line(self, index: int) -> str:
        """Line ``index`` (0-based), or ``""`` past the end."""
        return self.lines[index] if 0 <= index < len(self.lines) else ""


_Explained = tuple[int, int, str]
"""0-based line and column of the fix, and the message."""


def _spaces(count: int) -> str:
    return f"{count} space" + ("" if count == 1 else "s")


def _indent(line: str) -> int:
    """Leading spaces of a line."""
    return len(line) - len(line.lstrip(" "))


def _key_column(line: str) -> int:
    """0-based column where a line's key starts, after any ``- `` list markers."""
    column = _indent(line)
    while line[column : column + 2] == "- " or line[column:].rstrip() == "-":
        column += 1
        while line[column : column + 1] == " ":
            column += 1
    return column


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _previous_content(error: _Error, index: int) -> int | None:
    """The nearest line before ``index`` holding YAML (not blank, not a comment)."""
    for candidate in range(index - 1, -1, -1):
        if _is_content(error.line(candidate)):
            return candidate
    return None


def _previous_item(error: _Error, index: int) -> int | None:
    """The nearest line before ``index`` that starts a list item (``- ``)."""
    for candidate in range(index - 1, -1, -1):
        text = error.line(candidate)
        if _is_content(text) and text.lstrip(" ").startswith("- "):
            return candidate
    return None


def _levels(error: _Error, index: int) -> list[int]:
    """Indentations a line at ``index`` may take: the blocks still open above it."""
    levels: set[int] = set()
    smallest: int | None = None
    for candidate in range(index - 1, -1, -1):
        text = error.line(candidate)
        if not _is_content(text) or "\t" in text[: _indent(text) + 1]:
            continue
        indent = _indent(text)
        if smallest is None or indent < smallest:
            levels.update({indent, _key_column(text)})
            smallest = indent
            if indent == 0:
                break
    return sorted(levels) or [0]


def _or_list(values: Sequence[int]) -> str:
    words = [str(value) for value in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _tab(error: _Error, line: int, column: int) -> _Explained | None:
    text = error.line(line)
    lead = text[: len(text) - len(text.lstrip(" \t"))]
    at_mark = text[column : column + 1] == "\t"
    if "\t" not in lead and not at_mark:
        return None
    where = text.index("\t") if "\t" in lead else column
    previous = _previous_content(error, line)
    hint = ""
    if previous is not None:
        hint = (
            f" ({_spaces(_key_column(error.line(previous)))} to line up with line {previous + 1})"
        )
    message = (
        f"line {line + 1} is indented with a tab character; YAML indents with spaces only, "
        f"so replace the tab with spaces{hint}."
    )
    return line, where, message


def _unclosed_quote(error: _Error, line: int, column: int) -> _Explained | None:
    if "end of stream" not in error.problem or "quoted scalar" not in error.context:
        return None
    mark = error.context_mark
    start_line, start_column = (mark.line, mark.column) if mark else (line, column)
    quote = error.line(start_line)[start_column : start_column + 1] or '"'
    message = (
        f"the value quoted with {quote} at line {start_line + 1} is never closed (no closing "
        f"{quote} before the end of the file); add the closing {quote} at the end of the value."
    )
    return start_line, start_column, message


def _missing_colon(error: _Error, line: int, column: int) -> _Explained | None:
    if "expected ':'" not in error.problem:
        return None
    mark = error.context_mark
    key_line, key_column = (mark.line, mark.column) if mark else (line, column)
    text = error.line(key_line).strip()
    word, _, rest = text.partition(" ")
    example = f" ('{word}: {rest.strip()}')" if rest.strip() else ""
    message = (
        f"line {key_line + 1} ({text!r}) has no ':' after its key; write the key, a colon "
        f"and a space, then the value{example}."
    )
    return key_line, key_column, message


def _inline_value(error: _Error, line: int, column: int) -> _Explained | None:
    """``unit: {token}/s``: a value starting with ``{`` or ``[`` is an inline mapping or list."""
    if not any(
        phrase in error.problem
        for phrase in ("expected key", "expected <block end>", "expected ',' or", "expected ','")
    ):
        return None
    for candidate in {line, error.context_mark.line if error.context_mark else line}:
        text = error.line(candidate)
        key, sep, value = text.partition(": ")
        value = value.strip()
        if sep and value[:1] in ("{", "[") and not value.endswith(("}", "]")):
            message = (
                f"the value {value!r} of {key.strip().lstrip('- ')!r} starts with {value[0]!r}, "
                f"which YAML reads as an inline {'mapping' if value[0] == '{' else 'list'}; "
                f'quote it: {key.strip().lstrip("- ")}: "{value}"'
            )
            return candidate, len(key) + 2, message
    if "expected ','" in error.problem or "expected ',' or" in error.problem:
        mark = error.context_mark
        start_line, start_column = (mark.line, mark.column) if mark else (line, column)
        closer = "]" if "]" in error.problem else "}"
        message = (
            f"the inline {'list' if closer == ']' else 'mapping'} that starts at line "
            f"{start_line + 1} is not closed, or two of its entries lack a ',' between them; "
            f"close it with {closer!r} or write it as an indented block."
        )
        return start_line, start_column, message
    return None


def _colon_in_value(error: _Error, line: int, column: int) -> _Explained | None:
    if "mapping values are not allowed" not in error.problem:
        return None
    text = error.line(line)
    first_colon = text.find(": ")
    if 0 <= first_colon < column:
        key = text[:first_colon].strip().lstrip("- ")
        value = text[first_colon + 2 :].strip()
        message = (
            f"the value of {key!r} contains ': ', which YAML reads as the start of another "
            f'key; quote the value: {key}: "{value}"'
        )
        return line, column, message
    previous = _previous_content(error, line)
    if previous is None:
        return None
    want = _key_column(error.line(previous))
    have = _indent(text)
    if have <= want:
        return None
    message = (
        f"line {line + 1} is indented {_spaces(have)}, deeper than the key on line "
        f"{previous + 1} ({_spaces(want)}), so YAML reads it as part of that key's value; "
        f"indent it {_spaces(want)} to make it a key of the same mapping as line {previous + 1}."
    )
    return line, have, message


def _reserved_start(error: _Error, line: int, column: int) -> _Explained | None:
    if "cannot start any token" not in error.problem:
        return None
    character = error.line(line)[column : column + 1]
    if not character or character == "\t":
        return None
    text = error.line(line)
    key, sep, value = text.partition(": ")
    fix = (
        f'quote the value: {key.strip().lstrip("- ")}: "{value.strip()}"'
        if sep
        else ("quote the value")
    )
    message = f"a YAML value cannot start with {character!r} (a reserved character); {fix}"
    return line, column, message


def _dash_without_space(error: _Error, line: int, column: int) -> _Explained | None:
    """``-logger_key: a``: without a space after it, ``-`` does not start a list item."""
    previous = _previous_content(error, line)
    for candidate in (line, previous):
        if candidate is None:
            continue
        text = error.line(candidate)
        stripped = text.lstrip(" ")
        if stripped.startswith("-") and stripped[1:2] not in ("", " ", "-") and ":" in stripped:
            written = stripped.split(":", 1)[0]
            message = (
                f"line {candidate + 1} starts with {written!r}: without a space after '-' it "
                f"is a key, not a list item; write '- {stripped[1:].strip()}'."
            )
            return candidate, _indent(text), message
    return None


def _text_after_quote(error: _Error, line: int, column: int) -> _Explained | None:
    """``description: "Say "hi" now."``: the quoted value ends early, text follows it."""
    if not any(phrase in error.problem for phrase in _INDENTATION_PROBLEMS):
        return None
    text = error.line(line)
    key, sep, value = text.partition(": ")
    value = value.strip()
    if not sep or value[:1] not in ("'", '"') or column <= len(key) + 2:
        return None
    quote, other = value[0], "'" if value[0] == '"' else '"'
    name = key.strip().lstrip("- ")
    message = (
        f"the value of {name!r} is quoted with {quote}, but text follows its closing {quote} "
        f"at column {column + 1}; quote the whole value with {other} instead "
        f"({name}: {other}{value[1:-1] if value.endswith(quote) else value[1:]}{other}) or "
        f"escape the inner {quote}."
    )
    return line, column, message


def _dash_in_mapping(error: _Error, line: int, column: int) -> _Explained | None:
    if "block sequence entries are not allowed" not in error.problem:
        return None
    message = (
        f"a list item ('- ') cannot start on line {line + 1} after a key on the same line; "
        "put each item on its own line, indented under the key."
    )
    return line, column, message


_INDENTATION_PROBLEMS: Final = (
    "expected '-' indicator",
    "expected key",
    "expected <block end>",
)


def _indentation(error: _Error, line: int, column: int) -> _Explained | None:
    if not any(phrase in error.problem for phrase in _INDENTATION_PROBLEMS):
        return None
    text = error.line(line)
    if not _is_content(text):
        return None
    have = _indent(text)
    levels = _levels(error, line)
    previous = _previous_content(error, line)
    want = _key_column(error.line(previous)) if previous is not None else levels[-1]
    like = f"like the key on line {(previous or 0) + 1}"
    if text.lstrip(" ").startswith("-"):
        # A list item lines up with the '- ' of the item before it.
        item = _previous_item(error, line)
        if item is not None:
            want, like = _indent(error.line(item)), f"like the '- ' on line {item + 1}"
    if have in levels and text.lstrip(" ").startswith("- ") and previous is not None:
        # A list item where the row above has its keys: a list cannot start there.
        item = _previous_item(error, line)
        where = f" with the one on line {item + 1}" if item is not None else ""
        message = (
            f"line {line + 1} starts a list item ('- ') at {_spaces(have)}, where the row "
            f"above has its keys; to start a new row, line the '- ' up{where} "
            f"({_spaces(want)})."
        )
        return line, have, message
    if have in levels and "'-'" in error.problem:
        # Lined up with an enclosing mapping's keys while a list is still open.
        message = (
            f"line {line + 1} is indented {_spaces(have)}, which ends the list that starts "
            f"at line {(error.context_mark.line if error.context_mark else line) + 1}; indent "
            f"it {_spaces(want)} to keep it in the row above, or start a new item with '- '."
        )
        return line, have, message
    message = (
        f"line {line + 1} is indented {_spaces(have)}, which lines up with no block above it "
        f"(the open blocks start at {_or_list(levels)} spaces); indent it {_spaces(want)} "
        f"{like}, or to the level of the block it belongs to (YAML nests by indentation, "
        "spaces only)."
    )
    return line, have, message


_EXPLAINERS: Final[tuple[Callable[[_Error, int, int], _Explained | None], ...]] = (
    _tab,
    _unclosed_quote,
    _missing_colon,
    _dash_without_space,
    _inline_value,
    _text_after_quote,
    _colon_in_value,
    _reserved_start,
    _dash_in_mapping,
    _indentation,
)


def _fallback(error: _Error, display: str, text: str) -> tuple[Position, str]:
    """The parser's own words, at a position inside the file, with a generic hint."""
    problem = error.problem or error.context or "invalid YAML"
    mark = error.problem_mark or error.context_mark
    context = f" ({error.context})" if error.context and error.problem else ""
    lines = error.lines
    at_end = mark is not None and mark.line + 1 > len(lines) - (text.endswith("\n"))
    if error.context_mark is not None and ("end of stream" in problem or at_end):
        mark = error.context_mark
        if "end of stream" in problem:
            context = f" ({error.context} that starts here and is never closed)"
    if mark is None:
        return Position(display, 1, 1), f"YAML syntax error: {problem}; fix the YAML."
    line = min(mark.line + 1, len(lines))
    column = mark.column + 1 if line == mark.line + 1 else len(lines[line - 1]) + 1
    message = (
        f"YAML syntax error: {problem}{context}; check the indentation (spaces only) and "
        "quote values holding ':', '#', '{' or '[' at this position."
    )
    return Position(display, line, column), message


def explain_syntax_error(
    exc: yaml.MarkedYAMLError, display: str, text: str
) -> tuple[Position, str]:
    """Where a YAML syntax error is best fixed (1-based) and what to do, in plain words.

    A construct the parser only finds broken at the end of the input (an
    unclosed quote, a key without ``:``) is reported where it starts; no
    position ever lies past the last line.
    """
    error = _Error(
        problem=exc.problem or "",
        context=exc.context or "",
        problem_mark=exc.problem_mark,
        context_mark=exc.context_mark,
        lines=text.split("\n"),
    )
    mark = exc.problem_mark or exc.context_mark
    if mark is not None and mark.line < len(error.lines):
        for explain in _EXPLAINERS:
            found = explain(error, mark.line, mark.column)
            if found is not None:
                line, column, message = found
                line = min(max(line, 0), len(error.lines) - 1)
                column = min(max(column, 0), len(error.line(line)))
                return Position(display, line + 1, column + 1), message
    elif mark is not None:
        # Marks past the last line: the end of the input (unclosed quote or flow).
        for explain in (_unclosed_quote, _inline_value):
            found = explain(error, mark.line, mark.column)
            if found is not None:
                line, column, message = found
                return Position(display, line + 1, column + 1), message
    return _fallback(error, display, text)
