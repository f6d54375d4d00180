"""Property tests: random valid catalogs load clean; any single corruption is reported.

Catalogs are built as Python data and written with ``yaml.safe_dump``, which
quotes whatever YAML would otherwise read as a non-string, so the valid side
exercises quoting, flow/block styles and escapes the way a careful author would.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog.lints import RULES
from codegen.catalog.pipeline import load_and_check
from metric_catalog.series_rules import METRIC_KINDS as KINDS
from metric_catalog.series_rules import STABILITY_LEVELS

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

identifier = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
owner = st.from_regex(r"[a-z_][a-z0-9_]{0,6}(\.[a-z_][a-z0-9_]{0,6}){0,3}", fullmatch=True)
unit = st.from_regex(r"[!-~]{1,12}", fullmatch=True)
text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)
version = st.from_regex(r"[0-9]{1,2}\.[0-9]{1,2}(\.[0-9]{1,2})?", fullmatch=True)
prefix = st.sampled_from(["", "train", "validation", "timing/train", "ray.gpu-0"])


@st.composite
def row(draw: st.DrawFn, tag: str, teed: bool) -> dict[str, Any]:
    """One valid row whose name, key and Prometheus name are unique thanks to ``tag``."""
    fields: dict[str, Any] = {}
    if teed:
        fields["logger_key"] = f"{tag}/{draw(identifier)}"
        if draw(st.booleans()):
            fields["prefix"] = draw(prefix)
    fields["name"] = f"rl.{tag}.{draw(identifier)}"
    fields["kind"] = draw(st.sampled_from(KINDS))
    fields["unit"] = draw(unit)
    fields["description"] = draw(text)
    if draw(st.booleans()):
        fields["stability"] = draw(st.sampled_from(STABILITY_LEVELS))
    if draw(st.booleans()):
        fields["deprecated"] = {"since": draw(version), "note": draw(text)}
    if draw(st.booleans()):
        fields["no_lint"] = draw(st.lists(st.sampled_from(sorted(RULES)), unique=True))
    return fields


@st.composite
def catalog_file(draw: st.DrawFn, index: int) -> dict[str, Any]:
    """One valid owner file; ``index`` keeps its module and rows apart from other files."""
    data: dict[str, Any] = {
        "owner": draw(owner),
        "module": f"m{index}_{draw(identifier)}",
        "description": draw(text),
    }
    if draw(st.booleans()):
        data["prefix"] = draw(prefix)
    teed = draw(st.integers(0, 4))
    recorded = draw(st.integers(0, 3))
    if teed or draw(st.booleans()):
        data["teed"] = [draw(row(f"f{index}t{i}", teed=True)) for i in range(teed)]
    if recorded or draw(st.booleans()):
        data["recorded"] = [draw(row(f"f{index}r{i}", teed=False)) for i in range(recorded)]
    names = [r["name"] for section in ("teed", "recorded") for r in data.get(section, [])]
    for section in ("teed", "recorded"):
        for r in data.get(section, []):
            target: str = draw(st.sampled_from(["", *names]))
            if "deprecated" in r and target not in ("", r["name"]):
                r["deprecated"]["replaced_by"] = target
    return data


def dump(data: dict[str, Any], flow: bool) -> str:
    """YAML text the way an author might write it (block or flow style)."""
    header = "# yaml-language-server: $schema=../codegen/schema/catalog.schema.json\n"
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=flow, width=60)


@SETTINGS
@given(
    files=st.integers(1, 3).flatmap(lambda n: st.tuples(*(catalog_file(i) for i in range(n)))),
    flow=st.booleans(),
)
def test_random_valid_catalogs_load_clean(files: tuple[dict[str, Any], ...], flow: bool) -> None:
    """Any valid catalog validates with no diagnostics and loads every row faithfully."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "catalog").mkdir()
        texts: dict[str, list[str]] = {}
        for data in files:
            path = f"catalog/{data['module']}.yaml"
            content = dump(data, flow)
            (root / path).write_text(content, encoding="utf-8")
            texts[path] = content.splitlines()
        result = load_and_check(root=root, lint=False)
    assert result.diagnostics == ()
    assert result.ok
    by_module = {f.module: f for f in result.catalog.files}
    for data in files:
        loaded = by_module[data["module"]]
        assert (loaded.owner, loaded.description) == (data["owner"], data["description"])
        assert loaded.prefix == data.get("prefix", "train")
        for section in ("teed", "recorded"):
            rows = getattr(loaded, section)
            assert [r.name for r in rows] == [r["name"] for r in data.get(section, [])]
            for got, want in zip(rows, data.get(section, []), strict=True):
                assert (got.kind, got.declared_unit, got.description) == (
                    want["kind"],
                    want["unit"],
                    want["description"],
                )
                assert got.stability == want.get("stability", "development")
                assert got.no_lint == tuple(want.get("no_lint", ()))
                if section == "teed":
                    assert got.prefix == want.get("prefix", loaded.prefix)
                name_at = got.where("name")
                assert got.name in texts[loaded.path][name_at.line - 1]


