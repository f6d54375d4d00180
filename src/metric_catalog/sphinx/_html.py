"""HTML of the catalog pages, built straight from the resolved catalog's rows.

Every value from the catalog goes through :func:`html.escape` (quotes too);
identifiers get ``<wbr>`` after ``.``, ``_`` and ``/`` so a narrow column breaks
them there and nowhere else (the stylesheet forbids breaks inside words). The
markup is lean on purpose: at 10,000 series every byte per row is 10 kB of site.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from html import escape
from typing import Any, Final

from metric_catalog.series_rules import qualified_key

from ._data import CatalogData, series_anchor, source_line

__all__ = [
    "attribute_anchor",
    "ident",
    "logger_keys",
    "owner_page_html",
    "paragraphs",
    "text",
    "word",
]

_BREAK_AFTER: Final = re.compile(r"([._/])(?=.)")
_BLANK_LINE: Final = re.compile(r"\n[ \t]*\n")
_SPACES: Final = re.compile(r"\s+")

Href = Callable[[str], str]
"""Maps a target (``"page:<path>"`` of a catalog file or ``"source:<path>"``) to a URL."""


def text(value: object) -> str:
    """``value`` as escaped HTML text on one line."""
    return escape(_SPACES.sub(" ", str(value)).strip())


def ident(value: object) -> str:
    """An identifier as ``<code>``, breakable only after ``.``, ``_`` and ``/``.

    Inside the catalog containers (``.mc-owner``, ``.mc-index``) the stylesheet
    forbids any other break; no class per element keeps 10,000 entries small.
    """
    return f"<code>{_breakable(text(value))}</code>"


def _breakable(escaped: str) -> str:
    """<wbr> after ``.``, ``_`` and ``/``; a part holding ``-`` is kept on one line."""
    parts = _BREAK_AFTER.sub(r"\1<wbr>", escaped).split("<wbr>")
    return "<wbr>".join(f'<span class="mc-nb">{p}</span>' if "-" in p else p for p in parts)


def word(value: object) -> str:
    """A short value (kind, stability) as escaped text, breakable only after ``_``."""
    return text(value).replace("_", "_<wbr>")


def paragraphs(value: object) -> str:
    """Escaped ``<p>`` paragraphs, split where the text has blank lines."""
    parts = [text(p) for p in _BLANK_LINE.split(str(value or "").strip()) if p.strip()]
    return "".join(f"<p>{p}</p>" for p in parts)


def _attribute_name(attribute: Mapping[str, Any], data: CatalogData, href: Href, path: str) -> str:
    """The attribute's name, linked to the row declaring it."""
    name = str(attribute.get("name", ""))
    declared = data.attributes.get(name) or {}
    home = str(declared.get("file", ""))
    shown = ident(name)
    if home in data.files:
        page = "" if home == path else href(f"page:{home}")
        link = f"{page}#{attribute_anchor(name)}"
        shown = f'<a href="{escape(link)}">{shown}</a>'
    return shown


def _attribute_label(attribute: Mapping[str, Any], data: CatalogData) -> str:
    """`` label <name>`` when Prometheus shows the attribute under another name."""
    name = str(attribute.get("name", ""))
    label = attribute.get("label") or (data.attributes.get(name) or {}).get("label")
    if not label or label == name:
        return ""
    return f' <span class="mc-label">label {ident(label)}</span>'


def _attributes(row: Mapping[str, Any], data: CatalogData, href: Href, path: str) -> str:
    attributes = row.get("attributes") or []
    items = []
    for attribute in attributes:
        if not isinstance(attribute, Mapping):
            continue
        details = [text(attribute.get("type") or "string")]
        level = attribute.get("requirement_level") or attribute.get("requirement")
        if level:
            details.append(text(str(level).replace("_", " ")))
        values = attribute.get("values") or []
        if values:
            details.append("values " + ", ".join(ident(v) for v in values))
        elif attribute.get("max_cardinality"):
            details.append(f"at most {text(attribute['max_cardinality'])} values")
        name = _attribute_name(attribute, data, href, path)
        label = _attribute_label(attribute, data)
        derive = _derivation(attribute, data, href, path)
        items.append(f"<li>{name} ({'; '.join(details)}){label}{derive}</li>")
    return f'<ul class="mc-attributes">{"".join(items)}</ul>' if items else ""


