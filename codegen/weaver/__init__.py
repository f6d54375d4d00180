"""OpenTelemetry Weaver interop: a catalog as a Weaver registry, and back.

:mod:`.export` writes the resolved catalog as a semantic-convention registry
Weaver loads (v1 ``groups:`` or v2 ``file_format: definition/2``), with what
Weaver does not model under ``annotations.metric_catalog`` and in a
``metric-catalog.json`` Weaver ignores. :mod:`.rules` holds the checks
``weaver registry check`` and the semantic conventions' policies apply.
:mod:`.importer` reads a registry (both formats) into catalog files.
"""

from __future__ import annotations

__all__: list[str] = []
