"""live-check reads a W&B run: a run folder, its ``.wandb`` file, or a ``wandb/`` folder of runs.

Two kinds of input: runs written by the real ``wandb`` library in offline mode
(``integration``: ``wandb.init`` starts its ``wandb-core`` service, a few
seconds; they run in a child process, see ``tests/wandb_runs.py``), and run
files built here byte for byte (the container: header, 32 KiB blocks, chunks
with their CRC-32; the payload: a ``wandb_internal.Record`` protobuf encoded by
the small encoder below) for the damage a reader must survive.
"""

from __future__ import annotations

import importlib
import io
import json
import math
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.cli import main
from codegen.live_check import (
    LiveCheckReport,
    Source,
    check_file,
    check_paths,
    check_stream,
    current_limits,
    expand_inputs,
)
from codegen.runs.ingest import choose, read_source, wandb_run
from codegen.runs.limits import Limits
from codegen.runs.records import Malformed, Note, Record, RunConfig
from tests.catalog_projects import loaded_catalog, write_catalog

HERE = Path(__file__).resolve().parent

CATALOG = """\
owner: example.trainer
module: wandb_trainer
description: Metrics an RL trainer logs with wandb.log.
prefix: actor
attributes:
  - name: rl.data_source
    type: string
    description: Data source a validation value was computed on.
    max_cardinality: "64"
    spans_segments: "true"
teed:
  - logger_key: pg_loss
    name: rl.wb.actor.pg_loss
    kind: gauge
    unit: "1"
    description: Policy-gradient loss of the actor.
    requirement_level: required
  - logger_key: kl_loss
    name: rl.wb.actor.kl_loss
    kind: gauge
    unit: "1"
    description: KL loss against the reference policy.
    requirement_level: conditionally_required
    condition: "config.actor.use_kl_loss"
  - logger_key: "{rl.data_source}/acc/mean@4"
    prefix: val-core
    name: rl.wb.validation.accuracy
    kind: gauge
    unit: "1"
    description: Validation accuracy, mean of four samples.
    attributes:
      - ref: rl.data_source
  - logger_key: tokens per second
    prefix: perf
    name: rl.wb.perf.throughput
    kind: gauge
    unit: "1/s"
    description: Tokens trained per second.
  - logger_key: eval.acc
    prefix: ""
    name: rl.wb.eval.accuracy
    kind: gauge
    unit: "1"
    description: Evaluation accuracy, logged as a nested dict.
"""


@pytest.fixture(scope="module")
def wandb_keys_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """A catalog of keys with '/', '@', spaces and a nested dict, and a config condition."""
    return loaded_catalog(tmp_path_factory.mktemp("wandb-catalog"), CATALOG, "trainer.yaml")


def findings(report: LiveCheckReport) -> set[tuple[str, str]]:
    """(kind, prefix/key) of every finding."""
    return {(f.kind, f.qualified_key) for f in report.findings}


def logged(report: LiveCheckReport) -> dict[str, int]:
    """Values logged per row, for the rows that logged any."""
    return {r.row.name: r.logged for r in report.rows if r.logged}


# --- a run file built byte for byte --------------------------------------------------------


def varint(number: int) -> bytes:
    """``number`` as a protobuf varint (negative: two's complement on 64 bits)."""
    number &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = number & 0x7F
        number >>= 7
        if number:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def message(number: int, body: bytes) -> bytes:
    """A length-delimited field (a sub-message, a string or bytes)."""
    return varint(number << 3 | 2) + varint(len(body)) + body


def text(number: int, value: str) -> bytes:
    """A string field."""
    return message(number, value.encode("utf-8"))


def item(path: str | tuple[str, ...], value_json: str | None = None, *typed: bytes) -> bytes:
    """A HistoryItem/ConfigItem: ``key`` for a string, ``nested_key`` for a path."""
    keys = text(1, path) if isinstance(path, str) else b"".join(text(2, p) for p in path)
    value = b"" if value_json is None else text(16, value_json)
    return keys + b"".join(typed) + value


def history(step: int | None, *items: bytes) -> bytes:
    """A Record holding a HistoryRecord."""
    body = b"".join(message(1, i) for i in items)
    if step is not None:
        body += message(2, varint(1 << 3) + varint(step))
    return varint(1 << 3) + varint(7) + message(2, body)  # Record.num = 7, then history


def config(*items: bytes, remove: tuple[bytes, ...] = ()) -> bytes:
    """A Record holding a ConfigRecord."""
    body = b"".join(message(1, i) for i in items) + b"".join(message(2, i) for i in remove)
    return message(5, body)


def run_record(*items: bytes) -> bytes:
    """A Record holding a RunRecord with its configuration."""
    return message(17, text(1, "abc123") + message(4, b"".join(message(1, i) for i in items)))