def _derivation(attribute: Mapping[str, Any], data: CatalogData, href: Href, path: str) -> str:
    """ "derived from <source>" with its table (folded), for a derived attribute; else ""."""
    derive = attribute.get("derive")
    if not isinstance(derive, Mapping) or not derive.get("from"):
        return ""
    source = _attribute_name({"name": derive["from"]}, data, href, path)
    listed = derive.get("map")
    table: Mapping[Any, Any] = listed if isinstance(listed, Mapping) else {}
    rows = [
        f"<tr><td>{ident(key)}</td><td>{ident(value)}</td></tr>" for key, value in table.items()
    ]
    declared = (data.attributes.get(str(derive["from"])) or {}).get("values") or []
    domain = {str(v.get("value")) if isinstance(v, Mapping) else str(v) for v in declared}
    if derive.get("default") is not None:
        rows.append(f"<tr><td><em>any other</em></td><td>{ident(derive['default'])}</td></tr>")
    elif not domain or not domain <= {str(key) for key in table}:
        rows.append("<tr><td><em>any other</em></td><td><em>unset</em></td></tr>")
    head = f"<tr><th>{ident(derive['from'])}</th><th>{ident(attribute.get('name', ''))}</th></tr>"
    return (
        f'<details class="mc-derive"><summary>derived from {source}</summary>'
        f"<table>{head}{''.join(rows)}</table></details>"
    )


def _presence(row: Mapping[str, Any]) -> str:
    """A teed row's presence: requirement level, condition, logging loops, shared key."""
    level = row.get("requirement_level")
    if row.get("section") != "teed" or not level:
        return ""
    out = text(str(level).replace("_", " "))
    if row.get("condition"):
        out += f" ({text(row['condition'])})"
    loops = row.get("emitted_by") or []
    out += "; logged by " + (", ".join(ident(loop) for loop in loops) if loops else "any loop")
    shares = row.get("shares_key_with") or []
    if shares:
        out += "; its key is shared with " + ", ".join(ident(name) for name in shares)
        out += (
            " (rows the run's configuration chooses between: its value routes the key)"
            if row.get("config_choice")
            else " (rows of other loops: each loop's key feeds its own row)"
        )
    value_type = row.get("value_type")
    if value_type and value_type not in ("number", "int"):
        out += f"; the value is a {text(value_type)}: exported nowhere, no instrument"
    if row.get("non_finite") == "allowed":
        out += "; NaN and infinities are legitimate values (exported, never reported)"
    return f'<p class="mc-presence">{out}</p>'


def _cadence(row: Mapping[str, Any]) -> str:
    """When a teed row is due: its period, first step and step axis ("when logged" if none)."""
    if row.get("section") != "teed":
        return ""
    parts = []
    every = row.get("every") or row.get("every_config")
    if every:
        schedule = f"every {text(every)} steps"
        if row.get("phase"):  # absent (older resolved catalogs) or 0: the multiples
            schedule += f" (phase {text(row['phase'])})"
        if row.get("at_last_step"):
            schedule += " and at the last step"
        parts.append(schedule)
    first = row.get("first_step")
    if first is None:
        first = row.get("first_step_config")
    if first is not None:
        parts.append(f"from step {text(first)}")
    axis = row.get("step_axis")
    if axis and axis != "step":
        parts.append(f"on the {ident(axis)} axis")
    return f'<p class="mc-cadence">{"; ".join(parts) or "when logged"}</p>'


def _plumbing(row: Mapping[str, Any], data: CatalogData, href: Href) -> str:
    """What code and tools need (constant, registry key, budgets, lint waivers, YAML line),
    folded under the description so it never crowds the series' meaning."""
    constant = row.get("python_constant") or (
        f"{data.package}.{row.get('module', '')}.{row.get('constant_name', '')}"
    )
    facts = [ident(constant), f"registry key {ident(row.get('registry_key', ''))}"]
    if row.get("cardinality_limit") is not None:
        facts.append(f"at most {text(row['cardinality_limit'])} attribute sets")
    waived = row.get("no_lint") or []
    if waived:
        facts.append("lint waived: " + ", ".join(ident(code) for code in waived))
    if row.get("annotations"):
        facts.append(f"annotations {_annotations(row['annotations'])}")
    facts.append(_source(row, href))
    return (
        '<details class="mc-plumbing"><summary>Code</summary>'
        f'<p class="mc-meta">{" · ".join(facts)}</p></details>'
    )


