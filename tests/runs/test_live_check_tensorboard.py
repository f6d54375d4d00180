"""live-check reads TensorBoard event files: the scalars, in both encodings, from a file or a
log folder; damaged files become positioned findings or notices, never a traceback.

Event files are written by the real tensorboardX (``SummaryWriter.add_scalar``, and its
``FileWriter.add_summary`` for tags ``add_scalar`` would rewrite, as torch's SummaryWriter keeps
them), TF2-style tensor scalars are built with tensorboard's own protos and framed by
tensorboardX's ``RecordWriter``; the hostile files are those bytes, cut or altered.
"""

from __future__ import annotations

import importlib
import io
import json
import math
import os
import struct
import sys
import tracemalloc
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
from tensorboard.plugins.scalar import metadata as scalar_metadata
from tensorboardX import SummaryWriter
from tensorboardX.proto import summary_pb2 as tbx_summary_pb2
from tensorboardX.record_writer import RecordWriter

from codegen.catalog.matching import rewrite_pattern, tensorboard_tag
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
from codegen.runs.ingest import choose, read_source, tensorboard
from codegen.runs.records import Item, Malformed, Note, Record
from tests.catalog_projects import loaded_catalog
from tests.runs.test_live_check_formats import EVOLUTION, EXPECTED, judged

REPO = Path(__file__).resolve().parents[2]
VERL = REPO / "examples" / "verl"

# The run of tests/fixtures/live_check_formats (EXPECTED): step -> logged key -> value.
STEPS: dict[int, dict[str, float]] = {
    1: {
        "train/reward": 0.5,
        "train/loss": 1.25,
        "train/global_valid_toks": 120,
        "timing/train/total_step_time": 12.5,
        "train/made_up": 3.0,
    },
    2: {
        "train/reward": 0.75,
        "train/loss": 1.0,
        "train/global_valid_toks": -4,
        "timing/train/total_step_time": 11.0,
    },
    3: {"train/reward": math.nan, "train/loss": 0.875},
}


def tensor_value(tag: str, value: Any, dtype: int, *, content: bool, first: bool) -> Any:
    """A TF2-style scalar: a 0-d tensor of the scalars plugin, its metadata on the first only."""
    tensor = tensor_pb2.TensorProto(dtype=dtype)
    packed = {
        types_pb2.DT_FLOAT: "<f",
        types_pb2.DT_DOUBLE: "<d",
        types_pb2.DT_INT32: "<i",
        types_pb2.DT_INT64: "<q",
        types_pb2.DT_HALF: "<e",
    }
    if content and dtype in packed:
        tensor.tensor_content = struct.pack(packed[dtype], value)
    elif dtype == types_pb2.DT_FLOAT:
        tensor.float_val.append(float(value))
    elif dtype == types_pb2.DT_DOUBLE:
        tensor.double_val.append(float(value))
    elif dtype == types_pb2.DT_INT32:
        tensor.int_val.append(int(value))
    elif dtype == types_pb2.DT_INT64:
        tensor.int64_val.append(int(value))
    elif dtype == types_pb2.DT_HALF:
        tensor.half_val.append(struct.unpack("<H", struct.pack("<e", value))[0])
    elif dtype == types_pb2.DT_BOOL:
        tensor.bool_val.append(bool(value))
    elif dtype == types_pb2.DT_STRING:
        tensor.string_val.append(str(value).encode())
    summary_value = summary_pb2.Summary.Value(tag=tag, tensor=tensor)
    if first:
        summary_value.metadata.CopyFrom(scalar_metadata.create_summary_metadata("", ""))
    return summary_value


