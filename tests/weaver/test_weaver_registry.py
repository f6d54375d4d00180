"""Reading a Weaver registry (both formats, references resolved) and Weaver's rules on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.weaver.registry import load_registry
from codegen.weaver.rules import check_registry

ATTRS = {
    "groups": [
        {
            "id": "registry.rl",
            "type": "attribute_group",
            "brief": "RL attributes.",
            "attributes": [
                {
                    "id": "rl.dataset",
                    "type": "string",
                    "brief": "Dataset.",
                    "stability": "stable",
                    "examples": ["gsm8k"],
                },
                {"id": "rl.phase", "type": "int", "brief": "Phase.", "stability": "development"},
            ],
        }
    ]
}


def metric(name: str, **fields: Any) -> dict[str, Any]:
    """A v1 metric group that passes every rule unless ``fields`` say otherwise."""
    group = {
        "id": f"metric.{name}",
        "type": "metric",
        "metric_name": name,
        "instrument": "gauge",
        "unit": "1",
        "stability": "development",
        "brief": "A ratio.",
    }
    group.update(fields)
    return {k: v for k, v in group.items() if v is not None}


def registry(tmp_path: Path, files: dict[str, Any]) -> Path:
    for name, document in {"attributes.yaml": ATTRS, **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = document if isinstance(document, str) else yaml.safe_dump(document)
        path.write_text(text, encoding="utf-8")
    return tmp_path


RULE_CASES = [
    ("WEAVER_FIELD", [metric("rl.a", unit=None)]),
    ("WEAVER_FIELD", [metric("rl.a", instrument="timer")]),
    ("WEAVER_FIELD", [metric("rl.a", stability="experimental")]),
    ("WEAVER_NAME", [metric("rl.Loss")]),
    ("WEAVER_BRIEF", [metric("rl.a", brief="No period")]),
    ("WEAVER_NAMESPACE_COLLISION", [metric("rl.a"), metric("rl.a.b")]),
    ("WEAVER_CONSTANT_COLLISION", [metric("rl.a_b"), metric("rl.a.b")]),
    (
        "WEAVER_STABILITY",
        [metric("rl.a", stability="stable", attributes=[{"ref": "rl.phase"}])],
    ),
    (
        "WEAVER_RENAMED_TARGET",
        [metric("rl.a", deprecated={"reason": "renamed", "renamed_to": "rl.gone"})],
    ),
    (
        "WEAVER_EXAMPLES",
        [
            {
                "id": "registry.x",
                "type": "attribute_group",
                "brief": "X.",
                "attributes": [
                    {"id": "rl.x", "type": "string", "brief": "X.", "stability": "stable"}
                ],
            }
        ],
    ),
]


@pytest.mark.parametrize(("code", "groups"), RULE_CASES, ids=[c for c, _ in RULE_CASES])
def test_each_rule_fires_on_the_registry_that_breaks_it(
    tmp_path: Path, code: str, groups: list[dict[str, Any]]
) -> None:
    found = check_registry(load_registry(registry(tmp_path, {"m.yaml": {"groups": groups}})))
    assert {d.code for d in found} == {code}, [d.format() for d in found]
    assert all(d.position is not None for d in found if d.code != "WEAVER_CONSTANT_COLLISION")


@pytest.mark.parametrize(
    "groups",
    [
        [metric("rl.a"), metric("rl.ab")],  # a shared start is no namespace
        [metric("rl.a", stability="stable", attributes=[{"ref": "rl.dataset"}])],
        [
            metric(
                "rl.a",
                stability="stable",
                attributes=[{"ref": "rl.phase", "requirement_level": "opt_in"}],
            )
        ],
        [metric("rl.a"), metric("rl.b", deprecated={"reason": "renamed", "renamed_to": "rl.a"})],
        [metric("rl.a", unit="")],  # dimensionless: an empty unit is a unit
    ],
    ids=["prefix-only", "stable-attribute", "opt-in", "rename-exists", "empty-unit"],
)
def test_no_rule_fires_on_a_registry_that_keeps_them(
    tmp_path: Path, groups: list[dict[str, Any]]
) -> None:
    found = load_registry(registry(tmp_path, {"m.yaml": {"groups": groups}}))
    assert found.diagnostics == []
    assert check_registry(found) == []


def test_extends_and_ref_group_are_flattened_into_explicit_refs(tmp_path: Path) -> None:
    base = {
        "id": "rl.base",
        "type": "attribute_group",
        "brief": "B.",
        "attributes": [{"ref": "rl.dataset", "requirement_level": "required"}],
    }
    v1 = {"groups": [base, metric("rl.a", extends="rl.base", attributes=[{"ref": "rl.phase"}])]}
    v2 = {
        "file_format": "definition/2",
        "attribute_groups": [
            {
                "id": "rl.common",
                "visibility": "internal",
                "attributes": [{"ref": "rl.phase", "requirement_level": "opt_in"}],
            }
        ],
        "metrics": [
            {
                "name": "rl.b",
                "instrument": "counter",
                "unit": "{x}",
                "brief": "B.",
                "stability": "development",
                "attributes": [
                    {"ref_group": "rl.common"},
                    {
                        "ref": "rl.dataset",
                        "requirement_level": {"conditionally_required": "when X"},
                    },
                ],
            }
        ],
    }
    found = load_registry(registry(tmp_path, {"v1.yaml": v1, "sub/v2.yaml": v2}))
    assert found.diagnostics == []
    refs = {
        m.name: [(r.key, r.requirement_level, r.condition) for r in m.attributes]
        for m in found.metrics
    }
    assert refs == {
        "rl.a": [("rl.dataset", "required", None), ("rl.phase", "recommended", None)],
        "rl.b": [("rl.phase", "opt_in", None), ("rl.dataset", "conditionally_required", "when X")],
    }


@pytest.mark.parametrize(
    ("files", "code"),
    [
        ({"m.yaml": {"groups": [metric("rl.a", extends="rl.nothing")]}}, "WEAVER_REF_UNKNOWN"),
        (
            {"m.yaml": {"groups": [metric("rl.a", attributes=[{"ref": "rl.nothing"}])]}},
            "WEAVER_REF_UNKNOWN",
        ),
        (
            {
                "m.yaml": {
                    "groups": [
                        {
                            "id": "g1",
                            "type": "attribute_group",
                            "brief": "x",
                            "extends": "g2",
                            "attributes": [],
                        },
                        {
                            "id": "g2",
                            "type": "attribute_group",
                            "brief": "x",
                            "extends": "g1",
                            "attributes": [],
                        },
                        metric("rl.a", extends="g1"),
                    ]
                }
            },
            "WEAVER_REF_UNKNOWN",
        ),
        ({"stray.yaml": {"owner": "x"}}, "WEAVER_FILE"),
        ({"bad.yaml": "groups: [\n"}, "YAML_SYNTAX"),
        (
            {
                "m.yaml": {
                    "groups": [
                        {
                            "id": "s",
                            "type": "span",
                            "brief": "x",
                            "stability": "stable",
                            "attributes": [],
                        }
                    ]
                }
            },
            "WEAVER_SKIPPED",
        ),
        (
            {
                "m.yaml": {
                    "file_format": "definition/2",
                    "metric_refinements": [{"id": "r", "ref": "rl.a"}],
                }
            },
            "WEAVER_SKIPPED",
        ),
        ({"m.yaml": {"groups": [], "imports": {"metrics": ["jvm.*"]}}}, "WEAVER_SKIPPED"),
        (
            {
                "m.yaml": {
                    "groups": [
                        {
                            "id": "rl.dataset",
                            "type": "attribute_group",
                            "brief": "x",
                            "attributes": [
                                {
                                    "id": "rl.dataset",
                                    "type": "int",
                                    "brief": "x",
                                    "stability": "stable",
                                }
                            ],
                        }
                    ]
                }
            },
            "WEAVER_DUPLICATE",
        ),
    ],
    ids=[
        "extends-unknown",
        "ref-unknown",
        "extends-cycle",
        "stray-yaml",
        "bad-yaml",
        "span",
        "refinement",
        "import-no-dependency",
        "duplicate",
    ],
)
def test_a_hostile_registry_is_reported_never_raised(
    tmp_path: Path, files: dict[str, Any], code: str
) -> None:
    found = load_registry(registry(tmp_path, files))
    assert code in {d.code for d in found.diagnostics}, [d.format() for d in found.diagnostics]


def test_hidden_entries_and_non_yaml_files_are_not_read(tmp_path: Path) -> None:
    files = {".hidden/x.yaml": {"owner": "x"}, ".x.yaml": {"owner": "x"}, "notes.txt": "groups: ["}
    found = load_registry(registry(tmp_path, files))
    assert found.diagnostics == []
    assert found.files == ["attributes.yaml"]


def test_imports_bring_in_the_named_metrics_of_a_local_dependency(tmp_path: Path) -> None:
    dependency = registry(
        tmp_path / "dep", {"m.yaml": {"groups": [metric("jvm.a"), metric("jvm.b"), metric("hw.c")]}}
    )
    manifest = {
        "schema_url": "https://e.com/s/1.0.0",
        "dependencies": [{"schema_url": "https://e.com/d/1.0.0", "registry_path": "../dep"}],
    }
    main = tmp_path / "main"
    main.mkdir()
    (main / "manifest.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    (main / "m.yaml").write_text(
        yaml.safe_dump({"groups": [], "imports": {"metrics": ["jvm.*"]}}), encoding="utf-8"
    )
    del dependency
    found = load_registry(main)
    assert found.diagnostics == []
    assert sorted((m.name, m.imported) for m in found.metrics) == [("jvm.a", True), ("jvm.b", True)]
