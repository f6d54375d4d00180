"""Where teed metrics go: one OpenTelemetry ``MeterProvider`` per process.

Configured the OpenTelemetry way, from the environment, and created lazily on
the first tee (so a process that forks DataLoader workers before training gets
its provider after the fork, not a copy of its parent's):

``OTEL_METRICS_EXPORTER``
    ``none`` (default: the tee is a cheap no-op), ``prometheus``, ``otlp``,
    ``console``, or a comma-separated list of them.
``OTEL_EXPORTER_OTLP_ENDPOINT``
    Base URL of an OTLP/HTTP collector (default ``http://localhost:4318``);
    ``/v1/metrics`` is appended. ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` is
    used verbatim and wins.
``METRIC_CATALOG_PROMETHEUS_HOST``
    Address the Prometheus scrape endpoint binds (default ``127.0.0.1``;
    falls back to ``OTEL_EXPORTER_PROMETHEUS_HOST``).
``METRIC_CATALOG_PROMETHEUS_PORT``
    The node's base port (default 9464; ``0`` picks a free one, see
    :func:`prometheus_address`; falls back to ``OTEL_EXPORTER_PROMETHEUS_PORT``).
    Each process first tries ``base + LOCAL_RANK`` (the launcher's local rank,
    0 without one), then the other ports of ``base .. base + span - 1`` in
    turn, so several processes on one node each get a port of that range.
``METRIC_CATALOG_PROMETHEUS_PORT_SPAN``
    How many ports that range holds (default 32; ``1``: exactly
    ``base + LOCAL_RANK``). When every port of the range is taken, Prometheus
    export is disabled with one warning that names the fix.
``METRIC_CATALOG_PROMETHEUS_SD_DIR``
    A folder Prometheus watches with ``file_sd_configs``. Each process then binds
    a free port (unless ``METRIC_CATALOG_PROMETHEUS_PORT`` is set) and announces
    it in its own target file there, written atomically and removed at exit,
    labelled with the worker's identity (see :mod:`metric_catalog.identity`).
``METRIC_CATALOG_PROMETHEUS_SD_HOST``
    The host written into the target file (default: the bind address, or the
    host name when binding all interfaces).
``OTEL_METRIC_EXPORT_INTERVAL``
    Push interval in milliseconds for ``otlp`` and ``console`` (default 60000).
``OTEL_METRIC_EXPORT_TIMEOUT``
    Milliseconds one periodic collect-and-export may take (default 30000).
``OTEL_EXPORTER_OTLP_METRICS_TIMEOUT`` / ``OTEL_EXPORTER_OTLP_TIMEOUT``
    Seconds one OTLP request may take, retries included (default 10), read the
    way the Python OTLP exporter reads them. Exports run on the reader's
    thread: a dead collector delays the next export, never a training step.
``METRIC_CATALOG_SHUTDOWN_TIMEOUT``
    Seconds the final flush at exit may take (default 5), so a dead collector
    cannot hang the end of a run.

A bad setting is reported once as a :class:`~metric_catalog._warn.MetricCatalogWarning`
and disables export; it never raises into training code. Tests and embedders
call :func:`configure` with their own provider instead.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import json
import os
import re
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from metric_catalog import identity
from metric_catalog._warn import _reset_for_tests as _warn_reset_for_tests
from metric_catalog._warn import warn_once

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricExporter

__all__ = [
    "DEFAULT_PROMETHEUS_PORT",
    "DEFAULT_PROMETHEUS_PORT_SPAN",
    "ENV_EXPORTER",
    "ENV_EXPORT_INTERVAL",
    "ENV_EXPORT_TIMEOUT",
    "ENV_OTLP_ENDPOINT",
    "ENV_OTLP_METRICS_ENDPOINT",
    "ENV_OTLP_METRICS_TIMEOUT",
    "ENV_OTLP_TIMEOUT",
    "ENV_PROMETHEUS_HOST",
    "ENV_PROMETHEUS_PORT",
    "ENV_PROMETHEUS_PORT_SPAN",
    "ENV_PROMETHEUS_SD_DIR",
    "ENV_PROMETHEUS_SD_HOST",
    "ENV_SHUTDOWN_TIMEOUT",
    "EXPORTER_NAMES",
    "ExporterConfig",
    "ExporterConfigError",
    "PrometheusPortsTakenError",
    "configure",
    "get_meter_provider",
    "prometheus_address",
    "prometheus_ports",
    "prometheus_sd_file",
    "promoted_identity",
    "provider_generation",
    "provider_started",
    "reset_for_tests",
    "shutdown",
]

ENV_EXPORTER: Final = "OTEL_METRICS_EXPORTER"
"""Which exporters to start; see the module docstring."""
ENV_OTLP_ENDPOINT: Final = "OTEL_EXPORTER_OTLP_ENDPOINT"
"""Base URL of the OTLP/HTTP collector; ``/v1/metrics`` is appended."""
ENV_OTLP_METRICS_ENDPOINT: Final = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
"""Full URL of the OTLP/HTTP metrics endpoint, used as given."""
ENV_PROMETHEUS_HOST: Final = "METRIC_CATALOG_PROMETHEUS_HOST"
"""Bind address of the Prometheus scrape endpoint."""
ENV_PROMETHEUS_PORT: Final = "METRIC_CATALOG_PROMETHEUS_PORT"
"""Port of the Prometheus scrape endpoint (``0``: any free port)."""
ENV_PROMETHEUS_PORT_SPAN: Final = "METRIC_CATALOG_PROMETHEUS_PORT_SPAN"
"""How many ports from the base port the processes of one node may take."""
ENV_PROMETHEUS_SD_DIR: Final = "METRIC_CATALOG_PROMETHEUS_SD_DIR"
"""Folder for Prometheus file-based service-discovery target files, one per process."""
ENV_PROMETHEUS_SD_HOST: Final = "METRIC_CATALOG_PROMETHEUS_SD_HOST"
"""Host announced in the target file (default: bind address, or the host name)."""
ENV_EXPORT_INTERVAL: Final = "OTEL_METRIC_EXPORT_INTERVAL"
"""Push interval of the periodic exporters, in milliseconds."""
ENV_EXPORT_TIMEOUT: Final = "OTEL_METRIC_EXPORT_TIMEOUT"
"""Bound on one periodic collect-and-export, in milliseconds."""
ENV_OTLP_TIMEOUT: Final = "OTEL_EXPORTER_OTLP_TIMEOUT"
"""Bound on one OTLP request with its retries, in seconds (as the Python exporter reads it)."""
ENV_OTLP_METRICS_TIMEOUT: Final = "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT"
"""Like ``OTEL_EXPORTER_OTLP_TIMEOUT``, for metrics only; wins over it."""
ENV_SHUTDOWN_TIMEOUT: Final = "METRIC_CATALOG_SHUTDOWN_TIMEOUT"
"""Upper bound, in seconds, on the flush at shutdown."""

EXPORTER_NAMES: Final[tuple[str, ...]] = ("none", "prometheus", "otlp", "console")
"""Values ``OTEL_METRICS_EXPORTER`` accepts."""
DEFAULT_PROMETHEUS_PORT: Final = 9464
"""The OpenTelemetry specification's default Prometheus exporter port."""
DEFAULT_PROMETHEUS_PORT_SPAN: Final = 32
"""Ports from the base port tried per node: room for 8 GPUs' trainers, generators and more."""

