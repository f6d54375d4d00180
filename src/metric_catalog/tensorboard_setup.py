"""TensorBoard from the catalog: each scalar's description, and a custom-scalars layout.

``describe_summary_writer(writer)`` makes a TensorBoard ``SummaryWriter`` (tensorboardX's,
or torch's) carry what the catalog knows:

- the first ``add_scalar`` of each tag a teed row declares writes the row's description,
  unit and owner (the catalog's ``owner:``) as the scalar's summary metadata
  (TensorBoard keeps the first metadata of a tag, and shows it under the chart's
  information icon); later calls of the tag are the writer's own, unchanged;
- a custom-scalars layout (TensorBoard's "Custom Scalars" tab), written once: one
  category per owner (the catalog's ``owner:``), one chart per row, a key
  family's chart gathering every tag of the family by a regular expression.

The rows are the registered ones (:mod:`metric_catalog.vocabulary`: import the generated
modules first); a tag is matched to its row as the tee splits a flat key (the longest
declared prefix that fits, :func:`metric_catalog.adapters.split_key`). Nothing is
imported from TensorBoard until a writer is described, and only then the writer's own
library. Never raises into training code: a writer this cannot describe, a tag that is
not a string, or a description that fails is warned about once, and every point still
goes to the writer's own ``add_scalar`` as it would without this.
Compose it with :func:`metric_catalog.adapters.tee_summary_writer` in either order.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from typing import Any, Final, TypeVar

from metric_catalog import vocabulary
from metric_catalog._attributes import captures
from metric_catalog._warn import describe_error, safe_repr, safe_text, type_name, warn_once
from metric_catalog.series_rules import SeriesMatcher, parse_pattern, qualified_key
from metric_catalog.vocabulary import TeedMetric

__all__ = ["describe_summary_writer", "row_description", "scalars_layout", "tag_pattern"]

_W = TypeVar("_W")
_DESCRIBED_MARK: Final = "__metric_catalog_described__"
_TAGS_REMEMBERED: Final = 4096


def _owner(name: str) -> str | None:
    """The catalog's ``owner:`` of the series ``name``: the ``__catalog_owner__`` a generated
    module declares, else the module that registered it (a hand-written registration's
    ``owner=``), else ``None``."""
    module = vocabulary.owner_of(name)
    if module is None:
        return None
    declared = getattr(sys.modules.get(module), "__catalog_owner__", None)
    return declared if isinstance(declared, str) and declared else module


def row_description(row: TeedMetric) -> str:
    """What TensorBoard shows for a row's scalar: its description, unit and owner."""
    unit = row.logged_unit or row.unit
    parts = [row.description.strip()]
    if unit not in ("", "1"):
        parts.append(f"Unit: {unit}.")
    owner = _owner(row.name)
    if owner:
        parts.append(f"Owner: {owner}.")
    parts.append(f"Series: {row.name}.")
    return " ".join(part for part in parts if part)


def tag_pattern(prefix: str, logger_key: str) -> str:
    """A regular expression matching every tag a row's prefix and key log as."""
    pieces = [
        re.escape(part) if isinstance(part, str) else ".+"
        for part in parse_pattern(qualified_key(prefix, logger_key))
    ]
    return "^" + "".join(pieces) + "$"


def _is_family(row: TeedMetric) -> bool:
    return any("{" in text for text in (row.logger_key, row.prefix, *row.other_prefixes))


def scalars_layout(rows: tuple[TeedMetric, ...] | None = None) -> dict[str, dict[str, list[Any]]]:
    """The custom-scalars layout: ``{owner: {chart title: ["Multiline", [tag regexes]]}}``.

    One category per owner, one chart per row, titled by the series name; a literal
    row's chart lists its tags, a family's the regular expression of each prefix.
    """
    layout: dict[str, dict[str, list[Any]]] = {}
    chosen = vocabulary.teed_metrics() if rows is None else rows
    for row in sorted((r for r in chosen if r.value_type == "number"), key=lambda r: r.name):
        owner = _owner(row.name) or "unowned"
        prefixes = (row.prefix, *row.other_prefixes)
        if _is_family(row):
            tags = [tag_pattern(prefix, row.logger_key) for prefix in prefixes]
        else:
            tags = [re.escape(qualified_key(prefix, row.logger_key)) for prefix in prefixes]
        layout.setdefault(owner, {})[row.name] = ["Multiline", tags]
    return layout


class _Rows:
    """Which registered teed row a tag belongs to, remembered per tag: the tee's split of a
    flat key, then the series rules' matcher (the most specific row wins, placeholders
    capture only what their attributes admit)."""

    def __init__(self) -> None:
        self.found: dict[str, TeedMetric | None] = {}
        self.matcher = SeriesMatcher()
        for row in vocabulary.teed_metrics():
            declared = captures({a.name: a for a in row.attributes})
            for prefix in (row.prefix, *row.other_prefixes):
                self.matcher.add(prefix, row.logger_key, declared, row)

    def row(self, tag: str) -> TeedMetric | None:
        if tag in self.found:
            return self.found[tag]
        from metric_catalog.adapters import split_key  # noqa: PLC0415 - the tee's split

        matched = self.matcher.match(*split_key(tag))
        found: TeedMetric | None = matched[0][0] if matched else None
        if len(self.found) < _TAGS_REMEMBERED:
            self.found[tag] = found
        return found


