"""Names a series is known by downstream: Python constant and Prometheus name.

The Prometheus mapping mirrors what ``opentelemetry-exporter-prometheus`` does
(case folded by the SDK, runs of invalid characters to ``_``, unit suffix from
the UCUM mapping, ``_total`` for monotonic counters), so the catalog can check
collisions and dashboards can query the series before anything is exported.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from metric_catalog.vocabulary import METRIC_NAME_PREFIX, registry_key

__all__ = ["constant_name", "prometheus_base", "prometheus_name", "prometheus_unit"]

_INVALID_NAME_CHARS: Final = re.compile(r"[^a-zA-Z0-9:]+")
_ANNOTATION: Final = re.compile(r"\{.*\}")

# UCUM and SI units to the words Prometheus uses (the OpenTelemetry compatibility spec).
_UNIT_WORDS: Final[dict[str, str]] = {
    "d": "days",
    "h": "hours",
    "min": "minutes",
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "ns": "nanoseconds",
    "By": "bytes",
    "KiBy": "kibibytes",
    "MiBy": "mebibytes",
    "GiBy": "gibibytes",
    "TiBy": "tibibytes",
    "KBy": "kilobytes",
    "MBy": "megabytes",
    "GBy": "gigabytes",
    "TBy": "terabytes",
    "m": "meters",
    "V": "volts",
    "A": "amperes",
    "J": "joules",
    "W": "watts",
    "g": "grams",
    "Cel": "celsius",
    "Hz": "hertz",
    "1": "",
    "%": "percent",
}
_PER_UNIT_WORDS: Final[dict[str, str]] = {
    "s": "second",
    "m": "minute",
    "h": "hour",
    "d": "day",
    "w": "week",
    "mo": "month",
    "y": "year",
}


# Renderers, lints and cross-file checks ask for each row's names many times over;
# both derivations are pure functions of strings, so they are computed once per input.
_NAME_CACHE_SIZE: Final = 1 << 16


def constant_name(series_name: str, namespace: str = METRIC_NAME_PREFIX) -> str:
    """The generated Python constant for a series (``rl.reward.mean`` -> ``REWARD_MEAN``),
    its registry key in capitals (``namespace`` as :func:`registry_key` takes it)."""
    return _constant_name(series_name, namespace)


@functools.lru_cache(maxsize=_NAME_CACHE_SIZE)
def _constant_name(series_name: str, namespace: str) -> str:
    return registry_key(series_name, namespace).upper()


def _sanitize(text: str) -> str:
    return _INVALID_NAME_CHARS.sub("_", text)


def prometheus_unit(unit: str) -> str:
    """Suffix Prometheus gives a UCUM unit (``s`` -> ``seconds``, ``{token}`` -> none)."""
    bare = _ANNOTATION.sub("", unit)
    if bare in _UNIT_WORDS:
        return _UNIT_WORDS[bare]
    top, sep, bottom = bare.partition("/")
    if sep and _sanitize(bottom):
        top_word = _UNIT_WORDS.get(_sanitize(top), _sanitize(top))
        bottom_word = _PER_UNIT_WORDS.get(_sanitize(bottom), _sanitize(bottom))
        return f"{top_word}_per_{bottom_word}" if top_word else f"per_{bottom_word}"
    return _sanitize(bare).strip("_")


def prometheus_name(series_name: str, kind: str, unit: str) -> str:
    """The metric family name a Prometheus scrape shows for a series.

    Histograms expose it with ``_bucket``, ``_count`` and ``_sum`` appended.
    """
    return _prometheus_name(series_name, kind, unit)


def prometheus_base(series_name: str) -> str:
    """A series name as a Prometheus name, before the unit and ``_total`` suffixes."""
    name = _sanitize(series_name.lower())
    return "_" + name[1:] if name[:1].isdigit() else name


@functools.lru_cache(maxsize=_NAME_CACHE_SIZE)
def _prometheus_name(series_name: str, kind: str, unit: str) -> str:
    name = prometheus_base(series_name)
    suffix = prometheus_unit(unit)
    if suffix and not name.endswith("_" + suffix):
        name = f"{name}_{suffix}"
    if kind == "counter" and not name.endswith("_total"):
        name = f"{name}_total"
    return name