_DEFAULT_OTLP_BASE: Final = "http://localhost:4318"
_DEFAULT_INTERVAL_MS: Final = 60_000.0
_DEFAULT_EXPORT_TIMEOUT_MS: Final = 30_000.0
_DEFAULT_OTLP_TIMEOUT_S: Final = 10.0
_DEFAULT_SHUTDOWN_TIMEOUT_S: Final = 5.0
_SERVICE_NAME: Final = "metric-catalog"


class ExporterConfigError(ValueError):
    """An exporter setting (environment variable or argument) is invalid."""


@dataclass(frozen=True, slots=True)
class ExporterConfig:
    """Resolved exporter settings; :meth:`from_env` reads them the OpenTelemetry way."""

    exporters: tuple[str, ...] = ()
    """Exporter names to start; empty means disabled."""
    otlp_endpoint: str = _DEFAULT_OTLP_BASE + "/v1/metrics"
    """Full OTLP/HTTP metrics URL, path included."""
    prometheus_host: str = "127.0.0.1"
    """Bind address of the Prometheus scrape endpoint."""
    prometheus_port: int = DEFAULT_PROMETHEUS_PORT
    """Port of the Prometheus scrape endpoint; ``0`` picks a free one."""
    export_interval_millis: float = _DEFAULT_INTERVAL_MS
    """Push interval of the ``otlp`` and ``console`` exporters."""
    shutdown_timeout: float = _DEFAULT_SHUTDOWN_TIMEOUT_S
    """Seconds :func:`shutdown` may spend flushing."""
    prometheus_port_span: int = DEFAULT_PROMETHEUS_PORT_SPAN
    """Ports ``prometheus_port .. + span - 1`` a process may take, ``+ LOCAL_RANK`` first."""
    prometheus_sd_dir: str = ""
    """Folder of Prometheus file-SD target files; ``""`` writes none."""
    prometheus_sd_host: str = ""
    """Host announced in the target file; ``""``: the bind address or the host name."""
    export_timeout_millis: float = _DEFAULT_EXPORT_TIMEOUT_MS
    """Bound on one periodic collect-and-export of the ``otlp`` and ``console`` readers."""
    otlp_timeout: float = _DEFAULT_OTLP_TIMEOUT_S
    """Seconds one OTLP request may take, retries included."""

    @property
    def enabled(self) -> bool:
        """Whether any exporter is configured."""
        return bool(self.exporters)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ExporterConfig:
        """Read the settings from ``environ`` (default ``os.environ``).

        Raises:
            ExporterConfigError: An unknown exporter name, ``none`` combined with
                another exporter, or a malformed number; the message names the
                variable.
        """
        env = os.environ if environ is None else environ
        exporters = _exporter_names(env)

        endpoint = env.get(ENV_OTLP_METRICS_ENDPOINT, "").strip()
        if not endpoint:
            base = env.get(ENV_OTLP_ENDPOINT, "").strip() or _DEFAULT_OTLP_BASE
            endpoint = base.rstrip("/") + "/v1/metrics"

        host = (
            env.get(ENV_PROMETHEUS_HOST, "").strip()
            or env.get("OTEL_EXPORTER_PROMETHEUS_HOST", "").strip()
            or "127.0.0.1"
        )
        port, port_var = _prometheus_port(env)
        interval = _DEFAULT_INTERVAL_MS
        if env.get(ENV_EXPORT_INTERVAL, "").strip():
            interval = _number(env, ENV_EXPORT_INTERVAL, minimum=1.0)
        timeout = _DEFAULT_SHUTDOWN_TIMEOUT_S
        if env.get(ENV_SHUTDOWN_TIMEOUT, "").strip():
            timeout = _number(env, ENV_SHUTDOWN_TIMEOUT, minimum=0.0)
        span = _port_span(env)
        sd_dir = env.get(ENV_PROMETHEUS_SD_DIR, "").strip()
        if sd_dir and port_var is None:
            port = 0  # announced through the target file, so any free port will do
        export_timeout = _DEFAULT_EXPORT_TIMEOUT_MS
        if env.get(ENV_EXPORT_TIMEOUT, "").strip():
            export_timeout = _number(env, ENV_EXPORT_TIMEOUT, minimum=1.0)
        otlp_timeout = _DEFAULT_OTLP_TIMEOUT_S
        for var in (ENV_OTLP_METRICS_TIMEOUT, ENV_OTLP_TIMEOUT):
            if env.get(var, "").strip():
                otlp_timeout = _number(env, var, minimum=0.001)
                break
        return cls(
            exporters,
            endpoint,
            host,
            port,
            interval,
            timeout,
            prometheus_port_span=span,
            prometheus_sd_dir=sd_dir,
            prometheus_sd_host=env.get(ENV_PROMETHEUS_SD_HOST, "").strip(),
            export_timeout_millis=export_timeout,
            otlp_timeout=otlp_timeout,
        )