def _takes_description(method: Callable[..., Any]) -> bool:
    """Whether ``add_scalar`` takes ``summary_description`` (tensorboardX's does)."""
    try:
        return "summary_description" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def _write_described(writer: Any, tag: str, value: Any, where: tuple[Any, Any], text: str) -> bool:
    """The first point of ``tag`` with its description, through the writer's file writer.

    For a writer whose ``add_scalar`` takes no description (torch's): the scalar summary
    its own library builds, with the description set on its metadata.
    """
    file_writer = getattr(writer, "_get_file_writer", None)
    if not callable(file_writer):
        return False
    if type(writer).__module__.startswith("torch"):
        from torch.utils.tensorboard.summary import scalar  # noqa: PLC0415
    else:
        from tensorboardX.summary import scalar  # noqa: PLC0415
    summary = scalar(tag, value)
    summary.value[0].metadata.summary_description = text
    step, walltime = where
    file_writer().add_summary(summary, step, walltime)
    return True


def describe_summary_writer(writer: _W, *, layout: bool = True) -> _W:
    """Describe each declared scalar on its first ``add_scalar``; write the layout once.

    Returns the same writer (its ``add_scalar`` is replaced on the instance, as
    :func:`~metric_catalog.adapters.tee_summary_writer` does). Describing twice is once.
    Never raises: a ``writer`` without a callable ``add_scalar``, or one whose method
    cannot be replaced, is warned about once and returned as it is.
    """
    try:
        inner = getattr(writer, "add_scalar", None)
        if not callable(inner):
            _cannot_describe(writer, "it has no callable add_scalar")
            return writer
        if getattr(inner, _DESCRIBED_MARK, False):
            return writer
        add_scalar = _describing(writer, inner)
        writer.add_scalar = add_scalar  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - a hostile writer object; never raise
        _cannot_describe(writer, describe_error(exc))
        return writer
    if layout:
        _write_layout(writer)
    return writer


def _cannot_describe(writer: object, problem: str) -> None:
    warn_once(
        ("tensorboard-writer", type_name(writer)),
        f"TensorBoard: describe_summary_writer needs a SummaryWriter; {type_name(writer)} "
        f"cannot be described ({problem}); it is used as it is",
    )


def _describing(writer: Any, inner: Callable[..., Any]) -> Callable[..., Any]:
    """``add_scalar`` that describes a declared tag's first point, then calls ``inner``."""
    rows = _Rows()
    described: set[str] = set()
    direct = _takes_description(inner)

    def add_scalar(tag: Any, scalar_value: Any, *args: Any, **kwargs: Any) -> Any:
        text = _first_description(rows, described, tag)
        if text is None:
            return inner(tag, scalar_value, *args, **kwargs)
        if direct and "summary_description" not in kwargs and len(args) <= 2:
            return inner(tag, scalar_value, *args, summary_description=text, **kwargs)
        step = args[0] if args else kwargs.get("global_step")
        walltime = args[1] if len(args) > 1 else kwargs.get("walltime")
        try:
            if _write_described(writer, tag, scalar_value, (step, walltime), text):
                return None
        except Exception as exc:  # noqa: BLE001 - a description never costs a point
            warn_once(
                ("tensorboard-describe", type_name(exc)),
                f"TensorBoard: could not describe {safe_repr(tag)} ({describe_error(exc)}); "
                "its points are written without a description",
            )
        return inner(tag, scalar_value, *args, **kwargs)

    setattr(add_scalar, _DESCRIBED_MARK, True)
    return add_scalar


def _first_description(rows: _Rows, described: set[str], tag: object) -> str | None:
    """The description of ``tag``'s row when this is the tag's first point; else ``None``.

    A tag that is not a string (the writer may take it) is the writer's alone; a failure
    finding the row is warned once and the point written undescribed.
    """
    text = safe_text(tag)
    if text is None or text in described or len(described) >= _TAGS_REMEMBERED:
        return None
    described.add(text)
    try:
        row = rows.row(text)
        return None if row is None else row_description(row)
    except Exception as exc:  # noqa: BLE001 - describing never costs a point
        warn_once(
            ("tensorboard-describe", type_name(exc)),
            f"TensorBoard: could not describe a tag ({describe_error(exc)}); "
            "its points are written without a description",
        )
        return None


def _write_layout(writer: Any) -> None:
    try:
        add_layout = getattr(writer, "add_custom_scalars", None)
        found = scalars_layout()
        if not found:
            return
        if not callable(add_layout):
            warn_once(
                ("tensorboard-layout", type_name(writer)),
                f"TensorBoard: {type_name(writer)} has no add_custom_scalars; no layout written",
            )
            return
        add_layout(found)
    except Exception as exc:  # noqa: BLE001 - the layout is a convenience, never an error
        warn_once(
            ("tensorboard-layout-error", type_name(exc)),
            f"TensorBoard: the custom-scalars layout was not written ({describe_error(exc)})",
        )
