"""The caps that keep live-check's memory bounded whatever the log holds.

The constants are the defaults; :class:`Limits` carries the values one check
uses (the entry points of :mod:`codegen.live_check` build it from the
package's constants when they are called, so a test may lower one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "MAX_FAMILY_KEYS",
    "MAX_LINE_BYTES",
    "MAX_LOOP_NAMES",
    "MAX_MALFORMED_REPORTED",
    "MAX_OVERLONG_LINES",
    "MAX_REPORTED_FINDINGS",
    "MAX_SKIPPED_BYTES",
    "MAX_TRACKED_VALUES",
    "MAX_UNDECLARED_KEYS",
    "MAX_UNINDEXED_ATTEMPTS",
    "MAX_WORKERS",
    "Limits",
]

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
"""Longer lines are reported malformed and skipped without being held in memory."""

MAX_OVERLONG_LINES: Final = 3
"""An input is abandoned at its this-many-th line longer than :data:`MAX_LINE_BYTES`."""

MAX_SKIPPED_BYTES: Final = 64 * 1024 * 1024
"""A stream (a pipe, a device) is abandoned when one line runs on past this many bytes
without a line break (an endless stream such as ``/dev/zero``): it is not a log. An
overlong line of a regular file is skipped to its end however long, unbuffered."""

MAX_WORKERS: Final = 10_000
"""Distinct workers (an input, or a ``"worker"`` value within one) judged apart; lines
naming later ones are judged as their input's unnamed worker (a hostile log naming a new
worker on every line cannot grow memory a worker at a time)."""

MAX_UNDECLARED_KEYS: Final = 10_000
"""Distinct undeclared ``(prefix, key)`` pairs tracked; later ones are only counted."""

MAX_MALFORMED_REPORTED: Final = 100
"""Malformed lines reported one by one (per worker); later ones are only counted."""

MAX_LOOP_NAMES: Final = 100
"""Distinct loop names a log may give that are tracked; later ones are only counted."""

MAX_FAMILY_KEYS: Final = 50_000
"""Distinct logged ``(prefix, key)`` pairs whose family match is cached."""

MAX_UNINDEXED_ATTEMPTS: Final = 2_000_000
"""Regex attempts of key families no literal head, tail or whole segment indexes (``{x}_{y}``)
against logged keys, in one check (about a microsecond each): past it, keys that would need
another attempt are left unjudged (a note says how many), so many distinct keys against many
such families cannot hang the check."""

MAX_TRACKED_VALUES: Final = 10_000
"""Most distinct values of one open attribute tracked per series (its ``max_cardinality``
when smaller); attribute sets are tracked up to the series' budget."""

MAX_REPORTED_FINDINGS: Final = 500
"""Findings a rendered report lists one by one (the rest are counted), so a report over
millions of points stays small enough for CI (well under 1 MB)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The caps of one check (defaults: the module's constants)."""

    max_line_bytes: int = MAX_LINE_BYTES
    max_overlong_lines: int = MAX_OVERLONG_LINES
    max_skipped_bytes: int = MAX_SKIPPED_BYTES
    max_undeclared_keys: int = MAX_UNDECLARED_KEYS
    max_malformed_reported: int = MAX_MALFORMED_REPORTED
    max_loop_names: int = MAX_LOOP_NAMES
    max_workers: int = MAX_WORKERS
    max_family_keys: int = MAX_FAMILY_KEYS
    max_tracked_values: int = MAX_TRACKED_VALUES
    max_reported_findings: int = MAX_REPORTED_FINDINGS
    max_unindexed_attempts: int = MAX_UNINDEXED_ATTEMPTS