def _exporter_names(env: Mapping[str, str]) -> tuple[str, ...]:
    """The exporters ``METRIC_CATALOG_EXPORTER`` names, each once (``none``: none)."""
    raw = env.get(ENV_EXPORTER, "none")
    names = tuple(dict.fromkeys(n.strip().lower() for n in raw.split(",") if n.strip()))
    unknown = [n for n in names if n not in EXPORTER_NAMES]
    if unknown:
        msg = (
            f"{ENV_EXPORTER}={raw!r}: unknown exporter {unknown[0]!r}; "
            f"use one or more of {', '.join(EXPORTER_NAMES)}"
        )
        raise ExporterConfigError(msg)
    if "none" in names and len(names) > 1:
        msg = f"{ENV_EXPORTER}={raw!r}: 'none' cannot be combined with other exporters"
        raise ExporterConfigError(msg)
    return tuple(n for n in names if n != "none")


def _prometheus_port(env: Mapping[str, str]) -> tuple[int, str | None]:
    """The Prometheus port and the variable that set it (``None``: the default port)."""
    port_var = ENV_PROMETHEUS_PORT if env.get(ENV_PROMETHEUS_PORT, "").strip() else None
    if port_var is None and env.get("OTEL_EXPORTER_PROMETHEUS_PORT", "").strip():
        port_var = "OTEL_EXPORTER_PROMETHEUS_PORT"
    if port_var is None:
        return DEFAULT_PROMETHEUS_PORT, None
    port = int(_number(env, port_var, minimum=0))
    if port > 65535 or port != float(env[port_var]):
        msg = f"{port_var}={env[port_var]!r}: expected a port number 0-65535"
        raise ExporterConfigError(msg)
    return port, port_var


