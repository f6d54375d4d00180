"""A simulated GRPO run teed to a Prometheus endpoint on 127.0.0.1 (``make demo``).

Fifty steps of :func:`examples.grpo_owner.grpo_step_metrics` go through
``TeeLogger(JsonlLogger(...))``, exactly as a NeMo-RL ``Logger`` would be wrapped:
every step lands as a JSON line and, teed, on OpenTelemetry instruments exported
by a Prometheus scrape endpoint on 127.0.0.1, port 9464 (the documented default;
``METRIC_CATALOG_PROMETHEUS_PORT`` or ``--port`` choose another, ``0`` a free
one). The run also records the vLLM batch-duration histogram directly, the way
an engine would, through ``JsonlLogger.record_metrics``, so the log carries those
points too. At the end the demo scrapes its own endpoint over HTTP and
prints the series as Prometheus sees them, then the JSONL path
(``python -m codegen live-check <path>`` checks it). With ``--serve`` (``make
demo SERVE=1``) the endpoint then stays up until Ctrl-C (SIGINT) or SIGTERM, so
a Prometheus server of your own can scrape it.

Usage: ``python -m examples.demo [--steps N] [--port P] [--jsonl PATH] [--seed S] [--serve]
[--otlp URL]`` (``--otlp`` also pushes every series to an OTLP/HTTP collector).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from examples import grpo_owner
from metric_catalog import exporters, vocabulary
from metric_catalog.exporters import (
    ENV_PROMETHEUS_PORT,
    ExporterConfig,
    ExporterConfigError,
)
from metric_catalog.generated import common, grpo, timing, vllm
from metric_catalog.loggers import JsonlLogger, TeeLogger

__all__ = ["DemoResult", "default_port", "main", "parse_exposition", "run", "scrape", "serve"]

StepMetrics = Callable[[int, random.Random], dict[str, dict[str, float]]]
"""``(step, rng) -> {prefix: metrics}``, the shape of ``grpo_step_metrics``."""


@dataclass(frozen=True, slots=True)
class DemoResult:
    """What a demo run produced."""

    jsonl_path: Path
    """The JSON Lines log of every ``log_metrics`` call."""
    address: tuple[str, int]
    """Where the Prometheus endpoint listened."""
    samples: dict[str, float]
    """Every ``rl_*`` sample scraped at the end (histogram buckets left out), by name."""


def parse_exposition(text: str, prefix: str = "rl_") -> dict[str, float]:
    """Samples of a Prometheus text exposition whose metric name starts with ``prefix``.

    Keys are ``name{label="v",...}`` (labels sorted) or the bare name; histogram
    ``_bucket`` samples are left out to keep the table short.
    """
    from prometheus_client.parser import text_string_to_metric_families  # noqa: PLC0415

    samples: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if not sample.name.startswith(prefix) or sample.name.endswith("_bucket"):
                continue
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            samples[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return samples


def scrape(host: str, port: int, timeout: float = 5.0) -> dict[str, float]:
    """Fetch ``http://host:port/metrics`` and parse it with :func:`parse_exposition`."""
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=timeout) as response:
        return parse_exposition(response.read().decode("utf-8"))


def _declare_rows() -> None:
    # Importing the generated modules declared their rows; declaring them again is
    # a no-op, and makes run() work after a test has reset the registry.
    for module in (common, grpo, timing, vllm):
        vocabulary.register_teed_metrics(module.TEED)
        vocabulary.register_recorded_metrics(module.RECORDED)


