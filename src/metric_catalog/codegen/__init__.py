"""The generator, importable as ``metric_catalog.codegen`` in a source checkout.

The wheel ships the repository's top-level ``codegen/`` package at this path
(hatch ``force-include``, which replaces this file). In an editable install
this shim points the package's search path at that folder instead, so
``metric-catalog`` and ``python -m metric_catalog.codegen`` run the same
sources as ``python -m codegen``; no code is duplicated.
"""

from pathlib import Path

_SOURCE = Path(__file__).resolve().parents[3] / "codegen"
__path__ = [str(_SOURCE)]
__all__: list[str] = []