def chunk(kind: int, payload: bytes, *, crc: int | None = None) -> bytes:
    """One chunk: CRC-32 of type and payload, length, type, payload."""
    checksum = zlib.crc32(bytes([kind]) + payload) if crc is None else crc
    return struct.pack("<IHB", checksum, len(payload), kind) + payload


def container(*records: bytes) -> bytes:
    """A run file as wandb-core writes it: the header, records split at 32 KiB blocks."""
    out = bytearray(wandb_run.FILE_HEADER)
    for record in records:
        rest, first = record, True
        while True:
            room = wandb_run.BLOCK_SIZE - len(out) % wandb_run.BLOCK_SIZE
            if room < 7:
                out += bytes(room)  # the block's zero trailer
                continue
            part, rest = rest[: room - 7], rest[room - 7 :]
            last = not rest
            kind = (1 if last else 2) if first else (4 if last else 3)
            out += chunk(kind, part)
            first = False
            if last:
                break
    return bytes(out)


def read_items(data: bytes, limits: Limits | None = None) -> list[Any]:
    """The items the W&B ingester reads from ``data``."""
    return list(wandb_run.read(Source("run.wandb"), io.BytesIO(data), limits or Limits()))


def records(items: list[Any]) -> list[tuple[int, dict[str, object]]]:
    """(step, metrics) of the records among ``items``."""
    return [(i.step, dict(i.metrics)) for i in items if isinstance(i, Record)]


def malformed(items: list[Any]) -> list[Malformed]:
    """The malformed items."""
    return [i for i in items if isinstance(i, Malformed)]


STEP_1 = history(1, item(("actor/pg_loss",), "0.5"))
STEP_2 = history(2, item(("actor/pg_loss",), "0.25"))


def test_a_built_run_file_reads_step_keys_and_values() -> None:
    data = container(
        run_record(item("actor", '{"use_kl_loss": true}'), item("_wandb", "{}")),
        history(
            3,
            item(("actor/pg_loss",), "0.5"),
            item(("eval", "acc"), "0.75"),
            item(("_step",), "3"),
            item(("_runtime",), "1.5"),
            item(("_timestamp",), "1796361318.6"),
            item(("_wandb", "runtime"), "1"),
            item(("nan",), "NaN"),
            item(("up",), "Infinity"),
            item(("down",), "-Infinity"),
        ),
    )
    items = read_items(data)
    assert records(items) == [
        (3, {"actor/pg_loss": 0.5, "eval.acc": 0.75, "nan": pytest.approx(math.nan, nan_ok=True),
             "up": math.inf, "down": -math.inf})
    ]  # fmt: skip
    (run_config,) = [i for i in items if isinstance(i, RunConfig)]
    assert run_config.config == {"actor": {"use_kl_loss": True}}
    assert not malformed(items)


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        (varint(3 << 3 | 0) + varint(0), None),  # none
        (varint(4 << 3 | 0) + varint(1), True),  # boolean
        (varint(5 << 3 | 0) + varint(2 * 7), 7),  # integer (zigzag)
        (varint(5 << 3 | 0) + varint(2 * 7 - 1), -7),
        (varint(6 << 3 | 1) + struct.pack("<d", 0.125), 0.125),  # number
        (text(7, "low"), "low"),  # text
        (text(8, "[1, 2]"), [1, 2]),  # json
    ],
)
def test_the_typed_form_of_a_history_value_is_read_too(typed: bytes, value: object) -> None:
    (record,) = records(read_items(container(history(1, item(("k",), None, typed)))))
    assert record == (1, {"k": value})


def test_without_a_step_message_the_step_item_is_the_step() -> None:
    data = container(history(None, item(("x",), "1"), item(("_step",), "9")))
    assert records(read_items(data)) == [(9, {"x": 1})]


def metric(name: str = "", glob: str = "", step_metric: str = "") -> bytes:
    """A Record holding a MetricRecord (``wandb.define_metric``)."""
    body = b"".join(text(n, v) for n, v in ((1, name), (2, glob), (4, step_metric)) if v)
    return message(12, body)


# OpenRLHF's WandbLogger: define_metric("train/*", step_metric="train/global_step"), then
# wandb.log without step= twice a step (the samples table, then the metrics), so _step
# counts calls; wandb's step_sync copies the last global step into the table's record.
OPENRLHF_AXES = (
    metric(name="train/global_step"),
    metric(glob="train/*", step_metric="train/global_step"),
    metric(name="eval/epoch"),
    metric(glob="eval/*", step_metric="eval/epoch"),
)


