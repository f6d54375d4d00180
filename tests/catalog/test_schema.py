"""The catalog JSON schema: well-formed, closed, documented, and in step with the model."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from codegen.catalog import schema_check
from metric_catalog.series_rules import METRIC_KINDS as KINDS
from metric_catalog.series_rules import STABILITY_LEVELS
from metric_catalog.vocabulary import METRIC_KINDS, check_namespace


def walk(schema: Any, path: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema with its JSON pointer."""
    if isinstance(schema, dict):
        yield path, schema
        for key, value in schema.items():
            yield from walk(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from walk(value, f"{path}/{index}")


SCHEMA = schema_check.load_schema()


def test_schema_is_valid_2020_12_with_versioned_urn_id() -> None:
    """The schema checks against its metaschema and names its version without a web host."""
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"] == schema_check.SCHEMA_ID == "urn:metric-catalog:schema:catalog:1-0-0"


@pytest.mark.parametrize(
    "pointer", [p for p, s in walk(SCHEMA) if s.get("type") == "object" or "properties" in s]
)
def test_every_object_is_closed(pointer: str) -> None:
    """``additionalProperties: false`` on every record, so typos are caught; a map (no
    ``properties``, such as a derivation's ``map``) instead types every value it holds,
    but ``annotations``: the team's own data, any YAML, says so (the builder bounds it)."""
    subschema = dict(walk(SCHEMA))[pointer]
    extra = subschema.get("additionalProperties")
    if pointer == "#/$defs/annotations":
        assert extra is True
    elif "properties" in subschema:
        assert extra is False
    else:
        assert isinstance(extra, dict)
        assert extra.get("type") == "string"


def test_every_field_has_a_description_for_editors() -> None:
    """Each property documents itself (editors show it on hover)."""
    definitions = SCHEMA["$defs"]
    for pointer, subschema in walk(SCHEMA):
        for name, prop in subschema.get("properties", {}).items():
            described = "description" in prop or (
                "$ref" in prop and "description" in definitions[prop["$ref"].split("/")[-1]]
            )
            assert described, f"{pointer}/properties/{name}"


def test_enums_match_the_model_and_the_runtime() -> None:
    """Kinds and stability levels agree between schema, model and vocabulary."""
    assert tuple(SCHEMA["$defs"]["kind"]["enum"]) == KINDS == METRIC_KINDS
    assert tuple(SCHEMA["$defs"]["stability"]["enum"]) == STABILITY_LEVELS


def test_module_keywords_are_pythons() -> None:
    """The module-name keyword list is the lowercase keywords of this Python."""
    banned = SCHEMA["properties"]["module"]["not"]["enum"]
    assert banned == [word for word in keyword.kwlist if word.islower()]


def test_validator_is_compiled_once() -> None:
    """The validator is cached per process."""
    assert schema_check.validator() is schema_check.validator()


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("rl.reward.mean", True),
        ("rl.sft_v2.valid_tokens_per_second", True),
        ("rl.a.1b", True),
        # Any namespace's shape: the builder holds the name to its file's namespace.
        ("reward.mean", True),
        ("jvm.memory.used", True),
        ("gen_ai.client.token.usage", True),
        ("JVM.memory", False),
        ("reward", False),
        ("rl.", False),
        ("rl..x", False),
        ("rl.x.", False),
        ("rl.x-y", False),
        ("rl.x:y", False),
        ("rl.x y", False),
    ],
)
def test_series_name_pattern(name: str, valid: bool) -> None:
    """The schema's name pattern accepts registry-key-compatible names only."""
    pattern = SCHEMA["$defs"]["seriesName"]["pattern"]
    assert bool(re.match(pattern, name)) is valid


@pytest.mark.parametrize(
    "namespace", ["rl.", "jvm.", "gen_ai.", "hw.gpu.", "", "rl", "RL.", "1a.", "a..", ".", "a-b."]
)
def test_namespace_pattern_is_the_runtimes_rule(namespace: str) -> None:
    """The schema's file ``namespace`` pattern accepts exactly what the runtime accepts."""
    pattern = SCHEMA["properties"]["namespace"]["pattern"]
    try:
        check_namespace(namespace)
    except ValueError:
        accepted = False
    else:
        accepted = True
    assert bool(re.fullmatch(pattern, namespace)) is accepted
