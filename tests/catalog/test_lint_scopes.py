"""One lint shape for rows, attributes, files and the whole catalog; ``no_lint`` judged once."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from codegen.catalog import lints
from codegen.catalog.diagnostics import Diagnostic, Position, Severity
from codegen.catalog.lints import LINTS, RULES, Nit, Scope, lint_catalog, rule
from codegen.catalog.model import Attribute, Catalog, CatalogFile, MetricRow
from codegen.catalog.pipeline import load_and_check

HEAD = """\
owner: nemo_rl.{module}
module: {module}
description: Metrics of the {module} loop.
"""


def _row(key: str, name: str, extra: str = "") -> str:
    return f"""\
  - logger_key: {key}
    name: {name}
    kind: gauge
    unit: "1"
    description: Some value of the loop for the step.
{extra}"""


def _catalog(tmp_path: Path, **files: str) -> list[Diagnostic]:
    """Load and lint ``files`` (module name -> rows under ``teed:``); the findings."""
    for module, rows in files.items():
        text = HEAD.format(module=module) + "teed:\n" + rows
        (tmp_path / f"{module}.yaml").write_text(text, encoding="utf-8")
    return list(load_and_check(sorted(tmp_path.glob("*.yaml")), root=tmp_path).diagnostics)


def _codes(found: list[Diagnostic]) -> list[tuple[str, str, int]]:
    return [(d.code, d.position.path, d.position.line) for d in found if d.position]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("rl.reward.mean", "rl.rewards.mean"),  # a plural
        ("rl.gpu.busy", "rl.gpubusy"),  # a separator dropped
        ("rl.batch.tokens", "rl.batch_token"),  # both
    ],
)
def test_names_differing_only_by_separators_or_a_plural_are_too_similar(
    tmp_path: Path, first: str, second: str
) -> None:
    found = _catalog(tmp_path, grpo=_row("a", first) + _row("b", second))
    (finding,) = found
    assert (finding.code, finding.severity) == ("NAME_TOO_SIMILAR", Severity.WARNING)
    assert finding.position is not None
    assert (finding.position.line, finding.position.column) == (11, 11)  # the later name
    assert repr(first) in finding.message
    assert "grpo.yaml:6:11" in finding.message


def test_name_too_similar_spans_files(tmp_path: Path) -> None:
    found = _catalog(tmp_path, dpo=_row("a", "rl.loss.values"), sft=_row("b", "rl.loss.value"))
    assert _codes(found) == [("NAME_TOO_SIMILAR", "sft.yaml", 6)]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("rl.reward.mean", "rl.reward_mean"),  # DUPLICATE_REGISTRY_KEY (and constant)
        ("rl.loss", "rl.loss.scale"),  # different words
        ("rl.class.loss", "rl.clas.loss"),  # 'ss' is no plural
    ],
)
def test_names_that_clash_as_errors_or_differ_in_a_word_are_not_too_similar(
    tmp_path: Path, first: str, second: str
) -> None:
    found = _catalog(tmp_path, grpo=_row("a", first) + _row("b", second))
    assert "NAME_TOO_SIMILAR" not in {d.code for d in found}


def test_no_lint_on_the_later_row_silences_name_too_similar(tmp_path: Path) -> None:
    later = _row("b", "rl.rewards.mean", "    no_lint: [NAME_TOO_SIMILAR]\n")
    assert _catalog(tmp_path, grpo=_row("a", "rl.reward.mean") + later) == []


def test_no_lint_of_a_catalog_rule_that_does_not_fire_is_unused(tmp_path: Path) -> None:
    row = _row("a", "rl.reward.mean", "    no_lint: [NAME_TOO_SIMILAR]\n")
    (finding,) = _catalog(tmp_path, grpo=row)
    assert finding.code == "UNUSED_NO_LINT"
    assert "'rl.reward.mean' does not trigger it" in finding.message


def test_a_row_cannot_silence_an_attribute_rule(tmp_path: Path) -> None:
    row = _row("a", "rl.reward.mean", "    no_lint: [ATTRIBUTE_NAME_SYNTAX]\n")
    (finding,) = _catalog(tmp_path, grpo=row)
    assert finding.code == "UNKNOWN_LINT"
    assert "not a lint rule" in finding.message


ATTRIBUTES = """\
owner: nemo_rl.telemetry
module: attributes
description: Attributes shared by every owner.
attributes:
  - name: rl.setup.phase
    type: string
    description: {description}
    max_cardinality: "8"
    no_lint: [{silenced}]
