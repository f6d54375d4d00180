"""Benchmark 8: live-check throughput, against the bare parsers in the same run.

Four inputs, each measured against the cheapest thing that could read it:

- a JSONL log of this repo's catalog (a sample ``grpo_sync`` run, written the
  way ``JsonlLogger`` writes it, about 30 MB in a full run): ``check_file``
  against a bare ``json.loads`` of every line;
- a TensorBoard event file of the same sample run (one scalar per event, as
  ``SummaryWriter.add_scalar`` writes them; 1M scalars in a full run):
  ``check_file`` against tensorboard's own ``LegacyEventFileLoader`` parsing
  every event (skipped, and said so, without the ``tensorboard`` extra);
- OTLP requests (one per step, every teed series of the run as a point):
  live-check's ingest (decode plus records) against the bare protobuf classes
  on the same bodies (``ParseFromString``, then reading each point's name,
  value and attributes, the least any decoder does), and the whole check over
  them for reference;
- a W&B run file (``run-<id>.wandb``: one history record per step, every key
  of the run with its value, in W&B's block container): live-check's reader
  (container, protobuf decoding, records) against wandb's published protobuf
  classes (``Record.FromString`` and ``json.loads`` of each item's value, the
  least any reader does). Skipped when ``wandb`` is not installed.

CPU time (``time.process_time``) in this process, median of interleaved runs,
so the ratio holds on a busy machine.

The JSONL log is also checked as a user runs it, ``python -m codegen live-check
run.jsonl`` in a fresh interpreter (start-up, catalog load and report included),
against the floor, a fresh interpreter running the bare ``json.loads`` pass, and
against the same command at a baseline ref (``--baseline-ref``, default the
merge-base with ``main``: what the branch changed), all interleaved in one run;
each command's user plus system CPU time.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from bench.baseline import Baseline, export_baseline
from bench.config import Config
from bench.measure import REPO, child_env, fmt_ms, fmt_ratio, median, python, run_checked
from bench.report import Section, Target

if TYPE_CHECKING:
    from codegen.catalog.model import Catalog
    from codegen.runs.records import Record

__all__ = ["bench_live"]

_JSONL_GOAL = 2.0
_COMMAND_GOAL = 3.0
"""live-check as a command over the floor (issue 36: it had grown to 4.3x)."""
_BASELINE_GOAL = 1.05
"""This checkout's command over the baseline's: no slower, within the noise of a shared machine."""
_BARE_JSON = """import json, sys
with open(sys.argv[1], "rb") as stream:
    for raw in stream:
        json.loads(raw)
"""
_OTLP_GOAL = 2.0
_WANDB_GOAL = 2.0
_LOOP = "grpo_sync"


def _catalog() -> Catalog:
    from codegen.catalog.pipeline import load_and_check

    result = load_and_check(root=REPO)
    assert result.catalog is not None
    return result.catalog


def _write_log(path: Path, target_bytes: int) -> int:
    """A JsonlLogger-shaped log of sample steps until ``target_bytes``; returns the lines."""
    from codegen.emit import plan_steps

    catalog = _catalog()
    lines = 0
    size = 0
    with path.open("w", encoding="utf-8") as out:
        step = 0
        while size < target_bytes:
            for sample in plan_steps(catalog, _LOOP, 50, seed=step):
                for call in sample.logged:
                    record: dict[str, object] = {
                        "step": step + sample.step,
                        "prefix": call.prefix,
                        "loop": _LOOP,
                        "metrics": call.metrics,
                    }
                    if call.attributes:
                        record["attributes"] = call.attributes
                    text = json.dumps(record) + "\n"
                    out.write(text)
                    size += len(text)
                    lines += 1
            step += 50
    return lines


def _write_events(path: Path, scalars: int) -> int:
    """An event file of the sample run's numeric keys, one scalar per event; the scalar count."""
    import struct

    from tensorboard.compat.proto import event_pb2
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c as masked

    from codegen.emit import plan_steps

    catalog = _catalog()

    def frame(payload: bytes) -> bytes:
        header = struct.pack("<Q", len(payload))
        crcs = struct.pack("<I", masked(header)), struct.pack("<I", masked(payload))
        return header + crcs[0] + payload + crcs[1]

    written = 0
    with path.open("wb") as out:
        out.write(
            frame(event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())
        )
        step = 0
        while written < scalars:
            for sample in plan_steps(catalog, _LOOP, 50, seed=step):
                for call in sample.logged:
                    for key, value in call.metrics.items():
                        if isinstance(value, bool) or not isinstance(value, int | float):
                            continue
                        event = event_pb2.Event(wall_time=1.0, step=step + sample.step)
                        tag = f"{call.prefix}/{key}" if call.prefix else key
                        event.summary.value.add(tag=tag, simple_value=float(value))
                        out.write(frame(event.SerializeToString()))
                        written += 1
            step += 50
    return written


