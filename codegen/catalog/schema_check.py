"""JSON-schema validation of a loaded file, reported at the offending node.

The schema (``codegen/schema/catalog.schema.json``) is the single description of
the file format; editors read it through the ``yaml-language-server`` header.
Its validator is compiled once per process. jsonschema errors are mapped to
:class:`~codegen.catalog.diagnostics.Diagnostic` with stable codes, the position of the
exact node, and a fix ("did you mean 'description'?", "quote it").

Most files are valid, so :func:`check_schema` first runs a fast path compiled
from the same schema file (:func:`compile_fast_check`): plain Python checks of
key sets, string types, enums, patterns and lengths over the node tree. Only a
file it does not accept goes through jsonschema (imported then, not before), so
every diagnostic is exactly what jsonschema's walk reports. The fast path
understands a small subset of JSON Schema and is conservative: a keyword it
does not know disables it (every file takes the jsonschema path), and it may
reject a valid file but never accepts an invalid one.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from metric_catalog.series_rules import namespace_prefix

from ..safe_fs import read_regular
from .diagnostics import Diagnostic, Position, Severity
from .loader import NonString, YMap, YNode, YScalar, YSeq, iter_path, to_plain
from .similar import closest

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError

__all__ = [
    "SCHEMA_ID",
    "SCHEMA_PATH",
    "JsonPath",
    "SchemaResult",
    "check_schema",
    "compile_fast_check",
    "load_schema",
    "validator",
]

SCHEMA_PATH: Final = Path(__file__).resolve().parents[1] / "schema" / "catalog.schema.json"
"""The catalog file schema (JSON Schema 2020-12)."""

SCHEMA_ID: Final = "urn:metric-catalog:schema:catalog:1-0-0"
"""``$id`` of the schema version this code understands."""

# Why a value must look the way the schema's ``pattern`` says, per field.
_PATTERN_HINTS: Final[dict[str, str]] = {
    "name": "a series name is the file's namespace ('rl.' by default) then dot-separated "
    "components of letters, digits and '_', e.g. 'rl.reward.mean'",
    "replaced_by": "a series name is the file's namespace ('rl.' by default) then "
    "dot-separated components of letters, digits and '_', e.g. 'rl.reward.mean'",
    "namespace": "a namespace is lowercase dot-separated components of letters, digits and "
    "'_', each starting with a letter and ending in '.', e.g. 'rl.', 'jvm.' or 'gen_ai.'",
    "module": "a module name is lowercase letters, digits and '_', starting with a letter, "
    "e.g. 'grpo'",
    "owner": "an owner is a dotted Python module path, e.g. 'nemo_rl.algorithms.grpo'",
    "logger_key": "a logger key is printable text (no control characters) in non-empty "
    "segments joined by '/'; braces hold a placeholder such as {rl.dataset}, and a literal "
    "brace is doubled ({{ or }}), e.g. 'reward', 'advantages/mean' or 'acc/mean@4'",
    "prefix": "a prefix is empty or letters, digits and '_' joined by '/', '.' or '-', "
    "e.g. 'train' or 'timing/train'",
    "since": "'since' is a quoted release version, e.g. \"0.2.0\"",
    "unit": "a unit is printable ASCII without spaces, e.g. 's', 'By', '1' or '{token}'",
    "no_lint": "a lint rule name is SCREAMING_SNAKE_CASE, e.g. UNIT_IN_NAME",
    "prefixes": "a prefix is empty or letters, digits and '_' joined by '/', '.' or '-', "
    "e.g. 'train' or 'validation-{rl.dataset}'",
    "ref": "an attribute name is lowercase dot-separated components of letters, digits and "
    "'_', e.g. 'rl.setup.phase'",
    "attributes.name": "an attribute name is lowercase dot-separated components of letters, "
    "digits and '_', e.g. 'rl.setup.phase'",
    "max_cardinality": 'a count is a quoted positive whole number, e.g. "64"',
    "cardinality_limit": "a budget is a quoted whole number of at least 2 (one attribute set "
    'plus the overflow point), e.g. "1000"',
    # Presence fields (requirement level, loops).
    "emitted_by": "a loop name is lowercase letters, digits and '_', e.g. 'grpo_sync'",
    "first_step": 'first_step is a quoted step number without leading zeros, e.g. "10", or a '
    'configuration value, e.g. "config.trainer.test_freq", optionally plus or minus a whole '
    'number, e.g. "config.freezing_actor_steps + 1"',
    "every": 'every is a quoted positive step count without leading zeros, e.g. "10", or a '
    'configuration value, e.g. "config.trainer.test_freq"',
    "phase": 'phase is a quoted whole number, e.g. "-1" (steps n-1, 2n-1, ... of every: n) '
    'or "1" (one step late), without leading zeros',
    "signature": "a signature key is a logged key with its prefix joined by '/', "
    "e.g. 'train/critic/loss'",
}

_LOOP_NAME_HINT: Final = "a loop name is lowercase letters, digits and '_', e.g. 'grpo_sync'"

_NULL: Final = "tag:yaml.org,2002:null"
_TYPE_WORDS: Final[dict[str, str]] = {
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
}


@functools.cache
def load_schema() -> dict[str, Any]:
    """The parsed schema document (cached)."""
    schema: dict[str, Any] = json.loads(read_regular(SCHEMA_PATH))
    return schema


def _inline_refs(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with every local ``$ref`` replaced by its target (siblings kept).

    Resolving ``$ref`` through ``referencing`` dominated validation time (about
    half of it at 10k rows); the schema has no recursive references, so the
    compiled copy simply has none. The file on disk keeps ``$defs`` for editors.
    """
    if isinstance(node, list):
        return [_inline_refs(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = _inline_refs(definitions[ref.removeprefix("#/$defs/")], definitions)
        siblings = {k: _inline_refs(v, definitions) for k, v in node.items() if k != "$ref"}
        return {**target, **siblings}
    return {k: _inline_refs(v, definitions) for k, v in node.items() if k != "$defs"}


@functools.cache
def validator() -> jsonschema.Draft202012Validator:
    """The compiled validator (local references inlined), built once per process."""
    import jsonschema  # noqa: PLC0415 - only files the fast path rejects need it

    schema = load_schema()
    return jsonschema.Draft202012Validator(_inline_refs(schema, schema.get("$defs", {})))


FastCheck: TypeAlias = Callable[[YNode], bool]
"""True when a node is certainly valid under the subschema it was compiled from."""

# Keywords that never affect validity.
_ANNOTATIONS: Final = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "examples", "default"}
)
_STRING_KEYWORDS: Final = frozenset({"type", "pattern", "minLength", "maxLength", "enum", "not"})


