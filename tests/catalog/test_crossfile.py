"""Cross-file checks: clashes between files name both places, as ``file:line:col``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from codegen.catalog.crossfile import check_catalog
from codegen.catalog.diagnostics import Position
from codegen.catalog.model import AttributeRef, Catalog, CatalogFile, MetricRow
from codegen.catalog.pipeline import load_and_check

HEAD = "owner: nemo_rl.{module}\nmodule: {module}\ndescription: Metrics of {module}.\n"


def teed_row(key: str, name: str, *, prefix: str | None = None, unit: str = '"1"') -> str:
    """One teed row as YAML (starts at column 5 of its first line)."""
    extra = f"    prefix: {prefix}\n" if prefix is not None else ""
    return (
        f"  - logger_key: {key}\n{extra}    name: {name}\n    kind: gauge\n"
        f"    unit: {unit}\n    description: Value of {key} this step.\n"
    )


def write(root: Path, module: str, body: str, *, file_prefix: str | None = None) -> None:
    """``catalog/<module>.yaml`` under ``root``."""
    head = HEAD.format(module=module)
    if file_prefix is not None:
        head += f"prefix: {file_prefix}\n"
    (root / "catalog").mkdir(exist_ok=True)
    (root / "catalog" / f"{module}.yaml").write_text(head + body, encoding="utf-8")


def test_duplicate_logger_key_across_files_names_both_positions(tmp_path: Path) -> None:
    """The exact text format: later file's row, then where the first one is."""
    write(tmp_path, "common", "teed:\n" + teed_row("reward", "rl.reward.mean"))
    write(
        tmp_path,
        "grpo",
        "teed:\n" + teed_row("loss", "rl.policy.loss") + teed_row("reward", "rl.reward.avg"),
    )
    result = load_and_check(root=tmp_path)
    assert [d.format() for d in result.diagnostics] == [
        "catalog/grpo.yaml:10:5: error[DUPLICATE_LOGGER_KEY]: logger key 'reward' (prefix "
        "'train') of 'rl.reward.avg' (catalog/grpo.yaml) is already teed by 'rl.reward.mean' "
        "at catalog/common.yaml:5:5 in every loop (neither row names its loops in "
        "'emitted_by'); move the row to one owner or give it another prefix (to rename the "
        "series under the same key, deprecate the old row with 'replaced_by' naming the new; "
        "when the key means something else in each loop, scope the rows to disjoint loops "
        "with 'emitted_by'; when it means something else by the run's configuration, make "
        "both rows conditionally_required with conditions on one configuration value that "
        "cannot hold together: 'config.x' and 'not config.x', or 'config.x == \"a\"' and "
        "'config.x == \"b\"')."
    ]
    assert not result.ok


def test_same_logger_key_under_other_prefix_is_fine(tmp_path: Path) -> None:
    """Keys are unique per prefix: ``train/accuracy`` and ``validation/accuracy`` coexist."""
    write(tmp_path, "dpo", "teed:\n" + teed_row("accuracy", "rl.dpo.accuracy", unit='"%"'))
    write(
        tmp_path,
        "grpo",
        "teed:\n" + teed_row("accuracy", "rl.grpo.validation.accuracy", unit='"%"'),
        file_prefix="validation",
    )
    result = load_and_check(root=tmp_path)
    assert result.diagnostics == ()
    prefixes = sorted(row.prefix or "" for _f, row in result.catalog.rows())
    assert prefixes == ["train", "validation"]


def test_row_prefix_overrides_file_prefix_and_empty_prefix_counts(tmp_path: Path) -> None:
    """Effective prefix: row, else file, else ``train``; ``""`` is a prefix of its own."""
    body = "teed:\n" + teed_row("a", "rl.a.x", prefix='""') + teed_row("a", "rl.a.y")
    write(tmp_path, "timing", body, file_prefix="timing/train")
    result = load_and_check(root=tmp_path)
    assert result.diagnostics == ()
    keys = [row.qualified_logger_key for _f, row in result.catalog.rows()]
    assert keys == ["a", "timing/train/a"]


