"""A catalog file's series ``namespace:`` (``rl.`` unless it declares another)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.pipeline import CheckResult, load_and_check

HEADER = """\
owner: pkg.jvm
module: jvm
description: JVM metrics.
"""

ROWS = """\
recorded:
  - name: {name}
    kind: gauge
    unit: By
    description: Heap in use.
"""


def _load(tmp_path: Path, text: str, *, lint: bool = False) -> CheckResult:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "jvm.yaml").write_text(text, encoding="utf-8")
    return load_and_check(root=tmp_path, lint=lint)


@pytest.mark.parametrize(
    ("namespace", "name", "key"),
    [
        ("jvm.", "jvm.memory.used", "memory_used"),
        ("gen_ai.", "gen_ai.client.token.usage", "client_token_usage"),
        ("hw.gpu.", "hw.gpu.memory.used", "memory_used"),
        ("rl.", "rl.memory.used", "memory_used"),
    ],
)
def test_a_declared_namespace_names_the_rows_and_their_keys(
    tmp_path: Path, namespace: str, name: str, key: str
) -> None:
    """Rows of a file declaring ``namespace:`` start with it; their keys strip it."""
    text = HEADER + f"namespace: {namespace}\n" + ROWS.format(name=name)
    result = _load(tmp_path, text, lint=True)
    assert result.ok, result.diagnostics
    assert not [d for d in result.diagnostics if d.code == "NAME_SYNTAX"]
    ((_file, row),) = result.catalog.rows()
    assert (row.namespace, row.registry_key, row.constant_name) == (namespace, key, key.upper())
    assert result.catalog.files[0].namespace == namespace


def test_without_a_namespace_rows_are_in_rl(tmp_path: Path) -> None:
    """A file that declares no namespace keeps the documented ``rl.`` default."""
    result = _load(tmp_path, HEADER + ROWS.format(name="rl.memory.used"))
    assert result.ok, result.diagnostics
    assert result.catalog.files[0].rows[0].namespace == "rl."


@pytest.mark.parametrize(
    ("namespace", "name"),
    [("", "jvm.memory.used"), ("namespace: jvm.\n", "rl.memory.used")],
)
def test_a_name_outside_the_files_namespace_is_an_error_naming_the_fix(
    tmp_path: Path, namespace: str, name: str
) -> None:
    """A row whose name lacks its file's namespace is refused, with the name to write."""
    result = _load(tmp_path, HEADER + namespace + ROWS.format(name=name))
    assert not result.ok
    (finding,) = [d for d in result.diagnostics if d.code == "INVALID_FORMAT"]
    assert finding.position.path == "catalog/jvm.yaml"
    assert finding.position.line == len((HEADER + namespace).splitlines()) + 2
    assert "must start with" in finding.message
    assert "write it as" in finding.message


@pytest.mark.parametrize("namespace", ["jvm", "JVM.", '""', "1a.", "a..b.", "jvm-x."])
def test_a_malformed_namespace_builds_no_row(tmp_path: Path, namespace: str) -> None:
    """A broken namespace would put every row under the wrong key: the file builds nothing."""
    text = HEADER + f"namespace: {namespace}\n" + ROWS.format(name="jvm.memory.used")
    result = _load(tmp_path, text)
    assert not result.ok
    (finding,) = [d for d in result.diagnostics if d.code == "INVALID_FORMAT"]
    assert finding.position.line == 4
    assert "namespace" in finding.message
    assert list(result.catalog.rows()) == []


def test_one_key_in_two_namespaces_is_a_duplicate_registry_key(tmp_path: Path) -> None:
    """Keys stay unique across the catalog: rl.memory.used and jvm.memory.used clash."""
    (tmp_path / "catalog").mkdir()
    jvm = HEADER + "namespace: jvm.\n" + ROWS.format(name="jvm.memory.used")
    rl = HEADER.replace("jvm", "train") + ROWS.format(name="rl.memory.used")
    (tmp_path / "catalog" / "jvm.yaml").write_text(jvm, encoding="utf-8")
    (tmp_path / "catalog" / "train.yaml").write_text(rl, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert [d.code for d in result.diagnostics] == ["DUPLICATE_REGISTRY_KEY"]
