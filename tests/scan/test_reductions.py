"""Which keys a tracker's exporter makes of a recorded key, read from its code (.reductions):
the tag a recording call gives, and the templates the exporter writes per tag."""

from __future__ import annotations

import ast

import pytest

from codegen.scan.reductions import Exporter, exporter_of, tag_of
from codegen.scan.syntax import FuncDef
from codegen.scan.values import SLOT

TRACKER = """
class Meter:
    def record(self, reduce=None, **values):
        if reduce is None:
            reduce = Kind.SPREAD
        for key, value in values.items():
            self.kinds[key] = reduce
            self.stats[key] = value

    def fixed(self, **values):
        for key, value in values.items():
            self._kind(key, Kind.TOTAL)

    def _kind(self, key, kind):
        self.kinds[key] = kind

    def guessed(self, kind, **values):
        for key, value in values.items():
            self.kinds[key] = kind

    def export(self):
        out = {}
        for key in sorted(self.stats):
            out.update(self._reduce(key))
        return out

    def plain(self):
        return dict(self.stats)

    def _reduce(self, key):
        kind = self.kinds.get(key, Kind.TOTAL)
        result = {}
        if kind == Kind.SPREAD:
            result[f"{key}/mean"] = 0
            result["/".join([key, "max"])] = 0
        elif kind == Kind.TOTAL:
            result[key] = 0
        return result
"""


def _methods() -> dict[str, FuncDef]:
    cls = ast.parse(TRACKER).body[0]
    assert isinstance(cls, ast.ClassDef)
    return {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}


def _call(source: str) -> ast.Call:
    node = ast.parse(source, mode="eval").body
    assert isinstance(node, ast.Call)
    return node


def _exporter() -> Exporter:
    found = exporter_of(_methods(), _methods()["export"])
    assert found is not None
    return found


def test_an_exporter_writes_each_tags_templates_around_the_key() -> None:
    found = _exporter()
    assert (found.field, found.tags, found.default) == ("stats", "kinds", "TOTAL")
    assert found.exported("SPREAD") == ((SLOT, "/mean"), (SLOT, "/max"))
    assert found.exported("TOTAL") == ((SLOT,),)


def test_a_getter_handing_the_field_back_is_no_exporter() -> None:
    assert exporter_of(_methods(), _methods()["plain"]) is None


@pytest.mark.parametrize(
    ("method", "call", "expected"),
    [
        ("record", "m.record(loss=1)", "SPREAD"),
        ("record", "m.record(reduce=Kind.TOTAL, loss=1)", "TOTAL"),
        ("record", "m.record(Kind.TOTAL, loss=1)", "TOTAL"),
        ("fixed", "m.fixed(n=1)", "TOTAL"),
        ("guessed", "m.guessed(chosen, loss=1)", None),
    ],
    ids=[
        "the-default-replacing-none",
        "the-keyword-given",
        "the-position-given",
        "a-member-written-through-a-setter",
        "a-variable-is-not-told",
    ],
)
def test_the_tag_a_recording_call_gives(method: str, call: str, expected: str | None) -> None:
    assert tag_of(_methods()[method], _call(call), "kinds", _methods()) == expected


def test_an_untold_tag_exports_the_default_branch_only() -> None:
    assert _exporter().exported(None) == ((SLOT,),)
