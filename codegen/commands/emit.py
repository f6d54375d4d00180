"""``metric-catalog emit --loop L --jsonl FILE | --otlp-endpoint URL | --prometheus HOST:PORT``.

Sample telemetry from the catalog (see :mod:`codegen.emit`), through the real
tee and exporters, to test dashboards, alerts and collectors before a real run
exists. Transports combine: ``--jsonl`` writes the run's log (``live-check``
reads it), ``--otlp-endpoint`` (formerly ``--otlp``) pushes to an OTLP/HTTP
collector with the SDK's exporter (flushed at the end), ``--prometheus`` serves a
scrape endpoint for ``--duration`` seconds (Ctrl-C stops it early).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Final

from ..runs.live import parse_host_port, parse_otlp_url
from ..safe_text import printable
from . import UsageError, add_root_argument, config_from_args, load_or_report

__all__ = ["HELP", "configure", "run"]

HELP = "Emit a sample run of one loop through the real tee (JSONL, OTLP, Prometheus)."

_DEFAULT_STEPS = 10


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        msg = f"{text!r}: expected a number of seconds >= 0"
        raise argparse.ArgumentTypeError(msg)
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``--loop``, ``--steps``, ``--seed``, the transports and the catalog location."""
    parser.add_argument(
        "--loop", metavar="NAME", help="declared training loop to emit (default: every row)"
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=_DEFAULT_STEPS,
        metavar="N",
        help=f"steps to emit (default {_DEFAULT_STEPS})",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed of the values")
    parser.add_argument(
        "--jsonl", type=Path, metavar="FILE", help="write the run's JSON Lines log here"
    )
    parser.add_argument(
        "--otlp-endpoint",
        dest="otlp",
        type=parse_otlp_url,
        metavar="URL",
        help="push to this OTLP/HTTP collector (e.g. http://127.0.0.1:4318)",
    )
    # The older spelling; live-check's OTLP flag listens, this one sends: the new name says so.
    parser.add_argument("--otlp", dest="otlp", type=parse_otlp_url, help=argparse.SUPPRESS)
    parser.add_argument(
        "--prometheus",
        type=parse_host_port,
        metavar="HOST:PORT",
        help="serve a Prometheus scrape endpoint here (port 0 picks a free one)",
    )
    parser.add_argument(
        "--duration",
        type=_positive,
        default=None,
        metavar="SECONDS",
        help="how long --prometheus keeps serving after the run (default 60; Ctrl-C stops)",
    )
    add_root_argument(parser)


def _wait(seconds: float) -> None:
    """Sleep ``seconds`` or until SIGINT/SIGTERM, whichever comes first."""
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        stop.wait(seconds)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


_OTLP_LOGGER: Final = "opentelemetry.exporter.otlp"


class _ExportErrors(logging.Handler):
    """The last few warnings the OTLP exporter logged (why an export was not accepted)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the record's message, escaped and cut to one short line."""
        try:
            text = printable(record.getMessage())
        except Exception:  # noqa: BLE001 - a log record that cannot be formatted
            text = record.msg if isinstance(record.msg, str) else "an export error"
        self.messages = [*self.messages[-4:], text[:300]]


def run(args: argparse.Namespace) -> int:
    """Emit the sample run; 0 when it was sent, 2 on bad arguments, catalog or transport."""
    # Imported here so `metric-catalog --help` does not load the runtime and the tee.
    from metric_catalog import exporters  # noqa: PLC0415

    from ..emit import EmitError, emit  # noqa: PLC0415

    if args.jsonl is None and args.otlp is None and args.prometheus is None:
        msg = (
            "choose where the sample goes: --jsonl FILE, --otlp-endpoint URL and/or "
            "--prometheus HOST:PORT"
        )
        raise UsageError(msg)
    if args.duration is not None and args.prometheus is None:
        raise UsageError("--duration applies to --prometheus only")
    if _jsonl_is_a_link(args.jsonl):
        return 2
    config = config_from_args(args)
    catalog = load_or_report(config)
    if catalog is None:
        print("error: the catalog has errors; fix them before emitting", file=sys.stderr)
        return 2
    # One hour between pushes: the run is short, and shutdown() sends the final export.
    exporter_config = exporters.ExporterConfig(export_interval_millis=3_600_000.0)
    names: list[str] = []
    if args.otlp is not None:
        names.append("otlp")
        exporter_config = replace(exporter_config, otlp_endpoint=args.otlp)
    if args.prometheus is not None:
        names.append("prometheus")
        host, port = args.prometheus
        exporter_config = replace(
            exporter_config, prometheus_host=host, prometheus_port=port, prometheus_port_span=1
        )
    errors = _ExportErrors()
    if args.otlp is not None:
        # The SDK's OTLP exporter says why an export failed (the HTTP status, a refused
        # connection) only in its log: kept, so the error names it.
        logging.getLogger(_OTLP_LOGGER).addHandler(errors)
    if names:
        try:
            exporters.configure(config=replace(exporter_config, exporters=tuple(names)))
        except OSError as exc:
            print(f"error: cannot start the exporters: {exc}", file=sys.stderr)
            return 2
        if args.prometheus is not None and exporters.prometheus_address() is None:
            print(
                f"error: --prometheus {args.prometheus[0]}:{args.prometheus[1]}: the scrape "
                "endpoint did not start (see the warning above)",
                file=sys.stderr,
            )
            return 2
    try:
        summary = emit(
            catalog, config, loop=args.loop, steps=args.steps, jsonl=args.jsonl, seed=args.seed
        )
    except EmitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write {args.jsonl}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    loop = summary.loop or "every row"
    print(
        f"emitted {summary.steps} steps of {loop}: {summary.calls} log_metrics calls, "
        f"{summary.keys} keys, {summary.recorded_points} recorded points, "
        f"{len(summary.series)} series"
    )
    if args.jsonl is not None:
        print(f"jsonl: {args.jsonl}")
    if args.prometheus is not None:
        address = exporters.prometheus_address()
        duration = 60.0 if args.duration is None else args.duration
        if address is not None:
            print(f"prometheus: http://{address[0]}:{address[1]}/metrics for {duration:g} s")
            sys.stdout.flush()
        _wait(duration)
    return _shut_down(exporters.shutdown(), args.otlp, errors)


def _jsonl_is_a_link(path: Path | None) -> bool:
    """Whether ``--jsonl`` names a symlink (said on stderr): a link planted where the log
    goes would send the write elsewhere (a dangling one creates its target)."""
    if path is None or not os.path.islink(path):
        return False
    print(
        f"error: --jsonl {path}: is a symlink (to {os.readlink(path)!r}); pass the file "
        "itself (nothing was written)",
        file=sys.stderr,
    )
    return True


def _shut_down(accepted: bool, otlp: str | None, errors: _ExportErrors) -> int:
    """The exit code once the exporters flushed: 2 when the OTLP export was not accepted
    (the endpoint and why on stderr), else 0."""
    if otlp is not None and (not accepted or errors.messages):
        # The exporter's last word may be its own "Shutdown in progress, aborting retry":
        # the reason is the failure before it.
        reasons = [m for m in errors.messages if not m.lower().startswith("shutdown in progress")]
        why = reasons[-1] if reasons else "no answer within the deadline"
        print(
            f"error: otlp: the export to {otlp} was not accepted ({why}); check that an "
            "OTLP/HTTP collector listens there (its /v1/metrics path)",
            file=sys.stderr,
        )
        return 2
    if not accepted:
        print("warning: the final export did not finish in time", file=sys.stderr)
    if otlp is not None:
        print(f"otlp: pushed to {otlp}")
    return 0
