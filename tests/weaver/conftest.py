"""Fixtures of the Weaver interop tests: Weaver's JSON schemas and real semconv files.

They are read from ``../shared/reference/weaver`` beside the repository (CI has
``../shared`` beside the clone; in a git worktree, beside the main working tree)
and never copied into the repository. Without them the tests that need them skip,
saying where they looked.

:func:`schema_problems` validates a registry folder the way Weaver's parser reads
it, stricter than the published schemas alone: each v1 group against its own
type's branch (the schema's ``anyOf`` lets a ``type: metric`` group without ``unit``
through the generic branch), with the parser's key lists (``deny_unknown_fields``),
and the manifest with ``schema_url`` as the string Weaver really reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
_REFERENCE = Path("reference") / "weaver"


def _main_worktree(repo: Path) -> Path | None:
    """The main working tree of a git worktree ``repo`` (its ``.git`` is a file), else None."""
    dot_git = repo / ".git"
    if not dot_git.is_file():
        return None
    text = dot_git.read_text(encoding="utf-8").strip()
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.removeprefix("gitdir:").strip())
    common = gitdir / "commondir"
    if common.is_file():
        gitdir = (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
    return gitdir.parent


def shared_candidates(repo: Path = REPO) -> list[Path]:
    """Where ``../shared`` may be: beside the clone, else beside the main worktree."""
    found = [repo.parent / "shared"]
    main = _main_worktree(repo)
    if main is not None:
        found.append(main.parent / "shared")
    return found


def _reference() -> Path:
    for shared in shared_candidates():
        if (shared / _REFERENCE).is_dir():
            return shared / _REFERENCE
    looked = ", ".join(str(path / _REFERENCE) for path in shared_candidates())
    pytest.skip(f"Weaver's schemas and the semconv files are not here (looked in {looked})")


@pytest.fixture(scope="session")
def weaver_reference() -> Path:
    """``../shared/reference/weaver``: schemas/, semconv-registry/ (skips when absent)."""
    return _reference()


@pytest.fixture(scope="session")
def semconv_registry(weaver_reference: Path) -> Path:
    """The real semantic-convention registry folder (25 metrics, v1 and v2 files mixed)."""
    return weaver_reference / "semconv-registry"


@pytest.fixture(scope="session")
def weaver_schemas(weaver_reference: Path) -> dict[str, dict[str, Any]]:
    """Weaver's schemas by name: ``v1``, ``v2``, ``manifest``."""
    folder = weaver_reference / "schemas"
    names = {
        "v1": "semconv.schema.json",
        "v2": "semconv.schema.v2.json",
        "manifest": "definition-manifest.v2.json",
    }
    return {
        key: json.loads((folder / name).read_text(encoding="utf-8")) for key, name in names.items()
    }


def _errors(schema: dict[str, Any], document: object) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
        for error in validator.iter_errors(document)
    ]


def _branch(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """A ``$defs`` branch as a schema of its own."""
    return {"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]}


def _keys(schema: dict[str, Any], *names: str) -> set[str]:
    """The property names the ``$defs`` ``names`` declare, their ``allOf`` parts included."""
    found: set[str] = set()
    defs = schema["$defs"]
    for name in names:
        stack = [defs[name]]
        while stack:
            part = stack.pop()
            found |= set(part.get("properties", {}))
            stack.extend(part.get("allOf", []))
            stack.extend(
                defs[ref["$ref"].rsplit("/", 1)[-1]]
                for ref in part.get("allOf", [])
                if "$ref" in ref
            )
    return found


_V1_BRANCHES = {
    "metric": "MetricSemanticConvention",
    "span": "SpanSemanticConvention",
    "event": "EventSemanticConvention",
    "entity": "EntitySemanticConvention",
}


def _v1_problems(schema: dict[str, Any], document: Any) -> list[str]:
    problems = _errors(schema, document)
    attribute_keys = _keys(schema, "Attribute", "AttributeFullSpec", "AttributeReference")
    for index, group in enumerate(document.get("groups", [])):
        branch = _V1_BRANCHES.get(group.get("type"), "SemanticConvention")
        where = f"groups/{index} ({group.get('id')})"
        problems += [f"{where}: {p}" for p in _errors(_branch(schema, branch), group)]
        allowed = _keys(schema, "SemanticConventionBase", branch)
        problems += [f"{where}: unknown key {key!r}" for key in set(group) - allowed]
        if "prefix" in group:
            problems.append(f"{where}: prefix is refused by Weaver's parser")
        for attribute in group.get("attributes", []):
            extra = set(attribute) - attribute_keys
            problems += [f"{where}: attribute key {key!r} is unknown" for key in extra]
            if group.get("type") == "attribute_group" and "ref" in attribute:
                problems.append(f"{where}: a registry group holds a ref (otel_policies.rego)")
    return problems


def _manifest_problems(schema: dict[str, Any], document: Any, version: str | None) -> list[str]:
    # Weaver reads schema_url as a string (schema_url.rs); the schema calls it an object.
    fixed = {**schema, "$defs": {**schema["$defs"], "SchemaUrl": {"type": "string"}}}
    problems = _errors(fixed, document)
    url = document.get("schema_url")
    if not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        problems.append(f"schema_url {url!r} is not an http(s) URL")
    elif version is not None and url.rstrip("/").rsplit("/", 1)[-1] != version:
        problems.append(f"schema_url {url!r} does not end with the version {version}")
    return problems


def _files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.suffix in (".yaml", ".yml") and not any(p.startswith(".") for p in path.parts):
            yield path


@pytest.fixture(scope="session")
def schema_problems(
    weaver_schemas: dict[str, dict[str, Any]],
) -> Callable[[Path, str | None], list[str]]:
    """``check(folder, version)``: every way a registry folder breaks Weaver's schemas."""

    def check(folder: Path, version: str | None = None) -> list[str]:
        problems: list[str] = []
        for path in _files(folder):
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
            rel = path.relative_to(folder).as_posix()
            if rel == "manifest.yaml":
                found = _manifest_problems(weaver_schemas["manifest"], document, version)
            elif document.get("file_format") == "definition/2":
                found = _errors(weaver_schemas["v2"], document)
            else:
                found = _v1_problems(weaver_schemas["v1"], document)
            problems += [f"{rel}: {p}" for p in found]
        return problems

    return check


_DERIVED_PLACES = frozenset({"file", "source", "field_sources", "python_constant", "path"})
"""Where a row or file is (and what follows from it): differs between two folders."""


def _placeless(items: Any) -> Any:
    return [{k: v for k, v in item.items() if k not in _DERIVED_PLACES} for item in items]


@pytest.fixture(scope="session")
def resolved_view() -> Callable[[Any], dict[str, Any]]:
    """``view(catalog)``: the resolved catalog without file paths and positions, rows by name."""
    from codegen.generate.resolve import resolve_catalog

    def view(catalog: Any) -> dict[str, Any]:
        document = resolve_catalog(catalog)
        return {
            "rows": {row["name"]: _placeless([row])[0] for row in document["rows"]},
            **{
                key: _placeless(document[key])
                for key in ("files", "loops", "bookkeeping", "attributes")
            },
        }

    return view