def compile_fast_check(schema: dict[str, Any]) -> FastCheck | None:
    """A fast acceptance check for ``schema`` (``$ref`` already inlined), or ``None``.

    ``None`` means the schema uses a keyword (or a form of one) the fast path
    does not understand; callers then validate everything with jsonschema.
    """
    if not isinstance(schema, dict):
        return None
    keywords = schema.keys() - _ANNOTATIONS
    kind = schema.get("type")
    if kind == "object":
        return _compile_object(schema, keywords)
    if kind == "array":
        return _compile_array(schema, keywords)
    if kind == "string" or (kind is None and "enum" in keywords):
        return _compile_string(schema, keywords)
    return None


def _compile_object(schema: dict[str, Any], keywords: set[str]) -> FastCheck | None:
    if not keywords <= {"type", "properties", "required", "additionalProperties", "minProperties"}:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    min_properties = schema.get("minProperties", 0)
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    if not all(isinstance(n, str) for n in required) or type(min_properties) is not int:
        return None
    # Keys not in ``properties``: allowed (True), refused (False) or checked by a schema.
    extra_check: FastCheck | None = None
    if isinstance(extra, dict):
        extra_check = compile_fast_check(extra)
        if extra_check is None:
            return None
    elif not isinstance(extra, bool):
        return None
    checks: dict[str, FastCheck] = {}
    for name, subschema in properties.items():
        check = compile_fast_check(subschema)
        if check is None:
            return None
        checks[name] = check
    allowed = frozenset(checks)
    needed = frozenset(required)
    closed = extra is False

    def check_object(node: YNode) -> bool:
        if type(node) is not YMap:
            return False
        values = node.values
        keys = values.keys()
        if not keys >= needed or (closed and not keys <= allowed):
            return False
        if len(values) < min_properties:
            return False
        for key, child in values.items():
            check = checks.get(key, extra_check)
            if check is not None and not check(child):
                return False
        return True

    return check_object