def test_keys_with_a_defined_step_metric_are_read_at_its_value() -> None:
    data = container(
        *OPENRLHF_AXES,
        history(
            0, item(("train/samples", "_type"), '"table-file"'), item(("train/global_step",), "0")
        ),
        history(1, item(("train/critic_loss",), "0.1"), item(("train/global_step",), "1")),
        history(
            2, item(("train/samples", "_type"), '"table-file"'), item(("train/global_step",), "1")
        ),
        history(3, item(("train/critic_loss",), "0.2"), item(("train/global_step",), "2.0")),
        history(4, item(("eval/pass1",), "0.5"), item(("eval/epoch",), "0")),
    )
    assert records(read_items(data)) == [
        (0, {"train/global_step": 0}),
        (1, {"train/critic_loss": 0.1, "train/global_step": 1}),
        (1, {"train/global_step": 1}),
        (2, {"train/critic_loss": 0.2, "train/global_step": 2.0}),
        (0, {"eval/pass1": 0.5, "eval/epoch": 0}),
    ]


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        # No definition for the key: the history step.
        (
            (item(("other",), "1"), item(("train/global_step",), "5")),
            [(7, {"other": 1}), (5, {"train/global_step": 5})],
        ),
        # The step metric absent, or not a whole number, or a bool: the history step.
        ((item(("train/loss",), "1"),), [(7, {"train/loss": 1})]),
        (
            (item(("train/loss",), "1"), item(("train/global_step",), "2.5")),
            [(7, {"train/loss": 1, "train/global_step": 2.5})],
        ),
        (
            (item(("train/loss",), "1"), item(("train/global_step",), "true")),
            [(7, {"train/loss": 1, "train/global_step": True})],
        ),
        # An exact definition beats the glob; a later glob definition wins.
        (
            (item(("train/lr",), "1"), item(("lr_step",), "3"), item(("train/global_step",), "5")),
            [(3, {"train/lr": 1, "lr_step": 3}), (5, {"train/global_step": 5})],
        ),
    ],
    ids=["undefined", "absent", "fraction", "bool", "exact-beats-glob"],
)
def test_a_key_without_a_usable_step_metric_stays_at_the_history_step(
    items: tuple[bytes, ...], expected: list[tuple[int, dict[str, object]]]
) -> None:
    axes = (*OPENRLHF_AXES, metric(name="train/lr", step_metric="lr_step"))
    assert records(read_items(container(*axes, history(7, *items)))) == expected


@pytest.mark.parametrize(
    ("axes", "expected"),
    [
        ((metric(glob="actor/*", step_metric="actor/epoch"),), set()),
        ((), {("undeclared", "actor/epoch")}),
    ],
    ids=["a-step-metric", "no-definition"],
)
def test_an_undeclared_step_metric_is_an_axis_not_a_finding(
    wandb_keys_catalog: Catalog, axes: tuple[bytes, ...], expected: set[tuple[str, str]]
) -> None:
    """OpenRLHF's eval/* are plotted against eval/epoch, which it never logs: W&B's
    step_sync writes eval/epoch 0 into each of their records. An undeclared key the run
    defined as a step metric is an axis, not an undeclared metric; any other is one."""
    data = container(
        *axes, history(4, item(("actor/pg_loss",), "0.5"), item(("actor/epoch",), "0"))
    )
    (record,) = [i for i in read_items(data) if isinstance(i, Record)]
    assert record.step_keys == ({"actor/epoch"} if axes else set())
    report = check_stream(io.BufferedReader(io.BytesIO(data)), wandb_keys_catalog)
    assert findings(report) == expected
    assert logged(report) == {"rl.wb.actor.pg_loss": 1}


def test_a_later_definition_without_a_step_metric_keeps_the_earlier_one() -> None:
    """``define_metric("train/*", summary="max")`` after the axis was set merges into it."""
    axes = (*OPENRLHF_AXES, metric(glob="train/*"), metric(name="train/global_step"))
    data = container(
        *axes, history(9, item(("train/loss",), "1"), item(("train/global_step",), "4"))
    )
    assert records(read_items(data)) == [(4, {"train/loss": 1, "train/global_step": 4})]


@pytest.mark.parametrize(
    ("glob", "key", "matches"),
    [
        ("train/*", "train/x", True),
        ("train/*", "train/a/b", True),
        ("train/*", "eval/x", False),
        ("*", "anything", True),
        ("train/x", "train/x", True),  # no '*': one key
        ("train/x", "train/xy", False),
        ("train/?", "train/x", False),  # only a trailing '*' is special (wandb refuses others)
    ],
)
def test_a_metric_glob_matches_as_wandb_reads_it(glob: str, key: str, matches: bool) -> None:
    assert wandb_run._glob_matches(glob, key) is matches


def test_an_old_file_with_a_nested_dict_in_one_json_value_reads_like_nested_keys() -> None:
    data = container(history(1, item("eval", '{"acc": 0.5, "deep": {"er": 1}}')))
    assert records(read_items(data)) == [(1, {"eval.acc": 0.5, "eval.deep.er": 1})]


