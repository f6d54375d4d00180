"""Who this process is among many workers: the identity its series carry.

A training run is many processes (torchrun ranks, Ray actors for policy and
generation workers) on many nodes. Each process exports its own series; the
identity tells them apart. :func:`resource_attributes` collects it, standard
library only, from (later sources win):

1. the launcher: ``RANK``, ``LOCAL_RANK`` and ``WORLD_SIZE`` (set by torchrun,
   ``torch.distributed.launch`` and Ray Train) as the int attributes ``rank``,
   ``local_rank`` and ``world_size``;
2. Ray, only when ``ray`` is already imported and initialised in this process
   (this module never imports it): ``ray.node.id``, ``ray.job.id`` and, inside
   an actor, ``ray.actor.id`` and ``ray.actor.class``;
3. ``OTEL_RESOURCE_ATTRIBUTES`` (``key=value,key2=value2``, percent-encoded
   values) and ``OTEL_SERVICE_NAME`` (as ``service.name``), the OpenTelemetry way;
4. :func:`set_worker_identity`, called by the worker itself (a Ray actor that
   receives its rank in its constructor).

The identity becomes the OpenTelemetry resource of the process's provider, so
it reaches an OTLP collector on every point and Prometheus on ``target_info``.
``METRIC_CATALOG_PROMOTE`` (e.g. ``rank,local_rank``) promotes chosen identity
attributes to attributes of every point, so ``rl_entropy{rank="3"}`` works
without a ``group_left`` join; see :func:`promoted_attributes`. A promoted
attribute is the same on every point of a process, so it adds no attribute set
to a series' cardinality budget.

Identity is read when the provider is built (the first tee): set it before then.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import threading
import urllib.parse
from collections.abc import Mapping
from typing import Final

from metric_catalog._warn import warn_once

__all__ = [
    "ENV_LOCAL_RANK",
    "ENV_PROMOTE",
    "ENV_RANK",
    "ENV_WORLD_SIZE",
    "LAUNCHER_ATTRIBUTES",
    "RAY_ATTRIBUTES",
    "AttributeValue",
    "label_name",
    "launcher_attributes",
    "parse_resource_attributes",
    "promoted_attributes",
    "promoted_names",
    "ray_attributes",
    "resource_attributes",
    "set_worker_identity",
    "worker_label",
]

AttributeValue = str | int | float | bool
"""What an identity attribute holds."""

ENV_RANK: Final = "RANK"
"""Global rank of the process, set by the launcher (torchrun)."""
ENV_LOCAL_RANK: Final = "LOCAL_RANK"
"""Rank of the process on its node, set by the launcher; picks the Prometheus port."""
ENV_WORLD_SIZE: Final = "WORLD_SIZE"
"""Number of processes in the job, set by the launcher."""
ENV_PROMOTE: Final = "METRIC_CATALOG_PROMOTE"
"""Comma-separated identity attribute names added to every point (e.g. ``rank,local_rank``)."""

LAUNCHER_ATTRIBUTES: Final[Mapping[str, str]] = {
    ENV_RANK: "rank",
    ENV_LOCAL_RANK: "local_rank",
    ENV_WORLD_SIZE: "world_size",
}
"""Launcher environment variable -> identity attribute."""

RAY_ATTRIBUTES: Final[tuple[str, ...]] = (
    "ray.node.id",
    "ray.job.id",
    "ray.actor.id",
    "ray.actor.class",
)
"""Identity attributes read from Ray's runtime context when Ray is running."""

_LOCK = threading.Lock()
_EXPLICIT: dict[str, AttributeValue] = {}
_LABEL_RE: Final = re.compile(r"[^a-zA-Z0-9_]")


def launcher_attributes(environ: Mapping[str, str] | None = None) -> dict[str, int]:
    """``rank``, ``local_rank`` and ``world_size`` from the launcher's variables.

    A variable that is not a non-negative integer is warned once and left out.
    """
    env = os.environ if environ is None else environ
    found: dict[str, int] = {}
    for var, attribute in LAUNCHER_ATTRIBUTES.items():
        raw = env.get(var, "").strip()
        if not raw:
            continue
        if raw.isdigit():
            found[attribute] = int(raw)
        else:
            warn_once(
                ("identity-env", var, raw),
                f"worker identity: {var}={raw!r} is not a non-negative integer; "
                f"{attribute!r} is left out of the identity (fix the launcher's {var})",
            )
    return found


def ray_attributes() -> dict[str, str]:
    """Node, job and actor ids and the actor's class, when Ray runs in this process.

    Reads ``ray`` only when it is already in ``sys.modules`` and initialised;
    never imports it. Outside an actor (the driver, a task) the actor
    attributes are absent. Never raises: an incompatible Ray is warned once.
    """
    ray = sys.modules.get("ray")
    if ray is None:
        return {}
    try:
        if not ray.is_initialized():
            return {}
        context = ray.get_runtime_context()
        found: dict[str, str] = {
            "ray.node.id": str(context.get_node_id()),
            "ray.job.id": str(context.get_job_id()),
        }
        actor_id = context.get_actor_id()
        if actor_id:
            found["ray.actor.id"] = str(actor_id)
            cls = _ray_actor_class(context)
            if cls:
                found["ray.actor.class"] = cls
    except Exception as exc:  # noqa: BLE001 - identity is best effort, never fatal
        warn_once(
            ("identity-ray", type(exc).__name__),
            f"worker identity: reading Ray's runtime context failed: {type(exc).__name__}: "
            f"{exc}; the ray.* attributes are left out",
        )
        return {}
    return found