def run(
    steps: int = 50,
    *,
    jsonl_path: Path | None = None,
    port: int = 0,
    seed: int = 0,
    step_metrics: StepMetrics = grpo_owner.grpo_step_metrics,
    keep_serving: bool = False,
    otlp_endpoint: str | None = None,
) -> DemoResult:
    """Run ``steps`` simulated GRPO steps, teed to a Prometheus endpoint on 127.0.0.1.

    ``port`` 0 picks a free port. With ``keep_serving`` the endpoint stays up
    after the run (for a Prometheus server to scrape); otherwise the provider
    is shut down before returning. ``otlp_endpoint`` (a full
    ``http://host:port/v1/metrics`` URL) also pushes every series over OTLP/HTTP,
    flushed when the provider shuts down.

    Raises:
        RuntimeError: The Prometheus endpoint could not be started (port taken).
    """
    _declare_rows()
    config = ExporterConfig(
        exporters=("prometheus",),
        prometheus_host="127.0.0.1",
        prometheus_port=port,
        prometheus_port_span=1,  # --port means that port, not a range from it
    )
    if otlp_endpoint:
        config = replace(config, exporters=("prometheus", "otlp"), otlp_endpoint=otlp_endpoint)
    provider = exporters.configure(config=config)
    address = exporters.prometheus_address()
    if provider is None or address is None:
        msg = f"could not start the Prometheus endpoint on 127.0.0.1:{port} (see the warning)"
        raise RuntimeError(msg)
    if jsonl_path is None:
        jsonl_path = Path(tempfile.mkdtemp(prefix="metric-catalog-demo-")) / "run.jsonl"
    rng = random.Random(seed)
    try:
        with JsonlLogger(jsonl_path) as backend:
            logger = TeeLogger(backend)
            for step in range(steps):
                for prefix, metrics in step_metrics(step, rng).items():
                    logger.log_metrics(metrics, step, prefix=prefix)
                # An engine records its own series directly, per generate() batch; through
                # the JSONL backend each point also lands in the log, so live-check sees it.
                for _ in range(4):
                    duration = rng.uniform(2.0, 9.0)
                    backend.record_metrics({vllm.VLLM_BATCH_DURATION.key: duration}, step=step)
        samples = scrape(*address)
    finally:
        if not keep_serving:
            exporters.shutdown()
    return DemoResult(jsonl_path, address, samples)


def default_port(environ: Mapping[str, str] | None = None) -> int:
    """The documented Prometheus port: ``METRIC_CATALOG_PROMETHEUS_PORT``, else 9464.

    ``OTEL_EXPORTER_PROMETHEUS_PORT`` is the fallback variable, as for the
    exporters; only the port variables are read.

    Raises:
        ExporterConfigError: A port variable is not a port number; the message
            names it.
    """
    env = os.environ if environ is None else environ
    names = (ENV_PROMETHEUS_PORT, "OTEL_EXPORTER_PROMETHEUS_PORT")
    ports = {name: env[name] for name in names if name in env}
    return ExporterConfig.from_env(ports).prometheus_port


def serve(result: DemoResult, out: TextIO, stop: threading.Event | None = None) -> None:
    """Keep the endpoint up until Ctrl-C (SIGINT), SIGTERM or ``stop``; then shut it down."""
    stop = threading.Event() if stop is None else stop
    host, port = result.address
    print(
        f"Serving http://{host}:{port}/metrics until Ctrl-C; point a Prometheus scrape job "
        f"at {host}:{port}.",
        file=out,
        flush=True,
    )
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda _sig, _frame: stop.set())
    try:
        while not stop.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        exporters.shutdown()
    print("demo: stopped serving.", file=out, flush=True)


def _print_table(result: DemoResult, out: TextIO) -> None:
    width = max((len(name) for name in result.samples), default=10)
    host, port = result.address
    print(f"Series scraped from http://{host}:{port}/metrics:", file=out)
    print(f"  {'name':<{width}}  value", file=out)
    print(f"  {'-' * width}  {'-' * 12}", file=out)
    for name in sorted(result.samples):
        value = result.samples[name]
        shown = f"{value:.0f}" if value.is_integer() and abs(value) < 1e15 else f"{value:.6g}"
        print(f"  {name:<{width}}  {shown}", file=out)
    print(f"{len(result.samples)} samples (histogram buckets omitted).", file=out)
    print(f"JSONL log: {result.jsonl_path}", file=out)
    print(f"Check it with: python -m codegen live-check {result.jsonl_path}", file=out)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m examples.demo", description=__doc__)
    parser.add_argument("--steps", type=int, default=50, help="steps to simulate (default 50)")
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="Prometheus port (default: $METRIC_CATALOG_PROMETHEUS_PORT, else 9464; 0: free)",
    )
    parser.add_argument("--jsonl", type=Path, default=None, help="JSONL path (default: tmp)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--serve",
        action="store_true",
        help="after the run, keep the endpoint up until Ctrl-C (for your own Prometheus)",
    )
    parser.add_argument(
        "--otlp",
        metavar="URL",
        default=None,
        help="also push over OTLP/HTTP to this metrics URL (http://127.0.0.1:4318/v1/metrics)",
    )
    args = parser.parse_args(argv)
    stream = sys.stdout if out is None else out
    try:
        port = default_port() if args.port is None else args.port
    except ExporterConfigError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 2
    try:
        result = run(
            args.steps,
            jsonl_path=args.jsonl,
            port=port,
            seed=args.seed,
            keep_serving=args.serve,
            otlp_endpoint=args.otlp,
        )
    except RuntimeError as exc:
        print(f"demo: {exc}; pass --port or set {ENV_PROMETHEUS_PORT}", file=sys.stderr)
        return 1
    _print_table(result, stream)
    if args.serve:
        serve(result, stream)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