def _compile_array(schema: dict[str, Any], keywords: set[str]) -> FastCheck | None:
    if not keywords <= {"type", "items", "uniqueItems", "minItems"}:
        return None
    unique = schema.get("uniqueItems", False)
    min_items = schema.get("minItems", 0)
    if not isinstance(unique, bool) or type(min_items) is not int:
        return None
    item_check = compile_fast_check(schema["items"]) if "items" in schema else None
    if "items" in schema and item_check is None:
        return None

    def check_array(node: YNode) -> bool:
        if type(node) is not YSeq:
            return False
        items = node.items
        if len(items) < min_items:
            return False
        if item_check is not None:
            for item in items:
                if not item_check(item):
                    return False
        if unique and items:
            # jsonschema compares strings by ==; anything else goes the slow way.
            texts = [item.value for item in items if type(item) is YScalar]
            if len(texts) != len(items) or not all(type(text) is str for text in texts):
                return False
            if len(set(texts)) != len(texts):
                return False
        return True

    return check_array


def _compile_string(schema: dict[str, Any], keywords: set[str]) -> FastCheck | None:
    if not keywords <= _STRING_KEYWORDS:
        return None
    pattern = schema.get("pattern")
    min_length = schema.get("minLength", 0)
    max_length = schema.get("maxLength")
    if pattern is not None and not isinstance(pattern, str):
        return None
    if type(min_length) is not int or (max_length is not None and type(max_length) is not int):
        return None
    enum: frozenset[str] | None = None
    if "enum" in schema:
        if not isinstance(schema["enum"], list):
            return None
        # Only string members can equal a string value.
        enum = frozenset(m for m in schema["enum"] if isinstance(m, str))
    excluded: frozenset[str] = frozenset()
    if "not" in schema:
        negated = schema["not"]
        if not isinstance(negated, dict) or not isinstance(negated.get("enum"), list):
            return None
        if negated.keys() - _ANNOTATIONS != {"enum"}:
            return None
        excluded = frozenset(m for m in negated["enum"] if isinstance(m, str))
    # jsonschema applies ``pattern`` with re.search, so the same here.
    search = re.compile(pattern).search if pattern is not None else None

    def check_string(node: YNode) -> bool:
        if type(node) is not YScalar:
            return False
        value = node.value
        if type(value) is not str:
            return False
        if enum is not None and value not in enum:
            return False
        if search is not None and search(value) is None:
            return False
        if min_length or max_length is not None:
            length = len(value)
            if length < min_length or (max_length is not None and length > max_length):
                return False
        return not excluded or value not in excluded

    return check_string


@functools.cache
def _fast_check() -> FastCheck | None:
    schema = load_schema()
    return compile_fast_check(_inline_refs(schema, schema.get("$defs", {})))


_FAST_CHECK: Final = _fast_check()
"""The fast path for the catalog schema, compiled once at import."""


def _error(code: str, message: str, position: Position) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, position)


def _describe_node(node: YNode) -> str:
    if isinstance(node, YMap):
        return "a mapping"
    if isinstance(node, YSeq):
        return "a list"
    if isinstance(node.value, NonString):
        if node.value.text in ("", "~"):
            return "an empty value (which YAML reads as null)"
        return f"{node.value.text!r} (which YAML reads as {node.value.type_word})"
    return f"the string {node.value!r}"


