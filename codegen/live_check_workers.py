"""live-check over many workers' logs (the names before live-check became a package).

The reading and judging live in :mod:`codegen.live_check` (see
:mod:`codegen.live_check.workers` for what is judged per worker); this module
keeps the public names importable.
"""

from __future__ import annotations

from .live_check import PER_WORKER_KINDS, LogInputError, check_paths, expand_paths

__all__ = ["PER_WORKER_KINDS", "LogInputError", "check_paths", "expand_paths"]