def _tensorboard_rows(cfg: Config, catalog: Catalog, work: Path) -> list[list[str]]:
    """check_file of an event file vs tensorboard's loader, or why it was not measured."""
    import importlib.util

    if importlib.util.find_spec("tensorboard") is None:
        return [["TensorBoard events", "not measured: the tensorboard extra is missing"] + [""] * 4]
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader

    from codegen.live_check import check_file

    path = work / "events.out.tfevents.bench"
    scalars = _write_events(path, 20_000 if cfg.smoke else 1_000_000)
    runs = 1 if cfg.smoke else 3

    def loader() -> None:
        for event in LegacyEventFileLoader(str(path)).Load():
            for value in event.summary.value:
                _ = (value.tag, value.simple_value)

    def live_check() -> None:
        check_file(str(path), catalog)

    timings: dict[str, list[float]] = {}
    for _ in range(runs):
        for name, fn in (("loader", loader), ("live", live_check)):
            timings.setdefault(name, []).append(_cpu(fn, 1))
    cpu = {name: median(values) for name, values in timings.items()}
    size_mb = path.stat().st_size / 1e6
    path.unlink(missing_ok=True)
    return [
        [
            f"TensorBoard events ({scalars:,} scalars, {size_mb:.0f} MB)",
            "tensorboard's `LegacyEventFileLoader`",
            fmt_ms(cpu["loader"]),
            "`check_file`",
            fmt_ms(cpu["live"]),
            fmt_ratio(cpu["live"] / cpu["loader"]),
        ]
    ]