def _port_span(env: Mapping[str, str]) -> int:
    """How many ports from the Prometheus port a process may try (a whole number 1-65535)."""
    if not env.get(ENV_PROMETHEUS_PORT_SPAN, "").strip():
        return DEFAULT_PROMETHEUS_PORT_SPAN
    span = int(_number(env, ENV_PROMETHEUS_PORT_SPAN, minimum=1.0))
    if span != float(env[ENV_PROMETHEUS_PORT_SPAN]) or span > 65535:
        msg = (
            f"{ENV_PROMETHEUS_PORT_SPAN}={env[ENV_PROMETHEUS_PORT_SPAN]!r}: "
            "expected a whole number of ports 1-65535"
        )
        raise ExporterConfigError(msg)
    return span


def _number(env: Mapping[str, str], var: str, *, minimum: float) -> float:
    raw = env[var]
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= minimum or value == float("inf"):  # also rejects NaN
        msg = f"{var}={raw!r}: expected a finite number >= {minimum:g}"
        raise ExporterConfigError(msg) from None
    return value


@dataclass(slots=True)
class _State:
    """What this process exports through; ``provider`` is ``None`` when disabled."""

    pid: int
    provider: MeterProvider | None
    owned: bool  # created here, so shut down here; a configure()d provider is the caller's
    shutdown_timeout: float = _DEFAULT_SHUTDOWN_TIMEOUT_S
    http_server: Any = None  # prometheus_client's WSGI server, when we started one
    sd_file: str | None = None  # the file-SD target file this process wrote
    promoted: Mapping[str, Any] = field(default_factory=dict)  # identity on every point


class _Process:
    """Everything this module remembers process-wide: the one instance is ``_PROCESS``.

    Mutated in place (never rebound), so no function needs a ``global``; a
    forked child resets it with :meth:`after_fork`.
    """

    __slots__ = (
        "atexit_registered",
        "bound_class",
        "counter_lock",
        "failures",
        "generation",
        "in_flight",
        "lock",
        "state",
    )

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.state: _State | None = None  # None: not resolved yet in this process
        self.atexit_registered = False
        # Bumped whenever the provider changes, so a metric group built concurrently
        # on the old provider is not cached (see otel.ensure_metric_group_registered).
        self.generation = 0
        # The exporter wrapper class, built lazily to keep the SDK import lazy.
        self.bound_class: Callable[[MetricExporter, str], MetricExporter] | None = None
        self.counter_lock = threading.Lock()  # guards in_flight and failures
        self.in_flight = 0  # exports running now; one still running after shutdown was cut off
        self.failures = 0  # failed exports so far; one during shutdown: the final flush was lost

    def after_fork(self) -> _State | None:
        """Reset what the parent's threads may hold; return the parent's state, forgotten."""
        self.lock = threading.RLock()  # another thread may have held it at fork time
        self.counter_lock = threading.Lock()
        self.in_flight = 0  # the parent's exports are not the child's
        state, self.state = self.state, None
        return state


_PROCESS = _Process()


def provider_generation() -> int:
    """A number that changes whenever the process's provider is replaced or shut down."""
    return _PROCESS.generation