_ENTRY_NAMES: Final = {
    "teed": ("teed row", "name"),
    "recorded": ("recorded row", "name"),
    "attributes": ("attribute", "name"),
    "loops": ("loop", "name"),
    "bookkeeping": ("bookkeeping entry", "key"),
}
"""The list sections of a file: what an entry is called, and the field that names it."""


def _context(path: Sequence[str | int], nodes: Sequence[YNode]) -> str:
    """Where in the file a path points, in words: ``teed row 2 ('rl.x')``."""
    if len(path) < 2 or not isinstance(path[1], int) or path[0] not in _ENTRY_NAMES:
        return "the file"
    kind, field = _ENTRY_NAMES[str(path[0])]
    label = f"{kind} {path[1] + 1}"
    entry = nodes[2] if len(nodes) > 2 else None
    if isinstance(entry, YMap):
        named = entry.values.get(field)
        if isinstance(named, YScalar) and isinstance(named.value, str):
            label += f" ({named.value!r})"
    return label


def _field(path: Sequence[str | int]) -> str:
    names = [step for step in path if isinstance(step, str)]
    return names[-1] if names else "file"


def _type_fix(node: YNode, expected: str) -> str:
    """How to turn ``node`` into the expected JSON type."""
    empty = isinstance(node, YScalar) and node.value in (
        NonString("", _NULL),
        NonString("~", _NULL),
    )
    if empty and expected == "array":
        return "write [] for an empty list, or remove the key."
    return f"write it as {_TYPE_WORDS.get(expected, expected)}."


def _subject(path: Sequence[str | int], context: str) -> str:
    """What a message is about: ``'unit' in teed row 1``, ``teed row 1``, ``the file``."""
    if not path or (len(path) == 2 and isinstance(path[1], int)):
        return context
    if isinstance(path[-1], int):
        return f"an item of {_field(path)!r} in {context}"
    return f"{path[-1]!r} in {context}"


def _suggest(word: str, choices: Sequence[str]) -> str | None:
    return closest(word, choices)


JsonPath: TypeAlias = tuple[str | int, ...]
"""Steps from the file's root to a node: keys and list indexes."""


@dataclass(frozen=True, slots=True)
class SchemaResult:
    """Schema findings for one file, and the paths of every node found invalid."""

    diagnostics: tuple[Diagnostic, ...]
    error_paths: frozenset[JsonPath]
    """Every path at which an error was found, and every ancestor of such a path."""

    def is_clean(self, path: JsonPath) -> bool:
        """True when no error was found at ``path`` or anywhere under it."""
        return path not in self.error_paths


_CLEAN: Final = SchemaResult((), frozenset())


def check_schema(root: YMap) -> SchemaResult:
    """Validate a loaded file against the schema; every error at its node.

    Nodes where the loader already reported an error are skipped, so one
    mistake yields one diagnostic. A file the fast path accepts has nothing to
    report; any other goes through jsonschema.
    """
    numeric = tuple(_numeric_rows_fields(root))
    if _FAST_CHECK is not None and _FAST_CHECK(root) and not numeric:
        return _CLEAN
    found: dict[tuple[str, Position | None, str], Diagnostic] = {}
    paths: set[JsonPath] = set()
    for index, diagnostic in numeric:
        found.setdefault((diagnostic.code, diagnostic.position, diagnostic.message), diagnostic)
        paths.update({(), ("teed",), ("teed", index)})
    for error in validator().iter_errors(to_plain(root)):
        steps = tuple(error.absolute_path)
        # Ancestors too, so is_clean() is a set lookup even with 10k broken rows.
        paths.update(steps[:end] for end in range(len(steps) + 1))
        for diagnostic in _map_error(root, error):
            key = (diagnostic.code, diagnostic.position, diagnostic.message)
            found.setdefault(key, diagnostic)
    return SchemaResult(tuple(found.values()), frozenset(paths))


def _non_scalar_types() -> frozenset[str]:
    """The teed rows' ``value_type`` values that are not numbers (a table, a text...)."""
    schema = load_schema()["$defs"]["teedRow"]["properties"]["value_type"]
    return frozenset(str(v) for v in schema["enum"]) - {"number", "int"}