@pytest.mark.parametrize(
    ("first", "second", "code"),
    [
        ("rl.reward.mean", "rl.reward.mean", "DUPLICATE_NAME"),
        ("rl.reward.mean", "rl.REWARD.mean", "DUPLICATE_NAME"),
        ("rl.reward.mean", "rl.reward_mean", "DUPLICATE_REGISTRY_KEY"),
    ],
)
def test_name_clashes_across_files_report_once_naming_both(
    tmp_path: Path, first: str, second: str, code: str
) -> None:
    """One diagnostic per clashing pair, under the first check it fails."""
    write(tmp_path, "a", "teed:\n" + teed_row("x", first))
    write(tmp_path, "b", "teed:\n" + teed_row("y", second))
    clashes = list(load_and_check(root=tmp_path, lint=False).diagnostics)
    assert [d.code for d in clashes] == [code]
    assert str(clashes[0].position) == "catalog/b.yaml:5:5"
    # Both catalog files are named in the message itself, not only in the position.
    assert "catalog/a.yaml:5:5" in clashes[0].message
    assert "(catalog/b.yaml)" in clashes[0].message


def test_duplicate_name_says_which_fields_of_the_two_rows_differ(tmp_path: Path) -> None:
    """Two rows of one series that differ say how; identical ones say they are identical."""
    write(tmp_path, "a", "teed:\n" + teed_row("x", "rl.reward.mean"))
    write(tmp_path, "b", "teed:\n" + teed_row("y", "rl.reward.mean", unit="s"))
    write(tmp_path, "c", "teed:\n" + teed_row("x", "rl.reward.mean", prefix="eval"))
    by_file = {
        str(d.position.path): d.message
        for d in load_and_check(root=tmp_path, lint=False).diagnostics
        if d.code == "DUPLICATE_NAME" and d.position is not None
    }
    assert (
        "series 'rl.reward.mean' (catalog/b.yaml) is already declared at catalog/a.yaml:5:5 "
        "(the rows differ in unit ('s' here, '1' there), logger_key ('train/y' here, "
        "'train/x' there), description ('Value of y this step.' here, 'Value of x this "
        "step.' there)); keep one row"
    ) in by_file["catalog/b.yaml"]
    assert "logger_key ('eval/x' here, 'train/x' there)" in by_file["catalog/c.yaml"]
    write(tmp_path, "b", "teed:\n" + teed_row("x", "rl.reward.mean", prefix="b"))
    (tmp_path / "catalog" / "c.yaml").unlink()
    (clash,) = load_and_check(root=tmp_path, lint=False).diagnostics
    assert "logger_key ('b/x' here, 'train/x' there)" in clash.message


def _deprecated_row(key: str, name: str, replaced_by: str | None) -> str:
    target = f", replaced_by: {replaced_by}" if replaced_by else ""
    return teed_row(key, name).replace(
        "    kind:", f'    deprecated: {{since: "0.2.0"{target}}}\n    kind:'
    )


@pytest.mark.parametrize("new_first", [False, True])
def test_deprecated_row_and_its_replacement_may_share_the_logger_key(
    tmp_path: Path, new_first: bool
) -> None:
    """Renaming a series while the code keeps its key: old row deprecated, new row, one key."""
    old = _deprecated_row("kl", "rl.kl.divergence", "rl.kl.reference")
    new = teed_row("kl", "rl.kl.reference")
    write(tmp_path, "grpo", "teed:\n" + (new + old if new_first else old + new))
    result = load_and_check(root=tmp_path)
    assert result.diagnostics == ()
    keys = {row.name: row.qualified_logger_key for _f, row in result.catalog.rows()}
    assert keys == {"rl.kl.divergence": "train/kl", "rl.kl.reference": "train/kl"}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        pytest.param(
            [_deprecated_row("kl", "rl.kl.divergence", None), teed_row("kl", "rl.kl.reference")],
            "only a deprecated row and the row its 'replaced_by' names may share",
            id="deprecated without replaced_by",
        ),
        pytest.param(
            [
                _deprecated_row("kl", "rl.kl.divergence", "rl.kl.other"),
                teed_row("kl", "rl.kl.reference"),
                teed_row("kl_other", "rl.kl.other"),
            ],
            "only a deprecated row and the row its 'replaced_by' names may share",
            id="replaced_by names a third row",
        ),
        pytest.param(
            [
                _deprecated_row("kl", "rl.kl.divergence", "rl.kl.reference"),
                teed_row("kl", "rl.kl.reference"),
                teed_row("kl", "rl.kl.third"),
            ],
            "already teed by 'rl.kl.divergence'",
            id="a third row joins the pair",
        ),
        pytest.param(
            [
                _deprecated_row("kl", "rl.kl.divergence", "rl.kl.reference"),
                teed_row("kl", "rl.kl.reference"),
                _deprecated_row("kl", "rl.kl.older", "rl.kl.reference"),
            ],
            "already teed by 'rl.kl.divergence'",
            id="two deprecated rows for one replacement",
        ),
    ],
)
def test_any_other_logger_key_sharing_stays_a_duplicate(
    tmp_path: Path, rows: list[str], message: str
) -> None:
    """Only the deprecated row and the row its replaced_by names share a key: one clash."""
    write(tmp_path, "grpo", "teed:\n" + "".join(rows))
    (clash,) = load_and_check(root=tmp_path, lint=False).diagnostics
    assert clash.code == "DUPLICATE_LOGGER_KEY"
    assert message in clash.message


