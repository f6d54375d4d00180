"""One similarity rule for "did you mean": a misspelt name, a renamed logged key."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.catalog.similar import RenameIndex, closest, renamed_key

RENAMES = [
    ("train/kl_div", ["train/kl", "train/loss"], "train/kl"),
    ("actor/grad_nrom", ["actor/grad_norm", "actor/entropy"], "actor/grad_norm"),
    ("training/loss", ["train/loss"], "train/loss"),
    ("train/policy_loss", ["train/loss"], "train/loss"),
    ("eval/aime-2024/acc", ["eval/aime_2024/acc"], "eval/aime_2024/acc"),
    ("train/lr", ["train/loss", "train/kl"], None),
    ("train/loss", ["train/loss"], None),
    ("a/b/c", ["a/x/y"], None),
    ("train/kl", ["train/kl/mean"], None),
    ("x" * 100_000, ["x"], None),
]


@pytest.mark.parametrize(("logged", "keys", "expected"), RENAMES, ids=[r[0][:40] for r in RENAMES])
def test_a_renamed_key_differs_in_one_close_segment(
    logged: str, keys: list[str], expected: str | None
) -> None:
    assert renamed_key(logged, keys) == expected


def test_the_closest_segment_wins_then_the_first_key() -> None:
    assert renamed_key("train/grad_nrom", ["train/grad_norm", "train/grad_nrm"]) == (
        "train/grad_nrm"
    )
    assert renamed_key("t/abcd", ["t/abcf", "t/abce"]) == "t/abce"


def test_a_hostile_segment_of_megabytes_is_no_rename() -> None:
    assert renamed_key("train/" + "k" * 5_000_000, ["train/kl"]) is None


@pytest.mark.parametrize(
    ("word", "choices", "expected"),
    [("descripton", ["description", "name"], "description"), ("zzz", ["name"], None)],
)
def test_closest_names_a_misspelt_name(word: str, choices: list[str], expected: str | None) -> None:
    assert closest(word, choices) == expected


_SEGMENT = st.text(alphabet="abk_-.l", min_size=1, max_size=6)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    logged=st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join),
    keys=st.lists(st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join), max_size=6),
)
def test_a_rename_is_a_listed_key_one_segment_away(logged: str, keys: list[str]) -> None:
    """Whatever is found is one of the keys, not the logged key, with one segment changed;
    the index answers as the one-off function does."""
    found = renamed_key(logged, keys)
    assert found == RenameIndex(keys).find(logged)
    if found is not None:
        assert found in keys
        assert found != logged
        mine, theirs = logged.split("/"), found.split("/")
        assert len(mine) == len(theirs)
        assert sum(a != b for a, b in zip(mine, theirs, strict=True)) == 1
