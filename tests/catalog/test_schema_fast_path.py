"""The schema fast path never accepts what jsonschema rejects, and accepts valid files.

``check_schema`` answers a file its fast path accepts without jsonschema, so the
fast path must be sound: for any loaded document, fast-path acceptance implies
jsonschema acceptance. Documents are random valid ones and the same with one
field corrupted (wrong type, YAML non-string, off-pattern or over-long text,
unknown or missing key, repeated list item...), written with ``yaml.safe_dump``
and loaded by the real loader, so the trees are the ones the pipeline sees.
"""

from __future__ import annotations

import copy
import keyword
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog import schema_check
from codegen.catalog.loader import YMap, load_text, to_plain
from metric_catalog.series_rules import METRIC_KINDS as KINDS
from metric_catalog.series_rules import STABILITY_LEVELS

REPO = Path(__file__).resolve().parents[2]

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SCHEMA = schema_check.load_schema()
DEFS = SCHEMA["$defs"]
FAST = schema_check.compile_fast_check(schema_check._inline_refs(SCHEMA, DEFS))


def pattern_of(definition: str) -> str:
    pattern: str = DEFS[definition]["pattern"]
    return pattern


# Valid values straight from the schema's own patterns (``$`` may add a final newline).
owner = st.from_regex(SCHEMA["properties"]["owner"]["pattern"]).filter(lambda s: len(s) <= 200)
module = st.from_regex(SCHEMA["properties"]["module"]["pattern"]).filter(
    lambda s: len(s) <= 64 and not keyword.iskeyword(s)
)
logger_key = st.from_regex(pattern_of("loggerKey")).filter(lambda s: len(s) <= 200)
prefix = st.from_regex(pattern_of("prefix")).filter(lambda s: len(s) <= 200)
series = st.from_regex(pattern_of("seriesName")).filter(lambda s: len(s) <= 255)
unit = st.from_regex(pattern_of("unit")).filter(lambda s: 1 <= len(s) <= 63)
since = st.from_regex(DEFS["deprecated"]["properties"]["since"]["pattern"])
rule = st.from_regex(DEFS["noLint"]["items"]["pattern"])
text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)