def test_media_values_are_skipped_and_counted_in_a_notice() -> None:
    data = container(
        history(
            1,
            item(("h", "_type"), '"histogram"'),
            item(("h", "values"), "[1, 2]"),
            item(("h", "bins"), "[0, 1, 2]"),
            item("table", '{"_type": "table-file", "path": "media/t.json"}'),
            item(("x",), "1"),
        ),
        history(2, item(("h", "_type"), '"histogram"'), item(("h", "values"), "[3]")),
    )
    items = read_items(data)
    assert records(items) == [(1, {"x": 1}), (2, {})]
    (note,) = [i for i in items if isinstance(i, Note)]
    assert note.kind == "skipped_values"
    assert "3 logged value(s)" in note.message
    assert "histogram: 2, table-file: 1" in note.message


def test_media_kinds_counted_by_name_are_bounded() -> None:
    steps = [history(n, item((f"m{n}", "_type"), f'"kind-{n}"')) for n in range(100)]
    (note,) = [i for i in read_items(container(*steps)) if isinstance(i, Note)]
    assert "100 logged value(s)" in note.message
    assert "other: 68" in note.message


def test_the_configuration_follows_updates_and_removals() -> None:
    data = container(
        run_record(item("trainer", '{"test_freq": 5}'), item("lr", "0.1")),
        config(item("lr", "0.2"), item(("trainer", "warmup"), "3")),
        config(remove=(item("trainer"),)),
        STEP_1,
    )
    (run_config,) = [i for i in read_items(data) if isinstance(i, RunConfig)]
    assert run_config.config == {"lr": 0.2}
    assert run_config.line == 1


def test_a_record_longer_than_a_block_is_reassembled() -> None:
    keys = [item((f"k{n:05d}",), str(n)) for n in range(5000)]  # about 60 KiB: 3 chunks
    data = container(STEP_1, history(2, *keys), STEP_2)
    assert len(data) > 2 * wandb_run.BLOCK_SIZE
    got = records(read_items(data))
    assert [step for step, _ in got] == [1, 2, 2]
    assert len(got[1][1]) == 5000


def _sized(size: int) -> bytes:
    """A history record of exactly ``size`` bytes (its padding value grows to fit)."""

    def record(pad: int) -> bytes:
        return history(1, item(("actor/pg_loss",), "0.5"), item(("pad",), f'"{"x" * pad}"'))

    guess = size - len(record(0))  # length varints grow by a few bytes on the way
    for pad in range(guess, max(guess - 8, -1), -1):
        if len(record(pad)) == size:
            return record(pad)
    raise AssertionError(size)


@pytest.mark.parametrize("left", [0, 3, 6, 7, 8])
def test_block_ends_are_handled_as_the_writer_leaves_them(left: int) -> None:
    """After the first record, ``left`` bytes remain in the first block: fewer than 7 are a
    zero trailer, exactly 7 hold an empty first chunk (the record goes on in the next block)."""
    first = _sized(wandb_run.BLOCK_SIZE - len(HEADER) - 7 - left)
    data = container(first, STEP_2, STEP_2)
    assert len(data) > wandb_run.BLOCK_SIZE
    items = read_items(data)
    assert [step for step, _ in records(items)] == [1, 2, 2]
    assert not malformed(items)