_ANNOTATIONS_SHOWN: Final = 300
"""Characters of a row's or attribute's own annotations a page shows (the YAML has all)."""


def _annotations(found: object) -> str:
    """The team's own annotations as compact JSON, cut to :data:`_ANNOTATIONS_SHOWN`."""
    shown = json.dumps(found, ensure_ascii=False, separators=(", ", ": "))
    if len(shown) > _ANNOTATIONS_SHOWN:
        shown = shown[: _ANNOTATIONS_SHOWN - 1] + "…"
    return ident(shown)


def logger_keys(row: Mapping[str, Any]) -> list[str]:
    """Every key a teed row is logged under, prefix included (``[]`` for a recorded row).

    One per prefix (``prefixes``; older resolved catalogs have one ``prefix``); a row
    without a prefix is logged under the bare key.
    """
    return [full for _, full in _prefixed_keys(row)]


def _prefixed_keys(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    key = row.get("logger_key")
    if key is None:
        return []
    prefixes = row.get("prefixes")
    if not prefixes:
        prefixes = [row.get("prefix") or ""]
    return [(str(p), qualified_key(str(p), str(key))) for p in prefixes]


def _series_link(name: str, data: CatalogData, href: Href, path: str) -> str:
    """A link to the entry of series ``name`` (plain text when it is not in the catalog)."""
    found = data.by_name.get(name)
    if found is None:
        return ident(name)
    target_file = str(found.get("file", ""))
    page = "" if target_file == path else href(f"page:{target_file}")
    return f'<a href="{escape(page + "#" + series_anchor(name))}">{ident(name)}</a>'


def _shadowed(row: Mapping[str, Any], data: CatalogData, href: Href, path: str) -> str:
    """The literal rows that take some of a family's keys (the most specific row wins)."""
    names = [str(name) for name in row.get("shadowed_by") or []]
    if not names:
        return ""
    links = ", ".join(_series_link(name, data, href, path) for name in names)
    return (
        f'<p class="mc-shadowed">Keys of this family that a literal row declares go to that '
        f"row, the most specific: {links}.</p>"
    )


def _deprecation(row: Mapping[str, Any], data: CatalogData, href: Href, path: str) -> str:
    deprecated = row.get("deprecated")
    if not deprecated:
        return ""
    target = deprecated.get("replaced_by")
    if not target:
        replaced = "<p>No replacement.</p>"
    elif str(target) in data.by_name:
        target_file = str(data.by_name[str(target)].get("file", ""))
        page = "" if target_file == path else href(f"page:{target_file}")
        link = f"{page}#{series_anchor(str(target))}"
        replaced = f'<p>Replaced by <a href="{escape(link)}">{ident(target)}</a>.</p>'
    else:
        replaced = f"<p>Replaced by {ident(target)}, which is not in the catalog.</p>"
    since = deprecated.get("since")
    title = f"Deprecated since {text(since)}" if since else "Deprecated"
    return (
        '<div class="admonition warning deprecated">'
        f'<p class="admonition-title">{title}</p>'
        f"{replaced}{paragraphs(deprecated.get('note', ''))}</div>"
    )


def _prometheus(row: Mapping[str, Any]) -> str:
    prometheus = row.get("prometheus") or {}
    name = str(prometheus.get("name", ""))
    series = [str(s) for s in prometheus.get("series") or [] if str(s) != name]
    out = ident(name)
    if series:
        suffixes = [s.removeprefix(name) if s.startswith(name) else s for s in series]
        out += " (" + ", ".join(ident(s) for s in suffixes) + ")"
    return out


def _source(row: Mapping[str, Any], href: Href) -> str:
    path = str(row.get("file", ""))
    line = source_line(row.get("source"))
    label = f"{path}:{line}" if line else path
    url = href(f"source:{path}") + (f"#L{line}" if line else "")
    return f'<a class="mc-src" href="{escape(url)}">{_breakable(text(label))}</a>'


_GOALS = {"maximize": "bigger is better", "minimize": "smaller is better"}


def _values(row: Mapping[str, Any]) -> str:
    """What the values may be, under the unit: range, integers, goal, and what they sum."""
    parts = []
    if row.get("range"):
        parts.append(f"values in {text(str(row['range']))}")
    elif row.get("value_type") == "int":
        parts.append("integers")
    goal = _GOALS.get(str(row.get("goal") or ""))
    if goal:
        parts.append(goal)
    if row.get("sum_of"):
        parts.append("sum of " + ", ".join(ident(str(n)) for n in row["sum_of"]))
    if not parts:
        return ""
    return '<br><span class="mc-values">' + " · ".join(parts) + "</span>"


def _row(row: Mapping[str, Any], data: CatalogData, href: Href, path: str) -> str:
    """One series: its table row, which is also its entry (``id`` = its anchor).

    At a glance: the series (stability, Prometheus name), its logged key, kind and unit,
    cadence and presence, then what it means; the plumbing is folded. Each cell says what it
    holds (``data-label``), so a narrow page shows the row as a card.
    """
    name = str(row["name"])
    anchor = series_anchor(name)
    deprecated = ' <span class="mc-deprecated">deprecated</span>' if row.get("deprecated") else ""
    stability = f' <span class="mc-stability">{text(row.get("stability", ""))}</span>'
    keys = logger_keys(row)
    logger = (
        "<br>".join(ident(key) + ("" if "/" in key else " (no prefix)") for key in keys)
        or "<em>recorded</em>"
    )
    unit = ident(row["unit"]) if row.get("unit") else "—"
    logged_unit = row.get("logged_unit")
    if logged_unit and logged_unit != row.get("unit"):
        # The code logs a prefixed unit (ms); the series is exported in its base (s).
        unit = f"exported in {unit}, logged in {ident(str(logged_unit))}"
    if row.get("temporality") == "cumulative":  # logged as a running total; the tee adds growth
        unit += '<br><span class="mc-temporality">running total</span>'
    unit += _values(row)
    description = paragraphs(row.get("description", "")) or "<p><em>No description.</em></p>"
    if row.get("note"):  # prose beyond the one sentence (Weaver's note), under it
        description += f'<div class="mc-note">{paragraphs(str(row["note"]))}</div>'
    attributes = _attributes(row, data, href, path) + _shadowed(row, data, href, path)
    when = _cadence(row) + _presence(row) or "—"
    return (
        f'<tr id="{anchor}"><td data-label="Series"><a href="#{anchor}">{ident(name)}</a>'
        f'{deprecated}{stability}<div class="mc-prom">{_prometheus(row)}</div></td>'
        f'<td data-label="Logged key">{logger}</td>'
        f'<td data-label="Kind, unit"><span class="mc-kind">{word(row.get("kind", ""))}</span>'
        f"<br>{unit}</td>"
        f'<td data-label="Cadence, presence">{when}</td>'
        f'<td data-label="Description">{description}{_deprecation(row, data, href, path)}'
        f"{attributes}{_plumbing(row, data, href)}</td></tr>"
    )


def attribute_anchor(name: str) -> str:
    """HTML id of a declared attribute's row (``rl.setup.phase`` -> ``attr-rl-setup-phase``)."""
    return "attr-" + series_anchor(name)


def _enum_table(values: list[object]) -> str:
    """An enum's values, one per row, with their meaning when any value has one."""
    described = any(isinstance(v, Mapping) and v.get("description") for v in values)
    head = "<tr><th>Value</th><th>Meaning</th></tr>" if described else "<tr><th>Value</th></tr>"
    rows = []
    for value in values:
        if isinstance(value, Mapping):
            cells = f"<td>{ident(value.get('value', ''))}</td>"
            if described:
                cells += f"<td>{text(value.get('description') or '')}</td>"
        else:
            cells = f"<td>{ident(value)}</td>" + ("<td></td>" if described else "")
        rows.append(f"<tr>{cells}</tr>")
    return (
        f'<table class="mc-enum-table"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _declared_attributes(data: CatalogData, names: list[str]) -> str:
    """The table of the attributes a file declares: type and budget, description, enum values.

    An enum's values get a table of their own under the description (value and
    meaning), wide enough to read, instead of a narrow column of their own.
    """
    rows = []
    for name in names:
        attribute = data.attributes.get(name)
        if attribute is None:
            continue
        values = attribute.get("values") or []
        kind = text(attribute.get("type") or "string")
        if values and attribute.get("open"):
            domain = (
                f"{kind}, {len(values)} known values and at most "
                f"{text(attribute.get('max_cardinality'))} others"
            )
        elif values:
            domain = f"{kind}, one of {len(values)} values"
        elif attribute.get("max_cardinality"):
            domain = f"{kind}, open, at most {text(attribute['max_cardinality'])} values"
        else:
            domain = f"{kind}, open"
        description = text(attribute.get("description", ""))
        if attribute.get("note"):
            description += f'<div class="mc-note">{paragraphs(str(attribute["note"]))}</div>'
        if attribute.get("examples"):
            shown = ", ".join(ident(str(example)) for example in attribute["examples"])
            description += f'<p class="mc-examples">For example {shown}.</p>'
        if attribute.get("annotations"):
            description += (
                f'<p class="mc-meta">annotations {_annotations(attribute["annotations"])}</p>'
            )
        rows.append(
            f'<tr id="{attribute_anchor(name)}"><td>{ident(name)}</td><td>{domain}</td>'
            f"<td>{description}{_enum_table(values) if values else ''}</td></tr>"
        )
    if not rows:
        return ""
    return (
        "<p>Attributes declared here, which series of any owner may carry:</p>"
        '<table class="mc-table mc-attribute-table"><colgroup><col class="mc-c-name">'
        '<col class="mc-c-stability"><col></colgroup><thead><tr>'
        "<th>Attribute</th><th>Type</th><th>Description and values</th></tr></thead>"
        "<tbody>" + "".join(rows) + "</tbody></table>"
    )


def owner_page_html(data: CatalogData, path: str, href: Href) -> str:
    """The body of the owner page of catalog file ``path``: intro, then one table row per series.

    Each row is the series' entry: its ``id`` is the series anchor, and it holds
    the name, stability and Prometheus name, logged key (with its prefix), kind, unit,
    cadence, presence, description, deprecation, attributes, and folded the Python
    constant, registry key and source line.
    """
    entry = data.files[path]
    rows = data.by_file.get(path, [])
    teed = sum(1 for r in rows if r.get("section") == "teed")
    owner = ident(entry.get("owner", ""))
    source = f'<a href="{escape(href(f"source:{path}"))}">{ident(path)}</a>'
    module = ident(entry.get("python_module") or f"{data.package}.{entry.get('module', '')}")
    declared = _declared_attributes(data, [str(n) for n in entry.get("attributes") or []])
    if rows:
        intro = (
            f"<p>Series owned by {owner}, declared in {source}: {teed} teed (mirrored from a "
            f"<code>Logger</code> key) and {len(rows) - teed} recorded directly. The owner "
            f"declares them by importing its generated module, {module}.</p>"
        )
    elif declared:
        intro = (
            f"<p>Attributes declared by {owner} in {source}, and no series. Its generated "
            f"module, {module}, holds a constant per attribute name and a <code>Literal</code> "
            "type per enum, for code that records or checks them.</p>"
        )
    else:
        intro = f"<p>Declared by {owner} in {source}.</p>"
    parts = ['<div class="mc-owner mc-wide">', paragraphs(entry.get("description", "")), intro]
    parts.append(declared)
    if not rows and not declared:
        parts.append("<p>This owner declares no series.</p>")
    else:
        parts.append(
            '<table class="mc-table mc-series-table"><colgroup><col class="mc-c-name">'
            '<col class="mc-c-key"><col class="mc-c-kind"><col class="mc-c-when"><col>'
            "</colgroup><thead><tr><th>Series <small>(Prometheus name)</small></th>"
            "<th>Logged key</th><th>Kind, unit</th><th>Cadence, presence</th>"
            "<th>Description</th></tr></thead><tbody>"
        )
        parts.extend(_row(row, data, href, path) for row in rows)
        parts.append("</tbody></table>")
    parts.append("</div>")
    return "".join(parts)
