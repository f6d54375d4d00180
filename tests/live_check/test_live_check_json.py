"""The ingesters' JSON decoder (orjson with a json fallback) reads every line as json.loads does."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.runs.ingest._json import loads


@pytest.mark.parametrize(
    "raw",
    [
        b'{"step": 1, "metrics": {"loss": NaN, "r": Infinity, "k": -Infinity}}',
        b'{"s": "\\ud800 lone surrogate"}',
        b'{"a": 1, "a": 2}',
        b'{"nested": ' + b"[" * 50 + b"]" * 50 + b"}",
    ],
    ids=["non-finite-tokens", "lone-surrogate", "duplicate-key", "nested"],
)
def test_lines_orjson_refuses_are_read_as_json_reads_them(raw: bytes) -> None:
    got, want = loads(raw), json.loads(raw)
    assert json.dumps(got, allow_nan=True) == json.dumps(want, allow_nan=True)


@pytest.mark.parametrize(
    "text", ["123456789012345678901234567890", "-9223372036854775809", "1" + "0" * 400]
)
def test_an_integer_past_64_bits_is_the_number_the_tee_would_export(text: str) -> None:
    from codegen.live_check.judges.values import as_number

    got, want = loads(text.encode()), json.loads(text)
    assert as_number(got) == as_number(want)


@pytest.mark.parametrize("raw", [b"{not json", b"", b"[1,", b"\xff\xfe"])
def test_invalid_lines_raise_value_error_like_json(raw: bytes) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - json's own errors, whatever their text
        loads(raw)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON)
def test_any_document_decodes_to_what_json_gives(document: object) -> None:
    raw = json.dumps(document).encode()
    got = loads(raw)
    want = json.loads(raw)
    assert _exported(got) == _exported(want)


def _exported(value: object) -> object:
    """The document with every number as the float the tee would export."""
    from codegen.live_check.judges.values import as_number

    if isinstance(value, dict):
        return {k: _exported(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_exported(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = as_number(value)
        return None if number is None or not math.isfinite(number) else number
    return value
