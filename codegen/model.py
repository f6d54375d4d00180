"""The loaded catalog: plain, immutable data with the source position of every field.

The loader builds these from ``catalog/*.yaml``; validation, lints, renderers,
diff and dashboards all read them. Nothing here touches the file system.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from metric_catalog.vocabulary import DEFAULT_PREFIX, registry_key

from .diagnostics import Position
from .naming import constant_name, prometheus_name

__all__ = [
    "KINDS",
    "STABILITY_LEVELS",
    "Catalog",
    "CatalogFile",
    "Deprecation",
    "MetricRow",
    "Section",
]

Section = Literal["teed", "recorded"]

KINDS: Final[tuple[str, ...]] = ("gauge", "counter", "histogram", "up_down_counter")
STABILITY_LEVELS: Final[tuple[str, ...]] = ("development", "alpha", "beta", "stable")


@dataclass(frozen=True, slots=True)
class Deprecation:
    """A row on its way out: since when, what replaces it, and why."""

    since: str
    replaced_by: str | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One catalog row, teed (has a logger key) or recorded (has none).

    ``positions`` maps each field name present in the YAML to where its value
    starts; ``position`` is where the row's mapping starts. Nested fields use
    dotted keys (``deprecated.since``, ``deprecated.replaced_by``) and list
    items their index (``no_lint[0]``).
    """

    section: Section
    name: str
    kind: str
    unit: str
    description: str
    stability: str
    position: Position
    logger_key: str | None = None
    prefix: str | None = None
    """Effective prefix for teed rows (row, else file default, else ``train``)."""
    deprecated: Deprecation | None = None
    no_lint: tuple[str, ...] = ()
    positions: Mapping[str, Position] = field(default_factory=dict, compare=False)

    @property
    def registry_key(self) -> str:
        """Registry key (``rl.reward.mean`` -> ``reward_mean``)."""
        return registry_key(self.name)

    @property
    def constant_name(self) -> str:
        """Generated Python constant (``REWARD_MEAN``)."""
        return constant_name(self.name)

    @property
    def prometheus_name(self) -> str:
        """Metric family name in a Prometheus scrape."""
        return prometheus_name(self.name, self.kind, self.unit)

    @property
    def qualified_logger_key(self) -> str:
        """``prefix/logger_key`` as the logging backends show it, ``""`` for recorded rows."""
        if self.logger_key is None:
            return ""
        return f"{self.prefix}/{self.logger_key}" if self.prefix else self.logger_key

    def where(self, field_name: str) -> Position:
        """Position of a field's value, or of the row when the field is absent."""
        return self.positions.get(field_name, self.position)


@dataclass(frozen=True, slots=True)
class CatalogFile:
    """One ``catalog/<owner>.yaml``: who owns the rows, and the rows in declaration order."""

    path: str
    """POSIX path as reported in diagnostics, e.g. ``catalog/grpo.yaml``."""
    owner: str
    module: str
    description: str
    teed: tuple[MetricRow, ...]
    recorded: tuple[MetricRow, ...]
    prefix: str = DEFAULT_PREFIX
    positions: Mapping[str, Position] = field(default_factory=dict, compare=False)

    @property
    def rows(self) -> tuple[MetricRow, ...]:
        """Teed rows then recorded rows, each in declaration order."""
        return self.teed + self.recorded

    def where(self, field_name: str) -> Position:
        """Position of a top-level field's value, or the file start."""
        return self.positions.get(field_name, Position(self.path, 1, 1))


@dataclass(frozen=True, slots=True)
class Catalog:
    """The whole catalog: files sorted by path, so output never depends on input order."""

    files: tuple[CatalogFile, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(sorted(self.files, key=lambda f: f.path)))

    def rows(self) -> Iterator[tuple[CatalogFile, MetricRow]]:
        """Every row with its file, files by path, rows in declaration order."""
        for catalog_file in self.files:
            for row in catalog_file.rows:
                yield catalog_file, row

    def by_name(self) -> dict[str, tuple[CatalogFile, MetricRow]]:
        """Rows keyed by series name."""
        return {row.name: (f, row) for f, row in self.rows()}