def test_prometheus_clash_needs_unit_translation(tmp_path: Path) -> None:
    """``rl.gpu.mem`` in By and ``rl.gpu_mem.bytes`` both scrape as ``rl_gpu_mem_bytes``."""
    write(tmp_path, "a", "teed:\n" + teed_row("m", "rl.gpu.mem", unit="By"))
    write(tmp_path, "b", "teed:\n" + teed_row("m2", "rl.gpu_mem.bytes", unit="By"))
    (clash,) = load_and_check(root=tmp_path, lint=False).diagnostics
    assert clash.code == "DUPLICATE_PROMETHEUS_NAME"
    assert "'rl_gpu_mem_bytes'" in clash.message
    assert "catalog/a.yaml:5:5" in clash.message


def test_duplicate_module_points_at_both_module_fields(tmp_path: Path) -> None:
    """Two files generating the same module clash at their ``module`` values."""
    write(tmp_path, "a", "teed:\n" + teed_row("x", "rl.a.x"))
    (tmp_path / "catalog" / "b.yaml").write_text(HEAD.format(module="a"), encoding="utf-8")
    (clash,) = load_and_check(root=tmp_path).diagnostics
    assert clash.code == "DUPLICATE_MODULE"
    assert str(clash.position) == "catalog/b.yaml:2:9"
    assert "catalog/a.yaml:2:9" in clash.message


def test_replaced_by_may_name_a_row_in_another_file(tmp_path: Path) -> None:
    """Replacements resolve over the whole catalog."""
    old = teed_row("x", "rl.old.x").replace(
        "    kind:", '    deprecated: {since: "0.2.0", replaced_by: rl.new.x}\n    kind:'
    )
    write(tmp_path, "a", "teed:\n" + old)
    write(tmp_path, "b", "teed:\n" + teed_row("y", "rl.new.x"))
    result = load_and_check(root=tmp_path)
    assert result.diagnostics == ()
    deprecated = result.catalog.by_name()["rl.old.x"][1].deprecated
    assert deprecated is not None
    assert deprecated.replaced_by == "rl.new.x"


def test_replaced_by_a_row_that_failed_is_not_reported_twice(tmp_path: Path) -> None:
    """A replacement row with its own error is still declared: one diagnostic, not two."""
    old = teed_row("x", "rl.old.x").replace(
        "    kind:", '    deprecated: {since: "0.2.0", replaced_by: rl.new.x}\n    kind:'
    )
    write(tmp_path, "a", "teed:\n" + old + teed_row("y", "rl.new.x", unit="no"))
    result = load_and_check(root=tmp_path)
    assert [d.code for d in result.diagnostics] == ["IMPLICIT_NON_STRING"]
    assert [row.name for _f, row in result.catalog.rows()] == ["rl.old.x"]


def test_partial_catalog_keeps_every_valid_row(tmp_path: Path) -> None:
    """Errors drop only the rows they are in; the rest still reach the generator."""
    write(tmp_path, "a", "teed:\n" + teed_row("x", "rl.a.x") + teed_row("y", "rl.a.y", unit="1"))
    write(tmp_path, "b", "teed:\n" + teed_row("z", "rl.b.z"))
    result = load_and_check(root=tmp_path)
    assert not result.ok
    assert sorted(result.catalog.by_name()) == ["rl.a.x", "rl.b.z"]


def test_name_that_is_a_namespace_is_a_warning_at_the_later_row(tmp_path: Path) -> None:
    """``rl.reward`` next to ``rl.reward.mean`` warns (names should form a tree), exit 0."""
    write(tmp_path, "a", "teed:\n" + teed_row("x", "rl.reward.mean"))
    write(tmp_path, "b", "teed:\n" + teed_row("y", "rl.reward"))
    result = load_and_check(root=tmp_path, lint=False)
    (warning,) = result.diagnostics
    assert warning.code == "NAME_IS_NAMESPACE"
    assert str(warning.position) == "catalog/b.yaml:5:5"
    assert "catalog/a.yaml:5:5" in warning.message
    assert result.ok


