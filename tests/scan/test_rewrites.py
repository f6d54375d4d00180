"""Wrappers that rewrite each key before the sink: the keys their callers pass come out as
the wrapper writes them (a reduction tag stripped), or unresolved, never as passed.

The shapes: a wrapper building its dict from its parameter's keys through a string method
or a scanned helper (a comprehension, a loop ``out[new] = v``), and a scanned decorator whose
inner function hands the decorated logging method ``clean(values)``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.scan.keyfilter import KeyTest
from codegen.scan.scanner import ScanReport, scan
from codegen.scan.values import SLOT, DictVal, Hole, Key, Spread, Where, spread_into

_DECORATED = """\
import functools

import wandb


def _clean(stats):
    def untag(name):
        return name.rsplit("#", 1)[0] if isinstance(name, str) and "#" in name else name

    cleaned = {{}}
    for name, value in stats.items():
        new = untag(name)
        cleaned[new] = value
    return cleaned


def untagged(method):
    @functools.wraps(method)
    def inner(self, stats, step=None):
        if isinstance(stats, dict):
            stats = {rewrite}
        return method(self, stats, step)

    return inner


class Sink:
    @untagged
    def record(self, stats, step=None):
        wandb.log(stats, step=step)


def loop(sink: Sink, phase: str):
    sink.record({{"zz_loss#sum": 1.0, "zz_kl": 2.0}}, step=1)
    sink.record({{f"zz_grad/{{phase}}#max": 1.0}})
"""

_WRAPPER = """\
import wandb

SEP = "%"


def plain(d):
    return d


def emit(d):
    wandb.log({{{key}: v for k, v in d.items()}})


def loop():
    emit({{"zz_reward%mean": 3.0, "zz_len": 1.0}})
"""


def _scan(tmp_path: Path, catalog: Catalog, source: str) -> ScanReport:
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    return scan([tmp_path / "m.py"], catalog, cwd=tmp_path, unlogged=False)


def _found(report: ScanReport) -> list[tuple[str, str, int]]:
    return sorted(
        (d.code, d.message.split("'")[1] if "'" in d.message else "", d.position.line)
        for d in report.diagnostics
        if d.position is not None
    )


def test_a_decorator_stripping_a_tag_before_the_sink_rewrites_its_callers_keys(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, _DECORATED.format(rewrite="_clean(stats)"))

    assert _found(report) == [
        ("SCAN_UNDECLARED", "zz_kl", 34),
        ("SCAN_UNDECLARED", "zz_loss", 34),
        ("SCAN_UNRESOLVED", "zz_grad/{phase}", 35),
    ]


_FACTORY = """\
import wandb


def clean(stats):
    return {{k.partition("#")[0]: v for k, v in stats.items()}}


def untagged(tag):
    def decorate(method):
        def inner(self, stats):
            return method(self, {handed})

        return inner

    return decorate


class Sink:
    @untagged("#")
    def record(self, stats):
        wandb.log(stats)


def loop(sink: Sink):
    sink.record({{"zz_loss#sum": 1.0}})
