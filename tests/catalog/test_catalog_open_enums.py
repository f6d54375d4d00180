"""``open: "true"``: an enum that lists its known values and takes others within a budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.catalog.pipeline import CheckResult, load_and_check
from codegen.generate.resolve import resolve_catalog

HEAD = """\
owner: pkg.gen
module: gen
description: Generation metrics.
attributes:
  - name: rl.error.type
    type: {type}
    description: What went wrong.
{domain}
recorded:
  - name: rl.gen.errors
    kind: counter
    unit: "{{error}}"
    description: Errors, by type.
    attributes: [{ref}]
"""

LISTED = """\
    values:
      - {value: timeout, description: A request timed out.}
      - {value: oom, description: Out of memory.}
"""


def _load(tmp_path: Path, domain: str, *, kind: str = "string", ref: str = "") -> CheckResult:
    (tmp_path / "catalog").mkdir(exist_ok=True)
    text = HEAD.format(type=kind, domain=domain.rstrip("\n"), ref=ref or "{ref: rl.error.type}")
    (tmp_path / "catalog" / "gen.yaml").write_text(text, encoding="utf-8")
    return load_and_check(root=tmp_path, lint=False)


def test_an_open_enum_keeps_its_values_budget_and_openness_through_resolve(
    tmp_path: Path,
) -> None:
    result = _load(tmp_path, LISTED + '    open: "true"\n    max_cardinality: "16"\n')
    assert result.ok, [d.format() for d in result.diagnostics]
    attribute = result.catalog.attributes()["rl.error.type"]
    assert (attribute.open_enum, attribute.domain, attribute.bound) == (True, None, 18)
    assert attribute.capture.values is None  # a placeholder captures any value
    document = resolve_catalog(result.catalog)
    (declared,) = document["attributes"]
    assert (declared["open"], declared["max_cardinality"]) == (True, 16)
    assert [v["value"] for v in declared["values"]] == ["timeout", "oom"]
    (row,) = document["rows"]
    assert row["attributes"][0]["open"] is True


def test_a_closed_enum_stays_closed(tmp_path: Path) -> None:
    result = _load(tmp_path, LISTED)
    assert result.ok
    attribute = result.catalog.attributes()["rl.error.type"]
    assert (attribute.open_enum, attribute.domain, attribute.bound) == (
        False,
        ("timeout", "oom"),
        2,
    )


@pytest.mark.parametrize(
    ("domain", "kind", "said"),
    [
        ('    open: "true"\n    max_cardinality: "4"\n', "string", "needs the known 'values'"),
        (LISTED + '    open: "true"\n', "string", "needs the known 'values'"),
        (LISTED + '    max_cardinality: "4"\n', "string", "or say 'open: \"true\"'"),
    ],
    ids=["no values", "no budget", "budget without open"],
)
def test_an_open_enum_needs_values_and_a_budget_of_others(
    tmp_path: Path, domain: str, kind: str, said: str
) -> None:
    result = _load(tmp_path, domain, kind=kind)
    codes = [d for d in result.diagnostics if d.code == "ATTRIBUTE_DOMAIN"]
    assert len(codes) == 1, [d.format() for d in result.diagnostics]
    assert said in codes[0].message
    assert not result.ok


def test_a_row_cannot_narrow_an_open_enum(tmp_path: Path) -> None:
    result = _load(
        tmp_path,
        LISTED + '    open: "true"\n    max_cardinality: "4"\n',
        ref="{ref: rl.error.type, values: [timeout]}",
    )
    (finding,) = result.diagnostics
    assert finding.code == "ATTRIBUTE_SUBSET"
    assert "is an open enum" in finding.message