REQUIRED_TOP = ("owner", "module", "description")
REQUIRED_ROW = ("name", "kind", "unit", "description")


@st.composite
def corrupted(draw: st.DrawFn) -> str:
    """A valid file with exactly one thing broken, as YAML text."""
    data = draw(catalog_file(0))
    rows = [r for section in ("teed", "recorded") for r in data.get(section, [])]
    target: dict[str, Any] = draw(st.sampled_from([data, *rows]))
    required = REQUIRED_TOP if target is data else REQUIRED_ROW
    field = draw(st.sampled_from(required))
    how = draw(
        st.sampled_from(
            ["non_string", "delete", "unknown", "wrong_type", "bad_kind", "bad_name", "tag", "dup"]
        )
    )
    if how == "non_string":
        target[field] = draw(st.sampled_from([True, False, None, 0, 12, 1.5]))
    elif how == "delete":
        del target[field]
    elif how == "unknown":
        extra = draw(st.from_regex(r"[a-z]{3,10}", fullmatch=True))
        target[extra if extra not in target and extra not in data else "zzz_unknown"] = "x"
    elif how == "wrong_type":
        target[field] = draw(st.sampled_from([["a"], {"a": "b"}]))
    elif how == "bad_kind" and rows and target is not data:
        target["kind"] = draw(st.sampled_from(["Gauge", "timer", "", "count"]))
    elif how == "bad_name" and target is not data:
        target["name"] = "x" + target["name"]
    else:
        text = dump(data, flow=False)
        if how == "tag":
            return text.replace("\nmodule: ", "\nmodule: !custom ", 1)
        return text + "owner: again.here\n"  # dup, or a fallback for top-level targets
    return dump(data, flow=draw(st.booleans()))


@SETTINGS
@given(text=corrupted())
def test_any_single_corruption_yields_a_positioned_error(text: str) -> None:
    """Every corruption is an error diagnostic with a real position, never an exception."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "catalog").mkdir()
        (root / "catalog" / "x.yaml").write_text(text, encoding="utf-8")
        result = load_and_check(root=root, lint=False)
    assert not result.ok
    lines = text.count("\n") + 1
    for diagnostic in result.diagnostics:
        assert diagnostic.position is not None
        assert diagnostic.position.path == "catalog/x.yaml"
        assert 1 <= diagnostic.position.line <= lines
        assert diagnostic.position.column >= 1


@SETTINGS
@given(data=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    """No input produces a traceback: garbage in, diagnostics out."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "catalog").mkdir()
        (root / "catalog" / "x.yaml").write_bytes(data)
        result = load_and_check(root=root, lint=True)
    for diagnostic in result.diagnostics:
        assert diagnostic.position is not None
        assert diagnostic.position.line >= 1 or diagnostic.code == "FILE_UNREADABLE"


# A valid file (the corpus case whose only finding is a warning) to mutate.
VALID_TEXT = (Path(__file__).parents[1] / "cases" / "lint_unused_no_lint.yaml").read_text(
    encoding="utf-8"
)
EDIT_CHARS = st.sampled_from([*":-[]{},&*!|>'\"#%@` \t\n\\?~0yn", "\ufeff", "\x00", "é"])


@SETTINGS
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(VALID_TEXT)), st.integers(0, 3), st.text(EDIT_CHARS)),
        min_size=1,
        max_size=4,
    )
)
def test_character_edits_of_a_valid_file_never_raise(edits: list[tuple[int, int, str]]) -> None:
    """Typos anywhere (deleted, inserted, replaced characters) give diagnostics, not tracebacks."""
    text = VALID_TEXT
    for at, delete, insert in edits:
        text = text[:at] + insert + text[at + delete :]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "catalog").mkdir()
        (root / "catalog" / "x.yaml").write_text(text, encoding="utf-8")
        result = load_and_check(root=root, lint=True)
    lines = text.count("\n") + 1
    for diagnostic in result.diagnostics:
        assert diagnostic.position is not None
        assert 1 <= diagnostic.position.line <= lines
        assert diagnostic.position.column >= 1
