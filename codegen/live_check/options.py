"""What one live-check judges and how: :class:`CheckOptions`, built once and passed whole.

The command line builds it from ``[tool.metric-catalog]`` and the flags
(:mod:`codegen.commands.live_check`); the entry points of
:mod:`codegen.live_check` take it as ``options=``. Their older keyword
arguments (``loop=``, ``key_rewrites=``, ...) are :class:`CheckKeywords`,
declared once here, and build the same dataclass (:func:`resolve_options`).
The caps that bound memory travel beside it as :class:`~codegen.runs.limits.Limits`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

__all__ = ["CheckKeywords", "CheckOptions", "resolve_options"]


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """The options of one check, whatever its inputs (files, a stream, records, live).

    An input option that does not apply to an entry point (``runs`` for a
    stream, ``input_format`` for records) is ignored by it.
    """

    all_owners: bool = False
    """Judge unlogged rows of owners that logged nothing too (default: list those owners
    as inactive, since an owner never imported declares nothing)."""
    loop: str | None = None
    """Judge the run as this declared loop instead of the one it names or its keys suggest."""
    input_format: str | None = None
    """Read every input as this registered format instead of detecting it."""
    key_rewrites: tuple[tuple[str, str], ...] = ()
    """``(from, to)`` literal substring rewrites applied in order to every logged key
    before it is matched (``("_at_", "@")`` undoes verl's MLflow spelling of ``mean@4``)."""
    key_prefix_rewrites: tuple[tuple[str, str], ...] = ()
    """``(from, to)`` rules applied to the start of each key (the first that fits, once),
    before :attr:`key_rewrites`."""
    run_config: Mapping[str, object] | None = None
    """The run's configuration for inputs that do not log it; wins over a logged header."""
    runs: tuple[str, ...] = ()
    """Read only these runs (id, name or folder) of a store or folder input."""
    promoted: tuple[str, ...] = ()
    """Identity attributes every live point must carry."""
    baseline_values: str | None = None
    """A ``--format json`` report of an earlier run (its path): an open placeholder value it
    did not list is a ``new_open_value`` finding. The command line reads it before any
    input (``live-check --baseline-values``, or the ``baseline-values`` key); the entry
    points leave it to their caller (:mod:`codegen.live_check.baseline`)."""


class CheckKeywords(TypedDict, total=False):
    """The keyword arguments the entry points took before :class:`CheckOptions` (still accepted)."""

    all_owners: bool
    loop: str | None
    input_format: str | None
    key_rewrites: tuple[tuple[str, str], ...]
    key_prefix_rewrites: tuple[tuple[str, str], ...]
    run_config: Mapping[str, object] | None
    runs: tuple[str, ...]
    promoted: tuple[str, ...]
    baseline_values: str | None


def resolve_options(options: CheckOptions | None, keywords: CheckKeywords) -> CheckOptions:
    """``options``, or the dataclass the older keywords stand for (built once, here).

    Raises:
        TypeError: Both were given: pass ``options=`` or the keywords, not both.
    """
    if options is None:
        return CheckOptions(**keywords)
    if keywords:
        shown = ", ".join(sorted(keywords))
        msg = f"pass options=CheckOptions(...) or the keywords ({shown}), not both"
        raise TypeError(msg)
    return options
