"""Which writes of a timer class's ``with`` block fill the dict its constructor was given."""

from __future__ import annotations

import ast
import textwrap

import pytest

from codegen.scan.syntax import FuncDef
from codegen.scan.timers import class_fills


def _methods(source: str) -> dict[str, FuncDef]:
    tree = ast.parse(textwrap.dedent(source))
    cls = tree.body[0]
    assert isinstance(cls, ast.ClassDef)
    return {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}


INIT = """
class T:
    def __init__(self, name, out=None):
        self.name = name
        self.out = out
"""


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("    def __exit__(self, *e):\n        self.out[self.name] = 1\n", [("out", "name")]),
        (
            "    async def __aexit__(self, *e):\n        self.out[self.name] += 1\n",
            [("out", "name")],
        ),
        ("    def __enter__(self):\n        self.out[self.name] = 0\n", [("out", "name")]),
        ("    def __exit__(self, *e):\n        self.out['fixed'] = 1\n", [("out", "'fixed'")]),
        ("    def __exit__(self, *e):\n        self.other[self.name] = 1\n", []),
        ("    def __exit__(self, *e):\n        self.out[self.start] = 1\n", []),
        ("    def report(self):\n        self.out[self.name] = 1\n", []),
    ],
    ids=[
        "exit",
        "async-exit-augmented",
        "enter",
        "literal-key",
        "unstored-dict",
        "unstored-key",
        "not-a-with-method",
    ],
)
def test_a_timer_fills_the_dict_it_stored_under_the_key_it_stored(
    block: str, expected: list[tuple[str, str]]
) -> None:
    fills = class_fills(_methods(INIT + block))
    shown = [(param, key if isinstance(key, str) else ast.unparse(key)) for param, key in fills]
    assert shown == expected


def test_a_class_without_a_constructor_fills_nothing() -> None:
    source = "class T:\n    def __exit__(self, *e):\n        self.out[self.name] = 1\n"
    assert class_fills(_methods(source)) == []