def provider_started() -> bool:
    """Whether this process has built (or been given) a live provider it exports through."""
    state = _PROCESS.state
    return state is not None and state.pid == os.getpid() and state.provider is not None


def get_meter_provider() -> MeterProvider | None:
    """The process's provider, created from the environment on first use.

    Returns ``None`` when export is disabled (``OTEL_METRICS_EXPORTER=none``,
    the default), misconfigured, or already shut down; the reason was warned
    once. Never raises.
    """
    state = _PROCESS.state
    if state is not None and state.pid == os.getpid():
        return state.provider
    with _PROCESS.lock:
        state = _PROCESS.state
        if state is None or state.pid != os.getpid():
            state = _resolve_from_env()
        return state.provider


def _resolve_from_env() -> _State:
    try:
        config = ExporterConfig.from_env()
    except ExporterConfigError as exc:
        warn_once(("exporter-config", str(exc)), f"metric export disabled: {exc}")
        config = ExporterConfig()
    state = _build(config)
    _PROCESS.state = state
    return state


def _build(config: ExporterConfig) -> _State:
    pid = os.getpid()
    if not config.enabled:
        return _State(pid, None, owned=False, shutdown_timeout=config.shutdown_timeout)
    worker = identity.resource_attributes()
    promoted = identity.promoted_attributes(worker)
    try:
        provider, server = _create_provider(config, worker)
    except Exception as exc:  # noqa: BLE001 - SDK missing, port taken: disable, don't crash
        warn_once(
            ("exporter-setup", type(exc).__name__, str(exc)),
            f"metric export disabled: could not start exporter(s) "
            f"{', '.join(config.exporters)}: {type(exc).__name__}: {exc}"
            + ("; pip install 'metric-catalog[otel]'" if isinstance(exc, ImportError) else ""),
        )
        return _State(pid, None, owned=False, shutdown_timeout=config.shutdown_timeout)
    sd_file = None
    if server is not None and config.prometheus_sd_dir:
        sd_file = _write_sd_file(config, server, worker, promoted)
    _register_atexit()
    return _State(
        pid,
        provider,
        owned=True,
        shutdown_timeout=config.shutdown_timeout,
        http_server=server,
        sd_file=sd_file,
        promoted=promoted,
    )


def _create_provider(
    config: ExporterConfig, worker: Mapping[str, identity.AttributeValue]
) -> tuple[MeterProvider, Any]:
    # The SDK is imported here, not at module level: importing it costs ~70 ms.
    from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider  # noqa: PLC0415
    from opentelemetry.sdk.metrics import export as sdk_export  # noqa: PLC0415
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource  # noqa: PLC0415

    readers: list[sdk_export.MetricReader] = []
    server: Any = None
    try:
        for name in config.exporters:
            if name == "prometheus":
                reader, server = _prometheus_reader(config, worker)
                readers.append(reader)
                continue
            exporter: MetricExporter
            if name == "otlp":
                from opentelemetry.exporter.otlp.proto.http import metric_exporter  # noqa: PLC0415

                # The timeout bounds one background export with its retries; shutdown()
                # has its own, shorter bound.
                exporter = metric_exporter.OTLPMetricExporter(
                    endpoint=config.otlp_endpoint, timeout=config.otlp_timeout
                )
                label = f"OTLP collector {config.otlp_endpoint}"
            else:
                # The current stdout, not the one bound when the SDK was imported.
                exporter = sdk_export.ConsoleMetricExporter(out=sys.stdout)
                label = "console"
            readers.append(
                sdk_export.PeriodicExportingMetricReader(
                    _process_bound(exporter, label),
                    export_interval_millis=config.export_interval_millis,
                    export_timeout_millis=config.export_timeout_millis,
                )
            )
        # The identity already holds OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME,
        # with explicit settings winning over detected ones.
        resource = Resource.create(dict(worker))
        if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
            resource = resource.merge(Resource({SERVICE_NAME: _SERVICE_NAME}))
        provider = MeterProvider(
            metric_readers=readers,
            resource=resource,
            # No traces to link exemplars to; skipping them saves ~0.2 us per record.
            exemplar_filter=AlwaysOffExemplarFilter(),
            # Our own atexit hook shuts down with a bound; the SDK's would not.
            shutdown_on_exit=False,
        )
    except BaseException:
        # Undo a half-built setup: a periodic reader's thread would tick forever.
        _stop_server(server)
        for reader in readers:
            with contextlib.suppress(Exception):
                reader.shutdown(timeout_millis=100)
        raise
    return provider, server


