"""The calls the first-run note names: those handed a dict of literal keys, ranked by keys."""

from __future__ import annotations

import pytest

from codegen.scan.candidates import Candidate, candidates


def _found(source: str) -> list[Candidate]:
    return candidates([("m.py", source.encode())])


def test_calls_handed_a_dict_of_literal_keys_are_ranked_by_keys() -> None:
    source = """\
def step(tracker, stats, loss):
    metrics = {"loss": loss, f"kl/{1}": 0}
    metrics["lr"] = 1e-3
    tracker.log(metrics, 3)
    stats.push(values={"a": 1})
"""
    assert _found(source) == [
        Candidate("tracker.log", 0, 3, "m.py:4"),
        Candidate("stats.push", "values", 1, "m.py:5"),
    ]
    assert _found(source)[1].entry() == '{call = "stats.push", metrics = "values"}'


@pytest.mark.parametrize(
    "call",
    [
        "print(d)",
        "json.dumps(d)",
        "logger.info(d)",
        "d.update({'b': 2})",
        "handle({1: 2})",
        "handle({k: 1 for k in d})",
        "handle(other)",
    ],
)
def test_a_call_taking_no_dict_of_literal_keys_or_logging_none_is_no_candidate(
    call: str,
) -> None:
    source = f"import json\ndef f(logger, other):\n    d = {{'a': 1}}\n    {call}\n"
    assert _found(source) == []


def test_a_file_that_does_not_parse_is_skipped() -> None:
    assert candidates([("bad.py", b"def (:\n"), ("ok.py", b"def f(t):\n    t.log({'a': 1})\n")])