@st.composite
def row(draw: st.DrawFn, teed: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if teed:
        fields["logger_key"] = draw(logger_key)
        if draw(st.booleans()):
            fields["prefix"] = draw(prefix)
    fields["name"] = draw(series)
    fields["kind"] = draw(st.sampled_from(KINDS))
    fields["unit"] = draw(unit)
    fields["description"] = draw(text)
    if draw(st.booleans()):
        fields["stability"] = draw(st.sampled_from(STABILITY_LEVELS))
    if draw(st.booleans()):
        deprecated: dict[str, Any] = {"since": draw(since)}
        if draw(st.booleans()):
            deprecated["replaced_by"] = draw(series)
        if draw(st.booleans()):
            deprecated["note"] = draw(text)
        fields["deprecated"] = deprecated
    if draw(st.booleans()):
        fields["no_lint"] = draw(st.lists(rule, unique=True, max_size=3))
    return fields


@st.composite
def document(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = {
        "owner": draw(owner),
        "module": draw(module),
        "description": draw(text),
    }
    if draw(st.booleans()):
        data["prefix"] = draw(prefix)
    if draw(st.booleans()):
        data["teed"] = draw(st.lists(row(teed=True), max_size=3))
    if draw(st.booleans()):
        data["recorded"] = draw(st.lists(row(teed=False), max_size=3))
    return data


# Values that break some rule somewhere: YAML non-strings, wrong containers,
# near-miss enum members, keywords, text around the patterns' edges and lengths.
EDGE_TEXT: list[str] = [
    "",
    "1",
    "ok",
    "a" * 63,
    "a" * 64,
    "a" * 65,
    "a" * 200,
    "a" * 201,
    "rl." + "a" * 252,
    "rl." + "a" * 253,
    "x" * 300,
    "Gauge",
    "counter ",
    "stable\n",
    "if",
    "class",
    "rl.",
    "rl.a..b",
    "a b",
    "1.0",
    "UNIT_IN_NAME",
]
edge_text = st.sampled_from(EDGE_TEXT)
bad_value = st.one_of(
    edge_text,
    edge_text,
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    text,
    text.map(lambda s: s + "\n"),
    st.lists(st.one_of(text, edge_text), max_size=2),
    st.dictionaries(text, text, max_size=2),
)


def _containers(data: dict[str, Any]) -> list[dict[str, Any] | list[Any]]:
    """Every mapping and list in the document, root first."""
    found: list[dict[str, Any] | list[Any]] = []
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list):
            found.append(node)
            stack.extend(node.values() if isinstance(node, dict) else node)
    return found


@st.composite
def corrupted(draw: st.DrawFn) -> dict[str, Any]:
    """A valid document with one change somewhere in it."""
    data = copy.deepcopy(draw(document()))
    target = draw(st.sampled_from(_containers(data)))
    if isinstance(target, list):
        action = draw(st.sampled_from(["replace", "append", "repeat"]))
        if target and action == "replace":
            target[draw(st.integers(0, len(target) - 1))] = draw(bad_value)
        elif target and action == "repeat":
            target.append(copy.deepcopy(draw(st.sampled_from(target))))
        else:
            target.append(draw(bad_value))
        return data
    action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
    keys = sorted(target)
    if action == "add" or not keys:
        name = draw(st.sampled_from(["descripton", "logger_key", "prefix", "note", "extra"]))
        target[name] = draw(st.one_of(st.just("ok"), bad_value))
    elif action == "delete":
        del target[draw(st.sampled_from(keys))]
    else:
        target[draw(st.sampled_from(keys))] = draw(bad_value)
    return data


def verdicts(data: dict[str, Any], flow: bool) -> tuple[bool, bool] | None:
    """(fast path accepts, jsonschema accepts) for the loaded document."""
    loaded = load_text(yaml.safe_dump(data, default_flow_style=flow), "catalog/x.yaml")
    if not isinstance(loaded.root, YMap):
        return None
    assert FAST is not None
    return FAST(loaded.root), schema_check.validator().is_valid(to_plain(loaded.root))


def test_the_fast_path_compiles_from_the_schema() -> None:
    """The catalog schema uses only keywords the fast path understands."""
    assert FAST is not None
    assert schema_check._FAST_CHECK is not None


@SETTINGS
@given(document(), st.booleans())
def test_valid_documents_pass_both_checks(data: dict[str, Any], flow: bool) -> None:
    """A valid document is accepted by jsonschema and by the fast path."""
    assert verdicts(data, flow) == (True, True)


@SETTINGS
@given(corrupted(), st.booleans())
def test_fast_path_acceptance_implies_jsonschema_acceptance(
    data: dict[str, Any], flow: bool
) -> None:
    """Whatever one field is changed to, the fast path never accepts more than jsonschema."""
    result = verdicts(data, flow)
    if result is not None:
        fast, full = result
        assert full or not fast


@SETTINGS
@given(corrupted(), st.booleans())
def test_check_schema_matches_the_jsonschema_walk(data: dict[str, Any], flow: bool) -> None:
    """check_schema reports exactly what the jsonschema walk reports, after the rows of
    numbers without ``kind``/``unit`` (the one rule the schema leaves to code, as an
    ``if``/``then`` would cost the fast path)."""
    loaded = load_text(yaml.safe_dump(data, default_flow_style=flow), "catalog/x.yaml")
    if not isinstance(loaded.root, YMap):
        return
    result = schema_check.check_schema(loaded.root)
    found: dict[tuple[str, object, str], object] = {}
    paths: set[tuple[str | int, ...]] = set()
    for index, diagnostic in schema_check._numeric_rows_fields(loaded.root):
        found.setdefault((diagnostic.code, diagnostic.position, diagnostic.message), diagnostic)
        paths.update({(), ("teed",), ("teed", index)})
    for error in schema_check.validator().iter_errors(to_plain(loaded.root)):
        steps = tuple(error.absolute_path)
        paths.update(steps[:end] for end in range(len(steps) + 1))
        for diagnostic in schema_check._map_error(loaded.root, error):
            found.setdefault((diagnostic.code, diagnostic.position, diagnostic.message), diagnostic)
    assert result.diagnostics == tuple(found.values())
    assert result.error_paths == frozenset(paths)


FULL_DOCUMENT: dict[str, Any] = {
    "owner": "nemo_rl.algorithms.grpo",
    "module": "grpo",
    "description": "GRPO metrics.",
    "prefix": "train",
    "teed": [
        {
            "logger_key": "reward/mean",
            "prefix": "",
            "name": "rl.reward.mean",
            "kind": "gauge",
            "unit": "1",
            "description": "Mean reward.",
            "stability": "stable",
            "deprecated": {"since": "0.2.0", "replaced_by": "rl.reward.avg", "note": "Renamed."},
            "no_lint": ["UNIT_IN_NAME", "NAME_STYLE"],
        },
        {
            "logger_key": "setup/{rl.setup.phase}_time_s",
            "prefixes": ["timing", "validation-{rl.dataset}"],
            "name": "rl.setup.duration",
            "kind": "gauge",
            "unit": "",
            "description": "Setup time.",
            "attributes": [
                {"ref": "rl.setup.phase", "requirement_level": "required"},
                {
                    "ref": "rl.bucket",
                    "derive": {
                        "from": "rl.setup.phase",
                        "map": {"policy_init": "overhead"},
                        "default": "idle",
                    },
                },
            ],
            "cardinality_limit": "100",
        },
    ],
    "attributes": [
        {
            "name": "rl.setup.phase",
            "type": "string",
            "description": "Phase.",
            "stability": "beta",
            "values": [{"value": "policy", "description": "Policy."}],
            "no_lint": ["ATTRIBUTE_NAME_SYNTAX"],
        },
        {"name": "rl.dataset", "type": "int", "description": "Set.", "max_cardinality": "8"},
    ],
    "recorded": [
        {
            "name": "rl.step.duration",
            "kind": "histogram",
            "unit": "s",
            "description": "Step time.",
            "stability": "beta",
            "deprecated": {"since": "1.0"},
            "no_lint": ["UNIT_IN_NAME"],
        }
    ],
}
EDGE_VALUES: list[Any] = [
    *EDGE_TEXT,
    None,
    True,
    0,
    1.5,
    "2024-01-01",
    [],
    ["a"],
    {},
    {"since": "1.0"},
]


def single_changes() -> list[dict[str, Any]]:
    """FULL_DOCUMENT with each key deleted, each value replaced by each edge value, each
    mapping given an extra key, and each list given a repeated or an extra item."""
    out: list[dict[str, Any]] = []
    for index in range(len(_containers(FULL_DOCUMENT))):

        def target(data: dict[str, Any], i: int = index) -> dict[str, Any] | list[Any]:
            return _containers(data)[i]

        probe = target(FULL_DOCUMENT)
        slots = list(probe) if isinstance(probe, dict) else list(range(len(probe)))
        for slot in slots:
            data = copy.deepcopy(FULL_DOCUMENT)
            del target(data)[slot]  # type: ignore[arg-type]
            out.append(data)
            for value in EDGE_VALUES:
                data = copy.deepcopy(FULL_DOCUMENT)
                target(data)[slot] = copy.deepcopy(value)  # type: ignore[index]
                out.append(data)
        for value in ["ok", *EDGE_VALUES]:
            data = copy.deepcopy(FULL_DOCUMENT)
            container = target(data)
            if isinstance(container, dict):
                container["extra"] = value
            else:
                container.append(value)
            out.append(data)
        if isinstance(probe, list) and probe:
            data = copy.deepcopy(FULL_DOCUMENT)
            repeated = target(data)
            assert isinstance(repeated, list)
            repeated.append(copy.deepcopy(repeated[0]))
            out.append(data)
    return out


def test_every_single_change_of_a_full_document() -> None:
    """Exhaustively over one document using every field: fast acceptance implies validity."""
    assert verdicts(FULL_DOCUMENT, flow=False) == (True, True)
    outcomes = set()
    for data in single_changes():
        for flow in (False, True):
            result = verdicts(data, flow)
            assert result is not None
            fast, full = result
            assert full or not fast, data
            outcomes.add(result)
    assert outcomes == {(True, True), (False, False)}


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s["$defs"]["noLint"].update(maxItems=1),
        lambda s: s["$defs"]["unit"].update(format="email"),
        lambda s: s["$defs"]["deprecated"].update(patternProperties={"^x": {"type": "string"}}),
        lambda s: s["$defs"]["deprecated"].update(additionalProperties={"maxItems": 1}),
        lambda s: s["properties"]["module"]["not"].update(pattern="^x"),
        lambda s: s["$defs"]["kind"].update(type=["string", "null"]),
    ],
)
def test_an_unknown_keyword_disables_the_fast_path(change: Any) -> None:
    """A schema the fast path does not fully understand sends every file to jsonschema."""
    schema = copy.deepcopy(SCHEMA)
    change(schema)
    assert (
        schema_check.compile_fast_check(schema_check._inline_refs(schema, schema["$defs"])) is None
    )


def test_validating_a_clean_catalog_does_not_import_jsonschema() -> None:
    """jsonschema is imported only for a file the fast path rejects."""
    script = (
        "import sys; from pathlib import Path; "
        "from codegen.catalog.pipeline import load_and_check; "
        f"result = load_and_check(root=Path({str(REPO)!r})); "
        "assert result.catalog.files; "
        "print('jsonschema' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