"""


@pytest.mark.parametrize(
    ("description", "silenced", "expected"),
    [
        ("startup phase", "ATTRIBUTE_DESCRIPTION_FORMAT", []),
        ("Startup phase.", "ATTRIBUTE_DESCRIPTION_FORMAT", ["UNUSED_NO_LINT"]),
        ("Startup phase.", "UNIT_IN_NAME", ["UNKNOWN_LINT"]),
        ("Startup phase.", "ATTRIBUTE_DESCRIPTION_FORMA", ["UNKNOWN_LINT"]),
    ],
)
def test_attributes_silence_their_rules_through_the_same_no_lint_judge(
    tmp_path: Path, description: str, silenced: str, expected: list[str]
) -> None:
    text = ATTRIBUTES.format(description=description, silenced=silenced)
    (tmp_path / "attributes.yaml").write_text(text, encoding="utf-8")
    found = load_and_check([tmp_path / "attributes.yaml"], root=tmp_path).diagnostics
    assert [d.code for d in found] == expected
    if silenced == "ATTRIBUTE_DESCRIPTION_FORMA":
        assert "did you mean 'ATTRIBUTE_DESCRIPTION_FORMAT'?" in found[0].message


def test_one_registry_holds_every_scope_and_rules_is_its_row_part() -> None:
    scopes = {lint.scope for lint in LINTS.values()}
    assert {Scope.ROW, Scope.ATTRIBUTE, Scope.CATALOG} <= scopes
    assert list(RULES) == [code for code, lint in LINTS.items() if lint.scope is Scope.ROW]
    assert RULES["NAME_SYNTAX"] is LINTS["NAME_SYNTAX"]
    with pytest.raises(KeyError):
        RULES["NAME_TOO_SIMILAR"]
    for lint in LINTS.values():
        assert lint.summary, lint.code
        assert lint.fix, lint.code


def test_a_file_or_catalog_rule_must_say_what_its_findings_are_about() -> None:
    with pytest.raises(ValueError, match="must say what it targets"):
        rule("SOME_RULE", Severity.WARNING, "name", scope=Scope.FILE)
    with pytest.raises(ValueError, match="registered twice"):
        rule("NAME_SYNTAX", Severity.ERROR, "name")(lambda row: iter(()))


def test_a_new_file_scope_rule_is_one_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule over one file, registered like any other, is run and silenced like any other."""
    monkeypatch.setattr(lints, "LINTS", dict(LINTS))

    @rule("FILE_HAS_ONE_ROW", Severity.WARNING, "name", scope=Scope.FILE, targets=MetricRow)
    def file_has_one_row(file: CatalogFile) -> Iterator[Nit]:
        """A file holds more than one row.

        Fix: add rows.
        """
        if len(file.rows) == 1:
            yield Nit(file.rows[0], "only one row")

    row = MetricRow(
        "teed",
        "rl.reward.mean",
        "gauge",
        "1",
        "Mean reward of the batch.",
        "development",
        Position("catalog/grpo.yaml", 6, 5),
        logger_key="reward",
        prefix="train",
    )
    catalog = Catalog((CatalogFile("catalog/grpo.yaml", "o.grpo", "grpo", "GRPO.", (row,), ()),))
    assert [d.code for d in lint_catalog(catalog)] == ["FILE_HAS_ONE_ROW"]
    quiet = dataclasses.replace(row, no_lint=("FILE_HAS_ONE_ROW",))
    silenced = Catalog((CatalogFile("catalog/grpo.yaml", "o.grpo", "grpo", "GRPO.", (quiet,), ()),))
    assert lint_catalog(silenced) == []


def test_a_catalog_rule_yielding_bare_strings_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lints, "LINTS", dict(LINTS))

    @rule("BAD_SHAPE", Severity.WARNING, "name", scope=Scope.CATALOG, targets=Attribute)
    def bad_shape(catalog: Catalog) -> Iterator[str]:
        """Yields strings.

        Fix: yield Nit objects.
        """
        yield "no target"

    with pytest.raises(TypeError, match="must yield Nit findings"):
        lint_catalog(Catalog(()))