def write_events(path: Path, events: list[event_pb2.Event]) -> Path:
    """Frame ``events`` into ``path`` with tensorboardX's record writer, after a file_version."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = RecordWriter(str(path))
    writer.write(event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())
    for event in events:
        writer.write(event.SerializeToString())
    writer.close()
    return path


def write_tensors(
    path: Path, steps: Mapping[int, Mapping[str, object]], dtype: int, *, content: bool
) -> Path:
    """``steps`` as TF2 writes them: one event per value, a tensor scalar of ``dtype``."""
    seen: set[str] = set()
    events = []
    for step, metrics in steps.items():
        for key, value in metrics.items():
            event = event_pb2.Event(wall_time=1.0 + step, step=step)
            event.summary.value.append(
                tensor_value(key, value, dtype, content=content, first=key not in seen)
            )
            seen.add(key)
            events.append(event)
    return write_events(path, events)


def write_tensorboardx(logdir: Path, steps: Mapping[int, Mapping[str, float]]) -> Path:
    """``steps`` through the real ``SummaryWriter.add_scalar`` (simple_value); the event file."""
    writer = SummaryWriter(str(logdir))
    for step, metrics in steps.items():
        for key, value in metrics.items():
            writer.add_scalar(key, value, step)
    writer.close()
    (path,) = logdir.glob("events.out.tfevents.*")
    return path


def write_raw_tags(logdir: Path, steps: Mapping[int, Mapping[str, float]]) -> Path:
    """``steps`` through tensorboardX's file writer with the tags as given (as torch keeps them)."""
    writer = SummaryWriter(str(logdir))
    file_writer = writer._get_file_writer()
    for step, metrics in steps.items():
        values = [tbx_summary_pb2.Summary.Value(tag=k, simple_value=v) for k, v in metrics.items()]
        file_writer.add_summary(tbx_summary_pb2.Summary(value=values), step)
    writer.close()
    (path,) = logdir.glob("events.out.tfevents.*")
    return path


def items_of(path: Path, input_format: str | None = None) -> list[Item]:
    """What the ingesters yield for ``path``."""
    source = Source(str(path))
    items = list(read_source(source, current_limits(), input_format))
    assert source.format == "tensorboard"
    return items


# -- reading what real writers wrote -------------------------------------------------------


def test_tensorboardx_add_scalar_is_judged_like_the_same_run_in_jsonl(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    path = write_tensorboardx(tmp_path / "logs", STEPS)
    report = check_file(str(path), evolution_catalog)
    assert judged(report) == EXPECTED
    assert report.source == str(path)


@pytest.mark.parametrize("content", [False, True], ids=["typed-field", "tensor_content"])
@pytest.mark.parametrize(
    "dtype",
    [types_pb2.DT_FLOAT, types_pb2.DT_DOUBLE],
    ids=["float", "double"],
)
def test_tf2_tensor_scalars_are_judged_like_simple_values(
    evolution_catalog: Catalog, tmp_path: Path, dtype: int, content: bool
) -> None:
    path = write_tensors(tmp_path / "events.out.tfevents.1.host", STEPS, dtype, content=content)
    assert judged(check_file(str(path), evolution_catalog)) == EXPECTED


@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        (types_pb2.DT_INT32, 7),
        (types_pb2.DT_INT64, 2**40),
        (types_pb2.DT_HALF, 0.5),
        (types_pb2.DT_FLOAT, 0.25),
    ],
)
@pytest.mark.parametrize("content", [False, True])
def test_each_numeric_dtype_of_a_tensor_scalar_reads_as_its_number(
    tmp_path: Path, dtype: int, value: float, content: bool
) -> None:
    path = write_tensors(tmp_path / "e.tfevents", {3: {"a/b": value}}, dtype, content=content)
    (record,) = [i for i in items_of(path) if isinstance(i, Record)]
    assert (record.step, dict(record.metrics), record.split) == (3, {"a/b": value}, True)


