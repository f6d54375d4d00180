"""The strict loader: positions of every node, refusals, and no input that raises."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from codegen.catalog import loader
from codegen.catalog.diagnostics import Position
from codegen.catalog.loader import (
    MAX_FILE_BYTES,
    NonString,
    YMap,
    YScalar,
    YSeq,
    load_bytes,
    load_file,
    load_text,
)
from codegen.catalog.pipeline import load_and_check

GOOD = """\
# yaml-language-server: $schema=../codegen/schema/catalog.schema.json
owner: nemo_rl.algorithms.grpo
module: grpo
description: Metrics logged by the GRPO training loop.
prefix: train
teed:
  - logger_key: reward
    prefix: ""
    name: rl.reward.mean
    kind: gauge
    unit: "1"
    description: Mean rollout reward over the batch.
    stability: beta
    deprecated: {since: "0.2.0", replaced_by: rl.vllm.batch.duration, note: "Use the other."}
    no_lint: [DESCRIPTION_REPEATS_NAME]
  - logger_key: loss
    name: rl.policy.loss
    kind: gauge
    unit: "1"
    description: Policy loss of the step.
recorded:
  - name: rl.vllm.batch.duration
    kind: histogram
    unit: s
    description: Wall clock of one batched generate() call.
"""


def test_uses_libyaml_when_available() -> None:
    """The C loader is used when PyYAML was built with libyaml (it is ~10x faster)."""
    if hasattr(yaml, "CSafeLoader"):
        assert loader._Loader is yaml.CSafeLoader


def test_every_node_knows_its_line_and_column() -> None:
    """Keys and values keep 1-based positions from the node marks."""
    root = load_text(GOOD, "catalog/grpo.yaml").root
    assert isinstance(root, YMap)
    assert root.position == Position("catalog/grpo.yaml", 2, 1)
    assert root.key_positions["module"] == Position("catalog/grpo.yaml", 3, 1)
    teed = root.values["teed"]
    assert isinstance(teed, YSeq)
    first = teed.items[0]
    assert isinstance(first, YMap)
    assert first.position == Position("catalog/grpo.yaml", 7, 5)
    unit = first.values["unit"]
    assert isinstance(unit, YScalar)
    assert (unit.value, unit.position, unit.quoted) == (
        "1",
        Position("catalog/grpo.yaml", 11, 11),
        True,
    )


def test_model_rows_carry_field_positions_and_effective_values(tmp_path: Path) -> None:
    """MetricRow.positions maps fields (and nested ones) to where their values start."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "grpo.yaml").write_text(GOOD, encoding="utf-8")
    result = load_and_check(root=tmp_path)
    assert result.ok, result.diagnostics
    (grpo,) = result.catalog.files
    assert grpo.path == "catalog/grpo.yaml"
    assert grpo.where("module") == Position("catalog/grpo.yaml", 3, 9)
    reward, loss = grpo.teed
    assert reward.prefix == ""  # row prefix wins, even when empty
    assert loss.prefix == "train"  # else the file's
    assert loss.stability == "development"  # the default
    assert reward.where("name") == Position("catalog/grpo.yaml", 9, 11)
    assert reward.where("deprecated.replaced_by") == Position("catalog/grpo.yaml", 14, 47)
    assert reward.positions["no_lint[0]"] == Position("catalog/grpo.yaml", 15, 15)
    assert reward.deprecated is not None
    assert reward.deprecated.note == "Use the other."
    assert reward.no_lint == ("DESCRIPTION_REPEATS_NAME",)
    (batch,) = grpo.recorded
    assert batch.prefix is None
    assert batch.logger_key is None
    assert batch.section == "recorded"


def test_file_prefix_defaults_to_train(tmp_path: Path) -> None:
    """Without ``prefix`` anywhere, teed rows are matched under ``train``."""
    (tmp_path / "catalog").mkdir()
    text = GOOD.replace("prefix: train\n", "").replace('    prefix: ""\n', "")
    (tmp_path / "catalog" / "grpo.yaml").write_text(text, encoding="utf-8")
    result = load_and_check(root=tmp_path)
    assert {row.prefix for row in result.catalog.files[0].teed} == {"train"}
    assert result.catalog.files[0].prefix == "train"


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("no", "tag:yaml.org,2002:bool"),
        ("on", "tag:yaml.org,2002:bool"),
        ("~", "tag:yaml.org,2002:null"),
        ("0x1F", "tag:yaml.org,2002:int"),
        ("1_000", "tag:yaml.org,2002:int"),
        ("1.5e+3", "tag:yaml.org,2002:float"),
        (".inf", "tag:yaml.org,2002:float"),
        ("2019-13-45", "tag:yaml.org,2002:timestamp"),
    ],
)
def test_implicit_non_strings_are_kept_as_text(text: str, tag: str) -> None:
    """YAML 1.1 surprises are kept unconstructed (no crash on bad dates)."""
    root = load_text(f"unit: {text}\n", "x.yaml").root
    assert isinstance(root, YMap)
    node = root.values["unit"]
    assert isinstance(node, YScalar)
    assert (node.value, node.position, node.quoted) == (
        NonString(text, tag),
        Position("x.yaml", 1, 7),
        False,
    )