def _corrupt_crc(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


def _with_block(data: bytes, block: bytes) -> bytes:
    """``data`` padded to its block's end, then ``block`` as the next whole block."""
    pad = -len(data) % wandb_run.BLOCK_SIZE
    return data + bytes(pad) + block


HEADER = wandb_run.FILE_HEADER
ONE = container(STEP_1)
FIRST_CHUNK = len(HEADER)


@pytest.mark.parametrize(
    ("data", "steps", "why", "fatal"),
    [
        pytest.param(_corrupt_crc(ONE, FIRST_CHUNK), [], "checksum mismatch", False, id="bad-crc"),
        pytest.param(
            _with_block(_corrupt_crc(ONE, FIRST_CHUNK), container(STEP_2)[len(HEADER) :]),
            [2],
            "checksum mismatch",
            False,
            id="bad-crc-then-next-block-read",
        ),
        pytest.param(
            HEADER + struct.pack("<IHB", 1, 40000, 1) + bytes(100),
            [],
            "runs past the end of its 32 KiB block",
            False,
            id="length-past-block",
        ),
        pytest.param(HEADER + chunk(9, STEP_1), [], "unknown chunk type 9", False, id="type"),
        pytest.param(
            HEADER + chunk(3, b"orphan") + chunk(1, STEP_1),
            [1],
            "continuation chunk without its first",
            False,
            id="orphan-middle",
        ),
        pytest.param(
            HEADER + chunk(2, STEP_1[:5]) + chunk(1, STEP_2),
            [2],
            "last chunk is missing",
            False,
            id="first-without-last",
        ),
        pytest.param(
            HEADER + chunk(2, STEP_1[:5]) + bytes(7) + chunk(1, STEP_2),
            [],
            "zero bytes where the record's next chunk should be",
            False,
            id="zeros-inside-a-record",
        ),
        pytest.param(
            container(b"\xff\xff\xff", STEP_2), [2], "not a W&B record protobuf", False, id="pb"
        ),
        pytest.param(
            container(message(2, message(1, b"\x0a\x05ab")), STEP_2),
            [2],
            "runs past the end",
            False,
            id="pb-inner-length",
        ),
        pytest.param(
            container(message(2, message(1, text(16, "not json") + text(2, "k")))),
            [],
            "not a W&B record protobuf",
            False,
            id="value-not-json",
        ),
        pytest.param(
            container(history(None, item(("x",), "1"))), [], "without a step", False, id="no-step"
        ),
        pytest.param(
            container(message(2, message(1, text(16, "1")))), [], "has no key", False, id="no-key"
        ),
        pytest.param(container(varint(2 << 3 | 3) + b"\x00"), [], "wire type 3", False, id="group"),
        pytest.param(b"", [], "does not start with the W&B header", True, id="empty"),
        pytest.param(b'{"step": 1}\n', [], "does not start with the W&B header", True, id="jsonl"),
        pytest.param(os.urandom(5000), [], "does not start with the W&B header", True, id="noise"),
        pytest.param(HEADER[:6] + b"\x01", [], "unknown W&B file version 1", True, id="version"),
    ],
)
def test_damage_is_positioned_and_the_rest_is_read(
    data: bytes, steps: list[int], why: str, fatal: bool
) -> None:
    items = read_items(data)
    assert [step for step, _ in records(items)] == steps
    (bad, *_) = malformed(items)
    assert why in bad.why
    assert bad.fatal is fatal
    assert bad.where is not None
    assert bad.where.startswith("record ")
    assert "(byte " in bad.where


def test_a_bad_chunk_names_its_byte_offset_and_record_number() -> None:
    data = container(STEP_1, STEP_2)
    second = len(ONE)
    (bad,) = malformed(read_items(_corrupt_crc(data, second + 3)))
    assert (bad.line, bad.where) == (2, f"record 2 (byte {second})")


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(len(ONE) + 3, id="inside-the-chunk-header"),
        pytest.param(len(ONE) + 12, id="inside-the-payload"),
    ],
)
def test_a_torn_last_record_is_a_notice_not_an_error(cut: int) -> None:
    data = container(STEP_1, STEP_2)[:cut]
    items = read_items(data)
    assert records(items) == [(1, {"actor/pg_loss": 0.5})]
    assert not malformed(items)
    (note,) = [i for i in items if isinstance(i, Note)]
    assert note.kind == "incomplete_record"
    assert f"byte {len(ONE)}" in note.message


def test_a_record_torn_across_blocks_is_a_notice() -> None:
    keys = [item((f"k{n:05d}",), str(n)) for n in range(5000)]
    data = container(STEP_1, history(2, *keys))[: wandb_run.BLOCK_SIZE + 100]
    items = read_items(data)
    assert [step for step, _ in records(items)] == [1]
    assert [i.kind for i in items if isinstance(i, Note)] == ["incomplete_record"]
    assert not malformed(items)


def test_zero_filled_blocks_are_skipped() -> None:
    data = _with_block(ONE, bytes(wandb_run.BLOCK_SIZE))
    data = _with_block(data, container(STEP_2)[len(HEADER) :])
    items = read_items(data)
    assert [step for step, _ in records(items)] == [1, 2]
    assert not malformed(items)


def test_a_header_alone_is_an_empty_run() -> None:
    assert read_items(HEADER) == []


def test_an_overlong_record_is_skipped_and_too_many_abandon_the_file() -> None:
    big = history(1, *[item((f"k{n}",), "1") for n in range(400)])
    limits = Limits(max_line_bytes=1000, max_overlong_lines=2)
    items = read_items(container(big, STEP_2), limits)
    assert [step for step, _ in records(items)] == [2]
    assert "longer than 1000 bytes" in malformed(items)[0].why
    items = read_items(container(big, big, STEP_2), limits)
    assert malformed(items)[-1].fatal
    assert records(items) == []


def test_an_endless_run_of_skipped_bytes_abandons_the_file() -> None:
    limits = Limits(max_skipped_bytes=3 * wandb_run.BLOCK_SIZE)
    data = HEADER + bytes(10 * wandb_run.BLOCK_SIZE) + container(STEP_1)[len(HEADER) :]
    items = read_items(data, limits)
    assert malformed(items)[-1].fatal
    assert "without a record" in malformed(items)[-1].why