def test_a_torch_summary_writer_file_is_read(evolution_catalog: Catalog, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter  # type: ignore[import-not-found]

    writer = TorchWriter(str(tmp_path))
    for step, metrics in STEPS.items():
        for key, value in metrics.items():
            writer.add_scalar(key, value, step)
    writer.close()
    assert judged(check_file(str(tmp_path), evolution_catalog)) == EXPECTED


# Keys real code logs, with every character a catalog key may hold.
ODD_CATALOG = """\
owner: t
module: t
description: Keys with odd characters.
prefix: val-core
teed:
  - logger_key: "{data_source}/acc/mean@{n}"
    name: rl.t.val_acc
    kind: gauge
    unit: "1"
    description: Validation accuracy over N samples (the test logs any value).
    range: {}
    attributes:
      - ref: data_source
      - ref: n
  - logger_key: "throughput (tokens per s)"
    prefix: perf
    name: rl.t.throughput
    kind: gauge
    unit: "1"
    description: Tokens per second.
  - logger_key: "clip frac %"
    prefix: actor
    name: rl.t.clip
    kind: gauge
    unit: "%"
    description: Clipped fraction, in percent.
    requirement_level: required
attributes:
  - name: data_source
    type: string
    description: Validation data source, possibly nested.
    max_cardinality: "8"
    spans_segments: "true"
  - name: n
    type: int
    description: Samples per prompt.
    max_cardinality: "8"
"""

ODD_STEPS: dict[int, dict[str, float]] = {
    1: {"actor/clip frac %": 1.5, "perf/throughput (tokens per s)": 900.0},
    2: {
        "actor/clip frac %": 2.5,
        "val-core/openai/gsm8k/acc/mean@4": 0.75,
        "val-core/math/acc/mean@16": 0.5,
    },
}


@pytest.fixture(scope="module")
def odd_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """A catalog whose keys hold '@', spaces, parentheses and '%'."""
    return loaded_catalog(tmp_path_factory.mktemp("odd"), ODD_CATALOG, "t.yaml")


def _logged(report: LiveCheckReport) -> dict[str, int]:
    return {r.row.name: r.logged for r in report.rows if r.logged}


ODD_LOGGED = {"rl.t.clip": 2, "rl.t.throughput": 1, "rl.t.val_acc": 2}


def test_keys_with_at_spaces_parentheses_and_percent_match_their_rows(
    odd_catalog: Catalog, tmp_path: Path
) -> None:
    path = write_raw_tags(tmp_path / "run", ODD_STEPS)
    report = check_file(str(path), odd_catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert _logged(report) == ODD_LOGGED


def test_tensor_scalars_with_odd_keys_match_their_rows(
    odd_catalog: Catalog, tmp_path: Path
) -> None:
    path = write_tensors(tmp_path / "events.out.tfevents.2", ODD_STEPS, 1, content=True)
    report = check_file(str(path), odd_catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert _logged(report) == ODD_LOGGED


def test_tags_tensorboardx_add_scalar_rewrote_count_under_their_rows(
    odd_catalog: Catalog, tmp_path: Path
) -> None:
    """add_scalar writes '@', spaces, '(' and '%' as '_' (the LOGGER_KEY_BACKEND_UNSAFE
    lint's TensorBoard rule): each rewritten tag counts under the row of the key the code
    logged."""
    path = write_tensorboardx(tmp_path / "run", ODD_STEPS)
    assert "val-core/math/acc/mean_16" in path.read_bytes().decode("latin-1")
    report = check_file(str(path), odd_catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == []
    assert _logged(report) == ODD_LOGGED


@pytest.mark.parametrize(
    ("tag", "finding"),
    [
        ("val-core/math/acc/mean@16", None),
        ("val-core/math/acc/mean_16", None),
        ("val-core/math/acc/median@16", ("undeclared", "val-core/math/acc/median_16")),
        ("actor/clip frac %", None),
        ("actor/clip_frac__", None),
        ("actor/clip_frac_", ("undeclared", "actor/clip_frac_")),
    ],
)
def test_a_rewritten_tag_counts_only_under_a_row_whose_key_rewrites_to_it(
    odd_catalog: Catalog, tmp_path: Path, tag: str, finding: tuple[str, str] | None
) -> None:
    steps = {1: {"actor/clip frac %": 1.0, "perf/throughput (tokens per s)": 2.0, tag: 3.0}}
    path = write_tensorboardx(tmp_path / "run", steps)
    report = check_file(str(path), odd_catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == ([finding] if finding else [])


def test_a_key_in_a_jsonl_log_is_never_matched_as_rewritten(odd_catalog: Catalog) -> None:
    """Only a backend that rewrites keys gets the rewritten match: a JSONL key is as logged."""
    line = {"step": 1, "prefix": "actor", "metrics": {"clip frac %": 1.0, "clip_frac__": 2.0}}
    report = check_stream(io.BytesIO(json.dumps(line).encode() + b"\n"), odd_catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == [
        ("undeclared", "actor/clip_frac__")
    ]


@pytest.mark.parametrize(
    ("pattern", "rewritten"),
    [
        ("loss", "loss"),
        ("mean@4", "mean_4"),
        ("{source}/acc/mean@{n}", "{source}/acc/mean_{n}"),
        ("throughput (tokens/s) %", "throughput__tokens/s___"),
        ("a-b.c/d_e", "a-b.c/d_e"),
        ("{{literal}}", "_literal_"),
        ("key:v=1", "key_v_1"),
    ],
)
def test_a_pattern_is_rewritten_in_its_literal_text_only(pattern: str, rewritten: str) -> None:
    assert rewrite_pattern(pattern, tensorboard_tag) == rewritten


def test_tensorboard_tag_is_what_tensorboardx_writes() -> None:
    from tensorboardX.summary import _clean_tag

    for tag in ("mean@4", "a b(c)%", "x/y.z-w_v", "é/ß@", "{t}", "/lead"):
        assert tensorboard_tag(tag).lstrip("/") == _clean_tag(tag)


# -- findings fire and stay quiet -----------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "value", "finding"),
    [
        (types_pb2.DT_BOOL, True, ("non_scalar", "actor/clip frac %")),
        (types_pb2.DT_STRING, "high", ("non_scalar", "actor/clip frac %")),
        (types_pb2.DT_FLOAT, 2.0, None),
    ],
)
def test_a_tensor_scalar_of_a_kind_the_tee_cannot_export_is_non_scalar(
    odd_catalog: Catalog, tmp_path: Path, dtype: int, value: object, finding: tuple[str, str] | None
) -> None:
    path = write_tensors(
        tmp_path / "e.tfevents", {1: {"actor/clip frac %": value}}, dtype, content=False
    )
    report = check_file(str(path), odd_catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == ([finding] if finding else [])


@pytest.mark.parametrize(
    ("steps", "kinds"),
    [
        ({1: {"actor/clip frac %": 1.0}}, []),
        ({1: {"actor/clip frac %": 1.0, "actor/other": 2.0}}, [("undeclared", "actor/other")]),
        ({1: {"perf/throughput (tokens per s)": 1.0}}, [("missing", "actor/clip frac %")]),
    ],
    ids=["clean", "undeclared-tag", "required-missing"],
)
def test_undeclared_tags_and_missing_required_keys_are_found(
    odd_catalog: Catalog, tmp_path: Path, steps: dict[int, dict[str, float]], kinds: list[object]
) -> None:
    path = write_raw_tags(tmp_path / "run", steps)
    report = check_file(str(path), odd_catalog)
    assert [(f.kind, f.qualified_key) for f in report.findings] == kinds


def test_images_histograms_and_text_are_skipped_and_counted_once(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    np = pytest.importorskip("numpy")
    writer = SummaryWriter(str(tmp_path))
    writer.add_scalar("train/loss", 1.0, 1)
    writer.add_histogram("train/weights", np.arange(10.0), 1)
    writer.add_histogram("train/weights", np.arange(10.0), 2)
    writer.add_text("notes", "hello", 1)
    writer.close()
    report = check_file(str(tmp_path), evolution_catalog)
    (note,) = [n for n in report.notices if n.kind == "skipped_summaries"]
    assert "3 summary value(s) that are not scalars" in note.message
    assert "histo 2" in note.message
    assert "text tensor 1" in note.message
    assert _logged(report) == {"rl.policy.loss": 1}


# -- folders, workers, detection ------------------------------------------------------------


def test_a_log_folder_is_read_recursively_and_each_run_folder_is_a_worker(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    write_tensorboardx(tmp_path / "runs" / "a", {1: {"train/global_valid_toks": 100}})
    write_tensorboardx(
        tmp_path / "runs" / "b" / "seed1",
        {1: {"train/global_valid_toks": 50}, 2: {"train/global_valid_toks": -1}},
    )
    report = check_paths([str(tmp_path / "runs")], evolution_catalog)
    assert report.source == f"{tmp_path / 'runs'} (2 workers)"
    assert _logged(report) == {"rl.train.valid_tokens": 3}
    (decrease,) = report.findings
    assert decrease.kind == "counter_decrease"
    assert str(report.where(decrease)).startswith(str(tmp_path / "runs" / "b" / "seed1"))


def test_a_log_folder_is_an_input_and_a_glob_of_run_folders_too(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    write_tensorboardx(tmp_path / "runs" / "a", STEPS)
    assert expand_inputs([str(tmp_path / "runs")]).paths == [str(tmp_path / "runs")]
    inputs = expand_inputs([str(tmp_path / "runs" / "*")])
    assert inputs.paths == [str(tmp_path / "runs" / "a")]
    assert judged(check_paths(inputs.paths, evolution_catalog)) == EXPECTED


def _first_record(tmp_path: Path) -> bytes:
    return write_events(tmp_path / "head.bin", []).read_bytes()


@pytest.mark.parametrize(
    ("name", "head", "detected"),
    [
        ("events.out.tfevents.1700000000.host", b"", True),
        ("events.out.tfevents.1700000000.host.profile-empty", b"", True),
        ("run.bin", "first-record", True),
        ("run.jsonl", b'{"step": 1, "prefix": "train", "metrics": {"loss": 1}}\n', False),
        ("run.bin", b"\x00" * 64, False),
        ("run.bin", b"", False),
        ("run.bin", "first-record-cut", False),
    ],
)
def test_an_event_file_is_detected_by_its_name_or_its_first_record(
    tmp_path: Path, name: str, head: bytes | str, detected: bool
) -> None:
    if head == "first-record":
        head = _first_record(tmp_path)
    elif head == "first-record-cut":
        head = _first_record(tmp_path)[:20]
    assert isinstance(head, bytes)
    assert tensorboard.detect(str(tmp_path / name), head) is detected
    assert (choose(str(tmp_path / name), head).name == "tensorboard") is detected


@pytest.mark.parametrize(
    ("layout", "detected"),
    [
        ({"a/b/events.out.tfevents.1.h": b""}, True),
        ({"events.out.tfevents.1.h": b""}, True),
        ({"a/run.jsonl": b"{}\n"}, False),
        ({}, False),
    ],
)
def test_a_folder_is_detected_when_it_holds_an_event_file(
    tmp_path: Path, layout: dict[str, bytes], detected: bool
) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    for relative, data in layout.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    assert tensorboard.detect(str(root), b"") is detected


def test_an_mlflow_run_folder_is_still_read_as_mlflow(tmp_path: Path) -> None:
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "loss").write_bytes(b"1 0.5 1\n")
    (tmp_path / "artifacts" / "tb").mkdir(parents=True)
    write_tensorboardx(tmp_path / "artifacts" / "tb", {1: {"loss": 1.0}})
    assert choose(str(tmp_path), b"").name == "mlflow"


def test_input_format_forces_tensorboard_on_a_file_and_on_stdin(
    evolution_catalog: Catalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_tensorboardx(tmp_path / "logs", STEPS)
    neutral = tmp_path / "log.bin"
    neutral.write_bytes(path.read_bytes())
    args = ["live-check", str(neutral), "--root", str(EVOLUTION), "--format", "json"]
    assert main([*args, "--input-format", "tensorboard"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["undeclared"] == 1
    stream = io.BytesIO(path.read_bytes())
    report = check_stream(stream, evolution_catalog, input_format="tensorboard")
    assert judged(report) == EXPECTED


# -- hostile input ---------------------------------------------------------------------------


def _frame(payload: bytes) -> bytes:
    header = struct.pack("<Q", len(payload))
    return (
        header
        + struct.pack("<I", masked_crc32c(header))
        + payload
        + struct.pack("<I", masked_crc32c(payload))
    )


def _scalar_event(step: int, tag: str = "train/loss", value: float = 1.0) -> bytes:
    event = event_pb2.Event(wall_time=1.0, step=step)
    event.summary.value.add(tag=tag, simple_value=value)
    return bytes(event.SerializeToString())


def _good(steps: int = 3) -> bytes:
    version = event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString()
    return _frame(version) + b"".join(_frame(_scalar_event(step)) for step in range(1, steps + 1))


def _claims(length: int) -> bytes:
    header = struct.pack("<Q", length)
    return header + struct.pack("<I", masked_crc32c(header))


def _bad_data_crc() -> bytes:
    record = bytearray(_frame(_scalar_event(9)))
    record[-1] ^= 0xFF
    return bytes(record)


def _bad_length_crc() -> bytes:
    record = bytearray(_frame(_scalar_event(9)))
    record[8] ^= 0xFF
    return bytes(record)


# name -> (file bytes, records judged, malformed lines, notice kinds, abandoned why or None)
HOSTILE: dict[str, tuple[bytes, int, list[int], list[str], str | None]] = {
    "truncated-last-record": (
        _good() + _frame(_scalar_event(4))[:-3],
        3,
        [],
        ["incomplete_record"],
        None,
    ),
    "truncated-header": (_good() + b"\x05\x00", 3, [], ["incomplete_record"], None),
    "bad-data-crc": (_good(1) + _bad_data_crc() + _frame(_scalar_event(2)), 2, [3], [], None),
    "not-an-event": (
        _good(1) + _frame(b"\xff\xff\xff") + _frame(_scalar_event(2)),
        2,
        [3],
        [],
        None,
    ),
    "length-claims-gigabytes": (
        _good(1) + _claims(5 << 30) + b"x" * 64,
        1,
        [3],
        [],
        None,
    ),
    "bad-length-crc": (
        _good(1) + _bad_length_crc() + _frame(_scalar_event(2)),
        1,
        [],
        [],
        "length checksum",
    ),
    "text-named-like-an-event-file": (
        b"step,loss\n1,0.5\n2,0.25\n",
        0,
        [],
        [],
        "not a TensorBoard event file",
    ),
    "empty": (b"", 0, [], [], None),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_damaged_event_file_gives_positioned_findings_never_a_traceback(
    evolution_catalog: Catalog, tmp_path: Path, name: str
) -> None:
    data, records, malformed, notices, abandoned = HOSTILE[name]
    path = tmp_path / "events.out.tfevents.1700000000.host"
    path.write_bytes(data)
    report = check_file(str(path), evolution_catalog)
    assert report.records == records
    lines = [f.line for f in report.findings if f.kind == "malformed" and f.key != "#abandoned"]
    assert lines == malformed
    for line in malformed:
        (finding,) = [f for f in report.findings if f.key == f"#{line}"]
        assert "byte offset" in finding.message()
    assert [n.kind for n in report.notices] == notices
    if abandoned is None:
        assert report.abandoned == []
    else:
        (why,) = report.abandoned
        assert str(path) in why
        assert abandoned in why


def test_an_oversized_record_is_skipped_unread_and_reading_resumes(
    evolution_catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record over max_line_bytes is sought past, never held; the next one is read."""
    from codegen import live_check

    monkeypatch.setattr(live_check, "MAX_LINE_BYTES", 1024)
    big = _frame(_scalar_event(2, "train/" + "x" * 4000))
    path = tmp_path / "events.out.tfevents.1"
    path.write_bytes(_good(1) + big + _frame(_scalar_event(3)))
    report = check_file(str(path), evolution_catalog)
    (finding,) = report.findings
    assert finding.kind == "malformed"
    assert finding.line == 3
    assert "over 1024" in finding.message()
    assert report.records == 2


def test_a_length_field_claiming_gigabytes_is_never_allocated(tmp_path: Path) -> None:
    """Read from a stream that cannot seek: at most a bounded chunk is held, then it ends."""
    data = _good(1) + _claims(4 << 30) + b"x" * (3 << 20)
    tracemalloc.start()
    try:
        items = list(tensorboard.read(Source("<stdin>"), _Unseekable(data), current_limits()))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20
    (malformed,) = [item for item in items if isinstance(item, Malformed)]
    assert (malformed.line, malformed.fatal) == (3, False)
    assert "claims 4294967296 bytes" in malformed.why


class _Unseekable(io.BytesIO):
    def seekable(self) -> bool:
        return False


def test_memory_stays_bounded_on_a_long_file(tmp_path: Path) -> None:
    path = tmp_path / "events.out.tfevents.1"
    path.write_bytes(_good(0) + _frame(_scalar_event(7)) * 50_000)
    tracemalloc.start()
    try:
        items = read_source(Source(str(path)), current_limits())
        count = sum(1 for item in items if isinstance(item, Record))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 50_000
    assert peak < 2 << 20  # far below the file's 50 000 records held at once


def test_links_and_fifos_in_a_log_folder_are_named_and_not_read(
    evolution_catalog: Catalog, tmp_path: Path
) -> None:
    outside = write_tensorboardx(tmp_path / "outside", {1: {"train/made_up": 1.0}})
    logs = tmp_path / "logs"
    write_tensorboardx(logs / "run", {1: {"train/loss": 1.0}})
    (logs / "run" / "events.out.tfevents.9.link").symlink_to(outside)
    (logs / "linked").symlink_to(outside.parent, target_is_directory=True)
    os.mkfifo(logs / "run" / "events.out.tfevents.9.fifo")
    report = check_file(str(logs), evolution_catalog)
    assert [f.kind for f in report.findings] == []  # the made_up key outside was never read
    not_read = sorted(n.message for n in report.notices if n.kind == "not_read")
    assert len(not_read) == 2
    assert "FIFO" in not_read[0]
    assert "symbolic link" in not_read[1]


# -- the optional extra ----------------------------------------------------------------------


def test_a_missing_tensorboard_extra_exits_2_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_tensorboardx(tmp_path / "logs", STEPS)
    monkeypatch.setitem(sys.modules, "tensorboard.compat.proto.event_pb2", None)
    monkeypatch.delattr(sys.modules["tensorboard.compat.proto"], "event_pb2")
    assert main(["live-check", str(path), "--root", str(EVOLUTION)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'metric-catalog[tensorboard]'" in err
    assert "Traceback" not in err


# -- a second real codebase's run, written to TensorBoard -----------------------------------


@pytest.fixture(scope="module")
def verl_runs() -> Iterator[ModuleType]:
    """examples/verl's run generator (verl_metrics.runs), imported, then forgotten."""
    sys.path.insert(0, str(VERL))
    try:
        yield importlib.import_module("verl_metrics.runs")
    finally:
        sys.path.remove(str(VERL))
        for name in [name for name in sys.modules if name.split(".")[0] == "verl_metrics"]:
            del sys.modules[name]


@pytest.mark.parametrize("writer", [write_raw_tags, write_tensorboardx], ids=["kept", "rewritten"])
def test_a_verl_run_logged_to_tensorboard_is_clean(
    verl_runs: ModuleType, tmp_path: Path, writer: Any
) -> None:
    """verl's Tracking logs to torch's SummaryWriter, which keeps tags, and tensorboardX's
    add_scalar rewrites '@' to '_': either way every key lands on its row."""
    import random

    result = load_and_check(
        sorted((VERL / "verl_metrics/telemetry/catalog").glob("*.yaml")), root=VERL
    )
    assert result.catalog is not None
    for spec in verl_runs.RUNS:
        rng = random.Random(spec.seed)
        steps = {s: verl_runs.step_metrics(rng, spec, s) for s in range(1, spec.steps + 1)}
        path = writer(tmp_path / spec.name, steps)
        report = check_file(str(path), result.catalog)
        assert [(f.kind, f.qualified_key) for f in report.findings] == [], spec.name
        assert sum(r.logged for r in report.rows) == sum(len(m) for m in steps.values())


def test_a_note_is_a_notice_of_the_report(evolution_catalog: Catalog) -> None:
    from codegen.live_check import check_records

    report = check_records([Note("incomplete_record", "cut short", "f", 4)], evolution_catalog)
    (notice,) = report.notices
    assert (notice.kind, notice.message, str(notice.position)) == (
        "incomplete_record",
        "cut short",
        "f:4:1",
    )
