"""live-check reads a Hugging Face ``trainer_state.json`` (a transformers Trainer's log_history).

``tests/fixtures/live_check_formats/trainer_state.json`` holds the run of ``bare.jsonl`` and
was written by ``transformers.TrainerState.save_to_json`` itself; a test writes it again with
the installed library and compares the bytes. The document is streamed one ``log_history``
entry at a time: hostile inputs (not JSON, not UTF-8, no ``log_history``, truncated, deeply
nested, endless whitespace, one huge value) abandon the input at a position, keeping what was
read before, and never hold more than a bounded amount of text.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.live_check import Source, check_file, check_stream, current_limits
from codegen.runs.ingest import choose, read_source, trainer_state
from codegen.runs.limits import Limits
from codegen.runs.records import Malformed, Note, Record

REPO = Path(__file__).resolve().parents[2]
FORMATS = REPO / "tests" / "fixtures" / "live_check_formats"
STATE = FORMATS / "trainer_state.json"


def _items(raw: bytes, limits: Limits | None = None) -> list[Record | Malformed]:
    source = Source("<stdin>", io.BufferedReader(io.BytesIO(raw)))
    items = list(read_source(source, limits or current_limits(), trainer_state.INGESTER_NAME))
    assert all(isinstance(item, (Record, Malformed)) for item in items)
    return items  # type: ignore[return-value]


def test_the_fixture_is_byte_for_byte_what_transformers_writes(tmp_path: Path) -> None:
    """The real ``TrainerState.save_to_json`` writes the committed fixture again, byte for byte."""
    transformers = pytest.importorskip("transformers")
    doc = json.loads(STATE.read_text(encoding="utf-8"))
    state = transformers.TrainerState(**doc)
    written = tmp_path / "trainer_state.json"
    state.save_to_json(str(written))
    assert written.read_bytes() == STATE.read_bytes()


def test_each_log_history_entry_is_one_record_at_its_step_and_line() -> None:
    items = list(read_source(Source(str(STATE)), current_limits()))
    assert [(type(i).__name__, i.step, i.line, i.split) for i in items] == [  # type: ignore[union-attr]
        ("Record", 1, 12, True),
        ("Record", 2, 20, True),
        ("Record", 3, 27, True),
    ]
    first = items[0]
    assert isinstance(first, Record)
    assert first.prefix == ""
    assert "step" not in first.metrics
    assert first.metrics["train/global_valid_toks"] == 120


@pytest.mark.parametrize(
    ("path", "head", "detected"),
    [
        ("out/checkpoint-40/trainer_state.json", b'{\n  "best_metric": null,', True),
        ("state.json", b'{\n  "epoch": 1.0,\n  "log_history": [\n', True),
        ("state.json", b'{"log_history": [{"loss": 1.0, "step": 1}]}', True),
        ("run.jsonl", b'{"step": 1, "prefix": "train", "metrics": {"loss": 1.0}}\n', False),
        ("run.jsonl", b'{"step": 1, "data": {"actor/pg_loss": 0.1}}\n', False),
        ("trainer_state.json", b"[]", False),
        ("trainer_state.json", b"", True),  # cut before its first byte: read, a notice
    ],
)
def test_a_trainer_state_is_detected_by_its_name_or_its_log_history_key(
    path: str, head: bytes, detected: bool
) -> None:
    assert (choose(path, head).name == trainer_state.INGESTER_NAME) is detected


def test_it_is_judged_like_the_same_run_in_the_other_formats(evolution_catalog: Catalog) -> None:
    """Keys split against the catalog; the fixture's findings are the bare JSONL run's."""
    state = check_file(str(STATE), evolution_catalog)
    bare = check_file(str(FORMATS / "bare.jsonl"), evolution_catalog)
    assert {(f.kind, f.qualified_key, f.count) for f in state.findings} == {
        (f.kind, f.qualified_key, f.count) for f in bare.findings
    }
    assert {r.row.name: r.logged for r in state.rows if r.logged} == {
        r.row.name: r.logged for r in bare.rows if r.logged
    }
    (nan,) = [f for f in state.findings if f.kind == "non_finite"]
    assert str(state.where(nan)) == f"{STATE}:27:1"


def test_a_piped_trainer_state_is_read_with_its_input_format(evolution_catalog: Catalog) -> None:
    stream = io.BufferedReader(io.BytesIO(STATE.read_bytes()))
    report = check_stream(stream, evolution_catalog, input_format=trainer_state.INGESTER_NAME)
    assert {r.row.name for r in report.rows if r.logged} >= {"rl.reward.mean", "rl.policy.loss"}


def test_a_bad_entry_is_malformed_at_its_line_and_the_rest_is_read() -> None:
    raw = b'{"log_history": [\n7,\n{"step": "3", "loss": 1},\n{"step": 4, "loss": 1}\n]}'
    items = _items(raw)
    assert [(type(i).__name__, i.line) for i in items] == [
        ("Malformed", 2),
        ("Malformed", 3),
        ("Record", 4),
    ]
    assert isinstance(items[0], Malformed)
    assert "got a JSON number" in items[0].why
    assert not items[0].fatal


@pytest.mark.parametrize(
    ("raw", "why", "records"),
    [
        (b"\x00\x00\x00", "expected a JSON object", 0),
        (b"[1, 2]", "expected a JSON object", 0),
        (b'{"global_step": 3}', 'no "log_history" list', 0),
        (b'{"log_history": null}', 'expected a list after "log_history"', 0),
        (b'{"log_history": [{"step": 1, "loss": 1}]} trailing', "text after the end", 1),
        (b'{"log_history": [' + b"[" * 200_000, "nested too deeply", 0),
        (b'{"log_history": [{"step": 1, "k\xff": 1}]}', "not UTF-8 text", 0),
        (b'{"log_history" 5}', "expected ':'", 0),
        (b'{"log_history": [] "x": 1}', "expected ',' or '}'", 0),
    ],
)
def test_a_hostile_document_is_abandoned_at_a_position_keeping_what_was_read(
    raw: bytes, why: str, records: int
) -> None:
    items = _items(raw)
    assert sum(isinstance(i, Record) for i in items) == records
    last = items[-1]
    assert isinstance(last, Malformed)
    assert last.fatal
    assert why in last.why
    assert "trainer_state.json" in last.why
    assert last.line >= 1


@pytest.mark.parametrize(
    ("raw", "why", "records"),
    [
        (b'{"log_history": [{"step": 1, "loss": 1}', "found the end of the file", 1),
        (b'{"log_history": [{"step": 1, "loss": 1}, {"step": 2, "lo', "invalid JSON", 1),
        (b'{"log_history": [{"step": 1, "loss": 1}, {"step": 2, "loss": 0.', "invalid JSON", 1),
        (b'{"best_metric": null, "log_hist', "invalid JSON", 0),
        (b"", "found the end of the file", 0),
    ],
)
def test_a_document_cut_short_is_information_keeping_what_was_read(
    raw: bytes, why: str, records: int
) -> None:
    """save_to_json rewrites the file in place: read while it is written, or left by a job
    killed then, the document stops short; that is no damage (a notice, not abandoned)."""
    source = Source("<stdin>", io.BufferedReader(io.BytesIO(raw)))
    items = list(read_source(source, current_limits(), trainer_state.INGESTER_NAME))
    assert sum(isinstance(i, Record) for i in items) == records
    assert not any(isinstance(i, Malformed) for i in items)
    last = items[-1]
    assert isinstance(last, Note)
    assert last.kind == "incomplete_record"
    assert why in last.message


def test_one_value_longer_than_the_bound_abandons_the_input() -> None:
    raw = b'{"log_history": [{"step": 1, "note": "' + b"x" * 5000 + b'"}]}'
    (last,) = _items(raw, Limits(max_line_bytes=1000))
    assert isinstance(last, Malformed)
    assert last.fatal
    assert "longer than 1000" in last.why


def test_endless_whitespace_is_abandoned_not_read_forever() -> None:
    (last,) = _items(b"{" + b" " * 20_000, Limits(max_skipped_bytes=1000))
    assert isinstance(last, Malformed)
    assert "whitespace" in last.why


def test_a_long_history_is_read_in_small_chunks_with_the_right_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Values cut by a chunk's end (a number, a string, a keyword) are read whole."""
    monkeypatch.setattr(trainer_state, "_CHUNK", 5)
    entries = [{"loss": 1.0 / (i + 1), "ok": True, "tag": None, "step": i} for i in range(50)]
    raw = json.dumps({"a": [1, {"b": 2}], "log_history": entries}, indent=2).encode()
    items = _items(raw)
    assert [i.step for i in items if isinstance(i, Record)] == list(range(50))
    lines = raw.decode().splitlines()
    for item in items:
        assert lines[item.line - 1].strip() == "{"
        assert isinstance(item, Record)
        assert item.metrics == {k: v for k, v in entries[item.step].items() if k != "step"}
