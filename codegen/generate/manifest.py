"""Skip a ``generate`` whose inputs and outputs are exactly as the last run left them.

A full generate re-parses, re-validates and re-renders the whole catalog. When
nothing changed, that work only proves that nothing changed, so the last
successful run leaves a manifest (``manifest.json`` in the configured
``cache-dir``, by default ``.cache/metric-catalog/``, ignored by git): a
fingerprint of its inputs (every catalog file, the configuration, the
generator's own sources, templates and schema, a project's template folder,
and the versions of the libraries it renders with) and a digest of every file it
owns. The next run hashes the same inputs and outputs; when all match, and no
stray generated file has appeared in a managed folder, it is done. Anything
else, including an unreadable, corrupt, oversized or foreign manifest (wrong
types, paths outside the managed folders), falls back to a full run: the
manifest is read as untrusted input, and only regular files are read.

This module imports only the standard library and light codegen modules
(:mod:`codegen.config`, :mod:`codegen.generate.writer`, :mod:`codegen.generate.schema_file`), so
the no-op path never pays for YAML, jsonschema or Jinja2. ``check`` never uses
the manifest: it always renders, so CI proves the committed files itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from metric_catalog import vocabulary

from ..config import Config, config_for_root
from ..safe_fs import is_within, read_regular, write_atomic
from ..safe_outputs import check_output_path
from .schema_file import schema_file_path
from .writer import scratch_files, stale_generated_files

__all__ = [
    "CachedRun",
    "fingerprint_inputs",
    "fingerprint_or_none",
    "load_if_current",
    "record",
]

MANIFEST_PATH: Final = Config().manifest_path
"""Where the manifest lives by default, relative to the project root (``cache-dir``)."""

_FORMAT: Final = 1
_GENERATOR_SUFFIXES: Final = frozenset({".py", ".j2", ".json"})
_RENDER_LIBRARIES: Final = ("yaml", "jsonschema", "jinja2", "markupsafe")
# A manifest holds a digest per output file: a few hundred bytes each. Anything larger
# than this is not one of ours and is not parsed.
_MAX_MANIFEST_BYTES: Final = 16 * 1024 * 1024
_DIGEST: Final = re.compile(r"[0-9a-f]{64}\Z")


@dataclass(frozen=True, slots=True)
class CachedRun:
    """What the last successful generate produced, still current on disk."""

    outputs: tuple[str, ...]
    """Every file it owns, repo-relative."""
    report: str
    """The diagnostics (warnings) it printed, so a cached run shows them again."""


def _generator_sources() -> list[Path]:
    package = Path(__file__).resolve().parents[1]  # every stage of codegen/
    sources = [p for p in package.rglob("*") if p.suffix in _GENERATOR_SUFFIXES and p.is_file()]
    # Names and keys are derived by the runtime's registry_key, so it is an input too.
    sources.append(Path(vocabulary.__file__).resolve())
    return sorted(p for p in sources if "__pycache__" not in p.parts)


def _library_versions() -> str:
    # An upgrade of a library the renderers use can change the output. Where each
    # is installed and its files' stamps identify the install without importing it
    # (importlib.metadata alone would cost more than the whole no-op run).
    stamps = []
    for name in _RENDER_LIBRARIES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        try:
            stat = os.stat(origin) if origin else None
        except OSError:
            stat = None
        stamp = f"{origin}:{stat.st_size}:{stat.st_mtime_ns}" if stat else "absent"
        stamps.append(f"{name}={stamp}")
    return ";".join(stamps)


def _config(config: Config | Path) -> Config:
    return config_for_root(config) if isinstance(config, Path) else config


def _template_sources(config: Config) -> list[Path]:
    folder = config.templates_path
    if folder is None or not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file())


def fingerprint_inputs(config: Config | Path) -> str:
    """A digest of the catalog, the configuration, the templates, the generator and its libraries.

    A bare ``Path`` stands for the project there (its table, else the defaults).

    Raises:
        OSError: A catalog or template file cannot be read.
    """
    config = _config(config)
    digest = hashlib.sha256(f"metric-catalog codegen manifest {_FORMAT}\n".encode())
    digest.update(f"{_library_versions()}\n{config.fingerprint()}\n".encode())
    sources = (
        ("catalog", config.catalog_paths()),
        ("templates", _template_sources(config)),
        ("generator", _generator_sources()),
    )
    for label, paths in sources:
        for path in paths:
            digest.update(f"{label}\0{path.as_posix()}\0".encode())
            digest.update(hashlib.sha256(read_regular(path)).digest())
    return digest.hexdigest()


def fingerprint_or_none(config: Config | Path) -> str | None:
    """:func:`fingerprint_inputs`, or ``None`` when an input cannot be read."""
    try:
        return fingerprint_inputs(config)
    except OSError:
        return None


def _file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except OSError:
        return None


def _owned(rel: object, config: Config, managed: list[str], root_real: str) -> bool:
    """Whether a manifest's output path is one generate could own (a managed folder's file,
    or the schema copy), inside the root."""
    if not isinstance(rel, str) or not rel or "\0" in rel or "\\" in rel:
        return False
    parts = rel.split("/")
    if rel.startswith("/") or ".." in parts or "." in parts or "" in parts:
        return False
    inside = any(rel.startswith(f"{folder}/") for folder in managed)
    if not inside and rel != schema_file_path(config):
        return False
    return is_within(os.path.realpath(config.root / rel), root_real)


def _read_manifest(root: Path, rel: str) -> dict[str, object] | None:
    """The manifest object; ``None`` if missing, special, linked out, huge or not JSON."""
    try:
        check_output_path(root, rel)
        doc = json.loads(read_regular(root / rel, _MAX_MANIFEST_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def load_if_current(config: Config | Path, *, inputs: str | None = None) -> CachedRun | None:
    """The last run, if its inputs and every output are unchanged; else ``None``.

    ``inputs`` is this run's :func:`fingerprint_inputs`, when already computed.
    Never raises: a missing, corrupt, hostile or stale manifest just means a
    full run. Its paths must lie in the configured managed folders, inside the
    root, and only regular files are read.
    """
    config = _config(config)
    root = config.root
    doc = _read_manifest(root, config.manifest_path)
    if doc is None or doc.get("format") != _FORMAT:
        return None
    managed = sorted(config.managed_dirs)
    outputs = doc.get("outputs")
    report = doc.get("report", "")
    if doc.get("managed_dirs") != managed or not isinstance(outputs, dict):
        return None
    if not isinstance(report, str):
        return None
    root_real = os.path.realpath(root)
    for rel, expected in outputs.items():
        if not _owned(rel, config, managed, root_real):
            return None
        if not isinstance(expected, str) or not _DIGEST.match(expected):
            return None
    current = fingerprint_or_none(config) if inputs is None else inputs
    if current is None or doc.get("inputs") != current:
        return None
    for rel, expected in outputs.items():
        if _file_digest(root / rel) != expected:
            return None
    if stale_generated_files(root, outputs, managed) or scratch_files(root, managed):
        return None
    return CachedRun(tuple(sorted(outputs)), report)


def record(
    config: Config | Path,
    plan: Mapping[str, str],
    managed_dirs: Iterable[str] | None = None,
    report: str = "",
    *,
    inputs: str | None = None,
) -> None:
    """Remember a successful run whose outputs are ``plan``. Best effort: a cache never fails.

    ``inputs`` is the :func:`fingerprint_inputs` taken *before* the catalog was
    read: a catalog file changed during the run then makes the next run render
    again. Without it, the inputs are fingerprinted now.
    """
    config = _config(config)
    if inputs is None:
        inputs = fingerprint_or_none(config)
    if inputs is None:
        return
    doc = {
        "format": _FORMAT,
        "inputs": inputs,
        "managed_dirs": sorted(config.managed_dirs if managed_dirs is None else managed_dirs),
        "outputs": {
            rel: hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
            for rel, text in sorted(plan.items())
        },
        "report": report,
    }
    with contextlib.suppress(OSError):
        write_atomic(
            config.root / config.manifest_path, json.dumps(doc, indent=1, sort_keys=True) + "\n"
        )
