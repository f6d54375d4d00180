"""Prometheus alerting and recording rules, one file per catalog file beside its dashboard.

``<dashboards-dir>/<module>.rules.yaml`` ships with ``<module>.json`` as one bundle
(the monitoring-mixin way): load it with ``rule_files:`` and ``promtool check rules``
accepts it. Queries use the names a scrape shows (:attr:`MetricRow.prometheus_name`),
as the dashboards do. Per row:

- **absent**: a ``required`` teed row (one due from the first step: no ``first_step``,
  no ``every``) whose series a scraped process does not export while the process
  runs its loop, i.e. exports series of the rows of the loop's signature (the rows
  logging a ``signature`` key of a loop the row's ``emitted_by`` names; without one,
  the other series of the same owner). That signal is a recording rule per loop or
  owner (``metric_catalog:<module>:loop_<loop>_running``, ``metric_catalog:<module>:running``)
  each alert names, so the file grows linearly with the rows;
- **non-finite**: a gauge whose value is NaN or an infinity (the tee exports a gauge's
  non-finite value as it is); none for a row with ``non_finite: allowed``;
- **out of range**: a gauge (or a histogram's quantile) outside the row's range (declared,
  or its unit's default; :attr:`MetricRow.exported_range`, in the exported unit).

Each alert carries the series' description and owner in its annotations; the labels
say ``owner``, ``series`` and ``severity: warning``. Recording rules keep a counter's
per-second rate (``job:<name>:rate5m``) and a histogram's p95
(``job:<name>:p95_5m``), summed by ``job`` and the row's panel labels.

Text from the catalog is written as JSON strings (valid YAML scalars) and, in annotations
(Go templates to Prometheus), ``{{`` is written so it stays literal text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Final

from metric_catalog.value_rules import ValueRange

from ..catalog.model import Catalog, CatalogFile, MetricRow
from ..config import Config
from .dashboards import panel_labels
from .writer import marker_line

__all__ = [
    "ABSENT_FOR",
    "VALUE_FOR",
    "alert_name",
    "present_series",
    "range_condition",
    "render_alerts",
    "render_rules",
]

ABSENT_FOR: Final = "10m"
"""How long a required series may be missing from a running job before the alert fires."""

VALUE_FOR: Final = "1m"
"""How long a value must be non-finite or out of range before the alert fires."""

_WORD: Final = re.compile(r"[A-Za-z0-9]+")


def alert_name(row: MetricRow, what: str) -> str:
    """``rl.reward.mean`` + ``Absent`` -> ``RlRewardMeanAbsent``."""
    return "".join(part[:1].upper() + part[1:] for part in _WORD.findall(row.name)) + what


def present_series(row: MetricRow) -> str:
    """The series a scrape shows whenever the row was exported (a histogram's ``_count``)."""
    return row.prometheus_name + ("_count" if row.kind == "histogram" else "")


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def range_condition(query: str, bounds: ValueRange) -> str | None:
    """PromQL keeping the samples of ``query`` outside ``bounds`` (``None``: unbounded)."""
    parts = []
    if bounds.low is not None:
        parts.append(f"{query} {'<=' if bounds.low_open else '<'} {_number(bounds.low)}")
    if bounds.high is not None:
        parts.append(f"{query} {'>=' if bounds.high_open else '>'} {_number(bounds.high)}")
    if not parts:
        return None
    return " or ".join(f"({part})" for part in parts) if len(parts) > 1 else parts[0]


def _literal(text: str) -> str:
    """``text`` as Go-template text: a ``{{`` in it is printed, never run."""
    return text.replace("{{", '{{ "{{" }}')


def _annotations(row: MetricRow, file: CatalogFile, summary: str) -> dict[str, str]:
    """``summary`` is a template already (catalog text in it went through :func:`_literal`)."""
    unit = f" Unit: {row.declared_unit}." if row.declared_unit not in ("", "1") else ""
    return {
        "summary": summary,
        "description": _literal(f"{row.description}{unit} Owner: {file.owner} ({file.path})."),
        "owner": _literal(file.owner),
        "series": row.name,
    }


def _labels(row: MetricRow, file: CatalogFile) -> dict[str, str]:
    return {"owner": file.owner, "series": row.name, "severity": "warning"}


class _Signals:
    """Which series say a process runs a loop or an owner, recorded once per rules file.

    An absent alert needs "the process runs the row's loop": a ``running`` recording rule
    per loop (the series of the rows logging its signature keys) or per owner (the owner's
    series), which each alert names. Listing those series in every alert made the file
    grow with the square of the rows; recorded once, it grows with the rows. A row among
    the series it is judged by changes nothing: while it is exported, ``unless`` drops
    it anyway.
    """

    def __init__(self, catalog: Catalog) -> None:
        by_key: dict[str, list[MetricRow]] = {}
        for _f, row in catalog.rows():
            for key in row.logged_keys:
                by_key.setdefault(key, []).append(row)
        self.loops: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
        """Loop -> (the series of its signature rows, sorted; those rows' names)."""
        for loop in catalog.loops():
            rows = {row.name: row for key in loop.signature for row in by_key.get(key, ())}
            series = tuple(sorted({present_series(row) for row in rows.values()}))
            self.loops[loop.name] = (series, frozenset(rows))

    def loops_of(self, row: MetricRow) -> list[str]:
        """The loops whose signature says a process runs ``row``'s loop (``[]``: none other
        than the row itself, so its owner's series are the signal)."""
        found = []
        for name in row.emitted_by:
            _series, names = self.loops.get(name, ((), frozenset()))
            if len(names) > 1 or (names and row.name not in names):  # a row besides it
                found.append(name)
        return found


def _running(file: CatalogFile, scope: str) -> str:
    """The recorded series saying a process runs ``scope`` (a loop, or ``""``: the owner),
    named per rules file so two files never record one series."""
    return f"metric_catalog:{file.module}:{f'loop_{scope}_' if scope else ''}running"


def _running_rules(
    file: CatalogFile, scopes: Iterable[str], signals: _Signals
) -> list[dict[str, object]]:
    """A recording rule per scope an absent alert names (see :class:`_Signals`)."""
    out: list[dict[str, object]] = []
    for scope in sorted(set(scopes)):
        if scope:
            series = signals.loops[scope][0]
        else:
            series = tuple(sorted({present_series(row) for row in file.rows}))
        names = "|".join(series)
        out.append(
            {
                "record": _running(file, scope),
                "expr": f'group by (job, instance) ({{__name__=~"{names}"}})',
            }
        )
    return out


def _absent(
    row: MetricRow, file: CatalogFile, signals: _Signals, scopes: list[str]
) -> dict[str, object] | None:
    """The row's absent alert (``None``: none due); adds the scopes it names to ``scopes``."""
    if row.section != "teed" or row.requirement_level != "required" or row.deprecated:
        return None
    if row.first_step is not None or row.first_step_config or row.every or row.every_config:
        return None
    loops = signals.loops_of(row)
    if not loops and len(file.rows) == 1:  # the row alone: no other series says it runs
        return None
    named = loops or [""]
    scopes.extend(named)
    running = " or on (job, instance) ".join(_running(file, scope) for scope in named)
    expr = (
        f"group by (job, instance) ({running}) unless on (job, instance) "
        f"group by (job, instance) ({present_series(row)})"
    )
    return {
        "alert": alert_name(row, "Absent"),
        "expr": expr,
        "for": ABSENT_FOR,
        "labels": _labels(row, file),
        "annotations": _annotations(
            row,
            file,
            f"{row.name} ({_literal(row.qualified_logger_key)}) is required but "
            "{{ $labels.job }}/{{ $labels.instance }} does not export it while it runs.",
        ),
    }


def _value_alerts(row: MetricRow, file: CatalogFile) -> Iterable[dict[str, object]]:
    if row.kind != "gauge" or row.deprecated:
        return
    name = row.prometheus_name
    if row.non_finite != "allowed":  # the tee exports a gauge's NaN: the alert reads it
        yield {
            "alert": alert_name(row, "NonFinite"),
            "expr": f"({name} != {name}) or (abs({name}) == +Inf)",
            "for": VALUE_FOR,
            "labels": _labels(row, file),
            "annotations": _annotations(
                row, file, f"{row.name} is NaN or infinite on {{{{ $labels.instance }}}}."
            ),
        }
    bounds = row.exported_range
    condition = None if bounds is None else range_condition(name, bounds)
    if bounds is None or condition is None:
        return
    if row.non_finite == "allowed":
        # A legitimate infinity is not out of range (live-check judges finite values only).
        condition = f"({condition}) < +Inf > -Inf"
    shown = bounds.text() + (f" {row.unit}" if row.unit not in ("", "1") else "")
    yield {
        "alert": alert_name(row, "OutOfRange"),
        "expr": condition,
        "for": VALUE_FOR,
        "labels": _labels(row, file),
        "annotations": _annotations(
            row,
            file,
            f"{row.name} is {{{{ $value }}}} on {{{{ $labels.instance }}}}, outside its "
            f"range {shown}.",
        ),
    }


def _recording(row: MetricRow) -> dict[str, str] | None:
    by = ", ".join(("job", *panel_labels(row)))
    name = row.prometheus_name
    if row.kind == "counter":
        base = name.removesuffix("_total")
        return {"record": f"job:{base}:rate5m", "expr": f"sum by ({by}) (rate({name}[5m]))"}
    if row.kind == "histogram":
        return {
            "record": f"job:{name}:p95_5m",
            "expr": f"histogram_quantile(0.95, sum by (le, {by}) (rate({name}_bucket[5m])))",
        }
    return None


_PLAIN_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_YAML11_WORDS: Final = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


_STRING: Final = json.encoder.encode_basestring  # the C one where the json module has it
_JSON: Final = json.JSONEncoder(ensure_ascii=False).encode
_YAML_UNSAFE: Final = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


@functools.cache
def _key(key: str) -> str:
    plain = _PLAIN_KEY.fullmatch(key) and key.lower() not in _YAML11_WORDS
    return key if plain else json.dumps(key, ensure_ascii=False)


def _scalar(value: object) -> str:
    # A JSON string or number is a YAML flow scalar with the same value; JSON's escaping
    # covers what YAML would misread, at C speed (PyYAML's representer took four fifths
    # of a 10,000-row generate).
    return _yaml_safe(_STRING(value) if type(value) is str else _JSON(value))


def _yaml_safe(text: str) -> str:
    """``text`` with what JSON leaves raw and YAML refuses in a stream, or folds, escaped."""
    if text.isascii() and "\x7f" not in text:
        return text  # the usual text: the flag and one memchr, not a regex scan
    return _YAML_UNSAFE.sub(_escaped, text) if _YAML_UNSAFE.search(text) else text


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _rule(rule: dict[str, object], out: list[str]) -> None:
    """One rule as a block-YAML list item: scalar values, or one level of label mappings.

    Values are JSON (:func:`_scalar` without :func:`_yaml_safe`, which
    :func:`_groups` runs once over the whole text: keys and layout are plain ASCII).
    """
    lead = "      - "
    for key, item in rule.items():
        if type(item) is dict and item:
            out.append(f"{lead}{_key(key)}:\n")
            for name, value in item.items():
                text = _STRING(value) if type(value) is str else _JSON(value)
                out.append(f"          {_key(name)}: {text}\n")
        else:
            text = _STRING(item) if type(item) is str else _JSON(item)
            out.append(f"{lead}{_key(key)}: {text}\n")
        lead = "        "


def _groups(groups: list[tuple[str, list[dict[str, object]]]]) -> str:
    out = ["groups:\n"]
    for name, rules in groups:
        out.append(f"  - name: {_STRING(name)}\n    rules:\n")
        for rule in rules:
            _rule(rule, out)
    return _yaml_safe("".join(out))


def render_rules(
    catalog_file: CatalogFile,
    catalog: Catalog,
    config: Config | None = None,
    *,
    signals: _Signals | None = None,
) -> str:
    """One owner's rule file (YAML text, generated marker first).

    ``signals`` (built from ``catalog`` when not given) lets :func:`render_alerts` read the
    loops' signatures once for every file.
    """
    signals = signals or _Signals(catalog)
    rows = sorted((r for r in catalog_file.rows if r.is_scalar), key=lambda r: r.name)
    alerts: list[dict[str, object]] = []
    scopes: list[str] = []
    for row in rows:
        absent = _absent(row, catalog_file, signals, scopes)
        if absent is not None:
            alerts.append(absent)
        alerts.extend(_value_alerts(row, catalog_file))
    recorded: list[dict[str, object]] = []
    for row in rows:
        rule = _recording(row)
        if rule is not None:
            recorded.append(dict(rule))
    groups: list[tuple[str, list[dict[str, object]]]] = []
    if recorded:
        groups.append((f"metric-catalog.{catalog_file.module}.recording", recorded))
    if alerts:
        # The running signals sit in the alerts' own group, before them: rules of one
        # group run in order, so each evaluation's alerts read that evaluation's signals.
        running = _running_rules(catalog_file, scopes, signals)
        groups.append((f"metric-catalog.{catalog_file.module}.alerts", [*running, *alerts]))
    command = (config or Config()).generate_command
    body = _groups(groups) if groups else "groups: []\n"
    return f"# {marker_line(command, catalog_file.path)}\n{body}"


def render_alerts(catalog: Catalog, config: Config | None = None) -> dict[str, str]:
    """``<dashboards-dir>/<module>.rules.yaml`` -> rule file text, for each file with rows.

    Each file's size is linear in its rows (plus, per loop its rows name, the series of
    that loop's signature): see :class:`_Signals`.
    """
    config = config or Config()
    signals = _Signals(catalog)
    out: dict[str, str] = {}
    for catalog_file in catalog.files:
        if catalog_file.rows:
            path = f"{config.dashboards_dir}/{catalog_file.module}.rules.yaml"
            out[path] = render_rules(catalog_file, catalog, config, signals=signals)
    return dict(sorted(out.items()))
