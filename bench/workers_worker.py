"""Child process of the many-workers benchmark (``python -m bench.workers_worker``); prints JSON.

``--mode promoted``: the worker is rank 3, local rank 1, with
``METRIC_CATALOG_PROMOTE=rank,local_rank``, so the tee adds both to every
point. It times, interleaved repetition by repetition, ``tee`` (a plain
``tee_metrics(metrics, prefix="train")``) against ``floor``: the same 80
instruments called directly with the same two labels. Before timing it checks
that every exported point carries them.

``--mode dead-collector``: the tee exports over OTLP to a loopback socket that
accepts connections and never answers, so an export hangs (its timeout is
30 s). While it hangs, it times ``tee`` against ``floor`` (no attributes) and
records the slowest single tee call: a dead collector must not stall a step.

The rows, the logged dict and the timing loop are :mod:`bench.tee_worker`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from bench.tee_worker import PREFIX, _exported_names, _floor, _metrics, _per_call, _rows

__all__ = ["PROMOTED", "main"]

PROMOTED: Final[dict[str, int]] = {"rank": 3, "local_rank": 1}
"""The identity the ``promoted`` mode promotes, as the floor passes it."""


def _promoted(calls: int, repeats: int) -> dict[str, Any]:
    os.environ.update({"RANK": "3", "LOCAL_RANK": "1", "METRIC_CATALOG_PROMOTE": "rank,local_rank"})
    from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from metric_catalog import exporters
    from metric_catalog.tee import tee_metrics
    from metric_catalog.vocabulary import register_teed_metrics

    rows = _rows()
    register_teed_metrics(rows)
    metrics = _metrics(rows)
    reader = InMemoryMetricReader()
    provider = MeterProvider(
        metric_readers=[reader], exemplar_filter=AlwaysOffExemplarFilter(), shutdown_on_exit=False
    )
    exporters.configure(meter_provider=provider)
    tee_metrics(metrics, prefix=PREFIX)
    missing = sorted(r.name for r in rows if r.name not in _exported_names(reader))
    data = reader.get_metrics_data()
    labelled = all(
        dict(point.attributes or {}) == PROMOTED
        for rm in (data.resource_metrics if data else ())
        for sm in rm.scope_metrics
        for m in sm.metrics
        for point in m.data.data_points
    )
    if missing or not labelled:
        return {"error": f"promoted tee: missing {missing[:3]}, every point labelled: {labelled}"}
    pairs = _floor(rows)
    labels = dict(PROMOTED)

    def floor() -> None:
        for method, key in pairs:
            method(metrics[key], labels)

    variants = {"tee": lambda: tee_metrics(metrics, prefix=PREFIX), "floor": floor}
    return {"ns_per_call": _interleaved(variants, calls, repeats)}


def _interleaved(
    variants: dict[str, Callable[[], None]], calls: int, repeats: int
) -> dict[str, list[float]]:
    for fn in variants.values():  # warm-up
        _per_call(fn, max(1, calls // 10))
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            samples[name].append(_per_call(fn, calls))
    return samples


def _dead_collector(calls: int, repeats: int) -> dict[str, Any]:
    from metric_catalog import exporters
    from metric_catalog.exporters import ExporterConfig
    from metric_catalog.tee import tee_metrics
    from metric_catalog.vocabulary import register_teed_metrics

    rows = _rows()
    register_teed_metrics(rows)
    metrics = _metrics(rows)
    with socket.socket() as blackhole:
        blackhole.bind(("127.0.0.1", 0))
        blackhole.listen(64)
        port = blackhole.getsockname()[1]
        exporters.configure(
            config=ExporterConfig(
                exporters=("otlp",),
                otlp_endpoint=f"http://127.0.0.1:{port}/v1/metrics",
                export_interval_millis=50,
                otlp_timeout=30.0,
                shutdown_timeout=0.5,
            )
        )
        tee_metrics(metrics, prefix=PREFIX)
        deadline = time.monotonic() + 10.0
        while exporters._PROCESS.in_flight == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        if exporters._PROCESS.in_flight == 0:
            return {"error": "no export reached the dead collector within 10 s"}
        pairs = _floor(rows)

        def floor() -> None:
            for method, key in pairs:
                method(metrics[key])

        samples = _interleaved(
            {"tee": lambda: tee_metrics(metrics, prefix=PREFIX), "floor": floor}, calls, repeats
        )
        slowest = 0.0
        for _ in range(calls):
            start = time.perf_counter_ns()
            tee_metrics(metrics, prefix=PREFIX)
            slowest = max(slowest, float(time.perf_counter_ns() - start))
        hanging = exporters._PROCESS.in_flight > 0
        began = time.perf_counter()
        exporters.shutdown()
        shutdown_s = time.perf_counter() - began
    return {
        "ns_per_call": samples,
        "slowest_tee_ns": slowest,
        "export_hanging_throughout": hanging,
        "shutdown_s": shutdown_s,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run one mode and print its JSON; 1 when the setup check failed."""
    parser = argparse.ArgumentParser(prog="python -m bench.workers_worker")
    parser.add_argument("--mode", choices=("promoted", "dead-collector"), required=True)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    if args.mode == "promoted":
        result = _promoted(args.calls, args.repeats)
    else:
        import warnings

        warnings.simplefilter("ignore")  # the dead collector's one warning is expected
        result = _dead_collector(args.calls, args.repeats)
    print(json.dumps(result))
    return 1 if "error" in result else 0


if __name__ == "__main__":
    sys.exit(main())