def prometheus_ports(config: ExporterConfig, local_rank: int = 0) -> list[int]:
    """The ports a process with ``local_rank`` tries, in order (``[0]``: any free port).

    ``base + local_rank`` first, then the rest of ``base .. base + span - 1``
    in turn (wrapping), without ports above 65535.
    """
    base, span = config.prometheus_port, config.prometheus_port_span
    if base == 0:
        return [0]
    span = max(1, min(span, 65536 - base))
    first = local_rank % span
    return [base + (first + i) % span for i in range(span)]


class PrometheusPortsTakenError(OSError):
    """Every port a process may take for its Prometheus endpoint is in use."""


def _prometheus_reader(
    config: ExporterConfig, worker: Mapping[str, identity.AttributeValue]
) -> tuple[Any, Any]:
    from opentelemetry.exporter.prometheus import PrometheusMetricReader  # noqa: PLC0415
    from prometheus_client import CollectorRegistry, start_http_server  # noqa: PLC0415

    # An int from LOCAL_RANK, or a string when OTEL_RESOURCE_ATTRIBUTES sets it.
    local_rank = str(worker.get("local_rank", 0)).strip()
    rank = int(local_rank) if local_rank.isdigit() else 0
    ports = prometheus_ports(config, rank)
    # A private registry: the global one would also expose python_gc_* etc. and
    # would clash when a test builds a second reader in the same process.
    registry = CollectorRegistry()
    reader = PrometheusMetricReader(scope_info_enabled=False, registry=registry)
    for port in ports:
        try:
            server, _thread = start_http_server(
                port, addr=config.prometheus_host, registry=registry
            )
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            continue
        return reader, server
    where = f"{config.prometheus_host}:{ports[0]}"
    if len(ports) > 1:
        where = f"{config.prometheus_host} ports {min(ports)}-{max(ports)}"
    msg = (
        f"{where}: Address already in use (LOCAL_RANK {rank}, {len(ports)} port(s) tried); "
        f"another process holds it: give each process its own port with "
        f"{ENV_PROMETHEUS_SD_DIR}=<folder Prometheus watches> (free port, announced in a "
        f"target file), or set {ENV_PROMETHEUS_PORT} / {ENV_PROMETHEUS_PORT_SPAN} to a free range"
    )
    raise PrometheusPortsTakenError(errno.EADDRINUSE, msg)


def _announced_host(config: ExporterConfig) -> str:
    if config.prometheus_sd_host:
        return config.prometheus_sd_host
    host = config.prometheus_host
    if host in ("", "0.0.0.0", "::"):
        return socket.gethostname()
    return host


def _write_sd_file(
    config: ExporterConfig,
    server: Any,
    worker: Mapping[str, identity.AttributeValue],
    promoted: Mapping[str, Any],
) -> str | None:
    """Announce the endpoint in ``<sd dir>/metric-catalog-<host>-<pid>.json``; never raises.

    The labels are the worker's identity, except promoted attributes (every
    series carries those already; a target label of the same name would turn
    them into ``exported_*``).
    """
    port = int(server.server_address[1])
    host = _announced_host(config)
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    labels = {
        identity.label_name(name): str(value)
        for name, value in worker.items()
        if name not in promoted and identity.label_name(name) not in ("job", "instance")
    }
    folder = Path(config.prometheus_sd_dir)
    node = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname()) or "host"
    path = folder / f"metric-catalog-{node}-{os.getpid()}.json"
    tmp = folder / f".{path.name}.tmp"  # not *.json: Prometheus never reads it half-written
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_text(
            json.dumps([{"targets": [target], "labels": labels}], indent=2, sort_keys=True) + "\n",
            encoding="utf-8",
        )
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        warn_once(
            ("sd-file", str(folder)),
            f"metric export: could not write the Prometheus target file in {folder} "
            f"({ENV_PROMETHEUS_SD_DIR}): {exc}; the endpoint {target} serves, but Prometheus "
            "will not discover it",
        )
        return None
    return str(path)