def test_a_large_file_is_read_in_bounded_memory() -> None:
    """Many blocks are read one at a time: the reader never holds more than a block and a
    record (a generator over a stream that refuses reads past one block)."""

    class BlockStream(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            assert size is not None
            assert 0 < size <= wandb_run.BLOCK_SIZE
            return super().read(size)

    data = container(*[history(s, item(("actor/pg_loss",), "0.5")) for s in range(20000)])
    assert len(data) > 20 * wandb_run.BLOCK_SIZE
    items = wandb_run.read(Source("run.wandb"), BlockStream(data), Limits())
    assert sum(1 for i in items if isinstance(i, Record)) == 20000


# --- detection, inputs and the report --------------------------------------------------------


def _run_folder(root: Path, name: str, data: bytes) -> Path:
    folder = root / "wandb" / f"offline-run-20261204_000000-{name}"
    folder.mkdir(parents=True)
    (folder / f"run-{name}.wandb").write_bytes(data)
    return folder


def test_a_run_folder_a_run_file_and_a_wandb_folder_are_detected(tmp_path: Path) -> None:
    folder = _run_folder(tmp_path, "abc", container(STEP_1))
    run_file = folder / "run-abc.wandb"
    assert choose(str(run_file), run_file.read_bytes()[:4096]).name == "wandb"
    assert choose(str(folder), b"").name == "wandb"
    assert choose(str(tmp_path / "wandb"), b"").name == "wandb"
    # The project folder wandb.init(dir=...) wrote wandb/ into is read; one above it is not.
    assert choose(str(tmp_path), b"").name == "wandb"
    outer = tmp_path / "outer"
    _run_folder(outer / "project", "def", container(STEP_1))
    assert choose(str(outer), b"").name == "jsonl"
    assert expand_inputs([str(folder), str(tmp_path / "wandb")]).paths == [
        str(folder),
        str(tmp_path / "wandb"),
    ]


def test_each_run_of_a_wandb_folder_is_a_worker_and_latest_run_is_not_read_twice(
    wandb_keys_catalog: Catalog, tmp_path: Path
) -> None:
    first = _run_folder(tmp_path, "aaa", container(STEP_1))
    _run_folder(tmp_path, "bbb", container(STEP_2))
    (tmp_path / "wandb" / "latest-run").symlink_to(first, target_is_directory=True)
    report = check_paths([str(tmp_path / "wandb")], wandb_keys_catalog)
    assert logged(report) == {"rl.wb.actor.pg_loss": 2}
    assert report.lines == 2
    assert "2 worker(s)" in report.source or "(2 workers)" in report.source
    runs = [run for source in report.inputs for run in source.runs]
    assert [(run.input, run.run_id) for run in runs] == [
        (str(first), "aaa"),
        (str(tmp_path / "wandb" / "offline-run-20261204_000000-bbb"), "bbb"),
    ]


def test_a_fifo_in_a_run_folder_is_refused_without_blocking(
    wandb_keys_catalog: Catalog, tmp_path: Path
) -> None:
    folder = tmp_path / "wandb" / "offline-run-20261204_000000-fifo"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "run-fifo.wandb")
    report = check_file(str(folder), wandb_keys_catalog)
    assert report.abandoned
    assert "not a regular file" in report.abandoned[0]


def test_a_malformed_finding_names_the_file_and_byte(
    wandb_keys_catalog: Catalog, tmp_path: Path
) -> None:
    path = tmp_path / "run-x.wandb"
    path.write_bytes(_corrupt_crc(container(STEP_1, STEP_2), len(ONE) + 3))
    report = check_file(str(path), wandb_keys_catalog)
    (bad,) = [f for f in report.findings if f.kind == "malformed"]
    assert f"record 2 (byte {len(ONE)}) is not a W&B record" in bad.message()
    assert logged(report) == {"rl.wb.actor.pg_loss": 1}


