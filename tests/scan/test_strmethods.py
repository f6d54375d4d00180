"""How scan rewrites a key by a string method: the answer when the key's literal text and
holes decide it, ``None`` (the key stays unresolved) when a hole could change it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.scan.strmethods import apply
from codegen.scan.values import SLOT, Hole, Shape

NAME = Hole("name")


@pytest.mark.parametrize(
    ("method", "shape", "args", "index", "expected"),
    [
        (
            "replace",
            ("eval/score",),
            [("eval/",), ("eval/", NAME, "/")],
            None,
            ("eval/", NAME, "/score"),
        ),
        ("replace", ("a/", NAME, "/b"), [("x",), ("y",)], None, ("a/", NAME, "/b")),
        ("replace", ("ev", NAME), [("eval",), ("x",)], None, None),
        ("replace", (NAME, "al/x"), [("eval",), ("x",)], None, None),
        ("replace", ("k",), [("",), ("x",)], None, None),
        ("replace", ("k",), [("k",), ("x",), 1], None, None),
        ("removeprefix", ("train/loss",), [("train/",)], None, ("loss",)),
        ("removeprefix", ("tr", NAME), [("train/",)], None, None),
        ("removeprefix", (NAME, "/loss"), [("train/",)], None, None),
        ("removesuffix", ("loss@sum",), [("@sum",)], None, ("loss",)),
        ("rsplit", ("loss@sum",), [("@",), 1], 0, ("loss",)),
        ("rsplit", ("loss",), [("@",), 1], 0, ("loss",)),
        ("split", ("a/b/c",), [("/",)], -1, ("c",)),
        ("partition", ("ratio@max",), [("@",)], 0, ("ratio",)),
        ("rsplit", (NAME, "@sum"), [("@",), 1], 0, None),
        ("split", ("a",), [("/",)], 3, None),
        ("lower", ("Loss",), [], None, ("loss",)),
        ("strip", ("/loss/",), [("/",)], None, ("loss",)),
        ("upper", (SLOT,), [], None, None),
        ("replace", ("a", SLOT), [("a",), ("b",)], None, None),
    ],
    ids=[
        "replace-literal-with-a-holed-string",
        "replace-absent-text-leaves-the-key",
        "replace-text-running-into-a-hole-is-unknown",
        "replace-text-running-out-of-a-hole-is-unknown",
        "replace-empty-old-is-unknown",
        "replace-with-a-count-is-unknown",
        "removeprefix-literal",
        "removeprefix-running-into-a-hole-is-unknown",
        "removeprefix-at-a-hole-is-unknown",
        "removesuffix-literal",
        "rsplit-drops-a-tag",
        "rsplit-without-the-separator-keeps-the-key",
        "split-last-part",
        "partition-first-part",
        "rsplit-of-a-holed-key-is-unknown",
        "index-out-of-range-is-unknown",
        "lower",
        "strip-characters",
        "a-template-slot-is-unknown",
        "replace-beside-a-template-slot-is-unknown",
    ],
)
def test_a_string_method_rewrites_a_key_only_when_its_shape_decides(
    method: str,
    shape: Shape,
    args: list[Shape | int],
    index: int | None,
    expected: Shape | None,
) -> None:
    assert apply(method, shape, args, index) == expected


_TEXT = st.text(alphabet="ab/@_", min_size=1, max_size=12)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(text=_TEXT, old=_TEXT, new=_TEXT, sep=st.sampled_from(["/", "@", "_"]))
def test_on_a_key_without_holes_each_method_is_pythons(
    text: str, old: str, new: str, sep: str
) -> None:
    assert apply("replace", (text,), [(old,), (new,)]) == (text.replace(old, new),)
    assert apply("removeprefix", (text,), [(old,)]) in {(text.removeprefix(old),), None}
    assert apply("rsplit", (text,), [(sep,), 1], 0) in {(text.rsplit(sep, 1)[0],), None}
    assert apply("partition", (text,), [(sep,)], 2) in {(text.partition(sep)[2],), None}