def test_invalid_file_prefix_causes_no_spurious_key_clash(tmp_path: Path) -> None:
    """A file with a broken prefix is reported once; its rows are not guessed into ``train``."""
    write(tmp_path, "a", "teed:\n" + teed_row("reward", "rl.a.x"))
    write(tmp_path, "b", "teed:\n" + teed_row("reward", "rl.b.x"), file_prefix="train/")
    result = load_and_check(root=tmp_path)
    assert [d.code for d in result.diagnostics] == ["INVALID_FORMAT"]
    assert [f.path for f in result.catalog.files] == ["catalog/a.yaml"]


def test_replaced_by_unknown_never_suggests_the_row_itself(tmp_path: Path) -> None:
    """A typo close to the row's own name suggests another row, or none, never the row."""
    deprecated = teed_row("kl", "rl.kl.divergence") + (
        '    deprecated: {since: "0.2.0", replaced_by: rl.kl.divergenc}\n'
    )
    write(tmp_path, "grpo", "teed:\n" + deprecated + teed_row("kl2", "rl.kl.reference"))
    (finding,) = load_and_check(root=tmp_path).diagnostics
    assert finding.code == "REPLACED_BY_UNKNOWN"
    assert "did you mean 'rl.kl.divergence'" not in finding.message
    assert finding.message.endswith("declare it or fix the name.") or (
        "did you mean 'rl.kl.reference'?" in finding.message
    )


@pytest.mark.parametrize(
    ("target", "code", "ok"),
    [
        # Nothing here it could misspell: a series of another catalog or registry.
        ("rl.elsewhere.replacement", "REPLACED_BY_EXTERNAL", True),
        # A near miss of a declared name stays an error that names it.
        ("rl.kl.referense", "REPLACED_BY_UNKNOWN", False),
    ],
)
def test_a_replacement_outside_the_catalog_is_a_warning_and_a_near_miss_an_error(
    tmp_path: Path, target: str, code: str, ok: bool
) -> None:
    deprecated = teed_row("kl", "rl.kl.divergence") + (
        f'    deprecated: {{since: "0.2.0", replaced_by: {target}}}\n'
    )
    write(tmp_path, "grpo", "teed:\n" + deprecated + teed_row("kl2", "rl.kl.reference"))
    result = load_and_check(root=tmp_path)
    (finding,) = result.diagnostics
    assert (finding.code, result.ok) == (code, ok)
    assert str(finding.position) == "catalog/grpo.yaml:10:47"
    assert target in finding.message


def test_duplicate_name_lists_attribute_prefix_and_budget_differences() -> None:
    """Rows that differ only in attributes, prefixes or budget do not read as identical."""
    from codegen.catalog.model import CatalogFile, MetricRow

    def row(path: str, **fields: object) -> MetricRow:
        base = MetricRow(
            section="teed",
            name="rl.reward.mean",
            kind="gauge",
            unit="1",
            description="Mean reward.",
            stability="beta",
            position=Position(path, 5, 5),
            logger_key="reward",
            prefix="train",
        )
        return replace(base, **fields)  # type: ignore[arg-type]

    def one_file(path: str, item: MetricRow) -> CatalogFile:
        module = path.rsplit("/", maxsplit=1)[-1].removesuffix(".yaml")
        return CatalogFile(path, f"x.{module}", module, "Rows.", (item,), ())

    phase = AttributeRef("rl.setup.phase", "required", Position("catalog/b.yaml", 9, 9))
    first = row("catalog/a.yaml")
    cases = [
        (row("catalog/b.yaml", attributes=(phase,)), "attributes ([] here"),
        (row("catalog/b.yaml", other_prefixes=("",)), "logger_key (['train/reward', 'reward']"),
        (row("catalog/b.yaml", cardinality_limit=50), "cardinality_limit (50 here, None there)"),
        (row("catalog/b.yaml"), "the two rows are identical"),
    ]
    for second, expected in cases:
        catalog = Catalog((one_file("catalog/a.yaml", first), one_file("catalog/b.yaml", second)))
        messages = [d.message for d in check_catalog(catalog) if d.code == "DUPLICATE_NAME"]
        assert len(messages) == 1
        assert expected.replace("[] here", "['rl.setup.phase'] here") in messages[0]
