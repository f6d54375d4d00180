"""Hostile registries: any value anywhere in an exported registry is reported, never raised.

An exported registry (the repository's catalog) has one value replaced by junk
(a wrong type, an empty or control-character string, a deep structure), then it
is read, checked and imported; the import's files are validated like the command
does. Nothing may raise, and every finding is a documented code.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.codes import CODES
from codegen.weaver.export import CATALOG_JSON, export_registry
from codegen.weaver.importer import import_registry
from codegen.weaver.registry import load_registry
from codegen.weaver.rules import check_registry

KNOWN = frozenset(code.code for code in CODES)

SETTINGS = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["", "\x00", "\u202e", "2024-01-01", "1e309", "rl.", "_OTHER", "{x}"]),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _paths(node: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in a YAML or JSON document."""
    found = [here]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*here, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*here, index))
    return found


def _replace(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node[path[0]] = _replace(node[path[0]], path[1:], value)
    return node


@pytest.fixture(scope="module")
def files(repo_catalog: Catalog) -> dict[str, str]:
    """The repository's catalog exported once for every example."""
    return export_registry(
        repo_catalog, version="1.0.0", base_url="https://e.com/s", description="d."
    )


@SETTINGS
@given(data=st.data())
def test_junk_anywhere_in_a_registry_is_reported_never_raised(
    files: dict[str, str], data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(files)))
    is_json = name == CATALOG_JSON
    document = json.loads(files[name]) if is_json else yaml.safe_load(files[name])
    path = data.draw(st.sampled_from(_paths(document)))
    document = _replace(document, path, data.draw(junk))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for other, text in files.items():
            (root / other).write_text(text, encoding="utf-8")
        changed = json.dumps(document, default=str) if is_json else yaml.safe_dump(document)
        (root / name).write_text(changed, encoding="utf-8")
        registry = load_registry(root)
        findings = [*registry.diagnostics, *check_registry(registry)]
        result = import_registry(registry)
        findings += result.diagnostics
        out = root / "out"
        out.mkdir()
        for file_name, text in result.files.items():
            (out / file_name).write_text(text, encoding="utf-8")
        findings += load_and_check(sorted(out.glob("*.yaml")), root=out, lint=False).diagnostics
    # Every finding is one the diagnostics reference documents, with its fix.
    assert {d.code for d in findings} <= KNOWN