@pytest.mark.parametrize(
    ("data", "code"),
    [
        pytest.param(os.urandom(3000), 2, id="noise"),
        pytest.param(HEADER + os.urandom(70000), 1, id="noise-after-header"),
        pytest.param(b"", 2, id="empty"),
    ],
)
def test_hostile_files_never_raise_through_the_cli(
    tmp_path: Path, data: bytes, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Malformed findings (exit 1), or nothing seen (exit 2) with the reason; no traceback."""
    path = tmp_path / "run-x.wandb"
    path.write_bytes(data)
    root = write_catalog(tmp_path / "project", CATALOG, "trainer.yaml")
    args = ["live-check", str(path), "--root", str(root), "--input-format", "wandb"]
    assert main([*args, "--format", "json"]) == code
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"]["malformed"] >= 1


def test_a_stream_is_detected_by_its_header_and_read(wandb_keys_catalog: Catalog) -> None:
    report = check_stream(io.BufferedReader(io.BytesIO(container(STEP_1))), wandb_keys_catalog)
    assert logged(report) == {"rl.wb.actor.pg_loss": 1}


# --- runs written by the real wandb library ------------------------------------------------


def write_runs(root: Path, specs: list[dict[str, Any]]) -> list[Path]:
    """Write real W&B offline runs (a child process, offline, under ``root``)."""
    spec_path = root / "spec.json"
    spec_path.write_text(json.dumps(specs), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DIR=str(root))
    done = subprocess.run(
        [sys.executable, str(HERE.parent / "wandb_runs.py"), str(spec_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [Path(line) for line in done.stdout.split()]


FULL_STEP = {
    "actor/pg_loss": 0.5,
    "actor/kl_loss": 0.01,
    "val-core/openai/gsm8k/acc/mean@4": 0.75,
    "perf/tokens per second": 1200.0,
    "eval": {"acc": 0.5},
    "hist": "<histogram>",
    "samples": "<table>",
}


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Run folders written by wandb itself, by name."""
    pytest.importorskip("wandb")
    root = tmp_path_factory.mktemp("wandb-runs")
    specs: dict[str, dict[str, Any]] = {
        "full": {
            "config": {"actor": {"use_kl_loss": True}, "trainer": {"test_freq": 5}},
            "steps": [[0, FULL_STEP], [1, {**FULL_STEP, "actor/pg_loss": 0.4}]],
        },
        "kl-off-late": {
            "config": {"trainer": {"test_freq": 5}},
            "config_update": {"actor": {"use_kl_loss": False}},
            "steps": [[0, {"actor/pg_loss": 0.5}]],
        },
        "kl-on-missing": {
            "config": {"actor": {"use_kl_loss": True}},
            "steps": [[0, {"actor/pg_loss": 0.5}]],
        },
        "wrong": {
            "config": {"actor": {"use_kl_loss": False}},
            "steps": [[0, {"actor/pg_loss": "high", "actor/made_up": 1.0}], [1, {"eval": 1}]],
        },
        "typed": {
            "config": {"actor": {"use_kl_loss": True}},
            "steps": [[0, FULL_STEP], [1, {**FULL_STEP, "actor/pg_loss": 0.4}]],
            "encoding": "json,typed",
        },
        "no-pg": {
            "config": {"actor": {"use_kl_loss": True}},
            "steps": [[0, {"actor/kl_loss": 0.1}]],
        },
        "big": {
            "config": {},
            "steps": [[0, {f"actor/k{n:04d}": float(n) for n in range(3000)}]],
        },
    }
    # OpenRLHF's WandbLogger: train/* against train/global_step, wandb.log without step=,
    # a samples table logged before each step's metrics; the actor frozen for 2 steps.
    axes = [["train/global_step", None], ["train/*", "train/global_step"]]
    steps: list[list[Any]] = []
    for step in (1, 2):
        steps += [[None, {"train/samples": "<table>"}]]
        steps += [[None, {"train/critic_loss": 0.5, "train/global_step": step}]]
    specs["axes"] = {"config": {"freezing_actor_steps": 2}, "define_metric": axes, "steps": steps}
    for name, spec in specs.items():
        spec["dir"] = str(root / name)
    folders = write_runs(root, list(specs.values()))
    return dict(zip(specs, folders, strict=True))


@pytest.mark.integration
def test_a_real_run_lands_every_key_on_its_row(
    wandb_keys_catalog: Catalog, real_runs: dict[str, Path]
) -> None:
    folder = real_runs["full"]
    source = Source(str(folder))
    list(read_source(source, current_limits()))
    assert source.format == "wandb"
    report = check_file(str(folder), wandb_keys_catalog)
    assert logged(report) == {
        "rl.wb.actor.pg_loss": 2,
        "rl.wb.actor.kl_loss": 2,
        "rl.wb.validation.accuracy": 2,
        "rl.wb.perf.throughput": 2,
        "rl.wb.eval.accuracy": 2,
    }
    assert findings(report) == set()  # bookkeeping (_step, _runtime, ...) and media: none
    ((run,),) = [source.runs for source in report.inputs]
    assert (run.input, run.experiment) == (str(folder), "metric-catalog-tests")
    assert run.run_id in folder.name  # an offline run has no display name: W&B gives it one
    (note,) = [n for n in report.notices if n.kind == "skipped_values"]
    assert "histogram: 2" in note.message
    assert "table-file: 2" in note.message


@pytest.mark.integration
def test_the_run_file_and_the_wandb_folder_read_like_the_run_folder(
    wandb_keys_catalog: Catalog, real_runs: dict[str, Path]
) -> None:
    folder = real_runs["full"]
    (run_file,) = folder.glob("run-*.wandb")
    assert logged(check_file(str(run_file), wandb_keys_catalog)) == logged(
        check_file(str(folder), wandb_keys_catalog)
    )
    assert logged(check_paths([str(folder.parent)], wandb_keys_catalog))["rl.wb.actor.pg_loss"] == 2


@pytest.mark.integration
@pytest.mark.parametrize(
    ("run", "missing"),
    [
        pytest.param("kl-on-missing", {"actor/kl_loss"}, id="condition-holds-fires"),
        pytest.param("kl-off-late", set(), id="condition-false-from-a-later-update"),
        pytest.param("full", set(), id="logged"),
    ],
)
def test_the_runs_configuration_decides_conditional_presence(
    wandb_keys_catalog: Catalog, real_runs: dict[str, Path], run: str, missing: set[str]
) -> None:
    report = check_file(str(real_runs[run]), wandb_keys_catalog)
    assert {key for kind, key in findings(report) if kind == "missing"} == missing


@pytest.mark.integration
def test_a_missing_required_key_a_wrong_kind_and_an_undeclared_key_are_found(
    wandb_keys_catalog: Catalog, real_runs: dict[str, Path]
) -> None:
    report = check_file(str(real_runs["wrong"]), wandb_keys_catalog)
    assert findings(report) == {
        ("non_scalar", "actor/pg_loss"),
        ("undeclared", "actor/made_up"),
        ("undeclared", "eval"),
    }
    fired = check_file(str(real_runs["kl-off-late"]), wandb_keys_catalog)
    assert ("missing", "actor/pg_loss") not in findings(fired)
    report = check_file(str(real_runs["no-pg"]), wandb_keys_catalog)
    assert findings(report) == {("missing", "actor/pg_loss")}


@pytest.mark.integration
def test_the_typed_value_encoding_reads_alike(real_runs: dict[str, Path]) -> None:
    def steps(name: str) -> list[tuple[int, dict[str, object]]]:
        items = read_source(Source(str(real_runs[name])), current_limits())
        return [(i.step, dict(i.metrics)) for i in items if isinstance(i, Record)]

    assert steps("typed") == steps("full")


@pytest.mark.integration
def test_a_record_over_a_block_written_by_wandb_is_reassembled(real_runs: dict[str, Path]) -> None:
    (run_file,) = real_runs["big"].glob("run-*.wandb")
    assert run_file.stat().st_size > wandb_run.BLOCK_SIZE
    items = list(read_source(Source(str(real_runs["big"])), current_limits()))
    (record,) = [i for i in items if isinstance(i, Record)]
    assert len(record.metrics) == 3000
    assert not [i for i in items if isinstance(i, Malformed)]


def same(metrics: dict[str, object]) -> str:
    """``metrics`` comparable: numbers as floats (NaN equal to NaN), keys sorted."""

    def norm(value: object) -> object:
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value

    return json.dumps({k: norm(v) for k, v in metrics.items()}, sort_keys=True)


@pytest.mark.integration
def test_the_decoder_agrees_with_wandbs_protobuf_classes(real_runs: dict[str, Path]) -> None:
    """Every record of real runs, decoded here and by wandb's published Record class."""
    pb = importlib.import_module("wandb.proto.wandb_internal_pb2")

    compared = 0
    for name in ("full", "typed", "wrong", "kl-off-late"):
        (run_file,) = real_runs[name].glob("run-*.wandb")
        with run_file.open("rb") as stream:
            for frame in wandb_run.frames(stream, Limits()):
                assert frame.kind == "record"
                ours = wandb_run.decode_record(frame.payload)
                theirs = pb.Record.FromString(frame.payload)
                kind = theirs.WhichOneof("record_type")
                if kind != "history":
                    assert not isinstance(ours, wandb_run.History)
                    continue
                assert isinstance(ours, wandb_run.History)
                assert ours.step == theirs.history.step.num
                expected = {
                    ".".join(i.nested_key or [i.key]): json.loads(i.value_json)
                    for i in theirs.history.item
                    if not (i.nested_key or [i.key])[0].startswith("_")
                }
                media = {k.rsplit(".", 1)[0] for k in expected if k.endswith("._type")}
                expected = {k: v for k, v in expected.items() if k.split(".", 1)[0] not in media}
                assert same(ours.metrics) == same(expected)
                compared += 1
    assert compared >= 6


AXES_CATALOG = """\
owner: openrlhf.trainer
module: axes
description: An OpenRLHF-shaped trainer logging against train/global_step.
prefix: train
teed:
  - logger_key: critic_loss
    name: rl.axes.critic_loss
    kind: gauge
    unit: ""
    description: Critic loss.
    requirement_level: required
  - logger_key: policy_loss
    name: rl.axes.policy_loss
    kind: gauge
    unit: ""
    description: Policy loss, once the actor trains.
    requirement_level: required
    first_step: "config.freezing_actor_steps + 1"
  - logger_key: global_step
    name: rl.axes.global_step
    kind: counter
    temporality: cumulative
    unit: "{step}"
    description: The trainer's step.
"""


@pytest.mark.integration
def test_a_run_plotted_against_a_defined_step_metric_is_judged_by_it(
    real_runs: dict[str, Path], tmp_path: Path
) -> None:
    """Two steps of four wandb.log calls: the run is 2 steps long, so the actor's rows
    (first due at step 3) are not missing; read at _step (0..3) they were."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "axes.yaml").write_text(AXES_CATALOG, encoding="utf-8")
    result = load_and_check(root=tmp_path, lint=False)
    assert result.catalog is not None, result.diagnostics
    report = check_file(str(real_runs["axes"]), result.catalog)
    assert findings(report) == set()
    assert report.last_step == 2
    states = {s.row.name: s.presence for s in report.rows}
    assert states["rl.axes.policy_loss"] == "not_due"