@pytest.mark.parametrize("text", ['"no"', "'1'", "!!str 1e3", "!!str yes", "1e3", "rl.reward.mean"])
def test_quoted_and_explicit_strings_are_strings(text: str) -> None:
    """Quoting (or ``!!str``) makes any scalar a string."""
    root = load_text(f"unit: {text}\n", "x.yaml").root
    assert isinstance(root, YMap)
    node = root.values["unit"]
    assert isinstance(node, YScalar)
    assert isinstance(node.value, str)


def test_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    """Files over the limit are refused before parsing."""
    path = tmp_path / "big.yaml"
    path.write_bytes(b"# " + b"x" * MAX_FILE_BYTES + b"\n")
    loaded = load_file(path, "big.yaml")
    assert loaded.root is None
    assert [d.code for d in loaded.diagnostics] == ["FILE_TOO_LARGE"]


def test_missing_file_is_a_diagnostic(tmp_path: Path) -> None:
    """An unreadable path is reported, not raised."""
    loaded = load_file(tmp_path / "nope.yaml", "nope.yaml")
    assert [d.code for d in loaded.diagnostics] == ["FILE_UNREADABLE"]
    result = load_and_check([Path("nope.yaml")], root=tmp_path)
    assert [d.code for d in result.diagnostics] == ["FILE_UNREADABLE"]
    assert not result.ok


def test_billion_laughs_is_refused_without_expansion() -> None:
    """Anchors and aliases are refused; nothing is ever expanded."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        prev = chr(ord("a") + level - 1)
        name = chr(ord("a") + level)
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    loaded = load_text("\n".join(lines) + "\n", "lol.yaml")
    codes = {d.code for d in loaded.diagnostics}
    assert codes == {"YAML_ANCHOR", "YAML_ALIAS"}


@pytest.mark.parametrize(
    ("depth", "code"),
    [
        (17, "TOO_DEEP"),
        (900, "TOO_DEEP"),
        (5000, "YAML_SYNTAX"),  # libyaml's own nesting limit, reported with its position
    ],
)
def test_deep_nesting_is_one_diagnostic_not_a_recursion_error(depth: int, code: str) -> None:
    """Composing is iterative: deep input yields one diagnostic, never RecursionError."""
    loaded = load_text("a: " + "[" * depth + "]" * depth + "\n", "deep.yaml")
    assert [d.code for d in loaded.diagnostics] == [code]


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x01\x02",
        b"key: \x85value\n",
        b"\xff\xff",
        b"a: b: c\n",
        b"- [\n",
        b"{a: 1, a: 2}",
        b"? - a\n: b\n",
        b"%YAML 1.1\n---\na: b\n",
        b"!!python/name:os.system\n",
        b"a: !!python/object:os.system {}\n",
        b"[*x]\n",
        b"---\n...\n",
    ],
)
def test_hostile_bytes_never_raise(data: bytes) -> None:
    """Whatever the bytes, the loader returns diagnostics instead of raising."""
    loaded = load_bytes(data, "x.yaml")
    assert loaded.diagnostics or loaded.root is not None
    for diagnostic in loaded.diagnostics:
        assert diagnostic.position is not None
        assert diagnostic.position.line >= 1


def test_a_relative_root_finds_the_catalog_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """load_and_check(root=<relative path>) does not join the root onto the paths twice."""
    repo = Path(__file__).resolve().parents[2]
    shutil.copytree(repo / "catalog", tmp_path / "proj" / "catalog")
    monkeypatch.chdir(tmp_path)
    result = load_and_check(root=Path("proj"))
    assert result.ok, [d.format() for d in result.diagnostics]
    assert {f.path for f in result.catalog.files} >= {"catalog/grpo.yaml"}


def test_repeated_texts_resolve_by_style_and_tag() -> None:
    """Plain texts are resolved once per file; quoting or a tag still decides each node."""
    text = "a: no\nb: 'no'\nc: no\nd: ! 12\ne: !!str 12\nf: 12\ng: |\n  no\n"
    root = load_text(text, "x.yaml").root
    assert isinstance(root, YMap)
    got = {
        key: (node.value, node.quoted)
        for key, node in root.values.items()
        if isinstance(node, YScalar)
    }
    assert got == {
        "a": (NonString("no", "tag:yaml.org,2002:bool"), False),
        "b": ("no", True),
        "c": (NonString("no", "tag:yaml.org,2002:bool"), False),
        "d": (NonString("12", "tag:yaml.org,2002:int"), False),
        "e": ("12", False),
        "f": (NonString("12", "tag:yaml.org,2002:int"), False),
        "g": ("no\n", True),
    }
    assert root.key_positions["g"] == Position("x.yaml", 7, 1)
    assert root.values["g"].position == Position("x.yaml", 7, 4)