def _remove_sd_file(path: str | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _stop_server(server: Any) -> None:
    if server is None:
        return
    try:
        server.shutdown()
        server.server_close()
    except Exception:  # noqa: BLE001 - best effort at teardown
        return


def _count_in_flight(delta: int) -> None:
    with _PROCESS.counter_lock:
        _PROCESS.in_flight += delta


def _count_failure() -> None:
    with _PROCESS.counter_lock:
        _PROCESS.failures += 1


def _process_bound(inner: MetricExporter, label: str) -> MetricExporter:
    """Wrap ``inner`` so it exports only from the process that created it.

    The SDK restarts a periodic reader's thread in a forked child, which would
    then push a stale copy of the parent's series forever; the wrapper turns
    those exports into no-ops. It also turns an export failure (collector down)
    into one warning, on top of the SDK's own log line per failure.
    """
    if _PROCESS.bound_class is None:
        from opentelemetry.sdk.metrics import export as sdk_export  # noqa: PLC0415

        class _ProcessBoundExporter(sdk_export.MetricExporter):
            def __init__(self, inner: sdk_export.MetricExporter, label: str) -> None:
                super().__init__(
                    # The reader asks its exporter for these; pass the inner's through.
                    preferred_temporality=getattr(inner, "_preferred_temporality", None),
                    preferred_aggregation=getattr(inner, "_preferred_aggregation", None),
                )
                self._inner = inner
                self._label = label
                self._pid = os.getpid()

            def export(
                self,
                metrics_data: sdk_export.MetricsData,
                timeout_millis: float = 10_000,
                **kwargs: Any,
            ) -> sdk_export.MetricExportResult:
                if os.getpid() != self._pid:
                    return sdk_export.MetricExportResult.SUCCESS
                _count_in_flight(+1)
                try:
                    result = self._inner.export(metrics_data, timeout_millis=timeout_millis)
                except Exception as exc:  # noqa: BLE001 - reported once, not raised
                    _count_failure()
                    warn_once(
                        ("export-error", self._label, type(exc).__name__),
                        f"metric export to {self._label} raised {type(exc).__name__}: {exc}",
                    )
                    return sdk_export.MetricExportResult.FAILURE
                finally:
                    _count_in_flight(-1)
                if result is not sdk_export.MetricExportResult.SUCCESS:
                    _count_failure()
                    warn_once(
                        ("export-failed", self._label),
                        f"metric export to {self._label} failed; training continues and "
                        "later exports retry (reported once per process)",
                    )
                return result

            def force_flush(self, timeout_millis: float = 10_000) -> bool:
                return self._inner.force_flush(timeout_millis=timeout_millis)

            def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
                if os.getpid() == self._pid:
                    self._inner.shutdown(timeout_millis=timeout_millis)

        _PROCESS.bound_class = _ProcessBoundExporter
    return _PROCESS.bound_class(inner, label)


def configure(
    meter_provider: MeterProvider | None = None,
    *,
    config: ExporterConfig | None = None,
) -> MeterProvider | None:
    """Replace the process's provider, for tests and embedding.

    With ``meter_provider``, the tee records into it; the caller owns it and
    shuts it down. Otherwise a provider is built from ``config`` (default: the
    environment) and owned here. A provider this module created earlier is shut
    down first. The instruments are rebuilt on the next tee.

    Returns the provider now in use, or ``None`` when export is disabled.

    Raises:
        ExporterConfigError: ``config`` is ``None`` and the environment is invalid.
    """
    with _PROCESS.lock:
        _shutdown_locked(None)
        if meter_provider is not None:
            promoted = identity.promoted_attributes()
            state = _State(os.getpid(), meter_provider, owned=False, promoted=promoted)
        else:
            state = _build(config if config is not None else ExporterConfig.from_env())
        _PROCESS.state = state
        _invalidate_instruments()
        return state.provider


def shutdown(timeout: float | None = None) -> bool:
    """Flush and stop the provider this module created, within ``timeout`` seconds.

    ``timeout`` defaults to ``METRIC_CATALOG_SHUTDOWN_TIMEOUT`` (5 s). The flush
    runs on a helper thread that is abandoned when the bound passes, so a dead
    collector costs at most ``timeout`` at the end of a run. Export stays off
    afterwards (the tee is a no-op) until :func:`configure` is called. Runs at
    interpreter exit. Returns whether the flush finished in time. Never raises.
    """
    with _PROCESS.lock:
        done = _shutdown_locked(timeout)
        _PROCESS.state = _State(os.getpid(), None, owned=False)
        _invalidate_instruments()
        return done


def _shutdown_locked(timeout: float | None) -> bool:
    state = _PROCESS.state
    if state is None or state.pid != os.getpid() or not state.owned or state.provider is None:
        return True
    bound = state.shutdown_timeout if timeout is None else timeout
    provider = state.provider
    outcome: list[BaseException | None] = []

    def flush() -> None:
        try:
            provider.shutdown(timeout_millis=bound * 1000)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome.append(exc)

    failures_before = _PROCESS.failures
    worker = threading.Thread(target=flush, name="metric-catalog-shutdown", daemon=True)
    worker.start()
    _remove_sd_file(state.sd_file)  # first: Prometheus stops scraping a leaving worker
    worker.join(bound + 0.25)  # the SDK honours the bound loosely; this is the hard stop
    _stop_server(state.http_server)
    # The SDK abandons an export that outlives the bound and still reports success.
    if not outcome or _PROCESS.in_flight > 0:
        warn_once(
            ("shutdown-timeout",),
            f"metric export: the final flush did not finish within {bound:g} s "
            f"({ENV_SHUTDOWN_TIMEOUT}); the collector may be down, remaining points are dropped",
        )
        return False
    if outcome[0] is not None:
        warn_once(
            ("shutdown-error", type(outcome[0]).__name__),
            f"metric export: shutdown failed: {type(outcome[0]).__name__}: {outcome[0]}",
        )
        return False
    if failures_before < _PROCESS.failures:
        warn_once(
            ("shutdown-export-failed",),
            "metric export: the final flush failed; the collector may be down, "
            "remaining points are dropped",
        )
        return False
    return True


def prometheus_address() -> tuple[str, int] | None:
    """``(host, port)`` the Prometheus endpoint listens on in this process, if one runs."""
    state = _PROCESS.state
    if state is None or state.http_server is None or state.pid != os.getpid():
        return None
    host, port = state.http_server.server_address[:2]
    return str(host), int(port)


def prometheus_sd_file() -> str | None:
    """The file-SD target file this process announced its endpoint in, if any."""
    state = _PROCESS.state
    if state is None or state.pid != os.getpid():
        return None
    return state.sd_file


def promoted_identity() -> Mapping[str, Any]:
    """Identity attributes to add to every point (``METRIC_CATALOG_PROMOTE``); ``{}`` if none.

    Resolved with the provider: from the environment on the first tee, or when
    :func:`configure` is called (with a caller's provider too).
    """
    state = _PROCESS.state
    if state is None or state.pid != os.getpid():
        get_meter_provider()
        state = _PROCESS.state
    return {} if state is None else state.promoted


def reset_for_tests() -> None:
    """Shut down an owned provider and forget all exporter and instrument state.

    Also forgets which warnings were issued. For test isolation only: the next
    tee resolves the environment again.
    """
    with _PROCESS.lock:
        _shutdown_locked(None)
        _PROCESS.state = None
        _invalidate_instruments()
    _warn_reset_for_tests()


def _invalidate_instruments(*, after_fork: bool = False) -> None:
    # Instruments belong to a provider; the next tee rebuilds them on the new one.
    _PROCESS.generation += 1
    otel = sys.modules.get("metric_catalog.otel")
    if otel is not None:
        otel._invalidate_group(after_fork=after_fork)


def _register_atexit() -> None:
    if not _PROCESS.atexit_registered:
        atexit.register(_shutdown_at_exit)
        _PROCESS.atexit_registered = True


def _shutdown_at_exit() -> None:
    # A forked child inherits the handler but not the right to flush the parent's data.
    state = _PROCESS.state
    if state is not None and state.pid == os.getpid() and state.owned:
        shutdown()


def _after_fork_in_child() -> None:
    # Forget the parent's provider: the child builds its own on its first tee. The
    # listening socket is the parent's to serve; close our copy of the descriptor.
    state = _PROCESS.after_fork()
    if state is not None and state.http_server is not None:
        with contextlib.suppress(Exception):  # nothing useful to do about it in a fork hook
            state.http_server.socket.close()
    _invalidate_instruments(after_fork=True)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