_NON_SCALAR_TYPES: Final = _non_scalar_types()
_NUMERIC_ONLY: Final = ("kind", "unit")
"""Fields a teed row of numbers must write; a non-scalar row (no instrument) may omit them."""


def _numeric_rows_fields(root: YMap) -> Iterator[tuple[int, Diagnostic]]:
    """``MISSING_FIELD`` for each teed row of numbers (no non-scalar ``value_type``) that
    lacks ``kind`` or ``unit``, with the row's index; a misspelt key (``kidn``) is left to
    its ``UNKNOWN_FIELD`` and its suggestion."""
    teed = root.values.get("teed")
    if not isinstance(teed, YSeq) or root.bad or teed.bad:
        return
    allowed = list(load_schema()["$defs"]["teedRow"]["properties"])
    for index, row in enumerate(teed.items):
        if not isinstance(row, YMap) or row.bad or row.refused_keys:
            continue  # the loader reported this row's mistake: one mistake, one diagnostic
        missing = [name for name in _NUMERIC_ONLY if name not in row.values]
        value_type = row.values.get("value_type")
        if not missing or (
            isinstance(value_type, YScalar) and value_type.value in _NON_SCALAR_TYPES
        ):
            continue
        unknown = [key for key in row.values if key not in allowed]
        subject = _context(("teed", index), (root, teed, row))
        for name in missing:
            if any(_suggest(k, allowed) == name for k in unknown):
                continue
            yield (
                index,
                _error(
                    "MISSING_FIELD",
                    f"{subject} has no {name!r}; add it (required of a row of numbers; a row "
                    "whose value_type is table, text, image, histogram, media or object may "
                    "omit it).",
                    row.position,
                ),
            )


def _map_error(root: YMap, error: ValidationError) -> Iterator[Diagnostic]:
    """The diagnostics of one jsonschema error, at its node (none under a node the loader
    already refused)."""
    path: list[str | int] = list(error.absolute_path)
    nodes = list(iter_path(root, iter(path)))
    if any(node.bad for node in nodes) or len(nodes) != len(path) + 1:
        return
    node = nodes[-1]
    where = node.position
    subject = _subject(path, _context(path, nodes))
    kind = error.validator
    if kind == "required" and isinstance(node, YMap):
        if not node.refused_keys:
            yield from _missing(node, error, subject)
    elif kind == "additionalProperties" and isinstance(node, YMap):
        yield from _unknown(node, error, subject, path)
    elif kind == "type":
        yield _wrong_type(node, error, subject, path)
    elif kind == "enum":
        yield _not_listed(node, error, subject)
    elif kind == "pattern":
        yield _bad_format(node, error, subject, path)
    elif kind == "not" and _field(path) == "module":
        yield _error(
            "INVALID_VALUE",
            f"'module' is {_describe_node(node)}, a Python keyword, which cannot name a "
            "module; pick another name (e.g. add a suffix).",
            where,
        )
    elif kind in _SIZE_FIXES:
        fix = _SIZE_FIXES[str(kind)].format(limit=error.validator_value)
        yield _error("INVALID_VALUE", f"{subject} {fix}", where)
    else:
        yield _error("SCHEMA_VIOLATION", f"{subject}: {error.message}.", where)


_SIZE_FIXES: Final = {
    "minLength": "is empty; write a value.",
    "minProperties": "maps nothing; give at least one entry or remove the key.",
    "minItems": "lists nothing; list at least one item or remove the key.",
    "maxLength": "is longer than {limit} characters; shorten it.",
    "uniqueItems": "lists the same entry twice; keep one.",
}
"""What a value of the wrong size (or with a repeated item) is, and its fix, by keyword."""