def _requests(steps: int) -> list[bytes]:
    """One serialized OTLP request per step, every teed series of the run as a gauge point."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    catalog = _catalog()
    rows = [row for _, row in catalog.rows() if row.logger_key is not None]
    bodies = []
    for step in range(steps):
        request = ExportMetricsServiceRequest()
        resource = request.resource_metrics.add()
        rank = resource.resource.attributes.add()
        rank.key, rank.value.int_value = "rank", 0
        scope = resource.scope_metrics.add()
        for row in rows:
            metric = scope.metrics.add()
            metric.name, metric.unit = row.name, row.unit
            point = metric.gauge.data_points.add()
            point.as_double = float(step)
            point.time_unix_nano = step
        bodies.append(request.SerializeToString())
    return bodies


def _wandb_file(steps: int) -> bytes | None:
    """A W&B run file of ``steps`` history records (30 keys each, plus W&B's bookkeeping),
    framed as wandb-core frames it: the header, then 32 KiB blocks of CRC-32 chunks."""
    try:
        pb = importlib.import_module("wandb.proto.wandb_internal_pb2")
    except ImportError:
        return None
    import struct
    import zlib

    from codegen.runs.ingest.wandb_run import BLOCK_SIZE, FILE_HEADER

    out = bytearray(FILE_HEADER)
    for step in range(steps):
        history = pb.HistoryRecord(step=pb.HistoryStep(num=step))
        for n in range(30):
            history.item.add(nested_key=[f"actor/k{n:02d}"], value_json=repr(0.5 + step / 1e3))
        for key, value in (("_step", str(step)), ("_runtime", "1.5"), ("_timestamp", "1.7e9")):
            history.item.add(nested_key=[key], value_json=value)
        rest, first = pb.Record(num=step, history=history).SerializeToString(), True
        while True:
            room = BLOCK_SIZE - len(out) % BLOCK_SIZE
            if room < 7:
                out += bytes(room)
                continue
            part, rest = rest[: room - 7], rest[room - 7 :]
            kind = (1 if not rest else 2) if first else (4 if not rest else 3)
            out += struct.pack("<IHB", zlib.crc32(bytes([kind]) + part), len(part), kind) + part
            first = False
            if not rest:
                break
    return bytes(out)


def _cpu(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        samples.append(time.process_time() - start)
    return median(samples)


def _command_section(cfg: Config, log: Path, section: Section) -> None:
    """live-check as a command vs the bare ``json.loads`` command and vs the baseline's command."""
    baseline = export_baseline(cfg.baseline_ref, cfg.work / "baselines")
    commands: list[tuple[str, list[str | Path], Path, dict[str, str]]] = [
        ("floor", [python(), "-c", _BARE_JSON, log], REPO, child_env()),
        ("ours", [python(), "-m", "codegen", "live-check", log], REPO, child_env()),
    ]
    if isinstance(baseline, Baseline):
        commands.append(
            (
                "baseline",
                [python(), "-m", "codegen", "live-check", log],
                baseline.root,
                child_env(pythonpath=baseline.pythonpath),
            )
        )
    runs = 1 if cfg.smoke else max(cfg.runs, 5)
    if not cfg.smoke:  # one untimed run each: the log and the interpreter in the page cache
        for _, argv, cwd, env in commands:
            run_checked(argv, cwd=cwd, env=env)
    timings: dict[str, list[float]] = {}
    for _ in range(runs):  # interleaved, so load drifts hit every command alike
        for name, argv, cwd, env in commands:
            timings.setdefault(name, []).append(run_checked(argv, cwd=cwd, env=env).cpu_s)
    cpu = {name: median(values) for name, values in timings.items()}
    floor, ours = cpu["floor"], cpu["ours"]
    rows = [
        ["fresh interpreter: bare `json.loads` pass (the floor)", fmt_ms(floor), "1x", "-"],
        [
            "`python -m codegen live-check run.jsonl` (this checkout)",
            fmt_ms(ours),
            fmt_ratio(ours / floor),
            fmt_ratio(ours / cpu["baseline"]) if "baseline" in cpu else "-",
        ],
    ]
    if isinstance(baseline, Baseline):
        rows.append(
            [
                f"the same command at {baseline.label}",
                fmt_ms(cpu["baseline"]),
                fmt_ratio(cpu["baseline"] / floor),
                "1x",
            ]
        )
    else:
        section.notes.append(f"No baseline command: {baseline}.")
    section.extra_tables.append(
        (
            f"The JSONL log checked as a command (user + system CPU of each child process,"
            f" median of {runs} interleaved runs):",
            ["command", "CPU", "ratio to the floor", "ratio to the baseline"],
            rows,
        )
    )
    section.targets.append(
        Target(
            name="live-check of the log as a command",
            goal=f"<= {_COMMAND_GOAL}x the bare json.loads command",
            measured=fmt_ratio(ours / floor),
            met=None if cfg.smoke else ours / floor <= _COMMAND_GOAL,
        )
    )
    if isinstance(baseline, Baseline):
        ratio = ours / cpu["baseline"]
        section.targets.append(
            Target(
                name="live-check command vs the baseline's",
                goal=f"<= {_BASELINE_GOAL}x the same command at {baseline.label}",
                measured=fmt_ratio(ratio),
                met=None if cfg.smoke else ratio <= _BASELINE_GOAL,
            )
        )


def bench_live(cfg: Config) -> Section:
    """live-check of a JSONL log vs ``json.loads``; OTLP ingest vs bare protobuf decoding."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    from codegen.live_check import check_file, check_records, current_limits
    from codegen.runs.telemetry import (
        decode_request_body,
        records_from_points,
    )

    catalog = _catalog()
    work = cfg.work / "live" / str(os.getpid())  # concurrent runs never share the log
    work.mkdir(parents=True, exist_ok=True)
    log = work / "run.jsonl"
    target = 300_000 if cfg.smoke else 30_000_000
    lines = _write_log(log, target)
    size_mb = log.stat().st_size / 1e6
    runs = 1 if cfg.smoke else max(cfg.runs, 5)

    def bare_json() -> None:
        with log.open("rb") as stream:
            for raw in stream:
                json.loads(raw)

    def live_check() -> None:
        check_file(str(log), catalog)

    bodies = _requests(20 if cfg.smoke else 2_000)

    def bare_protobuf() -> None:
        # The least any decoder does: parse, then read each point's name, value and attributes.
        for body in bodies:
            request = ExportMetricsServiceRequest()
            request.ParseFromString(body)
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        name = metric.name
                        for point in metric.gauge.data_points:
                            _ = (
                                name,
                                point.as_double,
                                [(kv.key, kv.value) for kv in point.attributes],
                            )

    def ingest() -> None:
        for number, body in enumerate(bodies, 1):
            for _ in records_from_points(
                decode_request_body(body, "application/x-protobuf"), number
            ):
                pass

    def whole_check() -> None:
        def records() -> Iterator[Record]:
            for number, body in enumerate(bodies, 1):
                points = decode_request_body(body, "application/x-protobuf")
                yield from records_from_points(points, number)

        check_records(records(), catalog, source="otlp", loop=_LOOP, multi=True)

    run_file = _wandb_file(200 if cfg.smoke else 20_000)

    def bare_wandb() -> None:
        from codegen.runs.ingest.wandb_run import frames

        pb = importlib.import_module("wandb.proto.wandb_internal_pb2")

        assert run_file is not None
        for frame in frames(io.BytesIO(run_file), current_limits()):
            record = pb.Record.FromString(frame.payload)
            _ = {tuple(i.nested_key): json.loads(i.value_json) for i in record.history.item}

    def wandb_ingest() -> None:
        from codegen.runs.ingest import wandb_run
        from codegen.runs.records import Source

        assert run_file is not None
        for _ in wandb_run.read(Source("run.wandb"), io.BytesIO(run_file), current_limits()):
            pass

    commands: list[tuple[str, Callable[[], None]]] = [
        ("json", bare_json),
        ("live", live_check),
        ("protobuf", bare_protobuf),
        ("ingest", ingest),
        ("otlp-check", whole_check),
    ]
    if run_file is not None:
        commands += [("wandb-pb", bare_wandb), ("wandb", wandb_ingest)]
    timings: dict[str, list[float]] = {}
    for _ in range(runs):  # interleaved, so load drifts hit every command alike
        for name, fn in commands:
            timings.setdefault(name, []).append(_cpu(fn, 1))
    cpu = {name: median(values) for name, values in timings.items()}
    points = len(bodies) * sum(1 for _, row in catalog.rows() if row.logger_key is not None)
    section = Section(
        key="live",
        title="8. live-check throughput",
        intro=(
            f"CPU time in one process, median of {runs} interleaved runs. The JSONL log is a"
            f" sample `{_LOOP}` run of this repo's catalog ({size_mb:.1f} MB, {lines:,} lines);"
            f" the OTLP input is {len(bodies):,} requests ({points:,} points)."
        ),
        headers=["input", "baseline", "baseline CPU", "live-check", "live-check CPU", "ratio"],
        rows=[
            [
                "JSONL log",
                "`json.loads` per line",
                fmt_ms(cpu["json"]),
                "`check_file`",
                fmt_ms(cpu["live"]),
                fmt_ratio(cpu["live"] / cpu["json"]),
            ],
            [
                "OTLP requests",
                "`ParseFromString` + read each point",
                fmt_ms(cpu["protobuf"]),
                "ingest (decode + records)",
                fmt_ms(cpu["ingest"]),
                fmt_ratio(cpu["ingest"] / cpu["protobuf"]),
            ],
            [
                "OTLP requests",
                "`ParseFromString` + read each point",
                fmt_ms(cpu["protobuf"]),
                "whole check",
                fmt_ms(cpu["otlp-check"]),
                fmt_ratio(cpu["otlp-check"] / cpu["protobuf"]),
            ],
            *_tensorboard_rows(cfg, catalog, work),
        ],
    )
    jsonl_ratio = cpu["live"] / cpu["json"]
    otlp_ratio = cpu["ingest"] / cpu["protobuf"]
    section.targets.append(
        Target(
            name=f"live-check of a {size_mb:.0f} MB log",
            goal=f"<= {_JSONL_GOAL}x a bare json.loads pass",
            measured=fmt_ratio(jsonl_ratio),
            met=None if cfg.smoke else jsonl_ratio <= _JSONL_GOAL,
        )
    )
    section.targets.append(
        Target(
            name="OTLP ingest",
            goal=f"<= {_OTLP_GOAL}x decoding with the bare protobuf classes",
            measured=fmt_ratio(otlp_ratio),
            met=None if cfg.smoke else otlp_ratio <= _OTLP_GOAL,
        )
    )
    if run_file is not None:
        section.rows.append(
            [
                f"W&B run file ({len(run_file) / 1e6:.1f} MB)",
                "wandb's `Record.FromString` + `json.loads` per value",
                fmt_ms(cpu["wandb-pb"]),
                "live-check's reader (container, decode, records)",
                fmt_ms(cpu["wandb"]),
                fmt_ratio(cpu["wandb"] / cpu["wandb-pb"]),
            ]
        )
        wandb_ratio = cpu["wandb"] / cpu["wandb-pb"]
        section.targets.append(
            Target(
                name="W&B run file",
                goal=f"<= {_WANDB_GOAL}x wandb's own protobuf classes",
                measured=fmt_ratio(wandb_ratio),
                met=None if cfg.smoke else wandb_ratio <= _WANDB_GOAL,
            )
        )
    if run_file is None:
        section.rows.append(["W&B run file", "not measured: wandb is not installed"] + [""] * 4)
    _command_section(cfg, log, section)
    log.unlink(missing_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    return section
