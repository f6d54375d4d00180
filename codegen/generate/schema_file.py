"""The project's copy of the catalog's JSON schema, beside its catalog files.

Catalog files start with ``# yaml-language-server: $schema=catalog.schema.json``
so editors complete and check rows as they are typed. That line must work in
every checkout, offline: a path into a virtual environment or a URL does not.
So the schema is a generated file of the project, ``catalog.schema.json`` in
the folder of the first ``catalog`` entry of ``[tool.metric-catalog]`` (or
where its ``schema-file`` key says);
``init`` writes it, ``generate`` keeps it current (a newer metric-catalog may
add fields) and ``check`` fails when it is stale, like any generated file.

Its top-level ``"__generated__"`` key is the generated marker JSON files carry
(JSON Schema ignores keywords it does not know, and so do editors).
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Final

from ..catalog.model import Catalog
from ..config import Config
from ..safe_fs import read_regular
from .writer import marker_line

__all__ = [
    "SCHEMA_FILE_NAME",
    "SCHEMA_SOURCE",
    "catalog_folder",
    "render_schema_file",
    "schema_file_path",
    "schema_file_text",
]

SCHEMA_SOURCE: Final = Path(__file__).resolve().parents[1] / "schema" / "catalog.schema.json"
"""The schema shipped with the generator (the one ``validate`` uses)."""

SCHEMA_FILE_NAME: Final = "catalog.schema.json"
"""The project copy's file name, in the catalog's folder."""


def catalog_folder(entry: str) -> str:
    """The folder a ``catalog`` entry names: a glob's fixed part, a file's folder, or itself.

    ``"myrl/telemetry/catalog/*.yaml"`` -> ``"myrl/telemetry/catalog"``;
    ``"catalog/**/*.yaml"`` -> ``"catalog"``; ``"*.yaml"`` -> ``""`` (the root).
    """
    folder = PurePosixPath(entry)
    if any(ch in entry for ch in "*?[") or entry.endswith((".yaml", ".yml")):
        folder = folder.parent
    while any(ch in folder.name for ch in "*?["):
        folder = folder.parent
    text = folder.as_posix()
    return "" if text == "." else text


def schema_file_path(config: Config) -> str | None:
    """Root-relative path of the project's schema copy; ``None`` when there is none to keep.

    The ``schema-file`` key when set; else ``catalog.schema.json`` in the first
    catalog entry's folder, unless the catalog was given on the command line
    (a one-off input, not the project's layout, moves no generated file).
    """
    if config.schema_file:
        return config.schema_file
    if config.catalog_flag or not config.catalog:
        return None
    folder = catalog_folder(config.catalog[0])
    return f"{folder}/{SCHEMA_FILE_NAME}" if folder else SCHEMA_FILE_NAME


def schema_file_text(generate_command: str) -> str:
    """The schema copy's full text: the shipped schema under a generated marker key."""
    source = read_regular(SCHEMA_SOURCE).decode("utf-8")
    marker = marker_line(generate_command, "the metric-catalog package's catalog.schema.json")
    # The marker key goes first, into the source's own text: no parse, same formatting.
    opening = re.match(r"\{\s*", source)
    if opening is None:
        msg = f"{SCHEMA_SOURCE}: the shipped schema is not a JSON object"
        raise ValueError(msg)
    indent = opening.group()[1:] or "\n"
    first = f"{json.dumps('__generated__')}: {json.dumps(marker)},"
    return f"{{{indent}{first}{indent}{source[opening.end() :]}"


def render_schema_file(catalog: Catalog, config: Config) -> dict[str, str]:
    """The generate plan's share: the schema copy at :func:`schema_file_path`, if any."""
    del catalog  # the schema does not depend on the rows
    path = schema_file_path(config)
    return {} if path is None else {path: schema_file_text(config.generate_command)}