def _wrong_type(
    node: YNode, error: ValidationError, subject: str, path: list[str | int]
) -> Diagnostic:
    """A value of another type; a YAML scalar read as a non-string gets the quoting fix."""
    expected = str(error.validator_value)
    if expected == "string" and isinstance(node, YScalar) and isinstance(node.value, NonString):
        text = node.value.text
        shown = "an empty value" if text in ("", "~") else repr(text)
        quoted = f'"{text}"' if text not in ("", "~") else '"..."'
        if not isinstance(path[-1], int):
            quoted = f"{_field(path)}: {quoted}"
        return _error(
            "IMPLICIT_NON_STRING",
            f"{subject}: YAML reads {shown} as {node.value.type_word}, "
            f"not a string; quote it ({quoted}).",
            node.position,
        )
    wanted = _TYPE_WORDS.get(expected, expected)
    return _error(
        "WRONG_TYPE",
        f"{subject} must be {wanted}, not {_describe_node(node)}; {_type_fix(node, expected)}",
        node.position,
    )


def _not_listed(node: YNode, error: ValidationError, subject: str) -> Diagnostic:
    """A value outside an enum, with the closest choice when one is close."""
    choices = [str(choice) for choice in _listed(error)]
    value = node.value if isinstance(node, YScalar) else None
    hint = _suggest(value, choices) if isinstance(value, str) else None
    fix = f"did you mean {hint!r}?" if hint else f"use one of: {', '.join(choices)}."
    return _error(
        "INVALID_VALUE",
        f"{subject} is {_describe_node(node)}, not one of {', '.join(choices)}; {fix}",
        node.position,
    )


def _bad_format(
    node: YNode, error: ValidationError, subject: str, path: list[str | int]
) -> Diagnostic:
    """A value that does not match its field's pattern, with the field's own hint."""
    field = _field(path)
    hint_key = "attributes.name" if path[:1] == ["attributes"] and len(path) == 3 else field
    hint = _PATTERN_HINTS.get(hint_key, f"it must match {error.validator_value}")
    if path[:1] == ["loops"] and field == "name":
        hint = _LOOP_NAME_HINT
    text = node.value if isinstance(node, YScalar) and isinstance(node.value, str) else ""
    if field in {"prefix", "prefixes"} and namespace_prefix(text) != text:
        # NeMo-Aligner passes log_metrics(..., prefix="train/"); the tee reads it as "train".
        hint += (
            f"; a prefix the code passes with its separator is declared without it: "
            f"{namespace_prefix(text)!r} (a log_metrics prefix ending in '/' names it)"
        )
    return _error("INVALID_FORMAT", f"{subject} is {_describe_node(node)}; {hint}.", node.position)


def _listed(error: ValidationError) -> list[object]:
    """The keyword's value when it is a list (``enum``, ``required``), else empty."""
    value = error.validator_value
    return list(value) if isinstance(value, list) else []


def _allowed(error: ValidationError) -> list[str]:
    schema = error.schema
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    return list(properties)


def _missing(node: YMap, error: ValidationError, subject: str) -> Iterator[Diagnostic]:
    required = [str(name) for name in _listed(error)]
    unknown = [key for key in node.values if key not in _allowed(error)]
    for name in required:
        if name in node.values:
            continue
        # A misspelt key is reported once, as UNKNOWN_FIELD with the suggestion.
        if any(_suggest(key, _allowed(error)) == name for key in unknown):
            continue
        yield _error(
            "MISSING_FIELD",
            f"{subject} has no {name!r}; add it (required).",
            node.position,
        )


def _unknown(
    node: YMap, error: ValidationError, subject: str, path: Sequence[str | int]
) -> Iterator[Diagnostic]:
    allowed = _allowed(error)
    for key in node.values:
        if key in allowed:
            continue
        if path[:1] == ["recorded"] and len(path) == 2 and key in ("logger_key", "prefix"):
            fix = "recorded rows have no logger key or prefix; move the row to 'teed' or drop it."
        else:
            hint = _suggest(key, allowed)
            fix = (
                f"did you mean {hint!r}?"
                if hint
                else f"allowed fields here: {', '.join(sorted(allowed))}."
            )
        yield _error(
            "UNKNOWN_FIELD",
            f"unknown field {key!r} in {subject}; {fix}",
            node.key_positions[key],
        )
