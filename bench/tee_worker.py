"""Child process of the tee benchmark (``python -m bench.tee_worker``); prints JSON.

Runs in a fresh interpreter because the tee's state is process-wide (one
MeterProvider, a registry frozen on the first tee). It declares 80 teed rows
under prefix ``train`` (mixed kinds), builds a 100-key metrics dict (80
declared, 20 not), and times, interleaved repetition by repetition:

- ``tee``: ``tee_metrics(metrics, prefix="train")``, and with 2 attributes;
- ``floor``: a loop calling the same 80 OpenTelemetry instruments directly
  (the tee's own instruments' bound ``set``/``add``/``record`` methods, values
  looked up in the same dict), and with the same 2 attributes;
- ``lookup``: the floor's loop with the instrument call removed (what any
  dict-walking tee pays before the SDK), for the breakdown;
- key families: 80 keys matching 8 ``{placeholder}`` patterns under ``fam``, and the
  same under ``famd`` with 3 attributes derived from the captured one
  against the 80 plain keys; 100 undeclared keys under a prefix with and
  without patterns (strict and not); and the tee with identity labels set
  against the floor passing the same labels.

``--mode registry`` times registering 10,000 rows in 100 calls, each repeat
into fresh registry globals swapped in the way upstream's test fixture does.

``--mode disabled`` turns telemetry off the way a user would and times the tee
alone. Before timing, the enabled run checks the tee really exports: after
one call every declared series must show up in an InMemoryMetricReader.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final

__all__ = ["DECLARED", "UNDECLARED", "main"]

DECLARED: Final = 80
"""Declared (teed) keys in the logged dict."""

UNDECLARED: Final = 20
"""Keys in the logged dict that no row declares."""

PREFIX: Final = "train"
ATTRIBUTES: Final[dict[str, str | int]] = {"rank": 0, "phase": "train"}
_KINDS: Final = (
    "gauge",
    "gauge",
    "counter",
    "gauge",
    "histogram",
    "gauge",
    "up_down_counter",
    "gauge",
    "counter",
    "histogram",
)
_UNITS: Final = {
    "gauge": "1",
    "counter": "{token}",
    "histogram": "s",
    "up_down_counter": "{request}",
}


def _rows() -> list[Any]:
    from metric_catalog.vocabulary import MetricAttribute, TeedMetric

    declared = (
        MetricAttribute("rank", "int"),
        MetricAttribute("phase", values=("train", "validation")),
    )
    rows = []
    for i in range(DECLARED):
        kind = _KINDS[i % len(_KINDS)]
        rows.append(
            TeedMetric(
                logger_key=f"bench/key_{i:03d}",
                name=f"rl.bench.series_{i:03d}",
                kind=kind,
                unit=_UNITS[kind],
                description=f"Benchmark series number {i}.",
                prefix=PREFIX,
                attributes=declared,
            )
        )
    return rows


FAMILY_PREFIX: Final = "fam"
FAMILIES: Final = 8
"""Key-pattern rows under ``fam``: ``fam{j}/{bench.slot}`` with 10 enum slots each (80 keys)."""
SLOTS: Final = tuple(f"s{i}" for i in range(10))
IDENTITY: Final[dict[str, str | int]] = {"worker.rank": 3, "host.name": "node-1"}
REGISTRY_ROWS: Final = 10_000
REGISTRY_BATCHES: Final = 100


def _family_rows() -> list[Any]:
    """``FAMILIES`` gauges under ``fam`` whose keys are patterns over 10 enum values."""
    from metric_catalog.vocabulary import MetricAttribute, TeedMetric

    slot = MetricAttribute("bench.slot", values=SLOTS)
    return [
        TeedMetric(
            logger_key=f"fam{j}/{{bench.slot}}",
            name=f"rl.bench.family_{j}",
            description=f"Benchmark key family number {j}.",
            prefix=FAMILY_PREFIX,
            attributes=(slot,),
        )
        for j in range(FAMILIES)
    ]


def _family_metrics() -> dict[str, float]:
    return {f"fam{j}/{s}": 0.5 + j for j in range(FAMILIES) for s in SLOTS}


DERIVED_PREFIX: Final = "famd"
"""Prefix of the same families with three attributes derived from the slot (issue 12)."""


def _derived_tables() -> dict[str, tuple[tuple[str, str], ...]]:
    """Three derivation tables over the slots, like upstream's efficiency measurement,
    window and bucket over the category."""
    return {
        "bench.parity": tuple((s, ("even", "odd")[i % 2]) for i, s in enumerate(SLOTS)),
        "bench.half": tuple((s, ("low", "high")[i * 2 // len(SLOTS)]) for i, s in enumerate(SLOTS)),
        "bench.third": tuple((s, ("a", "b", "c")[i % 3]) for i, s in enumerate(SLOTS)),
    }


def _derived_family_rows() -> list[Any]:
    """The ``FAMILIES`` patterns under ``famd``, each point carrying 3 derived attributes."""
    from metric_catalog.vocabulary import MetricAttribute, TeedMetric

    slot = MetricAttribute("bench.slot", values=SLOTS, requirement="required")
    derived = tuple(
        MetricAttribute(
            name,
            values=tuple(dict.fromkeys(v for _s, v in table)),
            requirement="required",
            derived_from="bench.slot",
            derive_map=table,
        )
        for name, table in _derived_tables().items()
    )
    return [
        TeedMetric(
            logger_key=f"famd{j}/{{bench.slot}}",
            name=f"rl.bench.derived_{j}",
            description=f"Benchmark key family number {j} with derived attributes.",
            prefix=DERIVED_PREFIX,
            attributes=(slot, *derived),
        )
        for j in range(FAMILIES)
    ]


def _derived_floor(rows: Sequence[Any]) -> list[tuple[Callable[..., None], str, dict[str, str]]]:
    """Direct ``set`` calls of the derived families with the same 4 attributes, precomputed."""
    from metric_catalog.otel import ensure_metric_group_registered

    instruments = ensure_metric_group_registered().instruments
    tables = {name: dict(table) for name, table in _derived_tables().items()}
    return [
        (
            instruments[row.key].set,
            f"famd{j}/{slot}",
            {"bench.slot": slot, **{name: table[slot] for name, table in tables.items()}},
        )
        for j, row in enumerate(rows)
        for slot in SLOTS
    ]


def _undeclared(count: int) -> dict[str, float]:
    return {f"undeclared/key_{i:03d}": float(i) for i in range(count)}


def _registry(repeats: int) -> dict[str, Any]:
    """Time registering ``REGISTRY_ROWS`` rows in ``REGISTRY_BATCHES`` calls, per repeat.

    Each repeat swaps in empty registry globals the way upstream's test fixture
    does, so it also proves the registry re-derives its side tables from them.
    """
    from metric_catalog import vocabulary
    from metric_catalog.vocabulary import TeedMetric

    rows = [
        TeedMetric(f"bench/reg_{i:05d}", f"rl.bench.reg_{i:05d}", prefix=PREFIX)
        for i in range(REGISTRY_ROWS)
    ]
    size = REGISTRY_ROWS // REGISTRY_BATCHES
    batches = [rows[i : i + size] for i in range(0, REGISTRY_ROWS, size)]
    ns: list[float] = []
    for _ in range(repeats):
        vocabulary._REGISTERED = {}
        vocabulary._RECORDED = {}
        vocabulary._FROZEN = False
        gc.collect()
        start = time.perf_counter_ns()
        for batch in batches:
            vocabulary.register_teed_metrics(batch, owner="bench")
        ns.append(float(time.perf_counter_ns() - start))
        if len(vocabulary.teed_metrics()) != REGISTRY_ROWS:
            msg = "registration lost rows"
            raise RuntimeError(msg)
    return {"mode": "registry", "rows": REGISTRY_ROWS, "batches": REGISTRY_BATCHES, "ns": ns}


def _metrics(rows: Sequence[Any]) -> dict[str, float]:
    metrics = {row.logger_key: 0.5 + i for i, row in enumerate(rows)}
    for i in range(UNDECLARED):
        metrics[f"undeclared/key_{i:03d}"] = float(i)
    return metrics


def _enable_telemetry() -> tuple[Any, Any]:
    """Point the tee at a MeterProvider with an InMemoryMetricReader; return both.

    Built like :mod:`metric_catalog.exporters` builds its own (exemplars off,
    no shutdown hook), and installed with ``exporters.configure``.
    """
    from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from metric_catalog import exporters

    reader = InMemoryMetricReader()
    provider = MeterProvider(
        metric_readers=[reader],
        exemplar_filter=AlwaysOffExemplarFilter(),
        shutdown_on_exit=False,
    )
    exporters.configure(meter_provider=provider)
    return provider, reader


def _disable_telemetry() -> None:
    """Telemetry off the way a user switches it off: no exporter configured."""
    os.environ["OTEL_METRICS_EXPORTER"] = "none"


def _floor(rows: Sequence[Any]) -> list[tuple[Callable[..., None], str]]:
    """The tee's own instruments' bound methods, paired with the logger keys."""
    from metric_catalog.otel import ensure_metric_group_registered

    instruments = ensure_metric_group_registered().instruments
    methods = {"gauge": "set", "counter": "add", "histogram": "record", "up_down_counter": "add"}
    return [(getattr(instruments[row.key], methods[row.kind]), row.logger_key) for row in rows]


def _per_call(fn: Callable[[], None], calls: int) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        return (time.perf_counter_ns() - start) / calls
    finally:
        gc.enable()


def _exported_names(reader: Any) -> set[str]:
    data = reader.get_metrics_data()
    names: set[str] = set()
    if data is None:
        return names
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            names.update(m.name for m in sm.metrics)
    return names


def _families_and_identity(
    metrics: dict[str, float],
    pairs: list[tuple[Callable[..., None], str]],
    calls: int,
    repeats: int,
) -> dict[str, list[float]]:
    """Key families, undeclared keys (strict, with and without patterns) and identity labels."""
    from metric_catalog import otel
    from metric_catalog.tee import tee_metrics

    declared_only = {k: v for k, v in metrics.items() if not k.startswith("undeclared/")}
    families = _family_metrics()
    derived = {key.replace("fam", DERIVED_PREFIX, 1): v for key, v in families.items()}
    derived_pairs = _derived_floor(_derived_family_rows())
    tee_metrics(derived, prefix=DERIVED_PREFIX)

    def floor_derived() -> None:
        for method, key, attributes in derived_pairs:
            method(derived[key], attributes)

    undeclared = _undeclared(100)
    warnings.simplefilter("ignore")  # the undeclared keys are warned about on purpose
    tee_metrics(families, prefix=FAMILY_PREFIX)
    tee_metrics(undeclared, prefix=PREFIX, strict=True)  # warn once up front
    tee_metrics(undeclared, prefix=FAMILY_PREFIX, strict=True)
    variants: dict[str, Callable[[], None]] = {
        "plain hit": lambda: tee_metrics(declared_only, prefix=PREFIX),
        "pattern hit": lambda: tee_metrics(families, prefix=FAMILY_PREFIX),
        "pattern hit, derived": lambda: tee_metrics(derived, prefix=DERIVED_PREFIX),
        "floor, derived": floor_derived,
        "miss strict, no patterns": lambda: tee_metrics(undeclared, prefix=PREFIX, strict=True),
        "miss strict, patterns": lambda: tee_metrics(undeclared, prefix=FAMILY_PREFIX, strict=True),
        "miss, no patterns": lambda: tee_metrics(undeclared, prefix=PREFIX),
        "miss, patterns": lambda: tee_metrics(undeclared, prefix=FAMILY_PREFIX),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for fn in variants.values():
        _per_call(fn, max(1, calls // 10))
    for _ in range(repeats):
        for name, fn in variants.items():
            samples[name].append(_per_call(fn, calls))

    otel.set_identity(IDENTITY)
    labels = dict(IDENTITY)
    tee_metrics(declared_only, prefix=PREFIX)  # rebuilds the group with the identity

    def floor_identity() -> None:
        for method, key in pairs:
            method(metrics[key], labels)

    identity_variants: dict[str, Callable[[], None]] = {
        "tee+identity": lambda: tee_metrics(metrics, prefix=PREFIX),
        "floor+identity": floor_identity,
    }
    for name, fn in identity_variants.items():
        samples[name] = []
        _per_call(fn, max(1, calls // 10))
    for _ in range(repeats):
        for name, fn in identity_variants.items():
            samples[name].append(_per_call(fn, calls))
    otel.set_identity({})
    return samples


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measurements and print one JSON object to stdout."""
    parser = argparse.ArgumentParser(prog="python -m bench.tee_worker")
    parser.add_argument("--mode", choices=("enabled", "disabled", "registry"), required=True)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--profile", default=None, help="write a cProfile dump of the tee here")
    args = parser.parse_args(argv)

    if args.mode == "registry":
        print(json.dumps(_registry(args.repeats)))
        return 0
    from metric_catalog.vocabulary import register_teed_metrics

    rows = _rows()
    register_teed_metrics(rows)
    family_rows = _family_rows()
    register_teed_metrics(family_rows)
    register_teed_metrics(_derived_family_rows())
    metrics = _metrics(rows)
    attrs = dict(ATTRIBUTES)

    if args.mode == "disabled":
        _disable_telemetry()
    from metric_catalog.tee import tee_metrics

    variants: dict[str, Callable[[], None]] = {
        "tee": lambda: tee_metrics(metrics, prefix=PREFIX),
    }
    result: dict[str, Any] = {"mode": args.mode, "calls": args.calls, "repeats": args.repeats}
    if args.mode == "enabled":
        _provider, reader = _enable_telemetry()
        tee_metrics(metrics, prefix=PREFIX)  # first tee: creates instruments, freezes
        seen = _exported_names(reader)
        missing = sorted(r.name for r in rows if r.name not in seen)
        if missing:
            print(
                json.dumps(
                    {
                        "error": f"tee exported {len(rows) - len(missing)} of {len(rows)} "
                        f"declared series; missing e.g. {missing[:3]}"
                    }
                )
            )
            return 1
        pairs = _floor(rows)

        def floor() -> None:
            for method, key in pairs:
                method(metrics[key])

        def floor_attrs() -> None:
            for method, key in pairs:
                method(metrics[key], attrs)

        def lookup() -> None:
            for _method, key in pairs:
                float(metrics[key])

        variants["floor"] = floor
        variants["tee+attrs"] = lambda: tee_metrics(metrics, prefix=PREFIX, attributes=attrs)
        variants["floor+attrs"] = floor_attrs
        variants["lookup"] = lookup
    else:
        tee_metrics(metrics, prefix=PREFIX)

    for fn in variants.values():  # warm-up
        _per_call(fn, max(1, args.calls // 10))
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, fn in variants.items():
            samples[name].append(_per_call(fn, args.calls))
    if args.mode == "enabled":
        samples.update(_families_and_identity(metrics, pairs, args.calls, args.repeats))
    result["ns_per_call"] = samples

    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls):
            tee_metrics(metrics, prefix=PREFIX)
        prof.disable()
        prof.dump_stats(args.profile)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