"""


@pytest.mark.parametrize(
    ("handed", "expected"),
    [
        ("clean(stats)", ("SCAN_UNDECLARED", "zz_loss", 25)),
        ("{k.partition(tag)[0]: v for k, v in stats.items()}", ("SCAN_UNRESOLVED", "", 25)),
    ],
    ids=["through-a-scanned-helper", "inline-is-unresolved-at-the-call"],
)
def test_a_decorator_factory_rewriting_the_dict_rewrites_the_keys_or_leaves_them_unresolved(
    tmp_path: Path, repo_catalog: Catalog, handed: str, expected: tuple[str, str, int]
) -> None:
    report = _scan(tmp_path, repo_catalog, _FACTORY.format(handed=handed))

    found = [
        (code, key if code == "SCAN_UNDECLARED" else "", line) for code, key, line in _found(report)
    ]
    assert found == [expected]
    assert all(
        "zz_loss#sum" not in d.message or d.code == "SCAN_UNRESOLVED" for d in report.diagnostics
    )


def test_a_decorator_handing_the_dict_on_unchanged_keeps_the_keys(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, _DECORATED.format(rewrite="dict(stats)"))

    assert [f for f in _found(report) if f[0] == "SCAN_UNDECLARED"] == [
        ("SCAN_UNDECLARED", "zz_kl", 34),
        ("SCAN_UNDECLARED", "zz_loss#sum", 34),
    ]


def test_a_decorator_rewriting_by_a_call_scan_cannot_follow_leaves_the_keys_unresolved(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, _DECORATED.format(rewrite="external.clean(stats)"))

    found = _found(report)
    assert [f for f in found if f[0] == "SCAN_UNDECLARED"] == []
    assert {line for _, _, line in found} == {34, 35}
    assert "its decorator `untagged` rewrites" in report.diagnostics[0].message


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (
            'k.split("%")[0]',
            [("SCAN_UNDECLARED", "zz_len", 15), ("SCAN_UNDECLARED", "zz_reward", 15)],
        ),
        (
            "k.rsplit(SEP, 1)[0] if SEP in k else k",
            [("SCAN_UNDECLARED", "zz_len", 15), ("SCAN_UNDECLARED", "zz_reward", 15)],
        ),
        (
            '"eval/" + k',
            [
                ("SCAN_UNDECLARED", "eval/zz_len", 15),
                ("SCAN_UNDECLARED", "eval/zz_reward%mean", 15),
            ],
        ),
        ("k", [("SCAN_UNDECLARED", "zz_len", 15), ("SCAN_UNDECLARED", "zz_reward%mean", 15)]),
        (
            "k.encode()",
            [("SCAN_UNRESOLVED", "zz_len", 15), ("SCAN_UNRESOLVED", "zz_reward%mean", 15)],
        ),
    ],
    ids=[
        "string-method",
        "conditional-with-a-module-constant",
        "a-template-is-no-rename",
        "identity",
        "a-rename-scan-cannot-evaluate",
    ],
)
def test_a_wrapper_building_its_dict_from_rewritten_keys_logs_the_rewritten_keys(
    tmp_path: Path, repo_catalog: Catalog, key: str, expected: list[tuple[str, str, int]]
) -> None:
    report = _scan(tmp_path, repo_catalog, _WRAPPER.format(key=key))

    assert _found(report) == expected


def test_a_rename_scan_cannot_evaluate_never_reports_the_raw_key(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    report = _scan(tmp_path, repo_catalog, _WRAPPER.format(key="k.encode()"))

    assert report.diagnostics
    assert all(d.code == "SCAN_UNRESOLVED" for d in report.diagnostics)
    assert "cannot evaluate" in report.diagnostics[0].message


def _renamer(expression: str) -> KeyTest:
    node = ast.parse(expression, mode="eval").body
    target = ast.Expr(node)
    return KeyTest("k", (target,), target, {}, lambda _: None, "emit", node)


_TEXT = st.text(alphabet="ab/@_#", min_size=1, max_size=12)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(text=_TEXT, sep=st.sampled_from(["@", "#", "/"]), prefix=st.sampled_from(["", "t/"]))
def test_a_callers_key_through_a_renaming_wrapper_is_pythons_rename(
    text: str, sep: str, prefix: str
) -> None:
    renamer = _renamer(f"k.rsplit({sep!r}, 1)[0] if {sep!r} in k else k")
    wrapper = Spread("d", (prefix, SLOT), renames=((renamer, (SLOT,)),))
    where = Where("m.py", 3, 1)

    result = spread_into(wrapper, DictVal((Key((text,), where),)))

    renamed = text.rsplit(sep, 1)[0] if sep in text else text
    if renamed:
        assert [k.shape for k in result.keys] == [(prefix + renamed,)]
    else:
        assert result.keys == ()
        assert [u.where for u in result.unresolved] == [where]


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        (("grad/", Hole("phase"), "@max"), ("grad/", Hole("phase"))),
        ((Hole("name"), "/loss"), (Hole("name"), "/loss")),
    ],
    ids=["a-hole-stays-where-the-tag-is-stripped", "a-key-without-the-tag-keeps-its-hole"],
)
def test_a_holed_key_through_a_rename_keeps_its_hole(
    shape: tuple[str | Hole, ...], expected: tuple[str | Hole, ...]
) -> None:
    renamer = _renamer('k.rsplit("@", 1)[0] if "@" in k else k')
    wrapper = Spread("d", (SLOT,), renames=((renamer, (SLOT,)),))

    result = spread_into(wrapper, DictVal((Key(shape, Where("m.py", 3, 1)),)))

    assert [k.shape for k in result.keys] == [expected]
