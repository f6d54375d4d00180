"""The scanner's cheaper readers give exactly what the plain ones they replace give.

``scan`` keeps its reports byte-identical while reading less: a loop for ``ast.walk``,
the field-write pattern tried only where a field name occurs, receivers' classes read
from the lines naming a class. Each is checked here against the plain reader it
replaces, on generated text and code (hypothesis) and on hand-written edge cases.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.scan.calls import DEFAULT_SCAN_CALLS
from codegen.scan.extract import Project, _Scanner
from codegen.scan.logcalls import _BINDING
from codegen.scan.scanner import _shown, _shown_file, syntax_checked
from codegen.scan.sources import Module, _field_starts
from codegen.scan.syntax import children, walk

_FIELD_PIECES = [".", "info", "in", "(", ",", " ", "\n", "\t", "=", "==", "[", "]", "update", "x"]
_BINDING_PIECES = [
    "t", "self.", "tracker", "Tracking", "wb", " ", ":", "=", "(", ")", ",", "\n", "1", "é", ".",
]  # fmt: skip
_CODE = [
    "x = f(a, b=c)\n",
    "def g(p, *q, k=1, **r):\n    return {p: [i for i in q if i]}\n",
    "class C(B):\n    y: int = 2\n    async def h(self):\n        await self.z[0]\n",
    "with open(p) as f, g() as h:\n    pass\n",
    "try:\n    m = d | e\nexcept E as err:\n    raise\n",
    "match v:\n    case [1, *rest]:\n        del rest\n",
    "lam = lambda u: u.v if u else None\n",
]


def _field_pattern(names: list[str]) -> re.Pattern[bytes]:
    """The pattern :meth:`Module.mention_lines` builds for field writes."""
    alternatives = b"|".join(re.escape(name.encode()) for name in names)
    return re.compile(
        rb"\.(?:" + alternatives + rb")\s*(?:\[[^\]\n]*\]\s*=(?!=)|=(?!=)|\.update\b)"
        rb"|[(,]\s*(?:" + alternatives + rb")\s*=(?!=)"
    )


def _plain_instances(source: bytes, names: set[str]) -> dict[str, set[str]]:
    """Receivers' classes read by matching the whole text, as before the line filter."""
    found: dict[str, set[str]] = {}
    if not any(name.encode() in source for name in names):
        return found
    aliases: list[tuple[str, str]] = []
    for match in _BINDING.finditer(source.decode("utf-8", "replace")):
        value, annotation = match.group("value"), match.group("annotation")
        cls = (value or annotation or "").rpartition(".")[2]
        if cls in names:
            found.setdefault(match.group("receiver"), set()).add(cls)
        elif value and not annotation:
            aliases.append((match.group("receiver"), value))
    for receiver, value in aliases:
        if value in found and receiver != value:
            found.setdefault(receiver, set()).update(found[value])
    return found


def _instances(source: bytes, names: list[str]) -> dict[str, set[str]]:
    project = Project(())
    project.qualifiers = names
    module = Module("m.py", "/m.py", source, ast.parse(""))
    return _Scanner(project, module, [])._instances()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_FIELD_PIECES), max_size=24).map("".join),
    st.sampled_from([["info"], ["in", "info"]]),
)
def test_field_writes_are_found_where_a_search_of_every_byte_finds_them(
    text: str, names: list[str]
) -> None:
    pattern = _field_pattern(names)
    source = text.encode()
    assert _field_starts(pattern, source, names) == [m.start() for m in pattern.finditer(source)]


@pytest.mark.parametrize(
    "text",
    [
        "x.info = {}\n",
        "f(\n    info=d)\n",
        ".info\n[(info=1]=2\n",  # a write inside another's brackets is not found twice
        "a.info[k] == 1\n",
        "obj.info.update(m)\n",
    ],
)
def test_field_writes_in_edge_cases_are_found_where_a_full_search_finds_them(text: str) -> None:
    pattern = _field_pattern(["info"])
    source = text.encode()
    assert _field_starts(pattern, source, ["info"]) == [m.start() for m in pattern.finditer(source)]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_BINDING_PIECES), max_size=30).map("".join),
    st.sampled_from([["Tracking"], ["Tracking", "self"], ["wb"]]),
)
def test_receivers_classes_read_from_their_lines_are_those_the_whole_text_gives(
    text: str, names: list[str]
) -> None:
    source = text.encode()
    assert _instances(source, names) == _plain_instances(source, set(names))