def _ray_actor_class(context: object) -> str | None:
    # The actor handle knows its class descriptor; Ray has no public getter for it.
    try:
        handle = context.current_actor  # type: ignore[attr-defined]
        descriptor = handle._ray_actor_creation_function_descriptor
        name = str(descriptor.class_name)
    except Exception:  # noqa: BLE001 - an older or newer Ray: leave the class out
        return None
    return name.rsplit(".", 1)[-1] or None


def parse_resource_attributes(raw: str) -> dict[str, str]:
    """``OTEL_RESOURCE_ATTRIBUTES`` as a dict: ``k=v`` pairs, comma-separated, percent-decoded.

    Pairs without ``=`` or with an empty key are skipped, as the SDK does.
    """
    found: dict[str, str] = {}
    for item in raw.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            continue
        found[key] = urllib.parse.unquote(value.strip())
    return found


def set_worker_identity(**attributes: AttributeValue | None) -> None:
    """Set identity attributes from code; they win over every detected source.

    For workers that learn their rank other than from the environment, e.g. a
    Ray actor constructed with ``rank=3``: ``set_worker_identity(rank=3,
    local_rank=1)``. Dotted names pass through a dict:
    ``set_worker_identity(**{"rl.worker.role": "policy"})``. ``None`` removes an
    attribute set earlier. Takes effect when the process's provider is built
    (the first tee); called later, it is warned once and changes nothing until
    :func:`metric_catalog.exporters.configure` builds a new provider.

    Raises:
        TypeError: A value is not a str, int, float or bool.
    """
    for name, value in attributes.items():
        if value is not None and not isinstance(value, (str, int, float, bool)):
            msg = (
                f"set_worker_identity({name}=...): expected str, int, float or bool, "
                f"got {type(value).__name__}"
            )
            raise TypeError(msg)
    with _LOCK:
        for name, value in attributes.items():
            if value is None:
                _EXPLICIT.pop(name, None)
            else:
                _EXPLICIT[name] = value
    exporters = sys.modules.get("metric_catalog.exporters")
    if exporters is not None and exporters.provider_started():
        warn_once(
            ("identity-late", tuple(sorted(attributes))),
            f"set_worker_identity({', '.join(sorted(attributes))}) was called after this "
            "process's exporter started (its first tee), so its series keep the identity "
            "they had; call it before the first tee (in a Ray actor: first thing in __init__)",
        )


def resource_attributes(environ: Mapping[str, str] | None = None) -> dict[str, AttributeValue]:
    """The process's identity: launcher, Ray, ``OTEL_*`` variables, then explicit settings.

    ``service.name`` is present only when ``OTEL_SERVICE_NAME`` or
    ``OTEL_RESOURCE_ATTRIBUTES`` sets it (the exporter supplies a default).
    """
    env = os.environ if environ is None else environ
    found: dict[str, AttributeValue] = {}
    found.update(launcher_attributes(env))
    found.update(ray_attributes())
    found.update(parse_resource_attributes(env.get("OTEL_RESOURCE_ATTRIBUTES", "")))
    service = env.get("OTEL_SERVICE_NAME", "").strip()
    if service:
        found["service.name"] = service
    with _LOCK:
        found.update(_EXPLICIT)
    return found


def promoted_names(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The attribute names ``METRIC_CATALOG_PROMOTE`` lists, deduplicated, in order."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_PROMOTE, "")
    return tuple(dict.fromkeys(n.strip() for n in raw.split(",") if n.strip()))


def promoted_attributes(
    identity: Mapping[str, AttributeValue] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, AttributeValue]:
    """The identity attributes to add to every point, per ``METRIC_CATALOG_PROMOTE``.

    ``identity`` defaults to :func:`resource_attributes`. A promoted name this
    process has no value for is warned once (naming where it would come from)
    and left out.
    """
    names = promoted_names(environ)
    if not names:
        return {}
    source = resource_attributes(environ) if identity is None else identity
    promoted: dict[str, AttributeValue] = {}
    for name in names:
        if name in source:
            promoted[name] = source[name]
            continue
        launcher = [var for var, attr in LAUNCHER_ATTRIBUTES.items() if attr == name]
        hint = (
            f"the launcher sets {launcher[0]}"
            if launcher
            else "set it in OTEL_RESOURCE_ATTRIBUTES or with set_worker_identity()"
        )
        warn_once(
            ("identity-promote", name),
            f"{ENV_PROMOTE}: {name!r} is not part of this process's identity, so no "
            f"point carries it ({hint})",
        )
    return promoted


def label_name(attribute: str) -> str:
    """The Prometheus label for an attribute name: ``ray.node.id`` -> ``ray_node_id``."""
    label = _LABEL_RE.sub("_", attribute)
    return f"_{label}" if label[:1].isdigit() else label


def worker_label(identity: Mapping[str, AttributeValue] | None = None) -> str:
    """A short, file-name-safe name of this worker: ``rank3``, else ``<host>-<pid>``.

    Used where each worker needs its own file (JSONL logs, discovery targets).
    """
    source = resource_attributes() if identity is None else identity
    rank = source.get("rank")
    if rank is not None:
        return f"rank{rank}"
    host = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname()) or "host"
    return f"{host}-{os.getpid()}"


def _reinit_lock_after_fork() -> None:
    global _LOCK  # noqa: PLW0603 - a thread of the parent may have held it at fork time
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reinit_lock_after_fork)


def _reset_for_tests() -> None:
    """Forget identity set with :func:`set_worker_identity`. For test isolation only."""
    with _LOCK:
        _EXPLICIT.clear()