def test_a_chain_of_aliases_is_followed_as_far_as_the_whole_text_follows_it() -> None:
    source = b"t: Tracking\nz = y\ny = t\nw = y\nself.tracker = w\n"
    found = _instances(source, ["Tracking"])
    assert found == _plain_instances(source, {"Tracking"})
    assert set(found) == {"t", "y", "w", "self.tracker"}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(_CODE), min_size=1, max_size=5).map("".join))
def test_walk_and_children_visit_the_nodes_ast_does_in_its_order(code: str) -> None:
    tree = ast.parse(code)
    assert [id(node) for node in walk(tree)] == [id(node) for node in ast.walk(tree)]
    for node in ast.walk(tree):
        assert children(node) == list(ast.iter_child_nodes(node))


def test_the_names_an_expression_reads_are_remembered_for_that_expression_only() -> None:
    project = Project(())
    first = ast.parse("f'{a}/{b.c}' % d", mode="eval").body
    second = ast.parse("e + g", mode="eval").body
    assert project.names_in(first) == ("d", "a", "b")
    assert project.names_in(first) is project.names_in(first)
    assert project.names_in(second) == ("e", "g")


_SCOPING = ["nonlocal q\n", "def f(a):\n    global a\n", "(", ")", ":", "x", "\n", "    ", "é"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*_CODE, *_SCOPING]), max_size=8))
def test_a_file_the_treeless_syntax_check_passes_parses(pieces: list[str]) -> None:
    # Files calling no logging function are checked without building a tree; one that
    # passes must parse (one refused may still parse: a scoping error, looked at again).
    source = "".join(pieces).encode()
    if syntax_checked(source):
        ast.parse(source)


@pytest.mark.parametrize(
    ("absolute", "here"),
    [
        ("/w/p/a.py", "/w/p"),
        ("/w/pa.py", "/w/p"),  # a sibling sharing the folder's text is not below it
        ("/w/p/a.py", "/"),
        ("/x/a.py", "/w/p"),
        ("//w/a.py", "/"),  # POSIX keeps a leading ``//`` apart
        ("/w/\x1b[31m.py", "/w"),  # escaped either way
    ],
)
def test_a_files_shown_path_read_from_its_text_is_the_one_pathlib_gives(
    absolute: str, here: str
) -> None:
    expected = _shown(Path(absolute), Path(here))
    assert _shown_file(absolute, os.path.join(here, ""), Path(here)) == expected


_READS_WHAT_IT_WRITES = b"""import wandb

class Trainer:
    def __init__(self):
        self.extra = {"setup/a": 1}
        self.metrics = dict(self.extra)
        self.extra["setup/b"] = 2

    def step(self):
        self.extra["step/c"] = len(self.metrics)
        self.metrics["step/d"] = 1

    def report(self):
        wandb.log(self.metrics)
        wandb.log(self.extra)
"""


def test_methods_reading_what_they_write_are_each_analysed_once_with_the_same_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    analysed: list[str] = []
    collect = _Scanner.collect

    def counted(scanner: _Scanner, func: ast.FunctionDef | ast.AsyncFunctionDef) -> object:
        analysed.append(func.name)
        return collect(scanner, func)

    monkeypatch.setattr(_Scanner, "collect", counted)
    project = Project(DEFAULT_SCAN_CALLS)
    project.add(Module("t.py", "/p/t.py", _READS_WHAT_IT_WRITES, ast.parse(_READS_WHAT_IT_WRITES)))
    logged = {
        found.where.line: sorted("".join(map(str, key.shape)) for key in found.keys)
        for found in project.logged()
    }
    # ``__init__`` reads ``self.extra`` while its own writes are being read: once, not twice.
    assert sorted(analysed) == ["__init__", "step"]
    assert logged == {
        14: ["setup/a", "step/c", "step/d"],  # ``dict(self.extra)`` before ``setup/b``
        15: ["setup/a", "setup/b", "step/c"],
    }
